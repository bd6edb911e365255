// test-process: shared
/**
 * `course/lab-address.ts`: a lab's address held to the code, the text and the tests. A
 * synthetic chapter whose addresses are right has no problem; each wrong name, and each part
 * that belongs to no lab, is one problem that says what and where.
 */
import assert from "node:assert/strict";
import test from "node:test";
import { labAddressProblems, labBanners, markedDeclarations, topLevelTests, type AddressTexts } from "../../src/course/lab-address.js";
import { parseManifest, type ChapterManifest } from "../../src/course/manifest.js";

const MANIFEST = `format: 1
id: "04"
title: 第四章
files:
  - packages/pi-course/src/four.ts
  - packages/pi-course/test/04-four.test.ts
  - packages/pi-course/test/challenge/04-edges.test.ts
starters:
  - from: four.ts
    to: packages/pi-course/src/four.ts
focusedTests:
  - packages/pi-course/test/04-four.test.ts
text: README.md
challenge:
  tests:
    - file: packages/pi-course/test/challenge/04-edges.test.ts
      title: 边界
labs:
  - id: "4.1"
    title: 求和
    tests: 1
    scaffoldError: Lab 4.1 sum 尚未实现
    declarations: [sum]
    sections: ["2", "1"]
    challenge: [packages/pi-course/test/challenge/04-edges.test.ts]
    hints: [a, b, c, d]
    faults:
      - { id: 4.1-minus, description: 减法, in: sum, find: "a + b", replace: "a - b", killedBy: ["Lab 4.1"] }
  - id: "4.2"
    title: 问候
    tests: 1
    scaffoldError: Lab 4.2 greet 尚未实现
    declarations: [greet]
    sections: ["3"]
    hints: [a, b, c, d]
`;

const STARTER = `// ── Lab 4.1 · 求和 ──
export function sum(a: number, b: number): number {
  // 🔨 Lab 4.1：返回两数之和
  throw new Error("Lab 4.1 sum 尚未实现");
}

// ── Lab 4.2 · 问候 ──
// 🔨 Lab 4.2：拼出问候语
export function greet(name: string): string {
  throw new Error("Lab 4.2 greet 尚未实现");
}
`;

const REFERENCE = `// ── Lab 4.1 · 求和 ──
export function sum(a: number, b: number): number {
  return a + b;
}

// ── Lab 4.2 · 问候 ──
export function greet(name: string): string {
  return \`hello \${name}\`;
}
`;

const TEXT = "# 第四章\n\n## 1. 概念\n\n加法。\n\n## 2. Lab 4.1 · 求和\n\n写 sum。\n\n## 3. Lab 4.2 · 问候\n\n写 greet。\n";

const TESTS = `import test from "node:test";
test("Lab 4.1 · adds", () => {});
test("Lab 4.2 · greets", () => {});
`;

function texts(overrides: Partial<{ starter: string; reference: string; text: string; tests: string; challenge: string }> = {}): AddressTexts {
  return {
    starters: new Map([["chapters/04-four/four.ts", overrides.starter ?? STARTER]]),
    references: new Map([["packages/pi-course/src/four.ts", overrides.reference ?? REFERENCE]]),
    chapterText: overrides.text ?? TEXT,
    tests: new Map([
      ["packages/pi-course/test/04-four.test.ts", overrides.tests ?? TESTS],
      ["packages/pi-course/test/challenge/04-edges.test.ts", overrides.challenge ?? `import test from "node:test";\ntest("edges: zero", () => {});\n`],
    ]),
  };
}

function manifest(text = MANIFEST): ChapterManifest {
  return parseManifest(text, "chapters/04-four/chapter.yaml");
}

test("right addresses have no problem; the parts are found where they are", () => {
  assert.deepEqual(labAddressProblems(manifest(), texts()), []);
  assert.deepEqual(Object.fromEntries(markedDeclarations(manifest(), texts().starters)), { "4.1": ["sum"], "4.2": ["greet"] });
  assert.deepEqual(topLevelTests(TESTS), [
    { name: "Lab 4.1 · adds", line: 2, column: 6 },
    { name: "Lab 4.2 · greets", line: 3, column: 6 },
  ]);
  assert.deepEqual(
    labBanners(REFERENCE).map((b) => [b.lab, b.title, b.line]),
    [
      ["4.1", "求和", 1],
      ["4.2", "问候", 6],
    ],
  );
  const lab = manifest().labs[0]!;
  assert.deepEqual([lab.declarations, lab.sections, lab.challenge], [["sum"], ["2", "1"], ["packages/pi-course/test/challenge/04-edges.test.ts"]]);
  assert.deepEqual(
    manifest().faults.map((f) => [f.id, f.lab, f.in]),
    [["4.1-minus", "4.1", "sum"]],
    "a fault under a lab is that lab's",
  );
});

