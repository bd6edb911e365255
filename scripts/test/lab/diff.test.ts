/** `lab/diff.ts`: the whole line diff of `lab --verbose`. */
import assert from "node:assert/strict";
import test from "node:test";
import { lineDiff } from "../../lib/lab/diff.js";

test("the whole line diff keeps every line and marks only what differs", () => {
  assert.deepEqual(lineDiff("a\nb\nc", "a\nx\nc"), ["  a", "+ x", "- b", "  c"]);
  assert.deepEqual(lineDiff("same", "same"), ["  same"]);
  assert.deepEqual(lineDiff("", "new"), ["+ new", "- "]);
});
