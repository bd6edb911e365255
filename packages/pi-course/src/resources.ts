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
 *
 * Beyond the labs' rules it holds what a real host needs (the challenge tier of the chapter
 * text): discovery that reports problems instead of throwing when the host asks for
 * diagnostics (`discoverResources(roots, { onDiagnostic })`), and survival of hostile
 * files, extensions and hook values. Three provided modules carry the machinery for that:
 * `resource-files.ts` reads a file safely (proven against swaps, bounded, text only),
 * `extension-values.ts` copies, freezes and describes whatever crosses the extension
 * boundary, and `skill-spec.ts` states the Agent Skills rules a lenient discovery warns
 * about; this file decides what to read, whether it is inside the right root, and what
 * every hook's answer means.
 */
import { realpath, stat } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parse as parseYaml } from "yaml";
import { copyData, describeValue, fixName, hookViews, isThenable, reasonOf, uncopyableCall, type DataCopy } from "./extension-values.js";
import { FileProblem, listDirectory, mapInOrder, readProvenPrefix, readProvenText, decodeText, type DirectoryEntry } from "./resource-files.js";
import { misnamedSkillFiles, skillSpecWarnings } from "./skill-spec.js";
import type { Tool, ToolExecutor, ToolRegistry } from "./tool.js";
import { text, userMessage, type ToolCall, type ToolResultMessage, type UserMessage } from "./types.js";

export { RESOURCE_SIZE_LIMIT } from "./resource-files.js";

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

/** Problems that never change the catalog; reported only in lenient mode. */
export type ResourceWarningCode =
  | "RESOURCE_SHADOWED" // a kind:name hidden by an earlier root (source = the hidden file)
  | "SKILL_NAME_FORMAT" // not 1-64 lowercase letters or digits (any script, after NFKC) and single inner hyphens
  | "SKILL_NAME_MISMATCH" // the name differs from its skill folder's name
  | "SKILL_DESCRIPTION_LONG" // a description over 1024 characters
  | "SKILL_COMPATIBILITY_LONG" // compatibility over 500 characters, or not a string
  | "SKILL_METADATA_INVALID" // metadata that is not a map of strings to strings
  | "SKILL_ALLOWED_TOOLS_INVALID" // allowed-tools that is not a space-separated string
  | "SKILL_FIELD_UNKNOWN" // frontmatter fields outside the Agent Skills specification (and pi's own)
  | "SKILL_FILE_CASE"; // a skill folder holding skill.md (another case), not SKILL.md: no skill (source = that file)

/** One problem found by a lenient discovery: an error (the resource was left out) or a warning. */
export interface ResourceDiagnostic {
  severity: "error" | "warning";
  code: ResourceErrorCode | ResourceWarningCode;
  /** The file or root concerned: canonical where it resolved, else as configured. */
  source: string;
  /** Names the file. */
  message: string;
}

/** With `onDiagnostic`, discovery is lenient: it reports problems instead of throwing. */
export interface DiscoverOptions {
  onDiagnostic?(diagnostic: ResourceDiagnostic): void;
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
  /** How long an async factory may take to settle, in ms (default 10 000, at most 2^31 − 1). */
  factoryTimeoutMs?: number;
}

export type LoadExtensionResult = { id: string; status: "active" } | { id: string; status: "skipped_untrusted" };

/** Error codes thrown on purpose by this module. */
export type ResourceErrorCode =
  | "RESOURCE_ROOT_MISSING" | "RESOURCE_DUPLICATE" | "RESOURCE_INVALID" // Lab 12.1 (and 12.2)
  | "RESOURCE_TOO_LARGE" | "RESOURCE_NOT_TEXT" | "RESOURCE_UNREADABLE" // 12.1 and 12.2: files in the real world
  | "SKILL_NOT_FOUND" | "SKILL_CHANGED" | "SKILL_PATH_INVALID" | "SKILL_PATH_ESCAPE" | "SKILL_RESOURCE_MISSING" // 12.2
  | "TEMPLATE_ARGUMENT_MISSING" | "ACTIVATION_DUPLICATE" | "ACTIVATION_FOREIGN" // 12.3
  | "EXTENSION_INVALID" | "EXTENSION_DUPLICATE" | "EXTENSION_FACTORY_FAILED" | "TOOL_CONFLICT" // 12.4
  | "EXTENSION_IMPORT_FAILED" | "EXTENSION_CONTEXT_CLOSED" | "INVALID_ARGUMENT"; // 12.4: import, late registration, bad options

