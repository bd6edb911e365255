/**
 * The vocabulary of the acceptance record, in a leaf: its steps' titles, a check (one line
 * of the record) and the two ways a step reports one it could not make. Every verify module
 * (and the command table, which checks `--only` before loading the record) may import this;
 * it imports nothing of verify.
 */
import { CourseError } from "../core/errors.js";

/** The steps of the record, in record order: the names their lines start with, and what `--only` takes. */
export const STEP_TITLES = [
  "history",
  "parent",
  "fresh build",
  "public surface",
  "first red",
  "staged first red",
  "chapter text",
  "leak audit",
  "reference labs",
  "faults",
  "chapter total",
  "through chapter",
] as const;

export type StepTitle = (typeof STEP_TITLES)[number];

/** `titles` as step titles; throws `USAGE` naming the first that is none (and listing the steps). */
export function stepTitles(titles: readonly string[]): StepTitle[] {
  return titles.map((title) => {
    if (!(STEP_TITLES as readonly string[]).includes(title))
      throw new CourseError("USAGE", `verify 没有名为 “${title}” 的步骤；步骤：${STEP_TITLES.join("、")}`);
    return title as StepTitle;
  });
}

/** One line of the record. */
export interface CheckResult {
  name: string;
  ok: boolean;
  detail: string;
}

/** The line of a check that did not run because what it needs is missing (a step before it failed). */
export function notRun(name: string, because: string): CheckResult {
  return { name, ok: false, detail: `没有运行：${because}` };
}

/**
 * A failed check's detail for an error: `[CODE] message` for a course error, `other(error)`
 * for anything else (its message, or the error as a string).
 */
export function errorDetail(error: unknown, other: (error: unknown) => string = String): string {
  return error instanceof CourseError ? `[${error.code}] ${error.message}` : other(error);
}
