// test-process: shared
/**
 * `lab/compare.ts` (`lab NN.L --compare`): once the lab is green, the learner's declarations
 * and then the reference's, read from the course repository at the target commit the folder
 * records, never written into the folder; refused before green, outside a practice folder and
 * when the course repository or the commit cannot be reached.
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import test from "node:test";
import { PRACTICE_MARKER } from "../../src/core/paths.js";
import { loadManifest } from "../../src/course/manifest.js";
import { referenceSource } from "../../src/lab/compare.js";
import { sh, tempDir } from "../support/fake-course.js";
import { fingerprint } from "../support/folders.js";
import { createMiniCourse, miniSource, removeMiniCourse, runInPackage } from "../support/lab-fixture.js";

const TEACHING = "packages/pi-course/src/mini.ts";

/** The learner's file: Lab 99.1 done their own way (`b + a`), Lab 99.2 still the starter. */
const LEARNER = miniSource("starter").replace(
  /(\/\/ 🔨 Lab 99\.1：[^\n]*\n)[\s\S]*?throw labError\("Lab 99\.1 mini add"\);/,
  "$1  const sum = b + a;\n  return sum;",
);

/** A line only the reference has (its doc comment of `add`). */
const DOC = "/** The sum of both numbers (the reference's words). */";

/** A course repository whose one commit holds the reference of the mini chapter; returns it and the commit. */
function referenceRepo(t: test.TestContext): { course: string; target: string } {
  const course = path.join(tempDir(t, "pi-compare-course-"), "course");
  mkdirSync(path.join(course, "packages", "pi-course", "src"), { recursive: true });
  writeFileSync(path.join(course, TEACHING), `${DOC}\n${miniSource("reference")}`);
  sh(course, ["init", "-q", "-b", "main"]);
  sh(course, ["add", "-A"]);
  sh(course, ["commit", "-q", "-m", "reference"]);
  return { course, target: sh(course, ["rev-parse", "HEAD"]) };
}

/** Every file of `dir` (not node_modules, not the compiled output) that contains `text`. */
function filesContaining(dir: string, text: string): string[] {
  return fingerprint(dir)
    .filter((line) => !line.endsWith("/") && !line.endsWith(" link"))
    .map((line) => line.split(" ")[0]!)
    .filter((file) => !file.split(path.sep).includes("dist") && readFileSync(path.join(dir, file), "utf8").includes(text));
}

