/**
 * `npm run checkpoint -w @pi/course -- NN`: where chapter NN starts and ends.
 *
 * (Re)builds the generated teaching branch from the committed content of HEAD when needed,
 * verifies the chapter's layer, and prints the chapter, its full parent and target ids,
 * the focused test, the teaching file(s), the layer's `git diff --stat` and the next
 * commands. Never touches the working tree, the index or HEAD.
 */
import type { CommandContext } from "./core/cli.js";
import { BUILD_COMMAND, chapterTestGlob, courseCommand, focusedTestFiles, manualLabCommand } from "./core/command-line.js";
import { withInterruptsReported } from "./core/interrupt.js";
import { colorEnabled } from "./core/term.js";
import { git, hasUncommittedChanges, requireRepoRoot } from "./course/git.js";
import { publishHistory, resolveCheckpoint, type Checkpoint } from "./course/history.js";

/** `checkpoint`'s arguments (declared in the command table, `cli.ts`). */
export interface CheckpointArgs {
  chapter: string;
  json: boolean;
  source: string;
  rebuild: boolean;
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
      `       ${courseCommand("practice", chapter.id, "<新目录>")}`,
      "  2. 聚焦运行（在练习目录里）：",
      `       ${BUILD_COMMAND}`,
      `       ${firstLab ? manualLabCommand(m.focusedTests, firstLab.id) : `node --test ${chapterTestGlob(chapter.id)}`}`,
      "  3. 先写下你对测试输出的预测；做完或卡住之后，再对照 target 阅读本章的实现：",
    );
  } else {
    out.push(
      "  1. 运行本章的聚焦测试：",
      `       ${BUILD_COMMAND}`,
      `       node --test ${focusedTestFiles(m.focusedTests)}`,
      "  2. 阅读本章的实现（这一章还没有练习目录和 Lab）：",
    );
  }
  for (const file of cp.teachingFiles) out.push(`       git diff ${chapter.parent} ${chapter.target} -- ${file}`);
  return out.join("\n") + "\n";
}

/**
 * Runs `checkpoint` (see the module comment); resolves with the exit status (a failure is one
 * line on stderr, see `withInterruptsReported`). SIGINT, SIGTERM or SIGHUP stop the git
 * processes, leave nothing behind and the branch as it was, and the command ends by that signal.
 */
export async function run(args: CheckpointArgs, { root, io }: CommandContext): Promise<number> {
  return withInterruptsReported(io.stderr, "已中断；教学分支没有改动，也没有留下临时文件", async (signal) => {
    const repo = await requireRepoRoot(root);
    const cp = await resolveCheckpoint(repo, args.chapter, { source: args.source, force: args.rebuild, signal });
    const dirty = args.source === "HEAD" && (await hasUncommittedChanges(repo, { signal }));
    let output: string;
    if (args.json) {
      output = JSON.stringify(checkpointJson(cp, dirty), null, 2) + "\n";
    } else {
      const color = colorEnabled(io.stdout);
      const diffStat = await git(repo, ["diff", color ? "--color=always" : "--no-color", "--no-renames", "--stat=100", cp.chapter.parent, cp.chapter.target], {
        signal,
      });
      output = formatCheckpoint(cp, { diffStat, dirty, sourceRev: args.source });
    }
    // Only a command that got this far moves the branch.
    signal.throwIfAborted();
    await publishHistory(repo, cp.history, { signal });
    io.stdout.write(output);
    return 0;
  });
}
