// @ts-nocheck — a solution of Chapter 04, checked in place of packages/pi-course/src/model.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 04 · the model contract — solution E: the starter's door kept, the functions behind it
 * written with other idioms a learner reaches for: one helper that opens any block, a `switch`
 * on the open block, `!delta` for the empty piece, `/^\s*$/` for blank arguments, the parsed
 * value checked with `Object.prototype.toString`, a hand-written deep copy built with
 * `Object.fromEntries`, a broken turn assembled by spreading, and the abort reason read by hand.
 *
 * (What follows is the starter's own header.)
 *
 * What a model is, to the agent: a function from a request to a stream of assistant events
 * that ends in one finished turn. It never throws and its stream never fails: a failure is a
 * turn too, with `stopReason` `"error"` or `"aborted"` and an `errorMessage`.
 *
 * Given as it is (no 🔨): the types, `ModelError`, the state record `TurnState`, the class
 * `TurnBuilder` (a thin door: each method checks that the stream is still open and calls one
 * function below) and `finalTurn`. The functions behind the door are the construction sites,
 * each named after its lab. Build them in order: Lab 4.1 the text blocks (startTextBlock,
 * appendTextDelta, endOpenBlock, closeOpenBlock, finishTurn, assembleTurn) → 4.2 the tool
 * calls (startToolCallBlock, appendArgumentText, endToolCall, closeToolCall, parseArguments)
 * → 4.3 the turn of a failure or an abort (brokenTurn, failTurn, abortedTurn). Add private
 * helpers as you need them; keep the exports and the signatures of the declarations marked 🔨.
 *
 * Run one lab:  npm run lab -w @pi/course -- 4.1
 *
 * The scripted model of `scripted-model.ts` (given too) drives this builder in the chapter's
 * examples: it plays a script one builder call at a time.
 */
import { EventStream } from "./event-stream.js";
import { errorMessage } from "./async.js";
import type { AgentMessage, AssistantMessage, TextContent, ToolCall } from "./types.js";

/** A tool as the model sees it: its name, what it is for, and a JSON Schema of its arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** Everything one model call needs. */
export interface ModelRequest {
  /** `""` for none. */
  systemPrompt: string;
  messages: AgentMessage[];
  tools: ToolSpec[];
}

/**
 * Why a turn ended. `toolUse`: it asks for tools; `stop`: it answered; `length`: it ran
 * out of output tokens; `error` / `aborted`: it did not finish (see `errorMessage`).
 */
export type StopReason = "stop" | "toolUse" | "length" | "error" | "aborted";

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

/**
 * A failure the model can name. `code` is stable (a provider adapter's `PROVIDER_UNAUTHORIZED`,
 * say), so a caller decides on it rather than on wording; `message` is written for the user:
 * what happened and what to do. Plain data, so it survives `structuredClone`.
 */
export interface TurnFailure {
  code: string;
  message: string;
}

/** One finished model turn: the message and the facts about it. */
export interface AssistantTurn {
  message: AssistantMessage;
  stopReason: StopReason;
  usage: Usage;
  /** Present exactly when `stopReason` is `error` or `aborted`: what went wrong, in the model's own terms. */
  errorMessage?: string;
  /** Present only with `errorMessage`, when the model can name the failure (provider adapters do). */
  failure?: TurnFailure;
}

/** What a consumer watches while a turn is produced. `index` is the block's position in `message.content`. */
export type AssistantEvent =
  | { type: "text_start"; index: number }
  | { type: "text_delta"; index: number; delta: string }
  | { type: "text_end"; index: number; text: string }
  | { type: "toolcall_start"; index: number; id: string; name: string }
  | { type: "toolcall_delta"; index: number; delta: string }
  | { type: "toolcall_end"; index: number; toolCall: ToolCall };

export type AssistantStream = EventStream<AssistantEvent, AssistantTurn>;

export interface StreamOptions {
  /** Aborting ends the turn at once with `stopReason: "aborted"` and whatever had finished. */
  signal?: AbortSignal;
}

export interface Model {
  readonly name: string;
  /** Starts one turn. Never throws; see the module comment for what the stream promises. */
  stream(request: ModelRequest, options?: StreamOptions): AssistantStream;
}

/** Error codes thrown on purpose by this module. */
export type ModelErrorCode = "TURN_BUILDER_MISUSE" | "TOOL_ARGUMENTS_INVALID";

/** An error with a stable `code`; messages may change, codes do not. */
export class ModelError extends Error {
  readonly code: ModelErrorCode;
  constructor(code: ModelErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ModelError";
    this.code = code;
  }
}

/** The block being built; a tool call is `ended` when its block ended with arguments that do not parse (see `endToolCall`). */
type OpenBlock = { kind: "text"; index: number; text: string } | { kind: "toolCall"; index: number; id: string; name: string; json: string; ended: boolean };

/** The open tool call block. */
type OpenToolCall = Extract<OpenBlock, { kind: "toolCall" }>;

/**
 * Everything one turn keeps while it is built, in one plain record that the functions below
 * share. Blocks are sequential: at most one is open; `content` holds the finished ones, in
 * order, so an open block's `index` is `content.length` when it opened.
 */
interface TurnState {
  /** The finished blocks, in order: what the message will hold. */
  readonly content: (TextContent | ToolCall)[];
  /** The block being built, if any. */
  open: OpenBlock | undefined;
  /** Token usage so far (`setUsage`). */
  usage: Usage;
  /** The message's timestamp, read once when the builder is made. */
  readonly timestamp: number;
}

export interface TurnBuilderOptions {
  signal?: AbortSignal;
  /** Timestamp of the message; default `Date.now()`. */
  now?: () => number;
}

/**
 * Assembles one turn from what a model reports and emits the matching events on
 * `stream`. Blocks are sequential: starting a block finishes the open one.
 *
 * Every method returns `false` and does nothing once the stream is closed (finished,
 * failed or aborted), so a producer stops as soon as a call returns `false`. Calling a
 * method that does not fit the open block (argument bytes with no tool call open)
 * throws `TURN_BUILDER_MISUSE`. A model catches the errors below and calls `fail`.
 *
 * Tool arguments must be a JSON object (no text at all means `{}`), with one exception:
 * the output limit. A turn that finishes as `length` may have been cut off in the middle
 * of its last tool call, so that call, if its arguments do not parse as an object, ends
 * with arguments `{}`: its half-written text was streamed in `toolcall_delta` events,
 * the loop never runs a call of a `length` turn (it answers each with an error result),
 * and `{}` keeps the message sendable to a model again. Only the last block can be cut
 * off, so arguments that do not parse throw `TOOL_ARGUMENTS_INVALID` as soon as the turn
 * goes on past them (another block starts) or finishes as `stop` or `toolUse`. Whether
 * the producer ended the call's block first (Anthropic closes it before it says
 * `max_tokens`) or not makes no difference.
 *
 * The class is a thin door over one `TurnState`: each method checks that the stream is
 * still open and calls one function below, which emits the events and records the blocks
 * in the same step, so the events and the message cannot disagree.
 */
export class TurnBuilder {
  readonly stream: AssistantStream;
  readonly #state: TurnState;

  constructor(options: TurnBuilderOptions = {}) {
    // The state first: a signal that has already aborted asks for the aborted turn while the stream is being made.
    const state: TurnState = { content: [], open: undefined, usage: { inputTokens: 0, outputTokens: 0 }, timestamp: (options.now ?? Date.now)() };
    this.#state = state;
    this.stream = new EventStream<AssistantEvent, AssistantTurn>({
      ...(options.signal ? { signal: options.signal } : {}),
      onAbort: (reason) => abortedTurn(state, reason),
    });
  }

  get closed(): boolean {
    return this.stream.closed;
  }

  /** Opens a text block (finishing any open block) and emits `text_start`. */
  startText(): boolean {
    return !this.closed && startTextBlock(this.#state, this.stream);
  }

  /** Appends to the open text block, opening one if needed; an empty delta emits nothing. */
  appendText(delta: string): boolean {
    return !this.closed && appendTextDelta(this.#state, this.stream, delta);
  }

  /** Opens a tool call block (finishing any open block) and emits `toolcall_start`. */
  startToolCall(id: string, name: string): boolean {
    return !this.closed && startToolCallBlock(this.#state, this.stream, id, name);
  }

  /** Appends raw JSON text of the open tool call's arguments; an empty delta emits nothing. */
  appendToolArguments(delta: string): boolean {
    return !this.closed && appendArgumentText(this.#state, this.stream, delta);
  }

  /**
   * Finishes the open block, if any: a text block emits `text_end` with its whole text; a
   * tool call parses its arguments and emits `toolcall_end`. A tool call whose arguments do
   * not parse as an object is only marked ended: what comes next decides (see the class
   * comment), and `toolcall_end` is emitted then, or never if the turn fails.
   */
  endBlock(): boolean {
    return !this.closed && endOpenBlock(this.#state, this.stream);
  }

  /** Records token usage; fields not given keep their value. */
  setUsage(usage: Partial<Usage>): void {
    this.#state.usage = { ...this.#state.usage, ...usage };
  }

  /** Finishes the open block (a cut-off call of a `length` turn gets `{}`) and ends the stream with a completed turn. */
  finish(stopReason: "stop" | "toolUse" | "length"): boolean {
    return !this.closed && finishTurn(this.#state, this.stream, stopReason);
  }

  /**
   * Ends the stream with a turn that did not finish. Its message keeps the finished blocks
   * and the text of an open text block; an open tool call, or one whose arguments did not
   * parse, is dropped (it is not a request anyone could run). `failure`, when given, names the
   * failure for the caller (a copy is kept).
   */
  fail(message: string, stopReason: "error" | "aborted" = "error", failure?: TurnFailure): boolean {
    return !this.closed && failTurn(this.#state, this.stream, message, stopReason, failure);
  }
}

// ── Lab 4.1 · 文本块：一次调用，既发事件也记进消息 ──

/** Closes what is open, then opens `block` at the next position and announces it. */
function openBlock(state: TurnState, stream: AssistantStream, block: (index: number) => OpenBlock, announce: (index: number) => AssistantEvent): boolean {
  closeOpenBlock(state, stream, false);
  const index = state.content.length;
  state.open = block(index);
  return stream.push(announce(index));
}

/** Finishes the open block, then opens a text block at the next position of the message and emits `text_start`. */
function startTextBlock(state: TurnState, stream: AssistantStream): boolean {
  return openBlock(
    state,
    stream,
    (index) => ({ kind: "text", index, text: "" }),
    (index) => ({ type: "text_start", index }),
  );
}

/** Appends `delta` to the open text block and emits it, opening a text block first when none is open; `""` emits nothing. */
function appendTextDelta(state: TurnState, stream: AssistantStream, delta: string): boolean {
  let open = state.open;
  if (open === undefined || open.kind !== "text") {
    startTextBlock(state, stream);
    open = state.open as Extract<OpenBlock, { kind: "text" }>;
  }
  if (!delta) return true;
  open.text = `${open.text}${delta}`;
  return stream.push({ type: "text_delta", index: open.index, delta });
}

/** `endBlock()`: a text block closes at once; a tool call goes to `endToolCall`, which may have to wait (Lab 4.2). */
function endOpenBlock(state: TurnState, stream: AssistantStream): boolean {
  switch (state.open?.kind) {
    case "toolCall":
      return endToolCall(state, stream, state.open);
    default:
      return closeOpenBlock(state, stream, false);
  }
}

/**
 * Closes the open block for good, if any: a text block joins the message and emits `text_end`
 * with its whole text; a tool call is closed by `closeToolCall` (Lab 4.2). `cutOff`: the turn
 * ended at the output limit right after this block.
 */
function closeOpenBlock(state: TurnState, stream: AssistantStream, cutOff: boolean): boolean {
  const open = state.open;
  switch (open?.kind) {
    case undefined:
      return true;
    case "toolCall":
      return closeToolCall(state, stream, open, cutOff);
    case "text": {
      const { index, text } = open;
      state.open = undefined;
      state.content.push({ type: "text", text });
      return stream.push({ type: "text_end", index, text });
    }
  }
}

/** `finish()`: closes the open block (a cut-off call of a `length` turn gets `{}`) and ends the stream with the finished turn. */
function finishTurn(state: TurnState, stream: AssistantStream, stopReason: "stop" | "toolUse" | "length"): boolean {
  const cutOff = stopReason === "length";
  closeOpenBlock(state, stream, cutOff);
  const turn = assembleTurn(state, stopReason);
  return stream.end(turn);
}

/** The turn of the finished blocks: the message, why it stopped, the usage. The builder never touches them once the turn is out, so a copy is optional. */
function assembleTurn(state: TurnState, stopReason: StopReason): AssistantTurn {
  const message: AssistantMessage = { role: "assistant", content: state.content.slice(), timestamp: state.timestamp };
  return { message, stopReason, usage: Object.assign({}, state.usage) };
}

// ── Lab 4.2 · 工具调用：参数到齐了才解析 ──

/** Finishes the open block, then opens a tool call block at the next position and emits `toolcall_start`. */
function startToolCallBlock(state: TurnState, stream: AssistantStream, id: string, name: string): boolean {
  return openBlock(
    state,
    stream,
    (index) => ({ kind: "toolCall", index, id, name, json: "", ended: false }),
    (index) => ({ type: "toolcall_start", index, id, name }),
  );
}

/** Appends raw argument text to the open tool call and emits it; `""` emits nothing. No tool call open (or its block ended): `TURN_BUILDER_MISUSE`. */
function appendArgumentText(state: TurnState, stream: AssistantStream, delta: string): boolean {
  const open = state.open;
  if (!open || open.kind === "text") throw new ModelError("TURN_BUILDER_MISUSE", "argument text with no tool call open");
  if (open.ended) throw new ModelError("TURN_BUILDER_MISUSE", `argument text after the block of ${open.name} ended`);
  if (!delta) return true;
  open.json = open.json.concat(delta);
  return stream.push({ type: "toolcall_delta", index: open.index, delta });
}

/** `endBlock()` on a tool call: arguments that parse close it; arguments that do not only mark it ended, and what comes next decides. */
function endToolCall(state: TurnState, stream: AssistantStream, open: OpenToolCall): boolean {
  const parsed = parseArguments(open.name, open.json);
  if (!(parsed instanceof ModelError)) return closeToolCall(state, stream, open, false);
  open.ended = true;
  return true;
}

/** A deep copy of JSON data, by hand: arrays by `map`, objects by `Object.fromEntries` (own keys only, `__proto__` too). */
function copyJson<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => copyJson(item)) as T;
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, copyJson(item)])) as T;
  return value;
}

/**
 * Closes the open tool call for good: the call joins the message and `toolcall_end` carries a
 * copy of it. Arguments that do not parse throw their `TOOL_ARGUMENTS_INVALID`, unless the
 * turn was cut off right after this block (`cutOff`): then the call keeps arguments `{}`.
 */
function closeToolCall(state: TurnState, stream: AssistantStream, open: OpenToolCall, cutOff: boolean): boolean {
  let args = parseArguments(open.name, open.json);
  if (args instanceof ModelError) {
    if (!cutOff) throw args;
    args = {};
  }
  const call: ToolCall = { type: "toolCall", id: open.id, name: open.name, arguments: args };
  state.open = undefined;
  state.content.push(call);
  return stream.push({ type: "toolcall_end", index: open.index, toolCall: copyJson(call) });
}

/** The arguments as an object (no text at all means `{}`), or the `TOOL_ARGUMENTS_INVALID` error saying why not. */
function parseArguments(toolName: string, json: string): Record<string, unknown> | ModelError {
  if (/^\s*$/.test(json)) return {};
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    return new ModelError("TOOL_ARGUMENTS_INVALID", `${toolName}: arguments are not JSON (${errorMessage(error)})`, { cause: error });
  }
  if (Object.prototype.toString.call(value) === "[object Object]") return value as Record<string, unknown>;
  return new ModelError("TOOL_ARGUMENTS_INVALID", `${toolName}: arguments are JSON, but not an object`);
}

// ── Lab 4.3 · 失败也是一个回合 ──

/**
 * The turn of a failure (`error`) or an abort (`aborted`): the finished blocks, then the text
 * of an open text block if it has any (an open tool call is dropped), with `errorMessage` and,
 * when given, a copy of `failure`.
 */
function brokenTurn(state: TurnState, stopReason: "error" | "aborted", message: string, failure?: TurnFailure): AssistantTurn {
  const base = assembleTurn(state, stopReason);
  const open = state.open;
  const said = open?.kind === "text" && open.text.length > 0 ? [{ type: "text" as const, text: open.text }] : [];
  const turn: AssistantTurn = { ...base, message: { ...base.message, content: [...base.message.content, ...said] }, errorMessage: message };
  return failure === undefined ? turn : { ...turn, failure: { code: failure.code, message: failure.message } };
}

/** `fail()`: the stream ends, it does not fail: the failure is the turn `result()` gives. */
function failTurn(state: TurnState, stream: AssistantStream, message: string, stopReason: "error" | "aborted", failure: TurnFailure | undefined): boolean {
  stream.end(brokenTurn(state, stopReason, message, failure));
  return true;
}

/** The stream's `onAbort`: the turn an abort ends it with, its message saying why. */
function abortedTurn(state: TurnState, reason: unknown): AssistantTurn {
  const why = reason instanceof Error ? reason.message : String(reason);
  return brokenTurn(state, "aborted", "aborted: " + why);
}

/** Reads a stream to its end, ignoring the events, and returns the turn. */
export async function finalTurn(stream: AssistantStream): Promise<AssistantTurn> {
  for await (const _event of stream) {
    // Only the result matters here; iterating lets the producer's events go.
  }
  return stream.result();
}
