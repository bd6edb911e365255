/**
 * Chapter 12 · the file-safety layer under `resources.ts`.
 *
 * This module is provided: the practice folder receives it as it is, and the chapter's
 * labs never ask for it. `resources.ts` decides *which* file to read and whether its
 * path lies inside the right root (that is the lesson); this module makes the read itself
 * safe once that decision is made:
 *
 * - proven: the file read is the file that was checked. The canonical path is opened
 *   without following a final symlink, and the open handle's `(dev, ino)` must equal what
 *   the checked path leads to afterwards (realpath unchanged, `lstat` identical), so a
 *   file swapped for a symlink between the check and the read is reported, never read.
 *   Where the system names an open handle's file (Linux: `/proc/self/fd/N`), that name must
 *   be the checked path too: path checks after the open can be fooled by a directory on the
 *   way that flips between a folder and a symlink to elsewhere (real at `realpath`, a link
 *   again at `lstat`), the kernel's record of what was opened cannot;
 * - bounded: a file over `RESOURCE_SIZE_LIMIT` is refused from its handle's size, and the
 *   read stops one byte past the limit, so a file that grows while it is read cannot pass;
 * - text only: bytes must be valid UTF-8 without NUL (a fatal decoder: never U+FFFD);
 * - never blocking: FIFOs, sockets and devices are refused at once (`O_NONBLOCK`);
 * - named: directory entries keep their raw bytes, so a name that is not valid UTF-8 is
 *   shown escaped instead of disappearing.
 *
 * Every failure is a `FileProblem` naming the file; `resourceErrorOf` turns it into the
 * `ResourceError` whose code depends on where the read happened. The small helpers at the
 * end (`statIfPresent`, `realpathIfPresent`, `readProvenTextIfPresent`) read "not there"
 * as `undefined` and let every other error through.
 */
