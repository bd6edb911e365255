/**
 * The author's acceptance record of a chapter (`verify NN`): everything the chapter text
 * promises, checked end to end in a scratch folder, reusing the repo's `node_modules` (no
 * network). What is checked is the course as the author is about to commit it: a private
 * clone at a snapshot of the working tree (HEAD plus uncommitted changes, see
 * `snapshot.ts`); the repository itself is only read.
 *
 * Steps, in order (one progress step each; a step yields one or more checks):
 * 1. history — the teaching history builds; parent → target; the layer is the chapter's files
 * 2. parent — the parent tree as committed builds and every earlier chapter's tests pass
 * 3. fresh build — a practice folder made by `practice` (with linked modules) compiles
 * 4. public surface — the starter's declarations equal the reference's (comments aside)
 * 5. first red — every lab is 0/N on a scaffold error (never a crash or a compile error);
 *    the first lab fails with exactly its own scaffold error
 * 6. staged first red — one line per lab k: the reference with labs k and later put back
 *    from the starter builds, every earlier lab is green, and lab k is 0/N on exactly ITS
 *    OWN scaffold error (`staged.ts`)
 * 7. chapter text — the text's commands replayed where and when it puts them, every claimed
 *    output seen, its labs table and exercise line equal to the manifest (`replay.ts`)
 * 8. leak audit — no line of the reference that the starter lacks appears in the folder
 * 9. reference labs — the practice folder with the target teaching file: every lab N/N
 * 10. faults — the catalog covers every lab; every fault (and the exercise's learner
 *    patch, applied to the reference) is killed by its named test and restored
 * 11. chapter total — the focused tests with the reference: all pass, as many as the labs say
 * 12. through chapter NN — every `NN-*.test.js` of chapters ≤ NN passes in the target tree
 *
 * A failing step does not stop the others; a step that needs what a failed step would
 * have produced reports that it did not run. The check functions over test records are
 * pure, so they are tested on synthetic results.
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import fse from "fs-extra";
import os from "node:os";
import path from "node:path";
import { CourseError } from "../core/errors.js";
import { topLevelResults } from "../testing/suite.js";
import { distPathOf, packageDirOf } from "../core/paths.js";
import { formatFaultResult, labsWithoutFault, runAuthorFaults } from "../testing/fault-runs.js";
import { authorFaults, type Fault, ruleSection } from "../course/faults.js";
import { listTree, readFileAt, writeFiles } from "../course/git.js";
import { type Checkpoint, resolveCheckpoint } from "../course/history.js";
import { declaredSignatures, signatureMismatches } from "./hint-signatures.js";
import { scaffoldLabOf, summarizeLabs, type TestRun } from "../testing/results.js";
import { buildCourse, resolveCompiler } from "../testing/compiler.js";
import { runProcess } from "../core/process.js";
import { runTests } from "../testing/tests.js";
import type { ChapterManifest } from "../course/manifest.js";
import { createPractice } from "../practice/folder.js";
import { linkNodeModules, makeScratchDir, removeScratchDir } from "../core/scratch.js";
import { replayChapterText } from "./replay.js";
import { injectExercise } from "./chapter-text.js";
import { failureMessage, firstLine, testsOfLab } from "./runs.js";
import { cloneWorkingTree, type VerifiedSource } from "./snapshot.js";
import { evaluateStagedRed, stagedTeachingText } from "./staged.js";

/** One line of the record. */
export interface CheckResult {
  name: string;
  ok: boolean;
  detail: string;
}

export interface VerifyReport {
  chapter: string;
  checks: CheckResult[];
  ok: boolean;
  seconds: number;
}

export interface VerifyOptions {
  /** The course repository (a git work tree; its working tree's content is verified, see `snapshot.ts`). */
  repo: string;
  /** Chapter id, e.g. `12`. */
  id: string;
  /** Where the scratch folder is made; default the OS temp folder. */
  scratchParent?: string;
  /**
   * Titles of the steps to run (see `VERIFY_STEPS`), with the steps they need added; every
   * step when absent. A partial record checks one concern without the rest (the tooling
   * tests use it; the acceptance record itself is always whole).
   */
  only?: readonly string[];
  signal?: AbortSignal;
  /** Called before each step: 1-based index, step count, title. */
  onStep?(index: number, total: number, title: string): void;
  /** Called for each check as it is decided. */
  onCheck?(check: CheckResult): void;
  /** Called with a one-line note while a long step works (e.g. each replayed command). */
  onProgress?(message: string): void;
}

