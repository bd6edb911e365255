/**
 * A small synthetic course repository for the tooling tests: the real workspace
 * configuration, two of the commands' sources and the templates the commands read from the
 * course root, plus two tiny chapters (`01` without a starter, `02` with a starter, two labs,
 * a hardening test and a fault), committed on `main`. Tests run against it so that they
 * neither depend on which real chapters exist nor write branches into the real repository.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import fse from "fs-extra";
import os from "node:os";
import path from "node:path";
import { after, type TestContext } from "node:test";
import { courseRoot } from "../../src/core/paths.js";
import { leanPackageTsconfig, NODE_TEST_TYPES, NODE_TEST_TYPINGS } from "./lean-build.js";

/** The real repository these tests belong to. */
export const realRepo = courseRoot;

/**
 * Base files copied from the real repository: the workspace, two command sources (so that
 * the parent tree holds tooling sources a practice folder must leave out) and the templates
 * `practice` reads from the course root. The commands themselves run compiled from the
 * tooling package's build (`support/tooling.ts`), never from these sources: the rest of
 * `packages/course-tools/src/` would only be 90 more files to copy and remove for every course.
 */
const BASE_FILES = [
  ".gitignore",
  "package.json",
  "tsconfig.base.json",
  "tsconfig.json",
  "packages/pi-course/package.json",
  "packages/course-tools/package.json",
  "packages/course-tools/bin/pi-course.mjs",
  "packages/course-tools/src/checkpoint.ts",
  "packages/course-tools/src/practice.ts",
  "packages/course-tools/src/practice/agents.md",
  "packages/course-tools/src/practice/tutor-skill.md",
  "packages/course-tools/src/practice/learning.md",
];

export const SCAFFOLD_ERROR = "Lab 2.1 beta catalog 尚未实现";
export const SCAFFOLD_ERROR_2 = "Lab 2.2 beta render 尚未实现";

/** The reference of chapter 02; its long lines are what the leak audit protects. */
export const REFERENCE_BETA = `import { alpha } from "./alpha.js";

/** Chapter 02 reference. */
export function betaCatalog(names: readonly string[]): string[] {
  const unique = [...new Set(names)].sort();
  return unique.map((name) => \`\${alpha()}:\${name}\`);
}

export function betaRender(names: readonly string[]): string {
  return betaCatalog(names).join(" | ");
}
`;

export const STARTER_BETA = `import { alpha } from "./alpha.js";

/** Chapter 02 starter. */
export function betaCatalog(names: readonly string[]): string[] {
  // 🔨 Lab 2.1：去重、排序、加前缀
  void alpha;
  void names;
  throw new Error("${SCAFFOLD_ERROR}");
}

export function betaRender(names: readonly string[]): string {
  // 🔨 Lab 2.2：连接目录
  void names;
  throw new Error("${SCAFFOLD_ERROR_2}");
}
`;

/**
 * Chapter 02's text: claims the manifest can confirm (labs table, exercise line, acceptance
 * record), no commands, so that every record of the synthetic course stays fast. Tests
 * that replay commands give the chapter a text of their own.
 */
export const CHAPTER_TEXT_BETA = `# 第二章正文

## 1. Lab 2.1 · 目录去重并排序

目录先去重再排序。

## 2. Lab 2.2 · 渲染

渲染用 “ | ” 连接目录里的每一项。

<!-- verify: labs -->
| Lab | 主题 | 测试数 | 施工位错误 |
|---|---|---|---|
| 2.1 | 目录去重并排序 | 2 | \`${SCAFFOLD_ERROR}\` |
| 2.2 | 渲染 | 1 | \`${SCAFFOLD_ERROR_2}\` |
| 合计 | | 3 | |

故障实验注入的一行：

<!-- verify: inject 2.1-no-sort -->
\`\`\`ts
unique.reverse(); // 故意错误
\`\`\`

<!-- verify: record -->
\`\`\`text
first red: Lab 2.1 0/2 "${SCAFFOLD_ERROR}"
Lab 2.1: 2/2
Lab 2.2: 1/1
fault 2.1-no-sort: killed by “Lab 2.1 · catalog is sorted”; restored: Lab 2.1 2/2
chapter total: 3/3
through chapter 02: all pass
\`\`\`
`;

