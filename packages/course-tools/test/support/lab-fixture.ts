/**
 * A synthetic mini course for the `lab` and `hint` tests: chapter 99 with two labs
 * (`Lab 99.1` 2 tests, `Lab 99.2` 3 tests, one of which first calls the 99.1 function),
 * laid out like the real course so that the real tooling runs against it unchanged.
 *
 * The folder holds the real `tsconfig.base.json`, the tooling package's manifest and bin, a
 * link to the repo's `node_modules` (TypeScript, tsx, yaml), so building it needs no network,
 * and, when a test asks, `npm start`'s script (see `createMiniCourse`).
 */
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import fse from "fs-extra";
import os from "node:os";
import path from "node:path";
import { courseRoot, starterCopyPath, TOOLS_PACKAGE } from "../../src/core/paths.js";
import { CHAPTERS_DIR, MANIFEST_FILE } from "../../src/course/chapter-home.js";
import { listChapterIds, loadManifest } from "../../src/course/manifest.js";
import { readStarters } from "../../src/course/starters.js";
import { learnerManifestText } from "../../src/course/faults.js";
import { installTooling, runCommand } from "./tooling.js";
import { runInProcess } from "./in-process.js";
import { leanPackageTsconfig, NODE_TEST_TYPES, NODE_TEST_TYPINGS } from "./lean-build.js";

/** The real repo this test file lives in. */
export const repoRoot = courseRoot;

/** Copies the tooling package's manifest and bin (what the npm scripts start) from `sourceRoot` into `root`. */
/** `npm start`'s launcher, relative to the course root. */
export const START_SCRIPT = "packages/pi-course/bin/start.mjs";

export async function copyToolsPackage(sourceRoot: string, root: string): Promise<void> {
  await fse.copy(path.join(sourceRoot, TOOLS_PACKAGE, "package.json"), path.join(root, TOOLS_PACKAGE, "package.json"));
  await fse.copy(path.join(sourceRoot, TOOLS_PACKAGE, "bin"), path.join(root, TOOLS_PACKAGE, "bin"));
}

export type MiniVariant = "starter" | "reference" | "broken";

const LAB_ERROR = `/** The error every construction site throws until its lab is done. */
function labError(what: string): Error {
  return new Error(\`\${what} 尚未实现\`);
}
`;

/** `src/mini.ts` in three states: the starter, the reference and a reference with a bug in 99.2. */
export function miniSource(variant: MiniVariant): string {
  if (variant === "starter") {
    return `${LAB_ERROR}
export function add(a: number, b: number): number {
  // 🔨 Lab 99.1：返回两数之和
  void a;
  void b;
  throw labError("Lab 99.1 mini add");
}

export function greet(name: string): string {
  // 🔨 Lab 99.2：拼出问候语；空名字 → GREET_EMPTY
  void name;
  throw labError("Lab 99.2 mini greet");
}
`;
  }
  const greeting = variant === "broken" ? "`hi ${name}`" : "`hello ${name}`";
  return `export function add(a: number, b: number): number {
  return a + b;
}

export function greet(name: string): string {
  if (name === "") throw Object.assign(new Error("nobody to greet"), { code: "GREET_EMPTY" });
  return ${greeting};
}
`;
}

const MINI_TEST = `import assert from "node:assert/strict";
import test from "node:test";
import { add, greet } from "../src/mini.js";

test("Lab 99.1 · adds two numbers", () => {
  assert.equal(add(2, 3), 5);
});

test("Lab 99.1 · adding zero changes nothing", () => {
  assert.equal(add(7, 0), 7);
});

test("Lab 99.2 · greets by name", () => {
  assert.equal(greet("pi"), "hello pi");
});

test("Lab 99.2 · greets the sum", () => {
  assert.equal(greet(String(add(1, 1))), "hello 2");
});

test("Lab 99.2 · greeting starts with hello, and nobody is not greeted", () => {
  // An assertion about an error: against the starter it receives the scaffold error.
  assert.throws(() => greet(""), { code: "GREET_EMPTY" });
  assert.match(greet("x"), /^hello /);
});
`;

