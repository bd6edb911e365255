// @ts-nocheck: outside the course package its imports do not resolve; verify and mistakes drop this line when they build the file in place of resources.ts.
/**
 * Chapter 12 · resources and extensions — a learner's solution, written functionally.
 *
 * Small pure helpers do the deciding (frontmatter, containment, ordering, hook answers);
 * the async functions around them only read files and call hooks. Loops are `for…of`,
 * collections are arrays, maps and sets, and everything asynchronous is `async`/`await`.
 */
import { open, readFile, readdir, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parse as parseYaml } from "yaml";
import {
  ResourceError, type ActivatedSkill, type ActivatedSkillFile, type AfterToolResultHook, type BeforeToolCallHook, type CatalogResource,
  type DiscoverOptions, type ExtensionContext, type ExtensionDiagnostic, type ExtensionHost, type ExtensionHostOptions, type ExtensionModule,
  type ExtensionSource, type InstructionResource, type LoadExtensionOptions, type LoadExtensionResult, type ResourceCatalog, type ResourceDiagnostic,
  type ResourceErrorCode, type SkillResource, type TemplateResource,
} from "./resource-types.js";
import type { Tool, ToolExecutor, ToolRegistry } from "./tool.js";
import { text, userMessage, type ToolCall, type ToolResultMessage, type UserMessage } from "./types.js";

export { RESOURCE_SIZE_LIMIT } from "./resource-files.js";
export * from "./resource-types.js";

// ---------------------------------------------------------------------------
// Small shared helpers
// ---------------------------------------------------------------------------

function failure(code: ResourceErrorCode, message: string, cause?: unknown): ResourceError {
  return cause === undefined ? new ResourceError(code, message) : new ResourceError(code, message, { cause });
}

