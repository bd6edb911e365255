/**
 * Chapter 12 · resources and extensions: two entrances into a run, kept apart on purpose.
 *
 * - Data. `discoverResources` lists what a workspace offers without running anything;
 *   `activateSkill` reads one skill's body for this turn; `renderTemplate` makes a
 *   `UserMessage`; `formatResourceContext` makes the `systemPrompt` for `buildContext`.
 * - Code. `loadExtension` asks the trust policy before importing anything, stages what the
 *   factory registers and commits it at once; `wrapExecutor` runs the hooks: before-hooks
 *   fail closed, after-hooks only observe.
 *
 * In lab order: 12.1 catalog, 12.2 activation, 12.3 templates and context, 12.4 trust and
 * staging, 12.5 hooks. The challenge tier (lenient discovery, hostile files, extensions and
 * hook values) leans on provided modules: `resource-types.ts` (the public types, re-exported
 * here), `resource-files.ts` (safe reads), `extension-values.ts` (what crosses the extension
 * boundary), `skill-spec.ts` (Agent Skills warnings) and `yaml-errors.ts`. This file decides
 * what to read, whether it lies inside the right root, and what each hook's answer means.
 */
import { realpath, stat } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parse as parseYaml } from "yaml";
import { copyData, describeValue, hookViews, isThenable, reasonOf, registerPinned, uncopyableCall, type DataCopy } from "./extension-values.js";
import {
  decodeText,
  FileProblem,
  hasErrorCode,
  listDirectory,
  mapInOrder,
  readProvenPrefix,
  readProvenText,
  readProvenTextIfPresent,
  realpathIfPresent,
  resourceErrorOf,
  statIfPresent,
  type DirectoryEntry,
} from "./resource-files.js";
import { holdsSkillFile, skillFileCaseWarnings, skillSpecDiagnostics } from "./skill-spec.js";
import { yamlErrorPlace } from "./yaml-errors.js";
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
  type SkillResource,
  type TemplateResource,
} from "./resource-types.js";
import type { Tool, ToolExecutor, ToolRegistry } from "./tool.js";
import { text, toolResult, userMessage, type ToolCall, type ToolResultMessage, type UserMessage } from "./types.js";

export { RESOURCE_SIZE_LIMIT } from "./resource-files.js";
export * from "./resource-types.js";

/** Plain code-unit order (what `<` does on strings): unlike `localeCompare`, the same on every machine. */
function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Bodies keep `\n` line ends only: a file edited on Windows renders no stray CR. */
function normalizeLineEnds(value: string): string {
  return value.replaceAll("\r\n", "\n");
}

// ── Lab 12.1 · roots 的顺序决定清单里谁胜出 ──

/** The largest YAML block (between the `---` lines) a resource may carry. */
const FRONTMATTER_LIMIT = 64 * 1024;
const KIND_ORDER = { instructions: 0, skill: 1, template: 2 } as const;

type Frontmatter = { state: "absent" } | { state: "open"; yamlBytes: number } | { state: "closed"; yaml: string; body: string };

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

/**
 * A YAML block as a mapping (an empty block: `{}`), else `RESOURCE_INVALID`; whatever the
 * parser throws (syntax, duplicate keys, an alias bomb, deep nesting) is placed in the file.
 */
function frontmatterFields(yaml: string, file: string): Record<string, unknown> {
  if (Buffer.byteLength(yaml) > FRONTMATTER_LIMIT) {
    throw new ResourceError("RESOURCE_INVALID", `${file}: frontmatter is larger than 64 KiB`);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(yaml, { logLevel: "error", prettyErrors: false });
  } catch (caught) {
    throw new ResourceError("RESOURCE_INVALID", `${file}: invalid YAML: ${reasonOf(caught)}${yamlErrorPlace(yaml, caught)}`, { cause: caught });
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== "object" || Array.isArray(parsed) || parsed instanceof Map || parsed instanceof Set) {
    throw new ResourceError("RESOURCE_INVALID", `${file}: frontmatter is not a mapping`);
  }
  return parsed as Record<string, unknown>;
}

/** A required (or present) frontmatter field must be a non-empty string. */
function textField(fields: Record<string, unknown>, key: string, file: string): string {
  const value = Object.hasOwn(fields, key) ? fields[key] : undefined;
  if (typeof value === "string" && value.trim() !== "") return value;
  throw new ResourceError("RESOURCE_INVALID", `${file}: "${key}" must be a non-empty string`);
}

/** A skill's frontmatter: its name and description, and every field (for the Agent Skills warnings). */
type SkillHead = { name: string; description: string; fields: Record<string, unknown> };

