/**
 * Chapter 08 · the workspace: the one folder a coding agent's tools may touch.
 *
 * A model names files with strings it made up; some of them point elsewhere (`../`, an
 * absolute path, a symlink to `/etc`). Containment is checked twice, because each check
 * alone misses something:
 * - lexically, with `path.relative` (not a string prefix: `/w/app-old` is not inside
 *   `/w/app`), which catches `..` and absolute paths before the disk is touched;
 * - canonically, after `realpath`, which catches a symlink inside the workspace that
 *   points out of it. A path that does not exist yet (a file about to be written) is
 *   judged by the canonical path of its deepest existing ancestor.
 * Stated limit: this guards against mistaken and hostile *names*, not against another
 * process swapping a checked folder for a symlink between the check and the use.
 */
import { lstat, realpath, stat } from "node:fs/promises";
import path from "node:path";

/** Error codes thrown on purpose by this module. */
export type WorkspaceErrorCode = "WORKSPACE_MISSING" | "PATH_INVALID" | "PATH_OUTSIDE_WORKSPACE";

/** An error with a stable `code`; messages may change, codes do not. */
export class WorkspaceError extends Error {
  readonly code: WorkspaceErrorCode;
  constructor(code: WorkspaceErrorCode, message: string, options?: { cause?: unknown }) {
    super(`${code}: ${message}`, options);
    this.name = "WorkspaceError";
    this.code = code;
  }
}

/** True when `candidate` is `root` or below it, judged on the path strings (both absolute). */
export function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === "" || (!relative.startsWith(`..${path.sep}`) && relative !== ".." && !path.isAbsolute(relative));
}

export interface Workspace {
  /** The canonical (realpath) root. */
  readonly root: string;
  /**
   * The canonical absolute path of `requested` (relative to the root, or absolute inside
   * it). Throws `PATH_INVALID` for an empty name, a NUL byte, a dangling symlink or a
   * symlink loop, and `PATH_OUTSIDE_WORKSPACE` when the path leaves the root lexically or
   * through a symlink.
   */
  resolve(requested: string): Promise<string>;
  /** `absolute` relative to the root, `/`-separated (`.` for the root itself), for messages. */
  display(absolute: string): string;
}

function codeOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Opens the workspace at `root`: it must be an existing directory (`WORKSPACE_MISSING`
 * otherwise). Its canonical path is fixed here, so later containment checks compare
 * canonical paths with a canonical root.
 */
export async function openWorkspace(root: string): Promise<Workspace> {
  let canonical: string;
  try {
    canonical = await realpath(root);
    if (!(await stat(canonical)).isDirectory()) throw Object.assign(new Error("not a directory"), { code: "ENOTDIR" });
  } catch (error) {
    throw new WorkspaceError("WORKSPACE_MISSING", `workspace ${root} is not an existing directory`, { cause: error });
  }

  const display = (absolute: string): string => {
    const relative = path.relative(canonical, absolute);
    return relative === "" ? "." : relative.split(path.sep).join("/");
  };

  const resolve = async (requested: string): Promise<string> => {
    if (typeof requested !== "string" || requested === "" || requested.includes("\0")) {
      throw new WorkspaceError("PATH_INVALID", `a path must be a non-empty string without NUL bytes, got ${JSON.stringify(requested)}`);
    }
    const absolute = path.resolve(canonical, requested);
    if (!isInside(canonical, absolute)) {
      throw new WorkspaceError("PATH_OUTSIDE_WORKSPACE", `${requested} is outside the workspace`);
    }
    // The canonical path of the deepest existing ancestor, plus the part that does not exist yet.
    const missing: string[] = [];
    let current = absolute;
    let resolved: string;
    for (;;) {
      try {
        resolved = path.join(await realpath(current), ...missing.reverse());
        break;
      } catch (error) {
        const code = codeOf(error);
        if (code !== "ENOENT" && code !== "ENOTDIR") {
          throw new WorkspaceError("PATH_INVALID", `${requested} cannot be resolved (${code ?? "error"})`, { cause: error });
        }
        // Present to lstat but not to realpath: a symlink to nothing. Writing through it
        // would create its target, wherever that is.
        if (
          await lstat(current).then(
            () => true,
            () => false,
          )
        ) {
          throw new WorkspaceError("PATH_INVALID", `${display(current)} is a symlink to a path that does not exist`);
        }
        missing.push(path.basename(current));
        current = path.dirname(current);
      }
    }
    if (!isInside(canonical, resolved)) {
      throw new WorkspaceError("PATH_OUTSIDE_WORKSPACE", `${requested} resolves outside the workspace through a symlink`);
    }
    return resolved;
  };

  return { root: canonical, resolve, display };
}
