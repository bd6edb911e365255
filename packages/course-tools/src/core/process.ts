/**
 * The one way the tooling runs a program: git, npm and tar, the compiler, the lab's test
 * processes, the chapter text's replayed command lines. What differs between them is an
 * option, each concern in a function of its own below (execa keeps them in
 * `lib/terminate/`; pi-mono's `core/exec.ts` is the same idea):
 *
 * - the environment: given whole (`childEnv` builds the usual one: ours without what no
 *   child may inherit, plus and minus what the caller names);
 * - input: bytes written to stdin and closed, stdin left open for the caller, or none;
 * - a shell: a command line run through `sh` or `bash` instead of a program (the replay);
 * - a process group of its own (POSIX): ending it ends whatever the program started too,
 *   and the group ends with its leader, so no grandchild outlives the run;
 * - the kill sequence: one signal, and `SIGKILL` after a grace period if it is still there;
 * - a time limit, and an `AbortSignal`: either ends the process by the kill sequence;
 * - output: kept (stdout, stderr, and both interleaved as a terminal shows them), ignored, or
 *   the terminal itself (an editor the learner works in: stdin, stdout and stderr are ours).
 *
 * Never a shell unless asked (a Windows batch file such as `npm.cmd` is the exception: only
 * the command interpreter can start one). `done` never rejects for a non-zero exit, a
 * signal, the time limit or an abort: those are results; it rejects only when the program
 * cannot be started (ENOENT, …).
 *
 * This replaced execa: here it costs less per call and far less to load
 * (`npm run bench -- libraries`, figures in bench/README.md). The tooling's bin and its test
 * runner (`run-tests.mjs`), which run before anything of this is loaded, keep a minimal `spawn` of their own.
 */
import { spawn, type ChildProcess } from "node:child_process";

export interface ProcessOptions {
  cwd: string;
  /** The complete environment of the program; default `childEnv()`. */
  env?: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed. Without it (and without `stdin`) there is no stdin. */
  input?: string | Uint8Array;
  /** Keep stdin open for the caller (`RunningProcess.stdin`). */
  stdin?: boolean;
  /** Run the command line `command` through this shell (`args` must be empty). */
  shell?: "sh" | "bash";
  /**
   * A process group of its own (POSIX; ignored on Windows): the kill sequence reaches every
   * process in it, and when the program itself exits, what is left of its group is killed.
   * Ctrl-C in a terminal no longer reaches it directly: the caller ends it (`signal`, `kill`).
   */
  group?: boolean;
  /** How the process is ended: this signal (default SIGTERM), then SIGKILL after `graceMs` (when given). */
  kill?: { signal?: NodeJS.Signals; graceMs?: number };
  /** Aborting ends the process by the kill sequence; `done` still resolves once it has exited. */
  signal?: AbortSignal;
  /** Ends the process by the kill sequence after this many milliseconds; the result says `timedOut`. */
  timeoutMs?: number;
  /**
   * `capture` (default): stdout and stderr are kept; `ignore`: discarded; `terminal`: the
   * program shares our stdin, stdout and stderr (an editor), and the result's output is empty.
   */
  output?: "capture" | "ignore" | "terminal";
}

export interface ProcessResult {
  /** The exit code, or null when a signal ended the program. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
  /** stdout and stderr as they arrived, interleaved (as a terminal would show them), UTF-8. */
  all: string;
  /** True when the time limit ended the program. */
  timedOut: boolean;
}

/** A program started by `startProcess`. */
export interface RunningProcess {
  /** Its stdin when started with `stdin: true`, else null. */
  readonly stdin: NodeJS.WritableStream | null;
  /** Resolves once the program has exited and its output is complete. */
  readonly done: Promise<ProcessResult>;
  /** Ends it by the kill sequence (its group too, with `group`). Safe at any time, also after it has exited. */
  kill(): void;
}

/** Variables no child of the tooling inherits (see `childEnv`). */
const NEVER_INHERITED = ["NODE_TEST_CONTEXT"];

/**
 * The variables npm sets for the script it runs (`npm_*`, `INIT_CWD`) and `NODE_OPTIONS`: a
 * command started afresh (a replayed chapter command, a step of the version matrix) must not
 * take them for its own.
 */
export const NPM_SCRIPT_VARIABLES: readonly string[] = ["npm_*", "INIT_CWD", "NODE_OPTIONS"];

/**
 * The environment for a child: `base` (default ours) without `NODE_TEST_CONTEXT` and without
 * the variables `without` names (case-insensitively; `npm_*` names a prefix), then `set`
 * applied (a value of `undefined` removes the variable). `NODE_TEST_CONTEXT` is set by node in
 * a process it runs as a test file; a child inheriting it would report to that runner over
 * stdout instead of running as itself (which happens whenever a command runs inside
 * `node --test`, as in the tooling tests).
 */
