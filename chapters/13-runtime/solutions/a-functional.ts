// @ts-nocheck: outside the course package its imports do not resolve; verify and mistakes drop this line when they build the file in place of runtime.ts.
/**
 * Chapter 13 · the runtime — a learner's solution, written functionally.
 *
 * Small pure functions decide (one line of catalog text, the shape of a load request, the
 * parts of a command, the system prompt, what a reload changed); closures hold what a
 * running session keeps (its state, its session tree, its loads). Collections are built
 * with `reduce`, `map` and `filter` rather than loops and pushes; errors are looked up in
 * tables. The given helpers of the starter are kept as they were handed out.
 */
import type { Dirent } from "node:fs";
import { readdir, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parse as parseYaml } from "yaml";
import { runAgentLoop, toolSpec, type LoopStopReason } from "./agent-loop.js";
import { createCodingTools } from "./coding-tools.js";
import { buildContext, type BuildContextOptions, type ContextProjection } from "./context.js";
import type { Model } from "./model.js";
import { decodeText, readProvenPrefix } from "./resource-files.js";
import {
  activateSkill,
  createExtensionHost,
  discoverResources,
  loadExtension,
  renderTemplate,
  type ActivatedSkill,
  type ActivatedSkillFile,
  type ExtensionDiagnostic,
  type ExtensionHost,
  type ExtensionSource,
  type InstructionResource,
  type ResourceCatalog,
  type SkillResource,
} from "./resources.js";
import { createSession, type SessionTree } from "./session.js";
import { createToolExecutor, ToolRegistry, type Schema, type Tool, type ToolOutput } from "./tool.js";
import { text, userMessage, type AgentMessage, type UserMessage } from "./types.js";
import { openWorkspace } from "./workspace.js";

// ---------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------

/** The codes `load_skill` and `/skill:` answer with. Their messages name the skill (quoted), never a path of this machine. */
export type SkillErrorCode =
  | "skill_not_found"
  | "skill_invalid_request"
  | "skill_hidden"
  | "skill_changed"
  | "skill_unreadable"
  | "skill_resource_invalid" // a requested file that is not a file inside the skill's folder
  | "skill_resource_unreadable"; // a requested file inside the skill that cannot be handed over as text

/** Error codes thrown on purpose by this module. */
export type RuntimeErrorCode =
  | SkillErrorCode
  | "COMMAND_INVALID" // Lab 13.3: a /skill: or /template: command that is not well formed
  | "TEMPLATE_NOT_FOUND" // Lab 13.3
  | "RUNTIME_OPTIONS_INVALID" // given: options that cannot work
  | "RUNTIME_PROJECT_MISSING" // given: the project root is not a directory
  | "RUNTIME_CONTEXT_OVERFLOW"; // Lab 13.5: a request that does not fit the window

/** An error with a stable `code`; messages may change, codes do not. */
export class RuntimeError extends Error {
  readonly code: RuntimeErrorCode;
  constructor(code: RuntimeErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "RuntimeError";
    this.code = code;
  }
}

export interface SkillCatalogOptions {
  /** The most UTF-8 bytes the catalog section may take, header included; a non-negative integer. */
  maxCatalogBytes: number;
}

/** The skill catalog the model is shown, and what was left out of it. */
export interface SkillCatalog {
  /** The system-prompt section: the header, then one line per listed skill; `""` when none is listed. */
  text: string;
  /** UTF-8 bytes of `text`; never more than `maxBytes`. */
  bytes: number;
  maxBytes: number;
  /** Names listed, in code-unit order. */
  listed: string[];
  /** Names left out by the byte budget, in code-unit order (they still load by name). */
  dropped: string[];
  /** Names left out because their SKILL.md says `disable-model-invocation: true`, in code-unit order. */
  hidden: string[];
}

/** The first lines of the catalog section; the entries follow after a blank line. */
export const SKILL_CATALOG_HEADER = "# Skills\n\nBefore you follow one of these skills, load its instructions with the load_skill tool, giving only its name.";

/** The line after the heading of a loaded skill's file list (`# Files of skill "<name>"`). */
export const SKILL_FILES_NOTE = "Paths are relative to the skill's folder; to read some of these files, call load_skill again with the skill's name and their paths in resources.";

/** One skill body handed over: which skill, who asked (the model through load_skill, or the user through /skill:), when. */
export interface SkillLoad {
  name: string;
  by: "model" | "user";
  at: number;
}

export interface LoadSkillOptions {
  /** The catalog snapshot the tool serves: names are looked up here, never on disk. */
  resources: ResourceCatalog;
  /** Skills the model may not load (`disable-model-invocation: true`). */
  hidden: readonly string[];
  /** Called once for every successful load. */
  onLoad?(load: SkillLoad): void;
  /** The clock of `SkillLoad.at`; default `Date.now`. */
  now?(): number;
}

/** The arguments of load_skill: a skill's name, and optionally files of that skill to read (paths relative to its folder). */
export interface LoadSkillRequest {
  name: string;
  resources?: string[];
}

/**
 * `details` of a load_skill result: the skill, and then the files listed after its body
 * (`files`), or the files read (`resources`, as requested, duplicates dropped), or on
 * failure the code.
 */
export type LoadSkillDetails = { name: string; files: string[] } | { name: string; resources: string[] } | { name: string; code: SkillErrorCode };

export interface ExpandOptions {
  /** Called when `/skill:` loads a skill (`by: "user"`). */
  onLoad?(load: SkillLoad): void;
  now?(): number;
}

/** A user's input after its command was applied: the turn the model will see. */
export interface ExpandedInput {
  message: UserMessage;
  /** The skill `/skill:` forced into this turn. */
  skill?: string;
  /** The template `/template:` rendered into this turn. */
  template?: string;
}

