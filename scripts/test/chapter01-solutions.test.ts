/**
 * Chapter 01's blind solutions stay correct: each of `support/solutions/01/*.ts`, built in
 * place of `async.ts` in a copy of the course package, passes every lab test of the
 * chapter and declares the starter's public surface. The same measurement as
 * `npx tsx scripts/test/support/solutions/measure.ts --chapter 01` (which also runs the
 * catalog of mistakes, too slow for the suite).
 *
 * Cost: one copy of the package, one full build (the starter, for its declarations), then
 * one incremental build and one run of the lab tests per solution; measured at 7 to 10 s on
 * two cores while other test files ran.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import test from "node:test";
import { repoRoot } from "./support/lab-fixture.js";
import { chapterSetup, measureSolutions } from "./support/solutions/measure.js";

const here = existsSync(path.join(repoRoot, "scripts", "test", "support", "solutions", "01")) && existsSync(path.join(repoRoot, "checkpoints", "01.yaml"));

test("chapter 01's blind solutions pass every lab test and keep the starter's public surface", {
  skip: !here && "chapter 01 is not in this tree",
}, async () => {
  const expected = chapterSetup("01").expectedTests;
  const runs = await measureSolutions("01", { jobs: 1 });
  assert.ok(runs.length >= 2, `at least two solutions (found ${runs.map((run) => run.name).join(", ")})`);
  for (const run of runs) {
    const failed = run.result.tests.filter((outcome) => !outcome.ok).map((outcome) => outcome.name);
    assert.equal(run.result.built, true, `${run.name} compiles:\n${run.result.buildOutput}`);
    assert.deepEqual(failed, [], `${run.name}: every lab test passes`);
    assert.equal(run.result.tests.length, expected, `${run.name}: all ${expected} lab tests ran`);
    assert.equal(run.sameSurface, true, `${run.name}: its public declarations are the starter's`);
    assert.equal(run.green, true, `${run.name} is green`);
  }
});
