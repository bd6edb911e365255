/**
 * Comparing two public surfaces: the `.d.ts` files the course's ordinary build emits
 * (`declaration: true`), with comments and layout set aside, so that no second compile with
 * `--removeComments` is needed. A starter's doc comments legitimately differ from the
 * reference's, and so may where a line breaks; names, types and punctuation may not.
 * Pure.
 */
import { distPathOf } from "../core/paths.js";

/** Where the build of a package puts the declarations of its source `sourcePath` (repo-relative): `…/dist/src/x.d.ts`. */
export function declarationPathOf(sourcePath: string): string {
  return distPathOf(sourcePath).replace(/\.js$/, ".d.ts");
}

/** One line of a declaration file, as shown in a message and as compared. */
export interface DeclarationLine {
  /** The line without comments, its whitespace runs made one space, trimmed. */
  shown: string;
  /** What is compared: `shown` without the spaces that separate no two words (strings kept as written). */
  key: string;
}

const WORD = /[\p{L}\p{N}_$]/u;

/**
 * The lines of a declaration text without its comments (`//…` and `/* … *\/`; string
 * literals and template literal types kept exactly), blank lines left out. A comment, even
 * one over several lines, counts as a space.
 */
export function declarationLines(text: string): DeclarationLine[] {
  const lines: DeclarationLine[] = [];
  let shown = "";
  let key = "";
  let space = false;
  const endLine = () => {
    if (shown.trim() !== "") lines.push({ shown: shown.trim(), key });
    shown = "";
    key = "";
    space = false;
  };
  const put = (chunk: string) => {
    const first = chunk[0] ?? "";
    if (space && shown !== "") {
      shown += " ";
      if (WORD.test(shown.at(-2) ?? "") && WORD.test(first)) key += " ";
    }
    space = false;
    shown += chunk;
    key += chunk;
  };
  // Open template literals: each holds how many `{` its current `${…}` has open (-1: in its text).
  const templates: number[] = [];
  /** From `from`, inside a template's text, to its closing backtick or its next `${`, both included. */
  const templateText = (from: number): string => {
    for (let j = from; j < text.length; j += text[j] === "\\" ? 2 : 1) {
      if (text[j] === "`") return text.slice(from, j + 1);
      if (text[j] === "$" && text[j + 1] === "{") return text.slice(from, j + 2);
    }
    return text.slice(from);
  };
  /** The string literal whose opening quote is at `from`, up to its closing quote (or the line's end). */
  const stringLiteral = (from: number): string => {
    for (let j = from + 1; j < text.length; j += text[j] === "\\" ? 2 : 1) {
      if (text[j] === text[from]) return text.slice(from, j + 1);
      if (text[j] === "\n") return text.slice(from, j);
    }
    return text.slice(from);
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (templates.at(-1) === -1) {
      // A template's text after a `${…}`: kept as written.
      const chunk = templateText(i);
      shown += chunk;
      key += chunk;
      i += chunk.length;
      if (chunk.endsWith("${")) templates[templates.length - 1] = 0;
      else templates.pop();
      continue;
    }
    if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i += 1;
      continue;
    }
    if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      const comment = end === -1 ? text.slice(i) : text.slice(i, end + 2);
      i += comment.length;
      space = true;
      continue;
    }
    if (c === "\n") {
      endLine();
      i += 1;
      continue;
    }
    if (/\s/.test(c)) {
      space = true;
      i += 1;
      continue;
    }
    if (c === '"' || c === "'") {
      const literal = stringLiteral(i);
      put(literal);
      i += literal.length;
      continue;
    }
    if (c === "`") {
      const literal = `\`${templateText(i + 1)}`;
      put(literal);
      i += literal.length;
      if (literal.length > 1 && literal.endsWith("${")) templates.push(0);
      continue;
    }
    if (templates.length > 0 && c === "{") templates[templates.length - 1]! += 1;
    if (templates.length > 0 && c === "}") {
      if (templates.at(-1) === 0) {
        put("}");
        i += 1;
        templates[templates.length - 1] = -1;
        continue;
      }
      templates[templates.length - 1]! -= 1;
    }
    put(c);
    i += 1;
  }
  endLine();
  return lines;
}

/**
 * Compares two declaration texts line by line, comments, blank lines and layout within a
 * line aside (see `declarationLines`); returns the first difference, naming each side by its
 * label, or undefined.
 */
export function firstDeclarationDifference(starter: string, reference: string, labels: readonly [string, string] = ["starter", "target"]): string | undefined {
  const a = declarationLines(starter);
  const b = declarationLines(reference);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i]?.key !== b[i]?.key) return `第 ${i + 1} 行：${labels[0]}「${a[i]?.shown ?? "（没有）"}」，${labels[1]}「${b[i]?.shown ?? "（没有）"}」`;
  }
  return undefined;
}
