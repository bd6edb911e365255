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
 * (the command says when there are some). Exit status: 0 when every version passes, 1 when
 * one fails, 2 for a usage error; interrupted, it ends the running step, removes its scratch
 * clone and ends by the signal.
 */
import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseCommandLine, runMain } from "./lib/core/cli.js";
import { CourseError, formatError } from "./lib/core/errors.js";
import { withInterrupts } from "./lib/core/interrupt.js";
import { courseRoot } from "./lib/core/paths.js";
import { childEnv, NPM_SCRIPT_VARIABLES, runProcess } from "./lib/core/process.js";
import { withScratchDir } from "./lib/core/scratch.js";
import { paintFor } from "./lib/core/term.js";
import { hasUncommittedChanges, requireRepoRoot } from "./lib/course/git.js";
import { listChapterIds, loadManifest } from "./lib/course/manifest.js";
import { NPM, resolveNodeBuild, type NodeBuild } from "./lib/course/node-builds.js";

/** The Node lines the course supports (`engines` in package.json), oldest first. */
export const SUPPORTED_MAJORS = [20, 22, 24, 26] as const;

/** Where each version's output is written, below the course root. */
export const MATRIX_LOGS = ".pi-course/node-matrix";

export const USAGE = `用法: npm run test:node -- [主版本号...]

在其他 Node 版本下跑课程自己的检查（作者用）：对每个主版本（默认 ${SUPPORTED_MAJORS.join(" ")}），从 npm 仓库取官方
Node 包（缓存在 .pi-course/node-builds/），在 HEAD 的临时 clone 里依次运行 npm ci、npm test 和每个有正文的
章节的 verify，每个版本一行结果；完整输出写到 ${MATRIX_LOGS}/node-<版本>.log。检查的是 HEAD（和 CI 一样），
未提交的改动不包括在内。

  -h, --help   显示这段说明`;

/** Parses the command line: majors as positionals (each a supported line). Throws `USAGE`. */
export function parseMatrixArgs(argv: readonly string[]): { help: boolean; majors: number[] } {
  const { values, positionals } = parseCommandLine(argv, { help: { type: "boolean", short: "h" } });
  if (values.help) return { help: true, majors: [] };
  const majors = positionals.map((raw) => {
    const major = /^\d{2}$/.test(raw) ? Number(raw) : Number.NaN;
    if (!(SUPPORTED_MAJORS as readonly number[]).includes(major)) {
      throw new CourseError("USAGE", `主版本号应为 ${SUPPORTED_MAJORS.join("、")} 之一，而不是 ${JSON.stringify(raw)}`);
    }
    return major;
  });
  return { help: false, majors: majors.length > 0 ? [...new Set(majors)] : [...SUPPORTED_MAJORS] };
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
    const part = (name: string, c: { tests: number; skipped: number } | undefined) => (c === undefined ? "" : `${name} ${c.tests}${c.skipped > 0 ? `（${c.skipped} skipped）` : ""}`);
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

async function main(argv: readonly string[]): Promise<number> {
  const args = parseMatrixArgs(argv);
  if (args.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const repo = await requireRepoRoot(courseRoot);
  const chapters: string[] = [];
  for (const id of await listChapterIds(repo)) if ((await loadManifest(repo, id)).text !== undefined) chapters.push(id);
  const paint = paintFor(process.stdout);
  if (await hasUncommittedChanges(repo)) process.stderr.write(`${paint.yellow("注意：检查的是 HEAD；工作区里未提交的改动不包括在内。")}\n`);
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
        process.stdout.write(`${paint.red(`node ${major}: ✖ ${formatError(error)}`)}\n`);
        continue;
      }
      process.stderr.write(`${paint.dim(`node ${build.version}: npm ci、npm test、verify ${chapters.join("、")} ……`)}\n`);
      const { steps, output } = await runVersion(repo, build, chapters, signal);
      const log = `${MATRIX_LOGS}/node-${build.version}.log`;
      await writeFile(path.join(repo, ...log.split("/")), output);
      if (signal.aborted) return 130;
      const line = matrixLine(build.version, steps, log);
      const ok = steps.length > 0 && steps.every((s) => s.ok);
      if (!ok) failures++;
      process.stdout.write(`${ok ? paint.green(line) : paint.red(line)}\n`);
    }
    return failures === 0 ? 0 : 1;
  });
}

runMain(import.meta.url, main);