export interface RuntimeContextOptions {
  /** The model's context window, in tokens. */
  maxTokens: number;
  reservedOutput?: number;
  safetyMargin?: number;
  /** Passed to `buildContext`; default its `ceil(characters / 4)`. */
  estimateTokens?(value: string | AgentMessage): number;
}

export interface RuntimeOptions {
  /** The project: its resources, the workspace the tools act in, its `extensions/*.mjs`. */
  projectRoot: string;
  /** The user's own folder: resources and `extensions/*.mjs` the user installed (trusted by them). */
  userRoot?: string;
  /** Asked once per start and per reload, after the user's extensions loaded; only exactly `true` trusts. */
  isProjectTrusted(projectRoot: string): boolean | Promise<boolean>;
  model: Model;
  /** The first section of every system prompt; default `""`. */
  baseSystemPrompt?: string;
  context: RuntimeContextOptions;
  /** Byte budget of the skill catalog; default 4096. */
  maxCatalogBytes?: number;
  /** Most model calls per turn; default 16. */
  maxTurns?: number;
  /** Per hook; default 2000 ms. */
  hookTimeoutMs?: number;
  /** The core tools, made again at every start and reload; default Chapter 08's coding tools on the project. */
  tools?(projectRoot: string): Tool[] | Promise<Tool[]>;
  /** How extension modules are imported (tests); default a dynamic import, fresh at every reload. */
  importModule?(source: Readonly<ExtensionSource>): Promise<unknown>;
  /** The clock of skill loads; default `Date.now`. */
  now?(): number;
  /** Receives every event, in order (copies). */
  onEvent?(event: RuntimeEvent): void;
}

/** Something a start or a reload found: a resource left out or shadowed, an extension that failed, a trust policy that threw. */
export interface RuntimeDiagnostic {
  area: "resources" | "extensions" | "trust";
  severity: "error" | "warning";
  /** Chapter 12's codes (RESOURCE_*, SKILL_*, EXTENSION_*, TOOL_CONFLICT), or PROJECT_TRUST_FAILED. */
  code: string;
  /** The file (resources), the extension id (extensions), the project root (trust). */
  source: string;
  message: string;
}

export interface ExtensionStatus {
  id: string;
  origin: "user" | "project";
  status: "active" | "skipped_untrusted" | "failed";
  /** The error code when `failed`. */
  code?: string;
}

/** What the runtime reports while it works, in order. */
export type RuntimeEvent =
  | { type: "diagnostic"; diagnostic: RuntimeDiagnostic }
  | { type: "request"; turn: number; systemPrompt: string; messages: AgentMessage[]; tools: string[]; tokens: ContextProjection["tokens"] }
  | { type: "message"; message: AgentMessage }
  | { type: "skill_load"; load: SkillLoad }
  | { type: "hook_diagnostic"; diagnostic: ExtensionDiagnostic }
  | { type: "reload"; report: ReloadReport };

/** Options of one `prompt`. */
export interface PromptOptions {
  /** Stops the turn: the model's stream and every tool are given it. Already aborted: nothing is sent. */
  signal?: AbortSignal;
}

/** The codes a turn that ended without rejecting can carry in `TurnResult.failure`. */
export type TurnFailureCode = "TURN_ABORTED";

/** The outcome of one `prompt`. */
export interface TurnResult {
  stopReason: LoopStopReason;
  /** Model calls made. */
  turns: number;
  /** The messages this turn added to the session, its user message first; `[]` when it sent nothing. */
  messages: AgentMessage[];
  skill?: string;
  template?: string;
  /** Present exactly when `stopReason` is `aborted`: `TURN_ABORTED`, with the abort's reason as message. */
  failure?: { code: TurnFailureCode; message: string };
}

/** What a reload changed, by name. */
export interface RuntimeChanges {
  skillsAdded: string[];
  skillsRemoved: string[];
  /** In both catalogs, but with another description, source or visibility. */
  skillsChanged: string[];
  toolsAdded: string[];
  toolsRemoved: string[];
  /** Active extensions (by id): new ones, gone ones, and those imported again. */
  extensionsAdded: string[];
  extensionsRemoved: string[];
  extensionsReloaded: string[];
}

export type ReloadReport =
  | { status: "reloaded"; changes: RuntimeChanges; diagnostics: RuntimeDiagnostic[] }
  | { status: "failed"; error: { code: string; message: string }; diagnostics: RuntimeDiagnostic[] };

/** A running session. Every getter returns a copy. */
export interface Runtime {
  /** The diagnostics of the start (or of the last successful reload), reported once as events. */
  readonly diagnostics: RuntimeDiagnostic[];
  /** The resource catalog snapshot in use (Chapter 12's discovery of `[project, user]`: the first root wins). */
  readonly resources: ResourceCatalog;
  /** The AGENTS.md files the system prompt carries: the user's first, then the project's, each at most once. */
  readonly instructions: InstructionResource[];
  /** The skill catalog the model is shown. */
  readonly catalog: SkillCatalog;
  /** Registered tool names, in registration order. */
  readonly tools: string[];
  readonly extensions: ExtensionStatus[];
  /** The transcript: the session's active path. */
  readonly messages: AgentMessage[];
  /** Every skill load so far. */
  readonly skillLoads: SkillLoad[];
  /** Runs one user turn (commands expanded first), stopped by `options.signal`. Calls run one after another. */
  prompt(input: string, options?: PromptOptions): Promise<TurnResult>;
  /** Re-discovers and re-imports; keeps the session; reports what changed. */
  reload(): Promise<ReloadReport>;
}

