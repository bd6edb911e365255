/**
 * What `lab` prints: a compact report for people (Chinese, the one fact that matters
 * first: which test failed and why, then the next command) and a stable JSON shape for
 * machines. Pure functions of the outcome; colour comes in through `Paint`.
 */
import { BUILD_COMMAND, courseCommand } from "../core/command-line.js";
import type { LabOutcome } from "../testing/labs.js";
import type { LabTarget } from "../core/cli.js";
import { lineDiff } from "./diff.js";
import { courseFrames, formatLocation, locateFailure, scaffoldFrame, showDiagnostic, type SourceLocation } from "./locate.js";
import type { FirstFailure, LabResult } from "../testing/results.js";
import type { ChallengeOutcome } from "./challenge.js";
import type { ChapterManifest } from "../course/manifest.js";
import { displayWidth, padEnd, type Paint, truncate } from "../core/term.js";
import { shownPath } from "../core/paths.js";

export interface FormatContext {
  paint: Paint;
  courseRoot: string;
  /** The directory every location is shown relative to (where the command was typed); default `courseRoot`. */
  showFrom?: string;
  /** In watch mode the next step is "save", not "run this command again". */
  watch: boolean;
  /** Whole messages and diffs, every failing test, every stack frame in the course, the tests' output. */
  verbose?: boolean;
  /** True for a lab recorded green on the current code (`progress.ts`): a lab the next step can skip. */
  laterGreen?(id: string): boolean;
  /** Where lab `id`'s construction site is, when known: a scaffold error whose stack has no frame there points at it. */
  siteOf?(id: string): SourceLocation | undefined;
}

const MESSAGE_LINES = 12;
const DIAGNOSTICS_SHOWN = 5;
const DIAGNOSTIC_LINES = 6;
const STDERR_LINES = 20;

/** At most `max` lines of `text` (all of them when `max` is undefined), each indented, with a note of how many were left out. */
function excerpt(text: string, max: number | undefined, indent = "  "): string[] {
  const lines = text.replace(/\s+$/, "").split(/\r?\n/);
  const shown = lines.slice(0, max).map((line) => `${indent}${line}`);
  if (max !== undefined && lines.length > max) shown.push(`${indent}…（还有 ${lines.length - max} 行，加 --verbose 显示全部）`);
  return shown;
}

/** Passed over total of `labs`. */
export function totals(labs: readonly LabResult[]): { passed: number; total: number } {
  return {
    passed: labs.reduce((sum, lab) => sum + lab.passed, 0),
    total: labs.reduce((sum, lab) => sum + lab.total, 0),
  };
}

/**
 * True when the outcome means success: every selected lab passed, nothing crashed and the
 * time limit did not end the run. (A red earlier lab is reported but does not count here.)
 */
export function outcomeOk(outcome: LabOutcome): boolean {
  return outcome.kind === "tested" && outcome.crashes.length === 0 && outcome.timedOut === undefined && outcome.labs.every((lab) => lab.status === "passed");
}

