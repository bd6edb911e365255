/**
 * Chapter 08 · the coding tools: read, write, edit, list and shell, over chapter 06's
 * `Tool` contract and inside one workspace.
 *
 * What each tool promises the model (and the person whose files these are):
 * - every path goes through `Workspace.resolve` first, so nothing outside the workspace
 *   is read, listed or written, whatever the model typed;
 * - output is bounded (`truncate.ts`) and says what was left out and how to get more; the
 *   limits hold for the whole text the model gets, notices, header and exit code included
 *   (read, list and shell alike), since every byte of it lands in the context;
 * - a write is atomic: a temporary file in the same folder renamed over the target, so
 *   a crash leaves the old file or the new one, never half of one;
 * - replacing a file keeps what the file was, not only what it says: its permission bits
 *   (a 755 script stays executable, setuid included) and, where the process may set them,
 *   its owner and group; a new file gets the default mode (0666 less the umask). A file
 *   the process may not write, or that has no write bit at all, is refused (`EACCES`) as
 *   an ordinary write would refuse it: the rename must not get round a read-only mark
 *   (a version control's lock, a generated file), not even for root;
 * - `edit` replaces text that occurs exactly once, so an edit never lands somewhere the
 *   model did not look;
 * - `shell` runs in the workspace root, is killed (its whole process group) on abort or
 *   timeout, and keeps only the tail of what it printed, in bounded memory;
 * - `shell` never hands a command the user's secrets: its environment is the user's minus
 *   every variable that looks like a secret (`shellEnvironment`), and never holds a
 *   provider's key, since what a command prints goes into the transcript and the next request.
 * A failure is thrown as an error whose message the executor turns into a paired error
 * result; an ordinary outcome the model must react to (a non-zero exit code) is a result
 * with `isError: true`.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { access, mkdir, open, readdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { ANTHROPIC_KEY_ENV } from "./anthropic.js";
import { TimeoutError, linkedSignal } from "./async.js";
import { OPENAI_KEY_ENV } from "./openai.js";
import { numberValue, objectSchema, optional, stringValue, type Tool, type ToolContext, type ToolOutput } from "./tool.js";
import { truncateFramed, type Truncation, type TruncationLimits } from "./truncate.js";
import { text } from "./types.js";
import type { Workspace } from "./workspace.js";

/** Environment variables by name, as `process.env` holds them. */
export type Environment = Readonly<Record<string, string | undefined>>;

export interface CodingToolsOptions {
  /** Output limits of read, list and shell; default 2000 lines and 50 KiB. */
  maxLines?: number;
  maxBytes?: number;
  /** Largest file `read` and `edit` load; default 10 MiB. */
  maxFileBytes?: number;
  /** The shell that runs commands as `<shell> -c <command>`; default `/bin/sh`. */
  shell?: string;
  /** Default timeout of a shell command; default 120 000 ms. */
  shellTimeoutMs?: number;
  /**
   * The environment of shell commands; default `shellEnvironment(process.env)`, read at each
   * command. A caller's own (an allow-list, a variable a tool needs on purpose) is used as
   * given, except that the provider key variables are removed from it all the same.
   */
  shellEnv?: Environment;
}

interface Settings {
  limits: TruncationLimits;
  maxFileBytes: number;
  shell: string;
  shellTimeoutMs: number;
  shellEnv: () => Record<string, string>;
}

function settingsOf(options: CodingToolsOptions): Settings {
  return {
    limits: { maxLines: options.maxLines ?? 2000, maxBytes: options.maxBytes ?? 50 * 1024 },
    maxFileBytes: options.maxFileBytes ?? 10 * 1024 * 1024,
    shell: options.shell ?? "/bin/sh",
    shellTimeoutMs: options.shellTimeoutMs ?? 120_000,
    shellEnv: () => {
      const given = options.shellEnv;
      return given === undefined ? shellEnvironment(process.env) : withoutProviderKeys(given, [process.env, given]);
    },
  };
}

/** The variables the course reads its provider keys from. */
const PROVIDER_KEY_ENVS: readonly string[] = [ANTHROPIC_KEY_ENV, OPENAI_KEY_ENV];

