/**
 * The leak audit of a starter itself: the one file every learner gets must carry nothing
 * of the reference's function bodies beyond what a starter is for.
 *
 * The rule, decided on both syntax trees (the course's own TypeScript parser):
 * - The answer is the reference's code inside function bodies (functions, methods,
 *   constructors, accessors, arrow functions, function expressions) and in the initializers
 *   of top-level variables and class fields; comments are not code and are left out.
 * - A starter may hold: its public surface (imports, types, classes, signatures: anything
 *   outside bodies and initializers); construction sites, i.e. bodies that throw a lab's
 *   scaffold error, holding nothing but that throw, `void name;` statements and comments;
 *   and given code, i.e. statements of bodies that are not construction sites and
 *   initializers that are exactly, token for token, what the reference has in the same
 *   declaration (a small helper, a constructor, a class field the learner does not write).
 * - The reference's own comments outside its bodies (the doc comments of its public
 *   surface) may be repeated too, even where a body uses the same words.
 * - Everything else is searched for the answer: every comment (the 🔨 guidance included),
 *   every string and template literal outside given code, and every statement of a body
 *   that is neither given nor scaffold. A run of `ANSWER_RUN_TOKENS` consecutive tokens
 *   (words, operators and punctuation marks, at least `ANSWER_RUN_WORDS` of them words) of the answer
 *   found there is a leak, unless the same run is also part of the starter's allowed code
 *   (quoting a given line or a signature gives nothing away). Tokens are compared, not
 *   lines, so `// 参考：const fact = structuredClone(await core(…));` is caught although
 *   the reference line reads `core(call)`, and so is a comment that splits a line in two.
 *
 * What it cannot see: working code outside construction sites is the author's given code
 * when the reference has the same statement in the same declaration; a whole private
 * helper of the reference copied into the starter therefore passes this audit (it is
 * visible in review, and `verify`'s first red fails when it turns a lab green).
 */
import {
  FUNCTION_KINDS,
  SyntaxKind,
  allComments,
  lineAndColumn,
  literalRanges,
  parseModules,
  type Node,
  type SourceFile,
  type TextRange,
} from "../ts/source.js";

/** How many consecutive tokens of the answer make a leak. */
export const ANSWER_RUN_TOKENS = 8;
/** How many of those tokens must be words (identifiers, keywords, numbers), not punctuation. */
export const ANSWER_RUN_WORDS = 3;

/** A piece of the answer found in a starter. */
export interface StarterLeak {
  /** 1-based line of the starter where the piece starts. */
  line: number;
  /** Where it sits: in a comment, in a string or template literal, or in code. */
  where: "comment" | "string" | "code";
  /** The starter's text of the piece (as written there, one line). */
  text: string;
  /** 1-based line of the reference where the same tokens are. */
  referenceLine: number;
}

interface Token {
  text: string;
  word: boolean;
  pos: number;
}

// Multi-character operators are one token each, as the language scans them: `a === 0` is
// three tokens, not five, so punctuation cannot pad a common idiom up to a run.
const TOKEN = /[\p{L}\p{N}_$]+|===|!==|\*\*=|\?\?=|&&=|\|\|=|\.\.\.|=>|==|!=|<=|>=|&&|\|\||\?\?|\?\.|\+\+|--|\*\*|[-+*/%&|^]=|[^\s\p{L}\p{N}_$]/gu;
const QUOTES = new Set(["'", '"', "`"]);

/** Words, operators and single punctuation marks of `text` (starting at offset `base`); every quote mark is one token `"`. */
function tokenize(text: string, base: number): Token[] {
  const tokens: Token[] = [];
  for (const match of text.matchAll(TOKEN)) {
    const raw = match[0];
    tokens.push({ text: QUOTES.has(raw) ? '"' : raw, word: /[\p{L}\p{N}_$]/u.test(raw), pos: base + match.index });
  }
  return tokens;
}

