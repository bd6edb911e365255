/**
 * Running a program to completion without a shell, with node's own `child_process`: the
 * environment given exactly (nothing is added from ours), optional input on stdin, the
 * output kept as bytes, and an `AbortSignal` that kills the program. Never throws for a
 * non-zero exit; rejects only when the program cannot be started (ENOENT, …).
 *
 * This replaced execa: here it costs less per call and far less to load
 * (`npm run bench -- libraries`, figures in bench/README.md).
 */
import { spawn } from "node:child_process";

export interface ChildResult {
  /** The exit code, or null when a signal ended the program. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
  /** stdout and stderr as they arrived, interleaved (as a terminal would show them), UTF-8. */
  all: string;
}

export interface ChildOptions {
  cwd: string;
  /** The complete environment of the program. */
  env: NodeJS.ProcessEnv;
  /** Written to the program's stdin, which is then closed (no stdin at all when absent). */
  input?: string | Uint8Array;
  /** Aborting kills the program (SIGTERM); the promise still resolves once it has ended. */
  signal?: AbortSignal;
}

/** Runs `file` with `args` to completion; see the module comment. */
export function runChild(file: string, args: readonly string[], options: ChildOptions): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    // A Windows batch file (npm.cmd) can only be started through the command interpreter.
    const shell = process.platform === "win32" && /\.(cmd|bat)$/i.test(file);
    const child = spawn(file, [...args], {
      cwd: options.cwd,
      env: options.env,
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      windowsHide: true,
      shell,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const all: Buffer[] = [];
    child.stdout!.on("data", (chunk: Buffer) => (out.push(chunk), all.push(chunk)));
    child.stderr!.on("data", (chunk: Buffer) => (err.push(chunk), all.push(chunk)));
    const kill = (): void => void child.kill();
    if (options.signal?.aborted === true) kill();
    options.signal?.addEventListener("abort", kill, { once: true });
    if (child.stdin) {
      // A program that exits without reading its input must not crash us with EPIPE.
      child.stdin.on("error", () => {});
      child.stdin.end(options.input);
    }
    child.on("error", (error) => {
      options.signal?.removeEventListener("abort", kill);
      reject(error);
    });
    child.on("close", (code, signal) => {
      options.signal?.removeEventListener("abort", kill);
      resolve({ code, signal, stdout: Buffer.concat(out), stderr: Buffer.concat(err), all: Buffer.concat(all).toString("utf8") });
    });
  });
}
