/**
 * `npm run verify -w @pi/course -- NN [--json]`: the author's acceptance record of chapter
 * NN, end to end in a scratch folder (see `scripts/lib/verify/record.ts` for the checks). Prints
 * one line per check on stdout, progress and the total time on stderr.
 *
 * What is verified is the working tree's content (HEAD plus uncommitted changes, as
 * `git add -A` would stage them), in a private clone: the repository is only read, and its
 * teaching branch is not touched.
 *
 * Exit status: 0 when every check passes; 1 when any fails; 2 for a usage error. Interrupted,
 * it removes its scratch folder and ends by the signal it received.
 */
import { chapterArgument, parseCommandLine, runMain } from "./lib/core/cli.js";
import { CourseError, formatError } from "./lib/core/errors.js";
import { exitCodeFor } from "./lib/core/exit-status.js";
import { requireRepoRoot } from "./lib/course/git.js";
import { loadManifest } from "./lib/course/manifest.js";
import { courseRoot } from "./lib/core/paths.js";
import { withInterrupts } from "./lib/core/interrupt.js";
import { paintFor, type Paint } from "./lib/core/term.js";
import { runVerify, selectSteps, type CheckResult, type VerifyReport } from "./lib/verify/record.js";

export const USAGE = `用法: npm run verify -w @pi/course -- <章节号> [--only <步骤>]... [--json]

第 <章节号> 章的验收记录（作者用）：在临时目录里检查你现在的工作区（HEAD 加上未提交的改动，
即 git add -A 之后会提交的内容；仓库本身只读不写），依次检查 history、parent、fresh build、
public surface、first red、staged first red（每个 Lab 一行）、chapter text（重放本章正文里的命令
与预期输出）、leak audit、各 Lab 的参考实现、全部故障被抓住并恢复、chapter total、到本章为止的
全部测试。每项一行，任何一项失败则退出码为 1。
复用仓库的 node_modules，不需要网络；要在课程仓库（git clone 得到的目录）里运行。

选项:
  --only <步骤>  只做这一步（可重复），以及它依赖的前面几步；例如修改正文后只重放正文：
                 --only "chapter text"。步骤名就是每行开头的名字（staged first red 等）
  --json         结果输出为 JSON：{ checks: [{ name, ok, detail }], ok, seconds }
  -h, --help     显示这段说明`;

export interface VerifyArgs {
  help: boolean;
  chapter?: string;
  json: boolean;
  /** Steps asked for with `--only` (a partial record); absent for the whole record. */
  only?: string[];
}

/** Parses the command line; throws `USAGE` with a one-line reason. */
export function parseArgs(argv: readonly string[]): VerifyArgs {
  const { values, positionals } = parseCommandLine(argv, {
    help: { type: "boolean", short: "h" },
    json: { type: "boolean" },
    only: { type: "string", multiple: true },
  });
  const json = values.json === true;
  if (values.help) return { help: true, json };
  if (positionals.length !== 1) throw new CourseError("USAGE", "需要一个章节号，例如 npm run verify -w @pi/course -- 12");
  const only = values.only;
  if (only !== undefined) selectSteps(only); // an unknown step is a usage error before any work
  return { help: false, chapter: chapterArgument(positionals[0]!), json, ...(only === undefined ? {} : { only }) };
}

/** One record line: `name: detail`, failures marked. */
export function formatCheck(check: CheckResult, paint: Paint): string {
  return check.ok ? `${check.name}: ${check.detail}` : paint.red(`${check.name}: FAIL — ${check.detail}`);
}

/** The `--json` document. */
export function reportJson(report: VerifyReport): { chapter: string; checks: CheckResult[]; ok: boolean; seconds: number } {
  return { chapter: report.chapter, checks: report.checks, ok: report.ok, seconds: report.seconds };
}

async function main(argv: readonly string[]): Promise<number> {
  const args = parseArgs(argv);
  if (args.help || args.chapter === undefined) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const repo = await requireRepoRoot(courseRoot);
  await loadManifest(repo, args.chapter); // an unknown chapter is one line, not nine failed checks
  const chapter = args.chapter;
  const paint = paintFor(process.stdout);
  const progress = paintFor(process.stderr);
  // SIGINT, SIGTERM or SIGHUP abort the record: its processes are ended, its scratch folder removed, and it ends by that signal.
  return withInterrupts(async (signal) => {
    let report: VerifyReport;
    try {
      report = await runVerify({
        repo,
        id: chapter,
        signal,
        ...(args.only === undefined ? {} : { only: args.only }),
        onStep: (index, total, title) => process.stderr.write(`${progress.dim(`[${index}/${total}] ${title} …`)}\n`),
        onProgress: (message) => process.stderr.write(`${progress.dim(`    ${message}`)}\n`),
        onCheck: (check) => {
          if (!args.json) process.stdout.write(`${formatCheck(check, paint)}\n`);
        },
      });
    } catch (error) {
      // Said here, not by runMain: an interrupted command ends by its signal when this returns.
      process.stderr.write(`${formatError(error)}\n`);
      return exitCodeFor(error);
    }
    if (args.json) {
      process.stdout.write(`${JSON.stringify(reportJson(report), null, 2)}\n`);
    } else {
      const failed = report.checks.filter((c) => !c.ok).length;
      const partial = args.only === undefined ? "" : `（部分记录：${args.only.join("、")}）`;
      const summary = failed === 0 ? `verify ${report.chapter}: all ${report.checks.length} checks pass${partial}` : `verify ${report.chapter}: ${failed} of ${report.checks.length} checks FAIL${partial}`;
      process.stdout.write(`${failed === 0 ? paint.green(summary) : paint.red(summary)}\n`);
    }
    process.stderr.write(`用时 ${report.seconds.toFixed(1)} 秒\n`);
    return report.ok ? 0 : 1;
  });
}

runMain(import.meta.url, main);
