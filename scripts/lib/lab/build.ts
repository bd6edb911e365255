/**
 * Starting the processes behind `lab` without a shell: the course's own TypeScript compiler
 * (resolved from its `node_modules`, the native binary when there is one) and any child
 * whose output is collected. Only node built-ins and `errors.ts` are imported, so `lab`
 * can start the compiler before it loads anything else.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { CourseError } from "../core/errors.js";

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
  /**
   * Ends the process at once (SIGKILL): with `group`, every process it started too. Safe to
   * call at any time, also after it has exited.
   */
  kill(): void;
}

export interface StartOptions {
  cwd: string;
  /** Aborting it kills the process (see `kill`); `done` still resolves once it has exited. */
  signal?: AbortSignal;
  stdin?: boolean;
  /** Variables to set (or, with `undefined`, remove) on top of the tooling's environment. */
  env?: Record<string, string | undefined>;
  /**
   * Start the process in a process group of its own (POSIX), so that `kill` ends whatever
   * it started as well (a learner's test may spawn children). Ctrl-C in a terminal then no
   * longer reaches it directly: the caller must end it, which `signal` does.
   */
  group?: boolean;
}

/**
 * Starts `command` (never through a shell) and collects its output. Aborting `signal` kills
 * the process; `done` still resolves once it has exited. `done` rejects only when the
 * program could not be started at all.
 */
export function startProcess(command: string, args: readonly string[], options: StartOptions): StartedProcess {
  const env = childEnv();
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  const group = options.group === true && process.platform !== "win32";
  const child = spawn(command, args, {
    cwd: options.cwd,
    env,
    stdio: [options.stdin === true ? "pipe" : "ignore", "pipe", "pipe"],
    windowsHide: true,
    detached: group,
  });
  // A child that exits before reading its stdin must not crash us with EPIPE.
  child.stdin?.on("error", () => {});
  let exited = false;
  const kill = () => {
    if (exited || child.pid === undefined) return;
    try {
      if (group) process.kill(-child.pid, "SIGKILL");
      else child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  };
  const done = new Promise<ProcessResult>((resolve, reject) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => err.push(chunk));
    const abort = () => kill();
    if (options.signal?.aborted === true) abort();
    options.signal?.addEventListener("abort", abort, { once: true });
    child.on("exit", () => {
      // The group may outlive its leader (a grandchild still running): end it with the leader.
      if (group && child.pid !== undefined) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // No process left in the group.
        }
      }
      exited = true;
    });
    child.on("error", (error) => {
      exited = true;
      options.signal?.removeEventListener("abort", abort);
      reject(error);
    });
    child.on("close", (code, signal) => {
      exited = true;
      options.signal?.removeEventListener("abort", abort);
      resolve({ code, signal, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") });
    });
  });
  return { stdin: child.stdin, done, kill };
}

/** Runs `command` to completion (see `startProcess`). */
export function runProcess(command: string, args: readonly string[], options: StartOptions): Promise<ProcessResult> {
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