/** The `code` of a Node system error (`ENOENT`, `EISDIR`, …), if it has one. */
function errnoOf(error: unknown): string | undefined {
  return error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** True when `candidate` is `base` itself or lies below it (judged with path.relative, never a string prefix). */
function liesWithin(base: string, candidate: string): boolean {
  const hop = path.relative(base, candidate);
  return hop === "" || (!path.isAbsolute(hop) && hop !== ".." && !hop.startsWith(".." + path.sep));
}

/** Plain code-unit order, the same in every locale. */
function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// ---------------------------------------------------------------------------
// Lab 12.1 · the order of the roots decides the catalog's winners
// ---------------------------------------------------------------------------

/** The largest YAML block a frontmatter may hold, in bytes. */
const YAML_LIMIT = 64 * 1024;
/** How much of a SKILL.md discovery reads at a time. */
const PREFIX_CHUNK = 4 * 1024;
const KIND_ORDER: readonly CatalogResource["kind"][] = ["instructions", "skill", "template"];
const BOM = "\uFEFF";

/** A line without the `\r` of a `\r\n` line end. */
function withoutCarriageReturn(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}

type FrontmatterSplit =
  | { kind: "none" }
  | { kind: "unterminated"; yamlBytes: number }
  | { kind: "block"; yaml: string; body: string };

/**
 * Splits `content` into its frontmatter and body. The first line (after one optional BOM)
 * must be exactly `---`; the block runs to the next line that is exactly `---`. Both line
 * ends are accepted.
 */
function splitFrontmatter(content: string): FrontmatterSplit {
  const start = content.startsWith(BOM) ? BOM.length : 0;
  const firstBreak = content.indexOf("\n", start);
  const firstLine = withoutCarriageReturn(firstBreak === -1 ? content.slice(start) : content.slice(start, firstBreak));
  if (firstLine !== "---") return { kind: "none" };
  if (firstBreak === -1) return { kind: "unterminated", yamlBytes: 0 };
  const yamlStart = firstBreak + 1;
  let lineStart = yamlStart;
  for (;;) {
    const lineBreak = content.indexOf("\n", lineStart);
    const lineEnd = lineBreak === -1 ? content.length : lineBreak;
    if (withoutCarriageReturn(content.slice(lineStart, lineEnd)) === "---") {
      return {
        kind: "block",
        yaml: content.slice(yamlStart, lineStart),
        body: lineBreak === -1 ? "" : content.slice(lineBreak + 1),
      };
    }
    if (lineBreak === -1) return { kind: "unterminated", yamlBytes: Buffer.byteLength(content.slice(yamlStart)) };
    lineStart = lineBreak + 1;
  }
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The YAML of a frontmatter block as a mapping; an empty block is an empty mapping. */
function parseMapping(yaml: string, file: string): Record<string, unknown> {
  if (Buffer.byteLength(yaml) > YAML_LIMIT) {
    throw failure("RESOURCE_INVALID", `${file}: the frontmatter is larger than ${YAML_LIMIT} bytes`);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(yaml);
  } catch (error) {
    throw failure("RESOURCE_INVALID", `${file}: the frontmatter is not valid YAML (${messageOf(error)})`, error);
  }
  if (parsed === null || parsed === undefined) return {};
  if (!isMapping(parsed)) throw failure("RESOURCE_INVALID", `${file}: the frontmatter is not a mapping`);
  return parsed;
}

interface ParsedMarkdown {
  /** The frontmatter mapping, or undefined when the file has none. */
  fields: Record<string, unknown> | undefined;
  /** The text after the closing `---` line (the whole text without frontmatter), trimmed. */
  body: string;
}

/** Parses a markdown resource; a broken frontmatter is `RESOURCE_INVALID`. */
function parseMarkdown(content: string, file: string): ParsedMarkdown {
  const split = splitFrontmatter(content);
  if (split.kind === "none") {
    const withoutBom = content.startsWith(BOM) ? content.slice(BOM.length) : content;
    return { fields: undefined, body: withoutBom.trim() };
  }
  if (split.kind === "unterminated") {
    if (split.yamlBytes > YAML_LIMIT) {
      throw failure("RESOURCE_INVALID", `${file}: the frontmatter is larger than ${YAML_LIMIT} bytes`);
    }
    throw failure("RESOURCE_INVALID", `${file}: the frontmatter has no closing --- line`);
  }
  return { fields: parseMapping(split.yaml, file), body: split.body.trim() };
}

/** A frontmatter field that must be a non-empty string when present (and, if `required`, present). */
function stringField(fields: Record<string, unknown>, key: string, file: string, required: boolean): string | undefined {
  if (!Object.hasOwn(fields, key)) {
    if (required) throw failure("RESOURCE_INVALID", `${file}: the frontmatter has no "${key}"`);
    return undefined;
  }
  const value = fields[key];
  if (typeof value !== "string" || value.trim().length === 0) {
    throw failure("RESOURCE_INVALID", `${file}: "${key}" must be a non-empty string`);
  }
  return value;
}

interface SkillHeader {
  name: string;
  description: string;
  body: string;
}

/** A SKILL.md's name, description and body: it must have a frontmatter naming and describing it. */
function parseSkill(content: string, file: string): SkillHeader {
  const parsed = parseMarkdown(content, file);
  if (parsed.fields === undefined) throw failure("RESOURCE_INVALID", `${file}: a SKILL.md needs a frontmatter`);
  const name = stringField(parsed.fields, "name", file, true)!;
  const description = stringField(parsed.fields, "description", file, true)!;
  return { name, description, body: parsed.body };
}

const BOM_BYTES = Buffer.from([0xef, 0xbb, 0xbf]);
const NEWLINE = 0x0a;

/** A line of bytes without its `\r`, as text. */
function lineText(bytes: Buffer, start: number, end: number): string {
  return withoutCarriageReturn(bytes.subarray(start, end).toString("utf8"));
}

/** True while `partial` (a line without its end yet) could still become the closing `---` line. */
function couldCloseYet(partial: string): boolean {
  return "---\r".startsWith(partial);
}

/**
 * How many leading bytes of `bytes` make the whole header, or undefined to read on. Decides
 * as soon as it can: a first line that is not `---` needs no more bytes, and a YAML block
 * over the limit fails at once, counting the last line even before its newline arrives.
 */
function headerLength(bytes: Buffer, atEnd: boolean, file: string): number | undefined {
  const start = bytes.subarray(0, BOM_BYTES.length).equals(BOM_BYTES) ? BOM_BYTES.length : 0;
  // The first bytes of a BOM may arrive without the rest of it.
  if (!atEnd && bytes.length < BOM_BYTES.length && BOM_BYTES.subarray(0, bytes.length).equals(bytes)) return undefined;
  const firstBreak = bytes.indexOf(NEWLINE, start);
  if (firstBreak === -1) {
    if (atEnd || !couldCloseYet(bytes.subarray(start).toString("utf8"))) return bytes.length;
    return undefined;
  }
  if (lineText(bytes, start, firstBreak) !== "---") return firstBreak + 1;
  const yamlStart = firstBreak + 1;
  let lineStart = yamlStart;
  for (;;) {
    const lineBreak = bytes.indexOf(NEWLINE, lineStart);
    if (lineBreak === -1) break;
    if (lineText(bytes, lineStart, lineBreak) === "---") {
      if (lineStart - yamlStart > YAML_LIMIT) break; // fails below
      return lineBreak + 1;
    }
    lineStart = lineBreak + 1;
  }
  const partial = bytes.subarray(lineStart).toString("utf8");
  const closesHere = atEnd && withoutCarriageReturn(partial) === "---";
  const yamlBytes = lineStart - yamlStart + (closesHere || (!atEnd && couldCloseYet(partial)) ? 0 : bytes.length - lineStart);
  if (yamlBytes > YAML_LIMIT) {
    throw failure("RESOURCE_INVALID", `${file}: the frontmatter is larger than ${YAML_LIMIT} bytes`);
  }
  return atEnd ? bytes.length : undefined;
}

/**
 * The start of `file` up to the end of its frontmatter, read through a file handle one
 * chunk at a time: the body after the closing line is never read (beyond the last chunk).
 */
async function readSkillHeader(file: string): Promise<string> {
  const handle = await open(file, "r");
  try {
    let bytes = Buffer.alloc(0);
    for (;;) {
      const chunk = Buffer.alloc(PREFIX_CHUNK);
      const { bytesRead } = await handle.read(chunk, 0, PREFIX_CHUNK, null);
      if (bytesRead > 0) bytes = Buffer.concat([bytes, chunk.subarray(0, bytesRead)]);
      const length = headerLength(bytes, bytesRead === 0, file);
      if (length !== undefined) return bytes.subarray(0, length).toString("utf8");
    }
  } finally {
    await handle.close();
  }
}

/** The canonical path of a root, which must exist and be a directory. */
async function canonicalRoot(configured: string): Promise<string> {
  let root: string;
  try {
    root = await realpath(configured);
  } catch (error) {
    const code = errnoOf(error);
    if (code === "ENOENT" || code === "ENOTDIR") throw failure("RESOURCE_ROOT_MISSING", `root ${configured} does not exist`, error);
    throw error;
  }
  if (!(await stat(root)).isDirectory()) throw failure("RESOURCE_ROOT_MISSING", `root ${configured} is not a directory`);
  return root;
}

/** `action()`, or `fallback` when it fails with ENOENT (the only error that means "none"). */
async function unlessMissing<T>(action: () => Promise<T>, fallback: T): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return fallback;
    throw error;
  }
}

