/**
 * The tooling a practice folder runs: compiled JavaScript in the tooling package's
 * `dist/src/` (`packages/course-tools/dist/src/`), never the TypeScript sources of
 * `packages/course-tools/src/`, its tests, `bench/` or the author's documents (`plan.ts` leaves
 * those out of the parent tree).
 *
 * Where the JavaScript comes from: the tooling that is running `practice` right now, when it
 * runs compiled (the package's build, or a copy of it a test installed); otherwise the package's
 * build brought up to date first (`tsc -b packages/course-tools`, with the course's own
 * TypeScript). Either way it is the tooling of the working tree that made the folder, test
 * runner (`run-tests.mjs`) included. Source maps, declarations and compiled tests are left out.
 */
import { copyFile, mkdir } from "node:fs/promises";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CourseError } from "../core/errors.js";
import { filesBelow } from "../core/files.js";
import { courseRoot, TOOLING_BUILD, TOOLS_PACKAGE } from "../core/paths.js";
import { runProcess } from "../core/process.js";
import { resolveCompiler } from "../testing/compiler.js";

/** The compiled commands' folder when this module runs compiled (it sits at `<build>/practice/`), else undefined. */
function runningBuild(): string | undefined {
  const here = fileURLToPath(import.meta.url);
  if (!here.endsWith(".js")) return undefined;
  const build = path.resolve(path.dirname(here), "..");
  return existsSync(path.join(build, "cli.js")) ? build : undefined;
}

/** True for what a practice folder's tooling keeps of a build: the commands and their library, as JavaScript. */
function keep(relative: string): boolean {
  return !/\.(map|d\.ts|d\.mts)$/.test(relative);
}

/** Brings the tooling package's build of the course root up to date (`tsc -b`) and returns its commands' folder. */
async function buildTooling(signal?: AbortSignal): Promise<string> {
  const compiler = resolveCompiler(path.join(courseRoot, TOOLS_PACKAGE));
  const result = await runProcess(compiler.command, [...compiler.args, "-b", TOOLS_PACKAGE, "--pretty", "false"], {
    cwd: courseRoot,
    ...(signal === undefined ? {} : { signal }),
  });
  const build = path.join(courseRoot, ...TOOLING_BUILD.split("/"));
  if (result.code !== 0 || !existsSync(path.join(build, "cli.js"))) {
    const why = `${result.stdout.toString("utf8")}${result.stderr.toString("utf8")}`.trim().split("\n")[0] ?? "";
    throw new CourseError("BUILD_FAILED", `课程工具编译失败，无法放进练习目录：${why}`);
  }
  return build;
}

/**
 * Writes the compiled tooling into `<folder>/packages/course-tools/dist/src/` (see the module
 * comment) and returns the files written, relative to `folder` and `/`-separated. Throws
 * `BUILD_FAILED` when no compiled tooling can be had; writes nothing outside that folder.
 */
export async function installPracticeTooling(folder: string, signal?: AbortSignal): Promise<string[]> {
  const build = runningBuild() ?? (await buildTooling(signal));
  const dest = path.join(folder, ...TOOLING_BUILD.split("/"));
  const written: string[] = [];
  for (const relative of await filesBelow(build)) {
    if (!keep(relative)) continue;
    await mkdir(path.dirname(path.join(dest, relative)), { recursive: true });
    await copyFile(path.join(build, relative), path.join(dest, relative));
    written.push(`${TOOLING_BUILD}/${relative}`);
  }
  return written;
}