function skillMetadata(yaml: string, file: string): SkillHead {
  const fields = frontmatterFields(yaml, file);
  return { name: textField(fields, "name", file), description: textField(fields, "description", file), fields };
}

/**
 * Reads a SKILL.md chunk by chunk up to its closing `---` line (at most the 64 KiB limit
 * plus a chunk); the body is never read. What was read as frontmatter must be text: the
 * block when it closed, else everything read (with no frontmatter, the first line).
 */
async function readSkillHead(file: string): Promise<SkillHead> {
  let scan = { state: "open", yamlBytes: 0 } as Frontmatter;
  let head = "";
  const bytes = await readProvenPrefix(file, (prefix, atEnd) => {
    head = prefix.toString("utf8"); // lossy, for scanning only: what is used is checked below
    scan = scanFrontmatter(head, atEnd);
    return scan.state !== "open" || scan.yamlBytes > FRONTMATTER_LIMIT;
  });
  if (scan.state === "closed") {
    // Exact only if the lossy decoding replaced nothing in the block. The block is parsed
    // from this string of its own: metadata sliced from it keeps no chunk of body alive.
    const block = decodeText(file, bytes.subarray(0, Buffer.byteLength(head.slice(0, head.length - scan.body.length))));
    return skillMetadata(closedFrontmatter(scanFrontmatter(block, true), file).yaml, file);
  } else {
    const firstLine = bytes.indexOf(0x0a);
    decodeText(file, scan.state === "absent" && firstLine !== -1 ? bytes.subarray(0, firstLine) : bytes, { prefix: true });
  }
  if (scan.state === "open" && scan.yamlBytes > FRONTMATTER_LIMIT) {
    throw new ResourceError("RESOURCE_INVALID", `${file}: frontmatter is larger than 64 KiB`);
  }
  return skillMetadata(closedFrontmatter(scan, file).yaml, file);
}

/** One entry of a root: a resource (a skill with its folder name and fields, for the warnings), a problem, or a warning. */
type Finding =
  | { resource: CatalogResource; skill?: { folder: string; fields: Record<string, unknown> } }
  | { problem: ResourceError; source: string }
  | { warning: ResourceDiagnostic };

/** The finding for whatever `scan` threw about `source` (canonical where it resolved). */
function problemAt(caught: unknown, source: string): Finding {
  return { problem: resourceErrorOf(caught, source, { missing: "RESOURCE_INVALID", changed: "RESOURCE_INVALID" }), source };
}

/** Discovery's containment rule: a file that resolves outside its root is refused. */
function checkInside(root: string, file: string, what: string): void {
  if (!isInside(root, file)) throw new ResourceError("RESOURCE_INVALID", `${file}: ${what} resolves outside ${root}`);
}

async function discoverInstructions(root: string): Promise<Finding[]> {
  let source = path.join(root, "AGENTS.md");
  try {
    const canonical = await realpathIfPresent(source);
    if (canonical === undefined) return [];
    source = canonical;
    checkInside(root, source, "AGENTS.md");
    const content = await readProvenTextIfPresent(source);
    if (content === undefined) return [];
    return [{ resource: { kind: "instructions", name: "AGENTS", source, root, body: normalizeLineEnds(content).trim() } }];
  } catch (caught) {
    return [problemAt(caught, source)];
  }
}

/** How many skills or templates discovery reads at once; see `discoverSkills`. */
const READS_IN_FLIGHT = 16;

/**
 * One entry of `skills/`: its skill, nothing (no folder, no SKILL.md; lenient: a `skill.md`
 * warning) or a problem. A symlinked folder's target is the root SKILL.md must stay inside.
 */
async function discoverSkill(skillsFolder: string, entry: DirectoryEntry, lenient: boolean): Promise<Finding[]> {
  let source = path.join(skillsFolder, entry.shown);
  try {
    if (entry.name === undefined) {
      if (!(await holdsSkillFile(entry.path))) return [];
      throw new ResourceError("RESOURCE_INVALID", `${source}: skill folder name is not valid UTF-8 (shown escaped)`);
    }
    let skillRoot = path.join(skillsFolder, entry.name);
    if (entry.isSymbolicLink) {
      if (!(await statIfPresent(skillRoot))?.isDirectory()) return [];
      skillRoot = await realpath(skillRoot);
    } else if (!entry.isDirectory) {
      return [];
    }
    source = path.join(skillRoot, "SKILL.md");
    const canonical = await realpathIfPresent(source);
    if (canonical === undefined) return lenient ? (await skillFileCaseWarnings(skillRoot)).map((warning) => ({ warning })) : [];
    source = canonical;
    checkInside(skillRoot, source, "SKILL.md");
    const { name, description, fields } = await readSkillHead(source);
    return [{ resource: { kind: "skill", name, description, source, root: skillRoot }, skill: { folder: entry.name, fields } }];
  } catch (caught) {
    if (caught instanceof FileProblem && caught.kind === "missing") return [];
    return [problemAt(caught, source)];
  }
}

