#!/usr/bin/env node
/**
 * `pi-course <command> [args]`: the course commands, one bin. It runs the compiled command
 * table, `dist/src/cli.js` (`pi-course run-tests [options]`: the test runner,
 * `dist/src/run-tests.mjs`, whose options are its own; what `npm test` runs after the build).
 *
 * Two homes, one file:
 * - In the course repository the tooling's sources are this package's `src/`. Before running,
 *   the bin builds the package with the course's own TypeScript in build mode
 *   (`tsc -b packages/course-tools`, the native compiler when there is one): it compiles only
 *   when a source changed since the last build (an edit, a `git pull`, a checkout), and when
 *   nothing did it only compares the build's record with the sources' times, about 10 ms
 *   (figures in `docs/dependencies.md`). A source that does not compile stops the command
 *   with the compiler's diagnostics (exit status 1).
 * - In a practice folder there are no tooling sources: `practice` puts the compiled tooling
 *   into this package's `dist/src/` (JavaScript only, audited for leaks like every other
 *   file), and this bin runs it as it is.
 *
 * The npm scripts start it by path (`node packages/course-tools/bin/pi-course.mjs lab`, or
 * `../course-tools/bin/…` from the course package), so the tooling that runs is always the
 * folder's own, whichever `node_modules` the folder uses. They run it as `exec node …`:
 * `exec` makes node replace the shell npm starts the script in, so node is npm's own child.
 * npm passes SIGINT and SIGTERM on to its child only; without `exec` they stop at the shell,
 * which neither forwards them nor, for SIGINT, dies before its child does, so a command would
 * run on unaware (or orphaned) when someone signals the npm process rather than the whole
 * process group. Windows' cmd.exe has no `exec`: the `exec.cmd` files beside the package
 * manifests run the rest of the line there (Ctrl-C reaches every process of a console anyway).
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const packageDir = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const build = path.join(packageDir, "dist", "src");

/** Builds the package from its sources when they are here (the course repository); false when that failed. */
async function buildFromSources() {
  if (!existsSync(path.join(packageDir, "src", "cli.ts"))) return true;
  const { findCompiler } = await import(pathToFileURL(path.join(packageDir, "src", "core", "typescript.mjs")).href);
  const compiler = findCompiler(packageDir);
  if (!("command" in compiler)) {
    process.stderr.write("pi-course：找不到 TypeScript 编译器，无法编译课程工具：先在课程根目录运行 npm install。\n");
    return false;
  }
  const result = spawnSync(compiler.command, [...compiler.args, "-b", packageDir, "--pretty", "false"], { encoding: "utf8", windowsHide: true });
  if (result.status === 0) return true;
  process.stderr.write(
    `pi-course：课程工具（packages/course-tools/src/）编译失败：\n${result.stdout ?? ""}${result.stderr ?? ""}${result.error?.message ?? ""}\n`,
  );
  return false;
}

const runTests = process.argv[2] === "run-tests";
const entry = path.join(build, runTests ? "run-tests.mjs" : "cli.js");
if (!(await buildFromSources())) {
  process.exitCode = 1;
} else if (existsSync(entry)) {
  // Run the entry as if node had been started on it: the table checks process.argv[1] to know it is the entry point.
  process.argv.splice(1, runTests ? 2 : 1, entry);
  await import(pathToFileURL(entry).href);
} else {
  process.stderr.write(
    "pi-course：这里既没有编译好的课程工具（packages/course-tools/dist/src/），也没有它的源码（packages/course-tools/src/）。在课程仓库里运行 npm install，或重新生成练习目录。\n",
  );
  process.exitCode = 1;
}
