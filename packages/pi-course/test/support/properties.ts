/**
 * Universal rules as properties, for the lab tests of every chapter (chapter 00 brings this
 * module with `rules.ts`). A rule that holds for every input (原样, each event once and in
 * order, no bound, a fresh object each call, any reason passes through unchanged) is checked
 * with fast-check over generated inputs, beside the examples that tell the story.
 *
 * `holds("§C5.1：…", property)` runs the property with a fixed seed, so a run is the same on
 * every machine and every time, and fails with the rule's statement as its first line, then
 * the shrunk counterexample (the smallest input fast-check found that breaks the rule) and
 * what the check said about it. A starter's scaffold error passes unchanged: it means "not
 * started", not "wrong" (as in `rule`).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { isScaffold } from "./rules.js";

/** The seed every property of the course runs with, unless a test names its own. */
export const PROPERTY_SEED = 20_261_207;

/** How many inputs a property tries by default: enough to find the usual mistakes, small enough to stay fast. */
export const PROPERTY_RUNS = 100;

export interface HoldsOptions {
  seed?: number;
  numRuns?: number;
}

/** The first line of an error's message, or what was thrown, as text. */
function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  try {
    return String(error);
  } catch {
    return Object.prototype.toString.call(error);
  }
}

/**
 * Checks `property` for every input fast-check generates (fixed seed). On failure throws an
 * assertion error: `statement`, then `反例（缩小后）：<counterexample>`, then the check's own
 * message. A scaffold error thrown by the code under test is rethrown as it is.
 */
export async function holds<Ts extends [unknown, ...unknown[]]>(
  statement: string,
  property: fc.IProperty<Ts> | fc.IAsyncProperty<Ts>,
  options: HoldsOptions = {},
): Promise<void> {
  const details = await fc.check(property, { seed: options.seed ?? PROPERTY_SEED, numRuns: options.numRuns ?? PROPERTY_RUNS });
  if (!details.failed) return;
  const cause: unknown = details.errorInstance;
  if (isScaffold(cause)) throw cause;
  const example = details.counterexample === null ? "（无）" : details.counterexample.map((value) => fc.stringify(value)).join(", ");
  throw new assert.AssertionError({
    message: `${statement}\n反例（缩小后）：${example}\n${describe(cause)}`,
    actual: cause,
    expected: undefined,
    operator: "holds",
  });
}
