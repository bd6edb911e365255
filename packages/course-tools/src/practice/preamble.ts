/**
 * What every learner command (`lab`, `hint`, `reset`) does before its own work: restore what
 * an earlier fault exercise that was killed outright left patched, and say first what the
 * learner must know before reading any result:
 * - in the course repo itself, that this is the reference, not a practice folder;
 * - a fault exercise that was killed between patch and restore: the learner's file still
 *   carries the injected line; it is restored now from the exercise's backup (only when
 *   the file holds exactly the patched bytes and the exercise's process is gone), or the
 *   learner is told what is pending;
 * (Temporary folders that killed commands left, lab runs' included, are removed before any
 * command starts: `sweepStaleScratch` in `runMain`.)
 */
import { CourseError } from "../core/errors.js";
import { courseCommand } from "../core/command-line.js";
import { isPracticeFolder } from "../core/paths.js";
import { BACKUP_DIR, readBackupSync, recoverFaultBackup, writerAlive } from "./backup.js";

/** The first line of a learner command run in the course repo (Chinese). */
export function referenceNotice(chapter: string | undefined): string {
  const practice = courseCommand("practice", chapter ?? "<章号>", "<新目录>");
  return `注意：这里是课程仓库本身（参考实现，代码已是答案），不是练习目录。要自己动手，先生成练习目录：${practice}`;
}

/**
 * Cleans up after killed commands in the course at `root` and returns the notes to print
 * first, in order (see the module comment). Never throws: a backup it cannot use is
 * reported, not fatal.
 */
export function learnerPreamble(root: string, chapter?: string): string[] {
  if (!isPracticeFolder(root)) return [referenceNotice(chapter)];
  let backup;
  try {
    backup = readBackupSync(root);
  } catch (error) {
    return [`注意：${error instanceof CourseError ? error.message : String(error)}`];
  }
  if (backup === undefined) return [];
  const { state } = backup;
  if (writerAlive(state)) {
    return [`注意：故障实验 ${state.fault} 正在进行（进程 ${state.pid}），${state.file} 暂时带着注入的那一行；实验结束时它会被逐字节恢复。`];
  }
  try {
    const outcome = recoverFaultBackup(root);
    if (outcome.kind === "restored") {
      return [`注意：上一次故障实验（${state.fault}）被强行中断，${state.file} 还带着注入的那一行；已从 ${BACKUP_DIR} 把它逐字节恢复成实验前的内容。`];
    }
    return [];
  } catch (error) {
    return [`注意：${error instanceof CourseError ? error.message : String(error)}`];
  }
}
