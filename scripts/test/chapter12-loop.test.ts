/**
 * The learner loop on the real chapter 12, in a practice folder laid out as
 * `practice 12 --link-modules` lays it out (under a path with spaces and parentheses): a red
 * lab through npm is a result (no npm error block) on Lab 12.1's own scaffold, located in
 * the learner's file, with every lab "not started"; a lab stuck in
 * `for (;;) {}` ends at its time limit with one message naming the test and the function it
 * was stuck in; watch mode reruns after two
 * rename-style saves in a row; `reset 12` brings the starter (and its scaffold errors) back
 * and keeps the learner's file; `fault 12` on a correct solution whose trust branch is one
 * line injects, is caught, and restores the file byte for byte, exit 0.
 *
 * One folder for the whole file (the launcher compiles the tooling once); the steps run in
 * order and each sets the teaching file it needs.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { loadManifest } from "../lib/course/manifest.js";
import { runLab } from "../lib/testing/labs.js";
import { stagedTeachingText } from "../lib/verify/staged.js";
import { ONE_LINE, withLoadExtension } from "./chapter12-solutions.js";
import { practiceCopy, repoRoot } from "./support/lab-fixture.js";

const chapter12 = existsSync(path.join(repoRoot, "checkpoints", "12.yaml")) && existsSync(path.join(repoRoot, "starters", "12-resources.ts"));
const TEACHING = "packages/pi-course/src/resources.ts";
const STARTER = chapter12 ? readFileSync(path.join(repoRoot, "starters/12-resources.ts"), "utf8") : "";
const REFERENCE = chapter12 ? readFileSync(path.join(repoRoot, TEACHING), "utf8") : "";

let root = "";
let tmp = "";
test.before(async () => {
  if (!chapter12) return;
  root = await practiceCopy(repoRoot, "12");
  tmp = await mkdtemp(path.join(os.tmpdir(), "pi-ch12-tmp-"));
});
test.after(async () => {
  if (root !== "") await rm(root, { recursive: true, force: true, maxRetries: 3 });
  if (tmp !== "") await rm(tmp, { recursive: true, force: true, maxRetries: 3 });
});

const skip = !chapter12 && "chapter 12 is not in this tree";
// Typed at the folder's root (npm's INIT_CWD): locations are relative to it.
const env = () => ({ ...process.env, TMPDIR: tmp, TEMP: tmp, TMP: tmp, NO_COLOR: "1", CI: "", INIT_CWD: root });
const write = (text: string) => writeFileSync(path.join(root, TEACHING), text);
/** A command of the folder, started the way npm's scripts start it (without npm's own start-up). */
const launch = (...args: string[]) =>
  spawnSync(process.execPath, [path.join(root, "scripts", "launch.mjs"), ...args], {
    cwd: path.join(root, "packages/pi-course"),
    env: env(),
    encoding: "utf8",
  });

test("chapter 12 practice: a red lab through npm is a result on Lab 12.1's own scaffold, and every lab is not started", { skip }, async () => {
  const npm = spawnSync(process.platform === "win32" ? "npm.cmd" : "npm", ["run", "lab", "-w", "@pi/course", "--", "12.1"], {
    cwd: root,
    env: env(),
    encoding: "utf8",
  });
  assert.equal(npm.status, 0, npm.stderr);
  assert.doesNotMatch(`${npm.stdout}${npm.stderr}`, /npm (error|ERR!)/);
  assert.doesNotMatch(npm.stdout, /课程仓库本身/, "a practice folder is not the reference");
  assert.match(
    npm.stdout,
    /Lab 12\.1 · roots 的顺序决定清单里谁胜出 {2}0\/2\n✗ [^\n]+\n {2}Lab 12\.1 resource catalog 尚未实现\n {2}施工位尚未实现 · packages\/pi-course\/src\/resources\.ts:\d+:\d+\n {2}测试 packages\/pi-course\/test\/12-resources-extensions\.test\.ts:\d+:\d+\n/,
  );

  const manifest = await loadManifest(root, "12");
  const table = await runLab(root, manifest, { chapter: "12" });
  assert.ok(table.kind === "tested");
  assert.deepEqual(
    table.labs.map((l) => `${l.id} ${l.passed}/${l.total} ${l.status}`),
    ["12.1 0/2 not_started", "12.2 0/3 not_started", "12.3 0/2 not_started", "12.4 0/2 not_started", "12.5 0/3 not_started"],
  );
  assert.deepEqual([table.strays, table.crashes], [[], []]);
});

