/**
 * `npm run verify -w @pi/course -- NN [--json]`: the author's acceptance record of chapter
 * NN, end to end in a scratch folder (see `packages/course-tools/src/verify/record.ts` for the checks). Prints
 * one line per check on stdout, progress and the total time on stderr.
 *
 * What is verified is the working tree's content (HEAD plus uncommitted changes, as
 * `git add -A` would stage them), in a private clone: the repository is only read, and its
 * teaching branch is not touched.
 *
 * Interrupted, it removes its scratch folder and ends by the signal it received.
 */
import type { CommandContext } from "./core/cli.js";
import { formatError } from "./core/errors.js";
import { exitCodeFor } from "./core/exit-status.js";
import { withInterrupts } from "./core/interrupt.js";
import { paintFor, type Paint } from "./core/term.js";
import { requireRepoRoot } from "./course/git.js";
import { loadManifest } from "./course/manifest.js";
import { runVerify, type CheckResult, type VerifyReport } from "./verify/record.js";

/** `verify`'s arguments (declared in the command table, `cli.ts`). */
export interface VerifyArgs {
  chapter: string;
  json: boolean;
  /** Steps asked for with `--only` (a partial record); absent for the whole record. */
  only?: string[];
}

/** One record line: `name: detail`, failures marked. */
export function formatCheck(check: CheckResult, paint: Paint): string {
  return check.ok ? `${check.name}: ${check.detail}` : paint.red(`${check.name}: FAIL — ${check.detail}`);
}

/** The `--json` document. */
export function reportJson(report: VerifyReport): { chapter: string; checks: CheckResult[]; ok: boolean; seconds: number } {
  return { chapter: report.chapter, checks: report.checks, ok: report.ok, seconds: report.seconds };
}

/** Runs the record and prints it; resolves with the exit status (0 when every check passes, else 1). */
export async function run(args: VerifyArgs, { root, io }: CommandContext): Promise<number> {
  const repo = await requireRepoRoot(root);
  await loadManifest(repo, args.chapter); // an unknown chapter is one line, not nine failed checks
  const chapter = args.chapter;
  const paint = paintFor(io.stdout);
  const progress = paintFor(io.stderr);
  // SIGINT, SIGTERM or SIGHUP abort the record: its processes are ended, its scratch folder removed, and it ends by that signal.
  return withInterrupts(async (signal) => {
    let report: VerifyReport;
    try {
      report = await runVerify({
        repo,
        id: chapter,
        signal,
        ...(args.only === undefined ? {} : { only: args.only }),
        onStep: (index, total, title) => io.stderr.write(`${progress.dim(`[${index}/${total}] ${title} …`)}\n`),
        onProgress: (message) => io.stderr.write(`${progress.dim(`    ${message}`)}\n`),
        onCheck: (check) => {
          if (!args.json) io.stdout.write(`${formatCheck(check, paint)}\n`);
        },
      });
    } catch (error) {
      // Said here, not by runMain: an interrupted command ends by its signal when this returns.
      io.stderr.write(`${formatError(error)}\n`);
      return exitCodeFor(error);
    }
    if (args.json) {
      io.stdout.write(`${JSON.stringify(reportJson(report), null, 2)}\n`);
    } else {
      const failed = report.checks.filter((c) => !c.ok).length;
      const partial = args.only === undefined ? "" : `（部分记录：${args.only.join("、")}）`;
      const summary =
        failed === 0
          ? `verify ${report.chapter}: all ${report.checks.length} checks pass${partial}`
          : `verify ${report.chapter}: ${failed} of ${report.checks.length} checks FAIL${partial}`;
      io.stdout.write(`${failed === 0 ? paint.green(summary) : paint.red(summary)}\n`);
    }
    io.stderr.write(`用时 ${report.seconds.toFixed(1)} 秒\n`);
    return report.ok ? 0 : 1;
  });
}