const FILES: Record<string, string> = {
  "LEARNING.md": "# 课程指南\n\n总体说明。\n",
  // A lean build: no @types/node (see lean-build.ts).
  "packages/pi-course/tsconfig.json": leanPackageTsconfig(),
  [NODE_TEST_TYPES]: NODE_TEST_TYPINGS,
  "packages/pi-course/src/alpha.ts": 'export function alpha(): string {\n  return "alpha";\n}\n',
  "packages/pi-course/test/01-alpha.test.ts": `import assert from "node:assert/strict";
import { test } from "node:test";
import { alpha } from "../src/alpha.js";

test("Lab 1.1 · alpha returns its name", () => {
  assert.equal(alpha(), "alpha");
});
`,
  "chapters/01-alpha/chapter.yaml": `format: 1
id: "01"
title: 第一章
files:
  - packages/pi-course/src/alpha.ts
  - packages/pi-course/test/01-alpha.test.ts
focusedTests:
  - packages/pi-course/test/01-alpha.test.ts
`,
  "packages/pi-course/src/beta.ts": REFERENCE_BETA,
  "packages/pi-course/src/beta-sep.ts": 'export const BETA_SEPARATOR = " | ";\n',
  "chapters/02-beta/README.md": CHAPTER_TEXT_BETA,
  "chapters/02-beta/beta.ts": STARTER_BETA,
  "packages/pi-course/test/02-beta.test.ts": `import assert from "node:assert/strict";
import { test } from "node:test";
import { betaCatalog, betaRender } from "../src/beta.js";

test("Lab 2.1 · catalog is sorted", () => {
  assert.deepEqual(betaCatalog(["b", "a"]), ["alpha:a", "alpha:b"]);
});

test("Lab 2.1 · catalog drops duplicates", () => {
  assert.deepEqual(betaCatalog(["a", "a"]), ["alpha:a"]);
});

test("Lab 2.2 · render joins the catalog", () => {
  assert.equal(betaRender(["a"]), "alpha:a");
});
`,
  "packages/pi-course/test/02-beta-hardening.test.ts": `import assert from "node:assert/strict";
import { test } from "node:test";
import { betaCatalog } from "../src/beta.js";

test("catalog of nothing is empty", () => {
  assert.deepEqual(betaCatalog([]), []);
});
`,
  "chapters/02-beta/chapter.yaml": `# chapter 02 (synthetic)
format: 1
id: "02"
title: 第二章
files:
  - packages/pi-course/src/beta.ts
  - packages/pi-course/test/02-beta.test.ts
  - packages/pi-course/test/02-beta-hardening.test.ts
  - packages/pi-course/src/beta-sep.ts
starters:
  - from: beta.ts
    to: packages/pi-course/src/beta.ts
focusedTests:
  - packages/pi-course/test/02-beta.test.ts
provided:
  - packages/pi-course/src/beta-sep.ts
text: README.md
labs:
  - id: "2.1"
    title: 目录去重并排序
    tests: 2
    scaffoldError: ${SCAFFOLD_ERROR}
    declarations: [betaCatalog]
    sections: ["1"]
    hints: [打开 beta.ts, 看 betaCatalog 的签名, 先去重再排序, 用 Set]
    faults:
      - id: 2.1-no-sort
        rule: §1 目录先去重再排序
        description: 忘记排序
        file: packages/pi-course/src/beta.ts
        in: betaCatalog
        find: "].sort();"
        replace: "];"
        killedBy: ["Lab 2.1 · catalog is sorted"]
        exercise: true
        learner:
          function: betaCatalog(names)
          before: return
          insert: "unique.reverse(); // 故意错误"
          explain: 反转之后顺序错了，Lab 2.1 的排序测试应当失败。
  - id: "2.2"
    title: 渲染
    tests: 1
    scaffoldError: ${SCAFFOLD_ERROR_2}
    declarations: [betaRender]
    sections: ["2"]
    hints: [打开 beta.ts, 看 betaRender 的签名, 连接目录, 用 join]
    faults:
      - id: 2.2-no-join
        rule: §2 渲染用 “ | ” 连接每一项
        description: 忘记连接
        in: betaRender
        find: 'join(" | ")'
        replace: 'join("")'
        killedBy: ["Lab 2.2"]
`,
};