/** The entry names of `dir` in code-unit order; none when it does not exist. */
async function entryNames(dir: string): Promise<string[]> {
  const names = await unlessMissing(() => readdir(dir), [] as string[]);
  return [...names].sort(byCodeUnit);
}

async function readInstructions(root: string): Promise<InstructionResource[]> {
  const source = await unlessMissing(() => realpath(path.join(root, "AGENTS.md")), undefined);
  if (source === undefined) return [];
  const content = await readFile(source, "utf8");
  return [{ kind: "instructions", name: "AGENTS", source, root, body: content.trim() }];
}

async function readSkill(folder: string): Promise<SkillResource | undefined> {
  const info = await unlessMissing(() => stat(folder), undefined);
  if (info === undefined || !info.isDirectory()) return undefined;
  const source = await unlessMissing(() => realpath(path.join(folder, "SKILL.md")), undefined);
  if (source === undefined) return undefined; // a folder without SKILL.md is no skill
  const skillRoot = await realpath(folder);
  const header = parseSkill(await readSkillHeader(source), source);
  return { kind: "skill", name: header.name, description: header.description, source, root: skillRoot };
}

async function readSkills(root: string): Promise<SkillResource[]> {
  const dir = path.join(root, "skills");
  const skills: SkillResource[] = [];
  for (const name of await entryNames(dir)) {
    if (name.startsWith(".")) continue;
    const skill = await readSkill(path.join(dir, name));
    if (skill !== undefined) skills.push(skill);
  }
  return skills;
}

async function readTemplate(root: string, file: string, fileName: string): Promise<TemplateResource | undefined> {
  const info = await unlessMissing(() => stat(file), undefined);
  if (info === undefined || !info.isFile()) return undefined;
  const source = await realpath(file);
  const parsed = parseMarkdown(await readFile(source, "utf8"), source);
  const fields = parsed.fields ?? {};
  const name = stringField(fields, "name", source, false) ?? fileName.slice(0, -".md".length);
  const description = stringField(fields, "description", source, false) ?? "";
  return { kind: "template", name, description, source, root, body: parsed.body };
}

async function readTemplates(root: string): Promise<TemplateResource[]> {
  const dir = path.join(root, "templates");
  const templates: TemplateResource[] = [];
  for (const name of await entryNames(dir)) {
    if (name.startsWith(".") || !name.endsWith(".md")) continue;
    const template = await readTemplate(root, path.join(dir, name), name);
    if (template !== undefined) templates.push(template);
  }
  return templates;
}

async function scanRoot(root: string): Promise<CatalogResource[]> {
  return [...(await readInstructions(root)), ...(await readSkills(root)), ...(await readTemplates(root))];
}

function identity(resource: CatalogResource): string {
  return `${resource.kind}:${resource.name}`;
}

