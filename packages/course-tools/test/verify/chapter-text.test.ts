// test-process: shared
/** `verify/chapter-text.ts`: the chapter text's markup, and what the manifest confirms in it. */
import assert from "node:assert/strict";
import test from "node:test";
import { parseManifest } from "../../src/course/manifest.js";
import { authorFaults } from "../../src/course/faults.js";
import { checkPlanAgainstManifest, parseChapterText, recordLineProblem, type TextCommand } from "../../src/verify/chapter-text.js";
import { SCAFFOLD_ERROR, SCAFFOLD_ERROR_2 } from "../support/fake-course.js";

const FENCE = "```";

/** Joins lines into a text; `lineOf(text, needle)` is the 1-based line of the first line holding a needle. */
const lines = (...all: string[]) => all.join("\n");

const MANIFEST = parseManifest(
  `format: 1
id: "02"
title: 第二章
files: [packages/pi-course/src/beta.ts, packages/pi-course/test/02-beta.test.ts]
starters: [{ from: beta.ts, to: packages/pi-course/src/beta.ts }]
focusedTests: [packages/pi-course/test/02-beta.test.ts]
text: README.md
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
  "chapters/02-beta/chapter.yaml",
);

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
  "…（省略 2 行）",
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
  const plan = parseChapterText(MARKED, "chapters/02-beta/README.md");
  const brief = (c: TextCommand) => [c.line, c.place, c.stage, c.shell, c.command, c.expect?.map((e) => [e.line, e.text, e.omitted])];
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
        [22, "✖ Lab 2.2 · render joins the catalog", undefined],
        [23, "…（省略 2 行）", 2],
        [24, "ℹ fail 1", undefined],
      ],
    ],
    [29, "practice", { kind: "fault", fault: "2.1-no-sort" }, "bash", "node --test packages/pi-course/dist/test/{01,02}-*.test.js", undefined],
  ]);
  assert.deepEqual(plan.skipped, [{ line: 33, reason: "需要网络" }]);
  assert.deepEqual(plan.injections, [{ line: 43, fault: "2.1-no-sort", text: "unique.reverse(); // 故意错误" }]);
  assert.deepEqual(
    plan.labsTables.map((t) => [t.line, t.rows.map((r) => r.cells[0])]),
    [[47, ["2.1", "2.2", "合计"]]],
  );
  assert.deepEqual(plan.records, [
    [
      { line: 55, text: "Lab 2.1: 2/2" },
      { line: 56, text: "chapter total: 3/3" },
    ],
  ]);
  assert.deepEqual(checkPlanAgainstManifest(plan, MANIFEST), [], "everything the manifest can confirm holds");
});

test("markup: what the parser refuses, naming the file and line", () => {
  const refusals: [string, string, RegExp][] = [
    ["a command block without a verify directive", lines("text", `${FENCE}sh`, "npm test", FENCE), /^c\.md:2: 命令块前没有 verify 标记/],
    [
      "an expect block with no run block before it",
      lines("<!-- verify: expect -->", `${FENCE}text`, "x", FENCE),
      /^c\.md:1: verify: expect 之前没有被运行的命令块/,
    ],
    [
      "an expect block after another code block",
      lines("<!-- verify: repo -->", `${FENCE}sh`, "npm test", FENCE, `${FENCE}ts`, "x", FENCE, "<!-- verify: expect -->", `${FENCE}text`, "y", FENCE),
      /^c\.md:8: verify: expect 之前没有被运行的命令块/,
    ],
    [
      "two expect blocks for one command",
      lines(
        "<!-- verify: repo -->",
        `${FENCE}sh`,
        "a",
        FENCE,
        "<!-- verify: expect -->",
        `${FENCE}text`,
        "x",
        FENCE,
        "<!-- verify: expect -->",
        `${FENCE}text`,
        "y",
        FENCE,
      ),
      /^c\.md:9: 第 3 行的命令已经有一个 expect 块/,
    ],
    [
      "an empty expect block",
      lines("<!-- verify: repo -->", `${FENCE}sh`, "a", FENCE, "<!-- verify: expect -->", `${FENCE}text`, "…（省略 3 行）", FENCE),
      /^c\.md:6: expect 块是空的/,
    ],
    [
      "an omission that does not say how many lines it leaves out",
      lines("<!-- verify: repo -->", `${FENCE}sh`, "a", FENCE, "<!-- verify: expect -->", `${FENCE}text`, "x", "...", "y", FENCE),
      /^c\.md:8: 省略要写明行数：…（省略 N 行）/,
    ],
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
      lines(
        "<!-- verify: practice starter -->",
        `${FENCE}sh`,
        'node --test --test-name-pattern="Lab 2.1" t.js',
        FENCE,
        "<!-- verify: expect -->",
        `${FENCE}text`,
        "ℹ pass 0",
        "ℹ skipped 1",
        FENCE,
      ),
      /^c\.md:8: “ℹ skipped 1” 随 Node 版本而变/,
    ],
  ];
  for (const [label, text, message] of refusals) {
    assert.throws(
      () => parseChapterText(text, "c.md"),
      (error: Error & { code?: string }) => {
        assert.equal(error.code, "CHAPTER_TEXT_INVALID", label);
        assert.match(error.message, message, label);
        return true;
      },
    );
  }
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

test("a common mistake the text quotes is a mistake block: a catalogued fault and what its lab's run prints", () => {
  const text = lines(
    "# 第二章",
    "",
    "**常见的错。** 忘了排序，你会看到：",
    "",
    "<!-- verify: mistake 2.1-no-sort -->",
    `${FENCE}text`,
    "Lab 2.1 · 目录去重并排序 1/2",
    "✗ Lab 2.1 · catalog is sorted",
    "…（省略 3 行）",
    FENCE,
  );
  const plan = parseChapterText(text, "c.md");
  assert.deepEqual(plan.mistakes, [
    {
      line: 6,
      fault: "2.1-no-sort",
      expect: [
        { line: 7, text: "Lab 2.1 · 目录去重并排序 1/2" },
        { line: 8, text: "✗ Lab 2.1 · catalog is sorted" },
        { line: 9, text: "…（省略 3 行）", omitted: 3 },
      ],
    },
  ]);
  assert.deepEqual(plan.commands, [], "a mistake block is no command of the text");
  assert.deepEqual(checkPlanAgainstManifest(plan, MANIFEST), []);
  assert.deepEqual(checkPlanAgainstManifest(parseChapterText(text.replace("2.1-no-sort", "2.1-no-such"), "c.md"), MANIFEST), [
    "c.md:6: 清单里没有故障 2.1-no-such：正文引用的常见错误要登记成本章的故障",
  ]);
  for (const [label, broken, message] of [
    ["no fault id", text.replace("mistake 2.1-no-sort", "mistake"), /^c\.md:5: verify: mistake 需要恰好一个故障 id/],
    ["an unmarked omission", text.replace("…（省略 3 行）", "…"), /^c\.md:9: 省略要写明行数/],
  ] as const) {
    assert.throws(
      () => parseChapterText(broken, "c.md"),
      (error: Error & { code?: string }) => error.code === "CHAPTER_TEXT_INVALID" && message.test(error.message),
      label,
    );
  }
});