/** Bounded reads in flight overlap each skill's round trips (bench/discovery.ts); `mapInOrder` keeps the order. */
async function discoverSkills(root: string, lenient: boolean): Promise<Finding[]> {
  let folder = path.join(root, "skills");
  try {
    const canonical = await realpathIfPresent(folder);
    if (canonical === undefined) return [];
    folder = canonical;
    const entries = await listDirectory(folder);
    return (await mapInOrder(entries, READS_IN_FLIGHT, (entry) => discoverSkill(folder, entry, lenient))).flat();
  } catch (caught) {
    return [problemAt(caught, folder)];
  }
}

/**
 * One entry of `templates/`: a `*.md` that is a regular file after following symlinks and
 * resolves inside the root. Its name is the frontmatter's, else the file name.
 */
async function discoverTemplate(root: string, templatesFolder: string, entry: DirectoryEntry): Promise<Finding[]> {
  let source = path.join(templatesFolder, entry.shown);
  try {
    if (!entry.shown.endsWith(".md")) return [];
    const info = await statIfPresent(entry.path);
    if (info === undefined || !info.isFile()) return [];
    if (entry.name === undefined) {
      throw new ResourceError("RESOURCE_INVALID", `${source}: template file name is not valid UTF-8 (shown escaped)`);
    }
    source = await realpath(path.join(templatesFolder, entry.name));
    checkInside(root, source, "template");
    const content = await readProvenTextIfPresent(source);
    if (content === undefined) return [];
    const scan = scanFrontmatter(content, true);
    const block = scan.state === "absent" ? undefined : closedFrontmatter(scan, source);
    const fields = block === undefined ? {} : frontmatterFields(block.yaml, source);
    const name = Object.hasOwn(fields, "name") ? textField(fields, "name", source) : entry.name.slice(0, -".md".length);
    const description = Object.hasOwn(fields, "description") ? textField(fields, "description", source) : "";
    const body = normalizeLineEnds(block === undefined ? content : block.body).trim();
    return [{ resource: { kind: "template", name, description, source, root, body } }];
  } catch (caught) {
    if (caught instanceof FileProblem && caught.kind === "missing") return [];
    return [problemAt(caught, source)];
  }
}

async function discoverTemplates(root: string): Promise<Finding[]> {
  const folder = path.join(root, "templates");
  try {
    const entries = await listDirectory(folder);
    return (await mapInOrder(entries, READS_IN_FLIGHT, (entry) => discoverTemplate(root, folder, entry))).flat();
  } catch (caught) {
    return [problemAt(caught, folder)];
  }
}

/**
 * Everything one root offers, in diagnostic order: AGENTS.md, skills by folder name,
 * templates by file name. A root that cannot be used is one finding.
 */
async function discoverRoot(configured: string, lenient: boolean): Promise<Finding[]> {
  let root = configured;
  try {
    root = await realpath(configured);
    if (!(await stat(root)).isDirectory()) {
      const shown = root === configured ? root : `${configured} (${root})`;
      throw new ResourceError("RESOURCE_ROOT_MISSING", `resource root ${shown} is not a directory`);
    }
  } catch (caught) {
    if (!hasErrorCode(caught, "ENOENT", "ENOTDIR")) return [problemAt(caught, root)];
    const missing = new ResourceError("RESOURCE_ROOT_MISSING", `resource root ${configured} does not exist`, { cause: caught });
    return [problemAt(missing, root)];
  }
  return [...(await discoverInstructions(root)), ...(await discoverSkills(root, lenient)), ...(await discoverTemplates(root))];
}

function compareResources(a: CatalogResource, b: CatalogResource): number {
  const byKind = KIND_ORDER[a.kind] - KIND_ORDER[b.kind];
  if (byKind !== 0) return byKind;
  return compareCodeUnits(a.name, b.name);
}

/**
 * Builds the catalog of `roots`. Guarantees: roots are canonicalised and scanned in order,
 * and the first root to supply a `kind:name` wins (a repeat inside one root is
 * `RESOURCE_DUPLICATE`); output is sorted by kind, then name by code unit; no skill body is
 * held; the four arrays are independent deep copies; only a missing AGENTS.md, `skills/` or
 * `templates/` means "none". Strict: the first problem throws. Lenient (`onDiagnostic`):
 * each problem is an `error` diagnostic that leaves its root or resource out, warnings never
 * change the catalog, the order is fixed, and a failing `onDiagnostic` rejects discovery.
 */
