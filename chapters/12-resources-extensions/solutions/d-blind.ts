// @ts-nocheck: written blind from the chapter text by a learner who saw only the practice folder; verify and mistakes drop this line when they build it in place of resources.ts.
/**
 * Chapter 12 · resources and extensions — the practice starter.
 *
 * The six exported functions are fixed (the tests and Chapter 13 use them); every body is
 * a construction site named after its lab. Build them in order: Lab 12.1 catalog → 12.2
 * activation → 12.3 templates and context → 12.4 trust and staging → 12.5 hooks. Add
 * private helpers as you need them; keep the exports.
 *
 * Run one lab:  npm run build -w @pi/course, then
 *   node --test --test-name-pattern="Lab 12.1" packages/pi-course/dist/test/12-resources-extensions.test.js
 *
 * You write this file only. The public types, the error codes and `ResourceError` live in
 * `resource-types.ts` beside it (read it first: it is the chapter's contract) and are
 * re-exported below, so callers import everything from here. Four more modules beside it
 * are provided and complete, and the labs do not need them: `resource-files.ts` (reading
 * files proven against swaps, at most 1 MiB, text only; `RESOURCE_SIZE_LIMIT` comes from
 * it), `extension-values.ts` (copies, freezing, descriptions and name pinning for what
 * crosses the extension boundary), `skill-spec.ts` (the Agent Skills rules lenient
 * discovery warns about) and `yaml-errors.ts` (where in a file a YAML error lies). Some
 * declarations in `resource-types.ts` (lenient discovery's `DiscoverOptions`, the
 * diagnostic and warning types, `factoryTimeoutMs`, the error codes of real-world files)
 * serve the challenge tier: no lab asks for them.
 */
// The imports below are the tools the reference uses; unused ones are fine while you build.
import { open, readdir, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parse as parseYaml } from "yaml";
import {
  ResourceError,
  type ActivatedSkill,
  type ActivatedSkillFile,
  type AfterToolResultHook,
  type BeforeToolCallHook,
  type CatalogResource,
  type DiscoverOptions,
  type ExtensionContext,
  type ExtensionDiagnostic,
  type ExtensionHost,
  type ExtensionHostOptions,
  type ExtensionModule,
  type ExtensionSource,
  type InstructionResource,
  type LoadExtensionOptions,
  type LoadExtensionResult,
  type ResourceCatalog,
  type ResourceDiagnostic,
  type ResourceErrorCode,
  type SkillResource,
  type TemplateResource,
} from "./resource-types.js";
import type { Tool, ToolExecutor, ToolRegistry } from "./tool.js";
import { text, userMessage, type ToolCall, type ToolResultMessage, type UserMessage } from "./types.js";

export { RESOURCE_SIZE_LIMIT } from "./resource-files.js";
export * from "./resource-types.js";

/** The scaffold's "not built yet" error: its message names the lab that builds the code. */
function labError(lab: string): Error {
  return new Error(`${lab} 尚未实现`);
}

// ── Lab 12.1 · roots 的顺序决定清单里谁胜出 ──

const FRONTMATTER_LIMIT = 64 * 1024;
const KIND_ORDER: Record<CatalogResource["kind"], number> = { instructions: 0, skill: 1, template: 2 };

function hasCode(error: unknown, ...codes: string[]): boolean {
  return typeof error === "object" && error !== null && codes.includes((error as { code?: unknown }).code as string);
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** realpath of a configured root; missing or not a directory → RESOURCE_ROOT_MISSING. */
async function canonicalRoot(root: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(root);
  } catch (error) {
    if (hasCode(error, "ENOENT", "ENOTDIR")) {
      throw new ResourceError("RESOURCE_ROOT_MISSING", `resource root ${root} does not exist`, { cause: error });
    }
    throw error;
  }
  const info = await stat(real);
  if (!info.isDirectory()) throw new ResourceError("RESOURCE_ROOT_MISSING", `resource root ${root} is not a directory`);
  return real;
}

/** The result of splitting a file's text at its frontmatter. */
type FrontmatterSplit =
  | { kind: "none"; body: string }
  | { kind: "unclosed"; yamlBytes: number }
  | { kind: "closed"; yaml: string; body: string; complete: boolean };

