/**
 * A whole line diff of two renderings, for `lab --verbose`: node's assertion messages cut
 * long diffs ("... Lines skipped"), which hides exactly the part a learner may need.
 *
 * The comparison is jsdiff's (`diffArrays` over the lines: linear memory, a few milliseconds
 * for thousands of lines; see `docs/dependencies.md`). It is loaded only here, so a plain
 * `lab` run does not pay for it. Its work is bounded by the number of changed lines, not by
 * the clock, so the same two texts always give the same lines, however busy the machine.
 */
import { createRequire } from "node:module";
import type * as JsDiff from "diff";

/**
 * How many changed lines (added plus removed) the comparison looks for before it shows both
 * texts whole instead: two unrelated 1 000-line texts give up after about 20 ms, where a
 * timeout would decide by the machine's load.
 */
const MAX_EDIT_LENGTH = 500;

/**
 * Every line of `expected` and `actual`, in order, marked `  ` (in both), `- ` (expected
 * only) or `+ ` (actual only), the added lines of a change before the removed ones. When
 * the texts differ in more than `MAX_EDIT_LENGTH` lines, both are returned whole, one after the other.
 */
export function lineDiff(expected: string, actual: string): string[] {
  const a = expected.split("\n");
  const b = actual.split("\n");
  const { diffArrays } = createRequire(import.meta.url)("diff") as typeof JsDiff;
  const parts = diffArrays(a, b, { maxEditLength: MAX_EDIT_LENGTH });
  if (parts === undefined) return [...a.map((line) => `- ${line}`), ...b.map((line) => `+ ${line}`)];
  const lines: string[] = [];
  // A change comes as its removed lines, then its added ones: show the added ones first.
  let removed: string[] = [];
  for (const part of parts) {
    const rendered = part.value.map((line) => `${part.added ? "+" : part.removed ? "-" : " "} ${line}`);
    if (part.removed) {
      removed = rendered;
      continue;
    }
    lines.push(...(part.added ? [...rendered, ...removed] : [...removed, ...rendered]));
    removed = [];
  }
  lines.push(...removed);
  return lines;
}
