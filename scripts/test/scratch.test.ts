/**
 * Scratch folders: every temporary folder the tooling makes is removed however the work
 * ends, and the last-resort exit path removes what is left without touching folders that
 * were handed over.
 */
import assert from "node:assert/strict";
import { existsSync, lstatSync, readdirSync, readlinkSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { linkNodeModules, makeScratchDir, releaseScratchDir, removeAllScratchSync, removeScratchDir, withScratchDir } from "../lib/core/scratch.js";

async function parentDir(t: test.TestContext): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "pi-scratch-test-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test("withScratchDir removes its folder when the work resolves and when it throws", async (t) => {
  const parent = await parentDir(t);
  let seen = "";
  assert.equal(await withScratchDir(parent, "ok-", async (dir) => ((seen = dir), await writeFile(path.join(dir, "f"), "x"), 7)), 7);
  assert.ok(seen.startsWith(path.join(parent, "ok-")));
  await assert.rejects(withScratchDir(parent, "fail-", async (dir) => {
    await writeFile(path.join(dir, "f"), "x");
    throw new Error("boom");
  }), /boom/);
  assert.deepEqual(readdirSync(parent), []);
});

test("removeAllScratchSync removes what is still registered and leaves released folders alone", async (t) => {
  const parent = await parentDir(t);
  const left = await makeScratchDir(parent, "left-");
  const handedOver = await makeScratchDir(parent, "kept-");
  const removed = await makeScratchDir(parent, "removed-");
  releaseScratchDir(handedOver);
  await removeScratchDir(removed);
  removeAllScratchSync();
  assert.equal(existsSync(left), false);
  assert.equal(existsSync(handedOver), true);
  assert.equal(existsSync(removed), false);
});

test("linkNodeModules links to an absolute target even when given a relative path", async (t) => {
  const parent = await parentDir(t);
  const relative = path.relative(process.cwd(), path.join(parent, "modules"));
  await linkNodeModules(parent, relative);
  const link = path.join(parent, "node_modules");
  assert.ok(lstatSync(link).isSymbolicLink());
  assert.equal(path.resolve(parent, readlinkSync(link)), path.join(parent, "modules"));
});
