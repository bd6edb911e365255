/**
 * `support/solutions/measure.ts`: what measuring a chapter's kept solutions and catalog of
 * mistakes needs, read from the manifest: every teaching file (one per starter), every lab
 * test file, the teaching file each solution replaces, the one each mistake edits.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import test from "node:test";
import { chapterSetup, loadMistakes } from "./support/solutions/measure.js";
import { tempDir } from "./support/fake-course.js";

/** A repository holding chapter 98 with two teaching files, two starters and two lab test files. */
function twoFileChapter(t: test.TestContext, solutions: string): string {
  const repo = tempDir(t, "pi-course-measure-");
  const files: Record<string, string> = {
    "packages/pi-course/src/one.ts": "export const one = 1;\n",
    "packages/pi-course/src/two.ts": "export const two = 2;\n",
    "chapters/98-two/one.ts": "export const one = 0;\n",
    "chapters/98-two/two.ts": "export const two = 0;\n",
    "chapters/98-two/solutions/a-one.ts": "export const one = 2 - 1;\n",
    "chapters/98-two/solutions/b-two.ts": "export const two = 1 + 1;\n",
    "chapters/98-two/chapter.yaml": `format: 1
id: "98"
title: t
files: [packages/pi-course/src/one.ts, packages/pi-course/src/two.ts]
starters:
  - from: one.ts
    to: packages/pi-course/src/one.ts
  - from: two.ts
    to: packages/pi-course/src/two.ts
focusedTests: [packages/pi-course/test/98-one.test.ts, packages/pi-course/test/98-two.test.ts]
${solutions}labs:
  - { id: "98.1", tests: 2 }
  - { id: "98.2", tests: 3 }
`,
  };
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
    writeFileSync(path.join(repo, file), text);
  }
  return repo;
}

const SOLUTIONS = `solutions:
  - { file: solutions/a-one.ts, replaces: packages/pi-course/src/one.ts }
  - { file: solutions/b-two.ts, replaces: packages/pi-course/src/two.ts }
`;

test("a chapter of two teaching files: every target and lab test file, and the file each solution replaces", (t) => {
  const chapter = chapterSetup("98", twoFileChapter(t, SOLUTIONS));
  assert.deepEqual(
    chapter.targets.map((target) => [target.file, target.declarations, target.starter, target.reference]),
    [
      ["packages/pi-course/src/one.ts", "packages/pi-course/dist/src/one.d.ts", "export const one = 0;\n", "export const one = 1;\n"],
      ["packages/pi-course/src/two.ts", "packages/pi-course/dist/src/two.d.ts", "export const two = 0;\n", "export const two = 2;\n"],
    ],
  );
  assert.deepEqual(chapter.labTests, ["packages/pi-course/dist/test/98-one.test.js", "packages/pi-course/dist/test/98-two.test.js"]);
  assert.deepEqual(chapter.solutions, ["a-one", "b-two"]);
  assert.deepEqual(
    [...chapter.replaces],
    [
      ["a-one", "packages/pi-course/src/one.ts"],
      ["b-two", "packages/pi-course/src/two.ts"],
    ],
  );
  assert.equal(chapter.expectedTests, 5);
  assert.throws(() => chapterSetup("98", twoFileChapter(t, "")), /solution a-one replaces no teaching file/);
});

test("a mistake edits its base solution's teaching file, or the reference's it names with file:", (t) => {
  const repo = twoFileChapter(t, SOLUTIONS);
  const chapter = chapterSetup("98", repo);
  const catalog = (entries: string) => {
    const file = path.join(repo, "catalog.yaml");
    writeFileSync(file, `mistakes:\n${entries}`);
    return () => loadMistakes(chapter, file);
  };
  const entry = (id: string, base: string, file?: string) =>
    `  - { id: ${id}, lab: "98.1", base: ${base}, rule: r, find: "1", replace: "3"${file === undefined ? "" : `, file: ${file}`} }\n`;
  assert.deepEqual(
    catalog(entry("m1", "a-one") + entry("m2", "reference", "packages/pi-course/src/two.ts") + entry("m3", "b-two", "packages/pi-course/src/two.ts"))().map(
      (mistake) => [mistake.id, mistake.file],
    ),
    [
      ["m1", "packages/pi-course/src/one.ts"],
      ["m2", "packages/pi-course/src/two.ts"],
      ["m3", "packages/pi-course/src/two.ts"],
    ],
  );
  assert.throws(catalog(entry("m4", "reference")), /m4: name the teaching file it edits/);
  assert.throws(catalog(entry("m5", "a-one", "packages/pi-course/src/two.ts")), /m5: base a-one replaces packages\/pi-course\/src\/one\.ts/);
  assert.throws(catalog(entry("m6", "reference", "packages/pi-course/src/three.ts")), /m6: name the teaching file it edits/);
});
