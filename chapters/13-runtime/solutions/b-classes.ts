// @ts-nocheck: outside the course package its imports do not resolve; verify and mistakes drop this line when they build the file in place of runtime.ts.
/**
 * Chapter 13 · the runtime — a learner's solution, built from classes.
 *
 * Every job has an object: a `CatalogWriter` that sizes entries against the budget, a
 * `LoadSkill` tool with its `LoadRequestSchema`, a `CommandLine` that reads `/skill:` and
 * `/template:`, a `StateBuilder` that goes through one start in trust order, a `LiveRuntime`
 * that owns the session and the current state, a `Turn` that runs one prompt, and a
 * `StateComparison` that says what a reload changed. Loops are plain `for` loops over
 * characters and arrays; nothing is built with `reduce`. The given helpers of the starter
 * are kept as they were handed out.
 */
import type { Dirent } from "node:fs";
import { readdir, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parse as parseYaml } from "yaml";
import { runAgentLoop, toolSpec, type LoopStopReason } from "./agent-loop.js";
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
  type ResourceDiagnostic,
  type SkillResource,
  type TemplateResource,
} from "./resources.js";
import { createSession, type SessionTree } from "./session.js";
import { createToolExecutor, ToolRegistry, type Schema, type Tool, type ToolContext, type ToolOutput } from "./tool.js";
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

/** Turns names and descriptions into one line each, character by character. */
class OneLine {
  static #isWhitespace(character: string): boolean {
    return /^\s$/.test(character);
  }

  /** C0 and C1 controls (whitespace is handled before this is asked) and the bidirectional controls. */
  static #isInvisible(character: string): boolean {
    const point = character.codePointAt(0)!;
    if (point <= 0x1f || (point >= 0x7f && point <= 0x9f)) return true;
    if (point === 0x200e || point === 0x200f) return true;
    if (point >= 0x202a && point <= 0x202e) return true;
    return point >= 0x2066 && point <= 0x2069;
  }

  /** Whitespace runs become one space (none at either end); other controls and bidi marks are left out. */
  static of(value: string): string {
    let line = "";
    let gap = false;
    for (const character of value) {
      if (OneLine.#isWhitespace(character)) {
        gap = line !== "";
        continue;
      }
      if (OneLine.#isInvisible(character)) continue;
      if (gap) line += " ";
      gap = false;
      line += character;
    }
    return line;
  }
}

/** Collects catalog entries in name order while the budget lasts. */
class CatalogWriter {
  readonly #budget: number;
  #size: number;
  readonly #entries: string[] = [];
  readonly listed: string[] = [];
  readonly dropped: string[] = [];
  readonly hidden: string[] = [];

  constructor(budget: number) {
    this.#budget = budget;
    this.#size = Buffer.byteLength(SKILL_CATALOG_HEADER + "\n\n", "utf8");
  }

  hide(skill: SkillResource): void {
    this.hidden.push(skill.name);
  }

  offer(skill: SkillResource): void {
    const entry = "- " + OneLine.of(skill.name) + ": " + OneLine.of(skill.description);
    let cost = Buffer.byteLength(entry, "utf8");
    if (this.#entries.length > 0) cost += 1;
    if (this.#size + cost > this.#budget) {
      this.dropped.push(skill.name);
      return;
    }
    this.#size += cost;
    this.#entries.push(entry);
    this.listed.push(skill.name);
  }

  finish(): SkillCatalog {
    const section = this.#entries.length === 0 ? "" : SKILL_CATALOG_HEADER + "\n\n" + this.#entries.join("\n");
    return {
      text: section,
      bytes: Buffer.byteLength(section, "utf8"),
      maxBytes: this.#budget,
      listed: [...this.listed],
      dropped: [...this.dropped],
      hidden: [...this.hidden],
    };
  }
}

export async function buildSkillCatalog(catalog: ResourceCatalog, options: SkillCatalogOptions): Promise<SkillCatalog> {
  const budget = options.maxCatalogBytes;
  if (!Number.isInteger(budget) || budget < 0) {
    throw new RuntimeError("RUNTIME_OPTIONS_INVALID", "maxCatalogBytes must be a whole number of bytes, 0 or more: " + String(budget));
  }
  const skills: SkillResource[] = [];
  for (const skill of catalog.skills) skills.push(skill);
  skills.sort((left, right) => compareNames(left.name, right.name));
  const writer = new CatalogWriter(budget);
  for (const skill of skills) {
    if (await hiddenFromModel(skill)) writer.hide(skill);
    else writer.offer(skill);
  }
  return writer.finish();
}

// ---------------------------------------------------------------------------
// Lab 13.2 · load_skill
// ---------------------------------------------------------------------------

/** Names and paths as the model reads them: a JSON string, with nothing left that hides text or ends the line. */
class Quoted {
  static #hex(code: number): string {
    let digits = code.toString(16);
    while (digits.length < 4) digits = "0" + digits;
    return "\\u" + digits;
  }

