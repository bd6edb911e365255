// test-process: shared
/** `ts/splice.ts`: which lab a declaration belongs to, and splicing declarations between texts. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseModule } from "../../src/ts/source.js";
import { declarationKey, labOwnership, spliceDeclarations, spliceLabs } from "../../src/ts/splice.js";
import { REFERENCE, STARTER } from "../support/ts-texts.js";

test("labOwnership: the 🔨 markers inside a declaration name its lab; unmarked declarations belong to none", () => {
  const owners = labOwnership(STARTER, ["1.1", "1.2"]);
  assert.deepEqual(
    [...owners],
    [
      ["value:list", "1.1"],
      ["value:render", "1.2"],
      ["value:Box", "1.2"],
    ],
  );
});

test("labOwnership refuses a declaration marked for two labs, or for a lab the chapter lacks", () => {
  const twoLabs = STARTER.replace("// 🔨 Lab 1.2：join names", "// 🔨 Lab 1.1：pass through\n  // 🔨 Lab 1.2：join names");
  assert.throws(() => labOwnership(twoLabs, ["1.1", "1.2"]), { code: "LAB_OWNERSHIP_AMBIGUOUS" });
  assert.throws(() => labOwnership(STARTER, ["1.1"]), { code: "LAB_OWNERSHIP_UNKNOWN" });
});

test("spliceDeclarations: reference with the later lab from the starter keeps everything else byte for byte", () => {
  const owners = labOwnership(STARTER, ["1.1", "1.2"]);
  const starterOnly = new Set(["value:labError"]);
  const staged = spliceDeclarations(REFERENCE, STARTER, (d) => owners.get(declarationKey(d)) === "1.2" || starterOnly.has(declarationKey(d)));
  assert.deepEqual(staged.replaced, ["render", "Box"]);
  assert.deepEqual(staged.inserted, ["labError"]);
  // The starter-only helper lands where the starter has it: after the shared interface.
  assert.ok(staged.text.includes("  name: string;\n}\n\nfunction labError(lab: string): Error {"), staged.text);
  assert.ok(staged.text.includes('throw labError("Lab 1.2 render");'));
  assert.ok(staged.text.includes("return [...names].sort()"), "Lab 1.1 stays the reference's");
  assert.ok(staged.text.includes("function joinNames("), "reference helpers stay");
  // Undoing the splice with the reference as donor restores every replaced declaration.
  const back = spliceDeclarations(staged.text, REFERENCE, (d) => d.name === "render" || d.name === "Box");
  assert.equal(back.text.replace(/function labError[\s\S]*?\n}\n\n/, ""), REFERENCE);
  parseModule(staged.text); // still a valid module
});

test("spliceDeclarations: a lab's declarations go back into a learner's file, even one the learner deleted", () => {
  const learner = REFERENCE.replace(/\/\*\* Renders things\. \*\/\n[\s\S]*?\n}\n\n/, "").replace('return "open";', "return 'learner';");
  const reset = spliceDeclarations(learner, STARTER, (d) => d.name === "render" || d.name === "Box" || d.name === "labError");
  assert.deepEqual(reset.replaced, ["Box"]);
  assert.deepEqual(reset.inserted.sort(), ["labError", "render"]);
  assert.ok(reset.text.includes("return [...names].sort()"), "the learner's Lab 1.1 code is kept");
  assert.ok(!reset.text.includes("'learner'"));
  assert.ok(reset.text.indexOf("export function render") < reset.text.indexOf("export class Box"), "inserted where the starter has it");
});

test("spliceDeclarations treats overload signatures and their implementation as one declaration", () => {
  const base =
    "export function f(a: string): string;\nexport function f(a: number): number;\nexport function f(a: unknown): unknown {\n  return a;\n}\n\nexport const g = 1;\n";
  const donor =
    'export function f(a: string): string;\nexport function f(a: number): number;\nexport function f(a: unknown): unknown {\n  throw new Error("x");\n}\n';
  const result = spliceDeclarations(base, donor, (d) => d.name === "f");
  assert.equal(result.text, donor + "\nexport const g = 1;\n");
  assert.deepEqual(result.replaced, ["f"]);
});

test("spliceDeclarations inserts several missing declarations at one place in the donor's order", () => {
  const donor = "export const a = 1;\n\nfunction x(): void {}\n\nfunction y(): void {}\n\nfunction z(): void {}\n";
  const result = spliceDeclarations("export const a = 1;\n", donor, (d) => d.kind === "function");
  assert.equal(result.text, "export const a = 1;\n\nfunction x(): void {}\n\nfunction y(): void {}\n\nfunction z(): void {}\n");
  assert.deepEqual(result.inserted, ["x", "y", "z"]);
});

test("spliceLabs: the starter's declarations of the given labs, plus the unmarked helpers the base lacks, in one parse", () => {
  const staged = spliceLabs(REFERENCE, STARTER, new Set(["1.2"]), ["1.1", "1.2"], { base: "reference.ts", starter: "starter.ts" });
  assert.deepEqual(
    staged,
    spliceDeclarations(REFERENCE, STARTER, (d) => d.name === "render" || d.name === "Box" || d.name === "labError"),
  );
  assert.throws(
    () => spliceLabs("function (", STARTER, new Set(["1.2"]), ["1.1", "1.2"], { base: "learner.ts", starter: "starter.ts" }),
    (error: Error & { code?: string }) => {
      assert.equal(error.code, "TS_SYNTAX");
      assert.match(error.message, /^learner\.ts:1: /);
      return true;
    },
  );
});
