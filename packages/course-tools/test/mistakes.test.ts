/**
 * `mistakes NN` and the catalog it reads (`course/catalog.ts`, the entry format of
 * `course/faults.ts`): what an entry may name (its base, its file, its tests), how a bad
 * catalog is refused before anything is built, the figures and the bars, and one run of the
 * command on the mini chapter (`support/fault-fixture.ts`) with its catalog in its home.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import test from "node:test";
import { runCommandLine } from "../src/cli.js";
import { catalogEntries, withCatalog } from "../src/course/catalog.js";
import { authorFaults, catalogMistakes, injectFault, learnerFaults, learnerManifestText } from "../src/course/faults.js";
import { parseManifest } from "../src/course/manifest.js";
import { figures } from "../src/mistakes.js";
import type { FaultResult } from "../src/testing/fault-runs.js";
import { MINI_FAULTS, MINI_REFERENCE, makeMiniCourse, manifestOf, miniManifest, writeTree } from "./support/fault-fixture.js";

/** A chapter of two teaching files, each with a kept solution (only parsed: nothing is built). */
const TWO_FILES = parseManifest(
  `format: 1
id: "98"
title: t
files: [packages/pi-course/src/one.ts, packages/pi-course/src/two.ts, packages/pi-course/test/98-one.test.ts]
starters:
  - { from: one.ts, to: packages/pi-course/src/one.ts }
  - { from: two.ts, to: packages/pi-course/src/two.ts }
focusedTests: [packages/pi-course/test/98-one.test.ts]
solutions:
  - { file: solutions/a-one.ts, replaces: packages/pi-course/src/one.ts }
  - { file: solutions/b-two.ts, replaces: packages/pi-course/src/two.ts }
labs:
  - { id: "98.1", title: a, tests: 2, scaffoldError: e, hints: [a, b, c, d] }
`,
  "chapters/98-two/chapter.yaml",
);

/** `catalogMistakes` of one entry of TWO_FILES, as a thunk (for assert.throws). */
function entries(...list: Record<string, unknown>[]) {
  return () => catalogMistakes(TWO_FILES, list, "catalog.yaml");
}

const edit = { lab: "98.1", rule: "§1 r", find: "1", replace: "3" };

test("an entry edits its base solution's teaching file, or the reference's it names with file:", () => {
  const mistakes = entries(
    { id: "m1", base: "a-one", ...edit },
    { id: "m2", file: "packages/pi-course/src/two.ts", ...edit },
    { id: "m3", base: "b-two", file: "packages/pi-course/src/two.ts", ...edit },
  )();
  assert.deepEqual(
    mistakes.map((m) => [m.id, m.base, m.file, m.killedBy]),
    [
      ["m1", "a-one", "packages/pi-course/src/one.ts", undefined],
      ["m2", "reference", "packages/pi-course/src/two.ts", undefined],
      ["m3", "b-two", "packages/pi-course/src/two.ts", undefined],
    ],
  );
  assert.throws(entries({ id: "m4", ...edit }), { code: "FAULT_INVALID" }, "the reference of two teaching files needs file:");
  assert.throws(entries({ id: "m5", base: "a-one", file: "packages/pi-course/src/two.ts", ...edit }), { code: "FAULT_INVALID" });
  assert.throws(entries({ id: "m6", base: "z-none", ...edit }), { code: "FAULT_INVALID" });
  assert.throws(entries({ id: "m7", base: "a-one", ...edit }, { id: "m7", base: "a-one", ...edit }), { code: "FAULT_INVALID" }, "ids are unique");
  assert.throws(entries({ id: "m8", base: "a-one", ...edit, replace: "1" }), { code: "FAULT_INVALID" }, "an edit changes something");
  // A deletion is an edit; an unknown key is not.
  assert.equal(entries({ id: "m9", base: "a-one", ...edit, replace: "" })()[0]?.replace, "");
  assert.throws(entries({ id: "m10", base: "a-one", ...edit, kiledBy: [] }), { code: "FAULT_INVALID" });
});

test("an entry with a description is a fault: made on the reference, named <lab>-<slug>, with the tests that must catch it", () => {
  const fault = { id: "98.1-x", description: "d", file: "packages/pi-course/src/one.ts", killedBy: ["Lab 98.1 · a"], ...edit };
  assert.equal(entries(fault)()[0]?.description, "d");
  assert.throws(entries({ ...fault, base: "a-one", file: undefined }), { code: "FAULT_INVALID" });
  assert.throws(entries({ ...fault, killedBy: undefined }), { code: "FAULT_INVALID" });
  assert.throws(entries({ ...fault, id: "x" }), { code: "FAULT_INVALID" });
  assert.throws(entries({ ...fault, killedBy: ["Lab 98.2 · b"] }), { code: "FAULT_INVALID" }, "killedBy names tests of its lab");
  // Any entry naming its tests names tests of its lab, fault or not.
  assert.throws(entries({ id: "m", base: "a-one", ...edit, killedBy: ["Lab 98.2 · b"] }), { code: "FAULT_INVALID" });
});

