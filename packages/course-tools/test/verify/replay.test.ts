/** `verify/replay.ts`: the chapter text's commands replayed and judged. */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { resolveCheckpoint } from "../../src/course/history.js";
import { parseChapterText, type TextCommand } from "../../src/verify/chapter-text.js";
import { judgeCommand, mistakeCommands, replayChapterText, replayEnvironment, runShellCommand, teachingFilesAt } from "../../src/verify/replay.js";
import { makeFakeCourse, REFERENCE_BETA, STARTER_BETA } from "../support/fake-course.js";

const FENCE = "```";

/** Joins lines into a text; `lineOf(text, needle)` is the 1-based line of the first line holding a needle. */
const lines = (...all: string[]) => all.join("\n");

const lineOf = (text: string, needle: string) => text.split("\n").findIndex((l) => l.includes(needle)) + 1;

// One command

test("a command without a claim must exit 0; a command with one is judged by its output", () => {
  const plain: TextCommand = { line: 7, command: "npm test", place: "practice", stage: { kind: "reference" }, shell: "sh" };
  assert.equal(judgeCommand("c.md", plain, { code: 0, output: "", timedOut: false }), undefined);
  assert.equal(
    judgeCommand("c.md", plain, { code: 1, output: "a\nnpm error code 1\n", timedOut: false }),
    "c.md:7: 命令 “npm test”（练习目录，reference）退出码 1：npm error code 1",
  );
  assert.match(judgeCommand("c.md", plain, { code: null, output: "", timedOut: true }, 60_000) ?? "", /^c\.md:7: .*超过 60 秒没有结束$/);
  const claimed: TextCommand = { ...plain, place: "repo", expect: [{ line: 9, text: "ℹ fail 1" }] };
  assert.equal(judgeCommand("c.md", claimed, { code: 1, output: "ℹ fail 1", timedOut: false }), undefined, "a red run exits 1 and is what the text says");
  assert.equal(
    judgeCommand("c.md", claimed, { code: 0, output: "ℹ fail 0", timedOut: false }),
    "c.md:9: 命令 “npm test”（课程仓库）：正文的 “ℹ fail 1” 与输出对不上，输出的这一行是 “ℹ fail 0”",
  );
});

test("commands run with a clean environment, as in a learner's terminal (no CI); node --test gets the spec reporter a terminal shows", () => {
  const base = {
    CI: "true",
    PATH: "/bin",
    npm_config_cache: "x",
    npm_lifecycle_event: "verify",
    INIT_CWD: "/repo",
    NODE_OPTIONS: "--inspect",
    NODE_TEST_CONTEXT: "child-v8",
    FORCE_COLOR: "1",
    HOME: "/h",
  };
  assert.deepEqual(replayEnvironment("npm run lab -w @pi/course -- 2.1", base), { PATH: "/bin", HOME: "/h", NO_COLOR: "1" });
  assert.equal(replayEnvironment('node --test --test-name-pattern="Lab 2.1" x.test.js', base).NODE_OPTIONS, "--test-reporter=spec");
  assert.equal(replayEnvironment("npm run build -w @pi/course && node --test x.test.js", base).NODE_OPTIONS, "--test-reporter=spec");
  assert.equal(replayEnvironment("pi-course run-tests --test-only", base).NODE_OPTIONS, undefined);
  assert.equal(replayEnvironment("npm test -w @pi/course", base).NODE_OPTIONS, undefined);
});

test("a command runs through the shell, stdout and stderr together; a time limit ends it", {
  skip: process.platform === "win32" && "POSIX shells",
}, async () => {
  const cwd = os.tmpdir();
  const done = await runShellCommand("echo out; echo err 1>&2; exit 3", { cwd, shell: "sh" });
  assert.deepEqual({ code: done.code, timedOut: done.timedOut }, { code: 3, timedOut: false });
  assert.deepEqual(done.output.split("\n").filter(Boolean).sort(), ["err", "out"]);
  const braces = await runShellCommand("echo {a,b}", { cwd, shell: "bash" });
  assert.equal(braces.output.trim(), "a b", "bash when the text asks for it");
  const stuck = await runShellCommand("sleep 30", { cwd, shell: "sh", timeoutMs: 100 });
  assert.equal(stuck.timedOut, true);
  const controller = new AbortController();
  const pending = runShellCommand("sleep 30", { cwd, shell: "sh", signal: controller.signal });
  controller.abort();
  assert.notEqual((await pending).code, 0, "an abort ends the command");
  const tmpDir = path.join(cwd, "replay-tmp");
  const temp = await runShellCommand('echo "$TMPDIR|$TEMP|$TMP"', { cwd, shell: "sh", tmpDir });
  assert.equal(temp.output.trim(), `${tmpDir}|${tmpDir}|${tmpDir}`, "the command's temporary folder is the one given");
});

/** Keeps the lines of a `node --test` run that every Node version prints alike: passed tests and the two counts. */
const STABLE = " | grep -E '^(✔|ℹ (pass|fail) )'";

