/**
 * A course command run inside the test's own process, through the command table exactly as
 * its process would run it (`runCommandLine`: parsing, usage errors, the handler, the exit
 * status it returns), with its output captured. For tests about what a command does and says;
 * a test about the process around it (its start, a signal, the status the process ends with,
 * npm) starts it as a process (`runCommand` in `tooling.ts`). Saves the 0.15–0.3 s of CPU a
 * command's process costs to start.
 */
import { runCommandLine } from "../../src/cli.js";
import type { CommandResult } from "./tooling.js";

export interface InProcessOptions {
  /** Where the command is typed (npm's `INIT_CWD`); default `root`, as `runCommand`'s default cwd. */
  cwd?: string;
  /** Environment entries for the run (undefined removes one), restored afterwards. `CI` is cleared unless given, as `commandEnv` does. */
  env?: NodeJS.ProcessEnv;
}

/**
 * Runs `command` (`lab`, `hint`, …) with `args` of the course at `root` in this process and
 * resolves with its exit status and what it wrote. The environment is changed for the length of
 * the run: tests of one file run one after the other, so none sees another's.
 */
export async function runInProcess(root: string, command: string, args: readonly string[], options: InProcessOptions = {}): Promise<CommandResult> {
  const env: NodeJS.ProcessEnv = { CI: undefined, INIT_CWD: options.cwd ?? root, ...options.env };
  const saved = new Map(Object.keys(env).map((key) => [key, process.env[key]]));
  const set = (key: string, value: string | undefined) => {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  };
  for (const [key, value] of Object.entries(env)) set(key, value);
  let stdout = "";
  let stderr = "";
  try {
    const code = await runCommandLine([command.replace(/\.ts$/, ""), ...args], {
      root,
      io: { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) } },
    });
    return { code, signal: null, stdout, stderr };
  } finally {
    for (const [key, value] of saved) set(key, value);
  }
}
