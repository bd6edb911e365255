/**
 * `npm run practice -w @pi/course -- NN [dir]`: writes an answer-free practice folder for
 * chapter NN (see `scripts/lib/practice/folder.ts` for what it holds and the safety rules).
 * Ctrl-C (SIGINT), SIGTERM or SIGHUP removes the half-built folder, then the command ends by
 * that signal.
 */
import path from "node:path";
import { chapterArgument, parseCommandLine, runMain } from "./lib/core/cli.js";
import { CourseError, formatError } from "./lib/core/errors.js";
import { exitCodeFor } from "./lib/core/exit-status.js";
import { requireRepoRoot } from "./lib/course/git.js";
import { courseRoot, userCwd } from "./lib/core/paths.js";
import { withInterrupts } from "./lib/core/interrupt.js";
import { createPractice, type CreatePracticeOptions, type PracticeResult } from "./lib/practice/folder.js";

export const USAGE = `用法: npm run practice -w @pi/course -- <章节号> [目录] [--link-modules] [--source <提交>] [--json]

从第 <章节号> 章的 parent 生成无答案练习目录：上一章结束时的代码、本章的聚焦测试、
覆盖在教学文件上的 starter、Lab 与提示数据，以及本章的 LEARNING.md。没有 .git，没有参考答案。
[目录] 相对于你运行命令的目录；省略时为课程仓库旁边的 pi-practice-<章节号>。
目录已存在或位于课程仓库内部时拒绝执行，不改动任何东西。

选项:
  --link-modules     把 node_modules 链接到课程仓库的 node_modules（免去 npm install，不需要网络）
  --source <提交>    用哪个提交生成教学历史（默认 HEAD）
  --json             结果输出为 JSON
  -h, --help         显示这段说明`;

export interface PracticeArgs {
  help: boolean;
  chapter?: string;
  dest?: string;
  linkModules: boolean;
  json: boolean;
  source: string;
}

/** Parses the command line; throws `USAGE` with a one-line reason. */
export function parseArgs(argv: readonly string[]): PracticeArgs {
  const { values, positionals } = parseCommandLine(argv, {
    help: { type: "boolean", short: "h" },
    "link-modules": { type: "boolean" },
    json: { type: "boolean" },
    source: { type: "string" },
  });
  const base = { linkModules: values["link-modules"] === true, json: values.json === true, source: values.source ?? "HEAD" };
  if (values.help) return { help: true, ...base };
  if (positionals.length < 1 || positionals.length > 2) {
    throw new CourseError("USAGE", "需要一个章节号和可选的目录，例如 npm run practice -w @pi/course -- 12 ../my-12");
  }
  const chapter = chapterArgument(positionals[0]!);
  if (positionals[1] === "") throw new CourseError("USAGE", "目录不能为空字符串");
  return { help: false, chapter, ...(positionals[1] !== undefined ? { dest: positionals[1] } : {}), ...base };
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

export interface Io {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
}

/** Runs the command; returns the exit status (0; 1 on failure; 2 on a usage error); interrupted, it ends by the signal. */
export async function main(
  argv: readonly string[] = process.argv.slice(2),
  io: Io = process,
  repoDir: string = courseRoot,
  extra: Pick<CreatePracticeOptions, "hooks"> = {},
): Promise<number> {
  return withInterrupts(async (signal) => {
    try {
      const args = parseArgs(argv);
      if (args.help) {
        io.stdout.write(USAGE + "\n");
        return 0;
      }
      const repo = await requireRepoRoot(repoDir);
      const cwd = userCwd();
      const result = await createPractice({
        repo,
        id: args.chapter!,
        cwd,
        linkModules: args.linkModules,
        source: args.source,
        signal,
        ...(args.dest !== undefined ? { dest: args.dest } : {}),
        ...extra,
      });
      io.stdout.write(args.json ? JSON.stringify(result, null, 2) + "\n" : formatResult(result, cwd, args.linkModules));
      return 0;
    } catch (error) {
      const reported = signal.aborted ? new CourseError("ABORTED", "已中断，练习目录没有生成，也没有留下临时文件；教学分支没有改动", { cause: error }) : error;
      io.stderr.write(formatError(reported) + "\n");
      return exitCodeFor(reported);
    }
  });
}

runMain(import.meta.url, main);
