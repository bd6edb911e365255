/**
 * A whole line diff of two renderings, for `lab --verbose`: node's assertion messages cut
 * long diffs ("... Lines skipped"), which hides exactly the part a learner may need.
 */

/** Largest number of line pairs the diff compares; beyond it both texts are shown whole instead. */
const MAX_CELLS = 4_000_000;

/**
 * Every line of `expected` and `actual`, in order, marked `  ` (in both), `- ` (expected
 * only) or `+ ` (actual only), along a longest common subsequence of lines. For texts too
 * large to compare line by line, both are returned whole, one after the other.
 */
export function lineDiff(expected: string, actual: string): string[] {
  const a = expected.split("\n");
  const b = actual.split("\n");
  if (a.length * b.length > MAX_CELLS) return [...a.map((line) => `- ${line}`), ...b.map((line) => `+ ${line}`)];
  // lengths[i][j]: length of the longest common subsequence of a[i..] and b[j..].
  const width = b.length + 1;
  const lengths = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lengths[i * width + j] = a[i] === b[j] ? lengths[(i + 1) * width + j + 1]! + 1 : Math.max(lengths[(i + 1) * width + j]!, lengths[i * width + j + 1]!);
    }
  }
  const lines: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      lines.push(`  ${a[i]}`);
      i++;
      j++;
    } else if (j < b.length && (i === a.length || lengths[i * width + j + 1]! >= lengths[(i + 1) * width + j]!)) {
      lines.push(`+ ${b[j]}`);
      j++;
    } else {
      lines.push(`- ${a[i]}`);
      i++;
    }
  }
  return lines;
}