/** The parts of a runtime that never change: its options, its canonical roots, where loads and events go. */
interface RuntimeSetup {
  options: RuntimeOptions;
  projectRoot: string;
  userRoot?: string;
  recordLoad(load: SkillLoad): void;
  emit(event: RuntimeEvent): void;
}

/** Everything one start (or reload) built; replaced as a whole, never edited. */
interface RuntimeState {
  resources: ResourceCatalog;
  /** The user's AGENTS.md, then the project's. */
  instructions: InstructionResource[];
  skills: SkillCatalog;
  registry: ToolRegistry;
  host: ExtensionHost;
  extensions: ExtensionStatus[];
  diagnostics: RuntimeDiagnostic[];
}

interface RuntimeCore extends RuntimeSetup {
  state: RuntimeState;
  session: SessionTree;
  loads: SkillLoad[];
}

type ImportModule = (source: Readonly<ExtensionSource>) => Promise<unknown>;

const DEFAULT_MAX_CATALOG_BYTES = 4096;
const DEFAULT_MAX_TURNS = 16;
const DEFAULT_HOOK_TIMEOUT_MS = 2000;

// ---------------------------------------------------------------------------
// Given helpers (reference code the labs do not ask you to write)
// ---------------------------------------------------------------------------

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const FLAG_READ_LIMIT = 64 * 1024;

/** The most files listed after a skill's body, and how many folder levels deep they may lie (`a/b/c.txt` is three). */
const MAX_LISTED_FILES = 50;
const MAX_LISTED_DEPTH = 3;
/** A name that cannot be listed on a line of its own: control characters, line and paragraph separators, bidi controls. */
const UNLISTABLE_NAME = /[\u0000-\u001F\u007F-\u009F\u2028\u2029\u200E\u200F\u202A-\u202E\u2066-\u2069]/;

/** The files a skill bundles, as listed after its body. */
interface SkillFiles {
  /** Paths relative to the skill's folder, `/` between folders. */
  files: string[];
  /** True when there were more than `MAX_LISTED_FILES` to list. */
  cut: boolean;
}

/**
 * The files of the skill folder `root`, relative to it with `/` between folders. Only
 * regular files, at most `MAX_LISTED_DEPTH` levels deep; the folder's own `SKILL.md`, every
 * entry whose name starts with `.` (and all below it) and every name `UNLISTABLE_NAME`
 * refuses are left out; symbolic links are neither listed nor followed, so nothing outside
 * the folder is ever named. Depth first, each folder's entries in code-unit order of name;
 * at most `MAX_LISTED_FILES` paths, `cut` when there were more. A folder that cannot be read,
 * or a root that no longer resolves to itself, adds nothing. Reads names only, never contents.
 */
async function skillFilesOf(root: string): Promise<SkillFiles> {
  const files: string[] = [];
  let cut = false;
  const walk = async (folder: string, prefix: string, depth: number): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => compareNames(a.name, b.name));
    for (const entry of entries) {
      if (cut) return;
      if (entry.name.startsWith(".") || UNLISTABLE_NAME.test(entry.name)) continue;
      const relative = `${prefix}${entry.name}`;
      if (entry.isDirectory()) {
        if (depth < MAX_LISTED_DEPTH) await walk(path.join(folder, entry.name), `${relative}/`, depth + 1);
      } else if (entry.isFile() && relative !== "SKILL.md") {
        if (files.length === MAX_LISTED_FILES) cut = true;
        else files.push(relative);
      }
    }
  };
  const inPlace = await realpath(root).then(
    (resolved) => resolved === root,
    () => false,
  );
  if (inPlace) await walk(root, "", 1);
  return { files, cut };
}

/** The YAML between a first line `---` (after an optional BOM) and the next line that is exactly `---`; undefined without one. */
function frontmatterOf(content: string): string | undefined {
  const lines = content
    .replace(/^\uFEFF/, "")
    .split("\n")
    .map((line) => line.replace(/\r$/, ""));
  if (lines[0] !== "---") return undefined;
  const end = lines.indexOf("---", 1);
  return end === -1 ? undefined : lines.slice(1, end).join("\n");
}

/**
 * Whether `skill` asks to be hidden from the model: its SKILL.md frontmatter holds
 * `disable-model-invocation: true` (the boolean; `false`, `"true"` or no field leave it
 * visible). Reads only up to the end of the frontmatter, from a proven handle (Chapter 12's
 * `resource-files.ts`). A skill whose flag cannot be read now (the file changed, is no
 * longer text, its frontmatter broke) counts as hidden: fail closed.
 */
export async function hiddenFromModel(skill: SkillResource): Promise<boolean> {
  try {
    const enough = (bytes: Buffer) => bytes.length > FLAG_READ_LIMIT || frontmatterOf(bytes.toString("utf8")) !== undefined;
    const prefix = await readProvenPrefix(skill.source, enough);
    const yaml = frontmatterOf(decodeText(skill.source, prefix, { prefix: true }));
    if (yaml === undefined) return true;
    const fields: unknown = parseYaml(yaml);
    if (typeof fields !== "object" || fields === null || Array.isArray(fields)) return true;
    return (fields as Record<string, unknown>)["disable-model-invocation"] === true;
  } catch {
    return true;
  }
}

/**
 * The extension modules of a root: `extensions/*.mjs`, regular files whose names do not
 * start with `.`, each `{ id: <file name without .mjs>, path }`, in code-unit order of id.
 * No `extensions/` folder means none.
 */
async function extensionSourcesOf(root: string): Promise<ExtensionSource[]> {
  const dir = path.join(root, "extensions");
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if (codeOf(error) === "ENOENT" || codeOf(error) === "ENOTDIR") return [];
    throw error;
  }
  const sources: ExtensionSource[] = [];
  for (const name of names) {
    if (name.startsWith(".") || !name.endsWith(".mjs")) continue;
    const file = path.join(dir, name);
    if (
      !(await stat(file).then(
        (info) => info.isFile(),
        () => false,
      ))
    )
      continue;
    sources.push({ id: name.slice(0, -".mjs".length), path: file });
  }
  return sources.sort((a, b) => compareNames(a.id, b.id));
}

