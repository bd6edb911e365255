// @ts-nocheck — a solution of Chapter 06, checked in place of packages/pi-course/src/tool.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 06 · tools — solution A: records. The object's fields are checked from the
 * value's own entries first, then the shape's; the registry keeps an array of tools (not a
 * map); the executor answers through one local `reply`; the wait that an abort ends is a
 * race between the work and a promise the abort settles one tick later.
 */
import { abortReason, errorMessage, isPlainObject, tick } from "./async.js";
import { text, type TextContent, type ToolCall, type ToolResultMessage } from "./types.js";

/** Error codes thrown on purpose by this module. */
export type ToolErrorCode = "TOOL_CONFLICT" | "SCHEMA_INVALID";

/** An error with a stable `code`; messages may change, codes do not. */
export class ToolError extends Error {
  readonly code: ToolErrorCode;
  constructor(code: ToolErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ToolError";
    this.code = code;
  }
}

/** Parses unknown input into `T`, or throws a `ToolError` with code `SCHEMA_INVALID`. */
export interface Schema<T> {
  parse(value: unknown): T;
  jsonSchema?: Record<string, unknown>;
}

/** A schema for one value; `path` names where the value sits, for error messages. */
export interface Validator<T> {
  parse(value: unknown, path?: string): T;
  jsonSchema: Record<string, unknown>;
}

/** Throws `SCHEMA_INVALID`: `<path>: expected <expected>, got <what value is>` (the path `value` for the top level). */
function invalid(path: string, expected: string, value: unknown): never {
  const got =
    value === null
      ? "null"
      : Array.isArray(value)
        ? "array"
        : typeof value === "object" && !isPlainObject(value)
          ? "an object that is not plain"
          : typeof value;
  throw new ToolError("SCHEMA_INVALID", `${path || "value"}: expected ${expected}, got ${got}`);
}

/** Accepts any string. */
export function stringValue(): Validator<string> {
  return {
    jsonSchema: { type: "string" },
    parse(value, path = "") {
      return typeof value === "string" ? value : invalid(path, "a string", value);
    },
  };
}

/** Accepts a finite number. */
export function numberValue(): Validator<number> {
  return {
    jsonSchema: { type: "number" },
    parse(value, path = "") {
      return typeof value === "number" && Number.isFinite(value) ? value : invalid(path, "a finite number", value);
    },
  };
}

/** Accepts `true` or `false`. */
export function booleanValue(): Validator<boolean> {
  return {
    jsonSchema: { type: "boolean" },
    parse(value, path = "") {
      return typeof value === "boolean" ? value : invalid(path, "a boolean", value);
    },
  };
}

/** Accepts an absent value as `undefined`, otherwise defers to `inner`. */
export function optional<T>(inner: Validator<T>): Validator<T | undefined> & { optional: true } {
  return {
    optional: true,
    jsonSchema: inner.jsonSchema,
    parse(value, path = "") {
      return value === undefined ? undefined : inner.parse(value, path);
    },
  };
}

type Shape = Record<string, Validator<unknown>>;
type ParsedShape<S extends Shape> = { [K in keyof S]: S[K] extends Validator<infer T> ? T : never };

/** True for a validator made by `optional`: its field may be absent. */
function isOptional(validator: Validator<unknown>): boolean {
  return "optional" in validator;
}

/**
 * A schema for a plain object with exactly the given fields: every non-optional field
 * must be present, and unknown fields are rejected so a typo in an argument name is an
 * error rather than a silently ignored value. `parse` returns a new object. Its
 * `jsonSchema` (what the model is shown) describes the same fields.
 */
export function objectSchema<S extends Shape>(shape: S): Schema<ParsedShape<S>> & Validator<ParsedShape<S>> {
  // Object.fromEntries defines each field as an own property: a field named `__proto__` stays a field.
  const properties = Object.fromEntries(Object.entries(shape).map(([key, validator]) => [key, validator.jsonSchema]));
  const required = Object.keys(shape).filter((key) => !isOptional(shape[key]!));
  return {
    jsonSchema: { type: "object", properties, required, additionalProperties: false },
    parse(value: unknown, path: string = "") {
      return parseObject(shape, value, path) as ParsedShape<S>;
    },
  };
}

// ── Lab 6.1 · 参数：从 unknown 到一个新对象 ──

