/**
 * `verify`: the check functions on synthetic test results, the staged teaching texts, the
 * working-tree snapshot, and the whole record end to end on the synthetic course of
 * `support/fake-course.ts` (whose chapter 02 documents a fault its test cannot see, so the
 * record must fail on exactly that line). The chapter-text replay has its own file
 * (`chapter-text.test.ts`). The real chapter's record is CI's last step (`.ci/run`), not a
 * unit test.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { parseCommand } from "../cli.js";
import { describeSource, evaluateChapterTotal, evaluateFirstRed, evaluateReferenceLabs, firstDeclarationDifference, throughChapterFiles } from "../lib/verify/evaluate.js";
import type { TestRecord } from "../lib/testing/results.js";
import { parseManifest } from "../lib/course/manifest.js";
import { runVerify, selectSteps, type VerifyReport } from "../lib/verify/record.js";
import { cloneWorkingTree } from "../lib/verify/snapshot.js";
import { evaluateStagedRed, stagedTeachingText } from "../lib/verify/staged.js";
import { CHAPTER_TEXT_BETA, makeFakeCourse, sh, STARTER_BETA } from "./support/fake-course.js";


const MANIFEST = parseManifest(
  `format: 1
id: "12"
title: t
files: [packages/pi-course/src/r.ts, packages/pi-course/test/12-r.test.ts, checkpoints/12.yaml]
focusedTests: [packages/pi-course/test/12-r.test.ts]
labs:
  - { id: "12.1", title: a, tests: 2, scaffoldError: "Lab 12.1 catalog 尚未实现", hints: [a, b, c, d] }
  - { id: "12.2", title: b, tests: 1, scaffoldError: "Lab 12.2 activation 尚未实现", hints: [a, b, c, d] }
`,
  "checkpoints/12.yaml",
);

function record(name: string, ok: boolean, message?: string): TestRecord {
  return { ok, path: [name], skip: false, todo: false, ...(message !== undefined ? { error: { message, failureType: "testCodeFailure" } } : {}) };
}

const STARTER_RUN: TestRecord[] = [
  record("Lab 12.1 · a", false, "Lab 12.1 catalog 尚未实现"),
  record("Lab 12.1 · b", false, "Lab 12.1 catalog 尚未实现"),
  // A later lab may be blocked by an earlier lab's scaffold error.
  record("Lab 12.2 · c", false, "Lab 12.1 catalog 尚未实现"),
];

test("first red: every lab 0/N on a scaffold error, the first lab on exactly its own", () => {
  const ok = evaluateFirstRed(MANIFEST, { records: STARTER_RUN, crashes: [] });
  assert.equal(ok.ok, true, ok.detail);
  assert.match(ok.detail, /^Lab 12\.1 0\/2 "Lab 12\.1 catalog 尚未实现"; Lab 12\.2 0\/1/);

  const variants: [string, TestRecord[], Partial<{ crashes: { file: string; code: number; stderr: string }[] }>][] = [
    ["a test passes against the starter", [record("Lab 12.1 · a", true), ...STARTER_RUN.slice(1)], {}],
    ["an ordinary failure", [STARTER_RUN[0]!, STARTER_RUN[1]!, record("Lab 12.2 · c", false, "Cannot read properties of undefined")], {}],
    ["the first lab on another lab's scaffold error", [record("Lab 12.1 · a", false, "Lab 12.2 activation 尚未实现"), ...STARTER_RUN.slice(1)], {}],
    ["the first lab's message with extra text", [record("Lab 12.1 · a", false, "Error: Lab 12.1 catalog 尚未实现 (wrapped)"), ...STARTER_RUN.slice(1)], {}],
    ["a lab with fewer tests than the manifest", STARTER_RUN.slice(1), {}],
    ["a crashed test file", STARTER_RUN, { crashes: [{ file: "x.test.js", code: 1, stderr: "SyntaxError" }] }],
  ];
  for (const [label, records, extra] of variants) {
    assert.equal(evaluateFirstRed(MANIFEST, { records, crashes: extra.crashes ?? [] }).ok, false, label);
  }
});

test("reference labs and the chapter total are green only at N/N with the manifest's counts", () => {
  const green = [record("Lab 12.1 · a", true), record("Lab 12.1 · b", true), record("Lab 12.2 · c", true)];
  assert.deepEqual(
    evaluateReferenceLabs(MANIFEST, { records: green, crashes: [] }).map((c) => [c.name, c.ok, c.detail]),
    [
      ["Lab 12.1 (reference)", true, "2/2"],
      ["Lab 12.2 (reference)", true, "1/1"],
    ],
  );
  assert.deepEqual(evaluateChapterTotal(MANIFEST, { records: green, crashes: [] }), { name: "chapter total", ok: true, detail: "3/3" });

  const red = [green[0]!, record("Lab 12.1 · b", false, "expected 2"), green[2]!];
  assert.deepEqual(evaluateReferenceLabs(MANIFEST, { records: red, crashes: [] }).map((c) => c.ok), [false, true]);
  assert.equal(evaluateChapterTotal(MANIFEST, { records: red, crashes: [] }).ok, false);
  const extra = [...green, record("Lab 12.2 · d", true)];
  assert.equal(evaluateChapterTotal(MANIFEST, { records: extra, crashes: [] }).ok, false, "more tests than the labs add up to");
  assert.equal(evaluateReferenceLabs(MANIFEST, { records: extra, crashes: [] })[1]?.ok, false);
});

test("through chapter NN selects NN-*.test.js of chapters up to NN only", () => {
  const names = ["03-messages.test.js", "12-resources-hardening.test.js", "12-resources-extensions.test.js", "13-runtime.test.js", "helpers.js", "12-x.test.js.map"];
  assert.deepEqual(throughChapterFiles(names, "12"), ["03-messages.test.js", "12-resources-extensions.test.js", "12-resources-hardening.test.js"]);
  assert.deepEqual(throughChapterFiles(names, "03"), ["03-messages.test.js"]);
});

test("declarations are compared line by line, ignoring blank lines and trailing spaces", () => {
  assert.equal(firstDeclarationDifference("export declare function a(): void;  \n\n", "export declare function a(): void;\n"), undefined);
  assert.match(firstDeclarationDifference("export declare function a(): void;\n", "export declare function a(x: string): void;\n") ?? "", /第 1 行/);
  assert.match(firstDeclarationDifference("a;\n", "a;\nb;\n") ?? "", /第 2 行：starter「（没有）」/);
});

test("command line: one chapter, --json, --help; usage errors", () => {
  assert.deepEqual(parseCommand("verify", ["12", "--json"]), { help: false, chapter: "12", json: true });
  assert.deepEqual(parseCommand("verify", ["12", "--only", "chapter text", "--only", "leak audit"]), { help: false, chapter: "12", json: false, only: ["chapter text", "leak audit"] });
  assert.throws(() => parseCommand("verify", ["12", "--only", "nope"]), { code: "USAGE" }, "an unknown step is refused before any work");
  assert.equal(parseCommand("verify", ["3"]).chapter, "03");
  assert.equal(parseCommand("verify", ["-h"]).help, true);
  for (const argv of [[], ["12", "13"], ["abc"], ["12", "--all"], ["12", "--source", "nonexist"]]) assert.throws(() => parseCommand("verify", argv), { code: "USAGE" }, argv.join(" "));
});

// ---------------------------------------------------------------------------
// Staged first red: the teaching file after the labs before k, and the check on its run
// ---------------------------------------------------------------------------

const STAGED_STARTER = `import { a } from "./a.js";

export function first(): string {
  // 🔨 Lab 12.1：first
  throw todo("Lab 12.1 catalog");
}

export function second(): string {
  // 🔨 Lab 12.2：second
  throw todo("Lab 12.2 activation");
}

/** Only the starter has it. */
function todo(lab: string): Error {
  return new Error(lab + " 尚未实现");
}
`;

const STAGED_REFERENCE = `import { b } from "./b.js";

