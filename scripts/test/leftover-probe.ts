/**
 * What the interruption tests look at after a command ended: processes still running that
 * belong to it, and entries in a folder (a private temp folder, `.pi-course/`), waited for
 * by events rather than by sleeping.
 */
import { existsSync, readdirSync, readFileSync, watch } from "node:fs";

/**
 * Pids of the processes whose command line contains `text` (e.g. a course folder every test
 * process of a run names), or undefined where that cannot be listed (no `/proc`).
 */
export function processesMentioning(text: string): number[] | undefined {
  if (!existsSync("/proc/self/cmdline")) return undefined;
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8").includes(text)) found.push(Number(name));
    } catch {
      // Ended meanwhile.
    }
  }
  return found;
}

/** Resolves with the first entry of `dir` that `matches`, as soon as one exists (watching the folder). */
export function waitForEntry(dir: string, matches: (name: string) => boolean): Promise<string> {
  return new Promise((resolve) => {
    let done = false;
    const watcher = watch(dir, () => check());
    const check = () => {
      if (done) return;
      const found = readdirSync(dir).find(matches);
      if (found === undefined) return;
      done = true;
      watcher.close();
      resolve(found);
    };
    check();
  });
}
