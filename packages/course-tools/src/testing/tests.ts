/**
 * Test processes: one `node` process per compiled test file, started ahead of the build
 * and waiting in `test-launcher.mjs`, reporting through `reporter.mjs` into a temporary
 * JSON-lines file, each in a process group of its own under the run's time limit, with a
 * watchdog that says where a stuck process was (`watchdog.mjs`). What a run reported is
 * `results.ts`'s vocabulary (`TestRun`); lab runs on top of this are `labs.ts`.
 *
 * No shell is involved anywhere (no globs, no quoting, the same on Windows): tests run with
 * `process.execPath`, through the tooling's one process runner (`core/process.ts`).
 */
import { getMaxListeners, setMaxListeners } from "node:events";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import os from "node:os";
import { SourceMap, type SourceMapPayload } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { shownPath } from "../core/paths.js";
import { childEnv, startProcess, tempFolderEnv, type ProcessOptions } from "../core/process.js";
import { makeScratchDir, removeScratchDir } from "../core/scratch.js";
import { parseReport, type StackFrame, type TestRecord, type TestRun, type TimedOut } from "./results.js";

/** The reporter module node loads into each test process. */
export const REPORTER_PATH = path.join(path.dirname(fileURLToPath(import.meta.url)), "reporter.mjs");

/** Test processes started ahead of the build, waiting for the word to run. */
export interface PreparedTests {
  /** Runs the compiled files now (they must exist by then) and collects the results. */
  run(): Promise<TestRun>;
  /** Ends the waiting processes without running anything. */
  cancel(): Promise<void>;
}

export interface TestOptions {
  namePattern?: string;
  /** Aborting ends the test processes (and whatever they started) at once. */
  signal?: AbortSignal;
  /**
   * Time limit of the run in milliseconds, counted from `run()`: when it passes, the test
   * processes are ended and the run reports `timedOut` (a learner's `for (;;) {}` never
   * hangs `lab`). No limit when absent.
   */
  timeoutMs?: number;
  /**
   * How many top-level tests the run selects (one test file only). Once that many have
   * reported, a test process that has not ended within `LINGER_MS` is ended and the run
   * reports `lingered`: every result is in, and a timer or handle the code left open must
   * not keep the run waiting for its time limit.
   */
  expectedTests?: number;
  /** With `timeoutMs`: look where a process is just before the limit (see `watchdog.mjs`), for `TimedOut`. */
  sampleOnTimeout?: boolean;
  /** Each test's own time limit (node's `--test-timeout`): a test waiting longer fails, and the file goes on. */
  testTimeoutMs?: number;
  /**
   * A run whose reporter has written nothing for this long has stalled (a test computing
   * for ever, which `--test-timeout` cannot interrupt, or a process kept alive after its last
   * test): the watchdog is asked where it is, the process is ended, and the run reports
   * `stalled` (one test file only).
   */
  stallMs?: number;
  /**
   * Every file in one process, imported in the given order into one node:test run (each record
   * keeps the file that declares its test), instead of a process per file. `expectedTests` and
   * `stallMs` then count that one process; a crash is reported against the first file.
   */
  oneProcess?: boolean;
}

/**
 * When, within a run's time limit, the watchdog looks where a stuck process is: late enough
 * that a slow machine's slow test is not taken for a stuck one, early enough that a loaded
 * machine still lets the watchdog write its sample before the limit ends the process.
 */
function sampleTime(timeoutMs: number): number {
  return timeoutMs <= 2500 ? timeoutMs * 0.6 : timeoutMs - 1000;
}

/** How long a test process may keep running after its last expected test reported. */
export const LINGER_MS = 500;
/** How often the results of a run with `expectedTests` or `stallMs` are looked at. */
const RESULTS_POLL_MS = 50;
/** How long a stalled run's watchdog has to write where it is before the process is ended. */
const STALL_SAMPLE_WAIT_MS = 1500;

/** How many top-level tests (not skipped) the reporter's JSON lines `text` hold. */
function reportedTopLevel(text: string): number {
  return parseReport(text).records.filter((r) => r.path.length === 1 && !r.skip && !r.todo).length;
}

/** The launcher that lets a test process start before the file it runs is compiled. */
export const LAUNCHER_PATH = path.join(path.dirname(fileURLToPath(import.meta.url)), "test-launcher.mjs");

/** Prefix of a lab run's temporary folder in the system temp folder; the creating pid follows. */
export const LAB_SCRATCH_PREFIX = "pi-lab-";

