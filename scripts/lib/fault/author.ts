/**
 * Author mode of `fault`: proves, on scratch copies of the reference, that every
 * documented fault is caught by the test the manifest names, and that undoing it makes
 * the suite green again.
 *
 * For each scratch folder (one per worker): copy the course package (`src`, `test`,
 * `tsconfig.json`, `package.json`) and `tsconfig.base.json` from `sourceRoot`, link
 * `node_modules`, build and run the focused tests once unpatched (the baseline must be
 * green), then per fault: apply → incremental build → run → undo → build → run (the
 * restore check, which is also the next fault's baseline). The source tree is only read;
 * scratch folders are always removed.
 */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import fse from "fs-extra";
import os from "node:os";
import path from "node:path";
import { CourseError } from "../core/errors.js";
import { applyFault, unapplyFault, type Fault } from "./catalog.js";
import { summarizeLabs, type LabResult, type TestRecord } from "../lab/results.js";
import { buildCourse } from "../lab/build.js";
import { distPathOf, packageDirOf, prepareTests, type TestRun } from "../lab/runner.js";
import type { ChapterManifest } from "../course/manifest.js";
import { linkNodeModules, makeScratchDir, removeScratchDir } from "../core/scratch.js";

/** What became of one fault. */
export interface FaultResult {
  id: string;
  lab: string;
  /**
   * `killed`: every test named in `killedBy` failed (and the suite was green before);
   * `survived`: at least one of them passed; `error`: it could not be decided (the fault
   * does not compile, or the test file crashed), see `detail`.
   */
  status: "killed" | "survived" | "error";
  /** The named tests that failed with the fault in place. */
  killedBy: string[];
  /** The tests the manifest names (resolved from names or prefixes). */
  expected: string[];
  /** Other tests that failed too. */
  alsoFailed: string[];
  /** True when undoing the edit gave back the exact bytes and the suite was green again. */
  restored: boolean;
  /** The fault's lab after the restore: passed/total. */
  restoredLab?: { passed: number; total: number };
  detail?: string;
}

export interface AuthorRunOptions {
  /** The course tree to copy (the repo's working tree, or a folder holding a commit's tree). */
  sourceRoot: string;
  manifest: ChapterManifest;
  /** The faults to run (validated, see `authorFaults`), in order. */
  faults: readonly Fault[];
  /** The `node_modules` folder the scratch copies link to. */
  nodeModules: string;
  /** Scratch folders working in parallel (each with its own baseline); default `defaultWorkers()`. */
  workers?: number;
  /** Where scratch folders are made; default the OS temp folder. */
  scratchParent?: string;
  signal?: AbortSignal;
  /** Called as each fault finishes (in completion order, which differs from the given order with several workers). */
  onResult?(result: FaultResult): void;
}

/**
 * Two scratch folders when there are two cores or more, else one. Measured on the real
 * chapter 12 (12 faults, 2 cores): one folder 23 s, two folders 15–17 s; a third folder
 * cannot help on 2 cores, and a build or test run is short enough that more would only
 * contend.
 */
export function defaultWorkers(): number {
  return Math.min(2, Math.max(1, os.availableParallelism()));
}

/** The outermost tests of a run: name → passed. Skipped and todo tests are left out. */
export function topLevelResults(records: readonly TestRecord[]): Map<string, boolean> {
  const results = new Map<string, boolean>();
  for (const r of records) {
    if (r.path.length === 1 && !r.skip && !r.todo) results.set(r.path[0]!, r.ok && (results.get(r.path[0]!) ?? true));
  }
  return results;
}

/**
 * The test names `fault.killedBy` stands for, among `names`: an entry equal to a name is
 * that name, otherwise it must be the prefix of exactly one name. Throws `FAULT_INVALID`.
 */
export function resolveKilledBy(fault: Pick<Fault, "id" | "killedBy">, names: readonly string[]): string[] {
  return fault.killedBy.map((entry) => {
    if (names.includes(entry)) return entry;
    const matches = names.filter((name) => name.startsWith(entry));
    if (matches.length === 1) return matches[0]!;
    const found = matches.length === 0 ? "没有这样的测试" : `匹配到 ${matches.length} 项：${matches.map((m) => `“${m}”`).join("、")}`;
    throw new CourseError("FAULT_INVALID", `故障 ${fault.id}：killedBy “${entry}” 应为一项测试的名称或唯一前缀，但${found}`);
  });
}

/** One build and run of the focused tests in a scratch folder. */
export interface SuiteRun {
  ok: boolean;
  /** First compiler diagnostics when the build failed. */
  buildErrors?: string[];
  run?: TestRun;
  tests: Map<string, boolean>;
  labs: LabResult[];
}

/**
 * Builds `dir` incrementally and runs the chapter's focused tests; never throws for red
 * results (a run the time limit ended is red). Throws `ABORTED` when `options.signal` aborts,
 * after the test processes have ended and their temporary folder is gone.
 */
