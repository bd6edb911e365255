import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { pathToFileURL } from "node:url";
import { inCi, resultStatus } from "../lib/core/exit-status.js";
import { parseTarget } from "../lib/core/cli.js";
import { chapterNamePattern, labIdOfTestName, labNamePattern, labsNamePattern } from "../lib/course/lab-names.js";
import { distPathOf } from "../lib/core/paths.js";
import { type LabOutcome, runLab } from "../lib/testing/labs.js";
import { BACKUP_DIR, sha256, writeBackupSync } from "../lib/practice/backup.js";
import { parseCommand } from "../cli.js";
import { CHALLENGE_TIMEOUT_SECONDS, DEFAULT_TIMEOUT_SECONDS } from "../lib/testing/limits.js";
import { lineDiff } from "../lib/lab/diff.js";
import { formatOutcome, outcomeJson, outcomeOk } from "../lib/lab/format.js";
import { courseFrames, locateFailure } from "../lib/lab/locate.js";
import { learnerPreamble } from "../lib/practice/preamble.js";
import { parseRecords, summarizeLabs, type TestRecord } from "../lib/testing/results.js";
import { LAB_SCRATCH_PREFIX, makeLabScratch } from "../lib/testing/tests.js";
import { splitDiagnostics } from "../lib/testing/compiler.js";
import { currentOwner, OWNER_FILE, removeScratchDir, SCRATCH_JOURNALS, sweepStaleScratch, useJournalRoot } from "../lib/core/scratch.js";
import { createRerunner, debounce, WATCH_DEBOUNCE_MS, watchSources } from "../lib/lab/watch.js";
import { processesMentioning } from "./leftover-probe.js";
import { type LabSpec, loadManifest, parseManifest } from "../lib/course/manifest.js";
import { colorEnabled, createPaint, displayWidth, padEnd } from "../lib/core/term.js";
import { commandArgs } from "./support/tooling.js";
import { createMiniCourse, MINI_MANIFEST, miniSource, removeMiniCourse, repoRoot, runScript } from "./lab-fixture.js";

const mini = parseManifest(MINI_MANIFEST, "checkpoints/99.yaml");
const [lab1, lab2] = mini.labs as [LabSpec, LabSpec];
const plain = createPaint(false);

/** A result record as the reporter writes it. */
function rec(path: string[], ok: boolean, message?: string, extra: Partial<TestRecord> = {}): TestRecord {
  const record: TestRecord = { ok, path, skip: false, todo: false, ...extra };
  if (!ok) record.error = { message: message ?? "boom", failureType: "testCodeFailure", ...extra.error };
  return record;
}

// ---------------------------------------------------------------- names and patterns

test("a lab's name pattern selects its own tests and never a longer lab id", () => {
  const pattern = new RegExp(labNamePattern("12.1"));
  assert.ok(pattern.test("Lab 12.1 · roots"));
  assert.ok(pattern.test("Lab 12.1: roots"));
  assert.ok(!pattern.test("Lab 12.10 · later"));
  assert.ok(!pattern.test("Lab 12.2 · other"));
  assert.ok(!pattern.test("Lab 1201 · dot is literal"));
  assert.ok(!pattern.test("see Lab 12.1"));
  const upTo = new RegExp(labsNamePattern(["12.1", "12.2"]));
  assert.ok(upTo.test("Lab 12.1 · a") && upTo.test("Lab 12.2 · b"));
  assert.ok(!upTo.test("Lab 12.3 · c") && !upTo.test("Lab 12.10 · d") && !upTo.test("Lab 1202 · e"));
  const chapter = new RegExp(chapterNamePattern("12"));
  assert.ok(chapter.test("Lab 12.5 · hooks"));
  assert.ok(!chapter.test("Lab 11.1 · budget"));
  assert.ok(!chapter.test("hardening: symlink escape"));
});

test("lab ids are read from the start of a test name only", () => {
  assert.equal(labIdOfTestName("Lab 12.3 · template"), "12.3");
  assert.equal(labIdOfTestName("Lab 12.30 · x"), "12.30");
  assert.equal(labIdOfTestName("not Lab 12.3"), undefined);
  assert.equal(labIdOfTestName("Lab 12 · chapter"), undefined);
});

test("compiled test paths are derived per package, without globs", () => {
  assert.equal(distPathOf("packages/pi-course/test/12-resources-extensions.test.ts"), "packages/pi-course/dist/test/12-resources-extensions.test.js");
  assert.equal(distPathOf("packages/other/test/a.test.mts"), "packages/other/dist/test/a.test.mjs");
  assert.throws(() => distPathOf("test/loose.test.ts"), { code: "MANIFEST_INVALID" });
});

// ---------------------------------------------------------------- grouping results

