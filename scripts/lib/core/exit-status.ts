/**
 * Exit statuses of the learner commands (`lab`, `hint`, `fault` in a practice folder,
 * `reset`). A red lab, a hint, a fault that was not caught are results the learner asked
 * for, not failures of the command: they exit 0, so that `npm run …` prints its result and
 * no `npm error` block that reads like a crash. A machine asking (`--json`) or a CI run
 * (the `CI` environment variable) gets a failing status for a red result instead. Usage
 * errors exit 2 and real failures 1 in every mode (see `exitCodeFor`).
 */

import { isCourseError } from "./errors.js";

/**
 * The exit status a command should end with for `error`: 2 for a mistake on the command
 * line (a usage error, a chapter the course does not have, a `--source` that names no
 * commit), 130 for an interruption, 1 for everything else.
 */
export function exitCodeFor(error: unknown): number {
  if (isCourseError(error, "USAGE") || isCourseError(error, "CHAPTER_UNKNOWN") || isCourseError(error, "SOURCE_UNKNOWN")) return 2;
  if (isCourseError(error, "ABORTED")) return 130;
  return 1;
}

/** True when `CI` is set to anything but "", "0" or "false" (how CI services announce themselves). */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = (env.CI ?? "").trim().toLowerCase();
  return value !== "" && value !== "0" && value !== "false";
}

/**
 * The exit status of a learner command whose result is `ok` (green) or not: 0 when green,
 * and also when red unless `json` was asked for or the run is in CI, then 1.
 */
export function resultStatus(ok: boolean, options: { json: boolean }, env: NodeJS.ProcessEnv = process.env): number {
  return ok || !(options.json || inCi(env)) ? 0 : 1;
}
