// test-process: shared
/** `course/git.ts`: questions answered without touching the user's index. */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { hasUncommittedChanges } from "../../src/course/git.js";
import { makeFakeCourse } from "../support/fake-course.js";

test("hasUncommittedChanges (checkpoint and verify) answers without rewriting a stale index", async (t) => {
  const repo = makeFakeCourse(t);
  const index = path.join(repo, ".git", "index");
  // Same content, new mtime: a plain `git status` would refresh the index and write it back.
  const tracked = path.join(repo, "packages/pi-course/src/beta.ts");
  const past = new Date(Date.now() - 3_600_000);
  utimesSync(tracked, past, past);
  const before = createHash("sha256").update(readFileSync(index)).digest("hex");
  assert.equal(await hasUncommittedChanges(repo), false);
  writeFileSync(tracked, "// half-written\n");
  assert.equal(await hasUncommittedChanges(repo), true);
  assert.equal(createHash("sha256").update(readFileSync(index)).digest("hex"), before);
});
