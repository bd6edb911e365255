/**
 * The backup that makes the fault exercise safe for the learner's file: before the file is
 * patched, its original bytes and their sha256 go to `.pi-course/fault-backup/`, and the
 * file is given back from there however the experiment ends — on the normal path, on an
 * uncaught exception, on SIGINT/SIGTERM/SIGHUP, and, when the process was killed outright,
 * by the next learner command (`fault`, `lab`, `reset`), which says so. Patch and restore
 * are atomic renames, so the file always holds either the original or the patched text.
 *
 * Kept apart from the exercise itself so that `lab` and `reset` can check for a pending
 * restore without loading the fault tooling.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { CourseError } from "../core/errors.js";
import { writeAtomicSync } from "../core/files.js";
import { currentOwner, ownerIsGone, processStart } from "../core/scratch.js";

/** Where the backup lives, relative to the practice folder. */
export const BACKUP_DIR = ".pi-course/fault-backup";
const STATE_FILE = "state.json";
export const ORIGINAL_FILE = "original";

/** `state.json`: what was patched, and how to tell the original from the patched bytes. */
export interface BackupState {
  format: 1;
  fault: string;
  /** The patched file, relative to the practice folder, `/`-separated. */
  file: string;
  /** sha256 (hex) of the original bytes, which are stored next to this file. */
  sha256: string;
  /** sha256 of the patched bytes. */
  patchedSha256: string;
  /** The process that patched the file (a live one means another run is in progress). */
  pid: number;
  /**
   * That process's start time as the OS records it (see `processStart`), so that an
   * unrelated process that later got the same pid is not taken for it. Absent in backups of
   * earlier versions, and null where it cannot be read: then the pid alone decides.
   */
  start?: string | null;
  startedAt: string;
}

/** The identity of this process for a new backup: its pid and start time. */
export function backupWriter(): Pick<BackupState, "pid" | "start"> {
  return { pid: process.pid, start: processStart(process.pid) };
}

/**
 * True while the process that wrote `state` still runs: its pid is taken, and (when both
 * are known) by a process that started when the writer did. Not this process.
 */
export function writerAlive(state: Pick<BackupState, "pid" | "start">): boolean {
  if (state.pid === process.pid) return false;
  return !ownerIsGone({ ...currentOwner(), pid: state.pid, start: state.start ?? null });
}

/** What `restoreFromBackupSync` found and did. */
export type RestoreOutcome =
  | { kind: "none" }
  /** The file held the patched (or no) bytes and now holds the original again. */
  | { kind: "restored"; state: BackupState }
  /** The file already held the original bytes; only the backup was removed. */
  | { kind: "unchanged"; state: BackupState }
  /** The file holds something else (edited since?): nothing was touched, the backup stays. */
  | { kind: "conflict"; state: BackupState; backup: string };

