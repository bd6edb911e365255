/**
 * Staged first red: what a learner meets when starting lab k with every lab before it done.
 *
 * The first-red check runs the bare starter, where a later lab may fail on an earlier
 * lab's scaffold error (a Lab 12.3 test calls `discoverResources` first). That proves
 * nothing about lab k itself. So for each lab k the record builds the tree a learner has
 * at that moment — the reference with every declaration of labs k and later put back
 * from the starter — and asks: does it build, are the earlier labs green, and is lab k red
 * on exactly ITS OWN scaffold error?
 *
 * Which declaration belongs to which lab is read from the starter's `🔨 Lab N.M` markers
 * (one lab per top-level declaration). The splice is per top-level declaration
 * (`spliceLabs`, the one `reset NN.L` uses too): the reference is the base, so its imports and its
 * helpers stay; declarations of labs ≥ k and the starter's own helpers that the reference
 * lacks (`labError`) come from the starter. Declarations without a marker (types, given
 * code) keep the reference's version, which has the same public surface.
 */
import type { ChapterManifest, LabSpec } from "../course/manifest.js";
import type { TestRun } from "../testing/results.js";
import { spliceLabs } from "../ts/splice.js";
import { failureMessage, firstLine, testsOfLab } from "./runs.js";
import type { CheckResult } from "./checks.js";

/** One teaching file at a stage: the reference, the starter, and which labs are done. */
export interface StagedFileInput {
  /** Repo-relative teaching file (for messages), e.g. `packages/pi-course/src/resources.ts`. */
  file: string;
  reference: string;
  starter: string;
  /** The chapter's lab ids in order. */
  labIds: readonly string[];
  /** How many labs are done (0 = the starter as it is; all = the reference as it is). */
  done: number;
}

/** The staged text and the declarations that came from the starter. */
export interface StagedText {
  text: string;
  /** Names of the declarations taken from the starter (replaced or inserted). */
  fromStarter: string[];
}

/**
 * The teaching file after the first `done` labs: the starter itself when none is done, the
 * reference itself when all are, and otherwise the reference with the declarations the
 * starter marks for the remaining labs (and the starter-only helpers they call) spliced
 * back in. Throws `LAB_OWNERSHIP_AMBIGUOUS`/`LAB_OWNERSHIP_UNKNOWN` (a starter whose
 * markers do not give one lab per declaration) and `TS_SYNTAX`.
 */
export function stagedTeachingText(input: StagedFileInput): StagedText {
  const { labIds, done } = input;
  if (done <= 0) return { text: input.starter, fromStarter: [] };
  if (done >= labIds.length) return { text: input.reference, fromStarter: [] };
  const spliced = spliceLabs(input.reference, input.starter, new Set(labIds.slice(done)), labIds, {
    base: `${input.file} (reference)`,
    starter: `${input.file} (starter)`,
  });
  return { text: spliced.text, fromStarter: [...spliced.replaced, ...spliced.inserted] };
}

/** `Lab 12.2 0/3 "…"`: a lab's count and, when all failed alike, the message they showed. */
function describeLab(lab: LabSpec, run: Pick<TestRun, "records">): { passed: number; total: number; messages: string[] } {
  const tests = testsOfLab(run.records, lab.id);
  const messages = tests.filter((t) => !t.ok).map((t) => failureMessage(t, run.records));
  return { passed: tests.filter((t) => t.ok).length, total: tests.length, messages };
}

/**
 * The staged-first-red check of lab number `index` (0-based) from the focused tests run on
 * the staged tree: every earlier lab has all its tests and passes them, and lab `index`
 * has all its tests and every one fails with exactly its own scaffold error. Pure.
 */
export function evaluateStagedRed(manifest: ChapterManifest, index: number, run: Pick<TestRun, "records" | "crashes">): CheckResult {
  const lab = manifest.labs[index]!;
  const name = `staged first red: Lab ${lab.id}`;
  if (run.crashes.length > 0) {
    const crash = run.crashes[0]!;
    return { name, ok: false, detail: `${crash.file} 崩溃（退出码 ${crash.code}）：${firstLine(crash.stderr)}` };
  }
  const problems: string[] = [];
  const before: string[] = [];
  for (const earlier of manifest.labs.slice(0, index)) {
    const seen = describeLab(earlier, run);
    before.push(`Lab ${earlier.id} ${seen.passed}/${seen.total}`);
    if (seen.total !== earlier.tests || seen.passed !== seen.total) {
      const why = seen.messages[0] !== undefined ? `：${firstLine(seen.messages[0])}` : "";
      problems.push(`Lab ${earlier.id} 用参考实现应为 ${earlier.tests}/${earlier.tests}，实际 ${seen.passed}/${seen.total}${why}`);
    }
  }
  const own = describeLab(lab, run);
  if (own.total !== lab.tests) problems.push(`Lab ${lab.id} 应有 ${lab.tests} 项测试，找到 ${own.total} 项`);
  if (own.passed > 0) problems.push(`Lab ${lab.id} 还没写就有 ${own.passed} 项通过`);
  const foreign = own.messages.find((m) => m !== lab.scaffoldError);
  if (foreign !== undefined) problems.push(`Lab ${lab.id} 应恰好以自己的施工位错误 “${lab.scaffoldError}” 失败，实际：“${firstLine(foreign)}”`);
  const start = index === 0 ? "starter" : `reference for ${before.join(", ")}`;
  const detail = `${start} → Lab ${lab.id} ${own.passed}/${own.total} "${lab.scaffoldError}"`;
  return { name, ok: problems.length === 0, detail: problems.length === 0 ? detail : `${detail}；${problems.join("；")}` };
}
