/**
 * The body of the `lab` command once its arguments are parsed and the compiler is already
 * running: read the manifest, run the lab (or the chapter, or the watch loop) and print the
 * result. Loaded on demand by `scripts/lab.ts`, so that loading it overlaps the build.
 */
import path from "node:path";
import { formatError } from "../core/errors.js";
import type { LabArgs } from "./args.js";
import type { StartedBuild } from "./build.js";
import { formatOutcome, outcomeJson, outcomeOk } from "./format.js";
import { packageDirOf, runLab, selectLabs, type LabTarget } from "./runner.js";
import { createRerunner, debounce, watchSources } from "./watch.js";
import { loadManifest, type ChapterManifest } from "../course/manifest.js";
import { isPracticeFolder } from "../core/paths.js";
import { clearScreen, paintFor } from "../core/term.js";

/** Quiet time after the last file event before a watch rerun starts. */
const WATCH_DEBOUNCE_MS = 150;

/**
 * Runs `lab` for `target` in the course at `courseRoot` and resolves with the exit status:
 * 0 when every selected lab passed, 1 otherwise, 130 when `signal` aborted the run, 0 when
 * a watch loop was ended with Ctrl-C. `build` is the build `lab` already started (it is
 * stopped if the manifest turns out to be unusable). Throws `CourseError` for an unknown
 * chapter or lab.
 */
export async function runLabCommand(
  courseRoot: string,
  args: LabArgs & { target: LabTarget },
  controller: AbortController,
  build: StartedBuild | undefined,
): Promise<number> {
  const { target } = args;
  let manifest: ChapterManifest;
  try {
    manifest = await loadManifest(courseRoot, target.chapter);
    selectLabs(manifest, target); // an unknown lab is a usage error
  } catch (error) {
    controller.abort();
    await build?.result.catch(() => undefined);
    throw error;
  }
  if (args.watch) return watchLab(courseRoot, manifest, target);
  const outcome = await runLab(courseRoot, manifest, target, controller.signal, build);
  if (outcome.kind === "aborted") return 130;
  if (args.json) {
    const document = { ...outcomeJson(outcome, manifest, target, courseRoot), mode: isPracticeFolder(courseRoot) ? "practice" : "repo" };
    process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
  } else {
    const paint = paintFor(process.stdout);
    process.stdout.write(`${formatOutcome(outcome, manifest, target, { paint, courseRoot, watch: false })}\n`);
  }
  return outcomeOk(outcome) ? 0 : 1;
}

/** Runs the lab now and again after every save until Ctrl-C; resolves with 0 then. */
async function watchLab(courseRoot: string, manifest: ChapterManifest, target: LabTarget): Promise<number> {
  const paint = paintFor(process.stdout);
  const packages = [...new Set(manifest.focusedTests.map(packageDirOf))];
  const dirs = packages.flatMap((pkg) => [path.join(courseRoot, pkg, "src"), path.join(courseRoot, pkg, "test")]);
  const shown = packages.flatMap((pkg) => [`${pkg}/src`, `${pkg}/test`]).join("、");

  const rerunner = createRerunner(
    async (signal) => {
      if (process.stdout.isTTY === true) clearScreen(process.stdout);
      else process.stdout.write(`${"─".repeat(40)}\n`);
      const started = Date.now();
      const outcome = await runLab(courseRoot, manifest, target, signal);
      if (outcome.kind === "aborted") return;
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      process.stdout.write(`${formatOutcome(outcome, manifest, target, { paint, courseRoot, watch: true })}\n`);
      process.stdout.write(`${paint.dim(`用时 ${seconds} 秒 · 监视 ${shown} · 保存即重跑 · Ctrl-C 退出`)}\n`);
    },
    (error) => process.stderr.write(`${formatError(error)}\n`),
  );
  const schedule = debounce(() => void rerunner.trigger(), WATCH_DEBOUNCE_MS);
  const watcher = watchSources(dirs, schedule);
  void rerunner.trigger();

  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  watcher.close();
  schedule.cancel();
  await rerunner.stop();
  process.stdout.write(`\n${paint.dim("已退出监视。")}\n`);
  return 0;
}