export async function runSuite(dir: string, manifest: ChapterManifest, options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<SuiteRun> {
  const { signal } = options;
  // The test processes start first, so node's start-up overlaps the build.
  const prepared = await prepareTests(dir, manifest.focusedTests.map(distPathOf), options);
  for (const tsconfig of new Set(manifest.focusedTests.map((f) => `${packageDirOf(f)}/tsconfig.json`))) {
    const build = await buildCourse(dir, tsconfig, signal).catch(async (error: unknown) => {
      await prepared.cancel();
      throw error;
    });
    if (signal?.aborted || !build.ok) {
      await prepared.cancel();
      if (signal?.aborted) throw new CourseError("ABORTED", "已中断");
      return { ok: false, buildErrors: build.diagnostics.slice(0, 3), tests: new Map(), labs: [] };
    }
  }
  const run = await prepared.run();
  if (signal?.aborted) throw new CourseError("ABORTED", "已中断");
  const tests = topLevelResults(run.records);
  const labs = summarizeLabs(manifest.labs, manifest.labs, run.records);
  const ok = run.crashes.length === 0 && run.timedOut === undefined && tests.size > 0 && [...tests.values()].every(Boolean) && labs.every((l) => l.status === "passed");
  return { ok, run, tests, labs };
}

/** Why a run is not green, in one line. */
export function describeRed(suite: SuiteRun): string {
  if (suite.buildErrors) return `编译失败：${suite.buildErrors[0] ?? "(没有诊断信息)"}`;
  const crash = suite.run?.crashes[0];
  if (crash) return `${crash.file} 运行崩溃：${crash.stderr.trim().split("\n")[0] ?? ""}`;
  const failed = [...suite.tests].filter(([, ok]) => !ok).map(([name]) => `“${name}”`);
  if (failed.length > 0) return `失败的测试：${failed.join("、")}`;
  const lab = suite.labs.find((l) => l.status !== "passed");
  return lab ? `Lab ${lab.id} ${lab.passed}/${lab.total}：${lab.firstFailure?.message ?? ""}` : "没有运行任何测试";
}

/**
 * Copies what a build of the course package needs from `sourceRoot` into a new scratch
 * folder and links `node_modules`. Returns the folder (registered for cleanup); when
 * anything fails, the folder is removed before the error is passed on.
 */
export async function prepareScratch(sourceRoot: string, manifest: ChapterManifest, nodeModules: string, parent = os.tmpdir()): Promise<string> {
  const dir = await makeScratchDir(parent, `pi-course-fault-${manifest.id}-`);
  try {
    const packages = [...new Set(manifest.focusedTests.map(packageDirOf))];
    const wanted = ["tsconfig.base.json", ...packages.flatMap((pkg) => ["src", "test", "tsconfig.json", "package.json"].map((f) => `${pkg}/${f}`))];
    for (const rel of wanted) {
      const from = path.join(sourceRoot, ...rel.split("/"));
      if (!existsSync(from)) throw new CourseError("FAULT_SOURCE_MISSING", `${sourceRoot} 中缺少 ${rel}，无法建立故障实验的副本`);
      // fs-extra's copy, not Node 20's experimental fs.cp (see the README's dependency table).
      await fse.copy(from, path.join(dir, ...rel.split("/")), { filter: (src) => !/[\\/](dist|node_modules)$/.test(src) });
    }
    await linkNodeModules(dir, nodeModules);
    return dir;
  } catch (error) {
    await removeScratchDir(dir);
    throw error;
  }
}

/** Runs `faults` one after another in one scratch folder (see the module comment). */
async function runWorker(options: AuthorRunOptions, faults: readonly Fault[]): Promise<FaultResult[]> {
  const { manifest, signal } = options;
  const dir = await prepareScratch(options.sourceRoot, manifest, options.nodeModules, options.scratchParent);
  try {
    // Drift is checked before the first build: it is the cheapest and the clearest error.
    const originals = new Map<string, Buffer>();
    for (const fault of faults) {
      const file = path.join(dir, ...fault.file.split("/"));
      if (!originals.has(fault.file)) {
        if (!existsSync(file)) throw new CourseError("FAULT_INVALID", `故障 ${fault.id}：找不到要修改的文件 ${fault.file}`);
        originals.set(fault.file, await readFile(file));
      }
      applyFault(originals.get(fault.file)!.toString("utf8"), fault);
    }
    let green = await runSuite(dir, manifest, signal ? { signal } : {});
    if (!green.ok) {
      throw new CourseError("FAULT_BASELINE_RED", `注入故障之前参考实现就没有全部通过（${describeRed(green)}）；先让 ${manifest.focusedTests.join("、")} 全绿`);
    }
    const results: FaultResult[] = [];
    for (const [index, fault] of faults.entries()) {
      const names = [...green.tests.keys()];
      const expected = resolveKilledBy(fault, names);
      const file = path.join(dir, ...fault.file.split("/"));
      const original = originals.get(fault.file)!;
      const result: FaultResult = { id: fault.id, lab: fault.lab, status: "error", killedBy: [], expected, alsoFailed: [], restored: false };

      await writeFile(file, applyFault(original.toString("utf8"), fault));
      const broken = await runSuite(dir, manifest, signal ? { signal } : {});
      if (broken.buildErrors) {
        result.detail = `注入后无法编译（故障应是能编译的逻辑错误）：${broken.buildErrors[0] ?? ""}`;
      } else if (broken.run && broken.run.crashes.length > 0) {
        result.detail = `注入后测试文件崩溃：${describeRed(broken)}`;
      } else {
        const failed = [...broken.tests].filter(([, ok]) => !ok).map(([name]) => name);
        result.killedBy = expected.filter((name) => failed.includes(name));
        result.alsoFailed = failed.filter((name) => !expected.includes(name));
        result.status = result.killedBy.length === expected.length ? "killed" : "survived";
        if (result.status === "survived") {
          const missed = expected.filter((name) => !failed.includes(name)).map((n) => `“${n}”`).join("、");
          result.detail = failed.length === 0 ? `没有任何测试失败（${missed} 仍通过）` : `${missed} 仍通过`;
        }
      }

      const undone = Buffer.from(unapplyFault((await readFile(file)).toString("utf8"), fault), "utf8");
      const bytesBack = undone.equals(original);
      await writeFile(file, bytesBack ? undone : original);
      green = await runSuite(dir, manifest, signal ? { signal } : {});
      const lab = green.labs.find((l) => l.id === fault.lab);
      if (lab) result.restoredLab = { passed: lab.passed, total: lab.total };
      result.restored = bytesBack && green.ok;
      if (!result.restored) {
        const why = bytesBack ? describeRed(green) : "撤销后的文件与原文件不一致";
        result.detail = [result.detail, `恢复检查失败：${why}`].filter(Boolean).join("；");
      }
      results.push(result);
      options.onResult?.(result);
      if (!green.ok) {
        // Without a green suite the remaining faults cannot be judged: say so for each.
        for (const rest of faults.slice(index + 1)) {
          const skipped: FaultResult = { id: rest.id, lab: rest.lab, status: "error", killedBy: [], expected: [], alsoFailed: [], restored: false, detail: `没有运行：前一个故障 ${fault.id} 撤销后套件没有恢复全绿` };
          results.push(skipped);
          options.onResult?.(skipped);
        }
        break;
      }
    }
    return results;
  } finally {
    await removeScratchDir(dir);
  }
}

/**
 * Runs every fault of `options.faults` in author mode and returns the results in the
 * given order. Throws `FAULT_DRIFTED` (a `find` no longer matches the reference),
 * `FAULT_INVALID` (a `killedBy` names no single test), `FAULT_BASELINE_RED` (the
 * reference is not green to begin with), `ABORTED`. Never touches `sourceRoot`.
 */
export async function runAuthorFaults(options: AuthorRunOptions): Promise<FaultResult[]> {
  if (options.faults.length === 0) return [];
  const workers = Math.max(1, Math.min(options.workers ?? defaultWorkers(), options.faults.length));
  const shares: Fault[][] = Array.from({ length: workers }, () => []);
  options.faults.forEach((fault, i) => shares[i % workers]!.push(fault));
  const settled = await Promise.allSettled(shares.map((share) => runWorker(options, share)));
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failure) throw failure.reason;
  const byId = new Map(settled.flatMap((s) => (s.status === "fulfilled" ? s.value : [])).map((r) => [r.id, r]));
  return options.faults.map((fault) => byId.get(fault.id)!);
}