/** An error with a stable `code`; messages may change, codes do not. */
export class ResourceError extends Error {
  readonly code: ResourceErrorCode;
  constructor(code: ResourceErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ResourceError";
    this.code = code;
  }
}

function hasCode(error: unknown, ...codes: string[]): boolean {
  return error instanceof Error && codes.includes((error as NodeJS.ErrnoException).code ?? "");
}

/** Plain code-unit order (what `<` does on strings): unlike `localeCompare`, the same on every machine. */
function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const PROBLEM_CODES = {
  "not-regular": "RESOURCE_INVALID",
  "too-large": "RESOURCE_TOO_LARGE",
  "not-text": "RESOURCE_NOT_TEXT",
  unreadable: "RESOURCE_UNREADABLE",
} as const;

/**
 * Anything thrown while reading `file`, as this module's error. The file layer's
 * `missing` (gone after its check) and `changed` (not the checked file any more) take the
 * codes of the place that read it; any raw I/O error is `RESOURCE_UNREADABLE` with the
 * original as `cause`.
 */
function readError(caught: unknown, file: string, codes: { missing: ResourceErrorCode; changed: ResourceErrorCode }): ResourceError {
  if (caught instanceof ResourceError) return caught;
  if (caught instanceof FileProblem) {
    const code = caught.kind === "missing" ? codes.missing : caught.kind === "changed" ? codes.changed : PROBLEM_CODES[caught.kind];
    return new ResourceError(code, caught.message, caught.cause === undefined ? undefined : { cause: caught.cause });
  }
  return new ResourceError("RESOURCE_UNREADABLE", `${file}: cannot be read (${reasonOf(caught)})`, { cause: caught });
}

/** Bodies keep `\n` line ends only: a file edited on Windows renders no stray CR. */
function normalizeLineEnds(value: string): string {
  return value.replaceAll("\r\n", "\n");
}

// ---------------------------------------------------------------------------
// Lab 12.1 · the catalog: roots in order, first kind:name wins
// ---------------------------------------------------------------------------

/** The largest YAML block (between the `---` lines) a resource may carry. */
const FRONTMATTER_LIMIT = 64 * 1024;
const KIND_ORDER = { instructions: 0, skill: 1, template: 2 } as const;

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

/**
 * Where in the file the parser's error in `yaml` lies (" at line L, column C", both
 * 1-based), or "" when it gave no position (an alias bomb). The block starts on the file's
 * second line, after the opening `---`. The line break that ends the block belongs to the
 * closing `---` line, so an error found at the block's end (an unclosed bracket or quote)
 * is placed at the end of the last YAML line, where the thing left open is.
 */
function yamlErrorPlace(yaml: string, caught: unknown): string {
  const pos: unknown = caught instanceof Error ? (caught as { pos?: unknown }).pos : undefined;
  if (!Array.isArray(pos) || typeof pos[0] !== "number") return "";
  const offset = Math.min(pos[0], /\r?\n$/.exec(yaml)?.index ?? yaml.length);
  const lineStart = offset === 0 ? 0 : yaml.lastIndexOf("\n", offset - 1) + 1;
  return ` at line ${yaml.slice(0, offset).split("\n").length + 1}, column ${offset - lineStart + 1}`;
}

