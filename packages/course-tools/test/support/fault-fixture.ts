/**
 * A synthetic mini chapter for the `fault` and `verify` tests: chapter 98, two labs
 * (`Lab 98.1` doubling, 2 tests; `Lab 98.2` a trust gate, 2 tests), laid out like the
 * real course (packages/pi-course/{src,test} and a chapter home under chapters/), with a link to
 * this repo's `node_modules` so it builds without the network. It builds in well under a
 * second, which keeps the author-mode and learner-mode tests real but fast.
 */
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { courseRoot } from "../../src/core/paths.js";
import type { TestContext } from "node:test";
import { learnerManifestText, type Fault } from "../../src/course/faults.js";
import { parseManifest, type ChapterManifest } from "../../src/course/manifest.js";
import { leanPackageTsconfig, NODE_TEST_TYPES, NODE_TEST_TYPINGS } from "./lean-build.js";

/** The real repo this file lives in. */
export const repoRoot = courseRoot;

export const MINI_FILE = "packages/pi-course/src/mini.ts";
export const MINI_TEST_FILE = "packages/pi-course/test/98-mini.test.ts";

/** The reference solution of chapter 98. */
export const MINI_REFERENCE = `/** Chapter 98 reference: a doubling function and a trust gate. */
export interface Loader {
  trust(): boolean;
  load(): void;
}

export function double(n: number): number {
  return n * 2;
}

export function gate(loader: Loader): "loaded" | "skipped" {
  if (!loader.trust()) {
    return "skipped";
  }
  loader.load();
  return "loaded";
}
`;

/** The starter of chapter 98: same surface, construction sites only, each lab marked as course starters mark them. */
export const MINI_STARTER = `/** Chapter 98 starter. */
export interface Loader {
  trust(): boolean;
  load(): void;
}

function labError(what: string): Error {
  return new Error(\`\${what} 尚未实现\`);
}

// 🔨 Lab 98.1：返回 n 的两倍
export function double(n: number): number {
  void n;
  throw labError("Lab 98.1 doubling");
}

/** Loads what the loader holds, only when it is trusted. */
export function gate(loader: Loader): "loaded" | "skipped" {
  // 🔨 Lab 98.2：先问 trust，再 load
  void loader;
  throw labError("Lab 98.2 trust gate");
}
`;

export const MINI_TEST = `import assert from "node:assert/strict";
import test from "node:test";
import { double, gate } from "../src/mini.js";

test("Lab 98.1 · doubles", () => {
  assert.equal(double(2), 4);
});

test("Lab 98.1 · doubles negatives", () => {
  assert.equal(double(-3), -6);
});

test("Lab 98.2 · untrusted code is never loaded", () => {
  const calls: string[] = [];
  const result = gate({ trust: () => (calls.push("trust"), false), load: () => void calls.push("load") });
  assert.equal(result, "skipped");
  assert.deepEqual(calls, ["trust"]);
});

test("Lab 98.2 · trusted code is loaded once", () => {
  const calls: string[] = [];
  assert.equal(gate({ trust: () => (calls.push("trust"), true), load: () => void calls.push("load") }), "loaded");
  assert.deepEqual(calls, ["trust", "load"]);
});
`;

/** The faults section of the fixture's manifest (YAML). */
export const MINI_FAULTS = `faults:
  - id: 98.1-plus-two
    lab: "98.1"
    description: 把乘 2 写成加 2
    find: "  return n * 2;"
    replace: "  return n + 2;"
    killedBy: ["Lab 98.1 · doubles negatives"]
  - id: 98.2-load-untrusted
    lab: "98.2"
    exercise: true
    description: 未信任分支里先加载了代码
    find: "  if (!loader.trust()) {\\n    return \\"skipped\\";"
    replace: "  if (!loader.trust()) {\\n    loader.load(); // 故意错误\\n    return \\"skipped\\";"
    killedBy: ["Lab 98.2 · untrusted"]
    learner:
      function: gate(loader)
      before: return "skipped"
      insert: "loader.load(); // 故意错误"
      explain: 在未信任分支返回之前加载代码：返回值不变，但测试记录到了 load。
`;

/** The mini chapter's manifest and hand-kept starter, in its home. */
export const MINI_MANIFEST_PATH = "chapters/98-mini/chapter.yaml";
export const MINI_STARTER_PATH = "chapters/98-mini/mini.ts";

