/**
 * TypeScript sources as syntax trees, read with the course's own compiler.
 *
 * The course builds with TypeScript 7, whose parser is the native compiler; its JavaScript
 * API (`typescript/unstable/sync`) starts that compiler as a child process, parses the
 * texts it is given through an in-memory file system and hands back the trees. The trees
 * stay usable after the process has ended, so every call here starts one, parses, and
 * closes it (about 30 ms) and never leaves a process behind.
 *
 * On top of the trees this module answers the questions the tooling asks of a teaching
 * file: which top-level declarations it has, where each one starts (its own doc comment
 * included) and ends, and which comments and string literals it contains.
 */
import { SyntaxKind, type Node, type SourceFile, type Statement } from "typescript/unstable/ast";
import { forEachLeadingCommentRange } from "typescript/unstable/ast/scanner";
import { createVirtualFileSystem } from "typescript/unstable/fs";
import { API, DiagnosticCategory } from "typescript/unstable/sync";
import path from "node:path";
import { CourseError } from "../core/errors.js";

export { SyntaxKind, type Node, type SourceFile, type Statement };

/** The kinds of node that are a function with a body of its own (declarations, expressions, arrows, methods, accessors, constructors). */
export const FUNCTION_KINDS: ReadonlySet<SyntaxKind> = new Set<SyntaxKind>([
  SyntaxKind.FunctionDeclaration,
  SyntaxKind.FunctionExpression,
  SyntaxKind.ArrowFunction,
  SyntaxKind.MethodDeclaration,
  SyntaxKind.Constructor,
  SyntaxKind.GetAccessor,
  SyntaxKind.SetAccessor,
]);

/** Where the in-memory files live; never a real path. */
const VIRTUAL_ROOT = "/pi-course-virtual";

/**
 * Parses each text of `texts` (file name → source text) as a TypeScript module and returns
 * the trees by file name. Nothing is resolved or type-checked, and no file is read or
 * written. A text with a syntax error is `TS_SYNTAX`, naming the file, line and message.
 * The same texts parsed again give the same trees without starting the compiler.
 */
export function parseModules(texts: Readonly<Record<string, string>>): Map<string, SourceFile> {
  const key = JSON.stringify(Object.entries(texts));
  const known = recentParses.get(key);
  if (known !== undefined) {
    // Most recently used last: the oldest entry is the first one `keys()` gives.
    recentParses.delete(key);
    recentParses.set(key, known);
    return new Map(known);
  }
  const trees = parseModulesNow(texts);
  recentParses.set(key, trees);
  if (recentParses.size > RECENT_PARSES) recentParses.delete(recentParses.keys().next().value!);
  return new Map(trees);
}

/**
 * The last few parses, by their texts: the same teaching file is parsed again and again
 * (once per fault of its catalog, per lab of a staged build), and each parse starts the
 * native compiler (about 30 ms, more on a busy machine). The trees are read, never changed.
 */
const recentParses = new Map<string, Map<string, SourceFile>>();
const RECENT_PARSES = 16;

function parseModulesNow(texts: Readonly<Record<string, string>>): Map<string, SourceFile> {
  const names = Object.keys(texts);
  const virtualName = (index: number): string => `${VIRTUAL_ROOT}/m${index}.ts`;
  const files: Record<string, string> = {
    [`${VIRTUAL_ROOT}/tsconfig.json`]: JSON.stringify({
      compilerOptions: { noLib: true, noResolve: true, types: [], target: "esnext", module: "esnext" },
      files: names.map((_, index) => `m${index}.ts`),
    }),
  };
  names.forEach((name, index) => {
    files[virtualName(index)] = texts[name]!;
  });
  const api = new API({ fs: createVirtualFileSystem(files), cwd: VIRTUAL_ROOT });
  let snapshot: ReturnType<API["updateSnapshot"]> | undefined;
  try {
    snapshot = api.updateSnapshot({ openProject: `${VIRTUAL_ROOT}/tsconfig.json` });
    const project = snapshot.getProjects()[0];
    if (project === undefined) throw new CourseError("TS_UNAVAILABLE", "TypeScript 没有打开内存中的项目");
    const trees = new Map<string, SourceFile>();
    names.forEach((name, index) => {
      const tree = project.program.getSourceFile(virtualName(index));
      if (tree === undefined) throw new CourseError("TS_UNAVAILABLE", `TypeScript 没有解析 ${name}`);
      const [first] = project.program.getSyntacticDiagnostics(virtualName(index));
      if (first !== undefined) {
        const { line } = lineAndColumn(tree, first.pos);
        throw new CourseError("TS_SYNTAX", `${name}:${line}: 语法错误：${first.text}`);
      }
      trees.set(name, tree);
    });
    return trees;
  } finally {
    closeQuietly(api, snapshot);
  }
}

