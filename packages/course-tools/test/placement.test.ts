// test-process: shared
/**
 * The fault exercise's injection point, found in the learner's syntax tree: three correct
 * chapter-12 `loadExtension`s written differently (a one-line trust branch with a destructured
 * and renamed options parameter, an arrow function with `else return` over several lines, an
 * inline block with a rest parameter), each patched so that the line lands in the untrusted
 * branch and compiles against the chapter's real modules; and the code it truly cannot place,
 * reported with the reason and left untouched.
 */
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { applyLearnerPatch, type LearnerPatch } from "../src/course/faults.js";
import { parseFunctionSpec, parseStatementSpec } from "../src/ts/placement.js";
import { resolveCompiler } from "../src/testing/compiler.js";
import { runProcess } from "../src/core/process.js";
import { loadManifest } from "../src/course/manifest.js";
import { learnerFaults } from "../src/course/faults.js";
import { repoRoot } from "./support/lab-fixture.js";
import { ARROW_ELSE, INLINE_REST, ONE_LINE, withLoadExtension } from "./chapter12-solutions.js";

async function chapterPatch(): Promise<LearnerPatch> {
  const [exercise] = learnerFaults(await loadManifest(repoRoot, "12"));
  assert.ok(exercise, "chapter 12 has its exercise");
  return exercise.learner;
}

