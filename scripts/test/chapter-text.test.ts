/**
 * The chapter text as `verify` replays it: the markup (parsing and its refusals), what a
 * claim means, what the manifest alone confirms, how one command is run and judged, and
 * one replay end to end on the synthetic course, where a single changed number must be
 * the only failure and name its file and line.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { resolveCheckpoint } from "../lib/course/history.js";
import { parseManifest } from "../lib/course/manifest.js";
import { authorFaults } from "../lib/course/faults.js";
import { checkPlanAgainstManifest, parseChapterText, recordLineProblem, type TextCommand } from "../lib/verify/chapter-text.js";
import { firstMissingClaim } from "../lib/verify/claims.js";
import { judgeCommand, replayChapterText, replayEnvironment, runShellCommand } from "../lib/verify/replay.js";
import { makeFakeCourse, SCAFFOLD_ERROR, SCAFFOLD_ERROR_2 } from "./support/fake-course.js";

const FENCE = "```";

/** Joins lines into a text; `lineOf(text, needle)` is the 1-based line of the first line holding a needle. */
const lines = (...all: string[]) => all.join("\n");
const lineOf = (text: string, needle: string) => text.split("\n").findIndex((l) => l.includes(needle)) + 1;

const MANIFEST = parseManifest(
  `format: 1
id: "02"
title: 第二章
files: [packages/pi-course/src/beta.ts, packages/pi-course/test/02-beta.test.ts, starters/02-beta.ts, checkpoints/02.yaml, chapters/02-beta.md]
starters: [{ from: starters/02-beta.ts, to: packages/pi-course/src/beta.ts }]
focusedTests: [packages/pi-course/test/02-beta.test.ts]
text: chapters/02-beta.md
labs:
  - { id: "2.1", title: 目录去重并排序, tests: 2, scaffoldError: "${SCAFFOLD_ERROR}", hints: [a, b, c, d] }
  - { id: "2.2", title: 渲染, tests: 1, scaffoldError: "${SCAFFOLD_ERROR_2}", hints: [a, b, c, d] }
faults:
  - id: 2.1-no-sort
    lab: "2.1"
    description: 忘记排序
    find: "].sort();"
    replace: "];"
    killedBy: ["Lab 2.1 · catalog is sorted"]
    exercise: true
    learner: { function: 'betaCatalog(names)', before: 'return', insert: "unique.reverse(); // 故意错误", explain: 反转 }
  - { id: 2.2-no-join, lab: "2.2", description: 忘记连接, find: 'join(" | ")', replace: 'join("")', killedBy: ["Lab 2.2"] }
`,
  "checkpoints/02.yaml",
);

// ---------------------------------------------------------------------------
// Markup
// ---------------------------------------------------------------------------

const MARKED = lines(
  "# 第二章",
  "",
  "在课程仓库里：",
  "",
  "<!-- verify: repo -->",
  `${FENCE}sh`,
  "# a comment is no command",
  "npm run build -w @pi/course",
  `${FENCE}`,
  "",
  "<!-- verify: practice after 2.1 -->",
  `${FENCE}sh`,
  "npm run build -w @pi/course",
  'node --test --test-name-pattern="Lab 2.2" \\',
  "  packages/pi-course/dist/test/02-beta.test.js",
  `${FENCE}`,
  "",
  "会看到（节选）：",
  "",
  "<!-- verify: expect -->",
  `${FENCE}text`,
  "✖ Lab 2.2 · render joins the catalog",
  "…",
  "ℹ fail 1",
  `${FENCE}`,
  "",
  "<!-- verify: practice fault 2.1-no-sort bash -->",
  `${FENCE}bash`,
  "node --test packages/pi-course/dist/test/{01,02}-*.test.js",
  `${FENCE}`,
  "",
  "<!-- verify: skip 需要网络 -->",
  `${FENCE}sh`,
  "npm install",
  `${FENCE}`,
  "",
  `${FENCE}ts`,
  "const shown = 'a code block that is not a command';",
  `${FENCE}`,
  "",
  "<!-- verify: inject 2.1-no-sort -->",
  `${FENCE}ts`,
  "unique.reverse(); // 故意错误",
  `${FENCE}`,
  "",
  "<!-- verify: labs -->",
  "| Lab | 主题 | 测试数 | 施工位错误 |",
  "|---|---|---|---|",
  `| 2.1 | 目录去重并排序 | 2 | \`${SCAFFOLD_ERROR}\` |`,
  `| 2.2 | 渲染 | 1 | \`${SCAFFOLD_ERROR_2}\` |`,
  "| 合计 | | 3 | |",
  "",
  "<!-- verify: record -->",
  `${FENCE}text`,
  "Lab 2.1: 2/2",
  "chapter total: 3/3",
  `${FENCE}`,
);

