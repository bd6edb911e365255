/**
 * Measures a chapter's blind solutions (the `solutions/` folder of its home) against the chapter's lab tests.
 *
 *   npx tsx packages/course-tools/test/support/solutions/measure.ts              every solution: lab results, public .d.ts check
 *   npx tsx packages/course-tools/test/support/solutions/measure.ts --mistakes   also every entry of the chapter's solutions/mistakes.yaml
 *   options: --catalog <file>  the mistakes of that file instead of solutions/mistakes.yaml (a held-out catalog;
 *                              implies --mistakes; `base: reference` edits the reference itself)
 *            --compile-only    only check that each mistake applies (its find occurs once) and compiles;
 *                              runs no test and prints nothing about the tests, so a catalog's writer,
 *                              who must not see the tests, can check their own catalog
 *            --probes   also run chapter 12's solutions/rule-probes.ts (rules the lab tests do not check)
 *            --only <solution | base | mistake id prefix>   --jobs <n>   --verbose
 *            --chapter <NN>   the chapter measured (12 by default; 3 and 03 both name chapter 03), each with its
 *                             own folder of solutions, mistakes.yaml and, when it has one, rule-probes.ts
 *
 * What a chapter's measurement needs comes from its manifest (`chapters/NN-<slug>/chapter.yaml`): the
 * starters and the teaching files they overlay, the focused lab test files, the labs and how
 * many tests each has. Every `<letter>-<style>.ts` file of the chapter's folder is a solution;
 * in a chapter of several teaching files the manifest's `solutions:` entry of each names the
 * file it replaces (`{ file, replaces }`), and a mistake on the reference names the teaching
 * file it edits (`file:`; a mistake on a solution edits the file that solution replaces).
 *
 * Each solution is built in place of its teaching file (`packages/pi-course/src/resources.ts`,
 * `runtime.ts`), every other teaching file being the reference, inside a copy of
 * the course package in a temporary folder (src, test, tsconfig.json, package.json, plus
 * the repo's tsconfig.base.json; node_modules is a symlink to the repo's), with the
 * course's own TypeScript (the package's tsconfig narrowed to the lab test files and what they
 * import), and then `node --test` runs the chapter's lab test files there.
 * The public declarations it emits for its teaching file must equal that starter's (comments aside).
 *
 * With `--mistakes`, every mistake (one exact, single-occurrence `find` → `replace` edit of
 * one solution) is built and tested the same way. A mistake that does not compile is
 * INVALID; one that no lab test notices is SURVIVED; otherwise the table names the lab
 * tests that caught it. Workers reuse their copy, so rebuilds are incremental. With
 * `--probes`, the rule probes run too: every solution must pass them all, and a mistake
 * they do not catch either is no mistake at all (an edit that changes nothing).
 *
 * Solution files start with a `// @ts-nocheck` line: they live outside the course package
 * (in their chapter's home), where their `./tool.js` imports do not resolve, and an editor
 * would check them there. That first line is removed when a solution is put in place,
 * so inside the package each solution is checked with the course's full strictness.
 *
 * `measureSolutions` is the same measurement as a function, for callers that want the figures.
 */
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { parse as parseYaml } from "yaml";
import { isEntryPoint, normalizeChapterId } from "../../../src/core/cli.js";
import { courseRoot } from "../../../src/core/paths.js";
import { findHome, inHome, SOLUTIONS_DIR } from "../../../src/course/chapter-home.js";
import type { StarterOverlay } from "../../../src/course/manifest.js";
import { starterOf } from "../../../src/course/starters.js";
import { childEnv, tempFolderEnv } from "../../../src/core/process.js";
import { resolveCompiler, type Compiler } from "../../../src/testing/compiler.js";

const PACKAGE = "packages/pi-course";
const NOCHECK = /^\/\/ @ts-nocheck[^\n]*\n/;
/** A solution's file name: one letter, a hyphen, its style (`a-functional.ts`). */
const SOLUTION_FILE = /^[a-z]-[a-z0-9-]+\.ts$/;
/** The tsconfig a workspace builds with: the package's own, narrowed to the lab tests (and probes). */
const MEASURE_TSCONFIG = "tsconfig.measure.json";
/** A test run that takes longer than this is ended; its unfinished tests count as failed. */
const TEST_TIMEOUT_MS = 120_000;

