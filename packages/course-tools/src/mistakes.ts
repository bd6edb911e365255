/**
 * `npm run mistakes -w @pi/course -- NN [--catalog <file>] [--compile-only] [--json]` (course
 * authors): measures a catalog of learner mistakes against the chapter's lab tests — the
 * chapter's own (`solutions/mistakes.yaml` of its home, `course/catalog.ts`) or a held-out one
 * (`bench/held-out/NN-K.yaml`) — with the one runner `verify` runs faults with
 * (`testing/fault-runs.ts`), in a scratch copy of the working tree (the repository is only read).
 *
 * Guarantees
 * - A bad catalog stops the command before anything is built, naming the entry: a file that
 *   cannot be read as a catalog is `CATALOG_INVALID`, a malformed entry `FAULT_INVALID`, an
 *   entry whose `find` does not occur exactly once in its base `FAULT_DRIFTED` (every such
 *   entry is listed).
 * - With the tests run: every kept solution of the chapter first (per lab passed/total, and
 *   whether its public surface is the reference's), then per lab how many of its mistakes were
 *   killed (any focused test failing, or the tests an entry names all failing) and every
 *   survivor with its rule. The command fails (exit 1) when a lab kills fewer than 90% of its
 *   mistakes (`MISTAKES_LAB_BAR`), the chapter fewer than 95% (`MISTAKES_CHAPTER_BAR`), an entry does not
 *   compile, or a kept solution is not green.
 * - `--compile-only` builds every edit and runs no test, and says nothing about tests: what a
 *   catalog's writer, who must not see the tests, checks their catalog with.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { CommandContext } from "./core/cli.js";
import { CourseError, isCourseError } from "./core/errors.js";
import { withScratchInterrupts } from "./core/interrupt.js";
import { userCwd } from "./core/paths.js";
import { catalogEntries, catalogPath } from "./course/catalog.js";
import { catalogMistakes, injectFault, type Mistake, REFERENCE_BASE } from "./course/faults.js";
import { testBelongsToLab } from "./course/lab-names.js";
import { loadManifest, type ChapterManifest } from "./course/manifest.js";
import { type FaultResult, type KeptSolution, keptSolution, runAuthorChecks, type SolutionResult } from "./testing/fault-runs.js";
import { MISTAKES_CHAPTER_BAR, MISTAKES_LAB_BAR, MISTAKES_RUN_TIMEOUT_MS } from "./testing/limits.js";

/** `mistakes`'s arguments (declared in the command table, `cli.ts`). */
export interface MistakesArgs {
  chapter: string;
  /** A catalog file instead of the chapter's own, as typed (relative to where the command was typed). */
  catalog?: string;
  compileOnly: boolean;
  json: boolean;
}

/** One lab's figure. */
export interface LabFigure {
  id: string;
  killed: number;
  total: number;
  /** Killed by a test of the lab itself. */
  byOwnLab: number;
  /** Below `MISTAKES_LAB_BAR` (a lab without mistakes never is). */
  below: boolean;
}

/** What a measurement found, per lab and for the chapter (pure data: `figures`). */
export interface Figures {
  labs: LabFigure[];
  killed: number;
  total: number;
  /** Entries that survived, with the rule each breaks. */
  survivors: { id: string; lab: string; rule?: string }[];
  /** Entries that could not be decided (an edit that does not compile), with why. */
  undecided: { id: string; lab: string; detail: string }[];
  /** Every lab at or above `MISTAKES_LAB_BAR`, the chapter at or above `MISTAKES_CHAPTER_BAR`, nothing undecided. */
  ok: boolean;
}

