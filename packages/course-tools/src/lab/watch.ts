/**
 * `lab --watch`: rerun on save. File events are debounced (editors write a file in
 * several steps), a save during a run aborts that run and starts a fresh one, and runs
 * never overlap.
 *
 * Watching is chokidar's (version 4: it supports Node 20 and has one dependency; 5 and later
 * need Node 20.19 or 22). Raw recursive `fs.watch` loses a file on Linux once an editor saves
 * it by writing a temporary file and renaming it over the original (the watch stays on the
 * replaced inode); chokidar re-arms per file and reports in-place writes, rename-over saves
 * and delete-and-create alike, on Linux, macOS and Windows. One case it misses is a watched
 * folder itself being replaced (an editor or tool that saves a whole directory atomically):
 * it keeps watching the old folder. So the watcher also listens to the folders' parent and
 * checks the folders' identity (device and inode) after every event there; when one changed,
 * it starts a fresh chokidar watcher on the new folder and reports a change.
 */
import { statSync } from "node:fs";
import path from "node:path";
import { watch as chokidarWatch, type FSWatcher } from "chokidar";

/**
 * Quiet time after the last file event before a watch rerun starts. It must exceed the
 * 50 ms during which chokidar drops further changes of a file it has just reported: a save
 * dropped that way happened before the rerun starts, so the rerun still reads it.
 */
export const WATCH_DEBOUNCE_MS = 150;

/** Source files whose change triggers a rerun. */
const WATCHED = /\.(?:ts|mts|cts|tsx)$/;

export interface SourceWatcher {
  /** Resolves once the initial scan is done: changes made after this are reported. */
  ready: Promise<void>;
  close(): Promise<void>;
}

/** `dev:ino` of a folder, or "" when it does not exist (or is not a folder). */
function identity(dir: string): string {
  try {
    const info = statSync(dir);
    return info.isDirectory() ? `${info.dev}:${info.ino}` : "";
  } catch {
    return "";
  }
}

/**
 * Watches `dirs` and everything below them, calling `onChange` with the path of a changed,
 * added or removed TypeScript source (or of a watched folder that was replaced). Folders
 * that do not exist yet are picked up when they appear. Watch errors are ignored: a
 * watcher never ends the loop.
 */
export function watchSources(dirs: readonly string[], onChange: (file: string) => void): SourceWatcher {
  const roots = dirs.map((dir) => path.resolve(dir));
  const parents = [...new Set(roots.map((dir) => path.dirname(dir)))];
  const within = (file: string) => roots.some((root) => file === root || file.startsWith(`${root}${path.sep}`));
  const identities = new Map(roots.map((root) => [root, identity(root)]));
  let current: FSWatcher | undefined;
  let closed = false;
  let checkTimer: NodeJS.Timeout | undefined;

  const start = (): Promise<void> => {
    const watcher = chokidarWatch(parents, {
      ignoreInitial: true,
      // The parents themselves, the watched folders and what is below them; nothing else.
      ignored: (file: string) => {
        const resolved = path.resolve(file);
        return !parents.includes(resolved) && !within(resolved);
      },
    });
    current = watcher;
    watcher.on("all", (_event, file) => {
      if (within(path.resolve(file)) && WATCHED.test(file)) onChange(file);
      scheduleCheck();
    });
    watcher.on("raw", () => scheduleCheck());
    watcher.on("error", () => {});
    return new Promise<void>((resolve) => watcher.once("ready", () => resolve()));
  };

  // After events settle, see whether a watched folder was replaced; if so, watch afresh.
  const scheduleCheck = () => {
    if (checkTimer !== undefined) clearTimeout(checkTimer);
    checkTimer = setTimeout(() => {
      checkTimer = undefined;
      const replaced = roots.filter((root) => identity(root) !== identities.get(root));
      if (replaced.length === 0 || closed) return;
      for (const root of replaced) identities.set(root, identity(root));
      const old = current;
      void old?.close();
      void start();
      for (const root of replaced) onChange(root);
    }, 50);
  };

  const ready = start();
  return {
    ready,
    async close() {
      closed = true;
      if (checkTimer !== undefined) clearTimeout(checkTimer);
      await current?.close();
    },
  };
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
