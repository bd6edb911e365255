/**
 * The course commands as compiled JavaScript, for tests that start them as processes.
 *
 * Starting a command from its TypeScript source through tsx costs 0.3–0.5 s of CPU per
 * process (measured: `node --import tsx packages/course-tools/src/hint.ts --help` 0.45 s, the compiled
 * `hint.js` 0.15 s), and the tooling tests start dozens. So they start the tooling package's
 * build (`tsc -b`: `dist/src/` the commands, `dist/test/` the tests and their child helpers),
 * which `npm test` makes before it runs them (`npm run build`) and which a test file run from
 * its source (`node --import tsx --test packages/course-tools/test/<file>.test.ts`) brings up
 * to date first, once per process. A course tree a test builds (a synthetic course, a mini
 * chapter) gets a copy of the commands at `<root>/packages/course-tools/dist/src/`, where a
 * practice folder keeps them too, so the commands find that tree as their course root.
 */
import { spawn, spawnSync, type SpawnSyncReturns } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import fse from "fs-extra";
import { courseRoot, PRACTICE_TOOLING, TOOLING_BUILD, TOOLS_PACKAGE } from "../../src/core/paths.js";
import { childEnv } from "../../src/core/process.js";
import { resolveCompiler } from "../../src/testing/compiler.js";

let built: string | undefined;

/**
 * The tooling package's build folder (`packages/course-tools/dist`: `src/` the commands,
 * `test/support/*-child.js` the child helpers). Run from a TypeScript source, this first runs
 * `tsc -b` on the tests' project (which builds the commands' project before it), once per process.
 */
export function compiledTooling(): string {
  if (built !== undefined) return built;
  if (fileURLToPath(import.meta.url).endsWith(".ts")) {
    const compiler = resolveCompiler(path.join(courseRoot, TOOLS_PACKAGE));
    const result = spawnSync(compiler.command, [...compiler.args, "-b", path.join(courseRoot, TOOLS_PACKAGE, "test"), "--pretty", "false"], {
      encoding: "utf8",
    });
    if (result.status !== 0) throw new Error(`building the tooling for the tests failed:\n${result.stdout}${result.stderr}`);
  }
  built = path.join(courseRoot, ...PRACTICE_TOOLING.split("/"));
  return built;
}

/**
 * Copies the compiled commands into `<root>/packages/course-tools/dist/src/`, where a practice
 * folder keeps them and the tooling package's bin runs them, so that a command started from
 * there takes `root` as its course root (see `courseRoot`). Source maps and declarations stay
 * in the package's own build: a command started as a process runs without --enable-source-maps.
 */
export function installTooling(root: string): void {
  const target = path.join(root, ...TOOLING_BUILD.split("/"));
  if (existsSync(path.join(target, "cli.js"))) return;
  const build = path.join(compiledTooling(), "src");
  fse.copySync(build, target, { filter: (src) => !/\.(map|d\.ts|d\.mts)$/.test(src) });
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
