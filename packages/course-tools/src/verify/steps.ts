/**
 * The steps of the acceptance record, in record order (see `record.ts` for what each one
 * checks and the runner). Each step declares once what it needs from the steps before it
 * (`needs`: names of `Products`) and what it makes for the steps after it (`makes`); the
 * runner hands it exactly what it needs, typed, and runs it only when all of it is there,
 * so no step guards against a missing result itself. A step that cannot run reports the
 * reason its first missing product gives (`MISSING`).
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import fse from "fs-extra";
import path from "node:path";
import { isCourseError } from "../core/errors.js";
import { packageDirOf, distPathOf } from "../core/paths.js";
import { linkNodeModules } from "../core/scratch.js";
import { authorFaults, ruleSection, type Fault } from "../course/faults.js";
import { listTree, readFileAt, writeFiles, type GitOptions } from "../course/git.js";
import { resolveCheckpoint, type Checkpoint } from "../course/history.js";
import { labAddressProblems } from "../course/lab-address.js";
import { readStarters, type Starter } from "../course/starters.js";
import type { ChapterManifest } from "../course/manifest.js";
import { createPractice } from "../practice/folder.js";
import { buildCourse } from "../testing/compiler.js";
import { declarationPathOf, firstDeclarationDifference } from "../testing/declarations.js";
import { formatFaultResult, type KeptSolution, keptSolution, labsWithoutFault, runAuthorChecks } from "../testing/fault-runs.js";
import type { TestRun } from "../testing/results.js";
import { topLevelResults } from "../testing/suite.js";
import { runTestsShared } from "../testing/shared-runs.js";
import { runTests } from "../testing/tests.js";
import { injectExercise } from "./chapter-text.js";
import { exerciseCaught, exerciseMutants } from "./exercise-shapes.js";
import { errorDetail, STEP_TITLES, type CheckResult, type StepTitle } from "./checks.js";
import { describeSource, evaluateChapterTotal, evaluateFirstRed, evaluateReferenceLabs, short, textSections, throughChapterFiles } from "./evaluate.js";
import { declaredSignatures, signatureMismatches } from "./hint-signatures.js";
import { pastedAnswerProblem } from "./leak-probe.js";
import { faultReformatProblems } from "./reformat.js";
import { replayChapterText } from "./replay.js";
import { failureMessage, firstLine, topLevel } from "./runs.js";
import { cloneWorkingTree, type VerifiedSource } from "./snapshot.js";
import { evaluateStagedRed, stagedTeachingText } from "./staged.js";

/** What steps make for the steps after them. */
export interface Products {
  /**
   * The verified course: the private clone at the snapshot, the chapter on its teaching
   * history, and its starters at the target (hand-kept or derived, `course/starters.ts`).
   */
  course: { repo: string; source: VerifiedSource; checkpoint: Checkpoint; starters: Starter[] };
  /** The practice folder `practice` wrote, compiled or not. */
  practice: { dir: string; built: boolean };
  /** The same folder, when it compiles. */
  builtPractice: { dir: string };
  /** What the leak audit reports: `practice` refused the folder for a leak (`refusal`), or wrote it. */
  audit: { refusal?: string };
  /** The reference copy (the practice folder with the target's teaching files), when it compiles. */
  builtReference: { dir: string };
  /** The focused tests run against the bare starter (the first red step's run). */
  starterRun: TestRun;
  /** The focused tests run against the reference copy. */
  referenceRun: TestRun;
}

export type ProductName = keyof Products;

/** Why a step that needs a product did not run when it is missing: the step that makes it failed. */
export const MISSING: Readonly<Record<ProductName, string>> = {
  course: "history 失败",
  practice: "没有练习目录",
  builtPractice: "练习目录没有编译通过",
  audit: "没有练习目录",
  builtReference: "参考副本没有编译通过",
  starterRun: "starter 没有编译通过或没有运行",
  referenceRun: "参考实现的测试没有运行",
};

