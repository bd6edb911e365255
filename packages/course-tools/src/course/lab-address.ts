/**
 * A lab's address: the one entry of the chapter's manifest (`chapters/NN-<slug>/chapter.yaml`) that names every part of the lab
 * (its declarations, its sections of the chapter text, its challenge themes, hints and
 * faults), and the checks that hold each name to what it names. `verify` runs the checks
 * (`labAddressProblems`); `lab NN.L --where` prints the parts with their places
 * (`lab/where.ts`). Pure functions of the texts they are given.
 *
 * What the checks hold:
 * - declarations: each one the address names carries the lab's `🔨 Lab NN.L` marker in the
 *   starter and exists in the reference; each 🔨-marked declaration of the starter is named
 *   by its lab's address (so it belongs to exactly one lab);
 * - sections: the first is the lab's own, its heading `Lab NN.L · <title>` with the lab's
 *   title; every section named exists;
 * - tests: every test of the chapter's test files named `Lab NN.L …` is of a lab of this
 *   chapter, and every test of a focused test file is a lab's;
 * - banners (a comment line `// Lab NN.L · <title>`, with or without `──`) in the starter,
 *   the reference and the focused tests carry the lab's own title;
 * - challenge: every theme of the challenge tier is named by some lab;
 * - faults: each sits under its lab's entry and names the declaration it lies in (`in`),
 *   which the reference has;
 * - rules: every section a focused test's rules (`"§…：…"`) cite exists in the text, and
 *   every contract rule of the text (a section numbered `C…`, `### §C3.4 …`, that has no
 *   numbered subsection of its own: a group heading is no rule) is cited by some focused test;
 *   the same for the challenge tier when it has a text of its own: a challenge test's rule
 *   cites a section of the chapter text or of the challenge text, every contract rule of the
 *   challenge text is cited by some challenge test, and the two texts share no number.
 */
import { SyntaxKind, parseModule, topLevelDeclarations, lineAndColumn, type Node } from "../ts/source.js";
import { labOwnership } from "../ts/splice.js";
import type { ChapterManifest, LabSpec } from "./manifest.js";
import { chapterSections, citedSections, ruleCalls } from "./sections.js";
import { labIdOfTestName } from "./lab-names.js";

/** One top-level `test("…", …)` call of a test file, with the place of its name. */
export interface TestCall {
  name: string;
  line: number;
  column: number;
}

/** The top-level `test(…)` / `it(…)` calls of a test module whose name is a plain string, in file order. */
export function topLevelTests(text: string, fileName = "test.ts"): TestCall[] {
  const tree = parseModule(text, fileName);
  const calls: TestCall[] = [];
  for (const statement of tree.statements) {
    if (statement.kind !== SyntaxKind.ExpressionStatement) continue;
    const call = (statement as unknown as { expression: Node }).expression as Node & {
      expression?: Node & { text?: string };
      arguments?: readonly (Node & { text?: string })[];
    };
    if (call.kind !== SyntaxKind.CallExpression || call.expression?.kind !== SyntaxKind.Identifier) continue;
    if (call.expression.text !== "test" && call.expression.text !== "it") continue;
    const first = call.arguments?.[0];
    if (first === undefined || (first.kind !== SyntaxKind.StringLiteral && first.kind !== SyntaxKind.NoSubstitutionTemplateLiteral)) continue;
    calls.push({ name: first.text ?? "", ...lineAndColumn(tree, first.getStart(tree)) });
  }
  return calls;
}

/** A comment line that is a lab's banner: `// Lab 12.1 · 标题` or `// ── Lab 12.1 · 标题 ──`. */
const BANNER = /^\s*\/\/\s*(?:─+\s*)?Lab (\d+\.\d+) · (.*?)(?:\s*─+)?\s*$/;

/** Each lab banner of `text`: its lab, title and 1-based line. */
export function labBanners(text: string): { lab: string; title: string; line: number }[] {
  return text.split(/\r?\n/).flatMap((line, index) => {
    const match = BANNER.exec(line);
    return match === null ? [] : [{ lab: match[1]!, title: match[2]!, line: index + 1 }];
  });
}

/** The names of each lab's 🔨-marked declarations in the starters (lab id → names, in file order). */
export function markedDeclarations(manifest: ChapterManifest, starters: ReadonlyMap<string, string>): Map<string, string[]> {
  const marked = new Map<string, string[]>();
  for (const { from } of manifest.starters) {
    const text = starters.get(from);
    if (text === undefined) continue;
    for (const [key, lab] of labOwnership(
      text,
      manifest.labs.map((l) => l.id),
      from,
    )) {
      marked.set(lab, [...(marked.get(lab) ?? []), key.slice(key.indexOf(":") + 1)]);
    }
  }
  return marked;
}

