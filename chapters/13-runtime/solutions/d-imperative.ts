// @ts-nocheck: outside the course package its imports do not resolve; verify and mistakes drop this line when they build the file in place of runtime.ts.
/**
 * Chapter 13 · the runtime — a learner's solution, written imperatively.
 *
 * Plain `for…of` loops and early returns everywhere, no `reduce`, no `forEach`: the catalog
 * counts bytes with a `TextEncoder` and tests each character by its code; load_skill's
 * schema walks the argument's own property names and `Object.hasOwn`; the clocks default
 * to `new Date().getTime()`; `/template:` collects its arguments in a `Map`; one turn puts
 * the session back in a `finally`; a reload imports each extension under a random UUID
 * query (unique in the process without a counter) and says why it fails from the first
 * diagnostic that loses something. The given helpers of the starter are kept as they were
 * handed out.
 */
import type { Dirent } from "node:fs";
import { readdir, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { randomUUID } from "node:crypto";
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
  type TemplateResource,
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
// Lab 13.1 · the catalog
// ---------------------------------------------------------------------------

const encoder = new TextEncoder();

/** UTF-8 bytes of a string. */
function bytesOf(value: string): number {
  return encoder.encode(value).length;
}

/** A character the catalog drops: a control character that is not whitespace, or a bidirectional control. */
function isUnshown(character: string): boolean {
  const code = character.charCodeAt(0);
  if (code <= 0x08) return true;
  if (code >= 0x0e && code <= 0x1f) return true;
  if (code >= 0x7f && code <= 0x9f) return true;
  if (code === 0x200e || code === 0x200f) return true;
  if (code >= 0x202a && code <= 0x202e) return true;
  return code >= 0x2066 && code <= 0x2069;
}

/** One line: unshown characters out first, then each whitespace run one space, no space at either end. */
function flatLine(value: string): string {
  let kept = "";
  for (const character of value) {
    if (!isUnshown(character)) kept += character;
  }
  const words: string[] = [];
  for (const word of kept.split(/\s+/)) {
    if (word !== "") words.push(word);
  }
  return words.join(" ");
}

export async function buildSkillCatalog(catalog: ResourceCatalog, options: SkillCatalogOptions): Promise<SkillCatalog> {
  const maxBytes = options.maxCatalogBytes;
  if (typeof maxBytes !== "number" || !Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw new RuntimeError("RUNTIME_OPTIONS_INVALID", `maxCatalogBytes: a whole number of bytes >= 0 expected, got ${String(maxBytes)}`);
  }
  const ordered = catalog.skills.slice();
  ordered.sort((a, b) => compareNames(a.name, b.name));
  const result: SkillCatalog = { text: "", bytes: 0, maxBytes, listed: [], dropped: [], hidden: [] };
  const lines: string[] = [];
  let used = bytesOf(SKILL_CATALOG_HEADER) + 2;
  for (const skill of ordered) {
    if (await hiddenFromModel(skill)) {
      result.hidden.push(skill.name);
      continue;
    }
    const line = "- " + flatLine(skill.name) + ": " + flatLine(skill.description);
    const cost = bytesOf(line) + (lines.length === 0 ? 0 : 1);
    if (used + cost <= maxBytes) {
      used += cost;
      lines.push(line);
      result.listed.push(skill.name);
    } else {
      result.dropped.push(skill.name);
    }
  }
  if (lines.length > 0) result.text = SKILL_CATALOG_HEADER + "\n\n" + lines.join("\n");
  result.bytes = bytesOf(result.text);
  return result;
}

// ---------------------------------------------------------------------------
// Lab 13.2 · load_skill
// ---------------------------------------------------------------------------

const LOAD_SKILL_LIMIT = 8;
const MAX_FILES_SHOWN = 50;

/** Code points JSON.stringify leaves as they are that must still be escaped. */
function leftByJson(code: number): boolean {
  return (
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

/** A JSON string on one line. */
function asJson(value: string): string {
  let out = "";
  for (const character of JSON.stringify(value)) {
    const code = character.charCodeAt(0);
    out += character.length === 1 && leftByJson(code) ? "\\u" + code.toString(16).padStart(4, "0") : character;
  }
  return out;
}

function invalidRequest(why: string): never {
  throw new RuntimeError("skill_invalid_request", "skill_invalid_request: load_skill takes { name } or { name, resources } (" + why + ")");
}

const requestSchema: Schema<LoadSkillRequest> = {
  jsonSchema: {
    type: "object",
    properties: {
      name: { type: "string", description: "A skill's name from the catalog." },
      resources: { type: "array", items: { type: "string" }, maxItems: LOAD_SKILL_LIMIT, description: "Paths of files of that skill, relative to its folder." },
    },
    required: ["name"],
    additionalProperties: false,
  },
  parse(value: unknown): LoadSkillRequest {
    if (value === null || typeof value !== "object") return invalidRequest("not an object");
    if (Array.isArray(value)) return invalidRequest("an array");
    const prototype = Object.getPrototypeOf(value) as unknown;
    if (prototype !== null && prototype !== Object.prototype) return invalidRequest("not a plain object");
    for (const key of Object.getOwnPropertyNames(value)) {
      if (key !== "name" && key !== "resources") return invalidRequest("unknown field " + JSON.stringify(key));
    }
    if (!Object.hasOwn(value, "name")) return invalidRequest("no name");
    const record = value as Record<string, unknown>;
    const name = record["name"];
    if (typeof name !== "string") return invalidRequest("name is not a string");
    if (!Object.hasOwn(value, "resources")) return { name };
    const asked = record["resources"];
    if (!Array.isArray(asked)) return invalidRequest("resources is not an array");
    if (asked.length > LOAD_SKILL_LIMIT) return invalidRequest("more than " + LOAD_SKILL_LIMIT + " resources");
    const resources: string[] = [];
    for (let index = 0; index < asked.length; index++) {
      const item: unknown = asked[index];
      if (typeof item !== "string") return invalidRequest("resources[" + index + "] is not a string");
      resources.push(item);
    }
    return { name, resources };
  },
};

function skillLoadError(error: unknown, name: string): RuntimeError {
  switch (codeOf(error)) {
    case "SKILL_NOT_FOUND":
      return new RuntimeError("skill_not_found", "skill_not_found: no skill " + asJson(name) + " in the catalog snapshot");
    case "SKILL_CHANGED":
    case "SKILL_PATH_ESCAPE":
      return new RuntimeError("skill_changed", "skill_changed: skill " + asJson(name) + " changed on disk since the session started");
    default:
      return new RuntimeError("skill_unreadable", "skill_unreadable: the SKILL.md of skill " + asJson(name) + " cannot be read now");
  }
}

function fileLoadError(error: unknown, name: string): RuntimeError {
  switch (codeOf(error)) {
    case "SKILL_CHANGED":
      return skillLoadError(error, name);
    case "SKILL_PATH_INVALID":
    case "SKILL_PATH_ESCAPE":
    case "SKILL_RESOURCE_MISSING":
      return new RuntimeError("skill_resource_invalid", "skill_resource_invalid: skill " + asJson(name) + " has no such file");
    default:
      return new RuntimeError("skill_resource_unreadable", "skill_resource_unreadable: a file of skill " + asJson(name) + " cannot be read as text");
  }
}

function failed(name: string, error: RuntimeError): ToolOutput<LoadSkillDetails> {
  return { content: [text(error.message)], details: { name, code: error.code as SkillErrorCode }, isError: true };
}

export function createLoadSkillTool(options: LoadSkillOptions): Tool<LoadSkillRequest, LoadSkillDetails> {
  const snapshot = structuredClone(options.resources);
  const hiddenNames = new Set<string>();
  for (const name of options.hidden) hiddenNames.add(name);
  const clock = options.now ?? (() => new Date().getTime());
  const known = new Set<string>();
  for (const skill of snapshot.skills) known.add(skill.name);

  async function execute(request: LoadSkillRequest): Promise<ToolOutput<LoadSkillDetails>> {
    const { name } = request;
    const wanted = request.resources ?? [];
    if (!known.has(name)) return failed(name, skillLoadError({ code: "SKILL_NOT_FOUND" }, name));
    if (hiddenNames.has(name)) {
      return failed(name, new RuntimeError("skill_hidden", "skill_hidden: skill " + asJson(name) + " is for the user's /skill: command only"));
    }
    let activated: ActivatedSkill;
    try {
      activated = await activateSkill(snapshot, name);
    } catch (error) {
      return failed(name, skillLoadError(error, name));
    }
    if (wanted.length > 0) {
      let files: ActivatedSkillFile[];
      try {
        files = (await activateSkill(snapshot, name, { resources: wanted })).resources;
      } catch (error) {
        return failed(name, fileLoadError(error, name));
      }
      const parts: string[] = [];
      const read: string[] = [];
      for (const file of files) {
        parts.push("# File " + asJson(file.request) + " of skill " + asJson(name) + "\n\n" + file.content);
        read.push(file.request);
      }
      options.onLoad?.({ name, by: "model", at: clock() });
      return { content: [text(parts.join("\n\n"))], details: { name, resources: read } };
    }
    const listing = await skillFilesOf(activated.root);
    let shown = activated.body;
    if (listing.files.length > 0) {
      const bullets: string[] = [];
      for (const file of listing.files) bullets.push("- " + file);
      if (listing.cut) bullets.push("(only the first " + MAX_FILES_SHOWN + " files are listed)");
      const parts: string[] = [];
      if (activated.body !== "") parts.push(activated.body);
      parts.push("# Files of skill " + asJson(name), SKILL_FILES_NOTE, bullets.join("\n"));
      shown = parts.join("\n\n");
    }
    options.onLoad?.({ name, by: "model", at: clock() });
    return { content: [text(shown)], details: { name, files: [...listing.files] } };
  }

  return {
    name: "load_skill",
    description: "Loads one skill of the catalog by name (its instructions and the list of its files), or some of its files when resources are given.",
    schema: requestSchema,
    execute,
  };
}

// ---------------------------------------------------------------------------
// Lab 13.3 · user commands
// ---------------------------------------------------------------------------

/** `rest` split at its first whitespace: the word before it, and what follows the whitespace run (undefined without one). */
function firstWord(rest: string): { word: string; after: string | undefined } | undefined {
  if (rest === "" || /^\s/.test(rest)) return undefined;
  const gap = /\s+/.exec(rest);
  if (gap === null) return { word: rest, after: undefined };
  return { word: rest.slice(0, gap.index), after: rest.slice(gap.index + gap[0].length) };
}

const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

export async function expandInput(input: string, resources: ResourceCatalog, options: ExpandOptions = {}): Promise<ExpandedInput> {
  if (input.startsWith("/skill:")) {
    const parts = firstWord(input.slice("/skill:".length));
    if (parts === undefined) throw new RuntimeError("COMMAND_INVALID", "/skill: needs a skill name right after it");
    const name = parts.word;
    let body: string;
    try {
      const activated = await activateSkill(resources, name);
      body = activated.body;
    } catch (error) {
      throw skillLoadError(error, name);
    }
    const at = options.now !== undefined ? options.now() : new Date().getTime();
    options.onLoad?.({ name, by: "user", at });
    const words = (parts.after ?? "").trim();
    let message = "Skill " + JSON.stringify(name) + " (loaded by the user for this turn):\n\n" + body;
    if (words.length > 0) message += "\n\n" + words;
    return { message: userMessage(message), skill: name };
  }
  if (input.startsWith("/template:")) {
    const parts = firstWord(input.slice("/template:".length));
    if (parts === undefined) throw new RuntimeError("COMMAND_INVALID", "/template: needs a template name right after it");
    const args = new Map<string, string>();
    for (const piece of (parts.after ?? "").split(/\s+/)) {
      if (piece === "") continue;
      const equals = piece.indexOf("=");
      const key = equals < 0 ? "" : piece.slice(0, equals);
      if (!KEY.test(key)) throw new RuntimeError("COMMAND_INVALID", "an argument is key=value, not " + JSON.stringify(piece));
      if (args.has(key)) throw new RuntimeError("COMMAND_INVALID", "argument " + key + " given twice");
      args.set(key, piece.slice(equals + 1));
    }
    let template: TemplateResource | undefined;
    for (const candidate of resources.templates) {
      if (candidate.name === parts.word) {
        template = candidate;
        break;
      }
    }
    if (template === undefined) throw new RuntimeError("TEMPLATE_NOT_FOUND", "no template " + parts.word);
    return { message: renderTemplate(template, Object.fromEntries(args)), template: template.name };
  }
  return { message: userMessage(input) };
}

// ---------------------------------------------------------------------------
// Lab 13.4 · startup
// ---------------------------------------------------------------------------

async function defaultTools(projectRoot: string): Promise<Tool[]> {
  return createCodingTools(await openWorkspace(projectRoot), { shellTimeoutMs: 10_000 });
}

async function loadState(setup: RuntimeSetup, importModule: ImportModule | undefined): Promise<RuntimeState> {
  const { options, projectRoot, userRoot } = setup;
  const diagnostics: RuntimeDiagnostic[] = [];

  let usersInstructions: InstructionResource[] = [];
  if (userRoot !== undefined) {
    const alone = await discoverResources([userRoot], { onDiagnostic() {} });
    usersInstructions = alone.instructions;
  }
  const userSources = new Set<string>();
  for (const instruction of usersInstructions) userSources.add(instruction.source);

  const roots: string[] = [projectRoot];
  if (userRoot !== undefined) roots.push(userRoot);
  const resources = await discoverResources(roots, {
    onDiagnostic(found) {
      if (found.code === "RESOURCE_SHADOWED" && userSources.has(found.source)) return;
      diagnostics.push({ area: "resources", severity: found.severity, code: found.code, source: found.source, message: found.message });
    },
  });

  const instructions: InstructionResource[] = [...usersInstructions];
  for (const instruction of resources.instructions) {
    if (!userSources.has(instruction.source)) instructions.push(instruction);
  }

  const budget = options.maxCatalogBytes === undefined ? DEFAULT_MAX_CATALOG_BYTES : options.maxCatalogBytes;
  const skills = await buildSkillCatalog(resources, { maxCatalogBytes: budget });
  const loadOptions: LoadSkillOptions = { resources, hidden: skills.hidden, onLoad: setup.recordLoad };
  if (options.now !== undefined) loadOptions.now = options.now;
  const makeTools = options.tools ?? defaultTools;
  const registry = new ToolRegistry([...(await makeTools(projectRoot)), createLoadSkillTool(loadOptions) as Tool]);
  const host = createExtensionHost(registry, {
    hookTimeoutMs: options.hookTimeoutMs === undefined ? DEFAULT_HOOK_TIMEOUT_MS : options.hookTimeoutMs,
    onDiagnostic(diagnostic) {
      setup.emit({ type: "hook_diagnostic", diagnostic });
    },
  });

  const extensions: ExtensionStatus[] = [];
  async function load(source: ExtensionSource, origin: "user" | "project"): Promise<void> {
    try {
      const loaded = await loadExtension(source, importModule === undefined ? { host, isTrusted: () => true } : { host, isTrusted: () => true, importModule });
      extensions.push({ id: source.id, origin, status: loaded.status });
    } catch (error) {
      const code = codeOf(error) ?? "EXTENSION_FAILED";
      extensions.push({ id: source.id, origin, status: "failed", code });
      diagnostics.push({ area: "extensions", severity: "error", code, source: source.id, message: error instanceof Error ? error.message : String(error) });
    }
  }

  if (userRoot !== undefined) {
    for (const source of await extensionSourcesOf(userRoot)) await load(source, "user");
  }
  let answer: unknown;
  let trusted: boolean;
  try {
    answer = await options.isProjectTrusted(projectRoot);
    trusted = answer === true;
  } catch (error) {
    trusted = false;
    diagnostics.push({ area: "trust", severity: "error", code: "PROJECT_TRUST_FAILED", source: projectRoot, message: "trust policy failed: " + String(error) });
  }
  for (const source of await extensionSourcesOf(projectRoot)) {
    if (!trusted) {
      extensions.push({ id: source.id, origin: "project", status: "skipped_untrusted" });
      continue;
    }
    await load(source, "project");
  }
  return { resources, instructions, skills, registry, host, extensions, diagnostics };
}

export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  checkOptions(options);
  const roots = await resolveRoots(options);
  const loads: SkillLoad[] = [];
  function emit(event: RuntimeEvent): void {
    if (options.onEvent !== undefined) options.onEvent(structuredClone(event));
  }
  const setup: RuntimeSetup = {
    options,
    projectRoot: roots.projectRoot,
    ...(roots.userRoot === undefined ? {} : { userRoot: roots.userRoot }),
    recordLoad(load) {
      loads.push({ ...load });
      emit({ type: "skill_load", load });
    },
    emit,
  };
  const first = await loadState(setup, options.importModule);
  for (const diagnostic of first.diagnostics) emit({ type: "diagnostic", diagnostic });
  const core: RuntimeCore = { ...setup, state: first, session: createSession(), loads };
  const queue = serialized();
  const runtime: Runtime = {
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
      const names: string[] = [];
      for (const tool of core.state.registry.list()) names.push(tool.name);
      return names;
    },
    get extensions() {
      return structuredClone(core.state.extensions);
    },
    get messages() {
      const messages: AgentMessage[] = [];
      for (const entry of core.session.activePath()) messages.push(entry.message);
      return messages;
    },
    get skillLoads() {
      return structuredClone(core.loads);
    },
    prompt(input, promptOptions) {
      return queue(() => runTurn(core, input, promptOptions ?? {}));
    },
    reload() {
      return queue(() => reloadRuntime(core));
    },
  };
  return runtime;
}

// ---------------------------------------------------------------------------
// Lab 13.5 · one turn
// ---------------------------------------------------------------------------

function systemPromptFor(base: string, state: RuntimeState): string {
  const parts: string[] = [];
  if (base !== "") parts.push(base);
  const bodies: string[] = [];
  for (const instruction of state.instructions) {
    if (instruction.body !== "") bodies.push(instruction.body);
  }
  if (bodies.length > 0) parts.push("# Instructions\n\n" + bodies.join("\n\n"));
  if (state.skills.text !== "") parts.push(state.skills.text);
  return parts.join("\n\n");
}

function tooBig(tokens: ContextProjection["tokens"]): RuntimeError {
  return new RuntimeError(
    "RUNTIME_CONTEXT_OVERFLOW",
    "request not sent: system prompt " + tokens.system + " + tools " + tokens.tools + " + messages " + tokens.messages + " + reserved output " + tokens.reservedOutput + " + safety margin " + tokens.safetyMargin + " = " + tokens.total + " tokens, over the limit of " + tokens.maxTokens,
  );
}

async function runTurn(core: RuntimeCore, input: string, promptOptions: PromptOptions): Promise<TurnResult> {
  const signal = promptOptions.signal;
  if (signal !== undefined && signal.aborted) {
    return { stopReason: "aborted", turns: 0, messages: [], failure: { code: "TURN_ABORTED", message: messageOf(signal.reason) } };
  }
  const { options, state, session } = core;
  const mark = session.leafId;
  let sent = 0;
  try {
    const expandOptions: ExpandOptions = { onLoad: core.recordLoad };
    if (options.now !== undefined) expandOptions.now = options.now;
    const expanded = await expandInput(input, state.resources, expandOptions);
    const systemPrompt = systemPromptFor(options.baseSystemPrompt ?? "", state);
    const context = options.context;
    const result = await runAgentLoop([], [expanded.message], {
      model: options.model,
      registry: state.registry,
      executor: state.host.wrapExecutor(createToolExecutor(state.registry, { signal })),
      maxTurns: options.maxTurns ?? DEFAULT_MAX_TURNS,
      signal,
      prepareContext(_transcript, tools) {
        const projection = buildContext(session.activePath(), {
          maxTokens: context.maxTokens,
          reservedOutput: context.reservedOutput,
          safetyMargin: context.safetyMargin,
          estimateTokens: context.estimateTokens,
          systemPrompt,
          tools,
        });
        if (projection.tokens.total > projection.tokens.maxTokens) throw tooBig(projection.tokens);
        sent += 1;
        const names: string[] = [];
        for (const tool of tools) names.push(tool.name);
        core.emit({ type: "request", turn: sent, systemPrompt: projection.systemPrompt, messages: projection.messages, tools: names, tokens: projection.tokens });
        return { systemPrompt: projection.systemPrompt, messages: projection.messages };
      },
      emit(event) {
        if (event.type === "message") {
          session.append(event.message);
          core.emit({ type: "message", message: event.message });
        }
      },
    });
    const outcome: TurnResult = { stopReason: result.stopReason, turns: result.turns, messages: sent === 0 ? [] : result.messages };
    if (result.stopReason === "aborted") outcome.failure = { code: "TURN_ABORTED", message: result.errorMessage ?? "aborted" };
    if (expanded.skill !== undefined) outcome.skill = expanded.skill;
    if (expanded.template !== undefined) outcome.template = expanded.template;
    return outcome;
  } finally {
    if (sent === 0) session.branch(mark);
  }
}

// ---------------------------------------------------------------------------
// Lab 13.6 · reload
// ---------------------------------------------------------------------------

/** A new module instance at every call: a random query Node has never seen in this process. */
async function importAnew(source: Readonly<ExtensionSource>): Promise<unknown> {
  const url = pathToFileURL(source.path);
  url.searchParams.set("instance", randomUUID());
  return import(url.href);
}

function sortedDifference(from: Iterable<string>, without: Iterable<string>): string[] {
  const excluded = new Set(without);
  const out: string[] = [];
  for (const name of from) if (!excluded.has(name)) out.push(name);
  return out.sort(compareNames);
}

function activeExtensionIds(state: RuntimeState): string[] {
  const ids: string[] = [];
  for (const extension of state.extensions) if (extension.status === "active") ids.push(extension.id);
  return ids;
}

function changesOf(before: RuntimeState, after: RuntimeState): RuntimeChanges {
  const beforeSkills = new Map<string, SkillResource>();
  for (const skill of before.resources.skills) beforeSkills.set(skill.name, skill);
  const afterSkills = new Map<string, SkillResource>();
  for (const skill of after.resources.skills) afterSkills.set(skill.name, skill);
  const changed: string[] = [];
  for (const [name, skill] of afterSkills) {
    const old = beforeSkills.get(name);
    if (old === undefined) continue;
    const visibility = before.skills.hidden.includes(name) !== after.skills.hidden.includes(name);
    if (old.description !== skill.description || old.source !== skill.source || visibility) changed.push(name);
  }
  const toolsBefore = before.registry.list().map((tool) => tool.name);
  const toolsAfter = after.registry.list().map((tool) => tool.name);
  const activeBefore = activeExtensionIds(before);
  const activeAfter = activeExtensionIds(after);
  const kept: string[] = [];
  for (const id of activeAfter) if (activeBefore.includes(id)) kept.push(id);
  return {
    skillsAdded: sortedDifference(afterSkills.keys(), beforeSkills.keys()),
    skillsRemoved: sortedDifference(beforeSkills.keys(), afterSkills.keys()),
    skillsChanged: changed.sort(compareNames),
    toolsAdded: sortedDifference(toolsAfter, toolsBefore),
    toolsRemoved: sortedDifference(toolsBefore, toolsAfter),
    extensionsAdded: sortedDifference(activeAfter, activeBefore),
    extensionsRemoved: sortedDifference(activeBefore, activeAfter),
    extensionsReloaded: kept.sort(compareNames),
  };
}

async function reloadRuntime(core: RuntimeCore): Promise<ReloadReport> {
  const finish = (report: ReloadReport): ReloadReport => {
    core.emit({ type: "reload", report });
    return report;
  };
  let next: RuntimeState;
  try {
    await resolveRoots(core.options);
    next = await loadState(core, core.options.importModule ?? importAnew);
  } catch (error) {
    return finish({ status: "failed", error: { code: codeOf(error) ?? "RELOAD_FAILED", message: messageOf(error) }, diagnostics: [] });
  }
  for (const diagnostic of next.diagnostics) core.emit({ type: "diagnostic", diagnostic });
  for (const diagnostic of next.diagnostics) {
    if (diagnostic.severity !== "error") continue;
    if (diagnostic.area === "trust") {
      return finish({ status: "failed", error: { code: diagnostic.code, message: diagnostic.source + ": " + diagnostic.message }, diagnostics: structuredClone(next.diagnostics) });
    }
    if (diagnostic.area !== "extensions") continue;
    for (const now of next.extensions) {
      if (now.status !== "failed" || now.id !== diagnostic.source) continue;
      const wasActive = core.state.extensions.some((old) => old.status === "active" && old.origin === now.origin && old.id === now.id);
      if (wasActive) {
        return finish({ status: "failed", error: { code: diagnostic.code, message: diagnostic.source + ": " + diagnostic.message }, diagnostics: structuredClone(next.diagnostics) });
      }
    }
  }
  const previous = core.state;
  core.state = next;
  return finish({ status: "reloaded", changes: changesOf(previous, next), diagnostics: structuredClone(next.diagnostics) });
}