/** What the steps hand on to each other. */
interface Context {
  /** The verified course: the private clone at the snapshot (set by the history step). */
  repo: string;
  /** The repository the user asked to verify (only read). */
  origin: string;
  /** The repository's `node_modules`, which every scratch tree links to. */
  nodeModules: string;
  id: string;
  scratch: string;
  signal: AbortSignal | undefined;
  onProgress: ((message: string) => void) | undefined;
  source?: VerifiedSource;
  checkpoint?: Checkpoint;
  practiceDir?: string;
  practiceBuilt?: boolean;
  /** Why `practice` refused to write the folder, when it found a leak. */
  leakRefusal?: string;
  referenceDir?: string;
  referenceBuilt?: boolean;
  referenceRun?: TestRun;
  /** The focused tests run against the bare starter (the first red step's run). */
  starterRun?: TestRun;
}

const short = (sha: string) => sha.slice(0, 12);

/**
 * First red, from the starter's test run: every lab has exactly its manifest's number of
 * tests, none passes, each fails on some lab's scaffold error, and every test of the first
 * lab fails with exactly that lab's scaffold error. A crashed test file fails the check.
 */
export function evaluateFirstRed(manifest: ChapterManifest, run: Pick<TestRun, "records" | "crashes">): CheckResult {
  const name = "first red";
  if (run.crashes.length > 0) {
    const crash = run.crashes[0]!;
    return { name, ok: false, detail: `${crash.file} 崩溃（退出码 ${crash.code}）：${firstLine(crash.stderr)}` };
  }
  const parts: string[] = [];
  const problems: string[] = [];
  manifest.labs.forEach((lab, index) => {
    const tests = testsOfLab(run.records, lab.id);
    const passed = tests.filter((t) => t.ok).length;
    const messages = tests.filter((t) => !t.ok).map((t) => failureMessage(t, run.records));
    const scaffolds = [...new Set(messages.map((m) => scaffoldLabOf(m, manifest.labs)))];
    const shown = scaffolds.filter((s): s is string => s !== undefined).map((s) => `"${manifest.labs.find((l) => l.id === s)!.scaffoldError}"`);
    parts.push(`Lab ${lab.id} ${passed}/${tests.length}${shown.length > 0 ? ` ${shown.join(" ")}` : ""}`);
    if (tests.length !== lab.tests) problems.push(`Lab ${lab.id} 应有 ${lab.tests} 项测试，找到 ${tests.length} 项`);
    if (passed > 0) problems.push(`Lab ${lab.id} 对着 starter 就有 ${passed} 项通过（测试不够严格，或 starter 含有答案）`);
    const foreign = messages.filter((m) => scaffoldLabOf(m, manifest.labs) === undefined);
    if (foreign.length > 0) problems.push(`Lab ${lab.id} 的失败不是脚手架错误：“${firstLine(foreign[0]!)}”`);
    if (index === 0) {
      const inexact = messages.filter((m) => m !== lab.scaffoldError);
      if (inexact.length > 0) problems.push(`Lab ${lab.id} 应恰好以 “${lab.scaffoldError}” 失败，实际：“${firstLine(inexact[0]!)}”`);
    }
  });
  return { name, ok: problems.length === 0, detail: problems.length === 0 ? `${parts.join("; ")} (every lab red on a scaffold error)` : problems.join("；") };
}

/** Reference labs: one check per lab, `passed/total`, green only at N/N with N as the manifest says. */
export function evaluateReferenceLabs(manifest: ChapterManifest, run: Pick<TestRun, "records" | "crashes">): CheckResult[] {
  const labs = summarizeLabs(manifest.labs, manifest.labs, run.records);
  const crashed = run.crashes.length > 0 ? `；${run.crashes[0]!.file} 崩溃：${firstLine(run.crashes[0]!.stderr)}` : "";
  return labs.map((lab) => ({
    name: `Lab ${lab.id} (reference)`,
    ok: lab.status === "passed" && crashed === "",
    detail: `${lab.passed}/${lab.total}${lab.status === "passed" ? "" : ` — ${lab.firstFailure?.test ?? ""}: ${firstLine(lab.firstFailure?.message ?? "")}`}${crashed}`,
  }));
}

