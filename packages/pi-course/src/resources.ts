/**
 * Chapter 12 · resources and extensions.
 *
 * Two entrances into a run, kept apart on purpose:
 *
 * - Data. `discoverResources` lists the text a workspace offers (AGENTS.md, skills,
 *   templates) without running anything; `activateSkill` reads one skill's body for this
 *   turn; `renderTemplate` turns arguments into a `UserMessage`; `formatResourceContext`
 *   turns the catalog and the activated skills into the one `systemPrompt` that
 *   Chapter 11's `buildContext` budgets.
 * - Code. `loadExtension` asks the caller's trust policy before importing anything, lets
 *   the factory register tools and hooks into a staging area only, and commits all of
 *   them at once; `ExtensionHost.wrapExecutor` runs the committed hooks around a tool
 *   executor: before-hooks fail closed, after-hooks only observe.
 *
 * The module reads in lab order: types, then Lab 12.1 (catalog), 12.2 (activation),
 * 12.3 (templates and context), 12.4 (trust and staging), 12.5 (hooks).
 */
import { constants as fsConstants, type Dirent } from "node:fs";
import { open, readdir, realpath, stat, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parse as parseYaml } from "yaml";
import type { Tool, ToolExecutor, ToolRegistry } from "./tool.js";
import { text, userMessage, type ToolCall, type ToolResultMessage, type UserMessage } from "./types.js";

// ---------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------

/** Where a resource came from; both paths are canonical (realpath). */
export interface ResourceBase {
  name: string;
  source: string;
  root: string;
}

export interface InstructionResource extends ResourceBase {
  kind: "instructions";
  body: string;
}

/** A discovered skill: metadata only. Its body is read by `activateSkill`. */
export interface SkillResource extends ResourceBase {
  kind: "skill";
  description: string;
}

export interface TemplateResource extends ResourceBase {
  kind: "template";
  description: string;
  body: string;
}

export type CatalogResource = InstructionResource | SkillResource | TemplateResource;

/** The winners of discovery, sorted, plus three views of them by kind. */
export interface ResourceCatalog {
  resources: CatalogResource[];
  instructions: InstructionResource[];
  skills: SkillResource[];
  templates: TemplateResource[];
}

export interface ActivatedSkillFile {
  /** The path exactly as the caller asked for it, relative to the skill root. */
  request: string;
  /** The canonical path that was read. */
  source: string;
  /** The file's text, untrimmed. */
  content: string;
}

export interface ActivatedSkill extends SkillResource {
  body: string;
  resources: ActivatedSkillFile[];
}

export interface ExtensionSource {
  id: string;
  path: string;
}

export type BeforeToolDecision = { decision: "allow" } | { decision: "deny"; reason: string };
export type BeforeToolCallHook = (
  call: Readonly<ToolCall>,
) => void | BeforeToolDecision | Promise<void | BeforeToolDecision>;
export type AfterToolResultHook = (result: Readonly<ToolResultMessage>) => void | Promise<void>;

/** All an extension's factory can touch: it registers, it never commits. */
export interface ExtensionContext {
  registerTool(tool: Tool): void;
  on(hook: "beforeToolCall", listener: BeforeToolCallHook): void;
  on(hook: "afterToolResult", listener: AfterToolResultHook): void;
}

export interface ExtensionModule {
  default(context: ExtensionContext): void | Promise<void>;
}

/** One hook failure (a throw or a timeout); a deny is a decision, not a diagnostic. */
export interface ExtensionDiagnostic {
  extensionId: string;
  hook: "beforeToolCall" | "afterToolResult";
  kind: "error" | "timeout";
  message: string;
}

export interface ExtensionHostOptions {
  hookTimeoutMs: number;
  onDiagnostic?(diagnostic: ExtensionDiagnostic): void;
}

/** The public face of a host: nothing but the executor wrapper. */
export interface ExtensionHost {
  wrapExecutor(coreExecutor: ToolExecutor): ToolExecutor;
}

export interface LoadExtensionOptions {
  host: ExtensionHost;
  isTrusted(source: Readonly<ExtensionSource>): boolean | Promise<boolean>;
  importModule?(source: Readonly<ExtensionSource>): Promise<unknown>;
}

export type LoadExtensionResult = { id: string; status: "active" } | { id: string; status: "skipped_untrusted" };

