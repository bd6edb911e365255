// test-process: shared
/**
 * `course/faults.ts`: the fault catalog: applying and undoing an edit exactly once, the
 * catalog's validation, the practice folder's copy without reference text, and the learner
 * patch placed in the learner's own code.
 */
import assert from "node:assert/strict";
import test from "node:test";
import { parseDocument } from "yaml";
import {
  applyFault,
  applyLearnerPatch,
  authorFaults,
  injectFault,
  learnerFaults,
  learnerFaultsProjection,
  learnerManifestText,
  reformatProblems,
} from "../../src/course/faults.js";
import { parseManifest } from "../../src/course/manifest.js";
import { MINI_FILE, MINI_REFERENCE, miniManifest } from "../support/fault-fixture.js";
import { fault, manifestOf } from "../support/fault-fixture.js";

/** `fault` put into `text` and taken out again: the patched text, and whether the undo gave `text` back. */
function roundTrip(text: string, f: Parameters<typeof injectFault>[1]): { patched: string; restored: boolean } {
  const injected = injectFault(text, f);
  return { patched: injected.text, restored: injected.undo(injected.text) === text };
}

test("a fault applies exactly once and undoes to the same text", () => {
  const { patched, restored } = roundTrip(MINI_REFERENCE, fault());
  assert.notEqual(patched, MINI_REFERENCE);
  assert.ok(patched.includes("return n + 2;"));
  assert.ok(restored);
});

test("a find survives a reindented, rewrapped reference: whitespace and trailing commas do not count", () => {
  const reformatted = MINI_REFERENCE.replace(/^( +)/gm, (indent) => "\t".repeat(indent.length / 2)).replace("return n * 2;", "return n *\n\t\t2;");
  assert.notEqual(reformatted, MINI_REFERENCE);
  const { patched, restored } = roundTrip(reformatted, fault());
  assert.match(patched, /\treturn n \+ 2;\n/, "the replacement takes the match's place, without the find's own indentation");
  assert.ok(restored, "and undoes byte for byte");
  const call = "export function twice(a: number, b: number): number {\n  return Math.max(\n    a,\n    b,\n  );\n}\n";
  assert.match(applyFault(call, fault({ find: "return Math.max(a, b);", replace: "return Math.min(a, b);" })), /return Math\.min\(a, b\);/);
  // What the code says still counts: another operand is another text.
  assert.throws(() => applyFault(reformatted.replace("n *", "m *"), fault()), { code: "FAULT_DRIFTED" });
});

test("reformatProblems: a catalog whose faults all hold in their files reformatted has no problem; a fault that cannot be put in, or a formatter that changed code, is named", () => {
  // The mini reference as a formatter writes it at another width and indent: every fault still holds there.
  const reformatted = MINI_REFERENCE.replace(/^( +)/gm, (indent) => " ".repeat(indent.length * 2)).replace(
    "  if (!loader.trust()) {",
    "  if (\n      !loader.trust()\n    ) {",
  );
  const files = new Map([[MINI_FILE, { text: MINI_REFERENCE, reformatted }]]);
  const gate = fault({ id: "98.2-x", lab: "98.2", in: "gate", find: "if (!loader.trust()) {", replace: "if (loader.trust()) {" });
  assert.deepEqual(reformatProblems([fault(), fault({ id: "98.1-y", in: "double" }), gate], files), []);
  const drifted = reformatProblems([gate, fault({ id: "98.1-gone", find: "return n * 4;" })], files);
  assert.equal(drifted.length, 1);
  assert.match(drifted[0]!, /^故障 98\.1-gone：find 文本/);
  // A formatter that changed the code itself (another operand): nothing can be compared.
  const changed = new Map([[MINI_FILE, { text: MINI_REFERENCE, reformatted: reformatted.replace("n * 2", "n * 3") }]]);
  assert.deepEqual(reformatProblems([fault()], changed), [`格式化工具对 ${MINI_FILE} 改动的不只是空白和分隔符，无法比较故障`]);
});