export async function discoverResources(roots: readonly string[], options: DiscoverOptions = {}): Promise<ResourceCatalog> {
  if (!Array.isArray(roots) || !roots.every((root) => typeof root === "string")) {
    throw new ResourceError("INVALID_ARGUMENT", "roots must be an array of paths");
  }
  const onDiagnostic = options?.onDiagnostic;
  if (onDiagnostic !== undefined && typeof onDiagnostic !== "function") {
    throw new ResourceError("INVALID_ARGUMENT", "options.onDiagnostic must be a function");
  }
  const report = async (diagnostic: ResourceDiagnostic) => {
    const returned: unknown = onDiagnostic!.call(options, diagnostic);
    if (isThenable(returned)) await returned;
  };
  const winners = new Map<string, CatalogResource>();
  for (const configured of roots) {
    const inThisRoot = new Map<string, CatalogResource>();
    for (const finding of await discoverRoot(configured, onDiagnostic !== undefined)) {
      if ("warning" in finding) {
        await report(finding.warning);
        continue;
      }
      if ("problem" in finding) {
        if (onDiagnostic === undefined) throw finding.problem;
        await report({ severity: "error", code: finding.problem.code, source: finding.source, message: finding.problem.message });
        continue;
      }
      const { resource } = finding;
      const key = `${resource.kind}:${resource.name}`;
      const kept = inThisRoot.get(key);
      if (kept !== undefined) {
        const message = `${key} is defined twice in one root: ${resource.source} repeats ${kept.source}, which is kept`;
        if (onDiagnostic === undefined) throw new ResourceError("RESOURCE_DUPLICATE", message);
        await report({ severity: "error", code: "RESOURCE_DUPLICATE", source: resource.source, message });
        continue;
      }
      inThisRoot.set(key, resource);
      const winner = winners.get(key);
      if (winner === undefined) winners.set(key, resource);
      if (onDiagnostic === undefined) continue; // strict mode computes no warnings
      if (winner !== undefined) {
        const message = `${resource.source}: ${key} is hidden by ${winner.source} from an earlier root`;
        await report({ severity: "warning", code: "RESOURCE_SHADOWED", source: resource.source, message });
      } else if (resource.kind === "skill" && finding.skill !== undefined) {
        for (const warning of skillSpecDiagnostics(resource.source, finding.skill.fields, finding.skill.folder)) await report(warning);
      }
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

// ── Lab 12.2 · 激活时才把技能正文交给本轮 ──

/** True when `target` is `root` or below it. Compares path segments, not string prefixes. */
function isInside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative);
}

/**
 * Reads a checked file for activation: one that is no longer the checked file is
 * `SKILL_CHANGED`, one that vanished is `missing`; other problems keep their codes.
 */
async function readForActivation(file: string, missing: "SKILL_CHANGED" | "SKILL_RESOURCE_MISSING"): Promise<string> {
  try {
    return await readProvenText(file);
  } catch (caught) {
    throw resourceErrorOf(caught, file, { missing, changed: "SKILL_CHANGED" });
  }
}

/** Resolves and reads one requested file, checked lexically and again after realpath. */
async function readInsideSkill(root: string, request: string): Promise<ActivatedSkillFile> {
  if (typeof request !== "string" || request === "" || request.includes("\0") || path.isAbsolute(request)) {
    throw new ResourceError("SKILL_PATH_INVALID", `invalid skill resource request ${describeValue(request)}`);
  }
  const candidate = path.resolve(root, request);
  if (!isInside(root, candidate)) {
    throw new ResourceError("SKILL_PATH_ESCAPE", `${request} lies outside the skill root`);
  }
  let source: string;
  try {
    source = await realpath(candidate);
  } catch (caught) {
    if (!hasErrorCode(caught, "ENOENT", "ENOTDIR")) throw resourceErrorOf(caught, candidate, { missing: "SKILL_RESOURCE_MISSING", changed: "SKILL_CHANGED" });
    throw new ResourceError("SKILL_RESOURCE_MISSING", `${request} does not exist in the skill`, { cause: caught });
  }
  if (!isInside(root, source)) {
    throw new ResourceError("SKILL_PATH_ESCAPE", `${request} resolves outside the skill root`);
  }
  return { request, source, content: await readForActivation(source, "SKILL_RESOURCE_MISSING") };
}

/** realpath for activation: a path that no longer exists means the skill changed. */
async function realpathOrChanged(file: string, skill: SkillResource): Promise<string> {
  try {
    return await realpath(file);
  } catch (caught) {
    if (!hasErrorCode(caught, "ENOENT", "ENOTDIR")) throw resourceErrorOf(caught, file, { missing: "SKILL_CHANGED", changed: "SKILL_CHANGED" });
    throw new ResourceError("SKILL_CHANGED", `skill "${skill.name}" is gone from ${skill.root}`, { cause: caught });
  }
}

/**
 * Re-reads SKILL.md through realpath from inside the unchanged canonical root: a folder that
 * is gone is `SKILL_CHANGED`, one that now resolves elsewhere is `SKILL_PATH_ESCAPE`.
 */
async function rereadSkill(skill: SkillResource): Promise<{ name: string; body: string }> {
  const rootNow = await realpathOrChanged(skill.root, skill);
  if (rootNow !== skill.root) {
    // The folder was replaced by a link to another place: its SKILL.md resolves outside the root.
    throw new ResourceError("SKILL_PATH_ESCAPE", `the directory of skill "${skill.name}" now resolves to ${rootNow}, outside its canonical root ${skill.root}`);
  }
  const manifest = await realpathOrChanged(path.join(skill.root, "SKILL.md"), skill);
  if (!isInside(skill.root, manifest)) {
    throw new ResourceError("SKILL_PATH_ESCAPE", `SKILL.md of "${skill.name}" resolves outside its root`);
  }
  const content = await readForActivation(manifest, "SKILL_CHANGED");
  const { yaml, body } = closedFrontmatter(scanFrontmatter(content, true), manifest);
  return { name: skillMetadata(yaml, manifest).name, body: normalizeLineEnds(body).trim() };
}

/**
 * Activates the catalog's skill `name` for this turn. Guarantees: SKILL.md is re-read
 * through realpath from inside the canonical skill root and must still declare the same
 * name (`SKILL_CHANGED`); each requested file is read only if it lies inside the root both
 * lexically and after following symlinks, and duplicates collapse to the first. Reads are
 * proven, bounded and text only; the body is trimmed with LF line ends, files come back as
 * read, and the result is a fresh copy that keeps the catalog's metadata.
 */
export async function activateSkill(catalog: ResourceCatalog, name: string, options: { resources?: readonly string[] } = {}): Promise<ActivatedSkill> {
  const skill = catalog.skills.find((candidate) => candidate.name === name);
  if (skill === undefined) throw new ResourceError("SKILL_NOT_FOUND", `no skill named "${name}" in the catalog`);
  const requests = options?.resources ?? [];
  if (!Array.isArray(requests)) throw new ResourceError("INVALID_ARGUMENT", "options.resources must be an array of paths");
  const current = await rereadSkill(skill);
  if (current.name !== skill.name) {
    throw new ResourceError("SKILL_CHANGED", `SKILL.md now names "${current.name}", not "${skill.name}"`);
  }
  const files: ActivatedSkillFile[] = [];
  const requested = new Set<string>();
  for (const request of requests) {
    if (requested.has(request)) continue;
    requested.add(request);
    files.push(await readInsideSkill(skill.root, request));
  }
  const { description, source, root } = skill;
  return structuredClone({ kind: "skill", name, description, source, root, body: current.body, resources: files });
}

// ── Lab 12.3 · 模板与技能从两个入口汇入一次请求 ──

const PLACEHOLDER = /\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}/g;

