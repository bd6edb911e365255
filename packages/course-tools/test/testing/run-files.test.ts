/**
 * `testing/run-files.mjs`: node's own test runner over files in the order given (not sorted by
 * path), with node's exit status and the seconds each file's tests took.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { fileURLToPath } from "node:url";
import { childEnv } from "../../src/core/process.js";

const RUN_FILES = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "src", "testing", "run-files.mjs");

test("files start in the order given, each in a process of its own; a failing test fails the run, a todo does not; each file's time is written", (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "pi-run-files-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const log = path.join(dir, "started.log");
  const file = (name: string, body: string) => {
    const full = path.join(dir, `${name}.test.mjs`);
    writeFileSync(
      full,
      `import { appendFileSync } from "node:fs";\nimport test from "node:test";\nappendFileSync(${JSON.stringify(log)}, "${name} " + process.pid + "\\n");\n${body}\n`,
    );
    return full;
  };
  // Given against path order: node --test would start a first.
  const b = file("b", 'test("b waits", () => new Promise((resolve) => setTimeout(resolve, 50)));');
  const a = file("a", 'test("a passes", () => {});\ntest("a todo", { todo: true }, () => { throw new Error("not yet"); });');
  const durations = path.join(dir, "durations.json");
  const run = (files: string[]) =>
    spawnSync(process.execPath, [RUN_FILES, "--concurrency", "1", "--reporter", "tap", "--durations", durations, ...files], {
      encoding: "utf8",
      env: childEnv(),
    });

  const green = run([b, a]);
  assert.equal(green.status, 0, green.stdout + green.stderr);
  const started = readFileSync(log, "utf8").trim().split("\n");
  assert.deepEqual(
    started.map((line) => line.split(" ")[0]),
    ["b", "a"],
  );
  assert.equal(new Set(started.map((line) => line.split(" ")[1])).size, 2, "a process per file");
  assert.match(green.stdout, /^# tests 3$/m);
  const seconds = JSON.parse(readFileSync(durations, "utf8")) as Record<string, number>;
  assert.deepEqual(Object.keys(seconds).sort(), [a, b]);
  assert.ok(seconds[b]! >= 0.05 && seconds[b]! < 60, JSON.stringify(seconds));

  const red = run([file("d", 'test("d fails", () => { throw new Error("boom"); });')]);
  assert.equal(red.status, 1, red.stdout + red.stderr);
  assert.match(red.stdout, /^not ok \d+ - d fails$/m);

  const usage = spawnSync(process.execPath, [RUN_FILES], { encoding: "utf8", env: childEnv() });
  assert.equal(usage.status, 2);
  assert.match(usage.stderr, /^usage: node run-files\.mjs/);
});

test("a test still running at the time limit fails the run and the other files still run, with the limit given as node's flag too (Node 24 applies it per test)", (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "pi-run-files-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // It waits until the runner gives up on it, then lets its process end (Node 24 ends the test, not the process).
  const hangs = path.join(dir, "hangs.test.mjs");
  writeFileSync(
    hangs,
    'import test from "node:test";\ntest("hangs", (t) => new Promise(() => { const timer = setInterval(() => {}, 1000); t.signal.addEventListener("abort", () => clearInterval(timer)); }));\n',
  );
  const quick = path.join(dir, "quick.test.mjs");
  writeFileSync(quick, 'import test from "node:test";\ntest("quick passes", () => {});\n');
  const run = spawnSync(process.execPath, ["--test-timeout=1000", RUN_FILES, "--timeout", "1000", "--reporter", "tap", hangs, quick], {
    encoding: "utf8",
    env: childEnv(),
  });
  assert.equal(run.status, 1, run.stdout + run.stderr);
  assert.match(run.stdout, /timed out after 1000ms/);
  assert.match(run.stdout, /^ok \d+ - quick passes$/m);
});