/** One teaching file of a chapter: what a solution or a mistake replaces. */
export interface TeachingTarget {
  /** The teaching file, repo-relative. */
  file: string;
  /** Its emitted declarations, repo-relative. */
  declarations: string;
  /** Its starter's text: the hand-kept file, or derived from the reference and the scaffold (`course/starters.ts`). */
  starter: string;
  /** The reference's text. */
  reference: string;
}

/** What measuring one chapter needs, read from its manifest and its folder of solutions. */
export interface ChapterSetup {
  id: string;
  /** Where the solutions, mistakes.yaml and rule-probes.ts live. */
  dir: string;
  /** The teaching files, in the manifest's order of starters. */
  targets: TeachingTarget[];
  /** The lab test files: their sources (repo-relative) and their compiled files (repo-relative). */
  labSources: string[];
  labTests: string[];
  /** The solutions' names (their files without `.ts`), sorted. */
  solutions: string[];
  /** The teaching file each solution replaces. */
  replaces: Map<string, string>;
  labs: string[];
  /** How many lab tests the chapter has (the sum of its labs' `tests`). */
  expectedTests: number;
  /** The rule probes: their source, where they go in the package, their compiled file. */
  probes?: { source: string; placed: string; compiled: string };
}

/** The measurement setup of chapter `id`, from its home (`chapter-home.ts`): its manifest and its `solutions/` folder. */
export function chapterSetup(id: string, repo: string = courseRoot): ChapterSetup {
  const home = findHome(repo, id);
  if (home === undefined) throw new Error(`chapter ${id}: no home folder with a manifest`);
  const manifestFile = path.join(repo, ...home.manifestPath.split("/"));
  const dir = path.join(repo, ...inHome(home.home, SOLUTIONS_DIR).split("/"));
  if (!existsSync(dir)) throw new Error(`chapter ${id}: no folder of solutions ${path.relative(repo, dir)}`);
  const manifest = parseYaml(readFileSync(manifestFile, "utf8")) as {
    starters?: { from?: string; scaffold?: string; to: string }[];
    focusedTests?: string[];
    solutions?: (string | { file: string; replaces: string })[];
    labs?: { id: string; tests: number; declarations?: string[] }[];
  };
  const overlays: StarterOverlay[] = (manifest.starters ?? []).map((entry) =>
    // A scaffold or starter is written relative to the home (`manifest.ts`).
    entry.scaffold !== undefined
      ? { from: inHome(home.home, entry.scaffold), to: entry.to, scaffold: true }
      : { from: inHome(home.home, entry.from ?? ""), to: entry.to },
  );
  const focused = manifest.focusedTests ?? [];
  const labs = manifest.labs;
  if (overlays.length === 0 || focused.length === 0 || labs === undefined)
    throw new Error(`chapter ${id}: the manifest names no starter, focused test or labs`);
  const compiled = (source: string) => source.replace(/^packages\/pi-course\//, `${PACKAGE}/dist/`).replace(/\.ts$/, ".js");
  const read = (file: string) => readFileSync(path.join(repo, ...file.split("/")), "utf8");
  const targets = overlays.map((overlay) => ({
    file: overlay.to,
    declarations: compiled(overlay.to).replace(/\.js$/, ".d.ts"),
    starter: starterOf({ labs: labs.map((lab) => ({ id: lab.id, declarations: lab.declarations ?? [] })) }, overlay, read).text,
    reference: read(overlay.to),
  }));
  const solutions = readdirSync(dir)
    .filter((name) => SOLUTION_FILE.test(name))
    .sort()
    .map((name) => name.slice(0, -".ts".length));
  const named = new Map(
    (manifest.solutions ?? []).flatMap((entry) => (typeof entry === "string" ? [] : [[path.posix.basename(entry.file, ".ts"), entry.replaces] as const])),
  );
  const replaces = new Map(
    solutions.map((name) => {
      const file = named.get(name) ?? (targets.length === 1 ? targets[0]!.file : undefined);
      if (file === undefined || !targets.some((target) => target.file === file)) {
        throw new Error(`chapter ${id}: solution ${name} replaces no teaching file (list it under the manifest's solutions: as { file, replaces })`);
      }
      return [name, file] as const;
    }),
  );
  const probesSource = path.join(dir, "rule-probes.ts");
  const probesPlaced = `${PACKAGE}/test/${id}-rule-probes.test.ts`;
  return {
    id,
    dir,
    targets,
    labSources: focused,
    labTests: focused.map(compiled),
    solutions,
    replaces,
    labs: labs.map((lab) => lab.id),
    expectedTests: labs.reduce((sum, lab) => sum + lab.tests, 0),
    ...(existsSync(probesSource) ? { probes: { source: probesSource, placed: probesPlaced, compiled: compiled(probesPlaced) } } : {}),
  };
}

interface Mistake {
  id: string;
  lab: string;
  base: string;
  rule: string;
  find: string;
  replace: string;
  /** The teaching file the mistake edits: its base's (a solution's), or named by `file:` (the reference's). */
  file: string;
}

/** One build and test run: `text` in place of the teaching file `file`, every other teaching file the reference. */
export interface Edit {
  file: string;
  text: string;
}

export interface TestOutcome {
  name: string;
  lab: string;
  ok: boolean;
}

export interface RunResult {
  built: boolean;
  buildOutput: string;
  tests: TestOutcome[];
  /** The rule probes' results, when they ran. */
  probes?: TestOutcome[];
  declarations?: string;
  hung: boolean;
}

// ---------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------

function run(command: string, args: readonly string[], cwd: string, timeoutMs?: number): Promise<{ code: number | null; output: string; hung: boolean }> {
  return new Promise((resolve, reject) => {
    // The tests' temporary files stay in the worker's copy, removed with it: a test process killed
    // or crashed by a mistake never runs its own cleanup.
    const tmp = path.join(cwd, ".tmp");
    mkdirSync(tmp, { recursive: true });
    // childEnv drops NODE_TEST_CONTEXT: our own node:test parent, if any, must not capture the child's report.
    const env = childEnv({ set: tempFolderEnv(tmp) });
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: process.platform !== "win32" });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => chunks.push(chunk));
    let hung = false;
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            hung = true;
            try {
              if (child.pid !== undefined && process.platform !== "win32") process.kill(-child.pid, "SIGKILL");
              else child.kill("SIGKILL");
            } catch {
              // already gone
            }
          }, timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      if (timer !== undefined) clearTimeout(timer);
      resolve({ code, output: Buffer.concat(chunks).toString("utf8"), hung });
    });
  });
}

