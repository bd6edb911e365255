/**
 * The temporary folders of lab runs (`pi-lab-<pid>-<random>` in the system temp folder:
 * the reporter's result files and the test processes' own temp folder) and how the next
 * command removes the ones a killed run could not.
 *
 * A run removes its folder however it ends, except when its process is killed outright
 * (SIGKILL, a power cut). Such a folder is provably a lab run's: its name carries the pid of
 * the process that made it and it holds `owner.json`, written right after it was created,
 * naming the tool and that pid. Once that process is gone the folder is a leftover, and
 * `removeStaleLabScratch` (which every learner command runs first) removes it. Folders of
 * live processes, and anything without the owner file, are never touched.
 */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { makeScratchDir, removeScratchDir } from "../core/scratch.js";

/** Prefix of a lab run's temporary folder; the creating pid and a random part follow. */
export const LAB_SCRATCH_PREFIX = "pi-lab-";
const OWNER_FILE = "owner.json";
const OWNER_TOOL = "pi-course lab";
const NAME = /^pi-lab-(\d+)-[A-Za-z0-9]{6}$/;

/** True when a process with this pid exists (not counting this process). */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Creates the temporary folder of one lab run of the course at `courseRoot`, registered for
 * removal on exit (see `scratch.ts`), with its owner file in it.
 */
export async function makeLabScratch(courseRoot: string, parent = os.tmpdir()): Promise<string> {
  const dir = await makeScratchDir(parent, `${LAB_SCRATCH_PREFIX}${process.pid}-`);
  try {
    await writeFile(path.join(dir, OWNER_FILE), `${JSON.stringify({ tool: OWNER_TOOL, pid: process.pid, courseRoot })}\n`);
  } catch (error) {
    await removeScratchDir(dir);
    throw error;
  }
  return dir;
}

/**
 * Removes the lab-run folders in `parent` whose creating process no longer runs (see the
 * module comment for how a folder proves it is one). Returns the names removed. Never
 * throws: a folder it cannot read or remove is left for a later run.
 */
export function removeStaleLabScratch(parent = os.tmpdir()): string[] {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const pid = Number(NAME.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid === process.pid || processAlive(pid)) continue;
    const dir = path.join(parent, name);
    try {
      const owner = JSON.parse(readFileSync(path.join(dir, OWNER_FILE), "utf8")) as { tool?: unknown; pid?: unknown };
      if (owner.tool !== OWNER_TOOL || owner.pid !== pid) continue;
      rmSync(dir, { recursive: true, force: true });
      removed.push(name);
    } catch {
      // Not provably ours, or not removable now: leave it.
    }
  }
  return removed;
}
