/**
 * The course's own TypeScript compiler, resolved from its `node_modules` (the native binary
 * when there is one), and incremental builds of the course package with it. Only node
 * built-ins and `core/` are imported, so `lab` can start the compiler before it loads
 * anything else.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { CourseError } from "../core/errors.js";
import { runProcess } from "../core/process.js";
import { findCompiler, type Compiler } from "../core/typescript.mjs";

export type { Compiler };

/**
 * The compiler of the package at `packageDir` (absolute), as node would resolve
 * `typescript` from there (see `core/typescript.mjs`). Throws `BUILD_FAILED` when there is no
 * TypeScript installed (the learner has not run `npm install`).
 */
export function resolveCompiler(packageDir: string): Compiler {
  const found = findCompiler(packageDir);
  if ("command" in found) return found;
  if (found.missing === "bin") throw new CourseError("BUILD_FAILED", `${found.manifest} 没有声明 tsc 可执行文件`);
  throw new CourseError("BUILD_FAILED", "找不到 TypeScript 编译器：先在课程根目录运行 npm install");
}

export interface BuildResult {
  ok: boolean;
  /** One entry per compiler diagnostic (its first line plus continuation lines). */
  diagnostics: string[];
  /** Everything the compiler printed. */
  output: string;
}

/**
 * Splits `tsc --pretty false` output into diagnostics: a diagnostic starts at a line like
 * `path(12,3): error TS2322: …` or `error TS5083: …`; indented lines continue it.
 */
export function splitDiagnostics(output: string): string[] {
  const diagnostics: string[] = [];
  for (const line of output.split(/\r?\n/)) {
    if (line.trim() === "") continue;
    if (/^\s/.test(line) && diagnostics.length > 0) diagnostics[diagnostics.length - 1] += `\n${line}`;
    else diagnostics.push(line);
  }
  return diagnostics.filter((d) => !/^Found \d+ errors?/.test(d));
}

/**
 * Incrementally compiles the course package whose tsconfig is `tsconfig` (repo-relative),
 * from `courseRoot`, so diagnostics name files relative to the course root. Uses the
 * package's `incremental` tsbuildinfo, so an unchanged tree costs one quick compiler start.
 */
export async function buildCourse(courseRoot: string, tsconfig: string, signal?: AbortSignal): Promise<BuildResult> {
  const compiler = resolveCompiler(path.join(courseRoot, path.dirname(tsconfig)));
  const result = await runProcess(compiler.command, [...compiler.args, "-p", tsconfig, "--pretty", "false"], {
    cwd: courseRoot,
    ...(signal === undefined ? {} : { signal }),
  });
  const output = `${result.stdout.toString("utf8")}${result.stderr.toString("utf8")}`;
  return { ok: result.code === 0, diagnostics: result.code === 0 ? [] : splitDiagnostics(output), output };
}

/** The course package: every chapter's teaching files and focused tests live in it. */
export const COURSE_PACKAGE = "packages/pi-course";

/** A build already under way, for one tsconfig. */
export interface StartedBuild {
  tsconfig: string;
  result: Promise<BuildResult>;
  /** Stops the build (if it still runs) and resolves once the compiler has ended. */
  stop(): Promise<void>;
}

/**
 * Starts building the course package now, before anything else is loaded, so that the
 * compiler runs while the tooling reads the manifest. Aborting `signal`, or `stop()`, ends the
 * compiler. Undefined when the package has no tsconfig (then `runLab` builds what the
 * manifest names).
 */
export function startCourseBuild(courseRoot: string, signal?: AbortSignal): StartedBuild | undefined {
  const tsconfig = `${COURSE_PACKAGE}/tsconfig.json`;
  if (!existsSync(path.join(courseRoot, tsconfig))) return undefined;
  const own = new AbortController();
  if (signal?.aborted === true) own.abort();
  signal?.addEventListener("abort", () => own.abort(), { once: true });
  const result = buildCourse(courseRoot, tsconfig, own.signal);
  result.catch(() => {}); // handled by whoever awaits it; never an unhandled rejection
  return {
    tsconfig,
    result,
    async stop() {
      own.abort();
      await result.catch(() => undefined);
    },
  };
}