/** Words and parts of a variable's name that mark a secret (compared in upper case). */
const SECRET_PARTS = ["TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "APIKEY", "COOKIE"];
const SECRET_WORDS = new Set(["KEY", "KEYS", "PASS", "PAT", "AUTH", "CREDS"]);
/** Names with a secret word that hold no secret and that ordinary commands need. */
const NOT_SECRET = new Set(["SSH_AUTH_SOCK"]);

/**
 * True when a variable looks like it holds a secret: its name has a secret part anywhere
 * (`GITHUB_TOKEN`, `npm_config__authToken`, `DB_PASSWORD`, `GOOGLE_APPLICATION_CREDENTIALS`)
 * or a secret word between `_`s (`AWS_ACCESS_KEY_ID`, `MYSQL_PASS`, `GITHUB_PAT`,
 * `NPM_CONFIG__AUTH`), or its value is a URL with credentials (`postgres://app:pw@db`, a
 * proxy with a password).
 */
function looksSecret(name: string, value: string): boolean {
  const upper = name.toUpperCase();
  if (NOT_SECRET.has(upper)) return false;
  if (SECRET_PARTS.some((part) => upper.includes(part))) return true;
  if (upper.split(/[^A-Z0-9]+/).some((word) => SECRET_WORDS.has(word))) return true;
  return /[a-z][a-z0-9+.-]*:\/\/[^\s/?#@]+@/i.test(value);
}

/**
 * `env` less the provider key variables and any variable whose value holds a key read from
 * `sources` (`MY_KEY_COPY=$ANTHROPIC_API_KEY`). A "key" of fewer than 8 characters (a local
 * server's placeholder such as "none") is no secret and would match unrelated values: only
 * its variable is removed.
 */
function withoutProviderKeys(env: Environment, sources: readonly Environment[]): Record<string, string> {
  const keys = sources.flatMap((source) => PROVIDER_KEY_ENVS.map((name) => source[name]?.trim() ?? "")).filter((key) => key.length >= 8);
  const holdsKey = (value: string) => keys.some((key) => value.includes(key));
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || PROVIDER_KEY_ENVS.includes(name.toUpperCase()) || holdsKey(value)) continue;
    result[name] = value;
  }
  return result;
}

/**
 * The environment a shell command gets from the user's `env`: every variable except those
 * that look like secrets (see `looksSecret`) and the provider keys (by name, and by value
 * under any other name). A deny-list rather than an allow-list: commands must run as in the
 * user's terminal, and what they need is an open set (PATH, HOME, LANG and LC_*, TERM,
 * TMPDIR, USER, SHELL, proxies, SSH_AUTH_SOCK, but also JAVA_HOME, GOPATH, VIRTUAL_ENV,
 * NODE_EXTRA_CA_CERTS, …) that no list can name, and a missing one breaks a command in a
 * way the model cannot see; secrets, on the contrary, follow naming conventions. A secret
 * under an unusual name still passes: a caller who wants an allow-list passes `shellEnv`.
 * This keeps secrets out of the transcript; it is no sandbox (a command can still read the
 * user's files, credential files included).
 */
export function shellEnvironment(env: Environment): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined && !looksSecret(name, value)) kept[name] = value;
  return withoutProviderKeys(kept, [env]);
}

/** Reads a workspace file as text, refusing directories, oversized and binary files. */
async function readText(workspace: Workspace, file: string, settings: Settings): Promise<string> {
  const info = await stat(file);
  const shown = workspace.display(file);
  if (info.isDirectory()) throw new Error(`${shown} is a directory; use list to see what it holds`);
  if (!info.isFile()) throw new Error(`${shown} is not a regular file`);
  if (info.size > settings.maxFileBytes) throw new Error(`${shown} is ${info.size} bytes, over the ${settings.maxFileBytes}-byte limit`);
  const handle = await open(file, "r");
  let data: Buffer;
  try {
    data = await handle.readFile();
  } finally {
    await handle.close();
  }
  if (data.includes(0)) throw new Error(`${shown} looks binary (it contains NUL bytes); it cannot be read as text`);
  return data.toString("utf8");
}

/** Refuses (`EACCES`) a file the process may not write or that no one may: replacing it would get round that. */
async function checkWritable(workspace: Workspace, file: string, mode: number): Promise<void> {
  const refuse = () =>
    Object.assign(new Error(`EACCES: ${workspace.display(file)} is read-only; change its mode first if it is really meant to change`), { code: "EACCES" });
  if (process.platform !== "win32" && (mode & 0o222) === 0) throw refuse();
  await access(file, constants.W_OK).catch(() => {
    throw refuse();
  });
}

