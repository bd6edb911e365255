/**
 * Scratch folders: every temporary folder the tooling makes is removed however the work
 * ends, and the last-resort exit path removes what is left without touching folders that
 * were handed over.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import {
  currentOwner,
  handOverScratchDir,
  linkNodeModules,
  makeScratchDir,
  OWNER_FILE,
  processAlive,
  processStart,
  releaseScratchDir,
  removeAllScratchSync,
  removeScratchDir,
  SCRATCH_JOURNALS,
  sweepStaleScratch,
  useJournalRoot,
  withScratchDir,
  type ScratchOwner,
} from "../../src/core/scratch.js";
import { courseRoot } from "../../src/core/paths.js";

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
  await assert.rejects(
    withScratchDir(parent, "fail-", async (dir) => {
      await writeFile(path.join(dir, "f"), "x");
      throw new Error("boom");
    }),
    /boom/,
  );
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

test("a scratch folder carries its owner; handing it over or releasing it removes the owner file; the journal follows", async (t) => {
  const parent = await parentDir(t);
  useJournalRoot(parent);
  t.after(() => useJournalRoot(courseRoot));
  const journalDir = path.join(parent, ...SCRATCH_JOURNALS.split("/"));
  const dir = await makeScratchDir(parent, "work-");
  assert.deepEqual(JSON.parse(readFileSync(path.join(dir, OWNER_FILE), "utf8")), currentOwner());
  assert.equal(readdirSync(journalDir).length, 1, "the journal says where this process makes folders");
  const other = await makeScratchDir(parent, "other-");
  await handOverScratchDir(dir, path.join(parent, "done"));
  assert.deepEqual(readdirSync(path.join(parent, "done")), [], "handed over without its owner file");
  releaseScratchDir(other);
  assert.equal(existsSync(path.join(other, OWNER_FILE)), false);
  assert.deepEqual(readdirSync(journalDir), [], "nothing left to journal");
});

/** A process id that is free now: that of a child that has already ended. */
function freePid(): number {
  return spawnSync(process.execPath, ["-e", "0"]).pid!;
}

test("sweepStaleScratch removes what a gone process provably left, and nothing it cannot prove", async (t) => {
  const parent = await parentDir(t);
  useJournalRoot(parent);
  t.after(() => useJournalRoot(courseRoot));
  const journalDir = path.join(parent, ...SCRATCH_JOURNALS.split("/"));
  mkdirSync(journalDir, { recursive: true });
  const owner = (pid: number, start: string | null): ScratchOwner => ({ tool: "pi-course", format: 1, host: currentOwner().host, pid, start });
  const gone = owner(freePid(), "1");
  const folder = (name: string, marker?: ScratchOwner): string => {
    const dir = path.join(parent, name);
    mkdirSync(dir);
    if (marker) writeFileSync(path.join(dir, OWNER_FILE), JSON.stringify(marker));
    return dir;
  };
  const left = folder(".p.partial-a", gone);
  const unmarked = folder(".p.partial-b");
  const foreign = folder(".p.partial-c", { ...gone, pid: gone.pid + 1 });
  const otherPlace = folder("elsewhere-a", gone);
  const parentStart = processStart(process.ppid);
  const reused = owner(process.ppid, parentStart === null ? null : `${parentStart}0`); // the id now belongs to a newer process
  const living = owner(process.ppid, parentStart);
  const reusedLeft = folder("reused-a", reused);
  const livingLeft = folder("living-a", living);
  const journal = (who: ScratchOwner, prefix: string) =>
    writeFileSync(path.join(journalDir, `${who.pid}-${who.start}.json`), JSON.stringify({ owner: who, places: [{ parent, prefix }] }));
  journal(gone, ".p.partial-");
  journal(reused.start === null ? gone : reused, "reused-");
  writeFileSync(path.join(journalDir, `${living.pid}-live.json`), JSON.stringify({ owner: living, places: [{ parent, prefix: "living-" }] }));

  const removed = sweepStaleScratch();
  assert.ok(removed.includes(left));
  assert.equal(existsSync(left), false);
  for (const kept of [unmarked, foreign, otherPlace, livingLeft]) assert.equal(existsSync(kept), true, kept);
  if (parentStart !== null) assert.equal(existsSync(reusedLeft), false, "a reused process id is no owner");
  assert.deepEqual(readdirSync(journalDir), [`${living.pid}-live.json`], "the journals of gone processes go, a running one's stays");
});

test("a scratch folder never exists without its owner file, not even before makeScratchDir's promise settles", async (t) => {
  const parent = await parentDir(t);
  const made = makeScratchDir(parent, "sync-");
  // Whatever ends the process from here on (an exception, process.exit, a second signal),
  // the folder on disk already proves whose it is.
  const [name] = readdirSync(parent);
  assert.ok(name !== undefined, "the folder is made before the call returns");
  assert.deepEqual(JSON.parse(readFileSync(path.join(parent, name, OWNER_FILE), "utf8")), currentOwner());
  assert.equal(await made, path.join(parent, name));
  await removeScratchDir(path.join(parent, name));
});

test("a zombie (ended, not reaped) is not alive: a killed command's leftovers are its to clear", {
  skip: process.platform !== "linux" && "zombies are read from /proc",
}, async (t) => {
  // `sh` starts a short `sleep` in the background, then becomes a long `sleep`, which never
  // reaps it: the short one, still running when `sh` is replaced, ends as a zombie.
  const parent = spawn("sh", ["-c", "sleep 0.5 & echo $!; exec sleep 5"], { stdio: ["ignore", "pipe", "ignore"] });
  t.after(() => parent.kill("SIGKILL"));
  const pid = Number((await once(parent.stdout!, "data"))[0].toString().trim());
  for (let i = 0; i < 300 && !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z "); i++) await new Promise((r) => setTimeout(r, 10));
  assert.match(readFileSync(`/proc/${pid}/stat`, "utf8"), /\) Z /, "the background child is a zombie now");
  assert.equal(processAlive(pid), false);
  assert.equal(processAlive(parent.pid!), true);
});