/**
 * The temporary folder of one lab run (the reporter's result files, the test processes' own
 * temp folder): a scratch folder like every other (`scratch.ts`), so a run removes it however
 * it ends, and one killed outright leaves it to the next command's `sweepStaleScratch`.
 */
export function makeLabScratch(parent = os.tmpdir()): Promise<string> {
  return makeScratchDir(parent, `${LAB_SCRATCH_PREFIX}${process.pid}-`);
}

/**
 * Starts one node process per compiled test file (repo-relative `.js` paths; or one for them all, see `oneProcess`), each with the
 * lab reporter and, when given, a `--test-name-pattern`, waiting in `test-launcher.mjs`. Node's
 * start-up then overlaps the build; `run()` lets them import and run their file in parallel.
 *
 * Each process runs in a process group of its own, with its temporary folder (`TMPDIR`,
 * `TEMP`, `TMP`) inside the run's scratch folder: whatever ends the run (the time limit,
 * Ctrl-C, an abort), ending the group and removing the scratch folder leaves neither a
 * process nor a file of the learner's tests behind.
 */
export async function prepareTests(courseRoot: string, files: readonly string[], options: TestOptions = {}): Promise<PreparedTests> {
  const scratch = await makeLabScratch();
  // One abort listener per test process on the caller's signal: a run of many files (every
  // chapter's, say) is not a leak, so Node's warning at eleven listeners would only be noise.
  if (options.signal !== undefined) setMaxListeners(Math.max(getMaxListeners(options.signal), files.length + 10), options.signal);
  const tmp = path.join(scratch, "tmp");
  await mkdir(tmp);
  const groups = options.oneProcess === true ? [files] : files.map((file) => [file]);
  const started = groups.map((group, index) => {
    const file = group[0]!;
    const destination = path.join(scratch, `${index}.jsonl`);
    const args = ["--enable-source-maps", `--test-reporter=${pathToFileURL(REPORTER_PATH).href}`, `--test-reporter-destination=${destination}`];
    if (options.namePattern !== undefined) args.push(`--test-name-pattern=${options.namePattern}`);
    if (options.testTimeoutMs !== undefined) args.push(`--test-timeout=${Math.round(options.testTimeoutMs)}`);
    args.push(LAUNCHER_PATH, ...group.map((member) => path.join(courseRoot, member)));
    // Killed at once (SIGKILL), with whatever the learner's tests started: a time limit is no time for a grace period.
    const processOptions: ProcessOptions = {
      cwd: courseRoot,
      stdin: true,
      group: true,
      kill: { signal: "SIGKILL" },
      env: childEnv({ set: tempFolderEnv(tmp) }),
    };
    if (options.signal !== undefined) processOptions.signal = options.signal;
    return { file, group, destination, process: startProcess(process.execPath, args, processOptions) };
  });
  const cleanup = async () => {
    for (const s of started) s.process.stdin?.end();
    await Promise.allSettled(started.map((s) => s.process.done));
    await removeScratchDir(scratch);
  };
  return {
    async run() {
      const runStarted = Date.now();
      let timedOut: TestRun["timedOut"];
      let lingered = false;
      const stallPolls: NodeJS.Timeout[] = [];
      let timer: NodeJS.Timeout | undefined;
      let poll: NodeJS.Timeout | undefined;
      if (options.timeoutMs !== undefined) {
        const ms = options.timeoutMs;
        timer = setTimeout(() => {
          timedOut = { seconds: ms / 1000 };
          for (const s of started) s.process.kill();
        }, ms);
      }
      let stalled = false;
      const stallMs = options.stallMs;
      if (stallMs !== undefined && started.length === 1) {
        const [only] = started;
        let lastSize = -1;
        let lastChange = Date.now();
        let asked = false;
        const stallPoll: NodeJS.Timeout = setInterval(() => {
          let size = 0;
          try {
            size = statSync(only!.destination).size;
          } catch {
            // nothing written yet
          }
          if (size !== lastSize) {
            lastSize = size;
            lastChange = Date.now();
            return;
          }
          if (Date.now() - lastChange < stallMs || timedOut !== undefined) return;
          if (!asked) {
            // Ask the watchdog where the process is, give it a moment to answer, then end it.
            asked = true;
            writeFileSync(path.join(scratch, `0.trigger`), "");
            lastChange = Date.now() - stallMs + STALL_SAMPLE_WAIT_MS;
            return;
          }
          stalled = true;
          clearInterval(stallPoll);
          only!.process.kill();
        }, RESULTS_POLL_MS);
        stallPolls.push(stallPoll);
      }
      const expected = options.expectedTests;
      if (expected !== undefined && started.length === 1) {
        const [only] = started;
        let allInSince: number | undefined;
        poll = setInterval(() => {
          void readFile(only!.destination, "utf8").then(
            (text) => {
              if (reportedTopLevel(text) < expected) return;
              allInSince ??= Date.now();
              if (Date.now() - allInSince < LINGER_MS || timedOut !== undefined) return;
              lingered = true;
              clearInterval(poll);
              only!.process.kill();
            },
            () => undefined, // not written yet
          );
        }, RESULTS_POLL_MS);
      }
      try {
        const watch = (options.sampleOnTimeout === true && options.timeoutMs !== undefined) || options.stallMs !== undefined;
        const runs = await Promise.all(
          started.map(async ({ file, group, destination, process: child }, index) => {
            const absent = group.find((member) => !existsSync(path.join(courseRoot, member)));
            if (absent !== undefined) {
              child.stdin?.end();
              await child.done;
              const missing = { code: null, stdout: "", stderr: `找不到 ${absent}：编译没有产生它，检查对应的 .ts 测试文件是否存在` };
              return { file, result: missing, records: [] as TestRecord[], diagnostics: [] as string[], started: [] as string[], sample: undefined };
            }
            const sampleFile = path.join(scratch, `${index}.sample.json`);
            const sampling = watch
              ? ` ${JSON.stringify({
                  // A time on the clock, counted from the start of the run like the limit itself (not from the watchdog's own start).
                  ...(options.sampleOnTimeout === true && options.timeoutMs !== undefined ? { sampleBy: runStarted + sampleTime(options.timeoutMs) } : {}),
                  ...(options.stallMs !== undefined ? { triggerFile: path.join(scratch, `${index}.trigger`) } : {}),
                  sampleFile,
                })}`
              : "";
            child.stdin?.end(`run${sampling}\n`);
            const done = await child.done;
            const result = { code: done.code, stdout: done.stdout.toString("utf8"), stderr: done.stderr.toString("utf8") };
            const text = await readFile(destination, "utf8").catch(() => "");
            const sample = watch && (timedOut !== undefined || stalled) ? await readSample(sampleFile) : undefined;
            return { file, result, ...parseReport(text), sample };
          }),
        );
        const crashes: TestRun["crashes"] = [];
        for (const { file, result, records, diagnostics } of runs) {
          const failedTests = records.some((r) => !r.ok && !r.skip && !r.todo);
          if (result.code !== 0 && !failedTests && timedOut === undefined && !lingered && !stalled) {
            const stderr = [...diagnostics, result.stderr.trimEnd()].filter((s) => s !== "").join("\n");
            crashes.push({ file, code: result.code, stderr });
          }
        }
        const run: TestRun = {
          records: runs.flatMap((r) => r.records),
          files: [...files],
          crashes,
          output: runs.map(({ file, result }) => ({ file, stdout: result.stdout, stderr: result.stderr })),
        };
        if (timedOut !== undefined) run.timedOut = stuckAt(timedOut, runs, courseRoot);
        if (lingered) run.lingered = true;
        if (stalled) {
          const { seconds: _seconds, ...where } = stuckAt({ seconds: 0 }, runs, courseRoot);
          run.stalled = where;
        }
        return run;
      } finally {
        clearTimeout(timer);
        clearInterval(poll);
        for (const stallPoll of stallPolls) clearInterval(stallPoll);
        await cleanup();
      }
    },
    cancel: cleanup,
  };
}