/** Environment for git commands that create the fixture's own (non-generated) commits. */
export const AUTHOR_ENV = {
  GIT_AUTHOR_NAME: "Test Author",
  GIT_AUTHOR_EMAIL: "author@example.invalid",
  GIT_COMMITTER_NAME: "Test Author",
  GIT_COMMITTER_EMAIL: "author@example.invalid",
};

/** Runs git synchronously in `cwd` (fixture setup only). */
export function sh(cwd: string, args: string[], env: Record<string, string> = {}): string {
  const clean: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("GIT_")) clean[k] = v;
  return execFileSync("git", args, { cwd, env: { ...clean, ...AUTHOR_ENV, ...env }, encoding: "utf8" }).replace(/\n$/, "");
}

/**
 * What removes a fixture: a test's context (after the test), or `fileScope()` for a fixture
 * several tests of a file share (after the file).
 */
export type Owner = Pick<TestContext, "after">;

/**
 * An owner for fixtures shared by the tests of one file: what they register is removed once
 * every test of the file has run (a top-level `after` hook), last made first. Call it at the top
 * level of the test file, where the hook belongs to the file.
 */
export function fileScope(): Owner {
  const cleanups: (() => unknown)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  return { after: (fn: () => unknown) => void cleanups.push(fn) } as Owner;
}

/** A fresh temporary directory removed after the test (or the file, see `Owner`). */
export function tempDir(t: Owner, prefix = "pi-course-test-"): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface FakeCourseOptions {
  /** Files to add or replace (path -> content) before the commit. */
  overrides?: Record<string, string>;
  /** Link node_modules to the real repository's (needed to run tsx or build). */
  linkModules?: boolean;
}

/** Writes the synthetic course's files (the base files, `FILES`, then `overrides`) into `repo`. */
function writeCourseFiles(repo: string, overrides: Record<string, string> = {}): void {
  for (const file of BASE_FILES) {
    mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
    fse.copySync(path.join(realRepo, file), path.join(repo, file));
  }
  for (const [file, content] of Object.entries({ ...FILES, ...overrides })) {
    mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
    writeFileSync(path.join(repo, file), content);
  }
}

/** Where the synthetic course is kept ready, one folder per state of its inputs (git-ignored, like the compiled tooling). */
const TEMPLATES = path.join(courseRoot, ".pi-course", "test-fixtures");
/** Written last into a finished template: a folder without it is not used. */
const COMPLETE = "complete.json";
/** Bumped whenever the way the template is made changes (not only its files), so that older templates are not used. */
const TEMPLATE_FORMAT = 2;

let template: string | undefined;

/** Every file a base entry names (a file, or each file below a folder), sorted. */
function baseFilesBelow(entry: string): string[] {
  const full = path.join(realRepo, entry);
  if (!statSync(full).isDirectory()) return [entry];
  return readdirSync(full, { withFileTypes: true })
    .flatMap((child) => baseFilesBelow(path.posix.join(entry, child.name)))
    .sort();
}

/**
 * The synthetic course as `makeFakeCourse` makes it (files, `git init`, one commit), made once
 * per state of its inputs and kept in `.pi-course/test-fixtures/fake-course-<hash>/course`:
 * every test copies it instead of writing the files and committing them again (about 0.3 s of
 * CPU a course, most of it `git add` hashing the tooling sources and the processes around
 * it). Every copy holds the same commit; the tests never depended on two courses' commits
 * differing (their dates made them differ before). Its objects are packed and git's sample
 * hooks left out (`--template=`): a copy is about 40 files instead of 250, and creating and
 * removing files is most of what a copy costs. Safe when several test files ask at once:
 * each builds in its own temporary folder and the first rename wins.
 */
