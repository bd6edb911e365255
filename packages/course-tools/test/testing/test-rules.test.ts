// test-process: shared
/** `testing/test-rules.ts`: the rules a test checks, read from its source, for failures that name none. */
import assert from "node:assert/strict";
import { rmSync, writeFileSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { rulesOfTest, withTestRules } from "../../src/testing/test-rules.js";

const SOURCE = [
  'import test from "node:test";',
  "",
  'test("Lab 1.1 · first", async () => {',
  '  const made = make("x"); // outside every check',
  '  await rule("§C1.1：规则一", () => check(made));',
  "  await rule(`§C1.2：规则二`, () => check(made));",
  '  await rule("§C1.1：规则一", () => check(made, 2));',
  "  await rule(dynamic, () => check(made));",
  "});",
  "",
  'test("Lab 1.2 · second", (t) => {',
  '  t.test("nested", () => rule("§C2.1：嵌套里的规则", () => {}));',
  "});",
  "",
  'test("Lab 1.3 · none", () => {});',
].join("\n");

test("a test's rules are its literal rule() statements, each once, in source order; chosen by line, else by name", () => {
  assert.deepEqual(rulesOfTest(SOURCE, { line: 3 }), ["§C1.1：规则一", "§C1.2：规则二"]);
  assert.deepEqual(rulesOfTest(SOURCE, { name: "Lab 1.2 · second" }), ["§C2.1：嵌套里的规则"]);
  assert.deepEqual(
    rulesOfTest(SOURCE, { line: 12, name: "Lab 1.1 · first" }),
    ["§C1.1：规则一", "§C1.2：规则二"],
    "a subtest's line is no test( call: the name decides",
  );
  assert.deepEqual(rulesOfTest(SOURCE, { name: "Lab 1.3 · none" }), []);
  assert.deepEqual(rulesOfTest(SOURCE, { name: "no such test" }), []);
});

test("a failure that names no rule gets its test's rules; one that names its rule, or is a scaffold error, is left alone", (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "pi-test-rules-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, "01-x.test.ts");
  writeFileSync(file, SOURCE);
  const bare = { test: "Lab 1.1 · first", message: "TypeError: boom", testFile: file, testLine: 3 };
  assert.deepEqual(withTestRules(bare).rules, ["§C1.1：规则一", "§C1.2：规则二"]);
  const hung = { test: "Lab 1.2 · second › nested", message: "超过时间上限", timedOut: true };
  assert.deepEqual(withTestRules(hung, [path.join(dir, "missing.test.ts"), file]).rules, ["§C2.1：嵌套里的规则"], "found by name in the lab's test files");
  const named = { ...bare, message: "§C1.1：规则一\nexpected 1" };
  assert.equal(withTestRules(named), named);
  const scaffold = { ...bare, message: "Lab 1.1 x 尚未实现", scaffoldOf: "1.1" };
  assert.equal(withTestRules(scaffold), scaffold);
  const unreadable = { ...bare, testFile: path.join(dir, "gone.test.ts") };
  assert.equal(withTestRules(unreadable), unreadable, "a source that cannot be read leaves the failure as it is");
});