/** The scratch folder each product is (products that are no folder are absent). */
const FOLDER_OF: Partial<Record<ProductName, string>> = { practice: "practice", builtPractice: "practice", builtReference: "reference" };

/**
 * True when steps `a` and `b` work in one folder (they need or make a product that is it):
 * such steps never run at once, since one may copy, build or test there while the other does.
 */
export function sameFolder(a: Step, b: Step): boolean {
  const folders = (step: Step) => new Set([...step.needs, ...step.makes].map((p) => FOLDER_OF[p]).filter((f) => f !== undefined));
  const ofA = folders(a);
  return [...folders(b)].some((folder) => ofA.has(folder));
}

/** What every step has, whatever came before it. */
export interface StepEnv {
  /** The repository the user asked to verify (only read). */
  origin: string;
  /** The repository's `node_modules`, which every scratch tree links to. */
  nodeModules: string;
  id: string;
  /** The record's scratch folder (removed by the runner). */
  scratch: string;
  signal: AbortSignal | undefined;
  onProgress: ((message: string) => void) | undefined;
}

/** Hands a product on to the steps after this one. */
export type Make = <K extends ProductName>(name: K, value: Products[K]) => void;

/** A step of the record, as the runner sees it (see `step` for how one is declared). */
export interface Step {
  title: StepTitle;
  /** The products it needs, in the order whose first missing one says why it did not run. */
  needs: readonly ProductName[];
  makes: readonly ProductName[];
  /**
   * Set on the record's longest step (its critical path): once it can start, it starts before
   * any other ready step, whatever their order, so the other steps fill the cores around it.
   */
  startsFirst?: true;
  run(env: StepEnv, products: Partial<Products>, make: Make): Promise<CheckResult[]>;
}

/**
 * Declares a step that needs the products `N`: its `run` receives exactly those, typed. The
 * runner calls it only when every one of them was made (see `runVerify`).
 */
function step<const N extends ProductName>(definition: {
  needs: readonly N[];
  makes: readonly ProductName[];
  startsFirst?: true;
  run(env: StepEnv, input: Pick<Products, N>, make: Make): Promise<CheckResult[]>;
}): Omit<Step, "title"> {
  return { ...definition, run: (env, products, make) => definition.run(env, products as Pick<Products, N>, make) };
}

const gitSignal = (env: StepEnv) => (env.signal ? { signal: env.signal } : {});

/** The chapter's focused tests, compiled in `dir`, run there. */
function runFocusedTests(env: StepEnv, dir: string, manifest: ChapterManifest): Promise<TestRun> {
  return runTests(dir, manifest.focusedTests.map(distPathOf), gitSignal(env));
}

function tsconfigsOf(manifest: ChapterManifest): string[] {
  return [...new Set(manifest.focusedTests.map((f) => `${packageDirOf(f)}/tsconfig.json`))];
}

/** Builds every package of the chapter's focused tests in `dir`; the first diagnostic when one fails. */
async function buildAll(dir: string, manifest: ChapterManifest, signal?: AbortSignal): Promise<string | undefined> {
  for (const tsconfig of tsconfigsOf(manifest)) {
    const build = await buildCourse(dir, tsconfig, signal);
    if (!build.ok) return build.diagnostics[0] ?? firstLine(build.output);
  }
  return undefined;
}

const history = step({
  needs: [],
  makes: ["course"],
  async run(env, _input, make) {
    const source = await cloneWorkingTree(env.origin, path.join(env.scratch, "course"), gitSignal(env));
    const checkpoint = await resolveCheckpoint(source.clone, env.id, gitSignal(env));
    const { chapter, layer } = checkpoint;
    const starters = await readStarters(chapter.manifest, (file) => readFileAt(source.clone, chapter.target, file, gitSignal(env)));
    make("course", { repo: source.clone, source, checkpoint, starters });
    const note = `; verified: ${describeSource(source)}`;
    return [
      {
        name: "history",
        ok: true,
        detail: `parent ${short(chapter.parent)} -> target ${short(chapter.target)}, layer = chapter files only (${layer.length} files${note})`,
      },
      await labAddressCheck(source.clone, chapter.target, chapter.manifest, starters, gitSignal(env)),
    ];
  },
});