/** What the address checks read: the chapter's texts at one commit, by repo-relative path. */
export interface AddressTexts {
  /** Each starter's text, by its path (a scaffold or hand-kept starter in the chapter's home). */
  starters: ReadonlyMap<string, string>;
  /** Each teaching file's reference text, by its path. */
  references: ReadonlyMap<string, string>;
  /** The chapter text, when the chapter has one. */
  chapterText?: string;
  /** The challenge tier's text (`challenge.text`), when it has one. */
  challengeText?: string;
  /** The chapter's test files (focused, challenge and others it claims), by path. */
  tests: ReadonlyMap<string, string>;
}

/** The section of the chapter text that is lab `lab`'s own: the heading that must name it. */
function ownSectionProblem(lab: LabSpec, sections: ReturnType<typeof chapterSections>): string | undefined {
  const [own] = lab.sections;
  if (own === undefined) return `Lab ${lab.id} 的地址没有 sections：至少写上它自己的那一节`;
  const section = sections.find((s) => s.number === own);
  if (section === undefined) return `Lab ${lab.id} 的地址写了第 ${own} 节，正文没有这一节`;
  const expected = `Lab ${lab.id} · ${lab.title}`;
  return section.title === expected
    ? undefined
    : `Lab ${lab.id} 的地址把第 ${own} 节当作它自己的一节，那一节的标题应为 “${expected}”，实际是 “${section.title}”`;
}

/**
 * Every way the labs' addresses of `manifest` disagree with `texts` (see the module
 * comment), as one Chinese sentence each; empty when every name is right.
 */
