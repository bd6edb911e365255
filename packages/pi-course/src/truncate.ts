/**
 * Chapter 08 · output truncation: what a tool may put into the model's context.
 *
 * A file of a million lines or a build that prints forever would fill the context in one
 * call. Tools therefore keep a bounded part of their output, whole lines where possible,
 * and say what they dropped so the model can ask for more. Which end is kept depends on
 * where the information is: the head of a file (read), the tail of a command's output
 * (shell: errors and results come last).
 */

export interface TruncationLimits {
  /** Most lines kept; a positive integer. */
  maxLines: number;
  /** Most UTF-8 bytes kept; a positive integer. */
  maxBytes: number;
}

export interface Truncation {
  /** The kept text: whole lines joined by `\n`, or the original text when nothing was cut. */
  text: string;
  truncated: boolean;
  /** Lines of the input (a final `\n` does not start another line; `""` has 0). */
  totalLines: number;
  totalBytes: number;
  /** Lines (whole or, for a single over-long line, partial) in `text`. */
  keptLines: number;
  /** True when the only kept line had to be cut inside itself to fit `maxBytes`. */
  partialLine: boolean;
}

const byteLength = (value: string): number => Buffer.byteLength(value, "utf8");

/** The longest prefix (or suffix, `fromEnd`) of `value` within `maxBytes`, never splitting a character. */
export function fitBytes(value: string, maxBytes: number, fromEnd = false): string {
  const bytes = Buffer.from(value, "utf8");
  if (bytes.length <= maxBytes) return value;
  const isContinuation = (index: number) => (bytes[index]! & 0xc0) === 0x80;
  if (!fromEnd) {
    let end = maxBytes; // the first byte left out: if it continues a character, leave that character out whole
    while (end > 0 && isContinuation(end)) end--;
    return bytes.subarray(0, end).toString("utf8");
  }
  let start = bytes.length - maxBytes;
  while (start < bytes.length && isContinuation(start)) start++;
  return bytes.subarray(start).toString("utf8");
}

function splitLines(value: string): string[] {
  if (value === "") return [];
  const lines = value.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

function checkLimits(limits: TruncationLimits): void {
  for (const [name, n] of Object.entries(limits)) {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`${name} must be a positive integer, got ${String(n)}`);
  }
}

function truncate(value: string, limits: TruncationLimits, fromEnd: boolean): Truncation {
  checkLimits(limits);
  const lines = splitLines(value);
  const totalBytes = byteLength(value);
  const totalLines = lines.length;
  if (totalLines <= limits.maxLines && totalBytes <= limits.maxBytes) {
    return { text: value, truncated: false, totalLines, totalBytes, keptLines: totalLines, partialLine: false };
  }
  const ordered = fromEnd ? [...lines].reverse() : lines;
  const kept: string[] = [];
  let bytes = 0;
  for (const line of ordered) {
    if (kept.length === limits.maxLines) break;
    const size = byteLength(line) + (kept.length > 0 ? 1 : 0); // the "\n" joining it to the others
    if (bytes + size > limits.maxBytes) break;
    kept.push(line);
    bytes += size;
  }
  let partialLine = false;
  if (kept.length === 0 && ordered.length > 0) {
    // Not even one whole line fits: keep as much of the nearest one as fits.
    kept.push(fitBytes(ordered[0]!, limits.maxBytes, fromEnd));
    partialLine = true;
  }
  if (fromEnd) kept.reverse();
  return { text: kept.join("\n"), truncated: true, totalLines, totalBytes, keptLines: kept.length, partialLine };
}

/** Keeps the first lines of `value` within both limits. Never splits a character. */
export function truncateHead(value: string, limits: TruncationLimits): Truncation {
  return truncate(value, limits, false);
}

/** Keeps the last lines of `value` within both limits. Never splits a character. */
export function truncateTail(value: string, limits: TruncationLimits): Truncation {
  return truncate(value, limits, true);
}
