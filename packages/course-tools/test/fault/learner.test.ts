/**
 * `fault/learner.ts`: the fault exercise on the learner's own file, which is given back byte
 * for byte however the run ends.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { BACKUP_DIR, sha256 } from "../../src/practice/backup.js";
import { runLearnerFault } from "../../src/fault/learner.js";
import { learnerFaults, learnerManifestText } from "../../src/course/faults.js";
import { loadManifest } from "../../src/course/manifest.js";
import { childHelper } from "../support/tooling.js";
import { MINI_FAULTS, MINI_FILE, MINI_STARTER, makeMiniCourse, miniManifest, repoRoot } from "../support/fault-fixture.js";
import { processesLeft, waitForEntry } from "../support/leftover-probe.js";
import { LEARNER_SOLUTION, manifestOf, practiceFolder } from "../support/fault-fixture.js";

// Author mode on the mini chapter

async function learnerRun(root: string, afterPatch?: () => void | Promise<void>) {
  const manifest = await loadManifest(root, "98");
  const [exercise] = learnerFaults(manifest);
  return runLearnerFault({ root, manifest, fault: exercise!, ...(afterPatch ? { afterPatch } : {}) });
}

test("learner mode: code the exercise cannot place changes nothing and explains the manual edit", async (t) => {
  // A correct solution whose untrusted result is one branch of ?: — there is no statement to put the line before.
  const ternary = LEARNER_SOLUTION.replace(
    /export function gate[\s\S]*$/,
    'export function gate(loader: Loader): "loaded" | "skipped" {\n  return loader.trust() !== true ? "skipped" : (loader.load(), "loaded");\n}\n',
  );
  const root = await practiceFolder(t, ternary);
  const before = await readFile(path.join(root, MINI_FILE));
  const result = await learnerRun(root);
  assert.equal(result.status, "manual");
  assert.match(result.manualReason ?? "", /条件表达式的一个分支/);
  assert.deepEqual(await readFile(path.join(root, MINI_FILE)), before);
});

test("learner mode: a lab that is not green yet is not experimented on", async (t) => {
  for (const [label, source, before] of [
    ["the starter (which has no line for the anchor either)", MINI_STARTER, { passed: 0, total: 2 }],
    ["a half-done lab", LEARNER_SOLUTION.replace("  loader.load();\n", ""), { passed: 1, total: 2 }],
  ] as const) {
    const root = await practiceFolder(t, source);
    const original = await readFile(path.join(root, MINI_FILE));
    const result = await learnerRun(root);
    assert.equal(result.status, "not_ready", label);
    assert.deepEqual(result.before, before, label);
    assert.deepEqual(await readFile(path.join(root, MINI_FILE)), original, label);
  }
});

test("learner mode: a line landing in code the tests never reach survives, and is still restored", async (t) => {
  // The real untrusted path returns a constant; the only literal return is unreachable.
  const dead = LEARNER_SOLUTION.replace("      return 'skipped';", "      return SKIPPED;")
    .replace("  loader.load();\n", '  if (Number.isNaN(1)) return "skipped";\n  loader.load();\n')
    .replace("export function gate", 'const SKIPPED = "skipped";\nexport function gate');
  const root = await practiceFolder(t, dead);
  const before = await readFile(path.join(root, MINI_FILE));
  const result = await learnerRun(root);
  assert.equal(result.status, "survived");
  assert.deepEqual(result.caughtBy, []);
  assert.deepEqual(await readFile(path.join(root, MINI_FILE)), before);
});

test("learner mode: an inserted line that does not compile is reported and undone", async (t) => {
  // A catalog line that calls what the contract does not have cannot compile in any solution.
  const faults = MINI_FAULTS.replace('insert: "loader.load(); // 故意错误"', 'insert: "loader.unload(); // 故意错误"');
  const manifest = learnerManifestText(miniManifest(faults), manifestOf(miniManifest(faults)));
  const root = await makeMiniCourse(t, { practice: true, manifest, source: LEARNER_SOLUTION.replace(/loader/g, "source") });
  const before = await readFile(path.join(root, MINI_FILE));
  const result = await learnerRun(root);
  assert.equal(result.status, "build_failed");
  assert.deepEqual(await readFile(path.join(root, MINI_FILE)), before);
});

test("learner mode: an exception thrown between patch and restore still restores the file", async (t) => {
  const root = await practiceFolder(t, LEARNER_SOLUTION);
  const before = await readFile(path.join(root, MINI_FILE));
  await assert.rejects(
    learnerRun(root, () => {
      throw new Error("boom");
    }),
    /boom/,
  );
  assert.deepEqual(await readFile(path.join(root, MINI_FILE)), before);
  assert.ok(!existsSync(path.join(root, BACKUP_DIR)));
});

/** Starts the child runner; resolves once it printed PATCHED. */
function startChild(root: string, mode: "hang" | "throw" | "run", env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, [childHelper("fault"), root, "98", mode], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal })),
  );
  const patched = new Promise<void>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("PATCHED")) resolve();
    });
    void exited.then(() => reject(new Error(`child exited before patching: ${stderr}`)));
  });
  return { child, patched, exited, stderr: () => stderr };
}

