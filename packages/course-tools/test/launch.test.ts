/**
 * `scripts/launch.mjs`: compiles the tooling once, reuses the build while the sources are
 * unchanged, rebuilds after a change, and falls back to running from source when the
 * tooling does not compile. The first compile and Ctrl-C during it work on a copy of this
 * repository's `scripts/` (the real command table, a compile long enough to interrupt); a
 * rebuild and the fallback are the launcher's own decisions, made on a tooling of one command
 * (`miniTooling`), which compiles in a fraction of the time.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import test, { type TestContext } from "node:test";
import { courseRoot } from "../src/core/paths.js";
import { toolingStamp } from "../src/core/tooling-stamp.mjs";
import { runInProcess } from "./support/in-process.js";
import { waitForEntry } from "./support/leftover-probe.js";
import { launcherStamp } from "./support/tooling.js";

const repo = courseRoot;

/** A minimal course tree: scripts/, the base tsconfig, the package manifests, linked modules. */
function courseCopy(t: TestContext): string {
  const root = mkdtempSync(path.join(os.tmpdir(), "pi-launch-"));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const tests = path.join(repo, "scripts", "test");
  cpSync(path.join(repo, "scripts"), path.join(root, "scripts"), { recursive: true, filter: (src) => src !== tests && !src.startsWith(`${tests}${path.sep}`) });
  cpSync(path.join(repo, "tsconfig.base.json"), path.join(root, "tsconfig.base.json"));
  cpSync(path.join(repo, "package.json"), path.join(root, "package.json"));
  mkdirSync(path.join(root, "packages", "pi-course"), { recursive: true });
  cpSync(path.join(repo, "packages", "pi-course", "package.json"), path.join(root, "packages", "pi-course", "package.json"));
  symlinkSync(path.join(repo, "node_modules"), path.join(root, "node_modules"), "junction");
  return root;
}

/**
 * A course tree whose tooling is the launcher and what it imports, the real `scripts/tsconfig.json`
 * and a command table of one line (`scripts/cli.ts`) that prints its arguments and whether it runs
 * compiled or from its source.
 */
function miniTooling(t: TestContext): string {
  const root = mkdtempSync(path.join(os.tmpdir(), "pi-launch-mini-"));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  for (const file of [
    "scripts/launch.mjs",
    "scripts/tsconfig.json",
    "scripts/lib/core/tooling-stamp.mjs",
    "scripts/lib/core/typescript.mjs",
    "tsconfig.base.json",
    "package.json",
    "packages/pi-course/package.json",
  ]) {
    cpSync(path.join(repo, file), path.join(root, file));
  }
  writeFileSync(path.join(root, "scripts", "cli.ts"), MINI_CLI);
  symlinkSync(path.join(repo, "node_modules"), path.join(root, "node_modules"), "junction");
  return root;
}

const MINI_CLI =
  'const how: string = import.meta.url.endsWith(".ts") ? "source" : "compiled";\nconsole.log(`mini ${how}: ${process.argv.slice(2).join(" ")}`);\n';

function launch(root: string, ...args: string[]) {
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  return spawnSync(process.execPath, [path.join(root, "scripts", "launch.mjs"), ...args], { cwd: root, env, encoding: "utf8" });
}

const stamp = (root: string) => path.join(root, ".pi-course", "tooling", "sources.json");

