/**
 * Where in the learner's code a failure happened: the first stack frame inside the course
 * (not node's internals, not `node_modules`), as `path:line` relative to the course root.
 * Test processes run with `--enable-source-maps`, so frames already name `.ts` sources.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export interface SourceLocation {
  /** Relative to the course root, `/`-separated. */
  file: string;
  line: number;
  column: number;
}

const FRAME = /^\s*at (?:.*? \()?((?:file:\/\/)?[^()\s]*?):(\d+):(\d+)\)?\s*$/;

/** The frames of `stack` that lie inside `courseRoot` and outside `node_modules`, top first. */
export function courseFrames(stack: string, courseRoot: string): SourceLocation[] {
  const frames: SourceLocation[] = [];
  for (const line of stack.split("\n")) {
    const match = FRAME.exec(line);
    if (match === null) continue;
    const [, where = "", row = "0", col = "0"] = match;
    let file: string;
    try {
      file = where.startsWith("file://") ? fileURLToPath(where) : where;
    } catch {
      continue;
    }
    if (!path.isAbsolute(file)) continue;
    const relative = path.relative(courseRoot, file);
    if (relative === "" || relative.startsWith("..") || path.isAbsolute(relative)) continue;
    const parts = relative.split(path.sep);
    if (parts.includes("node_modules") || parts[0] === "scripts") continue;
    frames.push({ file: parts.join("/"), line: Number(row), column: Number(col) });
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
  const frames = courseFrames(stack, courseRoot);
  if (scaffoldOf !== undefined) {
    const marked = frames.find((frame) => sourceLine(courseRoot, frame)?.includes(`Lab ${scaffoldOf}`) === true);
    if (marked !== undefined) return marked;
  }
  return frames[0];
}

function sourceLine(courseRoot: string, frame: SourceLocation): string | undefined {
  try {
    return readFileSync(path.join(courseRoot, frame.file), "utf8").split("\n")[frame.line - 1];
  } catch {
    return undefined;
  }
}

/** `file:line` for display. */
export function formatLocation(location: SourceLocation): string {
  return `${location.file}:${location.line}`;
}
