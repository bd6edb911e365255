// test-process: shared
/** `lab/diff.ts`: the whole line diff of `lab --verbose`. */
import assert from "node:assert/strict";
import test from "node:test";
import { lineDiff } from "../../src/lab/diff.js";

test("the whole line diff keeps every line and marks only what differs", () => {
  assert.deepEqual(lineDiff("a\nb\nc", "a\nx\nc"), ["  a", "+ x", "- b", "  c"]);
  assert.deepEqual(lineDiff("same", "same"), ["  same"]);
  assert.deepEqual(lineDiff("", "new"), ["+ new", "- "]);
  assert.deepEqual(lineDiff("a\nb", "a"), ["  a", "- b"]);
  assert.deepEqual(lineDiff("a", "a\nb\nc"), ["  a", "+ b", "+ c"]);
});

test("long renderings: 3 000 lines with 30 changed give exactly the 30 changes, marked where they are", () => {
  const expected = Array.from({ length: 3000 }, (_, i) => `line ${i}`);
  const actual = expected.map((line, i) => (i % 100 === 0 ? `${line} changed` : line));
  const lines = lineDiff(expected.join("\n"), actual.join("\n"));
  assert.equal(lines.filter((line) => line.startsWith("+ ")).length, 30);
  assert.equal(lines.filter((line) => line.startsWith("- ")).length, 30);
  assert.equal(lines.length, 3030);
  assert.deepEqual(lines.slice(0, 3), ["+ line 0 changed", "- line 0", "  line 1"]);
});

test("texts that differ in more lines than the comparison looks for are shown whole, the same way however busy the machine", () => {
  const expected = Array.from({ length: 1000 }, (_, i) => `old ${i}`);
  const actual = Array.from({ length: 1000 }, (_, i) => `new ${i}`);
  const lines = lineDiff(expected.join("\n"), actual.join("\n"));
  assert.deepEqual(lines, [...expected.map((line) => `- ${line}`), ...actual.map((line) => `+ ${line}`)]);
});