/**
 * Ends the compiler process. `API.close()` closes its input and sends SIGTERM; the native
 * compiler then sometimes reports "context canceled" on the stderr it shares with us. So
 * the snapshot is released while the process still answers, then the process, whose work
 * is done, is killed outright before `close()` (the handle is internal to the API client,
 * hence the optional chain: should it move, `close()` alone still ends the process).
 */
function closeQuietly(api: API, snapshot: { dispose(): void } | undefined): void {
  try {
    snapshot?.dispose();
  } catch {
    // The process is gone already; close() below releases the rest.
  }
  const internals = api as unknown as { client?: { channel?: { child?: { kill(signal: string): boolean } } } };
  internals.client?.channel?.child?.kill("SIGKILL");
  api.close();
}

/**
 * The compile errors (syntactic and semantic, every file) of the TypeScript project
 * `tsconfig` as it would be with `overlay.file` holding `overlay.text`, one line each
 * (`file:line: message`, file relative to the project). The file on disk is not read or
 * touched; every other file is read as it is. About a tenth of a second on this course.
 */
export function projectErrors(tsconfig: string, overlay: { file: string; text: string }): string[] {
  const projectDir = path.dirname(tsconfig);
  const api = new API({ cwd: projectDir, fs: { readFile: (name: string) => (path.resolve(name) === path.resolve(overlay.file) ? overlay.text : undefined) } });
  let snapshot: ReturnType<API["updateSnapshot"]> | undefined;
  try {
    snapshot = api.updateSnapshot({ openProject: tsconfig });
    const project = snapshot.getProjects()[0];
    if (project === undefined) throw new CourseError("TS_UNAVAILABLE", `TypeScript 没有打开项目 ${tsconfig}`);
    const program = project.program;
    const errors: string[] = [];
    for (const diagnostic of [...program.getSyntacticDiagnostics(), ...program.getSemanticDiagnostics()]) {
      if (diagnostic.category !== DiagnosticCategory.Error) continue;
      const file = diagnostic.fileName;
      const tree = file === undefined ? undefined : program.getSourceFile(file);
      const where =
        file === undefined ? "" : `${path.relative(projectDir, file).split(path.sep).join("/")}${tree ? `:${lineAndColumn(tree, diagnostic.pos).line}` : ""}: `;
      errors.push(`${where}${diagnostic.text}`);
    }
    return errors;
  } finally {
    closeQuietly(api, snapshot);
  }
}

/** Parses one module; see `parseModules`. */
export function parseModule(text: string, name = "module.ts"): SourceFile {
  return parseModules({ [name]: text }).get(name)!;
}

/** 1-based line and column of offset `position` in `tree`. */
export function lineAndColumn(tree: SourceFile, position: number): { line: number; column: number } {
  const starts = tree.getLineStarts();
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (starts[middle]! <= position) low = middle;
    else high = middle - 1;
  }
  return { line: low + 1, column: position - starts[low]! + 1 };
}

/** Calls `visit` on `node` and every node below it, parents before children, in source order. */
export function walk(node: Node, visit: (node: Node) => void): void {
  visit(node);
  node.forEachChild((child) => {
    walk(child, visit);
    return undefined;
  });
}

/** One comment of a source text: its kind, its range and its text. */
export interface Comment {
  kind: "line" | "block";
  pos: number;
  end: number;
  text: string;
}

/**
 * The comments directly before offset `pos` (the leading trivia of the token that starts
 * at or after it), in source order.
 */
export function leadingComments(text: string, pos: number): Comment[] {
  const comments: Comment[] = [];
  forEachLeadingCommentRange(text, pos, (start, end, kind) => {
    comments.push({ kind: kind === SyntaxKind.SingleLineCommentTrivia ? "line" : "block", pos: start, end, text: text.slice(start, end) });
    return undefined;
  });
  return comments;
}

/** A half-open range `[pos, end)` of a source text. */
export interface TextRange {
  pos: number;
  end: number;
}

const LITERAL_KINDS = new Set<SyntaxKind>([
  SyntaxKind.StringLiteral,
  SyntaxKind.NoSubstitutionTemplateLiteral,
  SyntaxKind.TemplateHead,
  SyntaxKind.TemplateMiddle,
  SyntaxKind.TemplateTail,
  SyntaxKind.RegularExpressionLiteral,
]);

/**
 * Every string, template and regular-expression literal of `tree`, quotes included (a
 * template with substitutions gives one range per piece: `` `a${ ``, `}b${`, `` }c` ``),
 * in source order.
 */
export function literalRanges(tree: SourceFile): TextRange[] {
  const ranges: TextRange[] = [];
  walk(tree, (node) => {
    if (LITERAL_KINDS.has(node.kind)) ranges.push({ pos: node.getStart(tree), end: node.end });
  });
  return ranges.sort((a, b) => a.pos - b.pos);
}

