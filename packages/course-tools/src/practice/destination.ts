/**
 * Where a practice folder may go: outside the repository (also through symlinks), at a path
 * that does not exist yet, in a folder that exists and can be written. Checked before
 * anything is written, and again just before the folder is renamed into place.
 */
import { constants as fsConstants } from "node:fs";
import { access, lstat, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { CourseError } from "../core/errors.js";

/** The default destination: `pi-practice-NN` beside the repository. */
export function defaultPracticeDir(repo: string, id: string): string {
  return path.resolve(repo, "..", `pi-practice-${id}`);
}

/** `dest` resolved against `cwd` (the directory the user typed the command in), or the default. */
export function resolveDestination(repo: string, id: string, dest: string | undefined, cwd: string): string {
  return dest === undefined ? defaultPracticeDir(repo, id) : path.resolve(cwd, dest);
}

function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/** The deepest existing ancestor of `p` (inclusive), canonicalised, plus the part below it. */
async function canonicalise(p: string): Promise<string> {
  const rest: string[] = [];
  let current = path.resolve(p);
  for (;;) {
    try {
      return path.join(await realpath(current), ...rest.reverse());
    } catch {
      const up = path.dirname(current);
      if (up === current) return path.resolve(p);
      rest.push(path.basename(current));
      current = up;
    }
  }
}

/** The nearest ancestor of `p` (inclusive) that exists, with what it is. */
async function nearestExisting(p: string): Promise<{ path: string; isDirectory: boolean }> {
  let current = path.resolve(p);
  for (;;) {
    const info = await stat(current).catch(() => undefined);
    if (info !== undefined) return { path: current, isDirectory: info.isDirectory() };
    const up = path.dirname(current);
    if (up === current) return { path: current, isDirectory: true };
    current = up;
  }
}

/** Why a folder cannot be written, for an `EACCES`/`EPERM`/`EROFS`; undefined for any other error. */
export function readOnlyParent(parent: string, error: unknown): CourseError | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code !== "EACCES" && code !== "EPERM" && code !== "EROFS") return undefined;
  return new CourseError("DEST_PARENT_READONLY", `不能在 ${parent} 里创建目录（${code}）：换一个你有写权限的位置`, { cause: error });
}

/**
 * Refuses a destination that exists (even as a broken symlink: `DEST_EXISTS`), lies inside
 * the repository after resolving symlinks (`DEST_INSIDE_REPO`, suggesting the real default
 * folder of chapter `id`), whose parent folder does not exist (`DEST_PARENT_MISSING`), is
 * a file or lies below one (`DEST_PARENT_NOT_DIR`, naming the file), or cannot be written
 * (`DEST_PARENT_READONLY`). Changes nothing.
 */
export async function checkDestination(repo: string, dest: string, id: string): Promise<void> {
  const exists = await lstat(dest).then(
    () => true,
    () => false,
  );
  if (isInside(await realpath(repo), await canonicalise(dest)) || isInside(path.resolve(repo), path.resolve(dest))) {
    throw new CourseError("DEST_INSIDE_REPO", `${dest} 在课程仓库内部；练习目录要放在仓库之外，例如 ${defaultPracticeDir(repo, id)}`);
  }
  if (exists) throw new CourseError("DEST_EXISTS", `${dest} 已经存在；为了不覆盖任何东西，请换一个不存在的目录名`);
  const parent = path.dirname(dest);
  const existing = await nearestExisting(parent);
  if (!existing.isDirectory) {
    throw new CourseError(
      "DEST_PARENT_NOT_DIR",
      `${existing.path} 是一个文件，不是目录，不能在它${existing.path === parent ? "" : "下面"}创建练习目录；换一个位置`,
    );
  }
  if (existing.path !== parent) throw new CourseError("DEST_PARENT_MISSING", `${parent} 不存在；请先创建它，或换一个位置`);
  try {
    await access(parent, fsConstants.W_OK);
  } catch (error) {
    throw readOnlyParent(parent, error) ?? error;
  }
}