import { isUtf8 } from "node:buffer";
import { constants as fsConstants, type Dirent, type Stats } from "node:fs";
import { lstat, open, readdir, readlink, realpath, stat, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { reasonOf } from "./extension-values.js";
import { ResourceError, type ResourceErrorCode } from "./resource-types.js";

/** The largest AGENTS.md, template, activated SKILL.md or requested skill file: 1 MiB. */
export const RESOURCE_SIZE_LIMIT = 1024 * 1024;

/**
 * What went wrong with one file:
 * - `missing`: it vanished between its check and its read (ENOENT at open);
 * - `changed`: the handle is not the checked file (swapped, moved or replaced meanwhile);
 * - `not-regular`: a FIFO, socket or device;
 * - `too-large`: over the limit, by its size or while being read;
 * - `not-text`: not valid UTF-8, or a NUL byte;
 * - `unreadable`: any other I/O error (EACCES, EISDIR, ELOOP, EIO…), kept as `cause`.
 */
export type FileProblemKind = "missing" | "changed" | "not-regular" | "too-large" | "not-text" | "unreadable";

/** A problem with one file; `message` names the file, `cause` is the underlying error if any. */
export class FileProblem extends Error {
  readonly kind: FileProblemKind;
  readonly file: string;
  constructor(kind: FileProblemKind, file: string, message: string, options?: { cause?: unknown }) {
    super(`${file}: ${message}`, options);
    this.name = "FileProblem";
    this.kind = kind;
    this.file = file;
  }
}

// O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer.
// O_NOFOLLOW: a final component that became a symlink fails to open (ELOOP) instead of
// being followed. Both are 0 where the platform lacks them; the identity check still holds.
const NOFOLLOW = fsConstants.O_NOFOLLOW ?? 0;
const OPEN_FLAGS = fsConstants.O_RDONLY | (fsConstants.O_NONBLOCK ?? 0) | NOFOLLOW;
const READ_CHUNK = 64 * 1024;

function errorCode(error: unknown): string | undefined {
  return error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
}

function unreadable(file: string, cause: unknown): FileProblem {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new FileProblem("unreadable", file, `cannot be read (${detail})`, { cause });
}

/**
 * Where this system names the file an open descriptor refers to (`/proc/self/fd/<fd>`,
 * Linux), that name; undefined elsewhere (no such folder, or the name cannot be read).
 */
async function openedName(handle: FileHandle): Promise<string | undefined> {
  try {
    return await readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    return undefined;
  }
}

/**
 * After `handle` was opened on `file`, proves it is still the file `file` leads to: the
 * system's name for the opened file, where it has one, is `file` itself; the path must
 * canonicalise to itself (no directory on the way was swapped for a symlink) and its
 * `lstat` must name the handle's device and inode.
 */
async function proveIdentity(file: string, handle: FileHandle, opened: Stats): Promise<void> {
  const name = await openedName(handle);
  if (name !== undefined && name !== file) throw new FileProblem("changed", file, "changed while it was being opened (the file opened lies elsewhere)");
  let now: Stats;
  try {
    if ((await realpath(file)) !== file) throw new FileProblem("changed", file, "changed while it was being opened");
    now = await lstat(file);
  } catch (failure) {
    if (failure instanceof FileProblem) throw failure;
    if (hasErrorCode(failure, "ENOENT", "ENOTDIR", "ELOOP")) {
      throw new FileProblem("changed", file, "changed while it was being opened", { cause: failure });
    }
    throw unreadable(file, failure);
  }
  if (now.dev !== opened.dev || now.ino !== opened.ino) {
    throw new FileProblem("changed", file, "changed while it was being opened (another file is there now)");
  }
}

/**
 * Opens `file`, a canonical path its caller has already checked, and proves the handle is
 * that file. A directory passes here and fails on read (EISDIR, `unreadable`); FIFOs,
 * sockets and devices are `not-regular`. The caller closes the handle.
 */
async function openProven(file: string): Promise<{ handle: FileHandle; info: Stats }> {
  let handle: FileHandle;
  try {
    handle = await open(file, OPEN_FLAGS);
  } catch (failure) {
    const code = errorCode(failure);
    if (code === "ENOENT") throw new FileProblem("missing", file, "no longer exists", { cause: failure });
    // The path was canonical when checked, so its last part was no symlink then.
    if (code === "ELOOP" && NOFOLLOW !== 0) throw new FileProblem("changed", file, "became a symlink", { cause: failure });
    // A socket cannot be opened at all (ENXIO): like a FIFO, it is no file to read.
    if (code === "ENXIO") throw new FileProblem("not-regular", file, "is not a regular file", { cause: failure });
    throw unreadable(file, failure);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile() && !info.isDirectory()) throw new FileProblem("not-regular", file, "is not a regular file");
    await proveIdentity(file, handle, info);
    return { handle, info };
  } catch (failure) {
    await handle.close();
    throw failure instanceof FileProblem ? failure : unreadable(file, failure);
  }
}

/** Reads on from the handle's position; `undefined` at the end. I/O errors become `unreadable`. */
async function readChunk(handle: FileHandle, file: string, size: number): Promise<Buffer | undefined> {
  const chunk = Buffer.allocUnsafe(size);
  try {
    const { bytesRead } = await handle.read(chunk, 0, size, null);
    return bytesRead === 0 ? undefined : chunk.subarray(0, bytesRead);
  } catch (failure) {
    throw unreadable(file, failure);
  }
}

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * `bytes` as text, exactly (a BOM is kept): `not-text` when they are not valid UTF-8 or
 * hold a NUL byte. Never substitutes U+FFFD. With `prefix`, `bytes` are the start of a
 * file and an unfinished last character is not held against them.
 */
