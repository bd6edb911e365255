// test-process: shared
/**
 * `testing/tests.ts`: a lab run's temporary folder is a scratch folder like every other; a
 * stuck run is described with its location relative to where the command was typed.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { describeStuck, LAB_SCRATCH_PREFIX, makeLabScratch } from "../../src/testing/tests.js";
import { currentOwner, OWNER_FILE, removeScratchDir, SCRATCH_JOURNALS, sweepStaleScratch, useJournalRoot } from "../../src/core/scratch.js";
import { repoRoot } from "../support/lab-fixture.js";

test("a lab run's temp folder is a scratch folder of this process: owned, journaled, so a killed run's is swept by the next command", async (t) => {
  const parent = await mkdtemp(path.join(os.tmpdir(), "pi-stale-"));
  t.after(() => rm(parent, { recursive: true, force: true }));
  useJournalRoot(parent);
  t.after(() => useJournalRoot(repoRoot));
  const mine = await makeLabScratch(parent);
  assert.match(path.basename(mine), new RegExp(`^${LAB_SCRATCH_PREFIX}${process.pid}-`));
  assert.deepEqual(JSON.parse(readFileSync(path.join(mine, OWNER_FILE), "utf8")), currentOwner());
  const journals = readdirSync(path.join(parent, ...SCRATCH_JOURNALS.split("/")));
  assert.equal(journals.length, 1);
  assert.match(readFileSync(path.join(parent, ...SCRATCH_JOURNALS.split("/"), journals[0]!), "utf8"), new RegExp(LAB_SCRATCH_PREFIX));
  assert.deepEqual(sweepStaleScratch(), [], "this process is alive: its folder stays");
  assert.equal(existsSync(mine), true);
  await removeScratchDir(mine);
});

test("where a stuck run was is path:line:col relative to where the command was typed, skipping frames outside the course", () => {
  const root = path.join(path.sep, "course");
  const frames = [
    { functionName: "", file: path.join(root, "node_modules", "x", "index.js"), line: 1, column: 1 },
    { functionName: "discoverResources", file: path.join(root, "packages", "pi-course", "src", "resources.ts"), line: 204, column: 11 },
  ];
  const stuck = { seconds: 3, test: ["Lab 12.1 · x"], frames };
  assert.equal(describeStuck(stuck, root), "测试 “Lab 12.1 · x”里，正在执行 discoverResources（packages/pi-course/src/resources.ts:204:11）");
  assert.equal(
    describeStuck(stuck, root, path.join(root, "packages", "pi-course")),
    "测试 “Lab 12.1 · x”里，正在执行 discoverResources（src/resources.ts:204:11）",
  );
});
