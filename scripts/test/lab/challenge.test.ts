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
import { createPaint } from "../../lib/core/term.js";
import { loadManifest } from "../../lib/course/manifest.js";
import { runChallenge } from "../../lib/lab/challenge.js";
import { challengeJson, challengeOk, formatChallenge } from "../../lib/lab/format.js";
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
  for (;;) add(1, 1);
});

test("edge: still runs after the hang", () => {
  assert.equal(add(1, 1), 2);
});
`;

const CHALLENGE_BLOCK = `challenge:
  tests:
    - file: packages/pi-course/test/challenge/99-edge.test.ts
      title: 边界
`;

test("lab --challenge: pass, fail, skip, a wait and a computation that never end; the run goes on after each", { timeout: 120_000 }, async (t) => {
  const course = await createMiniCourse("reference");
  t.after(() => removeMiniCourse(course));
  await mkdir(path.join(course.root, "packages/pi-course/test/challenge"), { recursive: true });
  await writeFile(path.join(course.root, "packages/pi-course/test/challenge/99-edge.test.ts"), EDGE_TEST);
  await writeFile(
    path.join(course.root, "checkpoints/99.yaml"),
    MINI_MANIFEST.replace("  - checkpoints/99.yaml\n", "  - checkpoints/99.yaml\n  - packages/pi-course/test/challenge/99-edge.test.ts\n").replace(
      "labs:\n",
      `${CHALLENGE_BLOCK}labs:\n`,
    ),
  );
  const manifest = await loadManifest(course.root, "99");

  const outcome = await runChallenge(course.root, manifest, { testTimeoutMs: 800 });
  assert.equal(outcome.kind, "tested", JSON.stringify(outcome));
  assert.ok(outcome.kind === "tested");
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
  assert.match(text, /\n挑战 2\/5\n/);
  assert.match(text, /每个主题的规则写在本章正文的“挑战关”一节/);
  // A tier whose rules live in a text of their own names that file.
  const apart = formatChallenge(
    outcome,
    { ...manifest, challengeText: "chapters/99-challenge.md" },
    { paint: createPaint(false), courseRoot: course.root, watch: false },
  );
  assert.match(apart, /每个主题的规则写在挑战关的正文 chapters\/99-challenge\.md；/);
  const json = challengeJson(outcome, manifest, course.root) as { themes: { skipped: number }[] };
  assert.equal(json.themes[0]?.skipped, 1);
});
