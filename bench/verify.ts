/**
 * What verifying a chapter costs, and what `npm test` costs, as ratios against a plain
 * compile of the course package measured in the same minutes, so that the figures mean the
 * same on a fast machine and on a slow or loaded one.
 *
 *   npm run bench -- verify [--chapter 12 --chapter 13] [--npm-test] [--concurrency N]
 *
 * For each chapter (default: every chapter with a text): a baseline (`tsc -p
 * packages/pi-course` into a scratch folder, not incremental), the whole acceptance record
 * in-process with each step's own time (steps run two at a time, as `verify` runs them, so
 * their times overlap and add up to more than the record's; `--concurrency 1` runs them one
 * after another and gives each its CPU seconds too), and the baseline again; the ratio is against the mean
 * of the two baselines. With `--npm-test`, `npm test` is timed the same way. The working
 * tree is what is verified, as `verify` itself does.
 *
 * On Linux each figure also has its CPU seconds (this process and every child it waited for,
 * `lib/cpu.ts`), and the ratio of those to the baseline's: on a machine other work shares, the
 * CPU figures hold still where wall-clock time does not.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { listChapterIds, loadManifest } from "../packages/course-tools/src/course/manifest.js";
import { runVerify } from "../packages/course-tools/src/verify/record.js";
import { cpuSeconds } from "./lib/cpu.js";

const { values } = parseArgs({
  options: { chapter: { type: "string", multiple: true }, "npm-test": { type: "boolean" }, concurrency: { type: "string" } },
});
const concurrency = values.concurrency === undefined ? undefined : Number(values.concurrency);
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const tsc = path.join(repo, "node_modules", "typescript", "bin", "tsc");

/** Wall-clock and CPU seconds (CPU undefined off Linux) of what `work` does, children included once they have ended. */
async function measured<T>(work: () => T | Promise<T>): Promise<{ value: T; wall: number; cpu: number | undefined }> {
  const startCpu = cpuSeconds();
  const started = performance.now();
  const value = await work();
  const wall = (performance.now() - started) / 1000;
  const endCpu = cpuSeconds();
  return { value, wall, cpu: startCpu === undefined || endCpu === undefined ? undefined : endCpu - startCpu };
}

/** Seconds (wall and CPU) one plain compile of the course package takes now. */
async function baseline(): Promise<{ wall: number; cpu: number | undefined }> {
  const out = mkdtempSync(path.join(os.tmpdir(), "pi-bench-tsc-"));
  try {
    const {
      value: result,
      wall,
      cpu,
    } = await measured(() =>
      spawnSync(process.execPath, [tsc, "-p", "packages/pi-course/tsconfig.json", "--outDir", out, "--incremental", "false"], { cwd: repo, encoding: "utf8" }),
    );
    if (result.status !== 0) throw new Error(`tsc failed:\n${result.stdout}${result.stderr}`);
    return { wall, cpu };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** The mean of two baselines. */
function unitOf(a: { wall: number; cpu: number | undefined }, b: { wall: number; cpu: number | undefined }): { wall: number; cpu: number | undefined } {
  return { wall: (a.wall + b.wall) / 2, cpu: a.cpu === undefined || b.cpu === undefined ? undefined : (a.cpu + b.cpu) / 2 };
}

/** `12.3 s (8.1×), CPU 20.5 s (9.9×)`: a figure and its ratios to the baseline. */
function figure(wall: number, cpu: number | undefined, unit: { wall: number; cpu: number | undefined }): string {
  const cpuPart = cpu === undefined || unit.cpu === undefined ? "" : `, CPU ${seconds(cpu)} (${(cpu / unit.cpu).toFixed(1)}×)`;
  return `${seconds(wall)} (${(wall / unit.wall).toFixed(1)}× tsc)${cpuPart}`;
}

const seconds = (value: number) => `${value.toFixed(1)} s`;

const chapters = values.chapter ?? [];
if (chapters.length === 0) {
  for (const id of await listChapterIds(repo)) if ((await loadManifest(repo, id)).text !== undefined) chapters.push(id);
}
console.log(`machine: ${os.cpus().length} cores, Node ${process.versions.node}; baseline: tsc -p packages/pi-course (not incremental)`);
const rows: string[] = [];
for (const id of chapters) {
  const before = await baseline();
  const steps: { name: string; wall: number; cpu: number | undefined }[] = [];
  const cpuAtStart = new Map<number, number | undefined>();
  const {
    value: report,
    wall,
    cpu,
  } = await measured(() =>
    runVerify({
      repo,
      id,
      ...(concurrency === undefined ? {} : { concurrency }),
      onStep: (index) => cpuAtStart.set(index, cpuSeconds()),
      onStepDone: (index, _total, name, seconds) => {
        const start = cpuAtStart.get(index);
        const end = cpuSeconds();
        // A step's CPU is its own only when no other step ran beside it.
        steps.push({ name, wall: seconds, cpu: concurrency === 1 && start !== undefined && end !== undefined ? end - start : undefined });
      },
    }),
  );
  const after = await baseline();
  const unit = unitOf(before, after);
  console.log(
    `\nverify ${id}: ${report.ok ? "pass" : "FAIL"}, ${report.checks.length} checks, ${figure(wall, cpu, unit)}; tsc ${seconds(before.wall)} before, ${seconds(after.wall)} after`,
  );
  for (const step of steps) console.log(`  ${step.name.padEnd(22)} ${figure(step.wall, step.cpu, unit)}`);
  rows.push(`| verify ${id} | ${seconds(wall)} | ${(wall / unit.wall).toFixed(1)}× | ${cpu === undefined ? "–" : seconds(cpu)} | ${seconds(unit.wall)} |`);
}
if (values["npm-test"]) {
  const before = await baseline();
  const {
    value: result,
    wall,
    cpu,
  } = await measured(() =>
    spawnSync(process.platform === "win32" ? "npm.cmd" : "npm", ["test"], { cwd: repo, encoding: "utf8", shell: process.platform === "win32" }),
  );
  const after = await baseline();
  const unit = unitOf(before, after);
  console.log(
    `\nnpm test: ${result.status === 0 ? "pass" : "FAIL"}, ${figure(wall, cpu, unit)}; tsc ${seconds(before.wall)} before, ${seconds(after.wall)} after`,
  );
  rows.push(`| npm test | ${seconds(wall)} | ${(wall / unit.wall).toFixed(1)}× | ${cpu === undefined ? "–" : seconds(cpu)} | ${seconds(unit.wall)} |`);
}
console.log(`\n| what | time | ratio to tsc | CPU | tsc |\n|---|---|---|---|---|\n${rows.join("\n")}`);