test("the reporter keeps a long diff's stack frames, the error an assertion received, and both compared values", async () => {
  const { default: labReporter } = (await import(pathToFileURL(path.join(repoRoot, "scripts/lib/testing/reporter.mjs")).href)) as {
    default: (source: AsyncIterable<unknown>) => AsyncGenerator<string>;
  };
  const fail = (name: string, thrown: unknown) => ({
    type: "test:fail",
    data: { name, nesting: 0, file: "/c/test/x.test.ts", line: 7, details: { error: Object.assign(new Error("wrapped"), { code: "ERR_TEST_FAILURE", failureType: "testCodeFailure", cause: thrown }) } },
  });
  let deep: unknown;
  try {
    assert.deepStrictEqual(Array.from({ length: 40 }, (_, i) => i), Array.from({ length: 40 }, (_, i) => (i === 20 ? -1 : i)));
  } catch (error) {
    deep = error;
  }
  let received: unknown;
  try {
    assert.throws(() => {
      throw new Error("Lab 99.2 mini greet 尚未实现");
    }, { code: "GREET_EMPTY" });
  } catch (error) {
    received = error;
  }
  async function* events() {
    yield fail("Lab 99.1 · deep", deep);
    yield fail("Lab 99.2 · received", received);
  }
  const lines: string[] = [];
  for await (const line of labReporter(events())) lines.push(line);
  const [first, second] = lines.map((line) => JSON.parse(line) as TestRecord);
  assert.ok((first?.error?.message.split("\n").length ?? 0) > 12, "node's message is a long diff");
  assert.match(first?.error?.stack ?? "", /^ {4}at .*lab\.test\.ts:\d+:\d+/, "the frames survive the long message");
  assert.ok(first?.error?.compared?.actual.includes("19,\n  20,") && first.error.compared.expected.includes("-1"), "both values whole");
  assert.equal(first?.line, 7);
  assert.equal(second?.error?.actual?.message, "Lab 99.2 mini greet 尚未实现");
  assert.match(second?.error?.actual?.stack ?? "", /^ {4}at /);
});

test("reporter lines that are not records are skipped", () => {
  const good = JSON.stringify(rec(["Lab 99.1 · a"], true));
  const records = parseRecords(`${good}\nnoise\n{"ok":true}\n{"ok":false,"path":["Lab 99.1 · b"],"skip":false,"todo":false}\n{"ok":tr`);
  assert.deepEqual(records.map((r) => r.path[0]), ["Lab 99.1 · a", "Lab 99.1 · b"]);
});

test("a lab whose every test fails on its own scaffold error is not started", () => {
  const records = [rec(["Lab 99.1 · a"], false, lab1.scaffoldError), rec(["Lab 99.1 · b"], false, lab1.scaffoldError)];
  const [result] = summarizeLabs([lab1], mini.labs, records);
  assert.equal(result?.status, "not_started");
  assert.equal(result?.passed, 0);
  assert.equal(result?.total, 2);
  assert.deepEqual(result?.firstFailure && { test: result.firstFailure.test, message: result.firstFailure.message, of: result.firstFailure.scaffoldOf }, {
    test: "Lab 99.1 · a",
    message: lab1.scaffoldError,
    of: "99.1",
  });
});

test("a later lab blocked only by an earlier lab's scaffold is not started; the reverse is a failure", () => {
  const blocked = [rec(["Lab 99.2 · a"], false, lab1.scaffoldError), rec(["Lab 99.2 · b"], false, lab2.scaffoldError), rec(["Lab 99.2 · c"], false, lab2.scaffoldError)];
  assert.equal(summarizeLabs([lab2], mini.labs, blocked)[0]?.status, "not_started");
  // Lab 99.1 failing on Lab 99.2's scaffold means 99.1's code reached a later lab's site: a real failure.
  const reversed = [rec(["Lab 99.1 · a"], false, lab2.scaffoldError), rec(["Lab 99.1 · b"], false, lab1.scaffoldError)];
  assert.equal(summarizeLabs([lab1], mini.labs, reversed)[0]?.status, "failed");
});

test("a scaffold error an assertion about errors received counts as the construction site, and is what is shown", () => {
  const received = rec(["Lab 99.2 · a"], false, "Expected values to be strictly deep-equal:\n+ Comparison {}\n- Comparison {\n-   code: 'X'\n- }", {
    error: { message: "", actual: { message: lab2.scaffoldError, stack: "    at greet (/c/src/mini.ts:9:9)" } },
  });
  const records = [received, rec(["Lab 99.2 · b"], false, lab2.scaffoldError), rec(["Lab 99.2 · c"], false, lab1.scaffoldError)];
  const [result] = summarizeLabs([lab2], mini.labs, records);
  assert.equal(result?.status, "not_started");
  assert.equal(result?.firstFailure?.message, lab2.scaffoldError);
  assert.equal(result?.firstFailure?.scaffoldOf, "99.2");
  assert.equal(result?.firstFailure?.stack, "    at greet (/c/src/mini.ts:9:9)", "located where the scaffold was thrown");
});

test("one passing test or one ordinary failure makes a lab failed, with the first failure in declaration order", () => {
  const records = [
    rec(["Lab 99.2 · a"], true),
    rec(["Lab 99.2 · b"], false, "Expected values to be strictly equal:\n\n'hi pi' !== 'hello pi'\n"),
    rec(["Lab 99.2 · c"], false, lab2.scaffoldError),
  ];
  const [result] = summarizeLabs([lab2], mini.labs, records);
  assert.equal(result?.status, "failed");
  assert.equal(result?.passed, 1);
  assert.equal(result?.firstFailure?.test, "Lab 99.2 · b");
  assert.match(result?.firstFailure?.message ?? "", /'hi pi' !== 'hello pi'/);
  assert.equal(result?.firstFailure?.scaffoldOf, undefined);
});

test("a lab passes only with every test green and exactly the manifest's count", () => {
  const two = [rec(["Lab 99.1 · a"], true), rec(["Lab 99.1 · b"], true)];
  assert.equal(summarizeLabs([lab1], mini.labs, two)[0]?.status, "passed");
  const one = summarizeLabs([lab1], mini.labs, two.slice(0, 1))[0];
  assert.equal(one?.status, "failed");
  assert.match(one?.firstFailure?.message ?? "", /2 项.*1 项/);
  const none = summarizeLabs([lab1], mini.labs, [])[0];
  assert.deepEqual([none?.status, none?.passed, none?.total], ["failed", 0, 2]);
});