/**
 * Parses a YAML block into a mapping (empty block: empty mapping), or `RESOURCE_INVALID`.
 * Whatever the parser throws (syntax, duplicate keys, an alias bomb, nesting too deep) is
 * caught, and its message says where in the file the error is; warnings are not printed.
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
interface SkillHead {
  name: string;
  description: string;
  fields: Record<string, unknown>;
}

function skillMetadata(yaml: string, file: string): SkillHead {
  const fields = frontmatterFields(yaml, file);
  return { name: textField(fields, "name", file), description: textField(fields, "description", file), fields };
}

/**
 * Reads a SKILL.md only up to the end of its frontmatter: chunk by chunk until the
 * closing `---` line, and never more than the 64 KiB limit plus one chunk; the body is
 * never read. What was read as frontmatter must be text (valid UTF-8, no NUL): the block
 * when it closed, else everything read (or, with no frontmatter, the first line).
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

/** `stat` that follows symlinks, with a dangling link reported as `undefined`. */
async function statOptional(file: string | Buffer) {
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

/** A read for discovery: a file that vanished after its check counts as absent. */
async function readForDiscovery(file: string): Promise<string | undefined> {
  try {
    return await readProvenText(file);
  } catch (caught) {
    if (caught instanceof FileProblem && caught.kind === "missing") return undefined;
    throw caught;
  }
}

/**
 * One entry of a root, in diagnostic order: a resource (a skill with its folder's name and
 * its frontmatter, for the Agent Skills warnings), the problem that kept one out, or (lenient
 * discovery only) a warning about an entry that is no resource.
 */
type Finding =
  | { resource: CatalogResource; skill?: { folder: string; fields: Record<string, unknown> } }
  | { problem: ResourceError; source: string }
  | { warning: ResourceDiagnostic };

/** The finding for whatever `scan` threw about `source` (canonical where it resolved). */
function problemAt(caught: unknown, source: string): Finding {
  return { problem: readError(caught, source, { missing: "RESOURCE_INVALID", changed: "RESOURCE_INVALID" }), source };
}

/** Discovery's containment rule: a file that resolves outside its root is refused. */
function checkInside(root: string, file: string, what: string): void {
  if (!isInside(root, file)) throw new ResourceError("RESOURCE_INVALID", `${file}: ${what} resolves outside ${root}`);
}

async function discoverInstructions(root: string): Promise<Finding[]> {
  let source = path.join(root, "AGENTS.md");
  try {
    const canonical = await realpathOptional(source);
    if (canonical === undefined) return [];
    source = canonical;
    checkInside(root, source, "AGENTS.md");
    const content = await readForDiscovery(source);
    if (content === undefined) return [];
    return [{ resource: { kind: "instructions", name: "AGENTS", source, root, body: normalizeLineEnds(content).trim() } }];
  } catch (caught) {
    return [problemAt(caught, source)];
  }
}

/** How many skills or templates discovery reads at once; see `discoverSkills`. */
const READS_IN_FLIGHT = 16;

/** True when the entry at `entryPath` would be a skill: a folder (or a link to one) holding a SKILL.md. */
async function holdsSkill(entryPath: string | Buffer): Promise<boolean> {
  if (!(await statOptional(entryPath))?.isDirectory()) return false;
  const manifest = typeof entryPath === "string" ? path.join(entryPath, "SKILL.md") : Buffer.concat([entryPath, Buffer.from(`${path.sep}SKILL.md`)]);
  return (await statOptional(manifest)) !== undefined;
}

/**
 * A lenient discovery's word on a skill folder without SKILL.md: each file in it that spells
 * SKILL.md in another case (`skill.md`) is a `SKILL_FILE_CASE` warning; the folder stays no
 * skill. A folder that cannot be listed gets no word: it was never a skill, and a hint must
 * not become an error.
 */
async function misnamedSkillFile(skillRoot: string): Promise<Finding[]> {
  let names: (string | undefined)[];
  try {
    names = (await listDirectory(skillRoot)).map((entry) => entry.name);
  } catch {
    return [];
  }
  return misnamedSkillFiles(names).map((name) => {
    const source = path.join(skillRoot, name);
    const message = `${source}: a skill's file is named "SKILL.md", not ${JSON.stringify(name)}: this folder is not read as a skill`;
    return { warning: { severity: "warning", code: "SKILL_FILE_CASE", source, message } };
  });
}

/**
 * One entry of the canonical `skills` folder: its skill, nothing when it is not a folder
 * or holds no SKILL.md (lenient: a warning when it holds a `skill.md`), or the problem that
 * keeps it out. A plain folder's canonical path is its name joined to the canonical parent;
 * a symlinked folder is allowed and its target is the skill root. SKILL.md must resolve
 * inside that root.
 */
async function discoverSkill(skillsFolder: string, entry: DirectoryEntry, lenient: boolean): Promise<Finding[]> {
  let source = path.join(skillsFolder, entry.shown);
  try {
    if (entry.name === undefined) {
      if (!(await holdsSkill(entry.path))) return [];
      throw new ResourceError("RESOURCE_INVALID", `${source}: skill folder name is not valid UTF-8 (shown escaped)`);
    }
    let skillRoot = path.join(skillsFolder, entry.name);
    if (entry.isSymbolicLink) {
      if (!(await statOptional(skillRoot))?.isDirectory()) return [];
      skillRoot = await realpath(skillRoot);
    } else if (!entry.isDirectory) {
      return [];
    }
    source = path.join(skillRoot, "SKILL.md");
    const canonical = await realpathOptional(source);
    if (canonical === undefined) return lenient ? await misnamedSkillFile(skillRoot) : [];
    source = canonical;
    checkInside(skillRoot, source, "SKILL.md");
    const { name, description, fields } = await readSkillHead(source);
    return [{ resource: { kind: "skill", name, description, source, root: skillRoot }, skill: { folder: entry.name, fields } }];
  } catch (caught) {
    if (caught instanceof FileProblem && caught.kind === "missing") return [];
    return [problemAt(caught, source)];
  }
}

/**
 * Each skill costs a handful of filesystem round trips, and on a large tree waiting for
 * them one by one dominates; a bounded number of reads in flight overlaps that waiting
 * (see bench/discovery.ts) while `mapInOrder` keeps the output order fixed.
 */
async function discoverSkills(root: string, lenient: boolean): Promise<Finding[]> {
  let folder = path.join(root, "skills");
  try {
    const canonical = await realpathOptional(folder);
    if (canonical === undefined) return [];
    folder = canonical;
    const entries = await listDirectory(folder);
    return (await mapInOrder(entries, READS_IN_FLIGHT, (entry) => discoverSkill(folder, entry, lenient))).flat();
  } catch (caught) {
    return [problemAt(caught, folder)];
  }
}

/**
 * One entry of `templates/`: only `*.md` entries that are regular files after following
 * symlinks count; such a file must resolve inside the root. The name comes from the
 * frontmatter when present, else from the file name.
 */
async function discoverTemplate(root: string, templatesFolder: string, entry: DirectoryEntry): Promise<Finding[]> {
  let source = path.join(templatesFolder, entry.shown);
  try {
    if (!entry.shown.endsWith(".md")) return [];
    const info = await statOptional(entry.path);
    if (info === undefined || !info.isFile()) return [];
    if (entry.name === undefined) {
      throw new ResourceError("RESOURCE_INVALID", `${source}: template file name is not valid UTF-8 (shown escaped)`);
    }
    source = await realpath(path.join(templatesFolder, entry.name));
    checkInside(root, source, "template");
    const content = await readForDiscovery(source);
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
 * Everything one configured root offers, in diagnostic order: AGENTS.md, then skills by
 * folder name, then templates by file name. A root that cannot be used is one finding.
 * Only a `lenient` discovery looks for warnings about entries that are no resource.
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
    if (!hasCode(caught, "ENOENT", "ENOTDIR")) return [problemAt(caught, root)];
    const missing = new ResourceError("RESOURCE_ROOT_MISSING", `resource root ${configured} does not exist`, { cause: caught });
    return [problemAt(missing, root)];
  }
  return [...(await discoverInstructions(root)), ...(await discoverSkills(root, lenient)), ...(await discoverTemplates(root))];
}

/**
 * The Agent Skills warnings for a catalog skill (see `skill-spec.ts` for the rules and their
 * order): warnings, never reasons to leave a skill out. `folder` is its entry in `skills/`
 * (for a linked skill, the link's name); `fields` its whole frontmatter.
 */
function skillWarnings(skill: SkillResource, { folder, fields }: { folder: string; fields: Record<string, unknown> }): ResourceDiagnostic[] {
  return skillSpecWarnings(fields, folder).map(({ code, message }) => ({ severity: "warning", code, source: skill.source, message: `${skill.source}: ${message}` }));
}

function compareResources(a: CatalogResource, b: CatalogResource): number {
  const byKind = KIND_ORDER[a.kind] - KIND_ORDER[b.kind];
  if (byKind !== 0) return byKind;
  return compareCodeUnits(a.name, b.name);
}

/**
 * Builds the catalog of `roots`. Guarantees: roots are canonicalised and scanned in the
 * given order, and the first root to supply a `kind:name` wins (a repeat inside one root
 * is `RESOURCE_DUPLICATE`; the entry first by file or folder name is the one kept);
 * output is sorted by kind, then name by code unit, never by path; no skill body is ever
 * held (SKILL.md is read only up to its frontmatter); the four arrays are independent
 * deep copies. Only a missing AGENTS.md, `skills/` or `templates/` means "none".
 *
 * Strict (no `onDiagnostic`): the first problem, in the order below, throws.
 * Lenient (`onDiagnostic`): nothing about one root or one resource throws. Each problem
 * is reported once as an `error` diagnostic with the code strict mode would throw, and
 * that root or resource is left out; a kind:name hidden by an earlier root is a
 * `RESOURCE_SHADOWED` warning, catalog skills get the Agent Skills warnings (the rules
 * and their order are `skill-spec.ts`'), and a skill folder holding a
 * `skill.md` instead of `SKILL.md` is a `SKILL_FILE_CASE` warning. Warnings never change
 * the catalog, and strict mode does not compute them. Diagnostics come in a fixed order (roots in order; inside a
 * root AGENTS.md, skills by folder name, templates by file name), whatever order the reads
 * finish in. If `onDiagnostic` throws, or returns a promise that rejects (discovery waits
 * for a returned promise), discovery rejects with that error.
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
        for (const warning of skillWarnings(resource, finding.skill)) await report(warning);
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

// ---------------------------------------------------------------------------
// Lab 12.2 · activation: the body enters only now, and only from inside the root
// ---------------------------------------------------------------------------

/** True when `target` is `root` or below it. Compares path segments, not string prefixes. */
function isInside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative);
}