// The next run after the SIGKILL is a whole exercise on the learner's restored file: the one run that shows both
// that a crash's backup is restored first and that the exercise is caught by its test and the file restored byte for byte.
test("learner mode: SIGKILL between patch and restore leaves a backup that the next run restores; that run's exercise is caught by its test and the learner's file is restored byte for byte", async (t) => {
  const root = await practiceFolder(t, LEARNER_SOLUTION);
  const file = path.join(root, MINI_FILE);
  const before = await readFile(file);
  const run = startChild(root, "hang");
  await run.patched;
  run.child.kill("SIGKILL");
  assert.equal((await run.exited).signal, "SIGKILL");
  assert.notDeepEqual(await readFile(file), before, "the crash left the fault in place");
  const state = JSON.parse(await readFile(path.join(root, BACKUP_DIR, "state.json"), "utf8")) as { sha256: string };
  assert.equal(state.sha256, sha256(before));

  // The next run restores first, says so, and then does its own experiment.
  let patchedText = "";
  const result = await learnerRun(root, async () => {
    patchedText = await readFile(file, "utf8");
    assert.ok(existsSync(path.join(root, BACKUP_DIR, "state.json")), "the backup exists before the patched file is built");
  });
  assert.equal(result.recovered?.kind, "restored");
  assert.ok(patchedText.includes("      loader.load(); // 故意错误\n      return 'skipped';"), "inserted with the learner's indentation");
  assert.equal(result.status, "killed");
  assert.deepEqual(result.caughtBy, ["Lab 98.2 · untrusted code is never loaded"]);
  assert.equal(result.restored, true);
  assert.deepEqual(result.after, { passed: 2, total: 2 });
  assert.deepEqual(await readFile(file), before);
  assert.ok(!existsSync(path.join(root, BACKUP_DIR)), "the backup is removed after restoring");
});

test("learner mode: SIGINT (Ctrl-C) between patch and restore restores before the process ends", async (t) => {
  const root = await practiceFolder(t, LEARNER_SOLUTION);
  const before = await readFile(path.join(root, MINI_FILE));
  const run = startChild(root, "hang");
  await run.patched;
  run.child.kill("SIGINT");
  const exit = await run.exited;
  assert.equal(exit.signal, "SIGINT", `ended by the signal (${JSON.stringify(exit)}): ${run.stderr()}`);
  assert.match(run.stderr(), /已中断：packages\/pi-course\/src\/mini\.ts 已逐字节恢复成实验前的内容/);
  assert.deepEqual(await readFile(path.join(root, MINI_FILE)), before);
  assert.ok(!existsSync(path.join(root, BACKUP_DIR)));
});

test("learner mode: SIGTERM while the patched code's tests run ends them, restores the file and leaves no temp folder", async (t) => {
  // The injected line never returns, so the moment is certain: the tests of the patched code are running.
  const faults = MINI_FAULTS.replace('insert: "loader.load(); // 故意错误"', 'insert: "for (;;) {} // 故意错误"');
  const manifest = learnerManifestText(miniManifest(faults), manifestOf(miniManifest(faults)));
  const root = await makeMiniCourse(t, { practice: true, manifest, source: LEARNER_SOLUTION });
  const before = await readFile(path.join(root, MINI_FILE));
  const tmp = await mkdtemp(path.join(os.tmpdir(), "pi-fault-tmp-"));
  t.after(() => rm(tmp, { recursive: true, force: true }));
  const run = startChild(root, "run", { TMPDIR: tmp, TEMP: tmp, TMP: tmp });
  await run.patched;
  await waitForEntry(tmp, (name) => name.startsWith("pi-lab-"));
  run.child.kill("SIGTERM");
  const exit = await run.exited;
  assert.equal(exit.signal, "SIGTERM", run.stderr());
  assert.match(run.stderr(), /已逐字节恢复成实验前的内容；测试进程已结束，临时文件已删除/);
  assert.deepEqual(await readFile(path.join(root, MINI_FILE)), before);
  assert.deepEqual(
    (await readdir(tmp)).filter((name) => name.startsWith("pi-lab-")),
    [],
    "no pi-lab folder left",
  );
  assert.deepEqual((await processesLeft(root)) ?? [], [], "no test process left");
});

test("learner mode: an uncaught exception between patch and restore restores on the way out", async (t) => {
  const root = await practiceFolder(t, LEARNER_SOLUTION);
  const before = await readFile(path.join(root, MINI_FILE));
  const run = startChild(root, "throw");
  await run.patched;
  const exit = await run.exited;
  assert.notEqual(exit.code, 0);
  assert.match(run.stderr(), /simulated crash/);
  assert.deepEqual(await readFile(path.join(root, MINI_FILE)), before);
  assert.ok(!existsSync(path.join(root, BACKUP_DIR)));
});
