// test-process: shared
/** `verify/snapshot.ts`: what `verify` checks is the working tree as `git add -A` sees it. */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { describeSource } from "../../src/verify/evaluate.js";
import { cloneWorkingTree } from "../../src/verify/snapshot.js";
import { makeFakeCourse, sh } from "../support/fake-course.js";

test("the verified source is the working tree as `git add -A` sees it, and the repository is left untouched", async (t) => {
  const repo = makeFakeCourse(t);
  const scratch = mkdtempSync(path.join(os.tmpdir(), "pi-course-snapshot-"));
  t.after(() => rmSync(scratch, { recursive: true, force: true }));
  const head = sh(repo, ["rev-parse", "HEAD"]);

  const clean = await cloneWorkingTree(repo, path.join(scratch, "clean"));
  assert.deepEqual({ commit: clean.commit, head: clean.head, changed: clean.changed }, { commit: head, head, changed: [] });
  assert.equal(describeSource(clean), `HEAD ${head.slice(0, 12)}`);

  writeFileSync(path.join(repo, "LEARNING.md"), "changed, not committed\n");
  writeFileSync(path.join(repo, "notes.md"), "a new file, never added\n");
  rmSync(path.join(repo, "chapters/02-beta/beta.ts"));
  writeFileSync(path.join(repo, "build.tsbuildinfo"), "ignored by .gitignore\n");
  const untouched = () => ({
    status: sh(repo, ["status", "--porcelain"]),
    index: readFileSync(path.join(repo, ".git", "index")).toString("base64"),
    refs: sh(repo, ["for-each-ref"]),
    head: sh(repo, ["rev-parse", "HEAD"]),
  });
  const before = untouched();

  const snapshot = await cloneWorkingTree(repo, path.join(scratch, "dirty"));
  assert.equal(snapshot.head, head);
  assert.notEqual(snapshot.commit, head);
  assert.deepEqual(snapshot.changed, ["LEARNING.md", "chapters/02-beta/beta.ts", "notes.md"]);
  assert.equal(sh(snapshot.clone, ["rev-parse", "main"]), snapshot.commit);
  assert.equal(sh(snapshot.clone, ["show", "main:LEARNING.md"]), "changed, not committed");
  assert.equal(readFileSync(path.join(snapshot.clone, "notes.md"), "utf8"), "a new file, never added\n", "checked out in the clone");
  assert.equal(sh(snapshot.clone, ["ls-tree", "--name-only", "main", "build.tsbuildinfo"]), "", "ignored files stay out");
  assert.match(describeSource(snapshot), /^working tree = HEAD [0-9a-f]{12} \+ 3 uncommitted changes: LEARNING\.md, chapters\/02-beta\/beta\.ts, notes\.md$/);

  assert.deepEqual(untouched(), before, "status, index, refs and HEAD of the repository are unchanged");
  assert.throws(() => sh(repo, ["cat-file", "-e", snapshot.commit]), "the snapshot's objects live in the clone only");
});
