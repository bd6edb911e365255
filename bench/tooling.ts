/**
 * The course commands' own cost, in a fresh clone of this repo's committed HEAD.
 *
 *   npm run bench -- tooling [--chapter 12] [--runs 3] [--skip-verify]
 *
 * `checkpoint` cold (the clone has no teaching branch yet, so it is built) and warm
 * (reused), `practice` into a new folder, and `verify` once (it replays the whole
 * acceptance record). Each is timed as the learner runs it, through npm.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { median, ms } from "./lib/stats.js";

const { values } = parseArgs({
  options: {
    chapter: { type: "string", default: "12" },
    runs: { type: "string", default: "3" },
    "skip-verify": { type: "boolean" },
  },
});
const chapter = values.chapter;
const runs = Number(values.runs);
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

function timed(cwd: string, command: string, args: string[]): number {
  const start = performance.now();
  const result = spawnSync(command, args, { cwd, encoding: "utf8", shell: process.platform === "win32" });
  const elapsed = performance.now() - start;
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
  return elapsed;
}

/** A fresh clone of the repo's committed HEAD, sharing the repo's installed node_modules. */
function freshClone(parent: string, name: string): string {
  const clone = path.join(parent, name);
  timed(parent, "git", ["clone", "--quiet", "--no-local", repo, clone]);
  symlinkSync(path.join(repo, "node_modules"), path.join(clone, "node_modules"), "junction");
  return clone;
}

const work = mkdtempSync(path.join(os.tmpdir(), "pi-bench-tooling-"));
try {
  console.log(`tooling benchmark · node ${process.version} · chapter ${chapter} · median of ${runs} (verify: one run)`);
  const checkpoint = ["run", "checkpoint", "-w", "@pi/course", "--", chapter];
  const cold: number[] = [];
  const warm: number[] = [];
  const practice: number[] = [];
  for (let i = 0; i < runs; i++) {
    const clone = freshClone(work, `clone-${i}`);
    cold.push(timed(clone, npm, checkpoint));
    warm.push(timed(clone, npm, checkpoint));
    practice.push(timed(clone, npm, ["run", "practice", "-w", "@pi/course", "--", chapter, path.join(work, `practice-${i}`), "--link-modules"]));
  }
  console.log(`checkpoint ${chapter}, cold (builds the branch)  ${ms(median(cold)).padStart(9)}`);
  console.log(`checkpoint ${chapter}, warm (reuses it)          ${ms(median(warm)).padStart(9)}`);
  console.log(`practice ${chapter} --link-modules               ${ms(median(practice)).padStart(9)}`);
  if (!values["skip-verify"]) {
    const clone = path.join(work, "clone-0");
    console.log(`verify ${chapter}                                ${ms(timed(clone, npm, ["run", "verify", "-w", "@pi/course", "--", chapter])).padStart(9)}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
