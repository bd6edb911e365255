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

// scaffold: imports
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

// scaffold: given IMPLEMENTATIONS, publicFace, hostImplementation

// scaffold: after normalizeLineEnds
/** The scaffold's "not built yet" error: its message names the lab that builds the code. */
function labError(lab: string): Error {
  return new Error(`${lab} 尚未实现`);
}

// scaffold: before discoverResources
// 🔨 Lab 12.1（课文第 3 节，契约 §C3）：discoverResources 需要的 helper 写在这里。

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
function discoverResources() {
  // 🔨 Lab 12.1（课文第 3 节的骨架，契约 §C3）
  throw labError("Lab 12.1 resource catalog");
}

// scaffold: before activateSkill
// 🔨 Lab 12.2（课文第 4 节，契约 §C4）：activateSkill 需要的 helper 写在这里。

/**
 * Activates the catalog's skill `name` for this turn. Guarantees: SKILL.md is re-read
 * through realpath from inside the canonical skill root and must still declare the same
 * name (`SKILL_CHANGED`); each requested file is read only if it lies inside the root
 * both lexically and after following symlinks; duplicate requests collapse to the first.
 * The result keeps the catalog's metadata and is a fresh copy: changing it never
 * changes the catalog.
 */
function activateSkill() {
  // 🔨 Lab 12.2（课文第 4 节的骨架，契约 §C4）
  throw labError("Lab 12.2 skill activation");
}

/**
 * Renders `template` with `args` into a canonical `UserMessage` stamped `Date.now()`.
 * Only `{{identifier}}` is a placeholder; every occurrence is replaced in one pass, so
 * an argument's own `{{x}}`, `$&` or `$1` stays literal. A placeholder without an
 * argument throws `TEMPLATE_ARGUMENT_MISSING` naming it; extra arguments are ignored.
 */
function renderTemplate() {
  // 🔨 Lab 12.3（课文第 5 节的骨架，契约 §C5.1–§C5.4）
  throw labError("Lab 12.3 template and context");
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
 * Names, descriptions and requests are written on one line each; bodies and files appear as
 * they are. Active skills come sorted by name (code unit). No inactive skill body can appear: only
 * `ActivatedSkill` objects carry one. Throws `ACTIVATION_DUPLICATE` / `ACTIVATION_FOREIGN`.
 * It does not count tokens; the caller hands the string to `buildContext` as `systemPrompt`.
 */
function formatResourceContext() {
  // 🔨 Lab 12.3（课文第 5 节的骨架，契约 §C5.5–§C5.9）
  throw labError("Lab 12.3 template and context");
}

class ExtensionHostImpl {
  readonly #registry;
  readonly #options;
  readonly #active;
  readonly #hooks;

  constructor() {
    this.#registry = registry;
    this.#options = options;
  }

  isActive() {
    // 🔨 Lab 12.4（课文第 6 节，契约 §C6.2）
    throw labError("Lab 12.4 trust and staging");
  }

  stage() {
    // 🔨 Lab 12.4（课文第 6 节的 commit() 伪代码，契约 §C6.6–§C6.8）
    throw labError("Lab 12.4 trust and staging");
  }

  wrapExecutor() {
    return hookedExecutor(this.#hooks, this.#options, coreExecutor);
  }
}

/**
 * Creates a host that commits extensions' tools into `registry` and runs their hooks.
 * Its only public method is `wrapExecutor`; staging is reachable from `loadExtension`
 * alone. `hookTimeoutMs` must be a positive number of milliseconds that `setTimeout`
 * can honour (at most 2^31 − 1), else `INVALID_ARGUMENT`.
 */
function createExtensionHost() {
  // 🔨 Lab 12.4（课文第 6 节，契约 §C6.9）：新建的 ExtensionHostImpl 交给已经写好的 publicFace()
  void registry;
  void options;
  throw labError("Lab 12.4 trust and staging");
}

/**
 * Loads one extension onto `options.host`. Order, observable from outside: refuse an id
 * already active (`EXTENSION_DUPLICATE`) → `isTrusted(frozen copy)`, where only exactly
 * `true` trusts → `importModule(frozen copy)` → the default export must be a function →
 * the factory registers into a staging context → commit. Untrusted returns
 * `skipped_untrusted` having imported nothing; a throwing policy rejects and imports
 * nothing. Any failure leaves the registry and the hooks exactly as they were.
 */
function loadExtension() {
  // 🔨 Lab 12.4（课文第 6 节的骨架，契约 §C6.1–§C6.8）
  throw labError("Lab 12.4 trust and staging");
}

// scaffold: before hookedExecutor
// 🔨 Lab 12.5（课文第 7 节，契约 §C7）：hookedExecutor 需要的 helper 写在这里。

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
function hookedExecutor() {
  return async (call) => {
    // 给定代码（不是答案）：还没有任何已提交的 hook 时，把调用原样交给 core、把结果原样交回。
    // Lab 12.4 的第二项测试靠它观察“失败的加载没有留下 hook”。Lab 12.5 要重写整个函数体：
    // 到那时没有 hook 的调用也要遵守上面的保证（core 拿到的是 call 的副本，调用者拿到的是结果的副本）。
    if (hooks.before.length === 0 && hooks.after.length === 0) return core(call);
    // 🔨 Lab 12.5（课文第 7 节的骨架，契约 §C7）
    throw labError("Lab 12.5 hook execution");
  };
}
