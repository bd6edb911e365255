/**
 * `verify/record.ts` and its steps (`steps.ts`): the acceptance record end to end on a
 * synthetic chapter, and partial records.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import test from "node:test";
import { runVerify, selectSteps, type VerifyReport } from "../../src/verify/record.js";
import { sameFolder, VERIFY_STEPS } from "../../src/verify/steps.js";
import { CHAPTER_TEXT_BETA, makeFakeCourse, sh, STARTER_BETA } from "../support/fake-course.js";

function failing(report: VerifyReport): string[] {
  return report.checks.filter((c) => !c.ok).map((c) => c.name);
}

test("verify end to end on a synthetic chapter: a fault its test cannot see fails exactly that line, every other line passes", async (t) => {
  const repo = makeFakeCourse(t, { linkModules: true });
  const steps: string[] = [];
  const ended: string[] = [];
  const report = await runVerify({
    repo,
    id: "02",
    onStep: (index, total, title) => steps.push(`[${index}/${total}] ${title}`),
    onStepDone: (index, total, title, seconds) => {
      assert.ok(steps.includes(`[${index}/${total}] ${title}`), `${title} ends after it starts`);
      assert.ok(Number.isFinite(seconds) && seconds >= 0, `${title} takes ${seconds} s`);
      ended.push(`[${index}/${total}] ${title}`);
    },
  });
  // Steps overlap (two at a time by default): each starts once, the history first, then the text replay (the longest),
  // and the checks come in record order.
  assert.equal(steps[0], "[1/12] history");
  assert.equal(steps[1], "[7/12] chapter text", "the text replay, the longest step, starts as soon as the history is made");
  assert.deepEqual([...steps].sort((a, b) => Number(/\d+/.exec(a)![0]) - Number(/\d+/.exec(b)![0])).at(-1), "[12/12] through chapter 02");
  assert.equal(new Set(steps).size, 12);
  assert.deepEqual([...ended].sort(), [...steps].sort(), "every step that starts ends once");
  assert.deepEqual(
    report.checks.map((c) => c.name),
    [
      "history",
      "lab addresses",
      "parent",
      "fresh build",
      "public surface",
      "hint signatures",
      "first red",
      "staged first red: Lab 2.1",
      "staged first red: Lab 2.2",
      "chapter text",
      "leak audit",
      "Lab 2.1 (reference)",
      "Lab 2.2 (reference)",
      "fault catalog",
      "fault 2.1-no-sort",
      "fault 2.2-no-join",
      "fault 2.1-no-sort:learner",
      "chapter total",
      "through chapter 02",
    ],
  );
  // betaRender(["a"]) joins a single item: `join("")` and `join(" | ")` agree, so the
  // documented fault survives and the record fails on that line alone.
  assert.deepEqual(failing(report), ["fault 2.2-no-join"]);
  assert.equal(report.ok, false);
  assert.equal(sh(repo, ["branch", "--list", "course/build-your-own-pi"]), "", "a failing record leaves the teaching branch alone");
  assert.match(report.checks[0]!.detail, /^parent [0-9a-f]{12} -> target [0-9a-f]{12}, layer = chapter files only/);
  assert.equal(report.checks[1]!.detail, "2 labs: every declaration, section, test, banner and fault named right");
  assert.match(report.checks[2]!.detail, /^all pass \(\d+ tests in \d+ files, \d+ process(?:es)?; chapters 01\)$/, "the parent holds chapter 01 only");
  assert.match(report.checks.find((c) => c.name === "fault 2.1-no-sort")!.detail, /^killed by “Lab 2\.1 · catalog is sorted”; restored: Lab 2\.1 2\/2$/);
  assert.equal(report.checks.find((c) => c.name === "chapter total")!.detail, "3/3");
  assert.match(report.checks.at(-1)!.detail, /^all pass \(5 tests in 3 files, \d+ process(?:es)?; chapters 01 02\)$/);
  const detail = (name: string) => report.checks.find((c) => c.name === name)!.detail;
  assert.equal(detail("staged first red: Lab 2.1"), `starter → Lab 2.1 0/2 "Lab 2.1 beta catalog 尚未实现"`);
  assert.equal(detail("staged first red: Lab 2.2"), `reference for Lab 2.1 2/2 → Lab 2.2 0/1 "Lab 2.2 beta render 尚未实现"`);
  assert.match(
    detail("chapter text"),
    /^chapters\/02-beta\/README\.md: 0 commands replayed .*labs table matches the manifest; exercise line matches the fault it injects$/,
  );
  assert.match(detail("history"), /verified: HEAD [0-9a-f]{12}\)$/);
  assert.equal(detail("leak audit"), "pass; a reference line pasted into the starter is caught");
  assert.equal(sh(repo, ["branch", "--list", "course/*"]), "", "verify only reads the repository: the teaching branch is made in its clone");
});

test("a partial record runs the steps asked for and the steps they need, in record order", () => {
  assert.deepEqual(
    selectSteps(["chapter total"]).map((s) => s.title),
    ["history", "fresh build", "public surface", "reference labs", "chapter total"],
  );
  assert.deepEqual(
    selectSteps(["parent"]).map((s) => s.title),
    ["history", "parent"],
  );
  assert.equal(selectSteps(undefined).length, selectSteps(selectSteps(undefined).map((s) => s.title)).length);
  assert.throws(() => selectSteps(["nope"]), { code: "USAGE" });
});

test("steps that work in one scratch folder never overlap; the text replay, the parent and the through-chapter tree run beside them", () => {
  const step = (title: string) => VERIFY_STEPS.find((s) => s.title === title)!;
  const pairs: [string, string, boolean][] = [
    ["fresh build", "first red", true],
    ["public surface", "first red", true],
    ["first red", "staged first red", true],
    ["reference labs", "faults", true],
    ["public surface", "faults", true],
    ["chapter text", "faults", false],
    ["chapter text", "staged first red", false],
    ["parent", "through chapter", false],
    ["leak audit", "first red", false],
  ];
  for (const [a, b, expected] of pairs) {
    assert.equal(sameFolder(step(a), step(b)), expected, `${a} / ${b}`);
    assert.equal(sameFolder(step(b), step(a)), expected, `${b} / ${a}`);
  }
});

// One synthetic course and one partial record for two behaviours: the working tree is what is checked, and a parent
// that needs a file of a later chapter fails the parent line.
test("verify end to end checks the working tree: an uncommitted starter whose surface differs and an uncommitted drift in the chapter text fail their lines; a parent that needs a file of a later chapter fails the parent line; the rest passes", async (t) => {
  // Chapter 01's test imports a chapter-02 file: at chapter 02's parent that file is absent (committed, so not one of the uncommitted changes).
  const repo = makeFakeCourse(t, {
    linkModules: true,
    overrides: { "packages/pi-course/test/01-alpha.test.ts": 'import { betaRender } from "../src/beta.js";\nvoid betaRender;\n' },
  });
  const manifestPath = path.join(repo, "chapters/02-beta/chapter.yaml");
  const manifest = readFileSync(manifestPath, "utf8").replace(
    `find: 'join(" | ")'\n        replace: 'join("")'`,
    `find: 'join(" | ")'\n        replace: 'join(" + ")'`,
  );
  writeFileSync(manifestPath, manifest);
  writeFileSync(
    path.join(repo, "chapters/02-beta/beta.ts"),
    STARTER_BETA.replace("export function betaRender(names: readonly string[])", "export function betaRender(names: string[])"),
  );
  writeFileSync(
    path.join(repo, "packages/pi-course/test/02-beta.test.ts"),
    readFileSync(path.join(repo, "packages/pi-course/test/02-beta.test.ts"), "utf8").replace(
      'betaRender(["a"]), "alpha:a"',
      'betaRender(["a", "b"]), "alpha:a | alpha:b"',
    ),
  );
  // One number of the chapter text changed: the acceptance record now claims 3/2.
  writeFileSync(path.join(repo, "chapters/02-beta/README.md"), CHAPTER_TEXT_BETA.replace("Lab 2.1: 2/2", "Lab 2.1: 3/2"));
  const line = CHAPTER_TEXT_BETA.split("\n").indexOf("Lab 2.1: 2/2") + 1;
  // Nothing is committed: the authors' workflow (docs/adding-a-chapter.md) runs verify before the commit.

  // A partial record: the steps these three lines need, not the whole record.
  const report = await runVerify({ repo, id: "02", only: ["parent", "public surface", "chapter text"] });
  assert.deepEqual(
    report.checks.map((c) => c.name),
    ["history", "lab addresses", "parent", "fresh build", "public surface", "hint signatures", "chapter text"],
  );
  assert.deepEqual(failing(report), ["parent", "public surface", "chapter text"]);
  assert.match(report.checks.find((c) => c.name === "parent")!.detail, /无法编译.*beta/);
  assert.equal(report.ok, false);
  assert.match(report.checks.find((c) => c.name === "public surface")!.detail, /betaRender\(names: string\[\]\)/);
  assert.match(
    report.checks.find((c) => c.name === "chapter text")!.detail,
    new RegExp(`^1 处与仓库不符：chapters/02-beta/README\\.md:${line}: Lab 2\\.1 应为 2/2，记录写的是 3/2$`),
  );
  assert.match(report.checks[0]!.detail, /verified: working tree = HEAD [0-9a-f]{12} \+ 4 uncommitted changes/);
});

// What practice's refusal says (a hint, a test, the compiled tooling, a starter's comment) is practice/folder.test.ts's;
// here, that the record fails its fresh build and leak audit lines on it and runs the checks that do not need the folder.
test("verify end to end: a hint quoting the reference is a leak; practice refuses the folder and both lines say so", async (t) => {
  const repo = makeFakeCourse(t, { linkModules: true });
  const manifestPath = path.join(repo, "chapters/02-beta/chapter.yaml");
  writeFileSync(
    manifestPath,
    readFileSync(manifestPath, "utf8").replace("先去重再排序, 用 Set]", '先去重再排序, "const unique = [...new Set(names)].sort();"]'),
  );
  sh(repo, ["commit", "-q", "-am", "a hint that gives the answer away"]);

  const report = await runVerify({ repo, id: "02", only: ["public surface", "leak audit", "through chapter"] });
  assert.deepEqual(failing(report), ["fresh build", "public surface", "leak audit"]);
  assert.match(
    report.checks.find((c) => c.name === "leak audit")!.detail,
    /chapters\/02-beta\/chapter\.yaml.*const unique = \[\.\.\.new Set\(names\)\]\.sort\(\);/,
  );
  assert.equal(report.checks.find((c) => c.name === "through chapter 02")?.ok, true, "independent checks still run");
});