  static #leftRaw(code: number): boolean {
    if (code >= 0x7f && code <= 0x9f) return true;
    if (code === 0x2028 || code === 0x2029 || code === 0x200e || code === 0x200f) return true;
    return (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069);
  }

  static of(value: string): string {
    let out = "";
    for (const character of JSON.stringify(value)) {
      const code = character.charCodeAt(0);
      out += Quoted.#leftRaw(code) ? Quoted.#hex(code) : character;
    }
    return out;
  }
}

class LoadRequestSchema implements Schema<LoadSkillRequest> {
  static readonly MAX_FILES = 8;

  readonly jsonSchema = {
    type: "object",
    properties: {
      name: { type: "string", description: "the skill's name, as the catalog lists it" },
      resources: { type: "array", items: { type: "string" }, maxItems: LoadRequestSchema.MAX_FILES, description: "files of the skill to read, relative to its folder" },
    },
    required: ["name"],
    additionalProperties: false,
  };

  static #refuse(reason: string): never {
    throw new RuntimeError("skill_invalid_request", "skill_invalid_request: load_skill takes { name } or { name, resources }: " + reason);
  }

  parse(value: unknown): LoadSkillRequest {
    if (value === null || typeof value !== "object" || Array.isArray(value)) LoadRequestSchema.#refuse("the arguments are not an object");
    const prototype: unknown = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) LoadRequestSchema.#refuse("the arguments are not a plain object");
    const record = value as Record<string, unknown>;
    if (!Object.hasOwn(record, "name")) LoadRequestSchema.#refuse("name is missing");
    for (const key of Object.keys(record)) {
      if (key !== "name" && key !== "resources") LoadRequestSchema.#refuse("unexpected field " + key);
    }
    const name = record["name"];
    if (typeof name !== "string") return LoadRequestSchema.#refuse("name is not a string");
    if (!Object.hasOwn(record, "resources")) return { name };
    const requested = record["resources"];
    if (!Array.isArray(requested)) return LoadRequestSchema.#refuse("resources is not an array");
    if (requested.length > LoadRequestSchema.MAX_FILES) LoadRequestSchema.#refuse("more than " + LoadRequestSchema.MAX_FILES + " files asked for");
    const files: string[] = [];
    for (let index = 0; index < requested.length; index++) {
      const file: unknown = requested[index];
      if (typeof file !== "string") LoadRequestSchema.#refuse("resources holds something other than a path");
      files.push(file as string);
    }
    return { name, resources: files };
  }
}

function skillLoadError(error: unknown, name: string): RuntimeError {
  const shown = Quoted.of(name);
  switch (codeOf(error)) {
    case "SKILL_NOT_FOUND":
      return new RuntimeError("skill_not_found", "skill_not_found: no skill called " + shown + " was in the catalog when this session took it");
    case "SKILL_CHANGED":
    case "SKILL_PATH_ESCAPE":
      return new RuntimeError("skill_changed", "skill_changed: skill " + shown + " is no longer what the catalog lists");
    default:
      return new RuntimeError("skill_unreadable", "skill_unreadable: skill " + shown + " could not be read");
  }
}

