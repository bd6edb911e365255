// test-process: shared
/** `lab/format.ts`: what `lab` prints for people and for machines. */
import assert from "node:assert/strict";
import path from "node:path";
import test from "node:test";
import type { LabOutcome } from "../../src/testing/labs.js";
import { formatOutcome, outcomeJson } from "../../src/lab/format.js";
import { summarizeLabs, type TestRecord } from "../../src/testing/results.js";
import { parseManifest } from "../../src/course/manifest.js";
import { createPaint } from "../../src/core/term.js";
import { MINI_MANIFEST } from "../support/lab-fixture.js";

const mini = parseManifest(MINI_MANIFEST, "chapters/99-mini/chapter.yaml");

const plain = createPaint(false);

/** A result record as the reporter writes it. */
function rec(path: string[], ok: boolean, message?: string, extra: Partial<TestRecord> = {}): TestRecord {
  const record: TestRecord = { ok, path, skip: false, todo: false, ...extra };
  if (!ok) record.error = { message: message ?? "boom", failureType: "testCodeFailure", ...extra.error };
  return record;
}

test("every failure names its test's file:line, in the report, the chapter table and --json; --verbose shows the whole diff", () => {
  const root = path.join(path.sep, "course with space");
  const testFile = path.join(root, "packages", "pi-course", "test", "99-mini.test.ts");
  const expected = Array.from({ length: 30 }, (_, i) => `  'item ${i}',`).join("\n");
  const actual = expected.replace("'item 17'", "'item seventeen'");
  const record = rec(
    ["Lab 99.1 · deep"],
    false,
    "Expected values to be strictly deep-equal:\n+ actual - expected ... Lines skipped\n\n  [\n...\n+   'item seventeen',\n-   'item 17',\n...",
    {
      file: testFile,
      line: 12,
      error: {
        message: "",
        // Frames only: a long diff in the message no longer pushes them out of the stack.
        stack: `    at TestContext.<anonymous> (${testFile}:15:10)`,
        compared: { actual: `[\n${actual}\n]`, expected: `[\n${expected}\n]` },
      },
    },
  );
  const labs = summarizeLabs(mini.labs, mini.labs, [
    record,
    rec(["Lab 99.1 · b"], true),
    rec(["Lab 99.2 · a"], true),
    rec(["Lab 99.2 · b"], true),
    rec(["Lab 99.2 · c"], true),
  ]);
  const outcome: LabOutcome = {
    kind: "tested",
    labs: labs.slice(0, 1),
    earlier: [],
    strays: [],
    crashes: [],
    output: [{ file: "x.js", stdout: "printed by the learner\n", stderr: "" }],
  };
  const ctx = { paint: plain, courseRoot: root, watch: false };
  const text = formatOutcome(outcome, mini, { chapter: "99", lab: "99.1" }, ctx);
  assert.match(text, /测试 packages\/pi-course\/test\/99-mini\.test\.ts:12:1\n  在 packages\/pi-course\/test\/99-mini\.test\.ts:15:10/);
  assert.doesNotMatch(text, /printed by the learner/);
  const verbose = formatOutcome(outcome, mini, { chapter: "99", lab: "99.1" }, { ...ctx, verbose: true });
  assert.match(verbose, /\+   'item seventeen',\n  -   'item 17',/);
  assert.match(verbose, /  'item 0',[\s\S]*  'item 29',/, "every line of the diff, not node's shortened one");
  assert.match(verbose, /printed by the learner/, "and what the tests printed");
  const table = formatOutcome({ ...outcome, labs }, mini, { chapter: "99" }, ctx);
  assert.match(table, /✗ Lab 99\.1[^\n]*\n\s+测试 packages\/pi-course\/test\/99-mini\.test\.ts:12:1/);
  const json = outcomeJson(outcome, mini, { chapter: "99", lab: "99.1" }, root) as { labs: { firstFailure: Record<string, unknown>; failures: unknown[] }[] };
  assert.equal(json.labs[0]?.firstFailure.testLocation, "packages/pi-course/test/99-mini.test.ts:12:1");
  assert.equal(json.labs[0]?.firstFailure.location, "packages/pi-course/test/99-mini.test.ts:15:10");
  assert.equal(json.labs[0]?.failures.length, 1);

  // Typed in the package folder (npm's INIT_CWD), or beside the course: every location is relative to there.
  const pkg = path.join(root, "packages", "pi-course");
  const fromPackage = formatOutcome(outcome, mini, { chapter: "99", lab: "99.1" }, { ...ctx, showFrom: pkg });
  assert.match(fromPackage, /测试 test\/99-mini\.test\.ts:12:1\n  在 test\/99-mini\.test\.ts:15:10/);
  const besides = formatOutcome(outcome, mini, { chapter: "99", lab: "99.1" }, { ...ctx, showFrom: path.join(path.sep, "elsewhere") });
  assert.match(besides, /测试 \.\.\/course with space\/packages\/pi-course\/test\/99-mini\.test\.ts:12:1/);
  const jsonFromPackage = outcomeJson(outcome, mini, { chapter: "99", lab: "99.1" }, root, pkg) as { labs: { firstFailure: Record<string, unknown> }[] };
  assert.deepEqual(
    [jsonFromPackage.labs[0]?.firstFailure.testLocation, jsonFromPackage.labs[0]?.firstFailure.location],
    ["test/99-mini.test.ts:12:1", "test/99-mini.test.ts:15:10"],
  );
});

