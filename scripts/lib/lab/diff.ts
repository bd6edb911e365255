/**
 * A whole line diff of two renderings, for `lab --verbose`: node's assertion messages cut
 * long diffs ("... Lines skipped"), which hides exactly the part a learner may need.
 *
 * The comparison is jsdiff's (`diffArrays` over the lines: linear memory, a few milliseconds
 * for thousands of lines; see `docs/dependencies.md`). It is loaded only here, so a plain
 * `lab` run does not pay for it.
 */
import { createRequire } from "node:module";
import type * as JsDiff from "diff";

/** How long the comparison may take before both texts are shown whole instead. */
const TIMEOUT_MS = 200;

/**
 * Every line of `expected` and `actual`, in order, marked `  ` (in both), `- ` (expected
 * only) or `+ ` (actual only), the added lines of a change before the removed ones. When
 * the texts are too different to compare in time, both are returned whole, one after the other.
 */
export function lineDiff(expected: string, actual: string): string[] {
  const a = expected.split("\n");
  const b = actual.split("\n");
  const { diffArrays } = createRequire(import.meta.url)("diff") as typeof JsDiff;
  const parts = diffArrays(a, b, { timeout: TIMEOUT_MS });
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
