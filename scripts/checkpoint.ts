/**
 * `npm run checkpoint -w @pi/course -- NN`: where chapter NN starts and ends.
 *
 * (Re)builds the generated teaching branch from the committed content of HEAD when needed,
 * verifies the chapter's layer, and prints the chapter, its full parent and target ids,
 * the focused test, the teaching file(s), the layer's `git diff --stat` and the next
 * commands. Never touches the working tree, the index or HEAD.
 */
import { chapterArgument, parseCommandLine, runMain } from "./lib/core/cli.js";
import { CourseError, formatError } from "./lib/core/errors.js";
import { exitCodeFor } from "./lib/core/exit-status.js";
import { git, hasUncommittedChanges, requireRepoRoot } from "./lib/course/git.js";
import { COURSE_BRANCH, publishHistory, resolveCheckpoint, type Checkpoint } from "./lib/course/history.js";
import { courseRoot } from "./lib/core/paths.js";
import { chapterTestGlob, focusedTestFiles, manualLabCommand } from "./lib/practice/folder.js";
import { colorEnabled } from "./lib/core/term.js";
import { withInterrupts } from "./lib/core/interrupt.js";

export const USAGE = `用法: npm run checkpoint -w @pi/course -- <章节号> [--json] [--source <提交>] [--rebuild]

打印第 <章节号> 章在教学分支 ${COURSE_BRANCH} 上的 parent 与 target（完整 40 位 SHA）、
聚焦测试、教学文件、本章这一层的改动统计，以及接下来要运行的命令。
教学分支只由已提交的内容生成（默认 HEAD），未提交的改动不参与；工作区、暂存区和当前分支都不会被改动。

选项:
  --json             输出 JSON（给程序读）
  --source <提交>    用哪个提交生成教学历史（默认 HEAD）
  --rebuild          即使分支已是最新也重新生成（结果相同）；分支上有更新的课程时也改写它
                     （不是课程工具原样生成的分支永远不会被改写）
  -h, --help         显示这段说明`;

export interface CheckpointArgs {
  help: boolean;
  chapter?: string;
  json: boolean;
  source: string;
  rebuild: boolean;
}

/** Parses the command line; throws `USAGE` with a one-line reason. */
export function parseArgs(argv: readonly string[]): CheckpointArgs {
  const { values, positionals } = parseCommandLine(argv, {
    help: { type: "boolean", short: "h" },
    json: { type: "boolean" },
    source: { type: "string" },
    rebuild: { type: "boolean" },
  });
  if (values.help) return { help: true, json: false, source: "HEAD", rebuild: false };
  if (positionals.length !== 1) throw new CourseError("USAGE", "需要恰好一个章节号，例如 npm run checkpoint -w @pi/course -- 12");
  return { help: false, chapter: chapterArgument(positionals[0]!), json: values.json === true, source: values.source ?? "HEAD", rebuild: values.rebuild === true };
}

/** The JSON form of a checkpoint (`--json`). */
export function checkpointJson(cp: Checkpoint, dirty: boolean): Record<string, unknown> {
  const { chapter, history } = cp;
  return {
    id: chapter.id,
    title: chapter.title,
    parent: chapter.parent,
    target: chapter.target,
    focusedTests: chapter.manifest.focusedTests,
    teachingFiles: cp.teachingFiles,
    providedFiles: chapter.manifest.provided,
    text: chapter.manifest.text ?? null,
    layer: cp.layer,
    source: history.source,
    sourceTree: history.sourceTree,
    branch: history.branch,
    reused: history.reused,
    branchAction: history.branchAction,
    uncommittedChangesIgnored: dirty,
  };
}

/** What became of the teaching branch, in words. */
function branchNote({ history }: Checkpoint): string {
  if (history.branchAction === "reuse") return "已是最新，直接复用";
  if (history.branchAction === "move") return "已根据源提交重新生成";
  return `保持不变：分支上的课程更新，有源提交没有的第 ${history.newerChapters.join("、")} 章；下面的提交已生成，但没有写入分支，要改写分支请加 --rebuild`;
}