test("skipped, todo and pattern-filtered tests do not count", () => {
  const records = [
    rec(["Lab 99.1 · a"], true),
    rec(["Lab 99.1 · b"], true),
    rec(["Lab 99.1 · skipped"], true, undefined, { skip: true }),
    rec(["Lab 99.1 · todo"], false, "not yet", { todo: true }),
  ];
  assert.equal(summarizeLabs([lab1], mini.labs, records)[0]?.status, "passed");
});

test("nested tests count once, under the outermost lab name, and the failure shown is the failing subtest", () => {
  const records = [
    rec(["Lab 99.1 · suite", "inner ok"], true),
    rec(["Lab 99.1 · suite", "inner bad"], false, "inner message"),
    rec(["Lab 99.1 · suite"], false, "1 subtest failed", { error: { message: "1 subtest failed", failureType: "subtestsFailed" } }),
    rec(["Lab 99.1 · flat"], true),
  ];
  const [result] = summarizeLabs([lab1], mini.labs, records);
  assert.deepEqual([result?.passed, result?.total], [1, 2]);
  assert.equal(result?.firstFailure?.test, "Lab 99.1 · suite › inner bad");
  assert.equal(result?.firstFailure?.message, "inner message");
});

// ---------------------------------------------------------------- locating failures

test("failure locations point into the course, skipping node internals and node_modules", () => {
  const root = path.join(path.sep, "course");
  const at = (file: string, line: number) => `    at fn (${new URL(`file://${path.join(root, file)}`).href}:${line}:5)`;
  const stack = [
    "Error: Lab 99.1 mini add 尚未实现",
    `    at labError (${path.join(root, "node_modules", "x", "index.js")}:1:1)`,
    "    at node:internal/test_runner/test:1:1",
    at("packages/pi-course/src/mini.ts", 3),
    at("packages/pi-course/test/99-mini.test.ts", 6),
    `    at outside (${path.join(path.sep, "elsewhere", "x.js")}:1:1)`,
  ].join("\n");
  assert.deepEqual(
    courseFrames(stack, root).map((f) => `${f.file}:${f.line}`),
    ["packages/pi-course/src/mini.ts:3", "packages/pi-course/test/99-mini.test.ts:6"],
  );
  assert.equal(locateFailure(undefined, root), undefined);

  // A course under a path with spaces and parentheses keeps its locations.
  const spaced = path.join(path.sep, "home", "me", "my course (copy)");
  const frames = [
    `    at discoverResources (${path.join(spaced, "packages", "pi-course", "src", "resources.ts")}:163:9)`,
    `    at ${new URL(`file://${path.join(spaced, "packages", "pi-course", "test", "12-x.test.ts")}`).href}:141:3`,
    "    at async Promise.all (index 0)",
  ].join("\n");
  assert.deepEqual(
    courseFrames(frames, spaced).map((f) => `${f.file}:${f.line}`),
    ["packages/pi-course/src/resources.ts:163", "packages/pi-course/test/12-x.test.ts:141"],
  );
});

// ---------------------------------------------------------------- arguments and output

test("lab arguments: a chapter or a lab, flags, and one-line usage errors", () => {
  assert.deepEqual(parseTarget("12"), { chapter: "12" });
  assert.deepEqual(parseTarget("12.1"), { chapter: "12", lab: "12.1" });
  assert.deepEqual(parseTarget("3.1"), { chapter: "03", lab: "03.1" });
  assert.deepEqual(parseCommand("lab", ["12.1", "--watch"]), {
    help: false,
    watch: true,
    json: false,
    verbose: false,
    challenge: false,
    timeoutSeconds: DEFAULT_TIMEOUT_SECONDS,
    target: { chapter: "12", lab: "12.1" },
  });
  assert.equal(DEFAULT_TIMEOUT_SECONDS, 30);
  // The challenge tier is a chapter's, with each test's own limit (10 s unless --timeout says).
  assert.deepEqual(
    [parseCommand("lab", ["12", "--challenge"]).challenge, parseCommand("lab", ["12", "--challenge"]).timeoutSeconds, parseCommand("lab", ["12", "--challenge", "--timeout", "3"]).timeoutSeconds],
    [true, CHALLENGE_TIMEOUT_SECONDS, 3],
  );
  assert.equal(parseCommand("lab", ["12", "--timeout", "1.5"]).timeoutSeconds, 1.5);
  assert.equal(parseCommand("lab", ["12", "--timeout=90", "--verbose"]).timeoutSeconds, 90);
  assert.equal(parseCommand("lab", ["12", "--verbose"]).verbose, true);
  assert.equal(parseCommand("lab", ["--help"]).help, true);
  const bad = [[], ["12", "13"], ["12.x"], ["abc"], ["12", "--nope"], ["12", "--watch", "--json"], ["123"], ["12", "--timeout"], ["12", "--timeout", "0"], ["12", "--timeout", "-1"], ["12", "--timeout", "soon"], ["12", "--timeout", "86401"], ["12.1", "--challenge"], ["12", "--challenge", "--watch"]];
  for (const args of bad) {
    assert.throws(() => parseCommand("lab", args), { code: "USAGE" }, args.join(" "));
  }
});

test("exit statuses: a red result is 0 for a person, 1 with --json or in CI", () => {
  assert.equal(resultStatus(true, { json: false }, {}), 0);
  assert.equal(resultStatus(false, { json: false }, {}), 0);
  assert.equal(resultStatus(false, { json: true }, {}), 1);
  assert.equal(resultStatus(false, { json: false }, { CI: "true" }), 1);
  assert.equal(resultStatus(true, { json: true }, { CI: "1" }), 0);
  for (const off of ["", "0", "false", "FALSE"]) assert.equal(inCi({ CI: off }), false, off);
  assert.equal(inCi({}), false);
});

