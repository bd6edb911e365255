// test-process: shared
/** `practice/backup.ts`: the fault exercise's backup of the learner's file. */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import test from "node:test";
import { BACKUP_DIR, recoverFaultBackup, sha256, writeBackupSync } from "../../src/practice/backup.js";
import { processStart } from "../../src/core/scratch.js";
import { MINI_FILE } from "../support/fault-fixture.js";
import { LEARNER_SOLUTION, practiceFolder } from "../support/fault-fixture.js";

// Author mode on the mini chapter

test("a backup write that fails leaves no temporary file behind", async (t) => {
  const root = await practiceFolder(t);
  const dir = path.join(root, ...BACKUP_DIR.split("/"));
  // A non-empty folder where the backup's `original` goes: the rename onto it fails.
  await mkdir(path.join(dir, "original", "occupied"), { recursive: true });
  const original = await readFile(path.join(root, MINI_FILE));
  const state = {
    format: 1 as const,
    fault: "98.2-x",
    file: MINI_FILE,
    sha256: sha256(original),
    patchedSha256: sha256(original),
    pid: process.pid,
    startedAt: "",
  };
  assert.throws(() => writeBackupSync(root, state, original));
  assert.deepEqual((await readdir(dir)).sort(), ["original"]);
});

test("recovery never overwrites a file edited after the crash, and refuses while the writer lives", async (t) => {
  const root = await practiceFolder(t, LEARNER_SOLUTION);
  const file = path.join(root, MINI_FILE);
  const original = await readFile(file);
  const state = {
    format: 1 as const,
    fault: "98.2-load-untrusted",
    file: MINI_FILE,
    sha256: sha256(original),
    patchedSha256: sha256(Buffer.from("patched")),
    startedAt: "",
  };

  writeBackupSync(root, { ...state, pid: process.ppid, start: processStart(process.ppid) }, original);
  await writeFile(file, "patched");
  assert.throws(() => recoverFaultBackup(root), { code: "FAULT_BUSY" }, "the parent process is alive");
  // The same pid, now owned by a process that started at another time, is not the writer.
  const parentStart = processStart(process.ppid);
  if (parentStart !== null) {
    await writeFile(path.join(root, BACKUP_DIR, "state.json"), JSON.stringify({ ...state, pid: process.ppid, start: `${parentStart}0` }));
    assert.equal(recoverFaultBackup(root).kind, "restored", "a reused pid does not block the restore");
    writeBackupSync(root, { ...state, pid: process.ppid, start: parentStart }, original);
    await writeFile(file, "patched");
  }

  await writeFile(path.join(root, BACKUP_DIR, "state.json"), JSON.stringify({ ...state, pid: 2 ** 30 }));
  await writeFile(file, "edited by the learner after the crash");
  assert.throws(() => recoverFaultBackup(root), { code: "FAULT_BACKUP_CONFLICT" });
  assert.equal(await readFile(file, "utf8"), "edited by the learner after the crash");
  assert.ok(existsSync(path.join(root, BACKUP_DIR, "original")), "the backup is kept");

  await writeFile(file, "patched");
  assert.equal(recoverFaultBackup(root).kind, "restored");
  assert.deepEqual(await readFile(file), original);
});
