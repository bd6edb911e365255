/**
 * The course commands as compiled JavaScript, for tests that start them as processes.
 *
 * Starting a command from its TypeScript source through tsx costs 0.3–0.5 s of CPU per
 * process (measured: `node --import tsx scripts/hint.ts --help` 0.45 s, the compiled
 * `hint.js` 0.15 s), and the tooling tests start dozens. So `scripts/` is compiled once per
 * state of its sources, with the course's own TypeScript, into
 * `.pi-course/test-tooling/<hash>/` (git-ignored), and every test file of every run reuses
 * that build until a source changes. A course tree a test builds (a synthetic course, a
 * mini chapter) gets a copy at `<root>/.pi-course/tooling/`, which is where the launcher
 * puts the compiled tooling too, so the commands find that tree as their course root.
 *
 * Besides the commands, the build holds the tests themselves and their helpers (`test/`),
 * compiled against the same library files, with source maps: `npm test` runs them from
 * there (`scripts/run-tests.mjs`), which spares each test file the 0.3–0.5 s of CPU that
 * loading it through tsx costs; a single file still runs from source with
 * `node --import tsx --test scripts/test/<folder>/<file>.test.ts`.
 */
import { spawn, spawnSync, type SpawnSyncReturns } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import fse from "fs-extra";
import { isEntryPoint } from "../../src/core/cli.js";
import { courseRoot, PRACTICE_TOOLING, TEST_TOOLING_BUILD, TOOLING_BUILD } from "../../src/core/paths.js";
import { childEnv } from "../../src/core/process.js";
import { resolveCompiler } from "../../src/testing/compiler.js";
import { TEST_BUILD_COMPLETE, testToolingBuild, toolingStamp } from "../../src/core/tooling-stamp.mjs";

const SCRIPTS = path.join(courseRoot, "scripts");
const CACHE = path.join(courseRoot, ...TEST_TOOLING_BUILD.split("/"));
/** Written last into a finished build: a folder without it is not used. */
const COMPLETE = TEST_BUILD_COMPLETE;

/** The files the build is made from (the command sources, the child helpers, the tsconfigs), sorted. */
function sourceFiles(): string[] {
  const files = [path.join(courseRoot, "tsconfig.base.json")];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(ts|mjs|json)$/.test(entry.name)) files.push(full);
    }
  };
  walk(SCRIPTS);
  return files.sort();
}

/** True for what scripts/tsconfig.json compiles (the commands, the library) and for the tests and their helpers. */
function isCompiled(file: string): boolean {
  const rel = path.relative(SCRIPTS, file).split(path.sep).join("/");
  return /^[^/]+\.ts$/.test(rel) || /^lib\/.+\.(ts|mjs)$/.test(rel) || /^test\/.+\.ts$/.test(rel);
}

let built: string | undefined;

/**
 * The folder holding the compiled commands (`checkpoint.js`, …, `lib/`) and child helpers
 * (`test/support/*-child.js`) of the current sources, compiling them first when no test run has
 * yet. Safe when several test files ask at once: each compiles into its own temporary
 * folder and the first rename wins.
 */
export function compiledTooling(): string {
  if (built !== undefined) return built;
  const dir = testToolingBuild(courseRoot);
  if (!existsSync(path.join(dir, COMPLETE))) {
    const files = sourceFiles();
    mkdirSync(CACHE, { recursive: true });
    const partial = `${dir}.partial-${process.pid}`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial);
    try {
      const tsconfig = path.join(partial, "tsconfig.json");
      writeFileSync(
        tsconfig,
        JSON.stringify({
          extends: path.join(SCRIPTS, "tsconfig.json"),
          // Source maps: a failing compiled test reports its TypeScript line (node --enable-source-maps).
          compilerOptions: { rootDir: SCRIPTS, outDir: partial, noEmitOnError: true, sourceMap: true },
          files: files.filter(isCompiled),
          include: [],
        }),
      );
      const compiler = resolveCompiler(path.join(courseRoot, "packages", "pi-course"));
      const result = spawnSync(compiler.command, [...compiler.args, "-p", tsconfig, "--pretty", "false"], { encoding: "utf8" });
      if (result.status !== 0) throw new Error(`compiling the tooling for the tests failed:\n${result.stdout}${result.stderr}`);
      rmSync(tsconfig);
      writeFileSync(path.join(partial, COMPLETE), JSON.stringify({ files: files.length }));
      try {
        renameSync(partial, dir);
      } catch (error) {
        // Another test file finished the same build first: use it.
        if (!existsSync(path.join(dir, COMPLETE))) throw error;
      }
    } finally {
      rmSync(partial, { recursive: true, force: true });
    }
    removeOldBuilds(path.basename(dir));
  }
  built = dir;
  return dir;
}

