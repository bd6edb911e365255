/**
 * How a lab or challenge test of any chapter fails: under the rule of the chapter text it
 * checks (chapter 00 brings this module, so every later chapter's tests can use it). `rule("§3.4：…", check)` runs `check`; a failure comes back with the rule's
 * statement as its first line, so the lab runner shows which rule broke and where the text
 * states it. A starter's scaffold error (`Lab NN.L … 尚未实现`, any chapter) passes
 * unchanged: it means "not started", not "wrong".
 */
import assert from "node:assert/strict";

/** A starter's construction-site error: `Lab NN.L … 尚未实现`. It is never wrapped (see `rule`). */
const SCAFFOLD = /^Lab \d+\.\d+ .+ 尚未实现$/;

/** True for a starter's scaffold error. */
export function isScaffold(error: unknown): boolean {
  return error instanceof Error && SCAFFOLD.test(error.message);
}

const LINE_BREAK = "\n";

/** The call frames (`    at …` lines) of a stack, one a line. */
function framesOf(stack: string | undefined): string {
  const frames = (stack ?? "").split("\n").filter((line) => /^\s+at /.test(line));
  return frames.join(LINE_BREAK);
}

/**
 * `error` with `statement` (the rule, `§x.y：…`) in front of its message. A failed assertion
 * keeps its values (the lab runner's `--verbose` diff); any other error becomes an assertion
 * error that keeps the original as `actual` and its call frames, so the lab runner still
 * points at the line of the learner's code that threw.
 */
function underRule(statement: string, error: unknown): unknown {
  if (isScaffold(error)) return error;
  if (error instanceof assert.AssertionError) {
    error.message = `${statement}\n${error.message}`;
    return error;
  }
  const code: unknown = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  const described = error instanceof Error ? `${error.name}${typeof code === "string" ? ` [${code}]` : ""}: ${error.message}` : String(error);
  const wrapped = new assert.AssertionError({ message: `${statement}\n意外的错误 ${described}`, actual: error, expected: undefined, operator: "rule" });
  if (error instanceof Error) wrapped.stack = `${wrapped.message}\n${framesOf(error.stack)}`;
  return wrapped;
}

/** `rule` for a check that is synchronous: it runs (and fails) before the call returns. */
export function ruleSync(statement: string, check: () => void): void {
  try {
    check();
  } catch (thrown) {
    throw underRule(statement, thrown);
  }
}

/** Runs `check` for one rule of the chapter text; a failure is rethrown under the rule (see `underRule`). */
export async function rule(statement: string, check: () => unknown): Promise<void> {
  try {
    await check();
  } catch (thrown) {
    throw underRule(statement, thrown);
  }
}
