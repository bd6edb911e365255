#!/usr/bin/env node
/**
 * `pi-course <command> [args]`: the course commands, one bin.
 *
 * Two homes, one file:
 * - In the course repository the tooling's sources are `scripts/` at the root; this bin
 *   hands over to `scripts/launch.mjs`, which compiles them once (and again after every
 *   change) into the git-ignored `.pi-course/tooling/`.
 * - In a practice folder there are no tooling sources: `practice` puts the compiled tooling
 *   into this package's `dist/` (JavaScript only, audited for leaks like every other file),
 *   and this bin runs it as it is.
 *
 * `pi-course run-tests [options]` runs the test runner (`run-tests.mjs`: its options are its
 * own) from the same home: what `npm test` runs after the build.
 *
 * The npm scripts start it by path (`node packages/course-tools/bin/pi-course.mjs lab`, or
 * `../course-tools/bin/…` from the course package), so the tooling that runs is always the
 * folder's own, whichever `node_modules` the folder uses.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const packageDir = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const compiled = path.join(packageDir, "dist", "cli.js");
const sources = path.join(packageDir, "..", "..", "scripts");
const launcher = path.join(sources, "launch.mjs");

if (process.argv[2] === "run-tests") {
  const runner = [path.join(packageDir, "dist", "run-tests.mjs"), path.join(sources, "run-tests.mjs")].find((file) => existsSync(file));
  process.argv.splice(1, 2, runner ?? "run-tests.mjs");
  if (runner === undefined) {
    process.stderr.write("pi-course run-tests：找不到 run-tests.mjs（packages/course-tools/dist/ 或 scripts/）。\n");
    process.exitCode = 1;
  } else await import(pathToFileURL(runner).href);
} else if (existsSync(compiled)) {
  // Run the table as if node had been started on it: it checks process.argv[1] to know it is the entry point.
  process.argv.splice(1, 1, compiled);
  await import(pathToFileURL(compiled).href);
} else if (existsSync(launcher)) {
  await import(pathToFileURL(launcher).href);
} else {
  process.stderr.write("pi-course：这里既没有编译好的课程工具（packages/course-tools/dist/），也没有它的源码（scripts/）。在课程仓库里运行 npm install，或重新生成练习目录。\n");
  process.exitCode = 1;
}
