/**
 * Chapter 13 · the runtime: one session that puts Chapters 07–12 to work together.
 *
 * Chapter 12 built the parts (a catalog, activation, templates, a trust gate, hooks); this
 * module decides how they meet in a running session, and in which order:
 *
 * - The model sees a skill *catalog* (names and descriptions, bounded in UTF-8 bytes) in
 *   its system prompt, and loads a body itself through the `load_skill` tool, by name (any
 *   name the catalog can list); the result lists the files the skill bundles, and a second
 *   call with `resources` reads some of them, never anything outside the skill's folder.
 *   The catalog is a snapshot taken when the session starts; a body is read fresh at every
 *   load. Skills marked `disable-model-invocation: true` are left out of the catalog and
 *   refused to the model; the user can still force one with `/skill:<name>`.
 * - User commands (`/skill:`, `/template:`) are expanded before the model sees the turn.
 * - Startup runs in a fixed order: lenient discovery (every problem becomes a diagnostic),
 *   the user's own extensions, then the project's trust decision, and only after a `true`
 *   the project's extensions. A project that is not trusted runs nothing of its own.
 * - Every request goes through Chapter 11's `buildContext`, which counts the tool specs the
 *   request carries as well as its system prompt and messages; one that does not fit the
 *   window is never sent. Tools run through the extension host; a session tree holds the
 *   transcript.
 * - `reload()` builds a whole new state beside the old one (discovery, a fresh import of
 *   every extension) and swaps it in only when nothing that runs now would be lost; the
 *   session stays.
 *
 * The module reads in lab order: types and given helpers, then Lab 13.1 (catalog),
 * 13.2 (load_skill), 13.3 (user commands), 13.4 (startup), 13.5 (one turn), 13.6 (reload).
 */
import type { Dirent } from "node:fs";
import { readdir, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parse as parseYaml } from "yaml";
import { runAgentLoop, type LoopResult, type LoopStopReason } from "./agent-loop.js";
import { createCodingTools } from "./coding-tools.js";
import { buildContext, type ContextProjection } from "./context.js";
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
export const SKILL_FILES_NOTE =
  "Paths are relative to the skill's folder; to read some of these files, call load_skill again with the skill's name and their paths in resources.";

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

/** What a reload changed, by name; every array in code-unit order of name (not registration or load order). */
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
// Lab 13.1 · 技能清单只给名字和描述，按字节预算
// ---------------------------------------------------------------------------