interface RawSample {
  test: string[] | null;
  frames: { functionName: string; url: string; line: number; column: number }[];
}

async function readSample(file: string): Promise<RawSample | undefined> {
  try {
    return JSON.parse(await readFile(file, "utf8")) as RawSample;
  } catch {
    return undefined; // the watchdog found no JavaScript running, or could not start
  }
}

/**
 * `timedOut` with where the run was stuck: the watchdog's test and frames when it caught the
 * code computing; otherwise the last outermost test that started and did not report.
 */
function stuckAt(
  timedOut: TimedOut,
  runs: readonly { records: TestRecord[]; started: string[]; sample: RawSample | undefined }[],
  courseRoot: string,
): TimedOut {
  for (const { records, started, sample } of runs) {
    if (sample !== undefined) {
      const frames = sample.frames.map(mapFrame);
      const test = sample.test ?? testAround(frames);
      return { ...timedOut, ...(test === undefined ? {} : { test }), frames: frames.filter((frame) => inCourse(frame, courseRoot)).length > 0 ? frames : [] };
    }
    const finished = new Set(records.filter((r) => r.path.length === 1).map((r) => r.path[0]));
    const running = started.filter((name) => !finished.has(name)).at(-1);
    if (running !== undefined) return { ...timedOut, test: [running] };
  }
  return timedOut;
}

