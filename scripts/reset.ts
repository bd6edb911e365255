/**
 * `npm run reset -w @pi/course -- 12` / `-- 12.3` (practice folder only): give the chapter's
 * teaching file(s) their starter back, or only one lab's functions, after saving the
 * learner's current file beside it (see `lib/reset/reset.ts`).
 *
 * Exit status: 0 when done (or nothing needed doing); 2 for a usage error; 1 when refused
 * (outside a practice folder, a file with a syntax error for a lab reset, …) or failed.
 */
import { type LabTarget, parseTarget, runMain } from "./lib/core/cli.js";
import { CourseError } from "./lib/core/errors.js";
import { catchInterruptions } from "./lib/core/interrupt.js";
import { courseRoot, isPracticeFolder } from "./lib/core/paths.js";
import { paintFor } from "./lib/core/term.js";
import { learnerPreamble } from "./lib/practice/preamble.js";
import { loadManifest } from "./lib/course/manifest.js";
import { type ResetResult, resetTeachingFiles } from "./lib/reset/reset.js";

export const RESET_USAGE = `用法：npm run reset -w @pi/course -- <NN | NN.L>

  NN      把本章的教学文件恢复成 starter（例如 12）
  NN.L    只把这个 Lab 的函数恢复成 starter，其余代码保持不变（例如 12.3）
  --help  显示这段说明

只在练习目录里使用。恢复之前，你当前的文件会先另存到它旁边，
名为 <文件名>.reset-<日期>-<时间>.bak，不会覆盖任何已有文件；命令会告诉你保存在哪里。`;

export interface ResetArgs {
  help: boolean;
  target?: LabTarget;
}

/** Parses `reset`'s arguments (after `--`). Throws `USAGE` for anything else. */
export function parseResetArgs(argv: readonly string[]): ResetArgs {
  const args: ResetArgs = { help: false };
  for (const arg of argv) {
    if (arg === "--help" || arg === "-h") args.help = true;
    else if (arg.startsWith("-")) throw new CourseError("USAGE", `未知选项 ${arg}（见 --help）`);
    else if (args.target !== undefined) throw new CourseError("USAGE", `只能给一个章号或 Lab 编号，多了 “${arg}”`);
    else args.target = parseTarget(arg);
  }
  if (!args.help && args.target === undefined) throw new CourseError("USAGE", "缺少章号或 Lab 编号，例如 npm run reset -w @pi/course -- 12");
  return args;
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
    lines.push(target.lab === undefined ? `已把 ${result.file} 恢复成 starter。` : `已把 ${result.file} 中 Lab ${target.lab} 的代码${names}恢复成 starter，其余代码没有改动。`);
    lines.push(result.savedAs === undefined ? "  原来没有这个文件，所以没有需要保存的内容。" : `  你原来的文件保存在 ${result.savedAs}`);
  }
  const lab = target.lab ?? `${target.chapter}.1`;
  lines.push(`下一步：npm run lab -w @pi/course -- ${lab}，应当看到它的施工位错误。`);
  return lines.join("\n");
}

async function main(argv: readonly string[]): Promise<number> {
  const args = parseResetArgs(argv);
  if (args.help || args.target === undefined) {
    process.stdout.write(`${RESET_USAGE}\n`);
    return 0;
  }
  const { target } = args;
  const manifest = await loadManifest(courseRoot, target.chapter);
  if (target.lab !== undefined && !manifest.labs.some((lab) => lab.id === target.lab)) {
    throw new CourseError("USAGE", `没有 Lab ${target.lab}；第 ${manifest.id} 章的 Lab：${manifest.labs.map((lab) => lab.id).join(", ")}`);
  }
  const paint = paintFor(process.stdout);
  // A fault exercise killed mid-way is restored first: its backup would not match afterwards.
  if (isPracticeFolder(courseRoot)) for (const line of learnerPreamble(courseRoot, manifest.id)) process.stdout.write(`${paint.yellow(line)}\n`);
  // Saving and replacing run synchronously; with a handler in place a signal waits until both are done.
  const interruption = catchInterruptions();
  try {
    const results = resetTeachingFiles({ root: courseRoot, manifest, ...(target.lab !== undefined ? { lab: target.lab } : {}) });
    process.stdout.write(`${formatReset(results, target)}\n`);
    return 0;
  } finally {
    interruption.finish();
  }
}

runMain(import.meta.url, main);