test("markup: commands with place, stage, shell and line; an expect block claims the last command of the run block above", () => {
  const plan = parseChapterText(MARKED, "chapters/02-beta.md");
  const brief = (c: TextCommand) => [c.line, c.place, c.stage, c.shell, c.command, c.expect?.map((e) => [e.line, e.text])];
  assert.deepEqual(plan.commands.map(brief), [
    [8, "repo", { kind: "starter" }, "sh", "npm run build -w @pi/course", undefined],
    [13, "practice", { kind: "after", lab: "2.1" }, "sh", "npm run build -w @pi/course", undefined],
    [
      14,
      "practice",
      { kind: "after", lab: "2.1" },
      "sh",
      'node --test --test-name-pattern="Lab 2.2" packages/pi-course/dist/test/02-beta.test.js',
      [
        [22, "✖ Lab 2.2 · render joins the catalog"],
        [24, "ℹ fail 1"],
      ],
    ],
    [29, "practice", { kind: "fault", fault: "2.1-no-sort" }, "bash", "node --test packages/pi-course/dist/test/{01,02}-*.test.js", undefined],
  ]);
  assert.deepEqual(plan.skipped, [{ line: 33, reason: "需要网络" }]);
  assert.deepEqual(plan.injections, [{ line: 43, fault: "2.1-no-sort", text: "unique.reverse(); // 故意错误" }]);
  assert.deepEqual(plan.labsTables.map((t) => [t.line, t.rows.map((r) => r.cells[0])]), [[47, ["2.1", "2.2", "合计"]]]);
  assert.deepEqual(plan.records, [[{ line: 55, text: "Lab 2.1: 2/2" }, { line: 56, text: "chapter total: 3/3" }]]);
  assert.deepEqual(checkPlanAgainstManifest(plan, MANIFEST), [], "everything the manifest can confirm holds");
});

