/**
 * Learner mode of `fault`: the chapter's fault exercise, run on the learner's own
 * teaching file in a practice folder, which is always given back byte for byte.
 *
 * Order: restore what a previous run may have left behind → check the fault's lab is
 * green (else stop: the experiment assumes a finished lab) → insert the exercise line
 * where the syntax tree says (`ts/placement.ts`: before each return of the named value in the
 * named function, with the learner's own parameter names), or, for code it cannot place,
 * explain the edit and stop without touching the file → build and run → restore
 * → build and run again to show the lab green.
 *
 * Restoring survives interruptions: before the file is patched, its original bytes and
 * their sha256 go to `.pi-course/fault-backup/`; the file is restored on normal exit, on
 * an uncaught exception, on SIGINT/SIGTERM/SIGHUP, and — if the process was killed
 * outright — by the next run, which says so. Patch and restore are atomic renames, so
 * the file is always either the original or the patched text.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { CourseError, isCourseError } from "../core/errors.js";
import { runSuite, type SuiteRun } from "../testing/suite.js";
import {
  BACKUP_DIR,
  type BackupState,
  backupWriter,
  guardRestore,
  ORIGINAL_FILE,
  recoverFaultBackup,
  restoreFromBackupSync,
  type RestoreOutcome,
  sha256,
  writeBackupSync,
} from "../practice/backup.js";
import { resolveKilledBy } from "../testing/fault-runs.js";
import { writeAtomicSync } from "../core/files.js";
import { applyLearnerPatch, type LearnerFault } from "../course/faults.js";
import type { ChapterManifest } from "../course/manifest.js";

/** How a learner-mode run ended. */
export type LearnerStatus =
  /** The named test(s) failed with the line in place. */
  | "killed"
  /** The lab stayed green with the line in place: the learner's code differs from what the exercise assumes. */
  | "survived"
  /** The fault's lab was not green before the experiment; nothing was changed. */
  | "not_ready"
  /** The spot for the line could not be found in the learner's code; the manual edit was explained, nothing was changed. */
  | "manual"
  /** The inserted line did not compile in the learner's code. */
  | "build_failed";

/** One lab's count. */
export interface LabCount {
  passed: number;
  total: number;
}

export interface LearnerRunResult {
  fault: string;
  lab: string;
  file: string;
  status: LearnerStatus;
  /** What a previous, interrupted run left behind and this run restored. */
  recovered?: RestoreOutcome;
  /** 1-based line number of the (first) inserted line. */
  line?: number;
  /** Every inserted line (the line goes before each return of the value). */
  lines?: number[];
  /** Named tests that failed with the fault in place. */
  caughtBy: string[];
  /** The first failure of the fault's lab, as the learner would see it. */
  firstFailure?: { test: string; message: string };
  /** The lab before the experiment. */
  before?: LabCount;
  /** True when the file holds its original bytes again (vacuously true when it was never patched). */
  restored: boolean;
  /** The lab after restoring. */
  after?: LabCount;
  /** Every lab of the chapter after restoring (to tell whether the whole chapter is green). */
  chapterAfter?: ({ id: string } & LabCount)[];
  /** For `manual`: why the spot was not found, and the candidate lines seen. */
  manualReason?: string;
  candidateLines?: number[];
}

export interface LearnerRunOptions {
  /** The practice folder. */
  root: string;
  manifest: ChapterManifest;
  fault: LearnerFault;
  /** Aborting stops the experiment; the file is restored before the run rejects with `ABORTED`. */
  signal?: AbortSignal;
  /** Time limit of each test run in milliseconds (the learner's code may hang). */
  timeoutMs?: number;
  /** Progress lines for the learner (Chinese). */
  say?(line: string): void;
  /** Test seam: runs right after the file was patched and before it is built. */
  afterPatch?(): void | Promise<void>;
}

function labCount(suite: SuiteRun, lab: string): LabCount | undefined {
  const result = suite.labs.find((l) => l.id === lab);
  return result ? { passed: result.passed, total: result.total } : undefined;
}

/** Resolves with `work`, or rejects with `ABORTED` as soon as `signal` aborts. */
function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new CourseError("ABORTED", "已中断"));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new CourseError("ABORTED", "已中断"));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Runs `options.fault` on the learner's own file (see the module comment). Never leaves
 * the file changed: on every return and every throw the original bytes are back. On an
 * interruption (SIGINT, SIGTERM, SIGHUP) the file is restored synchronously the moment the
 * signal arrives, the test processes are ended, and the run rejects with `ABORTED` once they
 * are gone (so their temporary folders can be removed).
 */
export async function runLearnerFault(options: LearnerRunOptions): Promise<LearnerRunResult> {
  const progress = { patched: false };
  try {
    return await runExperiment(options, progress);
  } catch (error) {
    if (!isCourseError(error, "ABORTED")) throw error;
    const { file } = options.fault;
    throw new CourseError(
      "ABORTED",
      progress.patched
        ? `已中断：${file} 已逐字节恢复成实验前的内容；测试进程已结束，临时文件已删除`
        : `已中断：${file} 没有被改动；测试进程已结束，临时文件已删除`,
      { cause: error },
    );
  }
}

