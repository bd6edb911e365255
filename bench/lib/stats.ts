/**
 * Small timing helpers shared by the benchmarks. Every figure a benchmark prints is a
 * median over repeated runs measured in the same process as its baseline, so that
 * ratios compare like with like on whatever machine runs them.
 */
import { performance } from "node:perf_hooks";

/** The median of a non-empty list of numbers. */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error("median of an empty list");
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Runs `fn` `warmup` times unmeasured, then `runs` times; returns each run's milliseconds. */
export async function timeRuns(fn: () => unknown, runs: number, warmup = 1): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return times;
}

/** Formats milliseconds with a sensible number of digits. */
export function ms(value: number): string {
  return value >= 100 ? `${value.toFixed(0)} ms` : value >= 10 ? `${value.toFixed(1)} ms` : `${value.toFixed(2)} ms`;
}

/** Formats a ratio as `12.3×`. */
export function ratio(value: number): string {
  return `${value.toFixed(value >= 10 ? 1 : 2)}×`;
}
