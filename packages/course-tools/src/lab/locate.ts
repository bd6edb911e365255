/**
 * Where in the learner's code a failure happened: the first stack frame inside the course
 * (not node's internals, not `node_modules`), kept relative to the course root. Test
 * processes run with `--enable-source-maps`, so frames already name `.ts` sources.
 *
 * Every location `lab` prints — where a failure was thrown, where its test is declared, a
 * compiler diagnostic, a construction site — is shown as `path:line:col` relative to the
 * directory the command was typed in (`userCwd()`: npm's `INIT_CWD`), which terminals and
 * editors' terminals turn into a link that opens the file at that line and column.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { shownPath, TOOLS_PACKAGE } from "../core/paths.js";

/** 1-based line and column of `offset` in `text`. */
export function positionIn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  return { line: before.split("\n").length, column: offset - (before.lastIndexOf("\n") + 1) + 1 };
}

export interface SourceLocation {
  /** Relative to the course root, `/`-separated. */
  file: string;
  line: number;
  column: number;
}

/**
 * The `path:line:column` candidates of one stack line: `at fn (LOCATION)` or `at LOCATION`.
 * A path may contain spaces and parentheses (`/home/me/my course (copy)/…`), so every split
 * at ` (` is a candidate, longest location first; the caller keeps the first that lies in
 * the course.
 */
function frameCandidates(line: string): { where: string; line: number; column: number }[] {
  const body = /^\s*at (.*)$/.exec(line)?.[1];
  if (body === undefined) return [];
  const texts = [body];
  if (body.endsWith(")")) {
    for (let at = body.indexOf(" ("); at !== -1; at = body.indexOf(" (", at + 1)) texts.push(body.slice(at + 2, -1));
  }
  const found: { where: string; line: number; column: number }[] = [];
  for (const text of texts) {
    const match = /^(.*):(\d+):(\d+)$/.exec(text);
    if (match !== null) found.push({ where: match[1]!, line: Number(match[2]), column: Number(match[3]) });
  }
  return found;
}

/** `file` (an absolute path or `file:` URL) relative to `courseRoot`, `/`-separated; undefined when outside it. */
export function courseRelative(file: string, courseRoot: string): string | undefined {
  let absolute: string;
  try {
    absolute = file.startsWith("file://") ? fileURLToPath(file) : file;
  } catch {
    return undefined;
  }
  if (!path.isAbsolute(absolute)) return undefined;
  const relative = path.relative(courseRoot, absolute);
  if (relative === "" || relative.startsWith("..") || path.isAbsolute(relative)) return undefined;
  return relative.split(path.sep).join("/");
}

/** The frames of `stack` that lie inside `courseRoot` and outside `node_modules`, top first. */
export function courseFrames(stack: string, courseRoot: string): SourceLocation[] {
  const frames: SourceLocation[] = [];
  for (const text of stack.split("\n")) {
    for (const candidate of frameCandidates(text)) {
      const file = courseRelative(candidate.where, courseRoot);
      if (file === undefined) continue;
      const parts = file.split("/");
      if (parts.includes("node_modules") || parts[0] === "scripts" || file.startsWith(`${TOOLS_PACKAGE}/`)) break;
      frames.push({ file, line: candidate.line, column: candidate.column });
      break;
    }
  }
  return frames;
}

/**
 * The location to point the learner at for a failure with `stack`. For a scaffold error of
 * lab `scaffoldOf`, the frame whose source line mentions `Lab <id>` (the `throw` in the
 * starter, rather than inside the helper that builds the error); otherwise the top course frame.
 */
export function locateFailure(stack: string | undefined, courseRoot: string, scaffoldOf?: string): SourceLocation | undefined {
  if (stack === undefined) return undefined;
  return (scaffoldOf === undefined ? undefined : scaffoldFrame(stack, courseRoot, scaffoldOf)) ?? courseFrames(stack, courseRoot)[0];
}

/**
 * The frame of `stack` whose source line mentions `Lab <lab>` (the starter's `throw`), or
 * undefined: a scaffold error caught by the code under test and handed on as a value (an
 * executor answering "failed: Lab 6.4 … 尚未实现") reaches the test with no such frame.
 */
export function scaffoldFrame(stack: string | undefined, courseRoot: string, lab: string): SourceLocation | undefined {
  if (stack === undefined) return undefined;
  return courseFrames(stack, courseRoot).find((frame) => sourceLine(courseRoot, frame)?.includes(`Lab ${lab}`) === true);
}

function sourceLine(courseRoot: string, frame: SourceLocation): string | undefined {
  try {
    return readFileSync(path.join(courseRoot, frame.file), "utf8").split("\n")[frame.line - 1];
  } catch {
    return undefined;
  }
}

/** `path:line:col` of `location` (course-relative) for display, the path relative to `showFrom` (default the course root). */
export function formatLocation(location: SourceLocation, courseRoot: string, showFrom: string = courseRoot): string {
  return `${shownPath(path.join(courseRoot, ...location.file.split("/")), showFrom)}:${location.line}:${location.column}`;
}

/**
 * A compiler diagnostic for display: tsc (`--pretty false`, run in the course root) writes
 * `src/x.ts(12,3): error TS2322: …`; this gives `src/x.ts:12:3 - error TS2322: …` (tsc's own
 * pretty form) with the path relative to `showFrom`. Other diagnostics are returned as they are.
 */
export function showDiagnostic(diagnostic: string, courseRoot: string, showFrom: string = courseRoot): string {
  return diagnostic.replace(
    /^(.+?)\((\d+),(\d+)\): (?=(?:error|warning|message) )/,
    (_whole, file: string, line: string, column: string) => `${shownPath(path.resolve(courseRoot, file), showFrom)}:${line}:${column} - `,
  );
}
