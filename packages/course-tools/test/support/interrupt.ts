/**
 * Interrupting a course command at a chosen moment, without sleeps: the command runs with a
 * `git` on its PATH that passes every call to the real git except the n-th call of one
 * subcommand, which announces itself through a named pipe and then waits (as `sleep`) for
 * as long as it takes the test to send its signal. Reading the pipe is the event the test
 * waits for; a command that ends before reaching that call ends the wait as well.
 *
 * Each run gets its own temporary folder (`TMPDIR`), so what a command leaves there can be
 * checked while other test files run in parallel. POSIX only (named pipes, process groups).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, closeSync, constants, mkdirSync, openSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { TestContext } from "node:test";
import { commandArgs, commandEnv } from "./tooling.js";
import { tempDir } from "./fake-course.js";

/** Where a run stops: the `at`-th call (1-based) of `git <subcommand>`. */
export interface PausePoint {
  subcommand: string;
  at: number;
}

export interface PausedRun {
  child: ChildProcess;
  /** The run's own temporary folder (its `TMPDIR`). */
  tmp: string;
  /** Resolves when the command sits in the chosen git call; rejects if it ended first. */
  paused: Promise<void>;
  /** Resolves when the command has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
  /** Sends `signal` to the command's process, or to its whole process group (as a terminal's Ctrl-C does). */
  send(signal: NodeJS.Signals, to: "process" | "group"): void;
}

function realGit(): string {
  const found = spawnSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).stdout.trim();
  if (found === "") throw new Error("git is not on PATH");
  return found;
}

const WRAPPER = (git: string) => `#!/bin/sh
sub=""
skip=0
for a in "$@"; do
  if [ "$skip" = 1 ]; then skip=0; continue; fi
  case "$a" in
    -c) skip=1 ;;
    -*) ;;
    *) sub="$a"; break ;;
  esac
done
if [ "$sub" = "$PI_TEST_GIT_PAUSE" ]; then
  # Each call claims the next number with mkdir, which is atomic: concurrent calls never share one.
  n=1
  until mkdir "$PI_TEST_GIT_COUNTER/$n" 2>/dev/null; do n=$((n + 1)); done
  if [ "$n" = "$PI_TEST_GIT_PAUSE_AT" ]; then
    echo paused > "$PI_TEST_GIT_FIFO"
    exec sleep 300
  fi
fi
exec ${JSON.stringify(git)} "$@"
`;

/**
 * Starts the compiled course `command` of the course at `root` (in its own process group)
 * and pauses it at `pause`. The process group is killed after the test, whatever happened.
 */
export function startPaused(
  t: TestContext,
  root: string,
  command: string,
  args: readonly string[],
  pause: PausePoint,
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): PausedRun {
  const dir = tempDir(t, "pi-interrupt-");
  const bin = path.join(dir, "bin");
  const tmp = path.join(dir, "tmp");
  mkdirSync(bin);
  mkdirSync(tmp);
  mkdirSync(path.join(dir, "calls"));
  writeFileSync(path.join(bin, "git"), WRAPPER(realGit()));
  chmodSync(path.join(bin, "git"), 0o755);
  const fifo = path.join(dir, "paused.fifo");
  const made = spawnSync("mkfifo", [fifo]);
  if (made.status !== 0) throw new Error(`mkfifo failed: ${made.stderr}`);

  const child = spawn(process.execPath, [...commandArgs(root, command), ...args], {
    cwd: options.cwd ?? root,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: commandEnv({
      ...options.env,
      PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}`,
      TMPDIR: tmp,
      PI_TEST_GIT_PAUSE: pause.subcommand,
      PI_TEST_GIT_PAUSE_AT: String(pause.at),
      PI_TEST_GIT_COUNTER: path.join(dir, "calls"),
      PI_TEST_GIT_FIFO: fifo,
    }),
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  let ended = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    child.on("close", (code, signal) => {
      ended = true;
      resolve({ code, signal, stdout, stderr });
    }),
  );
  t.after(() => {
    try {
      process.kill(-child.pid!, "SIGKILL"); // the command, if still there, and a waiting git
    } catch {
      // Already gone.
    }
  });
  const paused = readFile(fifo, "utf8").then(() => {
    if (ended) throw new Error(`${command} ended before it reached git ${pause.subcommand} #${pause.at}:\n${stdout}${stderr}`);
  });
  // A command that ends first never opens the pipe: open it ourselves so that the read ends.
  void exited.then(() => {
    try {
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // The reader already finished (ENXIO: no reader waiting).
    }
  });
  return {
    child,
    tmp,
    paused,
    exited,
    send(signal, to) {
      process.kill(to === "group" ? -child.pid! : child.pid!, signal);
    },
  };
}
