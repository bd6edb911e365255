/**
 * The design card's libraries against what the tooling uses instead, on this machine.
 *
 *   npm run bench -- libraries [--runs 25] [--simple-git <folder>] [--execa <folder>]
 *
 * - git, one call: `git rev-parse HEAD` through node's `execFile` (the floor), through the
 *   tooling's `git()` (node's `spawn`, packages/course-tools/src/core/process.ts), through execa (what
 *   `git()` used before) and through simple-git's `raw`, each with the environment the
 *   tooling gives git (no inherited GIT_ variables).
 * - git printing nothing: `git diff --quiet HEAD HEAD` (as `read-tree`, `update-index` and
 *   `update-ref` print nothing), the tooling against simple-git.
 * - git with input: `git cat-file --batch` of every blob of HEAD (what a practice folder is
 *   written from), through `readObjects` and through simple-git's `binaryCatFile` with its
 *   `input` plugin (simple-git takes input per instance, not per call).
 * - loading: a fresh `node` that imports the tooling's git layer, execa, simple-git or
 *   fs-extra, against one that imports nothing.
 * - copying: a folder shaped like the one `verify` copies (the course sources, a
 *   `node_modules` link) with `fs.promises.cp` and with fs-extra's `copy`.
 *
 * simple-git and execa are not dependencies of the course (see the dependency table in
 * docs/dependencies.md); give the folder of an installed copy (`npm install --prefix <dir> simple-git
 * execa`, then `<dir>/node_modules/simple-git`) to measure them.
 */
import { execFile, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cp, mkdtemp, rm, symlink } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs, promisify } from "node:util";
import fse from "fs-extra";
import { git, listTree, readObjects } from "../packages/course-tools/src/course/git.js";
import { median, ms, ratio, timeRuns } from "./lib/stats.js";

const { values } = parseArgs({ options: { runs: { type: "string", default: "25" }, "simple-git": { type: "string" }, execa: { type: "string" } } });
const runs = Number(values.runs);
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const run = promisify(execFile);

/**
 * The environment the tooling gives git: ours without GIT_ variables, no prompts. Without
 * the editor and pager variables too, which simple-git 4 refuses to pass on unless told
 * that they are safe (`unsafe.allowUnsafeEditor`, …).
 */
function gitEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("GIT_") && !["EDITOR", "VISUAL", "PAGER"].includes(key)) env[key] = value;
  }
  return { ...env, GIT_TERMINAL_PROMPT: "0" };
}

interface SimpleGitLike {
  env(env: object): SimpleGitLike;
  raw(args: string[]): Promise<string>;
  binaryCatFile(args: string[]): Promise<Buffer>;
}
type SimpleGitFactory = (options: Record<string, unknown>) => SimpleGitLike;

type Execa = (file: string, args: string[], options: Record<string, unknown>) => Promise<unknown>;

/** The ESM entry named by a package's `exports` (its `import` or `default` condition). */
function entryOf(exported: unknown): string | undefined {
  if (typeof exported === "string") return exported;
  if (exported === null || typeof exported !== "object") return undefined;
  const conditions = exported as Record<string, unknown>;
  return entryOf(conditions["."] ?? conditions.import ?? conditions.node ?? conditions.default);
}

/** The URL of package `name`: installed in `folder` (the package's own folder) or here; undefined when absent. */
function resolvePackage(name: string, folder: string | undefined): string | undefined {
  try {
    const manifestPath =
      folder === undefined ? createRequire(import.meta.url).resolve(`${name}/package.json`) : path.join(path.resolve(folder), "package.json");
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as { exports?: unknown; module?: string; main?: string };
    const entry = entryOf(manifest.exports) ?? manifest.module ?? manifest.main ?? "index.js";
    return pathToFileURL(path.join(path.dirname(manifestPath), entry)).href;
  } catch {
    return undefined;
  }
}

async function loadSimpleGit(url: string | undefined): Promise<SimpleGitFactory | undefined> {
  if (url === undefined) return undefined;
  const module = (await import(url)) as { simpleGit?: SimpleGitFactory; default?: SimpleGitFactory };
  return module.simpleGit ?? module.default;
}

function row(label: string, value: string): void {
  console.log(`${label.padEnd(58)} ${value}`);
}

const simpleGitUrl = resolvePackage("simple-git", values["simple-git"]);
const execaUrl = resolvePackage("execa", values.execa);
const simpleGit = await loadSimpleGit(simpleGitUrl);
const execa = execaUrl === undefined ? undefined : ((await import(execaUrl)) as { execa: Execa }).execa;
console.log(`libraries benchmark · node ${process.version} · ${os.cpus().length} cores · median of ${runs}`);