/** Error codes thrown on purpose by this module. */
export type ResourceErrorCode =
  | "RESOURCE_ROOT_MISSING" | "RESOURCE_DUPLICATE" | "RESOURCE_INVALID" // Lab 12.1 (and 12.2)
  | "SKILL_NOT_FOUND" | "SKILL_CHANGED" | "SKILL_PATH_INVALID" | "SKILL_PATH_ESCAPE" | "SKILL_RESOURCE_MISSING" // 12.2
  | "TEMPLATE_ARGUMENT_MISSING" | "ACTIVATION_DUPLICATE" | "ACTIVATION_FOREIGN" // 12.3
  | "EXTENSION_INVALID" | "EXTENSION_DUPLICATE" | "EXTENSION_FACTORY_FAILED" | "TOOL_CONFLICT" // 12.4
  | "EXTENSION_CONTEXT_CLOSED" | "INVALID_ARGUMENT"; // 12.4: late registration; a bad host or hook timeout

/** An error with a stable `code`; messages may change, codes do not. */
export class ResourceError extends Error {
  readonly code: ResourceErrorCode;
  constructor(code: ResourceErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ResourceError";
    this.code = code;
  }
}

function reasonOf(thrown: unknown): string {
  return thrown instanceof Error ? thrown.message : String(thrown);
}

function hasCode(error: unknown, ...codes: string[]): boolean {
  return error instanceof Error && codes.includes((error as NodeJS.ErrnoException).code ?? "");
}

/** Plain code-unit order (what `<` does on strings): unlike `localeCompare`, the same on every machine. */
function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// ---------------------------------------------------------------------------
// Lab 12.1 · the catalog: roots in order, first kind:name wins
// ---------------------------------------------------------------------------

/** The largest YAML block (between the `---` lines) a resource may carry. */
const FRONTMATTER_LIMIT = 64 * 1024;
const READ_CHUNK = 4 * 1024;
const KIND_ORDER = { instructions: 0, skill: 1, template: 2 } as const;
// O_NONBLOCK makes opening a FIFO return at once instead of waiting for a writer.
const OPEN_FLAGS = fsConstants.O_RDONLY | (fsConstants.O_NONBLOCK ?? 0);

type Frontmatter =
  | { state: "absent" }
  | { state: "open"; yamlBytes: number }
  | { state: "closed"; yaml: string; body: string };

/**
 * Finds the frontmatter in `content` (possibly only a prefix of a file). `open` means
 * the closing `---` line has not been seen yet; with `complete` set it never has been.
 */
function scanFrontmatter(content: string, complete: boolean): Frontmatter {
  const source = content.startsWith("\uFEFF") ? content.slice(1) : content;
  const opening = /^---\r?\n/.exec(source);
  if (opening === null) {
    const mayStillOpen = !complete && ("---\r\n".startsWith(source) || "---\n".startsWith(source));
    return mayStillOpen ? { state: "open", yamlBytes: 0 } : { state: "absent" };
  }
  const yamlStart = opening[0].length;
  let lineStart = yamlStart;
  for (;;) {
    const newline = source.indexOf("\n", lineStart);
    const line = source.slice(lineStart, newline === -1 ? source.length : newline);
    if ((newline !== -1 || complete) && /^---\r?$/.test(line)) {
      const body = newline === -1 ? "" : source.slice(newline + 1);
      return { state: "closed", yaml: source.slice(yamlStart, lineStart), body };
    }
    if (newline === -1) {
      // The unfinished last line counts as YAML too (one endless line must not be read to
      // the end), unless it may still turn out to be the closing `---`.
      const yamlEnd = "---\r".startsWith(line) ? lineStart : source.length;
      return { state: "open", yamlBytes: Buffer.byteLength(source.slice(yamlStart, yamlEnd)) };
    }
    lineStart = newline + 1;
  }
}

/** The YAML block and body of a frontmatter that must be present and terminated. */
function closedFrontmatter(scan: Frontmatter, file: string): { yaml: string; body: string } {
  if (scan.state === "absent") throw new ResourceError("RESOURCE_INVALID", `${file}: no frontmatter`);
  if (scan.state === "open") throw new ResourceError("RESOURCE_INVALID", `${file}: frontmatter is not terminated`);
  return scan;
}

