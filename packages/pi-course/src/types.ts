/**
 * Chapter 03 · the message IR.
 *
 * Every later chapter speaks in these shapes: the model sees `AgentMessage`s, tools
 * answer with `ToolResultMessage`s paired to a `ToolCall` by id, and a template
 * renders to a `UserMessage`. The shapes are plain JSON data on purpose, so that
 * `structuredClone` copies them and `JSON.stringify` shows everything they hold: objects
 * whose prototype is `Object.prototype`, arrays, strings, numbers, booleans, no field whose
 * value is `undefined`, no class instance. Every helper below returns a fresh object that
 * the caller may change without touching anything else.
 *
 * A transcript holds its tool calls and results under one invariant: every call is answered
 * by exactly one result after it carrying its id, and no result answers nothing. `toolResult`
 * builds the answer to a call (the executor of chapter 06, the loop of chapter 07 and the
 * extension host of chapter 12 answer through it); `transcriptProblem` finds the first break
 * of the invariant (chapter 11's `buildContext` refuses a request with one: a provider would).
 */

/** A block of plain text inside a message. */
export interface TextContent {
  type: "text";
  text: string;
}

/** A request from the model to run one tool; `id` pairs it with its result. */
export interface ToolCall {
  type: "toolCall";
  id: string;
  name: string;
  arguments: unknown;
}

/** What the user typed, as one or more text blocks, with the time it was written (ms since the epoch). */
export interface UserMessage {
  role: "user";
  content: TextContent[];
  timestamp: number;
}

/** One answer of the model: text blocks and tool calls in the order they arrived. */
export interface AssistantMessage {
  role: "assistant";
  content: (TextContent | ToolCall)[];
  timestamp: number;
}

/** The answer to exactly one `ToolCall`: `toolCallId` and `toolName` repeat the call's. */
export interface ToolResultMessage {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: TextContent[];
  details?: unknown;
  isError: boolean;
  timestamp: number;
}

/** Every message of a conversation: what the model is sent and what a session stores. */
export type AgentMessage = UserMessage | AssistantMessage | ToolResultMessage;

/** What running a tool gave, before it is paired with its call: the shape of chapter 06's `ToolOutput`. */
export interface ToolOutcome {
  content: TextContent[];
  details?: unknown;
  isError?: boolean;
}

/** Why a transcript breaks the pairing of tool calls and results; codes are stable. */
export type TranscriptProblemCode = "TRANSCRIPT_DUPLICATE_CALL_ID" | "TRANSCRIPT_ORPHAN_RESULT" | "TRANSCRIPT_DUPLICATE_RESULT" | "TRANSCRIPT_UNANSWERED_CALL";

/** The first break of the pairing in a transcript: which id, and the index of the message it was found in. */
export interface TranscriptProblem {
  code: TranscriptProblemCode;
  toolCallId: string;
  index: number;
}

// ── Lab 3.1 · 文本块：原样包住字符串，每次一个新对象 ──

/**
 * Wraps a string as a text block: exactly `{ type: "text", text: value }`, `value` kept as it
 * is (not trimmed, not normalised), the fields in that order. Each call returns a new plain
 * object the caller may change.
 */
export function text(value: string): TextContent {
  return { type: "text", text: value };
}

// ── Lab 3.2 · textOf：文本块首尾相接，工具调用不出声 ──

/**
 * The text of a message: its text blocks in order, each as it is, joined with `""`; tool
 * calls add nothing (no character, no separator); no text block at all gives `""`. Joining
 * with nothing keeps a streamed answer that arrived in pieces identical to the same answer
 * delivered whole. The message is only read, so a frozen one works too.
 */
export function textOf(message: { readonly content: readonly (TextContent | ToolCall)[] }): string {
  let joined = "";
  for (const block of message.content) {
    if (block.type === "text") joined += block.text;
  }
  return joined;
}

// ── Lab 3.3 · userMessage：时间戳 0 也是时间戳 ──

/**
 * A user message holding exactly one text block `text(value)` (also for `""`), as
 * `{ role, content, timestamp }` in that order. `timestamp` defaults to `Date.now()` read at
 * the call, also when `undefined` is passed; any number given is kept as it is, `0` included.
 * Each call returns a new plain object, its own `content` array and block.
 */
export function userMessage(value: string, timestamp?: number): UserMessage {
  // `??`, not `||`: 0 is a time (the epoch), only `undefined` means "not given".
  return { role: "user", content: [text(value)], timestamp: timestamp ?? Date.now() };
}

// ── Lab 3.4 · toolResult：结果带着它回答的调用 ──

/**
 * The result answering `call`: `{ role, toolCallId, toolName, content, details, isError,
 * timestamp }` in that order, `toolCallId` and `toolName` the call's own `id` and `name` (and
 * nothing else of the call), `content` the outcome's blocks as they are. `details` is left out
 * when the outcome has none (`undefined`), never written as `details: undefined`; `isError` is
 * `false` unless the outcome says `true`. `timestamp` as in `userMessage`. A new message each call.
 */
export function toolResult(call: Pick<ToolCall, "id" | "name">, outcome: ToolOutcome, timestamp?: number): ToolResultMessage {
  const { content, details, isError = false } = outcome;
  const at = timestamp === undefined ? Date.now() : timestamp;
  const head = { role: "toolResult" as const, toolCallId: call.id, toolName: call.name, content };
  // Absent, not `details: undefined`: JSON drops such a field and structuredClone keeps it (§C1.1).
  return details === undefined ? { ...head, isError, timestamp: at } : { ...head, details, isError, timestamp: at };
}

// ── Lab 3.5 · 配对检查：每个调用都有且只有一个结果 ──

/**
 * The first place `messages` breaks the pairing, or `undefined` when every tool call is
 * answered by exactly one later result with its id. Read in order (messages, then an assistant
 * message's blocks): a call id seen before is `TRANSCRIPT_DUPLICATE_CALL_ID`; a result whose id
 * no earlier call has is `TRANSCRIPT_ORPHAN_RESULT`, one whose call was already answered
 * `TRANSCRIPT_DUPLICATE_RESULT`, both at the result's index. Only when all was read without
 * either: the earliest call still unanswered is `TRANSCRIPT_UNANSWERED_CALL`, at its assistant
 * message's index. User messages and results' order among themselves do not matter; the
 * messages are only read.
 */
export function transcriptProblem(messages: readonly AgentMessage[]): TranscriptProblem | undefined {
  const called = new Set<string>();
  const waiting = new Map<string, number>(); // unanswered call id → index of its assistant message, in call order
  for (const [index, entry] of messages.entries()) {
    if (entry.role === "assistant") {
      for (const part of entry.content) {
        if (part.type !== "toolCall") continue;
        if (called.has(part.id)) return { code: "TRANSCRIPT_DUPLICATE_CALL_ID", toolCallId: part.id, index };
        called.add(part.id);
        waiting.set(part.id, index);
      }
    } else if (entry.role === "toolResult") {
      const id = entry.toolCallId;
      if (waiting.delete(id)) continue;
      return { code: called.has(id) ? "TRANSCRIPT_DUPLICATE_RESULT" : "TRANSCRIPT_ORPHAN_RESULT", toolCallId: id, index };
    }
  }
  const [first] = waiting; // Map order is insertion order: the earliest call
  return first === undefined ? undefined : { code: "TRANSCRIPT_UNANSWERED_CALL", toolCallId: first[0], index: first[1] };
}
