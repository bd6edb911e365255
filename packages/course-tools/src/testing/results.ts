/**
 * From raw test results to lab results. Pure functions over the JSON lines written by
 * `reporter.mjs`: group tests by the lab id their name starts with (`Lab 12.1 · …`),
 * count passes, find the first failure and recognise a lab's scaffold error (the exact
 * message its starter throws) so that "not started yet" reads differently from "wrong".
 */
import { labIdOfTestName } from "../course/lab-names.js";
import type { LabSpec } from "../course/manifest.js";

/** A thrown value as the reporter describes it. */
export interface ThrownError {
  message: string;
  name?: string;
  code?: string;
  /** Its call frames only (`    at …` lines), top first. */
  stack?: string;
}

/** What a failing test threw, as the reporter describes it. */
export interface TestError extends ThrownError {
  /** node:test's classification: `testCodeFailure`, `subtestsFailed`, `cancelledByParent`, … */
  failureType?: string;
  /** For an assertion about an error (`assert.rejects(p, { code })`): the error actually thrown. */
  actual?: ThrownError;
  /** For an equality assertion: both values rendered whole (node's message shortens long diffs). */
  compared?: { actual: string; expected: string };
}

/** One finished test, as written by the reporter. */
export interface TestRecord {
  ok: boolean;
  /** Names from the outermost enclosing test down to this test's own name. */
  path: string[];
  /** Where the test is declared (the TypeScript source, absolute). */
  file?: string;
  line?: number;
  column?: number;
  skip: boolean;
  todo: boolean;
  error?: TestError;
}

export type LabStatus = "passed" | "failed" | "not_started";

export interface FirstFailure {
  /** The failing test's name (`Lab 12.1 · … › subtest` when the failure is nested). */
  test: string;
  message: string;
  /** The id of the lab whose scaffold error this is, when it is one. */
  scaffoldOf?: string;
  /** Call frames of what was thrown (of the scaffold error, when an assertion received one), for locating it in the learner's code. */
  stack?: string;
  /** Where the failing test is declared: its file (absolute), line and column. */
  testFile?: string;
  testLine?: number;
  testColumn?: number;
  /** Set when the run's time limit ended the lab before its tests reported. */
  timedOut?: boolean;
  /** For an equality assertion: both values rendered whole. */
  compared?: { actual: string; expected: string };
  /** The rules the test checks (`test-rules.ts`), when the failure itself names none. */
  rules?: string[];
}

export interface LabResult {
  id: string;
  title: string;
  passed: number;
  /** Tests found for this lab (the manifest's count when none were found). */
  total: number;
  /** Tests the manifest says the lab has. */
  expected: number;
  /** Tests of this lab that reported a result. */
  reported: number;
  status: LabStatus;
  firstFailure?: FirstFailure;
  /** Every failing test of the lab, in declaration order (`firstFailure` is the first). */
  failures: FirstFailure[];
}

/** Everything one test process reported. */
export interface Report {
  records: TestRecord[];
  /** File-level diagnostics (not the final counters), e.g. an error after the tests ended. */
  diagnostics: string[];
  /** Names of the outermost tests that started, in order. */
  started: string[];
}

/**
 * Parses the reporter's JSON lines. Lines that are neither a record nor a diagnostic (a
 * truncated last line when the test process crashed) are skipped, never fatal.
 */
export function parseReport(text: string): Report {
  const report: Report = { records: [], diagnostics: [], started: [] };
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    if (isRecord(value)) report.records.push(value);
    else if (typeof value === "object" && value !== null && typeof (value as { started?: unknown }).started === "string") {
      report.started.push((value as { started: string }).started);
    } else if (typeof value === "object" && value !== null && typeof (value as { diagnostic?: unknown }).diagnostic === "string") {
      report.diagnostics.push((value as { diagnostic: string }).diagnostic);
    }
  }
  return report;
}

/** The test records of the reporter's JSON lines (see `parseReport`). */
export function parseRecords(text: string): TestRecord[] {
  return parseReport(text).records;
}

function isRecord(value: unknown): value is TestRecord {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.ok === "boolean" && Array.isArray(v.path) && v.path.every((p) => typeof p === "string") && v.path.length > 0;
}