/** The human form of a checkpoint. Pure. */
export function formatCheckpoint(cp: Checkpoint, info: { diffStat: string; dirty: boolean; sourceRev: string }): string {
  const { chapter, history } = cp;
  const m = chapter.manifest;
  const firstLab = m.labs[0];
  const interactive = m.starters.length > 0;
  const out = [
    `第 ${chapter.id} 章 · ${chapter.title}`,
    "",
    `parent: ${chapter.parent}`,
    `target: ${chapter.target}`,
    "",
    `源提交:   ${history.source}（${info.sourceRev} 的已提交内容）`,
  ];
  if (info.dirty) out.push("          注意：工作区有未提交的改动，它们不参与教学历史；要纳入请先提交。");
  out.push(
    `教学分支: ${history.branch}（${branchNote(cp)}）`,
    `聚焦测试: ${m.focusedTests.join("、")}`,
    `教学文件: ${cp.teachingFiles.join("、") || "（无）"}`,
    ...(m.provided.length > 0 ? [`提供文件: ${m.provided.join("、")}（练习目录里原样提供，不用改写）`] : []),
    ...(m.text !== undefined ? [`本章正文: ${m.text}`] : []),
    "",
    "本章这一层（git diff --stat parent target）:",
    info.diffStat.replace(/\n+$/, ""),
    "",
    "下一步:",
  );
  if (interactive) {
    out.push(
      "  1. 创建无答案练习目录，进去后按 LEARNING.md 开始：",
      `       npm run practice -w @pi/course -- ${chapter.id} <新目录>`,
      "  2. 聚焦运行（在练习目录里）：",
      "       npm run build -w @pi/course",
      `       ${firstLab ? manualLabCommand(m, firstLab.id) : `node --test ${chapterTestGlob(chapter.id)}`}`,
      "  3. 先写下你对测试输出的预测；做完或卡住之后，再对照 target 阅读本章的实现：",
    );
  } else {
    out.push(
      "  1. 运行本章的聚焦测试：",
      "       npm run build -w @pi/course",
      `       node --test ${focusedTestFiles(m)}`,
      "  2. 阅读本章的实现（这一章还没有练习目录和 Lab）：",
    );
  }
  for (const file of cp.teachingFiles) out.push(`       git diff ${chapter.parent} ${chapter.target} -- ${file}`);
  return out.join("\n") + "\n";
}

export interface Io {
  stdout: { write(s: string): unknown; isTTY?: boolean };
  stderr: { write(s: string): unknown };
}

/**
 * Runs the command; returns the exit status (0, 1 on failure, 2 on a usage error). SIGINT,
 * SIGTERM or SIGHUP stop the git processes, leave nothing behind and the branch as it was,
 * and the command ends by that signal (see `withInterrupts`).
 */
export async function main(argv: readonly string[] = process.argv.slice(2), io: Io = process, repoDir: string = courseRoot): Promise<number> {
  return withInterrupts(async (signal) => {
    try {
      const args = parseArgs(argv);
      if (args.help) {
        io.stdout.write(USAGE + "\n");
        return 0;
      }
      const repo = await requireRepoRoot(repoDir);
      const cp = await resolveCheckpoint(repo, args.chapter!, { source: args.source, force: args.rebuild, signal });
      const dirty = args.source === "HEAD" && (await hasUncommittedChanges(repo, { signal }));
      let output: string;
      if (args.json) {
        output = JSON.stringify(checkpointJson(cp, dirty), null, 2) + "\n";
      } else {
        const color = colorEnabled(io.stdout);
        const diffStat = await git(repo, ["diff", color ? "--color=always" : "--no-color", "--no-renames", "--stat=100", cp.chapter.parent, cp.chapter.target], { signal });
        output = formatCheckpoint(cp, { diffStat, dirty, sourceRev: args.source });
      }
      // Only a command that got this far moves the branch.
      signal.throwIfAborted();
      await publishHistory(repo, cp.history, { signal });
      io.stdout.write(output);
      return 0;
    } catch (error) {
      const reported = signal.aborted ? new CourseError("ABORTED", "已中断；教学分支没有改动，也没有留下临时文件", { cause: error }) : error;
      io.stderr.write(formatError(reported) + "\n");
      return exitCodeFor(reported);
    }
  });
}

runMain(import.meta.url, main);
