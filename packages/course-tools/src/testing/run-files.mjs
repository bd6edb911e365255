// Runs test files with node:test in the order given, a process per file as `node --test` does:
//
//   node [node flags] run-files.mjs [--concurrency <n>] [--timeout <ms>] [--reporter spec|tap]
//                                   [--durations <file>] <test file>…
//
// `node --test <files>` sorts its files by path before it starts them; this keeps the caller's
// order, so that the files expected to take longest start first (`run-tests.mjs`) and a suite
// does not end on one long file alone. Everything else is `node --test`'s own: the same runner
// (`run` from node:test), a child process per file started with this process's node flags
// (`--enable-source-maps`, say), `--test-concurrency` and `--test-timeout` as `--concurrency`
// and `--timeout` (Node 20 and 22 apply that limit to each file; from Node 24 on `node --test`
// hands `--test-timeout` to each file's process as a limit per test, so give node the flag as
// well: `node --test-timeout=<ms> run-files.mjs --timeout <ms> …`, the processes inherit it),
// the reporter the command line would use (spec on a terminal, which the
// caller says with `--reporter spec`; otherwise node's default for output that is no
// terminal: TAP before Node 23, spec since), and exit status 1 when a test failed.
//
// `--durations <file>`: once the run has ended, writes there, as JSON, the seconds each test
// file's outermost tests took, summed, by the file node reports them under (with source maps,
// the source a compiled test came from).
//
// Plain JavaScript on purpose: it runs in a bare `node`, before anything is compiled.
import { writeFileSync } from "node:fs";
import { run } from "node:test";
import { spec, tap } from "node:test/reporters";
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { concurrency: { type: "string" }, timeout: { type: "string" }, reporter: { type: "string" }, durations: { type: "string" } },
});
const major = Number(process.versions.node.split(".")[0]);
const reporterName = values.reporter ?? (major >= 23 ? "spec" : "tap");
if (positionals.length === 0 || !["spec", "tap"].includes(reporterName)) {
  process.stderr.write("usage: node run-files.mjs [--concurrency <n>] [--timeout <ms>] [--reporter spec|tap] [--durations <file>] <test file>…\n");
  process.exit(2);
}

const seconds = new Map();
const stream = run({
  files: positionals,
  ...(values.concurrency === undefined ? {} : { concurrency: Number(values.concurrency) }),
  ...(values.timeout === undefined ? {} : { timeout: Number(values.timeout) }),
});
const count = (data) => {
  if (data.nesting === 0 && typeof data.file === "string") seconds.set(data.file, (seconds.get(data.file) ?? 0) + (data.details?.duration_ms ?? 0) / 1000);
};
stream.on("test:pass", count);
stream.on("test:fail", (data) => {
  count(data);
  if (data.todo === undefined || data.todo === false) process.exitCode = 1;
});
if (values.durations !== undefined) {
  const file = values.durations;
  process.once("exit", () => writeFileSync(file, `${JSON.stringify(Object.fromEntries(seconds), null, 1)}\n`));
}
stream.compose(reporterName === "spec" ? new spec() : tap).pipe(process.stdout);
