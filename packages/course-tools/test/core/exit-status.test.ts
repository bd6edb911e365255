// test-process: shared
/** `core/exit-status.ts`: the exit statuses of results and of errors. */
import assert from "node:assert/strict";
import test from "node:test";
import { CourseError } from "../../src/core/errors.js";
import { exitCodeFor, inCi, resultStatus } from "../../src/core/exit-status.js";

test("exit statuses: a red result is 0 for a person, 1 with --json or in CI", () => {
  assert.equal(resultStatus(true, { json: false }, {}), 0);
  assert.equal(resultStatus(false, { json: false }, {}), 0);
  assert.equal(resultStatus(false, { json: true }, {}), 1);
  assert.equal(resultStatus(false, { json: false }, { CI: "true" }), 1);
  assert.equal(resultStatus(true, { json: true }, { CI: "1" }), 0);
  for (const off of ["", "0", "false", "FALSE"]) assert.equal(inCi({ CI: off }), false, off);
  assert.equal(inCi({}), false);
});

test("exit status: usage errors and unknown chapters 2, an interruption 130, anything else 1", () => {
  assert.equal(exitCodeFor(new CourseError("CHAPTER_UNKNOWN", "x")), 2);
  assert.equal(exitCodeFor(new CourseError("USAGE", "x")), 2);
  assert.equal(exitCodeFor(new CourseError("ABORTED", "x")), 130);
  assert.equal(exitCodeFor(new CourseError("MANIFEST_INVALID", "x")), 1);
  assert.equal(exitCodeFor(new Error("x")), 1);
});
