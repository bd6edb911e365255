// test-process: shared
/**
 * `lab/site.ts`: a lab's construction site in the learner's file, which `lab NN.L --open`
 * opens — inside the declarations the starter marks for the lab, wherever the learner has
 * moved them, and found by text when the file does not parse.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import test from "node:test";
import { starterCopyPath } from "../../src/core/paths.js";
import { loadManifest, parseManifest } from "../../src/course/manifest.js";
import { readStarters } from "../../src/course/starters.js";
import { readFile } from "node:fs/promises";
import { constructionSite } from "../../src/lab/site.js";
import { realRepo, tempDir } from "../support/fake-course.js";
import { isCode } from "../support/folders.js";
import { MINI_MANIFEST, miniSource } from "../support/lab-fixture.js";

const mini = parseManifest(MINI_MANIFEST, "chapters/99-mini/chapter.yaml");
const TEACHING = "packages/pi-course/src/mini.ts";

/** A folder with `learner` as the teaching file and `starter` as its pristine copy. */
function folder(t: test.TestContext, learner: string, starter: string, teaching = TEACHING): string {
  const root = tempDir(t, "pi-site-");
  for (const [file, text] of [
    [teaching, learner],
    [starterCopyPath(teaching), starter],
  ] as const) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  return root;
}

const lineOf = (text: string, needle: string): number => text.split("\n").findIndex((line) => line.includes(needle)) + 1;

test("the site is the lab's first 🔨 line in its declaration, wherever the learner moved it; the declaration's start once the markers are gone", (t) => {
  const starter = miniSource("starter");
  assert.deepEqual(constructionSite(folder(t, starter, starter), mini, "99.2"), { file: TEACHING, line: lineOf(starter, "🔨 Lab 99.2"), column: 3 });

  // greet moved first, add rewritten as an arrow function without its markers.
  const moved = `${starter.slice(starter.indexOf("export function greet"))}\n${starter.slice(0, starter.indexOf("export function greet")).replace(/export function add[\s\S]*?\n\}\n/, "export const add = (a: number, b: number): number => a + b;\n")}`;
  const root = folder(t, moved, starter);
  assert.deepEqual(constructionSite(root, mini, "99.2"), { file: TEACHING, line: 2, column: 3 });
  assert.deepEqual(constructionSite(root, mini, "99.1"), { file: TEACHING, line: lineOf(moved, "export const add"), column: 1 });
});

test("a file halfway through an edit (a syntax error) is searched by text; a lab with nothing left is LAB_SITE_NOT_FOUND", (t) => {
  const starter = miniSource("starter");
  const broken = starter.replace("void b;", "void b; if (");
  assert.deepEqual(constructionSite(folder(t, broken, starter), mini, "99.1"), { file: TEACHING, line: lineOf(broken, "🔨 Lab 99.1"), column: 3 });
  const renamed = starter
    .replace("🔨 Lab 99.2：拼出问候语；空名字 → GREET_EMPTY", "todo")
    .replace('"Lab 99.2 mini greet"', '"hello"')
    .replace("function greet", "function hello");
  assert.throws(() => constructionSite(folder(t, renamed, starter), mini, "99.2"), isCode("LAB_SITE_NOT_FOUND"));
});

test("chapter 12's starter: each lab opens at the first 🔨 line inside a declaration the starter marks for it", async (t) => {
  const manifest = await loadManifest(realRepo, "12");
  const [derived] = await readStarters(manifest, (file) => readFile(path.join(realRepo, file), "utf8"));
  const starter = derived!.text;
  const root = folder(t, starter, starter, "packages/pi-course/src/resources.ts");
  const lines = starter.split("\n");
  for (const lab of manifest.labs) {
    const site = constructionSite(root, manifest, lab.id);
    const text = lines[site.line - 1] ?? "";
    assert.match(text, new RegExp(`^\\s+// 🔨 Lab ${lab.id.replace(".", "\\.")}(?!\\d)`), `${lab.id}: ${text}`);
    assert.equal(site.column, text.length - text.trimStart().length + 1);
  }
});