/** What went wrong reading the files a model asked of a skill whose SKILL.md was just read. */
function fileRequestError(error: unknown, name: string): RuntimeError {
  const shown = Quoted.of(name);
  switch (codeOf(error)) {
    case "SKILL_CHANGED":
      return skillLoadError(error, name);
    case "SKILL_PATH_INVALID":
    case "SKILL_PATH_ESCAPE":
    case "SKILL_RESOURCE_MISSING":
      return new RuntimeError("skill_resource_invalid", "skill_resource_invalid: skill " + shown + " holds no such file; ask for paths inside its folder");
    default:
      return new RuntimeError("skill_resource_unreadable", "skill_resource_unreadable: a file of skill " + shown + " is too large, not text or unreadable");
  }
}

class LoadSkill implements Tool<LoadSkillRequest, LoadSkillDetails> {
  readonly name = "load_skill";
  readonly description = "Load the full instructions of a skill from the skill catalog, by its name, with the list of its files; or, with resources, some of those files.";
  readonly schema = new LoadRequestSchema();
  readonly #resources: ResourceCatalog;
  readonly #hidden: ReadonlySet<string>;
  readonly #onLoad: ((load: SkillLoad) => void) | undefined;
  readonly #now: () => number;

  constructor(options: LoadSkillOptions) {
    this.#resources = structuredClone(options.resources);
    this.#hidden = new Set(options.hidden);
    this.#onLoad = options.onLoad;
    this.#now = options.now ?? Date.now;
  }