export function childEnv(
  options: { without?: readonly string[]; set?: Readonly<Record<string, string | undefined>> } = {},
  base: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const patterns = [...NEVER_INHERITED, ...(options.without ?? [])].map((name) => name.toLowerCase());
  const dropped = (key: string): boolean => {
    const lower = key.toLowerCase();
    return patterns.some((pattern) => (pattern.endsWith("*") ? lower.startsWith(pattern.slice(0, -1)) : lower === pattern));
  };
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(base)) if (value !== undefined && !dropped(key)) env[key] = value;
  for (const [key, value] of Object.entries(options.set ?? {})) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

/** The variables that name a child's temporary folder on every platform (`TMPDIR`, `TEMP`, `TMP`), all set to `dir`. */
export function tempFolderEnv(dir: string): Record<"TMPDIR" | "TEMP" | "TMP", string> {
  return { TMPDIR: dir, TEMP: dir, TMP: dir };
}

/** `spawn`'s arguments for `command`: a program, a Windows batch file (through cmd.exe), or a shell command line. */
function spawnPlan(command: string, args: readonly string[], options: ProcessOptions): { file: string; args: string[]; shell: boolean | string } {
  const windows = process.platform === "win32";
  if (options.shell !== undefined) {
    // On Windows node hands the whole line to the shell; elsewhere the shell gets it after -c.
    if (windows) return { file: command, args: [], shell: options.shell === "bash" ? "bash" : true };
    return { file: options.shell === "bash" ? "bash" : "/bin/sh", args: ["-c", command], shell: false };
  }
  // A Windows batch file (npm.cmd) can only be started through the command interpreter.
  return { file: command, args: [...args], shell: windows && /\.(cmd|bat)$/i.test(command) };
}

/** Sends `signal` to `child`, or to its whole group; a process already gone is no error. */
function signalProcess(child: ChildProcess, group: boolean, signal: NodeJS.Signals): void {
  try {
    if (group && child.pid !== undefined) process.kill(-child.pid, signal);
    else child.kill(signal);
  } catch {
    // Already gone.
  }
}

/** Starts `command` (see the module comment) and collects its output as it runs. */
export function startProcess(command: string, args: readonly string[], options: ProcessOptions): RunningProcess {
  const plan = spawnPlan(command, args, options);
  const group = options.group === true && process.platform !== "win32";
  const terminal = options.output === "terminal";
  const capture = options.output === undefined || options.output === "capture";
  const stdinMode = options.input !== undefined || options.stdin === true ? "pipe" : terminal ? "inherit" : "ignore";
  const outMode = terminal ? "inherit" : capture ? "pipe" : "ignore";
  const child = spawn(plan.file, plan.args, {
    cwd: options.cwd,
    env: options.env ?? childEnv(),
    stdio: [stdinMode, outMode, outMode],
    windowsHide: true,
    shell: plan.shell,
    detached: group,
  });
  // A program that exits without reading its input must not crash us with EPIPE.
  child.stdin?.on("error", () => {});
  if (options.input !== undefined) child.stdin?.end(options.input);

  let exited = false;
  let graceTimer: NodeJS.Timeout | undefined;
  const first = options.kill?.signal ?? "SIGTERM";
  const kill = (): void => {
    if (exited || child.pid === undefined) return;
    signalProcess(child, group, first);
    const grace = options.kill?.graceMs;
    if (grace !== undefined && first !== "SIGKILL" && graceTimer === undefined) {
      graceTimer = setTimeout(() => signalProcess(child, group, "SIGKILL"), grace);
      graceTimer.unref();
    }
  };

  const done = new Promise<ProcessResult>((resolve, reject) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const all: Buffer[] = [];
    child.stdout?.on("data", (chunk: Buffer) => (out.push(chunk), all.push(chunk)));
    child.stderr?.on("data", (chunk: Buffer) => (err.push(chunk), all.push(chunk)));
    let timedOut = false;
    const limit =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            kill();
          }, options.timeoutMs);
    const onAbort = (): void => kill();
    if (options.signal?.aborted === true) kill();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const settle = (): void => {
      exited = true;
      clearTimeout(limit);
      clearTimeout(graceTimer);
      options.signal?.removeEventListener("abort", onAbort);
    };
    child.on("exit", () => {
      // The group may outlive its leader (a grandchild still running): it ends with the leader.
      if (group) signalProcess(child, true, "SIGKILL");
      exited = true;
    });
    child.on("error", (error) => {
      settle();
      reject(error);
    });
    child.on("close", (code, signal) => {
      settle();
      resolve({ code, signal, stdout: Buffer.concat(out), stderr: Buffer.concat(err), all: Buffer.concat(all).toString("utf8"), timedOut });
    });
  });
  return { stdin: child.stdin, done, kill };
}

/** Runs `command` to completion (see `startProcess`); rejects only when it cannot be started. */
export function runProcess(command: string, args: readonly string[], options: ProcessOptions): Promise<ProcessResult> {
  return startProcess(command, args, options).done;
}
