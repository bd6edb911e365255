// @ts-nocheck: outside the course package its imports do not resolve; verify and mistakes drop this line when they build the file in place of resources.ts.
/**
 * Chapter 12 · resources and extensions — a terse learner's solution.
 *
 * Few helpers, inline logic, arrow functions. SKILL.md is read as a stream and dropped
 * as soon as its frontmatter is complete; hook time limits are a hand-made race.
 */
import { createReadStream } from "node:fs";
import { readFile, readdir, realpath, stat } from "node:fs/promises";
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

const oops = (code: ResourceErrorCode, message: string, cause?: unknown) =>
  new ResourceError(code, message, cause === undefined ? undefined : { cause });
const errno = (error: unknown) => (error as { code?: unknown } | null)?.code;
const msg = (error: unknown) => (error instanceof Error ? error.message : String(error));
/** For `.catch`: ENOENT means "there is none" (`value`); any other error goes on. */
const ifAbsent = <T>(value: T) => (error: unknown): T => {
  if (errno(error) === "ENOENT") return value;
  throw error;
};
const inside = (base: string, target: string) => {
  const rel = path.relative(base, target);
  return rel === "" || !(path.isAbsolute(rel) || rel === ".." || rel.startsWith(".." + path.sep));
};
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

// ---------------------------------------------------------------------------
// Lab 12.1 · the order of the roots decides the catalog's winners
// ---------------------------------------------------------------------------

const LIMIT = 64 * 1024; // bytes of YAML between the two --- lines
const tooBig = (file: string) => oops("RESOURCE_INVALID", `${file}: the YAML frontmatter is over 64 KiB`);

/** `src` split into its frontmatter mapping (absent when there is none) and its trimmed body. */
const frontmatter = (src: string, file: string): { meta?: Record<string, unknown>; body: string } => {
  const s = src.replace(/^\uFEFF/, "");
  const open = /^---\r?\n/.exec(s);
  if (!open) {
    if (/^---\r?$/.test(s)) throw oops("RESOURCE_INVALID", `${file}: the frontmatter is never closed`);
    return { body: s.trim() };
  }
  const rest = s.slice(open[0].length);
  const close = /(^|\n)---\r?(\n|$)/.exec(rest);
  if (!close) throw Buffer.byteLength(rest) > LIMIT ? tooBig(file) : oops("RESOURCE_INVALID", `${file}: the frontmatter is never closed`);
  const yaml = rest.slice(0, close.index + close[1]!.length);
  if (Buffer.byteLength(yaml) > LIMIT) throw tooBig(file);
  let meta: unknown;
  try {
    meta = parseYaml(yaml) ?? {};
  } catch (error) {
    throw oops("RESOURCE_INVALID", `${file}: bad YAML in the frontmatter: ${msg(error)}`, error);
  }
  if (typeof meta !== "object" || meta === null || Array.isArray(meta)) throw oops("RESOURCE_INVALID", `${file}: the frontmatter is not a mapping`);
  return { meta: meta as Record<string, unknown>, body: rest.slice(close.index + close[0].length).trim() };
};

/** A frontmatter string field: absent is fine unless `need`; present must be a non-empty string. */
const field = (meta: Record<string, unknown>, key: string, file: string, need: boolean): string | undefined => {
  const value = meta[key];
  if (value === undefined && !need) return undefined;
  if (typeof value !== "string" || !value.trim()) throw oops("RESOURCE_INVALID", `${file}: "${key}" must be a non-empty string`);
  return value;
};

const skillOf = (src: string, file: string) => {
  const { meta, body } = frontmatter(src, file);
  if (!meta) throw oops("RESOURCE_INVALID", `${file}: a SKILL.md starts with a frontmatter`);
  return { name: field(meta, "name", file, true)!, description: field(meta, "description", file, true)!, body };
};

/**
 * SKILL.md up to the end of its frontmatter, streamed 4 KiB at a time and dropped as soon
 * as the closing line has arrived (or the first line shows there is none). Bytes are
 * held as latin1 so that string positions are byte positions.
 */
