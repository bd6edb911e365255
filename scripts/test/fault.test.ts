/**
 * `fault`: the catalog's rules (exact-once edits, FAULT_DRIFTED, validation, the
 * learner-safe projection), author mode on a synthetic chapter (killed, survived, a fault
 * the tests cannot see, a drifted reference, a red baseline) and learner mode on the
 * learner's own file (restored byte for byte, also after SIGINT, an uncaught exception
 * and SIGKILL between patch and restore).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { parseDocument } from "yaml";
import { parseCommand } from "../cli.js";
import { formatLearnerResult, selectFaults } from "../fault.js";
import { allKilledAndRestored, resolveKilledBy, runAuthorFaults, type FaultResult } from "../lib/testing/fault-runs.js";
import { BACKUP_DIR, recoverFaultBackup, sha256, writeBackupSync } from "../lib/practice/backup.js";
import { runLearnerFault } from "../lib/fault/learner.js";
import {
  applyFault,
  applyLearnerPatch,
  authorFaults,
  learnerFaults,
  learnerFaultsProjection,
  learnerManifestText,
  unapplyFault,
  type Fault,
} from "../lib/course/faults.js";
import { loadManifest, parseManifest, type ChapterManifest } from "../lib/course/manifest.js";
import { childHelper } from "./support/tooling.js";
import { processStart } from "../lib/core/scratch.js";
import { MINI_FAULTS, MINI_FILE, MINI_REFERENCE, MINI_STARTER, MINI_TEST, makeMiniCourse, miniManifest, repoRoot } from "./fault-fixture.js";
import { processesMentioning, waitForEntry } from "./leftover-probe.js";

const NODE_MODULES = path.join(repoRoot, "node_modules");


function manifestOf(text = miniManifest()): ChapterManifest {
  return parseManifest(text, "checkpoints/98.yaml");
}

function fault(overrides: Partial<Fault> = {}): Fault {
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

// ---------------------------------------------------------------------------
// Applying and undoing
// ---------------------------------------------------------------------------

test("a fault applies exactly once and undoes to the same text", () => {
  const patched = applyFault(MINI_REFERENCE, fault());
  assert.notEqual(patched, MINI_REFERENCE);
  assert.ok(patched.includes("return n + 2;"));
  assert.equal(unapplyFault(patched, fault()), MINI_REFERENCE);
});

test("a find that no longer occurs, or occurs twice, is FAULT_DRIFTED naming the fault", () => {
  assert.throws(() => applyFault(MINI_REFERENCE.replace("n * 2", "2 * n"), fault({ id: "98.1-gone" })), (error: Error & { code?: string }) => {
    assert.equal(error.code, "FAULT_DRIFTED");
    assert.match(error.message, /98\.1-gone/);
    assert.match(error.message, /0 次/);
    return true;
  });
  const twice = `${MINI_REFERENCE}\nfunction again(n: number) {\n  return n * 2;\n}\n`;
  assert.throws(() => applyFault(twice, fault()), { code: "FAULT_DRIFTED" });
  // Overlapping occurrences count too.
  assert.throws(() => applyFault("aaa", fault({ find: "aa", replace: "b" })), { code: "FAULT_DRIFTED" });
});

test("a replace that would occur twice after the edit cannot be undone: FAULT_INVALID", () => {
  assert.throws(() => applyFault(MINI_REFERENCE, fault({ find: "  return n * 2;", replace: "  return" })), { code: "FAULT_INVALID" });
});

test("undoing a file changed since the edit is FAULT_DRIFTED", () => {
  const patched = applyFault(MINI_REFERENCE, fault());
  assert.throws(() => unapplyFault(patched.replace("n + 2", "n - 2"), fault()), { code: "FAULT_DRIFTED" });
});

test("faults apply to a CRLF checkout of the reference and undo to the same bytes", () => {
  const crlf = MINI_REFERENCE.replace(/\n/g, "\r\n");
  const f = fault({ find: "  if (!loader.trust()) {\n    return \"skipped\";", replace: "  if (!loader.trust()) {\n    loader.load();\n    return \"skipped\";" });
  const patched = applyFault(crlf, f);
  assert.ok(patched.includes("    loader.load();\r\n"));
  assert.equal(unapplyFault(patched, f), crlf);
});

// ---------------------------------------------------------------------------
// Catalog validation and the learner-safe projection
// ---------------------------------------------------------------------------

test("the catalog is validated field by field with FAULT_INVALID", () => {
  const base = miniManifest("faults: []\n");
  const bad = (faults: unknown[]) => manifestOf(`${base.replace("faults: []\n", "")}faults: ${JSON.stringify(faults)}\n`);
  const ok = { id: "98.1-x", lab: "98.1", description: "d", find: "a", replace: "b", killedBy: ["Lab 98.1 · doubles"] };
  assert.equal(authorFaults(bad([ok]))[0]?.file, MINI_FILE, "file defaults to the only teaching file");
  const cases: [string, unknown][] = [
    ["unknown lab", { ...ok, lab: "98.9", id: "98.9-x" }],
    ["id without its lab", { ...ok, id: "other" }],
    ["duplicate id", [ok, ok]],
    ["killedBy of another lab", { ...ok, killedBy: ["Lab 98.2 · untrusted"] }],
    ["killedBy Lab 98.10 is not Lab 98.1", { ...ok, killedBy: ["Lab 98.10 · x"] }],
    ["empty killedBy", { ...ok, killedBy: [] }],
    ["find equal to replace", { ...ok, replace: "a" }],
    ["missing find", { ...ok, find: undefined }],
    ["unknown field", { ...ok, patch: "x" }],
    ["exercise without learner patch", { ...ok, exercise: true }],
    ["learner function not name(params)", { ...ok, learner: { function: "gate", before: "return", insert: "x", explain: "e" } }],
    ["learner before not a return", { ...ok, learner: { function: "gate(loader)", before: "if (x)", insert: "x", explain: "e" } }],
    ["learner with the old regex anchor", { ...ok, learner: { anchor: "^x", function: "gate(loader)", before: "return", insert: "x", explain: "e" } }],
    ["two-line description", { ...ok, description: "a\nb" }],
    ["file outside the chapter", { ...ok, file: "packages/pi-course/src/other.ts" }],
  ];
  for (const [label, entry] of cases) {
    assert.throws(() => authorFaults(bad(Array.isArray(entry) ? entry : [entry])), { code: "FAULT_INVALID" }, label);
  }
});

test("the practice copy of a manifest keeps exercise faults without reference text", () => {
  const manifest = manifestOf();
  const projection = learnerFaultsProjection(authorFaults(manifest));
  assert.deepEqual(projection.map((f) => f.id), ["98.2-load-untrusted"]);
  for (const entry of projection) {
    assert.ok(!("find" in entry) && !("replace" in entry));
  }
  const text = learnerManifestText(miniManifest(), manifest);
  for (const quote of ["find:", "replace:", "return n + 2", "loader.load();\n"]) {
    assert.ok(!text.includes(quote), `no reference edit in the practice manifest: ${quote}`);
  }
  const reparsed = parseManifest(text, "checkpoints/98.yaml");
  assert.deepEqual(reparsed.labs, manifest.labs, "everything else is kept");
  const [exercise] = learnerFaults(reparsed);
  assert.equal(exercise?.id, "98.2-load-untrusted");
  assert.equal(exercise?.learner.insert, "loader.load(); // 故意错误");
  assert.throws(() => authorFaults(reparsed), { code: "FAULT_INVALID" }, "the projection cannot be used as author data");
  // No exercise: the field disappears altogether.
  const withoutExercise = miniManifest(`faults:\n  - { id: 98.1-x, lab: "98.1", description: d, find: a, replace: b, killedBy: ["Lab 98.1 · doubles"] }\n`);
  assert.equal(parseDocument(learnerManifestText(withoutExercise, manifestOf(withoutExercise))).get("faults"), undefined);
});

test("a learner patch goes before the return it names, with the learner's indentation and parameter names", () => {
  const patch = { function: "gate(loader)", before: 'return "skipped"', insert: "loader.load(); // 故意错误", explain: "e" };
  const result = applyLearnerPatch(MINI_REFERENCE, patch);
  assert.ok(result.ok);
  assert.ok(result.text.includes('  if (!loader.trust()) {\n    loader.load(); // 故意错误\n    return "skipped";\n'));
  assert.equal(result.text.split("\n")[result.line - 1], "    loader.load(); // 故意错误");
  const crlf = applyLearnerPatch(MINI_REFERENCE.replace(/\n/g, "\r\n"), patch);
  assert.ok(crlf.ok && crlf.text.includes("    loader.load(); // 故意错误\r\n"));
  const renamed = applyLearnerPatch(MINI_REFERENCE.replace(/loader/g, "l"), patch);
  assert.ok(renamed.ok && renamed.text.includes("    l.load(); // 故意错误\n"));
  const missing = applyLearnerPatch("export function other() {}\n", patch);
  assert.ok(!missing.ok);
  assert.match(missing.reason, /gate/);
});

test("killedBy entries resolve to one test each: exact name first, else a unique prefix", () => {
  const names = ["Lab 98.1 · doubles", "Lab 98.1 · doubles negatives"];
  assert.deepEqual(resolveKilledBy({ id: "x", killedBy: ["Lab 98.1 · doubles"] }, names), ["Lab 98.1 · doubles"]);
  assert.deepEqual(resolveKilledBy({ id: "x", killedBy: ["Lab 98.1 · doubles n"] }, names), ["Lab 98.1 · doubles negatives"]);
  assert.throws(() => resolveKilledBy({ id: "x", killedBy: ["Lab 98.1 · d"] }, names), { code: "FAULT_INVALID" });
  assert.throws(() => resolveKilledBy({ id: "x", killedBy: ["Lab 98.1 · z"] }, names), { code: "FAULT_INVALID" });
});

test("command line: chapter, optional id, --all, --list, --json; usage errors", () => {
  assert.deepEqual(parseCommand("fault", ["12", "--all", "--json"]), { help: false, chapter: "12", all: true, list: false, json: true });
  assert.equal(parseCommand("fault", ["3", "03.1-x"]).id, "03.1-x");
  assert.equal(parseCommand("fault", ["--help"]).help, true);
  for (const argv of [[], ["x"], ["12", "a", "b"], ["12", "--bogus"], ["12", "a", "--all"]]) {
    assert.throws(() => parseCommand("fault", argv), { code: "USAGE" }, argv.join(" "));
  }
  const faults = [{ id: "a", exercise: false }, { id: "b", exercise: true }];
  assert.deepEqual(selectFaults(faults, { all: false }, "98").map((f) => f.id), ["b"]);
  assert.deepEqual(selectFaults(faults, { all: true }, "98").map((f) => f.id), ["a", "b"]);
  assert.throws(() => selectFaults(faults, { id: "c", all: false }, "98"), { code: "USAGE" });
  assert.throws(() => selectFaults([{ id: "a", exercise: false }], { all: false }, "98"), { code: "FAULT_NONE" });
});

test("the learner's report names the catching test, the manual edit, or what to finish first", () => {
  const manifest = manifestOf();
  const [exercise] = learnerFaults(manifest);
  const base = { fault: exercise!.id, lab: "98.2", file: MINI_FILE, caughtBy: [], restored: true };
  const killed = formatLearnerResult(
    { ...base, status: "killed", line: 14, caughtBy: ["Lab 98.2 · untrusted code is never loaded"], firstFailure: { test: "t", message: "+ actual - expected\n+   'load'" }, after: { passed: 2, total: 2 } },
    exercise!,
    manifest,
  );
  assert.match(killed, /抓住了：“Lab 98\.2 · untrusted code is never loaded”/);
  assert.match(killed, /\+   'load'/);
  assert.match(killed, /已恢复：.*逐字节相同；Lab 98\.2 2\/2/);
  assert.doesNotMatch(killed, /全绿/, "without the chapter's state, nothing is claimed about it");
  const chapterGreen = [{ id: "98.1", passed: 2, total: 2 }, { id: "98.2", passed: 2, total: 2 }];
  const killedBase = { ...base, status: "killed" as const, line: 14, caughtBy: ["Lab 98.2 · untrusted code is never loaded"], after: { passed: 2, total: 2 } };
  assert.match(formatLearnerResult({ ...killedBase, chapterAfter: chapterGreen }, exercise!, manifest), /本章全量应仍为全绿/);
  const earlierRed = formatLearnerResult({ ...killedBase, chapterAfter: [{ id: "98.1", passed: 1, total: 2 }, chapterGreen[1]!] }, exercise!, manifest);
  assert.doesNotMatch(earlierRed, /全绿/, "an earlier red lab is never called green");
  assert.match(earlierRed, /还有没通过的 Lab（Lab 98\.1 1\/2）/);
  const manual = formatLearnerResult({ ...base, status: "manual", manualReason: "有 2 个叫 gate 的函数", candidateLines: [3, 9] }, exercise!, manifest);
  assert.match(manual, /没有自动注入：有 2 个叫 gate 的函数/);
  assert.match(manual, /gate\(loader\) 里，返回 "skipped" 的 return 语句之前/);
  assert.ok(manual.includes("loader.load(); // 故意错误"));
  assert.ok(!manual.includes("已恢复"), "nothing was changed, so nothing is said to be restored");
  assert.match(formatLearnerResult({ ...base, status: "not_ready", before: { passed: 0, total: 2 } }, exercise!, manifest), /Lab 98\.2 现在是 0\/2/);
  assert.match(formatLearnerResult({ ...base, status: "survived", line: 14, after: { passed: 2, total: 2 } }, exercise!, manifest), /没有抓住/);
});

// ---------------------------------------------------------------------------
// Author mode on the mini chapter
// ---------------------------------------------------------------------------

async function runAuthor(root: string, faults?: Fault[]): Promise<FaultResult[]> {
  const manifest = await loadManifest(root, "98");
  return runAuthorFaults({ sourceRoot: root, manifest, faults: faults ?? authorFaults(manifest), nodeModules: NODE_MODULES });
}

test("author mode: every documented fault is killed by its test and restored; the repo is untouched", async (t) => {
  const root = await makeMiniCourse(t);
  const before = await readFile(path.join(root, MINI_FILE));
  const results = await runAuthor(root);
  assert.deepEqual(
    results.map((r) => [r.id, r.status, r.killedBy, r.restored, r.restoredLab]),
    [
      ["98.1-plus-two", "killed", ["Lab 98.1 · doubles negatives"], true, { passed: 2, total: 2 }],
      ["98.2-load-untrusted", "killed", ["Lab 98.2 · untrusted code is never loaded"], true, { passed: 2, total: 2 }],
    ],
  );
  assert.ok(allKilledAndRestored(results));
  assert.deepEqual(await readFile(path.join(root, MINI_FILE)), before, "the source tree is only read");
  assert.ok(!existsSync(path.join(root, "packages/pi-course/dist")), "nothing was built in the source tree");
});

test("author mode: a fault the named test cannot see survives", async (t) => {
  const root = await makeMiniCourse(t);
  const manifest = await loadManifest(root, "98");
  // `n + 2` equals `n * 2` for n = 2: the test "doubles" cannot see this mistake.
  const blind = fault({ id: "98.1-blind", killedBy: ["Lab 98.1 · doubles"] });
  // An edit with no observable effect at all: nothing can kill it.
  const invisible = fault({ id: "98.1-invisible", replace: "  return n + n;", killedBy: ["Lab 98.1 · doubles"] });
  const results = await runAuthorFaults({ sourceRoot: root, manifest, faults: [blind, invisible], nodeModules: NODE_MODULES });
  assert.deepEqual(results.map((r) => [r.id, r.status, r.restored]), [
    ["98.1-blind", "survived", true],
    ["98.1-invisible", "survived", true],
  ]);
  assert.deepEqual(results[0]?.alsoFailed, ["Lab 98.1 · doubles negatives"], "another test saw it");
  assert.deepEqual(results[1]?.alsoFailed, []);
  assert.ok(!allKilledAndRestored(results));
});

test("author mode: a test made vacuous in a copy lets its documented fault survive", async (t) => {
  const vacuous = MINI_TEST.replace("assert.equal(double(-3), -6);", "assert.ok(double(-3) !== undefined);");
  assert.notEqual(vacuous, MINI_TEST);
  const root = await makeMiniCourse(t, { test: vacuous });
  const results = await runAuthor(root);
  assert.equal(results.find((r) => r.id === "98.1-plus-two")?.status, "survived");
  assert.equal(results.find((r) => r.id === "98.2-load-untrusted")?.status, "killed");
});

test("author mode: a drifted reference is FAULT_DRIFTED before anything is built", async (t) => {
  const root = await makeMiniCourse(t, { source: MINI_REFERENCE.replace("return n * 2;", "return 2 * n;") });
  await assert.rejects(runAuthor(root), (error: Error & { code?: string }) => {
    assert.equal(error.code, "FAULT_DRIFTED");
    assert.match(error.message, /98\.1-plus-two/);
    return true;
  });
});

test("author mode: a red baseline is refused, and a fault that does not compile is an error", async (t) => {
  const red = await makeMiniCourse(t, { source: MINI_REFERENCE.replace('return "loaded";', 'return "skipped";') });
  await assert.rejects(runAuthor(red, [fault()]), { code: "FAULT_BASELINE_RED" });

  const root = await makeMiniCourse(t);
  const [result] = await runAuthor(root, [fault({ id: "98.1-typo", replace: '  return n * "2";' })]);
  assert.equal(result?.status, "error");
  assert.match(result?.detail ?? "", /编译/);
  assert.equal(result?.restored, true);
});

test("author mode: scratch folders are removed when copying the source fails and when a run fails", async (t) => {
  const scratchParent = await mkdtemp(path.join(os.tmpdir(), "pi-fault-scratch-"));
  t.after(() => rm(scratchParent, { recursive: true, force: true }));
  const root = await makeMiniCourse(t);
  const manifest = await loadManifest(root, "98");
  await rm(path.join(root, "packages/pi-course/package.json"));
  await assert.rejects(runAuthorFaults({ sourceRoot: root, manifest, faults: authorFaults(manifest), nodeModules: NODE_MODULES, scratchParent }), {
    code: "FAULT_SOURCE_MISSING",
  });
  assert.deepEqual(await readdir(scratchParent), [], "no half-copied scratch folder is left behind");

  const drifted = await makeMiniCourse(t, { source: MINI_REFERENCE.replace("return n * 2;", "return 2 * n;") });
  await assert.rejects(runAuthorFaults({ sourceRoot: drifted, manifest, faults: authorFaults(manifest), nodeModules: NODE_MODULES, scratchParent }), {
    code: "FAULT_DRIFTED",
  });
  assert.deepEqual(await readdir(scratchParent), []);
});

// ---------------------------------------------------------------------------
// Learner mode: the learner's own file, always restored
// ---------------------------------------------------------------------------

async function learnerRun(root: string, afterPatch?: () => void | Promise<void>) {
  const manifest = await loadManifest(root, "98");
  const [exercise] = learnerFaults(manifest);
  return runLearnerFault({ root, manifest, fault: exercise!, ...(afterPatch ? { afterPatch } : {}) });
}

/** A practice folder of the mini chapter whose manifest is the learner-safe projection. */
async function practiceFolder(t: Parameters<typeof makeMiniCourse>[0], source = MINI_REFERENCE) {
  const manifest = learnerManifestText(miniManifest(), manifestOf());
  return makeMiniCourse(t, { practice: true, manifest, source });
}

