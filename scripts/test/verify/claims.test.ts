/** `verify/claims.ts`: a claimed output is an ordered excerpt, matched on whole words. */
import assert from "node:assert/strict";
import test from "node:test";
import { firstMissingClaim } from "../../lib/verify/claims.js";

/** Joins lines into a text; `lineOf(text, needle)` is the 1-based line of the first line holding a needle. */
const lines = (...all: string[]) => all.join("\n");

test("a claim is an ordered excerpt of the output, matched on whole words: padding and timings may differ, numbers may not", () => {
  const output = lines(
    "\u001b[31m✖ Lab 2.1 · catalog is sorted (3.2ms)\u001b[39m",
    "  Error: Lab 2.1 beta catalog 尚未实现",
    "Lab 2.2 · 渲染      0/1   未开始",
    "ℹ pass 30",
    "ℹ fail 2",
  );
  const claim = (...texts: string[]) => texts.map((text, index) => ({ line: index + 1, text }));
  assert.equal(firstMissingClaim(output, claim("✖ Lab 2.1 · catalog is sorted", "Error: Lab 2.1 beta catalog 尚未实现", "ℹ fail 2")), undefined);
  assert.equal(firstMissingClaim(output, claim("Lab 2.2 · 渲染 0/1")), undefined, "column padding and a suffix do not matter");
  assert.deepEqual(firstMissingClaim(output, claim("ℹ pass 3")), { line: 1, text: "ℹ pass 3" }, "3 is not 30");
  assert.deepEqual(firstMissingClaim(output, claim("Lab 2.2 · 渲染 1/1")), { line: 1, text: "Lab 2.2 · 渲染 1/1" });
  assert.deepEqual(
    firstMissingClaim(output, claim("ℹ fail 2", "✖ Lab 2.1 · catalog is sorted")),
    { line: 2, text: "✖ Lab 2.1 · catalog is sorted" },
    "order counts",
  );
  assert.deepEqual(firstMissingClaim(output, claim("ℹ fail 2", "ℹ fail 2")), { line: 2, text: "ℹ fail 2" }, "one output line backs one claimed line");
});