/** Chapter total: every focused test passes with the reference, and there are exactly as many as the labs add up to. */
export function evaluateChapterTotal(manifest: ChapterManifest, run: Pick<TestRun, "records" | "crashes">): CheckResult {
  const expected = manifest.labs.reduce((n, lab) => n + lab.tests, 0);
  const tests = topLevelResults(run.records);
  const passed = [...tests.values()].filter(Boolean).length;
  const ok = run.crashes.length === 0 && tests.size === expected && passed === expected;
  const why = ok ? "" : tests.size !== expected ? `（各 Lab 合计应为 ${expected} 项，聚焦测试有 ${tests.size} 项）` : run.crashes.length > 0 ? "（有测试文件崩溃）" : "";
  return { name: "chapter total", ok, detail: `${passed}/${tests.size}${why}` };
}

/** The numbered sections of a chapter text: `3`, `3.4`, … from headings such as `## 3. …` and `### 3.4 …`. */
export function textSections(text: string): Set<string> {
  const sections = new Set<string>();
  for (const match of text.matchAll(/^#{2,4}\s+(\d+(?:\.\d+)*)\.?\s/gm)) sections.add(match[1]!);
  return sections;
}

/** The compiled test files of chapters up to `id` (`NN-*.test.js`, NN ≤ id) among `names`, sorted. */
export function throughChapterFiles(names: readonly string[], id: string): string[] {
  return names.filter((name) => {
    const m = /^(\d{2})-.+\.test\.js$/.exec(name);
    return m !== null && Number(m[1]) <= Number(id);
  }).sort();
}

/** Compares two declaration texts line by line; returns the first difference, or undefined. */
export function firstDeclarationDifference(starter: string, reference: string): string | undefined {
  const lines = (text: string) => text.replace(/\r\n/g, "\n").split("\n").map((l) => l.trimEnd()).filter((l) => l !== "");
  const a = lines(starter);
  const b = lines(reference);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) return `第 ${i + 1} 行：starter「${a[i] ?? "（没有）"}」，target「${b[i] ?? "（没有）"}」`;
  }
  return undefined;
}

/**
 * Emits declarations of the package of `tsconfig` (repo-relative) in `dir` into `outDir`,
 * without comments (doc comments of a starter legitimately differ from the reference's).
 */
async function emitDeclarations(dir: string, tsconfig: string, outDir: string, signal?: AbortSignal): Promise<{ ok: boolean; output: string }> {
  const compiler = resolveCompiler(path.join(dir, path.dirname(tsconfig)));
  const args = [
    ...compiler.args,
    "-p",
    tsconfig,
    "--pretty",
    "false",
    "--declaration",
    "--emitDeclarationOnly",
    "--removeComments",
    "--declarationMap",
    "false",
    "--sourceMap",
    "false",
    "--outDir",
    outDir,
    "--tsBuildInfoFile",
    path.join(outDir, ".tsbuildinfo"),
  ];
  const result = await runProcess(compiler.command, args, { cwd: dir, ...(signal ? { signal } : {}) });
  return { ok: result.code === 0, output: `${result.stdout.toString("utf8")}${result.stderr.toString("utf8")}` };
}

function tsconfigsOf(manifest: ChapterManifest): string[] {
  return [...new Set(manifest.focusedTests.map((f) => `${packageDirOf(f)}/tsconfig.json`))];
}

async function buildAll(dir: string, manifest: ChapterManifest, signal?: AbortSignal): Promise<string | undefined> {
  for (const tsconfig of tsconfigsOf(manifest)) {
    const build = await buildCourse(dir, tsconfig, signal);
    if (!build.ok) return build.diagnostics[0] ?? firstLine(build.output);
  }
  return undefined;
}

const notRun = (name: string, because: string): CheckResult => ({ name, ok: false, detail: `没有运行：${because}` });

// ---------------------------------------------------------------------------
// The steps
// ---------------------------------------------------------------------------

