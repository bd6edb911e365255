/**
 * Where a fault's `find` lies in a teaching file, found so that reformatting the file does
 * not lose it: inside the top-level declaration the fault names (`in:`), comparing only the
 * code's significant characters. Whitespace (indentation, line breaks) does not count, and
 * neither does a trailing comma before a closing bracket, which a formatter adds or removes
 * when it breaks a list over lines. So `find` still matches after the file is reindented or
 * rewrapped at another line width; it no longer matches when the code itself changed.
 */
import { CourseError } from "../core/errors.js";
import { parseModule, topLevelDeclarations } from "../ts/source.js";

/** A match of `find` in the file: the original text's `[start, end)`, from its first to its last significant character. */
export interface FaultSpan {
  start: number;
  end: number;
}

const CLOSERS = new Set([")", "]", "}"]);

/** The significant characters of `text[from, to)` and, for each, its offset in `text`. */
function skeleton(text: string, from = 0, to = text.length): { chars: string; offsets: number[] } {
  let chars = "";
  const offsets: number[] = [];
  for (let at = from; at < to; at++) {
    const char = text[at]!;
    if (/\s/.test(char)) continue;
    if (char === ",") {
      let next = at + 1;
      while (next < to && /\s/.test(text[next]!)) next++;
      if (next < to && CLOSERS.has(text[next]!)) continue;
    }
    chars += char;
    offsets.push(at);
  }
  return { chars, offsets };
}

/** The ranges `[start, end)` of the top-level declarations called `name` in `text` (a TypeScript module). */
export function declarationRanges(text: string, name: string, fileName = "module.ts"): FaultSpan[] {
  return topLevelDeclarations(parseModule(text, fileName))
    .filter((declaration) => declaration.name === name)
    .map((declaration) => ({ start: declaration.start, end: declaration.end }));
}

/** The top-level declaration of `text` that contains `[start, end)`, or undefined. */
export function enclosingDeclaration(text: string, span: FaultSpan, fileName = "module.ts"): string | undefined {
  return topLevelDeclarations(parseModule(text, fileName)).find((d) => d.start <= span.start && span.end <= d.end && d.name !== "")?.name;
}

/**
 * Every place `find` occurs in `text` when only significant characters are compared (see
 * the module comment), restricted to `ranges` when given. Overlapping matches count.
 */
export function significantMatches(text: string, find: string, ranges?: readonly FaultSpan[]): FaultSpan[] {
  const needle = skeleton(find).chars;
  if (needle === "") return [];
  const spans: FaultSpan[] = [];
  for (const range of ranges ?? [{ start: 0, end: text.length }]) {
    const hay = skeleton(text, range.start, range.end);
    for (let at = hay.chars.indexOf(needle); at !== -1; at = hay.chars.indexOf(needle, at + 1)) {
      spans.push({ start: hay.offsets[at]!, end: hay.offsets[at + needle.length - 1]! + 1 });
    }
  }
  return spans;
}

/**
 * The one place fault `id`'s `find` lies in `text`: inside declaration `anchor` when given
 * (`FAULT_DRIFTED` when the file has no such declaration), by significant characters. Throws
 * `FAULT_DRIFTED` unless there is exactly one.
 */
export function locateFault(text: string, fault: { id: string; file: string; find: string; in?: string }): FaultSpan {
  let ranges: FaultSpan[] | undefined;
  if (fault.in !== undefined) {
    ranges = declarationRanges(text, fault.in, fault.file);
    if (ranges.length === 0) throw new CourseError("FAULT_DRIFTED", `故障 ${fault.id}：${fault.file} 里已经没有顶层声明 ${fault.in}（in: 指向它）；请同步更新 checkpoints 里这个故障`);
  }
  const found = significantMatches(text, fault.find, ranges);
  if (found.length !== 1) {
    const where = fault.in === undefined ? fault.file : `${fault.file} 的 ${fault.in}`;
    const first = fault.find.trim().split(/\r?\n/)[0] ?? "";
    throw new CourseError(
      "FAULT_DRIFTED",
      `故障 ${fault.id}：find 文本（“${first.length > 60 ? `${first.slice(0, 60)}…` : first}”）应在 ${where} 中恰好出现一次（不计空白），实际 ${found.length} 次；参考实现改动过，请同步更新 checkpoints 里这个故障的 find/replace`,
    );
  }
  return found[0]!;
}
