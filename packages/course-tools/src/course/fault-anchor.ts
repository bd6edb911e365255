/**
 * Where a fault's `find` lies in a teaching file, found so that reformatting the file does
 * not lose it: inside the top-level declaration the fault names (`in:`), comparing the
 * code's significant characters only. What a formatter changes does not count:
 * - whitespace outside string, template and regular-expression literals, and comments;
 * - a comma or semicolon right before a closing bracket (added or dropped when a list or a
 *   type literal is broken over lines), and a leading `|` or `&` of a union broken over lines;
 * - the parentheses around what `return` or `throw` gives (added when it is broken over lines);
 * - the quote character of a string.
 * Anything else is code: `find` still matches after the file is reindented or rewrapped at
 * another line width, and no longer matches once the code itself changed.
 */
import { CourseError } from "../core/errors.js";
import { parseModule, topLevelDeclarations } from "../ts/source.js";

/** A match of `find` in the file: the original text's `[start, end)`, from its first to its last significant character. */
export interface FaultSpan {
  start: number;
  end: number;
  /** Set when the span is `find` byte for byte (the fallback of `locateFault`): it is replaced as written. */
  exact?: true;
}

const CLOSERS = new Set([")", "]", "}"]);
/** After one of these (the last significant character), a `/` starts a regular expression. */
const BEFORE_REGEX = new Set(["(", ",", "=", ":", "[", "!", "&", "|", "?", "{", "}", ";", "+", "-", "*", "%", "<", ">", "~", "^"]);
const WORD = /[\w$]/;

/** The significant characters of `text[from, to)` (see the module comment) and, for each, its offset in `text`. */
function skeleton(text: string, from = 0, to = text.length): { chars: string; offsets: number[]; droppedCloses: Map<number, number> } {
  // One character a slot: a string grown character by character and read at its end would be
  // flattened again at every read (quadratic on a whole teaching file).
  const chars: string[] = [];
  const offsets: number[] = [];
  const droppedCloses = new Map<number, number>(); // offset of a dropped ")" → offset of its "("
  const emit = (char: string, at: number) => {
    chars.push(char);
    offsets.push(at);
  };
  /** Where the comment starting at `at` ends, or undefined when none starts there. */
  const commentEnd = (at: number): number | undefined => {
    if (text.startsWith("//", at)) return Math.min(to, (text.indexOf("\n", at) + 1 || to + 1) - 1);
    if (text.startsWith("/*", at)) return text.indexOf("*/", at) === -1 ? to : text.indexOf("*/", at) + 2;
    return undefined;
  };
  /** Where the next significant character from `at` on is (comments and whitespace skipped). */
  const nextSignificant = (at: number): number => {
    for (let next = at; next < to; ) {
      const end = /\s/.test(text[next]!) ? next + 1 : commentEnd(next);
      if (end === undefined) return next;
      next = end;
    }
    return to;
  };
  // Each open "(": where it is, and for one right after `return`/`throw`, its index in `chars`
  // (dropped at its ")" when that ends the statement: then it wraps the whole value).
  const parens: { at: number; wraps?: number }[] = [];
  let word = ""; // the identifier or keyword being read
  let lastWord = ""; // the one just before this character, when nothing else came between
  for (let at = from; at < to; ) {
    const char = text[at]!;
    if (WORD.test(char)) {
      if (word === "") lastWord = "";
      word += char;
      emit(char, at++);
      continue;
    }
    if (word !== "") {
      lastWord = word;
      word = "";
    }
    if (/\s/.test(char)) {
      at++;
      continue;
    }
    const comment = commentEnd(at);
    if (comment !== undefined) {
      at = comment;
      continue;
    }
    const afterWord = lastWord;
    lastWord = "";
    const last = chars[chars.length - 1] ?? "";
    if (
      char === '"' ||
      char === "'" ||
      char === "`" ||
      (char === "/" && (BEFORE_REGEX.has(last) || last === "" || ["return", "typeof", "case"].includes(afterWord)))
    ) {
      // A literal: every character of it counts, whitespace included; a string's quotes are written ".
      const close = char;
      emit(char === "'" ? '"' : char, at++);
      let depth = 0;
      let inClass = false;
      while (at < to) {
        const inner = text[at]!;
        if (inner === "\\") {
          emit(inner, at++);
          if (at < to) emit(text[at]!, at++);
          continue;
        }
        if (close === "`" && inner === "$" && text[at + 1] === "{") depth++;
        else if (close === "`" && inner === "}" && depth > 0) depth--;
        else if (close === "/" && inner === "[") inClass = true;
        else if (close === "/" && inner === "]") inClass = false;
        else if (inner === close && depth === 0 && !inClass) {
          emit(close === "'" ? '"' : inner, at++);
          break;
        }
        if (close === "/" && inner === "\n") break; // not a regular expression after all
        emit(inner, at++);
      }
      continue;
    }
    if (char === "(") {
      const wraps = afterWord === "return" || afterWord === "throw";
      parens.push(wraps ? { at, wraps: chars.length } : { at });
      emit(char, at++);
      continue;
    }
    if (char === ")" && parens.length > 0) {
      const open = parens.pop()!;
      if (open.wraps !== undefined && [";", "}", undefined].includes(text[nextSignificant(at + 1)])) {
        chars.splice(open.wraps, 1);
        offsets.splice(open.wraps, 1);
        droppedCloses.set(at, open.at);
        at++;
        continue;
      }
    }
    if ((char === "," || char === ";") && CLOSERS.has(text[nextSignificant(at + 1)] ?? "")) {
      at++;
      continue;
    }
    if ((char === "|" || char === "&") && "=(<,:".includes(last) && last !== "" && text[at + 1] !== char) {
      at++;
      continue;
    }
    emit(char, at++);
  }
  return { chars: chars.join(""), offsets, droppedCloses };
}