test("a declaration named wrongly, or marked for a lab that does not name it, is a problem", () => {
  const cases: [string, ChapterManifest, AddressTexts, RegExp][] = [
    [
      "named, not marked",
      manifest(MANIFEST.replace("declarations: [sum]", "declarations: [sum, total]")),
      texts(),
      /Lab 4\.1 的地址写了 total，starter 里没有带 🔨 Lab 4\.1 标记的 total/,
    ],
    [
      "named by the other lab",
      manifest(MANIFEST.replace("declarations: [greet]", "declarations: [greet, sum]")),
      texts(),
      /Lab 4\.2 的地址写了 sum，但 starter 里 sum 标的是 🔨 Lab 4\.1/,
    ],
    [
      "not in the reference",
      manifest(),
      texts({ reference: REFERENCE.replace("function greet", "function welcome") }),
      /Lab 4\.2 的地址写了 greet，参考实现里没有这个顶层声明/,
    ],
    [
      "marked, named by no lab",
      manifest(MANIFEST.replace("declarations: [greet]", "declarations: []")),
      texts(),
      /greet 带着 🔨 Lab 4\.2 标记，却不在 Lab 4\.2 的地址（declarations）里/,
    ],
  ];
  for (const [what, m, t, expected] of cases) {
    const problems = labAddressProblems(m, t);
    assert.ok(
      problems.some((p) => expected.test(p)),
      `${what}: ${problems.join(" | ")}`,
    );
  }
});

test("a section that is missing, or is not the lab's own, is a problem", () => {
  const wrongOwn = labAddressProblems(manifest(MANIFEST.replace('sections: ["3"]', 'sections: ["1"]')), texts());
  assert.deepEqual(wrongOwn, ["Lab 4.2 的地址把第 1 节当作它自己的一节，那一节的标题应为 “Lab 4.2 · 问候”，实际是 “概念”"]);
  assert.deepEqual(labAddressProblems(manifest(MANIFEST.replace('sections: ["2", "1"]', 'sections: ["2", "9"]')), texts()), [
    "Lab 4.1 的地址写了第 9 节，正文没有这一节",
  ]);
  assert.deepEqual(labAddressProblems(manifest(), texts({ text: TEXT.replace("Lab 4.1 · 求和", "Lab 4.1 · 加法") })), [
    "Lab 4.1 的地址把第 2 节当作它自己的一节，那一节的标题应为 “Lab 4.1 · 求和”，实际是 “Lab 4.1 · 加法”",
  ]);
  assert.match(labAddressProblems(manifest(MANIFEST.replace('sections: ["3"]', "sections: []")), texts()).join(), /Lab 4\.2 的地址没有 sections/);
});

test("a test of no lab of the chapter, or a focused test of no lab, is a problem naming its place", () => {
  const stray = labAddressProblems(manifest(), texts({ tests: `${TESTS}test("Lab 4.3 · extra", () => {});\ntest("helper works", () => {});\n` }));
  assert.deepEqual(stray, [
    "packages/pi-course/test/04-four.test.ts:4:6 的测试 “Lab 4.3 · extra” 以 Lab 4.3 开头，本章没有这个 Lab",
    "packages/pi-course/test/04-four.test.ts:5:6 的测试 “helper works” 在聚焦测试里，却不属于任何 Lab（名字应以 “Lab 4.1 · ” 这样开头）",
  ]);
  // Outside the focused tests a test need not be a lab's, but one named after a lab must be of this chapter.
  assert.deepEqual(labAddressProblems(manifest(), texts({ challenge: `import test from "node:test";\ntest("Lab 12.1 · elsewhere", () => {});\n` })), [
    "packages/pi-course/test/challenge/04-edges.test.ts:2:6 的测试 “Lab 12.1 · elsewhere” 以 Lab 12.1 开头，本章没有这个 Lab",
  ]);
});

test("a banner with another title, a challenge theme of no lab and a fault outside its lab or without its anchor are problems", () => {
  assert.deepEqual(labAddressProblems(manifest(), texts({ reference: REFERENCE.replace("// ── Lab 4.2 · 问候 ──", "// ── Lab 4.2 · greeting ──") })), [
    "packages/pi-course/src/four.ts:6 的横幅应写 Lab 4.2 自己的标题 “问候”，实际是 “greeting”",
  ]);
  assert.deepEqual(labAddressProblems(manifest(MANIFEST.replace("    challenge: [packages/pi-course/test/challenge/04-edges.test.ts]\n", "")), texts()), [
    "挑战关的主题 packages/pi-course/test/challenge/04-edges.test.ts（边界）不在任何 Lab 的地址（challenge）里",
  ]);
  const outside = MANIFEST.replace(/    faults:\n.*\n/, "").concat(
    'faults:\n  - { id: 4.1-minus, lab: "4.1", description: 减法, find: "a + b", replace: "a - b", killedBy: ["Lab 4.1"] }\n',
  );
  assert.deepEqual(labAddressProblems(manifest(outside), texts()), [
    "故障 4.1-minus 写在顶层 faults 里：把它移到 Lab 4.1 的条目下（labs[].faults）",
    "故障 4.1-minus 没有 in：写上 find 所在的顶层声明",
  ]);
  assert.deepEqual(labAddressProblems(manifest(MANIFEST.replace("in: sum", "in: add")), texts()), [
    "故障 4.1-minus 的 in 写的是 add，参考实现里没有这个顶层声明",
  ]);
});