test("tsc output is split into diagnostics with their continuation lines", () => {
  const output = [
    "packages/pi-course/src/a.ts(1,7): error TS2322: Type 'string' is not assignable to type 'number'.",
    "packages/pi-course/src/a.ts(2,1): error TS2345: Argument of type",
    "  'x' is not assignable.",
    "",
    "Found 2 errors in the same file.",
  ].join("\n");
  const diagnostics = splitDiagnostics(output);
  assert.equal(diagnostics.length, 2);
  assert.match(diagnostics[1] ?? "", /TS2345[\s\S]*'x' is not assignable/);
});

test("colour only on a TTY and never with NO_COLOR; CJK counts two columns", () => {
  assert.equal(colorEnabled({ isTTY: true, write: () => true }, {}), true);
  assert.equal(colorEnabled({ isTTY: true, write: () => true }, { NO_COLOR: "1" }), false);
  assert.equal(colorEnabled({ isTTY: false, write: () => true }, {}), false);
  assert.equal(colorEnabled({ write: () => true }, {}), false);
  assert.equal(createPaint(false).red("x"), "x");
  assert.equal(createPaint(true).red("x"), "\u001b[31mx\u001b[39m");
  assert.equal(displayWidth("资源 ab"), 7);
  assert.equal(displayWidth(createPaint(true).green("✓ 2/2")), 5);
  assert.equal(padEnd("两数", 6), "两数  ");
});

test("every failure names its test's file:line, in the report, the chapter table and --json; --verbose shows the whole diff", () => {
  const root = path.join(path.sep, "course with space");
  const testFile = path.join(root, "packages", "pi-course", "test", "99-mini.test.ts");
  const expected = Array.from({ length: 30 }, (_, i) => `  'item ${i}',`).join("\n");
  const actual = expected.replace("'item 17'", "'item seventeen'");
  const record = rec(["Lab 99.1 · deep"], false, "Expected values to be strictly deep-equal:\n+ actual - expected ... Lines skipped\n\n  [\n...\n+   'item seventeen',\n-   'item 17',\n...", {
    file: testFile,
    line: 12,
    error: {
      message: "",
      // Frames only: a long diff in the message no longer pushes them out of the stack.
      stack: `    at TestContext.<anonymous> (${testFile}:15:10)`,
      compared: { actual: `[\n${actual}\n]`, expected: `[\n${expected}\n]` },
    },
  });
  const labs = summarizeLabs(mini.labs, mini.labs, [record, rec(["Lab 99.1 · b"], true), rec(["Lab 99.2 · a"], true), rec(["Lab 99.2 · b"], true), rec(["Lab 99.2 · c"], true)]);
  const outcome: LabOutcome = { kind: "tested", labs: labs.slice(0, 1), earlier: [], strays: [], crashes: [], output: [{ file: "x.js", stdout: "printed by the learner\n", stderr: "" }] };
  const ctx = { paint: plain, courseRoot: root, watch: false };
  const text = formatOutcome(outcome, mini, { chapter: "99", lab: "99.1" }, ctx);
  assert.match(text, /测试 packages\/pi-course\/test\/99-mini\.test\.ts:12\n  在 packages\/pi-course\/test\/99-mini\.test\.ts:15/);
  assert.doesNotMatch(text, /printed by the learner/);
  const verbose = formatOutcome(outcome, mini, { chapter: "99", lab: "99.1" }, { ...ctx, verbose: true });
  assert.match(verbose, /\+   'item seventeen',\n  -   'item 17',/);
  assert.match(verbose, /  'item 0',[\s\S]*  'item 29',/, "every line of the diff, not node's shortened one");
  assert.match(verbose, /printed by the learner/, "and what the tests printed");
  const table = formatOutcome({ ...outcome, labs }, mini, { chapter: "99" }, ctx);
  assert.match(table, /✗ Lab 99\.1[^\n]*\n\s+测试 packages\/pi-course\/test\/99-mini\.test\.ts:12/);
  const json = outcomeJson(outcome, mini, { chapter: "99", lab: "99.1" }, root) as { labs: { firstFailure: Record<string, unknown>; failures: unknown[] }[] };
  assert.equal(json.labs[0]?.firstFailure.testLocation, "packages/pi-course/test/99-mini.test.ts:12");
  assert.equal(json.labs[0]?.firstFailure.location, "packages/pi-course/test/99-mini.test.ts:15");
  assert.equal(json.labs[0]?.failures.length, 1);
});

test("the whole line diff keeps every line and marks only what differs", () => {
  assert.deepEqual(lineDiff("a\nb\nc", "a\nx\nc"), ["  a", "+ x", "- b", "  c"]);
  assert.deepEqual(lineDiff("same", "same"), ["  same"]);
  assert.deepEqual(lineDiff("", "new"), ["+ new", "- "]);
});

// ---------------------------------------------------------------- watch loop

test("a rerun aborts the run in progress, and of queued reruns only the last one runs", async () => {
  const log: string[] = [];
  const gates: (() => void)[] = [];
  let n = 0;
  const rerunner = createRerunner(async (signal) => {
    const id = ++n;
    log.push(`start ${id}`);
    await new Promise<void>((resolve) => {
      gates.push(resolve);
      signal.addEventListener("abort", () => resolve(), { once: true });
    });
    log.push(`${signal.aborted ? "aborted" : "done"} ${id}`);
  }, (error) => log.push(`error ${String(error)}`));
  const first = rerunner.trigger();
  const second = rerunner.trigger(); // aborts 1
  const third = rerunner.trigger(); // supersedes 2 before it starts
  await first;
  await Promise.resolve();
  while (gates.length < 2) await new Promise((resolve) => setImmediate(resolve));
  gates[1]?.();
  await Promise.all([second, third]);
  assert.deepEqual(log, ["start 1", "aborted 1", "start 2", "done 2"]);
  await rerunner.stop();
  await rerunner.trigger();
  assert.equal(n, 2, "no run after stop");
});

