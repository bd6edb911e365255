/**
 * Temporary folders of the tooling (practice folders being assembled, fault and verify
 * scratch copies, test-report folders, private git indexes). Each is made with `mkdtemp`
 * and registered until it is removed or handed over, so one last-resort exit path
 * (`removeAllScratchSync`) removes whatever a command still had when it was cut short.
 */
import { rmSync } from "node:fs";
import { mkdtemp, rm, symlink } from "node:fs/promises";
import path from "node:path";

/** Folders made here and not yet removed or handed over. */
const active = new Set<string>();

/** Creates a new, empty, private folder `<parent>/<prefix><random>` and registers it. */
export async function makeScratchDir(parent: string, prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(parent, prefix));
  active.add(dir);
  return dir;
}

/** Removes `dir` and everything in it (nothing happens if it is already gone) and forgets it. */
export async function removeScratchDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  active.delete(dir);
}

/**
 * Forgets `dir` without removing it: for a folder that was renamed into its final place
 * (a finished practice folder), which an exit path must then leave alone.
 */
export function releaseScratchDir(dir: string): void {
  active.delete(dir);
}

/**
 * Runs `fn` with a new scratch folder (see `makeScratchDir`) and removes the folder
 * afterwards, whether `fn` resolves or throws.
 */
export async function withScratchDir<T>(parent: string, prefix: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await makeScratchDir(parent, prefix);
  try {
    return await fn(dir);
  } finally {
    await removeScratchDir(dir);
  }
}

/**
 * Removes every scratch folder this process still has, synchronously (for an `exit`
 * handler or a second Ctrl-C, where nothing can be awaited).
 */
export function removeAllScratchSync(): void {
  for (const dir of active) rmSync(dir, { recursive: true, force: true });
  active.clear();
}

/**
 * Links `dir/node_modules` to `nodeModules` (a junction on Windows), so a scratch or
 * practice folder can build without `npm install` and without the network. The link
 * target is made absolute: a relative one would be resolved inside `dir`.
 */
export async function linkNodeModules(dir: string, nodeModules: string): Promise<void> {
  await symlink(path.resolve(nodeModules), path.join(dir, "node_modules"), "junction");
}
