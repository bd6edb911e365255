/**
 * Chapter 12 · the public types of `resources.ts`, its error codes and `ResourceError`.
 *
 * This module is provided: the practice folder receives it as it is, and `resources.ts`
 * re-exports all of it (`export * from "./resource-types.js"`), so every caller still
 * imports from `resources.ts`. The shapes are the chapter's contract: the tests, the
 * chapter text and Chapter 13 are written against them, so a learner uses them and never
 * edits them. Keeping them here leaves `resources.ts` what the chapter asks a learner to
 * write: behaviour, lab by lab.
 *
 * A few declarations serve the challenge tier (`chapters/12-resources-extensions/challenge.md`) and no lab:
 * lenient discovery's `DiscoverOptions`, `ResourceDiagnostic` and `ResourceWarningCode`,
 * `factoryTimeoutMs`, and the error codes of files in the real world.
 */
import type { Tool, ToolExecutor } from "./tool.js";
import type { ToolCall, ToolResultMessage } from "./types.js";

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

/** With `onDiagnostic`, discovery is lenient: it reports problems instead of throwing (the challenge tier). */
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
export type BeforeToolCallHook = (call: Readonly<ToolCall>) => void | BeforeToolDecision | Promise<void | BeforeToolDecision>;
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

/** Error codes `resources.ts` throws on purpose, by the lab that introduces them. */
export type ResourceErrorCode =
  | "RESOURCE_ROOT_MISSING"
  | "RESOURCE_DUPLICATE"
  | "RESOURCE_INVALID" // Lab 12.1 (and 12.2)
  | "RESOURCE_TOO_LARGE"
  | "RESOURCE_NOT_TEXT"
  | "RESOURCE_UNREADABLE" // 12.1 and 12.2: files in the real world
  | "SKILL_NOT_FOUND"
  | "SKILL_CHANGED"
  | "SKILL_PATH_INVALID"
  | "SKILL_PATH_ESCAPE"
  | "SKILL_RESOURCE_MISSING" // 12.2
  | "TEMPLATE_ARGUMENT_MISSING"
  | "ACTIVATION_DUPLICATE"
  | "ACTIVATION_FOREIGN" // 12.3
  | "EXTENSION_INVALID"
  | "EXTENSION_DUPLICATE"
  | "EXTENSION_FACTORY_FAILED"
  | "TOOL_CONFLICT" // 12.4
  | "EXTENSION_IMPORT_FAILED"
  | "EXTENSION_CONTEXT_CLOSED"
  | "INVALID_ARGUMENT"; // 12.4: import, late registration, bad options

/** Every error `resources.ts` throws on purpose: a stable `code`; messages may change, codes do not. */
export class ResourceError extends Error {
  readonly code: ResourceErrorCode;
  constructor(code: ResourceErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ResourceError";
    this.code = code;
  }
}
