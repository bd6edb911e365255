/**
 * What the interruption tests look at after a command ended: processes still running that
 * belong to it, and entries in a folder (a private temp folder, `.pi-course/`), waited for
 * by events rather than by sleeping.
 */
import { existsSync, readdirSync, readFileSync, watch, type FSWatcher } from "node:fs";

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

/**
 * The processes mentioning `text` (see `processesMentioning`) once they have had time to go:
 * a process killed with its group is still listed until the kernel has torn it down, which a
 * loaded machine can delay past the moment its parent's `close` arrives. Looks again every
 * 50 ms while any is listed, for at most `limitMs`, and resolves with what is still there
 * (empty when every one ended; undefined where processes cannot be listed).
 */
export async function processesLeft(text: string, limitMs = 10_000): Promise<number[] | undefined> {
  const started = Date.now();
  for (;;) {
    const found = processesMentioning(text);
    if (found === undefined || found.length === 0 || Date.now() - started >= limitMs) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** How long `waitForEntry` waits by default before it gives up, naming what it waited for. */
export const WAIT_LIMIT_MS = 20_000;

/**
 * Resolves with the first entry of `dir` that `matches`, as soon as one exists (watching the
 * folder, and looking again every 100 ms: a watcher may miss an entry made in the instant it
 * starts). Rejects, naming `dir` and `what`, when the folder vanishes while it looks (the
 * command under test ended and removed it) or when `limitMs` passes: a test then fails in
 * seconds with a reason instead of running into its own timeout. Never throws from a
 * watcher callback.
 */
export function waitForEntry(dir: string, matches: (name: string) => boolean, what = "the entry", limitMs = WAIT_LIMIT_MS): Promise<string> {
  return new Promise((resolve, reject) => {
    let watcher: FSWatcher | undefined;
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearInterval(poll);
      clearTimeout(deadline);
      watcher?.close();
      outcome();
    };
    const check = () => {
      if (settled) return;
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        finish(() => reject(new Error(`${dir} is gone (${code}) while waiting for ${what}: the command ended first`)));
        return;
      }
      const found = names.find(matches);
      if (found !== undefined) finish(() => resolve(found));
    };
    const poll = setInterval(check, 100);
    const deadline = setTimeout(() => finish(() => reject(new Error(`${what} did not appear in ${dir} within ${limitMs} ms`))), limitMs);
    try {
      watcher = watch(dir, () => check());
      watcher.on("error", () => check());
    } catch {
      // The folder is already gone: `check` says so.
    }
    check();
  });
}
