// test-process: shared
/** `testing/compiler.ts`: the compiler's output read as diagnostics. */
import assert from "node:assert/strict";
import test from "node:test";
import { splitDiagnostics } from "../../src/testing/compiler.js";

test("tsc output is split into diagnostics with their continuation lines", () => {
  const output = [
    "packages/pi-course/src/a.ts(1,7): error TS2322: Type 'string' is not assignable to type 'number'.",
    "packages/pi-course/src/a.ts(2,1): error TS2345: Argument of type",
    "  'x' is not assignable.",
    "",
    "Found 2 errors in the same file.",
  ].join("\n");
  const diagnostics = splitDiagnostics(output);
  assert.equal(diagnostics.length, 2);
  assert.match(diagnostics[1] ?? "", /TS2345[\s\S]*'x' is not assignable/);
});