/** `text` with every comment in `comments` (inside `[range.pos, range.end)`) blanked out, offsets kept. */
function withoutComments(text: string, range: TextRange, comments: readonly TextRange[]): string {
  let out = text.slice(range.pos, range.end);
  for (const c of comments) {
    if (c.end <= range.pos || c.pos >= range.end) continue;
    const from = Math.max(c.pos, range.pos) - range.pos;
    const to = Math.min(c.end, range.end) - range.pos;
    out = out.slice(0, from) + " ".repeat(to - from) + out.slice(to);
  }
  return out;
}

/** The words of a comment, without its markers (`//`, `/*`, `*​/`, a JSDoc line's leading `*`). */
function commentTokens(text: string, pos: number): Token[] {
  const stripped = text
    .replace(/^\/\/|^\/\*|\*\/$/g, (marker) => " ".repeat(marker.length))
    .replace(/(^|\n)([ \t]*)\*(?!\/)/g, (_all, start: string, indent: string) => `${start}${indent} `);
  return tokenize(stripped, pos);
}

type AnyNode = Node & {
  body?: Node;
  statements?: readonly Node[];
  initializer?: Node;
  expression?: Node;
  name?: { text?: string; kind: SyntaxKind };
};

/** A place in a module where code lives: a body's statements, or an initializer. */
interface CodeSite {
  /** The enclosing declarations, e.g. `ExtensionHostImpl.constructor`; the same in both files for the same place. */
  path: string;
  /** A function body whose statements are listed one by one, or an initializer (one piece). */
  kind: "body" | "initializer";
  /** The statements of a block body, or the one expression (concise arrow body, initializer). */
  pieces: Node[];
  range: TextRange;
}

function nameOf(node: AnyNode): string {
  if (node.kind === SyntaxKind.Constructor) return "constructor";
  const name = node.name;
  return typeof name?.text === "string" ? name.text : "";
}

/**
 * Every outermost code site of `tree`: the bodies of function-likes and the initializers of
 * variables and class fields that are not inside another site. Nested functions belong to
 * the site that holds them.
 */
function codeSites(tree: SourceFile): CodeSite[] {
  const sites: CodeSite[] = [];
  const visit = (node: AnyNode, path: readonly string[]): void => {
    if (FUNCTION_KINDS.has(node.kind) && node.body !== undefined) {
      const own = [...path, nameOf(node) || "<function>"].join(".");
      const body = node.body as AnyNode;
      const block = body.kind === SyntaxKind.Block;
      sites.push({ path: own, kind: "body", pieces: block ? [...(body.statements ?? [])] : [body], range: { pos: body.getStart(tree), end: body.end } });
      return;
    }
    if ((node.kind === SyntaxKind.VariableDeclaration || node.kind === SyntaxKind.PropertyDeclaration) && node.initializer !== undefined) {
      const own = [...path, nameOf(node)].join(".");
      const init = node.initializer as AnyNode;
      if (FUNCTION_KINDS.has(init.kind) && init.body !== undefined) {
        // `const f = () => …` and `m = function () …`: the function's body is the site.
        visit({ ...init, name: { text: nameOf(node), kind: SyntaxKind.Identifier }, body: init.body, kind: init.kind } as AnyNode, path);
        return;
      }
      sites.push({ path: own, kind: "initializer", pieces: [init], range: { pos: init.getStart(tree), end: init.end } });
      return;
    }
    const name = nameOf(node);
    const inner = name !== "" && node.kind === SyntaxKind.ClassDeclaration ? [...path, name] : path;
    node.forEachChild((child) => {
      visit(child as AnyNode, inner);
      return undefined;
    });
  };
  visit(tree as AnyNode, []);
  return sites;
}

