/**
 * The body of the `lab` command once its arguments are parsed and the compiler is already
 * running: read the manifest, run the lab (or the chapter, or the watch loop) and print the
 * result. Loaded on demand by `packages/course-tools/src/lab.ts`, so that loading it overlaps the build.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { CourseError, formatError } from "../core/errors.js";
import { type LabOutcome, runLab, selectLabs } from "../testing/labs.js";
import { resultStatus } from "../core/exit-status.js";
import type { Io, LabTarget } from "../core/cli.js";
import { courseCommand } from "../core/command-line.js";
import type { StartedBuild } from "../testing/compiler.js";
import { challengeJson, challengeOk, formatChallenge, formatOutcome, outcomeJson, outcomeOk } from "./format.js";
import type { SourceLocation } from "./locate.js";
import { learnerPreamble } from "../practice/preamble.js";
import { BACKUP_DIR } from "../practice/backup.js";
import { knownGreen, readProgress, recordProgress, teachingDigest } from "./progress.js";
import { createRerunner, debounce, WATCH_DEBOUNCE_MS, watchSources } from "./watch.js";
import { type ChapterManifest, loadManifest } from "../course/manifest.js";
import { isPracticeFolder, packageDirOf, userCwd } from "../core/paths.js";
import { clearScreen, paintFor, type Paint, type TermStream } from "../core/term.js";

/** `lab`'s arguments (declared in the command table, `packages/course-tools/src/cli.ts`). */
export interface LabArgs {
  target: LabTarget;
  watch: boolean;
  json: boolean;
  verbose: boolean;
  /** Run the chapter's challenge tier instead of its labs (`NN` only). */
  challenge: boolean;
  /** Time limit of each test run (of each test, with `challenge`), in seconds. */
  timeoutSeconds: number;
  /** List every part of the lab (`NN.L` only) as `path:line:col` instead of running it (`where.ts`). */
  where: boolean;
  /** Open the lab's construction site in the editor instead of running it (`NN.L` only, practice folder only). */
  open: boolean;
  /** Once the lab is green, show its declarations beside the reference's (`NN.L` only, practice folder only). */
  compare: boolean;
}

/**
 * Runs `lab` for `target` in the course at `courseRoot` and resolves with the exit status
 * (see `resultStatus`: a red lab is 0 unless `--json` or CI; 130 when `signal` aborted the
 * run; 0 when a watch loop was ended). `build` is the build `lab` already started (it is
 * stopped if the manifest turns out to be unusable). Throws
 * `CourseError` for an unknown chapter or lab, and for `--open` or `--compare` refusing
 * (`LAB_NEEDS_PRACTICE` outside a practice folder, and the codes of `site.ts`, `open.ts` and
 * `compare.ts`).
 */