/** Checks what `createRuntime` cannot work without: `RUNTIME_OPTIONS_INVALID` naming the option. */
function checkOptions(options: RuntimeOptions): void {
  const fail = (what: string): never => {
    throw new RuntimeError("RUNTIME_OPTIONS_INVALID", `runtime option ${what}`);
  };
  if (typeof options !== "object" || options === null) fail("object expected");
  if (typeof options.projectRoot !== "string" || options.projectRoot === "") fail("projectRoot must be a non-empty path");
  if (options.userRoot !== undefined && (typeof options.userRoot !== "string" || options.userRoot === "")) fail("userRoot must be a non-empty path");
  if (typeof options.isProjectTrusted !== "function") fail("isProjectTrusted must be a function (there is no default trust)");
  if (typeof options.model?.stream !== "function") fail("model must be a Model");
  const maxTokens = options.context?.maxTokens;
  if (typeof maxTokens !== "number" || !Number.isFinite(maxTokens) || maxTokens < 0) fail("context.maxTokens must be a finite number >= 0");
  const bytes = options.maxCatalogBytes;
  if (bytes !== undefined && (!Number.isInteger(bytes) || bytes < 0)) fail("maxCatalogBytes must be an integer >= 0");
  const turns = options.maxTurns;
  if (turns !== undefined && (!Number.isInteger(turns) || turns < 1)) fail("maxTurns must be a positive integer");
}

/** The canonical roots: the project must be a directory (`RUNTIME_PROJECT_MISSING`); a missing user root is left to discovery to report. */
async function resolveRoots(options: RuntimeOptions): Promise<{ projectRoot: string; userRoot?: string }> {
  let projectRoot: string;
  try {
    projectRoot = await realpath(options.projectRoot);
    if (!(await stat(projectRoot)).isDirectory()) throw new Error("not a directory");
  } catch (error) {
    throw new RuntimeError("RUNTIME_PROJECT_MISSING", `project root ${options.projectRoot} is not an existing directory`, { cause: error });
  }
  if (options.userRoot === undefined) return { projectRoot };
  const userRoot = await realpath(options.userRoot).catch(() => path.resolve(options.userRoot!));
  return { projectRoot, userRoot };
}

/** Runs the functions it is given one after another, in call order, whatever each one's outcome. */
function serialized(): <T>(work: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(work: () => Promise<T>) => {
    const run = tail.then(work, work);
    tail = run.catch(() => undefined);
    return run;
  };
}

// ---------------------------------------------------------------------------
// Lab 13.1 · the catalog
// ---------------------------------------------------------------------------

const utf8 = (value: string): number => Buffer.byteLength(value, "utf8");

/** Bidirectional marks, embeddings, overrides and isolates. */
const BIDI = new Set(["\u200E", "\u200F", "\u202A", "\u202B", "\u202C", "\u202D", "\u202E", "\u2066", "\u2067", "\u2068", "\u2069"]);

/** A character as it goes into the catalog: whitespace becomes a space, other controls and bidi marks vanish. */
const visible = (character: string): string => (/\s/.test(character) ? " " : /\p{Cc}/u.test(character) || BIDI.has(character) ? "" : character);

/** A name or description on one line: whitespace (line breaks too) first mapped to spaces, controls dropped, runs collapsed, ends trimmed. */
const flatten = (value: string): string =>
  Array.from(value, visible)
    .join("")
    .split(" ")
    .filter((word) => word !== "")
    .join(" ");

const byName = (a: { name: string }, b: { name: string }): number => compareNames(a.name, b.name);

interface CatalogDraft {
  used: number;
  lines: string[];
  listed: string[];
  dropped: string[];
  hidden: string[];
}

export async function buildSkillCatalog(catalog: ResourceCatalog, options: SkillCatalogOptions): Promise<SkillCatalog> {
  const maxBytes = options.maxCatalogBytes;
  if (typeof maxBytes !== "number" || !Number.isInteger(maxBytes) || maxBytes < 0) {
    throw new RuntimeError("RUNTIME_OPTIONS_INVALID", `maxCatalogBytes must be a non-negative integer (got ${String(maxBytes)})`);
  }
  const ordered = catalog.skills.slice().sort(byName);
  const flags = await Promise.all(ordered.map((skill) => hiddenFromModel(skill)));
  const start: CatalogDraft = { used: utf8(`${SKILL_CATALOG_HEADER}\n\n`), lines: [], listed: [], dropped: [], hidden: [] };
  const draft = ordered.reduce<CatalogDraft>((so, skill, index) => {
    if (flags[index] === true) return { ...so, hidden: [...so.hidden, skill.name] };
    const entry = `- ${flatten(skill.name)}: ${flatten(skill.description)}`;
    const cost = utf8(entry) + (so.lines.length === 0 ? 0 : 1);
    return so.used + cost <= maxBytes
      ? { ...so, used: so.used + cost, lines: [...so.lines, entry], listed: [...so.listed, skill.name] }
      : { ...so, dropped: [...so.dropped, skill.name] };
  }, start);
  const body = draft.lines.length === 0 ? "" : [SKILL_CATALOG_HEADER, "", ...draft.lines].join("\n");
  return { text: body, bytes: utf8(body), maxBytes, listed: draft.listed, dropped: draft.dropped, hidden: draft.hidden };
}

// ---------------------------------------------------------------------------
// Lab 13.2 · load_skill
// ---------------------------------------------------------------------------