/** True when `statement` throws a lab's scaffold error (a `throw` whose text names `Lab N.M` of this chapter). */
function isScaffoldThrow(statement: Node, text: string, tree: SourceFile, labIds: readonly string[] | undefined): boolean {
  if (statement.kind !== SyntaxKind.ThrowStatement) return false;
  const source = text.slice(statement.getStart(tree), statement.end);
  const ids = [...source.matchAll(/Lab (\d+\.\d+)(?!\d)/g)].map((m) => m[1]!);
  return ids.length > 0 && (labIds === undefined || ids.some((id) => labIds.includes(id)));
}

/** `void name;`: how a starter marks a parameter as deliberately unused. */
function isVoidStatement(statement: AnyNode): boolean {
  if (statement.kind !== SyntaxKind.ExpressionStatement) return false;
  const expression = statement.expression as AnyNode | undefined;
  return expression?.kind === SyntaxKind.VoidExpression && (expression.expression as AnyNode | undefined)?.kind === SyntaxKind.Identifier;
}

const key = (tokens: readonly Token[]): string => tokens.map((t) => t.text).join("\u0001");

/** Runs of `ANSWER_RUN_TOKENS` tokens with enough words: their keys, each with the position of its first token. */
function runs(tokens: readonly Token[]): { key: string; index: number }[] {
  const out: { key: string; index: number }[] = [];
  for (let i = 0; i + ANSWER_RUN_TOKENS <= tokens.length; i++) {
    const window = tokens.slice(i, i + ANSWER_RUN_TOKENS);
    if (window.filter((t) => t.word).length >= ANSWER_RUN_WORDS) out.push({ key: key(window), index: i });
  }
  return out;
}

/**
 * Audits `starterText` against `referenceText` (see the module comment) and returns every
 * leak, one per starter line, in line order; an empty array means the starter passes.
 * `labIds` (the chapter's labs) decide which throws are scaffold throws; without them any
 * `Lab N.M` does. Both texts must parse (`TS_SYNTAX` otherwise).
 */
