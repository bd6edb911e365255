/**
 * The two processes behind `lab`: the incremental TypeScript build of the course package
 * and one `node` test process per focused test file, which reports through
 * `lab-reporter.mjs` into a temporary JSON-lines file.
 *
 * No shell is involved anywhere (no globs, no quoting, the same on Windows): the compiler
 * is resolved from the course's own `node_modules` and started directly, and tests run
 * with `process.execPath`.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { CourseError } from "./errors.js";
import {
  labNamePattern,
  parseReport,
  strayFailures,
  summarizeLabs,
  type FirstFailure,
  type LabResult,
  type TestRecord,
} from "./lab-results.js";
import type { ChapterManifest, LabSpec } from "./manifest.js";
import { PRACTICE_MARKER } from "./paths.js";

/** True when `root` is a practice folder (it has the marker `practice` writes), not the course repo. */
export function isPracticeFolder(root: string): boolean {
  return existsSync(path.join(root, PRACTICE_MARKER));
}

/** The reporter module node loads into each test process. */
export const REPORTER_PATH = path.join(path.dirname(fileURLToPath(import.meta.url)), "lab-reporter.mjs");

/**
 * The package directory (`packages/<name>`) a repo-relative source path belongs to.
 * Throws `CourseError` `MANIFEST_INVALID` for a path outside `packages/<name>/`.
 */
export function packageDirOf(sourcePath: string): string {
  const parts = sourcePath.split("/");
  if (parts.length < 3 || parts[0] !== "packages" || parts[1] === "") {
    throw new CourseError("MANIFEST_INVALID", `测试文件 ${sourcePath} 不在 packages/<包名>/ 之下，无法找到它的编译产物`);
  }
  return `${parts[0]}/${parts[1]}`;
}

/**
 * The compiled file for a repo-relative TypeScript source: `packages/p/test/x.test.ts` →
 * `packages/p/dist/test/x.test.js` (the package's tsconfig has `rootDir: "."`, `outDir: "dist"`).
 */
export function distPathOf(sourcePath: string): string {
  const pkg = packageDirOf(sourcePath);
  const rest = sourcePath.slice(pkg.length + 1).replace(/\.mts$/, ".mjs").replace(/\.cts$/, ".cjs").replace(/\.tsx?$/, ".js");
  return `${pkg}/dist/${rest}`;
}

/** How to start the TypeScript compiler: a program and the arguments before ours. */
export interface Compiler {
  command: string;
  args: string[];
}

/**
 * The compiler of the package at `packageDir` (absolute), as node would resolve
 * `typescript` from there. TypeScript 7 ships a native `tsc` in a platform package; starting
 * it directly skips the node process its JavaScript shim would cost. Falls back to running
 * the package's `bin` script with this node. Throws `BUILD_FAILED` when there is no
 * TypeScript installed (the learner has not run `npm install`).
 */
export function resolveCompiler(packageDir: string): Compiler {
  const require = createRequire(path.join(packageDir, "package.json"));
  let manifestPath: string;
  try {
    manifestPath = require.resolve("typescript/package.json");
  } catch (error) {
    throw new CourseError("BUILD_FAILED", "找不到 TypeScript 编译器：先在课程根目录运行 npm install", { cause: error });
  }
  const tsDir = path.dirname(manifestPath);
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as { version?: string; bin?: string | Record<string, string> };
  const major = Number.parseInt(manifest.version ?? "0", 10);
  if (major >= 7) {
    try {
      const platformPackage = `@typescript/typescript-${process.platform}-${process.arch}/package.json`;
      const platformDir = path.dirname(createRequire(manifestPath).resolve(platformPackage));
      const exe = path.join(platformDir, "lib", process.platform === "win32" ? "tsc.exe" : "tsc");
      if (existsSync(exe)) return { command: exe, args: [] };
    } catch {
      // No platform package where we looked: let the package's own shim find the binary.
    }
  }
  const bin = typeof manifest.bin === "string" ? manifest.bin : manifest.bin?.tsc;
  if (bin === undefined) throw new CourseError("BUILD_FAILED", `${manifestPath} 没有声明 tsc 可执行文件`);
  return { command: process.execPath, args: [path.join(tsDir, bin)] };
}

/**
 * The environment for the build and test processes: ours, minus `NODE_TEST_CONTEXT`. node
 * sets that variable in processes it runs as test files; inherited by our test process it
 * would make node:test report to a parent runner over stdout instead of to our reporter
 * (which happens whenever `lab` itself runs inside `node --test`, as in the tooling tests).
 */
function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  return env;
}

export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface StartedProcess {
  /** The child's stdin when started with `stdin: true`. */
  stdin: NodeJS.WritableStream | null;
  /** Resolves once the process has exited and its output is complete. */
  done: Promise<ProcessResult>;
}

/**
 * Starts `command` (never through a shell) and collects its output. Aborting `signal` kills
 * the process; `done` still resolves once it has exited. `done` rejects only when the
 * program could not be started at all.
 */
