/**
 * Learner mode of `fault`: the chapter's fault exercise, run on the learner's own
 * teaching file in a practice folder, which is always given back byte for byte.
 *
 * Order: restore what a previous run may have left behind → check the fault's lab is
 * green (else stop: the experiment assumes a finished lab) → insert the exercise line
 * next to the one line its anchor matches (or, when the anchor does not match exactly
 * once, explain the edit and stop without touching the file) → build and run → restore
 * → build and run again to show the lab green.
 *
 * Restoring survives interruptions: before the file is patched, its original bytes and
 * their sha256 go to `.pi-course/fault-backup/`; the file is restored on normal exit, on
 * an uncaught exception, on SIGINT/SIGTERM/SIGHUP, and — if the process was killed
 * outright — by the next run, which says so. Patch and restore are atomic renames, so
 * the file is always either the original or the patched text.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { CourseError } from "../core/errors.js";
import { runSuite, type SuiteRun } from "./author.js";
import { applyLearnerPatch, type LearnerFault } from "./catalog.js";
import type { ChapterManifest } from "../course/manifest.js";

/** Where the backup lives, relative to the practice folder. */
export const BACKUP_DIR = ".pi-course/fault-backup";
const STATE_FILE = "state.json";
const ORIGINAL_FILE = "original";

/** `state.json`: what was patched, and how to tell the original from the patched bytes. */
export interface BackupState {
  format: 1;
  fault: string;
  /** The patched file, relative to the practice folder, `/`-separated. */
  file: string;
  /** sha256 (hex) of the original bytes, which are stored next to this file. */
  sha256: string;
  /** sha256 of the patched bytes. */
  patchedSha256: string;
  /** The process that patched the file (a live one means another run is in progress). */
  pid: number;
  startedAt: string;
}

/** What `restoreFromBackupSync` found and did. */
export type RestoreOutcome =
  | { kind: "none" }
  /** The file held the patched (or no) bytes and now holds the original again. */
  | { kind: "restored"; state: BackupState }
  /** The file already held the original bytes; only the backup was removed. */
  | { kind: "unchanged"; state: BackupState }
  /** The file holds something else (edited since?): nothing was touched, the backup stays. */
  | { kind: "conflict"; state: BackupState; backup: string };

