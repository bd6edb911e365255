// @ts-nocheck: written blind from the chapter text by a learner who saw only the practice folder; verify and mistakes drop this line when they build it in place of runtime.ts.
/**
 * Chapter 13 · the runtime — the practice starter.
 *
 * The public types and the exported functions are fixed (the tests and `npm start` use
 * them); every lab's function is a construction site named after its lab. Build them in
 * order: Lab 13.1 skill catalog → 13.2 load_skill → 13.3 user commands → 13.4 startup →
 * 13.5 one turn → 13.6 reload. Add private helpers as you need them; keep the exports and
 * the signatures of the functions marked 🔨 (the labs call them, and so does the fault
 * exercise).
 *
 * Run one lab:  npm run build -w @pi/course, then
 *   node --test --test-name-pattern="Lab 13.1" packages/pi-course/dist/test/13-runtime.test.js
 *
 * You write this file only. The declarations without a 🔨 mark are given: they are the
 * reference's own code (reading the disable-model-invocation flag, listing a skill's
 * files and the extension files, checking options, the queue that runs calls one after another, the default core
 * tools), so that the labs are about how the parts meet, not about plumbing. Chapter 12's
 * `resources.ts` beside this file is the finished reference: use its functions.
 */
// The imports below are the tools the reference uses; unused ones are fine while you build.
import type { Dirent } from "node:fs";
import { readdir, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parse as parseYaml } from "yaml";
import { runAgentLoop, toolSpec, type LoopResult, type LoopStopReason } from "./agent-loop.js";
import { abortReason, errorMessage } from "./async.js";
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
  ResourceError,
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

/** The scaffold's "not built yet" error: its message names the lab that builds the code. */
function labError(lab: string): Error {
  return new Error(`${lab} 尚未实现`);
}

// ---------------------------------------------------------------------------
// Lab 13.1 · 技能清单只给名字和描述，按字节预算
// ---------------------------------------------------------------------------

