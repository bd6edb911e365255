/**
 * The fault exercise in the learner's shapes: a chapter's kept solutions stand for the ways a
 * learner writes its labs, and `verify` injects the exercise's line into each the way the
 * learner's `fault` command does, so an exercise that only the reference's shape catches
 * fails the acceptance record.
 */
import { applyLearnerPatch, type Fault } from "../course/faults.js";
import type { KeptSolution, SolutionResult } from "../testing/fault-runs.js";
import type { CheckResult } from "./checks.js";

/**
 * Each kept solution of an exercise's file with the exercise's line injected the way the
 * learner's `fault` command injects it: the solutions stand for the learner's shapes, and the
 * exercise must be caught wherever its line lands and compiles. A solution shaped so that the
 * line has no place (its function renamed, a given type rewritten) is reported, not failed:
 * there the command explains the edit to make by hand.
 */
export function exerciseMutants(exercises: readonly Fault[], solutions: readonly KeptSolution[]): { mutants: KeptSolution[]; problems: CheckResult[] } {
  const mutants: KeptSolution[] = [];
  const problems: CheckResult[] = [];
  for (const exercise of exercises) {
    if (exercise.learner === undefined) continue;
    for (const solution of solutions.filter((kept) => kept.replaces === exercise.file)) {
      const name = `exercise ${exercise.id} in ${solution.name}`;
      const patched = applyLearnerPatch(solution.text, exercise.learner);
      if (patched.ok) mutants.push({ ...solution, name, text: patched.text });
      else problems.push({ name, ok: true, detail: `no place for the line in this shape (the command explains the edit by hand): ${patched.reason}` });
    }
  }
  return { mutants, problems };
}

/**
 * A kept solution with the exercise injected: fails when it compiles and every focused test
 * still passes (the exercise is not caught in that shape); a line that does not compile in a
 * shape that rewrote a given declaration is reported, not failed.
 */
export function exerciseCaught(mutant: SolutionResult): CheckResult {
  if ((mutant.detail ?? "").startsWith("无法编译")) {
    return { name: mutant.name, ok: true, detail: `the line does not compile in this shape (reported, not failed): ${mutant.detail ?? ""}` };
  }
  const caught = mutant.passed < mutant.total;
  const detail = caught
    ? `caught: ${mutant.passed}/${mutant.total} focused tests pass`
    : `not caught: every focused test still passes (${mutant.passed}/${mutant.total})`;
  return { name: mutant.name, ok: caught, detail };
}