/**
 * Writes `content` to `file` through a temporary sibling and a rename; the sibling never
 * outlives a failure. The new file takes the `existing` file's owner and group (where the
 * process may: root, or a group it is in) and then its mode, setuid and setgid included
 * (after the content and the owner, since writing or changing the owner clears those).
 */
async function writeAtomically(file: string, content: string, existing?: Stats): Promise<void> {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    const handle = await open(temporary, "wx");
    try {
      await handle.writeFile(content, "utf8");
      if (existing !== undefined && process.platform !== "win32") {
        const mine = await handle.stat();
        if (mine.uid !== existing.uid || mine.gid !== existing.gid) {
          await handle.chown(existing.uid, existing.gid).catch(() => handle.chown(mine.uid, existing.gid).catch(() => undefined));
        }
        await handle.chmod(existing.mode & 0o7777);
      }
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

const readSchema = objectSchema({ path: stringValue(), offset: optional(numberValue()), limit: optional(numberValue()) });

/** `read {path, offset?, limit?}`: a text file's lines from `offset` (1-based), head-truncated. */
export function createReadTool(workspace: Workspace, options: CodingToolsOptions = {}): Tool<{ path: string; offset?: number; limit?: number }> {
  const settings = settingsOf(options);
  return {
    name: "read",
    description: "Read a text file of the workspace. offset is the first line (1-based), limit the number of lines.",
    schema: readSchema,
    async execute({ path: requested, offset = 1, limit }) {
      if (!Number.isInteger(offset) || offset < 1) throw new Error(`offset must be a positive integer, got ${offset}`);
      if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) throw new Error(`limit must be a positive integer, got ${limit}`);
      const file = await workspace.resolve(requested);
      const content = await readText(workspace, file, settings);
      const lines = content === "" ? [] : content.replace(/\n$/, "").split("\n");
      if (offset > Math.max(lines.length, 1)) throw new Error(`offset ${offset} is past the end of ${workspace.display(file)} (${lines.length} lines)`);
      const selected = lines.slice(offset - 1, limit === undefined ? undefined : offset - 1 + limit);
      const lastOf = (cut: Truncation) => offset - 1 + cut.keptLines;
      const { text: body, cut } = truncateFramed(selected.join("\n"), settings.limits, false, (cut) => {
        const last = lastOf(cut);
        if (!cut.truncated && last >= lines.length) return cut.text;
        if (cut.keptLines === 0)
          return `[lines ${offset}-${offset - 1 + selected.length} of ${lines.length} not shown: the output limits leave no room for them]`;
        return `${cut.text}\n\n[showing lines ${offset}-${last} of ${lines.length}${cut.partialLine ? " (line cut to fit)" : ""}; continue with offset=${last + 1}]`;
      });
      const last = lastOf(cut);
      return {
        content: [text(body)],
        details: { path: workspace.display(file), totalLines: lines.length, firstLine: offset, lastLine: last, truncated: cut.truncated },
      };
    },
  };
}

const writeSchema = objectSchema({ path: stringValue(), content: stringValue() });

/** `write {path, content}`: creates or replaces a file (and its missing parent folders) atomically. */
export function createWriteTool(workspace: Workspace): Tool<{ path: string; content: string }> {
  return {
    name: "write",
    description: "Create or overwrite a file of the workspace with the given content. Missing folders are created.",
    schema: writeSchema,
    async execute({ path: requested, content }) {
      const file = await workspace.resolve(requested);
      const existing = await stat(file).catch(() => undefined);
      if (existing?.isDirectory()) throw new Error(`${workspace.display(file)} is a directory`);
      if (existing?.isFile()) await checkWritable(workspace, file, existing.mode);
      await mkdir(path.dirname(file), { recursive: true });
      await writeAtomically(file, content, existing?.isFile() ? existing : undefined);
      const bytes = Buffer.byteLength(content, "utf8");
      const verb = existing === undefined ? "created" : "overwrote";
      return {
        content: [text(`${verb} ${workspace.display(file)} (${bytes} bytes)`)],
        details: { path: workspace.display(file), bytes, created: existing === undefined },
      };
    },
  };
}

const editSchema = objectSchema({ path: stringValue(), oldText: stringValue(), newText: stringValue() });

/** `edit {path, oldText, newText}`: replaces the one occurrence of `oldText`; zero or several is an error. */
export function createEditTool(workspace: Workspace, options: CodingToolsOptions = {}): Tool<{ path: string; oldText: string; newText: string }> {
  const settings = settingsOf(options);
  return {
    name: "edit",
    description: "Replace oldText with newText in a file. oldText must occur exactly once; include surrounding lines to make it unique.",
    schema: editSchema,
    async execute({ path: requested, oldText, newText }) {
      if (oldText === "") throw new Error("oldText must not be empty");
      const file = await workspace.resolve(requested);
      const content = await readText(workspace, file, settings);
      const existing = await stat(file);
      await checkWritable(workspace, file, existing.mode);
      const first = content.indexOf(oldText);
      if (first === -1) throw new Error(`oldText was not found in ${workspace.display(file)}`);
      let count = 0;
      for (let at = first; at !== -1; at = content.indexOf(oldText, at + oldText.length)) count++;
      if (count > 1) throw new Error(`oldText occurs ${count} times in ${workspace.display(file)}; include more context so it matches once`);
      // Slicing, not String.replace: "$&" or "$1" in newText stay literal.
      await writeAtomically(file, content.slice(0, first) + newText + content.slice(first + oldText.length), existing);
      const line = content.slice(0, first).split("\n").length;
      return { content: [text(`edited ${workspace.display(file)} at line ${line}`)], details: { path: workspace.display(file), line } };
    },
  };
}

const listSchema = objectSchema({ path: optional(stringValue()) });

/** `list {path?}`: a folder's entries in code-unit order, `name/` for folders and `name@` for symlinks. */
export function createListTool(workspace: Workspace, options: CodingToolsOptions = {}): Tool<{ path?: string }> {
  const settings = settingsOf(options);
  return {
    name: "list",
    description: "List the entries of a folder of the workspace (default: its root). Folders end in /, symlinks in @.",
    schema: listSchema,
    async execute({ path: requested = "." }) {
      const folder = await workspace.resolve(requested);
      const info = await stat(folder);
      if (!info.isDirectory()) throw new Error(`${workspace.display(folder)} is not a directory`);
      const entries = await readdir(folder, { withFileTypes: true });
      const names = entries
        .map((entry) => entry.name + (entry.isDirectory() ? "/" : entry.isSymbolicLink() ? "@" : ""))
        .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      if (names.length === 0) return { content: [text("(empty directory)")], details: { path: workspace.display(folder), entries: 0 } };
      // A name cut to fit would name an entry that does not exist: such a cut shows none.
      const { text: body, cut } = truncateFramed(names.join("\n"), settings.limits, false, (cut) => {
        if (!cut.truncated) return cut.text;
        if (cut.partialLine || cut.keptLines === 0) return `[${names.length} entries not shown]`;
        return `${cut.text}\n\n[${names.length - cut.keptLines} more entries not shown]`;
      });
      return { content: [text(body)], details: { path: workspace.display(folder), entries: names.length, truncated: cut.truncated } };
    },
  };
}

/** Keeps the last `capacity` bytes of a stream plus its totals, so a noisy command cannot exhaust memory. */
class TailBuffer {
  #chunks: Buffer[] = [];
  #held = 0;
  totalBytes = 0;
  dropped = false;
  readonly capacity: number;
  constructor(capacity: number) {
    this.capacity = capacity;
  }

  push(chunk: Buffer): void {
    this.totalBytes += chunk.length;
    this.#chunks.push(chunk);
    this.#held += chunk.length;
    while (this.#held - this.#chunks[0]!.length >= this.capacity) {
      this.#held -= this.#chunks.shift()!.length;
      this.dropped = true;
    }
  }

  /** The held text; after a drop, the first (probably partial) line is left out. */
  text(): string {
    let value = Buffer.concat(this.#chunks).toString("utf8");
    if (this.dropped) value = value.slice(value.indexOf("\n") + 1);
    return value;
  }
}

/** Why a command did not succeed, as the last line of its result; `undefined` after exit code 0. */
function endingOf(ended: { code: number | null; signal: NodeJS.Signals | null }, timedOut: boolean, aborted: boolean, timeoutMs: number): string | undefined {
  if (timedOut) return `[timed out after ${timeoutMs / 1000} s; the command was killed]`;
  if (aborted) return "[aborted; the command was killed]";
  if (ended.code === 0) return undefined;
  return ended.code === null ? `[killed by ${ended.signal}]` : `[exit code ${ended.code}]`;
}

const shellSchema = objectSchema({ command: stringValue(), timeoutSeconds: optional(numberValue()) });

export interface ShellDetails {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  truncated: boolean;
  totalBytes: number;
}

/**
 * `shell {command, timeoutSeconds?}`: runs `<shell> -c command` in the workspace root with
 * stdin closed, stdout and stderr interleaved as they arrive, in the environment of
 * `CodingToolsOptions.shellEnv` (by default the user's without its secrets). Exit code 0 is a success; any
 * other ending (a code, a signal, the timeout, an abort) is `isError: true` and says why.
 * On abort or timeout the command's whole process group is killed (POSIX).
 */
export function createShellTool(workspace: Workspace, options: CodingToolsOptions = {}): Tool<{ command: string; timeoutSeconds?: number }, ShellDetails> {
  const settings = settingsOf(options);
  return {
    name: "shell",
    description: "Run a shell command in the workspace root. Output is the tail of stdout and stderr combined.",
    schema: shellSchema,
    async execute({ command, timeoutSeconds }, context: ToolContext): Promise<ToolOutput<ShellDetails>> {
      if (command.trim() === "") throw new Error("command must not be empty");
      if (timeoutSeconds !== undefined && !(timeoutSeconds > 0 && timeoutSeconds <= 3600)) {
        throw new Error(`timeoutSeconds must be greater than 0 and at most 3600, got ${timeoutSeconds}`);
      }
      const timeoutMs = timeoutSeconds === undefined ? settings.shellTimeoutMs : timeoutSeconds * 1000;
      const stop = linkedSignal(context.signal, timeoutMs);
      const output = new TailBuffer(settings.limits.maxBytes + 4096);
      try {
        const ended = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
          const posix = process.platform !== "win32";
          const child = spawn(settings.shell, ["-c", command], {
            cwd: workspace.root,
            env: settings.shellEnv(),
            stdio: ["ignore", "pipe", "pipe"],
            detached: posix,
          });
          const kill = () => {
            try {
              if (posix && child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
              else child.kill("SIGKILL");
            } catch {
              // Already gone.
            }
          };
          if (stop.signal.aborted) kill();
          stop.signal.addEventListener("abort", kill, { once: true });
          child.stdout.on("data", (chunk: Buffer) => output.push(chunk));
          child.stderr.on("data", (chunk: Buffer) => output.push(chunk));
          child.once("error", reject);
          child.once("close", (code, signal) => {
            stop.signal.removeEventListener("abort", kill);
            resolve({ code, signal });
          });
        });
        const timedOut = stop.signal.aborted && stop.signal.reason instanceof TimeoutError;
        const aborted = stop.signal.aborted && !timedOut;
        const ending = endingOf(ended, timedOut, aborted, timeoutMs);
        const { text: body, cut } = truncateFramed(output.text(), settings.limits, true, (cut) => {
          const truncated = cut.truncated || output.dropped;
          const header = truncated ? `[output truncated: showing the last ${cut.keptLines} lines of ${output.totalBytes} bytes]` : undefined;
          const shown = cut.text !== "" ? cut.text : truncated ? undefined : "(no output)";
          const framed = [header, shown].filter((part) => part !== undefined).join("\n");
          return ending === undefined ? framed : `${framed}\n\n${ending}`;
        });
        const truncated = cut.truncated || output.dropped;
        return {
          content: [text(body)],
          isError: timedOut || aborted || ended.code !== 0,
          details: { exitCode: ended.code, signal: ended.signal, timedOut, aborted, truncated, totalBytes: output.totalBytes },
        };
      } finally {
        stop.dispose();
      }
    },
  };
}

/** The five coding tools over one workspace, in the order they are usually taught: read, write, edit, list, shell. */
export function createCodingTools(workspace: Workspace, options: CodingToolsOptions = {}): Tool[] {
  return [
    createReadTool(workspace, options),
    createWriteTool(workspace),
    createEditTool(workspace, options),
    createListTool(workspace, options),
    createShellTool(workspace, options),
  ] as Tool[];
}