/**
 * A replayable text for the synthetic chapter 02: every claim true except, perhaps, one
 * number. It builds with the compiler directly rather than through npm, to keep the test fast.
 * The test runs keep only the lines every Node version prints alike (`STABLE`), so each expect
 * block is the whole output.
 */
function replayedText(passAfter21: number): string {
  return lines(
    "# 第二章",
    "",
    "<!-- verify: repo -->",
    `${FENCE}sh`,
    "git log -1 --format=%s",
    FENCE,
    "<!-- verify: expect -->",
    `${FENCE}text`,
    "synthetic course",
    FENCE,
    "",
    "<!-- verify: practice starter -->",
    `${FENCE}sh`,
    "node_modules/.bin/tsc -p packages/pi-course/tsconfig.json",
    `node --test --test-name-pattern="Lab 2.1" packages/pi-course/dist/test/02-beta.test.js${STABLE}`,
    FENCE,
    "<!-- verify: expect -->",
    `${FENCE}text`,
    "ℹ pass 0",
    "ℹ fail 2",
    FENCE,
    "",
    "<!-- verify: practice after 2.1 -->",
    `${FENCE}sh`,
    "node_modules/.bin/tsc -p packages/pi-course/tsconfig.json",
    `node --test --test-name-pattern="Lab 2" packages/pi-course/dist/test/02-beta.test.js${STABLE}`,
    FENCE,
    "<!-- verify: expect -->",
    `${FENCE}text`,
    "✔ Lab 2.1 · catalog is sorted",
    "✔ Lab 2.1 · catalog drops duplicates",
    `ℹ pass ${passAfter21}`,
    "ℹ fail 1",
    FENCE,
    "",
    "<!-- verify: practice fault 2.1-no-sort bash -->",
    `${FENCE}bash`,
    `node_modules/.bin/tsc -p packages/pi-course/tsconfig.json && node --test packages/pi-course/dist/test/{01,02}-*.test.js${STABLE}`,
    FENCE,
    "<!-- verify: expect -->",
    `${FENCE}text`,
    "…（省略 3 行）",
    "ℹ pass 3",
    "ℹ fail 1",
    FENCE,
    "",
  );
}

test("replay on the synthetic chapter: every stage runs in a practice folder, and one changed number is the only failure, named by file and line", async (t) => {
  // The text says 3 where the run shows 2 (Lab 2.1 green, Lab 2.2 red after Lab 2.1).
  const text = replayedText(3);
  const repo = makeFakeCourse(t, { linkModules: true, overrides: { "chapters/02-beta/README.md": text } });
  const dir = mkdtempSync(path.join(os.tmpdir(), "pi-course-replay-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const progress: string[] = [];
  const check = await replayChapterText({ repo, checkpoint: await resolveCheckpoint(repo, "02"), dir, onProgress: (m) => progress.push(m) });
  assert.equal(check.name, "chapter text");
  assert.equal(check.ok, false);
  const where = `chapters/02-beta/README.md:${lineOf(text, "ℹ pass 3")}`;
  assert.equal(
    check.detail,
    `1 处与仓库不符：${where}: 命令 “node --test --test-name-pattern="Lab 2" packages/pi-course/dist/test/02-beta.test.js${STABLE}”（练习目录，after 2.1）：正文的 “ℹ pass 3” 与输出对不上，输出的这一行是 “ℹ pass 2”`,
  );
  assert.deepEqual(
    progress.map((m) => m.split(":")[0]),
    ["课程仓库", "练习目录，starter", "练习目录，starter", "练习目录，after 2.1", "练习目录，after 2.1", "练习目录，fault 2.1-no-sort"],
    "repo first, then the stages in a learner's order",
  );
});

test("a quoted common mistake replays as `lab <its lab>` with that fault's own edit of the reference, every other lab done", async (t) => {
  const repo = makeFakeCourse(t, { linkModules: false });
  const { chapter } = await resolveCheckpoint(repo, "02");
  const plan = parseChapterText(lines("<!-- verify: mistake 2.2-no-join -->", `${FENCE}text`, "Lab 2.2 · 渲染 0/1", "…（省略 4 行）", FENCE), "c.md");
  const [command, ...rest] = mistakeCommands(plan, chapter.manifest);
  assert.deepEqual(rest, []);
  assert.deepEqual(command, {
    line: 2,
    command: "npm run lab -w @pi/course -- 2.2",
    place: "practice",
    stage: { kind: "mistake", fault: "2.2-no-join" },
    shell: "sh",
    expect: plan.mistakes[0]!.expect,
  });
  const files = await teachingFilesAt(
    command!.stage,
    chapter.manifest,
    new Map([["packages/pi-course/src/beta.ts", { starter: STARTER_BETA, reference: REFERENCE_BETA }]]),
  );
  assert.equal(typeof files, "object");
  assert.equal((files as Map<string, string>).get("packages/pi-course/src/beta.ts"), REFERENCE_BETA.replace('join(" | ")', 'join("")'));
  assert.deepEqual(
    mistakeCommands(parseChapterText(lines("<!-- verify: mistake nope -->", `${FENCE}text`, "x", FENCE), "c.md"), chapter.manifest),
    [],
    "an unknown fault is the manifest check's to report",
  );
});