/** The learner-facing report of `outcome` for `target` (one lab, or the chapter table). */
export function formatOutcome(outcome: LabOutcome, manifest: ChapterManifest, target: LabTarget, ctx: FormatContext): string {
  const { paint } = ctx;
  const rerun = courseCommand("lab", target.lab ?? manifest.id);
  if (outcome.kind === "aborted") return paint.dim("已中断。");
  if (outcome.kind === "build_failed") {
    const lines = [paint.red(`编译失败（${outcome.diagnostics.length} 处错误），测试没有运行：`)];
    for (const diagnostic of outcome.diagnostics.slice(0, DIAGNOSTICS_SHOWN))
      lines.push(...excerpt(showDiagnostic(diagnostic, ctx.courseRoot, ctx.showFrom), DIAGNOSTIC_LINES));
    if (outcome.diagnostics.length > DIAGNOSTICS_SHOWN) {
      lines.push(paint.dim(`  …还有 ${outcome.diagnostics.length - DIAGNOSTICS_SHOWN} 处错误（完整输出：${BUILD_COMMAND}）`));
    }
    lines.push(nextStep(ctx, "修正上面的编译错误", rerun));
    return lines.join("\n");
  }
  const lines: string[] = [];
  lines.push(...regressionLines(outcome.earlier, ctx));
  const earlierOpen = outcome.earlier.some((lab) => lab.status !== "passed");
  lines.push(...(target.lab === undefined ? chapterTable(outcome.labs, manifest, ctx) : labReport(outcome.labs, manifest, ctx, earlierOpen)));
  for (const stray of outcome.strays) {
    lines.push(paint.red(`✗ 不属于任何 Lab 的失败：${stray.test}`), ...excerpt(stray.message, ctx.verbose ? undefined : 4, "  "), ...whereLines(stray, ctx));
  }
  if (outcome.timedOut !== undefined) {
    // What was stuck is the lab's own failure; this line only says how to allow more time.
    lines.push(paint.dim(`确实需要更久时加 --timeout <秒>，例如 ${rerun} --timeout 60`));
  }
  for (const crash of outcome.crashes) {
    const how = crash.code === null ? "" : `（退出码 ${crash.code}）`;
    lines.push(paint.red(`测试文件没能运行完：${crash.file}${how}`), ...excerpt(crash.stderr || "(没有输出)", ctx.verbose ? undefined : STDERR_LINES));
  }
  if (ctx.verbose) {
    for (const { file, stdout, stderr } of outcome.output) {
      for (const [name, text] of [
        ["stdout", stdout],
        ["stderr", stderr],
      ] as const) {
        if (text.trim() !== "") lines.push(paint.dim(`── ${file} 的 ${name} ──`), ...excerpt(text, undefined, "  "));
      }
    }
  }
  return lines.join("\n");
}

/**
 * One line per earlier lab of the chapter that is not green, said even when only a later lab
 * was asked for. It claims no dependency it cannot see: whether the later lab uses the
 * earlier one shows only when a test reaches its construction site (then the failure says so).
 */
function regressionLines(earlier: readonly LabResult[], ctx: FormatContext): string[] {
  return earlier
    .filter((lab) => lab.status !== "passed")
    .map((lab) => {
      const state = lab.status === "not_started" ? "还没有完成" : "现在没有通过";
      const first = lab.firstFailure === undefined ? "" : `（${truncate(`${lab.firstFailure.test}：${lab.firstFailure.message.split("\n")[0] ?? ""}`, 70)}）`;
      return ctx.paint.yellow(
        `⚠ 之前的 Lab ${lab.id} ${state}：${lab.passed}/${lab.total}${first}；本章的 Lab 按顺序做，后面的可能用到它，运行 ${courseCommand("lab", lab.id)}`,
      );
    });
}

/** Where the test of `failure` is declared, `path:line:col` relative to `showFrom`, when known. */
function testLocation(failure: FirstFailure, showFrom: string): string | undefined {
  if (failure.testFile === undefined || failure.testLine === undefined) return undefined;
  return `${shownPath(failure.testFile, showFrom)}:${failure.testLine}:${failure.testColumn ?? 1}`;
}

/** `测试 …:163:1` (where the test is declared) and `在 …:88:11` (where it failed), as far as known. */
function whereLines(failure: FirstFailure, ctx: FormatContext, skipThrown = false): string[] {
  const lines: string[] = [];
  const showFrom = ctx.showFrom ?? ctx.courseRoot;
  const test = testLocation(failure, showFrom);
  if (test !== undefined) lines.push(ctx.paint.dim(`  测试 ${test}`));
  if (!skipThrown && failure.stack !== undefined) {
    const frames = ctx.verbose ? courseFrames(failure.stack, ctx.courseRoot) : [locateFailure(failure.stack, ctx.courseRoot)].filter((f) => f !== undefined);
    for (const frame of frames) lines.push(ctx.paint.dim(`  在 ${formatLocation(frame, ctx.courseRoot, showFrom)}`));
  }
  return lines;
}

