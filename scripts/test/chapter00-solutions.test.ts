/**
 * Chapter 00's blind solution stays correct: each of `support/solutions/00/*.ts`, built in
 * place of `prologue.ts` in a copy of the course package, passes every lab test of the
 * chapter and declares the starter's public surface. The same measurement as
 * `npx tsx scripts/test/support/solutions/measure.ts --chapter 00` (which also runs the
 * catalog of mistakes, too slow for the suite).
 *
 * The measurement lives in chapter 12's `measure.ts`, and this file arrives with chapter 00:
 * in the teaching history's layers before chapter 12 the module is absent, so it is
 * imported by a computed specifier (the build does not look for it) and the test skips.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import test from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { repoRoot } from "./support/lab-fixture.js";

/** What this test uses of `support/solutions/measure.ts`. */
interface Measure {
  chapterSetup(id: string): { expectedTests: number };
  measureSolutions(
    id: string,
    options: { jobs?: number },
  ): Promise<{ name: string; sameSurface: boolean; green: boolean; result: { built: boolean; buildOutput: string; tests: { name: string; ok: boolean }[] } }[]>;
}

// Compiled (`.pi-course/test-tooling/`) the module is measure.js beside this file; run from source, measure.ts.
const measureFile = ["measure.js", "measure.ts"]
  .map((name) => path.join(path.dirname(fileURLToPath(import.meta.url)), "support", "solutions", name))
  .find((file) => existsSync(file));
const here = existsSync(path.join(repoRoot, "scripts", "test", "support", "solutions", "00")) && existsSync(path.join(repoRoot, "checkpoints", "00.yaml"));

test("chapter 00's blind solution passes every lab test and keeps the starter's public surface", {
  skip: (!here && "chapter 00 is not in this tree") || (measureFile === undefined && "measure.ts (chapter 12) is not in this tree"),
}, async () => {
  const { chapterSetup, measureSolutions } = (await import(pathToFileURL(measureFile!).href)) as Measure;
  const expected = chapterSetup("00").expectedTests;
  const runs = await measureSolutions("00", { jobs: 1 });
  assert.ok(runs.length >= 1, "at least one solution");
  for (const run of runs) {
    const failed = run.result.tests.filter((outcome) => !outcome.ok).map((outcome) => outcome.name);
    assert.equal(run.result.built, true, `${run.name} compiles:\n${run.result.buildOutput}`);
    assert.deepEqual(failed, [], `${run.name}: every lab test passes`);
    assert.equal(run.result.tests.length, expected, `${run.name}: all ${expected} lab tests ran`);
    assert.equal(run.sameSurface, true, `${run.name}: its public declarations are the starter's`);
    assert.equal(run.green, true, `${run.name} is green`);
  }
});