const MOST_FILES_PER_CALL = 8;

const invalidRequest = (why: string): never => {
  throw new RuntimeError("skill_invalid_request", `skill_invalid_request: ${why}`);
};

/** A plain object: made by `{}` (or with no prototype at all), not a Map, an array or a class instance. */
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && [Object.prototype, null].includes(Object.getPrototypeOf(value));

const FIELDS = ["name", "resources"];

/** Every element of an array, holes included, is a string. */
const allStrings = (list: readonly unknown[]): boolean => Array.from(list).every((item) => typeof item === "string");

const loadRequest: Schema<LoadSkillRequest> = {
  jsonSchema: {
    type: "object",
    properties: {
      name: { type: "string", minLength: 1 },
      resources: { type: "array", items: { type: "string" }, maxItems: MOST_FILES_PER_CALL },
    },
    required: ["name"],
    additionalProperties: false,
  },
  parse(value) {
    if (!isPlainObject(value)) return invalidRequest("the arguments must be a plain object { name, resources? }");
    const keys = Reflect.ownKeys(value);
    if (!keys.includes("name") || keys.some((key) => typeof key !== "string" || !FIELDS.includes(key))) return invalidRequest("the fields are name and, optionally, resources");
    const name = value.name;
    if (typeof name !== "string") return invalidRequest("name is a string");
    if (!keys.includes("resources")) return { name };
    const files = value.resources;
    if (!Array.isArray(files) || !allStrings(files)) return invalidRequest("resources is a list of paths");
    if (files.length > MOST_FILES_PER_CALL) return invalidRequest(`at most ${MOST_FILES_PER_CALL} files per call`);
    return { name, resources: files.slice() };
  },
};

/** Code points JSON.stringify keeps as they are and a reader would not see or would see as a line break. */
const STILL_RAW = (point: number): boolean =>
  (point >= 0x7f && point <= 0x9f) || point === 0x2028 || point === 0x2029 || point === 0x200e || point === 0x200f || (point >= 0x202a && point <= 0x202e) || (point >= 0x2066 && point <= 0x2069);

const escapeRaw = (character: string): string => {
  const point = character.codePointAt(0)!;
  return STILL_RAW(point) ? `\\u${point.toString(16).toUpperCase().padStart(4, "0")}` : character;
};

/** A name or a path as a JSON string literal that stays on one visible line. */
const quote = (value: string): string => Array.from(JSON.stringify(value), escapeRaw).join("");

const SKILL_CODES = new Map<string, SkillErrorCode>([
  ["SKILL_NOT_FOUND", "skill_not_found"],
  ["SKILL_CHANGED", "skill_changed"],
  ["SKILL_PATH_ESCAPE", "skill_changed"],
]);

const FILE_CODES = new Map<string, SkillErrorCode>([
  ["SKILL_CHANGED", "skill_changed"],
  ["SKILL_PATH_INVALID", "skill_resource_invalid"],
  ["SKILL_PATH_ESCAPE", "skill_resource_invalid"],
  ["SKILL_RESOURCE_MISSING", "skill_resource_invalid"],
]);

const SKILL_SENTENCES: Record<SkillErrorCode, (name: string) => string> = {
  skill_not_found: (name) => `there is no skill ${quote(name)} in this session's catalog (a skill added later needs a reload)`,
  skill_invalid_request: (name) => `the request for ${quote(name)} is not { name, resources? }`,
  skill_hidden: (name) => `skill ${quote(name)} is for the user only (the /skill: command)`,
  skill_changed: (name) => `skill ${quote(name)} changed on disk since the catalog was taken; reload first`,
  skill_unreadable: (name) => `skill ${quote(name)} cannot be read right now`,
  skill_resource_invalid: (name) => `skill ${quote(name)} has no such file (give paths inside its folder, as listed)`,
  skill_resource_unreadable: (name) => `a file of skill ${quote(name)} cannot be handed over as text`,
};

const coded = (code: SkillErrorCode, name: string): RuntimeError => new RuntimeError(code, `${code}: ${SKILL_SENTENCES[code](name)}`);

function skillLoadError(error: unknown, name: string): RuntimeError {
  return coded(SKILL_CODES.get(codeOf(error) ?? "") ?? "skill_unreadable", name);
}

const fileLoadError = (error: unknown, name: string): RuntimeError => coded(FILE_CODES.get(codeOf(error) ?? "") ?? "skill_resource_unreadable", name);

/** The body, then the files the skill bundles, each part separated by a blank line. */
const withFileList = (body: string, name: string, { files, cut }: SkillFiles): string =>
  files.length === 0
    ? body
    : [body, `# Files of skill ${quote(name)}`, SKILL_FILES_NOTE, [...files.map((file) => `- ${file}`), ...(cut ? [`(only the first ${MAX_LISTED_FILES} files are listed)`] : [])].join("\n")]
        .filter((part) => part.length > 0)
        .join("\n\n");

const fileSection = (name: string) => (file: ActivatedSkillFile): string => `# File ${quote(file.request)} of skill ${quote(name)}\n\n${file.content}`;