test("a compiler diagnostic is shown as path:line:col relative to where the command was typed", () => {
  const root = path.join(path.sep, "course");
  const outcome: LabOutcome = {
    kind: "build_failed",
    diagnostics: [
      "packages/pi-course/src/mini.ts(3,14): error TS2322: Type 'string' is not assignable to type 'number'.",
      "error TS5083: Cannot read file 'x'.",
    ],
  };
  const text = formatOutcome(
    outcome,
    mini,
    { chapter: "99", lab: "99.1" },
    { paint: plain, courseRoot: root, showFrom: path.join(root, "packages", "pi-course"), watch: false },
  );
  assert.match(text, /\n  src\/mini\.ts:3:14 - error TS2322: Type 'string'/);
  assert.match(text, /\n  error TS5083: Cannot read file 'x'\./, "a diagnostic without a file stays as it is");
  const json = outcomeJson(outcome, mini, { chapter: "99", lab: "99.1" }, root) as { error: { diagnostics: string[] } };
  assert.equal(json.error.diagnostics[0], "packages/pi-course/src/mini.ts:3:14 - error TS2322: Type 'string' is not assignable to type 'number'.");
});

test("the last lab green while an earlier one is open: the warning claims no dependency, the closing line points at it", () => {
  const root = path.join(path.sep, "course");
  const labs = summarizeLabs(mini.labs, mini.labs, [
    rec(["Lab 99.1 · a"], false, "红了"),
    rec(["Lab 99.1 · b"], true),
    rec(["Lab 99.2 · a"], true),
    rec(["Lab 99.2 · b"], true),
    rec(["Lab 99.2 · c"], true),
  ]);
  const outcome: LabOutcome = { kind: "tested", labs: labs.slice(1), earlier: labs.slice(0, 1), strays: [], crashes: [], output: [] };
  const text = formatOutcome(outcome, mini, { chapter: "99", lab: "99.2" }, { paint: plain, courseRoot: root, watch: false });
  assert.match(text, /^⚠ 之前的 Lab 99\.1 现在没有通过：1\/2.*本章的 Lab 按顺序做，后面的可能用到它/);
  assert.doesNotMatch(text, /依赖/);
  assert.match(text, /本章最后一个 Lab 已通过，上面 ⚠ 的 Lab 还没有。/);
  const alone = formatOutcome({ ...outcome, earlier: [] }, mini, { chapter: "99", lab: "99.2" }, { paint: plain, courseRoot: root, watch: false });
  assert.match(alone, /本章最后一个 Lab 已通过。看看全章进度/);
});

test("a scaffold error handed on as a value (no frame at the site) points at the lab's construction site, not the test", () => {
  const root = path.join(path.sep, "course");
  const testFile = path.join(root, "packages", "pi-course", "test", "99-mini.test.ts");
  const labs = summarizeLabs(mini.labs, mini.labs, [
    rec(["Lab 99.1 · a"], false, "应当是 ok，实际是 failed: Lab 99.1 mini add 尚未实现", {
      file: testFile,
      line: 7,
      error: { message: "应当是 ok，实际是 failed: Lab 99.1 mini add 尚未实现", stack: `    at TestContext.<anonymous> (${testFile}:9:5)` },
    }),
    rec(["Lab 99.1 · b"], true),
  ]);
  const failure = labs[0]?.firstFailure;
  assert.equal(failure?.scaffoldOf, "99.1", "the runner sees the scaffold error in the message");
  const outcome: LabOutcome = { kind: "tested", labs: labs.slice(0, 1), earlier: [], strays: [], crashes: [], output: [] };
  const site = { file: "packages/pi-course/src/mini.ts", line: 3, column: 3 };
  const ctx = { paint: plain, courseRoot: root, watch: false };
  const text = formatOutcome(outcome, mini, { chapter: "99", lab: "99.1" }, { ...ctx, siteOf: (lab: string) => (lab === "99.1" ? site : undefined) });
  assert.match(text, /施工位尚未实现 · packages\/pi-course\/src\/mini\.ts:3:3/);
  assert.doesNotMatch(text, /施工位尚未实现 · packages\/pi-course\/test\//);
  const without = formatOutcome(outcome, mini, { chapter: "99", lab: "99.1" }, ctx);
  assert.match(without, /施工位尚未实现 · packages\/pi-course\/test\/99-mini\.test\.ts:9:5/, "no site known: the failure's own frame, as before");
});