export function first(): string {
  return a() + "first answer";
}

function joinAll(): string {
  return b() + "second helper";
}

export function second(): string {
  return joinAll();
}
`;

test("staged teaching text: the starter, the reference, and in between the reference with later labs put back from the starter", () => {
  const input = { file: "src/r.ts", starter: STAGED_STARTER, reference: STAGED_REFERENCE, labIds: ["12.1", "12.2"] };
  assert.equal(stagedTeachingText({ ...input, done: 0 }).text, STAGED_STARTER);
  assert.equal(stagedTeachingText({ ...input, done: 2 }).text, STAGED_REFERENCE);

  const staged = stagedTeachingText({ ...input, done: 1 });
  assert.deepEqual(staged.fromStarter, ["second", "todo"]);
  assert.ok(staged.text.includes('return a() + "first answer";'), "Lab 12.1 comes from the reference");
  assert.ok(staged.text.includes('throw todo("Lab 12.2 activation");'), "Lab 12.2 comes from the starter");
  assert.ok(!staged.text.includes("return joinAll();"), "the reference's Lab 12.2 body is gone");
  assert.ok(staged.text.includes('') && staged.text.includes("function joinAll"), "the reference's imports and helpers stay");
  assert.ok(staged.text.includes("function todo(lab: string)"), "the starter-only helper its stubs call is added");

  const ambiguous = STAGED_STARTER.replace("// 🔨 Lab 12.1：first", "// 🔨 Lab 12.1：first\n  // 🔨 Lab 12.2：and more");
  assert.throws(() => stagedTeachingText({ ...input, starter: ambiguous, done: 1 }), { code: "LAB_OWNERSHIP_AMBIGUOUS" });
});

test("staged first red: earlier labs green and lab k 0/N on exactly its own scaffold error", () => {
  const green = [record("Lab 12.1 · a", true), record("Lab 12.1 · b", true)];
  const ok = evaluateStagedRed(MANIFEST, 1, { records: [...green, record("Lab 12.2 · c", false, "Lab 12.2 activation 尚未实现")], crashes: [] });
  assert.deepEqual(ok, { name: "staged first red: Lab 12.2", ok: true, detail: 'reference for Lab 12.1 2/2 → Lab 12.2 0/1 "Lab 12.2 activation 尚未实现"' });
  const first = evaluateStagedRed(MANIFEST, 0, { records: STARTER_RUN, crashes: [] });
  assert.equal(first.ok, true, first.detail);
  assert.match(first.detail, /^starter → Lab 12\.1 0\/2/);

  const variants: [string, TestRecord[], { file: string; code: number; stderr: string }[]][] = [
    ["an earlier lab is red", [green[0]!, record("Lab 12.1 · b", false, "expected 2"), record("Lab 12.2 · c", false, "Lab 12.2 activation 尚未实现")], []],
    ["lab k fails on an earlier lab's scaffold error", [...green, record("Lab 12.2 · c", false, "Lab 12.1 catalog 尚未实现")], []],
    ["lab k fails on an ordinary error", [...green, record("Lab 12.2 · c", false, "Expected values to be strictly deep-equal:")], []],
    ["lab k passes before it is written", [...green, record("Lab 12.2 · c", true)], []],
    ["lab k has fewer tests than the manifest", green, []],
    ["a crashed test file", [...green, record("Lab 12.2 · c", false, "Lab 12.2 activation 尚未实现")], [{ file: "x.test.js", code: 1, stderr: "SyntaxError" }]],
  ];
  for (const [label, records, crashes] of variants) {
    const check = evaluateStagedRed(MANIFEST, 1, { records, crashes });
    assert.equal(check.ok, false, label);
  }
  assert.match(
    evaluateStagedRed(MANIFEST, 1, { records: variants[1]![1], crashes: [] }).detail,
    /Lab 12\.2 应恰好以自己的施工位错误 “Lab 12\.2 activation 尚未实现” 失败，实际：“Lab 12\.1 catalog 尚未实现”/,
  );
});

// ---------------------------------------------------------------------------
// What verify checks: the working tree
// ---------------------------------------------------------------------------

test("the verified source is the working tree as `git add -A` sees it, and the repository is left untouched", async (t) => {
  const repo = makeFakeCourse(t);
  const scratch = mkdtempSync(path.join(os.tmpdir(), "pi-course-snapshot-"));
  t.after(() => rmSync(scratch, { recursive: true, force: true }));
  const head = sh(repo, ["rev-parse", "HEAD"]);

  const clean = await cloneWorkingTree(repo, path.join(scratch, "clean"));
  assert.deepEqual({ commit: clean.commit, head: clean.head, changed: clean.changed }, { commit: head, head, changed: [] });
  assert.equal(describeSource(clean), `HEAD ${head.slice(0, 12)}`);

  writeFileSync(path.join(repo, "LEARNING.md"), "changed, not committed\n");
  writeFileSync(path.join(repo, "notes.md"), "a new file, never added\n");
  rmSync(path.join(repo, "starters/02-beta.ts"));
  writeFileSync(path.join(repo, "build.tsbuildinfo"), "ignored by .gitignore\n");
  const untouched = () => ({
    status: sh(repo, ["status", "--porcelain"]),
    index: readFileSync(path.join(repo, ".git", "index")).toString("base64"),
    refs: sh(repo, ["for-each-ref"]),
    head: sh(repo, ["rev-parse", "HEAD"]),
  });
  const before = untouched();

  const snapshot = await cloneWorkingTree(repo, path.join(scratch, "dirty"));
  assert.equal(snapshot.head, head);
  assert.notEqual(snapshot.commit, head);
  assert.deepEqual(snapshot.changed, ["LEARNING.md", "notes.md", "starters/02-beta.ts"]);
  assert.equal(sh(snapshot.clone, ["rev-parse", "main"]), snapshot.commit);
  assert.equal(sh(snapshot.clone, ["show", "main:LEARNING.md"]), "changed, not committed");
  assert.equal(readFileSync(path.join(snapshot.clone, "notes.md"), "utf8"), "a new file, never added\n", "checked out in the clone");
  assert.equal(sh(snapshot.clone, ["ls-tree", "--name-only", "main", "build.tsbuildinfo"]), "", "ignored files stay out");
  assert.match(describeSource(snapshot), /^working tree = HEAD [0-9a-f]{12} \+ 3 uncommitted changes: LEARNING\.md, notes\.md, starters\/02-beta\.ts$/);

  assert.deepEqual(untouched(), before, "status, index, refs and HEAD of the repository are unchanged");
  assert.throws(() => sh(repo, ["cat-file", "-e", snapshot.commit]), "the snapshot's objects live in the clone only");
});

function failing(report: VerifyReport): string[] {
  return report.checks.filter((c) => !c.ok).map((c) => c.name);
}

test("verify end to end on a synthetic chapter: a fault its test cannot see fails exactly that line, every other line passes", async (t) => {
  const repo = makeFakeCourse(t, { linkModules: true });
  const steps: string[] = [];
  const report = await runVerify({ repo, id: "02", onStep: (index, total, title) => steps.push(`[${index}/${total}] ${title}`) });
  assert.deepEqual(steps.slice(0, 3), ["[1/12] history", "[2/12] parent", "[3/12] fresh build"]);
  assert.equal(steps.at(-1), "[12/12] through chapter 02");
  assert.deepEqual(
    report.checks.map((c) => c.name),
    [
      "history",
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
  assert.match(report.checks[1]!.detail, /^all pass \(\d+ tests in \d+ files; chapters 01\)$/, "the parent holds chapter 01 only");
  assert.match(report.checks.find((c) => c.name === "fault 2.1-no-sort")!.detail, /^killed by “Lab 2\.1 · catalog is sorted”; restored: Lab 2\.1 2\/2$/);
  assert.equal(report.checks.find((c) => c.name === "chapter total")!.detail, "3/3");
  assert.match(report.checks.at(-1)!.detail, /^all pass \(5 tests in 3 files; chapters 01 02\)$/);
  const detail = (name: string) => report.checks.find((c) => c.name === name)!.detail;
  assert.equal(detail("staged first red: Lab 2.1"), `starter → Lab 2.1 0/2 "Lab 2.1 beta catalog 尚未实现"`);
  assert.equal(detail("staged first red: Lab 2.2"), `reference for Lab 2.1 2/2 → Lab 2.2 0/1 "Lab 2.2 beta render 尚未实现"`);
  assert.match(detail("chapter text"), /^chapters\/02-beta\.md: 0 commands replayed .*labs table matches the manifest; exercise line matches the fault it injects$/);
  assert.match(detail("history"), /verified: HEAD [0-9a-f]{12}\)$/);
  assert.equal(sh(repo, ["branch", "--list", "course/*"]), "", "verify only reads the repository: the teaching branch is made in its clone");
});

test("a partial record runs the steps asked for and the steps they need, in record order", () => {
  assert.deepEqual(selectSteps(["chapter total"]).map((s) => s.title), ["history", "fresh build", "public surface", "reference labs", "chapter total"]);
  assert.deepEqual(selectSteps(["parent"]).map((s) => s.title), ["history", "parent"]);
  assert.equal(selectSteps(undefined).length, selectSteps(selectSteps(undefined).map((s) => s.title)).length);
  assert.throws(() => selectSteps(["nope"]), { code: "USAGE" });
});

test("verify end to end checks the working tree: an uncommitted starter whose surface differs and an uncommitted drift in the chapter text fail their lines; the rest passes", async (t) => {
  const repo = makeFakeCourse(t, { linkModules: true });
  const manifestPath = path.join(repo, "checkpoints/02.yaml");
  const manifest = readFileSync(manifestPath, "utf8").replace(`find: 'join(" | ")'\n    replace: 'join("")'`, `find: 'join(" | ")'\n    replace: 'join(" + ")'`);
  writeFileSync(manifestPath, manifest);
  writeFileSync(path.join(repo, "starters/02-beta.ts"), STARTER_BETA.replace("export function betaRender(names: readonly string[])", "export function betaRender(names: string[])"));
  writeFileSync(
    path.join(repo, "packages/pi-course/test/02-beta.test.ts"),
    readFileSync(path.join(repo, "packages/pi-course/test/02-beta.test.ts"), "utf8").replace('betaRender(["a"]), "alpha:a"', 'betaRender(["a", "b"]), "alpha:a | alpha:b"'),
  );
  // One number of the chapter text changed: the acceptance record now claims 3/2.
  writeFileSync(path.join(repo, "chapters/02-beta.md"), CHAPTER_TEXT_BETA.replace("Lab 2.1: 2/2", "Lab 2.1: 3/2"));
  const line = CHAPTER_TEXT_BETA.split("\n").indexOf("Lab 2.1: 2/2") + 1;
  // Nothing is committed: README's workflow runs verify before the commit.

  // A partial record: the steps these two lines need, not the whole record.
  const report = await runVerify({ repo, id: "02", only: ["public surface", "chapter text"] });
  assert.deepEqual(report.checks.map((c) => c.name), ["history", "fresh build", "public surface", "hint signatures", "chapter text"]);
  assert.deepEqual(failing(report), ["public surface", "chapter text"]);
  assert.match(report.checks.find((c) => c.name === "public surface")!.detail, /betaRender\(names: string\[\]\)/);
  assert.match(report.checks.find((c) => c.name === "chapter text")!.detail, new RegExp(`^1 处与仓库不符：chapters/02-beta\\.md:${line}: Lab 2\\.1 应为 2/2，记录写的是 3/2$`));
  assert.match(report.checks[0]!.detail, /verified: working tree = HEAD [0-9a-f]{12} \+ 4 uncommitted changes/);
});

test("verify end to end: a hint quoting the reference is a leak; practice refuses the folder and both lines say so", async (t) => {
  const repo = makeFakeCourse(t, { linkModules: true });
  const manifestPath = path.join(repo, "checkpoints/02.yaml");
  writeFileSync(manifestPath, readFileSync(manifestPath, "utf8").replace("先去重再排序, 用 Set]", "先去重再排序, \"const unique = [...new Set(names)].sort();\"]"));
  sh(repo, ["commit", "-q", "-am", "a hint that gives the answer away"]);

  const report = await runVerify({ repo, id: "02", only: ["public surface", "leak audit", "through chapter"] });
  assert.deepEqual(failing(report), ["fresh build", "public surface", "leak audit"]);
  assert.match(report.checks.find((c) => c.name === "leak audit")!.detail, /checkpoints\/02\.yaml.*const unique = \[\.\.\.new Set\(names\)\]\.sort\(\);/);
  assert.equal(report.checks.find((c) => c.name === "through chapter 02")?.ok, true, "independent checks still run");
});

test("verify: a starter carrying reference code in a comment fails fresh build and leak audit, naming the starter's line", async (t) => {
  const repo = makeFakeCourse(t, { linkModules: true });
  const starter = STARTER_BETA.replace("  void alpha;", "  // 参考：const unique = [...new Set(names)].sort();\n  void alpha;");
  writeFileSync(path.join(repo, "starters/02-beta.ts"), starter);
  sh(repo, ["commit", "-q", "-am", "a starter that gives the answer away in a comment"]);
  const line = starter.split("\n").findIndex((l) => l.includes("参考")) + 1;

  const report = await runVerify({ repo, id: "02", only: ["leak audit"] });
  assert.deepEqual(failing(report), ["fresh build", "leak audit"]);
  assert.match(report.checks.find((c) => c.name === "leak audit")!.detail, new RegExp(`starters/02-beta\\.ts:${line} 的注释含有.*const unique = \\[\\.\\.\\.new Set\\(names\\)\\]\\.sort\\(\\);`));
});

test("verify: a parent that needs a file of a later chapter fails the parent line", async (t) => {
  // Chapter 01's test imports a chapter-02 file: at chapter 02's parent that file is absent.
  const repo = makeFakeCourse(t, {
    linkModules: true,
    overrides: { "packages/pi-course/test/01-alpha.test.ts": 'import { betaRender } from "../src/beta.js";\nvoid betaRender;\n' },
  });
  const report = await runVerify({ repo, id: "02", only: ["parent"] });
  const parent = report.checks.find((c) => c.name === "parent")!;
  assert.equal(parent.ok, false);
  assert.match(parent.detail, /无法编译.*beta/);
  assert.equal(report.ok, false);
});