/** The figures of `results` (the runner's, for `mistakes` of `manifest`): see `Figures`. */
export function figures(
  manifest: Pick<ChapterManifest, "labs">,
  mistakes: readonly Pick<Mistake, "id" | "lab" | "rule">[],
  results: readonly FaultResult[],
): Figures {
  const byId = new Map(results.map((result) => [result.id, result]));
  const labs = manifest.labs.map((lab): LabFigure => {
    const own = mistakes.filter((mistake) => mistake.lab === lab.id).map((mistake) => byId.get(mistake.id));
    const killed = own.filter((result) => result?.status === "killed");
    const byOwnLab = killed.filter((result) => result!.killedBy.some((name) => testBelongsToLab(name, lab.id))).length;
    return { id: lab.id, killed: killed.length, total: own.length, byOwnLab, below: own.length > 0 && killed.length < MISTAKES_LAB_BAR * own.length };
  });
  const killed = labs.reduce((sum, lab) => sum + lab.killed, 0);
  const total = labs.reduce((sum, lab) => sum + lab.total, 0);
  const survivors = mistakes
    .filter((mistake) => byId.get(mistake.id)?.status === "survived")
    .map((mistake) => ({ id: mistake.id, lab: mistake.lab, ...(mistake.rule === undefined ? {} : { rule: mistake.rule }) }));
  const undecided = mistakes
    .filter((mistake) => byId.get(mistake.id)?.status === "error")
    .map((mistake) => ({ id: mistake.id, lab: mistake.lab, detail: byId.get(mistake.id)!.detail ?? "" }));
  const ok = !labs.some((lab) => lab.below) && killed >= MISTAKES_CHAPTER_BAR * total && undecided.length === 0;
  return { labs, killed, total, survivors, undecided, ok };
}

/** `killed/total（percent）`. */
function share(killed: number, total: number): string {
  return `${killed}/${total}${total === 0 ? "" : `（${((100 * killed) / total).toFixed(1)}%）`}`;
}

/** The report of a measurement, in Chinese (pure). */
export function formatFigures(result: Figures, solutions: readonly SolutionResult[]): string {
  const lines: string[] = [];
  for (const solution of solutions) {
    const perLab = (solution.labs ?? []).map((lab) => `${lab.id} ${lab.passed}/${lab.total}`).join("  ");
    lines.push(
      `解答 ${solution.name}：${perLab}  共 ${solution.passed}/${solution.total}${solution.ok ? "；公开接口与参考实现相同" : `；${solution.detail ?? ""}`}`,
    );
  }
  if (solutions.length > 0) lines.push("");
  for (const lab of result.labs) {
    const bar = lab.below ? `（低于 ${MISTAKES_LAB_BAR * 100}%）` : "";
    lines.push(`Lab ${lab.id}：抓住 ${share(lab.killed, lab.total)}${bar}，其中被本 Lab 的测试抓住 ${lab.byOwnLab}`);
    for (const survivor of result.survivors.filter((s) => s.lab === lab.id)) lines.push(`  存活 ${survivor.id}  ${survivor.rule ?? ""}`.trimEnd());
    for (const entry of result.undecided.filter((s) => s.lab === lab.id)) lines.push(`  无法判定 ${entry.id}：${entry.detail}`);
  }
  const chapterBar = result.killed < MISTAKES_CHAPTER_BAR * result.total ? `（低于 ${MISTAKES_CHAPTER_BAR * 100}%）` : "";
  lines.push(`全章：抓住 ${share(result.killed, result.total)}${chapterBar}，存活 ${result.survivors.length}，无法判定 ${result.undecided.length}`);
  return lines.join("\n");
}

/** The catalog's text and how messages name it: the chapter's own (repo-relative), or the file typed. */
async function readCatalog(root: string, manifest: ChapterManifest, typed: string | undefined): Promise<{ text: string; label: string }> {
  const label = typed ?? catalogPath(manifest.home);
  const file = typed === undefined ? path.join(root, ...label.split("/")) : path.resolve(userCwd(), typed);
  try {
    return { text: await readFile(file, "utf8"), label };
  } catch {
    throw new CourseError(
      "CATALOG_INVALID",
      `${label}: 读不到这个错误目录${typed === undefined ? `（第 ${manifest.id} 章的 home 里没有 solutions/mistakes.yaml）` : ""}`,
    );
  }
}

/** The chapter's kept solutions, read from the working tree, without their `@ts-nocheck` line. */
async function keptSolutions(root: string, manifest: ChapterManifest): Promise<KeptSolution[]> {
  const solutions: KeptSolution[] = [];
  for (const entry of manifest.solutions) solutions.push(keptSolution(entry, await readFile(path.join(root, ...entry.file.split("/")), "utf8")));
  return solutions;
}