test("chapter 12 practice: a lab stuck in for (;;) {} ends at the time limit, which the message names", { skip }, () => {
  write(STARTER.replace(/(export async function discoverResources\([^)]*\)[^{]*\{)/, "$1\n  for (;;) {}"));
  const run = launch("lab", "12.1", "--timeout", "3");
  assert.equal(run.status, 0, run.stderr);
  // Said once: the limit, the test that was running and where in the learner's code it was.
  assert.match(
    run.stdout,
    /✗ Lab 12\.1 · roots 顺序决定同名资源的 winner\n {2}超过时间上限 3 秒，测试进程已被结束：测试 “Lab 12\.1 · roots 顺序决定同名资源的 winner”里，正在执行 discoverResources（packages\/pi-course\/src\/resources\.ts:\d+:\d+）/,
  );
  assert.equal(run.stdout.match(/超过时间上限/g)?.length, 1, "the limit is named once");
  assert.deepEqual(
    readdirSync(tmp).filter((name) => name.startsWith("pi-lab-")),
    [],
    "no temp folder left",
  );
});

test("chapter 12 practice: watch mode reruns after each of two rename-style saves in a row", {
  skip: skip || (process.platform === "win32" && "SIGINT"),
}, async (t) => {
  write(STARTER);
  const child = spawn(process.execPath, [path.join(root, "scripts", "launch.mjs"), "lab", "12.1", "--watch"], {
    cwd: root,
    env: env(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  // A failed assertion must not leave the watcher running: it would keep this file's process alive.
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  let stdout = "";
  let stderr = "";
  let closed = false;
  let wake = () => {};
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    wake();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) =>
    child.on("close", (code) => {
      closed = true;
      wake();
      resolve(code);
    }),
  );
  const FOOTER = /保存即重跑 · Ctrl-C 退出\n/g;
  const run = async (n: number) => {
    while ((stdout.match(FOOTER)?.length ?? 0) < n) {
      if (closed) assert.fail(`watch mode ended before run ${n}:\n${stdout}${stderr}`);
      await new Promise<void>((resolve) => (wake = resolve));
    }
    return stdout.split(FOOTER)[n - 1] ?? "";
  };
  const save = (text: string) => {
    const temporary = path.join(root, "packages/pi-course/src/.resources.ts.swp");
    writeFileSync(temporary, text);
    renameSync(temporary, path.join(root, TEACHING));
  };
  assert.match(await run(1), /0\/2/);
  save(REFERENCE);
  assert.match(await run(2), /2\/2 ✓/);
  save(STARTER);
  assert.match(await run(3), /0\/2/);
  child.kill("SIGINT");
  assert.equal(await exited, 0);
});

test("chapter 12 practice: reset 12 brings the starter and its scaffold errors back and keeps the learner's file", { skip }, async () => {
  write(REFERENCE);
  const reset = launch("reset", "12");
  assert.equal(reset.status, 0, reset.stderr);
  const saved = /你原来的文件保存在 (\S+)/.exec(reset.stdout)?.[1];
  assert.ok(saved !== undefined, reset.stdout);
  assert.equal(readFileSync(path.join(root, saved), "utf8"), REFERENCE, "the learner's work, kept beside the file");
  assert.equal(readFileSync(path.join(root, TEACHING), "utf8"), STARTER);
  const outcome = await runLab(root, await loadManifest(root, "12"), { chapter: "12", lab: "12.1" });
  assert.ok(outcome.kind === "tested");
  assert.deepEqual([outcome.labs[0]?.status, outcome.labs[0]?.firstFailure?.message], ["not_started", "Lab 12.1 resource catalog 尚未实现"]);
});

test("chapter 12 practice: fault 12 on a solution with a one-line trust branch injects, is caught, and restores the file byte for byte", { skip }, () => {
  const solution = withLoadExtension(ONE_LINE);
  write(solution);
  const run = launch("fault", "12");
  assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
  // The line as inserted, in the solution's own names (`importModule: load`, `src`).
  assert.match(run.stderr, /已在 packages\/pi-course\/src\/resources\.ts 第 \d+ 行加入：await load\?\.\(src\); \/\/ 故意错误/);
  assert.match(run.stdout, /抓住了：“Lab 12\.4 · 先 trust 后 import[^”]*” 失败。/);
  assert.match(run.stdout, /已恢复：packages\/pi-course\/src\/resources\.ts 与实验前逐字节相同；Lab 12\.4 2\/2/);
  assert.match(run.stdout, /本章全量应仍为全绿/);
  assert.equal(readFileSync(path.join(root, TEACHING), "utf8"), solution);
  assert.deepEqual(
    readdirSync(tmp).filter((name) => name.startsWith("pi-lab-")),
    [],
  );
});

test("chapter 12 practice: npm start runs the learner's resources.ts and stops at its first unfinished lab, a result", { skip }, () => {
  const labIds = ["12.1", "12.2", "12.3", "12.4", "12.5"];
  const compiler = path.join(repoRoot, "node_modules", "typescript", "bin", "tsc");
  for (const done of [3, 4]) {
    // The labs before `done` finished, the rest still the starter's.
    write(stagedTeachingText({ file: TEACHING, reference: REFERENCE, starter: STARTER, labIds, done }).text);
    const built = spawnSync(process.execPath, [compiler, "-p", path.join(root, "packages/pi-course/tsconfig.json")], { encoding: "utf8" });
    assert.equal(built.status, 0, built.stdout);
    const run = spawnSync(process.execPath, [path.join(root, "scripts", "start.mjs")], { cwd: root, env: env(), encoding: "utf8" });
    const lab = labIds[done]!;
    assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
    assert.match(
      run.stderr,
      new RegExp(`^未完成  Lab ${lab.replace(".", "\\.")} [^\\n]*尚未实现\\n[^\\n]*完成 Lab ${lab.replace(".", "\\.")} 及之后的 Lab`, "m"),
      `${run.stdout}${run.stderr}`,
    );
    assert.doesNotMatch(run.stdout, /结束  /, "the session does not pretend to have run to its end");
  }
});