function parseObject(shape: Shape, value: unknown, path: string): Record<string, unknown> {
  if (!isPlainObject(value)) invalid(path, "an object", value);
  const where = (key: string) => (path ? path + "." + key : key);
  const input = value as Record<string, unknown>;
  const given = new Map(Object.entries(input));
  for (const key of given.keys()) {
    if (!Object.prototype.hasOwnProperty.call(shape, key)) throw new ToolError("SCHEMA_INVALID", where(key) + ": unknown field");
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(shape)) {
    const validator = shape[key]!;
    if (!given.has(key)) {
      if (!isOptional(validator)) throw new ToolError("SCHEMA_INVALID", where(key) + ": missing");
      continue;
    }
    const parsed = validator.parse(given.get(key), where(key));
    if (parsed === undefined) continue;
    // Defined, not assigned: `out["__proto__"] = …` would set the prototype.
    Object.defineProperty(out, key, { value: parsed, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** What a tool run sees besides its parameters. */
export interface ToolContext {
  callId: string;
  signal?: AbortSignal;
}

/** What a tool returns; the executor turns it into a paired `ToolResultMessage`. */
export interface ToolOutput<D = unknown> {
  content: TextContent[];
  details?: D;
  isError?: boolean;
}

export interface Tool<P = unknown, D = unknown> {
  name: string;
  description: string;
  schema: Schema<P>;
  execute(parameters: P, context: ToolContext): Promise<ToolOutput<D>>;
}

// ── Lab 6.2 · 注册表：名字唯一，只移除自己注册的那个 ──

/** Tools by name, in registration order. Names are unique: a second one is refused. */
export class ToolRegistry {
  readonly #tools: Tool[] = [];

  /** Registers each tool in order; a duplicate name throws `TOOL_CONFLICT`. */
  constructor(tools: readonly Tool[] = []) {
    for (const tool of tools) this.register(tool);
  }

  register(tool: Tool): void {
    if (this.#tools.some((one) => one.name === tool.name)) throw new ToolError("TOOL_CONFLICT", `duplicate tool name: ${tool.name}`);
    this.#tools.push(tool);
  }

  unregister(name: string, tool: Tool): boolean {
    const at = this.#tools.findIndex((one) => one.name === name && one === tool);
    if (at < 0) return false;
    this.#tools.splice(at, 1);
    return true;
  }

  get(name: string): Tool | undefined {
    return this.#tools.find((one) => one.name === name);
  }

  list(): Tool[] {
    return this.#tools.slice();
  }
}

/** Runs one call and always answers it with a paired result. */
export type ToolExecutor = (call: ToolCall) => Promise<ToolResultMessage>;

export interface ToolExecutorOptions {
  /**
   * Handed to every tool run as `context.signal`, so a tool can stop its work (kill a
   * process, cancel a request) when the run it belongs to is aborted. A call that arrives
   * after the signal aborted is answered with a paired error without running the tool.
   * When it aborts while a tool runs, the executor answers soon without waiting for a tool
   * that ignores it (see `createToolExecutor`).
   */
  signal?: AbortSignal;
}

/**
 * Creates the executor for `registry`. The returned function never rejects: an
 * unknown tool, arguments that fail `schema.parse`, or an `execute` that throws all
 * become `{ toolCallId: call.id, toolName: call.name, isError: true }` with the reason
 * as text. The tool is looked up at call time, so tools registered later are found.
 *
 * A result holds copies of the tool's `content` and `details`, never the tool's own
 * objects: a tool may return a cached array or keep its details, and nothing done to the
 * result later can reach them (nor the other way round). Copying also checks that the
 * output is plain data; one that cannot be cloned (a function, say) becomes a paired
 * error here rather than a failure far away when the session stores it.
 *
 * With a `signal`, an abort is observed once the callbacks already due when it fired have
 * run (one `tick()`): whatever the tool answered by then, a result or an error, is its
 * answer and is kept; a tool still running then is answered `tool "…" was stopped: <reason>`
 * at once, and what it returns later is ignored. So an abort never hides a result that had
 * arrived, and the executor never hangs on a tool that ignores its signal.
 */
export function createToolExecutor(registry: ToolRegistry, options: ToolExecutorOptions = {}): ToolExecutor {
  const signal = options.signal;
  return (call) => executeCall(registry, call, signal);
}

/** A paired error answer to `call`: its id and name, `isError: true`, `message` as its one text block. */
function errorResult(call: ToolCall, message: string): ToolResultMessage {
  return { role: "toolResult", toolCallId: call.id, toolName: call.name, content: [text(message)], isError: true, timestamp: Date.now() };
}

/** What `untilStopped` answers when the abort was observed before the work settled. */
const STOPPED: unique symbol = Symbol("stopped");

// ── Lab 6.3 · 执行器：每个调用恰好一个配对的结果 ──

async function executeCall(registry: ToolRegistry, call: ToolCall, signal: AbortSignal | undefined): Promise<ToolResultMessage> {
  const reply = (content: TextContent[], isError: boolean, details?: unknown): ToolResultMessage => ({
    role: "toolResult",
    toolCallId: call.id,
    toolName: call.name,
    content,
    ...(details === undefined ? {} : { details }),
    isError,
    timestamp: Date.now(),
  });
  const tool = registry.get(call.name);
  if (!tool) return reply([text(`unknown tool "${call.name}"`)], true);
  let parameters: unknown;
  try {
    parameters = tool.schema.parse(call.arguments);
  } catch (problem) {
    return reply([text(`invalid arguments for "${call.name}": ${errorMessage(problem)}`)], true);
  }
  if (signal && signal.aborted) return reply([text(`tool "${call.name}" was not run: aborted before it started`)], true);
  const context: ToolContext = { callId: call.id };
  if (signal) context.signal = signal;
  try {
    const pending = tool.execute(parameters, context);
    const output = signal ? await untilStopped(pending, signal) : await pending;
    if (output === STOPPED) return reply([text(`tool "${call.name}" was stopped: ${errorMessage(abortReason(signal as AbortSignal))}`)], true);
    if (!Array.isArray(output?.content)) return reply([text(`tool "${call.name}" failed: it answered without a content array`)], true);
    const { content, details } = structuredClone({ content: output.content, details: output.details });
    return reply(content, output.isError === true, details);
  } catch (problem) {
    return reply([text(`tool "${call.name}" failed: ${errorMessage(problem)}`)], true);
  }
}

// ── Lab 6.4 · 运行中的中止：到了的结果留下，没到的不等 ──

function untilStopped<T>(work: Promise<T>, signal: AbortSignal): Promise<T | typeof STOPPED> {
  let onAbort: () => void = () => {};
  const stopped = new Promise<typeof STOPPED>((resolve) => {
    onAbort = () => {
      void tick().then(() => resolve(STOPPED));
    };
  });
  const settled = Promise.resolve(work).finally(() => signal.removeEventListener("abort", onAbort));
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  return Promise.race([settled, stopped]);
}