test("markup: what the parser refuses, naming the file and line", () => {
  const refusals: [string, string, RegExp][] = [
    ["a command block without a verify directive", lines("text", `${FENCE}sh`, "npm test", FENCE), /^c\.md:2: 命令块前没有 verify 标记/],
    ["an expect block with no run block before it", lines("<!-- verify: expect -->", `${FENCE}text`, "x", FENCE), /^c\.md:1: verify: expect 之前没有被运行的命令块/],
    [
      "an expect block after another code block",
      lines("<!-- verify: repo -->", `${FENCE}sh`, "npm test", FENCE, `${FENCE}ts`, "x", FENCE, "<!-- verify: expect -->", `${FENCE}text`, "y", FENCE),
      /^c\.md:8: verify: expect 之前没有被运行的命令块/,
    ],
    ["two expect blocks for one command", lines("<!-- verify: repo -->", `${FENCE}sh`, "a", FENCE, "<!-- verify: expect -->", `${FENCE}text`, "x", FENCE, "<!-- verify: expect -->", `${FENCE}text`, "y", FENCE), /^c\.md:9: 第 3 行的命令已经有一个 expect 块/],
    ["an empty expect block", lines("<!-- verify: repo -->", `${FENCE}sh`, "a", FENCE, "<!-- verify: expect -->", `${FENCE}text`, "…", FENCE), /^c\.md:6: expect 块是空的/],
    ["a skip without a reason", lines("<!-- verify: skip -->", `${FENCE}sh`, "npm install", FENCE), /^c\.md:1: verify: skip 要写明理由/],
    ["cd inside a run block", lines("<!-- verify: repo -->", `${FENCE}sh`, "cd ../pi-practice-02", FENCE), /^c\.md:3: 命令块里不能有 cd/],
    ["a practice block without a stage", lines("<!-- verify: practice -->", `${FENCE}sh`, "npm test", FENCE), /^c\.md:1: 练习目录命令需要阶段/],
    ["a repo block with a stage", lines("<!-- verify: repo starter -->", `${FENCE}sh`, "npm test", FENCE), /^c\.md:1: 课程仓库里的命令没有阶段/],
    ["a run directive before a non-shell block", lines("<!-- verify: repo -->", `${FENCE}ts`, "x", FENCE), /^c\.md:2: verify 运行的代码块要标成 sh 或 bash/],
    ["a directive with nothing after it", lines("<!-- verify: repo -->", "", "prose"), /^c\.md:1: verify 运行标记 之后应紧跟一个代码块/],
    ["an unknown directive", lines("<!-- verify: run -->"), /^c\.md:1: 不认识的 verify 标记 “run”/],
    ["a continuation with nothing after it", lines("<!-- verify: repo -->", `${FENCE}sh`, "npm test \\", FENCE), /^c\.md:3: 命令以 \\ 结尾/],
    ["an unterminated fence", lines("<!-- verify: repo -->", `${FENCE}sh`, "npm test"), /^c\.md:2: 代码块没有结束的围栏/],
    ["a labs directive without a table", lines("<!-- verify: labs -->", "", "prose"), /^c\.md:1: verify: labs 之后应紧跟一张 Markdown 表格/],
    [
      "a count of a filtered node --test run that differs between Node versions",
      lines("<!-- verify: practice starter -->", `${FENCE}sh`, 'node --test --test-name-pattern="Lab 2.1" t.js', FENCE, "<!-- verify: expect -->", `${FENCE}text`, "ℹ pass 0", "ℹ skipped 1", FENCE),
      /^c\.md:8: “ℹ skipped 1” 随 Node 版本而变/,
    ],
  ];
  for (const [label, text, message] of refusals) {
    assert.throws(() => parseChapterText(text, "c.md"), (error: Error & { code?: string }) => {
      assert.equal(error.code, "CHAPTER_TEXT_INVALID", label);
      assert.match(error.message, message, label);
      return true;
    });
  }
});

// ---------------------------------------------------------------------------
// Claims
// ---------------------------------------------------------------------------

test("a claim is an ordered excerpt of the output, matched on whole words: padding and timings may differ, numbers may not", () => {
  const output = lines(
    "\u001b[31m✖ Lab 2.1 · catalog is sorted (3.2ms)\u001b[39m",
    "  Error: Lab 2.1 beta catalog 尚未实现",
    "Lab 2.2 · 渲染      0/1   未开始",
    "ℹ pass 30",
    "ℹ fail 2",
  );
  const claim = (...texts: string[]) => texts.map((text, index) => ({ line: index + 1, text }));
  assert.equal(firstMissingClaim(output, claim("✖ Lab 2.1 · catalog is sorted", "Error: Lab 2.1 beta catalog 尚未实现", "ℹ fail 2")), undefined);
  assert.equal(firstMissingClaim(output, claim("Lab 2.2 · 渲染 0/1")), undefined, "column padding and a suffix do not matter");
  assert.deepEqual(firstMissingClaim(output, claim("ℹ pass 3")), { line: 1, text: "ℹ pass 3" }, "3 is not 30");
  assert.deepEqual(firstMissingClaim(output, claim("Lab 2.2 · 渲染 1/1")), { line: 1, text: "Lab 2.2 · 渲染 1/1" });
  assert.deepEqual(firstMissingClaim(output, claim("ℹ fail 2", "✖ Lab 2.1 · catalog is sorted")), { line: 2, text: "✖ Lab 2.1 · catalog is sorted" }, "order counts");
  assert.deepEqual(firstMissingClaim(output, claim("ℹ fail 2", "ℹ fail 2")), { line: 2, text: "ℹ fail 2" }, "one output line backs one claimed line");
});

