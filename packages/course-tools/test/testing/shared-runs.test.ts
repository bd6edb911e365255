// test-process: shared
/**
 * `testing/shared-runs.ts`: test files share a few processes, and a process that is not green
 * has its files decided alone, so sharing never turns a file red and never hides a red one.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import test, { type TestContext } from "node:test";
import { dealFiles, runTestsShared } from "../../src/testing/shared-runs.js";
import { topLevelResults } from "../../src/testing/suite.js";
import { tempDir } from "../support/fake-course.js";

/** A folder with the given plain-JavaScript test files (name → body after the node:test import). */
function testFolder(t: TestContext, files: Record<string, string>): string {
  const root = tempDir(t, "pi-shared-runs-");
  mkdirSync(path.join(root, "t"));
  for (const [name, body] of Object.entries(files)) writeFileSync(path.join(root, "t", name), `import test from "node:test";\n${body}\n`);
  return root;
}

test("files are dealt by size, largest first to the lightest group, each group in the given order", () => {
  const sizes: Record<string, number> = { a: 1, b: 10, c: 6, d: 5, e: 1 };
  assert.deepEqual(
    dealFiles(["a", "b", "c", "d", "e"], 2, (f) => sizes[f]!),
    [
      ["a", "b", "e"],
      ["c", "d"],
    ],
  );
  assert.deepEqual(
    dealFiles(["a", "b"], 5, () => 1),
    [["a"], ["b"]],
    "never more groups than files",
  );
  assert.deepEqual(
    dealFiles(["a", "b"], 0, () => 1),
    [["a", "b"]],
    "at least one group",
  );
});

test("a green shared process decides its files; a file that fails only beside another is decided alone, and passes", async (t) => {
  const root = testFolder(t, {
    "1-sets.test.mjs": `test("sets a global", () => { globalThis.leftBehind = true; });`,
    "2-reads.test.mjs": `test("sees no global of another file", () => { if (globalThis.leftBehind) throw new Error("shared"); });`,
    "3-plain.test.mjs": `test("plain", () => {});`,
  });
  const files = ["t/1-sets.test.mjs", "t/2-reads.test.mjs", "t/3-plain.test.mjs"];
  const run = await runTestsShared(root, files, { processes: 1 });
  assert.deepEqual(Object.fromEntries(topLevelResults(run.records)), { "sets a global": true, "sees no global of another file": true, plain: true });
  assert.deepEqual(run.rerunAlone, files, "the shared process was red: each of its files ran alone");
  assert.equal(run.records.length, 3, "each test once, from the run that decided it");

  const green = await runTestsShared(root, ["t/1-sets.test.mjs", "t/3-plain.test.mjs"], { processes: 1 });
  assert.deepEqual(green.rerunAlone, [], "a green shared process is trusted");
  assert.equal(green.processes, 1);
  assert.deepEqual([...topLevelResults(green.records).values()], [true, true]);
});

test("a file that fails alone stays red, and one that ends its process is a crash of its own; other groups are untouched", async (t) => {
  const root = testFolder(t, {
    "a-red.test.mjs": `test("red", () => { throw new Error("really red"); });`,
    "b-exits.test.mjs": `test("ends the process", () => { process.exit(3); });`,
    "c-green.test.mjs": `test("green one", () => {});`,
    "d-green.test.mjs": `test("green two", () => {});`,
  });
  const files = ["t/a-red.test.mjs", "t/b-exits.test.mjs", "t/c-green.test.mjs", "t/d-green.test.mjs"];
  const run = await runTestsShared(root, files, { processes: 2 });
  const results = topLevelResults(run.records);
  assert.equal(results.get("red"), false);
  assert.equal(results.get("green one"), true);
  assert.equal(results.get("green two"), true);
  assert.deepEqual(
    run.crashes.map((c) => c.file),
    ["t/b-exits.test.mjs"],
    "the crash is the exiting file's, not its group's",
  );
  assert.equal(run.records.filter((r) => r.path[0] === "red").length, 1);
  assert.deepEqual(run.files, files);
});

test("aborted, a red shared process is returned as it ended: no file is started again", async (t) => {
  const root = testFolder(t, { "a-red.test.mjs": `test("red", () => { throw new Error("red"); });`, "b-green.test.mjs": `test("green", () => {});` });
  const run = await runTestsShared(root, ["t/a-red.test.mjs", "t/b-green.test.mjs"], { processes: 1, signal: AbortSignal.abort() });
  assert.deepEqual(run.rerunAlone, []);
});
