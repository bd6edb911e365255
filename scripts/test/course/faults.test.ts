/**
 * `course/faults.ts`: the fault catalog: applying and undoing an edit exactly once, the
 * catalog's validation, the practice folder's copy without reference text, and the learner
 * patch placed in the learner's own code.
 */
import assert from "node:assert/strict";
import test from "node:test";
import { parseDocument } from "yaml";
import { applyFault, applyLearnerPatch, authorFaults, learnerFaults, learnerFaultsProjection, learnerManifestText, unapplyFault } from "../../lib/course/faults.js";
import { parseManifest } from "../../lib/course/manifest.js";
import { MINI_FILE, MINI_REFERENCE, miniManifest } from "../support/fault-fixture.js";
import { fault, manifestOf } from "../support/fault-fixture.js";

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

