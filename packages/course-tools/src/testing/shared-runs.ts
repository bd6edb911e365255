/**
 * Many test files in few processes, decided as a process per file would decide them.
 *
 * A process per file pays node's start-up and every shared module's load once per file:
 * for the 22 chapter test files of the course that is about twice the CPU of the tests
 * themselves. Here the files are dealt into a few processes (`runTests` with `oneProcess`),
 * and a process is trusted only when everything in it passed: a process with a failing test,
 * a crash or no report at all has each of its files run again in a process of its own, and
 * those runs are the result. So a file never fails because another one shared its process;
 * what a shared process cannot show is only a file that passes beside the others and would
 * fail alone (a test relying on state an earlier file left), which the per-file runs of
 * `npm test` and of `lab` still show.
 */
import { statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestRun } from "./results.js";
import { runTests, type TestOptions } from "./tests.js";

/** What a shared run did beside its results: how many processes it used, and which files it ran again alone. */
export interface SharedRun extends TestRun {
  processes: number;
  /** Files (as given) whose shared process was not green, so each ran again in a process of its own. */
  rerunAlone: string[];
}

/**
 * `files` dealt into at most `count` groups of about equal size in bytes (largest file first,
 * each to the lightest group so far), each group keeping the files' given order. Pure but for
 * `sizeOf`.
 */
export function dealFiles(files: readonly string[], count: number, sizeOf: (file: string) => number): string[][] {
  const groups: { files: string[]; bytes: number }[] = Array.from({ length: Math.max(1, Math.min(count, files.length)) }, () => ({ files: [], bytes: 0 }));
  const sized = files.map((file, order) => ({ file, order, bytes: sizeOf(file) }));
  for (const entry of [...sized].sort((a, b) => b.bytes - a.bytes || a.order - b.order)) {
    const lightest = groups.reduce((best, group) => (group.bytes < best.bytes ? group : best));
    lightest.files.push(entry.file);
    lightest.bytes += entry.bytes;
  }
  const order = new Map(files.map((file, index) => [file, index]));
  return groups.map((group) => group.files.sort((a, b) => order.get(a)! - order.get(b)!)).filter((group) => group.length > 0);
}

/** True when a run shows nothing wrong: every test reported passed (or skipped), no crash, no time limit reached. */
function allGreen(run: TestRun): boolean {
  return run.crashes.length === 0 && run.timedOut === undefined && run.stalled === undefined && run.records.every((r) => r.ok || r.skip || r.todo);
}

/**
 * Runs the compiled test `files` (repo-relative) of `courseRoot` in at most `processes` node
 * processes (default: one per core), then runs each file of a process that was not green
 * again alone (see the module comment). The records are every file's, from the run that
 * decided it; `files` is as given. Options apply to every run (a time limit to each).
 * Once `signal` is aborted no file is run again: the shared runs are returned as they ended.
 */
export async function runTestsShared(
  courseRoot: string,
  files: readonly string[],
  options: Pick<TestOptions, "signal" | "timeoutMs" | "namePattern"> & { processes?: number } = {},
): Promise<SharedRun> {
  const { processes = os.availableParallelism(), ...testOptions } = options;
  const groups = dealFiles(files, processes, (file) => {
    try {
      return statSync(path.join(courseRoot, file)).size;
    } catch {
      return 0; // a missing file is reported by its run
    }
  });
  const shared = await Promise.all(groups.map((group) => runTests(courseRoot, group, { ...testOptions, oneProcess: true })));
  const decided: TestRun[] = [];
  const rerun: string[] = [];
  // Aborted, the shared runs (red or cut short) are the answer: nothing more is started.
  const aborted = testOptions.signal?.aborted === true;
  shared.forEach((run, index) => {
    if (aborted || (allGreen(run) && run.records.length > 0)) decided.push(run);
    else rerun.push(...groups[index]!);
  });
  if (rerun.length > 0) decided.push(await runTests(courseRoot, rerun, testOptions));
  const order = new Map(files.map((file, index) => [file, index]));
  const byFile = (file: string) => order.get(file) ?? files.length;
  return {
    records: decided.flatMap((run) => run.records),
    files: [...files],
    crashes: decided.flatMap((run) => run.crashes).sort((a, b) => byFile(a.file) - byFile(b.file)),
    output: decided.flatMap((run) => run.output),
    ...firstOf(decided, "timedOut"),
    ...firstOf(decided, "stalled"),
    ...(decided.some((run) => run.lingered === true) ? { lingered: true } : {}),
    processes: groups.length,
    rerunAlone: rerun.sort((a, b) => byFile(a) - byFile(b)),
  };
}

/** `{ [key]: value }` of the first run that has one, or nothing. */
function firstOf<K extends "timedOut" | "stalled">(runs: readonly TestRun[], key: K): Partial<Pick<TestRun, K>> {
  const found = runs.find((run) => run[key] !== undefined);
  return found === undefined ? {} : ({ [key]: found[key] } as Partial<Pick<TestRun, K>>);
}