/** Parses a YAML block into a mapping (empty block: empty mapping), or `RESOURCE_INVALID`. */
function frontmatterFields(yaml: string, file: string): Record<string, unknown> {
  if (Buffer.byteLength(yaml) > FRONTMATTER_LIMIT) {
    throw new ResourceError("RESOURCE_INVALID", `${file}: frontmatter is larger than 64 KiB`);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(yaml);
  } catch (caught) {
    throw new ResourceError("RESOURCE_INVALID", `${file}: invalid YAML: ${reasonOf(caught)}`, { cause: caught });
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new ResourceError("RESOURCE_INVALID", `${file}: frontmatter is not a mapping`);
  }
  return parsed as Record<string, unknown>;
}

/** A required (or present) frontmatter field must be a non-empty string. */
function textField(fields: Record<string, unknown>, key: string, file: string): string {
  const value = fields[key];
  if (typeof value === "string" && value.trim() !== "") return value;
  throw new ResourceError("RESOURCE_INVALID", `${file}: "${key}" must be a non-empty string`);
}

function skillMetadata(yaml: string, file: string): { name: string; description: string } {
  const fields = frontmatterFields(yaml, file);
  return { name: textField(fields, "name", file), description: textField(fields, "description", file) };
}

/**
 * Opens `file` for reading without ever blocking on it. FIFOs, sockets and devices are
 * refused with `RESOURCE_INVALID`; a directory is left to fail on read with `EISDIR`,
 * like any other I/O error.
 */
async function openRegular(file: string): Promise<FileHandle> {
  const handle = await open(file, OPEN_FLAGS);
  try {
    const info = await handle.stat();
    if (!info.isFile() && !info.isDirectory()) {
      throw new ResourceError("RESOURCE_INVALID", `${file} is not a regular file`);
    }
    return handle;
  } catch (caught) {
    await handle.close();
    throw caught;
  }
}

async function readRegularText(file: string): Promise<string> {
  const handle = await openRegular(file);
  try {
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}

/**
 * Reads a SKILL.md only up to the end of its frontmatter: chunk by chunk until the
 * closing `---` line, and never more than the 64 KiB limit plus one chunk.
 */
async function readSkillHead(file: string): Promise<{ name: string; description: string }> {
  const handle = await openRegular(file);
  try {
    let head = Buffer.alloc(0);
    for (;;) {
      const chunk = Buffer.alloc(READ_CHUNK);
      const { bytesRead } = await handle.read(chunk, 0, READ_CHUNK, null);
      head = Buffer.concat([head, chunk.subarray(0, bytesRead)]);
      const scan = scanFrontmatter(head.toString("utf8"), bytesRead === 0);
      if (scan.state === "open" && scan.yamlBytes > FRONTMATTER_LIMIT) {
        throw new ResourceError("RESOURCE_INVALID", `${file}: frontmatter is larger than 64 KiB`);
      }
      if (scan.state !== "open" || bytesRead === 0) return skillMetadata(closedFrontmatter(scan, file).yaml, file);
    }
  } finally {
    await handle.close();
  }
}

/** Lists a directory; a missing one means "none of this kind", anything else is thrown. */
async function listOptional(dir: string): Promise<Dirent[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((entry) => !entry.name.startsWith(".")).sort((a, b) => compareCodeUnits(a.name, b.name));
  } catch (caught) {
    if (hasCode(caught, "ENOENT")) return [];
    throw caught;
  }
}

/** `stat` that follows symlinks, with a dangling link reported as `undefined`. */
async function statOptional(file: string) {
  try {
    return await stat(file);
  } catch (caught) {
    if (hasCode(caught, "ENOENT")) return undefined;
    throw caught;
  }
}

/** `realpath`, with a path that does not exist (or dangles) reported as `undefined`. */
async function realpathOptional(file: string): Promise<string | undefined> {
  try {
    return await realpath(file);
  } catch (caught) {
    if (hasCode(caught, "ENOENT")) return undefined;
    throw caught;
  }
}

async function canonicalRoot(configured: string): Promise<string> {
  let root: string;
  try {
    root = await realpath(configured);
  } catch (caught) {
    if (!hasCode(caught, "ENOENT", "ENOTDIR")) throw caught;
    throw new ResourceError("RESOURCE_ROOT_MISSING", `resource root ${configured} does not exist`, { cause: caught });
  }
  if (!(await stat(root)).isDirectory()) {
    throw new ResourceError("RESOURCE_ROOT_MISSING", `resource root ${configured} is not a directory`);
  }
  return root;
}

