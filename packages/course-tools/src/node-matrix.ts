/**
 * `npm run test:node -- [<major>...]`: the course's own checks under other Node versions,
 * for authors. For each major (default: every supported line, 20 22 24 26) it fetches the
 * official build from the npm registry (`lib/course/node-builds.ts`, cached in the
 * git-ignored `.pi-course/node-builds/`), makes a scratch clone of HEAD, and there runs
 * `npm ci`, `npm test` and `verify NN` for every chapter with a text, all with that Node
 * first on `PATH` (npm itself is this machine's). One line per version; each version's whole
 * output goes to `.pi-course/node-matrix/node-<version>.log`.
 *
 * What is checked is HEAD, as CI checks a fresh clone: uncommitted changes are not included
 * (the command says when there are some). Interrupted, it ends the running step, removes its
 * scratch clone and ends by the signal.
 */
import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { CommandContext } from "./core/cli.js";
import { formatError } from "./core/errors.js";
import { withInterrupts } from "./core/interrupt.js";
import { MATRIX_LOGS } from "./core/paths.js";
import { childEnv, NPM_SCRIPT_VARIABLES, runProcess } from "./core/process.js";
import { withScratchDir } from "./core/scratch.js";
import { paintFor } from "./core/term.js";
import { hasUncommittedChanges, requireRepoRoot } from "./course/git.js";
import { listChapterIds, loadManifest } from "./course/manifest.js";
import { NPM, resolveNodeBuild, type NodeBuild } from "./course/node-builds.js";

/** `node-matrix`'s arguments (declared in the command table, `cli.ts`): the Node majors to check. */
export interface MatrixArgs {
  majors: number[];
}

