/**
 * The tooling's bin (`bin/pi-course.mjs`): where the tooling's sources are (the course
 * repository) it brings the package's build up to date with `tsc -b` before it runs the
 * command, so an edited or pulled source never runs stale; a source that does not compile
 * stops the command with the compiler's diagnostics; where there are none (a practice folder)
 * it runs the build as it is. Each case on a tooling of one command table that prints its
 * arguments.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import test, { type TestContext } from "node:test";
import { courseRoot, TOOLS_PACKAGE } from "../src/core/paths.js";

const MINI_CLI = 'const label: string = "mini";\nconsole.log(`${label}: ${process.argv.slice(2).join(" ")}`);\n';

/** A course tree whose tooling package is the real bin, tsconfig and compiler lookup, and a one-line command table. */
function miniTooling(t: TestContext): string {
  const root = mkdtempSync(path.join(os.tmpdir(), "pi-bin-"));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  for (const file of [
    "tsconfig.base.json",
    `${TOOLS_PACKAGE}/package.json`,
    `${TOOLS_PACKAGE}/tsconfig.json`,
    `${TOOLS_PACKAGE}/bin/pi-course.mjs`,
    `${TOOLS_PACKAGE}/src/core/typescript.mjs`,
  ]) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    cpSync(path.join(courseRoot, file), path.join(root, file));
  }
  writeFileSync(path.join(root, TOOLS_PACKAGE, "src", "cli.ts"), MINI_CLI);
  symlinkSync(path.join(courseRoot, "node_modules"), path.join(root, "node_modules"), "junction");
  return root;
}

function bin(root: string, ...args: string[]) {
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  return spawnSync(process.execPath, [path.join(root, TOOLS_PACKAGE, "bin", "pi-course.mjs"), ...args], { cwd: root, env, encoding: "utf8" });
}

test("bin: where the sources are, it builds them before the first command and again after an edit, then runs the build", (t) => {
  const root = miniTooling(t);
  const first = bin(root, "hint", "3.1");
  assert.equal(first.status, 0, first.stderr);
  assert.equal(first.stdout, "mini: hint 3.1\n");
  assert.ok(existsSync(path.join(root, TOOLS_PACKAGE, "dist", "src", "cli.js")), "the command ran from the package's build");
  writeFileSync(path.join(root, TOOLS_PACKAGE, "src", "cli.ts"), MINI_CLI.replace('"mini"', '"edited"'));
  const second = bin(root, "lab");
  assert.equal(second.status, 0, second.stderr);
  assert.equal(second.stdout, "edited: lab\n", "an edited source is compiled before the command runs");
});

test("bin: a source that does not compile stops the command with exit 1 and the compiler's diagnostic naming the file", (t) => {
  const root = miniTooling(t);
  writeFileSync(path.join(root, TOOLS_PACKAGE, "src", "broken.ts"), "export const broken: number = 'text';\n");
  const run = bin(root, "hint");
  assert.equal(run.status, 1);
  assert.equal(run.stdout, "");
  assert.match(run.stderr, /src\/broken\.ts\(1,14\): error TS2322/);
});

test("bin: without sources (a practice folder) it runs the build as it is, compiling nothing", (t) => {
  const root = miniTooling(t);
  assert.equal(bin(root, "x").status, 0);
  rmSync(path.join(root, TOOLS_PACKAGE, "src"), { recursive: true });
  rmSync(path.join(root, "node_modules"));
  // No compiler to be found either: only the build runs.
  const run = bin(root, "lab", "03");
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout, "mini: lab 03\n");
});