function byLogicalIdentity(a: CatalogResource, b: CatalogResource): number {
  return KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind) || byCodeUnit(a.name, b.name);
}

function isInstruction(resource: CatalogResource): resource is InstructionResource {
  return resource.kind === "instructions";
}
function isSkill(resource: CatalogResource): resource is SkillResource {
  return resource.kind === "skill";
}
function isTemplate(resource: CatalogResource): resource is TemplateResource {
  return resource.kind === "template";
}

/**
 * Builds the catalog of `roots`. Guarantees: roots are canonicalised and scanned in the
 * given order, and the first root to supply a `kind:name` wins (a repeat inside one root
 * is `RESOURCE_DUPLICATE`); output is sorted by kind, then name by code unit, never by
 * path; no skill body is ever held (SKILL.md is read only up to its frontmatter); the
 * four arrays are independent deep copies. Only a missing AGENTS.md, `skills/` or
 * `templates/` means "none"; every other I/O error propagates.
 *
 * `options` (lenient mode with diagnostics) is the challenge tier's; this
 * version leaves it unused.
 */
export async function discoverResources(roots: readonly string[], options: DiscoverOptions = {}): Promise<ResourceCatalog> {
  void options;
  const winners = new Map<string, CatalogResource>();
  for (const configured of roots) {
    const root = await canonicalRoot(configured);
    const seenHere = new Set<string>();
    for (const resource of await scanRoot(root)) {
      const key = identity(resource);
      if (seenHere.has(key)) throw failure("RESOURCE_DUPLICATE", `${key} appears twice in ${root}`);
      seenHere.add(key);
      if (!winners.has(key)) winners.set(key, resource);
    }
  }
  const sorted = [...winners.values()].sort(byLogicalIdentity);
  return {
    resources: sorted.map((resource) => structuredClone(resource)),
    instructions: sorted.filter(isInstruction).map((resource) => structuredClone(resource)),
    skills: sorted.filter(isSkill).map((resource) => structuredClone(resource)),
    templates: sorted.filter(isTemplate).map((resource) => structuredClone(resource)),
  };
}

// ---------------------------------------------------------------------------
// Lab 12.2 · only activation hands a skill's body to this turn
// ---------------------------------------------------------------------------

/** ENOENT (or a folder on the way that is now a file): the file is gone. */
function isGone(error: unknown): boolean {
  const code = errnoOf(error);
  return code === "ENOENT" || code === "ENOTDIR";
}

/** Reads the current SKILL.md of `skill` again, from inside its canonical root. */
async function rereadSkill(skill: SkillResource): Promise<SkillHeader> {
  let source: string;
  let content: string;
  try {
    source = await realpath(path.join(skill.root, "SKILL.md"));
  } catch (error) {
    if (isGone(error)) throw failure("SKILL_CHANGED", `skill ${skill.name}: ${skill.source} is gone`, error);
    throw error;
  }
  if (!liesWithin(skill.root, source)) {
    throw failure("SKILL_PATH_ESCAPE", `skill ${skill.name}: SKILL.md resolves outside ${skill.root}`);
  }
  try {
    content = await readFile(source, "utf8");
  } catch (error) {
    if (isGone(error)) throw failure("SKILL_CHANGED", `skill ${skill.name}: ${source} is gone`, error);
    throw error;
  }
  const header = parseSkill(content, source);
  if (header.name !== skill.name) {
    throw failure("SKILL_CHANGED", `skill ${skill.name}: its SKILL.md now declares "${header.name}"`);
  }
  return header;
}

/** Why `request` is not a relative path inside a skill folder at all, if it is not. */
function requestProblem(request: string): string | undefined {
  if (request === "") return "is empty";
  if (request.includes("\0")) return "contains a NUL character";
  if (path.isAbsolute(request)) return "is an absolute path";
  return undefined;
}

async function readRequestedFile(root: string, request: string): Promise<ActivatedSkillFile> {
  const problem = requestProblem(request);
  if (problem !== undefined) throw failure("SKILL_PATH_INVALID", `request ${JSON.stringify(request)} ${problem}`);
  const target = path.resolve(root, request);
  if (!liesWithin(root, target)) throw failure("SKILL_PATH_ESCAPE", `request ${request} lies outside ${root}`);
  let source: string;
  try {
    source = await realpath(target);
  } catch (error) {
    if (errnoOf(error) === "ENOENT") throw failure("SKILL_RESOURCE_MISSING", `request ${request}: no such file in ${root}`, error);
    throw error;
  }
  if (!liesWithin(root, source)) throw failure("SKILL_PATH_ESCAPE", `request ${request} resolves outside ${root}`);
  return { request, source, content: await readFile(source, "utf8") };
}