async function discoverInstructions(root: string): Promise<InstructionResource[]> {
  const source = await realpathOptional(path.join(root, "AGENTS.md"));
  if (source === undefined) return [];
  const body = (await readRegularText(source)).trim();
  return [{ kind: "instructions", name: "AGENTS", source, root, body }];
}

/** How many skills discovery reads at once; see `discoverSkills`. */
const SKILLS_IN_FLIGHT = 16;

/**
 * Runs `work` on every item, at most `limit` at a time, and returns the results in input
 * order. When items fail it lets the rest settle, then throws the earliest item's error,
 * so neither the result nor the error depends on which read finished first.
 */
async function mapInOrder<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const outcomes: PromiseSettledResult<R>[] = [];
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < items.length; index = next++) {
      try {
        outcomes[index] = { status: "fulfilled", value: await work(items[index]!) };
      } catch (reason) {
        outcomes[index] = { status: "rejected", reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return outcomes.map((outcome) => {
    if (outcome.status === "rejected") throw outcome.reason;
    return outcome.value;
  });
}

/**
 * One entry of the canonical `skills` folder: its skill, or `undefined` when it is not a
 * folder or holds no SKILL.md. A plain folder's canonical path is just its name joined to
 * the canonical parent; only a symlinked one needs its own `stat` and `realpath`.
 */
async function discoverSkill(skillsFolder: string, entry: Dirent): Promise<SkillResource | undefined> {
  let skillRoot = path.join(skillsFolder, entry.name);
  if (entry.isSymbolicLink()) {
    if (!(await statOptional(skillRoot))?.isDirectory()) return undefined;
    skillRoot = await realpath(skillRoot);
  } else if (!entry.isDirectory()) {
    return undefined;
  }
  const source = await realpathOptional(path.join(skillRoot, "SKILL.md"));
  if (source === undefined) return undefined;
  const { name, description } = await readSkillHead(source);
  return { kind: "skill", name, description, source, root: skillRoot };
}

/**
 * Each skill costs a handful of filesystem round trips, and on a large tree waiting for
 * them one by one dominates; a bounded number of skills in flight overlaps that waiting
 * (see bench/discovery.ts) while `mapInOrder` keeps the output order fixed.
 */
async function discoverSkills(root: string): Promise<SkillResource[]> {
  const skillsFolder = await realpathOptional(path.join(root, "skills"));
  if (skillsFolder === undefined) return [];
  const entries = await listOptional(skillsFolder);
  const skills = await mapInOrder(entries, SKILLS_IN_FLIGHT, (entry) => discoverSkill(skillsFolder, entry));
  return skills.filter((skill) => skill !== undefined);
}

async function discoverTemplates(root: string): Promise<TemplateResource[]> {
  const templates: TemplateResource[] = [];
  const templatesDir = path.join(root, "templates");
  for (const { name: entry } of await listOptional(templatesDir)) {
    if (!entry.endsWith(".md")) continue;
    const info = await statOptional(path.join(templatesDir, entry));
    if (info === undefined || !info.isFile()) continue;
    const source = await realpath(path.join(templatesDir, entry));
    const content = await readRegularText(source);
    const scan = scanFrontmatter(content, true);
    const block = scan.state === "absent" ? undefined : closedFrontmatter(scan, source);
    const fields = block === undefined ? {} : frontmatterFields(block.yaml, source);
    const name = fields["name"] === undefined ? entry.slice(0, -".md".length) : textField(fields, "name", source);
    const description = fields["description"] === undefined ? "" : textField(fields, "description", source);
    const body = (block === undefined ? content : block.body).trim();
    templates.push({ kind: "template", name, description, source, root, body });
  }
  return templates;
}

function compareResources(a: CatalogResource, b: CatalogResource): number {
  const byKind = KIND_ORDER[a.kind] - KIND_ORDER[b.kind];
  if (byKind !== 0) return byKind;
  return compareCodeUnits(a.name, b.name);
}

/**
 * Builds the catalog of `roots`. Guarantees: roots are canonicalised and scanned in the
 * given order, and the first root to supply a `kind:name` wins (a repeat inside one root
 * is `RESOURCE_DUPLICATE`); output is sorted by kind, then name by code unit, never by
 * path; no skill body is ever held (SKILL.md is read only up to its frontmatter); the
 * four arrays are independent deep copies. Only a missing AGENTS.md, `skills/` or
 * `templates/` means "none"; every other I/O error propagates.
 */
export async function discoverResources(roots: readonly string[]): Promise<ResourceCatalog> {
  const winners = new Map<string, CatalogResource>();
  for (const configured of roots) {
    const root = await canonicalRoot(configured);
    const found: CatalogResource[] = [
      ...(await discoverInstructions(root)),
      ...(await discoverSkills(root)),
      ...(await discoverTemplates(root)),
    ];
    const inThisRoot = new Set<string>();
    for (const resource of found) {
      const key = `${resource.kind}:${resource.name}`;
      if (inThisRoot.has(key)) {
        throw new ResourceError("RESOURCE_DUPLICATE", `${key} is defined twice in ${root}`);
      }
      inThisRoot.add(key);
      if (!winners.has(key)) winners.set(key, resource);
    }
  }
  const resources = [...winners.values()].sort(compareResources);
  return {
    resources: structuredClone(resources),
    instructions: structuredClone(resources.filter((r): r is InstructionResource => r.kind === "instructions")),
    skills: structuredClone(resources.filter((r): r is SkillResource => r.kind === "skill")),
    templates: structuredClone(resources.filter((r): r is TemplateResource => r.kind === "template")),
  };
}

// ---------------------------------------------------------------------------
// Lab 12.2 · activation: the body enters only now, and only from inside the root
// ---------------------------------------------------------------------------

/** True when `target` is `root` or below it. Compares path segments, not string prefixes. */
function isInside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative);
}

