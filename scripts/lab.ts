/**
 * `npm run lab -w @pi/course -- 12.1 [--watch] [--json]` and `-- 12`: build the course
 * incrementally, run one lab's tests (or every lab of the chapter) and print the result
 * compactly: passed/total, the first failing test and its message, and the next step.
 * Works the same in the course repo and in a practice folder, on every OS (no shell).
 *
 * Exit status: 0 only when the lab (or every lab of the chapter) passes; 1 for a red lab,
 * a compile error or a test file that crashed; 2 for a usage error; 130 when interrupted.
 */
import path from "node:path";
import { exitCodeFor, formatError, isCourseError } from "./lib/errors.js";
import { LAB_USAGE, parseLabArgs } from "./lib/lab-args.js";
import { formatOutcome, outcomeJson, outcomeOk } from "./lib/lab-format.js";
import { isPracticeFolder, packageDirOf, runLab, selectLabs, startCourseBuild, type LabTarget } from "./lib/lab-runner.js";
import { createRerunner, debounce, watchSources } from "./lib/lab-watch.js";
import type { ChapterManifest } from "./lib/manifest.js";
import { courseRoot } from "./lib/paths.js";
import { clearScreen, paintFor } from "./lib/term.js";

/** Quiet time after the last file event before a watch rerun starts. */
const WATCH_DEBOUNCE_MS = 150;

async function main(argv: readonly string[]): Promise<number> {
  const args = parseLabArgs(argv);
  if (args.help || args.target === undefined) {
    process.stdout.write(`${LAB_USAGE}\n`);
    return 0;
  }
  const target = args.target;
  const controller = new AbortController();
  const interrupt = () => controller.abort();
  process.once("SIGINT", interrupt);
  process.once("SIGTERM", interrupt);
  // The compiler starts first; the manifest (and the YAML parser, loaded on demand) is
  // read while it runs. A usage error found meanwhile stops it.
  const build = args.watch ? undefined : startCourseBuild(courseRoot, controller.signal);
  try {
    let manifest: ChapterManifest;
    try {
      const { loadManifest } = await import("./lib/manifest.js");
      manifest = await loadManifest(courseRoot, target.chapter);
      selectLabs(manifest, target); // an unknown lab is a usage error
    } catch (error) {
      controller.abort();
      await build?.result.catch(() => undefined);
      throw error;
    }
    if (args.watch) return await watchLab(manifest, target);
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
  } finally {
    process.off("SIGINT", interrupt);
    process.off("SIGTERM", interrupt);
  }
}

/** Runs the lab now and again after every save until Ctrl-C; resolves with 0 then. */
async function watchLab(manifest: ChapterManifest, target: LabTarget): Promise<number> {
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

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`${formatError(error)}\n`);
    // An unknown chapter is a mistake on the command line, like an unknown lab.
    process.exitCode = isCourseError(error, "CHAPTER_UNKNOWN") ? 2 : exitCodeFor(error);
  },
);
