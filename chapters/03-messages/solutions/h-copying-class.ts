// @ts-nocheck — a solution of Chapter 03, checked in place of packages/pi-course/src/types.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 03 · the message IR, Labs 3.4 and 3.5 written another way: toolResult puts the blocks
 * it is handed into a new array of its own (§C6.2 allows a new array; the blocks and details
 * stay the very values handed in) and reads the clock with `new Date().getTime()`; transcriptProblem is a small class
 * whose reader keeps one state per call id in a Map and finds the earliest open call at the end.
 * (Labs 3.1–3.3 as the second blind learner wrote them.)
 *
 * The types are given: every later chapter speaks in them, so their names and fields are
 * fixed. The five functions at the bottom are the labs, each a construction site named after
 * its lab: Lab 3.1 text() → Lab 3.2 textOf() → Lab 3.3 userMessage() → Lab 3.4 toolResult()
 * → Lab 3.5 transcriptProblem(). Keep their exports and signatures (the tests and the later
 * chapters call them); add private helpers if you like.
 *
 * Run one lab:  npm run lab -w @pi/course -- 3.1
 *
 * Messages are plain JSON data: objects whose prototype is `Object.prototype`, arrays,
 * strings, numbers, booleans, no field whose value is `undefined`, no class instance, so
 * that `structuredClone` and a JSON round trip lose nothing. Every helper returns a fresh
 * object that the caller may change without touching anything else.
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

/** The scaffold's "not built yet" error: its message names the lab that builds the code. 每个 Lab 都做完后没有代码再调用它，删掉或留着都行。 */
function labError(lab: string): Error {
  return new Error(`${lab} 尚未实现`);
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
  return { role: "user", content: [text(value)], timestamp: timestamp ?? Date.now() };
}

// ── Lab 3.4 · toolResult：结果带着它回答的调用 ──

/** The result answering `call`: a new array holding the blocks the tool gave, and its details as given. */
export function toolResult(call: Pick<ToolCall, "id" | "name">, outcome: ToolOutcome, timestamp?: number): ToolResultMessage {
  const content: TextContent[] = [];
  for (const block of outcome.content) content.push(block);
  const isError = outcome.isError ?? false;
  const at = typeof timestamp === "number" ? timestamp : new Date().getTime();
  if (outcome.details === undefined) {
    return { role: "toolResult", toolCallId: call.id, toolName: call.name, content, isError, timestamp: at };
  }
  const details: unknown = outcome.details;
  return { role: "toolResult", toolCallId: call.id, toolName: call.name, content, details, isError, timestamp: at };
}

// ── Lab 3.5 · 配对检查：每个调用都有且只有一个结果 ──

/** Reads a transcript message by message; each call id is "open" until answered, then "done". */
class PairingReader {
  readonly #state = new Map<string, { open: boolean; index: number }>();

  call(id: string, index: number): TranscriptProblem | undefined {
    if (this.#state.has(id)) return { code: "TRANSCRIPT_DUPLICATE_CALL_ID", toolCallId: id, index };
    this.#state.set(id, { open: true, index });
    return undefined;
  }

  result(id: string, index: number): TranscriptProblem | undefined {
    const entry = this.#state.get(id);
    if (entry === undefined) return { code: "TRANSCRIPT_ORPHAN_RESULT", toolCallId: id, index };
    if (!entry.open) return { code: "TRANSCRIPT_DUPLICATE_RESULT", toolCallId: id, index };
    entry.open = false;
    return undefined;
  }

  end(): TranscriptProblem | undefined {
    for (const [id, entry] of this.#state) {
      if (entry.open) return { code: "TRANSCRIPT_UNANSWERED_CALL", toolCallId: id, index: entry.index };
    }
    return undefined;
  }
}

/** The first break of the pairing, or undefined. */
export function transcriptProblem(messages: readonly AgentMessage[]): TranscriptProblem | undefined {
  const reader = new PairingReader();
  for (const [index, message] of messages.entries()) {
    if (message.role === "user") continue;
    if (message.role === "toolResult") {
      const problem = reader.result(message.toolCallId, index);
      if (problem) return problem;
      continue;
    }
    for (const block of message.content) {
      if (block.type !== "toolCall") continue;
      const problem = reader.call(block.id, index);
      if (problem) return problem;
    }
  }
  return reader.end();
}