export function createLoadSkillTool(options: LoadSkillOptions): Tool<LoadSkillRequest, LoadSkillDetails> {
  const snapshot = structuredClone(options.resources);
  const hidden = [...options.hidden];
  const clock = options.now ?? Date.now;
  const refused = (name: string, error: RuntimeError): ToolOutput<LoadSkillDetails> => ({
    isError: true,
    content: [text(error.message)],
    details: { name, code: error.code as SkillErrorCode },
  });
  const recorded = (name: string, output: ToolOutput<LoadSkillDetails>): ToolOutput<LoadSkillDetails> => {
    options.onLoad?.({ name, by: "model", at: clock() });
    return output;
  };
  const bodyOf = async (name: string, skill: ActivatedSkill): Promise<ToolOutput<LoadSkillDetails>> => {
    const listing = await skillFilesOf(skill.root);
    return recorded(name, { content: [text(withFileList(skill.body, name, listing))], details: { name, files: listing.files } });
  };
  const filesOf = (name: string, requests: string[]): Promise<ToolOutput<LoadSkillDetails>> =>
    activateSkill(snapshot, name, { resources: requests }).then(
      ({ resources }) =>
        recorded(name, { content: [text(resources.map(fileSection(name)).join("\n\n"))], details: { name, resources: resources.map((file) => file.request) } }),
      (error: unknown) => refused(name, fileLoadError(error, name)),
    );
  return {
    name: "load_skill",
    description: "Returns the instructions of a skill from the catalog in the system prompt and lists its files; with resources, returns those files.",
    schema: loadRequest,
    execute: async ({ name, resources = [] }) => {
      if (hidden.includes(name)) return refused(name, coded("skill_hidden", name));
      return activateSkill(snapshot, name).then(
        (skill) => (resources.length === 0 ? bodyOf(name, skill) : filesOf(name, resources)),
        (error: unknown) => refused(name, skillLoadError(error, name)),
      );
    },
  };
}

// ---------------------------------------------------------------------------
// Lab 13.3 · user commands
// ---------------------------------------------------------------------------

/** `rest` split at its first whitespace: the name (which must start at once) and what follows. */
function nameAndTail(rest: string, usage: string): { name: string; tail: string } {
  const gap = rest.search(/\s/);
  const name = gap === -1 ? rest : rest.slice(0, gap);
  if (name === "") throw new RuntimeError("COMMAND_INVALID", usage);
  return { name, tail: gap === -1 ? "" : rest.slice(gap) };
}

const KEY = /^[A-Za-z_]\w*$/;

/** `key=value` words into arguments: every word has a key, no key twice. */
const templateArguments = (tail: string): Record<string, string> =>
  tail
    .split(/\s+/)
    .filter((word) => word.length > 0)
    .reduce<Record<string, string>>((so, word) => {
      const equals = word.indexOf("=");
      const key = equals < 0 ? "" : word.slice(0, equals);
      if (!KEY.test(key)) throw new RuntimeError("COMMAND_INVALID", `template arguments are key=value, not ${JSON.stringify(word)}`);
      if (Object.hasOwn(so, key)) throw new RuntimeError("COMMAND_INVALID", `template argument ${key} is given twice`);
      return { ...so, [key]: word.slice(equals + 1) };
    }, {});

type Command = (rest: string, resources: ResourceCatalog, options: ExpandOptions) => Promise<ExpandedInput>;

const forced: Command = async (rest, resources, options) => {
  const { name, tail } = nameAndTail(rest, "write the skill's name right after /skill:, e.g. /skill:review the parser");
  const body = await activateSkill(resources, name).then(
    (skill) => skill.body,
    (error: unknown) => {
      throw skillLoadError(error, name);
    },
  );
  options.onLoad?.({ name, by: "user", at: (options.now ?? Date.now)() });
  const words = tail.trim();
  const parts = [`Skill ${JSON.stringify(name)} (loaded by the user for this turn):`, body, ...(words === "" ? [] : [words])];
  return { message: userMessage(parts.join("\n\n")), skill: name };
};

const templated: Command = async (rest, resources) => {
  const { name, tail } = nameAndTail(rest, "write the template's name right after /template:, e.g. /template:review file=a.ts");
  const values = templateArguments(tail);
  const template = resources.templates.find((candidate) => candidate.name === name);
  if (template === undefined) throw new RuntimeError("TEMPLATE_NOT_FOUND", `no template ${name}`);
  return { message: renderTemplate(template, values), template: name };
};

const COMMANDS: readonly (readonly [string, Command])[] = [
  ["/skill:", forced],
  ["/template:", templated],
];

export async function expandInput(input: string, resources: ResourceCatalog, options: ExpandOptions = {}): Promise<ExpandedInput> {
  const command = COMMANDS.find(([prefix]) => input.startsWith(prefix));
  return command === undefined ? { message: userMessage(input) } : command[1](input.slice(command[0].length), resources, options);
}

// ---------------------------------------------------------------------------
// Lab 13.4 · startup
// ---------------------------------------------------------------------------

/** Chapter 08's coding tools on the project: what the tools act on when the caller gives none. */
async function defaultTools(projectRoot: string): Promise<Tool[]> {
  return createCodingTools(await openWorkspace(projectRoot), { shellTimeoutMs: 10_000 });
}

/** Runs `step` over `items` one after another (never two at once), collecting the results in order. */
const inSequence = <I, O>(items: readonly I[], step: (item: I) => Promise<O>): Promise<O[]> =>
  items.reduce<Promise<O[]>>(async (earlier, item) => [...(await earlier), await step(item)], Promise.resolve([]));