/** What was verified, for the history line: HEAD, or HEAD and the uncommitted changes on top of it. */
export function describeSource(source: Pick<VerifiedSource, "head" | "changed">): string {
  if (source.changed.length === 0) return `HEAD ${short(source.head)}`;
  const shown = source.changed.slice(0, 3).join(", ");
  return `working tree = HEAD ${short(source.head)} + ${source.changed.length} uncommitted change${source.changed.length === 1 ? "" : "s"}: ${shown}${source.changed.length > 3 ? ", …" : ""}`;
}

async function stepHistory(ctx: Context): Promise<CheckResult[]> {
  const source = await cloneWorkingTree(ctx.origin, path.join(ctx.scratch, "course"), ctx.signal ? { signal: ctx.signal } : {});
  ctx.source = source;
  ctx.repo = source.clone;
  const checkpoint = await resolveCheckpoint(ctx.repo, ctx.id, ctx.signal ? { signal: ctx.signal } : {});
  ctx.checkpoint = checkpoint;
  const { chapter, layer } = checkpoint;
  const note = `; verified: ${describeSource(source)}`;
  return [
    {
      name: "history",
      ok: true,
      detail: `parent ${short(chapter.parent)} -> target ${short(chapter.target)}, layer = chapter files only (${layer.length} files${note})`,
    },
  ];
}

async function stepFreshBuild(ctx: Context): Promise<CheckResult[]> {
  if (!ctx.checkpoint) return [notRun("fresh build", "history 失败")];
  const dest = path.join(ctx.scratch, "practice");
  try {
    await createPractice({ repo: ctx.repo, id: ctx.id, dest, checkpoint: ctx.checkpoint, linkModules: true, publish: false, ...(ctx.signal ? { signal: ctx.signal } : {}) });
  } catch (error) {
    // `practice` refuses a leaking folder; the leak audit line says what leaked.
    if (error instanceof CourseError && error.code === "LEAK_DETECTED") ctx.leakRefusal = error.message;
    throw error;
  }
  ctx.practiceDir = dest;
  const error = await buildAll(dest, ctx.checkpoint.chapter.manifest, ctx.signal);
  ctx.practiceBuilt = error === undefined;
  return [{ name: "fresh build", ok: error === undefined, detail: error === undefined ? "pass" : `练习目录无法编译：${error}` }];
}

async function stepPublicSurface(ctx: Context): Promise<CheckResult[]> {
  const name = "public surface";
  if (!ctx.checkpoint || !ctx.practiceDir) return [notRun(name, "没有练习目录")];
  const { chapter } = ctx.checkpoint;
  const manifest = chapter.manifest;
  // The reference copy: the practice folder with the target's teaching files over the starters.
  const referenceDir = path.join(ctx.scratch, "reference");
  // fs-extra's copy: Node 20's fs.cp is experimental there, and slower (bench/libraries.ts). Links are copied as links.
  await fse.copy(ctx.practiceDir, referenceDir);
  for (const starter of manifest.starters) {
    await writeFile(path.join(referenceDir, ...starter.to.split("/")), await readFileAt(ctx.repo, chapter.target, starter.to, ctx.signal ? { signal: ctx.signal } : {}));
  }
  ctx.referenceDir = referenceDir;
  const error = await buildAll(referenceDir, manifest, ctx.signal);
  ctx.referenceBuilt = error === undefined;
  if (error !== undefined) return [{ name, ok: false, detail: `参考实现放进练习目录后无法编译：${error}` }];
  if (!ctx.practiceBuilt) return [notRun(name, "starter 无法编译")];

  const differences: string[] = [];
  for (const starter of manifest.starters) {
    const pkg = packageDirOf(starter.to);
    const tsconfig = `${pkg}/tsconfig.json`;
    const declaration = starter.to.slice(pkg.length + 1).replace(/\.ts$/, ".d.ts");
    const texts: string[] = [];
    for (const [label, dir] of [["starter", ctx.practiceDir], ["target", referenceDir]] as const) {
      const out = path.join(ctx.scratch, `declarations-${label}`);
      const emitted = await emitDeclarations(dir, tsconfig, out, ctx.signal);
      if (!emitted.ok) return [{ name, ok: false, detail: `${label} 的声明无法生成：${firstLine(emitted.output)}` }];
      texts.push(await readFile(path.join(out, ...declaration.split("/")), "utf8"));
    }
    const difference = firstDeclarationDifference(texts[0]!, texts[1]!);
    if (difference !== undefined) differences.push(`${starter.from} 与 ${starter.to} 的公开接口不同，${difference}`);
  }
  return [
    { name, ok: differences.length === 0, detail: differences.length === 0 ? "starter .d.ts == target .d.ts" : differences.join("；") },
    await hintSignatureCheck(ctx.repo, ctx.checkpoint.chapter.target, manifest),
  ];
}