function nextStep(ctx: FormatContext, what: string, command: string): string {
  return ctx.watch ? `下一步：${what}，保存后自动重跑。` : `下一步：${what}，再运行 ${ctx.paint.cyan(command)}`;
}

function describeFailure(failure: FirstFailure, ctx: FormatContext): { lines: string[]; where?: string } {
  const scaffold = failure.scaffoldOf;
  const location =
    (scaffold === undefined ? undefined : (scaffoldFrame(failure.stack, ctx.courseRoot, scaffold) ?? ctx.siteOf?.(scaffold))) ??
    locateFailure(failure.stack, ctx.courseRoot);
  const where = location === undefined ? undefined : formatLocation(location, ctx.courseRoot, ctx.showFrom);
  const lines = [ctx.paint.red(`✗ ${failure.test}`)];
  if (failure.rules !== undefined) {
    // The code failed outside every check of the test: name the rules the test checks first.
    lines.push(...failure.rules.map((rule) => `  ${rule.split("\n")[0]}`));
    lines.push(ctx.paint.dim(failure.timedOut === true ? "  这项测试检查上面的规则；它没有结束：" : "  这项测试检查上面的规则；你的代码在检查之外出错了："));
  }
  if (ctx.verbose && failure.compared !== undefined) {
    // The message's own diff may be shortened by node; show the whole one instead.
    lines.push(`  ${failure.message.split("\n")[0] ?? ""}`, ctx.paint.dim("  完整差异（+ 实际值，- 期望值）："));
    lines.push(...lineDiff(failure.compared.expected, failure.compared.actual).map((line) => `  ${line}`));
  } else {
    lines.push(...excerpt(failure.message, ctx.verbose ? undefined : MESSAGE_LINES));
  }
  if (failure.scaffoldOf !== undefined) {
    lines.push(ctx.paint.yellow(`  施工位尚未实现${where === undefined ? "" : ` · ${where}`}`));
  }
  lines.push(...whereLines(failure, ctx, failure.scaffoldOf !== undefined));
  return where === undefined ? { lines } : { lines, where };
}

/** Each asked lab's line and, for a red one, its first failure; `earlierOpen`: a lab before them is not green. */
function labReport(labs: readonly LabResult[], manifest: ChapterManifest, ctx: FormatContext, earlierOpen = false): string[] {
  const { paint } = ctx;
  const lines: string[] = [];
  for (const lab of labs) {
    const count = `${lab.passed}/${lab.total}`;
    const countText = lab.status === "passed" ? paint.green(`${count} ✓`) : paint.red(count);
    const mismatch = lab.total !== lab.expected ? paint.dim(`（清单要求 ${lab.expected} 项）`) : "";
    lines.push(`${paint.bold(`Lab ${lab.id} · ${lab.title}`)}  ${countText}${mismatch}`);
    const index = manifest.labs.findIndex((l) => l.id === lab.id);
    // The next lab not yet green on this code: later labs may be done already.
    const next = manifest.labs.slice(index + 1).find((l) => ctx.laterGreen?.(l.id) !== true);
    if (lab.status === "passed") {
      const laterDone = manifest.labs.length > index + 1;
      lines.push(
        next !== undefined
          ? `下一步：Lab ${next.id} · ${next.title}，运行 ${paint.cyan(courseCommand("lab", next.id))}`
          : laterDone
            ? `本章其余的 Lab 上次运行时也都已通过。看看全章进度：${paint.cyan(courseCommand("lab", manifest.id))}`
            : earlierOpen
              ? `本章最后一个 Lab 已通过，上面 ⚠ 的 Lab 还没有。看看全章进度：${paint.cyan(courseCommand("lab", manifest.id))}`
              : `本章最后一个 Lab 已通过。看看全章进度：${paint.cyan(courseCommand("lab", manifest.id))}`,
      );
      continue;
    }
    const failure = lab.firstFailure;
    if (failure === undefined) continue;
    const { lines: failureLines, where } = describeFailure(failure, ctx);
    lines.push(...failureLines);
    if (ctx.verbose) for (const other of lab.failures.slice(1)) lines.push(...describeFailure(other, ctx).lines);
    if (failure.scaffoldOf !== undefined && failure.scaffoldOf !== lab.id) {
      lines.push(
        `这项测试先用到了 Lab ${failure.scaffoldOf} 的函数，它还是施工位。先完成 Lab ${failure.scaffoldOf}：${paint.cyan(courseCommand("lab", failure.scaffoldOf))}`,
      );
    } else if (failure.scaffoldOf !== undefined) {
      lines.push(nextStep(ctx, `实现 Lab ${lab.id} 的施工位${where === undefined ? "" : `（${where}）`}`, courseCommand("lab", lab.id)));
    } else if (failure.timedOut === true) {
      lines.push(nextStep(ctx, "找出不会结束的那段代码", courseCommand("lab", lab.id)));
    } else {
      lines.push(nextStep(ctx, "对照上面的第一处失败修改代码", courseCommand("lab", lab.id)));
    }
    lines.push(paint.dim(`卡住了？要一级提示：${courseCommand("hint", lab.id)}`));
  }
  return lines;
}

