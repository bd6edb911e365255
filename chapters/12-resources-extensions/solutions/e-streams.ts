// @ts-nocheck: outside the course package its imports do not resolve; verify and mistakes drop this line when they build the file in place of resources.ts.
/**
 * Chapter 12 · resources and extensions — a learner's solution written with the idioms
 * the other solutions avoid: SKILL.md is read line by line with `readline` over a read
 * stream (the loop stops at the closing line), files are read whole with `readFile`,
 * placeholders are replaced with `replaceAll`, copies are `JSON.parse(JSON.stringify(…))`
 * (the labs' calls and results are JSON data), the stamp is `new Date().getTime()`, the
 * own-property test is `Object.prototype.hasOwnProperty.call`, the prompt is built with
 * `reduce` and `toSorted`, and a hook's time limit is `setTimeout` from
 * `node:timers/promises`, ended with an `AbortController`.
 */
import { createReadStream } from "node:fs";
import { readFile, readdir, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { parse as parseYaml } from "yaml";
import {
  ResourceError, type ActivatedSkill, type ActivatedSkillFile, type AfterToolResultHook, type BeforeToolCallHook, type CatalogResource,
  type DiscoverOptions, type ExtensionContext, type ExtensionDiagnostic, type ExtensionHost, type ExtensionHostOptions, type ExtensionModule,
  type ExtensionSource, type LoadExtensionOptions, type LoadExtensionResult, type ResourceCatalog, type ResourceErrorCode, type SkillResource,
  type TemplateResource,
} from "./resource-types.js";
import type { Tool, ToolExecutor, ToolRegistry } from "./tool.js";
import { text, type ToolCall, type ToolResultMessage, type UserMessage } from "./types.js";

export { RESOURCE_SIZE_LIMIT } from "./resource-files.js";
export * from "./resource-types.js";

function fail(code: ResourceErrorCode, message: string, cause?: unknown): ResourceError {
  return cause === undefined ? new ResourceError(code, message) : new ResourceError(code, message, { cause });
}

function errno(error: unknown): string | undefined {
  return (error as { code?: string } | null)?.code;
}

// ── Lab 12.1 · roots 的顺序决定清单里谁胜出 ──

const YAML_LIMIT = 64 * 1024;
const KINDS = ["instructions", "skill", "template"];

/** The frontmatter of a whole text: its YAML and body, or `undefined` when the first line is not `---`. */
function splitFrontmatter(content: string, file: string): { yaml: string; body: string } | undefined {
  const lines = (content.startsWith("\uFEFF") ? content.slice(1) : content).split("\n");
  if (lines[0]?.replace(/\r$/, "") !== "---") return undefined;
  const closing = lines.findIndex((line, index) => index > 0 && line.replace(/\r$/, "") === "---");
  if (closing === -1) throw fail("RESOURCE_INVALID", `${file}: the frontmatter never ends`);
  return { yaml: lines.slice(1, closing).map((line) => `${line}\n`).join(""), body: lines.slice(closing + 1).join("\n") };
}

function parseFields(yaml: string, file: string): Record<string, unknown> {
  if (Buffer.byteLength(yaml) > YAML_LIMIT) throw fail("RESOURCE_INVALID", `${file}: the YAML block is over 64 KiB`);
  let value: unknown;
  try {
    value = parseYaml(yaml);
  } catch (error) {
    throw fail("RESOURCE_INVALID", `${file}: bad YAML`, error);
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== "object" || Array.isArray(value)) throw fail("RESOURCE_INVALID", `${file}: the frontmatter is not a mapping`);
  return value as Record<string, unknown>;
}

function nonEmpty(fields: Record<string, unknown>, key: string, file: string): string {
  const value = Object.prototype.hasOwnProperty.call(fields, key) ? fields[key] : undefined;
  if (typeof value !== "string" || value.trim() === "") throw fail("RESOURCE_INVALID", `${file}: ${key} must be a non-empty string`);
  return value;
}

/** Reads SKILL.md line by line up to its closing `---`; the body is never read. */
async function readSkillHeader(file: string): Promise<{ name: string; description: string }> {
  const stream = createReadStream(file, { encoding: "utf8", highWaterMark: 4096 });
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  let yaml = "";
  let state: "first" | "inside" | "closed" = "first";
  try {
    for await (const raw of lines) {
      const line = state === "first" ? raw.replace(/^\uFEFF/, "") : raw;
      if (state === "first") {
        if (line !== "---") break;
        state = "inside";
        continue;
      }
      if (line === "---") {
        state = "closed";
        break;
      }
      yaml += `${line}\n`;
      if (Buffer.byteLength(yaml) > YAML_LIMIT) throw fail("RESOURCE_INVALID", `${file}: the YAML block is over 64 KiB`);
    }
  } finally {
    lines.close();
    stream.destroy();
  }
  if (state === "first") throw fail("RESOURCE_INVALID", `${file}: no frontmatter`);
  if (state === "inside") throw fail("RESOURCE_INVALID", `${file}: the frontmatter never ends`);
  const fields = parseFields(yaml, file);
  return { name: nonEmpty(fields, "name", file), description: nonEmpty(fields, "description", file) };
}

/** `undefined` when `file` does not exist; any other problem is thrown. */
async function readIfThere(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if (errno(error) === "ENOENT") return undefined;
    throw error;
  }
}