/** Builds of earlier source states, untouched for an hour, are removed (a concurrent run may still use a recent one). */
function removeOldBuilds(keep: string): void {
  const hourAgo = Date.now() - 60 * 60 * 1000;
  for (const name of readdirSync(CACHE)) {
    const full = path.join(CACHE, name);
    if (name !== keep && statSync(full).mtimeMs < hourAgo) rmSync(full, { recursive: true, force: true });
  }
}

/**
 * Copies the compiled tooling into `<root>/.pi-course/tooling/` (or, with `practice`, into
 * `<root>/packages/course-tools/dist/`, where a practice folder keeps it and the tooling
 * package's bin runs it), so that a command started from there takes `root` as its course
 * root (see `TOOLING_BUILD`, `PRACTICE_TOOLING`).
 */
export function installTooling(root: string, options: { practice?: boolean } = {}): void {
  const target = path.join(root, ...(options.practice === true ? PRACTICE_TOOLING : TOOLING_BUILD).split("/"));
  if (existsSync(path.join(target, "cli.js"))) return;
  const build = compiledTooling();
  // The commands only: the compiled tests stay in the shared build, and so do the source maps
  // (a command started as a process runs without --enable-source-maps): 90 files, not 180.
  fse.copySync(build, target, { filter: (src) => path.basename(src) !== COMPLETE && src !== path.join(build, "test") && !src.endsWith(".map") });
  // Where the launcher looks for its build, stamped as the launcher's own first run would leave it.
  if (options.practice !== true && existsSync(path.join(root, "scripts", "launch.mjs"))) writeFileSync(path.join(target, LAUNCHER_STAMP), launcherStamp(root));
}

/** The launcher's record of the sources its build was compiled from (`scripts/launch.mjs`, `stampFile`). */
export const LAUNCHER_STAMP = "sources.json";

/**
 * What `scripts/launch.mjs` writes into `<root>/.pi-course/tooling/sources.json` after compiling
 * `root`'s `scripts/`: the content stamp of its sources (`core/tooling-stamp.mjs`). With it beside
 * the installed tooling, a command started through the launcher (npm's way) uses that build
 * instead of compiling `scripts/` again (about 2 s of CPU).
 */
export function launcherStamp(root: string): string {
  return toolingStamp(root);
}

/**
 * The node arguments that run `command` (`checkpoint`, `lab`, …) of the course at `root`:
 * the compiled command table inside `root` and the command's name, installing the tooling
 * there first.
 */
export function commandArgs(root: string, command: string): string[] {
  installTooling(root);
  return [path.join(root, ...TOOLING_BUILD.split("/"), "cli.js"), command.replace(/\.ts$/, "")];
}

/** The compiled test helper `test/support/<name>-child.js` (run with plain `node`). */
export function childHelper(name: string): string {
  return path.join(compiledTooling(), "test", "support", `${name}-child.js`);
}

/**
 * The environment for a command under test: ours without `NODE_TEST_CONTEXT` (see `childEnv`)
 * and without `INIT_CWD` (set by the `npm test` running the tests: a command would show its
 * locations relative to that directory instead of the one it runs in; a test about it sets it
 * in `extra`), with `CI` cleared (a red lab's exit status depends on it, and the tests must not
 * depend on whether they run in CI: a test about CI sets it in `extra`), plus `extra`.
 */
export function commandEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return childEnv({ without: ["INIT_CWD"], set: { CI: "", ...extra } });
}

export interface CommandResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `command` of the course at `root` as a process, synchronously, with piped output. */
export function runCommandSync(root: string, command: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): CommandResult {
  const r: SpawnSyncReturns<string> = spawnSync(process.execPath, [...commandArgs(root, command), ...args], {
    cwd: options.cwd ?? root,
    env: commandEnv(options.env),
    encoding: "utf8",
  });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/** Runs `command` of the course at `root` as a process, with piped output. */
export function runCommand(
  root: string,
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...commandArgs(root, command), ...args], {
      cwd: options.cwd ?? root,
      env: commandEnv(options.env),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

// `node --import tsx scripts/test/support/tooling.ts`: compiles (or finds) the build and prints its folder (run-tests.mjs).
if (isEntryPoint(import.meta.url)) process.stdout.write(`${compiledTooling()}\n`);