/** Every lab's second hint rung names its functions with the starter's parameters (see `hint-signatures.ts`). */
async function hintSignatureCheck(repo: string, target: string, manifest: ChapterManifest): Promise<CheckResult> {
  const declared = new Map<string, string[]>();
  for (const starter of manifest.starters) {
    for (const [fn, params] of declaredSignatures(await readFileAt(repo, target, starter.from))) if (!declared.has(fn)) declared.set(fn, params);
  }
  const problems = manifest.labs.flatMap((lab) => signatureMismatches(lab.hints[1], declared).map((p) => `Lab ${lab.id}：${p}`));
  return { name: "hint signatures", ok: problems.length === 0, detail: problems.length === 0 ? "every rung 2 signature matches the starter" : problems.join("；") };
}

async function stepFirstRed(ctx: Context): Promise<CheckResult[]> {
  if (!ctx.checkpoint || !ctx.practiceDir || !ctx.practiceBuilt) return [notRun("first red", "练习目录没有编译通过")];
  const manifest = ctx.checkpoint.chapter.manifest;
  const run = await runTests(ctx.practiceDir, manifest.focusedTests.map(distPathOf), ctx.signal ? { signal: ctx.signal } : {});
  ctx.starterRun = run;
  return [evaluateFirstRed(manifest, run)];
}

/**
 * Staged first red (see `staged.ts`): for each lab k, a copy of the practice folder with
 * the teaching files staged at "labs before k done" is built and its focused tests run.
 * The first lab's stage is the bare starter, whose run the first red step already made.
 */
async function stepStagedFirstRed(ctx: Context): Promise<CheckResult[]> {
  const manifest = ctx.checkpoint?.chapter.manifest;
  if (!ctx.checkpoint || !manifest || !ctx.practiceDir || !ctx.starterRun) return [notRun("staged first red", "starter 没有编译通过或没有运行")];
  const { chapter } = ctx.checkpoint;
  const labIds = manifest.labs.map((lab) => lab.id);
  const texts = [];
  for (const starter of manifest.starters) {
    texts.push({
      file: starter.to,
      starter: await readFileAt(ctx.repo, chapter.target, starter.from),
      reference: await readFileAt(ctx.repo, chapter.target, starter.to),
    });
  }
  const dir = path.join(ctx.scratch, "staged");
  await fse.copy(ctx.practiceDir, dir);
  const checks: CheckResult[] = [];
  for (const [index, lab] of manifest.labs.entries()) {
    if (index === 0) {
      checks.push(evaluateStagedRed(manifest, 0, ctx.starterRun));
      continue;
    }
    const name = `staged first red: Lab ${lab.id}`;
    try {
      for (const text of texts) {
        await writeFile(path.join(dir, ...text.file.split("/")), stagedTeachingText({ ...text, labIds, done: index }).text);
      }
    } catch (error) {
      checks.push({ name, ok: false, detail: error instanceof CourseError ? `[${error.code}] ${error.message}` : String(error) });
      continue;
    }
    const error = await buildAll(dir, manifest, ctx.signal);
    if (error !== undefined) {
      checks.push({ name, ok: false, detail: `Lab ${labIds.slice(0, index).join("、")} 用参考实现、其余用 starter 时无法编译：${error}` });
      continue;
    }
    checks.push(evaluateStagedRed(manifest, index, await runTests(dir, manifest.focusedTests.map(distPathOf), ctx.signal ? { signal: ctx.signal } : {})));
  }
  return checks;
}