/**
 * The id of the lab whose scaffold error `message` carries (the longest matching
 * `scaffoldError` among `labs`), or undefined when it is an ordinary failure.
 */
export function scaffoldLabOf(message: string, labs: readonly LabSpec[]): string | undefined {
  let best: LabSpec | undefined;
  for (const lab of labs) {
    if (lab.scaffoldError !== "" && message.includes(lab.scaffoldError)) {
      if (best === undefined || lab.scaffoldError.length > best.scaffoldError.length) best = lab;
    }
  }
  return best?.id;
}

const startsWith = (path: readonly string[], prefix: readonly string[]) => path.length >= prefix.length && prefix.every((name, i) => path[i] === name);

/**
 * The failure to show for failing test `test`: its first failing descendant that failed on
 * its own (not merely because its subtests did), else the test itself.
 */
function failureOf(test: TestRecord, records: readonly TestRecord[], labs: readonly LabSpec[]): FirstFailure {
  const leaf =
    records.find((r) => !r.ok && r.path.length > test.path.length && startsWith(r.path, test.path) && r.error?.failureType !== "subtestsFailed") ?? test;
  return describeFailure(leaf, leaf.path.slice(test.path.length - 1).join(" › "), labs);
}

/**
 * The failure of record `failed` as the learner sees it, under the name `test`. A scaffold
 * error counts whether the test threw it or an assertion about an error received it
 * (`assert.rejects(activate(), { code })` against a function that still throws its scaffold):
 * either way the lab's construction site was reached, not a wrong answer.
 */
function describeFailure(failed: TestRecord, test: string, labs: readonly LabSpec[]): FirstFailure {
  const error = failed.error;
  const message = (error?.message ?? "").trim() || "(测试失败，但没有给出错误信息)";
  const failure: FirstFailure = { test, message };
  const direct = scaffoldLabOf(message, labs);
  const received = direct === undefined && error?.actual !== undefined ? scaffoldLabOf(error.actual.message, labs) : undefined;
  if (direct !== undefined) failure.scaffoldOf = direct;
  if (received !== undefined) {
    failure.scaffoldOf = received;
    failure.message = error!.actual!.message.trim();
  }
  const stack = received !== undefined ? error?.actual?.stack : error?.stack;
  if (stack !== undefined) failure.stack = stack;
  if (received === undefined && error?.compared !== undefined) failure.compared = error.compared;
  if (failed.file !== undefined) failure.testFile = failed.file;
  if (failed.line !== undefined) failure.testLine = failed.line;
  if (failed.column !== undefined) failure.testColumn = failed.column;
  return failure;
}

/**
 * Lab results for `selected` (in the given order) from the results of one test run.
 *
 * A lab's tests are the outermost tests whose name starts with `Lab <id>`; skipped and
 * todo tests (including those the name pattern filtered out) do not count. Status:
 * `passed` when every test passed and there are exactly as many as the manifest says;
 * `not_started` when every test failed with a scaffold error of this lab or of an earlier
 * one (its tests may call an earlier lab's function first), thrown by the test or received by
 * one of its assertions about errors; else `failed`.
 * `allLabs` (the chapter's labs) is used to recognise another lab's scaffold error.
 */
