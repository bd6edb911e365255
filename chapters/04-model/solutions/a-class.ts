// @ts-nocheck — a solution of Chapter 04, checked in place of packages/pi-course/src/model.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 04 · the model contract — solution A: the module as it stood before the chapter was
 * made interactive, kept as it was: one class, its state in private fields, no helper
 * functions behind a door. It shows that the lab tests ask for behaviour, not for the
 * starter's layout.
 *
 * What a model is, to the agent: a function from a request to a stream of assistant events
 * that ends in one finished turn.
 *
 * Every model (the scripted one of this chapter, chapter 05's provider adapter) keeps
 * the same promises, so the agent loop never needs to know which one it talks to:
 * - `stream()` never throws and its stream never fails: a network error, an HTTP error,
 *   a broken response or an abort is a turn with `stopReason` `"error"` or `"aborted"`
 *   and an `errorMessage`. The agent decides what a failure means; the model only reports.
 * - The finished message is exactly what the events described: text blocks are their
 *   deltas joined, each tool call is the one its `toolcall_end` event carried.
 * - Running out of output tokens is a finished turn (`length`), never a broken one, even
 *   in the middle of a tool call: that call keeps arguments `{}` (see `TurnBuilder`).
 *
 * `TurnBuilder` keeps the second promise for every model: a model tells it what arrived
 * ("a text block starts", "here are argument bytes"), and it emits the events and
 * assembles the message from the same calls, so the two cannot disagree.
 *
 * Per-turn facts that are not part of the conversation (why the turn stopped, token
 * usage, the error) live in `AssistantTurn`, next to the message, not inside it: the
 * message IR of chapter 03 stays exactly what is sent back to a model later.
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

/** The block being built; a tool call is `ended` when its block ended with arguments that do not parse (see `endBlock`). */
type OpenBlock = { kind: "text"; index: number; text: string } | { kind: "toolCall"; index: number; id: string; name: string; json: string; ended: boolean };

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
 */
export class TurnBuilder {
  readonly stream: AssistantStream;
  readonly #content: (TextContent | ToolCall)[] = [];
  readonly #timestamp: number;
  #open: OpenBlock | undefined;
  #usage: Usage = { inputTokens: 0, outputTokens: 0 };

  constructor(options: TurnBuilderOptions = {}) {
    this.#timestamp = (options.now ?? Date.now)();
    this.stream = new EventStream<AssistantEvent, AssistantTurn>({
      ...(options.signal ? { signal: options.signal } : {}),
      onAbort: (reason) => this.#turn("aborted", `aborted: ${errorMessage(reason)}`),
    });
  }

  get closed(): boolean {
    return this.stream.closed;
  }

  /** Opens a text block (finishing any open block) and emits `text_start`. */
  startText(): boolean {
    if (this.closed) return false;
    this.#close(false);
    const index = this.#content.length;
    this.#open = { kind: "text", index, text: "" };
    return this.#emit({ type: "text_start", index });
  }

  /** Appends to the open text block, opening one if needed; an empty delta emits nothing. */
  appendText(delta: string): boolean {
    if (this.closed) return false;
    if (this.#open?.kind !== "text") this.startText();
    const open = this.#open as Extract<OpenBlock, { kind: "text" }>;
    if (delta === "") return true;
    open.text += delta;
    return this.#emit({ type: "text_delta", index: open.index, delta });
  }

  /** Opens a tool call block (finishing any open block) and emits `toolcall_start`. */
  startToolCall(id: string, name: string): boolean {
    if (this.closed) return false;
    this.#close(false);
    const index = this.#content.length;
    this.#open = { kind: "toolCall", index, id, name, json: "", ended: false };
    return this.#emit({ type: "toolcall_start", index, id, name });
  }

  /** Appends raw JSON text of the open tool call's arguments; an empty delta emits nothing. */
  appendToolArguments(delta: string): boolean {
    if (this.closed) return false;
    if (this.#open?.kind !== "toolCall" || this.#open.ended) {
      throw new ModelError("TURN_BUILDER_MISUSE", "tool argument text arrived while no tool call block is open");
    }
    if (delta === "") return true;
    this.#open.json += delta;
    return this.#emit({ type: "toolcall_delta", index: this.#open.index, delta });
  }

  /**
   * Finishes the open block, if any: a text block emits `text_end` with its whole text; a
   * tool call parses its arguments and emits `toolcall_end`. A tool call whose arguments do
   * not parse as an object is only marked ended: what comes next decides (see the class
   * comment), and `toolcall_end` is emitted then, or never if the turn fails.
   */
  endBlock(): boolean {
    if (this.closed) return false;
    const open = this.#open;
    if (open?.kind !== "toolCall") return this.#close(false);
    const args = parseArguments(open.name, open.json);
    if (args instanceof ModelError) {
      open.ended = true;
      return true;
    }
    return this.#closeToolCall(open, args);
  }

  /** Closes the open block for good; `cutOff`: the turn ended at the output limit right after it. */
  #close(cutOff: boolean): boolean {
    const open = this.#open;
    if (open === undefined) return true;
    if (open.kind === "text") {
      this.#open = undefined;
      this.#content.push({ type: "text", text: open.text });
      return this.#emit({ type: "text_end", index: open.index, text: open.text });
    }
    const args = parseArguments(open.name, open.json);
    if (args instanceof ModelError && !cutOff) throw args;
    return this.#closeToolCall(open, args instanceof ModelError ? {} : args);
  }

  #closeToolCall(open: Extract<OpenBlock, { kind: "toolCall" }>, args: Record<string, unknown>): boolean {
    this.#open = undefined;
    const toolCall: ToolCall = { type: "toolCall", id: open.id, name: open.name, arguments: args };
    this.#content.push(toolCall);
    return this.#emit({ type: "toolcall_end", index: open.index, toolCall: structuredClone(toolCall) });
  }

  /** Records token usage; fields not given keep their value. */
  setUsage(usage: Partial<Usage>): void {
    this.#usage = { ...this.#usage, ...usage };
  }

  /** Finishes the open block (a cut-off call of a `length` turn gets `{}`) and ends the stream with a completed turn. */
  finish(stopReason: "stop" | "toolUse" | "length"): boolean {
    if (this.closed) return false;
    this.#close(stopReason === "length");
    return this.stream.end(this.#turn(stopReason));
  }

  /**
   * Ends the stream with a turn that did not finish. Its message keeps the finished blocks
   * and the text of an open text block; an open tool call, or one whose arguments did not
   * parse, is dropped (it is not a request anyone could run). `failure`, when given, names the
   * failure for the caller (a copy is kept).
   */
  fail(message: string, stopReason: "error" | "aborted" = "error", failure?: TurnFailure): boolean {
    if (this.closed) return false;
    return this.stream.end(this.#turn(stopReason, message, failure));
  }

  #emit(event: AssistantEvent): boolean {
    return this.stream.push(event);
  }

  #turn(stopReason: StopReason, error?: string, failure?: TurnFailure): AssistantTurn {
    const content = structuredClone(this.#content);
    if (error !== undefined && this.#open?.kind === "text" && this.#open.text !== "") {
      content.push({ type: "text", text: this.#open.text });
    }
    const turn: AssistantTurn = {
      message: { role: "assistant", content, timestamp: this.#timestamp },
      stopReason,
      usage: { ...this.#usage },
    };
    if (error !== undefined) turn.errorMessage = error;
    if (error !== undefined && failure !== undefined) turn.failure = { code: failure.code, message: failure.message };
    return turn;
  }
}

/** The arguments as an object (no text at all means `{}`), or the `TOOL_ARGUMENTS_INVALID` error saying why not. */
function parseArguments(toolName: string, json: string): Record<string, unknown> | ModelError {
  if (json.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    return new ModelError("TOOL_ARGUMENTS_INVALID", `arguments of tool call "${toolName}" are not valid JSON: ${errorMessage(error)}`, {
      cause: error,
    });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return new ModelError("TOOL_ARGUMENTS_INVALID", `arguments of tool call "${toolName}" are not a JSON object`);
  }
  return value as Record<string, unknown>;
}

/** Reads a stream to its end, ignoring the events, and returns the turn. */
export async function finalTurn(stream: AssistantStream): Promise<AssistantTurn> {
  for await (const _event of stream) {
    // Only the result matters here; iterating lets the producer's events go.
  }
  return stream.result();
}
