// test-process: shared
/**
 * The `fault` command (`packages/course-tools/src/fault.ts`): its command line, which faults it selects, the
 * learner's report, and the exercise as a learner runs it in a practice folder.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { parseCommand } from "../src/cli.js";
import { formatLearnerResult, selectFaults } from "../src/fault.js";
import { learnerFaults } from "../src/course/faults.js";
import { parseManifest, type ChapterManifest } from "../src/course/manifest.js";
import { LEARNER_SOLUTION, MINI_FILE, miniManifest, practiceFolder } from "./support/fault-fixture.js";
import { runCommand } from "./support/tooling.js";

function manifestOf(text = miniManifest()): ChapterManifest {
  return parseManifest(text, "chapters/98-mini/chapter.yaml");
}

test("command line: chapter, optional id, --all, --list, --json; usage errors", () => {
  assert.deepEqual(parseCommand("fault", ["12", "--all", "--json"]), { help: false, chapter: "12", all: true, list: false, json: true });
  assert.equal(parseCommand("fault", ["3", "03.1-x"]).id, "03.1-x");
  assert.equal(parseCommand("fault", ["--help"]).help, true);
  for (const argv of [[], ["x"], ["12", "a", "b"], ["12", "--bogus"], ["12", "a", "--all"]]) {
    assert.throws(() => parseCommand("fault", argv), { code: "USAGE" }, argv.join(" "));
  }
  const faults = [
    { id: "a", exercise: false },
    { id: "b", exercise: true },
  ];
  assert.deepEqual(
    selectFaults(faults, { all: false }, "98").map((f) => f.id),
    ["b"],
  );
  assert.deepEqual(
    selectFaults(faults, { all: true }, "98").map((f) => f.id),
    ["a", "b"],
  );
  assert.throws(() => selectFaults(faults, { id: "c", all: false }, "98"), { code: "USAGE" });
  assert.throws(() => selectFaults([{ id: "a", exercise: false }], { all: false }, "98"), { code: "FAULT_NONE" });
});

test("the learner's report names the catching test, the manual edit, or what to finish first", () => {
  const manifest = manifestOf();
  const [exercise] = learnerFaults(manifest);
  const base = { fault: exercise!.id, lab: "98.2", file: MINI_FILE, caughtBy: [], restored: true };
  const killed = formatLearnerResult(
    {
      ...base,
      status: "killed",
      line: 14,
      caughtBy: ["Lab 98.2 · untrusted code is never loaded"],
      firstFailure: { test: "t", message: "+ actual - expected\n+   'load'" },
      after: { passed: 2, total: 2 },
    },
    exercise!,
    manifest,
  );
  assert.match(killed, /抓住了：“Lab 98\.2 · untrusted code is never loaded”/);
  assert.match(killed, /\+   'load'/);
  assert.match(killed, /已恢复：.*逐字节相同；Lab 98\.2 2\/2/);
  assert.doesNotMatch(killed, /全绿/, "without the chapter's state, nothing is claimed about it");
  const chapterGreen = [
    { id: "98.1", passed: 2, total: 2 },
    { id: "98.2", passed: 2, total: 2 },
  ];
  const killedBase = { ...base, status: "killed" as const, line: 14, caughtBy: ["Lab 98.2 · untrusted code is never loaded"], after: { passed: 2, total: 2 } };
  assert.match(formatLearnerResult({ ...killedBase, chapterAfter: chapterGreen }, exercise!, manifest), /本章全量应仍为全绿/);
  const earlierRed = formatLearnerResult({ ...killedBase, chapterAfter: [{ id: "98.1", passed: 1, total: 2 }, chapterGreen[1]!] }, exercise!, manifest);
  assert.doesNotMatch(earlierRed, /全绿/, "an earlier red lab is never called green");
  assert.match(earlierRed, /还有没通过的 Lab（Lab 98\.1 1\/2）/);
  const manual = formatLearnerResult({ ...base, status: "manual", manualReason: "有 2 个叫 gate 的函数", candidateLines: [3, 9] }, exercise!, manifest);
  assert.match(manual, /没有自动注入：有 2 个叫 gate 的函数/);
  assert.match(manual, /gate\(loader\) 里，返回 "skipped" 的 return 语句之前/);
  assert.ok(manual.includes("loader.load(); // 故意错误"));
  assert.ok(!manual.includes("已恢复"), "nothing was changed, so nothing is said to be restored");
  assert.match(formatLearnerResult({ ...base, status: "not_ready", before: { passed: 0, total: 2 } }, exercise!, manifest), /Lab 98\.2 现在是 0\/2/);
  assert.match(formatLearnerResult({ ...base, status: "survived", line: 14, after: { passed: 2, total: 2 } }, exercise!, manifest), /没有抓住/);
});

test("fault 98 in a practice folder, on a solution whose trust branch is one line: injects the line, is caught, restores the file byte for byte, exit 0", async (t) => {
  // (Until this round the same run was made on the real chapter 12, in packages/course-tools/test/chapter12-loop.test.ts.)
  const oneLine = LEARNER_SOLUTION.replace("if (trusted !== true) {\n      return 'skipped';\n  }", "if (trusted !== true) return 'skipped';");
  assert.notEqual(oneLine, LEARNER_SOLUTION);
  const root = await practiceFolder(t, oneLine);
  const tmp = await mkdtemp(path.join(os.tmpdir(), "pi-fault-tmp-"));
  t.after(() => rm(tmp, { recursive: true, force: true }));
  const run = await runCommand(root, "fault", ["98"], { env: { TMPDIR: tmp, TEMP: tmp, TMP: tmp, NO_COLOR: "1" } });
  assert.equal(run.code, 0, `${run.stdout}${run.stderr}`);
  // The line goes on a line of its own inside the braces the one-line branch was given.
  const line = oneLine.split("\n").findIndex((text) => text.includes("if (trusted !== true) return")) + 2;
  assert.match(run.stderr, new RegExp(`已在 packages/pi-course/src/mini\\.ts 第 ${line} 行加入：loader\\.load\\(\\); // 故意错误`));
  assert.match(run.stdout, /抓住了：“Lab 98\.2 · untrusted code is never loaded[^”]*” 失败。/);
  assert.match(run.stdout, /已恢复：packages\/pi-course\/src\/mini\.ts 与实验前逐字节相同；Lab 98\.2 2\/2/);
  assert.match(run.stdout, /本章全量应仍为全绿/);
  assert.equal(readFileSync(path.join(root, MINI_FILE), "utf8"), oneLine);
  assert.deepEqual(
    readdirSync(tmp).filter((name) => name.startsWith("pi-lab-")),
    [],
  );
});