/** The significant characters of `text` (see the module comment): two texts with the same are the same code to a formatter. */
export function significantCode(text: string): string {
  return skeleton(text).chars;
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
  // A separator ending `find` may be one the file drops before a closing bracket: match
  // without it, and take it into the span when the file has it right there.
  const whole = skeleton(find).chars;
  const needle = whole.replace(/[,;]+$/, "");
  const separators = whole.slice(needle.length);
  if (needle === "") return [];
  const spans: FaultSpan[] = [];
  for (const range of ranges ?? [{ start: 0, end: text.length }]) {
    const hay = skeleton(text, range.start, range.end);
    for (let at = hay.chars.indexOf(needle); at !== -1; at = hay.chars.indexOf(needle, at + 1)) {
      const start = hay.offsets[at]!;
      let end = hay.offsets[at + needle.length - 1]! + 1;
      const nextAt = (offset: number) => offset + Math.max(0, text.slice(offset).search(/\S/));
      // The closing parenthesis of a dropped pair opened inside the match belongs to it.
      while ((hay.droppedCloses.get(nextAt(end)) ?? -1) >= start) end = nextAt(end) + 1;
      for (const separator of separators) {
        if (text[nextAt(end)] !== separator) break;
        end = nextAt(end) + 1;
      }
      spans.push({ start, end });
    }
  }
  return spans;
}

/**
 * The one place fault `id`'s `find` lies in `text`: inside declaration `anchor` when given
 * (`FAULT_DRIFTED` when the file has no such declaration), by significant characters; without
 * an anchor, when significant characters do not find exactly one place, the one place `find`
 * occurs byte for byte (a catalog written before anchors: a find may start inside a string).
 * Throws `FAULT_DRIFTED` unless there is exactly one.
 */
export function locateFault(text: string, fault: { id: string; file: string; find: string; in?: string }): FaultSpan {
  let ranges: FaultSpan[] | undefined;
  if (fault.in !== undefined) {
    ranges = declarationRanges(text, fault.in, fault.file);
    if (ranges.length === 0)
      throw new CourseError(
        "FAULT_DRIFTED",
        `故障 ${fault.id}：${fault.file} 里已经没有顶层声明 ${fault.in}（in: 指向它）；请同步更新本章错误目录（solutions/mistakes.yaml）里的这一条`,
      );
  }
  let found = significantMatches(text, fault.find, ranges);
  if (found.length !== 1 && ranges === undefined) {
    // Without an anchor, a find that starts or ends inside a literal (which significant
    // characters cannot tell apart) may still be the exact text once.
    const at = text.indexOf(fault.find);
    if (at !== -1 && text.indexOf(fault.find, at + 1) === -1) found = [{ start: at, end: at + fault.find.length, exact: true }];
  }
  if (found.length !== 1) {
    const where = fault.in === undefined ? fault.file : `${fault.file} 的 ${fault.in}`;
    const first = fault.find.trim().split(/\r?\n/)[0] ?? "";
    throw new CourseError(
      "FAULT_DRIFTED",
      `故障 ${fault.id}：find 文本（“${first.length > 60 ? `${first.slice(0, 60)}…` : first}”）应在 ${where} 中恰好出现一次（不计空白），实际 ${found.length} 次；代码改动过，请同步更新本章错误目录（solutions/mistakes.yaml）里这一条的 find/replace`,
    );
  }
  return found[0]!;
}