test("a catalog that is not a mapping with a mistakes: list of mappings is CATALOG_INVALID", () => {
  for (const text of ["mistakes: [", "- a", "mistakes: {}", "mistakes: [1]"]) {
    assert.throws(() => catalogEntries(text, "c.yaml"), { code: "CATALOG_INVALID" }, text);
  }
  assert.deepEqual(catalogEntries("mistakes: []", "c.yaml"), []);
});

test("a find is located by its code once, or else by its exact text once; anything else is FAULT_DRIFTED naming the entry", () => {
  const text = 'const a = `one ${x} two`;\nconst b = "two";\n';
  // Starts inside a template literal: the code cannot tell, the exact text occurs once.
  assert.equal(injectFault(text, { id: "m1", file: "f.ts", find: "${x} two`;", replace: "${x}`;" }).text, 'const a = `one ${x}`;\nconst b = "two";\n');
  assert.throws(
    () => injectFault(text, { id: "m2", file: "f.ts", find: "two", replace: "2" }),
    (error: Error & { code?: string }) => {
      assert.equal(error.code, "FAULT_DRIFTED");
      assert.match(error.message, /m2/);
      return true;
    },
  );
});

test("a home's catalog gives the manifest its faults (the entries with a description), marked where they are written; faults in both places are FAULT_INVALID", () => {
  const manifest = manifestOf(miniManifest(""));
  const catalog = `mistakes:
  - { id: 98.1-plus-two, lab: "98.1", rule: "§1 r", description: d, find: "  return n * 2;", replace: "  return n + 2;", killedBy: ["Lab 98.1 · doubles negatives"] }
  - { id: t-times-three, lab: "98.1", rule: "§1 r", find: "  return n * 2;", replace: "  return n * 3;" }
`;
  const merged = withCatalog(manifest, catalog);
  assert.deepEqual(
    merged.faults.map((f) => [f.id, (f as { catalog?: string }).catalog, (f as { catalogIndex?: number }).catalogIndex]),
    [["98.1-plus-two", "chapters/98-mini/solutions/mistakes.yaml", 0]],
  );
  assert.equal(authorFaults(merged)[0]?.find, "  return n * 2;");
  assert.throws(() => withCatalog(manifestOf(), catalog), { code: "FAULT_INVALID" });
  // A bad fault is named where the catalog writes it.
  assert.throws(
    () => authorFaults(withCatalog(manifest, catalog.replace('killedBy: ["Lab 98.1 · doubles negatives"]', "killedBy: []"))),
    /mistakes\.yaml: 字段 mistakes\[0\]（98\.1-plus-two）\.killedBy/,
  );
});

test("the practice folder's manifest gets the catalog's exercise under its lab, as the manifest's own faults were projected", () => {
  const inline = miniManifest();
  const fromManifest = learnerManifestText(inline, manifestOf(inline));
  const bare = miniManifest("");
  const fromCatalog = learnerManifestText(bare, withCatalog(manifestOf(bare), MINI_FAULTS.replace(/^faults:/, "mistakes:")));
  assert.deepEqual(learnerFaults(manifestOf(fromCatalog)), learnerFaults(manifestOf(fromManifest)));
  assert.deepEqual(
    manifestOf(fromCatalog).faults.map((f) => [f.id, f.find, f.outsideLab]),
    [["98.2-load-untrusted", undefined, undefined]],
  );
});

/** A result of the runner for `id`. */
function result(id: string, lab: string, status: FaultResult["status"], killedBy: string[] = []): FaultResult {
  return { id, lab, status, killedBy, expected: [], alsoFailed: [], restored: true };
}

