/**
 * Comparing two public surfaces: the `.d.ts` files the course's ordinary build emits
 * (`declaration: true`), with comments and layout set aside, so that no second compile with
 * `--removeComments` is needed. A starter's doc comments legitimately differ from the
 * reference's, and so may where a line breaks; names, types and punctuation may not.
 */
import { distPathOf } from "../core/paths.js";
import { allComments, literalRanges, parseModule } from "../ts/source.js";

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
 * The lines of a declaration text without its comments, blank lines left out. Comments and
 * literals are the ones the course's parser finds (`ts/source.ts`): a comment, even one over
 * several lines, counts as a space; a string literal or a piece of a template literal type is
 * kept exactly as written. Throws `TS_SYNTAX` for a text that does not parse (a declaration
 * file the compiler emitted always does).
 */
export function declarationLines(text: string): DeclarationLine[] {
  const tree = parseModule(text, "declarations.d.ts");
  const skips = [
    ...allComments(tree).map((range) => ({ ...range, literal: false })),
    ...literalRanges(tree).map((range) => ({ ...range, literal: true })),
  ].sort((a, b) => a.pos - b.pos);
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
    if (space && shown !== "") {
      shown += " ";
      if (WORD.test(shown.at(-2) ?? "") && WORD.test(chunk[0] ?? "")) key += " ";
    }
    space = false;
    shown += chunk;
    key += chunk;
  };
  let next = 0;
  for (let at = 0; at < text.length; ) {
    const skip = skips[next];
    if (skip !== undefined && skip.pos === at) {
      if (skip.literal) put(text.slice(skip.pos, skip.end));
      else space = true;
      at = skip.end;
      next += 1;
      continue;
    }
    const c = text[at]!;
    if (c === "\n") endLine();
    else if (/\s/.test(c)) space = true;
    else put(c);
    at += 1;
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
