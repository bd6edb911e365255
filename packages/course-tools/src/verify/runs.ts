/**
 * Reading one test run of a chapter's focused tests for the acceptance record: the
 * outermost tests of a lab and the message each failure shows. Pure.
 */
import { testBelongsToLab } from "../course/lab-names.js";
import type { TestRecord } from "../testing/results.js";

/** The first line of `text`, trimmed (for one-line record details). */
export function firstLine(text: string): string {
  return text.trim().split("\n")[0] ?? "";
}

/** The outermost test records of `records` that ran (not skipped, not todo), in order. */
export function topLevel(records: readonly TestRecord[]): TestRecord[] {
  return records.filter((r) => r.path.length === 1 && !r.skip && !r.todo);
}

/** The message a failing test shows: its own, or its first failing subtest's. */
export function failureMessage(test: TestRecord, records: readonly TestRecord[]): string {
  if (test.error?.failureType !== "subtestsFailed") return (test.error?.message ?? "").trim();
  const leaf = records.find((r) => !r.ok && r.path.length > 1 && r.path[0] === test.path[0] && r.error?.failureType !== "subtestsFailed");
  return (leaf?.error?.message ?? "").trim();
}

/** The outermost tests of lab `lab` (names `Lab <lab> …`) that ran. */
export function testsOfLab(records: readonly TestRecord[], lab: string): TestRecord[] {
  return topLevel(records).filter((r) => testBelongsToLab(r.path[0] ?? "", lab));
}
