/**
 * `lab NN --challenge` on a synthetic chapter whose challenge file has every kind of
 * outcome: a pass, a failed assertion, a test that skips itself on this machine, a test
 * that waits for ever (node's own limit fails it), and one that computes for ever (no
 * in-process limit can stop it: the run stalls, the process is ended, the file resumes
 * after it), followed by a test that must still run.
 */
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import test from "node:test";
import { createPaint } from "../../src/core/term.js";
import { loadManifest } from "../../src/course/manifest.js";
import { runChallenge } from "../../src/lab/challenge.js";
import { challengeJson, challengeOk, formatChallenge } from "../../src/lab/format.js";
import { createMiniCourse, MINI_MANIFEST, removeMiniCourse } from "../support/lab-fixture.js";

const EDGE_TEST = `import assert from "node:assert/strict";
import test from "node:test";
import { add } from "../../src/mini.js";

test("edge: adds negative numbers", () => {
  assert.equal(add(-2, -3), -5);
});

test("edge: adds decimals exactly", () => {
  assert.equal(add(0.1, 0.2), 0.3, "§1：小数相加必须精确");
});

test("edge: only where FIFOs exist", { skip: "这台机器没有 FIFO" }, () => {
  throw new Error("a skipped test never runs");
});

test("edge: waits for an answer that never comes", async () => {
  const timers = globalThis as unknown as { setInterval(fn: () => void, ms: number): unknown };
  await new Promise(() => timers.setInterval(() => {}, 1000));
});

test("edge: computes for ever", () => {
  // Never back to the event loop, so no in-process limit can stop it; it sleeps in each round
  // rather than spend a core for the seconds the run waits before it calls the silence a stall.
  const nap = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    add(1, 1);
    Atomics.wait(nap, 0, 0, 20);
  }
});

test("edge: still runs after the hang", () => {
  assert.equal(add(1, 1), 2);
});
`;

const QUICK_TEST = `import test from "node:test";

test("quick: passes at once", () => {});
`;

const CHALLENGE_BLOCK = `challenge:
  tests:
    - file: packages/pi-course/test/challenge/99-edge.test.ts
      title: 边界
    - file: packages/pi-course/test/challenge/99-quick.test.ts
      title: 快速
`;

test("lab --challenge: pass, fail, skip, a wait and a computation that never end; the run goes on after each", { timeout: 120_000 }, async (t) => {
  const course = await createMiniCourse("reference");
  t.after(() => removeMiniCourse(course));
  await mkdir(path.join(course.root, "packages/pi-course/test/challenge"), { recursive: true });
  await writeFile(path.join(course.root, "packages/pi-course/test/challenge/99-edge.test.ts"), EDGE_TEST);
  await writeFile(path.join(course.root, "packages/pi-course/test/challenge/99-quick.test.ts"), QUICK_TEST);
  const files = "  - packages/pi-course/test/challenge/99-edge.test.ts\n  - packages/pi-course/test/challenge/99-quick.test.ts\n";
  await writeFile(
    path.join(course.root, "chapters/99-mini/chapter.yaml"),
    MINI_MANIFEST.replace("  - packages/pi-course/test/99-mini.test.ts\n", `  - packages/pi-course/test/99-mini.test.ts\n${files}`).replace(
      "labs:\n",
      `${CHALLENGE_BLOCK}labs:\n`,
    ),
  );
  const manifest = await loadManifest(course.root, "99");

  // A build already under way is awaited, not started again: its failure is the outcome.
  const failedBuild = { ok: false, diagnostics: ["src/mini.ts(1,1): error TS0000: from the started build"], output: "" };
  const started = { tsconfig: "packages/pi-course/tsconfig.json", result: Promise.resolve(failedBuild), stop: async () => {} };
  assert.deepEqual(await runChallenge(course.root, manifest, { started }), { kind: "build_failed", diagnostics: failedBuild.diagnostics });

  const outcome = await runChallenge(course.root, manifest, { testTimeoutMs: 800 });
  assert.equal(outcome.kind, "tested", JSON.stringify(outcome));
  assert.ok(outcome.kind === "tested");
  // The quick theme ends long before the one that hangs twice; the table keeps the manifest's order.
  assert.deepEqual(
    outcome.themes.map((t) => [t.title, t.passed, t.total]),
    [
      ["边界", 2, 5],
      ["快速", 1, 1],
    ],
  );
  const [theme] = outcome.themes;
  assert.deepEqual([theme?.passed, theme?.total, theme?.skipped], [2, 5, 1], "the skipped test is neither passed nor failed");
  assert.deepEqual(
    theme?.failures.map((f) => f.test),
    ["edge: adds decimals exactly", "edge: waits for an answer that never comes", "edge: computes for ever"],
    "each failure once, in declaration order",
  );
  assert.match(theme!.failures[0]!.message, /§1：小数相加必须精确/);
  // Node 24+ fails the waiting test by its own --test-timeout; Node 20 and 22 apply that flag
  // only under --test, so there the silence ends the process, as for the computation.
  assert.match(theme!.failures[1]!.message, /timed out after 800ms|超过 0\.8 秒没有结束/);
  assert.equal(theme!.failures[2]!.timedOut, true);
  assert.match(theme!.failures[2]!.message, /^超过 0\.8 秒没有结束，测试进程被结束：测试 “edge: computes for ever”里/);
  assert.equal(challengeOk(outcome), false);

  const text = formatChallenge(outcome, manifest, { paint: createPaint(false), courseRoot: course.root, watch: false });
  assert.match(text, /✗ 边界\s+2\/5\s+edge: adds decimals exactly：/);
  assert.match(text, /\n挑战 3\/6\n/);
  const json = challengeJson(outcome, manifest, course.root) as { themes: { skipped: number }[] };
  assert.equal(json.themes[0]?.skipped, 1);
});
