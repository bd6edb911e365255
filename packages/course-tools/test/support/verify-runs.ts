/**
 * A synthetic two-lab chapter and test records of it, for the acceptance record's pure
 * judgements (`verify/evaluate.ts`, `verify/staged.ts`).
 */
import { parseManifest } from "../../src/course/manifest.js";
import type { TestRecord } from "../../src/testing/results.js";

/** The chapter: Lab 12.1 with two tests, Lab 12.2 with one. */
export const MANIFEST = parseManifest(
  `format: 1
id: "12"
title: t
files: [packages/pi-course/src/r.ts, packages/pi-course/test/12-r.test.ts]
focusedTests: [packages/pi-course/test/12-r.test.ts]
labs:
  - { id: "12.1", title: a, tests: 2, scaffoldError: "Lab 12.1 catalog 尚未实现", hints: [a, b, c, d] }
  - { id: "12.2", title: b, tests: 1, scaffoldError: "Lab 12.2 activation 尚未实现", hints: [a, b, c, d] }
`,
  "chapters/12-r/chapter.yaml",
);

/** One outermost test's record as the reporter writes it. */
export function record(name: string, ok: boolean, message?: string): TestRecord {
  return { ok, path: [name], skip: false, todo: false, ...(message !== undefined ? { error: { message, failureType: "testCodeFailure" } } : {}) };
}

/** The bare starter's run: every test on a scaffold error. */
export const STARTER_RUN: TestRecord[] = [
  record("Lab 12.1 · a", false, "Lab 12.1 catalog 尚未实现"),
  record("Lab 12.1 · b", false, "Lab 12.1 catalog 尚未实现"),
  // A later lab may be blocked by an earlier lab's scaffold error.
  record("Lab 12.2 · c", false, "Lab 12.1 catalog 尚未实现"),
];
