/**
 * What verifying a chapter costs, and what `npm test` costs, as ratios against a plain
 * compile of the course package measured in the same minutes, so that the figures mean the
 * same on a fast machine and on a slow or loaded one.
 *
 *   npm run bench -- verify [--chapter 12 --chapter 13] [--npm-test]
 *
 * For each chapter (default: every chapter with a text): a baseline (`tsc -p
 * packages/pi-course` into a scratch folder, not incremental), the whole acceptance record
 * in-process with each step's time, and the baseline again; the ratio is against the mean
 * of the two baselines. With `--npm-test`, `npm test` is timed the same way. The working
 * tree is what is verified, as `verify` itself does.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { listChapterIds, loadManifest } from "../scripts/lib/course/manifest.js";
import { runVerify } from "../scripts/lib/verify/record.js";

const { values } = parseArgs({ options: { chapter: { type: "string", multiple: true }, "npm-test": { type: "boolean" } } });
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const tsc = path.join(repo, "node_modules", "typescript", "bin", "tsc");

/** Seconds one plain compile of the course package takes now. */
function baseline(): number {
  const out = mkdtempSync(path.join(os.tmpdir(), "pi-bench-tsc-"));
  try {
    const started = performance.now();
    const result = spawnSync(process.execPath, [tsc, "-p", "packages/pi-course/tsconfig.json", "--outDir", out, "--incremental", "false"], {
      cwd: repo,
      encoding: "utf8",
    });
    if (result.status !== 0) throw new Error(`tsc failed:\n${result.stdout}${result.stderr}`);
    return (performance.now() - started) / 1000;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

const seconds = (value: number) => `${value.toFixed(1)} s`;

const chapters = values.chapter ?? [];
if (chapters.length === 0) {
  for (const id of await listChapterIds(repo)) if ((await loadManifest(repo, id)).text !== undefined) chapters.push(id);
}
console.log(`machine: ${os.cpus().length} cores, Node ${process.versions.node}; baseline: tsc -p packages/pi-course (not incremental)`);
const rows: string[] = [];
for (const id of chapters) {
  const before = baseline();
  const steps: [string, number][] = [];
  let last = performance.now();
  let title = "";
  const report = await runVerify({
    repo,
    id,
    onStep: (_index, _total, name) => {
      const now = performance.now();
      if (title !== "") steps.push([title, (now - last) / 1000]);
      last = now;
      title = name;
    },
  });
  steps.push([title, (performance.now() - last) / 1000]);
  const after = baseline();
  const unit = (before + after) / 2;
  const total = steps.reduce((sum, [, s]) => sum + s, 0);
  console.log(
    `\nverify ${id}: ${report.ok ? "pass" : "FAIL"}, ${report.checks.length} checks, ${seconds(total)} = ${(total / unit).toFixed(1)}× tsc (${seconds(before)} before, ${seconds(after)} after)`,
  );
  for (const [name, s] of steps) console.log(`  ${name.padEnd(22)} ${seconds(s).padStart(8)}  ${(s / unit).toFixed(1).padStart(5)}× tsc`);
  rows.push(`| verify ${id} | ${seconds(total)} | ${(total / unit).toFixed(1)}× | ${seconds(unit)} |`);
}
if (values["npm-test"]) {
  const before = baseline();
  const started = performance.now();
  const result = spawnSync(process.platform === "win32" ? "npm.cmd" : "npm", ["test"], { cwd: repo, encoding: "utf8", shell: process.platform === "win32" });
  const total = (performance.now() - started) / 1000;
  const after = baseline();
  const unit = (before + after) / 2;
  console.log(
    `\nnpm test: ${result.status === 0 ? "pass" : "FAIL"}, ${seconds(total)} = ${(total / unit).toFixed(1)}× tsc (${seconds(before)} before, ${seconds(after)} after)`,
  );
  rows.push(`| npm test | ${seconds(total)} | ${(total / unit).toFixed(1)}× | ${seconds(unit)} |`);
}
console.log(`\n| what | time | ratio to tsc | tsc |\n|---|---|---|---|\n${rows.join("\n")}`);
