/**
 * Where the fault exercise's line goes in the learner's own code, found in its syntax tree
 * (the course's TypeScript, see `../ts/source.ts`), not by matching text: a learner may
 * write the trust branch with or without braces, on one line or several, with any variable
 * and parameter names, and the exercise must still land in that branch and compile.
 *
 * A learner patch names a function as the contract declares it, e.g.
 * `loadExtension(source, options)`, a statement in it, `return "skipped_untrusted"`, and the
 * line to put before that statement, written against the contract's parameter names:
 * `await options.importModule?.(source); // 故意错误`. Placing it:
 * 1. find the one function of that name with a body (a function declaration, a function or
 *    arrow function assigned to a variable or property, or a method);
 * 2. find its return statements whose returned value contains the string literal, reached
 *    whatever else the expression does (not only in one branch of `?:`, `&&`, `||`, `??`,
 *    and not inside a nested function);
 * 3. rewrite the line's references to the contract's parameters into the learner's: a
 *    renamed parameter (`src`), a destructured one (`{ importModule }`, `{ importModule: load }`,
 *    `{ host, ...rest }` → `rest.importModule`);
 * 4. insert it before each such return: on its own line when the return starts a line in a
 *    block, or by turning a single-statement branch (`if (…) return {…};`) into a block.
 * Whatever cannot be placed this way is reported with the reason, and the caller explains
 * the manual edit instead; the learner's file is not touched then.
 */
import {
  isArrowFunction,
  isAsExpression,
  isAwaitExpression,
  isBinaryExpression,
  isBindingElement,
  isBlock,
  isCaseClause,
  isConditionalExpression,
  isDefaultClause,
  isFunctionDeclaration,
  isFunctionExpression,
  isIdentifier,
  isMethodDeclaration,
  isNoSubstitutionTemplateLiteral,
  isObjectBindingPattern,
  isParenthesizedExpression,
  isPropertyAccessExpression,
  isPropertyAssignment,
  isReturnStatement,
  isSatisfiesExpression,
  isShorthandPropertyAssignment,
  isSourceFile,
  isStringLiteral,
  isVariableDeclaration,
} from "typescript/unstable/ast/is";
import type { Node, ParameterDeclaration, ReturnStatement, SourceFile } from "typescript/unstable/ast";
import { CourseError, isCourseError } from "../core/errors.js";
import { FUNCTION_KINDS, lineAndColumn, parseModules, SyntaxKind, walk } from "./source.js";

/** `name(param, param)`: the function the line goes into, with the parameter names the line uses. */
export interface FunctionSpec {
  name: string;
  parameters: string[];
}

/**
 * `return "<literal>"` (or a bare `return`: every return of the function): before which
 * statement the line goes; `start`: before the body's first statement, for a line that
 * rewrites a parameter before anything reads it.
 */
export type StatementSpec = { kind: "return"; literal?: string } | { kind: "start" };

/** Parses `loadExtension(source, options)`; undefined when it is not of that form. */
export function parseFunctionSpec(text: string): FunctionSpec | undefined {
  const match = /^\s*([A-Za-z_$][\w$]*)\s*\(\s*((?:[A-Za-z_$][\w$]*\s*(?:,\s*[A-Za-z_$][\w$]*\s*)*)?)\)\s*$/.exec(text);
  if (match === null) return undefined;
  const parameters = match[2]!
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  return new Set(parameters).size === parameters.length ? { name: match[1]!, parameters } : undefined;
}

