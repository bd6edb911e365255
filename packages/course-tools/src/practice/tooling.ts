/**
 * The tooling a practice folder runs: compiled JavaScript in the tooling package's `dist/`
 * (`packages/course-tools/dist/`), never the TypeScript sources of `scripts/`, their tests,
 * `bench/` or the author's documents (`plan.ts` leaves those out of the parent tree).
 *
 * Where the JavaScript comes from: the tooling that is running `practice` right now, when it
 * runs compiled (the launcher's `.pi-course/tooling/`, or a test build); otherwise a fresh
 * compile of the course root's `scripts/` with the course's own TypeScript. Either way it is
 * the tooling of the working tree that made the folder. The test runner (`run-tests.mjs`,
 * plain JavaScript) is copied beside it for `npm test`. Source maps, build stamps and compiled
 * tests are left out.
 */
import { copyFile, mkdir, readdir } from "node:fs/promises";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CourseError } from "../core/errors.js";
import { courseRoot, PRACTICE_TOOLING } from "../core/paths.js";
import { runProcess } from "../core/process.js";
import { makeScratchDir, removeScratchDir } from "../core/scratch.js";
import { resolveCompiler } from "../testing/compiler.js";

/** The compiled tooling's root when this module runs compiled (it sits at `<root>/lib/practice/`), else undefined. */
function runningBuild(): string | undefined {
  const here = fileURLToPath(import.meta.url);
  if (!here.endsWith(".js")) return undefined;
  const root = path.resolve(path.dirname(here), "..", "..");
  return existsSync(path.join(root, "cli.js")) ? root : undefined;
}

/** True for what a practice folder's tooling keeps of a build: the commands and their library, as JavaScript. */
function keep(relative: string): boolean {
  const parts = relative.split(path.sep);
  if (parts[0] === "test") return false;
  if (parts.length === 1 && /\.json$/.test(parts[0]!)) return false; // build stamps
  return !relative.endsWith(".map");
}

/** Compiles `scripts/` of the course root into a scratch folder; the caller removes it. */
async function compileTooling(signal?: AbortSignal): Promise<string> {
  const out = await makeScratchDir(path.join(courseRoot, ".pi-course"), "practice-tooling-");
  const compiler = resolveCompiler(path.join(courseRoot, "packages", "pi-course"));
  const result = await runProcess(compiler.command, [...compiler.args, "-p", path.join("scripts", "tsconfig.json"), "--outDir", out, "--pretty", "false"], {
    cwd: courseRoot,
    ...(signal === undefined ? {} : { signal }),
  });
  if (result.code !== 0 || !existsSync(path.join(out, "cli.js"))) {
    await removeScratchDir(out);
    const why = `${result.stdout.toString("utf8")}${result.stderr.toString("utf8")}`.trim().split("\n")[0] ?? "";
    throw new CourseError("BUILD_FAILED", `课程工具编译失败，无法放进练习目录：${why}`);
  }
  return out;
}

/** Every file below `dir`, relative to it (a walk of its own: `Dirent.parentPath` is newer than Node 20.11). */
async function filesBelow(dir: string, prefix = ""): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(path.join(dir, prefix), { withFileTypes: true })) {
    const relative = path.join(prefix, entry.name);
    if (entry.isDirectory()) found.push(...(await filesBelow(dir, relative)));
    else if (entry.isFile()) found.push(relative);
  }
  return found;
}

/**
 * Writes the compiled tooling into `<folder>/packages/course-tools/dist/` (see the module
 * comment) and returns the files written, relative to `folder` and `/`-separated. Throws
 * `BUILD_FAILED` when no compiled tooling can be had; writes nothing outside that folder.
 */
export async function installPracticeTooling(folder: string, signal?: AbortSignal): Promise<string[]> {
  const running = runningBuild();
  const build = running ?? (await compileTooling(signal));
  try {
    const dest = path.join(folder, ...PRACTICE_TOOLING.split("/"));
    const written: string[] = [];
    for (const relative of await filesBelow(build)) {
      if (!keep(relative)) continue;
      await mkdir(path.dirname(path.join(dest, relative)), { recursive: true });
      await copyFile(path.join(build, relative), path.join(dest, relative));
      written.push(relative);
    }
    const runner = path.join(courseRoot, "scripts", "run-tests.mjs");
    if (existsSync(runner)) {
      await copyFile(runner, path.join(dest, "run-tests.mjs"));
      written.push("run-tests.mjs");
    }
    return written.map((relative) => `${PRACTICE_TOOLING}/${relative.split(path.sep).join("/")}`).sort();
  } finally {
    if (running === undefined) await removeScratchDir(build);
  }
}