export async function runLabCommand(courseRoot: string, args: LabArgs, signal: AbortSignal, build: StartedBuild | undefined, io: Io): Promise<number> {
  const { target } = args;
  let manifest: ChapterManifest;
  try {
    manifest = await loadManifest(courseRoot, target.chapter);
    selectLabs(manifest, target); // an unknown lab is a usage error
  } catch (error) {
    await build?.stop();
    throw error;
  }
  if ((args.open || args.compare) && !isPracticeFolder(courseRoot)) {
    await build?.stop();
    const option = args.open ? "--open" : "--compare";
    throw new CourseError(
      "LAB_NEEDS_PRACTICE",
      `${option} 只在练习目录里使用：这里是课程仓库本身（参考实现）。先生成练习目录：${courseCommand("practice", manifest.id, "<新目录>")}，再在那里运行 ${courseCommand("lab", target.lab ?? manifest.id, option)}`,
    );
  }
  const paint = paintFor(io.stdout);
  const showFrom = userCwd();
  const backup = path.join(courseRoot, ...BACKUP_DIR.split("/"));
  const pendingRestore = existsSync(backup);
  for (const line of learnerPreamble(courseRoot, manifest.id)) {
    // With --json, stdout carries the document alone; the notes go to stderr.
    (args.json ? io.stderr : io.stdout).write(`${args.json ? line : paint.yellow(line)}\n`);
  }
  if (pendingRestore && !existsSync(backup) && build !== undefined) {
    // The preamble gave back a file a killed fault exercise had patched: the build started
    // before that saw the patched file, so the run waits for it and builds again.
    await build.result.catch(() => undefined);
    build = undefined;
  }
  const timeoutMs = args.timeoutSeconds * 1000;
  const missing = missingTeachingFiles(courseRoot, manifest);
  if (missing.length > 0) {
    await build?.stop();
    const note = missingFilesNote(missing, manifest, isPracticeFolder(courseRoot));
    if (args.json)
      io.stdout.write(
        `${JSON.stringify({ chapter: manifest.id, labs: [], passed: 0, total: 0, error: { kind: "teaching_file_missing", files: missing, message: note } }, null, 2)}\n`,
      );
    else io.stdout.write(`${paint.red(note)}\n`);
    return resultStatus(false, { json: args.json });
  }
  const [lab] = selectLabs(manifest, target);
  if (args.where && lab !== undefined) {
    const { formatLabParts, labParts } = await import("./where.js");
    const parts = labParts(courseRoot, manifest, lab);
    if (args.json) io.stdout.write(`${JSON.stringify({ lab: lab.id, title: lab.title, parts }, null, 2)}\n`);
    else io.stdout.write(`${formatLabParts(lab, parts, courseRoot, showFrom, paint)}\n`);
    return 0;
  }
  if (args.open && lab !== undefined) return openSite(courseRoot, manifest, lab.id, showFrom, signal, io);
  if (args.compare && lab !== undefined) {
    const { compareLab } = await import("./compare.js");
    const running = runningLine(io.stdout, target, args);
    const shown = await compareLab(courseRoot, manifest, lab, { paint, showFrom, signal, timeoutMs, ...(build === undefined ? {} : { build }) }).finally(() =>
      running.clear(),
    );
    if (shown === "aborted") {
      io.stderr.write(`${interruptedNote(target)}\n`);
      return 130;
    }
    io.stdout.write(`${shown}\n`);
    return 0;
  }
  if (args.challenge) return challengeCommand(courseRoot, manifest, args, { signal, paint, io, build });
  if (args.watch) return watchLab(courseRoot, manifest, target, { paint, verbose: args.verbose, timeoutMs, io, showFrom }, signal);
  const running = runningLine(io.stdout, target, args);
  const digest = teachingDigest(courseRoot, manifest);
  const outcome = await runLab(courseRoot, manifest, target, { signal: signal, ...(build ? { started: build } : {}), timeoutMs, showFrom });
  running.clear();
  if (outcome.kind === "tested") recordProgress(courseRoot, [...outcome.earlier, ...outcome.labs], digest);
  const progress = readProgress(courseRoot);
  const laterGreen = (id: string) => knownGreen(progress, id, digest);
  if (outcome.kind === "aborted") {
    // Said once, after the cleanup has ended: the command then ends by the signal it received.
    io.stderr.write(`${interruptedNote(target)}\n`);
    return 130;
  }
  if (args.json) {
    const document = { ...outcomeJson(outcome, manifest, target, courseRoot, showFrom), mode: isPracticeFolder(courseRoot) ? "practice" : "repo" };
    io.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
  } else {
    const siteOf = await siteFinder(courseRoot, manifest, outcome);
    io.stdout.write(`${formatOutcome(outcome, manifest, target, { paint, courseRoot, showFrom, watch: false, verbose: args.verbose, laterGreen, siteOf })}\n`);
  }
  return resultStatus(outcomeOk(outcome), { json: args.json });
}

/** `lab NN.L --open`: the lab's construction site (`site.ts`) in the learner's editor (`open.ts`); exit 0 once it ran. */
async function openSite(courseRoot: string, manifest: ChapterManifest, lab: string, showFrom: string, signal: AbortSignal, io: Io): Promise<number> {
  const [{ constructionSite }, { openInEditor }] = await Promise.all([import("./site.js"), import("./open.js")]);
  const site = constructionSite(courseRoot, manifest, lab);
  for (const line of await openInEditor(courseRoot, site, { cwd: showFrom, signal })) io.stdout.write(`${line}\n`);
  return 0;
}

/** `lab NN --challenge`: the challenge tier on the course's own code (see `challenge.ts`), as a table by theme. */
async function challengeCommand(
  courseRoot: string,
  manifest: ChapterManifest,
  args: LabArgs,
  { signal, paint, io, build }: { signal: AbortSignal; paint: Paint; io: Io; build: StartedBuild | undefined },
): Promise<number> {
  if (manifest.challenge.length === 0) {
    await build?.stop();
    io.stdout.write(`第 ${manifest.id} 章没有挑战关。\n`);
    return 0;
  }
  const { runChallenge } = await import("./challenge.js");
  const running = runningLine(io.stdout, { chapter: manifest.id }, args, "挑战关");
  const showFrom = userCwd();
  const outcome = await runChallenge(courseRoot, manifest, {
    signal,
    testTimeoutMs: args.timeoutSeconds * 1000,
    showFrom,
    ...(build === undefined ? {} : { started: build }),
  });
  running.clear();
  if (outcome.kind === "aborted") {
    io.stderr.write(`${interruptedNote({ chapter: manifest.id })}\n`);
    return 130;
  }
  if (args.json) io.stdout.write(`${JSON.stringify(challengeJson(outcome, manifest, courseRoot, showFrom), null, 2)}\n`);
  else io.stdout.write(`${formatChallenge(outcome, manifest, { paint, courseRoot, showFrom, watch: false, verbose: args.verbose })}\n`);
  return resultStatus(challengeOk(outcome), { json: args.json });
}

/** The chapter's teaching files that are not there (deleted, renamed), repo-relative. */
export function missingTeachingFiles(courseRoot: string, manifest: ChapterManifest): string[] {
  return manifest.starters.map((s) => s.to).filter((file) => !existsSync(path.join(courseRoot, ...file.split("/"))));
}