/** Resolves and reads one requested file, checked lexically and again after realpath. */
async function readInsideSkill(root: string, request: string): Promise<ActivatedSkillFile> {
  if (request === "" || request.includes("\0") || path.isAbsolute(request)) {
    throw new ResourceError("SKILL_PATH_INVALID", `invalid skill resource request ${JSON.stringify(request)}`);
  }
  const candidate = path.resolve(root, request);
  if (!isInside(root, candidate)) {
    throw new ResourceError("SKILL_PATH_ESCAPE", `${request} lies outside the skill root`);
  }
  let source: string;
  try {
    source = await realpath(candidate);
  } catch (caught) {
    if (!hasCode(caught, "ENOENT", "ENOTDIR")) throw caught;
    throw new ResourceError("SKILL_RESOURCE_MISSING", `${request} does not exist in the skill`, { cause: caught });
  }
  if (!isInside(root, source)) {
    throw new ResourceError("SKILL_PATH_ESCAPE", `${request} resolves outside the skill root`);
  }
  return { request, source, content: await readRegularText(source) };
}

/** realpath for activation: a path that no longer exists means the skill changed. */
async function realpathOrChanged(file: string, skill: SkillResource): Promise<string> {
  try {
    return await realpath(file);
  } catch (caught) {
    if (!hasCode(caught, "ENOENT", "ENOTDIR")) throw caught;
    throw new ResourceError("SKILL_CHANGED", `skill "${skill.name}" is gone from ${skill.root}`, { cause: caught });
  }
}

/** Re-reads SKILL.md through realpath, from inside the (unchanged) canonical skill root. */
async function rereadSkill(skill: SkillResource): Promise<{ name: string; body: string }> {
  if ((await realpathOrChanged(skill.root, skill)) !== skill.root) {
    throw new ResourceError("SKILL_CHANGED", `the directory of skill "${skill.name}" moved`);
  }
  const manifest = await realpathOrChanged(path.join(skill.root, "SKILL.md"), skill);
  if (!isInside(skill.root, manifest)) {
    throw new ResourceError("SKILL_PATH_ESCAPE", `SKILL.md of "${skill.name}" resolves outside its root`);
  }
  const { yaml, body } = closedFrontmatter(scanFrontmatter(await readRegularText(manifest), true), manifest);
  return { name: skillMetadata(yaml, manifest).name, body: body.trim() };
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
  if (skill === undefined) throw new ResourceError("SKILL_NOT_FOUND", `no skill named "${name}" in the catalog`);
  const current = await rereadSkill(skill);
  if (current.name !== skill.name) {
    throw new ResourceError("SKILL_CHANGED", `SKILL.md now names "${current.name}", not "${skill.name}"`);
  }
  const files: ActivatedSkillFile[] = [];
  const requested = new Set<string>();
  for (const request of options.resources ?? []) {
    if (requested.has(request)) continue;
    requested.add(request);
    files.push(await readInsideSkill(skill.root, request));
  }
  const { description, source, root } = skill;
  return structuredClone({ kind: "skill", name, description, source, root, body: current.body, resources: files });
}