test("a failing run is reported and the loop goes on", async () => {
  const errors: unknown[] = [];
  let runs = 0;
  const rerunner = createRerunner(async () => {
    runs++;
    if (runs === 1) throw new Error("first fails");
  }, (error) => errors.push(error));
  await rerunner.trigger();
  await rerunner.trigger();
  assert.equal(runs, 2);
  assert.equal(errors.length, 1);
});

test("debounce calls once after the last of a burst, and cancel drops it", async () => {
  let calls = 0;
  const fire = debounce(() => calls++, 5);
  fire();
  fire();
  fire();
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(calls, 1);
  fire();
  fire.cancel();
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(calls, 1);
});

/** Saves `text` to `file` the way many editors (and `sed -i`) do: a temporary file renamed over it. */
function renameSave(file: string, text: string): void {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.swp`);
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

test("watching, a rerun sees every save: in-place, rename-over saves in a row, delete-and-create, a replaced folder", async (t) => {
  const root = await mkdtemp(path.join(os.tmpdir(), "pi-watch-"));
  t.after(() => rm(root, { recursive: true, force: true }));
  const src = path.join(root, "pkg", "src");
  const tests = path.join(root, "pkg", "test");
  mkdirSync(src, { recursive: true });
  mkdirSync(tests);
  for (const name of ["a.ts", "b.ts", "c.ts"]) writeFileSync(path.join(src, name), "0");
  // A "run" reads the tree, as a lab rerun would; runs are debounced exactly like lab's.
  const snapshot = (dir: string) => readdirSync(dir).filter((n) => n.endsWith(".ts")).sort().map((n) => `${n}=${readFileSync(path.join(dir, n), "utf8")}`).join(" ");
  let runs: string[] = [];
  let wake = () => {};
  const rerun = debounce(() => {
    runs.push(`${snapshot(src)} | ${snapshot(tests)}`);
    wake();
  }, WATCH_DEBOUNCE_MS);
  const watcher = watchSources([src, tests], rerun);
  t.after(async () => {
    rerun.cancel();
    await watcher.close();
  });
  await watcher.ready;
  /** Does `action`, then waits (for events, not for time) until a rerun has seen `seen` in the tree. */
  const expect = async (seen: string, action: () => void) => {
    runs = [];
    action();
    while (!runs.some((run) => run.includes(seen))) await new Promise<void>((resolve) => (wake = resolve));
  };
  await expect("a.ts=1", () => writeFileSync(path.join(src, "a.ts"), "1"));
  for (let save = 1; save <= 3; save++) await expect(`b.ts=${save}`, () => renameSave(path.join(src, "b.ts"), String(save)));
  await expect("c.ts=2", () => {
    unlinkSync(path.join(src, "c.ts"));
    writeFileSync(path.join(src, "c.ts"), "2");
  });
  // A tool that saves the whole folder at once: a new folder renamed into place.
  await expect("a.ts=9 b.ts=9 c.ts=9", () => {
    mkdirSync(`${src}.new`);
    for (const name of ["a.ts", "b.ts", "c.ts"]) writeFileSync(path.join(`${src}.new`, name), "9");
    renameSync(src, `${src}.old`);
    renameSync(`${src}.new`, src);
    rmSync(`${src}.old`, { recursive: true });
  });
  await expect("d.ts=1", () => writeFileSync(path.join(src, "d.ts"), "1"));
  await expect("b.ts=4", () => renameSave(path.join(src, "b.ts"), "4"));
  await expect("x.test.ts=1", () => writeFileSync(path.join(tests, "x.test.ts"), "1"));
});

// ---------------------------------------------------------------- the real runner on a mini course

test("runner on a synthetic chapter: starter, reference, a broken lab, a compile error, a crash", async (t) => {
  const course = await createMiniCourse("starter", { practice: true });
  t.after(() => removeMiniCourse(course));
  const manifest = await loadManifest(course.root, "99");
  const report = (outcome: Awaited<ReturnType<typeof runLab>>, lab?: string) =>
    formatOutcome(outcome, manifest, lab === undefined ? { chapter: "99" } : { chapter: "99", lab }, { paint: plain, courseRoot: course.root, watch: false });

  await t.test("the starter gives 0/2 on Lab 99.1's own scaffold error, pointing at the construction site", async () => {
    const outcome = await runLab(course.root, manifest, { chapter: "99", lab: "99.1" });
    assert.equal(outcome.kind, "tested");
    assert.ok(outcome.kind === "tested");
    assert.equal(outcome.labs.length, 1);
    const [lab] = outcome.labs;
    assert.deepEqual([lab?.passed, lab?.total, lab?.status], [0, 2, "not_started"]);
    assert.equal(lab?.firstFailure?.message, "Lab 99.1 mini add 尚未实现");
    assert.equal(outcomeOk(outcome), false);
    const text = report(outcome, "99.1");
    assert.match(text, /^Lab 99\.1 · 两数相加 {2}0\/2/);
    assert.match(text, /施工位尚未实现 · packages\/pi-course\/src\/mini\.ts:\d+/);
    assert.match(text, /npm run hint -w @pi\/course -- 99\.1/);
    const source = await readFile(path.join(course.root, "packages/pi-course/src/mini.ts"), "utf8");
    const line = Number(/mini\.ts:(\d+)/.exec(text)?.[1]);
    assert.match(source.split("\n")[line - 1] ?? "", /throw labError\("Lab 99\.1/);
  });

  await t.test("the chapter table of the starter lists every lab as not started", async () => {
    const outcome = await runLab(course.root, manifest, { chapter: "99" });
    assert.ok(outcome.kind === "tested");
    assert.deepEqual(outcome.labs.map((l) => [l.id, l.passed, l.total, l.status]), [
      ["99.1", 0, 2, "not_started"],
      ["99.2", 0, 3, "not_started"],
    ]);
    const text = report(outcome);
    assert.match(text, /本章 0\/5/);
    assert.match(text, /开始 Lab 99\.1/);
  });

  await t.test("the reference passes every lab: 5/5 and success", async () => {
    await course.use("reference");
    const outcome = await runLab(course.root, manifest, { chapter: "99" });
    assert.ok(outcome.kind === "tested");
    assert.deepEqual(outcome.labs.map((l) => l.status), ["passed", "passed"]);
    assert.equal(outcomeOk(outcome), true);
    assert.deepEqual(outcomeJson(outcome, manifest, { chapter: "99" }, course.root), {
      chapter: "99",
      labs: [
        { id: "99.1", title: "两数相加", passed: 2, total: 2, status: "passed" },
        { id: "99.2", title: "打招呼", passed: 3, total: 3, status: "passed" },
      ],
      passed: 5,
      total: 5,
    });
    assert.match(report(outcome), /本章 5\/5 · 全部通过/);
    const single = await runLab(course.root, manifest, { chapter: "99", lab: "99.1" });
    assert.match(report(single, "99.1"), /2\/2 ✓\n下一步：Lab 99\.2 · 打招呼，运行 npm run lab -w @pi\/course -- 99\.2/);
  });

  await t.test("a broken reference shows the first failing test and its assertion", async () => {
    await course.use("broken");
    const outcome = await runLab(course.root, manifest, { chapter: "99", lab: "99.2" });
    assert.ok(outcome.kind === "tested");
    const [lab] = outcome.labs;
    assert.deepEqual([lab?.passed, lab?.total, lab?.status], [0, 3, "failed"]);
    assert.equal(lab?.firstFailure?.test, "Lab 99.2 · greets by name");
    assert.match(lab?.firstFailure?.message ?? "", /\+ 'hi pi'\n- 'hello pi'/);
    assert.match(report(outcome, "99.2"), /在 packages\/pi-course\/test\/99-mini\.test\.ts:\d+/);
  });

  await t.test("an earlier lab gone red shows as a regression line above the lab asked for", async () => {
    await writeFile(
      path.join(course.root, "packages/pi-course/src/mini.ts"),
      'export function add(a: number, b: number): number {\n  return a - b;\n}\nexport function greet(name: string): string {\n  if (name === "") throw Object.assign(new Error("nobody"), { code: "GREET_EMPTY" });\n  return `hello ${name}`;\n}\n',
    );
    const outcome = await runLab(course.root, manifest, { chapter: "99", lab: "99.2" });
    assert.ok(outcome.kind === "tested");
    assert.deepEqual(outcome.labs.map((l) => `${l.id} ${l.passed}/${l.total}`), ["99.2 2/3"]);
    assert.deepEqual(outcome.earlier.map((l) => `${l.id} ${l.status} ${l.passed}/${l.total}`), ["99.1 failed 1/2"]);
    assert.match(report(outcome, "99.2"), /^⚠ 之前的 Lab 99\.1 现在没有通过：1\/2[^\n]*npm run lab -w @pi\/course -- 99\.1\nLab 99\.2/);
    assert.deepEqual((outcomeJson(outcome, manifest, { chapter: "99", lab: "99.2" }, course.root) as { regressions?: unknown }).regressions, [
      { id: "99.1", passed: 1, total: 2, status: "failed" },
    ]);
  });

  await t.test("a lab stuck in an endless loop ends at the time limit: message, no process, no temp folder left", async () => {
    // The stuck code also starts a process of its own: ending the run ends it too.
    // And it makes a temporary folder of its own, which its test would have removed had it ended.
    const marker = `${course.root}-grandchild`;
    const own = `pi-learner-${process.pid}-`;
    await writeFile(
      path.join(course.root, "packages/pi-course/src/mini.ts"),
      // The lean synthetic course has no Node typings (see support/lean-build.ts): this file is not type-checked.
      `// @ts-nocheck\nimport { spawn } from "node:child_process";\nimport { mkdtempSync } from "node:fs";\nimport os from "node:os";\nimport path from "node:path";\nexport function add(a: number, b: number): number {\n  mkdtempSync(path.join(os.tmpdir(), ${JSON.stringify(own)}));\n  spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", ${JSON.stringify(marker)}], { stdio: "ignore" });\n  for (;;) {}\n  return a + b;\n}\nexport function greet(name: string): string {\n  return name;\n}\n`,
    );
    const ours = () => readdirSync(os.tmpdir()).filter((name) => name.startsWith(`pi-lab-${process.pid}-`));
    const outcome = await runLab(course.root, manifest, { chapter: "99", lab: "99.1" }, { timeoutMs: 1500 });
    assert.ok(outcome.kind === "tested");
    assert.deepEqual(outcome.timedOut, { seconds: 1.5, labs: ["99.1"] });
    assert.equal(outcome.labs[0]?.status, "failed");
    assert.equal(outcomeOk(outcome), false);
    // Said once, by the lab's own failure: the limit, the test that was running, and the function it was in.
    const shown = report(outcome, "99.1");
    assert.match(shown, /✗ Lab 99\.1 · adds two numbers\n {2}超过时间上限 1\.5 秒，测试进程已被结束：测试 “Lab 99\.1 · adds two numbers”里，正在执行 add（packages\/pi-course\/src\/mini\.ts:\d+:\d+）[\s\S]*--timeout/);
    assert.equal(shown.match(/超过时间上限/g)?.length, 1);
    assert.deepEqual((outcomeJson(outcome, manifest, { chapter: "99", lab: "99.1" }, course.root) as { error?: unknown }).error, { kind: "timeout", seconds: 1.5 });
    assert.deepEqual(ours(), [], "the run's temp folder is gone");
    assert.deepEqual(readdirSync(os.tmpdir()).filter((name) => name.startsWith(own)), [], "and the one the learner's code made in it");
    assert.deepEqual(processesMentioning(course.root) ?? [], [], "the test process and the one it started are gone");
  });

  await t.test("a compile error stops before the tests and names the file", async () => {
    await writeFile(path.join(course.root, "packages/pi-course/src/mini.ts"), 'export function add(a: number, b: number): number {\n  return "nope";\n}\nexport function greet(n: string): string { return n; }\n');
    const outcome = await runLab(course.root, manifest, { chapter: "99", lab: "99.1" });
    assert.equal(outcome.kind, "build_failed");
    assert.ok(outcome.kind === "build_failed");
    assert.equal(outcome.diagnostics.length, 1);
    assert.match(outcome.diagnostics[0] ?? "", /^packages\/pi-course\/src\/mini\.ts\(2,3\): error TS2322/);
    assert.match(report(outcome, "99.1"), /编译失败（1 处错误），测试没有运行/);
    assert.equal(outcomeOk(outcome), false);
  });

  await t.test("async work that throws after the tests ended fails the run, and says why", async () => {
    await writeFile(
      path.join(course.root, "packages/pi-course/src/mini.ts"),
      'setTimeout(() => {\n  throw new Error("late boom");\n}, 50);\nexport function add(a: number, b: number): number { return a + b; }\nexport function greet(n: string): string { return `hello ${n}`; }\n',
    );
    const outcome = await runLab(course.root, manifest, { chapter: "99", lab: "99.1" });
    assert.ok(outcome.kind === "tested");
    assert.equal(outcomeOk(outcome), false);
    // Usually every test passed and the run failed afterwards; on a slow machine the timer
    // may fire during a test instead. Either way the report names the error.
    assert.match(report(outcome, "99.1"), /late boom/);
  });

  await t.test("a test file that crashes while loading is reported with its stderr", async () => {
    await writeFile(path.join(course.root, "packages/pi-course/src/mini.ts"), 'throw new Error("module top-level boom");\nexport function add(a: number, b: number): number { return a + b; }\nexport function greet(n: string): string { return n; }\n');
    const outcome = await runLab(course.root, manifest, { chapter: "99" });
    assert.ok(outcome.kind === "tested");
    assert.equal(outcome.crashes.length, 1);
    assert.match(outcome.crashes[0]?.stderr ?? "", /module top-level boom/);
    assert.ok(outcome.labs.every((l) => l.status === "failed" && l.passed === 0));
    assert.equal(outcomeOk(outcome), false);
    assert.match(report(outcome), /测试文件没能运行完：packages\/pi-course\/dist\/test\/99-mini\.test\.js/);
  });
});

