// @ts-nocheck — a solution of Chapter 03, checked in place of packages/pi-course/src/types.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 03 · the message IR, written from the chapter text alone, with early returns: the
 * block made through a JSON round trip (plain data by construction, lone surrogates survive
 * it), flatMap with an `in` check for the text, a `typeof` test for the given timestamp and
 * `+new Date()` for the clock.
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

/** A text block `{ type: "text", text: value }`, value as it is; a new object every call. */
export function text(value: string): TextContent {
  return JSON.parse(JSON.stringify({ type: "text", text: value })) as TextContent;
}

/** The text blocks' text in order, joined with nothing; tool calls add nothing; only reads the message. */
export function textOf(message: { readonly content: readonly (TextContent | ToolCall)[] }): string {
  if (message.content.length === 0) return "";
  return message.content.flatMap((block) => ("text" in block ? [block.text] : [])).join("");
}

/** A user message with one text block; the timestamp given (0 too), else the clock read at the call. */
export function userMessage(value: string, timestamp?: number): UserMessage {
  if (typeof timestamp === "number") return { role: "user", content: [text(value)], timestamp };
  const now = +new Date();
  return { role: "user", content: [text(value)], timestamp: now };
}

/** The result answering `call`, with early returns. */
export function toolResult(call: Pick<ToolCall, "id" | "name">, outcome: ToolOutcome, timestamp?: number): ToolResultMessage {
  const at = typeof timestamp === "number" ? timestamp : +new Date();
  const isError = outcome.isError ? true : false;
  if (outcome.details === undefined) {
    return { role: "toolResult", toolCallId: call.id, toolName: call.name, content: outcome.content, isError, timestamp: at };
  }
  return { role: "toolResult", toolCallId: call.id, toolName: call.name, content: outcome.content, details: outcome.details, isError, timestamp: at };
}

/** The problem of one message, given the calls made and the results given before it. */
function problemAt(message: AgentMessage, index: number, made: Map<string, number>, given: Set<string>): TranscriptProblem | undefined {
  if (message.role === "user") return undefined;
  if (message.role === "toolResult") {
    const id = message.toolCallId;
    if (!made.has(id)) return { code: "TRANSCRIPT_ORPHAN_RESULT", toolCallId: id, index };
    if (given.has(id)) return { code: "TRANSCRIPT_DUPLICATE_RESULT", toolCallId: id, index };
    given.add(id);
    return undefined;
  }
  for (const block of message.content) {
    if (block.type !== "toolCall") continue;
    if (made.has(block.id)) return { code: "TRANSCRIPT_DUPLICATE_CALL_ID", toolCallId: block.id, index };
    made.set(block.id, index);
  }
  return undefined;
}

/** The first break of the pairing, or undefined. */
export function transcriptProblem(messages: readonly AgentMessage[]): TranscriptProblem | undefined {
  const made = new Map<string, number>();
  const given = new Set<string>();
  for (let index = 0; index < messages.length; index++) {
    const problem = problemAt(messages[index]!, index, made, given);
    if (problem) return problem;
  }
  for (const [toolCallId, index] of made) {
    if (!given.has(toolCallId)) return { code: "TRANSCRIPT_UNANSWERED_CALL", toolCallId, index };
  }
  return undefined;
}
