/**
 * `npm run fault -w @pi/course -- NN [id] [--all] [--list] [--json]`
 *
 * In the course repo (author mode): applies documented faults to scratch copies of the
 * reference and shows each one killed by the test its manifest names, then the suite
 * green again; the repo's files are only read. In a practice folder (learner mode): runs
 * the chapter's fault exercise on the learner's own file and always restores it.
 *
 * Without `id` or `--all`, both modes run the chapter's exercise fault(s). Interrupted
 * (Ctrl-C, SIGTERM), learner mode restores the learner's file at once, ends its test
 * processes, removes its temporary folders, says so, and ends by that signal.
 */
import path from "node:path";
import type { CommandContext } from "./core/cli.js";
import { courseCommand } from "./core/command-line.js";
import { CourseError, isCourseError } from "./core/errors.js";
import { resultStatus } from "./core/exit-status.js";
import { catchInterruptions, type Interruption, withScratchInterrupts } from "./core/interrupt.js";
import { isPracticeFolder } from "./core/paths.js";
import { paintFor, type Paint } from "./core/term.js";
import { authorFaults, learnerFaults, type Fault, type LearnerFault } from "./course/faults.js";
import { loadManifest, type ChapterManifest } from "./course/manifest.js";
import { runLearnerFault, type LearnerRunResult } from "./fault/learner.js";
import { BACKUP_DIR, recoverFaultBackup, type BackupState } from "./practice/backup.js";
import { allKilledAndRestored, formatFaultResult, runAuthorFaults, type FaultResult } from "./testing/fault-runs.js";
import { DEFAULT_TIMEOUT_SECONDS } from "./testing/limits.js";

/** `fault`'s arguments (declared in the command table, `cli.ts`). */
export interface FaultArgs {
  chapter: string;
  id?: string;
  all: boolean;
  list: boolean;
  json: boolean;
}

/**
 * The faults `args` asks for among `faults`: one by id, all, or the exercise ones.
 * Throws `USAGE` for an unknown id (listing the known ones) and `FAULT_NONE` when there
 * is nothing to run.
 */
export function selectFaults<T extends { id: string; exercise: boolean }>(faults: readonly T[], args: Pick<FaultArgs, "id" | "all">, chapter: string): T[] {
  if (args.id !== undefined) {
    const fault = faults.find((f) => f.id === args.id);
    if (!fault) throw new CourseError("USAGE", `第 ${chapter} 章没有故障 ${args.id}；可用的：${faults.map((f) => f.id).join(", ") || "（无）"}`);
    return [fault];
  }
  const selected = args.all ? [...faults] : faults.filter((f) => f.exercise);
  if (selected.length === 0) {
    throw new CourseError("FAULT_NONE", args.all ? `第 ${chapter} 章没有登记任何故障` : `第 ${chapter} 章没有登记故障实验（exercise）；用 --all 运行全部故障`);
  }
  return selected;
}

/** The `--json` document of an author-mode run. */
export function authorJson(results: readonly FaultResult[]): { faults: FaultResult[]; ok: boolean } {
  return { faults: results.map((r) => ({ ...r })), ok: allKilledAndRestored(results) };
}

function listFaults(faults: readonly (Fault | LearnerFault)[], json: boolean): string {
  if (json)
    return JSON.stringify({ faults: faults.map(({ id, lab, description, exercise, killedBy }) => ({ id, lab, description, exercise, killedBy })) }, null, 2);
  return faults.map((f) => `${f.id}  (Lab ${f.lab})${f.exercise ? " [exercise]" : ""}  ${f.description}`).join("\n");
}