function fakeCourseTemplate(): string {
  if (template !== undefined) return template;
  const hash = createHash("sha256").update(`template ${TEMPLATE_FORMAT}\0`);
  for (const file of BASE_FILES.flatMap(baseFilesBelow))
    hash
      .update(`${file}\0`)
      .update(readFileSync(path.join(realRepo, file)))
      .update("\0");
  for (const [file, content] of Object.entries(FILES)) hash.update(`${file}\0${content}\0`);
  const dir = path.join(TEMPLATES, `fake-course-${hash.digest("hex").slice(0, 16)}`);
  if (!existsSync(path.join(dir, COMPLETE))) {
    mkdirSync(TEMPLATES, { recursive: true });
    const partial = `${dir}.partial-${process.pid}`;
    rmSync(partial, { recursive: true, force: true });
    try {
      const repo = path.join(partial, "course");
      mkdirSync(repo, { recursive: true });
      writeCourseFiles(repo);
      sh(repo, ["init", "-q", "-b", "main", "--template="]);
      sh(repo, ["add", "-A"]);
      sh(repo, ["commit", "-q", "-m", "synthetic course"]);
      sh(repo, ["repack", "-a", "-d", "-n", "-q"]);
      writeFileSync(path.join(partial, COMPLETE), "{}\n");
      try {
        renameSync(partial, dir);
      } catch (error) {
        // Another test file finished the same template first: use it.
        if (!existsSync(path.join(dir, COMPLETE))) throw error;
      }
    } finally {
      rmSync(partial, { recursive: true, force: true });
    }
    removeOldTemplates(path.basename(dir));
  }
  // Marks the template as in use, so that a run with other inputs does not take it for an old one.
  const now = new Date();
  utimesSync(dir, now, now);
  template = path.join(dir, "course");
  return template;
}

/** Templates of earlier input states, untouched for an hour, are removed (a concurrent run may still use a recent one). */
function removeOldTemplates(keep: string): void {
  const hourAgo = Date.now() - 60 * 60 * 1000;
  for (const name of readdirSync(TEMPLATES)) {
    const full = path.join(TEMPLATES, name);
    if (name !== keep && statSync(full).mtimeMs < hourAgo) rmSync(full, { recursive: true, force: true });
  }
}

/**
 * Creates the synthetic course as a git repository at `<tmp>/course` (so the folder beside
 * it is free for practice destinations) and returns its path. Removed after the test.
 * Without overrides it is a copy of the template (`fakeCourseTemplate`); with them, the
 * template's copy with the overridden files written and committed in place of its one commit.
 */
export function makeFakeCourse(t: Owner, options: FakeCourseOptions = {}): string {
  const root = tempDir(t, "pi-course-fake-");
  const repo = path.join(root, "course");
  try {
    cpSync(fakeCourseTemplate(), repo, { recursive: true });
  } catch (error) {
    // A concurrent run of other inputs removed the template after this process chose it: make it again.
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    template = undefined;
    rmSync(repo, { recursive: true, force: true });
    cpSync(fakeCourseTemplate(), repo, { recursive: true });
  }
  const overrides = Object.keys(options.overrides ?? {});
  if (overrides.length > 0) {
    for (const [file, content] of Object.entries(options.overrides!)) {
      mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
      writeFileSync(path.join(repo, file), content);
    }
    sh(repo, ["add", "--", ...overrides]);
    sh(repo, ["commit", "-q", "--amend", "-m", "synthetic course"]);
  }
  if (options.linkModules) symlinkSync(path.join(realRepo, "node_modules"), path.join(repo, "node_modules"), "junction");
  return repo;
}

/** `git clone` of `repo` into a new temporary folder (removed after the test). */
export function cloneOf(t: Owner, repo: string, args: string[] = []): string {
  const root = tempDir(t, "pi-course-clone-");
  const dest = path.join(root, "course");
  sh(root, ["clone", "-q", ...args, repo, dest]);
  return dest;
}
