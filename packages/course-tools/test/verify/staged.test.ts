// test-process: shared
/** `verify/staged.ts`: the teaching file staged at "labs before k done", and the check on its run. */
import assert from "node:assert/strict";
import test from "node:test";
import type { TestRecord } from "../../src/testing/results.js";
import { evaluateStagedRed, stagedTeachingText } from "../../src/verify/staged.js";
import { MANIFEST, record, STARTER_RUN } from "../support/verify-runs.js";

const STAGED_STARTER = `import { a } from "./a.js";

export function first(): string {
  // 🔨 Lab 12.1：first
  throw todo("Lab 12.1 catalog");
}

export function second(): string {
  // 🔨 Lab 12.2：second
  throw todo("Lab 12.2 activation");
}

/** Only the starter has it. */
function todo(lab: string): Error {
  return new Error(lab + " 尚未实现");
}
`;

const STAGED_REFERENCE = `import { b } from "./b.js";

export function first(): string {
  return a() + "first answer";
}

function joinAll(): string {
  return b() + "second helper";
}

export function second(): string {
  return joinAll();
}
`;

test("staged teaching text: the starter, the reference, and in between the reference with later labs put back from the starter", () => {
  const input = { file: "src/r.ts", starter: STAGED_STARTER, reference: STAGED_REFERENCE, labIds: ["12.1", "12.2"] };
  assert.equal(stagedTeachingText({ ...input, done: 0 }).text, STAGED_STARTER);
  assert.equal(stagedTeachingText({ ...input, done: 2 }).text, STAGED_REFERENCE);

  const staged = stagedTeachingText({ ...input, done: 1 });
  assert.deepEqual(staged.fromStarter, ["second", "todo"]);
  assert.ok(staged.text.includes('return a() + "first answer";'), "Lab 12.1 comes from the reference");
  assert.ok(staged.text.includes('throw todo("Lab 12.2 activation");'), "Lab 12.2 comes from the starter");
  assert.ok(!staged.text.includes("return joinAll();"), "the reference's Lab 12.2 body is gone");
  assert.ok(staged.text.includes("") && staged.text.includes("function joinAll"), "the reference's imports and helpers stay");
  assert.ok(staged.text.includes("function todo(lab: string)"), "the starter-only helper its stubs call is added");

  const ambiguous = STAGED_STARTER.replace("// 🔨 Lab 12.1：first", "// 🔨 Lab 12.1：first\n  // 🔨 Lab 12.2：and more");
  assert.throws(() => stagedTeachingText({ ...input, starter: ambiguous, done: 1 }), { code: "LAB_OWNERSHIP_AMBIGUOUS" });
});

test("staged first red: earlier labs green and lab k 0/N on exactly its own scaffold error", () => {
  const green = [record("Lab 12.1 · a", true), record("Lab 12.1 · b", true)];
  const ok = evaluateStagedRed(MANIFEST, 1, { records: [...green, record("Lab 12.2 · c", false, "Lab 12.2 activation 尚未实现")], crashes: [] });
  assert.deepEqual(ok, { name: "staged first red: Lab 12.2", ok: true, detail: 'reference for Lab 12.1 2/2 → Lab 12.2 0/1 "Lab 12.2 activation 尚未实现"' });
  const first = evaluateStagedRed(MANIFEST, 0, { records: STARTER_RUN, crashes: [] });
  assert.equal(first.ok, true, first.detail);
  assert.match(first.detail, /^starter → Lab 12\.1 0\/2/);

  const variants: [string, TestRecord[], { file: string; code: number; stderr: string }[]][] = [
    ["an earlier lab is red", [green[0]!, record("Lab 12.1 · b", false, "expected 2"), record("Lab 12.2 · c", false, "Lab 12.2 activation 尚未实现")], []],
    ["lab k fails on an earlier lab's scaffold error", [...green, record("Lab 12.2 · c", false, "Lab 12.1 catalog 尚未实现")], []],
    ["lab k fails on an ordinary error", [...green, record("Lab 12.2 · c", false, "Expected values to be strictly deep-equal:")], []],
    ["lab k passes before it is written", [...green, record("Lab 12.2 · c", true)], []],
    ["lab k has fewer tests than the manifest", green, []],
    ["a crashed test file", [...green, record("Lab 12.2 · c", false, "Lab 12.2 activation 尚未实现")], [{ file: "x.test.js", code: 1, stderr: "SyntaxError" }]],
  ];
  for (const [label, records, crashes] of variants) {
    const check = evaluateStagedRed(MANIFEST, 1, { records, crashes });
    assert.equal(check.ok, false, label);
  }
  assert.match(
    evaluateStagedRed(MANIFEST, 1, { records: variants[1]![1], crashes: [] }).detail,
    /Lab 12\.2 应恰好以自己的施工位错误 “Lab 12\.2 activation 尚未实现” 失败，实际：“Lab 12\.1 catalog 尚未实现”/,
  );
});
