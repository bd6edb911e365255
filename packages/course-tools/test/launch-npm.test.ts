/**
 * The learner commands as a learner starts them, through npm (npm → node, the scripts
 * `exec` the tooling's bin): a red lab prints a result and no `npm error` block, and a command
 * interrupted while its tests run — SIGINT or SIGTERM sent to the npm process alone, or
 * SIGINT sent to the whole process group as Ctrl-C does — ends its test processes, removes
 * its temporary folder and ends by the signal (`lab` under SIGTERM to npm and Ctrl-C, the
 * fault exercise under SIGINT to npm).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { fakeEditor } from "./support/fake-editor.js";
import { createMiniCourse, miniSource, removeMiniCourse, repoRoot, type MiniCourse } from "./support/lab-fixture.js";
import { processesLeft, waitForEntry } from "./support/leftover-probe.js";
import { installTooling } from "./support/tooling.js";

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const posix = process.platform !== "win32";

/**
 * The mini course with the real package scripts (so that `npm run lab -w @pi/course` works),
 * and the compiled tooling installed where a practice folder keeps it: the bin runs it as it is
 * (the tree has no tooling sources to build).
 */
async function npmCourse(): Promise<MiniCourse> {
  const course = await createMiniCourse("starter", { practice: true, scripts: true });
  installTooling(course.root);
  const real = JSON.parse(readFileSync(path.join(repoRoot, "packages/pi-course/package.json"), "utf8")) as { scripts: unknown };
  const pkg = path.join(course.root, "packages/pi-course/package.json");
  writeFileSync(pkg, `${JSON.stringify({ ...JSON.parse(readFileSync(pkg, "utf8")), scripts: real.scripts }, null, 2)}\n`);
  return course;
}

/** Starts `npm run <args>` in `cwd` (environment `base`), in a process group of its own, with `tmp` as its temp folder. */
function startNpm(cwd: string, args: string[], tmp: string, base: NodeJS.ProcessEnv = process.env) {
  const child = spawn(npm, ["run", ...args], {
    cwd,
    env: { ...base, TMPDIR: tmp, TEMP: tmp, TMP: tmp, NO_COLOR: "1", CI: "" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: posix,
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal })),
  );
  return { child, exited, output: () => output };
}

/** The file the hanging code writes the moment it starts: the proof that the command's tests are running. */
const RUNNING = "tests-running";

/** `line` (TypeScript) that writes the marker `RUNNING` into `dir`, then never finishes. */
function hangingLine(dir: string): string {
  return `writeFileSync(${JSON.stringify(path.join(dir, RUNNING))}, ""); for (;;) {}`;
}

/** `src/mini.ts` with the `writeFileSync` import the hanging line needs. */
function withFsImport(course: MiniCourse): string {
  const file = path.join(course.root, "packages/pi-course/src/mini.ts");
  writeFileSync(file, `import { writeFileSync } from "node:fs";\n${readFileSync(file, "utf8")}`);
  return file;
}

/**
 * The mini lab 99.1 made to never finish, saying so: its test writes the marker into `dir`
 * and then runs for as long as anyone waits. (Node 22 and later create a test reporter's
 * destination file only at its first write, so no file of the lab runner can tell.)
 */
function hang(course: MiniCourse, dir: string): void {
  const file = withFsImport(course);
  writeFileSync(file, readFileSync(file, "utf8").replace('throw labError("Lab 99.1 mini add");', hangingLine(dir)));
}

/** Resolves once the hanging test of the command has started. */
async function testsRunning(dir: string): Promise<void> {
  await waitForEntry(dir, (name) => name === RUNNING, "the hanging test's marker");
}

// One course for the whole file. The tests run in order and each sets the teaching file it needs.
let course: MiniCourse;
test.before(async () => {
  course = await npmCourse();
});
test.after(() => removeMiniCourse(course));

test("through npm with no VISUAL or EDITOR of the learner's, lab --open starts code -g file:line:col, not npm's vi", {
  skip: !posix && "fake editors are shell-script executables",
}, async (t) => {
  await course.use("starter");
  const code = await fakeEditor(t, "code");
  const vi = await fakeEditor(t, "vi");
  const nano = await fakeEditor(t, "nano");
  const marker =
    miniSource("starter")
      .split("\n")
      .findIndex((line) => line.includes("🔨 Lab 99.2")) + 1;
  const { EDITOR: _editor, VISUAL: _visual, ...rest } = process.env;
  const learner = Object.fromEntries(Object.entries(rest).filter(([key]) => !key.startsWith("npm_")));
  const searchPath = [path.dirname(code.command), path.dirname(vi.command), process.env.PATH].join(path.delimiter);
  const open = async (extra: NodeJS.ProcessEnv) => {
    const tmp = await mkdtemp(path.join(os.tmpdir(), "pi-npm-tmp-"));
    t.after(() => rm(tmp, { recursive: true, force: true }));
    const run = startNpm(course.root, ["lab", "-w", "@pi/course", "--", "99.2", "--open"], tmp, { ...learner, PATH: searchPath, ...extra });
    const exit = await run.exited;
    assert.equal(exit.code, 0, run.output());
    return run.output();
  };
  const shown = await open({});
  assert.deepEqual(
    code.calls().map((call) => call.argv),
    [["-g", `packages/pi-course/src/mini.ts:${marker}:3`]],
  );
  assert.deepEqual(vi.calls(), [], "npm's EDITOR=vi is not the learner's");
  assert.match(shown, /没有设置 VISUAL 或 EDITOR，用 VS Code/);

  // The learner's own EDITOR wins. Where npm's start environment can be read (Linux), even one
  // equal to npm's fallback; elsewhere any other one (which of them is the learner's is
  // editor-env.test.ts's, on data).
  if (process.platform === "linux") {
    await open({ EDITOR: "vi" });
    assert.deepEqual(
      vi.calls().map((call) => call.argv),
      [[`+${marker}`, "packages/pi-course/src/mini.ts"]],
      "a learner whose own EDITOR is vi gets vi (read from npm's start environment)",
    );
  } else {
    await open({ EDITOR: nano.command });
    assert.deepEqual(
      nano.calls().map((call) => call.argv),
      [[`+${marker},3`, "packages/pi-course/src/mini.ts"]],
      "the learner's own EDITOR wins",
    );
  }
});