test("a lab run's temp folder is a scratch folder of this process: owned, journaled, so a killed run's is swept by the next command", async (t) => {
  const parent = await mkdtemp(path.join(os.tmpdir(), "pi-stale-"));
  t.after(() => rm(parent, { recursive: true, force: true }));
  useJournalRoot(parent);
  t.after(() => useJournalRoot(repoRoot));
  const mine = await makeLabScratch(parent);
  assert.match(path.basename(mine), new RegExp(`^${LAB_SCRATCH_PREFIX}${process.pid}-`));
  assert.deepEqual(JSON.parse(readFileSync(path.join(mine, OWNER_FILE), "utf8")), currentOwner());
  const journals = readdirSync(path.join(parent, ...SCRATCH_JOURNALS.split("/")));
  assert.equal(journals.length, 1);
  assert.match(readFileSync(path.join(parent, ...SCRATCH_JOURNALS.split("/"), journals[0]!), "utf8"), new RegExp(LAB_SCRATCH_PREFIX));
  assert.deepEqual(sweepStaleScratch(), [], "this process is alive: its folder stays");
  assert.equal(existsSync(mine), true);
  await removeScratchDir(mine);
});

test("learner commands say first that the repo is the reference, and restore a fault exercise that was killed", async (t) => {
  const course = await createMiniCourse("reference", { practice: false });
  t.after(() => removeMiniCourse(course));
  const [notice] = learnerPreamble(course.root, "99");
  assert.match(notice ?? "", /^注意：这里是课程仓库本身（参考实现，代码已是答案），不是练习目录。[^\n]*npm run practice -w @pi\/course -- 99 <新目录>$/);

  const practice = await createMiniCourse("reference", { practice: true });
  t.after(() => removeMiniCourse(practice));
  assert.deepEqual(learnerPreamble(practice.root, "99"), [], "nothing to say in a clean practice folder");
  const file = path.join(practice.root, "packages/pi-course/src/mini.ts");
  const original = await readFile(file);
  const patched = Buffer.from(`${original.toString("utf8")}// injected\n`);
  const state = { format: 1 as const, fault: "99.1-x", file: "packages/pi-course/src/mini.ts", sha256: sha256(original), patchedSha256: sha256(patched), startedAt: "" };
  // A fault run still going on (its process lives): only a note, nothing touched.
  writeBackupSync(practice.root, { ...state, pid: process.ppid }, original);
  await writeFile(file, patched);
  assert.match(learnerPreamble(practice.root, "99")[0] ?? "", /正在进行/);
  assert.deepEqual(await readFile(file), patched);
  // Killed outright (its process is gone): restored, and said so.
  await writeFile(path.join(practice.root, BACKUP_DIR, "state.json"), JSON.stringify({ ...state, pid: 1073741824 }));
  assert.match(learnerPreamble(practice.root, "99")[0] ?? "", /被强行中断.*已从 \.pi-course\/fault-backup 把它逐字节恢复/);
  assert.deepEqual(await readFile(file), original);
  assert.ok(!existsSync(path.join(practice.root, BACKUP_DIR)));
});

