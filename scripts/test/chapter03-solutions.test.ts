/**
 * Chapter 03's blind solutions stay correct: each of `support/solutions/03/*.ts`, built in
 * place of `types.ts` in a copy of the course package, passes every lab test of the chapter
 * and declares the starter's public surface. The same measurement as
 * `npx tsx scripts/test/support/solutions/measure.ts --chapter 03` (which also runs the
 * catalog of mistakes, too slow for the suite).
 *
 * `measure.ts` arrives with chapter 12, after this file, so it is imported on demand and the
 * test is skipped in a tree of chapters 03–11 (an early checkpoint of the teaching history).
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import test from "node:test";
import { repoRoot } from "./support/lab-fixture.js";

const solutions = path.join(repoRoot, "scripts", "test", "support", "solutions");
const measureSource = path.join(solutions, "measure.ts");
const here = existsSync(path.join(solutions, "03")) && existsSync(path.join(repoRoot, "checkpoints", "03.yaml")) && existsSync(measureSource);

/** What this test uses of `measure.ts` (see its `measureSolutions` and `chapterSetup`). */
interface Measure {
  chapterSetup(id: string): { expectedTests: number };
  measureSolutions(
    id: string,
    options: { jobs?: number },
  ): Promise<{ name: string; sameSurface: boolean; green: boolean; result: { built: boolean; buildOutput: string; tests: { name: string; ok: boolean }[] } }[]>;
}

test("chapter 03's blind solutions pass every lab test and keep the starter's public surface", {
  skip: !here && "chapter 03 or measure.ts is not in this tree",
}, async () => {
  // The compiled sibling of this file imports the compiled measure.js; from source, measure.ts.
  const compiled = new URL("./support/solutions/measure.js", import.meta.url);
  const { chapterSetup, measureSolutions } = (await import(existsSync(compiled) ? compiled.href : pathToFileURL(measureSource).href)) as Measure;
  const expected = chapterSetup("03").expectedTests;
  const runs = await measureSolutions("03", { jobs: 1 });
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
