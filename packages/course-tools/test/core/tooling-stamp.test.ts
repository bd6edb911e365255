// test-process: shared
/** `core/tooling-stamp.mjs`: the stamp of the tooling sources, and where the tooling tests' build of them is kept. */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { TEST_TOOLING_BUILD } from "../../src/core/paths.js";
import { testToolingBuild, toolingStamp } from "../../src/core/tooling-stamp.mjs";

test("a test source changes the tests' build folder, not the launcher's stamp; the folder is below .pi-course/test-tooling", (t) => {
  const root = mkdtempSync(path.join(os.tmpdir(), "pi-stamp-"));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(path.join(root, "scripts", "test"), { recursive: true });
  writeFileSync(path.join(root, "tsconfig.base.json"), "{}\n");
  writeFileSync(path.join(root, "scripts", "cli.ts"), "export {};\n");
  writeFileSync(path.join(root, "scripts", "test", "x.test.ts"), "// one\n");
  const stamp = toolingStamp(root);
  const build = testToolingBuild(root);
  assert.equal(path.relative(root, path.dirname(build)).split(path.sep).join("/"), TEST_TOOLING_BUILD);
  assert.match(path.basename(build), /^[0-9a-f]{16}$/);

  writeFileSync(path.join(root, "scripts", "test", "x.test.ts"), "// two\n");
  assert.equal(toolingStamp(root), stamp, "the launcher's build does not hold the tests");
  assert.notEqual(testToolingBuild(root), build, "the tests' build does");

  writeFileSync(path.join(root, "scripts", "cli.ts"), "export const edited = 1;\n");
  assert.notEqual(toolingStamp(root), stamp);
});
