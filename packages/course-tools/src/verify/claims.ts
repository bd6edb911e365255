/**
 * Checking what a chapter text claims a command prints. Pure.
 *
 * An expect block is the command's whole output, line by line, or says where it leaves lines
 * out: a line `…（省略 N 行）` stands for exactly N output lines. So a reader never meets a
 * silent gap, and deleting an inner line of a block, or changing a quoted line, fails the
 * replay. What the comparison sets aside:
 * - blank lines, terminal colours, and the banner npm prints before a script's output
 *   (`> @pi/course@0.0.0 lab` and `> exec node …`), which is npm's, not the command's;
 * - inside a line, what lies around the claimed words: both sides are split on whitespace and
 *   the claimed words must occur as a contiguous run of the output line's words. So a claim
 *   need not copy timings, column padding or a suffix a tool adds (`✔ Lab 12.1 · … (3.1ms)`,
 *   `Lab 12.1 · …  2/2`), while a changed number never passes: `pass 3` is not inside
 *   `pass 30`, and `3/2` is not inside `2/2`.
 */
import { stripVTControlCharacters } from "node:util";

/** One line of an expect block, with its 1-based line in the chapter file; `omitted` marks `…（省略 N 行）`. */
export interface ClaimLine {
  line: number;
  text: string;
  /** For an omission marker: how many output lines it stands for. */
  omitted?: number;
}

/** Where a claim and the output part ways: the claim line, and what went wrong (Chinese). */
export interface ClaimMismatch {
  line: number;
  problem: string;
}

/** An omission marker: `…（省略 N 行）` (N ≥ 1). */
export const OMISSION = /^…（省略 ([1-9]\d*) 行）$/;

/** N when `text` is an omission marker, else undefined. */
export function omittedCount(text: string): number | undefined {
  const match = OMISSION.exec(text.trim());
  return match === null ? undefined : Number(match[1]);
}

/** The words of one output or claim line, colours removed. */
export function wordsOf(line: string): string[] {
  return stripVTControlCharacters(line)
    .split(/\s+/)
    .filter((word) => word !== "");
}

/** True when `needle` occurs as a contiguous run inside `haystack`. */
function containsRun(haystack: readonly string[], needle: readonly string[]): boolean {
  if (needle.length === 0) return true;
  for (let start = 0; start + needle.length <= haystack.length; start++) {
    if (needle.every((word, offset) => haystack[start + offset] === word)) return true;
  }
  return false;
}

/** npm's banner before a script's output: `> name@version script`, then `> the command`. */
const NPM_BANNER_FIRST = /^> \S+@\S+ \S/;

/** The output lines a claim is compared with: non-blank, colours removed, npm's banner left out. */
export function shownOutputLines(output: string): string[] {
  const lines = output
    .split(/\r?\n/)
    .map((line) => stripVTControlCharacters(line))
    .filter((line) => line.trim() !== "");
  if (lines.length >= 2 && NPM_BANNER_FIRST.test(lines[0]!) && lines[1]!.startsWith("> ")) return lines.slice(2);
  return lines;
}

/** A short quote of an output line for a message. */
function quoted(line: string): string {
  const trimmed = line.trim();
  return `“${trimmed.length > 80 ? `${trimmed.slice(0, 79)}…` : trimmed}”`;
}

/**
 * Where the expect block `claims` departs from `output` (see the module comment), or
 * undefined when the block is the output, each omission marked with its exact line count.
 */
export function firstClaimMismatch(output: string, claims: readonly ClaimLine[]): ClaimMismatch | undefined {
  const lines = shownOutputLines(output);
  let at = 0;
  for (const claim of claims) {
    if (claim.omitted !== undefined) {
      at += claim.omitted;
      if (at > lines.length) return { line: claim.line, problem: `这里省略 ${claim.omitted} 行，但输出在它之后只剩 ${lines.length - (at - claim.omitted)} 行` };
      continue;
    }
    const shown = lines[at];
    if (shown === undefined) return { line: claim.line, problem: `输出在这一行之前就结束了：正文的 “${claim.text}” 没有出现` };
    if (!containsRun(wordsOf(shown), wordsOf(claim.text))) {
      const later = lines.findIndex((line, index) => index > at && containsRun(wordsOf(line), wordsOf(claim.text)));
      const advice = later < 0 ? `输出的这一行是 ${quoted(shown)}` : `它在 ${later - at} 行之后才出现：把中间的行写出来，或者标上 …（省略 ${later - at} 行）`;
      return { line: claim.line, problem: `正文的 “${claim.text}” 与输出对不上，${advice}` };
    }
    at += 1;
  }
  if (at < lines.length) {
    const last = claims.at(-1);
    return {
      line: last?.line ?? 0,
      problem: `输出在正文最后一行之后还有 ${lines.length - at} 行（下一行是 ${quoted(lines[at]!)}）：写出来，或者标上 …（省略 ${lines.length - at} 行）`,
    };
  }
  return undefined;
}