async function listIfThere(dir: string) {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (errno(error) === "ENOENT") return [];
    throw error;
  }
}

async function scanRoot(configured: string): Promise<CatalogResource[]> {
  let root: string;
  try {
    root = await realpath(configured);
  } catch (error) {
    if (errno(error) === "ENOENT" || errno(error) === "ENOTDIR") throw fail("RESOURCE_ROOT_MISSING", `no root at ${configured}`, error);
    throw error;
  }
  if (!(await stat(root)).isDirectory()) throw fail("RESOURCE_ROOT_MISSING", `${configured} is not a directory`);
  const found: CatalogResource[] = [];

  const agents = await readIfThere(path.join(root, "AGENTS.md"));
  if (agents !== undefined) found.push({ kind: "instructions", name: "AGENTS", source: await realpath(path.join(root, "AGENTS.md")), root, body: agents.trim() });

  for (const entry of await listIfThere(path.join(root, "skills"))) {
    if (entry.name.startsWith(".")) continue;
    const folder = path.join(root, "skills", entry.name);
    if (!(entry.isDirectory() || (entry.isSymbolicLink() && (await stat(folder).catch(() => undefined))?.isDirectory()))) continue;
    const skillRoot = await realpath(folder);
    let source: string;
    try {
      source = await realpath(path.join(skillRoot, "SKILL.md"));
    } catch (error) {
      if (errno(error) === "ENOENT") continue;
      throw error;
    }
    const { name, description } = await readSkillHeader(source);
    found.push({ kind: "skill", name, description, source, root: skillRoot });
  }

  for (const entry of await listIfThere(path.join(root, "templates"))) {
    if (entry.name.startsWith(".") || !entry.name.endsWith(".md")) continue;
    const file = path.join(root, "templates", entry.name);
    const info = await stat(file).catch((error: unknown) => {
      if (errno(error) === "ENOENT") return undefined;
      throw error;
    });
    if (info === undefined || !info.isFile()) continue;
    const source = await realpath(file);
    const content = await readFile(source, "utf8");
    const split = splitFrontmatter(content, source);
    const fields = split === undefined ? {} : parseFields(split.yaml, source);
    const has = (key: string) => Object.prototype.hasOwnProperty.call(fields, key);
    found.push({
      kind: "template",
      name: has("name") ? nonEmpty(fields, "name", source) : path.basename(entry.name, ".md"),
      description: has("description") ? nonEmpty(fields, "description", source) : "",
      source,
      root,
      body: (split === undefined ? content : split.body).trim(),
    });
  }
  return found;
}

const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

