#!/usr/bin/env node
/**
 * `node scripts/launch.mjs <command> [args]`: how the npm scripts start a course command
 * (every command runs through the command table, `scripts/cli.ts`).
 *
 * The commands are TypeScript. Loading them through tsx costs 0.2–0.3 s at every start,
 * most of what a one-off `lab` run spends beyond the compiler and the tests. So the first
 * run compiles `scripts/` once, with the course's own TypeScript, into `.pi-course/tooling/`
 * (git-ignored), and later runs import that JavaScript directly for as long as no file of
 * `scripts/` (or a tsconfig) has changed its content (`lib/core/tooling-stamp.mjs`). Should
 * compiling fail, the command runs from its source through tsx, as it would without this launcher.
 *
 * Compiled output is written to a fresh folder (`tooling.partial-<pid>`) and renamed into
 * place only when complete. Interrupted (Ctrl-C, SIGTERM, SIGHUP), the compile is stopped,
 * that folder removed, and the launcher ends by the same signal; a folder left by a launcher
 * that was killed outright (its pid no longer runs) is removed by the next launch.
 *
 * The npm scripts run this file as `exec node scripts/launch.mjs <command>`: `exec` makes
 * node replace the shell npm starts the script in, so node is npm's own child. npm passes
 * SIGINT and SIGTERM on to its child only; without `exec` they stop at the shell, which
 * neither forwards them nor, for SIGINT, dies before its child does, so a command would run
 * on unaware (or orphaned) when someone signals the npm process rather than the whole
 * process group. Windows' cmd.exe has no `exec`: the `exec.cmd` files beside the package
 * manifests run the rest of the line there (Ctrl-C reaches every process of a console anyway).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { toolingStamp } from "./core/tooling-stamp.mjs";
import { findCompiler } from "./core/typescript.mjs";

const scriptsDir = path.dirname(fileURLToPath(import.meta.url));
const courseRoot = path.dirname(scriptsDir);
// Keep in step with TOOLING_BUILD in scripts/lib/core/paths.ts, which finds the course root from there.
const buildDir = path.join(courseRoot, ".pi-course", "tooling");
const stampFile = path.join(buildDir, "sources.json");

/** True when a process with this pid runs (other than this one). */
function alive(pid) {
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

/** Removes `tooling.partial-<pid>` folders whose launcher no longer runs (it was killed outright). */
function removeStalePartials() {
  const parent = path.dirname(buildDir);
  const prefix = `${path.basename(buildDir)}.partial-`;
  let names = [];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length));
    if (/^\d+$/.test(name.slice(prefix.length)) && !alive(pid)) rmSync(path.join(parent, name), { recursive: true, force: true });
  }
}

/**
 * Runs the compiler into `outDir`; resolves with its exit code. A signal meanwhile stops the
 * compiler, removes `outDir` and ends this process by that signal.
 *
 * A minimal copy of what `scripts/lib/core/process.ts` does for every other process (a
 * process group, killed whole): this runs before anything of the tooling is compiled.
 */
function compile(compiler, outDir) {
  return new Promise((resolve) => {
    // In a process group of its own (POSIX): TypeScript's JavaScript shim, when it is what
    // runs, starts the native compiler as a child, and ending only the shim would leave that one writing.
    const group = process.platform !== "win32";
    const args = [...compiler.args, "-p", path.join(scriptsDir, "tsconfig.json"), "--outDir", outDir];
    const child = spawn(compiler.command, args, { stdio: "ignore", detached: group, windowsHide: true });
    let received;
    const onSignal = (signal) => {
      received ??= signal;
      try {
        if (group) process.kill(-child.pid, "SIGKILL");
        else child.kill("SIGKILL");
      } catch {
        // Already ended.
      }
    };
    const signals = ["SIGINT", "SIGTERM", "SIGHUP"];
    for (const signal of signals) process.on(signal, onSignal);
    const finish = (code) => {
      for (const signal of signals) process.off(signal, onSignal);
      if (received !== undefined) {
        rmSync(outDir, { recursive: true, force: true, maxRetries: 10 });
        process.kill(process.pid, received);
        process.exit(130);
      }
      resolve(code);
    };
    child.on("error", () => finish(1));
    child.on("close", (code) => finish(code));
  });
}

/** True when `.pi-course/tooling` holds a complete build of the current sources. */
async function ensureCompiled() {
  removeStalePartials();
  const sources = toolingStamp(courseRoot);
  if (existsSync(stampFile) && readFileSync(stampFile, "utf8") === sources) return true;
  const compiler = findCompiler(path.join(courseRoot, "packages", "pi-course"));
  if (!("command" in compiler)) return false;
  const partial = `${buildDir}.partial-${process.pid}`;
  try {
    if ((await compile(compiler, partial)) !== 0) return false;
    writeFileSync(path.join(partial, "sources.json"), sources);
    rmSync(buildDir, { recursive: true, force: true });
    mkdirSync(path.dirname(buildDir), { recursive: true });
    renameSync(partial, buildDir);
    return true;
  } catch {
    // Another launch may have renamed its build into place first; use it if it is current.
    return existsSync(stampFile) && readFileSync(stampFile, "utf8") === sources;
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
}

// The command table (`cli.ts`) knows the commands: an unknown one is its usage error.
let entry = path.join(buildDir, "cli.js");
if (!(await ensureCompiled())) {
  const { register } = await import("tsx/esm/api");
  register();
  entry = path.join(scriptsDir, "cli.ts");
}
// Run the table as if node had been started on it: it checks process.argv[1] to know it is the entry point.
process.argv.splice(1, 1, entry);
await import(pathToFileURL(entry).href);