// ---------------------------------------------------------------------------
// A worker: one temporary copy of the course package
// ---------------------------------------------------------------------------

class Workspace {
  readonly dir: string;
  readonly #compiler: Compiler;
  readonly #chapter: ChapterSetup;
  /** What each teaching file of the copy holds now. */
  readonly #written = new Map<string, string>();

  constructor(compiler: Compiler, chapter: ChapterSetup, repo: string) {
    this.#compiler = compiler;
    this.#chapter = chapter;
    this.dir = mkdtempSync(path.join(os.tmpdir(), `pi-course-${chapter.id}-solutions-`));
    const pkg = path.join(this.dir, PACKAGE);
    mkdirSync(pkg, { recursive: true });
    for (const part of ["src", "test"]) cpSync(path.join(repo, PACKAGE, part), path.join(pkg, part), { recursive: true });
    for (const file of ["tsconfig.json", "package.json"]) cpSync(path.join(repo, PACKAGE, file), path.join(pkg, file));
    cpSync(path.join(repo, "tsconfig.base.json"), path.join(this.dir, "tsconfig.base.json"));
    symlinkSync(path.join(repo, "node_modules"), path.join(this.dir, "node_modules"), "junction");
    if (chapter.probes !== undefined) {
      writeFileSync(path.join(this.dir, ...chapter.probes.placed.split("/")), readFileSync(chapter.probes.source, "utf8").replace(NOCHECK, ""));
    }
    // Only what the lab tests (and the probes) import is built: the package's own tsconfig,
    // narrowed to those entry files, which cuts a full build of the package to about a third.
    const inPackage = (file: string) => path.posix.relative(PACKAGE, file);
    const entries = [...chapter.labSources.map(inPackage), ...(chapter.probes === undefined ? [] : [inPackage(chapter.probes.placed)])];
    writeFileSync(
      path.join(pkg, MEASURE_TSCONFIG),
      JSON.stringify({ extends: "./tsconfig.json", compilerOptions: { tsBuildInfoFile: "dist/.measure.tsbuildinfo" }, include: entries }, null, 2),
    );
  }

