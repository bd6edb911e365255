/**
 * The numbered sections of a chapter text (`## 12. …`, `### 18.1 …`) and the rules that
 * point at them: a lab test's failure starts with the rule it checks, `§3.4：…`, whose
 * number is a section of the chapter text. What the MCP server's `chapter_section` and
 * `run_lab` read; pure functions of the Markdown.
 *
 * A heading inside a fenced code block (a shell transcript's `## <request>`) is no heading,
 * and neither is a `<!-- verify: … -->` comment part of what a reader is shown: the comments
 * are the replay's markup (`verify/chapter-text.ts`), so a section's text leaves them out
 * (those shown inside a code block, as examples, stay).
 */

/** One numbered section of a chapter text. */
export interface TextSection {
  /** `12`, `18.1`. */
  number: string;
  /** The heading's words after the number. */
  title: string;
  /** The heading's level: 2 for `##`, 3 for `###`. */
  level: number;
  /** 1-based line of the heading. */
  line: number;
  /** The heading and everything up to the next heading of the same or a higher level, verify comments left out. */
  text: string;
}

/**
 * A section number: `12`, `18.1`, or a contract appendix's `C3.2` (the rules of lesson section
 * 3, numbered as the lesson is). The one place this is written; manifests, fault rules and
 * `verify` build their patterns from it.
 */
export const SECTION_NUMBER_SOURCE = String.raw`C?\d+(?:\.\d+)*`;

const HEADING = /^(#{1,6})\s+(.*?)\s*$/;
/** A section's number at the start of its heading (the heading may write a contract rule's number `§C3.4`). */
const NUMBERED = new RegExp(String.raw`^§?(${SECTION_NUMBER_SOURCE})\.?\s+(.*)$`);
/** One citation of a section in a rule: `§3.4`, `§C3.4`. */
const CITATION = new RegExp(`§(${SECTION_NUMBER_SOURCE})`, "g");
/** A string literal that starts with `§`, in double, single or back quotes (its text is one of the three groups). */
const RULE_STRING = /"(§[^"\n]*)"|'(§[^'\n]*)'|`(§[^`]*)`/g;
/** A rule's citations before its colon: `§5.1、§5.3：` (one or more, separated by 、 or a comma). */
const CITATIONS = new RegExp(String.raw`^§${SECTION_NUMBER_SOURCE}(?:\s*[、,，]\s*§${SECTION_NUMBER_SOURCE})*(?=\s*[：:]\s*\S)`);
const FENCE = /^\s*(`{3,}|~{3,})/;

/** Each line of `markdown` with whether it lies inside a fenced code block (the fence lines included). */
function linesWithFences(markdown: string): { text: string; fenced: boolean }[] {
  const lines = markdown.replace(/\r\n/g, "\n").split("\n");
  const out: { text: string; fenced: boolean }[] = [];
  let fence: string | undefined;
  for (const text of lines) {
    const marker = FENCE.exec(text)?.[1];
    if (fence === undefined && marker !== undefined) {
      fence = marker;
      out.push({ text, fenced: true });
    } else if (fence !== undefined) {
      out.push({ text, fenced: true });
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length && text.trim() === marker) fence = undefined;
    } else {
      out.push({ text, fenced: false });
    }
  }
  return out;
}

/** `lines` without the `<!-- verify … -->` comments that stand outside code blocks (one line or several), and no run of more than one blank line. */
function withoutVerifyComments(lines: readonly { text: string; fenced: boolean }[]): string {
  const kept: string[] = [];
  let inComment = false;
  for (const { text, fenced } of lines) {
    if (fenced && !inComment) {
      kept.push(text);
      continue;
    }
    let rest = text;
    if (inComment) {
      const end = rest.indexOf("-->");
      if (end === -1) continue;
      inComment = false;
      rest = rest.slice(end + 3);
    }
    rest = rest.replace(/<!--\s*verify\b[\s\S]*?-->/g, "");
    const open = rest.search(/<!--\s*verify\b/);
    if (open !== -1) {
      inComment = true;
      rest = rest.slice(0, open);
    }
    if (rest.trim() === "" && text.trim() !== "") continue; // a line that held only a comment
    kept.push(rest.trimEnd());
  }
  return kept
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** Every numbered section of `markdown`, in order (a section's text includes its subsections). */
export function chapterSections(markdown: string): TextSection[] {
  const lines = linesWithFences(markdown);
  const headings: { index: number; level: number; number?: string; title: string }[] = [];
  lines.forEach(({ text, fenced }, index) => {
    if (fenced) return;
    const heading = HEADING.exec(text);
    if (heading === null) return;
    const numbered = NUMBERED.exec(heading[2]!);
    headings.push({ index, level: heading[1]!.length, title: numbered?.[2] ?? heading[2]!, ...(numbered === null ? {} : { number: numbered[1]! }) });
  });
  const sections: TextSection[] = [];
  headings.forEach((heading, at) => {
    if (heading.number === undefined) return;
    const next = headings.slice(at + 1).find((other) => other.level <= heading.level);
    const end = next?.index ?? lines.length;
    sections.push({
      number: heading.number,
      title: heading.title,
      level: heading.level,
      line: heading.index + 1,
      text: withoutVerifyComments(lines.slice(heading.index, end)),
    });
  });
  return sections;
}

/** The section numbered `number` (`"12"`, `"18.1"`, `"§3.4"`, `"§C3.2"`) of `markdown`, or undefined. */
export function findSection(markdown: string, number: string): TextSection | undefined {
  const wanted = number.trim().replace(/^§/, "").replace(/\.$/, "");
  return chapterSections(markdown).find((section) => section.number === wanted);
}

/**
 * The sections a rule cites before its colon (`§3.4：…` → `["3.4"]`, `§5.1、§5.3：…` →
 * `["5.1", "5.3"]`, `§C2.1：…` → `["C2.1"]`); empty when it cites none.
 */
export function citedSections(rule: string): string[] {
  const head = CITATIONS.exec(rule.trim())?.[0];
  return head === undefined ? [] : [...head.matchAll(CITATION)].map((match) => match[1]!);
}

/** The rule a lab test's failure names on its first line (`§3.4：roots 按给出的顺序扫描…`) and its (first) section, or undefined. */
export function ruleOf(message: string): { rule: string; section: string } | undefined {
  const first = message.split(/\r?\n/, 1)[0]?.trim() ?? "";
  const [section] = citedSections(first);
  return section === undefined ? undefined : { rule: first, section };
}

/**
 * The rules a test file states: every string literal of it (double, single or back quotes)
 * that starts with a rule's citations and colon (`"§C4.1：…"`, `'§3.4：…'`), with its 1-based
 * line, whether it is written inside a `rule(…)` call or kept in a table the calls read. What
 * a failure of that check prints first.
 */
export function ruleCalls(testText: string): { rule: string; line: number }[] {
  const calls: { rule: string; line: number }[] = [];
  for (const match of testText.matchAll(RULE_STRING)) {
    const rule = match[1] ?? match[2] ?? match[3]!;
    if (citedSections(rule).length === 0) continue;
    calls.push({ rule, line: testText.slice(0, match.index).split("\n").length });
  }
  return calls;
}
