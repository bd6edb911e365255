// test-process: shared
/** `core/paths.ts`: where compiled files are, derived per package, without globs. */
import assert from "node:assert/strict";
import test from "node:test";
import { distPathOf } from "../../src/core/paths.js";

test("compiled test paths are derived per package, without globs", () => {
  assert.equal(distPathOf("packages/pi-course/test/12-resources-extensions.test.ts"), "packages/pi-course/dist/test/12-resources-extensions.test.js");
  assert.equal(distPathOf("packages/other/test/a.test.mts"), "packages/other/dist/test/a.test.mjs");
  assert.throws(() => distPathOf("test/loose.test.ts"), { code: "MANIFEST_INVALID" });
});