/** One line of `text` starting at `start`: its content (without \r\n) and where the next line starts (-1 at EOF). */
function lineAt(text: string, start: number): { line: string; next: number } {
  const end = text.indexOf("\n", start);
  const raw = end === -1 ? text.slice(start) : text.slice(start, end);
  return { line: raw.endsWith("\r") ? raw.slice(0, -1) : raw, next: end === -1 ? -1 : end + 1 };
}

function stripBom(raw: string): string {
  return raw.startsWith("\uFEFF") ? raw.slice(1) : raw;
}

/**
 * Splits text at the frontmatter: the first line (after an optional BOM) is exactly
 * `---`; the block runs to the next line that is exactly `---`.
 */
function splitFrontmatter(raw: string): FrontmatterSplit {
  const whole = stripBom(raw);
  const first = lineAt(whole, 0);
  if (first.line !== "---") return { kind: "none", body: whole };
  if (first.next === -1) return { kind: "unclosed", yamlBytes: 0 };
  const yamlStart = first.next;
  let position = yamlStart;
  while (position < whole.length) {
    const { line, next } = lineAt(whole, position);
    if (line === "---") {
      return { kind: "closed", yaml: whole.slice(yamlStart, position), body: next === -1 ? "" : whole.slice(next), complete: next !== -1 };
    }
    if (next === -1) break;
    position = next;
  }
  return { kind: "unclosed", yamlBytes: Buffer.byteLength(whole.slice(yamlStart)) };
}

/**
 * Reads only the prefix of `file` that holds its frontmatter: chunk by chunk through a file
 * handle, stopping at the closing `---` line, at a first line that is not `---`, or once the
 * YAML block passes 64 KiB (the unfinished last line counts). Never reads a skill's body.
 */
async function readFrontmatterPrefix(file: string): Promise<string> {
  const handle = await open(file, "r");
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    const chunk = Buffer.alloc(16 * 1024);
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      chunks.push(Buffer.from(chunk.subarray(0, bytesRead)));
      total += bytesRead;
      const soFar = stripBom(Buffer.concat(chunks, total).toString("utf8"));
      const split = splitFrontmatter(soFar);
      if (split.kind === "none") {
        // Stop once the first line can no longer turn out to be `---`.
        if (soFar.includes("\n") || !"---\r".startsWith(soFar)) break;
        continue;
      }
      if (split.kind === "closed" && split.complete) break;
      if (split.kind === "unclosed" && split.yamlBytes > FRONTMATTER_LIMIT) break;
    }
    return Buffer.concat(chunks, total).toString("utf8");
  } finally {
    await handle.close();
  }
}

interface ParsedFrontmatter {
  data: Record<string, unknown> | undefined;
  body: string;
}

/** Parses the frontmatter of `raw`; unclosed, over 64 KiB, bad YAML or not a mapping → RESOURCE_INVALID. */
function parseFrontmatter(file: string, raw: string): ParsedFrontmatter {
  const split = splitFrontmatter(raw);
  if (split.kind === "none") return { data: undefined, body: split.body };
  if (split.kind === "unclosed") {
    const detail = split.yamlBytes > FRONTMATTER_LIMIT ? "is larger than 64 KiB" : "has no closing --- line";
    throw new ResourceError("RESOURCE_INVALID", `${file}: frontmatter ${detail}`);
  }
  if (Buffer.byteLength(split.yaml) > FRONTMATTER_LIMIT) {
    throw new ResourceError("RESOURCE_INVALID", `${file}: frontmatter is larger than 64 KiB`);
  }
  let value: unknown;
  try {
    value = parseYaml(split.yaml);
  } catch (error) {
    throw new ResourceError("RESOURCE_INVALID", `${file}: frontmatter is not valid YAML: ${(error as Error).message}`, { cause: error });
  }
  if (value === null || value === undefined) value = {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new ResourceError("RESOURCE_INVALID", `${file}: frontmatter is not a mapping`);
  }
  return { data: value as Record<string, unknown>, body: split.body };
}

