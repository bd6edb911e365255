/**
 * `npm run lab -w @pi/course -- 12.1 [--watch] [--json]` and `-- 12`: build the course
 * incrementally, run one lab's tests (or every lab of the chapter) and print the result
 * compactly: passed/total, the first failing test and its message, and the next step.
 * Works the same in the course repo and in a practice folder, on every OS (no shell).
 *
 * Exit status: 0 only when the lab (or every lab of the chapter) passes; 1 for a red lab,
 * a compile error or a test file that crashed; 2 for a usage error; 130 when interrupted.
 *
 * Start-up order matters for speed: this file imports only what it needs to parse the
 * arguments and start the compiler; the rest of the tooling (and the YAML parser) loads
 * while the compiler runs.
 */
import { runMain } from "./lib/core/cli.js";
import { LAB_USAGE, parseLabArgs } from "./lib/lab/args.js";
import { startCourseBuild } from "./lib/lab/build.js";
import { courseRoot } from "./lib/core/paths.js";

async function main(argv: readonly string[]): Promise<number> {
  const args = parseLabArgs(argv);
  if (args.help || args.target === undefined) {
    process.stdout.write(`${LAB_USAGE}\n`);
    return 0;
  }
  const controller = new AbortController();
  const interrupt = () => controller.abort();
  process.once("SIGINT", interrupt);
  process.once("SIGTERM", interrupt);
  const build = args.watch ? undefined : startCourseBuild(courseRoot, controller.signal);
  try {
    const { runLabCommand } = await import("./lib/lab/command.js");
    return await runLabCommand(courseRoot, { ...args, target: args.target }, controller, build);
  } catch (error) {
    controller.abort();
    await build?.result.catch(() => undefined);
    throw error;
  } finally {
    process.off("SIGINT", interrupt);
    process.off("SIGTERM", interrupt);
  }
}

runMain(import.meta.url, main);