test("lab after a killed fault exercise runs on the restored file, not on a build of the patched one", async (t) => {
  const practice = await createMiniCourse("reference", { practice: true });
  t.after(() => removeMiniCourse(practice));
  const file = path.join(practice.root, "packages/pi-course/src/mini.ts");
  const original = await readFile(file);
  // The exercise's patch breaks Lab 99.2; its process was killed before it could restore.
  const patched = Buffer.from(miniSource("broken"));
  writeBackupSync(practice.root, { format: 1, fault: "99.2-x", file: "packages/pi-course/src/mini.ts", sha256: sha256(original), patchedSha256: sha256(patched), pid: 1073741824, startedAt: "" }, original);
  await writeFile(file, patched);
  const run = await runScript(practice.root, "lab.ts", ["99.2"]);
  assert.match(run.stdout, /被强行中断.*已从 \.pi-course\/fault-backup 把它逐字节恢复/);
  assert.match(run.stdout, /Lab 99\.2 · 打招呼 {2}3\/3/, run.stdout);
  assert.deepEqual(await readFile(file), original);
});

// ---------------------------------------------------------------- the command itself

test("lab command: a red lab exits 0 (a result, not a crash) unless --json; plain piped output; usage errors", async (t) => {
  const course = await createMiniCourse("starter", { practice: true });
  t.after(() => removeMiniCourse(course));

  // First in the course "repo" (no practice marker): the first line says it is the reference.
  const marker = path.join(course.root, ".pi-course", "practice.json");
  const markerText = await readFile(marker, "utf8");
  await rm(marker);
  const red = await runScript(course.root, "lab.ts", ["99.1"]);
  await writeFile(marker, markerText);
  assert.match(red.stdout.split("\n")[0] ?? "", /^注意：这里是课程仓库本身（参考实现/);
  assert.equal(red.code, 0, "a red lab is the answer the learner asked for");
  assert.match(red.stdout, /0\/2/);
  assert.match(red.stdout, /Lab 99\.1 mini add 尚未实现/);
  assert.doesNotMatch(red.stdout, /\u001b\[/, "no colour on a pipe");
  const redJson = await runScript(course.root, "lab.ts", ["99.1", "--json"]);
  assert.equal(redJson.code, 1, "a machine asking gets a failing status");
  assert.equal((JSON.parse(redJson.stdout) as { labs: { status: string }[] }).labs[0]?.status, "not_started");

  await course.use("reference");
  const json = await runScript(course.root, "lab.ts", ["99", "--json"]);
  assert.equal(json.code, 0);
  const document = JSON.parse(json.stdout) as Record<string, unknown>;
  assert.deepEqual(Object.keys(document).sort(), ["chapter", "labs", "mode", "passed", "total"]);
  assert.deepEqual([document.chapter, document.passed, document.total, document.mode], ["99", 5, 5, "practice"]);

  for (const args of [["99.9"], ["42"], ["99", "--nope"], []]) {
    const usage = await runScript(course.root, "lab.ts", args);
    assert.equal(usage.code, 2, args.join(" "));
    assert.equal(usage.stderr.trim().split("\n").length, 1, `one line for ${args.join(" ")}: ${usage.stderr}`);
    if (args[0] === "99.9") assert.match(usage.stderr, /99\.1, 99\.2/);
  }
});

test("lab --watch reruns after each of two rename-style saves and exits cleanly on SIGINT", { skip: process.platform === "win32" && "SIGINT cannot be sent to a child on Windows" }, async (t) => {
  const course = await createMiniCourse("starter", { practice: true });
  t.after(() => removeMiniCourse(course));
  const child = spawn(process.execPath, [...commandArgs(course.root, "lab"), "99.1", "--watch"], {
    cwd: course.root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  t.after(() => child.kill());
  let stdout = "";
  let stderr = "";
  let exitCode: number | null | undefined;
  // Every finished run ends with this footer. Waiting for a count of footers (or for the
  // process to end) rather than for a particular result means a wrong result fails the
  // test instead of hanging it.
  const FOOTER = /保存即重跑 · Ctrl-C 退出\n/g;
  const runs = () => stdout.match(FOOTER)?.length ?? 0;
  let wake = () => {};
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    wake();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const closed = new Promise<void>((resolve) =>
    child.on("close", (code) => {
      exitCode = code;
      resolve();
      wake();
    }),
  );
  const waitForRuns = async (n: number) => {
    while (runs() < n && exitCode === undefined) await new Promise<void>((resolve) => (wake = resolve));
    assert.ok(runs() >= n, `lab --watch ended early (exit ${String(exitCode)}): ${stdout}${stderr}`);
    return stdout.split(FOOTER)[n - 1] ?? "";
  };

  assert.match(await waitForRuns(1), /0\/2/);
  // Two saves in a row the way editors write a file: a temporary file renamed over it.
  const file = path.join(course.root, "packages/pi-course/src/mini.ts");
  renameSave(file, miniSource("reference"));
  assert.match(await waitForRuns(2), /2\/2 ✓/);
  renameSave(file, miniSource("starter"));
  assert.match(await waitForRuns(3), /0\/2/);
  child.kill("SIGINT");
  await closed;
  assert.equal(exitCode, 0);
  assert.match(stdout, /已退出监视/);
  assert.equal(stderr, "", "no stack trace on Ctrl-C");
});