/** True when every fault was killed and restored. */
export function allKilledAndRestored(results: readonly FaultResult[]): boolean {
  return results.every((r) => r.status === "killed" && r.restored);
}

/** Labs that have no killed-and-restored fault (the catalog must cover every lab). */
export function labsWithoutFault(manifest: ChapterManifest, faults: readonly Pick<Fault, "lab">[]): string[] {
  return manifest.labs.map((l) => l.id).filter((id) => !faults.some((f) => f.lab === id));
}

/** One line per fault, as `fault` and `verify` print it. */
export function formatFaultResult(result: FaultResult): string {
  const quote = (names: readonly string[]) => names.map((n) => `“${n}”`).join("、");
  const outcome =
    result.status === "killed"
      ? `killed by ${quote(result.killedBy)}`
      : result.status === "survived"
        ? `SURVIVED（${result.detail ?? ""}）`
        : `ERROR（${result.detail ?? ""}）`;
  const lab = result.restoredLab ? `Lab ${result.lab} ${result.restoredLab.passed}/${result.restoredLab.total}` : `Lab ${result.lab} ?`;
  const restored = result.restored ? `restored: ${lab}` : `NOT restored: ${lab}`;
  return `fault ${result.id} (Lab ${result.lab}): ${outcome}; ${restored}`;
}