// 🔨 Lab 12.1
export async function discoverResources(roots: readonly string[], options: DiscoverOptions = {}): Promise<ResourceCatalog> {
  void options;
  const winners = new Map<string, CatalogResource>();
  for (const configured of roots) {
    const here = new Set<string>();
    for (const resource of await scanRoot(configured)) {
      const identity = `${resource.kind}:${resource.name}`;
      if (here.has(identity)) throw fail("RESOURCE_DUPLICATE", `${identity} twice in ${configured}`);
      here.add(identity);
      if (!winners.has(identity)) winners.set(identity, resource);
    }
  }
  const sorted = [...winners.values()].sort((a, b) => {
    if (a.kind !== b.kind) return KINDS.indexOf(a.kind) - KINDS.indexOf(b.kind);
    if (a.name === b.name) return 0;
    return a.name < b.name ? -1 : 1;
  });
  const ofKind = <K extends CatalogResource["kind"]>(kind: K) => copy(sorted.filter((resource) => resource.kind === kind)) as Extract<CatalogResource, { kind: K }>[];
  return { resources: copy(sorted), instructions: ofKind("instructions"), skills: ofKind("skill"), templates: ofKind("template") };
}

// ── Lab 12.2 · 激活时才把技能正文交给本轮 ──

function inside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return !(relative === ".." || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative));
}

async function realpathOr(file: string, code: ResourceErrorCode, message: string): Promise<string> {
  try {
    return await realpath(file);
  } catch (error) {
    if (errno(error) === "ENOENT" || errno(error) === "ENOTDIR") throw fail(code, message, error);
    throw error;
  }
}

// 🔨 Lab 12.2
export async function activateSkill(catalog: ResourceCatalog, name: string, options: { resources?: readonly string[] } = {}): Promise<ActivatedSkill> {
  const skill = catalog.skills.find((candidate) => candidate.name === name);
  if (skill === undefined) throw fail("SKILL_NOT_FOUND", `no skill ${name}`);
  const manifest = await realpathOr(path.join(skill.root, "SKILL.md"), "SKILL_CHANGED", `${name} is gone`);
  if (!inside(skill.root, manifest)) throw fail("SKILL_PATH_ESCAPE", `SKILL.md of ${name} leaves its folder`);
  const content = await readFile(manifest, "utf8").catch((error: unknown) => {
    throw errno(error) === "ENOENT" ? fail("SKILL_CHANGED", `${name} is gone`, error) : error;
  });
  const split = splitFrontmatter(content, manifest);
  if (split === undefined) throw fail("RESOURCE_INVALID", `${manifest}: no frontmatter`);
  if (nonEmpty(parseFields(split.yaml, manifest), "name", manifest) !== name) throw fail("SKILL_CHANGED", `${manifest} names another skill now`);

  const files: ActivatedSkillFile[] = [];
  const seen = new Set<string>();
  for (const request of options.resources ?? []) {
    if (seen.has(request)) continue;
    seen.add(request);
    if (request === "" || request.includes("\0") || path.isAbsolute(request)) throw fail("SKILL_PATH_INVALID", `bad request ${JSON.stringify(request)}`);
    const target = path.resolve(skill.root, request);
    if (!inside(skill.root, target)) throw fail("SKILL_PATH_ESCAPE", `${request} leaves the skill`);
    const source = await realpathOr(target, "SKILL_RESOURCE_MISSING", `${request} is missing`);
    if (!inside(skill.root, source)) throw fail("SKILL_PATH_ESCAPE", `${request} leads out of the skill`);
    files.push({ request, source, content: await readFile(source, "utf8") });
  }
  return copy({ ...skill, body: split.body.trim(), resources: files });
}

// ── Lab 12.3 · 模板与技能从两个入口汇入一次请求 ──

// 🔨 Lab 12.3
export function renderTemplate(template: TemplateResource, args: Readonly<Record<string, string>>): UserMessage {
  const rendered = template.body.replaceAll(/\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}/g, (_whole, key: string) => {
    if (!Object.prototype.hasOwnProperty.call(args, key)) throw fail("TEMPLATE_ARGUMENT_MISSING", `missing argument ${key}`);
    return args[key]!;
  });
  return { role: "user", content: [text(rendered)], timestamp: new Date().getTime() };
}

const squash = (value: string) =>
  value
    .replace(/[\u0000-\u0008\u000E-\u001F\u007F-\u0084\u0086-\u009F\u202A-\u202E\u2066-\u2069]/g, "")
    .replace(/\s+/g, " ")
    .trim();