/** Parses `return "skipped_untrusted"` (either quote), `return` or `start`; undefined when it is none of them. */
export function parseStatementSpec(text: string): StatementSpec | undefined {
  if (text.trim() === "start") return { kind: "start" };
  const match = /^\s*return(?:\s+(["'])([^"'\\\r\n]+)\1)?\s*$/.exec(text);
  if (match === null) return undefined;
  return match[2] === undefined ? { kind: "return" } : { kind: "return", literal: match[2] };
}

export type Placement =
  /** `text` with the line inserted; `lines` are the 1-based numbers of the inserted lines in it. */
  | { ok: true; text: string; lines: number[] }
  /** Not placed: why (Chinese, for the learner), and the lines of candidate statements found, if any. */
  | { ok: false; reason: string; lines: number[] };

type FunctionLike = Node & { parameters: readonly ParameterDeclaration[]; body?: Node; modifiers?: readonly Node[] };

/** The functions named `name` that have a body, in source order. */
function functionsNamed(tree: SourceFile, name: string): FunctionLike[] {
  const found: FunctionLike[] = [];
  const unwrap = (node: Node | undefined): Node | undefined => {
    let current = node;
    while (current !== undefined && (isParenthesizedExpression(current) || isAsExpression(current) || isSatisfiesExpression(current))) {
      current = current.expression;
    }
    return current;
  };
  walk(tree, (node) => {
    if (
      (isFunctionDeclaration(node) || isMethodDeclaration(node)) &&
      node.body !== undefined &&
      node.name !== undefined &&
      isIdentifier(node.name) &&
      node.name.text === name
    ) {
      found.push(node as FunctionLike);
      return;
    }
    if ((isVariableDeclaration(node) || isPropertyAssignment(node)) && isIdentifier(node.name) && node.name.text === name) {
      const value = unwrap(node.initializer);
      if (value !== undefined && (isArrowFunction(value) || isFunctionExpression(value))) found.push(value as FunctionLike);
    }
  });
  return found;
}

/** Where a nested function's own code begins: functions, and class static blocks. */
const NESTED_KINDS = new Set<SyntaxKind>([...FUNCTION_KINDS, SyntaxKind.ClassStaticBlockDeclaration]);
/** True when `node` belongs to `fn` itself, not to a function nested in it. */
function ownedBy(node: Node, fn: Node): boolean {
  for (let current = node.parent; current !== undefined; current = current.parent) {
    if (current === fn) return true;
    if (NESTED_KINDS.has(current.kind)) return false;
  }
  return false;
}

/**
 * True when the value of `expression` always carries `literal`: the literal occurs in it and
 * the way down to it takes no branch of a conditional or logical expression.
 */
function alwaysCarries(expression: Node, literal: string): boolean {
  let found = false;
  const visit = (node: Node): void => {
    if (found) return;
    if ((isStringLiteral(node) || isNoSubstitutionTemplateLiteral(node)) && node.text === literal) {
      found = true;
      return;
    }
    if (NESTED_KINDS.has(node.kind) || isConditionalExpression(node)) return;
    if (isBinaryExpression(node)) {
      const op = node.operatorToken.kind;
      if (op === SyntaxKind.AmpersandAmpersandToken || op === SyntaxKind.BarBarToken || op === SyntaxKind.QuestionQuestionToken) return;
    }
    node.forEachChild((child) => {
      visit(child);
      return undefined;
    });
  };
  visit(expression);
  return found;
}

/** How the learner wrote one parameter of the contract. */
type ParameterShape =
  | { kind: "name"; name: string }
  | { kind: "object"; properties: Map<string, string>; rest?: string }
  | { kind: "missing" }
  | { kind: "other" };

function shapeOf(parameter: ParameterDeclaration | undefined): ParameterShape {
  if (parameter === undefined) return { kind: "missing" };
  if (parameter.dotDotDotToken !== undefined) return { kind: "other" };
  const name = parameter.name;
  if (isIdentifier(name)) return { kind: "name", name: name.text };
  if (!isObjectBindingPattern(name)) return { kind: "other" };
  const properties = new Map<string, string>();
  let rest: string | undefined;
  for (const element of name.elements) {
    if (!isBindingElement(element) || element.name === undefined || !isIdentifier(element.name)) continue;
    if (element.dotDotDotToken !== undefined) rest = element.name.text;
    else {
      const key =
        element.propertyName === undefined
          ? element.name.text
          : isIdentifier(element.propertyName) || isStringLiteral(element.propertyName)
            ? element.propertyName.text
            : undefined;
      if (key !== undefined) properties.set(key, element.name.text);
    }
  }
  return rest === undefined ? { kind: "object", properties } : { kind: "object", properties, rest };
}

/**
 * `insert` with its references to the contract's parameters rewritten for the learner's
 * parameters. Throws `FAULT_UNPLACEABLE` (with the reason) when a reference has no
 * equivalent, e.g. `options.importModule` when the learner destructured `options` without
 * taking `importModule`.
 */
function rewriteInsert(insert: string, tree: SourceFile, spec: FunctionSpec, fn: FunctionLike): string {
  const shapes = new Map(spec.parameters.map((name, index) => [name, shapeOf(fn.parameters[index])]));
  const edits: { start: number; end: number; text: string }[] = [];
  const unplaceable = (why: string): never => {
    throw new CourseError("FAULT_UNPLACEABLE", why);
  };
  walk(tree, (node) => {
    if (!isIdentifier(node) || !shapes.has(node.text)) return;
    const parent = node.parent;
    // Only references: not a property name after a dot, not a key of an object literal.
    if (isPropertyAccessExpression(parent) && parent.name === node) return;
    if (isPropertyAssignment(parent) && parent.name === node) return;
    const shape = shapes.get(node.text)!;
    const described = `${spec.name} 的第 ${spec.parameters.indexOf(node.text) + 1} 个参数（${node.text}）`;
    const start = node.getStart(tree);
    if (shape.kind === "missing" || shape.kind === "other")
      unplaceable(`你的 ${described} ${shape.kind === "missing" ? "不存在" : "写法不是普通参数或对象解构"}`);
    if (shape.kind === "name") {
      const text = isShorthandPropertyAssignment(parent) ? `${node.text}: ${shape.name}` : shape.name;
      edits.push({ start, end: node.end, text });
      return;
    }
    if (shape.kind !== "object") return;
    if (isPropertyAccessExpression(parent) && parent.expression === node && isIdentifier(parent.name)) {
      const property = parent.name.text;
      const local = shape.properties.get(property);
      if (local !== undefined) edits.push({ start, end: parent.name.end, text: local });
      else if (shape.rest !== undefined) edits.push({ start, end: node.end, text: shape.rest });
      else unplaceable(`你的 ${described} 被解构了，但没有取出 ${property}，插入的这一行用不到它`);
      return;
    }
    unplaceable(`你的 ${described} 被解构了，插入的这一行需要整个 ${node.text}`);
  });
  edits.sort((a, b) => b.start - a.start);
  let text = insert.trim();
  const offset = insert.indexOf(text);
  for (const edit of edits) text = text.slice(0, edit.start - offset) + edit.text + text.slice(edit.end - offset);
  return text;
}

function containsAwait(tree: SourceFile): boolean {
  let found = false;
  walk(tree, (node) => {
    if (isAwaitExpression(node)) found = true;
  });
  return found;
}

function isAsync(fn: FunctionLike): boolean {
  return (fn.modifiers ?? []).some((modifier) => modifier.kind === SyntaxKind.AsyncKeyword);
}

/**
 * `line` for a place where code follows it on the same line: a trailing line comment
 * (`a(); // x`) becomes a block comment (`a(); /* x *\/`), which would otherwise swallow that code.
 */
function inlineForm(line: string, insert: string, insertTree: SourceFile): string {
  const last = insertTree.statements.at(-1);
  const tail = last === undefined ? "" : insert.slice(last.end).trim();
  if (!tail.startsWith("//") || !line.endsWith(tail)) return line;
  const code = line.slice(0, line.length - tail.length).trimEnd();
  return `${code} /* ${tail.slice(2).trim().replace(/\*\//g, "* /")} */`;
}

/**
 * Places `insert` before the statement `at` of the function `fn` in `text` (see the module
 * comment). Pure apart from parsing; never throws for code it cannot place (it says why).
 */
export function placeLine(text: string, fn: FunctionSpec, at: StatementSpec, insert: string, fileName = "teaching.ts"): Placement {
  let tree: SourceFile;
  let insertTree: SourceFile;
  try {
    const trees = parseModules({ [fileName]: text, "insert.ts": insert });
    tree = trees.get(fileName)!;
    insertTree = trees.get("insert.ts")!;
  } catch (error) {
    if (isCourseError(error, "TS_SYNTAX")) return { ok: false, reason: `文件无法解析：${error.message}`, lines: [] };
    throw error;
  }
  const lineOf = (position: number) => lineAndColumn(tree, position).line;

  const functions = functionsNamed(tree, fn.name);
  if (functions.length === 0) return { ok: false, reason: `没有找到带函数体的 ${fn.name}()`, lines: [] };
  if (functions.length > 1) {
    return { ok: false, reason: `有 ${functions.length} 个叫 ${fn.name} 的函数，不知道该用哪一个`, lines: functions.map((f) => lineOf(f.getStart(tree))) };
  }
  const target = functions[0]!;
  if (at.kind === "start") return placeAtStart(text, tree, insertTree, fn, target, insert);

  const returns: ReturnStatement[] = [];
  const mentioning: number[] = [];
  const { literal } = at;
  walk(target, (node) => {
    if (!isReturnStatement(node) || !ownedBy(node, target)) return;
    if (literal === undefined) {
      returns.push(node);
      return;
    }
    if (node.expression === undefined) return;
    if (alwaysCarries(node.expression, literal)) returns.push(node);
    else if (node.expression.getText(tree).includes(literal)) mentioning.push(lineOf(node.getStart(tree)));
  });
  if (returns.length === 0) {
    const why =
      literal === undefined
        ? `${fn.name}() 里没有 return 语句`
        : mentioning.length > 0
          ? `${fn.name}() 里提到 "${literal}" 的 return 只在条件表达式的一个分支里返回它（第 ${mentioning.join("、")} 行）`
          : `${fn.name}() 里没有直接返回 "${literal}" 的 return 语句`;
    return { ok: false, reason: why, lines: mentioning };
  }
  const prepared = learnerLine(insert, insertTree, fn, target, () => returns.map((r) => lineOf(r.getStart(tree))));
  if (!prepared.ok) return prepared;
  const { line } = prepared;
  const { eol, unit } = styleOf(text);
  // One edit per return, in source order; `offset` is where the line sits within the edit's text.
  const edits: { at: number; end: number; text: string; offset: number }[] = [];
  for (const statement of returns) {
    const start = statement.getStart(tree);
    const lineStart = text.lastIndexOf("\n", start - 1) + 1;
    const before = text.slice(lineStart, start);
    const indent = /^[ \t]*/.exec(before)![0];
    const parent = statement.parent;
    const inList = isBlock(parent) || isCaseClause(parent) || isDefaultClause(parent) || isSourceFile(parent);
    if (inList && before.trim() === "") {
      edits.push({ at: lineStart, end: lineStart, text: `${indent}${line}${eol}`, offset: 0 });
    } else if (inList) {
      edits.push({ at: start, end: start, text: `${inlineForm(line, insert, insertTree)} `, offset: 0 });
    } else if (before.trim() === "" && !/\/[/*]/.test(text.slice(statement.pos, start))) {
      // The branch's statement on a line of its own (`else⏎  return …`): open the block on the
      // line of the keyword, keep the statement's own indentation, close at the keyword's.
      const keywordLine = text.lastIndexOf("\n", statement.pos - 1) + 1;
      const outer = /^[ \t]*/.exec(text.slice(keywordLine))![0];
      const body = `${indent}${line}${eol}${indent}${text.slice(start, statement.end)}`;
      edits.push({ at: statement.pos, end: statement.end, text: ` {${eol}${body}${eol}${outer}}`, offset: 1 });
    } else {
      const inner = `${indent}${unit}`;
      edits.push({ at: start, end: statement.end, text: `{${eol}${inner}${line}${eol}${inner}${text.slice(start, statement.end)}${eol}${indent}}`, offset: 1 });
    }
  }
  const newlines = (s: string) => s.split("\n").length - 1;
  const lines: number[] = [];
  let added = 0;
  for (const edit of edits) {
    lines.push(lineOf(edit.at) + added + edit.offset);
    added += newlines(edit.text) - newlines(text.slice(edit.at, edit.end));
  }
  let patched = text;
  for (const edit of [...edits].reverse()) patched = patched.slice(0, edit.at) + edit.text + patched.slice(edit.end);
  return { ok: true, text: patched, lines };
}

/**
 * The line to insert, rewritten for `target`'s parameters; or why it cannot go into `target`
 * (it awaits in a function that is not async, or names a parameter the learner's shape lacks),
 * with `near()` the lines to point at.
 */
function learnerLine(
  insert: string,
  insertTree: SourceFile,
  fn: FunctionSpec,
  target: FunctionLike,
  near: () => number[],
): { ok: true; line: string } | Extract<Placement, { ok: false }> {
  if (containsAwait(insertTree) && !isAsync(target)) {
    return { ok: false, reason: `插入的这一行要用 await，而你的 ${fn.name}() 不是 async 函数`, lines: near() };
  }
  try {
    return { ok: true, line: rewriteInsert(insert, insertTree, fn, target) };
  } catch (error) {
    if (isCourseError(error, "FAULT_UNPLACEABLE")) return { ok: false, reason: error.message, lines: near() };
    throw error;
  }
}

/** The line end and the indentation unit `text` is written with. */
function styleOf(text: string): { eol: string; unit: string } {
  return { eol: text.includes("\r\n") ? "\r\n" : "\n", unit: /\n\t/.test(text) ? "\t" : "  " };
}

/** `placeLine` for `start`: the line becomes the body's first statement (an expression body becomes a block that returns it). */
function placeAtStart(text: string, tree: SourceFile, insertTree: SourceFile, fn: FunctionSpec, target: FunctionLike, insert: string): Placement {
  const lineOf = (position: number) => lineAndColumn(tree, position).line;
  const body = target.body;
  if (body === undefined) return { ok: false, reason: `${fn.name}() 没有函数体`, lines: [] };
  const prepared = learnerLine(insert, insertTree, fn, target, () => [lineOf(body.getStart(tree))]);
  if (!prepared.ok) return prepared;
  const { line } = prepared;
  const { eol, unit } = styleOf(text);
  const lineStartOf = (position: number) => text.lastIndexOf("\n", position - 1) + 1;
  const indentOf = (position: number) => /^[ \t]*/.exec(text.slice(lineStartOf(position)))![0];
  const splice = (at: number, end: number, piece: string, lineInPiece: number): Placement => ({
    ok: true,
    text: text.slice(0, at) + piece + text.slice(end),
    lines: [lineOf(at) + lineInPiece],
  });
  if (isBlock(body)) {
    const first = body.statements[0];
    if (first !== undefined && text.slice(lineStartOf(first.getStart(tree)), first.getStart(tree)).trim() === "") {
      const at = lineStartOf(first.getStart(tree));
      return splice(at, at, `${indentOf(first.getStart(tree))}${line}${eol}`, 0);
    }
    // An empty body, or a first statement on the line of the brace: the line on a line of its
    // own after `{`, and what followed the brace on the next one.
    const open = body.getStart(tree) + 1;
    const indent = indentOf(body.getStart(tree));
    const inner = `${indent}${unit}`;
    const rest = first === undefined ? body.end - 1 : first.getStart(tree);
    const next = first === undefined ? indent : inner;
    return splice(open, rest, `${eol}${inner}${line}${eol}${next}`, 1);
  }
  // An expression body: `(…) => expr` becomes `(…) => {⏎ line⏎ return expr;⏎}`.
  const start = body.getStart(tree);
  const indent = indentOf(start);
  const inner = `${indent}${unit}`;
  return splice(start, body.end, `{${eol}${inner}${line}${eol}${inner}return ${text.slice(start, body.end)};${eol}${indent}}`, 1);
}