/** Every lab's address names the right declarations, sections, tests and faults (see `lab-address.ts`), read at the target. */
async function labAddressCheck(
  repo: string,
  target: string,
  manifest: ChapterManifest,
  starters: readonly Starter[],
  signal: GitOptions,
): Promise<CheckResult> {
  const read = async (files: readonly string[]) =>
    new Map(await Promise.all(files.map(async (file) => [file, await readFileAt(repo, target, file, signal)] as const)));
  const problems = labAddressProblems(manifest, {
    starters: new Map(starters.map((starter) => [starter.source, starter.text])),
    references: await read(manifest.starters.map((s) => s.to)),
    ...(manifest.text === undefined ? {} : { chapterText: await readFileAt(repo, target, manifest.text, signal) }),
    ...(manifest.challengeText === undefined ? {} : { challengeText: await readFileAt(repo, target, manifest.challengeText, signal) }),
    tests: await read(manifest.files.filter((file) => /\.test\.ts$/.test(file))),
  });
  const count = manifest.labs.length;
  return {
    name: "lab addresses",
    ok: problems.length === 0,
    detail: problems.length === 0 ? `${count} labs: every declaration, section, test, banner and fault named right` : problems.join("；"),
  };
}

const freshBuild = step({
  needs: ["course"],
  makes: ["practice", "builtPractice", "audit"],
  async run(env, { course }, make) {
    const dest = path.join(env.scratch, "practice");
    try {
      await createPractice({ repo: course.repo, id: env.id, dest, checkpoint: course.checkpoint, linkModules: true, publish: false, ...gitSignal(env) });
    } catch (error) {
      // `practice` refuses a leaking folder; the leak audit line says what leaked.
      if (isCourseError(error, "LEAK_DETECTED")) make("audit", { refusal: error.message });
      throw error;
    }
    // `practice` audits every folder it writes and refuses a leaking one: this one passed.
    make("audit", {});
    const error = await buildAll(dest, course.checkpoint.chapter.manifest, env.signal);
    make("practice", { dir: dest, built: error === undefined });
    if (error === undefined) make("builtPractice", { dir: dest });
    return [{ name: "fresh build", ok: error === undefined, detail: error === undefined ? "pass" : `练习目录无法编译：${error}` }];
  },
});

/** Every lab's second hint rung names its functions with the starter's parameters (see `hint-signatures.ts`). */
function hintSignatureCheck(manifest: ChapterManifest, starters: readonly Starter[]): CheckResult {
  const declared = new Map<string, string[]>();
  for (const starter of starters) {
    for (const [fn, params] of declaredSignatures(starter.text)) if (!declared.has(fn)) declared.set(fn, params);
  }
  const problems = manifest.labs.flatMap((lab) => signatureMismatches(lab.hints[1], declared).map((p) => `Lab ${lab.id}：${p}`));
  return {
    name: "hint signatures",
    ok: problems.length === 0,
    detail: problems.length === 0 ? "every rung 2 signature matches the starter" : problems.join("；"),
  };
}

