/**
 * `core/process.ts`, the tooling's one process runner: the environment a child gets, what
 * it captures, and how a program is ended (its group, the kill sequence, the time limit, an
 * abort) so that nothing it started outlives it.
 */
import assert from "node:assert/strict";
import test from "node:test";
import { childEnv, NPM_SCRIPT_VARIABLES, runProcess, startProcess } from "../../src/core/process.js";
import { processAlive } from "../../src/core/scratch.js";

const posix = process.platform !== "win32";
const node = process.execPath;

/** True when a process with this id runs (a zombie, ended but not yet reaped, does not). */
const alive = processAlive;

test("a child's environment: ours without NODE_TEST_CONTEXT and what the caller drops, plus what it sets", () => {
  const base = { PATH: "/bin", NODE_TEST_CONTEXT: "child-v8", npm_config_cache: "x", Npm_Lifecycle_Event: "test", init_cwd: "/r", GIT_DIR: "/g", KEEP: "1" };
  assert.deepEqual(childEnv({}, base), { PATH: "/bin", npm_config_cache: "x", Npm_Lifecycle_Event: "test", init_cwd: "/r", GIT_DIR: "/g", KEEP: "1" });
  assert.deepEqual(childEnv({ without: [...NPM_SCRIPT_VARIABLES, "GIT_DIR"], set: { NO_COLOR: "1", KEEP: undefined } }, base), { PATH: "/bin", NO_COLOR: "1" });
});

test("output is kept apart and interleaved, input reaches stdin, a non-zero exit is a result", async () => {
  const script =
    "process.stdin.setEncoding('utf8'); let s = ''; process.stdin.on('data', (c) => (s += c)); process.stdin.on('end', () => { process.stdout.write('out:' + s); process.stderr.write('err'); process.exitCode = 3; });";
  const result = await runProcess(node, ["-e", script], { cwd: process.cwd(), input: "hello" });
  assert.deepEqual(
    { code: result.code, stdout: result.stdout.toString(), stderr: result.stderr.toString(), timedOut: result.timedOut },
    { code: 3, stdout: "out:hello", stderr: "err", timedOut: false },
  );
  assert.deepEqual(result.all.split(/(?<=hello)/), ["out:hello", "err"]);
  await assert.rejects(runProcess("pi-course-no-such-program", [], { cwd: process.cwd() }), { code: "ENOENT" });
});

test("the time limit and an abort end a program by the kill sequence: a signal, then SIGKILL after the grace period", {
  skip: !posix && "POSIX signals",
}, async () => {
  const cwd = process.cwd();
  // SIGTERM is ignored from the first instruction on (an ignored signal stays ignored across
  // exec), so no start-up delay of a loaded machine can let the first signal end it.
  const started = Date.now();
  const limited = await runProcess("sh", ["-c", "trap '' TERM; exec sleep 30"], { cwd, timeoutMs: 300, kill: { signal: "SIGTERM", graceMs: 300 } });
  assert.deepEqual({ timedOut: limited.timedOut, signal: limited.signal }, { timedOut: true, signal: "SIGKILL" }, "SIGTERM was ignored, so SIGKILL ended it");
  assert.ok(Date.now() - started >= 550);
  const controller = new AbortController();
  const running = runProcess(node, ["-e", "setInterval(() => {}, 1000);"], { cwd, signal: controller.signal });
  controller.abort();
  assert.equal((await running).signal, "SIGTERM", "an abort sends the first signal of the sequence (default SIGTERM)");
});

test("a process group ends with its leader: a grandchild left running is killed, and kill() ends the whole group", {
  skip: !posix && "process groups",
}, async () => {
  const cwd = process.cwd();
  // The grandchild is unref'd: the leader exits at once and leaves it running, as a learner's stray process would.
  const orphan =
    "const c = require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' }); c.unref(); console.log(c.pid);";
  const left = await runProcess(node, ["-e", orphan], { cwd, group: true });
  const grandchild = Number(left.stdout.toString().trim());
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(alive(grandchild), false, "the grandchild ended with its group");

  const both = startProcess(node, ["-e", `${orphan} setInterval(() => {}, 1000);`], { cwd, group: true, stdin: true, kill: { signal: "SIGKILL" } });
  await new Promise((resolve) => setTimeout(resolve, 500));
  both.kill();
  const ended = await both.done;
  const second = Number(ended.stdout.toString().trim());
  assert.equal(ended.signal, "SIGKILL");
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(alive(second), false, "kill() reached the whole group");
});
