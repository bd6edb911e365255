/**
 * `npm run lab -w @pi/course -- 12.1 [--watch] [--verbose] [--timeout 秒] [--json]` and
 * `-- 12`: build the course incrementally, run one lab's tests (with the chapter's earlier
 * labs, to catch a regression) or every lab of the chapter, and print the result compactly:
 * passed/total, the first failing test with its message and path:line:col, and the next step.
 * In a practice folder, `-- 12.3 --open` opens the lab's construction site in the editor
 * (`lib/lab/open.ts`) and `-- 12.3 --compare` shows, once the lab is green, the learner's
 * declarations for it and the reference's (`lib/lab/compare.ts`).
 * Works the same in the course repo and in a practice folder, on every OS (no shell).
 * Interrupted (Ctrl-C, SIGTERM), it ends its test processes, removes its temporary folder
 * and then ends by that signal; a watch loop ended with Ctrl-C exits 0.
 *
 * Start-up order matters for speed: this file imports only what it needs to start the
 * compiler; the rest of the tooling (and the YAML parser) loads while the compiler runs.
 */
import type { CommandContext } from "./core/cli.js";
import { catchInterruptions } from "./core/interrupt.js";
import type { LabArgs } from "./lab/command.js";
import { startCourseBuild } from "./testing/compiler.js";

export type { LabArgs };

/** Runs `lab`: starts the build at once, then loads the rest and runs the lab (see `runLabCommand`). */
export async function run(args: LabArgs, { root, io }: CommandContext): Promise<number> {
  const interruption = catchInterruptions();
  // Watch mode builds on each run; --open and --where run no test at all.
  const build = args.watch || args.open || args.where ? undefined : startCourseBuild(root, interruption.signal);
  try {
    const { runLabCommand } = await import("./lab/command.js");
    return await runLabCommand(root, args, interruption.signal, build, io);
  } catch (error) {
    await build?.stop();
    throw error;
  } finally {
    // Ctrl-C is how a watch loop ends: a normal end. Anything else interrupted ends by its signal.
    if (args.watch && interruption.received() === "SIGINT") interruption.dispose();
    else interruption.finish();
  }
}