// 🔨 Lab 13.1：先写一个 helper，把一个名字或描述变成一行，按顺序三步：先去掉不是空白的控制字符
//    （U+0000–U+001F、U+007F–U+009F 里除了换行、回车、制表符这些空白的）和双向控制符（U+200E、U+200F、
//    U+202A–U+202E、U+2066–U+2069）；再把每一段空白（换行、制表符也算）换成一个空格；最后去掉首尾空白。

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
const CATALOG_INVISIBLE = /[\u0000-\u0008\u000E-\u001F\u007F-\u009F\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/** One line: non-whitespace controls and bidi controls removed, whitespace runs one space, trimmed. */
function oneLine(value: string): string {
  return value.replace(CATALOG_INVISIBLE, "").replace(/\s+/g, " ").trim();
}

function utf8Bytes(value: string): number {
  return Buffer.byteLength(value, "utf8");
}

export async function buildSkillCatalog(catalog: ResourceCatalog, options: SkillCatalogOptions): Promise<SkillCatalog> {
  const maxBytes = (options as Partial<SkillCatalogOptions> | undefined)?.maxCatalogBytes;
  if (typeof maxBytes !== "number" || !Number.isInteger(maxBytes) || maxBytes < 0) {
    throw new RuntimeError("RUNTIME_OPTIONS_INVALID", `maxCatalogBytes must be an integer >= 0, got ${String(maxBytes)}`);
  }
  const skills = [...catalog.skills].sort((a, b) => compareNames(a.name, b.name));
  const hiddenFlags = await Promise.all(skills.map((skill) => hiddenFromModel(skill)));
  const listed: string[] = [];
  const dropped: string[] = [];
  const hidden: string[] = [];
  const lines: string[] = [];
  let used = utf8Bytes(`${SKILL_CATALOG_HEADER}\n\n`);
  skills.forEach((skill, index) => {
    if (hiddenFlags[index]) {
      hidden.push(skill.name);
      return;
    }
    const line = `- ${oneLine(skill.name)}: ${oneLine(skill.description)}`;
    const cost = utf8Bytes(line) + (lines.length > 0 ? 1 : 0);
    if (used + cost <= maxBytes) {
      used += cost;
      lines.push(line);
      listed.push(skill.name);
    } else {
      dropped.push(skill.name);
    }
  });
  const text = lines.length === 0 ? "" : `${SKILL_CATALOG_HEADER}\n\n${lines.join("\n")}`;
  return { text, bytes: utf8Bytes(text), maxBytes, listed, dropped, hidden };
}

// ---------------------------------------------------------------------------
// Lab 13.2 · load_skill 按名字加载，正文和文件每次现读
// ---------------------------------------------------------------------------

// 🔨 Lab 13.2：先写 load_skill 的 schema：一个带 jsonSchema（给模型看：对象，必填的字符串 name，可选的字符串数组
//    resources，最多 8 项，不许别的字段）和 parse 的对象。parse 不合格时抛 RuntimeError，code 是 skill_invalid_request，
//    消息以这个 code 加冒号开头。name 只要是字符串就过 schema：它是不是技能名，由快照说了算（execute 里查）。
// 🔨 Lab 13.2：再写一个给名字和路径加引号的 helper：JSON.stringify 之后，把它不转义的 U+007F–U+009F、U+2028、U+2029
//    和双向控制符也写成 \uXXXX（§C4.7）；每条消息里的技能名、每个文件标题里的名字和路径都经过它。
// 🔨 Lab 13.2：文件请求的错误另写一个翻译函数（§C4.6 的表）：SKILL_CHANGED 照旧是 skill_changed，
//    SKILL_PATH_INVALID、SKILL_PATH_ESCAPE、SKILL_RESOURCE_MISSING 是 skill_resource_invalid，其余是 skill_resource_unreadable。

const MAX_RESOURCES_PER_LOAD = 8;

function invalidRequest(reason: string): RuntimeError {
  return new RuntimeError("skill_invalid_request", `skill_invalid_request: ${reason}`);
}

/** Reads an own data field, or reports it absent; an accessor is not an argument. */
function ownField(input: object, key: string): { present: boolean; value?: unknown } {
  const descriptor = Object.getOwnPropertyDescriptor(input, key);
  if (descriptor === undefined) return { present: false };
  if (!("value" in descriptor)) throw invalidRequest(`${key} must be a plain value`);
  return { present: true, value: descriptor.value };
}

/** The schema of load_skill: `{ name }` or `{ name, resources }`, checked before any file is touched. */
const loadSkillSchema: Schema<LoadSkillRequest> = {
  jsonSchema: {
    type: "object",
    properties: {
      name: { type: "string" },
      resources: { type: "array", items: { type: "string" }, maxItems: MAX_RESOURCES_PER_LOAD },
    },
    required: ["name"],
    additionalProperties: false,
  },
  parse(value: unknown): LoadSkillRequest {
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw invalidRequest("the arguments must be an object");
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) throw invalidRequest("the arguments must be a plain object");
    for (const key of Reflect.ownKeys(value)) {
      if (key !== "name" && key !== "resources") {
        throw invalidRequest(`unknown field ${typeof key === "string" ? quoted(key) : "(a symbol)"}; only name and resources are allowed`);
      }
    }
    const name = ownField(value, "name");
    if (!name.present || typeof name.value !== "string") throw invalidRequest("name must be a string");
    const resources = ownField(value, "resources");
    if (!resources.present) return { name: name.value };
    const list = resources.value;
    if (!Array.isArray(list)) throw invalidRequest("resources must be an array of paths");
    if (list.length > MAX_RESOURCES_PER_LOAD) throw invalidRequest(`resources holds at most ${MAX_RESOURCES_PER_LOAD} paths`);
    const paths: string[] = [];
    for (let index = 0; index < list.length; index++) {
      const item: unknown = list[index];
      if (typeof item !== "string") throw invalidRequest("every entry of resources must be a string");
      paths.push(item);
    }
    return { name: name.value, resources: paths };
  },
};

