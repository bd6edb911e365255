/**
 * `npm run practice -w @pi/course -- NN [dir]`: writes an answer-free practice folder for
 * chapter NN (see `packages/course-tools/src/practice/folder.ts` for what it holds and the safety rules).
 * Ctrl-C (SIGINT), SIGTERM or SIGHUP removes the half-built folder, then the command ends by
 * that signal.
 */
import path from "node:path";
import type { CommandContext } from "./core/cli.js";
import { withInterruptsReported } from "./core/interrupt.js";
import { userCwd } from "./core/paths.js";
import { requireRepoRoot } from "./course/git.js";
import { createPractice, type CreatePracticeOptions, type PracticeResult } from "./practice/folder.js";

/** `practice`'s arguments (declared in the command table, `cli.ts`). */
export interface PracticeArgs {
  chapter: string;
  dest?: string;
  linkModules: boolean;
  json: boolean;
  source: string;
}

/**
 * `text` as one word of the user's shell: unchanged when it holds only characters no shell
 * treats specially, else single-quoted (POSIX shells: a `'` becomes `'\''`; PowerShell on
 * Windows: `''`), so spaces, `$`, backticks, `!`, `*` and quotes reach `cd` as they are.
 */
export function shellQuote(text: string, platform: NodeJS.Platform = process.platform): string {
  if (/^[A-Za-z0-9_./:@%+=,-]+$/.test(text) && !(platform === "win32" && text.includes("@"))) return text;
  // npm runs scripts in cmd.exe on Windows, which knows double quotes only (and no quote can
  // appear in a Windows path); elsewhere single quotes keep `$`, backquotes and `\` literal.
  return platform === "win32" ? `"${text}"` : `'${text.replace(/'/g, "'\\''")}'`;
}

/** What to print after a successful run. Pure. */
export function formatResult(result: PracticeResult, cwd: string, linkModules: boolean, platform: NodeJS.Platform = process.platform): string {
  const shown = path.relative(cwd, result.dest) || ".";
  const cdTarget = shown.startsWith("..") || path.isAbsolute(shown) ? result.dest : shown;
  return [
    `已生成第 ${result.chapter} 章练习目录：${result.dest}`,
    `parent: ${result.parent}`,
    `target: ${result.target}`,
    `文件 ${result.files} 个；答案泄漏检查通过。`,
    "",
    "下一步:",
    `  cd ${shellQuote(cdTarget, platform)}`,
    ...(linkModules ? ["  # node_modules 已链接到课程仓库，可以跳过 npm install"] : ["  npm install"]),
    "  然后阅读 LEARNING.md：先验证第一次红灯，再开始 Lab。",
    "",
  ].join("\n");
}

/**
 * Runs `practice`; resolves with the exit status (a failure is one line on stderr, see
 * `withInterruptsReported`). Interrupted, it removes the half-built folder and ends by the signal.
 * `extra.hooks` is a test seam (see `createPractice`).
 */
export async function run(args: PracticeArgs, { root, io }: CommandContext, extra: Pick<CreatePracticeOptions, "hooks"> = {}): Promise<number> {
  return withInterruptsReported(io.stderr, "已中断，练习目录没有生成，也没有留下临时文件；教学分支没有改动", async (signal) => {
    const repo = await requireRepoRoot(root);
    const cwd = userCwd();
    const result = await createPractice({
      repo,
      id: args.chapter,
      cwd,
      linkModules: args.linkModules,
      source: args.source,
      signal,
      ...(args.dest !== undefined ? { dest: args.dest } : {}),
      ...extra,
    });
    io.stdout.write(args.json ? JSON.stringify(result, null, 2) + "\n" : formatResult(result, cwd, args.linkModules));
    return 0;
  });
}