/**
 * Reads a checked file for activation. A file that is no longer the one checked is
 * `SKILL_CHANGED`; one that vanished is `missing` (SKILL.md: the skill changed; a
 * requested file: `SKILL_RESOURCE_MISSING`). Size, text and I/O problems keep their codes.
 */
async function readForActivation(file: string, missing: "SKILL_CHANGED" | "SKILL_RESOURCE_MISSING"): Promise<string> {
  try {
    return await readProvenText(file);
  } catch (caught) {
    throw readError(caught, file, { missing, changed: "SKILL_CHANGED" });
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
    if (!hasCode(caught, "ENOENT", "ENOTDIR")) throw readError(caught, candidate, { missing: "SKILL_RESOURCE_MISSING", changed: "SKILL_CHANGED" });
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
    if (!hasCode(caught, "ENOENT", "ENOTDIR")) throw readError(caught, file, { missing: "SKILL_CHANGED", changed: "SKILL_CHANGED" });
    throw new ResourceError("SKILL_CHANGED", `skill "${skill.name}" is gone from ${skill.root}`, { cause: caught });
  }
}

/**
 * Re-reads SKILL.md through realpath, from inside the (unchanged) canonical skill root: a
 * folder that is gone is `SKILL_CHANGED`; one that now resolves elsewhere (replaced by a
 * link) is `SKILL_PATH_ESCAPE`, since its SKILL.md resolves outside the root.
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
 * name (`SKILL_CHANGED`); each requested file is read only if it lies inside the root
 * both lexically and after following symlinks; duplicate requests collapse to the first.
 * Every file is read from a handle proven to be the checked file (a swap in between is
 * `SKILL_CHANGED`, so no byte from outside the root is ever returned), at most
 * `RESOURCE_SIZE_LIMIT` bytes (`RESOURCE_TOO_LARGE`), and must be text
 * (`RESOURCE_NOT_TEXT`); other I/O errors are `RESOURCE_UNREADABLE`. The body has CRLF
 * turned into LF and is trimmed; requested files come back exactly as read. The result
 * keeps the catalog's metadata and is a fresh copy: changing it never changes the catalog.
 */