/**
 * Every comment of `tree`, in source order. The text is scanned outside the literals the
 * tree holds, so `//` or `/*` inside a string, template or regular expression is never
 * taken for a comment, and a comment anywhere (also alone before a closing brace) is found.
 */
export function allComments(tree: SourceFile): Comment[] {
  const text = tree.text;
  const literals = literalRanges(tree);
  const comments: Comment[] = [];
  let next = 0; // index of the next literal at or after `at`
  for (let at = 0; at < text.length; ) {
    while (next < literals.length && literals[next]!.end <= at) next += 1;
    const literal = literals[next];
    if (literal !== undefined && literal.pos <= at) {
      at = literal.end;
      continue;
    }
    if (text.startsWith("//", at)) {
      const newline = text.indexOf("\n", at);
      const end = newline === -1 ? text.length : newline;
      comments.push({ kind: "line", pos: at, end, text: text.slice(at, end).replace(/\r$/, "") });
      at = end;
    } else if (text.startsWith("/*", at)) {
      const close = text.indexOf("*/", at + 2);
      const end = close === -1 ? text.length : close + 2;
      comments.push({ kind: "block", pos: at, end, text: text.slice(at, end) });
      at = end;
    } else {
      at += 1;
    }
  }
  return comments;
}

/** The kinds of top-level declaration the tooling tells apart. */
export type DeclarationKind = "function" | "class" | "interface" | "type" | "variable" | "enum" | "import" | "export" | "other";

/** A top-level statement of a module with the range it owns in the text. */
export interface TopLevelDeclaration {
  /** The declared name (the first one, for a variable statement); "" when there is none. */
  name: string;
  kind: DeclarationKind;
  exported: boolean;
  /**
   * Where the declaration starts: its attached comments included, i.e. the comments right
   * above it with no blank line in between (its doc comment, a 🔨 marker block).
   */
  start: number;
  /** Where the declaration's own code starts (after its comments). */
  codeStart: number;
  end: number;
  /** `text.slice(start, end)`. */
  text: string;
  /** The comments before it that are separated from it by a blank line (section headers). */
  detachedComments: Comment[];
  node: Statement;
}

const KIND_OF: Partial<Record<SyntaxKind, DeclarationKind>> = {
  [SyntaxKind.FunctionDeclaration]: "function",
  [SyntaxKind.ClassDeclaration]: "class",
  [SyntaxKind.InterfaceDeclaration]: "interface",
  [SyntaxKind.TypeAliasDeclaration]: "type",
  [SyntaxKind.VariableStatement]: "variable",
  [SyntaxKind.EnumDeclaration]: "enum",
  [SyntaxKind.ImportDeclaration]: "import",
  [SyntaxKind.ExportDeclaration]: "export",
  [SyntaxKind.ExportAssignment]: "export",
};

function declaredName(node: Statement): string {
  const named = node as Statement & { name?: { text?: string } };
  if (typeof named.name?.text === "string") return named.name.text;
  if (node.kind === SyntaxKind.VariableStatement) {
    const list = (node as Statement & { declarationList: { declarations: readonly { name: { text?: string } }[] } }).declarationList;
    return list.declarations[0]?.name.text ?? "";
  }
  return "";
}

function isExported(node: Statement): boolean {
  const modifiers = (node as Statement & { modifiers?: readonly Node[] }).modifiers ?? [];
  return modifiers.some((modifier) => modifier.kind === SyntaxKind.ExportKeyword);
}

/** True when the text between two offsets holds a blank line. */
function hasBlankLine(text: string, from: number, to: number): boolean {
  return /\n[ \t]*\r?\n/.test(text.slice(from, to));
}

/**
 * The module's top-level statements in order, each with its attached comments: a comment
 * belongs to the declaration below it when no blank line separates them (directly or
 * through other attached comments); comments above a blank line are `detachedComments`.
 */
export function topLevelDeclarations(tree: SourceFile): TopLevelDeclaration[] {
  const text = tree.text;
  return tree.statements.map((node) => {
    const codeStart = node.getStart(tree);
    const comments = leadingComments(text, node.pos);
    let start = codeStart;
    let firstAttached = comments.length;
    for (let index = comments.length - 1; index >= 0; index--) {
      if (hasBlankLine(text, comments[index]!.end, start)) break;
      start = comments[index]!.pos;
      firstAttached = index;
    }
    return {
      name: declaredName(node),
      kind: KIND_OF[node.kind] ?? "other",
      exported: isExported(node),
      start,
      codeStart,
      end: node.end,
      text: text.slice(start, node.end),
      detachedComments: comments.slice(0, firstAttached),
      node,
    };
  });
}
