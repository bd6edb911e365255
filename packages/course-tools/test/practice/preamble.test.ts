// test-process: shared
/**
 * `practice/preamble.ts`: what every learner command says and does first: that the repo is
 * the reference, and the restore of a fault exercise that was killed.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import test from "node:test";
import { BACKUP_DIR, sha256, writeBackupSync } from "../../src/practice/backup.js";
import { learnerPreamble } from "../../src/practice/preamble.js";
import { createMiniCourse, removeMiniCourse } from "../support/lab-fixture.js";

test("learner commands say first that the repo is the reference, and restore a fault exercise that was killed", async (t) => {
  const course = await createMiniCourse("reference", { practice: false });
  t.after(() => removeMiniCourse(course));
  const [notice] = learnerPreamble(course.root, "99");
  assert.match(notice ?? "", /^注意：这里是课程仓库本身（参考实现，代码已是答案），不是练习目录。[^\n]*npm run practice -w @pi\/course -- 99 <新目录>$/);

  const practice = await createMiniCourse("reference", { practice: true });
  t.after(() => removeMiniCourse(practice));
  assert.deepEqual(learnerPreamble(practice.root, "99"), [], "nothing to say in a clean practice folder");
  const file = path.join(practice.root, "packages/pi-course/src/mini.ts");
  const original = await readFile(file);
  const patched = Buffer.from(`${original.toString("utf8")}// injected\n`);
  const state = {
    format: 1 as const,
    fault: "99.1-x",
    file: "packages/pi-course/src/mini.ts",
    sha256: sha256(original),
    patchedSha256: sha256(patched),
    startedAt: "",
  };
  // A fault run still going on (its process lives): only a note, nothing touched.
  writeBackupSync(practice.root, { ...state, pid: process.ppid }, original);
  await writeFile(file, patched);
  assert.match(learnerPreamble(practice.root, "99")[0] ?? "", /正在进行/);
  assert.deepEqual(await readFile(file), patched);
  // Killed outright (its process is gone): restored, and said so.
  await writeFile(path.join(practice.root, BACKUP_DIR, "state.json"), JSON.stringify({ ...state, pid: 1073741824 }));
  assert.match(learnerPreamble(practice.root, "99")[0] ?? "", /被强行中断.*已从 \.pi-course\/fault-backup 把它逐字节恢复/);
  assert.deepEqual(await readFile(file), original);
  assert.ok(!existsSync(path.join(practice.root, BACKUP_DIR)));
});