/** The learner's own solution: same behaviour as the reference, written differently. */
const LEARNER_SOLUTION = `export interface Loader {
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

test("learner mode: the exercise is caught by its test and the learner's file is restored byte for byte", async (t) => {
  const root = await practiceFolder(t, LEARNER_SOLUTION);
  const file = path.join(root, MINI_FILE);
  const original = await readFile(file);
  let patchedText = "";
  const result = await learnerRun(root, async () => {
    patchedText = await readFile(file, "utf8");
    assert.ok(existsSync(path.join(root, BACKUP_DIR, "state.json")), "the backup exists before the patched file is built");
  });
  assert.ok(patchedText.includes("      loader.load(); // 故意错误\n      return 'skipped';"), "inserted with the learner's indentation");
  assert.equal(result.status, "killed");
  assert.deepEqual(result.caughtBy, ["Lab 98.2 · untrusted code is never loaded"]);
  assert.equal(result.restored, true);
  assert.deepEqual(result.after, { passed: 2, total: 2 });
  assert.deepEqual(await readFile(file), original);
  assert.ok(!existsSync(path.join(root, BACKUP_DIR)), "the backup is removed after restoring");
});

test("learner mode: a one-line trust branch is turned into a block for the line, caught, and restored byte for byte", async (t) => {
  const oneLine = LEARNER_SOLUTION.replace("if (trusted !== true) {\n      return 'skipped';\n  }", "if (trusted !== true) return 'skipped';");
  const root = await practiceFolder(t, oneLine);
  const file = path.join(root, MINI_FILE);
  const before = await readFile(file);
  let patchedText = "";
  const result = await learnerRun(root, async () => void (patchedText = await readFile(file, "utf8")));
  assert.ok(patchedText.includes("  if (trusted !== true) {\n    loader.load(); // 故意错误\n    return 'skipped';\n  }\n"), patchedText);
  assert.equal(result.status, "killed");
  assert.deepEqual(await readFile(file), before);
});

test("learner mode: code the exercise cannot place changes nothing and explains the manual edit", async (t) => {
  // A correct solution whose untrusted result is one branch of ?: — there is no statement to put the line before.
  const ternary = LEARNER_SOLUTION.replace(
    /export function gate[\s\S]*$/,
    'export function gate(loader: Loader): "loaded" | "skipped" {\n  return loader.trust() !== true ? "skipped" : (loader.load(), "loaded");\n}\n',
  );
  const root = await practiceFolder(t, ternary);
  const before = await readFile(path.join(root, MINI_FILE));
  const result = await learnerRun(root);
  assert.equal(result.status, "manual");
  assert.match(result.manualReason ?? "", /条件表达式的一个分支/);
  assert.deepEqual(await readFile(path.join(root, MINI_FILE)), before);
});

test("learner mode: a lab that is not green yet is not experimented on", async (t) => {
  for (const [label, source, before] of [
    ["the starter (which has no line for the anchor either)", MINI_STARTER, { passed: 0, total: 2 }],
    ["a half-done lab", LEARNER_SOLUTION.replace("  loader.load();\n", ""), { passed: 1, total: 2 }],
  ] as const) {
    const root = await practiceFolder(t, source);
    const original = await readFile(path.join(root, MINI_FILE));
    const result = await learnerRun(root);
    assert.equal(result.status, "not_ready", label);
    assert.deepEqual(result.before, before, label);
    assert.deepEqual(await readFile(path.join(root, MINI_FILE)), original, label);
  }
});

test("learner mode: a line landing in code the tests never reach survives, and is still restored", async (t) => {
  // The real untrusted path returns a constant; the only literal return is unreachable.
  const dead = LEARNER_SOLUTION.replace("      return 'skipped';", "      return SKIPPED;").replace(
    "  loader.load();\n",
    '  if (Number.isNaN(1)) return "skipped";\n  loader.load();\n',
  ).replace("export function gate", 'const SKIPPED = "skipped";\nexport function gate');
  const root = await practiceFolder(t, dead);
  const before = await readFile(path.join(root, MINI_FILE));
  const result = await learnerRun(root);
  assert.equal(result.status, "survived");
  assert.deepEqual(result.caughtBy, []);
  assert.deepEqual(await readFile(path.join(root, MINI_FILE)), before);
});

test("learner mode: an inserted line that does not compile is reported and undone", async (t) => {
  // A catalog line that calls what the contract does not have cannot compile in any solution.
  const faults = MINI_FAULTS.replace('insert: "loader.load(); // 故意错误"', 'insert: "loader.unload(); // 故意错误"');
  const manifest = learnerManifestText(miniManifest(faults), manifestOf(miniManifest(faults)));
  const root = await makeMiniCourse(t, { practice: true, manifest, source: LEARNER_SOLUTION.replace(/loader/g, "source") });
  const before = await readFile(path.join(root, MINI_FILE));
  const result = await learnerRun(root);
  assert.equal(result.status, "build_failed");
  assert.deepEqual(await readFile(path.join(root, MINI_FILE)), before);
});

test("learner mode: an exception thrown between patch and restore still restores the file", async (t) => {
  const root = await practiceFolder(t, LEARNER_SOLUTION);
  const before = await readFile(path.join(root, MINI_FILE));
  await assert.rejects(
    learnerRun(root, () => {
      throw new Error("boom");
    }),
    /boom/,
  );
  assert.deepEqual(await readFile(path.join(root, MINI_FILE)), before);
  assert.ok(!existsSync(path.join(root, BACKUP_DIR)));
});

/** Starts the child runner; resolves once it printed PATCHED. */
function startChild(root: string, mode: "hang" | "throw" | "run", env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, [childHelper("fault"), root, "98", mode], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
  const patched = new Promise<void>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("PATCHED")) resolve();
    });
    void exited.then(() => reject(new Error(`child exited before patching: ${stderr}`)));
  });
  return { child, patched, exited, stderr: () => stderr };
}

test("learner mode: SIGKILL between patch and restore leaves a backup that the next run restores", async (t) => {
  const root = await practiceFolder(t, LEARNER_SOLUTION);
  const file = path.join(root, MINI_FILE);
  const before = await readFile(file);
  const run = startChild(root, "hang");
  await run.patched;
  run.child.kill("SIGKILL");
  assert.equal((await run.exited).signal, "SIGKILL");
  assert.notDeepEqual(await readFile(file), before, "the crash left the fault in place");
  const state = JSON.parse(await readFile(path.join(root, BACKUP_DIR, "state.json"), "utf8")) as { sha256: string };
  assert.equal(state.sha256, sha256(before));

  // The next run restores first, says so, and then does its own experiment.
  const result = await learnerRun(root);
  assert.equal(result.recovered?.kind, "restored");
  assert.equal(result.status, "killed");
  assert.deepEqual(await readFile(file), before);
  assert.ok(!existsSync(path.join(root, BACKUP_DIR)));
});

test("learner mode: SIGINT (Ctrl-C) between patch and restore restores before the process ends", async (t) => {
  const root = await practiceFolder(t, LEARNER_SOLUTION);
  const before = await readFile(path.join(root, MINI_FILE));
  const run = startChild(root, "hang");
  await run.patched;
  run.child.kill("SIGINT");
  const exit = await run.exited;
  assert.equal(exit.signal, "SIGINT", `ended by the signal (${JSON.stringify(exit)}): ${run.stderr()}`);
  assert.match(run.stderr(), /已中断：packages\/pi-course\/src\/mini\.ts 已逐字节恢复成实验前的内容/);
  assert.deepEqual(await readFile(path.join(root, MINI_FILE)), before);
  assert.ok(!existsSync(path.join(root, BACKUP_DIR)));
});

test("learner mode: SIGTERM while the patched code's tests run ends them, restores the file and leaves no temp folder", async (t) => {
  // The injected line never returns, so the moment is certain: the tests of the patched code are running.
  const faults = MINI_FAULTS.replace('insert: "loader.load(); // 故意错误"', 'insert: "for (;;) {} // 故意错误"');
  const manifest = learnerManifestText(miniManifest(faults), manifestOf(miniManifest(faults)));
  const root = await makeMiniCourse(t, { practice: true, manifest, source: LEARNER_SOLUTION });
  const before = await readFile(path.join(root, MINI_FILE));
  const tmp = await mkdtemp(path.join(os.tmpdir(), "pi-fault-tmp-"));
  t.after(() => rm(tmp, { recursive: true, force: true }));
  const run = startChild(root, "run", { TMPDIR: tmp, TEMP: tmp, TMP: tmp });
  await run.patched;
  await waitForEntry(tmp, (name) => name.startsWith("pi-lab-"));
  run.child.kill("SIGTERM");
  const exit = await run.exited;
  assert.equal(exit.signal, "SIGTERM", run.stderr());
  assert.match(run.stderr(), /已逐字节恢复成实验前的内容；测试进程已结束，临时文件已删除/);
  assert.deepEqual(await readFile(path.join(root, MINI_FILE)), before);
  assert.deepEqual((await readdir(tmp)).filter((name) => name.startsWith("pi-lab-")), [], "no pi-lab folder left");
  assert.deepEqual(processesMentioning(root) ?? [], [], "no test process left");
});

test("learner mode: an uncaught exception between patch and restore restores on the way out", async (t) => {
  const root = await practiceFolder(t, LEARNER_SOLUTION);
  const before = await readFile(path.join(root, MINI_FILE));
  const run = startChild(root, "throw");
  await run.patched;
  const exit = await run.exited;
  assert.notEqual(exit.code, 0);
  assert.match(run.stderr(), /simulated crash/);
  assert.deepEqual(await readFile(path.join(root, MINI_FILE)), before);
  assert.ok(!existsSync(path.join(root, BACKUP_DIR)));
});

test("a backup write that fails leaves no temporary file behind", async (t) => {
  const root = await practiceFolder(t);
  const dir = path.join(root, ...BACKUP_DIR.split("/"));
  // A non-empty folder where the backup's `original` goes: the rename onto it fails.
  await mkdir(path.join(dir, "original", "occupied"), { recursive: true });
  const original = await readFile(path.join(root, MINI_FILE));
  const state = { format: 1 as const, fault: "98.2-x", file: MINI_FILE, sha256: sha256(original), patchedSha256: sha256(original), pid: process.pid, startedAt: "" };
  assert.throws(() => writeBackupSync(root, state, original));
  assert.deepEqual((await readdir(dir)).sort(), ["original"]);
});

test("recovery never overwrites a file edited after the crash, and refuses while the writer lives", async (t) => {
  const root = await practiceFolder(t, LEARNER_SOLUTION);
  const file = path.join(root, MINI_FILE);
  const original = await readFile(file);
  const state = { format: 1 as const, fault: "98.2-load-untrusted", file: MINI_FILE, sha256: sha256(original), patchedSha256: sha256(Buffer.from("patched")), startedAt: "" };

  writeBackupSync(root, { ...state, pid: process.ppid, start: processStart(process.ppid) }, original);
  await writeFile(file, "patched");
  assert.throws(() => recoverFaultBackup(root), { code: "FAULT_BUSY" }, "the parent process is alive");
  // The same pid, now owned by a process that started at another time, is not the writer.
  const parentStart = processStart(process.ppid);
  if (parentStart !== null) {
    await writeFile(path.join(root, BACKUP_DIR, "state.json"), JSON.stringify({ ...state, pid: process.ppid, start: `${parentStart}0` }));
    assert.equal(recoverFaultBackup(root).kind, "restored", "a reused pid does not block the restore");
    writeBackupSync(root, { ...state, pid: process.ppid, start: parentStart }, original);
    await writeFile(file, "patched");
  }

  await writeFile(path.join(root, BACKUP_DIR, "state.json"), JSON.stringify({ ...state, pid: 2 ** 30 }));
  await writeFile(file, "edited by the learner after the crash");
  assert.throws(() => recoverFaultBackup(root), { code: "FAULT_BACKUP_CONFLICT" });
  assert.equal(await readFile(file, "utf8"), "edited by the learner after the crash");
  assert.ok(existsSync(path.join(root, BACKUP_DIR, "original")), "the backup is kept");

  await writeFile(file, "patched");
  assert.equal(recoverFaultBackup(root).kind, "restored");
  assert.deepEqual(await readFile(file), original);
});