const skillHeader = async (file: string): Promise<string> => {
  const stream = createReadStream(file, { highWaterMark: 4096 });
  let seen = "";
  const cut = (atEnd: boolean): number | undefined => {
    const skip = seen.startsWith("\xEF\xBB\xBF") ? 3 : 0;
    const open = /^---\r?\n/.exec(seen.slice(skip));
    if (!open) return atEnd || seen.includes("\n") || seen.length - skip > 4 ? seen.length : undefined;
    const from = skip + open[0].length;
    let at = from;
    for (let nl = seen.indexOf("\n", at); nl !== -1; at = nl + 1, nl = seen.indexOf("\n", at)) {
      if (/^---\r?$/.test(seen.slice(at, nl))) {
        if (at - from > LIMIT) throw tooBig(file);
        return nl + 1;
      }
    }
    const tail = seen.slice(at);
    const mayClose = atEnd ? /^---\r?$/.test(tail) : "---\r".startsWith(tail);
    if (at - from + (mayClose ? 0 : tail.length) > LIMIT) throw tooBig(file);
    return atEnd ? seen.length : undefined;
  };
  const decode = (end: number) => Buffer.from(seen.slice(0, end), "latin1").toString("utf8");
  try {
    for await (const chunk of stream) {
      seen += (chunk as Buffer).toString("latin1");
      const end = cut(false);
      if (end !== undefined) return decode(end);
    }
    return decode(cut(true)!);
  } finally {
    stream.destroy();
  }
};

const names = async (dir: string) =>
  (await readdir(dir).catch(ifAbsent([] as string[]))).filter((name) => !name.startsWith(".")).sort(cmp);

const scanRoot = async (root: string): Promise<CatalogResource[]> => {
  const found: CatalogResource[] = [];
  const agents = await realpath(path.join(root, "AGENTS.md")).catch(ifAbsent(""));
  if (agents) found.push({ kind: "instructions", name: "AGENTS", source: agents, root, body: (await readFile(agents, "utf8")).trim() });
  for (const folderName of await names(path.join(root, "skills"))) {
    const folder = path.join(root, "skills", folderName);
    if (!(await stat(folder).catch(ifAbsent(undefined)))?.isDirectory()) continue;
    const source = await realpath(path.join(folder, "SKILL.md")).catch(ifAbsent(""));
    if (!source) continue; // no SKILL.md: not a skill, not an error
    const { name, description } = skillOf(await skillHeader(source), source);
    found.push({ kind: "skill", name, description, source, root: await realpath(folder) });
  }
  for (const fileName of (await names(path.join(root, "templates"))).filter((name) => name.endsWith(".md"))) {
    const file = path.join(root, "templates", fileName);
    if (!(await stat(file).catch(ifAbsent(undefined)))?.isFile()) continue;
    const source = await realpath(file);
    const { meta = {}, body } = frontmatter(await readFile(source, "utf8"), source);
    const name = field(meta, "name", source, false) ?? fileName.slice(0, -3);
    found.push({ kind: "template", name, description: field(meta, "description", source, false) ?? "", source, root, body });
  }
  return found;
};

/**
 * Builds the catalog of `roots`. Guarantees: roots are canonicalised and scanned in the
 * given order, and the first root to supply a `kind:name` wins (a repeat inside one root
 * is `RESOURCE_DUPLICATE`); output is sorted by kind, then name by code unit, never by
 * path; no skill body is ever held (SKILL.md is read only up to its frontmatter); the
 * four arrays are independent deep copies. Only a missing AGENTS.md, `skills/` or
 * `templates/` means "none"; every other I/O error propagates. `options` is unused here.
 */
export async function discoverResources(roots: readonly string[], options: DiscoverOptions = {}): Promise<ResourceCatalog> {
  void options;
  const winners = new Map<string, CatalogResource>();
  for (const configured of roots) {
    const root = await realpath(configured).catch((error: unknown) => {
      throw errno(error) === "ENOENT" || errno(error) === "ENOTDIR" ? oops("RESOURCE_ROOT_MISSING", `no root at ${configured}`, error) : error;
    });
    if (!(await stat(root)).isDirectory()) throw oops("RESOURCE_ROOT_MISSING", `root ${configured} is not a directory`);
    const here = new Set<string>();
    for (const resource of await scanRoot(root)) {
      const key = `${resource.kind}:${resource.name}`;
      if (here.has(key)) throw oops("RESOURCE_DUPLICATE", `${key} twice in ${root}`);
      here.add(key);
      if (!winners.has(key)) winners.set(key, resource);
    }
  }
  const rank = { instructions: 0, skill: 1, template: 2 } as const;
  const all = [...winners.values()].sort((a, b) => rank[a.kind] - rank[b.kind] || cmp(a.name, b.name));
  const copies = <T>(list: readonly T[]): T[] => list.map((item) => structuredClone(item));
  return {
    resources: copies(all),
    instructions: copies(all.filter((r): r is InstructionResource => r.kind === "instructions")),
    skills: copies(all.filter((r): r is SkillResource => r.kind === "skill")),
    templates: copies(all.filter((r): r is TemplateResource => r.kind === "template")),
  };
}