/** The counts node's summary printed, in order of appearance: one entry per test run (`tests`, `pass`, `fail`, `skipped`). */
export function testCounts(output: string): { tests: number; pass: number; fail: number; skipped: number }[] {
  const runs: { tests: number; pass: number; fail: number; skipped: number }[] = [];
  for (const match of output.matchAll(/^(?:ℹ|#) (tests|pass|fail|skipped) (\d+)$/gm)) {
    const [, key, value] = match as unknown as [string, "tests" | "pass" | "fail" | "skipped", string];
    if (key === "tests") runs.push({ tests: Number(value), pass: 0, fail: 0, skipped: 0 });
    else if (runs.length > 0) runs[runs.length - 1]![key] = Number(value);
  }
  return runs;
}

/** One step of a version's run, as it ended. */
export interface StepOutcome {
  label: string;
  ok: boolean;
  seconds: number;
  /** A short note for the line: test counts, the verify summary. */
  note: string;
}

/** The note of a step from its output: test counts for `npm test`, the summary line for `verify`. */
export function stepNote(label: string, output: string): string {
  if (label === "npm test") {
    const [course, tooling] = testCounts(output);
    const part = (name: string, c: { tests: number; skipped: number } | undefined) =>
      c === undefined ? "" : `${name} ${c.tests}${c.skipped > 0 ? `（${c.skipped} skipped）` : ""}`;
    return [part("course", course), part("tooling", tooling)].filter((p) => p !== "").join(", ");
  }
  if (label.startsWith("verify")) {
    const summary = /verify \d+: (all \d+ checks pass|\d+ of \d+ checks FAIL)/.exec(output);
    return summary?.[1] ?? "";
  }
  return "";
}

/** One version's line: its steps with time and note, `✔`/`✖` each. */
export function matrixLine(version: string, steps: readonly StepOutcome[], log: string): string {
  const parts = steps.map((s) => `${s.ok ? "✔" : "✖"} ${s.label} ${s.seconds.toFixed(0)} s${s.note === "" ? "" : ` (${s.note})`}`);
  const failed = steps.some((s) => !s.ok);
  return `node ${version}: ${parts.join(" · ")}${failed ? ` — 见 ${log}` : ""}`;
}

/** The environment of every step: ours without npm's per-script variables, with `build` first on PATH. */
function stepEnv(build: NodeBuild): NodeJS.ProcessEnv {
  const env = childEnv({ without: NPM_SCRIPT_VARIABLES });
  const pathKey = Object.keys(env).find((key) => key.toLowerCase() === "path") ?? "PATH";
  env[pathKey] = `${build.binDir}${path.delimiter}${env[pathKey] ?? ""}`;
  return env;
}

/**
 * Runs the steps for `build` in a scratch clone of the course's HEAD; resolves with their
 * outcomes (a failed step ends the version's run) and the whole output.
 */
async function runVersion(repo: string, build: NodeBuild, chapters: readonly string[], signal: AbortSignal): Promise<{ steps: StepOutcome[]; output: string }> {
  return withScratchDir(os.tmpdir(), "pi-course-node-matrix-", async (scratch) => {
    const clone = path.join(scratch, "course");
    const env = stepEnv(build);
    const cloned = await runProcess("git", ["clone", "-q", "--no-hardlinks", repo, clone], { cwd: scratch, env, signal });
    let output = `$ git clone\n${cloned.all}`;
    if (cloned.code !== 0) return { steps: [{ label: "git clone", ok: false, seconds: 0, note: "" }], output };
    const plan: [string, string[]][] = [
      ["npm ci", ["ci", "--no-audit", "--no-fund"]],
      ["npm test", ["test"]],
      ...chapters.map((id): [string, string[]] => [`verify ${id}`, ["run", "verify", "-w", "@pi/course", "--", id]]),
    ];
    const steps: StepOutcome[] = [];
    for (const [label, args] of plan) {
      const started = Date.now();
      const result = await runProcess(NPM, args, { cwd: clone, env, signal });
      output += `\n$ npm ${args.join(" ")}\n${result.all}`;
      const ok = result.code === 0;
      steps.push({ label, ok, seconds: (Date.now() - started) / 1000, note: stepNote(label, result.all) });
      if (!ok || signal.aborted) break;
    }
    return { steps, output };
  });
}

/** Runs the matrix and prints a line per version; resolves with 0 when every version passes, else 1. */
export async function run(args: MatrixArgs, { root, io }: CommandContext): Promise<number> {
  const repo = await requireRepoRoot(root);
  const chapters: string[] = [];
  for (const id of await listChapterIds(repo)) if ((await loadManifest(repo, id)).text !== undefined) chapters.push(id);
  const paint = paintFor(io.stdout);
  if (await hasUncommittedChanges(repo)) io.stderr.write(`${paint.yellow("注意：检查的是 HEAD；工作区里未提交的改动不包括在内。")}\n`);
  const logs = path.join(repo, ...MATRIX_LOGS.split("/"));
  await mkdir(logs, { recursive: true });
  return withInterrupts(async (signal) => {
    let failures = 0;
    for (const major of args.majors) {
      let build: NodeBuild;
      try {
        build = await resolveNodeBuild(repo, major, { signal });
      } catch (error) {
        if (signal.aborted) return 130;
        failures++;
        io.stdout.write(`${paint.red(`node ${major}: ✖ ${formatError(error)}`)}\n`);
        continue;
      }
      io.stderr.write(`${paint.dim(`node ${build.version}: npm ci、npm test、verify ${chapters.join("、")} ……`)}\n`);
      const { steps, output } = await runVersion(repo, build, chapters, signal);
      const log = `${MATRIX_LOGS}/node-${build.version}.log`;
      await writeFile(path.join(repo, ...log.split("/")), output);
      if (signal.aborted) return 130;
      const line = matrixLine(build.version, steps, log);
      const ok = steps.length > 0 && steps.every((s) => s.ok);
      if (!ok) failures++;
      io.stdout.write(`${ok ? paint.green(line) : paint.red(line)}\n`);
    }
    return failures === 0 ? 0 : 1;
  });
}