  /** Puts `edit.text` in place of its teaching file (the others as the reference), builds, and runs the lab tests when it compiled (unless `compileOnly`). */
  async measure(edit: Edit, withProbes = false, compileOnly = false): Promise<RunResult> {
    const chapter = this.#chapter;
    for (const target of chapter.targets) {
      const text = target.file === edit.file ? edit.text : target.reference;
      // Written only when it changes: the build is incremental.
      if (this.#written.get(target.file) !== text) writeFileSync(path.join(this.dir, ...target.file.split("/")), text);
      this.#written.set(target.file, text);
    }
    // No output is deleted beforehand: an incremental build re-emits only files whose output
    // changes (a test importing the teaching file is not re-emitted when the declarations stay
    // the same), and a failed build is known by its exit status, not by missing files.
    const build = await run(this.#compiler.command, [...this.#compiler.args, "-p", `${PACKAGE}/${MEASURE_TSCONFIG}`, "--pretty", "false"], this.dir);
    const built = chapter.labTests.every((file) => existsSync(path.join(this.dir, ...file.split("/"))));
    if (build.code !== 0 || !built) return { built: false, buildOutput: build.output, tests: [], hung: false };
    if (compileOnly) return { built: true, buildOutput: "", tests: [], hung: false };
    const declarationsFile = chapter.targets.find((target) => target.file === edit.file)!.declarations;
    const declarations = readFileSync(path.join(this.dir, ...declarationsFile.split("/")), "utf8");
    const tests = await run(process.execPath, ["--test", "--test-reporter=tap", ...chapter.labTests], this.dir, TEST_TIMEOUT_MS);
    const result: RunResult = { built: true, buildOutput: build.output, tests: parseTap(tests.output), declarations, hung: tests.hung };
    if (withProbes && chapter.probes !== undefined) {
      const probes = await run(process.execPath, ["--test", "--test-reporter=tap", chapter.probes.compiled], this.dir, TEST_TIMEOUT_MS);
      result.probes = parseTap(probes.output);
      result.hung ||= probes.hung;
    }
    return result;
  }

  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The top-level test results of node's TAP report (subtests are indented, so skipped). */
function parseTap(output: string): TestOutcome[] {
  const outcomes: TestOutcome[] = [];
  for (const line of output.split(/\r?\n/)) {
    const match = /^(not )?ok \d+ - (.*?)(?: # (SKIP|TODO).*)?$/.exec(line);
    if (match === null) continue;
    const name = match[2]!;
    const lab = /^(?:Lab|Probe) (\d+\.\d+)/.exec(name)?.[1] ?? "?";
    outcomes.push({ name, lab, ok: match[1] === undefined });
  }
  return outcomes;
}

/** Runs `jobs` over `workers`, each worker taking the next job when it is free. */
async function pool<J, R>(items: readonly J[], workers: readonly Workspace[], job: (workspace: Workspace, item: J) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    workers.map(async (workspace) => {
      while (next < items.length) {
        const index = next++;
        results[index] = await job(workspace, items[index]!);
      }
    }),
  );
  return results;
}

// ---------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------

/** A solution as stored (with its `@ts-nocheck` line). */
function storedSolution(chapter: ChapterSetup, name: string): string {
  return readFileSync(path.join(chapter.dir, `${name}.ts`), "utf8");
}

/** A solution as it goes into the package: without its `@ts-nocheck` line. */
function inPlace(stored: string): string {
  return stored.replace(NOCHECK, "");
}

function occurrences(haystack: string, needle: string): number {
  if (needle === "") return 0;
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) count += 1;
  return count;
}

/** The base a catalog names for the chapter's reference (its teaching file) rather than a kept solution. */
const REFERENCE_BASE = "reference";

/** The text a mistake edits: its base solution as stored, or the reference of the teaching file it names. */
function baseOf(chapter: ChapterSetup, mistake: Mistake): string {
  if (mistake.base !== REFERENCE_BASE) return storedSolution(chapter, mistake.base);
  return chapter.targets.find((target) => target.file === mistake.file)!.reference;
}

export function loadMistakes(chapter: ChapterSetup, file = path.join(chapter.dir, "mistakes.yaml")): Mistake[] {
  const raw = parseYaml(readFileSync(file, "utf8")) as unknown;
  const list = (raw as { mistakes?: unknown }).mistakes;
  if (!Array.isArray(list)) throw new Error("mistakes.yaml: expected a top-level `mistakes:` list");
  const seen = new Set<string>();
  return list.map((entry: unknown, index) => {
    const m = entry as Partial<Mistake>;
    for (const field of ["id", "lab", "base", "rule", "find", "replace"] as const) {
      if (typeof m[field] !== "string") throw new Error(`mistakes.yaml entry ${index}: field ${field} must be a string`);
    }
    if (m.file !== undefined && typeof m.file !== "string") throw new Error(`mistakes.yaml entry ${index}: field file must be a string`);
    if (m.base !== REFERENCE_BASE && !chapter.solutions.includes(m.base!)) throw new Error(`${m.id}: unknown base ${m.base}`);
    const file = m.base === REFERENCE_BASE ? (m.file ?? (chapter.targets.length === 1 ? chapter.targets[0]!.file : undefined)) : chapter.replaces.get(m.base!);
    if (file === undefined || !chapter.targets.some((target) => target.file === file)) {
      throw new Error(`${m.id}: name the teaching file it edits (file: one of ${chapter.targets.map((target) => target.file).join(", ")})`);
    }
    if (m.file !== undefined && m.file !== file) throw new Error(`${m.id}: base ${m.base} replaces ${file}, not ${m.file}`);
    m.file = file;
    if (!chapter.labs.includes(m.lab!)) throw new Error(`${m.id}: unknown lab ${m.lab}`);
    if (seen.has(m.id!)) throw new Error(`${m.id}: id used twice`);
    seen.add(m.id!);
    return m as Mistake;
  });
}

/** Declarations without comments and with whitespace collapsed: the public shape only. */
function publicShape(declarations: string): string {
  return declarations
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/^\s*\/\/.*$/gm, "")
    .replace(/\/\/# sourceMappingURL=.*$/gm, "")
    .replace(/\s+/g, " ")
    .trim();
}

// ---------------------------------------------------------------------------
// Measuring
// ---------------------------------------------------------------------------

/** One solution's measurement. */
export interface SolutionRun {
  name: string;
  result: RunResult;
  /** Its public declarations equal the starter's. */
  sameSurface: boolean;
  /** Built, every one of the chapter's lab tests reported and passed, the same surface, every probe passed (when they ran). */
  green: boolean;
}

/** Workspaces for `chapter`, removed by `dispose` (and on Ctrl-C). */
function workspaces(chapter: ChapterSetup, jobs: number, repo: string): { workers: Workspace[]; dispose(): void } {
  const compiler = resolveCompiler(path.join(repo, PACKAGE));
  const workers = Array.from({ length: jobs }, () => new Workspace(compiler, chapter, repo));
  const interrupted = () => {
    for (const workspace of workers) workspace.dispose();
    process.exit(130);
  };
  process.once("SIGINT", interrupted);
  return {
    workers,
    dispose() {
      process.off("SIGINT", interrupted);
      for (const workspace of workers) workspace.dispose();
    },
  };
}

/** Each starter's public surface, by teaching file, built by `workspace` (every other teaching file the reference). */
async function starterShapes(workspace: Workspace, chapter: ChapterSetup): Promise<Map<string, string>> {
  const shapes = new Map<string, string>();
  for (const target of chapter.targets) {
    const starter = await workspace.measure({ file: target.file, text: target.starter });
    if (!starter.built || starter.declarations === undefined) throw new Error(`the starter of ${target.file} does not build:\n${starter.buildOutput}`);
    shapes.set(target.file, publicShape(starter.declarations));
  }
  return shapes;
}

/** Solution `name` as an edit: its teaching file and its text in place. */
function solutionEdit(chapter: ChapterSetup, name: string): Edit {
  return { file: chapter.replaces.get(name)!, text: inPlace(storedSolution(chapter, name)) };
}

function solutionRun(chapter: ChapterSetup, name: string, result: RunResult, shapes: ReadonlyMap<string, string>): SolutionRun {
  const sameSurface = result.declarations !== undefined && publicShape(result.declarations) === shapes.get(chapter.replaces.get(name)!);
  const passed = result.tests.filter((test) => test.ok).length;
  const probesOk = result.probes === undefined || (result.probes.length > 0 && result.probes.every((probe) => probe.ok));
  const green = result.built && !result.hung && sameSurface && probesOk && result.tests.length === chapter.expectedTests && passed === result.tests.length;
  return { name, result, sameSurface, green };
}

/**
 * Builds and tests every solution of chapter `id` (or those named in `only`) and compares
 * each one's public declarations with the starter's. For tests: the same measurement as
 * `measure.ts --chapter <id>`, without the report.
 */
export async function measureSolutions(id: string, options: { jobs?: number; only?: readonly string[]; repo?: string } = {}): Promise<SolutionRun[]> {
  const repo = options.repo ?? courseRoot;
  const chapter = chapterSetup(id, repo);
  const names = chapter.solutions.filter((name) => options.only === undefined || options.only.includes(name));
  const { workers, dispose } = workspaces(chapter, Math.max(1, Math.min(options.jobs ?? 1, names.length)), repo);
  try {
    const shapes = await starterShapes(workers[0]!, chapter);
    const results = await pool(names, workers, (workspace, name) => workspace.measure(solutionEdit(chapter, name)));
    return names.map((name, index) => solutionRun(chapter, name, results[index]!, shapes));
  } finally {
    dispose();
  }
}

// ---------------------------------------------------------------------------
// Reports
// ---------------------------------------------------------------------------

function perLab(chapter: ChapterSetup, tests: readonly TestOutcome[]): string {
  return chapter.labs
    .map((lab) => {
      const mine = tests.filter((test) => test.lab === lab);
      return `${lab} ${mine.filter((test) => test.ok).length}/${mine.length}`;
    })
    .join("  ");
}

function pad(value: string, width: number): string {
  return value.length >= width ? value : value + " ".repeat(width - value.length);
}

/** "12.2#3" for the third test of Lab 12.2: a short name for a lab test. */
function shortNames(all: readonly TestOutcome[], failed: readonly TestOutcome[]): string {
  return failed
    .map((test) => {
      const ofLab = all.filter((other) => other.lab === test.lab);
      return `${test.lab}#${ofLab.findIndex((other) => other.name === test.name) + 1}`;
    })
    .join(" ");
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      chapter: { type: "string" },
      mistakes: { type: "boolean" },
      only: { type: "string" },
      jobs: { type: "string" },
      verbose: { type: "boolean" },
      probes: { type: "boolean" },
      catalog: { type: "string" },
      "compile-only": { type: "boolean" },
    },
  });
  if (values["compile-only"] === true) {
    if (values.catalog === undefined) throw new Error("--compile-only checks a catalog: give it --catalog <file>");
    return checkCatalogCompiles(chapterSetup(normalizeChapterId(values.chapter ?? "12") ?? values.chapter ?? "12"), path.resolve(values.catalog));
  }
  if (values.catalog !== undefined) values.mistakes = true;
  const asked = values.chapter ?? "12";
  const chapter = chapterSetup(normalizeChapterId(asked) ?? asked);
  const expected = chapter.expectedTests;
  const withProbes = values.probes === true;
  if (withProbes && chapter.probes === undefined) throw new Error(`chapter ${chapter.id} has no rule-probes.ts`);
  const jobs = Math.max(1, Number(values.jobs ?? Math.min(4, Math.max(1, os.availableParallelism() - 1))));
  const { workers, dispose } = workspaces(chapter, jobs, courseRoot);
  let failed = false;
  try {
    // The starters' declarations: the public surface every solution must keep.
    const shapes = await starterShapes(workers[0]!, chapter);

    const solutions = chapter.solutions.filter((name) => values.only === undefined || name.startsWith(values.only) || values.mistakes === true);
    console.log(`# chapter ${chapter.id} solutions (lab tests passed/total)`);
    const solutionRuns = await pool(solutions, workers, (workspace, name) => workspace.measure(solutionEdit(chapter, name), withProbes));
    solutions.forEach((name, index) => {
      const result = solutionRuns[index]!;
      if (!result.built) {
        failed = true;
        console.log(`${pad(name, 14)} DOES NOT COMPILE\n${result.buildOutput}`);
        return;
      }
      const measured = solutionRun(chapter, name, result, shapes);
      if (!measured.green) failed = true;
      const passed = result.tests.filter((test) => test.ok).length;
      let probeNote = "";
      if (result.probes !== undefined) {
        const failedProbes = result.probes.filter((probe) => !probe.ok);
        probeNote = `  probes ${result.probes.length - failedProbes.length}/${result.probes.length}`;
        for (const probe of failedProbes) probeNote += `\n    ✖ ${probe.name}`;
      }
      console.log(
        `${pad(name, 14)} ${perLab(chapter, result.tests)}  total ${passed}/${result.tests.length}  .d.ts ${measured.sameSurface ? "= starter" : "DIFFERS from the starter"}${probeNote}`,
      );
      if (values.verbose === true) for (const test of result.tests.filter((t) => !t.ok)) console.log(`    ✖ ${test.name}`);
    });

    if (values.mistakes === true) {
      const catalog = values.catalog === undefined ? undefined : path.resolve(values.catalog);
      const all = loadMistakes(chapter, catalog).filter((m) => values.only === undefined || m.id.startsWith(values.only) || m.base === values.only);
      console.log(`\n# mistakes (${all.length})`);
      const runs = await pool(all, workers, async (workspace, mistake) => {
        const base = baseOf(chapter, mistake);
        const count = occurrences(base, mistake.find);
        if (count !== 1) return { mistake, verdict: `BAD FIND (${count} occurrences)`, killers: [] as TestOutcome[], result: undefined };
        const edited = base.replace(mistake.find, () => mistake.replace);
        const result = await workspace.measure({ file: mistake.file, text: inPlace(edited) }, withProbes);
        if (!result.built) return { mistake, verdict: "INVALID", killers: [] as TestOutcome[], result };
        const killers = result.tests.filter((test) => !test.ok);
        const missing = expected - result.tests.length;
        const verdict = killers.length > 0 || missing > 0 ? "killed" : "SURVIVED";
        return { mistake, verdict: result.hung ? `${verdict} (test run ended after ${TEST_TIMEOUT_MS / 1000} s)` : verdict, killers, result };
      });
      const idWidth = Math.max(...all.map((m) => m.id.length), 2) + 2;
      const probeColumn = (result: RunResult | undefined): string => {
        if (result?.probes === undefined) return "";
        const caught = result.probes.filter((probe) => !probe.ok).length;
        return pad(caught > 0 ? `${caught} probe${caught === 1 ? "" : "s"}` : "NONE", 11);
      };
      console.log(`${pad("id", idWidth)}${pad("lab", 6)}${pad("base", 14)}${withProbes ? pad("probes", 11) : ""}killed by (lab#test)`);
      for (const { mistake, verdict, killers, result } of runs) {
        let column: string;
        if (verdict.startsWith("killed")) {
          const missing = expected - (result?.tests.length ?? 0);
          column = `${shortNames(result!.tests, killers)}${missing > 0 ? ` (+${missing} never reported)` : ""}${verdict === "killed" ? "" : ` ${verdict.slice("killed".length).trim()}`}`;
        } else column = verdict;
        console.log(`${pad(mistake.id, idWidth)}${pad(mistake.lab, 6)}${pad(mistake.base, 14)}${probeColumn(result)}${column}`);
        if (verdict === "INVALID" && result !== undefined) {
          failed = true;
          console.log(
            result.buildOutput
              .split("\n")
              .filter((line) => line.trim() !== "")
              .slice(0, 5)
              .map((line) => `    ${line}`)
              .join("\n"),
          );
        }
        if (verdict.startsWith("BAD FIND")) failed = true;
        if (values.verbose === true) {
          for (const test of killers) console.log(`    ✖ ${test.name}`);
          for (const probe of result?.probes?.filter((p) => !p.ok) ?? []) console.log(`    probe ✖ ${probe.name}`);
        }
      }
      console.log("\n# kills per lab (a mistake counts as killed when any lab test fails)");
      let killedTotal = 0;
      for (const lab of chapter.labs) {
        const mine = runs.filter((r) => r.mistake.lab === lab);
        const killed = mine.filter((r) => r.verdict.startsWith("killed"));
        const byOwnLab = killed.filter((r) => r.killers.some((test) => test.lab === lab));
        killedTotal += killed.length;
        console.log(`Lab ${lab}: killed ${killed.length}/${mine.length} (by a test of its own lab: ${byOwnLab.length})`);
      }
      const invalid = runs.filter((r) => r.verdict === "INVALID" || r.verdict.startsWith("BAD FIND"));
      console.log(`total: killed ${killedTotal}/${runs.length}, survived ${runs.filter((r) => r.verdict === "SURVIVED").length}, invalid ${invalid.length}`);
      const survived = runs.filter((r) => r.verdict === "SURVIVED").map((r) => r.mistake.id);
      if (survived.length > 0) console.log(`SURVIVED: ${survived.join(", ")}`);
      if (withProbes) {
        const built = runs.filter((r) => r.result?.built === true && r.result.probes !== undefined);
        const probed = built.filter((r) => r.result!.probes!.some((probe) => !probe.ok));
        const unseen = built.filter((r) => r.verdict === "SURVIVED" && !probed.includes(r));
        console.log(
          `probes: caught ${probed.length}/${built.length}; survivors of the lab tests caught by a probe: ${runs.filter((r) => r.verdict === "SURVIVED").length - unseen.length}`,
        );
        if (unseen.length > 0) console.log(`caught by neither (no observable change?): ${unseen.map((r) => r.mistake.id).join(", ")}`);
        if (unseen.length > 0) failed = true;
      }
    }
  } finally {
    dispose();
  }
  return failed ? 1 : 0;
}

