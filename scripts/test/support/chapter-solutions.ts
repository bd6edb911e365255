/**
 * The one test every chapter with blind solutions declares: each `support/solutions/NN/*.ts`,
 * built in place of the chapter's teaching file in a copy of the course package, passes every
 * lab test of the chapter and declares the starter's public surface. The same measurement as
 * `npx tsx scripts/test/support/solutions/measure.ts --chapter NN` (which also runs the catalog
 * of mistakes, too slow for the suite).
 *
 * The measurement lives in `support/solutions/measure.ts`, which chapter 12 adds: in the
 * teaching history's layers before chapter 12 it is absent, so it is imported by a computed
 * specifier (the build does not look for it) and the test skips, as it does in a tree without
 * the chapter. Cost per chapter: one copy of the package, one full build (the starter, for its
 * declarations), then one incremental build and one run of the lab tests per solution.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import test from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { repoRoot } from "./lab-fixture.js";

/** What the test uses of `support/solutions/measure.ts`. */
interface Measure {
  chapterSetup(id: string): { expectedTests: number };
  measureSolutions(
    id: string,
    options: { jobs?: number },
  ): Promise<{ name: string; sameSurface: boolean; green: boolean; result: { built: boolean; buildOutput: string; tests: { name: string; ok: boolean }[] } }[]>;
}

// Compiled (`.pi-course/test-tooling/`) the module is measure.js beside this file's folder; from source, measure.ts.
const measureFile = ["measure.js", "measure.ts"]
  .map((name) => path.join(path.dirname(fileURLToPath(import.meta.url)), "solutions", name))
  .find((file) => existsSync(file));

/**
 * Declares chapter `id`'s solutions test: at least `atLeast` solutions, each compiling, green
 * on every lab test (all of them run) and with the starter's public declarations. Skips when
 * the chapter, its solutions or `measure.ts` are not in this tree.
 */
export function testChapterSolutions(id: string, atLeast = 1): void {
  const here = existsSync(path.join(repoRoot, "scripts", "test", "support", "solutions", id)) && existsSync(path.join(repoRoot, "checkpoints", `${id}.yaml`));
  test(`chapter ${id}'s blind solutions pass every lab test and keep the starter's public surface`, {
    skip: (!here && `chapter ${id} is not in this tree`) || (measureFile === undefined && "measure.ts (chapter 12) is not in this tree"),
  }, async () => {
    const { chapterSetup, measureSolutions } = (await import(pathToFileURL(measureFile!).href)) as Measure;
    const expected = chapterSetup(id).expectedTests;
    const runs = await measureSolutions(id, { jobs: 1 });
    assert.ok(runs.length >= atLeast, `at least ${atLeast} solution(s) (found ${runs.map((run) => run.name).join(", ")})`);
    for (const run of runs) {
      const failed = run.result.tests.filter((outcome) => !outcome.ok).map((outcome) => outcome.name);
      assert.equal(run.result.built, true, `${run.name} compiles:\n${run.result.buildOutput}`);
      assert.deepEqual(failed, [], `${run.name}: every lab test passes`);
      assert.equal(run.result.tests.length, expected, `${run.name}: all ${expected} lab tests ran`);
      assert.equal(run.sameSurface, true, `${run.name}: its public declarations are the starter's`);
      assert.equal(run.green, true, `${run.name} is green`);
    }
  });
}