const publicSurface = step({
  needs: ["practice", "course"],
  makes: ["builtReference"],
  async run(env, { practice, course }, make) {
    const name = "public surface";
    const { chapter } = course.checkpoint;
    const manifest = chapter.manifest;
    // The reference copy: the practice folder with the target's teaching files over the starters.
    const referenceDir = path.join(env.scratch, "reference");
    // fs-extra's copy: Node 20's fs.cp is experimental there, and slower (bench/libraries.ts). Links are copied as links.
    await fse.copy(practice.dir, referenceDir);
    for (const starter of manifest.starters) {
      await writeFile(path.join(referenceDir, ...starter.to.split("/")), await readFileAt(course.repo, chapter.target, starter.to, gitSignal(env)));
    }
    const error = await buildAll(referenceDir, manifest, env.signal);
    if (error !== undefined) return [{ name, ok: false, detail: `参考实现放进练习目录后无法编译：${error}` }];
    make("builtReference", { dir: referenceDir });
    if (!practice.built) return [{ name, ok: false, detail: "没有运行：starter 无法编译" }];

    // Both builds emitted declarations (the course package has `declaration: true`): compared with comments set aside.
    const differences: string[] = [];
    for (const starter of manifest.starters) {
      const declaration = declarationPathOf(starter.to);
      const texts: string[] = [];
      for (const [label, dir] of [
        ["starter", practice.dir],
        ["target", referenceDir],
      ] as const) {
        const text = await readFile(path.join(dir, ...declaration.split("/")), "utf8").catch(() => undefined);
        if (text === undefined) return [{ name, ok: false, detail: `${label} 的编译没有生成声明文件 ${declaration}（包的 tsconfig 要有 declaration: true）` }];
        texts.push(text);
      }
      const difference = firstDeclarationDifference(texts[0]!, texts[1]!);
      if (difference !== undefined) differences.push(`${starter.from} 与 ${starter.to} 的公开接口不同，${difference}`);
    }
    return [
      { name, ok: differences.length === 0, detail: differences.length === 0 ? "starter .d.ts == target .d.ts" : differences.join("；") },
      hintSignatureCheck(manifest, course.starters),
    ];
  },
});

const firstRed = step({
  needs: ["builtPractice", "course"],
  makes: ["starterRun"],
  async run(env, { builtPractice, course }, make) {
    const run = await runFocusedTests(env, builtPractice.dir, course.checkpoint.chapter.manifest);
    make("starterRun", run);
    return [evaluateFirstRed(course.checkpoint.chapter.manifest, run)];
  },
});

/**
 * Staged first red (see `staged.ts`): for each lab k, a copy of the practice folder with
 * the teaching files staged at "labs before k done" is built and its focused tests run.
 * The first lab's stage is the bare starter, whose run the first red step already made.
 */
const stagedFirstRed = step({
  needs: ["starterRun", "builtPractice", "course"],
  makes: [],
  async run(env, { starterRun, builtPractice, course }) {
    const { chapter } = course.checkpoint;
    const manifest = chapter.manifest;
    const labIds = manifest.labs.map((lab) => lab.id);
    const texts = [];
    for (const starter of course.starters) {
      texts.push({
        file: starter.teachingFile,
        starter: starter.text,
        reference: await readFileAt(course.repo, chapter.target, starter.teachingFile),
      });
    }
    const dir = path.join(env.scratch, "staged");
    await fse.copy(builtPractice.dir, dir);
    const checks: CheckResult[] = [];
    for (const [index, lab] of manifest.labs.entries()) {
      if (index === 0) {
        checks.push(evaluateStagedRed(manifest, 0, starterRun));
        continue;
      }
      const name = `staged first red: Lab ${lab.id}`;
      try {
        for (const text of texts) {
          await writeFile(path.join(dir, ...text.file.split("/")), stagedTeachingText({ ...text, labIds, done: index }).text);
        }
      } catch (error) {
        checks.push({ name, ok: false, detail: errorDetail(error) });
        continue;
      }
      const error = await buildAll(dir, manifest, env.signal);
      if (error !== undefined) {
        checks.push({ name, ok: false, detail: `Lab ${labIds.slice(0, index).join("、")} 用参考实现、其余用 starter 时无法编译：${error}` });
        continue;
      }
      checks.push(evaluateStagedRed(manifest, index, await runFocusedTests(env, dir, manifest)));
    }
    return checks;
  },
});

/**
 * The chapter text replayed (see `replay.ts`), in its own scratch folder. Its commands run one
 * after another, so it is the record's longest chain (about half the record's CPU): it starts
 * first.
 */
