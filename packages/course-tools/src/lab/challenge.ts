/**
 * The challenge tier (`lab NN --challenge`): the chapter's hardening tests, run on the
 * learner's own code, each theme (test file) in a process of its own, one per core at a
 * time, as a table of themes in the manifest's order with the first failure of each. Apart
 * from the labs on purpose: it never changes a lab's state, and a red challenge is no red lab.
 *
 * Every test has its own time limit, and a hang costs one red line, not the run: a test that
 * waits too long fails by node's own `--test-timeout` and the file goes on; a test that
 * computes for ever (which no in-process limit can interrupt), or a process that stays alive
 * after its last test (a learner's `open()` blocked on a FIFO keeps a thread busy for good),
 * stops the reporter, so the run stalls: the watchdog says where it is, the process is ended,
 * and the file is run again without the tests that already have a result and the one that
 * hung.
 */
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { ChallengeTest, ChapterManifest } from "../course/manifest.js";
import { distPathOf, packageDirOf } from "../core/paths.js";
import { exactNamesPattern } from "../course/lab-names.js";
import { type FirstFailure, summarizeTests, type TestRecord, type TestRun } from "../testing/results.js";
import { buildCourse, type StartedBuild } from "../testing/compiler.js";
import { CHALLENGE_TIMEOUT_SECONDS } from "../testing/limits.js";
import { describeStuck, prepareTests } from "../testing/tests.js";

/** Each challenge test's own time limit, by default. */
export const CHALLENGE_TEST_TIMEOUT_MS = CHALLENGE_TIMEOUT_SECONDS * 1000;

/** One theme's result. */
export interface ThemeResult {
  file: string;
  title: string;
  passed: number;
  /** Tests that reported, plus the ones that hung (skipped ones not counted). */
  total: number;
  /** Tests that skipped themselves on this machine (no FIFOs on Windows, no EACCES for root, …). */
  skipped: number;
  /** Failures in declaration order (a hang is one, with where it was stuck). */
  failures: FirstFailure[];
}

export type ChallengeOutcome = { kind: "build_failed"; diagnostics: string[] } | { kind: "tested"; themes: ThemeResult[] } | { kind: "aborted" };

export interface ChallengeOptions {
  signal?: AbortSignal;
  /** Each test's own time limit, ms; default `CHALLENGE_TEST_TIMEOUT_MS`. */
  testTimeoutMs?: number;
  /** The course is built already: run the compiled tests as they are. */
  prebuilt?: boolean;
  /** A build of the course package already under way (`lab` starts one before anything loads): awaited instead of building again. */
  started?: StartedBuild;
  /** How many themes run at once; default one per core (each is a process of its own, with its own stall watch). */
  concurrency?: number;
  /** The directory locations in messages are relative to (where the command was typed); default the course root. */
  showFrom?: string;
}

/**
 * The names of the top-level `test("…", …)` calls of a test source, in order: a challenge
 * file declares its tests that way (`verify` checks it), so the runner knows every name
 * before it runs any (node's name patterns can select tests, not leave them out: a test runs
 * whenever an ancestor's name matches, and the root always does).
 */
