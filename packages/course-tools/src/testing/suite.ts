/**
 * One build and run of a chapter's focused tests in a course folder (the reference's scratch
 * copy, a practice folder), read as a whole: green or not, and why not in one line. What the
 * fault runs (author and learner) and the acceptance record ask of a folder.
 */
import { CourseError } from "../core/errors.js";
import { distPathOf, packageDirOf } from "../core/paths.js";
import { labsNamePattern } from "../course/lab-names.js";
import type { ChapterManifest } from "../course/manifest.js";
import { buildCourse } from "./compiler.js";
import { summarizeLabs, type LabResult, type TestRecord, type TestRun } from "./results.js";
import { prepareTests } from "./tests.js";

/** The outermost tests of a run: name → passed. Skipped and todo tests are left out. */
export function topLevelResults(records: readonly TestRecord[]): Map<string, boolean> {
  const results = new Map<string, boolean>();
  for (const r of records) {
    if (r.path.length === 1 && !r.skip && !r.todo) results.set(r.path[0]!, r.ok && (results.get(r.path[0]!) ?? true));
  }
  return results;
}

/** One build and run of the focused tests in a scratch folder. */
export interface SuiteRun {
  ok: boolean;
  /** First compiler diagnostics when the build failed. */
  buildErrors?: string[];
  run?: TestRun;
  tests: Map<string, boolean>;
  labs: LabResult[];
}

/**
 * Builds `dir` incrementally (unless `prebuilt`: it is built already) and runs the chapter's
 * focused tests (only those of `labs`, when given: `labs` of the result then lists those
 * labs, and `ok` judges them alone); never throws for red results (a run the time limit
 * ended is red). Throws `ABORTED` when `options.signal` aborts, after the test processes
 * have ended and their temporary folder is gone.
 */
export async function runSuite(
  dir: string,
  manifest: ChapterManifest,
  options: { signal?: AbortSignal; timeoutMs?: number; prebuilt?: boolean; labs?: readonly string[] } = {},
): Promise<SuiteRun> {
  const { signal, labs: only, ...testOptions } = options;
  const selected = only === undefined ? manifest.labs : manifest.labs.filter((lab) => only.includes(lab.id));
  // The test processes start first, so node's start-up overlaps the build.
  const prepared = await prepareTests(dir, manifest.focusedTests.map(distPathOf), {
    ...testOptions,
    ...(signal === undefined ? {} : { signal }),
    ...(only === undefined ? {} : { namePattern: labsNamePattern(only) }),
  });
  const tsconfigs = options.prebuilt === true ? [] : new Set(manifest.focusedTests.map((f) => `${packageDirOf(f)}/tsconfig.json`));
  for (const tsconfig of tsconfigs) {
    const build = await buildCourse(dir, tsconfig, signal).catch(async (error: unknown) => {
      await prepared.cancel();
      throw error;
    });
    if (signal?.aborted || !build.ok) {
      await prepared.cancel();
      if (signal?.aborted) throw new CourseError("ABORTED", "已中断");
      return { ok: false, buildErrors: build.diagnostics.slice(0, 3), tests: new Map(), labs: [] };
    }
  }
  const run = await prepared.run();
  if (signal?.aborted) throw new CourseError("ABORTED", "已中断");
  const tests = topLevelResults(run.records);
  const labs = summarizeLabs(selected, manifest.labs, run.records);
  const ok =
    run.crashes.length === 0 && run.timedOut === undefined && tests.size > 0 && [...tests.values()].every(Boolean) && labs.every((l) => l.status === "passed");
  return { ok, run, tests, labs };
}

/** Why a run is not green, in one line. */
export function describeRed(suite: SuiteRun): string {
  if (suite.buildErrors) return `编译失败：${suite.buildErrors[0] ?? "(没有诊断信息)"}`;
  const crash = suite.run?.crashes[0];
  if (crash) return `${crash.file} 运行崩溃：${crash.stderr.trim().split("\n")[0] ?? ""}`;
  const failed = [...suite.tests].filter(([, ok]) => !ok).map(([name]) => `“${name}”`);
  if (failed.length > 0) return `失败的测试：${failed.join("、")}`;
  const lab = suite.labs.find((l) => l.status !== "passed");
  return lab ? `Lab ${lab.id} ${lab.passed}/${lab.total}：${lab.firstFailure?.message ?? ""}` : "没有运行任何测试";
}