const chapterText = step({
  needs: ["course"],
  makes: [],
  startsFirst: true,
  async run(env, { course }) {
    const dir = path.join(env.scratch, "text");
    await mkdir(dir);
    return [
      await replayChapterText({
        repo: course.repo,
        checkpoint: course.checkpoint,
        dir,
        ...gitSignal(env),
        ...(env.onProgress ? { onProgress: env.onProgress } : {}),
      }),
    ];
  },
});

/**
 * `practice` refused no folder for a leak, and the audit would have seen one: an answer line
 * pasted into each starter is caught (`leak-probe.ts`).
 */
const leakAudit = step({
  needs: ["audit", "course"],
  makes: [],
  async run(env, { audit, course }) {
    if (audit.refusal !== undefined) return [{ name: "leak audit", ok: false, detail: audit.refusal }];
    const { chapter } = course.checkpoint;
    const labIds = chapter.manifest.labs.map((lab) => lab.id);
    const problems: string[] = [];
    for (const starter of course.starters) {
      const reference = await readFileAt(course.repo, chapter.target, starter.teachingFile, gitSignal(env));
      const problem = pastedAnswerProblem({ source: starter.source, teachingFile: starter.teachingFile, reference, starter: starter.text }, labIds);
      if (problem !== undefined) problems.push(problem);
    }
    if (problems.length > 0) return [{ name: "leak audit", ok: false, detail: problems.join("；") }];
    return [{ name: "leak audit", ok: true, detail: "pass; a reference line pasted into the starter is caught" }];
  },
});

const referenceLabs = step({
  needs: ["builtReference", "course"],
  makes: ["referenceRun"],
  async run(env, { builtReference, course }, make) {
    const run = await runFocusedTests(env, builtReference.dir, course.checkpoint.chapter.manifest);
    make("referenceRun", run);
    return evaluateReferenceLabs(course.checkpoint.chapter.manifest, run);
  },
});

/** The exercise's learner patch applied to the reference, as a fault the author runner can run. */
async function learnerVariant(referenceDir: string, fault: Fault): Promise<Fault | CheckResult> {
  const name = `fault ${fault.id} (learner patch)`;
  const text = await readFile(path.join(referenceDir, ...fault.file.split("/")), "utf8");
  const patched = injectExercise(text, fault);
  if (!patched.ok) return { name, ok: false, detail: patched.reason };
  // The whole file as find/replace (anchored in no declaration): exactly once by construction, and undone exactly.
  const { in: _anchor, ...unanchored } = fault;
  return { ...unanchored, id: `${fault.id}:learner`, find: text, replace: patched.text, exercise: false };
}