export async function activateSkill(
  catalog: ResourceCatalog,
  name: string,
  options: { resources?: readonly string[] } = {},
): Promise<ActivatedSkill> {
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

// Control characters that are not whitespace (whitespace is collapsed instead), and the
// bidirectional embeddings, overrides and isolates that can reorder what a reader sees.
const INVISIBLE = /[\u0000-\u0008\u000E-\u001F\u007F-\u0084\u0086-\u009F\u202A-\u202E\u2066-\u2069]/g;
const WHITESPACE_RUN = /[\s\u0085]+/g;

/**
 * Metadata shown on one line: control and bidi-override characters removed, every run of
 * whitespace (line breaks included) one space, trimmed. No description can start a
 * heading or a section of its own.
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
 * Templates are not listed: a template is the user's entrance (it becomes the user's turn
 * through `renderTemplate`), not something the model chooses, so the second revision's
 * one-line rule for template metadata has nothing to apply to here.
 *
 * Names, descriptions and requests are metadata and rendered one line each (see
 * `oneLine`); instruction bodies, skill bodies and file contents are the text the host
 * chose to include and appear as they are. Active skills come sorted by name (code unit).
 * No inactive skill body can appear: only `ActivatedSkill` objects carry one. Throws
 * `ACTIVATION_DUPLICATE` / `ACTIVATION_FOREIGN`. It does not count tokens; the caller
 * hands the string to `buildContext` as `systemPrompt`.
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

/** A staged tool with its name, read once at registration: the name commit works with. */
interface StagedTool {
  tool: Tool;
  name: string;
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
      const unfixable = tools.find((entry) => !fixName(entry, false));
      if (unfixable !== undefined) {
        throw new ResourceError("EXTENSION_INVALID", `extension "${extensionId}": tool "${unfixable.name}" cannot keep the name it was registered with (a proxy, or a frozen getter)`);
      }
      // Every check has passed: all of it appears at once. With every name a fixed data
      // property that the registry lacks, the course's `register` has nothing left to refuse;
      // a registry that refuses anyway (a subclass with rules of its own) gets back exactly
      // what it had before the error is rethrown.
      for (const entry of tools) fixName(entry, true);
      const registered: Tool[] = [];
      try {
        for (const { tool } of tools) {
          this.#registry.register(tool);
          registered.push(tool);
        }
      } catch (refusal) {
        for (const tool of registered.reverse()) this.#registry.unregister(tool.name, tool);
        throw refusal;
      }
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

/** A timeout `setTimeout` can honour: a positive number of milliseconds up to 2^31 − 1. */
function checkTimeout(value: unknown, name: string): number {
  if (typeof value !== "number" || !(value > 0) || value > 2 ** 31 - 1) {
    throw new ResourceError("INVALID_ARGUMENT", `${name} must be a positive number of milliseconds up to 2^31-1, got ${describeValue(value)}`);
  }
  return value;
}

/**
 * Creates a host that commits extensions' tools into `registry` and runs their hooks.
 * Its only public method is `wrapExecutor`; staging is reachable from `loadExtension`
 * alone. `hookTimeoutMs` must be a positive number of milliseconds that `setTimeout`
 * can honour (at most 2^31 − 1), else `INVALID_ARGUMENT`.
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
 * Runs the factory against the staging context, which closes the moment the factory
 * returns or (for an async factory) its promise settles, or when `timeoutMs` passes
 * first: then the load fails and whatever the factory does later is refused
 * (`EXTENSION_CONTEXT_CLOSED`). A timeout only stops the waiting; it cannot stop the
 * factory, and a synchronous factory cannot be interrupted at all.
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
 * Loads one extension onto `options.host`. Order, observable from outside: refuse an id
 * already active (`EXTENSION_DUPLICATE`) → `isTrusted(frozen copy)`, where only exactly
 * `true` trusts → `importModule(frozen copy)` (a failure is `EXTENSION_IMPORT_FAILED`,
 * with the id, the path and the cause) → the default export must be a function → the
 * factory registers into a staging context, within `factoryTimeoutMs` → commit.
 * Untrusted returns `skipped_untrusted` having imported nothing; a throwing policy
 * rejects and imports nothing. Commit cannot fail half-way: after any failed load the
 * registry, the hooks and the active ids are exactly as before, so the id can be loaded
 * again. A committed tool keeps the name it was registered with.
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
 * Classifies a before hook's answer without letting it throw: `undefined` or an allow
 * continues (`null`); a deny with a non-empty string reason blocks with kind `deny`;
 * anything else is malformed, kind `error`, since the host cannot tell what was meant.
 * Each field is read once inside a `try`, so a throwing getter, a hostile proxy, a cycle
 * or a BigInt is just another malformed answer.
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
  return { role: "toolResult", toolCallId: call.id, toolName: call.name, isError: true, content, details, timestamp: Date.now() };
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
 * The executor behind `ExtensionHost.wrapExecutor`. Guarantees: the call is copied first
 * (one that cannot be copied gets a paired error result and nothing runs); the before
 * hooks run in registration order on deep-frozen copies, each bounded by `hookTimeoutMs`;
 * the first deny, throw, timeout or malformed answer returns a paired blocked result and
 * neither core nor any after hook runs (throw/timeout/malformed also emit one diagnostic).
 * Otherwise core runs exactly once on the wrapper's copy of the call, every after hook
 * observes a deep-frozen copy of the result (a throw or timeout is a diagnostic, then the
 * next one runs), and the caller gets the wrapper's own copy: nothing a hook or the caller
 * does reaches core's object, the caller's call or another hook. A result that cannot be
 * copied skips the after hooks (one diagnostic) and goes to the caller as core made it.
 * No hook can make the wrapper reject; a throwing core propagates with no after hook run.
 * Calls share no state, so they run concurrently.
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