export function startProcess(command: string, args: readonly string[], options: { cwd: string; signal?: AbortSignal; stdin?: boolean }): StartedProcess {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: childEnv(),
    stdio: [options.stdin === true ? "pipe" : "ignore", "pipe", "pipe"],
    windowsHide: true,
  });
  // A child that exits before reading its stdin must not crash us with EPIPE.
  child.stdin?.on("error", () => {});
  const done = new Promise<ProcessResult>((resolve, reject) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => err.push(chunk));
    const abort = () => child.kill();
    if (options.signal?.aborted === true) abort();
    options.signal?.addEventListener("abort", abort, { once: true });
    child.on("error", (error) => {
      options.signal?.removeEventListener("abort", abort);
      reject(error);
    });
    child.on("close", (code, signal) => {
      options.signal?.removeEventListener("abort", abort);
      resolve({ code, signal, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") });
    });
  });
  return { stdin: child.stdin, done };
}

/** Runs `command` to completion (see `startProcess`). */
export function runProcess(command: string, args: readonly string[], options: { cwd: string; signal?: AbortSignal }): Promise<ProcessResult> {
  return startProcess(command, args, options).done;
}

export interface BuildResult {
  ok: boolean;
  /** One entry per compiler diagnostic (its first line plus continuation lines). */
  diagnostics: string[];
  /** Everything the compiler printed. */
  output: string;
}

/**
 * Splits `tsc --pretty false` output into diagnostics: a diagnostic starts at a line like
 * `path(12,3): error TS2322: …` or `error TS5083: …`; indented lines continue it.
 */
export function splitDiagnostics(output: string): string[] {
  const diagnostics: string[] = [];
  for (const line of output.split(/\r?\n/)) {
    if (line.trim() === "") continue;
    if (/^\s/.test(line) && diagnostics.length > 0) diagnostics[diagnostics.length - 1] += `\n${line}`;
    else diagnostics.push(line);
  }
  return diagnostics.filter((d) => !/^Found \d+ errors?/.test(d));
}

/**
 * Incrementally compiles the course package whose tsconfig is `tsconfig` (repo-relative),
 * from `courseRoot`, so diagnostics name files relative to the course root. Uses the
 * package's `incremental` tsbuildinfo, so an unchanged tree costs one quick compiler start.
 */
export async function buildCourse(courseRoot: string, tsconfig: string, signal?: AbortSignal): Promise<BuildResult> {
  const compiler = resolveCompiler(path.join(courseRoot, path.dirname(tsconfig)));
  const options: { cwd: string; signal?: AbortSignal } = { cwd: courseRoot };
  if (signal !== undefined) options.signal = signal;
  const result = await runProcess(compiler.command, [...compiler.args, "-p", tsconfig, "--pretty", "false"], options);
  const output = `${result.stdout}${result.stderr}`;
  return { ok: result.code === 0, diagnostics: result.code === 0 ? [] : splitDiagnostics(output), output };
}

/** The course package: every chapter's teaching files and focused tests live in it. */
export const COURSE_PACKAGE = "packages/pi-course";

/** A build already under way, for one tsconfig. */
export interface StartedBuild {
  tsconfig: string;
  result: Promise<BuildResult>;
}

/**
 * Starts building the course package now, before anything else is loaded, so that the
 * compiler runs while the tooling reads the manifest. Undefined when the package has no
 * tsconfig (then `runLab` builds what the manifest names).
 */
export function startCourseBuild(courseRoot: string, signal?: AbortSignal): StartedBuild | undefined {
  const tsconfig = `${COURSE_PACKAGE}/tsconfig.json`;
  if (!existsSync(path.join(courseRoot, tsconfig))) return undefined;
  const result = buildCourse(courseRoot, tsconfig, signal);
  result.catch(() => {}); // handled by whoever awaits it; never an unhandled rejection
  return { tsconfig, result };
}

export interface TestRun {
  records: TestRecord[];
  /** Focused test files (repo-relative) that were run, in order. */
  files: string[];
  /** Files whose process exited abnormally without reporting every test: their stderr. */
  crashes: { file: string; code: number | null; stderr: string }[];
}

/** Test processes started ahead of the build, waiting for the word to run. */
export interface PreparedTests {
  /** Runs the compiled files now (they must exist by then) and collects the results. */
  run(): Promise<TestRun>;
  /** Ends the waiting processes without running anything. */
  cancel(): Promise<void>;
}

/** The launcher that lets a test process start before the file it runs is compiled. */
export const LAUNCHER_PATH = path.join(path.dirname(fileURLToPath(import.meta.url)), "lab-launch.mjs");

/**
 * Starts one node process per compiled test file (repo-relative `.js` paths), each with the
 * lab reporter and, when given, a `--test-name-pattern`, waiting in `lab-launch.mjs`. Node's
 * start-up then overlaps the build; `run()` lets them import and run their file in parallel.
 */