export function decodeText(file: string, bytes: Uint8Array, options: { prefix?: boolean } = {}): string {
  let text: string;
  try {
    // A prefix may end inside a character: a streaming decoder (a fresh one, since it keeps
    // the unfinished bytes) leaves that tail out instead of calling it invalid.
    text = options.prefix ? new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes, { stream: true }) : STRICT_UTF8.decode(bytes);
  } catch (failure) {
    throw new FileProblem("not-text", file, "is not valid UTF-8 text", { cause: failure });
  }
  if (text.includes("\0")) throw new FileProblem("not-text", file, "contains a NUL byte (binary data)");
  return text;
}

/**
 * The whole text of `file` (canonical, already checked by the caller), read from a proven
 * handle: at most `limit` bytes (judged on the handle's size, then enforced while
 * reading), valid UTF-8 without NUL, returned exactly as stored.
 */
export async function readProvenText(file: string, limit = RESOURCE_SIZE_LIMIT): Promise<string> {
  const { handle, info } = await openProven(file);
  try {
    const tooLarge = () => new FileProblem("too-large", file, `is larger than the ${limit}-byte limit`);
    if (info.size > limit) throw tooLarge();
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      // Never ask for more than one byte past the limit: enough to see it was exceeded.
      const chunk = await readChunk(handle, file, Math.min(READ_CHUNK, limit + 1 - total));
      if (chunk === undefined) break;
      chunks.push(chunk);
      total += chunk.length;
      if (total > limit) throw tooLarge();
    }
    return decodeText(file, Buffer.concat(chunks, total));
  } finally {
    await handle.close();
  }
}

/**
 * Reads the start of `file` (canonical, already checked) from a proven handle, `chunkSize`
 * bytes at a time, until `enough(prefix, atEnd)` returns true or the file ends, and
 * returns the bytes read. `enough` bounds the read (it may also throw to stop it).
 */
export async function readProvenPrefix(file: string, enough: (prefix: Buffer, atEnd: boolean) => boolean, chunkSize = 4 * 1024): Promise<Buffer> {
  const { handle } = await openProven(file);
  try {
    let prefix: Buffer = Buffer.alloc(0);
    for (;;) {
      const chunk = await readChunk(handle, file, chunkSize);
      if (chunk !== undefined) prefix = prefix.length === 0 ? chunk : Buffer.concat([prefix, chunk]);
      if (enough(prefix, chunk === undefined) || chunk === undefined) return prefix;
    }
  } finally {
    await handle.close();
  }
}

/** One directory entry, with its name as stored on disk. */
export interface DirectoryEntry {
  /** The name, when it is valid UTF-8; `undefined` when it is not. */
  name: string | undefined;
  /** The name for messages and ordering: itself, or escaped (`\xE9`) when not UTF-8. */
  shown: string;
  /** The entry's path: a string, or the raw bytes when the name is not UTF-8. */
  path: string | Buffer;
  isDirectory: boolean;
  isSymbolicLink: boolean;
}

/**
 * A name for people: printable ASCII stays, every other byte (and `\`) becomes `\xHH`, so
 * different raw names never show alike and no control character reaches a message.
 */
export function escapeName(raw: Uint8Array): string {
  let shown = "";
  for (const byte of raw) {
    shown += byte < 0x20 || byte >= 0x7f || byte === 0x5c ? `\\x${byte.toString(16).toUpperCase().padStart(2, "0")}` : String.fromCharCode(byte);
  }
  return shown;
}

/**
 * The entries of `dir` whose names do not start with `.`, sorted by shown name (code
 * unit order); none when `dir` does not exist. Names are read as bytes, so
 * none is lost or mangled. Any other error (ENOTDIR, EACCES…) is `unreadable`.
 */