/** The first occurrence of every request, in order. */
function uniqueInOrder(requests: readonly string[]): string[] {
  return [...new Set(requests)];
}

/**
 * Activates the catalog's skill `name` for this turn. Guarantees: SKILL.md is re-read
 * through realpath from inside the canonical skill root and must still declare the same
 * name (`SKILL_CHANGED`); each requested file is read only if it lies inside the root
 * both lexically and after following symlinks; duplicate requests collapse to the first.
 * The result keeps the catalog's metadata and is a fresh copy: changing it never
 * changes the catalog.
 */
export async function activateSkill(
  catalog: ResourceCatalog,
  name: string,
  options: { resources?: readonly string[] } = {},
): Promise<ActivatedSkill> {
  const skill = catalog.skills.find((candidate) => candidate.name === name);
  if (skill === undefined) throw failure("SKILL_NOT_FOUND", `no skill named ${name} in the catalog`);
  const header = await rereadSkill(skill);
  const resources: ActivatedSkillFile[] = [];
  for (const request of uniqueInOrder(options.resources ?? [])) {
    resources.push(await readRequestedFile(skill.root, request));
  }
  return {
    kind: "skill",
    name: skill.name,
    description: skill.description,
    source: skill.source,
    root: skill.root,
    body: header.body,
    resources,
  };
}

// ---------------------------------------------------------------------------
// Lab 12.3 · templates and skills enter one model request through two doors
// ---------------------------------------------------------------------------

const PLACEHOLDER = /\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}/g;

/**
 * Renders `template` with `args` into a canonical `UserMessage` stamped `Date.now()`.
 * Only `{{identifier}}` is a placeholder; every occurrence is replaced in one pass, so
 * an argument's own `{{x}}`, `$&` or `$1` stays literal. A placeholder without an
 * argument throws `TEMPLATE_ARGUMENT_MISSING` naming it; extra arguments are ignored.
 */
export function renderTemplate(template: TemplateResource, args: Readonly<Record<string, string>>): UserMessage {
  const rendered = template.body.replace(PLACEHOLDER, (_placeholder, key: string) => {
    const value = Object.hasOwn(args, key) ? args[key] : undefined;
    if (typeof value !== "string") {
      throw failure("TEMPLATE_ARGUMENT_MISSING", `template ${template.name} needs the argument "${key}"`);
    }
    return value;
  });
  return userMessage(rendered);
}

function checkActivated(catalog: ResourceCatalog, activated: readonly ActivatedSkill[]): void {
  const seen = new Set<string>();
  for (const skill of activated) {
    if (seen.has(skill.name)) throw failure("ACTIVATION_DUPLICATE", `skill ${skill.name} is activated twice`);
    seen.add(skill.name);
    const own = catalog.skills.find((candidate) => candidate.name === skill.name);
    if (own === undefined || own.source !== skill.source || own.root !== skill.root) {
      throw failure("ACTIVATION_FOREIGN", `skill ${skill.name} was not activated from this catalog`);
    }
  }
}

