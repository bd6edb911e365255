// A node:test reporter for the lab runner (`node --test-reporter=<this file>`).
//
// It turns the runner's event stream into JSON lines, one per finished test, so that
// `lab` reads structured results instead of parsing TAP or spec text. Each line is
//
//   {"v":1,"ok":false,"path":["Lab 12.1 · …"],"file":"…","line":12,"column":1,"skip":false,"todo":false,
//    "error":{"message":"…","name":"Error","code":"…","failureType":"testCodeFailure","stack":"    at …",
//             "actual":{"message":"…","stack":"    at …"}}}
//
// `file`, `line` and `column` are where the test is declared (node maps them to the TypeScript source
// when the process runs with --enable-source-maps); `stack` holds only the call frames;
// `actual` is the error an assertion about an error received (e.g. a scaffold error that
// `assert.rejects(…, { code })` did not expect); `compared` holds an equality assertion's
// actual and expected values rendered whole, for `lab --verbose`.
//
// `path` is the test's own name preceded by the names of the tests it is nested in, so the
// runner can group results by the lab id the outermost name starts with. Lines arrive in
// declaration order (node:test reports `test:pass`/`test:fail` in that order). File-level
// diagnostics other than the final counters become `{"v":1,"diagnostic":"…"}`, and each outermost
// test's start is `{"v":1,"started":"<name>"}`.
//
// Plain JavaScript on purpose: node loads reporters itself, without tsx.

import { inspect } from "node:util";

const STACK_FRAMES = 12;
/** Assertions whose actual and expected values are worth a whole diff (node cuts its own). */
const COMPARISONS = new Set(["deepStrictEqual", "strictEqual", "deepEqual", "equal", "partialDeepStrictEqual"]);
/** Longest rendering of a compared value kept for `--verbose`. */
const MAX_RENDERED = 200_000;
const SUMMARY = /^(?:tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) [\d.]+$/;

/** `value` rendered in full (every level, every element), as node's own diffs render values. */
function render(value) {
  const text = typeof value === "string" ? value : inspect(value, { depth: null, maxArrayLength: null, maxStringLength: null, breakLength: 80, compact: 3 });
  return text.length > MAX_RENDERED ? `${text.slice(0, MAX_RENDERED)}\n…` : text;
}

/**
 * The call frames of `stack` (its `    at …` lines), at most STACK_FRAMES of them. The message
 * part is left out: an assertion's message is the whole diff, which would crowd the frames
 * out of any fixed number of lines.
 */
function framesOf(stack) {
  if (typeof stack !== "string") return undefined;
  const frames = stack.split("\n").filter((line) => /^\s+at /.test(line));
  return frames.length === 0 ? undefined : frames.slice(0, STACK_FRAMES).join("\n");
}

/** Message, name, code and frames of a thrown value, JSON-safe. */
function describeThrown(thrown) {
  if (typeof thrown !== "object" || thrown === null) return { message: String(thrown) };
  return {
    message: typeof thrown.message === "string" ? thrown.message : String(thrown),
    name: typeof thrown.name === "string" ? thrown.name : undefined,
    code: typeof thrown.code === "string" ? thrown.code : undefined,
    stack: framesOf(thrown.stack),
  };
}

/** A JSON-safe summary of what a failing test threw. */
function describeError(error) {
  if (error === undefined || error === null) return { message: "" };
  // node:test wraps what the test threw in ERR_TEST_FAILURE; the thrown value is `cause`.
  const wrapped = typeof error === "object" && error.code === "ERR_TEST_FAILURE";
  const thrown = wrapped && error.cause !== undefined && error.cause !== null ? error.cause : error;
  const failureType = wrapped ? error.failureType : undefined;
  const described = { ...describeThrown(thrown), failureType };
  if (described.message === "" && wrapped && typeof error.message === "string") described.message = error.message;
  // An assertion about an error (`assert.rejects(p, { code })`) carries the error that
  // was actually thrown as `actual`: a scaffold error of an unfinished lab shows up there.
  const actual = typeof thrown === "object" && thrown !== null && thrown.code === "ERR_ASSERTION" ? thrown.actual : undefined;
  if (actual instanceof Error) described.actual = describeThrown(actual);
  // node shortens long diffs in the message ("... Lines skipped"); keep both values whole.
  if (typeof thrown === "object" && thrown !== null && thrown.code === "ERR_ASSERTION" && COMPARISONS.has(thrown.operator)) {
    described.compared = { actual: render(thrown.actual), expected: render(thrown.expected) };
  }
  return described;
}

export default async function* labReporter(source) {
  // Names of the tests currently open, by nesting level (from `test:start`, which node
  // emits in declaration order before the test's own result and its subtests' results).
  const open = [];
  for await (const event of source) {
    if (event.type === "test:dequeue") {
      // Emitted right before a test runs (`test:start` only comes when its results are
      // reported): which outermost test started last is what a run ended by its time limit was
      // doing, when that test was waiting rather than computing (a computing one is named by
      // the watchdog).
      if (event.data.nesting === 0) yield `${JSON.stringify({ v: 1, started: event.data.name })}\n`;
      continue;
    }
    if (event.type === "test:start") {
      open.length = event.data.nesting;
      open.push(event.data.name);
      continue;
    }
    if (event.type === "test:diagnostic") {
      // File-level notes other than the closing counters, e.g. an error thrown by async
      // work after the tests ended, which fails the run without failing any test.
      if (event.data.nesting === 0 && !SUMMARY.test(event.data.message)) {
        yield `${JSON.stringify({ v: 1, diagnostic: event.data.message })}\n`;
      }
      continue;
    }
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const data = event.data;
    const path = [...open.slice(0, data.nesting), data.name];
    const record = {
      v: 1,
      ok: event.type === "test:pass",
      path,
      file: data.file,
      line: data.line,
      column: data.column,
      skip: data.skip !== undefined && data.skip !== false,
      todo: data.todo !== undefined && data.todo !== false,
    };
    if (event.type === "test:fail") record.error = describeError(data.details?.error);
    yield `${JSON.stringify(record)}\n`;
  }
}