test("through npm: a red lab prints its result and no npm error block", async (t) => {
  const tmp = await mkdtemp(path.join(os.tmpdir(), "pi-npm-tmp-"));
  t.after(() => rm(tmp, { recursive: true, force: true }));
  const run = startNpm(course.root, ["lab", "-w", "@pi/course", "--", "99.1"], tmp);
  const exit = await run.exited;
  assert.equal(exit.code, 0, run.output());
  assert.match(run.output(), /Lab 99\.1 · 两数相加 {2}0\/2/);
  assert.doesNotMatch(run.output(), /npm (error|ERR!)/);
  assert.doesNotMatch(run.output(), /课程仓库本身/, "a practice folder is not the reference");
});

// SIGINT to the npm process alone reaches the command as npm passes it on: the fault exercise's
// test below sends it (npm passes SIGINT and SIGTERM on alike); here the other signal and Ctrl-C.
for (const [how, signal, toGroup] of [
  ["SIGTERM to the npm process", "SIGTERM", false],
  ["SIGINT to the process group (Ctrl-C)", "SIGINT", true],
] as const) {
  test(`through npm: ${how} while a lab's tests run ends them and leaves nothing behind`, { skip: !posix && "POSIX signals" }, async (t) => {
    await course.use("starter");
    const tmp = await mkdtemp(path.join(os.tmpdir(), "pi-npm-tmp-"));
    t.after(() => rm(tmp, { recursive: true, force: true }));
    hang(course, tmp);
    const run = startNpm(course.root, ["lab", "-w", "@pi/course", "--", "99.1"], tmp);
    await testsRunning(tmp);
    process.kill(toGroup ? -run.child.pid! : run.child.pid!, signal);
    const exit = await run.exited;
    assert.equal(exit.signal, signal, `npm ends by the signal (${JSON.stringify(exit)}): ${run.output()}`);
    assert.doesNotMatch(run.output(), /超过时间上限|Lab 99\.1 · 两数相加/, "the command was interrupted, not left to run into its time limit");
    assert.equal(
      run.output().match(/已中断：Lab 99\.1 的编译与测试进程已结束，临时文件已删除。/g)?.length,
      1,
      `one line says what was stopped and cleaned up: ${run.output()}`,
    );
    assert.deepEqual(
      readdirSync(tmp).filter((name) => name.startsWith("pi-lab-")),
      [],
      "no temp folder left",
    );
    assert.deepEqual((await processesLeft(course.root)) ?? [], [], "no process of the command left");
    assert.doesNotMatch(run.output(), /npm (error|ERR!)/);
  });
}

test("through npm: SIGINT to the npm process during the fault exercise restores the file, says so, leaves nothing", {
  skip: !posix && "POSIX signals",
}, async (t) => {
  await course.use("reference");
  const tmp = await mkdtemp(path.join(os.tmpdir(), "pi-npm-tmp-"));
  t.after(() => rm(tmp, { recursive: true, force: true }));
  // The exercise line makes the patched code hang, so the moment is certain: its tests are running.
  const file = withFsImport(course);
  const manifest = path.join(course.root, "chapters/99-mini/chapter.yaml");
  writeFileSync(
    manifest,
    `${readFileSync(manifest, "utf8")}faults:
  - id: 99.1-hang
    lab: "99.1"
    exercise: true
    description: 加法之前先死循环
    killedBy: ["Lab 99.1 · adds two numbers"]
    learner:
      function: add(a, b)
      before: return
      insert: ${JSON.stringify(`${hangingLine(tmp)} // 故意错误`)}
      explain: 死循环。
`,
  );
  const before = await readFile(file);
  const run = startNpm(course.root, ["fault", "-w", "@pi/course", "--", "99"], tmp);
  // The first run checks the lab is green; the second runs the patched code.
  while (!run.output().includes("已在 packages/pi-course/src/mini.ts")) {
    await new Promise<void>((resolve) => run.child.stderr.once("data", () => resolve()));
  }
  await testsRunning(tmp);
  process.kill(run.child.pid!, "SIGINT");
  const exit = await run.exited;
  assert.equal(exit.signal, "SIGINT", run.output());
  assert.match(run.output(), /已中断：packages\/pi-course\/src\/mini\.ts 已逐字节恢复成实验前的内容；测试进程已结束，临时文件已删除/);
  assert.deepEqual(await readFile(file), before, "the learner's file is back, byte for byte");
  assert.ok(!existsSync(path.join(course.root, ".pi-course/fault-backup")));
  assert.deepEqual(
    readdirSync(tmp).filter((name) => name.startsWith("pi-lab-")),
    [],
  );
  assert.deepEqual((await processesLeft(course.root)) ?? [], []);
});