test("the manifest confirms the labs table, the exercise line and the acceptance record, cell by cell and number by number", () => {
  const broken = MARKED.replace(`| 2.2 | 渲染 | 1 |`, `| 2.2 | 渲染 | 2 |`)
    .replace("| 合计 | | 3 | |", "| 合计 | | 4 | |")
    .replace("unique.reverse(); // 故意错误", "unique.reverse();")
    .replace("<!-- verify: practice after 2.1 -->", "<!-- verify: practice after 2.9 -->")
    .replace("chapter total: 3/3", "chapter total: 2/3");
  const problems = checkPlanAgainstManifest(parseChapterText(broken, "c.md"), MANIFEST);
  assert.deepEqual(problems, [
    "c.md:13: 本章没有 Lab 2.9",
    "c.md:14: 本章没有 Lab 2.9",
    `c.md:43: 正文里的故障行 “unique.reverse();” 与清单注入的 “unique.reverse(); // 故意错误” 不同`,
    `c.md:50: 测试数一栏写的是 “2”，清单里 Lab 2.2 是 “1”`,
    `c.md:51: 合计写的是 “4”，各 Lab 的测试数加起来是 3`,
    `c.md:56: chapter total 应为 3/3，记录写的是 2/3`,
  ]);

  const faults = authorFaults(MANIFEST);
  const ok = [
    "fresh build: pass",
    `first red: Lab 2.1 0/2，错误恰好是 “${SCAFFOLD_ERROR}”`,
    "Lab 2.2: 1/1",
    "fault 2.1-no-sort: 被 “Lab 2.1 · catalog is sorted” 抓住；恢复后 Lab 2.1 2/2",
    "through chapter 02: all pass",
  ];
  for (const line of ok) assert.equal(recordLineProblem(line, MANIFEST, faults), undefined, line);
  const wrong: [string, RegExp][] = [
    ["first red: Lab 2.1 1/2", /应为 0\/2/],
    ["first red: Lab 2.2 0/1", /第一个 Lab 2\.1/],
    [`first red: Lab 2.1 0/2 "${SCAFFOLD_ERROR_2}"`, /错误应是/],
    ["Lab 2.3: 1/1", /本章没有 Lab 2\.3/],
    ["fault 2.1-no-sort: 被 “Lab 2.2 · render joins the catalog” 抓住；恢复后 Lab 2.1 2/2", /应被 “Lab 2\.1 · catalog is sorted” 抓住/],
    ["fault 2.1-no-sort: 被 “Lab 2.1 · catalog is sorted” 抓住；恢复后 Lab 2.1 1/2", /恢复后的 Lab 2\.1 应为 2\/2/],
    ["fault 9.9-none: x", /清单里没有故障 9\.9-none/],
    ["through chapter 12: all pass", /through chapter 02/],
    ["every lab green", /不认识的一行/],
  ];
  for (const [line, message] of wrong) assert.match(recordLineProblem(line, MANIFEST, faults) ?? "(accepted)", message, line);
});

// ---------------------------------------------------------------------------
// One command
// ---------------------------------------------------------------------------

test("a command without a claim must exit 0; a command with one is judged by its output", () => {
  const plain: TextCommand = { line: 7, command: "npm test", place: "practice", stage: { kind: "reference" }, shell: "sh" };
  assert.equal(judgeCommand("c.md", plain, { code: 0, output: "", timedOut: false }), undefined);
  assert.equal(judgeCommand("c.md", plain, { code: 1, output: "a\nnpm error code 1\n", timedOut: false }), "c.md:7: 命令 “npm test”（练习目录，reference）退出码 1：npm error code 1");
  assert.match(judgeCommand("c.md", plain, { code: null, output: "", timedOut: true }, 60_000) ?? "", /^c\.md:7: .*超过 60 秒没有结束$/);
  const claimed: TextCommand = { ...plain, place: "repo", expect: [{ line: 9, text: "ℹ fail 1" }] };
  assert.equal(judgeCommand("c.md", claimed, { code: 1, output: "ℹ fail 1", timedOut: false }), undefined, "a red run exits 1 and is what the text says");
  assert.equal(judgeCommand("c.md", claimed, { code: 0, output: "ℹ fail 0", timedOut: false }), "c.md:9: 命令 “npm test”（课程仓库）的输出里没有 “ℹ fail 1”（按正文的顺序）");
});