/** Control characters that are not whitespace, and the bidirectional embeddings, overrides and isolates. */
const INVISIBLE_CONTROLS = /[\u0000-\u0008\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/g;

/** Metadata (a name, a description, a request) on one line: invisible controls removed, each whitespace run one space, trimmed. */
const singleLine = (text: string): string => text.replace(INVISIBLE_CONTROLS, "").replace(/\s+/g, " ").trim();

function activeSections(skill: ActivatedSkill): string[] {
  const sections = [`# Active skill: ${singleLine(skill.name)}`];
  if (skill.body !== "") sections.push(skill.body);
  for (const file of skill.resources) {
    sections.push(`## ${singleLine(file.request)}`);
    if (file.content !== "") sections.push(file.content);
  }
  return sections;
}

/**
 * The system prompt text of a catalog and this turn's activated skills. Layout: every
 * heading and every body is a section of its own (so a blank line follows each heading),
 * sections are joined by a blank line, and empty ones are left out:
 *
 * ```text
 * # Instructions            then each instruction body
 * # Skills                  then "- name: description", one line per catalog skill
 * # Active skill: <name>    then its body, then per file "## <request>" and its content
 * ```
 *
 * Active skills come sorted by name (code unit). No inactive skill body can appear: only
 * `ActivatedSkill` objects carry one. Throws `ACTIVATION_DUPLICATE` / `ACTIVATION_FOREIGN`.
 * It does not count tokens; the caller hands the string to `buildContext` as `systemPrompt`.
 */
export function formatResourceContext(catalog: ResourceCatalog, activated: readonly ActivatedSkill[]): string {
  checkActivated(catalog, activated);
  const sections: string[] = [];
  const bodies = catalog.instructions.map((instruction) => instruction.body).filter((body) => body !== "");
  if (bodies.length > 0) sections.push("# Instructions", ...bodies);
  if (catalog.skills.length > 0) {
    sections.push("# Skills", catalog.skills.map((skill) => `- ${singleLine(skill.name)}: ${singleLine(skill.description)}`).join("\n"));
  }
  const ordered = [...activated].sort((a, b) => byCodeUnit(a.name, b.name));
  for (const skill of ordered) sections.push(...activeSections(skill));
  return sections.join("\n\n");
}

// ---------------------------------------------------------------------------
// Lab 12.4 · an extension is trusted first, then registered all at once
// ---------------------------------------------------------------------------

interface HookEntry<L> {
  extensionId: string;
  listener: L;
}

/** The committed hooks of one host, in registration order across extensions. */
interface HookLists {
  before: HookEntry<BeforeToolCallHook>[];
  after: HookEntry<AfterToolResultHook>[];
}

/** The loader's private channel into a host: a context for the factory, then commit. */
interface StagedRegistration {
  context: ExtensionContext;
  close(): void;
  commit(): void;
}

/** Names that occur more than once in `names`. */
function repeatedNames(names: readonly string[]): string[] {
  return names.filter((name, index) => names.indexOf(name) !== index);
}

class ExtensionHostImpl implements ExtensionHost {
  readonly #registry: ToolRegistry;
  readonly #options: ExtensionHostOptions;
  readonly #active = new Set<string>();
  readonly #hooks: HookLists = { before: [], after: [] };

  constructor(registry: ToolRegistry, options: ExtensionHostOptions) {
    this.#registry = registry;
    this.#options = options;
  }

  isActive(extensionId: string): boolean {
    return this.#active.has(extensionId);
  }

  stage(extensionId: string): StagedRegistration {
    const tools: Tool[] = [];
    const before: BeforeToolCallHook[] = [];
    const after: AfterToolResultHook[] = [];
    let closed = false;
    const ensureOpen = () => {
      if (closed) throw failure("EXTENSION_CONTEXT_CLOSED", `extension ${extensionId}: its factory has already finished`);
    };
    function on(hook: "beforeToolCall", listener: BeforeToolCallHook): void;
    function on(hook: "afterToolResult", listener: AfterToolResultHook): void;
    function on(hook: string, listener: BeforeToolCallHook | AfterToolResultHook): void {
      ensureOpen();
      if (typeof listener !== "function") throw failure("INVALID_ARGUMENT", `extension ${extensionId}: a listener must be a function`);
      if (hook === "beforeToolCall") before.push(listener as BeforeToolCallHook);
      else if (hook === "afterToolResult") after.push(listener as AfterToolResultHook);
      else throw failure("INVALID_ARGUMENT", `extension ${extensionId}: there is no hook named ${String(hook)}`);
    }
    const context: ExtensionContext = Object.freeze({
      registerTool(tool: Tool): void {
        ensureOpen();
        tools.push(tool);
      },
      on,
    });
    const commit = () => {
      closed = true;
      if (this.#active.has(extensionId)) throw failure("EXTENSION_DUPLICATE", `extension ${extensionId} is already active`);
      const names = tools.map((tool) => tool.name);
      const repeated = repeatedNames(names);
      if (repeated.length > 0) throw failure("TOOL_CONFLICT", `extension ${extensionId} registers ${repeated[0]} twice`);
      const taken = names.filter((name) => this.#registry.get(name) !== undefined);
      if (taken.length > 0) throw failure("TOOL_CONFLICT", `extension ${extensionId}: a tool named ${taken[0]} is already registered`);
      for (const tool of tools) this.#registry.register(tool);
      for (const listener of before) this.#hooks.before.push({ extensionId, listener });
      for (const listener of after) this.#hooks.after.push({ extensionId, listener });
      this.#active.add(extensionId);
    };
    return {
      context,
      close: () => {
        closed = true;
      },
      commit,
    };
  }

  wrapExecutor(coreExecutor: ToolExecutor): ToolExecutor {
    return hookedExecutor(this.#hooks, this.#options, coreExecutor);
  }
}

/** Each host handed out, with the implementation behind it: the loader's only way in. */
const IMPLEMENTATIONS = new WeakMap<ExtensionHost, ExtensionHostImpl>();

/**
 * The public face of `impl`: a frozen object with `wrapExecutor` and nothing else, so that
 * no code that holds the host (an extension included) can reach `stage` at run time.
 */
function publicFace(impl: ExtensionHostImpl): ExtensionHost {
  const host: ExtensionHost = Object.freeze({ wrapExecutor: (coreExecutor: ToolExecutor) => impl.wrapExecutor(coreExecutor) });
  IMPLEMENTATIONS.set(host, impl);
  return host;
}

/** Module-internal narrowing: only hosts made by `createExtensionHost` can stage. */
function hostImplementation(host: ExtensionHost): ExtensionHostImpl {
  const impl = IMPLEMENTATIONS.get(host);
  if (impl === undefined) throw new ResourceError("INVALID_ARGUMENT", "options.host was not created by createExtensionHost");
  return impl;
}

const LONGEST_TIMEOUT = 2 ** 31 - 1;

function isValidTimeout(ms: unknown): boolean {
  return typeof ms === "number" && ms > 0 && ms <= LONGEST_TIMEOUT;
}

/**
 * Creates a host that commits extensions' tools into `registry` and runs their hooks.
 * Its only public method is `wrapExecutor`; staging is reachable from `loadExtension`
 * alone. `hookTimeoutMs` must be a positive number of milliseconds that `setTimeout`
 * can honour (at most 2^31 − 1), else `INVALID_ARGUMENT`.
 */
export function createExtensionHost(registry: ToolRegistry, options: ExtensionHostOptions): ExtensionHost {
  if (!isValidTimeout(options.hookTimeoutMs)) {
    throw failure("INVALID_ARGUMENT", `hookTimeoutMs must be a positive number of at most ${LONGEST_TIMEOUT}, not ${String(options.hookTimeoutMs)}`);
  }
  const settings: ExtensionHostOptions = { hookTimeoutMs: options.hookTimeoutMs };
  if (options.onDiagnostic !== undefined) settings.onDiagnostic = options.onDiagnostic;
  return publicFace(new ExtensionHostImpl(registry, settings));
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as { then?: unknown }).then === "function";
}

function factoryFailed(id: string, error: unknown): ResourceError {
  return failure("EXTENSION_FACTORY_FAILED", `extension ${id}: its factory failed: ${messageOf(error)}`, error);
}

/** Runs the factory against the staging context and closes it the moment the factory is done. */
async function runFactory(id: string, factory: (context: ExtensionContext) => unknown, staged: StagedRegistration): Promise<void> {
  let returned: unknown;
  try {
    returned = factory(staged.context);
  } catch (error) {
    staged.close();
    throw factoryFailed(id, error);
  }
  if (!isThenable(returned)) {
    staged.close(); // a synchronous factory has returned: closed before anything else runs
    return;
  }
  try {
    await returned;
  } catch (error) {
    throw factoryFailed(id, error);
  } finally {
    staged.close();
  }
}

function defaultImport(source: Readonly<ExtensionSource>): Promise<unknown> {
  return import(pathToFileURL(source.path).href);
}

/**
 * Loads one extension onto `options.host`. Order, observable from outside: refuse an id
 * already active (`EXTENSION_DUPLICATE`) → `isTrusted(frozen copy)`, where only exactly
 * `true` trusts → `importModule(frozen copy)` → the default export must be a function →
 * the factory registers into a staging context → commit. Untrusted returns
 * `skipped_untrusted` having imported nothing; a throwing policy rejects and imports
 * nothing. Any failure leaves the registry and the hooks exactly as they were.
 */
export async function loadExtension(source: ExtensionSource, options: LoadExtensionOptions): Promise<LoadExtensionResult> {
  const host = hostImplementation(options.host);
  if (host.isActive(source.id)) throw failure("EXTENSION_DUPLICATE", `extension ${source.id} is already active`);
  const frozen: Readonly<ExtensionSource> = Object.freeze({ id: source.id, path: source.path });
  const trusted = await options.isTrusted(frozen);
  if (trusted !== true) {
    return { id: frozen.id, status: "skipped_untrusted" };
  }
  const loaded = options.importModule ? await options.importModule(frozen) : await defaultImport(frozen);
  const factory = isMapping(loaded) || typeof loaded === "function" ? (loaded as { default?: unknown }).default : undefined;
  if (typeof factory !== "function") throw failure("EXTENSION_INVALID", `extension ${frozen.id}: the default export is not a function`);
  const staged = host.stage(frozen.id);
  await runFactory(frozen.id, factory as (context: ExtensionContext) => unknown, staged);
  staged.commit();
  return { id: frozen.id, status: "active" };
}

// ---------------------------------------------------------------------------
// Lab 12.5 · how one tool call passes through the hooks
// ---------------------------------------------------------------------------

type HookOutcome = { kind: "value"; value: unknown } | { kind: "error"; error: unknown } | { kind: "timeout" };

/** A promise that only resolves: a synchronous throw and a rejection both become an outcome. */
async function outcomeOf(run: () => unknown): Promise<HookOutcome> {
  try {
    return { kind: "value", value: await run() };
  } catch (error) {
    return { kind: "error", error };
  }
}

/** Waits for `run` at most `ms` milliseconds; the timer is cleared either way. */
async function settleWithin(run: () => unknown, ms: number): Promise<HookOutcome> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<HookOutcome>((resolve) => {
    timer = setTimeout(() => resolve({ kind: "timeout" }), ms);
  });
  try {
    return await Promise.race([outcomeOf(run), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** Freezes `value` and everything inside it. */
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key]);
  }
  return value;
}

type BeforeVerdict =
  | { allow: true }
  | { allow: false; kind: "deny" | "error" | "timeout"; reason: string; diagnose: boolean };

/** What a before hook's outcome means: allow, a deny (no diagnostic), or a failure (one diagnostic). */
function judgeBefore(outcome: HookOutcome, extensionId: string, ms: number): BeforeVerdict {
  if (outcome.kind === "timeout") {
    return { allow: false, kind: "timeout", reason: `beforeToolCall hook of ${extensionId} did not answer within ${ms} ms`, diagnose: true };
  }
  if (outcome.kind === "error") {
    return { allow: false, kind: "error", reason: `beforeToolCall hook of ${extensionId} threw: ${messageOf(outcome.error)}`, diagnose: true };
  }
  const answer = outcome.value;
  if (answer === undefined) return { allow: true };
  if (isMapping(answer) && answer.decision === "allow") return { allow: true };
  if (isMapping(answer) && answer.decision === "deny" && typeof answer.reason === "string" && answer.reason.trim() !== "") {
    return { allow: false, kind: "deny", reason: answer.reason, diagnose: false };
  }
  return { allow: false, kind: "error", reason: `beforeToolCall hook of ${extensionId} gave a malformed answer`, diagnose: true };
}

/** The paired error result of a call that an extension blocked. */
function blockedResult(call: ToolCall, extensionId: string, kind: "deny" | "error" | "timeout", reason: string): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId: call.id,
    toolName: call.name,
    isError: true,
    content: [text(`Tool call ${call.name} was blocked by extension ${extensionId} (${kind}): ${reason}`)],
    details: { blockedByExtension: extensionId, kind, reason },
    timestamp: Date.now(),
  };
}