const TITLE_WIDTH = 40;

function chapterTable(labs: readonly LabResult[], manifest: ChapterManifest, ctx: FormatContext): string[] {
  const { paint } = ctx;
  const lines = [paint.bold(`第 ${manifest.id} 章 · ${manifest.title}`)];
  const titleWidth = Math.min(TITLE_WIDTH, Math.max(...labs.map((lab) => displayWidth(lab.title))));
  for (const lab of labs) {
    const mark = lab.status === "passed" ? paint.green("✓") : lab.status === "failed" ? paint.red("✗") : paint.dim("·");
    const count = `${lab.passed}/${lab.total}`;
    let note = "";
    if (lab.status === "not_started") {
      const waiting = lab.firstFailure?.scaffoldOf;
      note = paint.dim(waiting !== undefined && waiting !== lab.id ? `未开始 · 等待 Lab ${waiting}` : "未开始");
    } else if (lab.status === "failed" && lab.firstFailure !== undefined) {
      const f = lab.firstFailure;
      note =
        f.scaffoldOf !== undefined && f.scaffoldOf !== lab.id
          ? paint.dim(`等待 Lab ${f.scaffoldOf} 的施工位`)
          : paint.dim(truncate(`${f.test}：${f.rules?.[0] ?? f.message.split("\n")[0] ?? ""}`, 60));
    }
    const countText = lab.status === "passed" ? paint.green(count) : count;
    lines.push(`  ${mark} Lab ${lab.id}  ${padEnd(truncate(lab.title, titleWidth), titleWidth)}  ${padEnd(countText, 5)}  ${note}`.trimEnd());
    const f = lab.firstFailure;
    if (lab.status === "failed" && f !== undefined && (f.scaffoldOf === undefined || f.scaffoldOf === lab.id)) {
      const indent = " ".repeat(4 + displayWidth(`Lab ${lab.id}  `) + titleWidth + 2 + 5 + 2);
      lines.push(...whereLines(f, ctx, f.scaffoldOf !== undefined).map((line) => `${indent}${line.trimStart()}`));
      if (ctx.verbose) for (const other of lab.failures) lines.push(...describeFailure(other, ctx).lines.map((line) => `    ${line}`));
    }
  }
  const { passed, total } = totals(labs);
  const all = labs.every((lab) => lab.status === "passed");
  lines.push(all ? paint.green(`本章 ${passed}/${total} · 全部通过`) : `本章 ${passed}/${total}`);
  const next = labs.find((lab) => lab.status !== "passed");
  if (next !== undefined) {
    const verb = next.status === "not_started" ? "开始" : "继续";
    lines.push(`下一步：${verb} Lab ${next.id}，运行 ${paint.cyan(courseCommand("lab", next.id))}`);
  }
  return lines;
}