/** The sha256 of `data` as lowercase hex: how a backup tells the original bytes from the patched ones. */
export function sha256(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/**
 * Writes `data` to `file` through a temporary sibling and a rename, keeping the file's mode.
 * A failed write or rename removes the temporary sibling, so nothing is left beside the
 * learner's file.
 */
function writeAtomicSync(file: string, data: Uint8Array): void {
  const temp = `${file}.pi-course-${process.pid}.tmp`;
  const mode = existsSync(file) ? statSync(file).mode & 0o777 : 0o644;
  try {
    writeFileSync(temp, data, { mode });
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

function backupDir(root: string): string {
  return path.join(root, ...BACKUP_DIR.split("/"));
}

/**
 * Saves the original bytes of `file` and their hash before anything is patched. The
 * state file is written last: a backup counts only once it is complete.
 */
export function writeBackupSync(root: string, state: BackupState, original: Uint8Array): void {
  const dir = backupDir(root);
  if (existsSync(path.join(dir, STATE_FILE))) {
    throw new CourseError("FAULT_BUSY", `${BACKUP_DIR} 里已有一份未恢复的备份；先运行一次 fault 命令让它恢复`);
  }
  mkdirSync(dir, { recursive: true });
  writeAtomicSync(path.join(dir, ORIGINAL_FILE), original);
  writeAtomicSync(path.join(dir, STATE_FILE), Buffer.from(`${JSON.stringify(state, null, 2)}\n`));
}

/** The backup of `root`, or undefined when there is none. Throws `FAULT_BACKUP_CORRUPT`. */
export function readBackupSync(root: string): { state: BackupState; original: Buffer } | undefined {
  const dir = backupDir(root);
  const stateFile = path.join(dir, STATE_FILE);
  if (!existsSync(stateFile)) return undefined;
  let state: BackupState;
  let original: Buffer;
  try {
    state = JSON.parse(readFileSync(stateFile, "utf8")) as BackupState;
    original = readFileSync(path.join(dir, ORIGINAL_FILE));
  } catch (error) {
    throw new CourseError("FAULT_BACKUP_CORRUPT", `${BACKUP_DIR} 无法读取（${(error as Error).message}）；请手动检查你的教学文件`, { cause: error });
  }
  if (typeof state.file !== "string" || state.file.split("/").includes("..") || sha256(original) !== state.sha256) {
    throw new CourseError("FAULT_BACKUP_CORRUPT", `${BACKUP_DIR} 中的备份与记录的 sha256 不符；没有改动任何文件，请手动检查 ${String(state.file)}`);
  }
  return { state, original };
}

/**
 * Gives the file recorded in the backup its original bytes back, if it holds the patched
 * bytes (or is missing), then removes the backup. Leaves everything alone when the file
 * holds anything else (`conflict`). Synchronous, so it can run in an `exit` handler.
 */
export function restoreFromBackupSync(root: string): RestoreOutcome {
  const backup = readBackupSync(root);
  if (backup === undefined) return { kind: "none" };
  const { state, original } = backup;
  const file = path.join(root, ...state.file.split("/"));
  const current = existsSync(file) ? readFileSync(file) : undefined;
  const currentSha = current === undefined ? undefined : sha256(current);
  if (currentSha !== undefined && currentSha !== state.sha256 && currentSha !== state.patchedSha256) {
    return { kind: "conflict", state, backup: `${BACKUP_DIR}/${ORIGINAL_FILE}` };
  }
  const kind = currentSha === state.sha256 ? "unchanged" : "restored";
  if (kind === "restored") writeAtomicSync(file, original);
  if (sha256(readFileSync(file)) !== state.sha256) {
    return { kind: "conflict", state, backup: `${BACKUP_DIR}/${ORIGINAL_FILE}` };
  }
  rmSync(backupDir(root), { recursive: true, force: true });
  return { kind, state };
}

function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Run first by every learner-mode run: restores what a run that died between patch and
 * restore left behind. Throws `FAULT_BUSY` when the run that wrote the backup is still
 * alive, `FAULT_BACKUP_CONFLICT` when the file changed since (nothing is touched then).
 */
export function recoverFaultBackup(root: string): RestoreOutcome {
  const backup = readBackupSync(root);
  if (backup === undefined) return { kind: "none" };
  if (processAlive(backup.state.pid)) {
    throw new CourseError("FAULT_BUSY", `另一个 fault 命令（进程 ${backup.state.pid}）正在修改 ${backup.state.file}；等它结束后再试`);
  }
  const outcome = restoreFromBackupSync(root);
  if (outcome.kind === "conflict") {
    throw new CourseError(
      "FAULT_BACKUP_CONFLICT",
      `上一次故障实验（${outcome.state.fault}）没有正常结束，而 ${outcome.state.file} 之后又被改动过，所以没有自动恢复。` +
        `原文件保存在 ${outcome.backup}（sha256 ${outcome.state.sha256.slice(0, 12)}…）：需要时把它复制回去；确认当前文件就是你想要的之后，删除 ${BACKUP_DIR} 目录`,
    );
  }
  return outcome;
}

const SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

/**
 * Restores from the backup of `root` however this process ends: normal exit, uncaught
 * exception, or SIGINT/SIGTERM/SIGHUP (after restoring, `onSignal` runs — e.g. to stop
 * child processes — and the signal is raised again so the process ends as it would have).
 * Returns the function that uninstalls the guard.
 */
export function guardRestore(root: string, onSignal: (signal: NodeJS.Signals) => void = () => {}): () => void {
  const restore = () => {
    try {
      restoreFromBackupSync(root);
    } catch {
      // The next run reports a backup it cannot use; an exit path has nowhere to report to.
    }
  };
  const handlers = new Map<NodeJS.Signals, () => void>();
  const uninstall = () => {
    process.off("exit", restore);
    process.off("uncaughtExceptionMonitor", restore);
    for (const [signal, handler] of handlers) process.off(signal, handler);
  };
  for (const signal of SIGNALS) {
    const handler = () => {
      restore();
      uninstall();
      onSignal(signal);
      process.kill(process.pid, signal);
    };
    handlers.set(signal, handler);
    process.on(signal, handler);
  }
  process.on("exit", restore);
  process.on("uncaughtExceptionMonitor", restore);
  return uninstall;
}

/** How a learner-mode run ended. */
export type LearnerStatus =
  /** The named test(s) failed with the line in place. */
  | "killed"
  /** The lab stayed green with the line in place: the learner's code differs from what the exercise assumes. */
  | "survived"
  /** The fault's lab was not green before the experiment; nothing was changed. */
  | "not_ready"
  /** The anchor did not match exactly one line; the manual edit was explained, nothing was changed. */
  | "manual"
  /** The inserted line did not compile in the learner's code. */
  | "build_failed";

export interface LearnerRunResult {
  fault: string;
  lab: string;
  file: string;
  status: LearnerStatus;
  /** What a previous, interrupted run left behind and this run restored. */
  recovered?: RestoreOutcome;
  /** 1-based line number of the inserted line. */
  line?: number;
  /** Named tests that failed with the fault in place. */
  caughtBy: string[];
  /** The first failure of the fault's lab, as the learner would see it. */
  firstFailure?: { test: string; message: string };
  /** The lab before the experiment. */
  before?: { passed: number; total: number };
  /** True when the file holds its original bytes again (vacuously true when it was never patched). */
  restored: boolean;
  /** The lab after restoring. */
  after?: { passed: number; total: number };
  /** For `manual`: lines the anchor matched. */
  anchorLines?: number[];
}

export interface LearnerRunOptions {
  /** The practice folder. */
  root: string;
  manifest: ChapterManifest;
  fault: LearnerFault;
  signal?: AbortSignal;
  /** Progress lines for the learner (Chinese). */
  say?(line: string): void;
  /** Test seam: runs right after the file was patched and before it is built. */
  afterPatch?(): void | Promise<void>;
}

function labCount(suite: SuiteRun, lab: string): { passed: number; total: number } | undefined {
  const result = suite.labs.find((l) => l.id === lab);
  return result ? { passed: result.passed, total: result.total } : undefined;
}

/**
 * Runs `options.fault` on the learner's own file (see the module comment). Never leaves
 * the file changed: on every return and every throw the original bytes are back.
 */
export async function runLearnerFault(options: LearnerRunOptions): Promise<LearnerRunResult> {
  const { root, manifest, fault, signal } = options;
  const say = options.say ?? (() => {});
  const result: LearnerRunResult = { fault: fault.id, lab: fault.lab, file: fault.file, status: "manual", caughtBy: [], restored: true };
  const recovered = recoverFaultBackup(root);
  if (recovered.kind !== "none") result.recovered = recovered;

  say(`先确认 Lab ${fault.lab} 现在是绿的……`);
  const before = await runSuite(root, manifest, signal);
  result.before = labCount(before, fault.lab);
  const labBefore = before.labs.find((l) => l.id === fault.lab);
  if (before.buildErrors || labBefore?.status !== "passed") {
    result.status = "not_ready";
    if (labBefore?.firstFailure) result.firstFailure = { test: labBefore.firstFailure.test, message: labBefore.firstFailure.message };
    return result;
  }
  const file = path.join(root, ...fault.file.split("/"));
  const original = readFileSync(file);
  const patch = applyLearnerPatch(original.toString("utf8"), fault.learner);
  if (!patch.ok) {
    result.status = "manual";
    result.anchorLines = patch.lines;
    return result;
  }
  const names = [...before.tests.keys()];
  const expected = fault.killedBy.map((entry) => names.find((n) => n === entry) ?? names.find((n) => n.startsWith(entry)) ?? entry);

  const patched = Buffer.from(patch.text, "utf8");
  const state: BackupState = {
    format: 1,
    fault: fault.id,
    file: fault.file,
    sha256: sha256(original),
    patchedSha256: sha256(patched),
    pid: process.pid,
    startedAt: new Date().toISOString(),
  };
  const controller = new AbortController();
  const onOuterAbort = () => controller.abort();
  signal?.addEventListener("abort", onOuterAbort, { once: true });
  writeBackupSync(root, state, original);
  const unguard = guardRestore(root, () => controller.abort());
  result.restored = false;
  result.line = patch.line;
  try {
    writeAtomicSync(file, patched);
    say(`已在 ${fault.file} 第 ${patch.line} 行加入：${fault.learner.insert}`);
    await options.afterPatch?.();
    say("编译并运行测试……");
    const broken = await runSuite(root, manifest, controller.signal);
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
    const outcome = restoreFromBackupSync(root);
    unguard();
    signal?.removeEventListener("abort", onOuterAbort);
    result.restored = outcome.kind === "restored" || outcome.kind === "unchanged";
    if (!result.restored) {
      // Only possible if the file was edited while the experiment ran: keep the backup.
      throw new CourseError("FAULT_BACKUP_CONFLICT", `实验期间 ${fault.file} 被改动过，没有自动恢复；原文件保存在 ${BACKUP_DIR}/${ORIGINAL_FILE}`);
    }
  }
  say("已逐字节恢复你的文件，重新编译并运行……");
  const after = await runSuite(root, manifest, signal);
  result.after = labCount(after, fault.lab);
  return result;
}
