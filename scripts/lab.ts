/**
 * `npm run lab -w @pi/course -- 12.1 [--watch] [--verbose] [--timeout 秒] [--json]` and
 * `-- 12`: build the course incrementally, run one lab's tests (with the chapter's earlier
 * labs, to catch a regression) or every lab of the chapter, and print the result compactly:
 * passed/total, the first failing test with its message and file:line, and the next step.
 * Works the same in the course repo and in a practice folder, on every OS (no shell).
 *
 * Exit status (see `lib/core/exit-status.ts`): 0 when the command ran, green or red — a red
 * lab is a result, and npm then prints no error block; with `--json` or in CI (`CI` set), 1
 * when not every selected lab passed. 2 for a usage error, 1 for a failure of the command
 * itself. Interrupted (Ctrl-C, SIGTERM), it ends its test processes, removes its temporary
 * folder and then ends by that signal; a watch loop ended with Ctrl-C exits 0.
 *
 * Start-up order matters for speed: this file imports only what it needs to parse the
 * arguments and start the compiler; the rest of the tooling (and the YAML parser) loads
 * while the compiler runs.
 */
import { runMain } from "./lib/core/cli.js";
import { catchInterruptions } from "./lib/core/interrupt.js";
import { LAB_USAGE, parseLabArgs } from "./lib/lab/args.js";
import { startCourseBuild } from "./lib/testing/compiler.js";
import { courseRoot } from "./lib/core/paths.js";

async function main(argv: readonly string[]): Promise<number> {
  const args = parseLabArgs(argv);
  if (args.help || args.target === undefined) {
    process.stdout.write(`${LAB_USAGE}\n`);
    return 0;
  }
  const interruption = catchInterruptions();
  const controller = new AbortController();
  interruption.signal.addEventListener("abort", () => controller.abort(), { once: true });
  const build = args.watch ? undefined : startCourseBuild(courseRoot, controller.signal);
  try {
    const { runLabCommand } = await import("./lib/lab/command.js");
    return await runLabCommand(courseRoot, { ...args, target: args.target }, controller, build);
  } catch (error) {
    controller.abort();
    await build?.result.catch(() => undefined);
    throw error;
  } finally {
    // Ctrl-C is how a watch loop ends: a normal end. Anything else interrupted ends by its signal.
    if (args.watch && interruption.received() === "SIGINT") interruption.dispose();
    else interruption.finish();
  }
}

runMain(import.meta.url, main);