/**
 * The `--json` document: `{ chapter, labs: [{ id, title, passed, total, status, firstFailure?,
 * failures? }], passed, total, regressions?, error?, strays?, crashes? }`; each failure has its
 * whole message, `location` (where it was thrown) and `testLocation` (where the test is), both
 * `path:line:col` relative to `showFrom` (default the course root), as the report shows them.
 */
export function outcomeJson(
  outcome: LabOutcome,
  manifest: ChapterManifest,
  target: LabTarget,
  courseRoot: string,
  showFrom: string = courseRoot,
): Record<string, unknown> {
  const selected = target.lab === undefined ? manifest.labs : manifest.labs.filter((lab) => lab.id === target.lab);
  const expected = selected.reduce((sum, lab) => sum + lab.tests, 0);
  if (outcome.kind !== "tested") {
    const error =
      outcome.kind === "build_failed"
        ? { kind: "build", diagnostics: outcome.diagnostics.map((d) => showDiagnostic(d, courseRoot, showFrom)) }
        : { kind: "aborted" };
    return { chapter: manifest.id, labs: [], passed: 0, total: expected, error };
  }
  const labs = outcome.labs.map((lab) => {
    const entry: Record<string, unknown> = { id: lab.id, title: lab.title, passed: lab.passed, total: lab.total, status: lab.status };
    if (lab.firstFailure !== undefined) {
      entry.firstFailure = failureJson(lab.firstFailure, courseRoot, showFrom);
      entry.failures = lab.failures.map((f) => failureJson(f, courseRoot, showFrom));
    }
    return entry;
  });
  const document: Record<string, unknown> = { chapter: manifest.id, labs, ...totals(outcome.labs) };
  const regressions = outcome.earlier.filter((lab) => lab.status !== "passed");
  if (regressions.length > 0) document.regressions = regressions.map((lab) => ({ id: lab.id, passed: lab.passed, total: lab.total, status: lab.status }));
  if (outcome.timedOut !== undefined) document.error = { kind: "timeout", seconds: outcome.timedOut.seconds };
  if (outcome.strays.length > 0) document.strays = outcome.strays.map((s) => failureJson(s, courseRoot, showFrom));
  if (outcome.crashes.length > 0) document.crashes = outcome.crashes.map((c) => ({ file: c.file, code: c.code, stderr: c.stderr }));
  return document;
}

/** A failure in the `--json` document: test, whole message, scaffold lab, where thrown, where the test is declared. */
function failureJson(f: FirstFailure, courseRoot: string, showFrom: string): Record<string, unknown> {
  const failure: Record<string, unknown> = { test: f.test, message: f.message };
  if (f.scaffoldOf !== undefined) failure.scaffoldOf = f.scaffoldOf;
  if (f.timedOut === true) failure.timedOut = true;
  if (f.rules !== undefined) failure.rules = f.rules;
  const location = locateFailure(f.stack, courseRoot, f.scaffoldOf);
  if (location !== undefined) failure.location = formatLocation(location, courseRoot, showFrom);
  const test = testLocation(f, showFrom);
  if (test !== undefined) failure.testLocation = test;
  return failure;
}

// ---------------------------------------------------------------------------
// The challenge tier
// ---------------------------------------------------------------------------

/** True when every challenge test of every theme passed and none hung. */
export function challengeOk(outcome: ChallengeOutcome): boolean {
  return outcome.kind === "tested" && outcome.themes.every((theme) => theme.failures.length === 0 && theme.passed === theme.total);
}

