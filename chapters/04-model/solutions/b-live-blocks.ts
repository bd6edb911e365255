// @ts-nocheck — a solution of Chapter 04, checked in place of packages/pi-course/src/model.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 04 · the model contract — solution B: "live blocks". A block joins the message the
 * moment it opens and grows in place; the builder remembers only where the open one is, and
 * a tool call's argument text sits beside it until its block closes. A broken turn removes
 * what must not stay (an open call, an open text without text) instead of adding what may.
 * Arguments are checked by one small classifier that never throws. Same public surface as the
 * reference, written without looking at its functions.
 */
import { EventStream } from "./event-stream.js";
import { errorMessage } from "./async.js";
import type { AgentMessage, AssistantMessage, TextContent, ToolCall } from "./types.js";

export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ModelRequest {
  systemPrompt: string;
  messages: AgentMessage[];
  tools: ToolSpec[];
}

export type StopReason = "stop" | "toolUse" | "length" | "error" | "aborted";

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

export interface TurnFailure {
  code: string;
  message: string;
}

export interface AssistantTurn {
  message: AssistantMessage;
  stopReason: StopReason;
  usage: Usage;
  errorMessage?: string;
  failure?: TurnFailure;
}

export type AssistantEvent =
  | { type: "text_start"; index: number }
  | { type: "text_delta"; index: number; delta: string }
  | { type: "text_end"; index: number; text: string }
  | { type: "toolcall_start"; index: number; id: string; name: string }
  | { type: "toolcall_delta"; index: number; delta: string }
  | { type: "toolcall_end"; index: number; toolCall: ToolCall };

export type AssistantStream = EventStream<AssistantEvent, AssistantTurn>;

export interface StreamOptions {
  signal?: AbortSignal;
}

export interface Model {
  readonly name: string;
  stream(request: ModelRequest, options?: StreamOptions): AssistantStream;
}

export type ModelErrorCode = "TURN_BUILDER_MISUSE" | "TOOL_ARGUMENTS_INVALID";

export class ModelError extends Error {
  readonly code: ModelErrorCode;
  constructor(code: ModelErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ModelError";
    this.code = code;
  }
}

export interface TurnBuilderOptions {
  signal?: AbortSignal;
  now?: () => number;
}

/** Where the open block is, and for a call its argument text and whether its block has ended. */
type Open = { at: number; kind: "text" } | { at: number; kind: "call"; raw: string; ended: boolean };

interface Live {
  readonly blocks: (TextContent | ToolCall)[];
  open: Open | null;
  usage: Usage;
  readonly stamp: number;
}

export class TurnBuilder {
  readonly stream: AssistantStream;
  readonly #live: Live;

  constructor(options: TurnBuilderOptions = {}) {
    const live: Live = { blocks: [], open: null, usage: { inputTokens: 0, outputTokens: 0 }, stamp: options.now ? options.now() : Date.now() };
    this.#live = live;
    this.stream = new EventStream<AssistantEvent, AssistantTurn>({
      ...(options.signal ? { signal: options.signal } : {}),
      onAbort: (reason) => broken(live, "aborted", "aborted: " + errorMessage(reason)),
    });
  }

  get closed(): boolean {
    return this.stream.closed;
  }

