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
 * 8. leak audit — no line of the reference that the starter lacks appears in the folder, and
 *    the audit would see one: a reference line pasted into each starter is caught (`leak-probe.ts`)
 * 9. reference labs — the practice folder with the target teaching file: every lab N/N
 * 10. faults — the catalog covers every lab; every fault (and the exercise's learner
 *    patch, applied to the reference) is killed by its named test and restored; every
 *    kept solution (`solutions:`) passes every focused test and declares the reference's surface
 * 11. chapter total — the focused tests with the reference: all pass, as many as the labs say
 * 12. through chapter NN — every `NN-*.test.js` of chapters ≤ NN passes in the target tree
 *
 * A failing step does not stop the others; a step that needs what a failed step would
 * have produced reports that it did not run (each step declares what it needs once, in
 * `steps.ts`, and this runner supplies it). Steps run as soon as what they need is made,
 * up to `concurrency` at a time, never two in the same folder at once (`sameFolder`): the
 * text replay, the parent and the through-chapter tree need only the history, so they run
 * beside the practice folder's steps. Ready steps start in record order, except the text
 * replay (`startsFirst`), the longest, which starts as soon as the history is made. Checks
 * are reported in record order all the same. The judgements over test records are pure
 * (`evaluate.ts`, `staged.ts`), so they are tested on synthetic results.
 */
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { CourseError } from "../core/errors.js";
import { makeScratchDir, removeScratchDir } from "../core/scratch.js";
import { errorDetail, notRun, stepTitles, type CheckResult, type StepTitle } from "./checks.js";
import { MISSING, sameFolder, stepName, VERIFY_STEPS, type Make, type ProductName, type Products, type Step, type StepEnv } from "./steps.js";

export type { CheckResult };

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
  /** Called as each step starts (steps may overlap): 1-based index in record order, step count, title. */
  onStep?(index: number, total: number, title: string): void;
  /** Called as each step ends, with the wall-clock seconds it took itself (overlapping steps each count their own). */
  onStepDone?(index: number, total: number, title: string, seconds: number): void;
  /** Called for each check, in record order, once every check before it is decided. */
  onCheck?(check: CheckResult): void;
  /** How many steps may run at once; default 2 (1 on a one-core machine). */
  concurrency?: number;
  /** Called with a one-line note while a long step works (e.g. each replayed command). */
  onProgress?(message: string): void;
}

/** The step that makes each product. */
function producers(): Map<ProductName, Step> {
  const made = new Map<ProductName, Step>();
  for (const step of VERIFY_STEPS) for (const product of step.makes) made.set(product, step);
  return made;
}

/**
 * The steps to run for `only` (titles), in record order, each with every step whose products
 * it needs, directly or not. Throws `USAGE` for a title the record does not have.
 */
export function selectSteps(only: readonly string[] | undefined): readonly Step[] {
  if (only === undefined) return VERIFY_STEPS;
  const makers = producers();
  const wanted = new Set<Step>();
  const add = (title: StepTitle): void => {
    const step = VERIFY_STEPS.find((s) => s.title === title)!;
    if (wanted.has(step)) return;
    wanted.add(step);
    for (const product of step.needs) add(makers.get(product)!.title);
  };
  stepTitles(only).forEach(add);
  return VERIFY_STEPS.filter((s) => wanted.has(s));
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
  const env: StepEnv = {
    origin: options.repo,
    nodeModules: path.join(options.repo, "node_modules"),
    id: options.id,
    scratch,
    signal: options.signal,
    onProgress: options.onProgress,
  };
  const products: Partial<Products> = {};
  const make: Make = (name, value) => {
    products[name] = value;
  };
  const checks: CheckResult[] = [];
  const concurrency = Math.max(1, options.concurrency ?? Math.min(2, os.availableParallelism()));
  const state = steps.map((): "waiting" | "running" | "done" => "waiting");
  const results: (CheckResult[] | undefined)[] = steps.map(() => undefined);
  let reported = 0;
  const reportInOrder = (): void => {
    for (; reported < steps.length && results[reported] !== undefined; reported += 1) {
      for (const check of results[reported]!) {
        checks.push(check);
        options.onCheck?.(check);
      }
    }
  };
  // A need is settled once it is made or every step that could make it has finished without it.
  const settled = (product: ProductName): boolean =>
    products[product] !== undefined || steps.every((s, i) => !s.makes.includes(product) || state[i] === "done");
  const ready = (index: number): boolean =>
    state[index] === "waiting" && steps[index]!.needs.every(settled) && steps.every((other, i) => state[i] !== "running" || !sameFolder(steps[index]!, other));
  const runStep = async (index: number): Promise<void> => {
    const step = steps[index]!;
    const name = stepName(step.title, options.id);
    state[index] = "running";
    const stepStarted = performance.now();
    options.onStep?.(index + 1, steps.length, name);
    const missing = step.needs.find((product) => products[product] === undefined);
    try {
      results[index] = missing !== undefined ? [notRun(name, MISSING[missing])] : await step.run(env, products, make);
    } catch (error) {
      results[index] = [{ name, ok: false, detail: errorDetail(error, (e) => String((e as Error).message ?? e)) }];
    }
    state[index] = "done";
    options.onStepDone?.(index + 1, steps.length, name, (performance.now() - stepStarted) / 1000);
  };
  // Record order, except that a step marked `startsFirst` (the longest) goes ahead of the others.
  const startOrder = steps.map((_, index) => index).sort((a, b) => Number(steps[b]!.startsFirst === true) - Number(steps[a]!.startsFirst === true));
  const running = new Set<Promise<void>>();
  try {
    while (state.some((s) => s !== "done")) {
      if (!options.signal?.aborted) {
        for (const index of startOrder) {
          if (running.size >= concurrency) break;
          if (!ready(index)) continue;
          const run: Promise<void> = runStep(index).finally(() => running.delete(run));
          running.add(run);
        }
      }
      if (running.size === 0) {
        if (options.signal?.aborted) break;
        throw new Error("verify: no step can start (a step needs a product no step makes)");
      }
      await Promise.race(running);
      reportInOrder();
    }
    if (options.signal?.aborted) throw new CourseError("ABORTED", "已中断；临时目录已删除");
    // The record is made in a private clone of a snapshot of the working tree, whose commits
    // the repository may not even have: verify never writes the teaching branch (checkpoint does).
  } finally {
    await removeScratchDir(scratch);
  }
  return { chapter: options.id, checks, ok: checks.every((c) => c.ok), seconds: Math.round((Date.now() - started) / 100) / 10 };
}