test("lab NN.L --compare, once the lab is green, shows the learner's declarations, then the reference's, writing nothing of it", async (t) => {
  const course = await createMiniCourse("starter", { practice: true });
  t.after(() => removeMiniCourse(course));
  const { course: repo, target } = referenceRepo(t);
  writeFileSync(
    path.join(course.root, ...PRACTICE_MARKER.split("/")),
    `${JSON.stringify({ chapter: "99", target, source: "s".repeat(40), course: repo, createdBy: "practice" })}\n`,
  );
  writeFileSync(path.join(course.root, TEACHING), LEARNER);

  const run = await runInPackage(course.root, "lab.ts", ["99.1", "--compare"]);
  assert.equal(run.code, 0, run.stderr);
  const [mine = "", theirs = ""] = run.stdout.split(/^── 参考实现 · .*$/m);
  assert.match(mine, /^Lab 99\.1 · 两数相加 {2}✓ 已通过 · 对照参考实现$/m);
  assert.match(mine, new RegExp(`参考实现读自课程仓库 ${repo.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} 的 target ${target.slice(0, 12)}`));
  assert.match(
    mine,
    /── 你的代码 · src\/mini\.ts ──\n\nadd · src\/mini\.ts:\d+:1\nexport function add\(a: number, b: number\): number \{\n {2}\/\/ 🔨 Lab 99\.1：返回两数之和\n {2}const sum = b \+ a;\n {2}return sum;\n\}/,
  );
  assert.doesNotMatch(mine, /greet/, "only the lab's declarations");
  assert.match(
    theirs,
    /^\n\nadd · 第 1–4 行\n\/\*\* The sum of both numbers \(the reference's words\)\. \*\/\nexport function add\(a: number, b: number\): number \{\n {2}return a \+ b;\n\}\n/,
  );
  assert.doesNotMatch(theirs, /greet|hello/, "the reference's other labs are not shown");
  assert.match(run.stdout, /下一步：Lab 99\.2 · 打招呼，运行 npm run lab -w @pi\/course -- 99\.2\n$/);
  assert.deepEqual(filesContaining(course.root, "the reference's words"), [], "nothing of the reference is in the folder");

  // Lab 99.2 is not green: refused, saying why and what to run; the reference's greet is not shown.
  const red = await runInPackage(course.root, "lab.ts", ["99.2", "--compare"]);
  assert.equal(red.code, 1);
  assert.equal(red.stdout, "");
  assert.match(red.stderr, /^错误 \[COMPARE_NOT_GREEN\] Lab 99\.2 现在还没有通过（0\/3，还没有开始）：.*npm run lab -w @pi\/course -- 99\.2/);
  assert.doesNotMatch(red.stderr, /hello/);
});

test("lab --compare says so when the course repository or the target commit cannot be reached, and refuses outside a practice folder", async (t) => {
  const course = await createMiniCourse("reference", { practice: true });
  t.after(() => removeMiniCourse(course));
  const { course: repo, target } = referenceRepo(t);
  const manifest = await loadManifest(course.root, "99");
  const marker = path.join(course.root, ...PRACTICE_MARKER.split("/"));
  const withMarker = (fields: Record<string, string>) => writeFileSync(marker, `${JSON.stringify({ chapter: "99", createdBy: "practice", ...fields })}\n`);
  // Where the reference is read from, as the command finds it before it runs anything (`referenceSource`).
  const unreachable = (why: RegExp) =>
    assert.rejects(
      referenceSource(course.root, manifest),
      (error: Error & { code?: string }) => error.code === "COMPARE_COURSE_UNREACHABLE" && why.test(error.message),
    );

  // The command says it: one coded line, nothing on stdout.
  withMarker({ target });
  const run = await runInPackage(course.root, "lab.ts", ["99.1", "--compare"]);
  assert.equal(run.code, 1, run.stdout);
  assert.match(run.stderr, /^错误 \[COMPARE_COURSE_UNREACHABLE\] [^\n]*没有记录生成这个目录的课程仓库和 target 提交[^\n]*\n$/);
  assert.equal(run.stdout, "");
  withMarker({ target, course: path.join(path.dirname(repo), "moved-away") });
  await unreachable(/课程仓库 .*moved-away 不在了/);
  const other = path.join(path.dirname(repo), "other");
  mkdirSync(other);
  sh(other, ["init", "-q"]);
  withMarker({ target, course: other, source: "c".repeat(40) });
  await unreachable(new RegExp(`里没有 target 提交 ${target.slice(0, 12)}.*npm run checkpoint -w @pi/course -- 99 --source ${"c".repeat(40)}`));
  rmSync(path.join(other, ".git"), { recursive: true, force: true });
  await unreachable(/里没有 target 提交/);

  // Reachable again: green, shown.
  withMarker({ target, course: repo });
  const ok = await runInPackage(course.root, "lab.ts", ["99.1", "--compare"]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /add · src\/mini\.ts:1:1\nexport function add[\s\S]*── 参考实现[\s\S]*\nadd · 第 1–4 行\n\/\*\* The sum/);

  // In the course repository itself: refused before anything runs.
  rmSync(marker);
  const inRepo = await runInPackage(course.root, "lab.ts", ["99.1", "--compare"]);
  assert.equal(inRepo.code, 1);
  assert.match(inRepo.stderr, /^错误 \[LAB_NEEDS_PRACTICE\] --compare 只在练习目录里使用/);
});