const UNQUOTED_BY_JSON = /[\u007F-\u009F\u2028\u2029\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/** A name or path as a one-line JSON string: JSON.stringify, then the characters it leaves as they are. */
function quoted(value: string): string {
  return JSON.stringify(value).replace(UNQUOTED_BY_JSON, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** The error of a requested file of skill `name` (§C4.6); never the original message. */
function skillResourceError(error: unknown, name: string): RuntimeError {
  const code = codeOf(error);
  if (code === "SKILL_CHANGED") return new RuntimeError("skill_changed", `skill_changed: 技能 ${quoted(name)} 在读取时变了（改了名字、被删除或被换掉）`);
  if (code === "SKILL_PATH_INVALID" || code === "SKILL_PATH_ESCAPE" || code === "SKILL_RESOURCE_MISSING") {
    return new RuntimeError("skill_resource_invalid", `skill_resource_invalid: 请求的文件不是技能 ${quoted(name)} 目录里的一个文件`);
  }
  return new RuntimeError("skill_resource_unreadable", `skill_resource_unreadable: 技能 ${quoted(name)} 请求的文件不能作为文本交出（太大、不是文本或读不出来）`);
}

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
    return new RuntimeError("skill_changed", `skill_changed: 技能 ${quoted(name)} 启动之后变了（改了名字、被删除或被换成指向别处的链接）；reload 之后再试`);
  }
  return new RuntimeError("skill_unreadable", `skill_unreadable: 技能 ${quoted(name)} 的说明读不出来（太大、不是文本或 frontmatter 没有结束）`);
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
  const snapshot = structuredClone(options.resources);
  const hidden = [...options.hidden];
  const now = options.now ?? Date.now;
  const failed = (name: string, error: RuntimeError): ToolOutput<LoadSkillDetails> => ({
    isError: true,
    content: [text(error.message)],
    details: { name, code: error.code as SkillErrorCode },
  });
  return {
    name: "load_skill",
    description:
      "Loads the instructions of one skill from the skill catalog, by its name. Call it again with resources (paths relative to the skill's folder) to read files the skill bundles.",
    schema: loadSkillSchema,
    async execute({ name, resources }) {
      if (!snapshot.skills.some((skill) => skill.name === name)) {
        return failed(name, skillLoadError(new ResourceError("SKILL_NOT_FOUND", "not in the snapshot"), name));
      }
      if (hidden.includes(name)) {
        return failed(name, new RuntimeError("skill_hidden", `skill_hidden: 技能 ${quoted(name)} 只能由用户加载（/skill:），模型不能自己加载`));
      }
      let skill: ActivatedSkill;
      try {
        skill = await activateSkill(snapshot, name);
      } catch (error) {
        return failed(name, skillLoadError(error, name));
      }
      let output: ToolOutput<LoadSkillDetails>;
      if (resources === undefined || resources.length === 0) {
        const { files, cut } = await skillFilesOf(skill.root);
        let body = skill.body;
        if (files.length > 0) {
          const list = files.map((file) => `- ${file}`);
          if (cut) list.push(`(only the first ${MAX_LISTED_FILES} files are listed)`);
          const section = [`# Files of skill ${quoted(name)}`, SKILL_FILES_NOTE, list.join("\n")].join("\n\n");
          body = body === "" ? section : `${body}\n\n${section}`;
        }
        output = { isError: false, content: [text(body)], details: { name, files } };
      } else {
        let read: ActivatedSkillFile[];
        try {
          read = (await activateSkill(snapshot, name, { resources })).resources;
        } catch (error) {
          return failed(name, skillResourceError(error, name));
        }
        const sections = read.map((file) => `# File ${quoted(file.request)} of skill ${quoted(name)}\n\n${file.content}`);
        output = { isError: false, content: [text(sections.join("\n\n"))], details: { name, resources: read.map((file) => file.request) } };
      }
      options.onLoad?.({ name, by: "model", at: now() });
      return output;
    },
  };
}

// ---------------------------------------------------------------------------
// Lab 13.3 · 用户命令先于模型
// ---------------------------------------------------------------------------

// 🔨 Lab 13.3：建议写两个 helper，一个处理 /skill: 之后的部分，一个处理 /template: 之后的部分。

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
const SKILL_PREFIX = "/skill:";
const TEMPLATE_PREFIX = "/template:";
const TEMPLATE_ARGUMENT = /^([A-Za-z_][A-Za-z0-9_]*)=([\s\S]*)$/;

/** The name right after a command's prefix (up to the first whitespace), and what follows it. */
function commandName(rest: string, prefix: string): { name: string; after: string } {
  const name = /^\S+/.exec(rest)?.[0];
  if (name === undefined) throw new RuntimeError("COMMAND_INVALID", `${prefix} needs a name right after it`);
  return { name, after: rest.slice(name.length) };
}

async function expandSkill(rest: string, resources: ResourceCatalog, options: ExpandOptions): Promise<ExpandedInput> {
  const { name, after } = commandName(rest, SKILL_PREFIX);
  const words = after.trim();
  let skill: ActivatedSkill;
  try {
    skill = await activateSkill(resources, name);
  } catch (error) {
    throw skillLoadError(error, name);
  }
  const parts = [`Skill ${JSON.stringify(name)} (loaded by the user for this turn):`, skill.body];
  if (words !== "") parts.push(words);
  const message = userMessage(parts.join("\n\n"));
  options.onLoad?.({ name, by: "user", at: (options.now ?? Date.now)() });
  return { message, skill: name };
}

function expandTemplate(rest: string, resources: ResourceCatalog): ExpandedInput {
  const { name, after } = commandName(rest, TEMPLATE_PREFIX);
  const args: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const part of after.split(/\s+/)) {
    if (part === "") continue;
    const match = TEMPLATE_ARGUMENT.exec(part);
    if (match === null) throw new RuntimeError("COMMAND_INVALID", `template argument ${quoted(part)} is not key=value`);
    const [, key, value] = match as unknown as [string, string, string];
    if (Object.hasOwn(args, key)) throw new RuntimeError("COMMAND_INVALID", `template argument ${quoted(key)} is given twice`);
    Object.defineProperty(args, key, { value, enumerable: true, writable: true, configurable: true });
  }
  const template = resources.templates.find((candidate) => candidate.name === name);
  if (template === undefined) throw new RuntimeError("TEMPLATE_NOT_FOUND", `no template named ${quoted(name)}`);
  return { message: renderTemplate(template, args), template: name };
}