async function runExperiment(options: LearnerRunOptions, progress: { patched: boolean }): Promise<LearnerRunResult> {
  const { root, manifest, fault, signal } = options;
  const say = options.say ?? (() => {});
  const suiteOptions = (inner?: AbortSignal) => ({
    ...(inner !== undefined ? { signal: inner } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
  });
  const result: LearnerRunResult = { fault: fault.id, lab: fault.lab, file: fault.file, status: "manual", caughtBy: [], restored: true };
  const recovered = recoverFaultBackup(root);
  if (recovered.kind !== "none") result.recovered = recovered;

  // The check before and the run with the line in place need the fault's lab only; the run
  // after restoring is the whole chapter's, to say whether all of it is green again.
  const ownLab = { labs: [fault.lab] };
  say(`先确认 Lab ${fault.lab} 现在是绿的……`);
  const before = await runSuite(root, manifest, { ...suiteOptions(signal), ...ownLab });
  result.before = labCount(before, fault.lab);
  const labBefore = before.labs.find((l) => l.id === fault.lab);
  if (before.buildErrors || labBefore?.status !== "passed") {
    result.status = "not_ready";
    if (labBefore?.firstFailure) result.firstFailure = { test: labBefore.firstFailure.test, message: labBefore.firstFailure.message };
    return result;
  }
  const file = path.join(root, ...fault.file.split("/"));
  const original = readFileSync(file);
  const patch = applyLearnerPatch(original.toString("utf8"), fault.learner, fault.file);
  if (!patch.ok) {
    result.status = "manual";
    result.manualReason = patch.reason;
    result.candidateLines = patch.lines;
    return result;
  }
  const expected = resolveKilledBy(fault, [...before.tests.keys()]);

  const patched = Buffer.from(patch.text, "utf8");
  const state: BackupState = {
    format: 1,
    fault: fault.id,
    file: fault.file,
    sha256: sha256(original),
    patchedSha256: sha256(patched),
    ...backupWriter(),
    startedAt: new Date().toISOString(),
  };
  const controller = new AbortController();
  const onOuterAbort = () => controller.abort();
  signal?.addEventListener("abort", onOuterAbort, { once: true });
  writeBackupSync(root, state, original);
  const guard = guardRestore(root, () => controller.abort());
  result.restored = false;
  result.line = patch.line;
  result.lines = patch.lines;
  try {
    progress.patched = true;
    writeAtomicSync(file, patched);
    // The line as inserted: written with the learner's own parameter names.
    const inserted = patch.text.split(/\r?\n/)[patch.lines[0]! - 1]?.trim() ?? fault.learner.insert;
    say(`已在 ${fault.file} 第 ${patch.lines.join("、")} 行加入：${inserted}`);
    if (options.afterPatch !== undefined) await unlessAborted(Promise.resolve(options.afterPatch()), controller.signal);
    say("编译并运行测试……");
    const broken = await runSuite(root, manifest, { ...suiteOptions(controller.signal), ...ownLab });
    if (broken.buildErrors) {
      result.status = "build_failed";
      result.firstFailure = { test: "tsc", message: broken.buildErrors[0] ?? "" };
    } else {
      const failed = [...broken.tests].filter(([, ok]) => !ok).map(([name]) => name);
      result.caughtBy = expected.filter((name) => failed.includes(name));
      result.status = result.caughtBy.length > 0 && result.caughtBy.length === expected.length ? "killed" : "survived";
      const lab = broken.labs.find((l) => l.id === fault.lab);
      if (lab?.firstFailure) result.firstFailure = { test: lab.firstFailure.test, message: lab.firstFailure.message };
    }
  } finally {
    const outcome = guard.restoredOnSignal ?? restoreFromBackupSync(root);
    guard.uninstall();
    signal?.removeEventListener("abort", onOuterAbort);
    result.restored = outcome.kind === "restored" || outcome.kind === "unchanged";
    if (!result.restored) {
      // Only possible if the file was edited while the experiment ran: keep the backup. This
      // error wins over one from the experiment: the learner's file is what must not be lost.
      // biome-ignore lint/correctness/noUnsafeFinally: see the comment above
      throw new CourseError("FAULT_BACKUP_CONFLICT", `实验期间 ${fault.file} 被改动过，没有自动恢复；原文件保存在 ${BACKUP_DIR}/${ORIGINAL_FILE}`);
    }
  }
  say("这一轮测试跑完了（结果在下面）；已逐字节恢复你的文件，再编译运行一次，确认恢复原样……");
  const after = await runSuite(root, manifest, suiteOptions(signal));
  result.after = labCount(after, fault.lab);
  result.chapterAfter = after.labs.map((lab) => ({ id: lab.id, passed: lab.passed, total: lab.total }));
  return result;
}