test("the manifest refuses an address that is not one: a name that is no identifier, a section that is no number, a theme outside the tier, a fault of another lab", () => {
  for (const [from, to] of [
    ["declarations: [sum]", "declarations: [sum()]"],
    ['sections: ["3"]', 'sections: ["§3"]'],
    ["challenge: [packages/pi-course/test/challenge/04-edges.test.ts]", "challenge: [packages/pi-course/test/04-four.test.ts]"],
    ["{ id: 4.1-minus,", '{ id: 4.1-minus, lab: "4.2",'],
  ] as const) {
    assert.throws(() => manifest(MANIFEST.replace(from, to)), { code: "MANIFEST_INVALID" }, to);
  }
});

test("a rule a lab test cites must exist in the text, and every contract rule (§C…) must be cited by a lab test", () => {
  const contract = `${TEXT}\n## 4. 契约\n\n### §C4.1 sum 返回两数之和\n\n### §C4.2 greet 以 hello 开头\n`;
  const cite = (rules: string[]) =>
    `import test from "node:test";\ntest("Lab 4.1 · adds", () => {\n${rules.map((r) => `  rule("${r}", () => {});`).join("\n")}\n});\ntest("Lab 4.2 · greets", () => {});\n`;
  assert.deepEqual(labAddressProblems(manifest(), texts({ text: contract, tests: cite(["§C4.1：和", "§C4.2、§2：问候"]) })), []);
  assert.deepEqual(labAddressProblems(manifest(), texts({ text: contract, tests: cite(["§C4.1：和"]) })), [
    '正文的契约条目 §C4.2 没有任何 Lab 测试引用（rule("§C4.2：…")）',
  ]);
  const missing = labAddressProblems(manifest(), texts({ text: contract, tests: cite(["§C4.1：和", "§C4.2：问候", "§9.9：没有这一节"]) }));
  assert.equal(missing.length, 1);
  assert.match(missing[0]!, /^packages\/pi-course\/test\/04-four\.test\.ts:5 的规则 “§9\.9：没有这一节” 引用 §9\.9，正文没有这一节$/);
  // A lab's address may name a contract rule among its sections.
  assert.deepEqual(
    labAddressProblems(
      manifest(MANIFEST.replace('sections: ["3"]', 'sections: ["3", "C4.2"]')),
      texts({ text: contract, tests: cite(["§C4.1：和", "§C4.2：问候"]) }),
    ),
    [],
  );
});

test("the challenge tier's own text: its tests cite it or the chapter text, each of its rules is cited, and it repeats no number of the chapter text", () => {
  const withText = MANIFEST.replace("challenge:\n  tests:", "challenge:\n  text: challenge.md\n  tests:");
  const contract = `${TEXT}\n## 附录 · 契约\n\n### C2 求和\n\n#### C2.1 两数之和\n`;
  const labTests = `import test from "node:test";\ntest("Lab 4.1 · adds", () => {\n  rule("§C2.1：和", () => {});\n});\ntest("Lab 4.2 · greets", () => {});\n`;
  const challenge = "# 挑战关\n\n## C2 求和\n\n### C2.5 很大的数\n\n### C2.6 负数\n";
  const edges = (rules: string[]) =>
    `import test from "node:test";\ntest("edges: zero", () => {\n${rules.map((r) => `  check("${r}", () => {});`).join("\n")}\n});\n`;
  const problems = (rules: string[], challengeText = challenge) =>
    labAddressProblems(manifest(withText), { ...texts({ text: contract, tests: labTests, challenge: edges(rules) }), challengeText });
  assert.deepEqual(problems(["§C2.5：大", "§C2.6：负", "§C2.1：和"]), []);
  assert.deepEqual(problems(["§C2.5：大"]), ["chapters/04-four/challenge.md 的契约条目 §C2.6 没有任何挑战关测试引用"]);
  assert.deepEqual(problems(["§C2.5：大", "§C2.6：负", "§C2.7：没有"]), [
    "packages/pi-course/test/challenge/04-edges.test.ts:5 的规则 “§C2.7：没有” 引用 §C2.7，正文和 chapters/04-four/challenge.md 都没有这一节",
  ]);
  assert.deepEqual(problems(["§C2.5：大", "§C2.6：负", "§C2.1：和"], `${challenge}\n### C2.1 重复\n`), [
    "chapters/04-four/challenge.md 的第 C2.1 节和正文的同号：挑战关的编号不能重复正文的",
  ]);
});
