/**
 * `npm run reset -w @pi/course -- 12` / `-- 12.3` (practice folder only): give the chapter's
 * teaching file(s) their starter back, or only one lab's functions, after saving the
 * learner's current file beside it (see `lib/reset/reset.ts`).
 */
import type { CommandContext, LabTarget } from "./core/cli.js";
import { courseCommand } from "./core/command-line.js";
import { CourseError } from "./core/errors.js";
import { catchInterruptions } from "./core/interrupt.js";
import { isPracticeFolder } from "./core/paths.js";
import { paintFor } from "./core/term.js";
import { loadManifest } from "./course/manifest.js";
import { learnerPreamble } from "./practice/preamble.js";
import { resetTeachingFiles, type ResetResult } from "./reset/reset.js";

/** `reset`'s arguments (declared in the command table, `cli.ts`). */
export interface ResetArgs {
  target: LabTarget;
}

/** The learner-facing report of a reset (Chinese). Pure. */
export function formatReset(results: readonly ResetResult[], target: LabTarget): string {
  const lines: string[] = [];
  const what = target.lab === undefined ? "starter" : `starter 里 Lab ${target.lab} 的样子`;
  for (const result of results) {
    if (result.status === "unchanged") {
      lines.push(`${result.file} 已经是 ${what}，没有改动。`);
      continue;
    }
    const names = result.declarations === undefined ? "" : `（${result.declarations.join("、")}）`;
    lines.push(
      target.lab === undefined
        ? `已把 ${result.file} 恢复成 starter。`
        : `已把 ${result.file} 中 Lab ${target.lab} 的代码${names}恢复成 starter，其余代码没有改动。`,
    );
    lines.push(result.savedAs === undefined ? "  原来没有这个文件，所以没有需要保存的内容。" : `  你原来的文件保存在 ${result.savedAs}`);
  }
  const lab = target.lab ?? `${target.chapter}.1`;
  lines.push(`下一步：${courseCommand("lab", lab)}，应当看到它的施工位错误。`);
  return lines.join("\n");
}

/** Runs `reset` in the course at `root`; resolves with 0 when done (refusals are thrown as coded errors). */
export async function run({ target }: ResetArgs, { root, io }: CommandContext): Promise<number> {
  const manifest = await loadManifest(root, target.chapter);
  if (target.lab !== undefined && !manifest.labs.some((lab) => lab.id === target.lab)) {
    throw new CourseError("USAGE", `没有 Lab ${target.lab}；第 ${manifest.id} 章的 Lab：${manifest.labs.map((lab) => lab.id).join(", ")}`);
  }
  const paint = paintFor(io.stdout);
  // A fault exercise killed mid-way is restored first: its backup would not match afterwards.
  if (isPracticeFolder(root)) for (const line of learnerPreamble(root, manifest.id)) io.stdout.write(`${paint.yellow(line)}\n`);
  // Saving and replacing run synchronously; with a handler in place a signal waits until both are done.
  const interruption = catchInterruptions();
  try {
    const results = resetTeachingFiles({ root, manifest, ...(target.lab !== undefined ? { lab: target.lab } : {}) });
    io.stdout.write(`${formatReset(results, target)}\n`);
    return 0;
  } finally {
    interruption.finish();
  }
}
