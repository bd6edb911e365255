// test-process: shared
/** `course/sections.ts`: a chapter text's numbered sections, and the rule a failure names. */
import assert from "node:assert/strict";
import test from "node:test";
import { chapterSections, citedSections, findSection, ruleCalls, ruleOf } from "../../src/course/sections.js";

const TEXT = `# 第 1 章

## 1. 开始

第一节。

<!-- verify: repo -->
\`\`\`sh
npm test
\`\`\`

<!-- verify: expect
     跨两行的注释 -->
\`\`\`text
ok
\`\`\`

## 2. 规则

\`\`\`\`md
## 3. 代码块里的不是标题
\`\`\`
仍在代码块里
\`\`\`\`

### 2.1 第一条

正文 <!-- verify: skip 行内的也去掉 --> 留下。

#### 2.1.1 更细

### 2.2 第二条

## 附：没有编号

不属于第 2 节。
`;

test("numbered headings outside code blocks are the sections; each runs to the next heading of its level or above", () => {
  const sections = chapterSections(TEXT);
  assert.deepEqual(
    sections.map(({ number, title, level, line }) => ({ number, title, level, line })),
    [
      { number: "1", title: "开始", level: 2, line: 3 },
      { number: "2", title: "规则", level: 2, line: 18 },
      { number: "2.1", title: "第一条", level: 3, line: 26 },
      { number: "2.1.1", title: "更细", level: 4, line: 30 },
      { number: "2.2", title: "第二条", level: 3, line: 32 },
    ],
  );
  assert.equal(findSection(TEXT, "2.2")?.text, "### 2.2 第二条", "an unnumbered heading of a higher level ends it");
  assert.match(
    findSection(TEXT, "2")!.text,
    /^## 2\. 规则\n\n````md\n## 3\. 代码块里的不是标题\n```\n仍在代码块里\n````\n\n### 2\.1 第一条[\s\S]*### 2\.2 第二条$/,
  );
  assert.equal(findSection(TEXT, "3"), undefined, "a heading inside a fence is none");
});

test("a section leaves out the replay's verify comments, one line or several, and keeps the rest of their lines", () => {
  assert.equal(findSection(TEXT, "1")?.text, "## 1. 开始\n\n第一节。\n\n```sh\nnpm test\n```\n\n```text\nok\n```");
  assert.equal(findSection(TEXT, "2.1")?.text, "### 2.1 第一条\n\n正文  留下。\n\n#### 2.1.1 更细");
});

test("a section is found by its number as a learner or a failure writes it", () => {
  for (const asked of ["2.1", "§2.1", " 2.1 ", "2.1."]) assert.equal(findSection(TEXT, asked)?.title, "第一条", JSON.stringify(asked));
  assert.equal(findSection(TEXT, "2.10"), undefined);
});

test("the rule of a failure is its first line when it starts with §x.y：", () => {
  assert.deepEqual(ruleOf("§3.4：roots 按给出的顺序扫描\nExpected values to be strictly equal"), { rule: "§3.4：roots 按给出的顺序扫描", section: "3.4" });
  assert.deepEqual(ruleOf("§18.1: ascii colon too"), { rule: "§18.1: ascii colon too", section: "18.1" });
  for (const none of ["Lab 12.1 resource catalog 尚未实现", "see §3.4：later on the line", "§3.4：", ""]) assert.equal(ruleOf(none), undefined, none);
});

test("contract rules are sections numbered C…, and a rule may cite several sections before its colon", () => {
  const text = "# 章\n\n## 9. 契约\n\n### §C2.1 名字压成一行\n\n正文。\n\n### C2.2 顺序只看名字\n";
  assert.deepEqual(
    chapterSections(text).map((s) => [s.number, s.title]),
    [
      ["9", "契约"],
      ["C2.1", "名字压成一行"],
      ["C2.2", "顺序只看名字"],
    ],
  );
  assert.equal(findSection(text, "§C2.1")?.title, "名字压成一行");
  assert.deepEqual(citedSections("§5.1、§5.3：信任在用户扩展之后"), ["5.1", "5.3"]);
  assert.deepEqual(citedSections("§C2.1：名字也要压成一行"), ["C2.1"]);
  assert.deepEqual(citedSections("不是规则 §2.1："), []);
  assert.deepEqual(ruleOf("§5.1、§5.3：信任在用户扩展之后\n…"), { rule: "§5.1、§5.3：信任在用户扩展之后", section: "5.1" });
  assert.deepEqual(ruleOf("§C2.1：名字也要压成一行"), { rule: "§C2.1：名字也要压成一行", section: "C2.1" });
  assert.deepEqual(ruleCalls('rule("§C2.1：a", () => {});\n  rule(`§3：b`, f); rule("x", g);'), [
    { rule: "§C2.1：a", line: 1 },
    { rule: "§3：b", line: 2 },
  ]);
  assert.deepEqual(ruleCalls('const statements = {\n  "C4.1": "§C4.1：首尾相接",\n};\nrule(\n  \'§C4.2：不出声\', f); rule("§ 不是规则", g);'), [
    { rule: "§C4.1：首尾相接", line: 2 },
    { rule: "§C4.2：不出声", line: 5 },
  ]);
});

test("a contract appendix numbers its rules as the lesson does, with a C in front (§C3.2)", () => {
  const contract = "# 第 3 章\n\n## 3. Lab 3.1 · 文本块\n\n课文。\n\n## 附录 · 契约\n\n### C3 text()\n\n#### C3.2 新对象\n\n每次一个新对象。\n";
  assert.deepEqual(
    chapterSections(contract).map(({ number, title }) => ({ number, title })),
    [
      { number: "3", title: "Lab 3.1 · 文本块" },
      { number: "C3", title: "text()" },
      { number: "C3.2", title: "新对象" },
    ],
  );
  assert.equal(findSection(contract, "§C3.2")?.text, "#### C3.2 新对象\n\n每次一个新对象。");
  assert.deepEqual(ruleOf("§C3.2：每次一个新对象\nExpected"), { rule: "§C3.2：每次一个新对象", section: "C3.2" });
  assert.equal(ruleOf("§Cx：no number"), undefined);
});
