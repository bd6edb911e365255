/**
 * Child process for the learner-mode crash tests (not a test file itself):
 *
 *   node --import tsx scripts/test/fault-child.ts <practice-dir> <chapter> <hang|throw>
 *
 * Runs the chapter's exercise fault in learner mode and, right after the learner's file
 * is patched, prints `PATCHED` and then either hangs (so the parent can send SIGKILL or
 * SIGINT) or throws an uncaught exception from a timer.
 */
import { runLearnerFault } from "../lib/fault/learner.js";
import { learnerFaults } from "../lib/fault/catalog.js";
import { loadManifest } from "../lib/course/manifest.js";

const [root, chapter, mode] = process.argv.slice(2);
if (root === undefined || chapter === undefined || (mode !== "hang" && mode !== "throw")) {
  process.stderr.write("usage: fault-child.ts <practice-dir> <chapter> <hang|throw>\n");
  process.exitCode = 2;
} else {
  const manifest = await loadManifest(root, chapter);
  const fault = learnerFaults(manifest)[0]!;
  await runLearnerFault({
    root,
    manifest,
    fault,
    afterPatch: () => {
      process.stdout.write("PATCHED\n");
      if (mode === "throw") {
        setTimeout(() => {
          throw new Error("simulated crash between patch and restore");
        }, 10);
      }
      // Keeps the event loop alive until the parent (or the crash) ends the process.
      return new Promise<void>(() => void setInterval(() => {}, 1000));
    },
  });
}
