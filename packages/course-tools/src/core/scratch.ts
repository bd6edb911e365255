/**
 * Temporary folders of the tooling (practice folders being assembled, fault and verify
 * scratch copies, lab runs' report folders, verify's clones), and what happens to them when
 * a command is cut short.
 *
 * Guarantees
 * - Every folder is made with `mkdtemp` (never an existing path) and registered until it is
 *   removed or handed over. A normal end, an exception, `process.exit`, and SIGINT, SIGTERM
 *   or SIGHUP (see `interrupt.ts`) all remove what is still registered: the first signal
 *   aborts the work so that it unwinds through its own cleanup, a second one removes every
 *   registered folder at once and ends the process.
 * - Each folder holds an owner file (`OWNER_FILE`: this tool, the host, the process id and
 *   the process's start time), and the course root keeps a journal of where this process
 *   makes folders (`.pi-course/scratch/<pid>-<start>.json`). A process killed outright
 *   (SIGKILL, a power cut) leaves both behind; `sweepStaleScratch`, which every command runs
 *   when it starts, removes a folder only when it can prove it is such a leftover: the folder
 *   is where a journal says, carries an owner file of this tool and host naming the
 *   journal's process, and that process is gone (its id is free, or now belongs to a
 *   process that started at another time). Anything it cannot prove is left alone.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { rename, rm, symlink } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { courseRoot } from "./paths.js";

/** The owner file inside every scratch folder. */
export const OWNER_FILE = ".pi-course-owner.json";

/** Where, below a course root, the journals of running commands are kept. */
export const SCRATCH_JOURNALS = ".pi-course/scratch";

/** Who made a scratch folder. */
export interface ScratchOwner {
  tool: "pi-course";
  format: 1;
  host: string;
  pid: number;
  /** When the process started, as the OS counts it (Linux: clock ticks after boot); null where it cannot be read. */
  start: string | null;
}

/** The start time of process `pid` as the OS records it, or null when it cannot be read (not Linux, or no such process). */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 22, counted after the command name, which is in parentheses and may hold spaces.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * True when a process with id `pid` runs, other than this one (also one we may not signal).
 * A zombie (ended, not yet reaped by its parent) does not run: `kill(pid, 0)` succeeds on
 * it, so on Linux its state in `/proc` decides.
 */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  return processState(pid) !== "Z";
}

/** The one-letter state of process `pid` (`R`, `S`, `Z`, …) as Linux records it, or null. */
function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) || null;
  } catch {
    return null;
  }
}

let self: ScratchOwner | undefined;

/** This process as an owner. */
export function currentOwner(): ScratchOwner {
  self ??= { tool: "pi-course", format: 1, host: os.hostname(), pid: process.pid, start: processStart(process.pid) };
  return self;
}

/** True when `owner` is provably a process of this host that no longer runs. */
export function ownerIsGone(owner: ScratchOwner): boolean {
  if (owner.host !== os.hostname()) return false;
  if (owner.pid !== process.pid && !processAlive(owner.pid)) return true;
  // The id is taken: by the same process (still running), or by a newer one.
  const start = processStart(owner.pid);
  return owner.start !== null && start !== null && start !== owner.start;
}

/** `value` as an owner record of this tool, or undefined when it is anything else. */
function parseOwner(value: unknown): ScratchOwner | undefined {
  const owner = value as Partial<ScratchOwner> | null;
  if (owner === null || typeof owner !== "object") return undefined;
  if (owner.tool !== "pi-course" || owner.format !== 1 || typeof owner.host !== "string" || !Number.isInteger(owner.pid)) return undefined;
  if (owner.start !== null && typeof owner.start !== "string") return undefined;
  return owner as ScratchOwner;
}

function readOwner(file: string): ScratchOwner | undefined {
  try {
    return parseOwner(JSON.parse(readFileSync(file, "utf8")));
  } catch {
    return undefined;
  }
}

const sameOwner = (a: ScratchOwner, b: ScratchOwner): boolean => a.host === b.host && a.pid === b.pid && a.start === b.start;

// ---------------------------------------------------------------------------------------
// The journal of this process
// ---------------------------------------------------------------------------------------

interface Journal {
  owner: ScratchOwner;
  /** Folders (parent and name prefix) this process makes scratch folders in. */
  places: { parent: string; prefix: string }[];
}

let journalDir = path.join(courseRoot, ...SCRATCH_JOURNALS.split("/"));

/** Keeps journals below `root` instead of the tooling's own course root (for tests that stand in for a course). */
export function useJournalRoot(root: string): void {
  journalDir = path.join(root, ...SCRATCH_JOURNALS.split("/"));
}

function journalFile(owner: ScratchOwner): string {
  return path.join(journalDir, `${owner.pid}-${owner.start ?? "0"}.json`);
}

const places: Journal["places"] = [];

/** Records that this process makes folders `<parent>/<prefix>*`. Best effort: a course root that cannot be written keeps no journal. */
function journal(parent: string, prefix: string): void {
  if (places.some((p) => p.parent === parent && p.prefix === prefix)) return;
  places.push({ parent, prefix });
  try {
    mkdirSync(journalDir, { recursive: true });
    const file = journalFile(currentOwner());
    writeFileSync(`${file}.tmp`, JSON.stringify({ owner: currentOwner(), places } satisfies Journal));
    // A rename, so that a sweep never reads half a journal.
    renameSync(`${file}.tmp`, file);
  } catch {
    // Without a journal, only a later sweep of a killed process's leftovers is lost.
  }
}