export const MINI_MANIFEST = `format: 1
id: "99"
title: 迷你章节
files:
  - packages/pi-course/src/mini.ts
  - packages/pi-course/test/99-mini.test.ts
starters:
  - from: mini.ts
    to: packages/pi-course/src/mini.ts
focusedTests:
  - packages/pi-course/test/99-mini.test.ts
labs:
  - id: "99.1"
    title: 两数相加
    tests: 2
    scaffoldError: Lab 99.1 mini add 尚未实现
    hints:
      - 第一级：打开 packages/pi-course/src/mini.ts
      - 第二级：add(a, b) 返回 number
      - 第三级：返回两数之和
      - 第四级：return a + b;
  - id: "99.2"
    title: 打招呼
    tests: 3
    scaffoldError: Lab 99.2 mini greet 尚未实现
    hints:
      - 甲：打开 packages/pi-course/src/mini.ts
      - 乙：greet(name) 返回 string
      - 丙：拼出 hello 和名字
      - 丁：return \`hello \${name}\`;
`;

/**
 * `text` (written for chapter 99) rewritten for chapter `id` (two digits): file names and the
 * manifest id take `id` (`03-mini.ts`, `"03"`), lab ids and test names the chapter's number
 * (`Lab 3.1`, `"3.1"`), as a real one-digit chapter writes them.
 */
export function forChapter(text: string, id: string): string {
  if (id === "99") return text;
  const number = String(Number(id));
  return text.replaceAll("99-mini", `${id}-mini`).replaceAll("99.yaml", `${id}.yaml`).replaceAll('"99"', `"${id}"`).replaceAll("99.", `${number}.`);
}

export interface MiniCourse {
  root: string;
  /** The chapter's manifest id (`99` unless `createMiniCourse` was given another). */
  id: string;
  /** Replaces `src/mini.ts` with `variant`. */
  use(variant: MiniVariant): Promise<void>;
}

/**
 * Writes the mini course into a fresh temporary folder and returns it; `t.after` (or the
 * caller) must remove `root`. The starter is `chapters/99-mini/mini.ts` (the home's hand-kept starter); `practice` lays it out as
 * a practice folder instead: the marker, and the starter's pristine copy in `.pi-course/starter/`.
 * `scripts` adds `npm start`'s launcher (`packages/pi-course/bin/start.mjs`). A command runs from
 * the compiled tooling the tests install (`support/tooling.ts`), as in a practice folder (the
 * tree has no tooling sources, so the tooling package's bin runs that build as it is), or in this process.
 */
export async function createMiniCourse(variant: MiniVariant, options: { practice?: boolean; chapter?: string; scripts?: boolean } = {}): Promise<MiniCourse> {
  const id = options.chapter ?? "99";
  const text = (value: string) => forChapter(value, id);
  const root = await mkdtemp(path.join(os.tmpdir(), "pi-lab-course-"));
  const pkg = path.join(root, "packages", "pi-course");
  await mkdir(path.join(pkg, "src"), { recursive: true });
  await mkdir(path.join(pkg, "test"), { recursive: true });
  const home = path.join(root, CHAPTERS_DIR, text("99-mini"));
  await mkdir(home, { recursive: true });
  if (options.scripts === true) {
    await fse.copy(path.join(repoRoot, START_SCRIPT), path.join(root, START_SCRIPT));
  }
  await copyToolsPackage(repoRoot, root);
  await fse.copy(path.join(repoRoot, "tsconfig.base.json"), path.join(root, "tsconfig.base.json"));
  await writeFile(path.join(pkg, "tsconfig.json"), leanPackageTsconfig());
  await mkdir(path.join(root, path.dirname(NODE_TEST_TYPES)), { recursive: true });
  await writeFile(path.join(root, NODE_TEST_TYPES), NODE_TEST_TYPINGS);
  // A junction needs no privilege on Windows; elsewhere the type is ignored.
  await symlink(path.join(repoRoot, "node_modules"), path.join(root, "node_modules"), "junction");
  await writeFile(
    path.join(root, "package.json"),
    `${JSON.stringify({ name: "mini-course", private: true, type: "module", workspaces: ["packages/*"] }, null, 2)}\n`,
  );
  await writeFile(path.join(pkg, "package.json"), `${JSON.stringify({ name: "@pi/course", private: true, type: "module" }, null, 2)}\n`);
  await writeFile(path.join(pkg, "test", text("99-mini.test.ts")), text(MINI_TEST));
  await writeFile(path.join(home, MANIFEST_FILE), text(MINI_MANIFEST));
  const starter = options.practice === true ? path.join(root, ...starterCopyPath("packages/pi-course/src/mini.ts").split("/")) : path.join(home, "mini.ts");
  await mkdir(path.dirname(starter), { recursive: true });
  await writeFile(starter, text(miniSource("starter")));
  if (options.practice === true) await writeFile(path.join(root, ".pi-course", "practice.json"), `${JSON.stringify({ chapter: id })}\n`);
  const use = (v: MiniVariant) => writeFile(path.join(pkg, "src", "mini.ts"), text(miniSource(v)));
  await use(variant);
  return { root, id, use };
}