async function authorMode(manifest: ChapterManifest, faults: readonly Fault[], args: FaultArgs, { root, io }: CommandContext): Promise<number> {
  const selected = selectFaults(faults, args, manifest.id);
  const paint = paintFor(io.stdout);
  const started = Date.now();
  const done = new Map<string, FaultResult>();
  let next = 0;
  return withScratchInterrupts(io.stderr, async (signal) => {
    if (!args.json) {
      io.stdout.write(`这里是课程仓库本身（作者模式），不是练习目录：故障注入参考实现的临时副本，仓库里的文件只读不改。\n`);
      io.stderr.write(
        `在临时副本中运行 ${selected.length} 个故障（一次编译全部故障 → 基线 → 每个故障只跑它所在 Lab 的测试，同一 Lab 的故障共用测试进程 → 撤销检查与基线）……\n`,
      );
    }
    const results = await runAuthorFaults({
      sourceRoot: root,
      manifest,
      faults: selected,
      nodeModules: path.join(root, "node_modules"),
      signal,
      onResult: (result) => {
        // Results arrive once the restore check has run; lines are printed in catalog order.
        done.set(result.id, result);
        while (next < selected.length && done.has(selected[next]!.id)) {
          const ready = done.get(selected[next]!.id)!;
          next += 1;
          if (!args.json) io.stdout.write(`${colorLine(formatFaultResult(ready), ready.status === "killed" && ready.restored, paint)}\n`);
        }
      },
    });
    const ok = allKilledAndRestored(results);
    if (args.json) {
      io.stdout.write(`${JSON.stringify(authorJson(results), null, 2)}\n`);
    } else {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const killed = results.filter((r) => r.status === "killed" && r.restored).length;
      io.stdout.write(`${killed}/${results.length} 个故障被抓住并恢复（${seconds} 秒）\n`);
    }
    return ok ? 0 : 1;
  });
}

function colorLine(line: string, ok: boolean, paint: Paint): string {
  return ok ? line : paint.red(line);
}

/** The first `max` non-empty lines of `text`, indented (an assertion diff is short and telling). */
function indented(text: string, max: number): string[] {
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  return [...lines.slice(0, max), ...(lines.length > max ? ["…"] : [])].map((line) => `    ${line}`);
}

/** What the learner is told when an interrupted experiment was undone from its backup. */
export function recoveryNotice(state: BackupState): string {
  return `注意：上一次故障实验（${state.fault}）没有正常结束，已先从 ${BACKUP_DIR} 把 ${state.file} 恢复成实验前的内容（sha256 ${state.sha256.slice(0, 12)}…）。`;
}

/** The learner-facing report of one learner-mode run (Chinese). Pure. */
export function formatLearnerResult(result: LearnerRunResult, fault: LearnerFault, manifest: ChapterManifest): string {
  const lines: string[] = [];
  const labCmd = courseCommand("lab", fault.lab);
  if (result.recovered?.kind === "restored") lines.push(recoveryNotice(result.recovered.state), "");
  switch (result.status) {
    case "manual": {
      lines.push(
        `没有自动注入：${result.manualReason ?? "找不到插入的位置"}。你的文件没有被改动。`,
        "",
        "可以手动做这个实验：",
        `  1. 在 ${fault.file} 的 ${fault.learner.function} 里，${describeBefore(fault.learner.before)}之前，加入这一行`,
        `     （参数名换成你自己的）：`,
        `       ${fault.learner.insert}`,
        "     如果那个 return 和条件写在同一行（例如 if (…) return …;），先改成带花括号的块，让这一行只在那个分支里运行。",
        `  2. 运行 ${labCmd}，看哪条测试失败（应是 ${fault.killedBy.map((n) => `“${n}”`).join("、")}）`,
        `  3. 删掉这一行，再运行 ${labCmd} 和 ${courseCommand("lab", manifest.id)}，确认恢复原样`,
      );
      break;
    }
    case "not_ready":
      lines.push(
        `还不能做这个实验：Lab ${fault.lab} 现在是 ${result.before ? `${result.before.passed}/${result.before.total}` : "编译失败"}，要先全部通过。你的文件没有被改动。`,
        ...(result.firstFailure ? [`第一处失败：${result.firstFailure.test}`, `  ${result.firstFailure.message.split("\n")[0]}`] : []),
        `下一步：${labCmd}`,
      );
      break;
    case "build_failed":
      lines.push(
        `注入的这一行在你的代码里无法编译：${result.firstFailure?.message.split("\n")[0] ?? ""}`,
        "可能是你的函数里变量名与实验假设的不同（例如 options、source）。你的文件已恢复原样。",
      );
      break;
    case "killed":
      lines.push(`抓住了：${result.caughtBy.map((n) => `“${n}”`).join("、")} 失败。`, ...indented(result.firstFailure?.message ?? "", 8));
      break;
    case "survived":
      lines.push(
        `没有抓住：注入后 Lab ${fault.lab} 仍然通过。`,
        `说明你的代码和实验假设的结构不同：插入的那一行（第 ${result.line ?? "?"} 行）可能没有落在实验想破坏的分支里。`,
        "对照上面的说明检查那个位置；测试本身只观察外部行为，不看你的写法。",
      );
      break;
  }
  if (result.line !== undefined) {
    const after = result.after ? `Lab ${fault.lab} ${result.after.passed}/${result.after.total}` : `Lab ${fault.lab}`;
    lines.push(
      "",
      result.restored ? `已恢复：${fault.file} 与实验前逐字节相同；${after}` : `未能恢复 ${fault.file}！原文件在 .pi-course/fault-backup/original`,
    );
    lines.push(chapterNextStep(result, manifest));
  }
  return lines.join("\n");
}

