/**
 * Replacing a file so that a reader (or a crash) only ever sees the old content or the new
 * one: the new bytes go to a temporary sibling, which is then renamed over the file (a
 * rename replaces its target on every OS node supports). Used for the learner's teaching
 * file (fault patch and restore, reset), the fault backup and the hint progress.
 *
 * The temporary sibling is `<file>.pi-course-<pid>-<random>.tmp`: a failed write removes it;
 * one left by a process killed outright is removed by `removeStaleTemps`, which can tell
 * from its name that its process is gone.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { processAlive } from "./scratch.js";

const TEMP = /^(.+)\.pi-course-(\d+)-[0-9a-f]{8}\.tmp$/;

/**
 * Writes `data` to `file` atomically (see the module comment), keeping the file's mode (a
 * new file gets 0644). On failure nothing is left beside the file and the original error is
 * rethrown, for the caller to report with its own code.
 */
export function writeAtomicSync(file: string, data: string | Uint8Array): void {
  const temporary = `${file}.pi-course-${process.pid}-${randomBytes(4).toString("hex")}.tmp`;
  const mode = existsSync(file) ? statSync(file).mode & 0o777 : 0o644;
  try {
    writeFileSync(temporary, data, { mode, flag: "wx" });
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/**
 * Removes the temporary siblings of `file` that `writeAtomicSync` calls of processes killed
 * outright left behind. Never throws: what it cannot read or remove is left for later.
 */
export function removeStaleTemps(file: string): void {
  const dir = path.dirname(file);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const match = TEMP.exec(name);
    if (match === null || match[1] !== path.basename(file) || processAlive(Number(match[2]))) continue;
    rmSync(path.join(dir, name), { force: true });
  }
}

/**
 * Every regular file below `dir`, relative to it, `/`-separated and sorted; symbolic links
 * and other entries are left out. (A walk of its own: `Dirent.parentPath` is newer than
 * Node 20.11.)
 */
export async function filesBelow(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (relative: string): Promise<void> => {
    for (const entry of await readdir(path.join(dir, ...relative.split("/")), { withFileTypes: true })) {
      const child = relative === "" ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) await walk(child);
      else if (entry.isFile()) found.push(child);
    }
  };
  await walk("");
  return found.sort();
}
