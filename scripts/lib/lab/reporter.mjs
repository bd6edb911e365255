// A node:test reporter for the lab runner (`node --test-reporter=<this file>`).
//
// It turns the runner's event stream into JSON lines, one per finished test, so that
// `lab` reads structured results instead of parsing TAP or spec text. Each line is
//
//   {"v":1,"ok":false,"path":["Lab 12.1 · …"],"file":"…","line":12,"skip":false,"todo":false,
//    "error":{"message":"…","name":"Error","code":"…","failureType":"testCodeFailure","stack":"…"}}
//
// `path` is the test's own name preceded by the names of the tests it is nested in, so the
// runner can group results by the lab id the outermost name starts with. Lines arrive in
// declaration order (node:test reports `test:pass`/`test:fail` in that order). File-level
// diagnostics other than the final counters become `{"v":1,"diagnostic":"…"}`.
//
// Plain JavaScript on purpose: node loads reporters itself, without tsx.

const STACK_LINES = 12;
const SUMMARY = /^(?:tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) [\d.]+$/;

/** A JSON-safe summary of what a failing test threw. */
function describeError(error) {
  if (error === undefined || error === null) return { message: "" };
  // node:test wraps what the test threw in ERR_TEST_FAILURE; the thrown value is `cause`.
  const wrapped = typeof error === "object" && error.code === "ERR_TEST_FAILURE";
  const thrown = wrapped && error.cause !== undefined && error.cause !== null ? error.cause : error;
  const failureType = wrapped ? error.failureType : undefined;
  if (typeof thrown !== "object") {
    return { message: String(thrown), failureType };
  }
  let message = typeof thrown.message === "string" ? thrown.message : String(thrown);
  if (message === "" && wrapped && typeof error.message === "string") message = error.message;
  const stack = typeof thrown.stack === "string" ? thrown.stack.split("\n").slice(0, STACK_LINES).join("\n") : undefined;
  return {
    message,
    name: typeof thrown.name === "string" ? thrown.name : undefined,
    code: typeof thrown.code === "string" ? thrown.code : undefined,
    failureType,
    stack,
  };
}

export default async function* labReporter(source) {
  // Names of the tests currently open, by nesting level (from `test:start`, which node
  // emits in declaration order before the test's own result and its subtests' results).
  const open = [];
  for await (const event of source) {
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
      skip: data.skip !== undefined && data.skip !== false,
      todo: data.todo !== undefined && data.todo !== false,
    };
    if (event.type === "test:fail") record.error = describeError(data.details?.error);
    yield `${JSON.stringify(record)}\n`;
  }
}
