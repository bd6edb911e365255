/**
 * The rules a lab test checks, read from the test's source: every `rule("§…：…", …)` call
 * inside the test's body, in source order.
 *
 * A check that fails inside `rule()` names its rule itself. When the learner's code throws,
 * rejects or hangs outside every check of a test (while a test prepares its input, in a
 * `.then` the test awaits, after the test stopped waiting), the failure carries only what
 * was thrown; `withTestRules` then gives it the rules that test checks, so a failing lab
 * always points at the text's sections, never at a bare message.
 */
import { readFileSync } from "node:fs";
import { isCallExpression, isIdentifier, isNoSubstitutionTemplateLiteral, isStringLiteral } from "typescript/unstable/ast/is";
import type { Node } from "typescript/unstable/ast";
import { lineAndColumn, parseModule, walk } from "../ts/source.js";
import type { FirstFailure } from "./results.js";

/** The text of a string-literal argument, or undefined for anything else. */
function literalText(node: Node | undefined): string | undefined {
  if (node !== undefined && (isStringLiteral(node) || isNoSubstitutionTemplateLiteral(node))) return node.text;
  return undefined;
}

/** True for a call of the plain function `name` (`test(…)`, `rule(…)`). */
function isCallOf(node: Node, name: string): boolean {
  return isCallExpression(node) && isIdentifier(node.expression) && node.expression.text === name;
}

/** Which test: the line its `test(` call starts on, or its (outermost) name. */
export interface TestSelector {
  line?: number;
  name?: string;
}

/**
 * The rule statements cited by `rule()` calls inside the `test()` call of `source` that
 * `selector` picks (the one starting on its line, else the first with its literal name), each
 * once, in source order; empty when no such test is found or it cites none. Only literal
 * statements count.
 */
export function rulesOfTest(source: string, selector: TestSelector, fileName = "test.ts"): string[] {
  const tree = parseModule(source, fileName);
  const tests: Node[] = [];
  walk(tree, (node) => {
    if (isCallOf(node, "test")) tests.push(node);
  });
  const chosen =
    tests.find((node) => selector.line !== undefined && lineAndColumn(tree, node.getStart(tree)).line === selector.line) ??
    tests.find((node) => selector.name !== undefined && isCallExpression(node) && literalText(node.arguments[0]) === selector.name);
  if (chosen === undefined) return [];
  const rules: string[] = [];
  walk(chosen, (node) => {
    if (!isCallOf(node, "rule") || !isCallExpression(node)) return;
    const statement = literalText(node.arguments[0]);
    if (statement !== undefined && !rules.includes(statement)) rules.push(statement);
  });
  return rules;
}

/** True when `failure` already names a rule (its message starts with `§`) or is a scaffold error. */
function namesItsRule(failure: FirstFailure): boolean {
  return failure.scaffoldOf !== undefined || failure.message.trimStart().startsWith("§");
}

/**
 * `failure` with `rules` set to the rules its test checks, when its message names none and the
 * test's source (`failure.testFile`, else the first of `testFiles` holding a test of that name)
 * cites some; otherwise `failure` unchanged. Never throws: a source that cannot be read or
 * parsed leaves the failure as it is.
 */
export function withTestRules(failure: FirstFailure, testFiles: readonly string[] = []): FirstFailure {
  if (namesItsRule(failure) || failure.rules !== undefined) return failure;
  const name = failure.test.split(" › ")[0];
  const candidates = failure.testFile === undefined ? testFiles : [failure.testFile];
  for (const file of candidates) {
    try {
      const selector: TestSelector = { ...(failure.testLine === undefined ? {} : { line: failure.testLine }), ...(name === undefined ? {} : { name }) };
      const rules = rulesOfTest(readFileSync(file, "utf8"), selector, file.endsWith(".ts") ? file : `${file}.ts`);
      if (rules.length > 0) return { ...failure, rules };
    } catch {
      // A test source we cannot read or parse: the failure keeps what it had.
    }
  }
  return failure;
}