export function miniManifest(faults = MINI_FAULTS): string {
  return `format: 1
id: "98"
title: 迷你故障章节
files:
  - ${MINI_FILE}
  - ${MINI_TEST_FILE}
starters:
  - from: mini.ts
    to: ${MINI_FILE}
focusedTests:
  - ${MINI_TEST_FILE}
labs:
  - id: "98.1"
    title: 乘以二
    tests: 2
    scaffoldError: Lab 98.1 doubling 尚未实现
    hints: [打开 mini.ts, double(n), 返回 n 的两倍, return n * 2]
  - id: "98.2"
    title: 信任门
    tests: 2
    scaffoldError: Lab 98.2 trust gate 尚未实现
    hints: [打开 mini.ts, gate(loader), 先问 trust 再 load, if 语句]
${faults}`;
}

const PACKAGE_JSON = `${JSON.stringify({ name: "@pi/course", version: "0.0.0", private: true, type: "module" }, null, 2)}\n`;
const TSCONFIG = leanPackageTsconfig();

export interface MiniCourseOptions {
  /** The content of `src/mini.ts`; default the reference. */
  source?: string;
  /** The content of the test file; default `MINI_TEST`. */
  test?: string;
  /** The manifest; default `miniManifest()`. */
  manifest?: string;
  /** Write the practice marker (learner mode). */
  practice?: boolean;
  /** Also write the starter in the chapter's home (`MINI_STARTER_PATH`). */
  starter?: boolean;
}

/** Writes `files` (relative path → content) below `dir`. */
export async function writeTree(dir: string, files: Record<string, string>): Promise<void> {
  for (const [relative, content] of Object.entries(files)) {
    const target = path.join(dir, ...relative.split("/"));
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, content);
  }
}

/** The files of the mini course (without `node_modules`). */
export async function miniCourseFiles(options: MiniCourseOptions = {}): Promise<Record<string, string>> {
  const files: Record<string, string> = {
    "tsconfig.base.json": await readFile(path.join(repoRoot, "tsconfig.base.json"), "utf8"),
    "packages/pi-course/package.json": PACKAGE_JSON,
    "packages/pi-course/tsconfig.json": TSCONFIG,
    [NODE_TEST_TYPES]: NODE_TEST_TYPINGS,
    [MINI_FILE]: options.source ?? MINI_REFERENCE,
    [MINI_TEST_FILE]: options.test ?? MINI_TEST,
    [MINI_MANIFEST_PATH]: options.manifest ?? miniManifest(),
  };
  if (options.starter) files[MINI_STARTER_PATH] = MINI_STARTER;
  if (options.practice) {
    files[".pi-course/practice.json"] =
      `${JSON.stringify({ chapter: "98", parent: "0".repeat(40), target: "1".repeat(40), source: "2".repeat(40), createdBy: "practice" })}\n`;
  }
  return files;
}

/** Creates the mini course in a fresh temporary folder, removed after the test. */
export async function makeMiniCourse(t: TestContext, options: MiniCourseOptions = {}): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "pi-fault-mini-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeTree(dir, await miniCourseFiles(options));
  await symlink(path.join(repoRoot, "node_modules"), path.join(dir, "node_modules"), "junction");
  return dir;
}

/** The mini chapter's manifest, parsed. */
export function manifestOf(text = miniManifest()): ChapterManifest {
  return parseManifest(text, MINI_MANIFEST_PATH);
}

/** A fault of the mini chapter's catalog, with `overrides`. */
export function fault(overrides: Partial<Fault> = {}): Fault {
  return {
    id: "98.1-x",
    lab: "98.1",
    description: "d",
    file: MINI_FILE,
    find: "  return n * 2;",
    replace: "  return n + 2;",
    killedBy: ["Lab 98.1 · doubles negatives"],
    exercise: false,
    ...overrides,
  };
}

/** A practice folder of the mini chapter whose manifest is the learner-safe projection. */
export async function practiceFolder(t: Parameters<typeof makeMiniCourse>[0], source = MINI_REFERENCE) {
  const manifest = learnerManifestText(miniManifest(), manifestOf());
  return makeMiniCourse(t, { practice: true, manifest, source });
}

/** The learner's own solution: same behaviour as the reference, written differently. */
export const LEARNER_SOLUTION = `export interface Loader {
  trust(): boolean;
  load(): void;
}

export function double(n: number): number {
  return n + n;
}

export function gate(loader: Loader): "loaded" | "skipped" {
  const trusted = loader.trust();
  if (trusted !== true) {
      return 'skipped';
  }
  loader.load();
  return "loaded";
}
`;