export async function expandInput(input: string, resources: ResourceCatalog, options: ExpandOptions = {}): Promise<ExpandedInput> {
  if (input.startsWith(SKILL_PREFIX)) return expandSkill(input.slice(SKILL_PREFIX.length), resources, options);
  if (input.startsWith(TEMPLATE_PREFIX)) return expandTemplate(input.slice(TEMPLATE_PREFIX.length), resources);
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
  const found: RuntimeDiagnostic[] = [];
  const roots = userRoot === undefined ? [projectRoot] : [projectRoot, userRoot];
  const resources = await discoverResources(roots, {
    onDiagnostic(diagnostic) {
      const { severity, code, source, message } = diagnostic;
      found.push({ area: "resources", severity, code, source, message });
    },
  });

  let userInstructions: InstructionResource[] = [];
  if (userRoot !== undefined) {
    const own = await discoverResources([userRoot], { onDiagnostic() {} });
    userInstructions = own.instructions;
  }
  const userSources = new Set(userInstructions.map((instruction) => instruction.source));
  const instructions = [...userInstructions, ...resources.instructions.filter((instruction) => !userSources.has(instruction.source))];
  const diagnostics = found.filter((diagnostic) => !(diagnostic.code === "RESOURCE_SHADOWED" && userSources.has(diagnostic.source)));

  const skills = await buildSkillCatalog(resources, { maxCatalogBytes: options.maxCatalogBytes ?? DEFAULT_MAX_CATALOG_BYTES });
  const coreTools = options.tools === undefined ? await defaultTools(projectRoot) : await options.tools(projectRoot);
  const loadSkill = createLoadSkillTool({
    resources,
    hidden: skills.hidden,
    onLoad: (load) => setup.recordLoad(load),
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  const registry = new ToolRegistry([...coreTools, loadSkill as Tool]);
  const host = createExtensionHost(registry, {
    hookTimeoutMs: options.hookTimeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS,
    onDiagnostic: (diagnostic) => setup.emit({ type: "hook_diagnostic", diagnostic }),
  });

  const extensions: ExtensionStatus[] = [];
  const load = async (source: ExtensionSource, origin: ExtensionStatus["origin"]) => {
    try {
      await loadExtension(source, { host, isTrusted: () => true, ...(importModule === undefined ? {} : { importModule }) });
      extensions.push({ id: source.id, origin, status: "active" });
    } catch (error) {
      const code = codeOf(error) ?? "EXTENSION_FACTORY_FAILED";
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
    diagnostics.push({
      area: "trust",
      severity: "error",
      code: "PROJECT_TRUST_FAILED",
      source: projectRoot,
      message: `the project trust policy failed, so the project is not trusted: ${messageOf(error)}`,
    });
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
  const loads: SkillLoad[] = [];
  const emit = (event: RuntimeEvent) => {
    options.onEvent?.(structuredClone(event));
  };
  const setup: RuntimeSetup = {
    options,
    projectRoot: roots.projectRoot,
    ...(roots.userRoot === undefined ? {} : { userRoot: roots.userRoot }),
    recordLoad(load) {
      loads.push({ ...load });
      emit({ type: "skill_load", load: { ...load } });
    },
    emit,
  };
  const state = await loadState(setup, options.importModule);
  for (const diagnostic of state.diagnostics) emit({ type: "diagnostic", diagnostic });
  const core: RuntimeCore = { ...setup, state, session: createSession(), loads };
  const queue = serialized();
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
    prompt(input: string, promptOptions?: PromptOptions) {
      return queue(() => runTurn(core, input, promptOptions ?? {}));
    },
    reload() {
      return queue(() => reloadRuntime(core));
    },
  };
}

// ---------------------------------------------------------------------------
// Lab 13.5 · 一次请求：预算之内，经扩展宿主，记进 session
// ---------------------------------------------------------------------------

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
/** The system prompt of a state: the base prompt, the instructions, the catalog; empty parts left out. */
function systemPromptOf(base: string, state: RuntimeState): string {
  const parts: string[] = [];
  if (base !== "") parts.push(base);
  const bodies = state.instructions.map((instruction) => instruction.body).filter((body) => body !== "");
  if (bodies.length > 0) parts.push(["# Instructions", ...bodies].join("\n\n"));
  if (state.skills.text !== "") parts.push(state.skills.text);
  return parts.join("\n\n");
}

function abortedMessage(signal: AbortSignal): string {
  return errorMessage(abortReason(signal));
}

async function runTurn(core: RuntimeCore, input: string, promptOptions: PromptOptions): Promise<TurnResult> {
  const { signal } = promptOptions;
  if (signal?.aborted) {
    return { stopReason: "aborted", turns: 0, messages: [], failure: { code: "TURN_ABORTED", message: abortedMessage(signal) } };
  }
  const { options } = core;
  const state = core.state;
  const before = core.session.leafId;
  let requests = 0;
  try {
    const expanded = await expandInput(input, state.resources, {
      onLoad: (load) => core.recordLoad(load),
      ...(options.now === undefined ? {} : { now: options.now }),
    });
    const systemPrompt = systemPromptOf(options.baseSystemPrompt ?? "", state);
    const budget = options.context;
    const executor = state.host.wrapExecutor(createToolExecutor(state.registry, signal === undefined ? {} : { signal }));
    const result: LoopResult = await runAgentLoop([], [expanded.message], {
      model: options.model,
      registry: state.registry,
      executor,
      systemPrompt,
      maxTurns: options.maxTurns ?? DEFAULT_MAX_TURNS,
      ...(signal === undefined ? {} : { signal }),
      prepareContext() {
        const projection = buildContext(core.session.activePath(), {
          maxTokens: budget.maxTokens,
          systemPrompt,
          ...(budget.reservedOutput === undefined ? {} : { reservedOutput: budget.reservedOutput }),
          ...(budget.safetyMargin === undefined ? {} : { safetyMargin: budget.safetyMargin }),
          ...(budget.estimateTokens === undefined ? {} : { estimateTokens: budget.estimateTokens }),
          tools: state.registry.list().map(toolSpec),
        });
        const { tokens } = projection;
        if (tokens.total > tokens.maxTokens) {
          throw new RuntimeError(
            "RUNTIME_CONTEXT_OVERFLOW",
            `the request does not fit the context window, so it was not sent: system prompt ${tokens.system} + tools ${tokens.tools} + messages ${tokens.messages} + reserved output ${tokens.reservedOutput} + safety margin ${tokens.safetyMargin} = ${tokens.total} > maxTokens ${tokens.maxTokens}`,
          );
        }
        requests++;
        core.emit({
          type: "request",
          turn: requests,
          systemPrompt: projection.systemPrompt,
          messages: projection.messages,
          tools: state.registry.list().map((tool) => tool.name),
          tokens: { ...tokens },
        });
        return { systemPrompt: projection.systemPrompt, messages: projection.messages };
      },
      emit(event) {
        if (event.type !== "message") return;
        core.session.append(event.message);
        core.emit({ type: "message", message: event.message });
      },
    });
    if (requests === 0) core.session.branch(before);
    const turn: TurnResult = {
      stopReason: result.stopReason,
      turns: result.turns,
      messages: requests === 0 ? [] : result.messages,
    };
    if (expanded.skill !== undefined) turn.skill = expanded.skill;
    if (expanded.template !== undefined) turn.template = expanded.template;
    if (result.stopReason === "aborted") {
      turn.failure = { code: "TURN_ABORTED", message: result.errorMessage ?? (signal ? abortedMessage(signal) : "the turn was aborted") };
    }
    return turn;
  } catch (error) {
    if (requests === 0) core.session.branch(before);
    throw error;
  }
}

// ---------------------------------------------------------------------------
// Lab 13.6 · reload：换掉代码与清单，留下会话
// ---------------------------------------------------------------------------

// 🔨 Lab 13.6：先写一个 helper，每次都 import 出扩展模块的新实例：在文件 URL 上加一个本进程里不会重复的查询参数，
//    Node 就会重新读取、重新执行这个文件。再写一个比较两个状态的 helper（技能、工具、扩展，按名字）。

let importGeneration = 0;

/** Imports an extension as a new module instance: a query Node has not seen in this process makes it read and run the file again. */
async function importFresh(source: Readonly<ExtensionSource>): Promise<unknown> {
  importGeneration++;
  const url = pathToFileURL(source.path);
  url.searchParams.set("reload", String(importGeneration));
  return import(url.href);
}

function sortedNames(names: Iterable<string>): string[] {
  return [...new Set(names)].sort(compareNames);
}

/** What changed between two states, by name. */
function changesBetween(before: RuntimeState, after: RuntimeState): RuntimeChanges {
  const skillsBefore = new Map(before.resources.skills.map((skill) => [skill.name, skill]));
  const skillsAfter = new Map(after.resources.skills.map((skill) => [skill.name, skill]));
  const hiddenBefore = new Set(before.skills.hidden);
  const hiddenAfter = new Set(after.skills.hidden);
  const skillsChanged = [...skillsAfter.values()].filter((skill) => {
    const old = skillsBefore.get(skill.name);
    return (
      old !== undefined &&
      (old.description !== skill.description || old.source !== skill.source || hiddenBefore.has(skill.name) !== hiddenAfter.has(skill.name))
    );
  });
  const toolsBefore = new Set(before.registry.list().map((tool) => tool.name));
  const toolsAfter = new Set(after.registry.list().map((tool) => tool.name));
  const activeIds = (state: RuntimeState) => new Set(state.extensions.filter((extension) => extension.status === "active").map((extension) => extension.id));
  const activeBefore = activeIds(before);
  const activeAfter = activeIds(after);
  return {
    skillsAdded: sortedNames([...skillsAfter.keys()].filter((name) => !skillsBefore.has(name))),
    skillsRemoved: sortedNames([...skillsBefore.keys()].filter((name) => !skillsAfter.has(name))),
    skillsChanged: sortedNames(skillsChanged.map((skill) => skill.name)),
    toolsAdded: sortedNames([...toolsAfter].filter((name) => !toolsBefore.has(name))),
    toolsRemoved: sortedNames([...toolsBefore].filter((name) => !toolsAfter.has(name))),
    extensionsAdded: sortedNames([...activeAfter].filter((id) => !activeBefore.has(id))),
    extensionsRemoved: sortedNames([...activeBefore].filter((id) => !activeAfter.has(id))),
    extensionsReloaded: sortedNames([...activeAfter].filter((id) => activeBefore.has(id))),
  };
}

/**
 * Reloads: builds a complete new state beside the current one (`loadState`, every
 * extension imported as a fresh module instance unless `options.importModule` is given),
 * and swaps it in only when nothing running would be lost. A reload fails when the project
 * root is gone or building the state throws, when an extension that is active now fails to
 * load, or when the trust policy throws: then the previous state keeps running untouched
 * (its catalog, tools and hooks) and the report says why. An extension that was not
 * running (new, or failing already) and fails is only a diagnostic, as at the start.
 * On success the old extensions' tools and hooks are gone with the old state, the catalog
 * is the new snapshot, and the session is the same one. Either way the attempt's
 * diagnostics are reported once as events, then a `reload` event.
 */
async function reloadRuntime(core: RuntimeCore): Promise<ReloadReport> {
  const finish = (report: ReloadReport): ReloadReport => {
    core.emit({ type: "reload", report });
    return structuredClone(report);
  };
  let next: RuntimeState;
  try {
    await resolveRoots(core.options);
    next = await loadState(core, core.options.importModule ?? importFresh);
  } catch (error) {
    return finish({ status: "failed", error: { code: codeOf(error) ?? "RELOAD_FAILED", message: messageOf(error) }, diagnostics: [] });
  }
  for (const diagnostic of next.diagnostics) core.emit({ type: "diagnostic", diagnostic });
  const diagnostics = structuredClone(next.diagnostics);

  const trustFailure = next.diagnostics.find((diagnostic) => diagnostic.area === "trust");
  if (trustFailure !== undefined) {
    return finish({ status: "failed", error: { code: trustFailure.code, message: trustFailure.message }, diagnostics });
  }
  // An extension is its origin and its id: the project's namesake of a running user extension was never running.
  const key = (extension: ExtensionStatus) => `${extension.origin}/${extension.id}`;
  const running = new Set(core.state.extensions.filter((extension) => extension.status === "active").map(key));
  const lost = next.extensions.find((extension) => extension.status === "failed" && running.has(key(extension)));
  if (lost !== undefined) {
    const diagnostic = next.diagnostics.find((candidate) => candidate.area === "extensions" && candidate.source === lost.id);
    const code = lost.code ?? diagnostic?.code ?? "EXTENSION_FACTORY_FAILED";
    const message = `extension "${lost.id}" is running and failed to load again, so the previous state keeps running: ${diagnostic?.message ?? code}`;
    return finish({ status: "failed", error: { code, message }, diagnostics });
  }

  const changes = changesBetween(core.state, next);
  core.state = next;
  return finish({ status: "reloaded", changes, diagnostics });
}