test("a fault anchored in a declaration is looked for there only, and a declaration gone is FAULT_DRIFTED", () => {
  const twice = `${MINI_REFERENCE}\nfunction again(n: number) {\n  return n * 2;\n}\n`;
  assert.throws(() => applyFault(twice, fault()), { code: "FAULT_DRIFTED" }, "two matches without an anchor");
  const patched = applyFault(twice, fault({ in: "again" }));
  assert.match(patched, /function again\(n: number\) \{\n {2}return n \+ 2;/);
  assert.match(patched, /function double\(n: number\): number \{\n {2}return n \* 2;/, "the other declaration is untouched");
  assert.throws(
    () => applyFault(MINI_REFERENCE, fault({ in: "gone" })),
    (error: Error & { code?: string }) => error.code === "FAULT_DRIFTED" && /没有顶层声明 gone/.test(error.message),
  );
});

test("a replacement that ends its line keeps ending it when the reformatted line goes on", () => {
  const joined = "export function f(x: number): number { if (x > 0) return 1; return 0; }\n";
  const patched = applyFault(joined, fault({ find: "  if (x > 0) return 1;\n", replace: "  // (the positive case is forgotten)\n" }));
  assert.equal(patched, "export function f(x: number): number { // (the positive case is forgotten)\n return 0; }\n");
});

test("a find that no longer occurs, or occurs twice, is FAULT_DRIFTED naming the fault", () => {
  assert.throws(
    () => applyFault(MINI_REFERENCE.replace("n * 2", "2 * n"), fault({ id: "98.1-gone" })),
    (error: Error & { code?: string }) => {
      assert.equal(error.code, "FAULT_DRIFTED");
      assert.match(error.message, /98\.1-gone/);
      assert.match(error.message, /0 次/);
      return true;
    },
  );
  const twice = `${MINI_REFERENCE}\nfunction again(n: number) {\n  return n * 2;\n}\n`;
  assert.throws(() => applyFault(twice, fault()), { code: "FAULT_DRIFTED" });
  // Overlapping occurrences count too.
  assert.throws(() => applyFault("aaa", fault({ find: "aa", replace: "b" })), { code: "FAULT_DRIFTED" });
});

test("a replacement that also occurs elsewhere in the file is undone where it was put", () => {
  const { patched, restored } = roundTrip(MINI_REFERENCE, fault({ find: "  return n * 2;", replace: '  return "skipped";' }));
  assert.equal(patched.split('return "skipped";').length, 3, "the replacement now occurs twice");
  assert.ok(restored);
});

test("undoing a file changed since the edit is FAULT_DRIFTED", () => {
  const injected = injectFault(MINI_REFERENCE, fault());
  assert.throws(() => injected.undo(injected.text.replace("n + 2", "n - 2")), { code: "FAULT_DRIFTED" });
});

test("faults apply to a CRLF checkout of the reference and undo to the same bytes", () => {
  const crlf = MINI_REFERENCE.replace(/\n/g, "\r\n");
  const f = fault({ find: '  if (!loader.trust()) {\n    return "skipped";', replace: '  if (!loader.trust()) {\n    loader.load();\n    return "skipped";' });
  const { patched, restored } = roundTrip(crlf, f);
  assert.ok(patched.includes("    loader.load();\r\n"));
  assert.ok(restored);
});

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
  assert.deepEqual(
    projection.map((f) => f.id),
    ["98.2-load-untrusted"],
  );
  for (const entry of projection) {
    assert.ok(!("find" in entry) && !("replace" in entry));
  }
  const text = learnerManifestText(miniManifest(), manifest);
  for (const quote of ["find:", "replace:", "return n + 2", "loader.load();\n"]) {
    assert.ok(!text.includes(quote), `no reference edit in the practice manifest: ${quote}`);
  }
  const reparsed = parseManifest(text, "chapters/98-mini/chapter.yaml");
  assert.deepEqual(reparsed.labs, manifest.labs, "everything else is kept");
  const [exercise] = learnerFaults(reparsed);
  assert.equal(exercise?.id, "98.2-load-untrusted");
  assert.equal(exercise?.learner.insert, "loader.load(); // 故意错误");
  assert.throws(() => authorFaults(reparsed), { code: "FAULT_INVALID" }, "the projection cannot be used as author data");
  // No exercise: the field disappears altogether.
  const withoutExercise = miniManifest(`faults:\n  - { id: 98.1-x, lab: "98.1", description: d, find: a, replace: b, killedBy: ["Lab 98.1 · doubles"] }\n`);
  assert.equal(parseDocument(learnerManifestText(withoutExercise, manifestOf(withoutExercise))).get("faults"), undefined);
  // The kept solutions are answers the folder does not hold: its manifest keeps none of them to run.
  const withSolutions = miniManifest() + "solutions: [solutions/a-kept.ts]\n";
  assert.deepEqual(manifestOf(withSolutions).solutions, [{ file: "chapters/98-mini/solutions/a-kept.ts", replaces: "packages/pi-course/src/mini.ts" }]);
  const practiceCopy = learnerManifestText(withSolutions, manifestOf(withSolutions));
  assert.equal(parseDocument(practiceCopy).get("solutions"), undefined);
  assert.deepEqual(parseManifest(practiceCopy, "chapters/98-mini/chapter.yaml").solutions, []);
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