test("figures: a lab under 90% or a chapter under 95% fails, an entry that cannot be decided fails, kills by another lab's test count", () => {
  const manifest = { labs: [{ id: "9.1" }, { id: "9.2" }] } as Parameters<typeof figures>[0];
  const list = (lab: string, n: number) => Array.from({ length: n }, (_, i) => ({ id: `${lab}-${i}`, lab, rule: `§${i} r` }));
  const mistakes = [...list("9.1", 10), ...list("9.2", 10)];
  // Every kill is by a test of Lab 9.2: Lab 9.1's count as kills, not as kills by its own lab.
  const kill = (id: string, lab: string) => result(id, lab, "killed", ["Lab 9.2 · t"]);
  const all = mistakes.map((m) => kill(m.id, m.lab));
  assert.equal(figures(manifest, mistakes, all).ok, true);
  assert.deepEqual(
    figures(manifest, mistakes, all).labs.map((l) => [l.id, l.killed, l.total, l.byOwnLab, l.below]),
    [
      ["9.1", 10, 10, 0, false],
      ["9.2", 10, 10, 10, false],
    ],
  );
  // One survivor in a lab of ten: 90% for the lab, 95% for the chapter: still fine.
  const one = all.map((r) => (r.id === "9.1-0" ? result(r.id, r.lab, "survived") : r));
  assert.equal(figures(manifest, mistakes, one).ok, true);
  assert.deepEqual(figures(manifest, mistakes, one).survivors, [{ id: "9.1-0", lab: "9.1", rule: "§0 r" }]);
  // Two survivors in one lab: 80% there.
  const two = one.map((r) => (r.id === "9.1-1" ? result(r.id, r.lab, "survived") : r));
  assert.equal(figures(manifest, mistakes, two).labs[0]?.below, true);
  assert.equal(figures(manifest, mistakes, two).ok, false);
  // One survivor in each lab: every lab at 90%, the chapter at 90%.
  const spread = one.map((r) => (r.id === "9.2-0" ? result(r.id, r.lab, "survived") : r));
  assert.equal(
    figures(manifest, mistakes, spread).labs.some((l) => l.below),
    false,
  );
  assert.equal(figures(manifest, mistakes, spread).ok, false);
  assert.equal(
    figures(
      manifest,
      mistakes,
      all.map((r) => (r.id === "9.2-3" ? { ...r, status: "error" as const, detail: "x" } : r)),
    ).ok,
    false,
  );
});

/** Runs a command line in-process in `root`, capturing what it writes. */
async function run(argv: string[], root: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await runCommandLine(argv, { root, io: { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } } });
  return { code, stdout, stderr };
}

test("mistakes 98 on the mini chapter: its kept solution per lab, per lab killed/total, each survivor with its rule, exit 1 below the bar; --compile-only runs no test; a drifted find stops it first", async (t) => {
  const root = await makeMiniCourse(t, { manifest: miniManifest("solutions:\n  - solutions/a-sum.ts\n") });
  await writeTree(root, {
    "chapters/98-mini/solutions/a-sum.ts": `// @ts-nocheck — a kept solution\n${MINI_REFERENCE.replace("return n * 2;", "return n + n;")}`,
    "chapters/98-mini/solutions/mistakes.yaml": `mistakes:
  - id: 98.1-plus-two
    lab: "98.1"
    rule: §1 两倍就是乘 2
    description: 把乘 2 写成加 2
    in: double
    find: "  return n * 2;"
    replace: "  return n + 2;"
    killedBy: ["Lab 98.1 · doubles negatives"]
  - { id: t-sum-thrice, lab: "98.1", base: a-sum, rule: §1 两倍, find: "return n + n;", replace: "return n + n + n;" }
  - { id: t-commuted, lab: "98.1", rule: §1 乘法交换, find: "return n * 2;", replace: "return 2 * n;" }
  - { id: t-load-untrusted, lab: "98.2", rule: §2 不信任就不加载, find: "    return \\"skipped\\";", replace: "    loader.load();\\n    return \\"skipped\\";" }
`,
  });
  const measured = await run(["mistakes", "98"], root);
  assert.equal(measured.code, 1, measured.stderr);
  const lines = measured.stdout.split("\n");
  assert.ok(lines.includes("解答 a-sum：98.1 2/2  98.2 2/2  共 4/4；公开接口与参考实现相同"), measured.stdout);
  assert.ok(lines.includes("Lab 98.1：抓住 2/3（66.7%）（低于 90%），其中被本 Lab 的测试抓住 2"), measured.stdout);
  assert.ok(lines.includes("  存活 t-commuted  §1 乘法交换"), measured.stdout);
  assert.ok(lines.includes("Lab 98.2：抓住 1/1（100.0%），其中被本 Lab 的测试抓住 1"), measured.stdout);
  assert.ok(lines.includes("全章：抓住 3/4（75.0%）（低于 95%），存活 1，无法判定 0"), measured.stdout);

  const compiled = await run(["mistakes", "98", "--compile-only"], root);
  assert.equal(compiled.code, 0, compiled.stderr);
  assert.match(compiled.stdout, /^t-commuted +ok$/m);
  assert.match(compiled.stdout, /4\/4 条可以注入并编译/);
  assert.doesNotMatch(compiled.stdout, /Lab 98\.|测试/);

  await writeFile(path.join(root, "held-out.yaml"), 'mistakes:\n  - { id: h-gone, lab: "98.1", rule: r, find: "return n * 4;", replace: "return n;" }\n');
  const drifted = await run(["mistakes", "98", "--catalog", path.join(root, "held-out.yaml")], root);
  assert.equal(drifted.code, 1);
  assert.match(drifted.stderr, /\[FAULT_DRIFTED\][\s\S]*h-gone/);
  assert.equal(drifted.stdout, "");
});