function requireText(file: string, data: Record<string, unknown>, field: string): string {
  const value = data[field];
  if (typeof value !== "string" || value.trim() === "") {
    throw new ResourceError("RESOURCE_INVALID", `${file}: frontmatter ${field} must be a non-empty string`);
  }
  return value;
}

/** A SKILL.md's name and description (both required) and whatever body text was read. */
function skillMetadata(file: string, raw: string): { name: string; description: string; body: string } {
  const parsed = parseFrontmatter(file, raw);
  if (parsed.data === undefined) throw new ResourceError("RESOURCE_INVALID", `${file}: SKILL.md has no frontmatter`);
  return { name: requireText(file, parsed.data, "name"), description: requireText(file, parsed.data, "description"), body: parsed.body };
}

/** Lists a directory, or `undefined` when it does not exist (only ENOENT means "none"). */
async function listIfPresent(dir: string): Promise<string[] | undefined> {
  try {
    return await readdir(dir);
  } catch (error) {
    if (hasCode(error, "ENOENT")) return undefined;
    throw error;
  }
}

async function realpathIfPresent(file: string): Promise<string | undefined> {
  try {
    return await realpath(file);
  } catch (error) {
    if (hasCode(error, "ENOENT")) return undefined;
    throw error;
  }
}

async function readWholeFile(file: string): Promise<string> {
  const handle = await open(file, "r");
  try {
    return await handle.readFile({ encoding: "utf8" });
  } finally {
    await handle.close();
  }
}

/** Every resource one canonical root supplies; a repeated kind:name inside it is RESOURCE_DUPLICATE. */
async function scanRoot(root: string): Promise<CatalogResource[]> {
  const found: CatalogResource[] = [];
  const seen = new Set<string>();
  const add = (resource: CatalogResource): void => {
    const identity = `${resource.kind}:${resource.name}`;
    if (seen.has(identity)) {
      throw new ResourceError("RESOURCE_DUPLICATE", `${identity} appears twice in ${root} (again at ${resource.source})`);
    }
    seen.add(identity);
    found.push(resource);
  };

  const agents = await realpathIfPresent(path.join(root, "AGENTS.md"));
  if (agents !== undefined) {
    const body = (await readWholeFile(agents)).trim();
    add({ kind: "instructions", name: "AGENTS", source: agents, root, body });
  }

  const skillDirs = await listIfPresent(path.join(root, "skills"));
  for (const entry of (skillDirs ?? []).sort(compareCodeUnits)) {
    if (entry.startsWith(".")) continue;
    const dir = path.join(root, "skills", entry);
    let info;
    try {
      info = await stat(dir);
    } catch (error) {
      if (hasCode(error, "ENOENT")) continue;
      throw error;
    }
    if (!info.isDirectory()) continue;
    const skillFile = await realpathIfPresent(path.join(dir, "SKILL.md"));
    if (skillFile === undefined) continue;
    const skillRoot = await realpath(dir);
    const { name, description } = skillMetadata(skillFile, await readFrontmatterPrefix(skillFile));
    add({ kind: "skill", name, description, source: skillFile, root: skillRoot });
  }

  const templateFiles = await listIfPresent(path.join(root, "templates"));
  for (const entry of (templateFiles ?? []).sort(compareCodeUnits)) {
    if (entry.startsWith(".") || !entry.endsWith(".md")) continue;
    const file = await realpathIfPresent(path.join(root, "templates", entry));
    if (file === undefined) continue;
    if (!(await stat(file)).isFile()) continue;
    const parsed = parseFrontmatter(file, await readWholeFile(file));
    let name = entry.slice(0, -".md".length);
    let description = "";
    if (parsed.data !== undefined) {
      if (Object.hasOwn(parsed.data, "name")) name = requireText(file, parsed.data, "name");
      if (Object.hasOwn(parsed.data, "description")) description = requireText(file, parsed.data, "description");
    }
    add({ kind: "template", name, description, source: file, root, body: parsed.body.trim() });
  }
  return found;
}