const faults = step({
  needs: ["builtReference", "course"],
  makes: [],
  async run(env, { builtReference, course }) {
    const manifest = course.checkpoint.chapter.manifest;
    let catalog: Fault[];
    try {
      catalog = authorFaults(manifest);
    } catch (error) {
      return [{ name: "fault catalog", ok: false, detail: (error as Error).message }];
    }
    const uncovered = labsWithoutFault(manifest, catalog);
    const exercises = catalog.filter((f) => f.exercise);
    const perLab = manifest.labs.map((lab) => `${lab.id}×${catalog.filter((f) => f.lab === lab.id).length}`).join(" ");
    const problems = [
      ...(uncovered.length > 0 ? [`没有故障的 Lab：${uncovered.join(", ")}`] : []),
      ...(exercises.length === 0 ? ["没有标记 exercise: true 的故障实验"] : []),
    ];
    if (manifest.text !== undefined) {
      // With a chapter text, every mistake names the rule it breaks, by a section the text has.
      const sections = textSections(await readFileAt(course.repo, course.checkpoint.chapter.target, manifest.text));
      const unruled = catalog.filter((f) => ruleSection(f) === undefined).map((f) => f.id);
      const unknown = catalog.filter((f) => ruleSection(f) !== undefined && !sections.has(ruleSection(f)!)).map((f) => `${f.id}（§${ruleSection(f)}）`);
      if (unruled.length > 0) problems.push(`没有写 rule（违反了正文哪一节的哪条规则）的故障：${unruled.join(", ")}`);
      if (unknown.length > 0) problems.push(`rule 指向正文里没有的小节：${unknown.join(", ")}`);
    }
    // Every fault survives its file reformatted (verify/reformat.ts).
    const readTarget = (file: string) => readFileAt(course.repo, course.checkpoint.chapter.target, file, gitSignal(env));
    problems.push(...(await faultReformatProblems(catalog, readTarget, env.nodeModules, env.signal)));
    const checks: CheckResult[] = [
      {
        name: "fault catalog",
        ok: problems.length === 0,
        detail:
          problems.length > 0
            ? problems.join("；")
            : `${catalog.length} faults, every lab covered (${perLab}), each surviving a reformat of its file; exercise: ${exercises.map((f) => f.id).join(", ")}`,
      },
    ];
    const toRun: Fault[] = [...catalog];
    for (const exercise of exercises) {
      const variant = await learnerVariant(builtReference.dir, exercise);
      if ("find" in variant) toRun.push(variant);
      else checks.push(variant);
    }
    // The kept solutions, built and run in the same scratch copy.
    const solutions: KeptSolution[] = [];
    for (const entry of manifest.solutions)
      solutions.push(keptSolution(entry, await readFileAt(course.repo, course.checkpoint.chapter.target, entry.file, gitSignal(env))));
    const { mutants, problems: unplaced } = exerciseMutants(exercises, solutions);
    checks.push(...unplaced);
    try {
      const results = await runAuthorChecks({
        sourceRoot: builtReference.dir,
        manifest,
        faults: toRun,
        solutions: [...solutions, ...mutants],
        nodeModules: env.nodeModules,
        scratchParent: env.scratch,
        ...gitSignal(env),
      });
      for (const result of results.faults) {
        const line = formatFaultResult(result);
        checks.push({ name: `fault ${result.id}`, ok: result.status === "killed" && result.restored, detail: line.slice(line.indexOf(": ") + 2) });
      }
      for (const solution of results.solutions) {
        if (mutants.some((mutant) => mutant.name === solution.name)) {
          checks.push(exerciseCaught(solution));
          continue;
        }
        const counts = `${solution.passed}/${solution.total} focused tests`;
        checks.push({
          name: `solution ${solution.name}`,
          ok: solution.ok,
          detail: solution.ok ? `${counts} pass; public surface = reference` : `${counts}：${solution.detail ?? ""}`,
        });
      }
    } catch (error) {
      if (isCourseError(error, "ABORTED")) throw error;
      checks.push({ name: "faults", ok: false, detail: errorDetail(error) });
    }
    return checks;
  },
});

const chapterTotal = step({
  needs: ["referenceRun", "course"],
  makes: [],
  async run(_env, { referenceRun, course }) {
    return [evaluateChapterTotal(course.checkpoint.chapter.manifest, referenceRun)];
  },
});

/**
 * Writes `commit`'s tree into `<scratch>/<dirName>`, builds every package in it and runs
 * the compiled test files that `select` keeps: one check named `name`. With `firstChapter`
 * (the commit is the base, which no chapter precedes) having no tests to run is no failure.
 */