// 🔨 Lab 12.3
export function formatResourceContext(catalog: ResourceCatalog, activated: readonly ActivatedSkill[]): string {
  activated.reduce((names, skill) => {
    if (names.has(skill.name)) throw fail("ACTIVATION_DUPLICATE", `${skill.name} twice`);
    const own = catalog.skills.find((candidate) => candidate.name === skill.name);
    if (own?.source !== skill.source || own?.root !== skill.root) throw fail("ACTIVATION_FOREIGN", `${skill.name} is not from this catalog`);
    return names.add(skill.name);
  }, new Set<string>());
  const instructions = catalog.instructions.map((resource) => resource.body).filter((body) => body.length > 0);
  const sections = [
    ...(instructions.length > 0 ? ["# Instructions", ...instructions] : []),
    ...(catalog.skills.length > 0 ? ["# Skills", catalog.skills.map((skill) => `- ${squash(skill.name)}: ${squash(skill.description)}`).join("\n")] : []),
    ...activated
      .toSorted((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .flatMap((skill) => [
        `# Active skill: ${squash(skill.name)}`,
        ...(skill.body === "" ? [] : [skill.body]),
        ...skill.resources.flatMap((file) => [`## ${squash(file.request)}`, file.content]),
      ]),
  ];
  return sections.reduce((prompt, section, index) => (index === 0 ? section : `${prompt}\n\n${section}`), "");
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

// 🔨 Lab 12.4
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
    let open = true;
    const closed = () => fail("EXTENSION_CONTEXT_CLOSED", `${extensionId}: the factory has finished`);
    const context = {
      registerTool(tool: Tool) {
        if (!open) throw closed();
        tools.push(tool);
      },
      on(hook: string, listener: (value: never) => unknown) {
        if (!open) throw closed();
        (hook === "beforeToolCall" ? before : after).push({ extensionId, listener } as never);
      },
    } as ExtensionContext;
    return {
      context,
      close: () => {
        open = false;
      },
      commit: () => {
        if (this.#active.has(extensionId)) throw fail("EXTENSION_DUPLICATE", `${extensionId} is already active`);
        const names = tools.map((tool) => tool.name);
        const clash = names.find((name, index) => names.indexOf(name) !== index || this.#registry.get(name) !== undefined);
        if (clash !== undefined) throw fail("TOOL_CONFLICT", `${extensionId}: tool ${clash} exists`);
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

/** Each host handed out, with the implementation behind it: the loader's only way in. */
const IMPLEMENTATIONS = new WeakMap<ExtensionHost, ExtensionHostImpl>();

function publicFace(impl: ExtensionHostImpl): ExtensionHost {
  const host: ExtensionHost = Object.freeze({ wrapExecutor: (coreExecutor: ToolExecutor) => impl.wrapExecutor(coreExecutor) });
  IMPLEMENTATIONS.set(host, impl);
  return host;
}

function hostImplementation(host: ExtensionHost): ExtensionHostImpl {
  const impl = IMPLEMENTATIONS.get(host);
  if (impl === undefined) throw new ResourceError("INVALID_ARGUMENT", "options.host was not created by createExtensionHost");
  return impl;
}

// 🔨 Lab 12.4
export function createExtensionHost(registry: ToolRegistry, options: ExtensionHostOptions): ExtensionHost {
  const ms = options.hookTimeoutMs;
  if (typeof ms !== "number" || Number.isNaN(ms) || ms <= 0 || ms > 2147483647) throw fail("INVALID_ARGUMENT", `hookTimeoutMs ${String(ms)}`);
  return publicFace(new ExtensionHostImpl(registry, options));
}

// 🔨 Lab 12.4
export async function loadExtension(source: ExtensionSource, options: LoadExtensionOptions): Promise<LoadExtensionResult> {
  const impl = hostImplementation(options.host);
  if (impl.isActive(source.id)) throw fail("EXTENSION_DUPLICATE", `${source.id} is already active`);
  const frozen = Object.freeze({ id: source.id, path: source.path });
  if ((await options.isTrusted(frozen)) !== true) return { id: frozen.id, status: "skipped_untrusted" };
  const loaded = (await (options.importModule ?? ((given) => import(pathToFileURL(given.path).href)))(frozen)) as Partial<ExtensionModule> | null;
  const factory = loaded?.default;
  if (typeof factory !== "function") throw fail("EXTENSION_INVALID", `${frozen.id} exports no factory`);
  const staged = impl.stage(frozen.id);
  try {
    const returned: unknown = factory(staged.context);
    if (returned instanceof Promise) await returned;
  } catch (error) {
    const said = error instanceof Error ? error.message : String(error);
    throw fail("EXTENSION_FACTORY_FAILED", `${frozen.id}: ${said}`, error);
  } finally {
    staged.close();
  }
  staged.commit();
  return { id: frozen.id, status: "active" };
}

// ── Lab 12.5 · 一次工具调用怎样穿过 hook ──

type Outcome = { kind: "value"; value: unknown } | { kind: "error"; error: unknown } | { kind: "timeout" };

/** Waits for a hook at most `ms`; the timer (a promise from node:timers/promises) is aborted either way. */
async function waitFor(run: () => unknown, ms: number): Promise<Outcome> {
  const stop = new AbortController();
  const expiry = sleep(ms, { kind: "timeout" } as Outcome, { signal: stop.signal }).catch(() => ({ kind: "timeout" }) as Outcome);
  const answer = Promise.resolve()
    .then(run)
    .then(
      (value): Outcome => ({ kind: "value", value }),
      (error): Outcome => ({ kind: "error", error }),
    );
  try {
    return await Promise.race([answer, expiry]);
  } finally {
    stop.abort();
  }
}

function frozenCopy<T>(value: T): T {
  const fresh = copy(value);
  const freeze = (node: unknown) => {
    if (typeof node !== "object" || node === null) return;
    Object.freeze(node);
    for (const child of Object.values(node)) freeze(child);
  };
  freeze(fresh);
  return fresh;
}

function tell(options: ExtensionHostOptions, diagnostic: ExtensionDiagnostic): void {
  try {
    options.onDiagnostic?.(diagnostic);
  } catch {
    // a broken reporter must not break the call
  }
}

function refusal(call: ToolCall, extensionId: string, kind: "deny" | "error" | "timeout", reason: string): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId: call.id,
    toolName: call.name,
    isError: true,
    content: [text(`${extensionId} blocked ${call.name} (${kind}): ${reason}`)],
    details: { blockedByExtension: extensionId, kind, reason },
    timestamp: new Date().getTime(),
  };
}

// 🔨 Lab 12.5
function hookedExecutor(hooks: HookLists, options: ExtensionHostOptions, core: ToolExecutor): ToolExecutor {
  return async (incoming) => {
    const call = copy(incoming);
    for (const { extensionId, listener } of [...hooks.before]) {
      const outcome = await waitFor(() => listener(frozenCopy(call)), options.hookTimeoutMs);
      let kind: "deny" | "error" | "timeout";
      let reason: string;
      if (outcome.kind === "timeout") {
        [kind, reason] = ["timeout", `no answer in ${options.hookTimeoutMs} ms`];
      } else if (outcome.kind === "error") {
        [kind, reason] = ["error", outcome.error instanceof Error ? outcome.error.message : "the hook threw"];
      } else {
        const answer = outcome.value as { decision?: unknown; reason?: unknown } | undefined;
        if (answer === undefined || (typeof answer === "object" && answer !== null && answer.decision === "allow")) continue;
        const denied = typeof answer === "object" && answer !== null && answer.decision === "deny" && typeof answer.reason === "string" && answer.reason.trim() !== "";
        [kind, reason] = denied ? ["deny", answer.reason as string] : ["error", "the hook gave a malformed answer"];
      }
      if (kind !== "deny") tell(options, { extensionId, hook: "beforeToolCall", kind, message: reason });
      return refusal(call, extensionId, kind, reason);
    }
    const fact = copy(await core(call));
    const seen = frozenCopy(fact);
    for (const { extensionId, listener } of [...hooks.after]) {
      const outcome = await waitFor(() => listener(seen), options.hookTimeoutMs);
      if (outcome.kind === "timeout") tell(options, { extensionId, hook: "afterToolResult", kind: "timeout", message: "no answer in time" });
      if (outcome.kind === "error") tell(options, { extensionId, hook: "afterToolResult", kind: "error", message: "the observer threw" });
    }
    return fact;
  };
}