/** Removes this process's journal (when nothing of it is left). */
function dropJournal(): void {
  places.length = 0;
  try {
    unlinkSync(journalFile(currentOwner()));
  } catch {
    // Already gone, or never written.
  }
}

// ---------------------------------------------------------------------------------------
// Scratch folders
// ---------------------------------------------------------------------------------------

/** Folders made here and not yet removed or handed over. */
const active = new Set<string>();
let exitHook = false;

/** Drops the journal once this process has no scratch folder left. */
function forgetIfDone(): void {
  if (active.size === 0) dropJournal();
}

/**
 * Creates a new, empty, private folder `<parent>/<prefix><random>` (holding only its owner
 * file) and registers it. Making the folder, writing its owner file and registering it are
 * one synchronous step: no exit path (an exception, `process.exit`, a second Ctrl-C) can fall
 * between them and leave a folder that no sweep could prove is ours.
 */
export async function makeScratchDir(parent: string, prefix: string): Promise<string> {
  if (!exitHook) {
    // Any ordinary end of the process (also `process.exit` and an uncaught exception) removes what is left.
    process.once("exit", removeAllScratchSync);
    exitHook = true;
  }
  journal(path.resolve(parent), prefix);
  const dir = mkdtempSync(path.join(parent, prefix));
  active.add(dir);
  writeFileSync(path.join(dir, OWNER_FILE), JSON.stringify(currentOwner()));
  return dir;
}

/** Removes `dir` and everything in it (nothing happens if it is already gone) and forgets it. */
export async function removeScratchDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  active.delete(dir);
  forgetIfDone();
}

/**
 * Forgets `dir` without removing it, and removes its owner file: for a folder that becomes
 * the user's (an exit path, and any later sweep, must then leave it alone).
 */
export function releaseScratchDir(dir: string): void {
  rmSync(path.join(dir, OWNER_FILE), { force: true });
  active.delete(dir);
  forgetIfDone();
}

/**
 * Renames the scratch folder `dir` to `dest` and releases it: the finished folder appears
 * in one step. The owner file goes after the rename, from `dest`: until then `dir` stays
 * provably ours, so a process killed between the two steps leaves at worst an owner file in
 * `dest` (harmless: no sweep looks there), never an owner-less leftover nobody may remove.
 */
export async function handOverScratchDir(dir: string, dest: string): Promise<void> {
  await rename(dir, dest);
  active.delete(dir);
  await rm(path.join(dest, OWNER_FILE), { force: true });
  forgetIfDone();
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
 * Removes every scratch folder this process still has, and its journal, synchronously (for
 * an `exit` handler, a second Ctrl-C or a command ending by its signal, where nothing can be
 * awaited). Never throws: a folder it cannot remove stays registered, and its journal with it.
 */
export function removeAllScratchSync(): void {
  for (const dir of active) {
    try {
      // A child process still dying may write into the folder while it goes: retry then.
      rmSync(dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 20 });
    } catch {
      // What cannot be removed now keeps its owner file and journal entry: the next command's sweep removes it.
      continue;
    }
    active.delete(dir);
  }
  forgetIfDone();
}

/**
 * Removes the leftovers of tooling processes that were killed outright (see the module
 * comment for what counts as proof), reading the journals below the course root. Never
 * throws; returns the folders it removed. Journals of processes that still run are left.
 */
export function sweepStaleScratch(): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(journalDir).filter((name) => name.endsWith(".json"));
  } catch {
    return removed;
  }
  for (const name of names) {
    const file = path.join(journalDir, name);
    let entry: Partial<Journal>;
    try {
      entry = JSON.parse(readFileSync(file, "utf8")) as Partial<Journal>;
    } catch {
      continue; // not ours to judge
    }
    const owner = parseOwner(entry.owner);
    if (owner === undefined || sameOwner(owner, currentOwner()) || !ownerIsGone(owner) || !Array.isArray(entry.places)) continue;
    for (const place of entry.places) {
      if (typeof place?.parent !== "string" || typeof place.prefix !== "string" || place.prefix === "") continue;
      let children: string[];
      try {
        children = readdirSync(place.parent).filter((child) => child.startsWith(place.prefix));
      } catch {
        continue;
      }
      for (const child of children) {
        const dir = path.join(place.parent, child);
        const marker = readOwner(path.join(dir, OWNER_FILE));
        if (marker === undefined || !sameOwner(marker, owner)) continue;
        rmSync(dir, { recursive: true, force: true });
        removed.push(dir);
      }
    }
    rmSync(file, { force: true });
  }
  return removed;
}

/**
 * Links `dir/node_modules` to `nodeModules` (a junction on Windows), so a scratch or
 * practice folder can build without `npm install` and without the network. The link
 * target is made absolute: a relative one would be resolved inside `dir`.
 */
export async function linkNodeModules(dir: string, nodeModules: string): Promise<void> {
  await symlink(path.resolve(nodeModules), path.join(dir, "node_modules"), "junction");
}