// ---------------------------------------------------------------------------
// Lab 12.2 · only activation hands a skill's body to this turn
// ---------------------------------------------------------------------------

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
  const skill = catalog.skills.find((s) => s.name === name);
  if (!skill) throw oops("SKILL_NOT_FOUND", `no skill ${name}`);
  const changed = (error: unknown): never => {
    throw errno(error) === "ENOENT" || errno(error) === "ENOTDIR" ? oops("SKILL_CHANGED", `skill ${name}: SKILL.md is gone`, error) : error;
  };
  const manifest = await realpath(path.join(skill.root, "SKILL.md")).catch(changed);
  if (!inside(skill.root, manifest)) throw oops("SKILL_PATH_ESCAPE", `skill ${name}: SKILL.md resolves outside its folder`);
  const now = skillOf(await readFile(manifest, "utf8").catch(changed), manifest);
  if (now.name !== skill.name) throw oops("SKILL_CHANGED", `skill ${name} now calls itself ${now.name}`);
  const resources: ActivatedSkillFile[] = [];
  for (const request of new Set(options.resources ?? [])) {
    if (!request || path.isAbsolute(request) || request.includes("\0")) throw oops("SKILL_PATH_INVALID", `bad request ${JSON.stringify(request)}`);
    const wanted = path.resolve(skill.root, request);
    if (!inside(skill.root, wanted)) throw oops("SKILL_PATH_ESCAPE", `${request} is outside the skill`);
    const source = await realpath(wanted).catch((error: unknown) => {
      throw errno(error) === "ENOENT" ? oops("SKILL_RESOURCE_MISSING", `${request} does not exist`, error) : error;
    });
    if (!inside(skill.root, source)) throw oops("SKILL_PATH_ESCAPE", `${request} leads outside the skill`);
    resources.push({ request, source, content: await readFile(source, "utf8") });
  }
  return { ...skill, body: now.body, resources };
}

// ---------------------------------------------------------------------------
// Lab 12.3 · templates and skills enter one model request through two doors
// ---------------------------------------------------------------------------

/**
 * Renders `template` with `args` into a canonical `UserMessage` stamped `Date.now()`.
 * Only `{{identifier}}` is a placeholder; every occurrence is replaced in one pass, so
 * an argument's own `{{x}}`, `$&` or `$1` stays literal. A placeholder without an
 * argument throws `TEMPLATE_ARGUMENT_MISSING` naming it; extra arguments are ignored.
 */
export function renderTemplate(template: TemplateResource, args: Readonly<Record<string, string>>): UserMessage {
  return userMessage(
    template.body.replace(/\{\{([A-Za-z_]\w*)\}\}/g, (_, key: string) => {
      if (!Object.hasOwn(args, key)) throw oops("TEMPLATE_ARGUMENT_MISSING", `template ${template.name}: no value for {{${key}}}`);
      return args[key]!;
    }),
  );
}

/**
 * The system prompt text of a catalog and this turn's activated skills: `# Instructions`
 * and the bodies, `# Skills` and one `- name: description` line per catalog skill, then
 * per activated skill (by name, code unit) `# Active skill: <name>`, its body, and
 * `## <request>` with each file's text. Sections are joined by a blank line; empty ones
 * are left out. Throws `ACTIVATION_DUPLICATE` / `ACTIVATION_FOREIGN`; counts no tokens.
 */