/** Hands `diagnostic` to the host's owner; nothing it does (throw or reject) reaches the call. */
function report(options: ExtensionHostOptions, diagnostic: ExtensionDiagnostic): void {
  try {
    const returned: unknown = options.onDiagnostic?.(diagnostic);
    if (isThenable(returned)) returned.then(undefined, () => {});
  } catch {
    // The owner's problem, not the call's.
  }
}

/**
 * The executor behind `ExtensionHost.wrapExecutor`. Guarantees: the before hooks run in
 * registration order on one deep-frozen copy of the call, each bounded by `hookTimeoutMs`;
 * the first deny, throw, timeout or malformed answer returns a paired blocked result and
 * neither core nor any after hook runs (throw/timeout/malformed also emit one
 * diagnostic). Otherwise core runs exactly once, every after hook observes one frozen copy
 * (a throw or timeout is a diagnostic, then the next one runs), and the caller gets a
 * deep copy of core's result: nobody can change core's object. A throwing core
 * propagates with no after hook run. Calls share no state, so they run concurrently.
 */
function hookedExecutor(hooks: HookLists, options: ExtensionHostOptions, core: ToolExecutor): ToolExecutor {
  return async (call) => {
    const before = [...hooks.before];
    const after = [...hooks.after];
    const ms = options.hookTimeoutMs;
    const working = structuredClone(call);
    const shownCall = deepFreeze(structuredClone(working));
    for (const { extensionId, listener } of before) {
      const verdict = judgeBefore(await settleWithin(() => listener(shownCall), ms), extensionId, ms);
      if (verdict.allow) continue;
      if (verdict.diagnose) {
        report(options, { extensionId, hook: "beforeToolCall", kind: verdict.kind === "timeout" ? "timeout" : "error", message: verdict.reason });
      }
      return blockedResult(working, extensionId, verdict.kind, verdict.reason);
    }
    const fact = await core(working);
    const answer = structuredClone(fact);
    const shownResult = deepFreeze(structuredClone(fact));
    for (const { extensionId, listener } of after) {
      const outcome = await settleWithin(() => listener(shownResult), ms);
      if (outcome.kind === "timeout") {
        report(options, { extensionId, hook: "afterToolResult", kind: "timeout", message: `afterToolResult hook of ${extensionId} did not finish within ${ms} ms` });
      } else if (outcome.kind === "error") {
        report(options, { extensionId, hook: "afterToolResult", kind: "error", message: `afterToolResult hook of ${extensionId} threw: ${messageOf(outcome.error)}` });
      }
    }
    return answer;
  };
}