export async function prepareTests(courseRoot: string, files: readonly string[], options: { namePattern?: string; signal?: AbortSignal } = {}): Promise<PreparedTests> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), "pi-lab-"));
  const started = files.map((file, index) => {
    const destination = path.join(scratch, `${index}.jsonl`);
    const args = ["--enable-source-maps", `--test-reporter=${pathToFileURL(REPORTER_PATH).href}`, `--test-reporter-destination=${destination}`];
    if (options.namePattern !== undefined) args.push(`--test-name-pattern=${options.namePattern}`);
    args.push(LAUNCHER_PATH, path.join(courseRoot, file));
    const processOptions: { cwd: string; signal?: AbortSignal; stdin: boolean } = { cwd: courseRoot, stdin: true };
    if (options.signal !== undefined) processOptions.signal = options.signal;
    return { file, destination, process: startProcess(process.execPath, args, processOptions) };
  });
  const cleanup = async () => {
    for (const s of started) s.process.stdin?.end();
    await Promise.allSettled(started.map((s) => s.process.done));
    await rm(scratch, { recursive: true, force: true });
  };
  return {
    async run() {
      try {
        const runs = await Promise.all(
          started.map(async ({ file, destination, process: child }) => {
            if (!existsSync(path.join(courseRoot, file))) {
              child.stdin?.end();
              await child.done;
              const missing: ProcessResult = { code: null, signal: null, stdout: "", stderr: `找不到 ${file}：编译没有产生它，检查对应的 .ts 测试文件是否存在` };
              return { file, result: missing, records: [] as TestRecord[], diagnostics: [] as string[] };
            }
            child.stdin?.end("run\n");
            const result = await child.done;
            const text = await readFile(destination, "utf8").catch(() => "");
            return { file, result, ...parseReport(text) };
          }),
        );
        const crashes: TestRun["crashes"] = [];
        for (const { file, result, records, diagnostics } of runs) {
          const failedTests = records.some((r) => !r.ok && !r.skip && !r.todo);
          if (result.code !== 0 && !failedTests) {
            const stderr = [...diagnostics, result.stderr.trimEnd()].filter((s) => s !== "").join("\n");
            crashes.push({ file, code: result.code, stderr });
          }
        }
        return { records: runs.flatMap((r) => r.records), files: [...files], crashes };
      } finally {
        await cleanup();
      }
    },
    cancel: cleanup,
  };
}

/**
 * Runs the compiled test `files` now and returns every reported test in file order. A file
 * whose process failed without any failing test to show for it (an import error, a crash,
 * an error thrown after the tests ended) is listed in `crashes` with its stderr.
 */
export async function runTests(courseRoot: string, files: readonly string[], options: { namePattern?: string; signal?: AbortSignal } = {}): Promise<TestRun> {
  return (await prepareTests(courseRoot, files, options)).run();
}

/** What `lab` asks for: a whole chapter, or one lab of it. */
export interface LabTarget {
  chapter: string;
  /** `NN.L`; absent for the whole chapter. */
  lab?: string;
}

export type LabOutcome =
  | { kind: "build_failed"; diagnostics: string[] }
  | { kind: "tested"; labs: LabResult[]; strays: FirstFailure[]; crashes: TestRun["crashes"] }
  | { kind: "aborted" };

/**
 * Builds the course and runs the focused tests of `manifest` for `target`: one lab (its
 * tests selected by name pattern) or every lab (one run of each file, grouped by lab id).
 * Never throws for a red lab, a compile error or a crashing test file: those are outcomes.
 * Throws `CourseError` `USAGE` for a lab id the manifest does not have. `started` is a
 * build the caller already began (see `startCourseBuild`); it is used for its tsconfig.
 */
export async function runLab(
  courseRoot: string,
  manifest: ChapterManifest,
  target: LabTarget,
  signal?: AbortSignal,
  started?: StartedBuild,
): Promise<LabOutcome> {
  const selected = selectLabs(manifest, target);
  const tsconfigs = [...new Set(manifest.focusedTests.map((file) => `${packageDirOf(file)}/tsconfig.json`))];
  const namePattern = target.lab !== undefined ? labNamePattern(target.lab) : chapterNamePattern(manifest.id);
  const options: { namePattern: string; signal?: AbortSignal } = { namePattern };
  if (signal !== undefined) options.signal = signal;
  // Start the test processes first: their start-up overlaps the build.
  const tests = await prepareTests(courseRoot, manifest.focusedTests.map(distPathOf), options);
  for (const tsconfig of tsconfigs) {
    const pending = started?.tsconfig === tsconfig ? started.result : buildCourse(courseRoot, tsconfig, signal);
    const build = await pending.catch(async (error: unknown) => {
      await tests.cancel();
      throw error;
    });
    if (signal?.aborted || !build.ok) {
      await tests.cancel();
      return signal?.aborted ? { kind: "aborted" } : { kind: "build_failed", diagnostics: build.diagnostics };
    }
  }
  const run = await tests.run();
  if (signal?.aborted) return { kind: "aborted" };
  return {
    kind: "tested",
    labs: summarizeLabs(selected, manifest.labs, run.records),
    strays: strayFailures(run.records),
    crashes: run.crashes,
  };
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

/** The name pattern selecting every lab test of chapter `id` (`^Lab 12\.[0-9]`). */
export function chapterNamePattern(id: string): string {
  return `^Lab ${id}\\.[0-9]`;
}
