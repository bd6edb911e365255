/**
 * `lab --watch`: rerun on save. File events are debounced (editors write a file in
 * several steps), a save during a run aborts that run and starts a fresh one, and runs
 * never overlap.
 */
import { existsSync, readdirSync, watch, type FSWatcher } from "node:fs";
import path from "node:path";

/** Source files whose change triggers a rerun. */
const WATCHED = /\.(?:ts|mts|cts|tsx)$/;

export interface Closable {
  close(): void;
}

/**
 * Watches `dirs` and everything below them, calling `onChange` with the changed path for
 * TypeScript sources. Uses recursive `fs.watch` where the platform has it, else one watcher
 * per directory that exists now. Watch errors (a directory deleted under us) are ignored.
 */
export function watchSources(dirs: readonly string[], onChange: (file: string) => void): Closable {
  const watchers: FSWatcher[] = [];
  const listen = (dir: string, recursive: boolean) => {
    const watcher = watch(dir, { recursive }, (_event, name) => {
      const file = name === null ? dir : path.join(dir, name.toString());
      if (name === null || WATCHED.test(file)) onChange(file);
    });
    watcher.on("error", () => watcher.close());
    watchers.push(watcher);
  };
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    try {
      listen(dir, true);
    } catch (error) {
      if ((error as { code?: string }).code !== "ERR_FEATURE_UNAVAILABLE_ON_PLATFORM") throw error;
      for (const sub of directoriesUnder(dir)) listen(sub, false);
    }
  }
  return { close: () => watchers.forEach((w) => w.close()) };
}

/** `dir` and every directory below it (skipping `node_modules` and dot-directories). */
function directoriesUnder(dir: string): string[] {
  const found = [dir];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && entry.name !== "node_modules" && !entry.name.startsWith(".")) {
      found.push(...directoriesUnder(path.join(dir, entry.name)));
    }
  }
  return found;
}

/** Calls `fn` once `delayMs` have passed without another call. */
export function debounce(fn: () => void, delayMs: number): { (): void; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  const debounced = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      fn();
    }, delayMs);
  };
  debounced.cancel = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
  return debounced;
}

export interface Rerunner {
  /** Starts a run, aborting (and waiting for) the one in progress first. Resolves when the new run ends. */
  trigger(): Promise<void>;
  /** Aborts the run in progress, waits for it and refuses further runs. */
  stop(): Promise<void>;
}

/**
 * Serialises runs of `run`: at most one at a time; a newer trigger aborts the current run
 * through its signal; of several triggers queued behind a run, only the last one runs.
 * A run that throws is reported to `onError` and the loop goes on.
 */
export function createRerunner(run: (signal: AbortSignal) => Promise<void>, onError: (error: unknown) => void): Rerunner {
  let current: { controller: AbortController; done: Promise<void> } | undefined;
  let generation = 0;
  let stopped = false;
  return {
    async trigger() {
      if (stopped) return;
      const mine = ++generation;
      if (current !== undefined) {
        current.controller.abort();
        await current.done;
      }
      if (stopped || mine !== generation) return;
      const controller = new AbortController();
      const done = run(controller.signal).then(
        () => undefined,
        (error: unknown) => {
          if (!controller.signal.aborted) onError(error);
        },
      );
      current = { controller, done };
      await done;
      if (current?.controller === controller) current = undefined;
    },
    async stop() {
      stopped = true;
      if (current !== undefined) {
        current.controller.abort();
        await current.done;
      }
    },
  };
}
