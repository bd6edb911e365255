// test-process: shared
/** `verify/exercise-shapes.ts`: the fault exercise placed in every kept solution, and what counts as caught. */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Fault } from "../../src/course/faults.js";
import { exerciseCaught, exerciseMutants } from "../../src/verify/exercise-shapes.js";

const FILE = "packages/pi-course/src/shelf.ts";
const exercise = {
  id: "9.1-cap",
  lab: "9.1",
  file: FILE,
  exercise: true,
  learner: { function: "push(items, item)", before: "return", insert: "if (items.length >= 3) return false; // 故意错误" },
} as unknown as Fault;

test("exerciseMutants: the exercise's line lands before each return of its function in every solution of its file; a shape without the function is reported, not failed", () => {
  const early = 'export function push(list: string[], value: string): boolean {\n  if (value === "") return false;\n  list.push(value);\n  return true;\n}\n';
  const renamed = "export const add = (list: string[], value: string): boolean => list.push(value) > 0;\n";
  const other = { name: "other-file", replaces: "packages/pi-course/src/other.ts", text: early };
  const { mutants, problems } = exerciseMutants(
    [exercise],
    [{ name: "early", replaces: FILE, text: early }, { name: "renamed", replaces: FILE, text: renamed }, other],
  );
  assert.deepEqual(
    mutants.map((m) => m.name),
    ["exercise 9.1-cap in early"],
  );
  assert.equal(mutants[0]!.text.match(/if \(list\.length >= 3\) return false; \/\/ 故意错误/g)?.length, 2, mutants[0]!.text);
  assert.deepEqual(
    problems.map((p) => [p.name, p.ok]),
    [["exercise 9.1-cap in renamed", true]],
  );
});

test("exerciseCaught: caught when a focused test fails; not caught when all pass; a line that does not compile is reported, not failed", () => {
  assert.equal(exerciseCaught({ name: "m", ok: false, passed: 2, total: 3, detail: "没有通过：“x”" }).ok, true);
  const missed = exerciseCaught({ name: "m", ok: true, passed: 3, total: 3 });
  assert.equal(missed.ok, false);
  assert.match(missed.detail, /not caught/);
  assert.equal(exerciseCaught({ name: "m", ok: false, passed: 0, total: 3, detail: "无法编译：x.ts(1,1): error" }).ok, true);
});