test("placement: three differently written solutions get the line in their untrusted branch, with their own names", async (t) => {
  const patch = await chapterPatch();
  const oneLine = applyLearnerPatch(withLoadExtension(ONE_LINE), patch);
  assert.ok(oneLine.ok, oneLine.ok ? "" : oneLine.reason);
  assert.match(
    oneLine.text,
    /\n  if \(\(await isTrusted\(frozen\)\) !== true\) \{\n    await load\?\.\(src\); \/\/ 故意错误\n    return \{ id: frozen\.id, status: "skipped_untrusted" \};\n  \}\n/,
  );
  assert.equal(oneLine.text.split("\n")[oneLine.line - 1], "    await load?.(src); // 故意错误");

  const arrow = applyLearnerPatch(withLoadExtension(ARROW_ELSE), patch);
  assert.ok(arrow.ok, arrow.ok ? "" : arrow.reason);
  assert.match(
    arrow.text,
    /\n  \} else \{\n    await opts\.importModule\?\.\(extension\); \/\/ 故意错误\n    return \{\n      id: frozen\.id,\n      status: 'skipped_untrusted',\n    \};\n  \}\n/,
  );
  assert.equal(arrow.text.split("\n")[arrow.line - 1], "    await opts.importModule?.(extension); // 故意错误");

  const inline = applyLearnerPatch(withLoadExtension(INLINE_REST), patch);
  assert.ok(inline.ok, inline.ok ? "" : inline.reason);
  assert.ok(
    inline.text.includes(
      'if (!trusted) { void frozen; await rest.importModule?.(s); /* 故意错误 */ return { id: frozen.id, status: "skipped_untrusted" as const }; }',
    ),
    "inlined before the return, its line comment turned into a block comment",
  );

  // All three compile against the chapter's real modules (one compiler run for the three).
  const dir = mkdtempSync(path.join(os.tmpdir(), "pi-placement-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(path.join(repoRoot, "packages/pi-course/src"), path.join(dir, "src"), { recursive: true });
  writeFileSync(path.join(dir, "src", "variant-one-line.ts"), oneLine.text);
  writeFileSync(path.join(dir, "src", "variant-arrow.ts"), arrow.text);
  writeFileSync(path.join(dir, "src", "variant-inline.ts"), inline.text);
  writeFileSync(path.join(dir, "package.json"), '{ "type": "module" }\n');
  writeFileSync(
    path.join(dir, "tsconfig.json"),
    JSON.stringify({ extends: path.join(repoRoot, "tsconfig.base.json"), compilerOptions: { noEmit: true }, include: ["src/*.ts"] }),
  );
  symlinkSync(path.join(repoRoot, "node_modules"), path.join(dir, "node_modules"), "junction");
  const compiler = resolveCompiler(path.join(repoRoot, "packages/pi-course"));
  const compiled = await runProcess(compiler.command, [...compiler.args, "-p", "tsconfig.json", "--pretty", "false"], { cwd: dir });
  assert.equal(compiled.code, 0, `${compiled.stdout}${compiled.stderr}`);
});

test("placement: code it cannot place is reported with the reason, and the text is left alone", async () => {
  const patch = await chapterPatch();
  const cases: [string, string, RegExp][] = [
    [
      "the untrusted value only in one branch of ?:",
      ONE_LINE.replace(
        'if ((await isTrusted(frozen)) !== true) return { id: frozen.id, status: "skipped_untrusted" };\n  const factory',
        'const trusted = (await isTrusted(frozen)) === true;\n  if (!trusted || trusted) return trusted ? { id: frozen.id, status: "active" } : { id: frozen.id, status: "skipped_untrusted" };\n  const factory',
      ),
      /条件表达式的一个分支/,
    ],
    [
      "the untrusted result built by a nested helper (its return is the helper's, not loadExtension's)",
      ONE_LINE.replace(
        'if ((await isTrusted(frozen)) !== true) return { id: frozen.id, status: "skipped_untrusted" };',
        'const skip = (): LoadExtensionResult => {\n    return { id: frozen.id, status: "skipped_untrusted" };\n  };\n  if ((await isTrusted(frozen)) !== true) return skip();',
      ),
      /没有直接返回 "skipped_untrusted" 的 return 语句/,
    ],
    [
      "options destructured without importModule",
      ONE_LINE.replace("importModule: load = importFromPath", "").replace("await load(frozen)", "await importFromPath(frozen)"),
      /没有取出 importModule/,
    ],
    [
      "a function that is not async",
      'export function loadExtension(source: ExtensionSource, options: LoadExtensionOptions): Promise<LoadExtensionResult> {\n  void options;\n  return Promise.resolve({ id: source.id, status: "skipped_untrusted" });\n}',
      /不是 async/,
    ],
    ["no function of that name", "export const somethingElse = 1;", /没有找到带函数体的 loadExtension/],
  ];
  for (const [label, replacement, reason] of cases) {
    const text = withLoadExtension(replacement);
    const result = applyLearnerPatch(text, patch);
    assert.ok(!result.ok, label);
    assert.match(result.reason, reason, label);
  }
  const broken = applyLearnerPatch("export async function loadExtension( {\n", patch);
  assert.ok(!broken.ok && /无法解析/.test(broken.reason), "a file with a syntax error");
});

test("placement: specs are parsed strictly", () => {
  assert.deepEqual(parseFunctionSpec("loadExtension(source, options)"), { name: "loadExtension", parameters: ["source", "options"] });
  assert.deepEqual(parseFunctionSpec("gate()"), { name: "gate", parameters: [] });
  for (const bad of ["loadExtension", "a(b, b)", "a(b c)", "1a(b)"]) assert.equal(parseFunctionSpec(bad), undefined, bad);
  assert.deepEqual(parseStatementSpec("return 'x'"), { kind: "return", literal: "x" });
  assert.deepEqual(parseStatementSpec("return"), { kind: "return" });
  for (const bad of ["return x", "return \"a'", "if (x)"]) assert.equal(parseStatementSpec(bad), undefined, bad);
});

test("placement: `start` puts the line first in the body, before anything reads the parameter; an expression body becomes a block", () => {
  const patch: LearnerPatch = {
    function: "userMessage(value, timestamp)",
    before: "start",
    insert: "if (!timestamp) timestamp = Date.now(); // 故意错误",
    explain: "x",
  };
  const declared = "export function userMessage(value: string, at?: number) {\n  const stamp = at ?? Date.now();\n  return { value, stamp };\n}\n";
  const placed = applyLearnerPatch(declared, patch);
  assert.ok(placed.ok, placed.ok ? "" : placed.reason);
  assert.equal(
    placed.text,
    "export function userMessage(value: string, at?: number) {\n  if (!at) at = Date.now(); // 故意错误\n  const stamp = at ?? Date.now();\n  return { value, stamp };\n}\n",
  );
  assert.equal(placed.line, 2);
  const arrow = "export const userMessage = (value: string, at?: number) => ({ value, at: at ?? Date.now() });\n";
  const placedArrow = applyLearnerPatch(arrow, patch);
  assert.ok(placedArrow.ok, placedArrow.ok ? "" : placedArrow.reason);
  assert.equal(
    placedArrow.text,
    "export const userMessage = (value: string, at?: number) => {\n  if (!at) at = Date.now(); // 故意错误\n  return ({ value, at: at ?? Date.now() });\n};\n",
  );
  assert.equal(placedArrow.line, 2);
  const oneLine = applyLearnerPatch("function userMessage(v: string, t?: number) { return { v, t: t ?? 0 }; }\n", patch);
  assert.ok(oneLine.ok, oneLine.ok ? "" : oneLine.reason);
  assert.equal(oneLine.text, "function userMessage(v: string, t?: number) {\n  if (!t) t = Date.now(); // 故意错误\n  return { v, t: t ?? 0 }; }\n");
  assert.deepEqual(parseStatementSpec("start"), { kind: "start" });
});