  static #failed(name: string, error: RuntimeError): ToolOutput<LoadSkillDetails> {
    return { content: [text(error.message)], details: { name, code: error.code as SkillErrorCode }, isError: true };
  }

  #known(name: string): boolean {
    for (const skill of this.#resources.skills) if (skill.name === name) return true;
    return false;
  }

  static #listed(name: string, body: string, listing: SkillFiles): string {
    if (listing.files.length === 0) return body;
    let list = "";
    for (const file of listing.files) list += (list === "" ? "" : "\n") + "- " + file;
    if (listing.cut) list += "\n(only the first " + MAX_LISTED_FILES + " files are listed)";
    const head = "# Files of skill " + Quoted.of(name) + "\n\n" + SKILL_FILES_NOTE + "\n\n" + list;
    return body === "" ? head : body + "\n\n" + head;
  }

  async #body(name: string, skill: ActivatedSkill): Promise<ToolOutput<LoadSkillDetails>> {
    const listing = await skillFilesOf(skill.root);
    return { content: [text(LoadSkill.#listed(name, skill.body, listing))], details: { name, files: listing.files } };
  }

  async #files(name: string, requests: string[]): Promise<ToolOutput<LoadSkillDetails>> {
    let read;
    try {
      read = await activateSkill(this.#resources, name, { resources: requests });
    } catch (error) {
      return LoadSkill.#failed(name, fileRequestError(error, name));
    }
    const sections: string[] = [];
    const names: string[] = [];
    for (const file of read.resources) {
      sections.push("# File " + Quoted.of(file.request) + " of skill " + Quoted.of(name) + "\n\n" + file.content);
      names.push(file.request);
    }
    return { content: [text(sections.join("\n\n"))], details: { name, resources: names } };
  }

  async execute(parameters: LoadSkillRequest, _context: ToolContext): Promise<ToolOutput<LoadSkillDetails>> {
    const name = parameters.name;
    if (!this.#known(name)) return LoadSkill.#failed(name, skillLoadError({ code: "SKILL_NOT_FOUND" }, name));
    if (this.#hidden.has(name)) {
      return LoadSkill.#failed(name, new RuntimeError("skill_hidden", "skill_hidden: skill " + Quoted.of(name) + " is disable-model-invocation; only the user can load it"));
    }
    let activated;
    try {
      activated = await activateSkill(this.#resources, name);
    } catch (error) {
      return LoadSkill.#failed(name, skillLoadError(error, name));
    }
    const requests = parameters.resources ?? [];
    const output = requests.length === 0 ? await this.#body(name, activated) : await this.#files(name, requests);
    if (output.isError === true) return output;
    if (this.#onLoad !== undefined) this.#onLoad({ name, by: "model", at: this.#now() });
    return output;
  }
}

export function createLoadSkillTool(options: LoadSkillOptions): Tool<LoadSkillRequest, LoadSkillDetails> {
  return new LoadSkill(options);
}

// ---------------------------------------------------------------------------
// Lab 13.3 · user commands
// ---------------------------------------------------------------------------

/** What follows a command's prefix: the name that must come first, and the rest. */
class CommandLine {
  readonly name: string;
  readonly rest: string;

  constructor(afterPrefix: string, usage: string) {
    let end = 0;
    while (end < afterPrefix.length && !/\s/.test(afterPrefix[end]!)) end += 1;
    if (end === 0) throw new RuntimeError("COMMAND_INVALID", usage);
    this.name = afterPrefix.slice(0, end);
    this.rest = afterPrefix.slice(end);
  }

  /** The rest as `key=value` words: keys are identifiers, each given once; a value may be empty or hold `=`. */
  arguments(): Record<string, string> {
    const values: Record<string, string> = {};
    const seen = new Set<string>();
    for (const word of this.rest.trim().split(/\s+/)) {
      if (word === "") continue;
      const equals = word.indexOf("=");
      const key = equals === -1 ? word : word.slice(0, equals);
      if (equals === -1 || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) {
        throw new RuntimeError("COMMAND_INVALID", "a template argument is key=value with a key made of letters, digits and _ (not starting with a digit): " + word);
      }
      if (seen.has(key)) throw new RuntimeError("COMMAND_INVALID", "template argument " + key + " appears twice");
      seen.add(key);
      values[key] = word.slice(equals + 1);
    }
    return values;
  }
}

const SKILL_PREFIX = "/skill:";
const TEMPLATE_PREFIX = "/template:";

async function expandSkill(afterPrefix: string, resources: ResourceCatalog, options: ExpandOptions): Promise<ExpandedInput> {
  const line = new CommandLine(afterPrefix, "/skill: needs a skill name right after the colon, as in /skill:review src/a.ts");
  let body: string;
  try {
    body = (await activateSkill(resources, line.name)).body;
  } catch (error) {
    throw skillLoadError(error, line.name);
  }
  const clock = options.now ?? Date.now;
  if (options.onLoad) options.onLoad({ name: line.name, by: "user", at: clock() });
  let message = "Skill " + JSON.stringify(line.name) + " (loaded by the user for this turn):\n\n" + body;
  const request = line.rest.trim();
  if (request.length > 0) message += "\n\n" + request;
  return { message: userMessage(message), skill: line.name };
}

function expandTemplate(afterPrefix: string, resources: ResourceCatalog): ExpandedInput {
  const line = new CommandLine(afterPrefix, "/template: needs a template name right after the colon, as in /template:review target=a.ts");
  const values = line.arguments();
  let template: TemplateResource | undefined;
  for (const candidate of resources.templates) {
    if (candidate.name === line.name) {
      template = candidate;
      break;
    }
  }
  if (template === undefined) throw new RuntimeError("TEMPLATE_NOT_FOUND", "there is no template " + line.name);
  return { message: renderTemplate(template, values), template: line.name };
}

export async function expandInput(input: string, resources: ResourceCatalog, options: ExpandOptions = {}): Promise<ExpandedInput> {
  if (input.slice(0, SKILL_PREFIX.length) === SKILL_PREFIX) return expandSkill(input.slice(SKILL_PREFIX.length), resources, options);
  if (input.slice(0, TEMPLATE_PREFIX.length) === TEMPLATE_PREFIX) return expandTemplate(input.slice(TEMPLATE_PREFIX.length), resources);
  return { message: userMessage(input) };
}

// ---------------------------------------------------------------------------
// Lab 13.4 · startup
// ---------------------------------------------------------------------------

/** Chapter 08's coding tools on the project: what the tools act on when the caller gives none. */
async function defaultTools(projectRoot: string): Promise<Tool[]> {
  return createCodingTools(await openWorkspace(projectRoot), { shellTimeoutMs: 10_000 });
}

/** One start (or reload), step by step in trust order. */
class StateBuilder {
  readonly #setup: RuntimeSetup;
  readonly #importModule: ImportModule | undefined;
  readonly #diagnostics: RuntimeDiagnostic[] = [];
  readonly #extensions: ExtensionStatus[] = [];
  #usersInstructions: InstructionResource[] = [];

  constructor(setup: RuntimeSetup, importModule: ImportModule | undefined) {
    this.#setup = setup;
    this.#importModule = importModule;
  }

  #found(diagnostic: ResourceDiagnostic): void {
    // The user's AGENTS.md is used as well as the project's: it is not hidden, whatever discovery says.
    if (diagnostic.code === "RESOURCE_SHADOWED" && this.#usersInstructions.some((instruction) => instruction.source === diagnostic.source)) return;
    this.#diagnostics.push({ area: "resources", severity: diagnostic.severity, code: diagnostic.code, source: diagnostic.source, message: diagnostic.message });
  }

  async #load(host: ExtensionHost, source: ExtensionSource, origin: "user" | "project"): Promise<void> {
    const options = this.#importModule === undefined ? { host, isTrusted: () => true } : { host, isTrusted: () => true, importModule: this.#importModule };
    try {
      const result = await loadExtension(source, options);
      this.#extensions.push({ id: source.id, origin, status: result.status });
    } catch (error) {
      const code = codeOf(error) ?? "EXTENSION_FAILED";
      this.#extensions.push({ id: source.id, origin, status: "failed", code });
      this.#diagnostics.push({ area: "extensions", severity: "error", code, source: source.id, message: messageOf(error) });
    }
  }

  async #projectTrusted(): Promise<boolean> {
    const { options, projectRoot } = this.#setup;
    try {
      const answer = await options.isProjectTrusted(projectRoot);
      return answer === true;
    } catch (error) {
      this.#diagnostics.push({ area: "trust", severity: "error", code: "PROJECT_TRUST_FAILED", source: projectRoot, message: messageOf(error) });
      return false;
    }
  }

  async build(): Promise<RuntimeState> {
    const { options, projectRoot, userRoot } = this.#setup;
    const roots = [projectRoot];
    if (userRoot !== undefined) {
      roots.push(userRoot);
      // First root wins in discovery, so the user's AGENTS.md is looked up on its own; its problems are reported below.
      const usersOwn = await discoverResources([userRoot], { onDiagnostic() {} });
      this.#usersInstructions = usersOwn.instructions;
    }
    const resources = await discoverResources(roots, { onDiagnostic: (diagnostic) => this.#found(diagnostic) });
    const instructions: InstructionResource[] = [...this.#usersInstructions];
    for (const instruction of resources.instructions) {
      if (!instructions.some((kept) => kept.source === instruction.source)) instructions.push(instruction);
    }
    const skills = await buildSkillCatalog(resources, { maxCatalogBytes: options.maxCatalogBytes ?? DEFAULT_MAX_CATALOG_BYTES });

    const tools: Tool[] = [];
    const makeTools = options.tools ?? defaultTools;
    for (const tool of await makeTools(projectRoot)) tools.push(tool);
    const loadOptions: LoadSkillOptions = { resources, hidden: skills.hidden, onLoad: (load) => this.#setup.recordLoad(load) };
    if (options.now !== undefined) loadOptions.now = options.now;
    tools.push(createLoadSkillTool(loadOptions) as Tool);
    const registry = new ToolRegistry(tools);
    const host = createExtensionHost(registry, {
      hookTimeoutMs: options.hookTimeoutMs === undefined ? DEFAULT_HOOK_TIMEOUT_MS : options.hookTimeoutMs,
      onDiagnostic: (diagnostic: ExtensionDiagnostic) => this.#setup.emit({ type: "hook_diagnostic", diagnostic }),
    });

    if (userRoot !== undefined) {
      for (const source of await extensionSourcesOf(userRoot)) await this.#load(host, source, "user");
    }
    const trusted = await this.#projectTrusted();
    const projectSources = await extensionSourcesOf(projectRoot);
    for (const source of projectSources) {
      if (!trusted) {
        this.#extensions.push({ id: source.id, origin: "project", status: "skipped_untrusted" });
        continue;
      }
      await this.#load(host, source, "project");
    }
    return { resources, instructions, skills, registry, host, extensions: this.#extensions, diagnostics: this.#diagnostics };
  }
}

async function loadState(setup: RuntimeSetup, importModule: ImportModule | undefined): Promise<RuntimeState> {
  return new StateBuilder(setup, importModule).build();
}

/** A started runtime: the current state, the session, the loads; every getter gives a copy. */
class LiveRuntime implements Runtime {
  readonly #core: RuntimeCore;
  readonly #queue = serialized();

  constructor(core: RuntimeCore) {
    this.#core = core;
  }

  get diagnostics(): RuntimeDiagnostic[] {
    return structuredClone(this.#core.state.diagnostics);
  }

  get resources(): ResourceCatalog {
    return structuredClone(this.#core.state.resources);
  }

  get instructions(): InstructionResource[] {
    return structuredClone(this.#core.state.instructions);
  }

  get catalog(): SkillCatalog {
    return structuredClone(this.#core.state.skills);
  }

  get tools(): string[] {
    const names: string[] = [];
    for (const tool of this.#core.state.registry.list()) names.push(tool.name);
    return names;
  }

  get extensions(): ExtensionStatus[] {
    return structuredClone(this.#core.state.extensions);
  }

  get messages(): AgentMessage[] {
    const messages: AgentMessage[] = [];
    for (const entry of this.#core.session.activePath()) messages.push(entry.message);
    return messages;
  }

  get skillLoads(): SkillLoad[] {
    return structuredClone(this.#core.loads);
  }

  prompt(input: string, options: PromptOptions = {}): Promise<TurnResult> {
    return this.#queue(() => runTurn(this.#core, input, options));
  }

  reload(): Promise<ReloadReport> {
    return this.#queue(() => reloadRuntime(this.#core));
  }
}

export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  checkOptions(options);
  const { projectRoot, userRoot } = await resolveRoots(options);
  const loads: SkillLoad[] = [];
  const setup: RuntimeSetup = {
    options,
    projectRoot,
    emit(event) {
      if (options.onEvent !== undefined) options.onEvent(structuredClone(event));
    },
    recordLoad(load) {
      loads.push(structuredClone(load));
      setup.emit({ type: "skill_load", load });
    },
  };
  if (userRoot !== undefined) setup.userRoot = userRoot;
  const state = await loadState(setup, options.importModule);
  for (const diagnostic of state.diagnostics) setup.emit({ type: "diagnostic", diagnostic });
  const core: RuntimeCore = Object.assign(setup, { state, session: createSession(), loads });
  return new LiveRuntime(core);
}

// ---------------------------------------------------------------------------
// Lab 13.5 · one turn
// ---------------------------------------------------------------------------

class ContextOverflow extends RuntimeError {
  constructor(tokens: ContextProjection["tokens"]) {
    super(
      "RUNTIME_CONTEXT_OVERFLOW",
      "not sent, the request is too large for the window: " +
        ["system prompt " + tokens.system, "tools " + tokens.tools, "messages " + tokens.messages, "reserved output " + tokens.reservedOutput, "safety margin " + tokens.safetyMargin].join(" + ") +
        " = " + tokens.total + " tokens > maxTokens " + tokens.maxTokens,
    );
  }
}

/** One prompt on the state that is current when it starts. */
class Turn {
  readonly #core: RuntimeCore;
  readonly #state: RuntimeState;
  #requests = 0;

  constructor(core: RuntimeCore) {
    this.#core = core;
    this.#state = core.state;
  }

  #systemPrompt(): string {
    const parts: string[] = [];
    const base = this.#core.options.baseSystemPrompt;
    if (base !== undefined && base !== "") parts.push(base);
    let instructions = "";
    for (const instruction of this.#state.instructions) {
      if (instruction.body === "") continue;
      instructions += (instructions === "" ? "# Instructions\n\n" : "\n\n") + instruction.body;
    }
    if (instructions !== "") parts.push(instructions);
    if (this.#state.skills.text !== "") parts.push(this.#state.skills.text);
    return parts.join("\n\n");
  }

  #prepare(systemPrompt: string): { systemPrompt: string; messages: AgentMessage[] } {
    const context = this.#core.options.context;
    const projection = buildContext(this.#core.session.activePath(), {
      maxTokens: context.maxTokens,
      reservedOutput: context.reservedOutput,
      safetyMargin: context.safetyMargin,
      estimateTokens: context.estimateTokens,
      systemPrompt,
      tools: this.#state.registry.list().map(toolSpec),
    });
    const tokens = projection.tokens;
    if (tokens.total > tokens.maxTokens) throw new ContextOverflow(tokens);
    this.#requests += 1;
    const tools: string[] = [];
    for (const tool of this.#state.registry.list()) tools.push(tool.name);
    this.#core.emit({ type: "request", turn: this.#requests, systemPrompt: projection.systemPrompt, messages: projection.messages, tools, tokens });
    return { systemPrompt: projection.systemPrompt, messages: projection.messages };
  }

  /** Before the first request nothing of this turn may stay: the leaf goes back to `leaf`. */
  #rewind(leaf: string | null): void {
    if (this.#requests === 0) this.#core.session.branch(leaf);
  }

  async run(input: string, signal: AbortSignal | undefined): Promise<TurnResult> {
    if (signal !== undefined && signal.aborted) {
      return { stopReason: "aborted", turns: 0, messages: [], failure: { code: "TURN_ABORTED", message: messageOf(signal.reason) } };
    }
    const leaf = this.#core.session.leafId;
    try {
      const result = await this.#play(input, signal);
      this.#rewind(leaf);
      if (this.#requests === 0) result.messages = [];
      return result;
    } catch (error) {
      this.#rewind(leaf);
      throw error;
    }
  }

  async #play(input: string, signal: AbortSignal | undefined): Promise<TurnResult> {
    const core = this.#core;
    const expandOptions: ExpandOptions = { onLoad: (load) => core.recordLoad(load) };
    if (core.options.now !== undefined) expandOptions.now = core.options.now;
    const expanded = await expandInput(input, this.#state.resources, expandOptions);
    const systemPrompt = this.#systemPrompt();
    const registry = this.#state.registry;
    const loop = await runAgentLoop([], [expanded.message], {
      model: core.options.model,
      registry,
      executor: this.#state.host.wrapExecutor(createToolExecutor(registry, { signal })),
      maxTurns: core.options.maxTurns === undefined ? DEFAULT_MAX_TURNS : core.options.maxTurns,
      signal,
      prepareContext: () => this.#prepare(systemPrompt),
      emit: (event) => {
        if (event.type !== "message") return;
        core.session.append(event.message);
        core.emit({ type: "message", message: event.message });
      },
    });
    const result: TurnResult = { stopReason: loop.stopReason, turns: loop.turns, messages: loop.messages };
    if (loop.stopReason === "aborted") result.failure = { code: "TURN_ABORTED", message: loop.errorMessage ?? "the turn was aborted" };
    if (expanded.skill !== undefined) result.skill = expanded.skill;
    if (expanded.template !== undefined) result.template = expanded.template;
    return result;
  }
}

async function runTurn(core: RuntimeCore, input: string, options: PromptOptions): Promise<TurnResult> {
  return new Turn(core).run(input, options.signal);
}

// ---------------------------------------------------------------------------
// Lab 13.6 · reload
// ---------------------------------------------------------------------------

/** Imports every module as a new instance: each URL carries a number this process never used before. */
class FreshImporter {
  static #next = 1;

  static async load(source: Readonly<ExtensionSource>): Promise<unknown> {
    const url = new URL(pathToFileURL(source.path));
    url.search = "?instance=" + FreshImporter.#next;
    FreshImporter.#next += 1;
    return await import(url.href);
  }
}

/** Name lists of two states, and what differs between them. */
class StateComparison {
  readonly #before: RuntimeState;
  readonly #after: RuntimeState;

  constructor(before: RuntimeState, after: RuntimeState) {
    this.#before = before;
    this.#after = after;
  }

  static #missingFrom(names: readonly string[], others: readonly string[]): string[] {
    const missing: string[] = [];
    for (const name of names) if (!others.includes(name)) missing.push(name);
    return missing;
  }

  static #skills(state: RuntimeState): string[] {
    const names: string[] = [];
    for (const skill of state.resources.skills) names.push(skill.name);
    return names;
  }

  static #tools(state: RuntimeState): string[] {
    const names: string[] = [];
    for (const tool of state.registry.list()) names.push(tool.name);
    return names;
  }

  static #active(state: RuntimeState): string[] {
    const ids: string[] = [];
    for (const extension of state.extensions) if (extension.status === "active") ids.push(extension.id);
    return ids;
  }

  /** Names in code-unit order: a report's arrays never follow registration or load order. */
  static #sorted(names: string[]): string[] {
    return names.sort(compareNames);
  }

  /** The ids of the new state's failed extensions that ran before: the same origin and id, active then. */
  #stopped(): string[] {
    const stopped: string[] = [];
    for (const extension of this.#after.extensions) {
      if (extension.status !== "failed") continue;
      let ran = false;
      for (const old of this.#before.extensions) if (old.status === "active" && old.origin === extension.origin && old.id === extension.id) ran = true;
      if (ran) stopped.push(extension.id);
    }
    return stopped;
  }

  #changedSkills(): string[] {
    const changed: string[] = [];
    for (const skill of this.#after.resources.skills) {
      let old: SkillResource | undefined;
      for (const candidate of this.#before.resources.skills) if (candidate.name === skill.name) old = candidate;
      if (old === undefined) continue;
      const visibilityChanged = this.#before.skills.hidden.includes(skill.name) !== this.#after.skills.hidden.includes(skill.name);
      if (old.description !== skill.description || old.source !== skill.source || visibilityChanged) changed.push(skill.name);
    }
    return changed;
  }

  changes(): RuntimeChanges {
    const before = this.#before;
    const after = this.#after;
    const activeBefore = StateComparison.#active(before);
    const activeAfter = StateComparison.#active(after);
    const reloaded: string[] = [];
    for (const id of activeAfter) if (activeBefore.includes(id)) reloaded.push(id);
    const changes: RuntimeChanges = {
      skillsAdded: StateComparison.#missingFrom(StateComparison.#skills(after), StateComparison.#skills(before)),
      skillsRemoved: StateComparison.#missingFrom(StateComparison.#skills(before), StateComparison.#skills(after)),
      skillsChanged: this.#changedSkills(),
      toolsAdded: StateComparison.#missingFrom(StateComparison.#tools(after), StateComparison.#tools(before)),
      toolsRemoved: StateComparison.#missingFrom(StateComparison.#tools(before), StateComparison.#tools(after)),
      extensionsAdded: StateComparison.#missingFrom(activeAfter, activeBefore),
      extensionsRemoved: StateComparison.#missingFrom(activeBefore, activeAfter),
      extensionsReloaded: reloaded,
    };
    for (const names of Object.values(changes)) StateComparison.#sorted(names);
    return changes;
  }

  /** The first error of the new state that would lose something running now: a trust failure, or an active extension that failed. */
  loss(): RuntimeDiagnostic | undefined {
    const stopped = this.#stopped();
    for (const diagnostic of this.#after.diagnostics) {
      if (diagnostic.severity !== "error") continue;
      if (diagnostic.area === "trust") return diagnostic;
      if (diagnostic.area === "extensions" && stopped.includes(diagnostic.source)) return diagnostic;
    }
    return undefined;
  }
}

async function reloadRuntime(core: RuntimeCore): Promise<ReloadReport> {
  let report: ReloadReport;
  let next: RuntimeState | undefined;
  try {
    await resolveRoots(core.options);
    next = await loadState(core, core.options.importModule ?? ((source) => FreshImporter.load(source)));
  } catch (error) {
    report = { status: "failed", error: { code: codeOf(error) ?? "RELOAD_FAILED", message: messageOf(error) }, diagnostics: [] };
  }
  if (next !== undefined) {
    for (const diagnostic of next.diagnostics) core.emit({ type: "diagnostic", diagnostic });
    const comparison = new StateComparison(core.state, next);
    const loss = comparison.loss();
    if (loss === undefined) {
      report = { status: "reloaded", changes: comparison.changes(), diagnostics: structuredClone(next.diagnostics) };
      core.state = next;
    } else {
      report = { status: "failed", error: { code: loss.code, message: loss.source + ": " + loss.message }, diagnostics: structuredClone(next.diagnostics) };
    }
  }
  core.emit({ type: "reload", report: report! });
  return report!;
}