/** `return "x"` → `返回 "x" 的 return 语句`. */
function describeBefore(before: string): string {
  const literal = /(["'])(.*)\1/.exec(before)?.[2];
  return literal === undefined ? before : `返回 "${literal}" 的 return 语句`;
}

/** The last line: what the chapter looks like now that the file is back. */
function chapterNextStep(result: LearnerRunResult, manifest: ChapterManifest): string {
  const command = courseCommand("lab", manifest.id);
  const red = (result.chapterAfter ?? []).filter((lab) => lab.passed < lab.total);
  if (result.chapterAfter === undefined) return `下一步：${command}`;
  if (red.length === 0) return `下一步：${command}（本章全量应仍为全绿）`;
  return `注意：本章还有没通过的 Lab（${red.map((lab) => `Lab ${lab.id} ${lab.passed}/${lab.total}`).join("、")}），这与故障实验无关，实验前就是这样。下一步：${command}`;
}

async function learnerMode(manifest: ChapterManifest, faults: readonly LearnerFault[], args: FaultArgs, { root, io }: CommandContext): Promise<number> {
  const selected = selectFaults(faults, { ...args, all: args.all || args.id === undefined }, manifest.id);
  // Say first that an interrupted experiment was cleaned up, before anything else happens.
  const recovered = recoverFaultBackup(root);
  if (recovered.kind === "restored" && !args.json) io.stdout.write(`${recoveryNotice(recovered.state)}\n\n`);
  const interruption = catchInterruptions();
  try {
    let ok = true;
    const documents: LearnerRunResult[] = [];
    for (const fault of selected) {
      if (!args.json) {
        io.stdout.write(`故障实验 ${fault.id}（Lab ${fault.lab}）：${fault.description}\n\n${fault.learner.explain}\n\n`);
      }
      const result = await runInterruptibly(fault, manifest, args, interruption, { root, io });
      documents.push(result);
      if (!args.json) io.stdout.write(`${formatLearnerResult(result, fault, manifest)}\n`);
      ok = ok && result.status === "killed" && result.restored && result.after?.passed === result.after?.total;
    }
    if (args.json) io.stdout.write(`${JSON.stringify({ faults: documents, ok }, null, 2)}\n`);
    return resultStatus(ok, { json: args.json });
  } finally {
    interruption.finish();
  }
}

/**
 * One learner-mode run that an interruption stops cleanly: the file is restored the moment
 * the signal arrives (by the run's own guard), the test processes are ended and their
 * folders removed, and the learner is told what state the file is in before the command ends.
 */
async function runInterruptibly(
  fault: LearnerFault,
  manifest: ChapterManifest,
  args: FaultArgs,
  interruption: Interruption,
  { root, io }: CommandContext,
): Promise<LearnerRunResult> {
  try {
    return await runLearnerFault({
      root,
      manifest,
      fault,
      signal: interruption.signal,
      timeoutMs: DEFAULT_TIMEOUT_SECONDS * 1000,
      say: (line) => {
        if (!args.json) io.stderr.write(`${line}\n`);
      },
    });
  } catch (error) {
    // Say what state the file is in: the process is about to end by the signal.
    if (interruption.received() !== undefined && isCourseError(error, "ABORTED")) io.stderr.write(`${error.message}。\n`);
    throw error;
  }
}

/** Runs `fault`: author mode in the course repo, learner mode in a practice folder (`--list`: the faults only); resolves with the exit status. */
export async function run(args: FaultArgs, context: CommandContext): Promise<number> {
  const manifest = await loadManifest(context.root, args.chapter);
  const list = async (faults: readonly (Fault | LearnerFault)[]): Promise<number> => {
    context.io.stdout.write(`${listFaults(faults, args.json)}\n`);
    return 0;
  };
  if (isPracticeFolder(context.root)) {
    const faults = learnerFaults(manifest);
    return args.list ? list(faults) : learnerMode(manifest, faults, args, context);
  }
  const faults = authorFaults(manifest);
  return args.list ? list(faults) : authorMode(manifest, faults, args, context);
}
