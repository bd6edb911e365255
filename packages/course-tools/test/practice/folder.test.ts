/**
 * `practice/folder.ts` (with its plan, destination checks and guide): what a practice folder
 * holds, what it refuses, and that a failure leaves nothing behind.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { runLab } from "../../src/testing/labs.js";
import { listTree } from "../../src/course/git.js";
import { loadManifest } from "../../src/course/manifest.js";
import { resolveCheckpoint } from "../../src/course/history.js";
import { PRACTICE_MARKER, PRACTICE_TOOLING, TOOLS_PACKAGE } from "../../src/core/paths.js";
import { createPractice, type PracticeStep } from "../../src/practice/folder.js";
import { isWorkshopPath } from "../../src/practice/plan.js";
import { CHAPTER_TEXT_BETA, makeFakeCourse, SCAFFOLD_ERROR, SCAFFOLD_ERROR_2, sh, STARTER_BETA } from "../support/fake-course.js";
import { fingerprint, isCode, leftovers } from "../support/folders.js";

// One synthetic course and one practice folder (its modules linked, so that it builds) for two behaviours: what the
// folder holds, and its first red.
test("practice writes the parent tree, the focused test, the starter over the teaching file, lab data, marker, guide and tutoring files; first red: the generated folder builds, its first lab fails 0/N with the exact scaffold error, and every lab is not started", async (t) => {
  const repo = makeFakeCourse(t, { linkModules: true });
  const dest = path.join(path.dirname(repo), "p02");
  const result = await createPractice({ repo, id: "02", dest, linkModules: true });
  assert.equal(result.dest, dest);
  const parent = sh(repo, ["rev-parse", "course/build-your-own-pi~1"]);
  const target = sh(repo, ["rev-parse", "course/build-your-own-pi"]);
  assert.deepEqual([result.parent, result.target], [parent, target]);
  const read = (f: string): string => readFileSync(path.join(dest, f), "utf8");

  assert.equal(existsSync(path.join(dest, ".git")), false);
  assert.equal(read("packages/pi-course/src/alpha.ts"), sh(repo, ["show", "HEAD:packages/pi-course/src/alpha.ts"]) + "\n");
  assert.equal(read("packages/pi-course/test/01-alpha.test.ts").length > 0, true);
  assert.equal(read("packages/pi-course/test/02-beta.test.ts"), sh(repo, ["show", `${target}:packages/pi-course/test/02-beta.test.ts`]) + "\n");
  assert.equal(read("packages/pi-course/src/beta.ts"), STARTER_BETA);
  assert.equal(read(".pi-course/starter/packages/pi-course/src/beta.ts"), STARTER_BETA, "a pristine starter copy for reset");
  assert.equal(existsSync(path.join(dest, "packages/pi-course/test/02-beta-hardening.test.ts")), false);
  assert.equal(existsSync(path.join(dest, "starters")), false);
  assert.equal(read("COURSE.md"), "# 课程指南\n\n总体说明。\n");
  // Provided files and the chapter text arrive from the target as they are.
  assert.equal(read("packages/pi-course/src/beta-sep.ts"), 'export const BETA_SEPARATOR = " | ";\n');
  assert.equal(read("chapters/02-beta/README.md"), CHAPTER_TEXT_BETA);

  const manifest = await loadManifest(dest, "02");
  assert.equal(manifest.labs.length, 2);
  // Only the exercise fault, without the reference edit it is written against.
  assert.deepEqual(
    manifest.faults.map((f) => f.id),
    ["2.1-no-sort"],
  );
  assert.equal(manifest.faults[0]?.learner?.insert, "unique.reverse(); // 故意错误");
  assert.ok(!read("chapters/02-beta/chapter.yaml").includes("find:"));
  assert.ok(!read("chapters/02-beta/chapter.yaml").includes("replace:"));
  assert.ok(read("chapters/02-beta/chapter.yaml").startsWith("# chapter 02 (synthetic)"), "comments are kept");

  assert.deepEqual(JSON.parse(read(PRACTICE_MARKER)), {
    chapter: "02",
    parent,
    target,
    source: sh(repo, ["rev-parse", "HEAD"]),
    course: repo,
    createdBy: "practice",
  });

  const guide = read("LEARNING.md");
  for (const needle of [
    "重建",
    parent,
    target,
    sh(repo, ["rev-parse", "HEAD"]),
    "packages/pi-course/test/02-beta.test.ts",
    "本章正文：`chapters/02-beta/README.md`",
    "本章提供的文件（直接使用，不用改写）：`packages/pi-course/src/beta-sep.ts`",
    "npm install",
    "npm run build -w @pi/course",
    'node --test --test-name-pattern="Lab 2.1" packages/pi-course/dist/test/02-beta.test.js',
    "**0/2**",
    SCAFFOLD_ERROR,
    "| 2.1 | 目录去重并排序 | 2 |",
    "| 2.2 | 渲染 | 1 |",
    "npm run hint -w @pi/course -- 2.1",
    "npm run lab -w @pi/course -- 2.1",
    "npm run fault -w @pi/course -- 02",
    "node --test packages/pi-course/dist/test/02-beta.test.js",
    "npm test -w @pi/course   # 到第 02 章为止（01、02）的全部测试都通过",
    "## 先读正文",
    "附录 · 契约",
  ]) {
    assert.ok(guide.includes(needle), `LEARNING.md should contain ${needle}`);
  }
  // The workshop stays in the repository: no tooling source, no author files; the tooling comes compiled.
  const listed = fingerprint(dest).filter((l) => !l.endsWith("/"));
  assert.ok(listed.includes("node_modules link"), "the modules are a link (--link-modules), not a copy");
  const actualFiles = listed.filter((l) => l !== "node_modules link").map((l) => l.split(" ")[0]!);
  assert.deepEqual(
    actualFiles.filter((f) => f.startsWith("scripts/") || (f.endsWith(".ts") && f.startsWith(`${TOOLS_PACKAGE}/`))),
    [],
    "no tooling source in the folder",
  );
  for (const author of ["README.md", "tsconfig.json", "bench", "docs"]) assert.equal(existsSync(path.join(dest, author)), false, `${author} is the authors'`);
  const tooling = actualFiles.filter((f) => f.startsWith(`${PRACTICE_TOOLING}/`));
  for (const command of ["src/cli.js", "src/lab.js", "src/hint.js", "src/core/paths.js", "src/core/typescript.mjs", "src/run-tests.mjs"]) {
    assert.ok(tooling.includes(`${PRACTICE_TOOLING}/${command}`), `the compiled tooling holds ${command}`);
  }
  assert.deepEqual(
    tooling.filter((f) => /\.(map|d\.ts|d\.mts|tsbuildinfo)$/.test(f) || f.includes("/test/") || /\/[^/]+\.json$/.test(f.slice(PRACTICE_TOOLING.length))),
    [],
    "no source maps, declarations, compiled tests or build records",
  );
  const rootManifest = JSON.parse(read("package.json")) as { scripts: Record<string, string> };
  assert.equal(rootManifest.scripts.typecheck, undefined, "the workshop's scripts are left out");
  assert.ok(!rootManifest.scripts.test?.includes("typecheck"), rootManifest.scripts.test);
  // Everything else in the folder is exactly the parent tree, without the workshop.
  const parentFiles = (await listTree(repo, parent)).map((e) => (e.path === "LEARNING.md" ? "COURSE.md" : e.path)).filter((f) => !isWorkshopPath(f));
  const expected = [
    ...parentFiles,
    ...tooling,
    "packages/pi-course/test/02-beta.test.ts",
    "packages/pi-course/src/beta.ts",
    "packages/pi-course/src/beta-sep.ts",
    "chapters/02-beta/README.md",
    "chapters/02-beta/chapter.yaml",
    PRACTICE_MARKER,
    ".pi-course/starter/packages/pi-course/src/beta.ts",
    "LEARNING.md",
    "AGENTS.md",
    "CLAUDE.md",
    ".agents/skills/pi-course-tutor/SKILL.md",
  ].sort();
  assert.deepEqual([...actualFiles].sort(), expected);

  // First red, on the synthetic chapter: a real chapter's first red is its acceptance record's (`verify NN`, the "first red" line).
  const built = await loadManifest(dest, "02");
  const first = built.labs[0]!;
  // The whole chapter: a later lab's tests blocked by an earlier lab's scaffold are "not started" too.
  const red = await runLab(dest, built, { chapter: "02" });
  assert.equal(red.kind, "tested", JSON.stringify(red));
  assert.ok(red.kind === "tested");
  const [lab] = red.labs;
  assert.deepEqual([lab?.passed, lab?.total, lab?.status], [0, 2, "not_started"], JSON.stringify(lab));
  assert.ok(lab!.failures.length === first.tests && lab!.failures.every((f) => f.message.includes(first.scaffoldError)), JSON.stringify(lab!.failures));
  assert.deepEqual(
    red.labs.map((l) => `${l.id} ${l.passed}/${l.total} ${l.status}`),
    built.labs.map((l) => `${l.id} 0/${l.tests} not_started`),
  );
  assert.deepEqual([red.strays, red.crashes], [[], []]);
});

test("practice refuses an existing destination, one inside the repo (also through a symlink) or without a parent, changing nothing", async (t) => {
  const repo = makeFakeCourse(t);
  const root = path.dirname(repo);
  const existing = path.join(root, "mine");
  mkdirSync(existing);
  writeFileSync(path.join(existing, "keep.txt"), "my work\n");
  symlinkSync(repo, path.join(root, "via-link"));
  const before = { root: fingerprint(root), status: sh(repo, ["--no-optional-locks", "status", "--porcelain", "--untracked-files=all"]) };
  const cases: [string, string][] = [
    [existing, "DEST_EXISTS"],
    [path.join(repo, "practice"), "DEST_INSIDE_REPO"],
    [path.join(repo, "packages"), "DEST_INSIDE_REPO"],
    [path.join(root, "via-link", "practice"), "DEST_INSIDE_REPO"],
    [path.join(root, "no", "such", "parent"), "DEST_PARENT_MISSING"],
  ];
  for (const [dest, code] of cases) await assert.rejects(createPractice({ repo, id: "02", dest }), isCode(code), dest);
  assert.deepEqual({ root: fingerprint(root), status: sh(repo, ["--no-optional-locks", "status", "--porcelain", "--untracked-files=all"]) }, before);
});

test("a failure or an abort at any step leaves neither the destination nor a temporary folder", async (t) => {
  const repo = makeFakeCourse(t, { linkModules: true });
  const root = path.dirname(repo);
  const steps: PracticeStep[] = ["checkpoint", "destination", "files", "tooling", "audit", "modules"];
  // An abort is checked after each step by the same code (`step` in folder.ts): once before the temporary folder exists, once
  // when it holds everything.
  const aborted = new Set<PracticeStep>(["checkpoint", "audit"]);
  // The chapter resolved once for the runs that fail (as `verify` hands it over); the run that succeeds resolves its own.
  const checkpoint = await resolveCheckpoint(repo, "02");
  for (const at of steps) {
    const dest = path.join(root, `fail-${at}`);
    let seenTemp: string | undefined;
    await assert.rejects(
      createPractice({
        repo,
        id: "02",
        dest,
        linkModules: true,
        checkpoint,
        hooks: {
          afterStep(step, temp) {
            if (step === at) {
              seenTemp = temp;
              throw new Error(`injected failure at ${step}`);
            }
          },
        },
      }),
      /injected failure/,
    );
    assert.equal(existsSync(dest), false, at);
    if (seenTemp) assert.equal(existsSync(seenTemp), false, `${at}: temp folder removed`);
    assert.deepEqual(leftovers(root), [], at);
    assert.equal(sh(repo, ["branch", "--list", "course/build-your-own-pi"]), "", `${at}: a failed practice writes no branch`);

    if (!aborted.has(at)) continue;
    const controller = new AbortController();
    await assert.rejects(
      createPractice({
        repo,
        id: "02",
        dest,
        checkpoint,
        signal: controller.signal,
        hooks: { afterStep: (step) => (step === at ? controller.abort() : undefined) },
      }),
      isCode("ABORTED"),
    );
    assert.equal(existsSync(dest), false, at);
    assert.deepEqual(leftovers(root), [], at);
  }
  // The hooks really ran inside the temporary folder (so the checks above were meaningful).
  let tempSeen = "";
  await createPractice({
    repo,
    id: "02",
    dest: path.join(root, "ok"),
    hooks: { afterStep: (step, temp) => void (step === "files" && (tempSeen = temp ?? "")) },
  });
  assert.match(path.basename(tempSeen), /^\.ok\.partial-/);
  assert.equal(path.dirname(tempSeen), root);
  assert.match(sh(repo, ["rev-parse", "course/build-your-own-pi"]), /^[0-9a-f]{40}$/, "a successful practice publishes the branch");
});

test("a reference line in any file of the folder is LEAK_DETECTED (file, line, text) and nothing is written", async (t) => {
  const repo = makeFakeCourse(t);
  const testFile = path.join(repo, "packages/pi-course/test/02-beta.test.ts");
  writeFileSync(testFile, readFileSync(testFile, "utf8").replace('test("Lab 2.2', '// hint:\n//   const unique = [...new Set(names)].sort();\ntest("Lab 2.2'));
  sh(repo, ["commit", "-q", "-am", "a test that quotes the reference"]);
  const dest = path.join(path.dirname(repo), "leaky");
  await assert.rejects(createPractice({ repo, id: "02", dest }), (e: unknown) => {
    assert.ok(isCode("LEAK_DETECTED")(e));
    assert.match((e as Error).message, /packages\/pi-course\/test\/02-beta\.test\.ts:\d+ .*const unique = \[\.\.\.new Set\(names\)\]\.sort\(\);/);
    return true;
  });
  assert.equal(existsSync(dest), false);
  assert.deepEqual(leftovers(path.dirname(repo)), []);
});

test("the compiled tooling is audited too: a distinctive reference line in it is LEAK_DETECTED and nothing is written", async (t) => {
  const repo = makeFakeCourse(t);
  const dest = path.join(path.dirname(repo), "leaky-tooling");
  const answer = "return unique.map((name) => `${alpha()}:${name}`);";
  const plant = (step: PracticeStep, temp: string | undefined) => {
    if (step === "tooling") writeFileSync(path.join(temp!, PRACTICE_TOOLING, "src", "lab.js"), `// ${answer}\n`, { flag: "a" });
  };
  await assert.rejects(createPractice({ repo, id: "02", dest, hooks: { afterStep: plant } }), (e: unknown) => {
    assert.ok(isCode("LEAK_DETECTED")(e));
    assert.match((e as Error).message, /packages\/course-tools\/dist\/src\/lab\.js:\d+/);
    return true;
  });
  assert.equal(existsSync(dest), false);
});

test("a starter carrying reference code in a comment is LEAK_DETECTED naming the starter's line, and nothing is written", async (t) => {
  const pasted = "  // 参考：const unique = [...new Set(names)].sort();";
  const starter = STARTER_BETA.replace("  void alpha;", `${pasted}\n  void alpha;`);
  const repo = makeFakeCourse(t, { overrides: { "chapters/02-beta/beta.ts": starter } });
  const dest = path.join(path.dirname(repo), "leaky-starter");
  const line = starter.split("\n").indexOf(pasted) + 1;
  await assert.rejects(createPractice({ repo, id: "02", dest }), (e: unknown) => {
    assert.ok(isCode("LEAK_DETECTED")(e));
    assert.match(
      (e as Error).message,
      new RegExp(
        `chapters/02-beta/beta\\.ts:${line} 的注释含有 packages/pi-course/src/beta\\.ts 参考实现函数体中的代码「const unique = \\[\\.\\.\\.new Set\\(names\\)\\]\\.sort\\(\\);」`,
      ),
    );
    return true;
  });
  assert.equal(existsSync(dest), false);
  assert.deepEqual(leftovers(path.dirname(repo)), []);
});

/** Chapter 02 of the synthetic course with its starter derived from a scaffold (its old starter file no longer claimed). */
const BETA_SCAFFOLD = `/** Chapter 02 starter. */
function betaCatalog() {
  // 🔨 Lab 2.1：去重、排序、加前缀
  void alpha;
  void names;
  throw new Error("${SCAFFOLD_ERROR}");
}

function betaRender() {
  // 🔨 Lab 2.2：连接目录
  void names;
  throw new Error("${SCAFFOLD_ERROR_2}");
}
`;