/**
 * Renders `template` with `args` into a `UserMessage` stamped `Date.now()`. Only
 * `{{identifier}}` is a placeholder, replaced in one pass (an argument's own `{{x}}`, `$&` or
 * `$1` stays literal); a missing argument is `TEMPLATE_ARGUMENT_MISSING`, extras are ignored.
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

// Control characters that are not whitespace (whitespace is collapsed instead), and the
// bidirectional embeddings, overrides and isolates that can reorder what a reader sees.
const INVISIBLE = /[\u0000-\u0008\u000E-\u001F\u007F-\u0084\u0086-\u009F\u202A-\u202E\u2066-\u2069]/g;
const WHITESPACE_RUN = /[\s\u0085]+/g;

/**
 * Metadata on one line: control and bidi characters removed, each whitespace run (line
 * breaks included) one space, trimmed; no description can start a section of its own.
 */
function oneLine(value: string): string {
  return value.replace(INVISIBLE, "").replace(WHITESPACE_RUN, " ").trim();
}

/**
 * The system prompt text of a catalog and this turn's activated skills. Layout: every
 * heading and every body is a section of its own, sections are joined by a blank line, and
 * empty ones are left out (an empty AGENTS.md adds nothing, not even its heading):
 *
 * ```text
 * # Instructions            then each instruction body
 * # Skills                  then "- name: description", one line per catalog skill
 * # Active skill: <name>    then its body, then per file "## <request>" and its content
 * ```
 *
 * Templates, the user's entrance, are not listed. Names, descriptions and requests are one
 * line each (`oneLine`); bodies and files appear as they are; active skills are sorted by
 * name (code unit). Throws `ACTIVATION_DUPLICATE` / `ACTIVATION_FOREIGN`. Counts no tokens.
 */
