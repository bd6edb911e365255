/**
 * Checking what a chapter text claims a command prints. Pure.
 *
 * A claim is an excerpt: each of its lines must appear inside the command's output, in the
 * order written, each on a later output line than the one before. "Appear inside" is
 * decided on words: both sides lose terminal colours and are split on whitespace, and the
 * claimed words must occur as a contiguous run of one output line's words. So a claim
 * need not copy timings, column padding or a suffix a tool adds (`✔ Lab 12.1 · … (3.1ms)`,
 * `Lab 12.1 · …  2/2`), while a changed number never passes: `pass 3` is not inside
 * `pass 30`, and `3/2` is not inside `2/2`.
 */
import { stripVTControlCharacters } from "node:util";
import type { NumberedLine } from "./chapter-text.js";

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

/**
 * The first claimed line that `output` does not show (in order, see the module comment),
 * or undefined when every claimed line is there.
 */
export function firstMissingClaim(output: string, claims: readonly NumberedLine[]): NumberedLine | undefined {
  const lines = output.split(/\r?\n/).map(wordsOf);
  let from = 0;
  for (const claim of claims) {
    const needle = wordsOf(claim.text);
    let found = -1;
    for (let index = from; index < lines.length; index++) {
      if (containsRun(lines[index]!, needle)) {
        found = index;
        break;
      }
    }
    if (found < 0) return claim;
    from = found + 1;
  }
  return undefined;
}
