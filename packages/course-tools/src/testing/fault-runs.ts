/**
 * The one runner of a chapter's catalog of mistakes (`course/faults.ts`), for `verify`'s faults
 * step, `fault NN --all` and `mistakes NN`: proves, on a scratch copy of the reference, that
 * each entry is caught — a fault by the tests it names (`killedBy`), with the lab's own tests
 * alone, any other entry by any focused test failing — and that undoing a fault gives the
 * reference back. An entry is made in its base: the reference, or a kept solution (`bases`).
 *
 * One scratch copy of the course package (`src`, `test`, `tsconfig.json`, `package.json`,
 * and `tsconfig.base.json`, `node_modules` linked) holds every fault at once: fault k's
 * edited teaching file is written beside the original as `<name>.m<k>.ts`, so a single
 * compiler run type-checks and builds all of them (a fault that does not compile is named
 * by the compiler's diagnostics), and each fault's run imports its own edit through a copy
 * of the compiled focused test whose import of the teaching file names `<name>.m<k>.js`.
 * Faults of one lab share a test process (`faultBatches`): each fault's test copies run in
 * turn, then the untouched tests as a sentinel; a fault killed there, with the sentinel green
 * after it, is decided. Any other fault (it survived, crashed or hung the process, or its batch
 * spoiled the process for the sentinel) runs its lab's named tests in a process of its own,
 * which alone decides it. Before and after, the
 * untouched reference runs every focused test: green before (the baseline), green after
 * (the restore check, with each fault's undo proven byte-exact). The source tree is only
 * read; the scratch copy is always removed.
 */
import { existsSync } from "node:fs";
import { createHash } from "node:crypto";
import { readdir, readFile, readlink, rm, writeFile } from "node:fs/promises";
import fse from "fs-extra";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CourseError } from "../core/errors.js";
import { distPathOf, packageDirOf } from "../core/paths.js";
import { exactNamesPattern, labsNamePattern } from "../course/lab-names.js";
import { type Fault, injectFault, type Mistake, REFERENCE_BASE } from "../course/faults.js";
import { testBelongsToLab } from "../course/lab-names.js";
import type { TestRecord, TestRun } from "./results.js";
import { describeRed, runSuite, topLevelResults } from "./suite.js";
import { buildCourse } from "./compiler.js";
import { declarationPathOf, firstDeclarationDifference } from "./declarations.js";
import { FAULT_RUN_TIMEOUT_MS } from "./limits.js";
import { prepareTests } from "./tests.js";
import type { ChapterManifest } from "../course/manifest.js";
import { linkNodeModules, makeScratchDir, removeScratchDir } from "../core/scratch.js";

/** What the runner needs of an entry: a fault, or any mistake of a catalog (`base` and `killedBy` optional). */
export type RunEntry = Pick<Mistake, "id" | "lab" | "file" | "find" | "replace" | "in"> & { base?: string; killedBy?: string[] };

/** What became of one fault. */
export interface FaultResult {
  id: string;
  lab: string;
  /**
   * `killed`: every test named in `killedBy` failed (an entry naming none: some focused test
   * failed, or its test run crashed or hung), and the suite was green before;
   * `survived`: at least one of them passed (none failed); `error`: it could not be decided
   * (the edit does not compile, or a fault's test file crashed), see `detail`; `compiled`: a
   * compile-only run built it (no test ran).
   */
  status: "killed" | "survived" | "error" | "compiled";
  /** The named tests that failed with the fault in place (an entry naming none: every test that failed). */
  killedBy: string[];
  /** The tests the entry names (resolved from names or prefixes); empty when it names none. */
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
  /** The entries to run (validated, see `authorFaults` and `catalogMistakes`), in order. */
  faults: readonly RunEntry[];
  /** The text of each kept solution an entry names as its `base` (by name, without its `@ts-nocheck` line). */
  bases?: ReadonlyMap<string, string>;
  /** Build every edit, run no test (a catalog's writer checks their catalog without seeing a test): results are `compiled` or `error`. */
  compileOnly?: boolean;
  /** The `node_modules` folder the scratch copies link to. */
  nodeModules: string;
  /** Faults whose tests run at the same time; default `defaultWorkers()`. */
  workers?: number;
  /** Faults of one lab share test processes (see the module comment); false runs each fault alone (what `bench/faults.ts` compares). Default true. */
  batched?: boolean;
  /** Time limit of one fault's test run, in ms; default `FAULT_RUN_TIMEOUT_MS`. */
  timeoutMs?: number;
  /** Where scratch folders are made; default the OS temp folder. */
  scratchParent?: string;
  signal?: AbortSignal;
  /** Called as each fault finishes (in completion order, which differs from the given order with several workers). */
  onResult?(result: FaultResult): void;
  /**
   * Correct solutions of the chapter's teaching files (the manifest's `solutions`, read), run
   * in the same scratch copy and build: each must compile, pass every focused test and
   * declare the public surface of the reference it replaces (see `SolutionResult`).
   */
  solutions?: readonly KeptSolution[];
}

