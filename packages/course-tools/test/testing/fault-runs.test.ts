/**
 * `testing/fault-runs.ts`: every documented fault run on a scratch copy of the reference,
 * killed by its named test and restored; the repository is never touched.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import {
  allKilledAndRestored,
  faultBatches,
  FAULT_BATCH_SIZE,
  resolveKilledBy,
  runAuthorChecks,
  runAuthorFaults,
  type FaultResult,
} from "../../src/testing/fault-runs.js";
import { authorFaults, type Fault } from "../../src/course/faults.js";
import { loadManifest } from "../../src/course/manifest.js";
import {
  MINI_FILE,
  MINI_REFERENCE,
  MINI_TEST,
  MINI_TEST_FILE,
  makeMiniCourse,
  manifestOf,
  miniManifest,
  repoRoot,
  writeTree,
} from "../support/fault-fixture.js";
import { fault } from "../support/fault-fixture.js";

const NODE_MODULES = path.join(repoRoot, "node_modules");

test("killedBy entries resolve to one test each: exact name first, else a unique prefix", () => {
  const names = ["Lab 98.1 · doubles", "Lab 98.1 · doubles negatives"];
  assert.deepEqual(resolveKilledBy({ id: "x", killedBy: ["Lab 98.1 · doubles"] }, names), ["Lab 98.1 · doubles"]);
  assert.deepEqual(resolveKilledBy({ id: "x", killedBy: ["Lab 98.1 · doubles n"] }, names), ["Lab 98.1 · doubles negatives"]);
  assert.throws(() => resolveKilledBy({ id: "x", killedBy: ["Lab 98.1 · d"] }, names), { code: "FAULT_INVALID" });
  assert.throws(() => resolveKilledBy({ id: "x", killedBy: ["Lab 98.1 · z"] }, names), { code: "FAULT_INVALID" });
});

async function runAuthor(root: string, faults?: Fault[]): Promise<FaultResult[]> {
  const manifest = await loadManifest(root, "98");
  return runAuthorFaults({ sourceRoot: root, manifest, faults: faults ?? authorFaults(manifest), nodeModules: NODE_MODULES });
}

test("fault batches: one lab and one file each, at most FAULT_BATCH_SIZE, about even, and only faults that compile", () => {
  const edits = [
    ...Array.from({ length: 10 }, () => ({ fault: { lab: "98.1", file: "a.ts" } })),
    { fault: { lab: "98.2", file: "a.ts" } },
    { fault: { lab: "98.2", file: "b.ts" } },
    { fault: { lab: "98.2", file: "a.ts" } },
  ];
  const broken = new Set([5]);
  const batches = faultBatches(edits, (index) => !broken.has(index), 2);
  assert.deepEqual(batches, [[0, 1, 2], [3, 4, 6], [7, 8, 9], [10, 12], [11]]);
  const many = Array.from({ length: 40 }, () => ({ fault: { lab: "98.1", file: "a.ts" } }));
  const sizes = faultBatches(many, () => true, 2).map((batch) => batch.length);
  assert.ok(sizes.every((size) => size <= FAULT_BATCH_SIZE) && Math.max(...sizes) - Math.min(...sizes) <= 1, `${sizes}`);
  assert.equal(
    sizes.reduce((a, b) => a + b, 0),
    40,
  );
});

// One scratch copy, one build and one pool of runs on the mini chapter, asserted on for several behaviours
// (each used to build its own): (a) every documented fault is killed by its test and restored, the repo untouched;
// (b) a fault the named test cannot see survives; (c) faults sharing a test process are judged as alone, even beside
// one that crashes it or spoils it for the rest; (d) a fault that does not compile is an error; (e) kept solutions,
// built with the faults: one written another way passes, a failing, a reshaped and a broken one say why.
test("author mode, one shared run: documented faults killed and restored, blind ones survive, shared processes judged as alone, a fault that does not compile is an error, kept solutions judged", async (t) => {
  const root = await makeMiniCourse(t);
  const manifest = await loadManifest(root, "98");
  const before = await readFile(path.join(root, MINI_FILE));
  // (b) `n + 2` equals `n * 2` for n = 2: the test "doubles" cannot see this mistake.
  const blind = fault({ id: "98.1-blind", killedBy: ["Lab 98.1 · doubles"] });
  // (b) An edit with no observable effect at all: nothing can kill it.
  const invisible = fault({ id: "98.1-invisible", replace: "  return n + n;", killedBy: ["Lab 98.1 · doubles"] });
  // (c) Once it has run, no later test can push "trust" onto its calls: the faults after it in its process would all look killed.
  const spoiling = fault({
    id: "98.2-spoiling",
    lab: "98.2",
    find: '    return "skipped";',
    replace: [
      "    const push = Array.prototype.push;",
      "    Array.prototype.push = function (this: unknown[], ...items: unknown[]): number {",
      '      return items[0] === "trust" ? this.length : push.apply(this, items);',
      "    };",
      '    return "skipped";',
    ].join("\n"),
    killedBy: ["Lab 98.2 · trusted code is loaded once"],
  });
  const invisibleGate = fault({
    id: "98.2-invisible",
    lab: "98.2",
    find: '    return "skipped";',
    replace: '    return "skipped" as const;',
    killedBy: ["Lab 98.2 · untrusted code is never loaded"],
  });
  // (c) Ends the test process while the module loads.
  const crashing = fault({
    id: "98.1-crashing",
    find: "export function double",
    replace: "(globalThis as unknown as { process: { exit(code: number): never } }).process.exit(3);\nexport function double",
  });
  // (d)
  const typo = fault({ id: "98.1-typo", replace: '  return n * "2";' });
  // (e)
  const solutions = [
    { name: "a-sum", replaces: MINI_FILE, text: MINI_REFERENCE.replace("return n * 2;", "return n + n;") },
    { name: "b-triple", replaces: MINI_FILE, text: MINI_REFERENCE.replace("return n * 2;", "return n * 3;") },
    { name: "c-extra", replaces: MINI_FILE, text: `${MINI_REFERENCE}export function extra(): number {\n  return 1;\n}\n` },
    { name: "d-typo", replaces: MINI_FILE, text: MINI_REFERENCE.replace("return n * 2;", 'return n * "2";') },
  ];
  const documented = authorFaults(manifest);
  // In this order the batches (`faultBatches`, two workers) put the spoiling fault beside 98.2-invisible and the crashing one
  // beside 98.1-x, as (c) needs: [spoiling, invisible], [load-untrusted]; [plus-two, blind], [98.1-invisible], [crashing, 98.1-x].
  const all = [spoiling, invisibleGate, ...documented, blind, invisible, crashing, fault(), typo];
  assert.deepEqual(
    faultBatches(
      all.map((f) => ({ fault: f })),
      (index) => all[index] !== typo,
      2,
    ),
    [[0, 1], [3], [2, 4], [5], [6, 7]],
    "the pairs (c) needs share a batch",
  );
  const results = await runAuthorChecks({
    sourceRoot: root,
    manifest,
    faults: all,
    solutions,
    nodeModules: NODE_MODULES,
    workers: 2,
  });
  const byId = (id: string) => results.faults.find((r) => r.id === id)!;

  // (a)
  assert.deepEqual(
    documented.map((f) => byId(f.id)).map((r) => [r.id, r.status, r.killedBy, r.restored, r.restoredLab]),
    [
      ["98.1-plus-two", "killed", ["Lab 98.1 · doubles negatives"], true, { passed: 2, total: 2 }],
      ["98.2-load-untrusted", "killed", ["Lab 98.2 · untrusted code is never loaded"], true, { passed: 2, total: 2 }],
    ],
  );
  assert.ok(allKilledAndRestored(documented.map((f) => byId(f.id))));
  assert.deepEqual(await readFile(path.join(root, MINI_FILE)), before, "the source tree is only read");
  assert.ok(!existsSync(path.join(root, "packages/pi-course/dist")), "nothing was built in the source tree");

  // (b)
  assert.deepEqual(
    [blind, invisible].map((f) => [byId(f.id).status, byId(f.id).restored]),
    [
      ["survived", true],
      ["survived", true],
    ],
  );
  assert.deepEqual(byId("98.1-blind").alsoFailed, ["Lab 98.1 · doubles negatives"], "another test saw it");
  assert.deepEqual(byId("98.1-invisible").alsoFailed, []);
  assert.ok(!allKilledAndRestored(results.faults));

  // (c)
  assert.deepEqual(
    [spoiling, invisibleGate, documented[1]!, crashing, fault()].map((f) => [f.id, byId(f.id).status, byId(f.id).restored]),
    [
      ["98.2-spoiling", "killed", true],
      ["98.2-invisible", "survived", true],
      ["98.2-load-untrusted", "killed", true],
      ["98.1-crashing", "error", true],
      ["98.1-x", "killed", true],
    ],
  );
  assert.match(byId("98.1-crashing").detail ?? "", /崩溃/);

  // (d)
  assert.equal(byId("98.1-typo").status, "error");
  assert.match(byId("98.1-typo").detail ?? "", /编译/);
  assert.equal(byId("98.1-typo").restored, true);

  // (e)
  assert.deepEqual(
    results.solutions.map((r) => [r.name, r.ok, r.passed, r.total]),
    [
      ["a-sum", true, 4, 4],
      ["b-triple", false, 2, 4],
      ["c-extra", false, 4, 4],
      ["d-typo", false, 0, 4],
    ],
  );
  assert.match(results.solutions[1]?.detail ?? "", /没有通过：“Lab 98\.1 · doubles”、“Lab 98\.1 · doubles negatives”/);
  assert.match(
    results.solutions[2]?.detail ?? "",
    /公开接口与参考实现不同，第 \d+ 行：参考实现「（没有）」，这份解答「export declare function extra\(\): number;」/,
  );
  assert.match(results.solutions[3]?.detail ?? "", /无法编译：packages\/pi-course\/src\/mini\.ts\(/);
});

test("author mode: a fault whose run changes the reference tree is not restored, even though its edit undoes byte for byte", async (t) => {
  const root = await makeMiniCourse(t);
  // The mistake also overwrites the compiled reference: the suite cannot be green on that tree again.
  const corrupting = fault({
    id: "98.1-corrupting",
    replace:
      '  // @ts-ignore the lean course has no Node typings\n  void import("node:fs").then((fs) => fs.writeFileSync("packages/pi-course/dist/src/mini.js", "throw new Error(\\"corrupted\\");\\n"));\n  return n + 2;',
  });
  const [result] = await runAuthor(root, [corrupting]);
  assert.equal(result?.status, "killed");
  assert.equal(result?.restored, false);
  assert.match(result?.detail ?? "", /恢复检查失败/);
});

// One mini course and one run for two behaviours: kept solutions of two teaching files, and a test made vacuous in the
// copy (its only effect: the documented fault it should kill survives).
test("kept solutions of a chapter with two teaching files: each is built in place of the file it replaces, and every focused test counts; a test made vacuous in a copy lets its documented fault survive", async (t) => {
  const vacuous = MINI_TEST.replace("assert.equal(double(-3), -6);", "assert.ok(double(-3) !== undefined);");
  assert.notEqual(vacuous, MINI_TEST);
  const root = await makeMiniCourse(t, { test: vacuous });
  const twice = "packages/pi-course/src/mini-twice.ts";
  const twiceReference = `import { double } from "./mini.js";\n\nexport function quadruple(n: number): number {\n  return double(double(n));\n}\n`;
  await writeTree(root, {
    [twice]: twiceReference,
    "packages/pi-course/test/98-twice.test.ts": `import assert from "node:assert/strict";\nimport test from "node:test";\nimport { quadruple } from "../src/mini-twice.js";\n\ntest("Lab 98.1 · quadruples", () => {\n  assert.equal(quadruple(3), 12);\n});\n`,
    "chapters/98-mini/twice.ts": `export function quadruple(n: number): number {\n  void n;\n  throw new Error("Lab 98.1 doubling 尚未实现");\n}\n`,
    "chapters/98-mini/chapter.yaml": miniManifest()
      .replace(`  - ${MINI_TEST_FILE}\nstarters:`, `  - ${MINI_TEST_FILE}\n  - ${twice}\n  - packages/pi-course/test/98-twice.test.ts\nstarters:`)
      .replace(`    to: ${MINI_FILE}\n`, `    to: ${MINI_FILE}\n  - from: twice.ts\n    to: ${twice}\n`)
      .replace(`  - ${MINI_TEST_FILE}\nlabs:`, `  - ${MINI_TEST_FILE}\n  - packages/pi-course/test/98-twice.test.ts\nlabs:`)
      .replace("    tests: 2\n    scaffoldError: Lab 98.1", "    tests: 3\n    scaffoldError: Lab 98.1"),
  });
  const manifest = await loadManifest(root, "98");
  assert.equal(manifest.starters.length, 2);
  const solutions = [
    { name: "a-sum", replaces: MINI_FILE, text: MINI_REFERENCE.replace("return n * 2;", "return n + n;") },
    { name: "b-times-four", replaces: twice, text: twiceReference.replace("return double(double(n));", "return n * 4;") },
    { name: "c-times-three", replaces: twice, text: twiceReference.replace("return double(double(n));", "return n * 3;") },
  ];
  const results = await runAuthorChecks({ sourceRoot: root, manifest, faults: authorFaults(manifestOf()), solutions, nodeModules: NODE_MODULES });
  assert.equal(results.faults.find((r) => r.id === "98.1-plus-two")?.status, "survived", "its test is vacuous");
  assert.equal(results.faults.find((r) => r.id === "98.2-load-untrusted")?.status, "killed");
  assert.deepEqual(
    results.solutions.map((r) => [r.name, r.ok, r.passed, r.total]),
    [
      ["a-sum", true, 5, 5],
      ["b-times-four", true, 5, 5],
      ["c-times-three", false, 4, 5],
    ],
  );
  assert.match(results.solutions[2]?.detail ?? "", /没有通过：“Lab 98\.1 · quadruples”$/);
  await assert.rejects(
    runAuthorChecks({
      sourceRoot: root,
      manifest,
      faults: [],
      solutions: [{ ...solutions[0]!, replaces: "packages/pi-course/src/other.ts" }],
      nodeModules: NODE_MODULES,
    }),
    { code: "FAULT_INVALID" },
  );
});

test("author mode: a drifted reference is FAULT_DRIFTED before anything is built", async (t) => {
  const root = await makeMiniCourse(t, { source: MINI_REFERENCE.replace("return n * 2;", "return 2 * n;") });
  await assert.rejects(runAuthor(root), (error: Error & { code?: string }) => {
    assert.equal(error.code, "FAULT_DRIFTED");
    assert.match(error.message, /98\.1-plus-two/);
    return true;
  });
});

test("author mode: a red baseline is refused", async (t) => {
  // That a fault which does not compile is an error is checked in the one shared run above.
  const red = await makeMiniCourse(t, { source: MINI_REFERENCE.replace('return "loaded";', 'return "skipped";') });
  await assert.rejects(runAuthor(red, [fault()]), { code: "FAULT_BASELINE_RED" });
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
