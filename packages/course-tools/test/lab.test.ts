/**
 * The `lab` command (`packages/course-tools/src/lab.ts`, `lib/lab/command.ts`) run as a learner runs it: its
 * command line, its exit statuses, its output on a synthetic chapter, a run after a killed
 * fault exercise, and `--watch` ended by Ctrl-C. What the command says is checked in this
 * process (`runInProcess`, through the command table); its exit statuses as a process, piped
 * output and Ctrl-C with the command in a process of its own (`runScript`).
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { renameSync, writeFileSync } from "node:fs";
import { copyFile, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import test from "node:test";
import { parseTarget } from "../src/core/cli.js";
import { sha256, writeBackupSync } from "../src/practice/backup.js";
import { parseCommand } from "../src/cli.js";
import { CHALLENGE_TIMEOUT_SECONDS, DEFAULT_TIMEOUT_SECONDS } from "../src/testing/limits.js";
import { commandArgs, installTooling } from "./support/tooling.js";
import { createMiniCourse, miniSource, removeMiniCourse, repoRoot, runInPackage, runScript } from "./support/lab-fixture.js";
import { runInProcess } from "./support/in-process.js";

test("lab arguments: a chapter or a lab, flags, and one-line usage errors", () => {
  assert.deepEqual(parseTarget("12"), { chapter: "12" });
  assert.deepEqual(parseTarget("12.1"), { chapter: "12", lab: "12.1" });
  // A one-digit chapter: its manifest id has two digits, its lab ids none (`3.1`), however typed.
  for (const typed of ["3.1", "03.1"]) assert.deepEqual(parseTarget(typed), { chapter: "03", lab: "3.1" }, typed);
  for (const typed of ["3", "03"]) assert.deepEqual(parseTarget(typed), { chapter: "03" }, typed);
  assert.deepEqual(parseTarget("0.12"), { chapter: "00", lab: "0.12" });
  assert.deepEqual(parseCommand("lab", ["12.1", "--watch"]), {
    help: false,
    watch: true,
    json: false,
    verbose: false,
    challenge: false,
    where: false,
    open: false,
    compare: false,
    timeoutSeconds: DEFAULT_TIMEOUT_SECONDS,
    target: { chapter: "12", lab: "12.1" },
  });
  assert.deepEqual(
    [
      parseCommand("lab", ["12.3", "--open"]).open,
      parseCommand("lab", ["12.3", "--compare"]).compare,
      parseCommand("lab", ["12.3", "--compare", "--timeout", "60"]).timeoutSeconds,
    ],
    [true, true, 60],
  );
  assert.equal(DEFAULT_TIMEOUT_SECONDS, 30);
  // The challenge tier is a chapter's, with each test's own limit (10 s unless --timeout says).
  assert.deepEqual(
    [
      parseCommand("lab", ["12", "--challenge"]).challenge,
      parseCommand("lab", ["12", "--challenge"]).timeoutSeconds,
      parseCommand("lab", ["12", "--challenge", "--timeout", "3"]).timeoutSeconds,
    ],
    [true, CHALLENGE_TIMEOUT_SECONDS, 3],
  );
  assert.equal(parseCommand("lab", ["12", "--timeout", "1.5"]).timeoutSeconds, 1.5);
  assert.equal(parseCommand("lab", ["12", "--timeout=90", "--verbose"]).timeoutSeconds, 90);
  assert.equal(parseCommand("lab", ["12", "--verbose"]).verbose, true);
  assert.equal(parseCommand("lab", ["--help"]).help, true);
  const bad = [
    [],
    ["12", "13"],
    ["12.x"],
    ["abc"],
    ["12", "--nope"],
    ["12", "--watch", "--json"],
    ["123"],
    ["12", "--timeout"],
    ["12", "--timeout", "0"],
    ["12", "--timeout", "-1"],
    ["12", "--timeout", "soon"],
    ["12", "--timeout", "86401"],
    ["12.1", "--challenge"],
    ["12", "--challenge", "--watch"],
    // --open and --compare are about one lab, and run alone.
    ["12", "--open"],
    ["12", "--compare"],
    ["12.1", "--open", "--watch"],
    ["12.1", "--open", "--json"],
    ["12.1", "--compare", "--watch"],
    ["12.1", "--compare", "--verbose"],
    ["12.1", "--open", "--compare"],
    ["12.1", "--open", "--timeout", "5"],
  ];
  for (const args of bad) {
    assert.throws(() => parseCommand("lab", args), { code: "USAGE" }, args.join(" "));
  }
});

/** Saves `text` to `file` the way many editors (and `sed -i`) do: a temporary file renamed over it. */
function renameSave(file: string, text: string): void {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.swp`);
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

test("lab after a killed fault exercise runs on the restored file, not on a build of the patched one", async (t) => {
  const practice = await createMiniCourse("reference", { practice: true });
  t.after(() => removeMiniCourse(practice));
  const file = path.join(practice.root, "packages/pi-course/src/mini.ts");
  const original = await readFile(file);
  // The exercise's patch breaks Lab 99.2; its process was killed before it could restore.
  const patched = Buffer.from(miniSource("broken"));
  writeBackupSync(
    practice.root,
    {
      format: 1,
      fault: "99.2-x",
      file: "packages/pi-course/src/mini.ts",
      sha256: sha256(original),
      patchedSha256: sha256(patched),
      pid: 1073741824,
      startedAt: "",
    },
    original,
  );
  await writeFile(file, patched);
  const run = await runInProcess(practice.root, "lab", ["99.2"]);
  assert.match(run.stdout, /被强行中断.*已从 \.pi-course\/fault-backup 把它逐字节恢复/);
  assert.match(run.stdout, /Lab 99\.2 · 打招呼 {2}3\/3/, run.stdout);
  assert.deepEqual(await readFile(file), original);
});

test("lab command: a red lab exits 0 (a result, not a crash) unless --json; plain piped output; usage errors", async (t) => {
  const course = await createMiniCourse("starter", { practice: true });
  t.after(() => removeMiniCourse(course));

  // First in the course "repo" (no practice marker): the first line says it is the reference.
  const marker = path.join(course.root, ".pi-course", "practice.json");
  const markerText = await readFile(marker, "utf8");
  await rm(marker);
  const red = await runScript(course.root, "lab.ts", ["99.1"]);
  await writeFile(marker, markerText);
  assert.match(red.stdout.split("\n")[0] ?? "", /^注意：这里是课程仓库本身（参考实现/);
  assert.equal(red.code, 0, "a red lab is the answer the learner asked for");
  assert.match(red.stdout, /0\/2/);
  assert.match(red.stdout, /Lab 99\.1 mini add 尚未实现/);
  assert.doesNotMatch(red.stdout, /\u001b\[/, "no colour on a pipe");
  // The process ends with the status the command returns (above: 0, below: 2); --json's 1 through the command table.
  const redJson = await runInProcess(course.root, "lab", ["99.1", "--json"]);
  assert.equal(redJson.code, 1, "a machine asking gets a failing status");
  assert.equal((JSON.parse(redJson.stdout) as { labs: { status: string }[] }).labs[0]?.status, "not_started");

  await course.use("reference");
  const json = await runInProcess(course.root, "lab", ["99", "--json"]);
  assert.equal(json.code, 0);
  const document = JSON.parse(json.stdout) as Record<string, unknown>;
  assert.deepEqual(Object.keys(document).sort(), ["chapter", "labs", "mode", "passed", "total"]);
  assert.deepEqual([document.chapter, document.passed, document.total, document.mode], ["99", 5, 5, "practice"]);

  // A usage error ends the process with 2 (the first); the others say the same through the command table.
  for (const args of [["99.9"], ["42"], ["99", "--nope"], []]) {
    const usage = args[0] === "99.9" ? await runScript(course.root, "lab.ts", args) : await runInProcess(course.root, "lab", args);
    assert.equal(usage.code, 2, args.join(" "));
    assert.equal(usage.stderr.trim().split("\n").length, 1, `one line for ${args.join(" ")}: ${usage.stderr}`);
    if (args[0] === "99.9") assert.match(usage.stderr, /99\.1, 99\.2/);
  }
});

test("lab --timeout: a lab stuck in for (;;) {} is ended at the limit the command line gives, said once, a result (exit 0), no temp folder left", async (t) => {
  // Where the stuck run was (the test and the function) is the runner's to say: testing/labs.test.ts.
  // (Until this round this ran on the real chapter 12, in packages/course-tools/test/chapter12-loop.test.ts.)
  const course = await createMiniCourse("starter", { practice: true });
  t.after(() => removeMiniCourse(course));
  await writeFile(path.join(course.root, "packages/pi-course/src/mini.ts"), miniSource("reference").replace("return a + b;", "for (;;) {}"));
  const tmp = path.join(course.root, "tmp");
  await mkdir(tmp);
  const run = await runInProcess(course.root, "lab", ["99.1", "--timeout", "0.5"], { env: { TMPDIR: tmp, TEMP: tmp, TMP: tmp } });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^Lab 99\.1 · 两数相加 {2}0\/2\n✗ Lab 99\.1[^\n]*\n {2}超过时间上限 0\.5 秒，测试进程已被结束/m);
  assert.equal(run.stdout.match(/超过时间上限/g)?.length, 1, "the limit is named once");
  assert.deepEqual(await readdir(tmp), [], "no temp folder left");
});

test("lab --watch reruns after each of two rename-style saves and exits cleanly on SIGINT", {
  skip: process.platform === "win32" && "SIGINT cannot be sent to a child on Windows",
}, async (t) => {
  const course = await createMiniCourse("starter", { practice: true });
  t.after(() => removeMiniCourse(course));
  const child = spawn(process.execPath, [...commandArgs(course.root, "lab"), "99.1", "--watch"], {
    cwd: course.root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  t.after(() => child.kill());
  let stdout = "";
  let stderr = "";
  let exitCode: number | null | undefined;
  // Every finished run ends with this footer. Waiting for a count of footers (or for the
  // process to end) rather than for a particular result means a wrong result fails the
  // test instead of hanging it.
  const FOOTER = /保存即重跑 · Ctrl-C 退出\n/g;
  const runs = () => stdout.match(FOOTER)?.length ?? 0;
  let wake = () => {};
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    wake();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const closed = new Promise<void>((resolve) =>
    child.on("close", (code) => {
      exitCode = code;
      resolve();
      wake();
    }),
  );
  const waitForRuns = async (n: number) => {
    while (runs() < n && exitCode === undefined) await new Promise<void>((resolve) => (wake = resolve));
    assert.ok(runs() >= n, `lab --watch ended early (exit ${String(exitCode)}): ${stdout}${stderr}`);
    return stdout.split(FOOTER)[n - 1] ?? "";
  };

  assert.match(await waitForRuns(1), /0\/2/);
  // Two saves in a row the way editors write a file: a temporary file renamed over it.
  const file = path.join(course.root, "packages/pi-course/src/mini.ts");
  renameSave(file, miniSource("reference"));
  assert.match(await waitForRuns(2), /2\/2 ✓/);
  renameSave(file, miniSource("starter"));
  assert.match(await waitForRuns(3), /0\/2/);
  child.kill("SIGINT");
  await closed;
  assert.equal(exitCode, 0);
  assert.match(stdout, /已退出监视/);
  assert.equal(stderr, "", "no stack trace on Ctrl-C");
});

test("every location lab prints is path:line:col relative to where the command was typed", async (t) => {
  const course = await createMiniCourse("starter", { practice: true });
  t.after(() => removeMiniCourse(course));
  const starter = miniSource("starter").split("\n");
  const thrown = starter.findIndex((line) => line.includes('throw labError("Lab 99.1')) + 1;
  // Typed in the package folder (where npm runs it).
  const here = await runInPackage(course.root, "lab", ["99.1"]);
  assert.match(here.stdout, new RegExp(`施工位尚未实现 · src/mini\\.ts:${thrown}:9\\n  测试 test/99-mini\\.test\\.ts:5:1\\n`));
  assert.match(here.stdout, new RegExp(`实现 Lab 99\\.1 的施工位（src/mini\\.ts:${thrown}:9）`));
  // Typed at the course root, as npm's INIT_CWD says; also in --json.
  const root = await runInProcess(course.root, "lab", ["99.1", "--json"], { cwd: course.root });
  const failure = (JSON.parse(root.stdout) as { labs: { firstFailure: { location: string; testLocation: string } }[] }).labs[0]!.firstFailure;
  assert.deepEqual([failure.location, failure.testLocation], [`packages/pi-course/src/mini.ts:${thrown}:9`, "packages/pi-course/test/99-mini.test.ts:5:1"]);
  // A compile error, typed one folder above the course.
  await writeFile(path.join(course.root, "packages/pi-course/src/mini.ts"), miniSource("reference").replace("return a + b;", 'return "a" + b;'));
  const above = await runInProcess(course.root, "lab", ["99.1"], { cwd: path.dirname(course.root) });
  assert.match(above.stdout, new RegExp(`\\n  ${path.basename(course.root)}/packages/pi-course/src/mini\\.ts:2:3 - error TS2322: `));
});

// One practice folder of chapter 03 and one run of its labs (npm start's) for two behaviours: npm start before chapter 12,
// and a one-digit chapter's labs printed as 3.1 (what a one-digit chapter answers to is checked in this process).
test("npm start in a practice folder of a chapter before 12 shows the chapter's labs and the next one, with lab's exit status; a one-digit chapter answers to 3, 03, 3.1 and 03.1, and its messages print the lab as 3.1", async (t) => {
  const course = await createMiniCourse("starter", { practice: true, chapter: "03" });
  t.after(() => removeMiniCourse(course));
  // Every way of typing them is the same command line once parsed, so one run of each stands for both.
  assert.deepEqual(parseCommand("lab", ["03.1"]), parseCommand("lab", ["3.1"]));
  assert.deepEqual(parseCommand("lab", ["3", "--json"]), parseCommand("lab", ["03", "--json"]));
  const hint = await runInProcess(course.root, "hint", ["03.2", "--json"]);
  assert.equal((JSON.parse(hint.stdout) as { lab: string }).lab, "3.2");
  const unknown = await runInProcess(course.root, "lab", ["3.9"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /没有 Lab 3\.9；第 03 章的 Lab：3\.1, 3\.2/);
  // As practice lays it out: npm start's own file; the tooling compiled, run by the bin.
  await mkdir(path.join(course.root, "packages/pi-course/bin"));
  await copyFile(path.join(repoRoot, "packages/pi-course/bin/start.mjs"), path.join(course.root, "packages/pi-course/bin/start.mjs"));
  installTooling(course.root);
  const started = spawnSync(process.execPath, [path.join(course.root, "packages/pi-course/bin/start.mjs")], {
    cwd: course.root,
    encoding: "utf8",
    env: { ...process.env, CI: "" },
  });
  assert.equal(started.status, 0, started.stderr);
  assert.match(started.stdout, /npm start 的演示会话随第 12 章加入；这里是第 03 章的练习目录/);
  assert.match(started.stdout, /Lab 3\.1/);
  assert.match(started.stdout, /下一步：开始 Lab 3\.1/);
  // The one-digit chapter's labs as its table and its next step print them.
  assert.match(started.stdout, /· Lab 3\.1 {2}两数相加 {2}0\/2/);
  assert.match(started.stdout, /npm run lab -w @pi\/course -- 3\.1\n/);
  assert.doesNotMatch(started.stdout, /Lab 03\.|-- 03\./);
});
