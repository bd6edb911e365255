/**
 * Ctrl-C and friends for a course command: SIGINT, SIGTERM and SIGHUP become an abort the
 * command's work listens to, so that it ends its child processes and removes its temporary
 * folders on the normal path (awaiting each), and the command then ends by the same signal
 * (as a program killed by it would: the shell and npm see "interrupted", and npm prints no
 * error block of its own). A second signal while the command is still cleaning up ends it
 * at once, after a last synchronous sweep of its registered temporary folders.
 *
 * The npm scripts start every command with `exec` (see `packages/course-tools/bin/pi-course.mjs`), so a signal
 * sent to the npm process reaches the command too, not only one sent to the whole process
 * group (Ctrl-C in a terminal).
 */
import { CourseError, formatError } from "./errors.js";
import { exitCodeFor } from "./exit-status.js";
import { removeAllScratchSync } from "./scratch.js";
import type { TermStream } from "./term.js";

const SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

/** How soon a repeat of the first signal counts as the same one, forwarded by npm (see the handler). */
const SAME_KEYPRESS_MS = 300;

export interface Interruption {
  /** Aborted when the first signal arrives. */
  readonly signal: AbortSignal;
  /** The first signal received, if any. */
  received(): NodeJS.Signals | undefined;
  /** Removes the handlers. */
  dispose(): void;
  /**
   * Removes the handlers and, if a signal was received, ends the process by that signal.
   * Call it once the command has cleaned up. Returns only when no signal was received.
   */
  finish(): void;
}

/**
 * Ends this process by `signal` (default action), or with 128 + its number where signals cannot
 * be raised. A process ended by a signal runs no `exit` handlers, so the scratch folders still
 * registered (a cleanup some step left unfinished) are removed here first, synchronously.
 */
export function raiseSignal(signal: NodeJS.Signals): never {
  removeAllScratchSync();
  if (process.platform === "win32") process.exit(128 + (signal === "SIGINT" ? 2 : signal === "SIGHUP" ? 1 : 15));
  process.kill(process.pid, signal);
  // The default action has ended the process; should it be delayed, make sure nothing runs on.
  return process.exit(128 + (signal === "SIGINT" ? 2 : signal === "SIGHUP" ? 1 : 15));
}

/**
 * Starts catching SIGINT, SIGTERM and SIGHUP (see the module comment). `onSignal` runs
 * synchronously on every signal, before anything else reacts (e.g. to restore a file).
 */
export function catchInterruptions(onSignal: (signal: NodeJS.Signals) => void = () => {}): Interruption {
  const controller = new AbortController();
  let first: NodeJS.Signals | undefined;
  let firstAt = 0;
  const handler = (signal: NodeJS.Signals) => {
    // Ctrl-C in a terminal signals the whole group, and npm passes the same signal on to
    // the command as well: that copy, arriving at once, is the same keypress, not a second.
    if (first === signal && Date.now() - firstAt < SAME_KEYPRESS_MS) return;
    onSignal(signal);
    if (first !== undefined) {
      // Second signal: the user does not want to wait for the cleanup.
      removeAllScratchSync();
      dispose();
      raiseSignal(signal);
    }
    first = signal;
    firstAt = Date.now();
    controller.abort(new Error(`interrupted by ${signal}`));
  };
  const dispose = () => {
    for (const signal of SIGNALS) process.off(signal, handler);
  };
  for (const signal of SIGNALS) process.on(signal, handler);
  return {
    signal: controller.signal,
    received: () => first,
    dispose,
    finish() {
      dispose();
      if (first !== undefined) raiseSignal(first);
    },
  };
}

/**
 * Runs `fn` with an `AbortSignal` that the first SIGINT, SIGTERM or SIGHUP aborts, so that
 * the work stops, ends the processes it started and removes its scratch folders on its way
 * out, and says so (`checkpoint`, `practice` and `verify` print an `ABORTED` line). Once
 * `fn` has settled, a process that received a signal ends by that signal, like every other
 * course command (so npm prints no error block); otherwise `fn`'s result is returned. A
 * second signal ends the process at once (see `catchInterruptions`).
 */
export async function withInterrupts<T>(fn: (signal: AbortSignal, interrupted: () => boolean) => Promise<T>): Promise<T> {
  const interruption = catchInterruptions();
  try {
    return await fn(interruption.signal, () => interruption.received() !== undefined);
  } finally {
    interruption.finish();
  }
}

/**
 * `withInterrupts` for a command that reports its own failure: whatever `fn` throws becomes
 * one line on `stderr` — an `ABORTED` line saying `aborted` when a signal caused it — and the
 * exit status `exitCodeFor` gives; interrupted, the process then ends by its signal.
 */
export async function withInterruptsReported(stderr: TermStream, aborted: string, fn: (signal: AbortSignal) => Promise<number>): Promise<number> {
  return withInterrupts(async (signal) => {
    try {
      return await fn(signal);
    } catch (error) {
      const reported = signal.aborted ? new CourseError("ABORTED", aborted, { cause: error }) : error;
      stderr.write(`${formatError(reported)}\n`);
      return exitCodeFor(reported);
    }
  });
}

/**
 * `withInterrupts` for an author command that changes nothing but scratch copies (`fault` in
 * the repository, `mistakes`): interrupted, it says so on `stderr` (the copies are gone, the
 * repository untouched) and fails with `ABORTED`, caused by what `fn` threw, and the process
 * then ends by the signal; any other failure passes through.
 */
export async function withScratchInterrupts<T>(stderr: TermStream, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  return withInterrupts(async (signal, interrupted) => {
    try {
      return await fn(signal);
    } catch (error) {
      if (!interrupted()) throw error;
      stderr.write("已中断；临时副本已删除，仓库没有被改动。\n");
      throw new CourseError("ABORTED", "已中断", { cause: error });
    }
  });
}
