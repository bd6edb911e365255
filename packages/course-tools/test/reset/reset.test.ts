// test-process: shared
/** `reset/reset.ts`: a practice folder's teaching file given its starter back, the learner's file saved first. */
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import test from "node:test";
import { loadManifest } from "../../src/course/manifest.js";
import { runLab } from "../../src/testing/labs.js";
import { BACKUP_DIR, sha256, writeBackupSync } from "../../src/practice/backup.js";
import { resetTeachingFiles } from "../../src/reset/reset.js";
import { formatReset } from "../../src/reset.js";
import { makeMiniCourse, MINI_FILE, MINI_STARTER as STARTER } from "../support/fault-fixture.js";
import { runCommand } from "../support/tooling.js";

/** The learner's finished file: its own helper and extra function, no labError any more. */
const SOLVED = `/** My chapter 98. */
export interface Loader {
  trust(): boolean;
  load(): void;
}

const TWICE = 2;

export function double(n: number): number {
  return n * TWICE;
}

export function gate(loader: Loader): "loaded" | "skipped" {
  if (!loader.trust()) return "skipped";
  loader.load();
  return "loaded";
}

export function mine(): string {
  return "kept";
}
`;

const NOW = new Date(2026, 10, 30, 14, 22, 33);

const COPY = `.pi-course/starter/${MINI_FILE}`;

async function practice(t: Parameters<typeof makeMiniCourse>[0], source = SOLVED) {
  const root = await makeMiniCourse(t, { practice: true, source });
  await mkdir(path.dirname(path.join(root, COPY)), { recursive: true });
  await writeFile(path.join(root, COPY), STARTER);
  return { root, manifest: await loadManifest(root, "98"), file: path.join(root, MINI_FILE) };
}

test("reset of a lab puts back that lab's starter declarations, keeps the rest, saves the old file, and compiles", async (t) => {
  const { root, manifest, file } = await practice(t);
  const [result] = resetTeachingFiles({ root, manifest, lab: "98.2", now: NOW });
  assert.equal(result?.status, "restored");
  assert.equal(result?.savedAs, `${MINI_FILE}.reset-20261130-142233.bak`);
  assert.deepEqual(result?.declarations, ["gate", "labError"]);
  assert.equal(await readFile(path.join(root, result!.savedAs!), "utf8"), SOLVED, "the learner's file, whole, beside it");
  const text = await readFile(file, "utf8");
  assert.ok(
    text.includes(
      '/** Loads what the loader holds, only when it is trusted. */\nexport function gate(loader: Loader): "loaded" | "skipped" {\n  // 🔨 Lab 98.2',
    ),
    "the starter's gate, its doc comment and marker with it",
  );
  for (const kept of ["/** My chapter 98. */", "const TWICE = 2;", "return n * TWICE;", 'return "kept";']) assert.ok(text.includes(kept), kept);
  // The result builds: Lab 98.2 is back on its own scaffold, Lab 98.1 still green.
  const outcome = await runLab(root, manifest, { chapter: "98", lab: "98.2" });
  assert.ok(outcome.kind === "tested", outcome.kind);
  assert.deepEqual([outcome.labs[0]?.status, outcome.labs[0]?.firstFailure?.message], ["not_started", "Lab 98.2 trust gate 尚未实现"]);
  assert.deepEqual(
    outcome.earlier.map((lab) => lab.status),
    ["passed"],
  );
  assert.match(formatReset([result!], { chapter: "98", lab: "98.2" }), /你原来的文件保存在 packages\/pi-course\/src\/mini\.ts\.reset-20261130-142233\.bak/);
});

test("reset of a lab matches the learner's declaration by name whatever its shape, and refuses a result that would not compile", async (t) => {
  // The learner wrote Lab 98.1 as an arrow function with an extra parameter, used elsewhere.
  const reshaped = SOLVED.replace(
    "export function double(n: number): number {\n  return n * TWICE;\n}",
    "export const double = (n: number, by = TWICE): number => n * by;",
  );
  const { root, manifest, file } = await practice(t, reshaped);
  const [result] = resetTeachingFiles({ root, manifest, lab: "98.1", now: NOW });
  assert.deepEqual(result?.declarations, ["double", "labError"]);
  const text = await readFile(file, "utf8");
  assert.equal(text.match(/\bdouble\b/g)?.length, 1, "one double, the starter's, where the learner's stood");
  assert.ok(text.includes('throw labError("Lab 98.1 doubling");'));
  assert.ok(text.includes("export function mine()"), "the learner's other code stays");

  // Now the learner's own code calls double with the extra argument: the starter's double
  // would not compile there, so the lab reset is refused and nothing is written.
  const calling = reshaped.replace('return "kept";', "return String(double(1, 3));");
  await writeFile(file, calling);
  const saved = readdirSync(path.dirname(file)).length;
  assert.throws(
    () => resetTeachingFiles({ root, manifest, lab: "98.1", now: NOW }),
    (error: Error & { code?: string }) => {
      assert.equal(error.code, "RESET_LAB_BREAKS_BUILD");
      assert.match(error.message, /src\/mini\.ts:\d+: Expected 1 arguments, but got 2/);
      assert.match(error.message, /reset -w @pi\/course -- 98/);
      return true;
    },
  );
  assert.equal(await readFile(file, "utf8"), calling);
  assert.equal(readdirSync(path.dirname(file)).length, saved, "no backup written for a refused reset");
});

