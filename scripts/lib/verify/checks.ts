/**
 * The vocabulary of the acceptance record, in a leaf: a check (one line of the record) and
 * the two ways a step reports one it could not make. Every verify module may import this;
 * it imports nothing of verify.
 */
import { CourseError } from "../core/errors.js";

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