function scaffoldCourse(t: Parameters<typeof makeFakeCourse>[0], scaffold = BETA_SCAFFOLD): string {
  const manifest = readFileSync(path.join(makeFakeCourse(t), "chapters/02-beta/chapter.yaml"), "utf8").replace(
    "  - from: beta.ts\n",
    "  - scaffold: beta.scaffold.ts\n",
  );
  return makeFakeCourse(t, { overrides: { "chapters/02-beta/chapter.yaml": manifest, "chapters/02-beta/beta.scaffold.ts": scaffold } });
}

test("a chapter with a scaffold: practice writes the starter derived from the target's reference and scaffold, over the teaching file and as reset's copy", async (t) => {
  const repo = scaffoldCourse(t);
  const dest = path.join(path.dirname(repo), "derived");
  await createPractice({ repo, id: "02", dest });
  assert.equal(readFileSync(path.join(dest, "packages/pi-course/src/beta.ts"), "utf8"), STARTER_BETA);
  assert.equal(readFileSync(path.join(dest, ".pi-course/starter/packages/pi-course/src/beta.ts"), "utf8"), STARTER_BETA);
  assert.equal(existsSync(path.join(dest, "chapters/02-beta/beta.scaffold.ts")), false, "the scaffold is the chapter's, not the learner's");
  assert.equal(existsSync(path.join(dest, "node_modules")), false, "without --link-modules the folder has no modules (the learner runs npm install)");
});

test("a derived starter carrying reference code is LEAK_DETECTED naming the scaffold's line, and nothing is written", async (t) => {
  const pasted = "  // 参考：const unique = [...new Set(names)].sort();";
  const scaffold = BETA_SCAFFOLD.replace("  void alpha;", `${pasted}\n  void alpha;`);
  const repo = scaffoldCourse(t, scaffold);
  const dest = path.join(path.dirname(repo), "leaky-scaffold");
  const line = scaffold.split("\n").indexOf(pasted) + 1;
  await assert.rejects(createPractice({ repo, id: "02", dest }), (e: unknown) => {
    assert.ok(isCode("LEAK_DETECTED")(e));
    assert.match(
      (e as Error).message,
      new RegExp(`chapters/02-beta/beta\\.scaffold\\.ts:${line} 的注释含有 packages/pi-course/src/beta\\.ts 参考实现函数体中的代码`),
    );
    return true;
  });
  assert.equal(existsSync(dest), false);
  assert.deepEqual(leftovers(path.dirname(repo)), []);
});