/** The challenge tier's report: one line per theme with its count and first failure, then the total. */
export function formatChallenge(outcome: ChallengeOutcome, manifest: ChapterManifest, ctx: FormatContext): string {
  const { paint } = ctx;
  if (outcome.kind === "aborted") return paint.dim("已中断。");
  if (outcome.kind === "build_failed") {
    return [
      paint.red(`编译失败（${outcome.diagnostics.length} 处错误），挑战关没有运行：`),
      ...outcome.diagnostics.slice(0, DIAGNOSTICS_SHOWN).flatMap((d) => excerpt(showDiagnostic(d, ctx.courseRoot, ctx.showFrom), DIAGNOSTIC_LINES)),
    ].join("\n");
  }
  const lines = [paint.bold(`第 ${manifest.id} 章 · 挑战关（加固测试，在你的代码上运行；不影响 Lab 的进度）`)];
  const titleWidth = Math.min(TITLE_WIDTH, Math.max(...outcome.themes.map((theme) => displayWidth(theme.title))));
  for (const theme of outcome.themes) {
    const ok = theme.failures.length === 0 && theme.passed === theme.total;
    const mark = ok ? paint.green("✓") : paint.red("✗");
    const count = `${theme.passed}/${theme.total}`;
    const first = theme.failures[0];
    const skipped = theme.skipped > 0 ? `（另有 ${theme.skipped} 项在这台机器上跳过）` : "";
    const note = first === undefined ? paint.dim(skipped) : paint.dim(truncate(`${first.test}：${first.message.split("\n")[0] ?? ""}`, 70));
    lines.push(`  ${mark} ${padEnd(truncate(theme.title, titleWidth), titleWidth)}  ${padEnd(ok ? paint.green(count) : count, 7)}  ${note}`.trimEnd());
    if (first !== undefined) {
      const indent = " ".repeat(4 + titleWidth + 2 + 7 + 2);
      lines.push(...whereLines(first, ctx).map((line) => `${indent}${line.trimStart()}`));
      if (ctx.verbose) for (const failure of theme.failures) lines.push(...describeFailure(failure, ctx).lines.map((line) => `    ${line}`));
    }
  }
  const passed = outcome.themes.reduce((sum, theme) => sum + theme.passed, 0);
  const total = outcome.themes.reduce((sum, theme) => sum + theme.total, 0);
  lines.push(challengeOk(outcome) ? paint.green(`挑战 ${passed}/${total} · 全部通过`) : `挑战 ${passed}/${total}`);
  const rules = manifest.challengeText === undefined ? "本章正文的“挑战关”一节" : manifest.challengeText;
  if (!challengeOk(outcome)) lines.push(paint.dim(`每个主题的规则写在${rules}；--verbose 列出每一项失败。`));
  return lines.join("\n");
}

/** The `--json` document of the challenge tier: `{ chapter, challenge: true, themes: [{ file, title, passed, total, skipped, failures }], passed, total }`. */
export function challengeJson(
  outcome: ChallengeOutcome,
  manifest: ChapterManifest,
  courseRoot: string,
  showFrom: string = courseRoot,
): Record<string, unknown> {
  if (outcome.kind !== "tested")
    return {
      chapter: manifest.id,
      challenge: true,
      themes: [],
      error:
        outcome.kind === "build_failed"
          ? { kind: "build", diagnostics: outcome.diagnostics.map((d) => showDiagnostic(d, courseRoot, showFrom)) }
          : { kind: "aborted" },
    };
  const themes = outcome.themes.map((theme) => ({
    file: theme.file,
    title: theme.title,
    passed: theme.passed,
    total: theme.total,
    skipped: theme.skipped,
    failures: theme.failures.map((f) => failureJson(f, courseRoot, showFrom)),
  }));
  return {
    chapter: manifest.id,
    challenge: true,
    themes,
    passed: outcome.themes.reduce((sum, theme) => sum + theme.passed, 0),
    total: outcome.themes.reduce((sum, theme) => sum + theme.total, 0),
  };
}
