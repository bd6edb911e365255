// @ts-check
/**
 * How `run-tests.mjs` lays out the tooling tests: which files share a process, and in which
 * order the files start.
 *
 * - A tooling test file whose first line is `// test-process: shared` runs in one process with
 *   every other such file (their modules imported one after another). A file's own process and
 *   the modules it loads cost 0.1–0.3 s of CPU, more than most unit-test files spend in their
 *   tests. A file says so only when its tests leave no process running and change nothing of the
 *   process they run in (environment, working directory, signal handlers, global mocks), so that
 *   sharing one changes no result.
 * - Files start longest first, by the seconds each took last time (`.pi-course/test-durations.json`),
 *   so that a suite ends on short files rather than on one long file running alone; a file
 *   without a time yet (a fresh clone, a new file) starts before the others, larger first.
 *
 * Plain JavaScript on purpose: the runner runs in a bare `node`, before anything is compiled.
 */

/** The first line of a test file whose tests may share a process with other such files. */
export const SHARED_PROCESS = "// test-process: shared";

/**
 * True when the test file whose text is `source` opens with the shared-process line.
 *
 * @param {string} source
 * @returns {boolean}
 */
export function sharesProcess(source) {
  return source.split("\n", 1)[0]?.trim() === SHARED_PROCESS;
}

/**
 * @typedef {{ run: string, sources: readonly string[], size: number }} TestUnit
 *   What one process runs: the file given to node (`run`), the test sources it holds (course-relative
 *   paths, `/`-separated) and their size in bytes.
 */

/**
 * The seconds `unit` is expected to take: the sum of its sources' times in `known`, or infinity
 * when none of them has one.
 *
 * @param {TestUnit} unit
 * @param {Readonly<Record<string, number>>} known
 * @returns {number}
 */
export function expectedSeconds(unit, known) {
  /** @type {number[]} */
  const times = [];
  for (const source of unit.sources) {
    const time = known[source];
    if (typeof time === "number" && Number.isFinite(time)) times.push(time);
  }
  return times.length === 0 ? Number.POSITIVE_INFINITY : times.reduce((sum, time) => sum + time, 0);
}

/**
 * `units` in the order they should start: longest expected first (a unit without a time counts
 * as longest), then larger first, then by `run`. A new array; `units` is left as it is.
 *
 * @template {TestUnit} T
 * @param {readonly T[]} units
 * @param {Readonly<Record<string, number>>} known
 * @returns {T[]}
 */
export function longestFirst(units, known) {
  const keyed = units.map((unit) => ({ unit, seconds: expectedSeconds(unit, known) }));
  keyed.sort((a, b) => {
    if (a.seconds !== b.seconds) return a.seconds < b.seconds ? 1 : -1;
    if (a.unit.size !== b.unit.size) return b.unit.size - a.unit.size;
    return a.unit.run < b.unit.run ? -1 : a.unit.run > b.unit.run ? 1 : 0;
  });
  return keyed.map((entry) => entry.unit);
}

/**
 * The times to keep after a run: `known` without the files `exists` denies, then every time the
 * run `reported` (seconds by course-relative path), rounded to milliseconds.
 *
 * @param {Readonly<Record<string, number>>} known
 * @param {Readonly<Record<string, number>>} reported
 * @param {(file: string) => boolean} exists
 * @returns {Record<string, number>}
 */
export function mergeDurations(known, reported, exists) {
  /** @type {Record<string, number>} */
  const merged = {};
  for (const [file, seconds] of Object.entries(known)) if (typeof seconds === "number" && exists(file)) merged[file] = seconds;
  for (const [file, seconds] of Object.entries(reported))
    if (typeof seconds === "number" && Number.isFinite(seconds)) merged[file] = Math.round(seconds * 1000) / 1000;
  return Object.fromEntries(Object.entries(merged).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
