// test-process: shared
/** `lab/watch.ts`: reruns on save, debounced, never overlapping, on every kind of save. */
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { createRerunner, debounce, WATCH_DEBOUNCE_MS, watchSources } from "../../src/lab/watch.js";

test("a rerun aborts the run in progress, and of queued reruns only the last one runs", async () => {
  const log: string[] = [];
  const gates: (() => void)[] = [];
  let n = 0;
  const rerunner = createRerunner(
    async (signal) => {
      const id = ++n;
      log.push(`start ${id}`);
      await new Promise<void>((resolve) => {
        gates.push(resolve);
        signal.addEventListener("abort", () => resolve(), { once: true });
      });
      log.push(`${signal.aborted ? "aborted" : "done"} ${id}`);
    },
    (error) => log.push(`error ${String(error)}`),
  );
  const first = rerunner.trigger();
  const second = rerunner.trigger(); // aborts 1
  const third = rerunner.trigger(); // supersedes 2 before it starts
  await first;
  await Promise.resolve();
  while (gates.length < 2) await new Promise((resolve) => setImmediate(resolve));
  gates[1]?.();
  await Promise.all([second, third]);
  assert.deepEqual(log, ["start 1", "aborted 1", "start 2", "done 2"]);
  await rerunner.stop();
  await rerunner.trigger();
  assert.equal(n, 2, "no run after stop");
});

test("a failing run is reported and the loop goes on", async () => {
  const errors: unknown[] = [];
  let runs = 0;
  const rerunner = createRerunner(
    async () => {
      runs++;
      if (runs === 1) throw new Error("first fails");
    },
    (error) => errors.push(error),
  );
  await rerunner.trigger();
  await rerunner.trigger();
  assert.equal(runs, 2);
  assert.equal(errors.length, 1);
});

test("debounce calls once after the last of a burst, and cancel drops it", async () => {
  let calls = 0;
  const fire = debounce(() => calls++, 5);
  fire();
  fire();
  fire();
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(calls, 1);
  fire();
  fire.cancel();
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(calls, 1);
});

/** Saves `text` to `file` the way many editors (and `sed -i`) do: a temporary file renamed over it. */
function renameSave(file: string, text: string): void {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.swp`);
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

test("watching, a rerun sees every save: in-place, rename-over saves in a row, delete-and-create, a replaced folder", async (t) => {
  const root = await mkdtemp(path.join(os.tmpdir(), "pi-watch-"));
  t.after(() => rm(root, { recursive: true, force: true }));
  const src = path.join(root, "pkg", "src");
  const tests = path.join(root, "pkg", "test");
  mkdirSync(src, { recursive: true });
  mkdirSync(tests);
  for (const name of ["a.ts", "b.ts", "c.ts"]) writeFileSync(path.join(src, name), "0");
  // A "run" reads the tree, as a lab rerun would; runs are debounced exactly like lab's.
  const snapshot = (dir: string) =>
    readdirSync(dir)
      .filter((n) => n.endsWith(".ts"))
      .sort()
      .map((n) => `${n}=${readFileSync(path.join(dir, n), "utf8")}`)
      .join(" ");
  let runs: string[] = [];
  let wake = () => {};
  const rerun = debounce(() => {
    runs.push(`${snapshot(src)} | ${snapshot(tests)}`);
    wake();
  }, WATCH_DEBOUNCE_MS);
  const watcher = watchSources([src, tests], rerun);
  t.after(async () => {
    rerun.cancel();
    await watcher.close();
  });
  await watcher.ready;
  /** Does `action`, then waits (for events, not for time) until a rerun has seen `seen` in the tree. */
  const expect = async (seen: string, action: () => void) => {
    runs = [];
    action();
    while (!runs.some((run) => run.includes(seen))) await new Promise<void>((resolve) => (wake = resolve));
  };
  await expect("a.ts=1", () => writeFileSync(path.join(src, "a.ts"), "1"));
  for (let save = 1; save <= 3; save++) await expect(`b.ts=${save}`, () => renameSave(path.join(src, "b.ts"), String(save)));
  await expect("c.ts=2", () => {
    unlinkSync(path.join(src, "c.ts"));
    writeFileSync(path.join(src, "c.ts"), "2");
  });
  // A tool that saves the whole folder at once: a new folder renamed into place.
  await expect("a.ts=9 b.ts=9 c.ts=9", () => {
    mkdirSync(`${src}.new`);
    for (const name of ["a.ts", "b.ts", "c.ts"]) writeFileSync(path.join(`${src}.new`, name), "9");
    renameSync(src, `${src}.old`);
    renameSync(`${src}.new`, src);
    rmSync(`${src}.old`, { recursive: true });
  });
  await expect("d.ts=1", () => writeFileSync(path.join(src, "d.ts"), "1"));
  await expect("b.ts=4", () => renameSave(path.join(src, "b.ts"), "4"));
  await expect("x.test.ts=1", () => writeFileSync(path.join(tests, "x.test.ts"), "1"));
});
