/**
 * What an author run of a chapter's faults costs with faults of one lab sharing a test process
 * (what `fault NN --all` and `verify` do) against each fault in a process of its own, the
 * baseline, measured in turn in the same minutes; and that both decide every fault alike.
 *
 *   npm run bench -- faults [--chapter 12 --chapter 13] [--runs 2]
 *
 * Default: every chapter with a text. Each run builds its own scratch copy, as `fault --all`
 * does. CPU seconds (Linux) count this process and every test process it waited for.
 */
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { authorFaults } from "../packages/course-tools/src/course/faults.js";
import { listChapterIds, loadManifest } from "../packages/course-tools/src/course/manifest.js";
import { type FaultResult, runAuthorFaults } from "../packages/course-tools/src/testing/fault-runs.js";
import { cpuSeconds } from "./lib/cpu.js";
import { median } from "./lib/stats.js";

const { values } = parseArgs({ options: { chapter: { type: "string", multiple: true }, runs: { type: "string", default: "2" } } });
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const runs = Math.max(1, Number(values.runs));

/** One author run of `id`'s faults: wall and CPU seconds, and each fault's verdict. */
async function timedRun(id: string, batched: boolean): Promise<{ wall: number; cpu: number; verdicts: string[] }> {
  const manifest = await loadManifest(repo, id);
  const startCpu = cpuSeconds() ?? 0;
  const started = performance.now();
  const results: FaultResult[] = await runAuthorFaults({
    sourceRoot: repo,
    manifest,
    faults: authorFaults(manifest),
    nodeModules: path.join(repo, "node_modules"),
    batched,
  });
  const wall = (performance.now() - started) / 1000;
  return { wall, cpu: (cpuSeconds() ?? 0) - startCpu, verdicts: results.map((r) => `${r.id}:${r.status}:${r.restored}`) };
}

const chapters = values.chapter ?? [];
if (chapters.length === 0) {
  for (const id of await listChapterIds(repo)) if ((await loadManifest(repo, id)).text !== undefined) chapters.push(id);
}
console.log(`machine: ${os.cpus().length} cores, Node ${process.versions.node}; median of ${runs} runs each, alone and batched in turn`);
const rows: string[] = [];
for (const id of chapters) {
  const alone: { wall: number; cpu: number }[] = [];
  const batched: { wall: number; cpu: number }[] = [];
  let same = true;
  for (let i = 0; i < runs; i++) {
    const a = await timedRun(id, false);
    const b = await timedRun(id, true);
    alone.push(a);
    batched.push(b);
    same &&= a.verdicts.join("\n") === b.verdicts.join("\n");
  }
  const [wallA, cpuA, wallB, cpuB] = [
    median(alone.map((r) => r.wall)),
    median(alone.map((r) => r.cpu)),
    median(batched.map((r) => r.wall)),
    median(batched.map((r) => r.cpu)),
  ];
  const count = authorFaults(await loadManifest(repo, id)).length;
  rows.push(
    `| ${id} | ${count} | ${wallA.toFixed(1)} s / ${cpuA.toFixed(1)} CPU-s | ${wallB.toFixed(1)} s / ${cpuB.toFixed(1)} CPU-s | ${(wallB / wallA).toFixed(2)}× | ${(cpuB / cpuA).toFixed(2)}× | ${same ? "yes" : "NO"} |`,
  );
  console.log(rows.at(-1));
}
console.log(
  `\n| chapter | faults | each alone (baseline) | batched | wall ratio | CPU ratio | same verdicts |\n|---|---|---|---|---|---|---|\n${rows.join("\n")}`,
);
