/**
 * Chapter 06 · tools: schemas, a registry and the executor — the practice starter.
 *
 * The executor is the one place a `ToolCall` becomes a `ToolResultMessage`. Its
 * guarantee is pairing: whatever goes wrong, the caller gets exactly one result carrying
 * the call's id and name, never an exception. A tool runs only with arguments its schema
 * accepted, and never once the run was aborted.
 *
 * Given as it is (no 🔨): the error class and its codes, the interfaces, the leaf
 * validators (`stringValue`, `numberValue`, `booleanValue`, `optional`) and their helper
 * `invalid`, `objectSchema` (its `jsonSchema`; its `parse` calls `parseObject`), the
 * registry's constructor and its map, `createToolExecutor` (it calls `executeCall`), the
 * helper `errorResult` and the marker `STOPPED`. The construction sites are named after
 * their labs. Build them in order: Lab 6.1 parseObject → 6.2 the methods of ToolRegistry →
 * 6.3 executeCall → 6.4 untilStopped. Add private helpers as you need them; keep the exports
 * and the signatures of the declarations marked 🔨.
 *
 * Run one lab:  npm run lab -w @pi/course -- 6.1
 *
 * `isPlainObject` and `errorMessage` are chapter 01's; `abortReason` and `tick` too.
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
  const properties: Record<string, unknown> = {};
  for (const [key, validator] of Object.entries(shape)) properties[key] = validator.jsonSchema;
  const required = Object.keys(shape).filter((key) => !isOptional(shape[key]!));
  return {
    jsonSchema: { type: "object", properties, required, additionalProperties: false },
    parse(value: unknown, path: string = "") {
      return parseObject(shape, value, path) as ParsedShape<S>;
    },
  };
}

/** 施工位的错误：消息说出哪个 Lab 来写这段代码。每个 Lab 都做完后没有代码再调用它，删掉或留着都行。 */
function labError(lab: string): Error {
  return new Error(`${lab} 尚未实现`);
}

// ── Lab 6.1 · 参数：从 unknown 到一个新对象 ──

/**
 * `value` checked against `shape`, as a new object: a plain object whose own fields are
 * exactly some of the shape's (every required one present), each parsed by its validator
 * at `path.key`. An absent optional field (or one that is `undefined`) is left out.
 * Anything else throws `SCHEMA_INVALID`, its message starting with the offending path.
 */
function parseObject(shape: Shape, value: unknown, path: string): Record<string, unknown> {
  // 🔨 Lab 6.1：正文第 3 节的骨架（规则在附录 §C3）。invalid、isOptional 和第 01 章的 isPlainObject 直接用
  void shape;
  void value;
  void path;
  throw labError("Lab 6.1 object schema");
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
  // 🔨 Lab 6.2：register、unregister、get、list 四处都要写。正文第 4 节，规则见附录 §C4；#tools 和构造函数已经给出
  readonly #tools = new Map<string, Tool>();

  /** Registers each tool in order; a duplicate name throws `TOOL_CONFLICT`. */
  constructor(tools: readonly Tool[] = []) {
    for (const tool of tools) this.register(tool);
  }

  /** Adds a tool, or throws `TOOL_CONFLICT` (and changes nothing) if its name is taken. */
  register(tool: Tool): void {
    // 🔨 Lab 6.2：register（§C4.1、§C4.2）
    void tool;
    void this.#tools;
    throw labError("Lab 6.2 registry");
  }

  /**
   * Removes the tool registered under `name`, but only when it is `tool` itself (so one
   * owner cannot remove another's tool of the same name). Returns whether it removed it.
   * Registration order of the remaining tools is kept.
   */
  unregister(name: string, tool: Tool): boolean {
    // 🔨 Lab 6.2：unregister（§C4.3；第 4 节的预测问的就是它）
    void name;
    void tool;
    throw labError("Lab 6.2 registry");
  }

  /** The tool registered under `name`, or `undefined`. */
  get(name: string): Tool | undefined {
    void name;
    throw labError("Lab 6.2 registry");
  }

  /** The registered tools in registration order (a new array each call). */
  list(): Tool[] {
    throw labError("Lab 6.2 registry");
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
  // 🔨 Lab 6.3：正文第 5 节的骨架（规则在附录 §C5）。errorResult 直接用；有 signal 时交给 untilStopped（Lab 6.4），这一行现在就写上
  void registry;
  void call;
  void signal;
  void errorMessage;
  void abortReason;
  void STOPPED;
  throw labError("Lab 6.3 executor");
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
  // 🔨 Lab 6.4：正文第 6 节的骨架（规则在附录 §C6）。tick 是第 01 章的
  void work;
  void signal;
  void tick;
  throw labError("Lab 6.4 abort");
}