test("launch: the first run compiles the tooling, later runs reuse it until a source changes; the compiled tooling finds the course root, not its own build folder; an unknown command is a usage error", async (t) => {
  const root = courseCopy(t);
  // Not a command: compiled with the rest by the first run, and imported from the build directly below.
  writeFileSync(path.join(root, "scripts", "where.ts"), 'import { courseRoot } from "./lib/core/paths.js";\nconsole.log(courseRoot);\n');
  // What the sources print: the command table of this build, run in this process (the copy's sources are the same).
  const fromSource = await runInProcess(root, "hint", ["--help"]);
  const first = launch(root, "hint", "--help");
  assert.equal(first.status, 0, first.stderr);
  assert.equal(first.stdout, fromSource.stdout, "the compiled command prints what the source prints");
  assert.ok(existsSync(path.join(root, ".pi-course", "tooling", "cli.js")));
  const built = statSync(stamp(root)).mtimeMs;
  // The tests install the compiled tooling with this stamp so that npm's way of starting a command does not compile (support/tooling.ts).
  assert.equal(readFileSync(stamp(root), "utf8"), launcherStamp(root), "the tests' stamp is the launcher's own");

  const where = spawnSync(process.execPath, [path.join(root, ".pi-course", "tooling", "where.js")], { encoding: "utf8" });
  assert.equal(where.stdout.trim(), root);

  assert.equal(launch(root, "hint", "--help").status, 0);
  assert.equal(statSync(stamp(root)).mtimeMs, built, "unchanged sources: the build is reused");
  const unknown = launch(root, "deploy");
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /usage: node scripts\/launch\.mjs/);
});

test("launch: a changed source is compiled again before the command runs", (t) => {
  const root = miniTooling(t);
  const first = launch(root, "one");
  assert.equal(first.stdout, "mini compiled: one\n", first.stderr);
  const built = readFileSync(stamp(root), "utf8");
  assert.equal(built, toolingStamp(root));
  writeFileSync(path.join(root, "scripts", "cli.ts"), MINI_CLI.replace("mini ", "edited "));
  const second = launch(root, "two");
  assert.equal(second.stdout, "edited compiled: two\n", second.stderr);
  assert.notEqual(readFileSync(stamp(root), "utf8"), built, "the build carries the new sources' stamp");
  assert.deepEqual(readdirSync(path.join(root, ".pi-course")), ["tooling"], "no partial build left");
});

test("launch: a build copied into another tree with the same sources (a clone: new files, new times) is used as it is, since its stamp is the sources' content; an edited source changes it", (t) => {
  // The launcher keeps a build while its stamp equals the sources' (the first test: reused, and compiled again after an edit).
  const copy = courseCopy(t);
  assert.equal(toolingStamp(copy), toolingStamp(repo), "a copy with new files and new times has the build's stamp");
  mkdirSync(path.join(copy, "scripts", "test"));
  writeFileSync(path.join(copy, "scripts", "test", "new.test.ts"), "// a test is not a tooling source\n");
  assert.equal(toolingStamp(copy), toolingStamp(repo));
  appendFileSync(path.join(copy, "scripts", "lib", "lab", "hints.ts"), "\n// edited in the clone\n");
  assert.notEqual(toolingStamp(copy), toolingStamp(repo), "other content: compiled again");
});

test("launch: tooling that does not compile runs from source", (t) => {
  const root = miniTooling(t);
  mkdirSync(path.join(root, "scripts", "lib"), { recursive: true });
  writeFileSync(path.join(root, "scripts", "lib", "broken.ts"), "export const = ;\n");
  const run = launch(root, "hint", "--help");
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout, "mini source: hint --help\n");
  assert.ok(!existsSync(stamp(root)), "no build was put in place");
  assert.ok(!existsSync(path.join(root, ".pi-course", "tooling")), "and no half-written one either");
});

test("launch: Ctrl-C during the first compile stops it and leaves no partial build; a killed launcher's partial build is removed next time", {
  skip: process.platform === "win32" && "POSIX signals",
}, async (t) => {
  const root = courseCopy(t);
  const state = path.join(root, ".pi-course");
  mkdirSync(state);
  // Left by a launcher that was killed outright (its pid runs no more).
  const stale = path.join(state, "tooling.partial-1073741824");
  mkdirSync(stale);
  writeFileSync(path.join(stale, "hint.js"), "half a build");
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const child = spawn(process.execPath, [path.join(root, "scripts", "launch.mjs"), "hint", "--help"], { cwd: root, env, stdio: "ignore" });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("close", (_code, signal) => resolve(signal)));
  const partial = `tooling.partial-${child.pid}`;
  await waitForEntry(state, (name) => name === partial);
  child.kill("SIGINT");
  assert.equal(await exited, "SIGINT", "the launcher ends by the signal");
  assert.deepEqual(readdirSync(state), [], "neither its own partial build nor the stale one is left, and no build was put in place");
});