/** The chapter text replayed (see `replay.ts`), in its own scratch folder. */
async function stepChapterText(ctx: Context): Promise<CheckResult[]> {
  if (!ctx.checkpoint) return [notRun("chapter text", "history 失败")];
  const dir = path.join(ctx.scratch, "text");
  await mkdir(dir);
  return [
    await replayChapterText({
      repo: ctx.repo,
      checkpoint: ctx.checkpoint,
      dir,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      ...(ctx.onProgress ? { onProgress: ctx.onProgress } : {}),
    }),
  ];
}

async function stepLeakAudit(ctx: Context): Promise<CheckResult[]> {
  if (ctx.leakRefusal !== undefined) return [{ name: "leak audit", ok: false, detail: ctx.leakRefusal }];
  if (!ctx.practiceDir) return [notRun("leak audit", "没有练习目录")];
  // `practice` audits every folder it writes and refuses a leaking one: this one passed.
  return [{ name: "leak audit", ok: true, detail: "pass" }];
}

async function stepReferenceLabs(ctx: Context): Promise<CheckResult[]> {
  if (!ctx.checkpoint || !ctx.referenceDir || !ctx.referenceBuilt) return [notRun("reference labs", "参考副本没有编译通过")];
  const manifest = ctx.checkpoint.chapter.manifest;
  ctx.referenceRun = await runTests(ctx.referenceDir, manifest.focusedTests.map(distPathOf), ctx.signal ? { signal: ctx.signal } : {});
  return evaluateReferenceLabs(manifest, ctx.referenceRun);
}

/** The exercise's learner patch applied to the reference, as a fault the author runner can run. */
async function learnerVariant(referenceDir: string, fault: Fault): Promise<Fault | CheckResult> {
  const name = `fault ${fault.id} (learner patch)`;
  const text = await readFile(path.join(referenceDir, ...fault.file.split("/")), "utf8");
  const patched = injectExercise(text, fault);
  if (!patched.ok) return { name, ok: false, detail: patched.reason };
  // The whole file as find/replace: exactly once by construction, and undone exactly.
  return { ...fault, id: `${fault.id}:learner`, find: text, replace: patched.text, exercise: false };
}