/**
 * Builds the catalog of `roots`. Guarantees: roots are canonicalised and scanned in the
 * given order, and the first root to supply a `kind:name` wins (a repeat inside one root
 * is `RESOURCE_DUPLICATE`); output is sorted by kind, then name by code unit, never by
 * path; no skill body is ever held (SKILL.md is read only up to its frontmatter); the
 * four arrays are independent deep copies. Only a missing AGENTS.md, `skills/` or
 * `templates/` means "none"; every other I/O error propagates.
 *
 * `options` (lenient mode with diagnostics) is the challenge tier's; the labs never pass
 * it, so your version may leave it unused.
 */
export async function discoverResources(roots: readonly string[], options: DiscoverOptions = {}): Promise<ResourceCatalog> {
  void options;
  const winners = new Map<string, CatalogResource>();
  for (const configured of roots) {
    const root = await canonicalRoot(configured);
    for (const resource of await scanRoot(root)) {
      const identity = `${resource.kind}:${resource.name}`;
      if (!winners.has(identity)) winners.set(identity, resource);
    }
  }
  const sorted = [...winners.values()].sort(
    (a, b) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || compareCodeUnits(a.name, b.name),
  );
  return {
    resources: structuredClone(sorted),
    instructions: structuredClone(sorted.filter((r): r is InstructionResource => r.kind === "instructions")),
    skills: structuredClone(sorted.filter((r): r is SkillResource => r.kind === "skill")),
    templates: structuredClone(sorted.filter((r): r is TemplateResource => r.kind === "template")),
  };
}

// ── Lab 12.2 · 激活时才把技能正文交给本轮 ──

/** Whether `target` lies inside `root` (or is it): path.relative, never a string prefix. */
function isInside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative);
}

/** Reads one requested file of a skill: shape → lexical containment → realpath → canonical containment. */
async function readSkillFile(root: string, request: string): Promise<ActivatedSkillFile> {
  if (request === "" || request.includes("\0") || path.isAbsolute(request)) {
    throw new ResourceError("SKILL_PATH_INVALID", `skill resource request ${JSON.stringify(request)} is not a relative path`);
  }
  const target = path.resolve(root, request);
  if (!isInside(root, target)) {
    throw new ResourceError("SKILL_PATH_ESCAPE", `skill resource ${JSON.stringify(request)} resolves outside ${root}`);
  }
  let real: string;
  try {
    real = await realpath(target);
  } catch (error) {
    if (hasCode(error, "ENOENT", "ENOTDIR")) {
      throw new ResourceError("SKILL_RESOURCE_MISSING", `skill resource ${JSON.stringify(request)} does not exist`, { cause: error });
    }
    throw error;
  }
  if (!isInside(root, real)) {
    throw new ResourceError("SKILL_PATH_ESCAPE", `skill resource ${JSON.stringify(request)} follows a link outside ${root}`);
  }
  return { request, source: real, content: await readWholeFile(real) };
}


/**
 * Activates the catalog's skill `name` for this turn. Guarantees: SKILL.md is re-read
 * through realpath from inside the canonical skill root and must still declare the same
 * name (`SKILL_CHANGED`); each requested file is read only if it lies inside the root
 * both lexically and after following symlinks; duplicate requests collapse to the first.
 * The result keeps the catalog's metadata and is a fresh copy: changing it never
 * changes the catalog.
 */
export async function activateSkill(catalog: ResourceCatalog, name: string, options: { resources?: readonly string[] } = {}): Promise<ActivatedSkill> {
  const skill = catalog.skills.find((candidate) => candidate.name === name);
  if (skill === undefined) throw new ResourceError("SKILL_NOT_FOUND", `no skill named ${JSON.stringify(name)} in the catalog`);
  const root = skill.root;
  let skillFile: string;
  try {
    skillFile = await realpath(path.join(root, "SKILL.md"));
  } catch (error) {
    if (hasCode(error, "ENOENT", "ENOTDIR")) {
      throw new ResourceError("SKILL_CHANGED", `skill ${name}: ${path.join(root, "SKILL.md")} is gone`, { cause: error });
    }
    throw error;
  }
  if (!isInside(root, skillFile)) {
    throw new ResourceError("SKILL_PATH_ESCAPE", `skill ${name}: SKILL.md now points outside ${root}`);
  }
  const current = skillMetadata(skillFile, await readWholeFile(skillFile));
  if (current.name !== skill.name) {
    throw new ResourceError("SKILL_CHANGED", `skill ${name}: SKILL.md now declares ${JSON.stringify(current.name)}`);
  }
  const requests = [...new Set(options.resources ?? [])];
  const files: ActivatedSkillFile[] = [];
  for (const request of requests) files.push(await readSkillFile(root, request));
  return { ...structuredClone(skill), body: current.body.trim(), resources: files };
}