async function loadState(setup: RuntimeSetup, importModule: ImportModule | undefined): Promise<RuntimeState> {
  const { options, projectRoot, userRoot } = setup;
  const diagnostics: RuntimeDiagnostic[] = [];
  const note = (diagnostic: RuntimeDiagnostic) => void diagnostics.push(diagnostic);

  const roots = userRoot === undefined ? [projectRoot] : [projectRoot, userRoot];
  // Each root's own AGENTS.md, read root by root (quietly: the discovery of all roots below reports every problem).
  const quiet = { onDiagnostic: () => undefined };
  const perRoot = await Promise.all(roots.map((root) => discoverResources([root], quiet).then(({ instructions }) => instructions)));
  const instructions = perRoot.reverse().flat();
  const used = new Set(instructions.map(({ source }) => source));
  const resources = await discoverResources(roots, {
    onDiagnostic: ({ severity, code, source, message }) =>
      code === "RESOURCE_SHADOWED" && used.has(source) ? undefined : note({ area: "resources", severity, code, source, message }),
  });
  const skills = await buildSkillCatalog(resources, { maxCatalogBytes: options.maxCatalogBytes ?? DEFAULT_MAX_CATALOG_BYTES });
  const loadSkill = createLoadSkillTool({ resources, hidden: skills.hidden, onLoad: (load) => setup.recordLoad(load), now: options.now });
  const core = await (options.tools ?? defaultTools)(projectRoot);
  const registry = new ToolRegistry([...core, loadSkill as Tool]);
  const host = createExtensionHost(registry, {
    hookTimeoutMs: options.hookTimeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS,
    onDiagnostic: (diagnostic) => setup.emit({ type: "hook_diagnostic", diagnostic }),
  });

  const load = (origin: ExtensionStatus["origin"]) => (source: ExtensionSource): Promise<ExtensionStatus> =>
    loadExtension(source, { host, isTrusted: () => true, ...(importModule === undefined ? {} : { importModule }) }).then(
      (result): ExtensionStatus => ({ id: source.id, origin, status: result.status }),
      (error: unknown): ExtensionStatus => {
        const code = codeOf(error) ?? "EXTENSION_FAILED";
        note({ area: "extensions", severity: "error", code, source: source.id, message: messageOf(error) });
        return { id: source.id, origin, status: "failed", code };
      },
    );

  const fromUser = userRoot === undefined ? [] : await inSequence(await extensionSourcesOf(userRoot), load("user"));
  const trusted = await Promise.resolve()
    .then(() => options.isProjectTrusted(projectRoot))
    .then(
      (answer) => answer === true,
      (error: unknown) => {
        note({ area: "trust", severity: "error", code: "PROJECT_TRUST_FAILED", source: projectRoot, message: messageOf(error) });
        return false;
      },
    );
  const projectSources = await extensionSourcesOf(projectRoot);
  const fromProject = trusted
    ? await inSequence(projectSources, load("project"))
    : projectSources.map((source): ExtensionStatus => ({ id: source.id, origin: "project", status: "skipped_untrusted" }));

  return { resources, instructions, skills, registry, host, extensions: [...fromUser, ...fromProject], diagnostics };
}

export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  checkOptions(options);
  const roots = await resolveRoots(options);
  const loads: SkillLoad[] = [];
  const emit = (event: RuntimeEvent) => options.onEvent?.(structuredClone(event));
  const recordLoad = (load: SkillLoad) => {
    loads.push({ ...load });
    emit({ type: "skill_load", load });
  };
  const setup: RuntimeSetup = { options, ...roots, recordLoad, emit };
  const first = await loadState(setup, options.importModule);
  first.diagnostics.forEach((diagnostic) => emit({ type: "diagnostic", diagnostic }));
  const core: RuntimeCore = { ...setup, state: first, session: createSession(), loads };
  const queue = serialized();
  const copy = <T>(value: T): T => structuredClone(value);
  return {
    get diagnostics() {
      return copy(core.state.diagnostics);
    },
    get resources() {
      return copy(core.state.resources);
    },
    get instructions() {
      return copy(core.state.instructions);
    },
    get catalog() {
      return copy(core.state.skills);
    },
    get tools() {
      return core.state.registry.list().map(({ name }) => name);
    },
    get extensions() {
      return copy(core.state.extensions);
    },
    get messages() {
      return copy(core.session.activePath().map(({ message }) => message));
    },
    get skillLoads() {
      return copy(core.loads);
    },
    prompt: (input: string, turnOptions?: PromptOptions) => queue(() => runTurn(core, input, turnOptions ?? {})),
    reload: () => queue(() => reloadRuntime(core)),
  };
}

// ---------------------------------------------------------------------------
// Lab 13.5 · one turn
// ---------------------------------------------------------------------------

/** Base prompt, instructions, catalog: the non-empty ones, a blank line between them. */
const systemPromptFrom = (base: string, instructions: readonly { body: string }[], catalogText: string): string => {
  const bodies = instructions.map(({ body }) => body).filter((body) => body.length > 0);
  const sections = [base, bodies.length > 0 ? ["# Instructions", ...bodies].join("\n\n") : "", catalogText];
  return sections.filter((section) => section.length > 0).join("\n\n");
};

const overflow = ({ system, tools, messages, reservedOutput, safetyMargin, total, maxTokens }: ContextProjection["tokens"]): RuntimeError =>
  new RuntimeError(
    "RUNTIME_CONTEXT_OVERFLOW",
    `the request does not fit and was not sent: system ${system} + tools ${tools} + messages ${messages} + reserved output ${reservedOutput} + safety margin ${safetyMargin} = ${total} tokens, more than maxTokens ${maxTokens}`,
  );

/** What an aborted turn reports. */
const abortedWith = (turns: number, messages: AgentMessage[], why: string): TurnResult => ({
  stopReason: "aborted",
  turns,
  messages,
  failure: { code: "TURN_ABORTED", message: why },
});

