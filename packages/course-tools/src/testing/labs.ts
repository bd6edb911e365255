/**
 * Running a chapter's labs: build the course package (`compiler.ts`), then the focused
 * tests in test processes (`tests.ts`): the lab asked for in processes of its own, under
 * its own time limit; the labs before it together, and apart only when their shared run did
 * not end clean (see `runLab`); and lab results from what they reported (`results.ts`). What `lab`, `reset` and the
 * tests of a practice folder share; the `lab` command's own output is `lab/format.ts`.
 */
import { CourseError } from "../core/errors.js";
import type { LabTarget } from "../core/cli.js";
import { distPathOf, packageDirOf } from "../core/paths.js";
import type { ChapterManifest, LabSpec } from "../course/manifest.js";
import { labsNamePattern } from "../course/lab-names.js";
import { buildCourse, type StartedBuild } from "./compiler.js";
import { strayFailures, summarizeLabs, type FirstFailure, type LabResult, type TestRun, type TimedOut } from "./results.js";
import { withTestRules } from "./test-rules.js";
import { describeStuck, prepareTests, type TestOptions } from "./tests.js";
import path from "node:path";

export type { LabTarget };

export type LabOutcome =
  | { kind: "build_failed"; diagnostics: string[] }
  | {
      kind: "tested";
      /** The labs asked for, in manifest order. */
      labs: LabResult[];
      /** For one lab: the chapter's labs before it (run too, so that a regression shows). */
      earlier: LabResult[];
      strays: FirstFailure[];
      crashes: TestRun["crashes"];
      output: TestRun["output"];
      /** Set when the time limit ended the run of a lab (each lab runs apart); the labs it cut short are failed. */
      timedOut?: { seconds: number; labs: string[] };
    }
  | { kind: "aborted" };

export interface RunLabOptions {
  signal?: AbortSignal;
  /** A build the caller already began (see `startCourseBuild`); it is used for its tsconfig. */
  started?: StartedBuild;
  /** Time limit of the test run in milliseconds (see `TestOptions.timeoutMs`). */
  timeoutMs?: number;
  /** The directory locations in messages are relative to (where the command was typed); default the course root. */
  showFrom?: string;
}

/**
 * Builds the course and runs the focused tests of `manifest` for `target`: one lab (its
 * tests, and in a run of their own those of the chapter's earlier labs, selected by name
 * pattern) or every lab; results are grouped by lab id. Never throws for a red lab, a compile error, a
 * crashing test file or a run that hits its time limit: those are outcomes. Throws
 * `CourseError` `USAGE` for a lab id the manifest does not have.
 */
export async function runLab(courseRoot: string, manifest: ChapterManifest, target: LabTarget, options: RunLabOptions = {}): Promise<LabOutcome> {
  const { signal, started } = options;
  const selected = selectLabs(manifest, target);
  const upTo = target.lab === undefined ? manifest.labs : manifest.labs.slice(0, manifest.labs.findIndex((lab) => lab.id === target.lab) + 1);
  const before = target.lab === undefined ? [] : upTo.slice(0, -1);
  const tsconfigs = [...new Set(manifest.focusedTests.map((file) => `${packageDirOf(file)}/tsconfig.json`))];
  const files = manifest.focusedTests.map(distPathOf);
  const prepare = (labs: readonly LabSpec[]) => {
    const testOptions: TestOptions = { namePattern: labsNamePattern(labs.map((lab) => lab.id)), sampleOnTimeout: true };
    if (files.length === 1) testOptions.expectedTests = labs.reduce((sum, lab) => sum + lab.tests, 0);
    if (signal !== undefined) testOptions.signal = signal;
    if (options.timeoutMs !== undefined) testOptions.timeoutMs = options.timeoutMs;
    return prepareTests(courseRoot, files, testOptions);
  };
  // One lab asked for runs apart from the labs before it, under its own time limit, so that
  // nothing an earlier lab does can change its result; the labs before it (or every lab, for
  // the whole chapter) share one set of processes. Processes start before the build, so
  // that their start-up overlaps it.
  const groups = target.lab === undefined ? [upTo] : [before, selected].filter((labs) => labs.length > 0);
  const prepared = await Promise.all(groups.map(async (labs) => ({ labs, tests: await prepare(labs) })));
  const cancelAll = () => Promise.all(prepared.map(({ tests }) => tests.cancel()));
  for (const tsconfig of tsconfigs) {
    const pending = started?.tsconfig === tsconfig ? started.result : buildCourse(courseRoot, tsconfig, signal);
    const build = await pending.catch(async (error: unknown) => {
      await cancelAll();
      throw error;
    });
    if (signal?.aborted || !build.ok) {
      await cancelAll();
      return signal?.aborted ? { kind: "aborted" } : { kind: "build_failed", diagnostics: build.diagnostics };
    }
  }
  const shared = await Promise.all(prepared.map(async ({ labs, tests }) => ({ labs, run: await tests.run() })));
  if (signal?.aborted) return { kind: "aborted" };
  // Labs that shared a run which did not end clean run again, each in processes of its own
  // under its own time limit: what one lab's code did (a hang, a leaked timer, a crash) is
  // then pinned on that lab alone, exactly as if each had always run apart.
  const runs = (
    await Promise.all(
      shared.map(({ labs, run }) =>
        labs.length === 1 || cleanRun(run, labs)
          ? [{ labs, run }]
          : Promise.all(labs.map(async (lab) => ({ labs: [lab], run: await (await prepare([lab])).run() }))),
      ),
    )
  ).flat();
  if (signal?.aborted) return { kind: "aborted" };
  const records = runs.flatMap(({ run }) => run.records);
  const timedOut = new Map(runs.flatMap(({ labs, run }) => (run.timedOut === undefined ? [] : labs.map((lab) => [lab.id, run.timedOut!] as const))));
  const showFrom = options.showFrom ?? courseRoot;
  const sources = manifest.focusedTests.map((file) => path.join(courseRoot, ...file.split("/")));
  const cutShort = (labs: LabResult[]) =>
    labs.map((lab) => withRules(timedOut.has(lab.id) ? markTimedOut(lab, timedOut.get(lab.id)!, courseRoot, showFrom) : lab, sources));
  const outcome: LabOutcome = {
    kind: "tested",
    labs: cutShort(summarizeLabs(selected, manifest.labs, records)),
    earlier: cutShort(summarizeLabs(before, manifest.labs, records)),
    strays: strayFailures(records),
    // Every run loads the same file: a file that cannot load crashes each of them alike.
    crashes: runs
      .flatMap(({ run }) => run.crashes)
      .filter((crash, index, all) => all.findIndex((c) => c.file === crash.file && c.stderr === crash.stderr) === index),
    output: runs.flatMap(({ run }) => run.output),
  };
  const first = [...timedOut.values()][0];
  if (first !== undefined) outcome.timedOut = { seconds: first.seconds, labs: [...timedOut.keys()] };
  return outcome;
}