export function summarizeLabs(selected: readonly LabSpec[], allLabs: readonly LabSpec[], records: readonly TestRecord[]): LabResult[] {
  const counted = records.filter((r) => !r.skip && !r.todo);
  return selected.map((lab) => {
    const tests = counted.filter((r) => {
      const last = r.path.length - 1;
      return labIdOfTestName(r.path[last] ?? "") === lab.id && r.path.slice(0, last).every((n) => labIdOfTestName(n) === undefined);
    });
    const base = { id: lab.id, title: lab.title, expected: lab.tests, reported: tests.length };
    if (tests.length === 0) {
      const missing: FirstFailure = { test: `Lab ${lab.id}`, message: `没有找到名称以 “Lab ${lab.id}” 开头的测试（应有 ${lab.tests} 项）` };
      return { ...base, passed: 0, total: lab.tests, status: "failed" as const, firstFailure: missing, failures: [missing] };
    }
    const passed = tests.filter((t) => t.ok).length;
    const failing = tests.filter((t) => !t.ok);
    if (failing.length === 0) {
      if (tests.length === lab.tests) return { ...base, passed, total: tests.length, status: "passed" as const, failures: [] };
      const count: FirstFailure = { test: `Lab ${lab.id}`, message: `测试数量不符：本章清单要求 ${lab.tests} 项，找到 ${tests.length} 项` };
      return { ...base, passed, total: tests.length, status: "failed" as const, firstFailure: count, failures: [count] };
    }
    const failures = failing.map((t) => failureOf(t, counted, allLabs));
    // Labs build on each other: a later lab's test may first call an earlier lab's
    // function and stop at that lab's scaffold. Nothing of this lab can work yet either.
    const upToHere = new Set(allLabs.slice(0, allLabs.findIndex((l) => l.id === lab.id) + 1).map((l) => l.id));
    upToHere.add(lab.id);
    const notStarted = passed === 0 && failures.every((f) => f.scaffoldOf !== undefined && upToHere.has(f.scaffoldOf));
    return {
      ...base,
      passed,
      total: tests.length,
      status: notStarted ? ("not_started" as const) : ("failed" as const),
      firstFailure: failures[0]!,
      failures,
    };
  });
}

/**
 * The outermost tests of `records` that ran (skipped and todo tests do not count), as a
 * count of passes and one failure per failing test, in declaration order: for test files
 * that are not labs (the challenge tier).
 */
export function summarizeTests(records: readonly TestRecord[]): { passed: number; total: number; failures: FirstFailure[] } {
  const counted = records.filter((r) => !r.skip && !r.todo);
  const tests = counted.filter((r) => r.path.length === 1);
  return {
    passed: tests.filter((t) => t.ok).length,
    total: tests.length,
    failures: tests.filter((t) => !t.ok).map((t) => failureOf(t, counted, [])),
  };
}

/**
 * Failures that belong to no lab: a failing hook or test outside any `Lab …` test (for
 * example a `before` at file level). They are shown so that nothing fails silently.
 */
export function strayFailures(records: readonly TestRecord[]): FirstFailure[] {
  return records
    .filter((r) => !r.ok && !r.skip && !r.todo && r.error?.failureType !== "subtestsFailed")
    .filter((r) => r.path.every((n) => labIdOfTestName(n) === undefined))
    .map((r) => describeFailure(r, r.path.join(" › "), []));
}

/** Everything one run of compiled test files reported (`testing/tests.ts`). */
export interface TestRun {
  records: TestRecord[];
  /** Focused test files (repo-relative) that were run, in order. */
  files: string[];
  /** Files whose process exited abnormally without reporting every test: their stderr. */
  crashes: { file: string; code: number | null; stderr: string }[];
  /** What each test process printed (the learner's `console.log`, node's warnings). */
  output: { file: string; stdout: string; stderr: string }[];
  /** Set when the run hit its time limit: the test processes were ended, the results are partial. */
  timedOut?: TimedOut;
  /** Set when every expected test had reported but a test process did not end by itself (see `TestOptions.expectedTests` in `tests.ts`). */
  lingered?: boolean;
  /** Set when the run stalled (see `TestOptions.stallMs` in `tests.ts`): where it was, as far as known. */
  stalled?: Omit<TimedOut, "seconds">;
}

/** A run ended by its time limit, and where it was stuck as far as that is known. */
export interface TimedOut {
  seconds: number;
  /** The outermost test that was running (its name path), when known. */
  test?: string[];
  /**
   * Where the code was when the watchdog looked just before the limit (see `watchdog.mjs`),
   * top frame first: absent when the process was waiting rather than computing.
   */
  frames?: StackFrame[];
}

/** A call frame of a stuck test process, mapped to its TypeScript source where a source map says so. */
export interface StackFrame {
  functionName: string;
  /** Absolute path of the source file (the `.ts` when mapped), or the URL as the inspector gave it. */
  file: string;
  /** 1-based. */
  line: number;
  column: number;
}
