/**
 * The lab tests' property helper (`support/properties.ts`): a rule that holds passes; one that
 * breaks fails under its statement with the shrunk counterexample; a scaffold error passes
 * unchanged; the same seed gives the same run.
 */
import assert from "node:assert/strict";
import test from "node:test";
import fc from "fast-check";
import { holds } from "./support/properties.js";
import { isScaffold } from "./support/rules.js";

test("holds: a property true for every input passes", async () => {
  await holds(
    "§C0.1：反转两次还是原样",
    fc.property(fc.array(fc.integer()), (xs) => assert.deepEqual([...xs].reverse().reverse(), xs)),
  );
});

test("holds: a broken rule fails under its statement, showing the smallest counterexample fast-check found", async () => {
  const failure = await holds(
    "§C0.2：长度不超过 3",
    fc.property(fc.array(fc.integer()), (xs) => assert.ok(xs.length <= 3, "太长")),
  ).then(
    () => assert.fail("a broken rule must fail"),
    (error: unknown) => error,
  );
  assert.ok(failure instanceof assert.AssertionError);
  const lines = failure.message.split("\n");
  assert.equal(lines[0], "§C0.2：长度不超过 3");
  assert.equal(lines[1], "反例（缩小后）：[0,0,0,0]");
  assert.match(failure.message, /太长/);
});

test("holds: async properties, and the same seed gives the same counterexample", async () => {
  const run = () =>
    holds(
      "§C0.3：异步也一样",
      fc.asyncProperty(fc.string(), async (s) => assert.ok(!s.includes("z"))),
      { seed: 7 },
    ).catch((error: unknown) => (error as Error).message);
  const first = await run();
  assert.equal(await run(), first);
  assert.match(first ?? "", /^§C0\.3：异步也一样\n反例（缩小后）："z"\n/);
});

test("holds: a starter's scaffold error passes through unchanged (not started, not wrong)", async () => {
  const scaffold = new Error("Lab 0.1 agent loop 尚未实现");
  const thrown = await holds(
    "§C0.4：随便",
    fc.property(fc.nat(), () => {
      throw scaffold;
    }),
  ).catch((error: unknown) => error);
  assert.equal(thrown, scaffold);
  assert.ok(isScaffold(thrown));
});
