// test-process: shared
/** `testing/test-order.mjs`: which tooling test files share a process, and in which order the files start. */
import assert from "node:assert/strict";
import test from "node:test";
import { expectedSeconds, longestFirst, mergeDurations, SHARED_PROCESS, sharesProcess, type TestUnit } from "../../src/testing/test-order.mjs";

test("a file shares a process only when its first line says so", () => {
  assert.equal(sharesProcess(`${SHARED_PROCESS}\n/** A unit test. */\n`), true);
  assert.equal(sharesProcess(`${SHARED_PROCESS}  \r\nimport test from "node:test";\n`), true);
  assert.equal(sharesProcess(SHARED_PROCESS), true);
  assert.equal(sharesProcess(`/** A unit test. */\n${SHARED_PROCESS}\n`), false, "only the first line counts");
  assert.equal(sharesProcess(`// test-process: own\n`), false);
  assert.equal(sharesProcess(""), false);
});

const unit = (run: string, sources: string[], size = 1): TestUnit => ({ run, sources, size });

test("files start longest first by their last times; a process of several files takes their sum", () => {
  const known = { "t/a.test.ts": 2, "t/b.test.ts": 9, "t/c.test.ts": 3, "t/d.test.ts": 4.5 };
  const units = [unit("a", ["t/a.test.ts"]), unit("b", ["t/b.test.ts"]), unit("shared", ["t/c.test.ts", "t/d.test.ts"])];
  assert.equal(expectedSeconds(units[2]!, known), 7.5);
  assert.deepEqual(
    longestFirst(units, known).map((u) => u.run),
    ["b", "shared", "a"],
  );
  assert.deepEqual(
    units.map((u) => u.run),
    ["a", "b", "shared"],
    "the units given are left as they are",
  );
});

test("a file without a time (a fresh clone, a new file) starts before every timed one, larger first; ties go by size, then by name", () => {
  const known = { "t/old.test.ts": 30, "t/x.test.ts": 1, "t/y.test.ts": 1 };
  const units = [
    unit("old", ["t/old.test.ts"], 100),
    unit("new-small", ["t/new-small.test.ts"], 10),
    unit("new-large", ["t/new-large.test.ts"], 5000),
    unit("y", ["t/y.test.ts"], 50),
    unit("x", ["t/x.test.ts"], 50),
    unit("bigger", ["t/x.test.ts"], 60),
  ];
  assert.equal(expectedSeconds(units[1]!, known), Number.POSITIVE_INFINITY);
  assert.deepEqual(
    longestFirst(units, known).map((u) => u.run),
    ["new-large", "new-small", "old", "bigger", "x", "y"],
  );
  // A process of several files with one timed member is timed by that member.
  assert.equal(expectedSeconds(unit("shared", ["t/x.test.ts", "t/unknown.test.ts"]), known), 1);
});

test("after a run the times it reported replace the old ones, rounded to the millisecond; a file that is gone is forgotten", () => {
  const known = { "t/gone.test.ts": 4, "t/kept.test.ts": 2, "t/rerun.test.ts": 8 };
  const merged = mergeDurations(known, { "t/rerun.test.ts": 1.23456, "t/new.test.ts": 0.5 }, (file) => file !== "t/gone.test.ts");
  assert.deepEqual(merged, { "t/kept.test.ts": 2, "t/new.test.ts": 0.5, "t/rerun.test.ts": 1.235 });
  assert.deepEqual(Object.keys(merged), ["t/kept.test.ts", "t/new.test.ts", "t/rerun.test.ts"], "in path order");
});