/**
 * Every entry applied to its base before anything is built: the entries whose `find` does not
 * occur exactly once, all of them in one `FAULT_DRIFTED` (see the module comment).
 */
async function checkFinds(root: string, mistakes: readonly Mistake[], bases: ReadonlyMap<string, string>, label: string): Promise<void> {
  const problems: string[] = [];
  const references = new Map<string, string>();
  for (const mistake of mistakes) {
    let base = bases.get(mistake.base);
    if (mistake.base === REFERENCE_BASE) {
      if (!references.has(mistake.file)) references.set(mistake.file, await readFile(path.join(root, ...mistake.file.split("/")), "utf8"));
      base = references.get(mistake.file);
    }
    try {
      injectFault(base ?? "", mistake);
    } catch (error) {
      if (!isCourseError(error, "FAULT_DRIFTED")) throw error;
      problems.push(mistake.base === REFERENCE_BASE ? error.message : `${error.message}（base ${mistake.base}）`);
    }
  }
  if (problems.length > 0) throw new CourseError("FAULT_DRIFTED", `${label}：${problems.length} 条错误的 find 不是恰好出现一次：\n${problems.join("\n")}`);
}

/** Runs `mistakes` (see the module comment); resolves with the exit status. */
export async function run(args: MistakesArgs, { root, io }: CommandContext): Promise<number> {
  const manifest = await loadManifest(root, args.chapter);
  const { text, label } = await readCatalog(root, manifest, args.catalog);
  const mistakes = catalogMistakes(manifest, catalogEntries(text, label), label);
  const solutions = await keptSolutions(root, manifest);
  const bases = new Map(solutions.map((solution) => [solution.name, solution.text]));
  await checkFinds(root, mistakes, bases, label);

  return withScratchInterrupts(io.stderr, async (signal) => {
    if (!args.json) {
      const what = args.compileOnly ? "只编译，不运行测试" : `连同 ${solutions.length} 份解答；同一 Lab 的错误共用测试进程`;
      io.stderr.write(`在临时副本中注入 ${label} 的 ${mistakes.length} 条错误（一次编译全部；${what}）……\n`);
    }
    const results = await runAuthorChecks({
      sourceRoot: root,
      manifest,
      faults: mistakes,
      bases,
      nodeModules: path.join(root, "node_modules"),
      timeoutMs: MISTAKES_RUN_TIMEOUT_MS,
      signal,
      ...(args.compileOnly ? { compileOnly: true } : { solutions }),
    });
    if (args.compileOnly) return compileReport(mistakes, results.faults, args.json, io.stdout);
    const measured = figures(manifest, mistakes, results.faults);
    const ok = measured.ok && results.solutions.every((solution) => solution.ok);
    if (args.json) io.stdout.write(`${JSON.stringify({ ...measured, ok, solutions: results.solutions, results: results.faults }, null, 2)}\n`);
    else io.stdout.write(`${formatFigures(measured, results.solutions)}\n`);
    return ok ? 0 : 1;
  });
}

/** `--compile-only`'s report: each entry compiled or not (the compiler's first message about it), nothing about tests. */
function compileReport(mistakes: readonly Mistake[], results: readonly FaultResult[], json: boolean, out: CommandContext["io"]["stdout"]): number {
  const bad = results.filter((result) => result.status !== "compiled");
  if (json) {
    out.write(
      `${JSON.stringify({ compiled: results.length - bad.length, total: results.length, invalid: bad.map(({ id, detail }) => ({ id, detail })), ok: bad.length === 0 }, null, 2)}\n`,
    );
  } else {
    const width = Math.max(...mistakes.map((mistake) => mistake.id.length), 2) + 2;
    for (const result of results) out.write(`${result.id.padEnd(width)}${result.status === "compiled" ? "ok" : (result.detail ?? "无法编译")}\n`);
    out.write(`\n${results.length - bad.length}/${results.length} 条可以注入并编译\n`);
  }
  return bad.length === 0 ? 0 : 1;
}