/** What `lab` says instead of a compiler's complaints when a teaching file is gone, with the way back. */
export function missingFilesNote(files: readonly string[], manifest: ChapterManifest, practice: boolean): string {
  const way = practice
    ? `用 ${courseCommand("reset", manifest.id)} 找回 starter（你的文件如果还在别处，先把它挪回原处）`
    : `这里是课程仓库：用 git checkout -- ${files.join(" ")} 找回它`;
  return `✗ 教学文件 ${files.join("、")} 不见了（被删掉或改了名），测试没有运行。${way}。`;
}

/** The one line an interrupted `lab` prints: what was stopped, and that nothing of it is left. */
export function interruptedNote(target: LabTarget): string {
  const what = target.lab === undefined ? `第 ${target.chapter} 章的 Lab` : `Lab ${target.lab}`;
  return `已中断：${what} 的编译与测试进程已结束，临时文件已删除。`;
}

/**
 * On a terminal, a "running…" line while the build and the tests run (erased before the
 * result is printed); nothing on a pipe or with `--json`.
 */
function runningLine(stream: TermStream, target: LabTarget, args: Pick<LabArgs, "json" | "timeoutSeconds">, what?: string): { clear(): void } {
  if (stream.isTTY !== true || args.json) return { clear: () => {} };
  const running = what ?? (target.lab === undefined ? `第 ${target.chapter} 章的所有 Lab` : `Lab ${target.lab}`);
  stream.write(`编译并运行 ${running}……（${what === undefined ? "" : "每项测试的"}时间上限 ${args.timeoutSeconds} 秒，Ctrl-C 中断）`);
  return { clear: () => void stream.write("\r\u001b[2K") };
}

interface WatchOptions {
  paint: Paint;
  io: Io;
  verbose: boolean;
  timeoutMs: number;
  showFrom: string;
}

/** Runs the lab now and again after every save until `stop` aborts; resolves with 0 then. */
async function watchLab(courseRoot: string, manifest: ChapterManifest, target: LabTarget, options: WatchOptions, stop: AbortSignal): Promise<number> {
  const { paint, io } = options;
  const packages = [...new Set(manifest.focusedTests.map(packageDirOf))];
  const dirs = packages.flatMap((pkg) => [path.join(courseRoot, pkg, "src"), path.join(courseRoot, pkg, "test")]);
  const shown = packages.flatMap((pkg) => [`${pkg}/src`, `${pkg}/test`]).join("、");
  const seconds = options.timeoutMs / 1000;

  const rerunner = createRerunner(
    async (signal) => {
      if (io.stdout.isTTY === true) clearScreen(io.stdout);
      else io.stdout.write(`${"─".repeat(40)}\n`);
      const started = Date.now();
      const running = runningLine(io.stdout, target, { json: false, timeoutSeconds: seconds });
      let outcome: LabOutcome;
      try {
        outcome = await runLab(courseRoot, manifest, target, { signal, timeoutMs: options.timeoutMs, showFrom: options.showFrom });
      } finally {
        running.clear();
      }
      if (outcome.kind === "aborted") return;
      const elapsed = ((Date.now() - started) / 1000).toFixed(1);
      const siteOf = await siteFinder(courseRoot, manifest, outcome);
      io.stdout.write(
        `${formatOutcome(outcome, manifest, target, { paint, courseRoot, showFrom: options.showFrom, watch: true, verbose: options.verbose, siteOf })}\n`,
      );
      io.stdout.write(`${paint.dim(`用时 ${elapsed} 秒 · 监视 ${shown} · 保存即重跑 · Ctrl-C 退出`)}\n`);
    },
    (error) => io.stderr.write(`${formatError(error)}\n`),
  );
  const schedule = debounce(() => void rerunner.trigger(), WATCH_DEBOUNCE_MS);
  const watcher = watchSources(dirs, schedule);
  await watcher.ready;
  void rerunner.trigger();

  await new Promise<void>((resolve) => {
    if (stop.aborted) resolve();
    stop.addEventListener("abort", () => resolve(), { once: true });
  });
  schedule.cancel();
  await watcher.close();
  await rerunner.stop();
  // On a terminal the line may hold a "running…" note or the echoed ^C: clear it first.
  io.stdout.write(`${io.stdout.isTTY === true ? "\r\u001b[2K" : "\n"}${paint.dim("已退出监视。")}\n`);
  return 0;
}

/**
 * Finds labs' construction sites for the report, loaded only when a failure is a scaffold
 * error (the site finder parses the teaching files); a site that cannot be found is undefined.
 */
async function siteFinder(
  courseRoot: string,
  manifest: ChapterManifest,
  outcome: LabOutcome,
): Promise<((lab: string) => SourceLocation | undefined) | undefined> {
  if (outcome.kind !== "tested") return undefined;
  const scaffolds = [...outcome.earlier, ...outcome.labs].some((lab) => lab.failures.some((f) => f.scaffoldOf !== undefined));
  if (!scaffolds) return undefined;
  const { constructionSite } = await import("./site.js");
  return (lab) => {
    try {
      return constructionSite(courseRoot, manifest, lab);
    } catch {
      return undefined;
    }
  };
}