export function labAddressProblems(manifest: ChapterManifest, texts: AddressTexts): string[] {
  const problems: string[] = [];
  const labIds = manifest.labs.map((lab) => lab.id);
  const labOf = new Map(manifest.labs.map((lab) => [lab.id, lab]));

  // Declarations: named ⇔ marked, and present in the reference.
  const marked = markedDeclarations(manifest, texts.starters);
  const owner = new Map<string, string>();
  for (const [lab, names] of marked) for (const name of names) owner.set(name, lab);
  const referenceNames = new Set<string>();
  for (const text of texts.references.values()) for (const declaration of topLevelDeclarations(parseModule(text))) referenceNames.add(declaration.name);
  for (const lab of manifest.labs) {
    if (manifest.starters.length > 0 && lab.declarations.length === 0)
      problems.push(`Lab ${lab.id} 的地址没有 declarations：写上 starter 里标着 🔨 Lab ${lab.id} 的声明`);
    for (const name of lab.declarations) {
      const markedFor = owner.get(name);
      if (markedFor === undefined) problems.push(`Lab ${lab.id} 的地址写了 ${name}，starter 里没有带 🔨 Lab ${lab.id} 标记的 ${name}`);
      else if (markedFor !== lab.id) problems.push(`Lab ${lab.id} 的地址写了 ${name}，但 starter 里 ${name} 标的是 🔨 Lab ${markedFor}`);
      if (!referenceNames.has(name)) problems.push(`Lab ${lab.id} 的地址写了 ${name}，参考实现里没有这个顶层声明`);
    }
  }
  for (const [name, lab] of owner) {
    if (!labOf.get(lab)?.declarations.includes(name)) problems.push(`${name} 带着 🔨 Lab ${lab} 标记，却不在 Lab ${lab} 的地址（declarations）里`);
  }

  // Sections.
  if (texts.chapterText !== undefined) {
    const sections = chapterSections(texts.chapterText);
    for (const lab of manifest.labs) {
      const own = ownSectionProblem(lab, sections);
      if (own !== undefined) problems.push(own);
      for (const number of lab.sections.slice(1)) {
        if (!sections.some((s) => s.number === number)) problems.push(`Lab ${lab.id} 的地址写了第 ${number} 节，正文没有这一节`);
      }
    }
  }

  // Tests: a test named after a lab is of a lab of this chapter; a focused test is a lab's.
  for (const [file, text] of texts.tests) {
    for (const test of topLevelTests(text, file)) {
      const lab = labIdOfTestName(test.name);
      if (lab !== undefined && !labIds.includes(lab))
        problems.push(`${file}:${test.line}:${test.column} 的测试 “${test.name}” 以 Lab ${lab} 开头，本章没有这个 Lab`);
      else if (lab === undefined && manifest.focusedTests.includes(file))
        problems.push(
          `${file}:${test.line}:${test.column} 的测试 “${test.name}” 在聚焦测试里，却不属于任何 Lab（名字应以 “Lab ${labIds[0] ?? "NN.L"} · ” 这样开头）`,
        );
    }
  }

  // Banners carry the lab's own title.
  const bannered = new Map<string, string>([
    ...texts.starters,
    ...texts.references,
    ...[...texts.tests].filter(([file]) => manifest.focusedTests.includes(file)),
  ]);
  for (const [file, text] of bannered) {
    for (const banner of labBanners(text)) {
      const lab = labOf.get(banner.lab);
      if (lab === undefined) problems.push(`${file}:${banner.line} 的横幅写的是 Lab ${banner.lab}，本章没有这个 Lab`);
      else if (banner.title !== lab.title) problems.push(`${file}:${banner.line} 的横幅应写 Lab ${lab.id} 自己的标题 “${lab.title}”，实际是 “${banner.title}”`);
    }
  }

  // Challenge themes belong to some lab.
  for (const theme of manifest.challenge) {
    if (!manifest.labs.some((lab) => lab.challenge.includes(theme.file)))
      problems.push(`挑战关的主题 ${theme.file}（${theme.title}）不在任何 Lab 的地址（challenge）里`);
  }

  // Rules: what the lab tests cite exists; every contract rule is cited.
  if (texts.chapterText !== undefined) {
    const numbers = new Set(chapterSections(texts.chapterText).map((section) => section.number));
    const cited = new Set<string>();
    for (const [file, text] of texts.tests) {
      if (!manifest.focusedTests.includes(file)) continue;
      for (const call of ruleCalls(text)) {
        for (const number of citedSections(call.rule)) {
          cited.add(number);
          if (!numbers.has(number)) problems.push(`${file}:${call.line} 的规则 “${call.rule.slice(0, 40)}” 引用 §${number}，正文没有这一节`);
        }
      }
    }
    const isGroup = (number: string) => [...numbers].some((other) => other.startsWith(`${number}.`));
    for (const number of numbers) {
      if (number.startsWith("C") && !isGroup(number) && !cited.has(number))
        problems.push(`正文的契约条目 §${number} 没有任何 Lab 测试引用（rule("§${number}：…")）`);
    }
  }

  // The challenge tier's rules, when it has a text of its own.
  if (texts.challengeText !== undefined && manifest.challengeText !== undefined) {
    const own = chapterSections(texts.challengeText).map((section) => section.number);
    const main = new Set(texts.chapterText === undefined ? [] : chapterSections(texts.chapterText).map((section) => section.number));
    const contractGroups = new Set([...main].filter((number) => /^C\d+$/.test(number)));
    // A group heading of the contract (`## C3 …`) may stand in both texts; a numbered section may not.
    for (const number of own) {
      if (main.has(number) && !contractGroups.has(number)) problems.push(`${manifest.challengeText} 的第 ${number} 节和正文的同号：挑战关的编号不能重复正文的`);
    }
    const known = new Set([...main, ...own]);
    const cited = new Set<string>();
    for (const { file } of manifest.challenge) {
      const text = texts.tests.get(file);
      if (text === undefined) continue;
      for (const call of ruleCalls(text)) {
        for (const number of citedSections(call.rule)) {
          cited.add(number);
          if (!known.has(number))
            problems.push(`${file}:${call.line} 的规则 “${call.rule.slice(0, 40)}” 引用 §${number}，正文和 ${manifest.challengeText} 都没有这一节`);
        }
      }
    }
    const isGroup = (number: string) => own.some((other) => other.startsWith(`${number}.`));
    for (const number of own) {
      if (number.startsWith("C") && !isGroup(number) && !main.has(number) && !cited.has(number))
        problems.push(`${manifest.challengeText} 的契约条目 §${number} 没有任何挑战关测试引用`);
    }
  }

  // Faults sit under their lab and are anchored in a declaration of the reference.
  for (const fault of manifest.faults) {
    if (fault.outsideLab === true) problems.push(`故障 ${fault.id} 写在顶层 faults 里：把它移到 Lab ${fault.lab} 的条目下（labs[].faults）`);
    if (fault.in === undefined) problems.push(`故障 ${fault.id} 没有 in：写上 find 所在的顶层声明`);
    else if (!referenceNames.has(fault.in)) problems.push(`故障 ${fault.id} 的 in 写的是 ${fault.in}，参考实现里没有这个顶层声明`);
  }
  return problems;
}
