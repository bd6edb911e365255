/**
 * The time limits of test runs, in one place: what `lab` promises a learner (no run hangs
 * for ever), what `--help` states, and what the author runs use; and the bars `mistakes`
 * holds a chapter's tests to. Nothing else is imported,
 * so the command table can state them without loading the runner.
 */

/** The default time limit of one lab run (`lab`, the fault exercise in a practice folder), in seconds. */
export const DEFAULT_TIMEOUT_SECONDS = 30;

/** The default time limit of each challenge test (`lab NN --challenge`), in seconds. */
export const CHALLENGE_TIMEOUT_SECONDS = 10;

/** The default time limit of one fault's test run in an author run: a mistake that makes the code hang is a failure, not a hung record. */
export const FAULT_RUN_TIMEOUT_MS = 30_000;

/**
 * The time limit of one test run of `mistakes NN`, in ms: a catalog's edit may only make the
 * tests slow (a quadratic copy on a property test), and on a loaded machine 30 s would call
 * that a kill; the measurement the figures in `bench/held-out/` come from allowed 120 s.
 */
export const MISTAKES_RUN_TIMEOUT_MS = 120_000;

/** The longest time limit a command line may ask for: a day (`setTimeout` takes at most 2^31 − 1 ms). */
export const MAX_TIMEOUT_SECONDS = 86_400;

/** The share of its catalogued mistakes each lab's tests must kill (`mistakes NN`). */
export const MISTAKES_LAB_BAR = 0.9;

/** The share of its catalogued mistakes the chapter's tests must kill (`mistakes NN`). */
export const MISTAKES_CHAPTER_BAR = 0.95;