// ---------------------------------------------------------------------------
// Lab 12.3 · templates become a UserMessage, resources become the systemPrompt
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
    if (typeof value === "string") return value;
    throw new ResourceError("TEMPLATE_ARGUMENT_MISSING", `template "${template.name}" needs an argument "${key}"`);
  });
  return userMessage(rendered);
}

/** Every activated skill must be this catalog's skill of that name, at most once. */
function checkActivations(catalog: ResourceCatalog, activated: readonly ActivatedSkill[]): void {
  const activeNames = new Set<string>();
  for (const skill of activated) {
    if (activeNames.has(skill.name)) throw new ResourceError("ACTIVATION_DUPLICATE", `skill "${skill.name}" is activated twice`);
    activeNames.add(skill.name);
    const own = catalog.skills.find((candidate) => candidate.name === skill.name);
    if (own === undefined || own.source !== skill.source || own.root !== skill.root) {
      throw new ResourceError("ACTIVATION_FOREIGN", `skill "${skill.name}" does not belong to this catalog`);
    }
  }
}

/**
 * The system prompt text of a catalog and this turn's activated skills. Layout, with
 * sections joined by a blank line and empty sections left out:
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
  checkActivations(catalog, activated);
  const sections: string[] = [];
  if (catalog.instructions.length > 0) {
    sections.push("# Instructions", ...catalog.instructions.map((instruction) => instruction.body));
  }
  if (catalog.skills.length > 0) {
    sections.push("# Skills", catalog.skills.map((skill) => `- ${skill.name}: ${skill.description}`).join("\n"));
  }
  const active = [...activated].sort((a, b) => compareCodeUnits(a.name, b.name));
  for (const skill of active) {
    sections.push(`# Active skill: ${skill.name}`);
    if (skill.body !== "") sections.push(skill.body);
    for (const file of skill.resources) sections.push(`## ${file.request}`, file.content);
  }
  return sections.join("\n\n");
}

// ---------------------------------------------------------------------------
// Lab 12.4 · trust before import, staging before commit
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

  /** Records registrations in local arrays; nothing becomes visible before `commit`. */
  stage(extensionId: string): StagedRegistration {
    const tools: Tool[] = [];
    const staged: HookLists = { before: [], after: [] };
    let accepting = true;
    const context: ExtensionContext = Object.freeze({
      registerTool(tool: Tool) {
        if (!accepting) throw closedContext(extensionId);
        tools.push(tool);
      },
      on(hook: "beforeToolCall" | "afterToolResult", listener: BeforeToolCallHook | AfterToolResultHook) {
        if (!accepting) throw closedContext(extensionId);
        if (typeof listener !== "function") throw new ResourceError("EXTENSION_INVALID", `${hook} listener is not a function`);
        if (hook === "beforeToolCall") staged.before.push({ extensionId, listener: listener as BeforeToolCallHook });
        else if (hook === "afterToolResult") staged.after.push({ extensionId, listener: listener as AfterToolResultHook });
        else throw new ResourceError("EXTENSION_INVALID", `unknown hook ${JSON.stringify(hook)}`);
      },
    });
    const commit = () => {
      if (this.#active.has(extensionId)) {
        throw new ResourceError("EXTENSION_DUPLICATE", `extension "${extensionId}" is already active`);
      }
      const names = new Set<string>();
      for (const tool of tools) {
        if (names.has(tool.name) || this.#registry.get(tool.name) !== undefined) {
          throw new ResourceError("TOOL_CONFLICT", `extension "${extensionId}": tool "${tool.name}" already exists`);
        }
        names.add(tool.name);
      }
      // Every check has passed: from here on nothing can fail, so all of it appears at once.
      for (const tool of tools) this.#registry.register(tool);
      this.#hooks.before.push(...staged.before);
      this.#hooks.after.push(...staged.after);
      this.#active.add(extensionId);
    };
    const close = () => {
      accepting = false;
    };
    return { context, close, commit };
  }

  wrapExecutor(coreExecutor: ToolExecutor): ToolExecutor {
    return hookedExecutor(this.#hooks, this.#options, coreExecutor);
  }
}

function closedContext(extensionId: string): ResourceError {
  return new ResourceError("EXTENSION_CONTEXT_CLOSED", `extension "${extensionId}" registered after its factory finished`);
}