test("commands run with a clean environment; node --test gets the spec reporter a terminal shows", () => {
  const base = { PATH: "/bin", npm_config_cache: "x", npm_lifecycle_event: "verify", INIT_CWD: "/repo", NODE_OPTIONS: "--inspect", NODE_TEST_CONTEXT: "child-v8", FORCE_COLOR: "1", HOME: "/h" };
  assert.deepEqual(replayEnvironment("npm run lab -w @pi/course -- 2.1", base), { PATH: "/bin", HOME: "/h", NO_COLOR: "1" });
  assert.equal(replayEnvironment('node --test --test-name-pattern="Lab 2.1" x.test.js', base).NODE_OPTIONS, "--test-reporter=spec");
  assert.equal(replayEnvironment("npm run build -w @pi/course && node --test x.test.js", base).NODE_OPTIONS, "--test-reporter=spec");
  assert.equal(replayEnvironment("node scripts/run-tests.mjs --test-only", base).NODE_OPTIONS, undefined);
  assert.equal(replayEnvironment("npm test -w @pi/course", base).NODE_OPTIONS, undefined);
});

test("a command runs through the shell, stdout and stderr together; a time limit ends it", { skip: process.platform === "win32" && "POSIX shells" }, async () => {
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
});

// ---------------------------------------------------------------------------
// A replay end to end
// ---------------------------------------------------------------------------

/**
 * A replayable text for the synthetic chapter 02: every claim true except, perhaps, one
 * number. It builds with the compiler directly rather than through npm, to keep the test fast.
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
    'node --test --test-name-pattern="Lab 2.1" packages/pi-course/dist/test/02-beta.test.js',
    FENCE,
    "<!-- verify: expect -->",
    `${FENCE}text`,
    // Every Node version prints the summary, then each failure with its error under
    // "failing tests" (Node 20 also shows the error right after the test's line, 22+ do not).
    "ℹ pass 0",
    "ℹ fail 2",
    "✖ Lab 2.1 · catalog is sorted",
    `  Error: ${SCAFFOLD_ERROR}`,
    FENCE,
    "",
    "<!-- verify: practice after 2.1 -->",
    `${FENCE}sh`,
    "node_modules/.bin/tsc -p packages/pi-course/tsconfig.json",
    'node --test --test-name-pattern="Lab 2" packages/pi-course/dist/test/02-beta.test.js',
    FENCE,
    "<!-- verify: expect -->",
    `${FENCE}text`,
    "✔ Lab 2.1 · catalog is sorted",
    "✖ Lab 2.2 · render joins the catalog",
    `ℹ pass ${passAfter21}`,
    "ℹ fail 1",
    `  Error: ${SCAFFOLD_ERROR_2}`,
    FENCE,
    "",
    "<!-- verify: practice fault 2.1-no-sort bash -->",
    `${FENCE}bash`,
    "node_modules/.bin/tsc -p packages/pi-course/tsconfig.json && node --test packages/pi-course/dist/test/{01,02}-*.test.js",
    FENCE,
    "<!-- verify: expect -->",
    `${FENCE}text`,
    "✖ Lab 2.1 · catalog is sorted",
    "ℹ pass 3",
    "ℹ fail 1",
    FENCE,
    "",
  );
}

test("replay on the synthetic chapter: every stage runs in a practice folder, and one changed number is the only failure, named by file and line", async (t) => {
  // The text says 3 where the run shows 2 (Lab 2.1 green, Lab 2.2 red after Lab 2.1).
  const text = replayedText(3);
  const repo = makeFakeCourse(t, { linkModules: true, overrides: { "chapters/02-beta.md": text } });
  const dir = mkdtempSync(path.join(os.tmpdir(), "pi-course-replay-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const progress: string[] = [];
  const check = await replayChapterText({ repo, checkpoint: await resolveCheckpoint(repo, "02"), dir, onProgress: (m) => progress.push(m) });
  assert.equal(check.name, "chapter text");
  assert.equal(check.ok, false);
  const where = `chapters/02-beta.md:${lineOf(text, "ℹ pass 3")}`;
  assert.equal(
    check.detail,
    `1 处与仓库不符：${where}: 命令 “node --test --test-name-pattern="Lab 2" packages/pi-course/dist/test/02-beta.test.js”（练习目录，after 2.1）的输出里没有 “ℹ pass 3”（按正文的顺序）`,
  );
  assert.deepEqual(
    progress.map((m) => m.split(":")[0]),
    ["课程仓库", "练习目录，starter", "练习目录，starter", "练习目录，after 2.1", "练习目录，after 2.1", "练习目录，fault 2.1-no-sort"],
    "repo first, then the stages in a learner's order",
  );
});
