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

/** The scaffold's "not built yet" error: its message names the lab that builds the code. */
function labError(lab: string): Error {
  return new Error(`${lab} 尚未实现`);
}

// ---------------------------------------------------------------------------
// Lab 13.1 · 技能清单只给名字和描述，按字节预算
// ---------------------------------------------------------------------------

// 🔨 Lab 13.1（第 3 节）：在这里写一个 helper，把一个名字或描述压成一行（§C3.3）。

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
  // 🔨 Lab 13.1（第 3 节的骨架，契约 §C3）：建出清单；hiddenFromModel() 已经写好，直接用
  void catalog;
  void options;
  throw labError("Lab 13.1 skill catalog");
}

// ---------------------------------------------------------------------------
// Lab 13.2 · load_skill 按名字加载，正文和文件每次现读
// ---------------------------------------------------------------------------

// 🔨 Lab 13.2（第 4 节）：在这里写 load_skill 的参数 schema（§C4.1、§C4.2）、给名字和路径加引号的 helper（§C4.7）
//    和读文件时的错误翻译（§C4.6）。

/**
 * Turns a failed activation of skill `name` into the error the model may see. Its message
 * names the skill, quoted, and never a path, whatever the original error said: a skill
 * missing from the catalog is `skill_not_found`; one whose SKILL.md changed name, vanished
 * or now resolves elsewhere is `skill_changed`; anything else (too large, not text,
 * unreadable, broken frontmatter) is `skill_unreadable`. The message starts with the code
 * and a colon (`skill_changed: …`).
 */
function skillLoadError(error: unknown, name: string): RuntimeError {
  // 🔨 Lab 13.2（第 4 节，契约 §C4.6、§C4.7）：把第 12 章的错误翻译成模型可以看的错误，返回它
  void error;
  void name;
  throw labError("Lab 13.2 load_skill");
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
  // 🔨 Lab 13.2（第 4 节的骨架，契约 §C4）：返回 load_skill 工具；skillFilesOf() 已经写好，直接用
  void options;
  throw labError("Lab 13.2 load_skill");
}

// ---------------------------------------------------------------------------
// Lab 13.3 · 用户命令先于模型
// ---------------------------------------------------------------------------

// 🔨 Lab 13.3（第 5 节）：建议在这里为 /skill: 和 /template: 各写一个 helper。

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
  // 🔨 Lab 13.3（第 5 节的骨架和判断表，契约 §C5）：展开用户的命令
  void input;
  void resources;
  void options;
  throw labError("Lab 13.3 user commands");
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
  // 🔨 Lab 13.4（第 6 节的顺序表和骨架，契约 §C6.1–§C6.5）：按启动的顺序建出一份完整的状态
  void setup;
  void importModule;
  throw labError("Lab 13.4 runtime startup");
}

/**
 * Starts a runtime: checks the options, builds the first state (see `loadState`), reports
 * each of its diagnostics once as a `diagnostic` event, and opens an empty session.
 * `prompt` and `reload` run one after another, in call order. Rejects with
 * `RUNTIME_OPTIONS_INVALID` or `RUNTIME_PROJECT_MISSING` before anything is loaded.
 */
export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  // 🔨 Lab 13.4（第 6 节，契约 §C6.6、§C6.7）：启动，返回 Runtime；checkOptions、resolveRoots、serialized 已经写好
  void options;
  throw labError("Lab 13.4 runtime startup");
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
async function runTurn(core: RuntimeCore, input: string, promptOptions: PromptOptions): Promise<TurnResult> {
  // 🔨 Lab 13.5（第 7 节的流水线和骨架，契约 §C7）：跑一轮；buildContext 和 runAgentLoop 已经写好，不要改它们
  void core;
  void input;
  void promptOptions;
  throw labError("Lab 13.5 runtime turn");
}

// ---------------------------------------------------------------------------
// Lab 13.6 · reload：换掉代码与清单，留下会话
// ---------------------------------------------------------------------------

// 🔨 Lab 13.6（第 8 节）：在这里写每次 import 出新模块实例的 helper（§C8.4）和比较两个状态的 helper（§C8.3）。

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
  // 🔨 Lab 13.6（第 8 节的骨架，契约 §C8）：在旁边建一份新状态，只在不丢掉正在运行的东西时换上
  void core;
  throw labError("Lab 13.6 runtime reload");
}