/** Module-internal narrowing: only hosts made by `createExtensionHost` can stage. */
function hostImplementation(host: ExtensionHost): ExtensionHostImpl {
  if (!(host instanceof ExtensionHostImpl)) {
    throw new ResourceError("INVALID_ARGUMENT", "options.host was not created by createExtensionHost");
  }
  return host;
}

/**
 * Creates a host that commits extensions' tools into `registry` and runs their hooks.
 * Its only public method is `wrapExecutor`; staging is reachable from `loadExtension`
 * alone. `hookTimeoutMs` must be a positive number of milliseconds that `setTimeout`
 * can honour (at most 2^31 − 1), else `INVALID_ARGUMENT`.
 */
export function createExtensionHost(registry: ToolRegistry, options: ExtensionHostOptions): ExtensionHost {
  const timeout = options.hookTimeoutMs;
  if (typeof timeout !== "number" || !(timeout > 0) || timeout > 2 ** 31 - 1) {
    throw new ResourceError("INVALID_ARGUMENT", `hookTimeoutMs must be a positive number of milliseconds up to 2^31-1, got ${timeout}`);
  }
  return new ExtensionHostImpl(registry, { hookTimeoutMs: timeout, onDiagnostic: options.onDiagnostic });
}

async function importFromPath(source: Readonly<ExtensionSource>): Promise<unknown> {
  return import(pathToFileURL(source.path).href);
}

function factoryOf(module: unknown, id: string): ExtensionModule["default"] {
  const factory = typeof module === "object" && module !== null ? (module as { default?: unknown }).default : undefined;
  if (typeof factory !== "function") {
    throw new ResourceError("EXTENSION_INVALID", `extension "${id}" has no default export function`);
  }
  return factory as ExtensionModule["default"];
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}

/**
 * Runs the factory against the staging context, which closes the moment the factory
 * returns or (for an async factory) its promise settles. A never-settling factory is
 * waited for: factories get no timeout in this course.
 */
async function runFactory(factory: ExtensionModule["default"], staged: StagedRegistration, id: string): Promise<void> {
  try {
    const returned: unknown = factory(staged.context);
    if (isThenable(returned)) await returned;
  } catch (caught) {
    throw new ResourceError("EXTENSION_FACTORY_FAILED", `extension "${id}" factory failed: ${reasonOf(caught)}`, {
      cause: caught,
    });
  } finally {
    staged.close();
  }
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
  if (host.isActive(source.id)) {
    throw new ResourceError("EXTENSION_DUPLICATE", `extension "${source.id}" is already active`);
  }
  const frozen: Readonly<ExtensionSource> = Object.freeze({ id: source.id, path: source.path });
  const trusted = (await options.isTrusted(frozen)) === true;
  if (!trusted) {
    return { id: frozen.id, status: "skipped_untrusted" };
  }
  const module = await (options.importModule ?? importFromPath)(frozen);
  const factory = factoryOf(module, frozen.id);
  const staged = host.stage(frozen.id);
  await runFactory(factory, staged, frozen.id);
  staged.commit();
  return { id: frozen.id, status: "active" };
}

// ---------------------------------------------------------------------------
// Lab 12.5 · before hooks decide, core runs once, after hooks only observe
// ---------------------------------------------------------------------------

type Settled<T> = { kind: "value"; value: T } | { kind: "error"; error: unknown } | { kind: "timeout" };