/**
 * `lab` with each failure that names no rule of its own given the rules its test checks
 * (`test-rules.ts`): a lab that fails because the code threw, rejected or hung outside every
 * check still points at the text's sections.
 */
function withRules(lab: LabResult, testSources: readonly string[]): LabResult {
  if (lab.firstFailure === undefined) return lab;
  const failures = lab.failures.map((failure) => withTestRules(failure, testSources));
  const first = lab.failures.indexOf(lab.firstFailure);
  return { ...lab, failures, firstFailure: first < 0 ? withTestRules(lab.firstFailure, testSources) : failures[first]! };
}

/**
 * True when a run shared by `labs` ended clean: every test the labs have reported and
 * passed, within the time limit, without a crash or a stall. Anything else is run again
 * lab by lab (see `runLab`).
 */
function cleanRun(run: TestRun, labs: readonly LabSpec[]): boolean {
  if (run.timedOut !== undefined || run.stalled !== undefined || run.crashes.length > 0) return false;
  if (run.records.some((record) => !record.ok && !record.skip && !record.todo)) return false;
  return summarizeLabs(labs, labs, run.records).every((lab) => lab.status === "passed");
}

/**
 * A lab of a run the time limit ended: unless every one of its tests reported, it failed,
 * and its first failure says, once, that the limit ended it and where the run was stuck.
 */
function markTimedOut(lab: LabResult, timedOut: TimedOut, courseRoot: string, showFrom: string): LabResult {
  if (lab.status === "passed" || lab.reported >= lab.expected) return lab;
  const missing = lab.expected - lab.reported;
  const stuck = describeStuck(timedOut, courseRoot, showFrom);
  const failure: FirstFailure = {
    test: timedOut.test?.join(" › ") ?? `Lab ${lab.id}`,
    message: `超过时间上限 ${timedOut.seconds} 秒，测试进程已被结束${stuck === "" ? "" : `：${stuck}`}；还有 ${missing} 项测试没有跑完。常见原因：死循环（for (;;)、while (true)），或一个永远不结束的 Promise`,
    timedOut: true,
  };
  // What did report keeps its failures; "no test found" only meant that the limit came first.
  const reportedFailures = lab.reported === 0 ? [] : lab.failures;
  return { ...lab, status: "failed", firstFailure: failure, failures: [failure, ...reportedFailures] };
}

/**
 * The labs `target` names, in manifest order. Throws `CourseError` `USAGE` (listing the
 * chapter's labs) for an unknown lab, or for a chapter without labs.
 */
export function selectLabs(manifest: ChapterManifest, target: LabTarget): LabSpec[] {
  const known = manifest.labs.map((lab) => lab.id);
  if (known.length === 0) throw new CourseError("USAGE", `第 ${manifest.id} 章没有 Lab`);
  if (target.lab === undefined) return [...manifest.labs];
  const lab = manifest.labs.find((l) => l.id === target.lab);
  if (lab === undefined) throw new CourseError("USAGE", `没有 Lab ${target.lab}；第 ${manifest.id} 章的 Lab：${known.join(", ")}`);
  return [lab];
}
