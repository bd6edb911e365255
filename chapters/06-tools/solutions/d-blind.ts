// @ts-nocheck — a solution of Chapter 06, checked in place of packages/pi-course/src/tool.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 06 · tools — solution D: the blind learner's. Written in the practice folder from the
 * chapter text alone (13/13 first try, no hint): the result built with Object.fromEntries, "given"
 * as an own field that is not undefined, content and details cloned one by one, the abort reason in
 * the "was not run" text. Three lines are not the learner's: the final contract (after that run) made
 * `untilStopped` accept a plain output (`Promise.resolve(work)`, where the learner wrote `work.then`)
 * and answer an output without a content array as failed (the check before the clone), and §C5.2
 * keeps the "was not run" explanation from being blank when the abort reason's text is (`abort("")`).
 */
import { abortReason, errorMessage, isPlainObject, tick } from "./async.js";
import { text, toolResult, type TextContent, type ToolCall, type ToolResultMessage } from "./types.js";

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

/**
 * `value` checked against `shape`, as a new object: a plain object whose own fields are
 * exactly some of the shape's (every required one present), each parsed by its validator
 * at `path.key`. An absent optional field (or one that is `undefined`) is left out.
 * Anything else throws `SCHEMA_INVALID`, its message starting with the offending path.
 */
function parseObject(shape: Shape, value: unknown, path: string): Record<string, unknown> {
  if (!isPlainObject(value)) return invalid(path, "an object", value);
  const at = (key: string) => (path ? `${path}.${key}` : key);
  for (const key of Object.keys(value)) {
    if (!Object.hasOwn(shape, key)) throw new ToolError("SCHEMA_INVALID", `${at(key)}: unknown field`);
  }
  const entries: [string, unknown][] = [];
  for (const [key, validator] of Object.entries(shape)) {
    const given = Object.hasOwn(value, key) && value[key] !== undefined;
    if (!given) {
      if (isOptional(validator)) continue;
      throw new ToolError("SCHEMA_INVALID", `${at(key)}: required field is missing`);
    }
    const parsed = validator.parse(value[key], at(key));
    if (parsed !== undefined) entries.push([key, parsed]);
  }
  return Object.fromEntries(entries);
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
  readonly #tools = new Map<string, Tool>();

  /** Registers each tool in order; a duplicate name throws `TOOL_CONFLICT`. */
  constructor(tools: readonly Tool[] = []) {
    for (const tool of tools) this.register(tool);
  }

  /** Adds a tool, or throws `TOOL_CONFLICT` (and changes nothing) if its name is taken. */
  register(tool: Tool): void {
    if (this.#tools.has(tool.name)) {
      throw new ToolError("TOOL_CONFLICT", `a tool named "${tool.name}" is already registered`);
    }
    this.#tools.set(tool.name, tool);
  }

  /**
   * Removes the tool registered under `name`, but only when it is `tool` itself (so one
   * owner cannot remove another's tool of the same name). Returns whether it removed it.
   * Registration order of the remaining tools is kept.
   */
  unregister(name: string, tool: Tool): boolean {
    if (this.#tools.get(name) !== tool) return false;
    return this.#tools.delete(name);
  }

  /** The tool registered under `name`, or `undefined`. */
  get(name: string): Tool | undefined {
    return this.#tools.get(name);
  }

  /** The registered tools in registration order (a new array each call). */
  list(): Tool[] {
    return [...this.#tools.values()];
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
 * With a `signal`, whatever the tool answered before the abort was observed, a result or
 * an error, is its answer and is kept; a tool still running then is answered
 * `tool "…" was stopped: <reason>` at once, and what it returns later is ignored. So an
 * abort never hides a result that had arrived, and the executor never hangs on a tool that
 * ignores its signal (when an abort counts as observed: chapter 06, section 6).
 */
export function createToolExecutor(registry: ToolRegistry, options: ToolExecutorOptions = {}): ToolExecutor {
  const signal = options.signal;
  return (call) => executeCall(registry, call, signal);
}

/** A paired error answer to `call`: its id and name, `isError: true`, `message` as its one text block. */
function errorResult(call: ToolCall, message: string): ToolResultMessage {
  return toolResult(call, { content: [text(message)], isError: true });
}

/** What `untilStopped` answers when the abort was observed before the work settled. */
const STOPPED: unique symbol = Symbol("stopped");

// ── Lab 6.3 · 执行器：每个调用恰好一个配对的结果 ──

/**
 * One call, answered: look the tool up, parse the arguments, refuse an aborted run, run
 * the tool (with a signal, through `untilStopped`) and pair what it returned, copied.
 * Never rejects: every way it can go wrong is a paired error result.
 */
async function executeCall(registry: ToolRegistry, call: ToolCall, signal: AbortSignal | undefined): Promise<ToolResultMessage> {
  const tool = registry.get(call.name);
  if (tool === undefined) return errorResult(call, `unknown tool "${call.name}"`);
  let parameters: unknown;
  try {
    parameters = tool.schema.parse(call.arguments);
  } catch (error) {
    return errorResult(call, `invalid arguments for "${call.name}": ${errorMessage(error)}`);
  }
  if (signal?.aborted) {
    const why = errorMessage(abortReason(signal));
    return errorResult(call, `tool "${call.name}" was not run: ${why.trim() === "" ? "the run was aborted" : why}`);
  }
  try {
    const context: ToolContext = signal === undefined ? { callId: call.id } : { callId: call.id, signal };
    const running = tool.execute(parameters, context);
    const output = signal === undefined ? await running : await untilStopped(running, signal);
    if (output === STOPPED) {
      return errorResult(call, `tool "${call.name}" was stopped: ${errorMessage(abortReason(signal!))}`);
    }
    if (!Array.isArray(output?.content)) return errorResult(call, `tool "${call.name}" failed: no content array in its output`);
    const content = structuredClone(output.content);
    const details = structuredClone(output.details);
    return toolResult(call, { content, details, isError: output.isError === true });
  } catch (error) {
    return errorResult(call, `tool "${call.name}" failed: ${errorMessage(error)}`);
  }
}

// ── Lab 6.4 · 运行中的中止：到了的结果留下，没到的不等 ──

/**
 * How `work` settled (its value, or a rejection with its error), or `STOPPED` when `signal`
 * aborted first. The abort is observed one `tick()` after it fires, so work that had
 * already settled (its callbacks still queued) is reported, not lost. Adds one abort
 * listener and removes it when the work settles first; abandoned work's later failure is
 * handled here.
 */
function untilStopped<T>(work: Promise<T>, signal: AbortSignal): Promise<T | typeof STOPPED> {
  return new Promise<T | typeof STOPPED>((resolve, reject) => {
    const observe = () => {
      void tick().then(() => resolve(STOPPED));
    };
    Promise.resolve(work).then(
      (value) => {
        signal.removeEventListener("abort", observe);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", observe);
        reject(error);
      },
    );
    if (signal.aborted) observe();
    else signal.addEventListener("abort", observe, { once: true });
  });
}