// ── Lab 12.3 · 模板与技能从两个入口汇入一次请求 ──

/**
 * Renders `template` with `args` into a canonical `UserMessage` stamped `Date.now()`.
 * Only `{{identifier}}` is a placeholder; every occurrence is replaced in one pass, so
 * an argument's own `{{x}}`, `$&` or `$1` stays literal. A placeholder without an
 * argument throws `TEMPLATE_ARGUMENT_MISSING` naming it; extra arguments are ignored.
 */
export function renderTemplate(template: TemplateResource, args: Readonly<Record<string, string>>): UserMessage {
  const body = template.body.replace(/\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}/g, (_match, key: string) => {
    if (!Object.hasOwn(args, key)) {
      throw new ResourceError("TEMPLATE_ARGUMENT_MISSING", `template ${template.name} needs the argument ${key}`);
    }
    return args[key]!;
  });
  return userMessage(body);
}

/** One line of metadata (§C5.5): controls that are not whitespace and bidi controls dropped, whitespace collapsed, trimmed. */
function oneLine(value: string): string {
  const visible = [...value].filter((character) => !((/\p{Cc}/u.test(character) && !/\s/.test(character)) || /[\u202A-\u202E\u2066-\u2069]/.test(character)));
  return visible.join("").replace(/\s+/g, " ").trim();
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
  const names = new Set<string>();
  for (const skill of activated) {
    if (names.has(skill.name)) {
      throw new ResourceError("ACTIVATION_DUPLICATE", `skill ${skill.name} is activated more than once`);
    }
    names.add(skill.name);
    const own = catalog.skills.find((candidate) => candidate.name === skill.name);
    if (own === undefined || own.source !== skill.source || own.root !== skill.root) {
      throw new ResourceError("ACTIVATION_FOREIGN", `skill ${skill.name} was not activated from this catalog`);
    }
  }
  const sections: string[] = [];
  const instructionBodies = catalog.instructions.map((instruction) => instruction.body).filter((body) => body !== "");
  if (instructionBodies.length > 0) sections.push("# Instructions", ...instructionBodies);
  if (catalog.skills.length > 0) {
    sections.push("# Skills", catalog.skills.map((skill) => `- ${oneLine(skill.name)}: ${oneLine(skill.description)}`).join("\n"));
  }
  const ordered = [...activated].sort((a, b) => compareCodeUnits(a.name, b.name));
  for (const skill of ordered) {
    sections.push(`# Active skill: ${oneLine(skill.name)}`, skill.body);
    for (const file of skill.resources) sections.push(`## ${oneLine(file.request)}`, file.content);
  }
  return sections.filter((section) => section !== "").join("\n\n");
}

