/**
 * Chapter 08 · output truncation: what a tool may put into the model's context.
 *
 * A file of a million lines or a build that prints forever would fill the context in one
 * call. Tools therefore keep a bounded part of their output, whole lines where possible,
 * and say what they dropped so the model can ask for more. Which end is kept depends on
 * where the information is: the head of a file (read), the tail of a command's output
 * (shell: errors and results come last).
 *
 * The limits bound what the model receives, not just the part a tool kept: `truncateFramed`
 * cuts the output so that it stays within both limits together with the notices the tool
 * frames it with (what was left out, an exit code), since those reach the context too. When
 * the limits cannot hold even a notice with nothing kept, the notice itself is cut to them:
 * the limits are a budget the caller set, and nothing a tool adds may overdraw it.
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

/** Lines of `value` as the limits count them: a final `\n` does not start another line; `""` has 0. */
export function countLines(value: string): number {
  return splitLines(value).length;
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

/** `value`'s first lines and bytes within `limits`, never splitting a character. */
function clip(value: string, limits: TruncationLimits): string {
  return fitBytes(value.split("\n").slice(0, limits.maxLines).join("\n"), limits.maxBytes);
}

/**
 * A tool's final text: `frame` applied to the largest cut of `value` (its head, or its tail
 * when `fromEnd`) for which the framed text stays within `limits`, bytes and lines. `frame`
 * adds the tool's notices, which may depend on the cut (how many lines it kept). When even
 * a cut that keeps nothing frames to more than the limits, the framed text is itself cut
 * to them.
 */
export function truncateFramed(
  value: string,
  limits: TruncationLimits,
  fromEnd: boolean,
  frame: (cut: Truncation) => string,
): { text: string; cut: Truncation } {
  checkLimits(limits);
  let budget = { ...limits };
  for (;;) {
    const cut = truncate(value, budget, fromEnd);
    const text = frame(cut);
    const overBytes = byteLength(text) - limits.maxBytes;
    const overLines = countLines(text) - limits.maxLines;
    if (overBytes <= 0 && overLines <= 0) return { text, cut };
    // Keep less than this cut did, by at least what the frame overdrew.
    budget = {
      maxBytes: Math.min(budget.maxBytes, byteLength(cut.text)) - Math.max(overBytes, 0),
      maxLines: Math.min(budget.maxLines, cut.keptLines) - Math.max(overLines, 0),
    };
    if (budget.maxBytes < 1 || budget.maxLines < 1) break;
  }
  const nothing: Truncation = {
    text: "",
    truncated: value !== "",
    totalLines: countLines(value),
    totalBytes: byteLength(value),
    keptLines: 0,
    partialLine: false,
  };
  return { text: clip(frame(nothing), limits), cut: nothing };
}
