// test-process: shared
/**
 * `testing/results.ts`: from the reporter's lines to lab results: counting, the first
 * failure, and a lab's scaffold error told apart from a wrong answer.
 */
import assert from "node:assert/strict";
import test from "node:test";
import { parseRecords, summarizeLabs, type TestRecord } from "../../src/testing/results.js";
import { type LabSpec, parseManifest } from "../../src/course/manifest.js";
import { MINI_MANIFEST } from "../support/lab-fixture.js";

const mini = parseManifest(MINI_MANIFEST, "chapters/99-mini/chapter.yaml");

const [lab1, lab2] = mini.labs as [LabSpec, LabSpec];

/** A result record as the reporter writes it. */
function rec(path: string[], ok: boolean, message?: string, extra: Partial<TestRecord> = {}): TestRecord {
  const record: TestRecord = { ok, path, skip: false, todo: false, ...extra };
  if (!ok) record.error = { message: message ?? "boom", failureType: "testCodeFailure", ...extra.error };
  return record;
}

test("reporter lines that are not records are skipped", () => {
  const good = JSON.stringify(rec(["Lab 99.1 · a"], true));
  const records = parseRecords(`${good}\nnoise\n{"ok":true}\n{"ok":false,"path":["Lab 99.1 · b"],"skip":false,"todo":false}\n{"ok":tr`);
  assert.deepEqual(
    records.map((r) => r.path[0]),
    ["Lab 99.1 · a", "Lab 99.1 · b"],
  );
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
  const blocked = [
    rec(["Lab 99.2 · a"], false, lab1.scaffoldError),
    rec(["Lab 99.2 · b"], false, lab2.scaffoldError),
    rec(["Lab 99.2 · c"], false, lab2.scaffoldError),
  ];
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