/** A kept solution: its name (the file's, for messages), the teaching file it replaces and its text. */
export interface KeptSolution {
  name: string;
  /** The teaching file (repo-relative, a starter's `to`) the text stands in for. */
  replaces: string;
  text: string;
}

/**
 * The kept solution a manifest's `solutions` entry names, from the text it is stored with:
 * named after its file, without the first line that may switch type checks off where it is
 * stored (outside the package), never where it is built.
 */
export function keptSolution(entry: { file: string; replaces: string }, stored: string): KeptSolution {
  return { name: path.posix.basename(entry.file, ".ts"), replaces: entry.replaces, text: stored.replace(/^\/\/ @ts-nocheck[^\n]*\n/, "") };
}

/** What became of one kept solution. */
export interface SolutionResult {
  name: string;
  /** Compiled, every focused test passed (as many as the reference has), and the same public declarations. */
  ok: boolean;
  /** Focused tests passed, of the reference's. */
  passed: number;
  total: number;
  /** Why it is not ok: the first compile error, the failing tests, the first declaration that differs. */
  detail?: string;
  /** Per lab: focused tests of that lab passed, of the reference's. */
  labs?: { id: string; passed: number; total: number }[];
}

/**
 * Two test runs at a time when there are two cores or more, else one: each run is one node
 * process, and a third could only contend with the other two on two cores.
 */
export function defaultWorkers(): number {
  return Math.min(2, Math.max(1, os.availableParallelism()));
}

/**
 * The test names `fault.killedBy` stands for, among `names`: an entry equal to a name is
 * that name, otherwise it must be the prefix of exactly one name. Throws `FAULT_INVALID`.
 */
export function resolveKilledBy(fault: Pick<RunEntry, "id" | "killedBy">, names: readonly string[]): string[] {
  return (fault.killedBy ?? []).map((entry) => {
    if (names.includes(entry)) return entry;
    const matches = names.filter((name) => name.startsWith(entry));
    if (matches.length === 1) return matches[0]!;
    const found = matches.length === 0 ? "没有这样的测试" : `匹配到 ${matches.length} 项：${matches.map((m) => `“${m}”`).join("、")}`;
    throw new CourseError("FAULT_INVALID", `故障 ${fault.id}：killedBy “${entry}” 应为一项测试的名称或唯一前缀，但${found}`);
  });
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
      // fs-extra's copy, not Node 20's experimental fs.cp (see the dependency table in docs/dependencies.md).
      await fse.copy(from, path.join(dir, ...rel.split("/")), { filter: (src) => !/[\\/](dist|node_modules)$/.test(src) });
    }
    await linkNodeModules(dir, nodeModules);
    return dir;
  } catch (error) {
    await removeScratchDir(dir);
    throw error;
  }
}

/** Where fault `index`'s edit of `file` (repo-relative `.ts`) is written in the scratch copy: beside it, as `<name>.m<index>.ts`. */
export function mutantPath(file: string, index: number): string {
  return file.replace(/\.ts$/, `.m${index}.ts`);
}

/**
 * The compiled focused test `compiledTest` (its text) importing fault `index`'s edit of
 * `teachingFile` instead of the teaching file itself: every import specifier that names the
 * compiled teaching file, relative to the test, is pointed at the compiled edit. Undefined
 * when the test does not import the teaching file directly (then the fault cannot be seen).
 */