export async function listDirectory(dir: string): Promise<DirectoryEntry[]> {
  let dirents: Dirent<Buffer>[];
  try {
    dirents = await readdir(dir, { withFileTypes: true, encoding: "buffer" });
  } catch (failure) {
    if (errorCode(failure) !== "ENOENT") throw unreadable(dir, failure);
    return []; // no such folder: none of its kind
  }
  const entries: DirectoryEntry[] = [];
  for (const dirent of dirents) {
    const raw = dirent.name;
    if (raw[0] === 0x2e) continue; // ".": hidden entries are ignored
    const name = isUtf8(raw) ? raw.toString("utf8") : undefined;
    entries.push({
      name,
      shown: name ?? escapeName(raw),
      path: name !== undefined ? path.join(dir, name) : Buffer.concat([Buffer.from(`${dir}${path.sep}`), raw]),
      isDirectory: dirent.isDirectory(),
      isSymbolicLink: dirent.isSymbolicLink(),
    });
  }
  return entries.sort((a, b) => (a.shown < b.shown ? -1 : a.shown > b.shown ? 1 : 0));
}

/**
 * Runs `work` on every item, at most `limit` at a time, and returns the results in input
 * order, so the result never depends on which read finished first.
 */
export async function mapInOrder<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < items.length; index = next++) results[index] = await work(items[index]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** True when `error` is a Node system error with one of `codes` (`ENOENT`, `ENOTDIR`…). */
export function hasErrorCode(error: unknown, ...codes: string[]): boolean {
  const code = errorCode(error);
  return code !== undefined && codes.includes(code);
}

/** `stat` that follows symlinks; a path that does not exist (or a dangling link) is `undefined`. */
export function statIfPresent(file: string | Buffer): Promise<Stats | undefined> {
  return stat(file).catch(absentAsUndefined);
}

/** `realpath`; a path that does not exist (or a dangling link) is `undefined`. */
export function realpathIfPresent(file: string): Promise<string | undefined> {
  return realpath(file).catch(absentAsUndefined);
}

/** A rejection handler: ENOENT becomes `undefined`, every other error is rethrown. */
function absentAsUndefined(failure: unknown): undefined {
  if (errorCode(failure) === "ENOENT") return undefined;
  throw failure;
}

/** `readProvenText`, with a file that vanished after its check (`missing`) read as `undefined`. */
export function readProvenTextIfPresent(file: string): Promise<string | undefined> {
  return readProvenText(file).catch((failure: unknown) => {
    if (failure instanceof FileProblem && failure.kind === "missing") return undefined;
    throw failure;
  });
}

/** What a `missing` and a `changed` file mean where a read happens: discovery, activation… */
export interface ReadCodes {
  missing: ResourceErrorCode;
  changed: ResourceErrorCode;
}

const PROBLEM_CODES = {
  "not-regular": "RESOURCE_INVALID",
  "too-large": "RESOURCE_TOO_LARGE",
  "not-text": "RESOURCE_NOT_TEXT",
  unreadable: "RESOURCE_UNREADABLE",
} as const satisfies Record<Exclude<FileProblemKind, "missing" | "changed">, ResourceErrorCode>;

/**
 * Anything thrown while reading `file`, as a `ResourceError` (one is returned as it is). A
 * `FileProblem` keeps its message and cause: `missing` and `changed` take the caller's
 * `codes`, the other kinds always the same code (`not-regular` is `RESOURCE_INVALID`,
 * `too-large` `RESOURCE_TOO_LARGE`, `not-text` `RESOURCE_NOT_TEXT`, `unreadable`
 * `RESOURCE_UNREADABLE`); any other error is `RESOURCE_UNREADABLE` with it as `cause`.
 */
export function resourceErrorOf(caught: unknown, file: string, codes: ReadCodes): ResourceError {
  if (caught instanceof ResourceError) return caught;
  if (caught instanceof FileProblem) {
    const code = caught.kind === "missing" ? codes.missing : caught.kind === "changed" ? codes.changed : PROBLEM_CODES[caught.kind];
    return new ResourceError(code, caught.message, caught.cause === undefined ? undefined : { cause: caught.cause });
  }
  return new ResourceError("RESOURCE_UNREADABLE", `${file}: cannot be read (${reasonOf(caught)})`, { cause: caught });
}