/** Removes a mini course folder. */
export function removeMiniCourse(course: MiniCourse): Promise<void> {
  return rm(course.root, { recursive: true, force: true });
}

/** Runs the course command `script` (`lab.ts`, `hint.ts`, …) of `root` as the tooling's bin would, from the compiled tooling, with piped output. */
export function runScript(root: string, script: string, args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  return runCommand(root, script, args, { cwd: path.join(root, "packages", "pi-course"), env });
}

/**
 * The same command typed in the same place (the package folder, where npm runs it; `INIT_CWD` in
 * `env` says otherwise), run in this process (`in-process.ts`): for tests of what it does and
 * says rather than of its process.
 */
export function runInPackage(root: string, script: string, args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  return runInProcess(root, script, args, { cwd: path.join(root, "packages", "pi-course"), env });
}

/**
 * A practice folder of real chapter `id` laid out as `practice NN --link-modules` lays it out,
 * from this working tree (so the tooling under test is the one being edited): the course
 * package's sources and its tests' shared helpers (without the files a later chapter adds) with each starter over its teaching file and a pristine starter copy for
 * `reset`, the chapter's focused tests only, the learner-safe manifest, the practice marker,
 * the tooling compiled from this working tree (`support/tooling.ts`), `npm start`'s launcher, `examples/`, the workspace manifests and the repo's
 * `node_modules` linked. The folder's path has spaces and parentheses, as a learner's may.
 * The caller removes the folder.
 */
export async function practiceCopy(sourceRoot: string, id: string): Promise<string> {
  const manifest = await loadManifest(sourceRoot, id);
  const root = await mkdtemp(path.join(os.tmpdir(), `pi practice${id} (copy)-`));
  const pkg = path.join("packages", "pi-course");
  // The focused tests, and what the chapter provides as it is (a test support module outside src/ too).
  for (const file of [
    "package.json",
    "tsconfig.base.json",
    path.join(pkg, "package.json"),
    path.join(pkg, "tsconfig.json"),
    ...manifest.focusedTests,
    ...manifest.provided,
  ]) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await fse.copy(path.join(sourceRoot, file), path.join(root, file));
  }
  // The package's sources as the chapter's target has them: nothing a later chapter adds.
  const later = new Set<string>();
  for (const other of await listChapterIds(sourceRoot)) {
    if (Number(other) > Number(id)) for (const file of (await loadManifest(sourceRoot, other)).files) later.add(path.join(sourceRoot, ...file.split("/")));
  }
  await fse.copy(path.join(sourceRoot, pkg, "src"), path.join(root, pkg, "src"), { filter: (source) => !later.has(source) });
  // The tests' shared helpers of earlier chapters (the rule helper is chapter 00's), as the parent tree has them.
  await fse.copy(path.join(sourceRoot, pkg, "test", "support"), path.join(root, pkg, "test", "support"), { filter: (source) => !later.has(source) });
  await fse.copy(path.join(sourceRoot, "examples"), path.join(root, "examples")); // npm start's sample workspace
  await fse.copy(path.join(sourceRoot, START_SCRIPT), path.join(root, START_SCRIPT));
  await copyToolsPackage(sourceRoot, root);
  installTooling(root);
  const manifestText = await readFile(path.join(sourceRoot, manifest.manifestPath), "utf8");
  await mkdir(path.dirname(path.join(root, manifest.manifestPath)), { recursive: true });
  await writeFile(path.join(root, manifest.manifestPath), learnerManifestText(manifestText, manifest));
  // Each starter as `practice` writes it (hand-kept, or derived from the reference and the scaffold).
  for (const starter of await readStarters(manifest, (file) => readFile(path.join(sourceRoot, ...file.split("/")), "utf8"))) {
    for (const place of [starter.teachingFile, starterCopyPath(starter.teachingFile)]) {
      await mkdir(path.dirname(path.join(root, place)), { recursive: true });
      await writeFile(path.join(root, ...place.split("/")), starter.text);
    }
  }
  await writeFile(path.join(root, ".pi-course", "practice.json"), `${JSON.stringify({ chapter: id, createdBy: "practice" })}\n`);
  await symlink(path.join(repoRoot, "node_modules"), path.join(root, "node_modules"), "junction");
  return root;
}