export function formatResourceContext(catalog: ResourceCatalog, activated: readonly ActivatedSkill[]): string {
  checkActivations(catalog, activated);
  const sections: string[] = [];
  const instructions = catalog.instructions.map((instruction) => instruction.body).filter((body) => body !== "");
  if (instructions.length > 0) sections.push("# Instructions", ...instructions);
  if (catalog.skills.length > 0) {
    sections.push("# Skills", catalog.skills.map((skill) => `- ${oneLine(skill.name)}: ${oneLine(skill.description)}`).join("\n"));
  }
  const active = [...activated].sort((a, b) => compareCodeUnits(a.name, b.name));
  for (const skill of active) {
    sections.push(`# Active skill: ${oneLine(skill.name)}`);
    if (skill.body !== "") sections.push(skill.body);
    for (const file of skill.resources) sections.push(`## ${oneLine(file.request)}`, file.content);
  }
  return sections.join("\n\n");
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

/** A staged tool with its name, read once at registration: the name commit works with. */
// biome-ignore format: on one line; as lines of their own its fields would be lines of the provided resource-types.ts, which the leak audit refuses
interface StagedTool { tool: Tool; name: string }

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

  /**
   * Records registrations in local arrays; nothing becomes visible before `commit`. A
   * tool's name is read once, here; commit needs nothing else from the tool.
   */
  stage(extensionId: string): StagedRegistration {
    const tools: StagedTool[] = [];
    const staged: HookLists = { before: [], after: [] };
    let accepting = true;
    const context: ExtensionContext = Object.freeze({
      registerTool(tool: Tool) {
        if (!accepting) throw closedContext(extensionId);
        const name: unknown = typeof tool === "object" && tool !== null ? tool.name : undefined;
        if (typeof name !== "string" || name === "") {
          throw new ResourceError("EXTENSION_INVALID", `extension "${extensionId}": a tool must be an object with a non-empty string name`);
        }
        tools.push({ tool, name });
      },
      on(hook: "beforeToolCall" | "afterToolResult", listener: BeforeToolCallHook | AfterToolResultHook) {
        if (!accepting) throw closedContext(extensionId);
        if (typeof listener !== "function") throw new ResourceError("EXTENSION_INVALID", `${hook} listener is not a function`);
        if (hook === "beforeToolCall") staged.before.push({ extensionId, listener: listener as BeforeToolCallHook });
        else if (hook === "afterToolResult") staged.after.push({ extensionId, listener: listener as AfterToolResultHook });
        else throw new ResourceError("EXTENSION_INVALID", `unknown hook ${describeValue(hook)}`);
      },
    });
    const commit = () => {
      if (this.#active.has(extensionId)) {
        throw new ResourceError("EXTENSION_DUPLICATE", `extension "${extensionId}" is already active`);
      }
      const names = new Set<string>();
      const objects = new Set<Tool>();
      for (const { tool, name } of tools) {
        if (names.has(name) || objects.has(tool) || this.#registry.get(name) !== undefined) {
          throw new ResourceError("TOOL_CONFLICT", `extension "${extensionId}": tool "${name}" already exists`);
        }
        names.add(name);
        objects.add(tool);
      }
      // Every check has passed: all of it appears at once, each tool under the name it was staged with.
      registerPinned(this.#registry, tools, extensionId);
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

/** Each host handed out, with the implementation behind it: the loader's only way in. */
const IMPLEMENTATIONS = new WeakMap<ExtensionHost, ExtensionHostImpl>();

/** The public face of `impl`: frozen, `wrapExecutor` only, so no holder of the host can reach `stage`. */
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

/** A timeout `setTimeout` can honour: a positive number of milliseconds up to 2^31 − 1. */
function checkTimeout(value: unknown, name: string): number {
  if (typeof value !== "number" || !(value > 0) || value > 2 ** 31 - 1) {
    throw new ResourceError("INVALID_ARGUMENT", `${name} must be a positive number of milliseconds up to 2^31-1, got ${describeValue(value)}`);
  }
  return value;
}

/**
 * A host that commits extensions' tools into `registry` and runs their hooks; its one public
 * method is `wrapExecutor`. `hookTimeoutMs`: over 0 and up to 2^31 − 1 ms, else `INVALID_ARGUMENT`.
 */
export function createExtensionHost(registry: ToolRegistry, options: ExtensionHostOptions): ExtensionHost {
  const timeout = checkTimeout(options.hookTimeoutMs, "hookTimeoutMs");
  return publicFace(new ExtensionHostImpl(registry, { hookTimeoutMs: timeout, onDiagnostic: options.onDiagnostic }));
}

/** How long an async factory may take by default. */
const FACTORY_TIMEOUT_MS = 10_000;

async function importFromPath(source: Readonly<ExtensionSource>): Promise<unknown> {
  return import(pathToFileURL(source.path).href);
}

/** Imports the module (the caller's `importModule`, else `source.path`); any failure is `EXTENSION_IMPORT_FAILED`. */
async function importExtension(source: Readonly<ExtensionSource>, options: LoadExtensionOptions): Promise<unknown> {
  try {
    return options.importModule === undefined ? await importFromPath(source) : await options.importModule(source);
  } catch (caught) {
    const message = `extension "${source.id}" (${source.path}) could not be imported: ${reasonOf(caught)}`;
    throw new ResourceError("EXTENSION_IMPORT_FAILED", message, { cause: caught });
  }
}

function factoryOf(module: unknown, id: string): ExtensionModule["default"] {
  let factory: unknown;
  try {
    factory = typeof module === "object" && module !== null ? (module as { default?: unknown }).default : undefined;
  } catch (caught) {
    throw new ResourceError("EXTENSION_INVALID", `extension "${id}": its default export cannot be read`, { cause: caught });
  }
  if (typeof factory !== "function") {
    throw new ResourceError("EXTENSION_INVALID", `extension "${id}" has no default export function`);
  }
  return factory as ExtensionModule["default"];
}

/**
 * Runs the factory on the staging context, which closes when it returns, its promise settles
 * or `timeoutMs` passes (then the load fails); a timeout stops the waiting, not the factory.
 */
async function runFactory(factory: ExtensionModule["default"], staged: StagedRegistration, id: string, timeoutMs: number): Promise<void> {
  let outcome: Settled<unknown>;
  try {
    const returned: unknown = factory(staged.context);
    outcome = isThenable(returned) ? await settleWithin(() => returned, timeoutMs) : { kind: "value", value: returned };
  } catch (caught) {
    outcome = { kind: "error", error: caught };
  } finally {
    staged.close();
  }
  if (outcome.kind === "timeout") {
    throw new ResourceError("EXTENSION_FACTORY_FAILED", `extension "${id}" factory timed out after ${timeoutMs} ms`);
  }
  if (outcome.kind === "error") {
    throw new ResourceError("EXTENSION_FACTORY_FAILED", `extension "${id}" factory failed: ${reasonOf(outcome.error)}`, {
      cause: outcome.error,
    });
  }
}

/**
 * Loads one extension onto `options.host`, in this order: an active id is
 * `EXTENSION_DUPLICATE` → `isTrusted(frozen copy)`, where only `true` trusts (else
 * `skipped_untrusted`, nothing imported) → import → a default export function → the factory
 * stages → commit. After any failed load everything is as before, so the id can load again.
 */
export async function loadExtension(source: ExtensionSource, options: LoadExtensionOptions): Promise<LoadExtensionResult> {
  const host = hostImplementation(options.host);
  const factoryTimeoutMs = options.factoryTimeoutMs === undefined ? FACTORY_TIMEOUT_MS : checkTimeout(options.factoryTimeoutMs, "factoryTimeoutMs");
  if (host.isActive(source.id)) {
    throw new ResourceError("EXTENSION_DUPLICATE", `extension "${source.id}" is already active`);
  }
  const frozen: Readonly<ExtensionSource> = Object.freeze({ id: source.id, path: source.path });
  const trusted = (await options.isTrusted(frozen)) === true;
  if (!trusted) {
    return { id: frozen.id, status: "skipped_untrusted" };
  }
  const module = await importExtension(frozen, options);
  const factory = factoryOf(module, frozen.id);
  const staged = host.stage(frozen.id);
  await runFactory(factory, staged, frozen.id, factoryTimeoutMs);
  staged.commit();
  return { id: frozen.id, status: "active" };
}

// ── Lab 12.5 · 一次工具调用怎样穿过 hook ──

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
 * A before hook's answer, never throwing: `undefined` or an allow continues (`null`), a deny
 * with a non-empty reason is `deny`, anything else (a throwing getter included) is `error`.
 */
function decisionOf(value: unknown) {
  if (value === undefined) return null;
  try {
    if (typeof value === "object" && value !== null) {
      const decision: unknown = (value as { decision?: unknown }).decision;
      if (decision === "allow") return null;
      const reason: unknown = decision === "deny" ? (value as { reason?: unknown }).reason : undefined;
      if (typeof reason === "string" && reason.trim() !== "") return { kind: "deny" as const, reason };
    }
  } catch (caught) {
    return { kind: "error" as const, reason: `unreadable decision: ${reasonOf(caught)}` };
  }
  return { kind: "error" as const, reason: `malformed decision ${describeValue(value)}` };
}

/** What a before hook's outcome means: `null` to continue, or why the call is blocked. */
function verdictOf(outcome: Settled<unknown>, timeoutMs: number) {
  return outcome.kind === "value" ? decisionOf(outcome.value) : failureOf(outcome, timeoutMs);
}

/** The result a refused call gets instead of core's: paired with the call, `isError: true`. */
function blockedResult(call: ToolCall, extensionId: string, kind: "deny" | "error" | "timeout", reason: string): ToolResultMessage {
  const content = [text(`tool call "${call.name}" blocked by extension "${extensionId}" (${kind}): ${reason}`)];
  const details = { blockedByExtension: extensionId, kind, reason };
  return toolResult(call, { content, details, isError: true });
}

/** Runs the before hooks on `call`, the wrapper's private copy; the first refusal ends the chain. */
async function runBefore(hooks: HookLists, options: ExtensionHostOptions, call: DataCopy<ToolCall>) {
  const listeners = [...hooks.before];
  if (listeners.length === 0) return undefined;
  const view = hookViews(call);
  for (const { extensionId, listener } of listeners) {
    const outcome = await settleWithin(() => listener(view()), options.hookTimeoutMs);
    const verdict = verdictOf(outcome, options.hookTimeoutMs);
    if (verdict === null) continue;
    if (verdict.kind !== "deny") {
      report(options, { extensionId, hook: "beforeToolCall", kind: verdict.kind, message: verdict.reason });
    }
    return blockedResult(call.copy, extensionId, verdict.kind, verdict.reason);
  }
  return undefined; // every before hook allowed the call
}

async function runAfter(hooks: HookLists, options: ExtensionHostOptions, fact: DataCopy<ToolResultMessage>): Promise<void> {
  const listeners = [...hooks.after];
  if (listeners.length === 0) return;
  const view = hookViews(fact);
  for (const { extensionId, listener } of listeners) {
    const outcome = await settleWithin(() => listener(view()), options.hookTimeoutMs);
    if (outcome.kind === "value") continue; // an observer's return value means nothing
    const failure = failureOf(outcome, options.hookTimeoutMs);
    report(options, { extensionId, hook: "afterToolResult", kind: failure.kind, message: failure.reason });
  }
}

/** Core's result could not be copied: the after hooks are skipped, with one diagnostic. */
function reportUncopyableResult(hooks: HookLists, options: ExtensionHostOptions, caught: unknown): void {
  const skipped = hooks.after.map((entry) => entry.extensionId);
  if (skipped.length === 0) return;
  const message = `the tool result cannot be copied (${reasonOf(caught)}), so no afterToolResult hook saw it (skipped: ${skipped.join(", ")})`;
  report(options, { extensionId: skipped[0]!, hook: "afterToolResult", kind: "error", message });
}

/**
 * The executor behind `wrapExecutor`. Guarantees: before hooks run in registration order on
 * deep-frozen copies of the call, each within `hookTimeoutMs`; the first deny, throw, timeout
 * or malformed answer returns a paired blocked result (all but a deny with a diagnostic) and
 * neither core nor an after hook runs. Otherwise core runs once on the wrapper's copy, each
 * after hook observes a frozen copy of the result (a failure is a diagnostic), and the caller
 * gets a copy of its own. No hook makes the wrapper reject; a throwing core propagates.
 */
function hookedExecutor(hooks: HookLists, options: ExtensionHostOptions, core: ToolExecutor): ToolExecutor {
  return async (sourceCall) => {
    let call: DataCopy<ToolCall>;
    try {
      call = copyData(sourceCall);
      if (typeof call.copy !== "object" || call.copy === null) throw new TypeError("a tool call must be an object");
    } catch (caught) {
      return uncopyableCall(sourceCall, caught);
    }
    const blocked = await runBefore(hooks, options, call);
    if (blocked !== undefined) return blocked;
    // Core gets the private copy itself: the hooks only ever saw copies of it.
    const fact = await core(call.copy);
    let result: DataCopy<ToolResultMessage>;
    try {
      result = copyData(fact);
    } catch (caught) {
      reportUncopyableResult(hooks, options, caught);
      return fact;
    }
    await runAfter(hooks, options, result);
    return result.copy;
  };
}