  startText(): boolean {
    if (this.closed) return false;
    settle(this.#live, this.stream, false);
    return openText(this.#live, this.stream);
  }

  appendText(delta: string): boolean {
    if (this.closed) return false;
    const live = this.#live;
    if (live.open?.kind !== "text") {
      settle(live, this.stream, false);
      openText(live, this.stream);
    }
    if (delta.length === 0) return true;
    const at = (live.open as Open).at;
    (live.blocks[at] as TextContent).text += delta;
    return this.stream.push({ type: "text_delta", index: at, delta });
  }

  startToolCall(id: string, name: string): boolean {
    if (this.closed) return false;
    const live = this.#live;
    settle(live, this.stream, false);
    const at = live.blocks.length;
    live.blocks.push({ type: "toolCall", id, name, arguments: {} });
    live.open = { at, kind: "call", raw: "", ended: false };
    return this.stream.push({ type: "toolcall_start", index: at, id, name });
  }

  appendToolArguments(delta: string): boolean {
    if (this.closed) return false;
    const open = this.#live.open;
    if (open === null || open.kind !== "call" || open.ended) {
      throw new ModelError("TURN_BUILDER_MISUSE", "no tool call is open for these arguments");
    }
    if (delta.length === 0) return true;
    open.raw += delta;
    return this.stream.push({ type: "toolcall_delta", index: open.at, delta });
  }

  endBlock(): boolean {
    if (this.closed) return false;
    const open = this.#live.open;
    if (open !== null && open.kind === "call" && classify(open.raw) === undefined) {
      open.ended = true; // what comes next decides: a cut-off turn keeps it as {}, anything else refuses it
      return true;
    }
    return settle(this.#live, this.stream, false);
  }

  setUsage(usage: Partial<Usage>): void {
    this.#live.usage = { ...this.#live.usage, ...usage };
  }

  finish(stopReason: "stop" | "toolUse" | "length"): boolean {
    if (this.closed) return false;
    settle(this.#live, this.stream, stopReason === "length");
    return this.stream.end(snapshot(this.#live, stopReason));
  }

  fail(message: string, stopReason: "error" | "aborted" = "error", failure?: TurnFailure): boolean {
    if (this.closed) return false;
    return this.stream.end(broken(this.#live, stopReason, message, failure));
  }
}

function openText(live: Live, stream: AssistantStream): boolean {
  const at = live.blocks.length;
  live.blocks.push({ type: "text", text: "" });
  live.open = { at, kind: "text" };
  return stream.push({ type: "text_start", index: at });
}

/** The arguments object of `raw`, or undefined when `raw` is not one (no text at all is `{}`). */
function classify(raw: string): Record<string, unknown> | undefined {
  if (!/\S/.test(raw)) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return undefined;
  }
  return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
}

/** Closes the open block for good; `cutOff`: the turn stopped at the output limit right after it. */
function settle(live: Live, stream: AssistantStream, cutOff: boolean): boolean {
  const open = live.open;
  if (open === null) return true;
  if (open.kind === "text") {
    live.open = null;
    return stream.push({ type: "text_end", index: open.at, text: (live.blocks[open.at] as TextContent).text });
  }
  const args = classify(open.raw);
  if (args === undefined && !cutOff) {
    throw new ModelError("TOOL_ARGUMENTS_INVALID", `the arguments of tool call #${open.at} are not a JSON object: ${open.raw}`);
  }
  const call = live.blocks[open.at] as ToolCall;
  call.arguments = args ?? {};
  live.open = null;
  return stream.push({ type: "toolcall_end", index: open.at, toolCall: JSON.parse(JSON.stringify(call)) as ToolCall });
}

function snapshot(live: Live, stopReason: StopReason): AssistantTurn {
  const content = live.blocks.map((block) => structuredClone(block));
  return { message: { role: "assistant", content, timestamp: live.stamp }, stopReason, usage: { inputTokens: live.usage.inputTokens, outputTokens: live.usage.outputTokens } };
}

function broken(live: Live, stopReason: "error" | "aborted", message: string, failure?: TurnFailure): AssistantTurn {
  const turn = snapshot(live, stopReason);
  const open = live.open;
  // The open block is the last one: a call is dropped, a text only when it has no text yet.
  if (open !== null && (open.kind === "call" || (turn.message.content[open.at] as TextContent).text === "")) turn.message.content.pop();
  turn.errorMessage = message;
  if (failure) turn.failure = { code: failure.code, message: failure.message };
  return turn;
}

export async function finalTurn(stream: AssistantStream): Promise<AssistantTurn> {
  for await (const _event of stream) {
    // events are not needed here
  }
  return stream.result();
}