export function retargetImports(compiledTest: string, testDist: string, teachingFile: string, index: number): string | undefined {
  let specifier = path.posix.relative(path.posix.dirname(testDist), distPathOf(teachingFile));
  if (!specifier.startsWith(".")) specifier = `./${specifier}`;
  const replacement = specifier.replace(/\.js$/, `.m${index}.js`);
  let found = false;
  const text = compiledTest.replace(/(["'])([^"'\n]+)\1/g, (whole, quote: string, value: string) => {
    if (value !== specifier) return whole;
    found = true;
    return `${quote}${replacement}${quote}`;
  });
  return found ? text : undefined;
}

/** The compiler's diagnostics that name `file` (repo-relative), e.g. `packages/p/src/x.m3.ts(12,3): error …`. */
function diagnosticsOf(diagnostics: readonly string[], file: string): string[] {
  return diagnostics.filter((d) => d.startsWith(`${file}(`) || d.startsWith(`${file}:`));
}

/** The top-level tests of a run that did not pass (or, in a run the time limit ended, never reported). */
function failedTests(run: TestRun, expected: readonly string[]): string[] {
  const tests = topLevelResults(run.records);
  const failed = [...tests].filter(([, ok]) => !ok).map(([name]) => name);
  if (run.timedOut !== undefined) failed.push(...expected.filter((name) => !tests.has(name)));
  return [...new Set(failed)];
}

/** One run of a fault's compiled tests for `pattern`, which selects `expected` top-level tests (when known). */
async function runFaultTests(
  dir: string,
  tests: readonly string[],
  pattern: string | undefined,
  expected: number | undefined,
  options: { signal?: AbortSignal; timeoutMs: number; oneProcess?: boolean },
): Promise<TestRun> {
  const prepared = await prepareTests(dir, tests, {
    ...options,
    ...(pattern === undefined ? {} : { namePattern: pattern }),
    ...(expected === undefined ? {} : { expectedTests: expected }),
  });
  return prepared.run();
}

/** Runs `work` on every item, at most `limit` at a time; the results keep the items' order. */
async function inPool<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < items.length; index = next++) results[index] = await work(items[index]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * Runs every fault of `options.faults` in author mode (see the module comment) and returns
 * the results in the given order. Throws `FAULT_DRIFTED` (a `find` no longer matches the
 * reference), `FAULT_INVALID` (a `killedBy` names no single test, a focused test that does
 * not import the edited file), `FAULT_BASELINE_RED` (the reference is not green to begin
 * with), `ABORTED`. Never touches `sourceRoot`.
 */
export async function runAuthorFaults(options: AuthorRunOptions): Promise<FaultResult[]> {
  return (await runAuthorChecks(options)).faults;
}

/**
 * `runAuthorFaults`, and the kept solutions of `options.solutions` in the same scratch copy
 * and build (one compiler run for every fault and every solution). Throws as `runAuthorFaults`.
 */
export async function runAuthorChecks(options: AuthorRunOptions): Promise<{ faults: FaultResult[]; solutions: SolutionResult[] }> {
  const { manifest, signal, faults } = options;
  const solutions = options.solutions ?? [];
  if (faults.length === 0 && solutions.length === 0) return { faults: [], solutions: [] };
  for (const solution of solutions) {
    if (!manifest.starters.some((starter) => starter.to === solution.replaces)) {
      throw new CourseError("FAULT_INVALID", `解答 ${solution.name}：${solution.replaces} 不是第 ${manifest.id} 章的教学文件（starter）`);
    }
  }
  const dir = await prepareScratch(options.sourceRoot, manifest, options.nodeModules, options.scratchParent);
  const runOptions = { ...(signal ? { signal } : {}), timeoutMs: options.timeoutMs ?? FAULT_RUN_TIMEOUT_MS };
  try {
    // Drift is checked before the build: it is the cheapest and the clearest error.
    const originals = new Map<string, string>();
    const edits: { fault: RunEntry; text: string; bytesBack: boolean }[] = [];
    for (const fault of faults) {
      const file = path.join(dir, ...fault.file.split("/"));
      if (!originals.has(fault.file)) {
        if (!existsSync(file)) throw new CourseError("FAULT_INVALID", `故障 ${fault.id}：找不到要修改的文件 ${fault.file}`);
        originals.set(fault.file, await readFile(file, "utf8"));
      }
      const base = fault.base ?? REFERENCE_BASE;
      const original = base === REFERENCE_BASE ? originals.get(fault.file)! : options.bases?.get(base);
      if (original === undefined) throw new CourseError("FAULT_INVALID", `${fault.id}：没有名为 ${base} 的解答（base）`);
      const injected = injectFault(original, fault);
      const text = injected.text;
      edits.push({ fault, text, bytesBack: Buffer.from(injected.undo(text), "utf8").equals(Buffer.from(original, "utf8")) });
    }
    for (const [index, edit] of edits.entries()) await writeFile(path.join(dir, ...mutantPath(edit.fault.file, index).split("/")), edit.text);
    // Each kept solution after the faults, as one more edit of the teaching file it replaces: the whole file.
    const solutionFiles = solutions.map((solution, j) => mutantPath(solution.replaces, edits.length + j));
    for (const [j, solution] of solutions.entries()) await writeFile(path.join(dir, ...solutionFiles[j]!.split("/")), solution.text);

    // One compiler run builds the reference and every edit; only the edits may have errors.
    const diagnostics: string[] = [];
    for (const tsconfig of new Set(manifest.focusedTests.map((f) => `${packageDirOf(f)}/tsconfig.json`))) {
      const build = await buildCourse(dir, tsconfig, signal);
      if (signal?.aborted) throw new CourseError("ABORTED", "已中断");
      diagnostics.push(...build.diagnostics);
    }
    const mutantFiles = [...edits.map((edit, index) => mutantPath(edit.fault.file, index)), ...solutionFiles];
    const foreign = diagnostics.filter((d) => !mutantFiles.some((file) => diagnosticsOf([d], file).length > 0));
    if (foreign.length > 0) throw new CourseError("FAULT_BASELINE_RED", `注入故障之前参考实现就无法编译：${foreign[0]}`);
    if (options.compileOnly === true) {
      return {
        faults: edits.map((edit, index): FaultResult => {
          const errors = diagnosticsOf(diagnostics, mutantFiles[index]!);
          return {
            id: edit.fault.id,
            lab: edit.fault.lab,
            status: errors.length === 0 ? "compiled" : "error",
            killedBy: [],
            expected: [],
            alsoFailed: [],
            restored: edit.bytesBack,
            ...(errors.length === 0 ? {} : { detail: `无法编译：${errors[0]!.replace(mutantFiles[index]!, edit.fault.file)}` }),
          };
        }),
        solutions: [],
      };
    }

    const baseline = await runSuite(dir, manifest, { ...runOptions, prebuilt: true });
    if (!baseline.ok) {
      throw new CourseError(
        "FAULT_BASELINE_RED",
        `注入故障之前参考实现就没有全部通过（${describeRed(baseline)}）；先让 ${manifest.focusedTests.join("、")} 全绿`,
      );
    }
    const names = [...baseline.tests.keys()];
    const untouched = await referenceDigest(dir, manifest);
    /** The focused tests importing edit `index` of `file` instead of the file (copies written beside them), and their removal. */
    const testsOf = async (file: string, index: number) => {
      const tests: string[] = [];
      for (const test of manifest.focusedTests) {
        const compiled = distPathOf(test);
        const text = retargetImports(await readFile(path.join(dir, ...compiled.split("/")), "utf8"), compiled, file, index);
        if (text === undefined) continue;
        const copy = compiled.replace(/\.js$/, `.m${index}.js`);
        // Without its source map, node names the copy itself as the file of each of its tests (a batch tells faults apart by it).
        await writeFile(path.join(dir, ...copy.split("/")), text.replace(SOURCE_MAP_COMMENT, ""));
        tests.push(copy);
      }
      return {
        tests,
        originals: tests.map((copy) => copy.replace(/\.m\d+\.js$/, ".js")),
        remove: () => Promise.all(tests.map((copy) => rm(path.join(dir, ...copy.split("/")), { force: true }))),
      };
    };

    /**
     * Every kept solution: compiled, every focused test run and passed, and its declarations the
     * reference's. The focused tests that import the replaced file import the solution instead;
     * the others run beside them as they are, so that every focused test is counted.
     */
    const runSolutions = async (kept: readonly KeptSolution[], files: readonly string[], first: number): Promise<SolutionResult[]> => {
      if (kept.length === 0) return [];
      // The one build above emitted declarations for the reference and every edit (`declaration: true`); each is read on its own.
      const declarationsOf = (file: string) => readFile(path.join(dir, ...declarationPathOf(file).split("/")), "utf8").catch(() => undefined);
      return inPool(kept, workers, async (solution) => {
        const j = kept.indexOf(solution);
        const teachingFile = solution.replaces;
        const result: SolutionResult = { name: solution.name, ok: false, passed: 0, total: names.length };
        const errors = diagnosticsOf(diagnostics, files[j]!);
        if (errors.length > 0) return { ...result, detail: `无法编译：${errors[0]!.replace(files[j]!, teachingFile)}` };
        const { tests, originals, remove } = await testsOf(teachingFile, first + j);
        const others = manifest.focusedTests.map(distPathOf).filter((test) => !originals.includes(test));
        const run = await runFaultTests(dir, [...tests, ...others], undefined, names.length, runOptions);
        await remove();
        if (signal?.aborted) throw new CourseError("ABORTED", "已中断");
        const passedTests = [...topLevelResults(run.records)].filter(([, ok]) => ok).map(([name]) => name);
        const failed = names.filter((name) => !passedTests.includes(name));
        const reference = await declarationsOf(teachingFile);
        const mine = await declarationsOf(files[j]!);
        const difference =
          reference === undefined || mine === undefined ? "声明文件没有生成" : firstDeclarationDifference(reference, mine, ["参考实现", "这份解答"]);
        const problems = [
          ...(run.crashes.length > 0 ? [`测试文件崩溃：${run.crashes[0]!.stderr.trim().split("\n")[0] ?? ""}`] : []),
          ...(failed.length > 0 ? [`没有通过：${failed.map((name) => `“${name}”`).join("、")}`] : []),
          ...(difference === undefined ? [] : [`公开接口与参考实现不同，${difference}`]),
        ];
        return {
          ...result,
          ok: problems.length === 0,
          passed: passedTests.filter((name) => names.includes(name)).length,
          labs: manifest.labs.map((lab) => {
            const ofLab = names.filter((name) => testBelongsToLab(name, lab.id));
            return { id: lab.id, passed: ofLab.filter((name) => passedTests.includes(name)).length, total: ofLab.length };
          }),
          ...(problems.length > 0 ? { detail: problems.join("；") } : {}),
        };
      });
    };

    const expectedOf = edits.map((edit) => resolveKilledBy(edit.fault, names));
    /** An entry that names no test: any focused test failing kills it (every test of the files that see its edit runs). */
    const anyTest = (index: number) => edits[index]!.fault.killedBy === undefined;
    const compiles = (index: number) => diagnosticsOf(diagnostics, mutantFiles[index]!).length === 0;
    const workers = options.workers ?? defaultWorkers();

    /**
     * Faults of one lab and file, several in one test process (`runBatch`): each fault's test
     * copies in turn, then the untouched tests as a sentinel. A fault is decided there only when
     * it is killed and the sentinel is green afterwards; everything else runs on its own below.
     */
    const killedInBatch = new Map<number, FaultResult>();
    const runBatch = async (batch: readonly number[]): Promise<void> => {
      const copies = new Map<number, Awaited<ReturnType<typeof testsOf>>>();
      try {
        for (const index of batch) copies.set(index, await testsOf(edits[index]!.fault.file, index));
        const sentinel = copies.get(batch[0]!)!.originals;
        if ([...copies.values()].some((c) => c.tests.length === 0)) return; // FAULT_INVALID, said by the fault's own run
        const union = [...new Set(batch.flatMap((index) => expectedOf[index]!))];
        const any = anyTest(batch[0]!); // a batch is all of one kind (`faultBatches`)
        const files = [...batch.flatMap((index) => copies.get(index)!.tests), ...sentinel];
        const run = await runFaultTests(dir, files, any ? undefined : exactNamesPattern(union), any ? undefined : (batch.length + 1) * union.length, {
          ...runOptions,
          oneProcess: true,
        });
        if (signal?.aborted) throw new CourseError("ABORTED", "已中断");
        if (run.timedOut !== undefined || run.crashes.length > 0) return;
        const fileOf = (record: TestRecord) => (record.file === undefined ? undefined : recordPath(record.file));
        const resultsOf = (members: readonly string[]) => {
          const wanted = new Set(members.map((member) => path.join(dir, ...member.split("/"))));
          return topLevelResults(run.records.filter((record) => wanted.has(fileOf(record) ?? "")));
        };
        // The sentinel's records are every one no copy declares (node may name their file by its source map).
        const copied = new Set(files.slice(0, files.length - sentinel.length).map((member) => path.join(dir, ...member.split("/"))));
        const green = topLevelResults(run.records.filter((record) => fileOf(record) !== undefined && !copied.has(fileOf(record)!)));
        if (any ? green.size === 0 || [...green.values()].includes(false) : !union.every((name) => green.get(name) === true)) return;
        for (const index of batch) {
          const tests = resultsOf(copies.get(index)!.tests);
          const failed = [...tests].filter(([, ok]) => !ok).map(([name]) => name);
          const expected = expectedOf[index]!;
          if (any ? failed.length === 0 : !expected.every((name) => tests.get(name) === false)) continue;
          const { fault } = edits[index]!;
          killedInBatch.set(index, {
            id: fault.id,
            lab: fault.lab,
            status: "killed",
            killedBy: any ? failed : expected,
            expected,
            alsoFailed: any ? [] : failed.filter((name) => !expected.includes(name)),
            restored: edits[index]!.bytesBack,
          });
        }
      } finally {
        await Promise.all([...copies.values()].map((c) => c.remove()));
      }
    };
    if (options.batched !== false) await inPool(faultBatches(edits, compiles, workers), workers, runBatch);

    const results = await inPool(edits, workers, async (edit) => {
      const index = edits.indexOf(edit);
      const killed = killedInBatch.get(index);
      if (killed !== undefined) return killed;
      const { fault } = edit;
      const expected = expectedOf[index]!;
      const result: FaultResult = { id: fault.id, lab: fault.lab, status: "error", killedBy: [], expected, alsoFailed: [], restored: edit.bytesBack };
      const errors = diagnosticsOf(diagnostics, mutantFiles[index]!);
      if (errors.length > 0) {
        result.detail = `注入后无法编译（故障应是能编译的逻辑错误）：${errors[0]!.replace(mutantFiles[index]!, fault.file)}`;
      } else {
        const { tests, remove } = await testsOf(fault.file, index);
        if (tests.length === 0) throw new CourseError("FAULT_INVALID", `故障 ${fault.id}：聚焦测试没有直接 import ${fault.file}，看不到对它的修改`);
        if (anyTest(index)) {
          const run = await runFaultTests(dir, tests, undefined, undefined, runOptions);
          await remove();
          if (signal?.aborted) throw new CourseError("ABORTED", "已中断");
          result.killedBy = failedTests(run, []);
          const ended =
            run.crashes.length > 0
              ? `测试文件崩溃：${run.crashes[0]!.file}`
              : run.timedOut === undefined
                ? undefined
                : `超过 ${run.timedOut.seconds} 秒的时间上限`;
          result.status = result.killedBy.length > 0 || ended !== undefined ? "killed" : "survived";
          if (ended !== undefined) result.detail = ended;
          else if (result.status === "survived") result.detail = "没有任何测试失败";
          return result;
        }
        // The named tests first; only when one of them does not see the mistake is the rest
        // of the lab run too, to say which other test does.
        const named = await runFaultTests(dir, tests, exactNamesPattern(expected), expected.length, runOptions);
        const decided = named.crashes.length > 0 || named.timedOut !== undefined || expected.every((name) => failedTests(named, expected).includes(name));
        const run = decided
          ? named
          : await runFaultTests(dir, tests, labsNamePattern([fault.lab]), baseline.labs.find((l) => l.id === fault.lab)?.total, runOptions);
        await remove();
        if (signal?.aborted) throw new CourseError("ABORTED", "已中断");
        if (run.crashes.length > 0) {
          result.detail = `注入后测试文件崩溃：${run.crashes[0]!.file} ${run.crashes[0]!.stderr.trim().split("\n")[0] ?? ""}`;
        } else {
          const failed = [...new Set([...failedTests(named, expected), ...failedTests(run, expected)])];
          result.killedBy = expected.filter((name) => failed.includes(name));
          result.alsoFailed = failed.filter((name) => !expected.includes(name));
          result.status = result.killedBy.length === expected.length ? "killed" : "survived";
          if (result.status === "survived") {
            const missed = expected
              .filter((name) => !failed.includes(name))
              .map((n) => `“${n}”`)
              .join("、");
            result.detail = failed.length === 0 ? `没有任何测试失败（${missed} 仍通过）` : `${missed} 仍通过`;
          } else if (run.timedOut !== undefined) {
            result.detail = `超过 ${run.timedOut.seconds} 秒的时间上限，测试进程被结束`;
          }
        }
      }
      return result;
    });
    const solutionResults = await runSolutions(solutions, solutionFiles, edits.length);

    // The restore check: every edit undoes to the reference byte for byte, and the reference is
    // still green: the tree the baseline ran green on is still there byte for byte (each fault
    // only added files of its own, removed again), or else the suite runs once more.
    const after = (await referenceDigest(dir, manifest)) === untouched ? baseline : await runSuite(dir, manifest, { ...runOptions, prebuilt: true });
    for (const result of results) {
      const lab = after.labs.find((l) => l.id === result.lab);
      if (lab) result.restoredLab = { passed: lab.passed, total: lab.total };
      const bytesBack = result.restored;
      result.restored = bytesBack && after.ok;
      if (!result.restored) {
        const why = bytesBack ? describeRed(after) : "撤销后的文件与原文件不一致";
        result.detail = [result.detail, `恢复检查失败：${why}`].filter(Boolean).join("；");
      }
      options.onResult?.(result);
    }
    return { faults: results, solutions: solutionResults };
  } finally {
    await removeScratchDir(dir);
  }
}

/** The compiler's source map comment of a compiled file. */
const SOURCE_MAP_COMMENT = /^\/\/# sourceMappingURL=.*$/m;

/** A record's file as a path (node names it by path; a `file:` URL is taken too). */
function recordPath(file: string): string {
  return file.startsWith("file:") ? fileURLToPath(file) : file;
}

/** Most faults one batch process runs: a batch that cannot be decided costs each of its faults a run of its own. */
export const FAULT_BATCH_SIZE = 8;

/**
 * The faults that compile, as batches of at most `FAULT_BATCH_SIZE` of one lab and one file
 * each, either all naming their tests or all naming none (their tests share one name pattern
 * and one sentinel), split so that `workers`
 * processes have about the same number of faults each.
 */
export function faultBatches(
  edits: readonly { fault: Pick<RunEntry, "lab" | "file" | "killedBy"> }[],
  compiles: (index: number) => boolean,
  workers: number,
): number[][] {
  const groups = new Map<string, number[]>();
  for (const [index, { fault }] of edits.entries()) {
    if (!compiles(index)) continue;
    const key = `${fault.lab}\0${fault.file}\0${fault.killedBy === undefined ? "any" : "named"}`;
    groups.set(key, [...(groups.get(key) ?? []), index]);
  }
  const total = [...groups.values()].reduce((sum, group) => sum + group.length, 0);
  const size = Math.max(2, Math.min(FAULT_BATCH_SIZE, Math.ceil(total / Math.max(1, workers * 2))));
  const batches: number[][] = [];
  for (const group of groups.values()) {
    const count = Math.ceil(group.length / size);
    for (let i = 0; i < count; i++) batches.push(group.slice(Math.round((i * group.length) / count), Math.round(((i + 1) * group.length) / count)));
  }
  return batches;
}

/** Files of a fault's own (`<name>.m<k>.ts`, its build and its test copies), which the reference tree never holds. */
const MUTANT_FILE = /\.m\d+\.(?:ts|js|d\.ts|js\.map|d\.ts\.map)$/;

/** A digest of every file of the chapter's packages in `dir` but the faults' own: equal digests, the same reference tree. */
async function referenceDigest(dir: string, manifest: ChapterManifest): Promise<string> {
  const hash = createHash("sha256");
  const walk = async (rel: string): Promise<void> => {
    for (const entry of (await readdir(path.join(dir, ...rel.split("/")), { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const child = `${rel}/${entry.name}`;
      if (entry.isDirectory()) await walk(child);
      else if (entry.isSymbolicLink())
        hash
          .update(child)
          .update("\0")
          .update(await readlink(path.join(dir, ...child.split("/"))))
          .update("\0");
      else if (!MUTANT_FILE.test(entry.name))
        hash
          .update(child)
          .update("\0")
          .update(await readFile(path.join(dir, ...child.split("/"))))
          .update("\0");
    }
  };
  for (const pkg of [...new Set(manifest.focusedTests.map(packageDirOf))].sort()) await walk(pkg);
  return hash.digest("hex");
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