async function buildAndTestCommit(
  env: StepEnv,
  repo: string,
  name: string,
  commit: string,
  dirName: string,
  select: (testFileNames: readonly string[]) => string[],
  firstChapter = false,
): Promise<CheckResult> {
  const dir = path.join(env.scratch, dirName);
  await mkdir(dir);
  const gitOptions = gitSignal(env);
  await writeFiles(repo, dir, await listTree(repo, commit, gitOptions), gitOptions);
  await linkNodeModules(dir, env.nodeModules);
  const packages = existsSync(path.join(dir, "packages")) ? await readdir(path.join(dir, "packages")) : [];
  const files: string[] = [];
  for (const pkg of packages.sort()) {
    if (!existsSync(path.join(dir, "packages", pkg, "tsconfig.json"))) continue;
    const build = await buildCourse(dir, `packages/${pkg}/tsconfig.json`, env.signal);
    if (!build.ok) return { name, ok: false, detail: `${short(commit)} 无法编译：${build.diagnostics[0] ?? firstLine(build.output)}` };
    const testDir = path.join(dir, "packages", pkg, "dist", "test");
    const names = existsSync(testDir) ? await readdir(testDir) : [];
    files.push(...select(names).map((f) => `packages/${pkg}/dist/test/${f}`));
  }
  if (files.length === 0 && firstChapter) return { name, ok: true, detail: `${short(commit)} builds; no chapter precedes this one, so no tests to run` };
  if (files.length === 0) return { name, ok: false, detail: `${short(commit)} 中没有任何章节测试` };
  // Few processes for many files; a file whose shared process was not green is decided alone.
  const run = await runTestsShared(dir, files, gitSignal(env));
  const tests = topLevelResults(run.records);
  const failed = [...tests].filter(([, ok]) => !ok).map(([test]) => test);
  const chapters = [...new Set(files.map((f) => path.posix.basename(f).slice(0, 2)))].join(" ");
  if (run.crashes.length > 0) return { name, ok: false, detail: `${run.crashes[0]!.file} 崩溃：${firstLine(run.crashes[0]!.stderr)}` };
  if (failed.length > 0) {
    // Its message too: a flaky failure in a long run is then diagnosable from this one line.
    const record = topLevel(run.records).find((r) => r.path[0] === failed[0] && !r.ok);
    const reason = record === undefined ? "" : firstLine(failureMessage(record, run.records)).slice(0, 300);
    return { name, ok: false, detail: `${failed.length} 项失败，第一项：“${failed[0]}”${reason === "" ? "" : `：${reason}`}` };
  }
  const alone = run.rerunAlone.length === 0 ? "" : `, ${run.rerunAlone.length} of them run again alone`;
  return {
    name,
    ok: true,
    detail: `all pass (${tests.size} tests in ${files.length} files, ${run.processes} process${run.processes === 1 ? "" : "es"}${alone}; chapters ${chapters})`,
  };
}

/** The parent as committed, with no starter: it builds and every earlier chapter's tests pass. */
const parent = step({
  needs: ["course"],
  makes: [],
  async run(env, { course }) {
    const testFiles = (names: readonly string[]) => names.filter((n) => n.endsWith(".test.js")).sort();
    const { chapter, history } = course.checkpoint;
    return [await buildAndTestCommit(env, course.repo, "parent", chapter.parent, "parent", testFiles, chapter.parent === history.base)];
  },
});

const throughChapter = step({
  needs: ["course"],
  makes: [],
  async run(env, { course }) {
    return [
      await buildAndTestCommit(env, course.repo, stepName("through chapter", env.id), course.checkpoint.chapter.target, "target", (names) =>
        throughChapterFiles(names, env.id),
      ),
    ];
  },
});

/** The name of a step's line: its title, with the chapter for `through chapter`. */
export function stepName(title: StepTitle, id: string): string {
  return title === "through chapter" ? `through chapter ${id}` : title;
}

const STEPS: Readonly<Record<StepTitle, Omit<Step, "title">>> = {
  history,
  parent,
  "fresh build": freshBuild,
  "public surface": publicSurface,
  "first red": firstRed,
  "staged first red": stagedFirstRed,
  "chapter text": chapterText,
  "leak audit": leakAudit,
  "reference labs": referenceLabs,
  faults,
  "chapter total": chapterTotal,
  "through chapter": throughChapter,
};

/** The steps of the record, in record order (`STEP_TITLES`). */
export const VERIFY_STEPS: readonly Step[] = STEP_TITLES.map((title) => ({ title, ...STEPS[title] }));
