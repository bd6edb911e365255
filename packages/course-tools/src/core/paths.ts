/**
 * Where things are. Every command finds the course from its own location, so it works
 * the same in the course repo and in a practice folder (which has the same layout),
 * whatever directory npm runs it from.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CourseError } from "./errors.js";

/** The tooling package (its bin starts every command), relative to the course root. */
export const TOOLS_PACKAGE = "packages/course-tools";

/**
 * Where the tooling package keeps its build (`tsc -b`: `src/` into `dist/src/`, `test/` into
 * `dist/test/`), relative to the course root. A practice folder holds the compiled commands
 * there too, and no sources.
 */
export const PRACTICE_TOOLING = `${TOOLS_PACKAGE}/dist`;

/** Where the compiled commands are (`cli.js`, the families), relative to the course root: the build of `src/`. */
export const TOOLING_BUILD = `${PRACTICE_TOOLING}/src`;

/**
 * The root of the course tree this script belongs to (the repo or a practice folder): the
 * folder holding `packages/course-tools/`, from its sources (`src/core/`), its build
 * (`dist/src/core/`, `dist/test/…`) or a practice folder's build alike.
 */
export const courseRoot: string = rootOf(path.dirname(fileURLToPath(import.meta.url)));

function rootOf(coreDir: string): string {
  const at = `${coreDir}${path.sep}`.lastIndexOf(`${path.sep}${TOOLS_PACKAGE.split("/").join(path.sep)}${path.sep}`);
  return at === -1 ? path.resolve(coreDir, "..", "..", "..", "..") : coreDir.slice(0, at);
}

/**
 * The directory the user typed the command in. `npm run -w` changes into the workspace
 * before running a script; npm keeps the original directory in `INIT_CWD`, which is what a
 * relative path on the command line is relative to.
 */
export function userCwd(): string {
  return process.env.INIT_CWD ?? process.cwd();
}

/**
 * `file` (absolute) as the learner should see it: relative to `from` (the directory the command
 * was typed in, `userCwd()`), `/`-separated, so that `path:line:col` after it opens the file
 * from a terminal; absolute when no relative path leads there (another drive on Windows).
 */
export function shownPath(file: string, from: string): string {
  const relative = path.relative(from, file);
  if (relative === "") return ".";
  return path.isAbsolute(relative) ? file : relative.split(path.sep).join("/");
}

/** The generated teaching branch (see `course/history.ts`). */
export const COURSE_BRANCH = "course/build-your-own-pi";

/** Where the version matrix keeps the official Node builds it fetched, below the course root. */
export const NODE_BUILDS = ".pi-course/node-builds";

/** Where the version matrix writes each version's output, below the course root. */
export const MATRIX_LOGS = ".pi-course/node-matrix";

/** Marker written into every practice folder (see `practice`); its presence means learner mode. */
export const PRACTICE_MARKER = ".pi-course/practice.json";

/** True when `root` is a practice folder (it has the marker `practice` writes), not the course repo. */
export function isPracticeFolder(root: string): boolean {
  return existsSync(path.join(root, PRACTICE_MARKER));
}

/** Where `hint` remembers the rung each lab has reached, inside a practice folder. */
export const HINT_STATE = ".pi-course/hints.json";

/**
 * Where a practice folder keeps a pristine copy of each starter, by the path of the teaching
 * file it starts (`.pi-course/starter/packages/pi-course/src/resources.ts`), for `reset`.
 * Inside the tooling's own folder: not a file the learner edits, and not compiled.
 */
export function starterCopyPath(teachingFile: string): string {
  return `.pi-course/starter/${teachingFile}`;
}

/**
 * The package directory (`packages/<name>`) a repo-relative source path belongs to.
 * Throws `CourseError` `MANIFEST_INVALID` for a path outside `packages/<name>/`.
 */
export function packageDirOf(sourcePath: string): string {
  const parts = sourcePath.split("/");
  if (parts.length < 3 || parts[0] !== "packages" || parts[1] === "") {
    throw new CourseError("MANIFEST_INVALID", `测试文件 ${sourcePath} 不在 packages/<包名>/ 之下，无法找到它的编译产物`);
  }
  return `${parts[0]}/${parts[1]}`;
}

/**
 * The compiled file for a repo-relative TypeScript source: `packages/p/test/x.test.ts` →
 * `packages/p/dist/test/x.test.js` (the package's tsconfig has `rootDir: "."`, `outDir: "dist"`).
 */
export function distPathOf(sourcePath: string): string {
  const pkg = packageDirOf(sourcePath);
  const rest = sourcePath
    .slice(pkg.length + 1)
    .replace(/\.mts$/, ".mjs")
    .replace(/\.cts$/, ".cjs")
    .replace(/\.tsx?$/, ".js");
  return `${pkg}/dist/${rest}`;
}