async function stepFaults(ctx: Context): Promise<CheckResult[]> {
  if (!ctx.checkpoint || !ctx.referenceDir || !ctx.referenceBuilt) return [notRun("faults", "参考副本没有编译通过")];
  const manifest = ctx.checkpoint.chapter.manifest;
  let faults: Fault[];
  try {
    faults = authorFaults(manifest);
  } catch (error) {
    return [{ name: "fault catalog", ok: false, detail: (error as Error).message }];
  }
  const uncovered = labsWithoutFault(manifest, faults);
  const exercises = faults.filter((f) => f.exercise);
  const perLab = manifest.labs.map((lab) => `${lab.id}×${faults.filter((f) => f.lab === lab.id).length}`).join(" ");
  const problems = [
    ...(uncovered.length > 0 ? [`没有故障的 Lab：${uncovered.join(", ")}`] : []),
    ...(exercises.length === 0 ? ["没有标记 exercise: true 的故障实验"] : []),
  ];
  if (manifest.text !== undefined) {
    // With a chapter text, every mistake names the rule it breaks, by a section the text has.
    const sections = textSections(await readFileAt(ctx.repo, ctx.checkpoint.chapter.target, manifest.text));
    const unruled = faults.filter((f) => ruleSection(f) === undefined).map((f) => f.id);
    const unknown = faults.filter((f) => ruleSection(f) !== undefined && !sections.has(ruleSection(f)!)).map((f) => `${f.id}（§${ruleSection(f)}）`);
    if (unruled.length > 0) problems.push(`没有写 rule（违反了正文哪一节的哪条规则）的故障：${unruled.join(", ")}`);
    if (unknown.length > 0) problems.push(`rule 指向正文里没有的小节：${unknown.join(", ")}`);
  }
  const checks: CheckResult[] = [
    {
      name: "fault catalog",
      ok: problems.length === 0,
      detail: problems.length > 0 ? problems.join("；") : `${faults.length} faults, every lab covered (${perLab}); exercise: ${exercises.map((f) => f.id).join(", ")}`,
    },
  ];
  const toRun: Fault[] = [...faults];
  for (const exercise of exercises) {
    const variant = await learnerVariant(ctx.referenceDir, exercise);
    if ("find" in variant) toRun.push(variant);
    else checks.push(variant);
  }
  try {
    const results = await runAuthorFaults({
      sourceRoot: ctx.referenceDir,
      manifest,
      faults: toRun,
      nodeModules: ctx.nodeModules,
      scratchParent: ctx.scratch,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    for (const result of results) {
      const line = formatFaultResult(result);
      checks.push({ name: `fault ${result.id}`, ok: result.status === "killed" && result.restored, detail: line.slice(line.indexOf(": ") + 2) });
    }
  } catch (error) {
    if (error instanceof CourseError && error.code === "ABORTED") throw error;
    checks.push({ name: "faults", ok: false, detail: error instanceof CourseError ? `[${error.code}] ${error.message}` : String(error) });
  }
  return checks;
}

async function stepChapterTotal(ctx: Context): Promise<CheckResult[]> {
  if (!ctx.checkpoint || !ctx.referenceRun) return [notRun("chapter total", "参考实现的测试没有运行")];
  return [evaluateChapterTotal(ctx.checkpoint.chapter.manifest, ctx.referenceRun)];
}

/**
 * Writes `commit`'s tree into `<scratch>/<dirName>`, builds every package in it and runs
 * the compiled test files that `select` keeps: one check named `name`.
 */
async function buildAndTestCommit(
  ctx: Context,
  name: string,
  commit: string,
  dirName: string,
  select: (testFileNames: readonly string[]) => string[],
): Promise<CheckResult> {
  const dir = path.join(ctx.scratch, dirName);
  await mkdir(dir);
  const gitOptions = ctx.signal ? { signal: ctx.signal } : {};
  await writeFiles(ctx.repo, dir, await listTree(ctx.repo, commit, gitOptions), gitOptions);
  await linkNodeModules(dir, ctx.nodeModules);
  const packages = existsSync(path.join(dir, "packages")) ? await readdir(path.join(dir, "packages")) : [];
  const files: string[] = [];
  for (const pkg of packages.sort()) {
    if (!existsSync(path.join(dir, "packages", pkg, "tsconfig.json"))) continue;
    const build = await buildCourse(dir, `packages/${pkg}/tsconfig.json`, ctx.signal);
    if (!build.ok) return { name, ok: false, detail: `${short(commit)} 无法编译：${build.diagnostics[0] ?? firstLine(build.output)}` };
    const testDir = path.join(dir, "packages", pkg, "dist", "test");
    const names = existsSync(testDir) ? await readdir(testDir) : [];
    files.push(...select(names).map((f) => `packages/${pkg}/dist/test/${f}`));
  }
  if (files.length === 0) return { name, ok: false, detail: `${short(commit)} 中没有任何章节测试` };
  const run = await runTests(dir, files, ctx.signal ? { signal: ctx.signal } : {});
  const tests = topLevelResults(run.records);
  const failed = [...tests].filter(([, ok]) => !ok).map(([test]) => test);
  const chapters = [...new Set(files.map((f) => path.posix.basename(f).slice(0, 2)))].join(" ");
  if (run.crashes.length > 0) return { name, ok: false, detail: `${run.crashes[0]!.file} 崩溃：${firstLine(run.crashes[0]!.stderr)}` };
  if (failed.length > 0) return { name, ok: false, detail: `${failed.length} 项失败，第一项：“${failed[0]}”` };
  return { name, ok: true, detail: `all pass (${tests.size} tests in ${files.length} files; chapters ${chapters})` };
}

/** The parent as committed, with no starter: it builds and every earlier chapter's tests pass. */
async function stepParent(ctx: Context): Promise<CheckResult[]> {
  if (!ctx.checkpoint) return [notRun("parent", "history 失败")];
  const testFiles = (names: readonly string[]) => names.filter((n) => n.endsWith(".test.js")).sort();
  return [await buildAndTestCommit(ctx, "parent", ctx.checkpoint.chapter.parent, "parent", testFiles)];
}

async function stepThroughChapter(ctx: Context): Promise<CheckResult[]> {
  const name = `through chapter ${ctx.id}`;
  if (!ctx.checkpoint) return [notRun(name, "history 失败")];
  return [await buildAndTestCommit(ctx, name, ctx.checkpoint.chapter.target, "target", (names) => throughChapterFiles(names, ctx.id))];
}

/** The steps of the record, in order; `needs` names the steps whose results a step uses. */
export const VERIFY_STEPS: readonly { title: string; needs: readonly string[]; run(ctx: Context): Promise<CheckResult[]> }[] = [
  { title: "history", needs: [], run: stepHistory },
  { title: "parent", needs: ["history"], run: stepParent },
  { title: "fresh build", needs: ["history"], run: stepFreshBuild },
  { title: "public surface", needs: ["fresh build"], run: stepPublicSurface },
  { title: "first red", needs: ["fresh build"], run: stepFirstRed },
  { title: "staged first red", needs: ["first red"], run: stepStagedFirstRed },
  { title: "chapter text", needs: ["history"], run: stepChapterText },
  { title: "leak audit", needs: ["fresh build"], run: stepLeakAudit },
  { title: "reference labs", needs: ["public surface"], run: stepReferenceLabs },
  { title: "faults", needs: ["public surface"], run: stepFaults },
  { title: "chapter total", needs: ["reference labs"], run: stepChapterTotal },
  { title: "through chapter", needs: ["history"], run: stepThroughChapter },
];

/**
 * The steps to run for `only` (titles), in record order, each with every step it needs,
 * directly or not. Throws `USAGE` for a title the record does not have.
 */
export function selectSteps(only: readonly string[] | undefined): typeof VERIFY_STEPS {
  if (only === undefined) return VERIFY_STEPS;
  const wanted = new Set<string>();
  const add = (title: string): void => {
    const step = VERIFY_STEPS.find((s) => s.title === title);
    if (step === undefined) throw new CourseError("USAGE", `verify 没有名为 “${title}” 的步骤；步骤：${VERIFY_STEPS.map((s) => s.title).join("、")}`);
    if (wanted.has(title)) return;
    wanted.add(title);
    step.needs.forEach(add);
  };
  only.forEach(add);
  return VERIFY_STEPS.filter((s) => wanted.has(s.title));
}

/**
 * Runs the whole record for chapter `options.id` (see the module comment). Never throws
 * for a failed check — that is a check with `ok: false`; throws only `ABORTED` (and
 * `CHAPTER_UNKNOWN`/`MANIFEST_INVALID`/git failures from the history step are reported
 * as a failed `history` check). The scratch folder is always removed.
 */
export async function runVerify(options: VerifyOptions): Promise<VerifyReport> {
  const started = Date.now();
  const steps = selectSteps(options.only);
  const scratch = await makeScratchDir(options.scratchParent ?? os.tmpdir(), `pi-course-verify-${options.id}-`);
  const ctx: Context = {
    repo: options.repo,
    origin: options.repo,
    nodeModules: path.join(options.repo, "node_modules"),
    id: options.id,
    scratch,
    signal: options.signal,
    onProgress: options.onProgress,
  };
  const checks: CheckResult[] = [];
  try {
    for (const [index, step] of steps.entries()) {
      options.onStep?.(index + 1, steps.length, step.title === "through chapter" ? `through chapter ${options.id}` : step.title);
      let results: CheckResult[];
      try {
        results = await step.run(ctx);
      } catch (error) {
        if (options.signal?.aborted) throw new CourseError("ABORTED", "已中断；临时目录已删除", { cause: error });
        const name = step.title === "through chapter" ? `through chapter ${options.id}` : step.title;
        results = [{ name, ok: false, detail: error instanceof CourseError ? `[${error.code}] ${error.message}` : String((error as Error).message ?? error) }];
      }
      if (options.signal?.aborted) throw new CourseError("ABORTED", "已中断；临时目录已删除");
      for (const check of results) {
        checks.push(check);
        options.onCheck?.(check);
      }
    }
    // The record is made in a private clone of a snapshot of the working tree, whose commits
    // the repository may not even have: verify never writes the teaching branch (checkpoint does).
  } finally {
    await removeScratchDir(scratch);
  }
  return { chapter: options.id, checks, ok: checks.every((c) => c.ok), seconds: Math.round((Date.now() - started) / 100) / 10 };
}