// ── Lab 12.4 · 扩展先获准，再一次性注册 ──

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

  stage(extensionId: string): StagedRegistration {
    const tools: Tool[] = [];
    const before: HookEntry<BeforeToolCallHook>[] = [];
    const after: HookEntry<AfterToolResultHook>[] = [];
    let closed = false;
    const ensureOpen = (what: string): void => {
      if (closed) {
        throw new ResourceError("EXTENSION_CONTEXT_CLOSED", `extension ${extensionId}: ${what} after its factory finished`);
      }
    };
    const on = (hook: string, listener: unknown): void => {
      ensureOpen(`on(${JSON.stringify(hook)})`);
      if (typeof listener !== "function") {
        throw new ResourceError("INVALID_ARGUMENT", `extension ${extensionId}: a ${hook} listener must be a function`);
      }
      if (hook === "beforeToolCall") before.push({ extensionId, listener: listener as BeforeToolCallHook });
      else if (hook === "afterToolResult") after.push({ extensionId, listener: listener as AfterToolResultHook });
      else throw new ResourceError("INVALID_ARGUMENT", `extension ${extensionId}: unknown hook ${JSON.stringify(hook)}`);
    };
    const context: ExtensionContext = Object.freeze({
      registerTool(tool: Tool): void {
        ensureOpen("registerTool");
        tools.push(tool);
      },
      on: on as ExtensionContext["on"],
    });
    return {
      context,
      close: () => {
        closed = true;
      },
      commit: () => {
        closed = true;
        if (this.#active.has(extensionId)) {
          throw new ResourceError("EXTENSION_DUPLICATE", `extension ${extensionId} is already active`);
        }
        const names = new Set<string>();
        for (const tool of tools) {
          if (names.has(tool.name)) {
            throw new ResourceError("TOOL_CONFLICT", `extension ${extensionId} registers the tool ${tool.name} twice`);
          }
          names.add(tool.name);
          if (this.#registry.get(tool.name) !== undefined) {
            throw new ResourceError("TOOL_CONFLICT", `extension ${extensionId}: a tool named ${tool.name} is already registered`);
          }
        }
        for (const tool of tools) this.#registry.register(tool);
        this.#hooks.before.push(...before);
        this.#hooks.after.push(...after);
        this.#active.add(extensionId);
      },
    };
  }

  wrapExecutor(coreExecutor: ToolExecutor): ToolExecutor {
    return hookedExecutor(this.#hooks, this.#options, coreExecutor);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as { then?: unknown }).then === "function";
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

/**
 * Creates a host that commits extensions' tools into `registry` and runs their hooks.
 * Its only public method is `wrapExecutor`; staging is reachable from `loadExtension`
 * alone. `hookTimeoutMs` must be a positive number of milliseconds that `setTimeout`
 * can honour (at most 2^31 − 1), else `INVALID_ARGUMENT`.
 */
export function createExtensionHost(registry: ToolRegistry, options: ExtensionHostOptions): ExtensionHost {
  const timeout = options?.hookTimeoutMs;
  if (typeof timeout !== "number" || !(timeout > 0) || timeout > 2 ** 31 - 1) {
    throw new ResourceError("INVALID_ARGUMENT", `hookTimeoutMs must be a positive number of milliseconds up to 2^31 - 1, got ${String(timeout)}`);
  }
  return publicFace(new ExtensionHostImpl(registry, { ...options }));
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
  const impl = hostImplementation(options.host);
  const id = source.id;
  if (impl.isActive(id)) throw new ResourceError("EXTENSION_DUPLICATE", `extension ${id} is already active on this host`);
  const frozen: Readonly<ExtensionSource> = Object.freeze({ id: source.id, path: source.path });
  const trusted = await options.isTrusted(frozen);
  if (trusted !== true) return { id, status: "skipped_untrusted" };
  let loaded: unknown;
  try {
    loaded = options.importModule !== undefined ? await options.importModule(frozen) : await import(pathToFileURL(frozen.path).href);
  } catch (error) {
    throw new ResourceError("EXTENSION_IMPORT_FAILED", `extension ${id}: import failed: ${messageOf(error)}`, { cause: error });
  }
  const factory = (typeof loaded === "object" || typeof loaded === "function") && loaded !== null ? (loaded as { default?: unknown }).default : undefined;
  if (typeof factory !== "function") {
    throw new ResourceError("EXTENSION_INVALID", `extension ${id}: the module's default export is not a factory function`);
  }
  const staged = impl.stage(id);
  try {
    const returned: unknown = (factory as ExtensionModule["default"])(staged.context);
    if (isThenable(returned)) {
      await returned;
    }
  } catch (error) {
    staged.close();
    throw new ResourceError("EXTENSION_FACTORY_FAILED", `extension ${id}: factory failed: ${messageOf(error)}`, { cause: error });
  }
  staged.close();
  staged.commit();
  return { id, status: "active" };
}

// ── Lab 12.5 · 一次工具调用怎样穿过 hook ──

type HookOutcome = { status: "done"; value: unknown } | { status: "error"; error: unknown } | { status: "timeout" };

/** Runs `hook` and waits for it at most `timeoutMs`; the timer is always cleared. Never rejects. */
async function runHook(hook: () => unknown, timeoutMs: number): Promise<HookOutcome> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const answer = Promise.resolve()
      .then(hook)
      .then(
        (value): HookOutcome => ({ status: "done", value }),
        (error: unknown): HookOutcome => ({ status: "error", error }),
      );
    const timeout = new Promise<HookOutcome>((resolve) => {
      timer = setTimeout(() => resolve({ status: "timeout" }), timeoutMs);
    });
    return await Promise.race([answer, timeout]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/** Freezes `value` and everything reachable from it; returns it. */
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key]);
  }
  return value;
}