// ---------------------------------------------------------------- git, one call
const env = gitEnvironment();
const floor = median(await timeRuns(() => run("git", ["rev-parse", "HEAD"], { cwd: repo, env }), runs, 3));
const tooling = median(await timeRuns(() => git(repo, ["rev-parse", "HEAD"]), runs, 3));
row("git rev-parse HEAD: child_process.execFile (floor)", ms(floor));
row("git rev-parse HEAD: tooling git() (child_process)", `${ms(tooling)}  (${ratio(tooling / floor)} the floor)`);
if (execa !== undefined) {
  const options = { cwd: repo, env, extendEnv: false, reject: false, encoding: "buffer", stripFinalNewline: false };
  const viaExeca = median(await timeRuns(() => execa("git", ["rev-parse", "HEAD"], options), runs, 3));
  row(
    "git rev-parse HEAD: execa (the tooling's git() before)",
    `${ms(viaExeca)}  (${ratio(viaExeca / floor)} the floor, ${ratio(viaExeca / tooling)} the tooling)`,
  );
} else {
  row("git rev-parse HEAD: execa", "not measured (give --execa <folder>)");
}
let sg: SimpleGitLike | undefined;
if (simpleGit !== undefined) {
  const guarded = ["GIT_TERMINAL_PROMPT"];
  sg = simpleGit({ baseDir: repo, allowEnvironment: guarded }).env(env);
  const viaSimpleGit = median(await timeRuns(() => sg!.raw(["rev-parse", "HEAD"]), runs, 3));
  row("git rev-parse HEAD: simple-git raw()", `${ms(viaSimpleGit)}  (${ratio(viaSimpleGit / floor)} the floor, ${ratio(viaSimpleGit / tooling)} the tooling)`);
} else {
  row("git rev-parse HEAD: simple-git raw()", "not measured (give --simple-git <folder>)");
}

// ---------------------------------------------------------------- git printing nothing
const silentArgs = ["diff", "--quiet", "HEAD", "HEAD"];
const silentTooling = median(await timeRuns(() => git(repo, silentArgs), runs, 3));
row("git diff --quiet (prints nothing): tooling git()", ms(silentTooling));
if (sg !== undefined) {
  const silentSimple = median(await timeRuns(() => sg!.raw(silentArgs), runs, 3));
  row("git diff --quiet (prints nothing): simple-git raw()", `${ms(silentSimple)}  (+${ms(silentSimple - silentTooling)} a call)`);
}

// ---------------------------------------------------------------- git with input
const blobs = (await listTree(repo, "HEAD")).filter((e) => e.type === "blob").map((e) => e.oid);
const input = `${blobs.join("\n")}\n`;
const batchTooling = median(await timeRuns(() => readObjects(repo, blobs), runs, 2));
row(`git cat-file --batch, ${blobs.length} blobs: tooling readObjects()`, ms(batchTooling));
if (simpleGit !== undefined) {
  const withInput = simpleGit({ baseDir: repo, allowEnvironment: ["GIT_TERMINAL_PROMPT"], input: () => input }).env(env);
  const batchSimple = median(await timeRuns(() => withInput.binaryCatFile(["--batch"]), runs, 2));
  row(`git cat-file --batch, ${blobs.length} blobs: simple-git binaryCatFile()`, `${ms(batchSimple)}  (${ratio(batchSimple / batchTooling)} the tooling)`);
}

// ---------------------------------------------------------------- loading
function startup(code: string): number {
  const times: number[] = [];
  for (let i = 0; i < Math.max(5, Math.round(runs / 3)); i++) {
    const start = performance.now();
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", code], { cwd: repo, encoding: "utf8" });
    if (r.status !== 0) throw new Error(r.stderr);
    times.push(performance.now() - start);
  }
  return median(times);
}
const bare = startup("");
row("node start, importing nothing", ms(bare));
row("import node:child_process (+ over bare node)", `+${ms(startup('await import("node:child_process")') - bare)}`);
row("import fs-extra (+ over bare node)", `+${ms(startup('await import("fs-extra")') - bare)}`);
if (execaUrl !== undefined) row("import execa (+ over bare node)", `+${ms(startup(`await import(${JSON.stringify(execaUrl)})`) - bare)}`);
if (simpleGitUrl !== undefined) row("import simple-git (+ over bare node)", `+${ms(startup(`await import(${JSON.stringify(simpleGitUrl)})`) - bare)}`);

// ---------------------------------------------------------------- copying
const work = await mkdtemp(path.join(os.tmpdir(), "pi-bench-libraries-"));
try {
  const source = path.join(work, "source");
  await cp(path.join(repo, "packages"), path.join(source, "packages"), { recursive: true, filter: (src) => !/[\\/](dist|node_modules)$/.test(src) });
  await cp(path.join(repo, "scripts"), path.join(source, "scripts"), { recursive: true });
  await symlink(path.join(repo, "node_modules"), path.join(source, "node_modules"), "junction");
  let n = 0;
  const viaCp = median(await timeRuns(async () => cp(source, path.join(work, `cp-${n++}`), { recursive: true, verbatimSymlinks: true }), runs, 2));
  const viaExtra = median(await timeRuns(async () => fse.copy(source, path.join(work, `extra-${n++}`)), runs, 2));
  row("copy a course folder: fs.promises.cp", ms(viaCp));
  row("copy a course folder: fs-extra copy", `${ms(viaExtra)}  (${ratio(viaExtra / viaCp)} fs.cp)`);
} finally {
  await rm(work, { recursive: true, force: true });
}