/**
 * `--compile-only`: every mistake of `catalog` applied to its base and built; prints, per
 * mistake, `ok`, `BAD FIND` or `INVALID` with the compiler's messages about the teaching file
 * only (an error elsewhere means the public surface changed, and says no more). Never runs or
 * names a test. Exit status 1 when any mistake does not apply or compile.
 */
async function checkCatalogCompiles(chapter: ChapterSetup, catalog: string): Promise<number> {
  const mistakes = loadMistakes(chapter, catalog);
  const { workers, dispose } = workspaces(chapter, Math.min(2, Math.max(1, os.availableParallelism())), courseRoot);
  try {
    const verdicts = await pool(mistakes, workers, async (workspace, mistake) => {
      const base = baseOf(chapter, mistake);
      const count = occurrences(base, mistake.find);
      if (count !== 1) return `BAD FIND (${count} occurrences)`;
      const result = await workspace.measure({ file: mistake.file, text: inPlace(base.replace(mistake.find, () => mistake.replace)) }, false, true);
      if (result.built) return "ok";
      const teaching = path.posix.relative(PACKAGE, mistake.file);
      const own = result.buildOutput.split("\n").filter((line) => line.startsWith(teaching) || line.startsWith(mistake.file));
      return own.length > 0
        ? `INVALID\n${own
            .slice(0, 5)
            .map((line) => `    ${line}`)
            .join("\n")}`
        : "INVALID (a type error outside the teaching file: the public surface changed)";
    });
    for (const [index, mistake] of mistakes.entries()) console.log(`${pad(mistake.id, 40)}${verdicts[index]}`);
    const bad = verdicts.filter((verdict) => verdict !== "ok").length;
    console.log(`\n${mistakes.length - bad}/${mistakes.length} apply and compile`);
    return bad === 0 ? 0 : 1;
  } finally {
    dispose();
  }
}

if (isEntryPoint(import.meta.url)) process.exitCode = await main();