/** Hands a diagnostic to the host's owner; a throwing (or rejecting) handler cannot interrupt the call. */
function report(options: ExtensionHostOptions, diagnostic: ExtensionDiagnostic): void {
  if (options.onDiagnostic === undefined) return;
  try {
    const returned: unknown = options.onDiagnostic(diagnostic);
    if (isThenable(returned)) Promise.resolve(returned).catch(() => undefined);
  } catch {
    // The owner's handler failed; the call goes on.
  }
}

/** The paired error result a blocked call gets. */
function blockedResult(call: ToolCall, extensionId: string, kind: "deny" | "error" | "timeout", reason: string): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId: call.id,
    toolName: call.name,
    content: [text(`Extension ${extensionId} blocked ${call.name} (${kind}): ${reason}`)],
    details: { blockedByExtension: extensionId, kind, reason },
    isError: true,
    timestamp: Date.now(),
  };
}

/** Classifies a before hook's answer: allow, deny with a reason, or malformed (undefined). */
function beforeDecision(value: unknown): { decision: "allow" } | { decision: "deny"; reason: string } | undefined {
  if (value === undefined) return { decision: "allow" };
  if (typeof value !== "object" || value === null) return undefined;
  const answer = value as { decision?: unknown; reason?: unknown };
  if (answer.decision === "allow") return { decision: "allow" };
  if (answer.decision === "deny" && typeof answer.reason === "string" && answer.reason.trim() !== "") return { decision: "deny", reason: answer.reason };
  return undefined;
}

function describeAnswer(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
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
  return async (incoming) => {
    const call = structuredClone(incoming);
    const before = [...hooks.before];
    const after = [...hooks.after];
    const timeoutMs = options.hookTimeoutMs;
    if (before.length > 0) {
      const frozenCall = deepFreeze(structuredClone(call));
      for (const { extensionId, listener } of before) {
        const outcome = await runHook(() => listener(frozenCall), timeoutMs);
        if (outcome.status === "done") {
          const decision = beforeDecision(outcome.value);
          if (decision?.decision === "allow") continue;
          if (decision?.decision === "deny") return blockedResult(call, extensionId, "deny", decision.reason);
          const message = `beforeToolCall hook answered with a malformed decision: ${describeAnswer(outcome.value)}`;
          report(options, { extensionId, hook: "beforeToolCall", kind: "error", message });
          return blockedResult(call, extensionId, "error", message);
        }
        const kind = outcome.status === "timeout" ? "timeout" : "error";
        const message =
          outcome.status === "timeout"
            ? `beforeToolCall hook did not answer within ${timeoutMs} ms`
            : `beforeToolCall hook failed: ${messageOf(outcome.error)}`;
        report(options, { extensionId, hook: "beforeToolCall", kind, message });
        return blockedResult(call, extensionId, kind, message);
      }
    }
    const fact = await core(call);
    if (after.length > 0) {
      const frozenFact = deepFreeze(structuredClone(fact));
      for (const { extensionId, listener } of after) {
        const outcome = await runHook(() => listener(frozenFact), timeoutMs);
        if (outcome.status === "timeout") {
          report(options, { extensionId, hook: "afterToolResult", kind: "timeout", message: `afterToolResult hook did not finish within ${timeoutMs} ms` });
        } else if (outcome.status === "error") {
          report(options, { extensionId, hook: "afterToolResult", kind: "error", message: `afterToolResult hook failed: ${messageOf(outcome.error)}` });
        }
      }
    }
    return structuredClone(fact);
  };
}