/** The sha256 of `data` as lowercase hex: how a backup tells the original bytes from the patched ones. */
export function sha256(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

function backupDir(root: string): string {
  return path.join(root, ...BACKUP_DIR.split("/"));
}

/**
 * Saves the original bytes of `file` and their hash before anything is patched. The
 * state file is written last: a backup counts only once it is complete.
 */
export function writeBackupSync(root: string, state: BackupState, original: Uint8Array): void {
  const dir = backupDir(root);
  if (existsSync(path.join(dir, STATE_FILE))) {
    throw new CourseError("FAULT_BUSY", `${BACKUP_DIR} 里已有一份未恢复的备份；先运行一次 fault 命令让它恢复`);
  }
  mkdirSync(dir, { recursive: true });
  writeAtomicSync(path.join(dir, ORIGINAL_FILE), original);
  writeAtomicSync(path.join(dir, STATE_FILE), Buffer.from(`${JSON.stringify(state, null, 2)}\n`));
}

/** The backup of `root`, or undefined when there is none. Throws `FAULT_BACKUP_CORRUPT`. */
export function readBackupSync(root: string): { state: BackupState; original: Buffer } | undefined {
  const dir = backupDir(root);
  const stateFile = path.join(dir, STATE_FILE);
  if (!existsSync(stateFile)) return undefined;
  let state: BackupState;
  let original: Buffer;
  try {
    state = JSON.parse(readFileSync(stateFile, "utf8")) as BackupState;
    original = readFileSync(path.join(dir, ORIGINAL_FILE));
  } catch (error) {
    throw new CourseError("FAULT_BACKUP_CORRUPT", `${BACKUP_DIR} 无法读取（${(error as Error).message}）；请手动检查你的教学文件`, { cause: error });
  }
  if (typeof state.file !== "string" || state.file.split("/").includes("..") || sha256(original) !== state.sha256) {
    throw new CourseError("FAULT_BACKUP_CORRUPT", `${BACKUP_DIR} 中的备份与记录的 sha256 不符；没有改动任何文件，请手动检查 ${String(state.file)}`);
  }
  return { state, original };
}

/**
 * Gives the file recorded in the backup its original bytes back, if it holds the patched
 * bytes (or is missing), then removes the backup. Leaves everything alone when the file
 * holds anything else (`conflict`). Synchronous, so it can run in an `exit` handler.
 */
export function restoreFromBackupSync(root: string): RestoreOutcome {
  const backup = readBackupSync(root);
  if (backup === undefined) return { kind: "none" };
  const { state, original } = backup;
  const file = path.join(root, ...state.file.split("/"));
  const current = existsSync(file) ? readFileSync(file) : undefined;
  const currentSha = current === undefined ? undefined : sha256(current);
  if (currentSha !== undefined && currentSha !== state.sha256 && currentSha !== state.patchedSha256) {
    return { kind: "conflict", state, backup: `${BACKUP_DIR}/${ORIGINAL_FILE}` };
  }
  const kind = currentSha === state.sha256 ? "unchanged" : "restored";
  if (kind === "restored") writeAtomicSync(file, original);
  if (sha256(readFileSync(file)) !== state.sha256) {
    return { kind: "conflict", state, backup: `${BACKUP_DIR}/${ORIGINAL_FILE}` };
  }
  rmSync(backupDir(root), { recursive: true, force: true });
  return { kind, state };
}

/**
 * Run first by every learner-mode run: restores what a run that died between patch and
 * restore left behind. Throws `FAULT_BUSY` when the run that wrote the backup is still
 * alive, `FAULT_BACKUP_CONFLICT` when the file changed since (nothing is touched then).
 */
export function recoverFaultBackup(root: string): RestoreOutcome {
  const backup = readBackupSync(root);
  if (backup === undefined) return { kind: "none" };
  if (writerAlive(backup.state)) {
    throw new CourseError("FAULT_BUSY", `另一个 fault 命令（进程 ${backup.state.pid}）正在修改 ${backup.state.file}；等它结束后再试`);
  }
  const outcome = restoreFromBackupSync(root);
  if (outcome.kind === "conflict") {
    throw new CourseError(
      "FAULT_BACKUP_CONFLICT",
      `上一次故障实验（${outcome.state.fault}）没有正常结束，而 ${outcome.state.file} 之后又被改动过，所以没有自动恢复。` +
        `原文件保存在 ${outcome.backup}（sha256 ${outcome.state.sha256.slice(0, 12)}…）：需要时把它复制回去；确认当前文件就是你想要的之后，删除 ${BACKUP_DIR} 目录`,
    );
  }
  return outcome;
}

const SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

/** A restore guard in place (see `guardRestore`). */
export interface RestoreGuard {
  /** What the signal handler restored, once a signal has arrived. */
  readonly restoredOnSignal: RestoreOutcome | undefined;
  uninstall(): void;
}

/**
 * Restores from the backup of `root` however this process ends: normal exit, uncaught
 * exception, or SIGINT/SIGTERM/SIGHUP. On a signal the file is restored synchronously,
 * before anything else can happen, and then `onSignal` runs (to stop the experiment, whose
 * code then cleans up and ends the process by that signal: see `catchInterruptions`).
 */
export function guardRestore(root: string, onSignal: (signal: NodeJS.Signals, outcome: RestoreOutcome) => void = () => {}): RestoreGuard {
  const restore = (): RestoreOutcome => {
    try {
      return restoreFromBackupSync(root);
    } catch {
      // The next run reports a backup it cannot use; an exit path has nowhere to report to.
      return { kind: "none" };
    }
  };
  const onExit = () => void restore();
  let restoredOnSignal: RestoreOutcome | undefined;
  const handlers = new Map<NodeJS.Signals, () => void>();
  for (const signal of SIGNALS) {
    const handler = () => {
      if (restoredOnSignal === undefined) restoredOnSignal = restore();
      onSignal(signal, restoredOnSignal);
    };
    handlers.set(signal, handler);
    process.on(signal, handler);
  }
  process.on("exit", onExit);
  process.on("uncaughtExceptionMonitor", onExit);
  return {
    get restoredOnSignal() {
      return restoredOnSignal;
    },
    uninstall() {
      process.off("exit", onExit);
      process.off("uncaughtExceptionMonitor", onExit);
      for (const [signal, handler] of handlers) process.off(signal, handler);
    },
  };
}