// Control characters that are not whitespace, and the bidirectional controls that can
// reorder what a reader sees. Whitespace itself (line breaks included) is collapsed.
const UNPRINTABLE = /[\u0000-\u0008\u000E-\u001F\u007F-\u009F\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;
const BLANK_RUN = /\s+/g;

/** One line of catalog text: unprintable characters removed, every whitespace run one space, trimmed. */
function catalogLine(value: string): string {
  return value.replace(UNPRINTABLE, "").replace(BLANK_RUN, " ").trim();
}

/**
 * The catalog section of the system prompt: `SKILL_CATALOG_HEADER`, a blank line, then one
 * line `- <name>: <description>` per listed skill (lines joined by `\n`). Guarantees: entries
 * in code-unit order of name whatever the order of `catalog.skills`; each name and
 * description on one line, with control and bidirectional-control characters removed and
 * every run of whitespace (line breaks included) one space, trimmed, so no description can
 * open a heading or a section; no body ever. Skills for which `hiddenFromModel` is true are
 * not listed (`hidden`). The whole section (header included) is at most `maxCatalogBytes`
 * UTF-8 bytes: entries are taken in name order, each one that still fits is kept, each one
 * that does not is dropped whole (`dropped`) and the next one is tried; with no entry kept
 * the section is `""`. Same input, same result. A budget that is not an integer >= 0 is
 * `RUNTIME_OPTIONS_INVALID`.
 */
export async function buildSkillCatalog(catalog: ResourceCatalog, options: SkillCatalogOptions): Promise<SkillCatalog> {
  const maxBytes = options.maxCatalogBytes;
  if (!Number.isInteger(maxBytes) || maxBytes < 0) {
    throw new RuntimeError("RUNTIME_OPTIONS_INVALID", `maxCatalogBytes must be an integer >= 0, got ${String(maxBytes)}`);
  }
  const skills = [...catalog.skills].sort((a, b) => compareNames(a.name, b.name));
  const hiddenFlags = await Promise.all(skills.map((skill) => hiddenFromModel(skill)));
  const hidden: string[] = [];
  const listed: string[] = [];
  const dropped: string[] = [];
  const lines: string[] = [];
  let used = Buffer.byteLength(`${SKILL_CATALOG_HEADER}\n\n`, "utf8");
  skills.forEach((skill, index) => {
    if (hiddenFlags[index]) {
      hidden.push(skill.name);
      return;
    }
    const line = `- ${catalogLine(skill.name)}: ${catalogLine(skill.description)}`;
    const cost = Buffer.byteLength(line, "utf8") + (lines.length > 0 ? 1 : 0);
    if (used + cost > maxBytes) {
      dropped.push(skill.name);
      return;
    }
    used += cost;
    lines.push(line);
    listed.push(skill.name);
  });
  const section = lines.length === 0 ? "" : `${SKILL_CATALOG_HEADER}\n\n${lines.join("\n")}`;
  return { text: section, bytes: Buffer.byteLength(section, "utf8"), maxBytes, listed, dropped, hidden };
}

// ---------------------------------------------------------------------------
// Lab 13.2 · load_skill 按名字加载，正文和文件每次现读
// ---------------------------------------------------------------------------

/** The tool's name, as the model calls it. */
const LOAD_SKILL = "load_skill";

/** What the model is told the tool does. */
const LOAD_SKILL_DESCRIPTION =
  "Loads the full instructions of one skill listed in the system prompt's skill catalog, with the list of files it bundles; give resources to read some of those files instead.";

/** The most files one load_skill call may ask for. */
const MAX_RESOURCES_PER_LOAD = 8;

/** Characters JSON.stringify leaves as they are that could still hide text or break a line: C1 controls, line and paragraph separators, bidi controls. */
const LEFT_BY_JSON = /[\u007F-\u009F\u2028\u2029\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/** `value` as a JSON string on one line: `JSON.stringify`, then every character of `LEFT_BY_JSON` as a `\uXXXX` escape. */
function quoted(value: string): string {
  return JSON.stringify(value).replace(LEFT_BY_JSON, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** The schema of load_skill's arguments: exactly `{ name }` or `{ name, resources }`, checked before anything is read. */
const loadSkillSchema: Schema<LoadSkillRequest> = {
  jsonSchema: {
    type: "object",
    properties: {
      name: { type: "string", description: "The skill's name, exactly as the skill catalog lists it." },
      resources: {
        type: "array",
        items: { type: "string" },
        maxItems: MAX_RESOURCES_PER_LOAD,
        description: "Files of that skill to read, as paths relative to its folder (the list shown after its instructions).",
      },
    },
    required: ["name"],
    additionalProperties: false,
  },
  parse(value: unknown): LoadSkillRequest {
    const refuse = (why: string): never => {
      throw new RuntimeError("skill_invalid_request", `skill_invalid_request: load_skill 只接受 { name } 或 { name, resources }（${why}）`);
    };
    if (typeof value !== "object" || value === null || Array.isArray(value)) return refuse("参数必须是一个对象");
    // A plain object: a Map, a class instance or an object inheriting its name is none.
    const madeFrom: unknown = Object.getPrototypeOf(value);
    if (madeFrom !== Object.prototype && madeFrom !== null) return refuse("参数必须是一个普通对象");
    const fields = Object.keys(value);
    if (fields.some((field) => field !== "name" && field !== "resources")) return refuse("除了 name 和 resources 不能有别的字段");
    const { name, resources } = value as { name?: unknown; resources?: unknown };
    if (typeof name !== "string") return refuse("name 必须是字符串");
    if (!fields.includes("resources")) return { name };
    if (!Array.isArray(resources) || Array.from(resources).some((request) => typeof request !== "string")) return refuse("resources 必须是字符串数组");
    if (resources.length > MAX_RESOURCES_PER_LOAD) return refuse(`一次最多请求 ${MAX_RESOURCES_PER_LOAD} 个文件`);
    return { name, resources: [...(resources as string[])] };
  },
};

/**
 * Turns a failed activation of skill `name` into the error the model may see. Its message
 * names the skill, quoted, and never a path, whatever the original error said: a skill
 * missing from the catalog is `skill_not_found`; one whose SKILL.md changed name, vanished
 * or now resolves elsewhere is `skill_changed`; anything else (too large, not text,
 * unreadable, broken frontmatter) is `skill_unreadable`. The message starts with the code
 * and a colon (`skill_changed: …`).
 */
function skillLoadError(error: unknown, name: string): RuntimeError {
  const code = codeOf(error);
  if (code === "SKILL_NOT_FOUND") {
    return new RuntimeError("skill_not_found", `skill_not_found: 技能 ${quoted(name)} 不在清单里（清单是启动时的快照；新加的技能要等 reload 之后）`);
  }
  if (code === "SKILL_CHANGED" || code === "SKILL_PATH_ESCAPE") {
    return new RuntimeError("skill_changed", `skill_changed: 技能 ${quoted(name)} 在磁盘上变了（改了名字、被删除或被换走）；reload 之后再试`);
  }
  return new RuntimeError("skill_unreadable", `skill_unreadable: 技能 ${quoted(name)} 的 SKILL.md 现在读不出来（太大、不是文本、无法读取或 frontmatter 坏了）`);
}

/**
 * Turns a failed read of files requested from skill `name` (its SKILL.md was just read
 * fine) into the error the model may see, naming the skill and never a path: a file changed
 * while it was read is `skill_changed`; a request that is empty, absolute, leads out of the
 * skill's folder or names no file there is `skill_resource_invalid`; anything else (over
 * 1 MiB, not text, unreadable) is `skill_resource_unreadable`.
 */
function resourceLoadError(error: unknown, name: string): RuntimeError {
  const code = codeOf(error);
  if (code === "SKILL_CHANGED") return skillLoadError(error, name);
  if (code === "SKILL_PATH_INVALID" || code === "SKILL_PATH_ESCAPE" || code === "SKILL_RESOURCE_MISSING") {
    const rule = "resources 的每一项都是技能目录里一个文件的相对路径，不能为空、不能是绝对路径、不能走出技能目录";
    return new RuntimeError("skill_resource_invalid", `skill_resource_invalid: 技能 ${quoted(name)} 里没有这样的文件（${rule}）`);
  }
  return new RuntimeError("skill_resource_unreadable", `skill_resource_unreadable: 技能 ${quoted(name)} 请求的文件读不出来（超过 1 MiB、不是文本或无法读取）`);
}

/** The body, then (when the skill bundles files) its file list: heading, `SKILL_FILES_NOTE`, one `- <path>` line each; parts joined by a blank line, an empty body left out. */
function bodyWithFiles(body: string, name: string, listing: SkillFiles): string {
  if (listing.files.length === 0) return body;
  const lines = listing.files.map((file) => `- ${file}`);
  if (listing.cut) lines.push(`(only the first ${MAX_LISTED_FILES} files are listed)`);
  return [body, `# Files of skill ${quoted(name)}`, SKILL_FILES_NOTE, lines.join("\n")].filter((part) => part !== "").join("\n\n");
}

/**
 * The `load_skill` tool over a catalog snapshot. Guarantees: its arguments are exactly
 * `{ name }` or `{ name, resources }` (a plain object with only those own fields; `name` a
 * string; `resources` an array of at most `MAX_RESOURCES_PER_LOAD` strings), checked by its
 * schema before any file is touched: the schema throws `skill_invalid_request`, whose
 * message starts with that code. Any string is a name: it is looked up in the snapshot
 * (`skill_not_found`), a hidden skill is refused (`skill_hidden`), and SKILL.md is read
 * fresh by Chapter 12's `activateSkill` at every call, so an edit shows at once, and a skill
 * the byte budget dropped still loads. Without resources (or with none) the result's text is
 * the body, then the skill's files (`skillFilesOf`) under `# Files of skill "<name>"`, and
 * its `details` `{ name, files }`; with resources, the text is each requested file (read by
 * `activateSkill` with those requests, duplicates dropped) under `# File "<path>" of skill
 * "<name>"`, and `details` `{ name, resources }`. An error result's text is the error's
 * message (starting with its code), its `details` `{ name, code }`; no message names a path
 * of this machine, names and paths are `quoted`. Every successful load calls
 * `onLoad({ name, by: "model", at: now() })`; a refused one records nothing.
 */
export function createLoadSkillTool(options: LoadSkillOptions): Tool<LoadSkillRequest, LoadSkillDetails> {
  const resources = structuredClone(options.resources);
  const hidden = new Set(options.hidden);
  const now = options.now ?? Date.now;
  return {
    name: LOAD_SKILL,
    description: LOAD_SKILL_DESCRIPTION,
    schema: loadSkillSchema,
    async execute({ name, resources: requests = [] }) {
      const refuse = (error: RuntimeError) => ({ content: [text(error.message)], details: { name, code: error.code as SkillErrorCode }, isError: true });
      if (!resources.skills.some((skill) => skill.name === name)) return refuse(skillLoadError({ code: "SKILL_NOT_FOUND" }, name));
      if (hidden.has(name)) {
        return refuse(new RuntimeError("skill_hidden", `skill_hidden: 技能 ${quoted(name)} 只能由用户用 /skill: 命令调用（disable-model-invocation）`));
      }
      let skill: ActivatedSkill;
      try {
        skill = await activateSkill(resources, name);
      } catch (error) {
        return refuse(skillLoadError(error, name));
      }
      let output: ToolOutput<LoadSkillDetails>;
      if (requests.length === 0) {
        const listing = await skillFilesOf(skill.root);
        output = { content: [text(bodyWithFiles(skill.body, name, listing))], details: { name, files: listing.files } };
      } else {
        let files: ActivatedSkillFile[];
        try {
          files = (await activateSkill(resources, name, { resources: requests })).resources;
        } catch (error) {
          return refuse(resourceLoadError(error, name));
        }
        const shown = files.map((file) => `# File ${quoted(file.request)} of skill ${quoted(name)}\n\n${file.content}`);
        output = { content: [text(shown.join("\n\n"))], details: { name, resources: files.map((file) => file.request) } };
      }
      options.onLoad?.({ name, by: "model", at: now() });
      return output;
    },
  };
}

// ---------------------------------------------------------------------------
// Lab 13.3 · 用户命令先于模型
// ---------------------------------------------------------------------------

const SKILL_COMMAND = "/skill:";
const TEMPLATE_COMMAND = "/template:";
/** `<name>` right after the prefix, then optionally whitespace and the rest. */
const COMMAND_SHAPE = /^(\S+)(?:\s+([\s\S]*))?$/;
const ARGUMENT_SHAPE = /^([A-Za-z_][A-Za-z0-9_]*)=([\s\S]*)$/;

/** `/skill:<name> [text]`: the skill's fresh body, then the text, as the user's turn. */
async function forceSkill(rest: string, resources: ResourceCatalog, options: ExpandOptions): Promise<ExpandedInput> {
  const shape = COMMAND_SHAPE.exec(rest);
  if (shape === null) throw new RuntimeError("COMMAND_INVALID", "/skill: 后面要紧跟技能名，例如 /skill:code-review 看一下 src/app.js");
  const name = shape[1]!;
  const request = (shape[2] ?? "").trim();
  let body: string;
  try {
    body = (await activateSkill(resources, name)).body;
  } catch (error) {
    throw skillLoadError(error, name);
  }
  options.onLoad?.({ name, by: "user", at: (options.now ?? Date.now)() });
  const loaded = `Skill ${JSON.stringify(name)} (loaded by the user for this turn):\n\n${body}`;
  return { message: userMessage(request === "" ? loaded : `${loaded}\n\n${request}`), skill: name };
}

/** `/template:<name> key=value …`: the template rendered with those arguments, as the user's turn. */
function applyTemplate(rest: string, resources: ResourceCatalog): ExpandedInput {
  const shape = COMMAND_SHAPE.exec(rest);
  if (shape === null) throw new RuntimeError("COMMAND_INVALID", "/template: 后面要紧跟模板名，例如 /template:review file=src/app.js");
  const name = shape[1]!;
  // No prototype: a key named __proto__ is a key like any other (given twice, it is refused).
  const values: Record<string, string> = Object.create(null);
  for (const token of (shape[2] ?? "").split(/\s+/).filter((part) => part !== "")) {
    const argument = ARGUMENT_SHAPE.exec(token);
    if (argument === null)
      throw new RuntimeError("COMMAND_INVALID", `模板参数要写成 key=value（key 是字母、数字或下划线，不以数字开头），实际是 ${JSON.stringify(token)}`);
    if (Object.hasOwn(values, argument[1]!)) throw new RuntimeError("COMMAND_INVALID", `模板参数 ${argument[1]} 写了两次`);
    values[argument[1]!] = argument[2]!;
  }
  const template = resources.templates.find((candidate) => candidate.name === name);
  if (template === undefined) throw new RuntimeError("TEMPLATE_NOT_FOUND", `没有名为 ${name} 的模板`);
  return { message: renderTemplate(template, values), template: name };
}

/**
 * Applies a user command, if the input starts with one, and returns the turn the model
 * will see. Only an input that starts exactly with `/skill:` or `/template:` is a command;
 * anything else (`/help`, `/docs/x`, text with a command inside) is sent as it is.
 * `/skill:<name> [text]` forces that skill into this turn, a hidden one too, its body read
 * fresh (`skill_not_found`, `skill_changed`, `skill_unreadable` as load_skill), and records a
 * load `by: "user"`. The turn's one text block reads `Skill "<name>" (loaded by the user for
 * this turn):`, a blank line, the body, and when text follows the name, a blank line and
 * that text (trimmed). `/template:<name> key=value …` renders that template with Chapter
 * 12's `renderTemplate` (`TEMPLATE_NOT_FOUND`; `TEMPLATE_ARGUMENT_MISSING` passes through):
 * arguments are separated by whitespace, a key is a letter or `_` then letters, digits or
 * `_`, the value is everything after the first `=` (possibly empty). The name must follow
 * the prefix at once; a command without a name, an argument that is not `key=value` or a
 * key given twice is `COMMAND_INVALID`. Nothing is sent and nothing recorded on any error.
 */
export async function expandInput(input: string, resources: ResourceCatalog, options: ExpandOptions = {}): Promise<ExpandedInput> {
  if (input.startsWith(SKILL_COMMAND)) return forceSkill(input.slice(SKILL_COMMAND.length), resources, options);
  if (input.startsWith(TEMPLATE_COMMAND)) return applyTemplate(input.slice(TEMPLATE_COMMAND.length), resources);
  return { message: userMessage(input) };
}

// ---------------------------------------------------------------------------
// Lab 13.4 · 启动：先用户，再信任，后项目
// ---------------------------------------------------------------------------

/** Chapter 08's coding tools on the project: what the tools act on when the caller gives none. */
async function defaultTools(projectRoot: string): Promise<Tool[]> {
  return createCodingTools(await openWorkspace(projectRoot), { shellTimeoutMs: 10_000 });
}

/**
 * Builds one complete state, in this order: lenient discovery of `[project, user]` (every
 * problem a diagnostic, nothing thrown for one file), and the instructions: the user's
 * AGENTS.md (the user root discovered on its own, silently, since the first discovery
 * reports its problems), then the project's, each file once; since both are used, the
 * user's is not reported as shadowed; the skill catalog; a new registry
 * with the core tools and load_skill; a new extension host; the user's extensions; then
 * the project's trust decision (asked exactly once; only `true` trusts; a throwing policy
 * is a `PROJECT_TRUST_FAILED` diagnostic and means "not trusted"); and only after a `true`
 * the project's extensions. An extension that fails to load is a diagnostic with its code
 * and the session goes on without it. Changes nothing outside the state it returns.
 */
async function loadState(setup: RuntimeSetup, importModule: ImportModule | undefined): Promise<RuntimeState> {
  const { options, projectRoot, userRoot } = setup;
  const diagnostics: RuntimeDiagnostic[] = [];
  const roots = userRoot === undefined ? [projectRoot] : [projectRoot, userRoot];
  // The user's own AGENTS.md: in [project, user] the project's would hide it (the first root wins).
  const usersOwn = userRoot === undefined ? [] : (await discoverResources([userRoot], { onDiagnostic: () => {} })).instructions;
  const isUsersOwn = (source: string) => usersOwn.some((instruction) => instruction.source === source);
  const resources = await discoverResources(roots, {
    onDiagnostic: (found) => {
      if (found.code === "RESOURCE_SHADOWED" && isUsersOwn(found.source)) return; // not hidden: it is used too
      diagnostics.push({ area: "resources", severity: found.severity, code: found.code, source: found.source, message: found.message });
    },
  });
  const instructions = [...usersOwn, ...resources.instructions.filter((instruction) => !isUsersOwn(instruction.source))];
  const skills = await buildSkillCatalog(resources, { maxCatalogBytes: options.maxCatalogBytes ?? DEFAULT_MAX_CATALOG_BYTES });
  const loadSkill = createLoadSkillTool({ resources, hidden: skills.hidden, onLoad: setup.recordLoad, ...(options.now ? { now: options.now } : {}) });
  const registry = new ToolRegistry([...(await (options.tools ?? defaultTools)(projectRoot)), loadSkill as Tool]);
  const onDiagnostic = (diagnostic: ExtensionDiagnostic) => setup.emit({ type: "hook_diagnostic", diagnostic });
  const host = createExtensionHost(registry, { hookTimeoutMs: options.hookTimeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS, onDiagnostic });
  const extensions: ExtensionStatus[] = [];
  const load = async (source: ExtensionSource, origin: ExtensionStatus["origin"]) => {
    try {
      const loaded = await loadExtension(source, { host, isTrusted: () => true, ...(importModule ? { importModule } : {}) });
      extensions.push({ id: source.id, origin, status: loaded.status });
    } catch (error) {
      const code = codeOf(error) ?? "EXTENSION_FAILED";
      extensions.push({ id: source.id, origin, status: "failed", code });
      diagnostics.push({ area: "extensions", severity: "error", code, source: source.id, message: messageOf(error) });
    }
  };
  if (userRoot !== undefined) {
    for (const source of await extensionSourcesOf(userRoot)) await load(source, "user");
  }
  let trusted = false;
  try {
    trusted = (await options.isProjectTrusted(projectRoot)) === true;
  } catch (error) {
    diagnostics.push({ area: "trust", severity: "error", code: "PROJECT_TRUST_FAILED", source: projectRoot, message: messageOf(error) });
  }
  for (const source of await extensionSourcesOf(projectRoot)) {
    if (trusted) await load(source, "project");
    else extensions.push({ id: source.id, origin: "project", status: "skipped_untrusted" });
  }
  return { resources, instructions, skills, registry, host, extensions, diagnostics };
}

/**
 * Starts a runtime: checks the options, builds the first state (see `loadState`), reports
 * each of its diagnostics once as a `diagnostic` event, and opens an empty session.
 * `prompt` and `reload` run one after another, in call order. Rejects with
 * `RUNTIME_OPTIONS_INVALID` or `RUNTIME_PROJECT_MISSING` before anything is loaded.
 */
export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  checkOptions(options);
  const roots = await resolveRoots(options);
  const recorded: SkillLoad[] = [];
  const emit = (event: RuntimeEvent) => options.onEvent?.(structuredClone(event));
  const setup: RuntimeSetup = {
    options,
    ...roots,
    recordLoad: (load) => {
      recorded.push(structuredClone(load));
      emit({ type: "skill_load", load });
    },
    emit,
  };
  const state = await loadState(setup, options.importModule);
  for (const diagnostic of state.diagnostics) emit({ type: "diagnostic", diagnostic });
  const core: RuntimeCore = { ...setup, state, session: createSession(), loads: recorded };
  const inTurn = serialized();
  return {
    get diagnostics() {
      return structuredClone(core.state.diagnostics);
    },
    get resources() {
      return structuredClone(core.state.resources);
    },
    get instructions() {
      return structuredClone(core.state.instructions);
    },
    get catalog() {
      return structuredClone(core.state.skills);
    },
    get tools() {
      return core.state.registry.list().map((tool) => tool.name);
    },
    get extensions() {
      return structuredClone(core.state.extensions);
    },
    get messages() {
      return core.session.activePath().map((entry) => entry.message);
    },
    get skillLoads() {
      return structuredClone(core.loads);
    },
    prompt: (input, promptOptions = {}) => inTurn(() => runTurn(core, input, promptOptions)),
    reload: () => inTurn(() => reloadRuntime(core)),
  };
}

// ---------------------------------------------------------------------------
// Lab 13.5 · 一次请求：预算之内，经扩展宿主，记进 session
// ---------------------------------------------------------------------------

/**
 * The system prompt of a state: the base prompt, the instructions (the user's, then the
 * project's), the skill catalog; empty parts left out, parts joined by a blank line.
 */
function systemPromptOf(base: string, state: RuntimeState): string {
  const bodies = state.instructions.map((instruction) => instruction.body).filter((body) => body !== "");
  const instructions = bodies.length === 0 ? "" : `# Instructions\n\n${bodies.join("\n\n")}`;
  return [base, instructions, state.skills.text].filter((part) => part !== "").join("\n\n");
}

/** The error of a request that does not fit: it says every part of the sum and the limit. */
function overflowError(tokens: ContextProjection["tokens"]): RuntimeError {
  const sum = `系统提示 ${tokens.system} + 工具 ${tokens.tools} + 消息 ${tokens.messages} + 预留输出 ${tokens.reservedOutput} + 安全余量 ${tokens.safetyMargin} = ${tokens.total} tokens`;
  return new RuntimeError("RUNTIME_CONTEXT_OVERFLOW", `请求放不下，没有发送：${sum}，超过上限 ${tokens.maxTokens}`);
}

/** The result of a turn stopped by its signal. */
function abortedTurn(turns: number, messages: AgentMessage[], reason: string): TurnResult {
  return { stopReason: "aborted", turns, messages, failure: { code: "TURN_ABORTED", message: reason } };
}

/**
 * Runs one user turn on the current state. Guarantees: a signal already aborted sends and
 * records nothing (`aborted`, `TURN_ABORTED`, no message); the input's command is applied
 * first (`expandInput`); every model request is built by `buildContext` (with the
 * `context` options) from the session's active path, the specs of the registry's tools
 * (the list the loop sends with that request: the budget counts what is sent) and the
 * system prompt, which is the base prompt, then `# Instructions`, a blank line and the
 * instruction bodies (the user's, then the project's, blank lines between), then the
 * skill catalog, empty parts left out and parts joined by a blank line; a request whose
 * total (system prompt, tools, messages, reserved output, safety margin) exceeds
 * `maxTokens` is never sent: the turn rejects with `RUNTIME_CONTEXT_OVERFLOW`, whose
 * message gives each part of the total and the limit; every request that is sent is
 * reported as a `request` event first; the model and every tool get the signal, and tools
 * run through the extension host's wrapped executor; every message is appended to the
 * session as it happens, so the transcript survives the turn (and a reload). A turn that
 * ends before its first request was sent (refused, failed or aborted) leaves the session's
 * leaf where it was: nothing of it is sent later. Once a request was sent, what happened
 * stays: an aborted turn keeps its completed calls, each unanswered one paired with an
 * error result, and resolves as `aborted` with `TURN_ABORTED`; a later request that does
 * not fit rejects and keeps them too.
 */
async function runTurn(core: RuntimeCore, input: string, promptOptions: PromptOptions): Promise<TurnResult> {
  const { options, state, session } = core;
  const { signal } = promptOptions;
  if (signal?.aborted) return abortedTurn(0, [], messageOf(signal.reason));
  const before = session.leafId;
  let requests = 0;
  // Nothing of a turn that never reached the model stays in the session (nothing is deleted: the leaf moves back).
  const unlessSent = () => {
    if (requests === 0) session.branch(before);
  };
  const { maxTokens, reservedOutput, safetyMargin, estimateTokens } = options.context;
  let expanded: ExpandedInput;
  let result: LoopResult;
  try {
    expanded = await expandInput(input, state.resources, { onLoad: core.recordLoad, ...(options.now ? { now: options.now } : {}) });
    const systemPrompt = systemPromptOf(options.baseSystemPrompt ?? "", state);
    result = await runAgentLoop([], [expanded.message], {
      model: options.model,
      registry: state.registry,
      executor: state.host.wrapExecutor(createToolExecutor(state.registry, { signal })),
      maxTurns: options.maxTurns ?? DEFAULT_MAX_TURNS,
      signal,
      prepareContext: (_transcript, tools) => {
        // `tools` are the specs the loop sends with this very request: the budget counts them all.
        const planned = buildContext(session.activePath(), { maxTokens, reservedOutput, safetyMargin, estimateTokens, systemPrompt, tools });
        if (planned.tokens.total > planned.tokens.maxTokens) throw overflowError(planned.tokens);
        const names = tools.map((tool) => tool.name);
        core.emit({ type: "request", turn: ++requests, systemPrompt: planned.systemPrompt, messages: planned.messages, tools: names, tokens: planned.tokens });
        return { systemPrompt: planned.systemPrompt, messages: planned.messages };
      },
      emit: (event) => {
        if (event.type !== "message") return;
        session.append(event.message);
        core.emit({ type: "message", message: event.message });
      },
    });
  } catch (error) {
    unlessSent();
    throw error;
  }
  unlessSent();
  const kept = requests === 0 ? [] : result.messages;
  const turn: TurnResult =
    result.stopReason === "aborted"
      ? abortedTurn(result.turns, kept, result.errorMessage ?? "aborted")
      : { stopReason: result.stopReason, turns: result.turns, messages: kept };
  if (expanded.skill !== undefined) turn.skill = expanded.skill;
  if (expanded.template !== undefined) turn.template = expanded.template;
  return turn;
}

// ---------------------------------------------------------------------------
// Lab 13.6 · reload：换掉代码与清单，留下会话
// ---------------------------------------------------------------------------

let freshImports = 0;

/** Imports a new instance of the module: a query unique in this process makes Node load and evaluate the file again. */
async function importFresh(source: Readonly<ExtensionSource>): Promise<unknown> {
  const url = pathToFileURL(source.path);
  url.searchParams.set("reload", String(++freshImports));
  return import(url.href);
}

/** Names in `after` but not `before`, in `after`'s order (code-unit order where `after` is sorted). */
function added(before: readonly string[], after: readonly string[]): string[] {
  return after.filter((name) => !before.includes(name));
}

/** Names in code-unit order: every array of `RuntimeChanges` is, whatever order the state keeps them in. */
function byName(names: string[]): string[] {
  return names.sort(compareNames);
}

/** What differs between two states, by name; every array in code-unit order (not registration or load order). */
function changesBetween(before: RuntimeState, after: RuntimeState): RuntimeChanges {
  const skillNames = (state: RuntimeState) => byName(state.resources.skills.map((skill) => skill.name));
  const toolNames = (state: RuntimeState) => byName(state.registry.list().map((tool) => tool.name));
  const activeIds = (state: RuntimeState) => byName(state.extensions.filter((extension) => extension.status === "active").map((extension) => extension.id));
  const changedSkills = after.resources.skills
    .filter((skill) => {
      const old = before.resources.skills.find((candidate) => candidate.name === skill.name);
      if (old === undefined) return false;
      const wasHidden = before.skills.hidden.includes(skill.name);
      const isHidden = after.skills.hidden.includes(skill.name);
      return old.description !== skill.description || old.source !== skill.source || wasHidden !== isHidden;
    })
    .map((skill) => skill.name);
  return {
    skillsAdded: added(skillNames(before), skillNames(after)),
    skillsRemoved: added(skillNames(after), skillNames(before)),
    skillsChanged: byName(changedSkills),
    toolsAdded: added(toolNames(before), toolNames(after)),
    toolsRemoved: added(toolNames(after), toolNames(before)),
    extensionsAdded: added(activeIds(before), activeIds(after)),
    extensionsRemoved: added(activeIds(after), activeIds(before)),
    extensionsReloaded: activeIds(after).filter((id) => activeIds(before).includes(id)),
  };
}

/**
 * Reloads: builds a complete new state beside the current one (`loadState`, every
 * extension imported as a fresh module instance unless `options.importModule` is given),
 * and swaps it in only when nothing running would be lost. A reload fails when the project
 * root is gone or building the state throws, when an extension that is active now fails to
 * load, or when the trust policy throws: then the previous state keeps running untouched
 * (its catalog, tools and hooks) and the report says why. An extension is its origin and
 * its id: one that was not running (new, failing already, or a project's namesake of a
 * running user extension) and fails is only a diagnostic, as at the start.
 * On success the old extensions' tools and hooks are gone with the old state, the catalog
 * is the new snapshot, and the session is the same one. Either way the attempt's
 * diagnostics are reported once as events, then a `reload` event.
 */
async function reloadRuntime(core: RuntimeCore): Promise<ReloadReport> {
  let next: RuntimeState;
  let report: ReloadReport;
  try {
    await resolveRoots(core.options); // the project must still be there
    next = await loadState(core, core.options.importModule ?? importFresh);
  } catch (error) {
    report = { status: "failed", error: { code: codeOf(error) ?? "RELOAD_FAILED", message: messageOf(error) }, diagnostics: [] };
    core.emit({ type: "reload", report });
    return report;
  }
  for (const diagnostic of next.diagnostics) core.emit({ type: "diagnostic", diagnostic });
  // An extension is its origin and its id: a project's namesake of a running user extension is another one, not running.
  const wasRunning = (extension: ExtensionStatus) =>
    core.state.extensions.some((old) => old.status === "active" && old.origin === extension.origin && old.id === extension.id);
  const stopped = next.extensions.filter((extension) => extension.status === "failed" && wasRunning(extension)).map((extension) => extension.id);
  const lost = (diagnostic: RuntimeDiagnostic) => diagnostic.area === "trust" || (diagnostic.area === "extensions" && stopped.includes(diagnostic.source));
  const broken = next.diagnostics.find((diagnostic) => diagnostic.severity === "error" && lost(diagnostic));
  if (broken !== undefined) {
    report = { status: "failed", error: { code: broken.code, message: `${broken.source}: ${broken.message}` }, diagnostics: structuredClone(next.diagnostics) };
  } else {
    const previous = core.state;
    core.state = next;
    report = { status: "reloaded", changes: changesBetween(previous, next), diagnostics: structuredClone(next.diagnostics) };
  }
  core.emit({ type: "reload", report });
  return report;
}