async function runTurn(core: RuntimeCore, input: string, { signal }: PromptOptions): Promise<TurnResult> {
  if (signal?.aborted === true) return abortedWith(0, [], messageOf(signal.reason));
  const { options, session } = core;
  const state = core.state;
  const sent = { count: 0 };
  const leafAtStart = session.leafId;
  // A turn the model never saw is not kept: back to where the session was.
  const forgetIfUnsent = () => (sent.count === 0 ? session.branch(leafAtStart) : undefined);
  const play = async () => {
    const expanded = await expandInput(input, state.resources, { onLoad: core.recordLoad, now: options.now });
    const systemPrompt = systemPromptFrom(options.baseSystemPrompt ?? "", state.instructions, state.skills.text);
    const { estimateTokens, ...sizes } = options.context;
    const budget: BuildContextOptions = { ...sizes, systemPrompt, ...(estimateTokens === undefined ? {} : { estimateTokens }) };
    const outcome = await runAgentLoop([], [expanded.message], {
      model: options.model,
      registry: state.registry,
      executor: state.host.wrapExecutor(createToolExecutor(state.registry, signal === undefined ? {} : { signal })),
      maxTurns: options.maxTurns ?? DEFAULT_MAX_TURNS,
      ...(signal === undefined ? {} : { signal }),
      prepareContext: () => {
        const request = buildContext(session.activePath(), { ...budget, tools: state.registry.list().map(toolSpec) });
        if (request.tokens.total > request.tokens.maxTokens) throw overflow(request.tokens);
        sent.count += 1;
        core.emit({
          type: "request",
          turn: sent.count,
          systemPrompt: request.systemPrompt,
          messages: request.messages,
          tools: state.registry.list().map(({ name }) => name),
          tokens: request.tokens,
        });
        return { systemPrompt: request.systemPrompt, messages: request.messages };
      },
      emit: (event) => {
        if (event.type === "message") {
          session.append(event.message);
          core.emit({ type: "message", message: event.message });
        }
      },
    });
    return { expanded, outcome };
  };
  const { expanded, outcome } = await play().finally(forgetIfUnsent);
  const messages = sent.count === 0 ? [] : outcome.messages;
  const base: TurnResult =
    outcome.stopReason === "aborted"
      ? abortedWith(outcome.turns, messages, outcome.errorMessage ?? "aborted")
      : { stopReason: outcome.stopReason, turns: outcome.turns, messages };
  return {
    ...base,
    ...(expanded.skill === undefined ? {} : { skill: expanded.skill }),
    ...(expanded.template === undefined ? {} : { template: expanded.template }),
  };
}

// ---------------------------------------------------------------------------
// Lab 13.6 · reload
// ---------------------------------------------------------------------------

/** A new module instance at every call: the query makes the URL one Node has not cached. */
const importAgain: ImportModule = (() => {
  let generation = 0;
  return (source) => {
    generation += 1;
    return import(`${pathToFileURL(source.path).href}?generation=${generation}`);
  };
})();

const minus = (from: readonly string[], without: readonly string[]): string[] => from.filter((name) => !without.includes(name));
const both = (from: readonly string[], also: readonly string[]): string[] => from.filter((name) => also.includes(name));

const sorted = (names: string[]): string[] => names.sort(compareNames);
const skillNames = (state: RuntimeState) => sorted(state.resources.skills.map(({ name }) => name));
const toolNames = (state: RuntimeState) => sorted(state.registry.list().map(({ name }) => name));
const runningIds = (state: RuntimeState) => sorted(state.extensions.filter(({ status }) => status === "active").map(({ id }) => id));

/** How a skill looks to the model: its description, where it comes from, whether it is hidden. */
const looks = (state: RuntimeState, skill: SkillResource) => [skill.description, skill.source, state.skills.hidden.includes(skill.name)].join("\u0000");

function differences(before: RuntimeState, after: RuntimeState): RuntimeChanges {
  const earlier = new Map(before.resources.skills.map((skill) => [skill.name, looks(before, skill)] as const));
  return {
    skillsAdded: minus(skillNames(after), skillNames(before)),
    skillsRemoved: minus(skillNames(before), skillNames(after)),
    skillsChanged: sorted(after.resources.skills.filter((skill) => earlier.has(skill.name) && earlier.get(skill.name) !== looks(after, skill)).map(({ name }) => name)),
    toolsAdded: minus(toolNames(after), toolNames(before)),
    toolsRemoved: minus(toolNames(before), toolNames(after)),
    extensionsAdded: minus(runningIds(after), runningIds(before)),
    extensionsRemoved: minus(runningIds(before), runningIds(after)),
    extensionsReloaded: both(runningIds(after), runningIds(before)),
  };
}

async function reloadRuntime(core: RuntimeCore): Promise<ReloadReport> {
  const finish = (report: ReloadReport): ReloadReport => {
    core.emit({ type: "reload", report });
    return report;
  };
  const built = await resolveRoots(core.options)
    .then(() => loadState(core, core.options.importModule ?? importAgain))
    .then(
      (state) => ({ state }),
      (error: unknown) => ({ error }),
    );
  if (!("state" in built)) return finish({ status: "failed", error: { code: codeOf(built.error) ?? "RELOAD_FAILED", message: messageOf(built.error) }, diagnostics: [] });
  const next = built.state;
  next.diagnostics.forEach((diagnostic) => core.emit({ type: "diagnostic", diagnostic }));
  // Running means this origin's extension of that id: a project's namesake of a running user extension never ran.
  const ran = (extension: ExtensionStatus) => core.state.extensions.some((old) => old.status === "active" && old.origin === extension.origin && old.id === extension.id);
  const stopped = next.extensions.filter((extension) => extension.status === "failed" && ran(extension)).map(({ id }) => id);
  const fatal = next.diagnostics.find(
    ({ severity, area, source }) => severity === "error" && (area === "trust" || (area === "extensions" && stopped.includes(source))),
  );
  if (fatal !== undefined) {
    return finish({ status: "failed", error: { code: fatal.code, message: `${fatal.source}: ${fatal.message}` }, diagnostics: structuredClone(next.diagnostics) });
  }
  const changes = differences(core.state, next);
  core.state = next;
  return finish({ status: "reloaded", changes, diagnostics: structuredClone(next.diagnostics) });
}