/** Waits for one hook at most `timeoutMs`; the timer is cleared, so it never outlives the wait. */
async function settleWithin<T>(run: () => T | Promise<T>, timeoutMs: number): Promise<Settled<T>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<Settled<T>>((resolve) => {
    timer = setTimeout(() => resolve({ kind: "timeout" }), timeoutMs);
  });
  const attempt = (async (): Promise<Settled<T>> => {
    try {
      return { kind: "value", value: await run() };
    } catch (caught) {
      return { kind: "error", error: caught };
    }
  })();
  try {
    return await Promise.race([attempt, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Freezes `target` and everything reachable from it, so a hook cannot change what it sees,
 * and so one frozen copy can be handed to every hook in turn. Calls and results are plain
 * JSON data (Chapter 03), which this locks completely; `Object.freeze` could not lock a
 * Map's entries, and it throws on a typed array that holds elements.
 */
function deepFreeze<T>(target: T): T {
  if (typeof target !== "object" || target === null || Object.isFrozen(target)) return target;
  Object.freeze(target); // before recursing, so a cycle ends here
  for (const key of Reflect.ownKeys(target)) deepFreeze((target as Record<PropertyKey, unknown>)[key]);
  return target;
}

/** A throwing (or rejecting) `onDiagnostic` is ignored: reporting must never break a call. */
function report(options: ExtensionHostOptions, diagnostic: ExtensionDiagnostic): void {
  try {
    const returned: unknown = options.onDiagnostic?.(diagnostic);
    if (isThenable(returned)) Promise.resolve(returned).catch(() => {});
  } catch {
    // The reporting channel itself failed; there is nowhere left to report to.
  }
}

/** A hook that threw (`error`) or was still pending when the wait ended (`timeout`), with a reason. */
function failureOf(outcome: Exclude<Settled<unknown>, { kind: "value" }>, timeoutMs: number) {
  return outcome.kind === "timeout"
    ? { kind: "timeout" as const, reason: `no answer within ${timeoutMs} ms` }
    : { kind: "error" as const, reason: reasonOf(outcome.error) };
}

/**
 * What a before hook answered: `undefined` or an allow continues (`null`); a deny with a
 * string reason blocks with kind `deny`; a throw or a timeout fails (see `failureOf`), and
 * any other return is malformed, kind `error`, since the host cannot tell what was meant.
 */
function verdictOf(outcome: Settled<unknown>, timeoutMs: number) {
  if (outcome.kind !== "value") return failureOf(outcome, timeoutMs);
  const value = outcome.value as { decision?: unknown; reason?: unknown } | undefined;
  if (value === undefined || (typeof value === "object" && value !== null && value.decision === "allow")) return null;
  if (typeof value === "object" && value !== null && value.decision === "deny" && typeof value.reason === "string") {
    return { kind: "deny" as const, reason: value.reason };
  }
  return { kind: "error" as const, reason: `malformed decision ${String(JSON.stringify(value))}` };
}

/** The result a refused call gets instead of core's: paired with the call, `isError: true`. */
function blockedResult(call: ToolCall, extensionId: string, kind: "deny" | "error" | "timeout", reason: string): ToolResultMessage {
  const content = [text(`tool call "${call.name}" blocked by extension "${extensionId}" (${kind}): ${reason}`)];
  const details = { blockedByExtension: extensionId, kind, reason };
  return { role: "toolResult", toolCallId: call.id, toolName: call.name, isError: true, content, details, timestamp: Date.now() };
}

/** `call` is the wrapper's own deep-frozen copy: every before hook may see the same one. */
async function runBefore(hooks: HookLists, options: ExtensionHostOptions, call: Readonly<ToolCall>) {
  for (const { extensionId, listener } of [...hooks.before]) {
    const outcome = await settleWithin(() => listener(call), options.hookTimeoutMs);
    const verdict = verdictOf(outcome, options.hookTimeoutMs);
    if (verdict === null) continue;
    if (verdict.kind !== "deny") {
      report(options, { extensionId, hook: "beforeToolCall", kind: verdict.kind, message: verdict.reason });
    }
    return blockedResult(call, extensionId, verdict.kind, verdict.reason);
  }
  return undefined; // every before hook allowed the call
}

async function runAfter(hooks: HookLists, options: ExtensionHostOptions, fact: ToolResultMessage): Promise<void> {
  const listeners = [...hooks.after];
  if (listeners.length === 0) return;
  // One frozen snapshot serves every observer: none of them can change it, so sharing it
  // isolates them as well as a copy each would, at the cost of one copy instead of many.
  const observed = deepFreeze(structuredClone(fact));
  for (const { extensionId, listener } of listeners) {
    const outcome = await settleWithin(() => listener(observed), options.hookTimeoutMs);
    if (outcome.kind === "value") continue; // an observer's return value means nothing
    const failure = failureOf(outcome, options.hookTimeoutMs);
    report(options, { extensionId, hook: "afterToolResult", kind: failure.kind, message: failure.reason });
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
  return async (sourceCall) => {
    // Frozen once: the before hooks share it, and core gets a thawed copy of its own.
    const call = deepFreeze(structuredClone(sourceCall));
    const blocked = await runBefore(hooks, options, call);
    if (blocked !== undefined) return blocked;
    // One private snapshot of core's fact: the after hooks share one frozen copy of it, and
    // the caller gets the snapshot itself.
    const fact = structuredClone(await core(structuredClone(call)));
    await runAfter(hooks, options, fact);
    return fact;
  };
}