/**
 * The lab test a stuck stack is in, from its outermost frame in a test file: lab tests are
 * top-level `test("Lab …", …)` calls, so the last such call at or above that line names it.
 * (An async test resumed after an `await` has no frame of node:test left to ask.)
 */
function testAround(frames: readonly StackFrame[]): string[] | undefined {
  const frame = frames.filter((f) => /\.test\.[cm]?ts$/.test(f.file)).at(-1);
  if (frame === undefined) return undefined;
  let lines: string[];
  try {
    lines = readFileSync(frame.file, "utf8").split("\n").slice(0, frame.line);
  } catch {
    return undefined;
  }
  for (const line of lines.reverse()) {
    const name = /^test\(\s*(["'`])(.*?)\1/.exec(line)?.[2];
    if (name !== undefined) return [name];
  }
  return undefined;
}

function inCourse(frame: StackFrame, courseRoot: string): boolean {
  const relative = path.relative(courseRoot, frame.file);
  return path.isAbsolute(frame.file) && !relative.startsWith("..") && !relative.split(path.sep).includes("node_modules");
}

/** An inspector frame (`file:` URL of compiled JavaScript, 0-based position) mapped through its source map when there is one. */
function mapFrame(frame: RawSample["frames"][number]): StackFrame {
  const base = { functionName: frame.functionName, file: frame.url, line: frame.line + 1, column: frame.column + 1 };
  if (!frame.url.startsWith("file:")) return base;
  const file = fileURLToPath(frame.url);
  base.file = file;
  try {
    const map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, "utf8")) as SourceMapPayload);
    const entry = map.findEntry(frame.line, frame.column) as { originalSource?: string; originalLine?: number; originalColumn?: number };
    if (entry.originalSource === undefined || entry.originalLine === undefined) return base;
    const source = entry.originalSource.startsWith("file:") ? fileURLToPath(entry.originalSource) : path.resolve(path.dirname(file), entry.originalSource);
    return { functionName: frame.functionName, file: source, line: entry.originalLine + 1, column: (entry.originalColumn ?? 0) + 1 };
  } catch {
    return base; // no source map: the compiled position is still a position
  }
}

/**
 * Runs the compiled test `files` now and returns every reported test in file order. A file
 * whose process failed without any failing test to show for it (an import error, a crash,
 * an error thrown after the tests ended) is listed in `crashes` with its stderr.
 */
export async function runTests(courseRoot: string, files: readonly string[], options: TestOptions = {}): Promise<TestRun> {
  return (await prepareTests(courseRoot, files, options)).run();
}

/**
 * Where a stuck run was, for a message: `“Lab 12.3 · …” 里，正在执行 renderTemplate（packages/…/resources.ts:812:3）`,
 * the location relative to `showFrom` (default the course root: the directory the command was typed in, for `lab`).
 */
export function describeStuck(timedOut: TimedOut, courseRoot: string, showFrom: string = courseRoot): string {
  const test = timedOut.test === undefined ? "" : `测试 “${timedOut.test.join(" › ")}”`;
  const frame = timedOut.frames?.find((f) => {
    const relative = path.relative(courseRoot, f.file);
    return path.isAbsolute(f.file) && !relative.startsWith("..") && !relative.split(path.sep).includes("node_modules");
  });
  if (frame === undefined) {
    if (test === "") return "";
    return timedOut.frames === undefined ? `${test}在等待一个一直没有结束的 Promise（或计时器）` : `${test}正在运行`;
  }
  const where = `${shownPath(frame.file, showFrom)}:${frame.line}:${frame.column}`;
  const fn = frame.functionName === "" ? "" : ` ${frame.functionName}`;
  return `${test === "" ? "" : `${test}里，`}正在执行${fn}（${where}）`;
}
