/**
 * Child process for the learner-mode crash tests (not a test file itself):
 *
 *   node --import tsx packages/course-tools/test/support/fault-child.ts <practice-dir> <chapter> <hang|throw|run>
 *
 * Runs the chapter's exercise fault in learner mode the way `fault` does (interruptions
 * caught, the process ending by the signal once cleaned up) and, right after the learner's
 * file is patched, prints `PATCHED` and then either hangs (so the parent can send SIGKILL or
 * SIGINT), throws an uncaught exception from a timer, or (`run`) goes on with the experiment.
 */
import { catchInterruptions } from "../../src/core/interrupt.js";
import { runLearnerFault } from "../../src/fault/learner.js";
import { learnerFaults } from "../../src/course/faults.js";
import { loadManifest } from "../../src/course/manifest.js";

const [root, chapter, mode] = process.argv.slice(2);
if (root === undefined || chapter === undefined || (mode !== "hang" && mode !== "throw" && mode !== "run")) {
  process.stderr.write("usage: fault-child.ts <practice-dir> <chapter> <hang|throw|run>\n");
  process.exitCode = 2;
} else {
  const manifest = await loadManifest(root, chapter);
  const fault = learnerFaults(manifest)[0]!;
  const interruption = catchInterruptions();
  try {
    await runLearnerFault({
      root,
      manifest,
      fault,
      signal: interruption.signal,
      afterPatch: () => {
        process.stdout.write("PATCHED\n");
        if (mode === "run") return undefined;
        if (mode === "throw") {
          setTimeout(() => {
            throw new Error("simulated crash between patch and restore");
          }, 10);
        }
        // Keeps the event loop alive until the parent (or the crash) ends the process.
        return new Promise<void>(() => void setInterval(() => {}, 1000));
      },
    });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    if (interruption.received() === undefined) process.exitCode = 1;
  } finally {
    interruption.finish();
  }
}