export function topLevelTestNames(source: string): string[] {
  const names: string[] = [];
  for (const match of source.matchAll(/^test\(\s*(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'|`((?:[^`\\$]|\\.)*)`)/gm)) {
    const raw = match[1] ?? match[2] ?? match[3] ?? "";
    names.push(raw.replace(/\\(.)/g, (_whole, char: string) => ({ n: "\n", t: "\t" })[char] ?? char));
  }
  return names;
}

/**
 * Runs `test` to the end, resuming after every stall (see the module comment): its records,
 * and one failure per test that hung (or never ran because its process ended early).
 */
async function runTheme(
  courseRoot: string,
  test: ChallengeTest,
  options: Required<Pick<ChallengeOptions, "testTimeoutMs">> & ChallengeOptions,
): Promise<{ records: TestRecord[]; hangs: FirstFailure[] } | "aborted"> {
  const records: TestRecord[] = [];
  const hangs: FirstFailure[] = [];
  const file = distPathOf(test.file);
  let remaining = topLevelTestNames(await readFile(path.join(courseRoot, ...test.file.split("/")), "utf8"));
  while (remaining.length > 0) {
    const prepared = await prepareTests(courseRoot, [file], {
      namePattern: exactNamesPattern(remaining),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      testTimeoutMs: options.testTimeoutMs,
      // node's own limit fails a waiting test; a silence longer than it means nothing runs on.
      stallMs: options.testTimeoutMs + 2000,
    });
    const run: TestRun = await prepared.run();
    if (options.signal?.aborted) return "aborted";
    // A skipped test reported too: it is done, it only does not count.
    const reported = new Set(run.records.filter((r) => r.path.length === 1).map((r) => r.path[0]!));
    records.push(...run.records.filter((r) => remaining.includes(r.path[0]!)));
    remaining = remaining.filter((name) => !reported.has(name));
    if (remaining.length === 0) break;
    if (run.stalled !== undefined) {
      // The test that hung, or, when nothing says which, the first one without a result.
      const hung = run.stalled.test?.[0] !== undefined && remaining.includes(run.stalled.test[0]) ? run.stalled.test[0] : remaining[0]!;
      const stuck = describeStuck({ seconds: 0, ...run.stalled, test: [hung] }, courseRoot, options.showFrom ?? courseRoot);
      hangs.push({ test: hung, message: `超过 ${options.testTimeoutMs / 1000} 秒没有结束，测试进程被结束${stuck === "" ? "" : `：${stuck}`}`, timedOut: true });
      remaining = remaining.filter((name) => name !== hung);
      continue;
    }
    // The process ended without reporting the rest: a crash, or tests whose names the source does not give as written.
    const crash = run.crashes[0];
    for (const name of remaining)
      hangs.push({
        test: name,
        message: crash === undefined ? "没有运行：测试进程在它之前就结束了" : `没有运行：测试进程崩溃了（${crash.stderr.trim().split("\n")[0] ?? ""}）`,
      });
    break;
  }
  return { records, hangs };
}

/**
 * Builds the course (or awaits `options.started`) and runs every challenge test of
 * `manifest`, up to `concurrency` themes at once, reported in manifest order; never throws
 * for a red test, a hang or a compile error: those are outcomes.
 */
export async function runChallenge(courseRoot: string, manifest: ChapterManifest, options: ChallengeOptions = {}): Promise<ChallengeOutcome> {
  const { signal, started } = options;
  const testTimeoutMs = options.testTimeoutMs ?? CHALLENGE_TEST_TIMEOUT_MS;
  const tsconfigs = options.prebuilt === true ? [] : [...new Set(manifest.challenge.map((t) => `${packageDirOf(t.file)}/tsconfig.json`))];
  // A build under way for a package no challenge test is in would only race with nothing: it is stopped.
  if (started !== undefined && !tsconfigs.includes(started.tsconfig)) await started.stop();
  for (const tsconfig of tsconfigs) {
    const build = await (started?.tsconfig === tsconfig ? started.result : buildCourse(courseRoot, tsconfig, signal));
    if (signal?.aborted) return { kind: "aborted" };
    if (!build.ok) return { kind: "build_failed", diagnostics: build.diagnostics };
  }
  const themes: (ThemeResult | "aborted" | undefined)[] = manifest.challenge.map(() => undefined);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let index = next++; index < manifest.challenge.length && signal?.aborted !== true; index = next++) {
      const test = manifest.challenge[index]!;
      const ran = await runTheme(courseRoot, test, { ...options, testTimeoutMs });
      if (ran === "aborted") {
        themes[index] = "aborted";
        return;
      }
      const summary = summarizeTests(ran.records);
      const failures = [...summary.failures, ...ran.hangs];
      const skipped = ran.records.filter((r) => r.path.length === 1 && (r.skip || r.todo)).length;
      themes[index] = { file: test.file, title: test.title, passed: summary.passed, total: summary.total + ran.hangs.length, skipped, failures };
    }
  };
  const workers = Math.max(1, Math.min(options.concurrency ?? os.availableParallelism(), manifest.challenge.length));
  await Promise.all(Array.from({ length: workers }, worker));
  if (signal?.aborted || themes.includes("aborted")) return { kind: "aborted" };
  return { kind: "tested", themes: themes.filter((theme): theme is ThemeResult => theme !== undefined && theme !== "aborted") };
}
