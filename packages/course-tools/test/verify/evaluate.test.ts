// test-process: shared
/** `verify/evaluate.ts`: the record's judgements over synthetic test runs and texts. */
import assert from "node:assert/strict";
import test from "node:test";
import { evaluateChapterTotal, evaluateFirstRed, evaluateReferenceLabs, throughChapterFiles } from "../../src/verify/evaluate.js";
import type { TestRecord } from "../../src/testing/results.js";
import { MANIFEST, record, STARTER_RUN } from "../support/verify-runs.js";

test("first red: every lab 0/N on a scaffold error, the first lab on exactly its own", () => {
  const ok = evaluateFirstRed(MANIFEST, { records: STARTER_RUN, crashes: [] });
  assert.equal(ok.ok, true, ok.detail);
  assert.match(ok.detail, /^Lab 12\.1 0\/2 "Lab 12\.1 catalog 尚未实现"; Lab 12\.2 0\/1/);

  const variants: [string, TestRecord[], Partial<{ crashes: { file: string; code: number; stderr: string }[] }>][] = [
    ["a test passes against the starter", [record("Lab 12.1 · a", true), ...STARTER_RUN.slice(1)], {}],
    ["an ordinary failure", [STARTER_RUN[0]!, STARTER_RUN[1]!, record("Lab 12.2 · c", false, "Cannot read properties of undefined")], {}],
    ["the first lab on another lab's scaffold error", [record("Lab 12.1 · a", false, "Lab 12.2 activation 尚未实现"), ...STARTER_RUN.slice(1)], {}],
    ["the first lab's message with extra text", [record("Lab 12.1 · a", false, "Error: Lab 12.1 catalog 尚未实现 (wrapped)"), ...STARTER_RUN.slice(1)], {}],
    ["a lab with fewer tests than the manifest", STARTER_RUN.slice(1), {}],
    ["a crashed test file", STARTER_RUN, { crashes: [{ file: "x.test.js", code: 1, stderr: "SyntaxError" }] }],
  ];
  for (const [label, records, extra] of variants) {
    assert.equal(evaluateFirstRed(MANIFEST, { records, crashes: extra.crashes ?? [] }).ok, false, label);
  }
});

test("reference labs and the chapter total are green only at N/N with the manifest's counts", () => {
  const green = [record("Lab 12.1 · a", true), record("Lab 12.1 · b", true), record("Lab 12.2 · c", true)];
  assert.deepEqual(
    evaluateReferenceLabs(MANIFEST, { records: green, crashes: [] }).map((c) => [c.name, c.ok, c.detail]),
    [
      ["Lab 12.1 (reference)", true, "2/2"],
      ["Lab 12.2 (reference)", true, "1/1"],
    ],
  );
  assert.deepEqual(evaluateChapterTotal(MANIFEST, { records: green, crashes: [] }), { name: "chapter total", ok: true, detail: "3/3" });

  const red = [green[0]!, record("Lab 12.1 · b", false, "expected 2"), green[2]!];
  assert.deepEqual(
    evaluateReferenceLabs(MANIFEST, { records: red, crashes: [] }).map((c) => c.ok),
    [false, true],
  );
  assert.equal(evaluateChapterTotal(MANIFEST, { records: red, crashes: [] }).ok, false);
  const extra = [...green, record("Lab 12.2 · d", true)];
  assert.equal(evaluateChapterTotal(MANIFEST, { records: extra, crashes: [] }).ok, false, "more tests than the labs add up to");
  assert.equal(evaluateReferenceLabs(MANIFEST, { records: extra, crashes: [] })[1]?.ok, false);
});

test("through chapter NN selects NN-*.test.js of chapters up to NN only", () => {
  const names = [
    "03-messages.test.js",
    "12-resources-hardening.test.js",
    "12-resources-extensions.test.js",
    "13-runtime.test.js",
    "helpers.js",
    "12-x.test.js.map",
  ];
  assert.deepEqual(throughChapterFiles(names, "12"), ["03-messages.test.js", "12-resources-extensions.test.js", "12-resources-hardening.test.js"]);
  assert.deepEqual(throughChapterFiles(names, "03"), ["03-messages.test.js"]);
});