test("reset of the chapter gives the starter back; a second reset in the same second saves under a new name", async (t) => {
  const { root, manifest, file } = await practice(t);
  const [first] = resetTeachingFiles({ root, manifest, now: NOW });
  assert.equal(await readFile(file, "utf8"), STARTER);
  assert.equal(first?.savedAs, `${MINI_FILE}.reset-20261130-142233.bak`);
  // Already the starter: nothing to do, nothing saved.
  assert.deepEqual(resetTeachingFiles({ root, manifest, now: NOW }), [{ file: MINI_FILE, status: "unchanged" }]);
  await writeFile(file, "// something else\n");
  const [second] = resetTeachingFiles({ root, manifest, now: NOW });
  assert.equal(second?.savedAs, `${MINI_FILE}.reset-20261130-142233-2.bak`);
  assert.equal(await readFile(path.join(root, first!.savedAs!), "utf8"), SOLVED, "the first backup is never overwritten");
  // A deleted file is simply restored; there was nothing to save.
  await rm(file);
  assert.deepEqual(resetTeachingFiles({ root, manifest, now: NOW }), [{ file: MINI_FILE, status: "restored" }]);
  assert.equal(await readFile(file, "utf8"), STARTER);
  assert.deepEqual(
    readdirSync(path.dirname(file)).filter((name) => name.includes(".pi-course-")),
    [],
    "no temporary file left",
  );
});

test("reset 98 as a learner runs it: the starter and its scaffold errors are back, and the learner's file is kept beside it", async (t) => {
  // (Until this round the same run was made on the real chapter 12, in packages/course-tools/test/chapter12-loop.test.ts.)
  const { root, manifest, file } = await practice(t);
  const reset = await runCommand(root, "reset", ["98"], { env: { NO_COLOR: "1" } });
  assert.equal(reset.code, 0, reset.stderr);
  const saved = /你原来的文件保存在 (\S+)/.exec(reset.stdout)?.[1];
  assert.ok(saved !== undefined, reset.stdout);
  assert.equal(await readFile(path.join(root, saved), "utf8"), SOLVED, "the learner's work, kept beside the file");
  assert.equal(await readFile(file, "utf8"), STARTER);
  const outcome = await runLab(root, manifest, { chapter: "98", lab: "98.1" });
  assert.ok(outcome.kind === "tested");
  assert.deepEqual([outcome.labs[0]?.status, outcome.labs[0]?.firstFailure?.message], ["not_started", "Lab 98.1 doubling 尚未实现"]);
});

test("reset refuses outside a practice folder, for another chapter, with an unreadable marker, without a starter copy, and leaves the file alone", async (t) => {
  const repo = await makeMiniCourse(t, { source: SOLVED });
  await assert.rejects(async () => resetTeachingFiles({ root: repo, manifest: await loadManifest(repo, "98") }), { code: "RESET_NOT_PRACTICE" });
  assert.equal(await readFile(path.join(repo, MINI_FILE), "utf8"), SOLVED);

  const { root, manifest, file } = await practice(t);
  await writeFile(path.join(root, ".pi-course/practice.json"), JSON.stringify({ chapter: "12" }));
  assert.throws(() => resetTeachingFiles({ root, manifest }), { code: "RESET_OTHER_CHAPTER" });
  await writeFile(path.join(root, ".pi-course/practice.json"), "{not json");
  assert.throws(() => resetTeachingFiles({ root, manifest }), { code: "RESET_MARKER_INVALID" });
  await writeFile(path.join(root, ".pi-course/practice.json"), JSON.stringify({ chapter: "98" }));
  // A fault exercise in progress: its restore would find the file changed.
  const original = await readFile(file);
  writeBackupSync(
    root,
    { format: 1, fault: "98.2-x", file: MINI_FILE, sha256: sha256(original), patchedSha256: sha256(original), pid: process.ppid, startedAt: "" },
    original,
  );
  assert.throws(() => resetTeachingFiles({ root, manifest }), { code: "RESET_FAULT_PENDING" });
  await rm(path.join(root, BACKUP_DIR), { recursive: true });
  await rm(path.join(root, COPY));
  assert.throws(() => resetTeachingFiles({ root, manifest }), { code: "RESET_NO_STARTER" });
  assert.equal(await readFile(file, "utf8"), SOLVED);
});

test("a lab reset of a file with a syntax error, or of a missing file, is refused with what to do instead", async (t) => {
  const broken = "export function double(n: number): number {\n  return n *;\n";
  const { root, manifest, file } = await practice(t, broken);
  assert.throws(
    () => resetTeachingFiles({ root, manifest, lab: "98.1" }),
    (error: Error & { code?: string }) => {
      assert.equal(error.code, "RESET_UNPARSABLE");
      assert.match(error.message, /reset 98/);
      return true;
    },
  );
  assert.equal(await readFile(file, "utf8"), broken);
  assert.ok(!readdirSync(path.dirname(file)).some((name) => name.endsWith(".bak")), "nothing saved when nothing changed");
  await rm(file);
  assert.throws(() => resetTeachingFiles({ root, manifest, lab: "98.1" }), { code: "RESET_NO_FILE" });
  assert.ok(!existsSync(file));
});