export function formatResourceContext(catalog: ResourceCatalog, activated: readonly ActivatedSkill[]): string {
  const seen = new Set<string>();
  for (const skill of activated) {
    if (seen.has(skill.name)) throw oops("ACTIVATION_DUPLICATE", `${skill.name} is activated twice`);
    seen.add(skill.name);
    const mine = catalog.skills.find((s) => s.name === skill.name);
    if (!mine || mine.source !== skill.source || mine.root !== skill.root) throw oops("ACTIVATION_FOREIGN", `${skill.name} is not this catalog's skill`);
  }
  // Names, descriptions and requests on one line: invisible controls out, whitespace runs one space, trimmed.
  const flat = (t: string) => t.replace(/[\0-\x08\x0E-\x1F\x7F-\x9F\u202A-\u202E\u2066-\u2069]/g, "").replace(/\s+/g, " ").trim();
  const bodies = catalog.instructions.map((i) => i.body).filter((body) => body !== "");
  return [
    ...(bodies.length > 0 ? ["# Instructions", ...bodies] : []),
    ...(catalog.skills.length > 0 ? ["# Skills", catalog.skills.map((s) => `- ${flat(s.name)}: ${flat(s.description)}`).join("\n")] : []),
    ...[...activated]
      .sort((a, b) => cmp(a.name, b.name))
      .flatMap((s) => [`# Active skill: ${flat(s.name)}`, s.body, ...s.resources.flatMap((f) => [`## ${flat(f.request)}`, f.content])]),
  ]
    .filter((section) => section !== "")
    .join("\n\n");
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
    let open = true;
    const guard = () => {
      if (!open) throw oops("EXTENSION_CONTEXT_CLOSED", `${extensionId}: the factory is over, its context is closed`);
    };
    const context: ExtensionContext = Object.freeze({
      registerTool: (tool: Tool) => {
        guard();
        tools.push(tool);
      },
      on: (hook: string, listener: unknown) => {
        guard();
        if (hook === "beforeToolCall") before.push(listener as BeforeToolCallHook);
        else if (hook === "afterToolResult") after.push(listener as AfterToolResultHook);
        else throw oops("INVALID_ARGUMENT", `${extensionId}: no hook called ${hook}`);
      },
    });
    return {
      context,
      close: () => {
        open = false;
      },
      commit: () => {
        open = false;
        if (this.#active.has(extensionId)) throw oops("EXTENSION_DUPLICATE", `${extensionId} is already active`);
        const names = tools.map((tool) => tool.name);
        const clash = names.find((n, i) => names.indexOf(n) !== i || this.#registry.get(n) !== undefined);
        if (clash !== undefined) throw oops("TOOL_CONFLICT", `${extensionId}: the tool name ${clash} is taken`);
        for (const tool of tools) this.#registry.register(tool);
        this.#hooks.before.push(...before.map((listener) => ({ extensionId, listener })));
        this.#hooks.after.push(...after.map((listener) => ({ extensionId, listener })));
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
 * Its only public method is `wrapExecutor`. `hookTimeoutMs` must be positive and at most
 * 2^31 − 1 ms (what `setTimeout` honours), else `INVALID_ARGUMENT`.
 */
export function createExtensionHost(registry: ToolRegistry, options: ExtensionHostOptions): ExtensionHost {
  const ms = options.hookTimeoutMs;
  if (!(typeof ms === "number" && ms > 0 && ms <= 2 ** 31 - 1)) throw oops("INVALID_ARGUMENT", `hookTimeoutMs ${String(ms)} is not in (0, 2^31 - 1]`);
  return publicFace(new ExtensionHostImpl(registry, { ...options }));
}

/**
 * Loads one extension onto `options.host`: refuse an active id (`EXTENSION_DUPLICATE`) →
 * `isTrusted(frozen copy)`, only exactly `true` trusts → import → default export must be a
 * function → factory on a staging context → commit. Untrusted: `skipped_untrusted`,
 * nothing imported. Any failure leaves the registry and the hooks as they were.
 */
export async function loadExtension(source: ExtensionSource, options: LoadExtensionOptions): Promise<LoadExtensionResult> {
  const host = hostImplementation(options.host);
  if (host.isActive(source.id)) throw oops("EXTENSION_DUPLICATE", `${source.id} is already active`);
  const frozen = Object.freeze({ id: source.id, path: source.path });
  if ((await options.isTrusted(frozen)) !== true) return { id: frozen.id, status: "skipped_untrusted" };
  const mod: unknown = options.importModule ? await options.importModule(frozen) : await import(pathToFileURL(frozen.path).href);
  const factory = (mod as { default?: unknown } | null | undefined)?.default;
  if (typeof factory !== "function") throw oops("EXTENSION_INVALID", `${frozen.id}: no default export function`);
  const staged = host.stage(frozen.id);
  const failed = (error: unknown) => oops("EXTENSION_FACTORY_FAILED", `${frozen.id}: the factory failed: ${msg(error)}`, error);
  let pending: unknown;
  try {
    pending = factory(staged.context);
  } catch (error) {
    staged.close();
    throw failed(error);
  }
  if (typeof (pending as { then?: unknown } | null | undefined)?.then !== "function") staged.close();
  else {
    await Promise.resolve(pending).then(
      () => staged.close(),
      (error: unknown) => {
        staged.close();
        throw failed(error);
      },
    );
  }
  staged.commit();
  return { id: frozen.id, status: "active" };
}

// ---------------------------------------------------------------------------
// Lab 12.5 · how one tool call passes through the hooks
// ---------------------------------------------------------------------------

type Settled = readonly ["ok", unknown] | readonly ["threw", unknown] | readonly ["late"];

/** Runs `hook` and resolves with how it ended, or "late" after `ms`; the timer never outlives the hook. */
const within = (hook: () => unknown, ms: number) =>
  new Promise<Settled>((resolve) => {
    const timer = setTimeout(() => resolve(["late"]), ms);
    new Promise((ok) => ok(hook())).then(
      (value) => {
        clearTimeout(timer);
        resolve(["ok", value]);
      },
      (error: unknown) => {
        clearTimeout(timer);
        resolve(["threw", error]);
      },
    );
  });

const freeze = <T>(value: T): T => {
  if (value !== null && typeof value === "object") {
    Object.values(value).forEach(freeze);
    Object.freeze(value);
  }
  return value;
};

/**
 * The executor behind `ExtensionHost.wrapExecutor`: before hooks in order on a frozen copy
 * (a deny, throw, timeout or malformed answer → a paired blocked result, core and after
 * hooks never run; all but a deny also emit one diagnostic), then core once on its own
 * copy, then every after hook on a frozen copy of the result (failures are diagnostics
 * only), and the caller gets yet another copy. No state is shared between calls.
 */
function hookedExecutor(hooks: HookLists, options: ExtensionHostOptions, core: ToolExecutor): ToolExecutor {
  const ms = options.hookTimeoutMs;
  const tell = (diagnostic: ExtensionDiagnostic) => {
    try {
      Promise.resolve(options.onDiagnostic?.(diagnostic)).catch(() => {});
    } catch {
      // onDiagnostic's own failure is not the call's
    }
  };
  return async (call) => {
    const before = [...hooks.before];
    const after = [...hooks.after];
    const mine = structuredClone(call);
    const shown = freeze(structuredClone(mine));
    for (const { extensionId, listener } of before) {
      const [state, value] = await within(() => listener(shown), ms);
      const answer = value as { decision?: unknown; reason?: unknown } | null | undefined;
      const isObject = typeof answer === "object" && answer !== null;
      if (state === "ok" && (answer === undefined || (isObject && answer.decision === "allow"))) continue;
      const deny = state === "ok" && isObject && answer.decision === "deny" && typeof answer.reason === "string" && answer.reason.trim() !== "";
      const kind = deny ? "deny" : state === "late" ? "timeout" : "error";
      const reason = deny
        ? String(answer!.reason)
        : state === "late"
          ? `${extensionId} did not answer within ${ms} ms`
          : state === "threw"
            ? `${extensionId} threw: ${msg(value)}`
            : `${extensionId} gave a malformed answer`;
      if (kind !== "deny") tell({ extensionId, hook: "beforeToolCall", kind, message: `beforeToolCall: ${reason}` });
      return {
        role: "toolResult",
        toolCallId: mine.id,
        toolName: mine.name,
        isError: true,
        content: [text(`Blocked by extension ${extensionId}: ${reason}`)],
        details: { blockedByExtension: extensionId, kind, reason },
        timestamp: Date.now(),
      };
    }
    const fact = await core(mine);
    const seen = freeze(structuredClone(fact));
    for (const { extensionId, listener } of after) {
      const [state, value] = await within(() => listener(seen), ms);
      if (state === "late") tell({ extensionId, hook: "afterToolResult", kind: "timeout", message: `afterToolResult: ${extensionId} did not finish within ${ms} ms` });
      if (state === "threw") tell({ extensionId, hook: "afterToolResult", kind: "error", message: `afterToolResult: ${extensionId} threw: ${msg(value)}` });
    }
    return structuredClone(fact);
  };
}