export function auditStarter(referenceText: string, starterText: string, labIds?: readonly string[]): StarterLeak[] {
  const trees = parseModules({ "reference.ts": referenceText, "starter.ts": starterText });
  const reference = trees.get("reference.ts")!;
  const starter = trees.get("starter.ts")!;
  const referenceComments = allComments(reference);
  const starterComments = allComments(starter);
  const codeTokens = (tree: SourceFile, comments: readonly TextRange[], range: TextRange): Token[] =>
    tokenize(withoutComments(tree.text, range, comments), range.pos);

  // The answer, and the statements each declaration of the reference has (for given code).
  const answer = new Map<string, { tokens: Token[]; index: number }>(); // run key -> where it is in the reference
  const referenceStatements = new Set<string>();
  for (const site of codeSites(reference)) {
    const tokens = codeTokens(reference, referenceComments, site.range);
    for (const run of runs(tokens)) if (!answer.has(run.key)) answer.set(run.key, { tokens, index: run.index });
    for (const piece of site.pieces) {
      referenceStatements.add(`${site.path}\u0000${key(codeTokens(reference, referenceComments, { pos: piece.getStart(reference), end: piece.end }))}`);
    }
  }

  // The starter: what is allowed code, and what must be searched.
  const searched: { range: TextRange; where: StarterLeak["where"] }[] = [];
  const allowed: TextRange[] = []; // given and scaffold code (the surface is everything outside the sites)
  const sites = codeSites(starter);
  for (const site of sites) {
    const constructionSite = site.kind === "body" && site.pieces.some((s) => isScaffoldThrow(s, starterText, starter, labIds));
    for (const piece of site.pieces) {
      const range = { pos: piece.getStart(starter), end: piece.end };
      const given = !constructionSite && referenceStatements.has(`${site.path}\u0000${key(codeTokens(starter, starterComments, range))}`);
      const scaffold = constructionSite && (isScaffoldThrow(piece, starterText, starter, labIds) || isVoidStatement(piece as AnyNode));
      if (given || scaffold) allowed.push(range);
      else searched.push({ range, where: "code" });
    }
  }
  const inside = (pos: number, ranges: readonly TextRange[]) => ranges.some((r) => pos >= r.pos && pos < r.end);
  const siteRanges = sites.map((s) => s.range);
  for (const literal of literalRanges(starter)) {
    if (!inside(literal.pos, allowed)) searched.push({ range: literal, where: "string" });
  }

  // Runs of the starter's allowed code (surface, given, scaffold) are no leak when quoted.
  const surface: Token[][] = [];
  let cursor = 0;
  for (const range of [...siteRanges].sort((a, b) => a.pos - b.pos)) {
    if (range.pos > cursor) surface.push(codeTokens(starter, starterComments, { pos: cursor, end: range.pos }));
    cursor = Math.max(cursor, range.end);
  }
  surface.push(codeTokens(starter, starterComments, { pos: cursor, end: starterText.length }));
  for (const range of allowed) surface.push(codeTokens(starter, starterComments, range));
  // The reference's own comments outside its bodies document its public surface (a type's
  // doc comment, say); a starter repeating them gives nothing away, even where a message
  // inside a body happens to use the same words.
  const referenceSites = codeSites(reference).map((site) => site.range);
  for (const comment of referenceComments) {
    if (!referenceSites.some((r) => comment.pos >= r.pos && comment.pos < r.end)) surface.push(commentTokens(comment.text, comment.pos));
  }
  const quotable = new Set(surface.flatMap((tokens) => runs(tokens).map((r) => r.key)));

  const leaks = new Map<number, StarterLeak>();
  const search = (tokens: readonly Token[], where: StarterLeak["where"]): void => {
    const found = runs(tokens).filter((r) => answer.has(r.key) && !quotable.has(r.key));
    for (let i = 0; i < found.length; ) {
      // One leak per stretch of overlapping matching runs.
      let j = i;
      while (j + 1 < found.length && found[j + 1]!.index <= found[j]!.index + 1) j += 1;
      // Widen the stretch by the equal tokens around it that are too few to be a run themselves.
      const origin = answer.get(found[i]!.key)!;
      let from = found[i]!.index;
      let refFrom = origin.index;
      while (from > 0 && refFrom > 0 && tokens[from - 1]!.text === origin.tokens[refFrom - 1]!.text) {
        from -= 1;
        refFrom -= 1;
      }
      let to = found[j]!.index + ANSWER_RUN_TOKENS - 1;
      const last = answer.get(found[j]!.key)!;
      let refTo = last.index + ANSWER_RUN_TOKENS - 1;
      while (to + 1 < tokens.length && refTo + 1 < last.tokens.length && tokens[to + 1]!.text === last.tokens[refTo + 1]!.text) {
        to += 1;
        refTo += 1;
      }
      const start = tokens[from]!;
      const end = tokens[to]!;
      const { line } = lineAndColumn(starter, start.pos);
      if (!leaks.has(line)) {
        const text = starterText
          .slice(start.pos, end.pos + end.text.length)
          .split(/\r?\n/)[0]!
          .trim();
        leaks.set(line, { line, where, text, referenceLine: lineAndColumn(reference, origin.tokens[refFrom]!.pos).line });
      }
      i = j + 1;
    }
  };
  // Comments separated by nothing but white space are read as one text (a line split over two `//` lines).
  let group: Token[] = [];
  starterComments.forEach((comment, index) => {
    group.push(...commentTokens(comment.text, comment.pos));
    const next = starterComments[index + 1];
    if (next === undefined || starterText.slice(comment.end, next.pos).trim() !== "") {
      search(group, "comment");
      group = [];
    }
  });
  for (const { range, where } of searched) {
    search(where === "string" ? tokenize(starterText.slice(range.pos, range.end), range.pos) : codeTokens(starter, starterComments, range), where);
  }
  return [...leaks.values()].sort((a, b) => a.line - b.line);
}
