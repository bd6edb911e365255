// @ts-nocheck — a solution of Chapter 03, checked in place of packages/pi-course/src/types.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 03 · the message IR, written from the chapter text alone, with the idioms of a
 * learner who likes defaults: Object.assign for the block, an index loop that pushes the
 * pieces and joins them, a default parameter for the timestamp (evaluated at each call, and
 * only for `undefined`).
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
  const block: TextContent = Object.assign({}, { type: "text" as const, text: value });
  return block;
}

/** The text blocks' text in order, joined with nothing; tool calls add nothing; only reads the message. */
export function textOf(message: { readonly content: readonly (TextContent | ToolCall)[] }): string {
  const pieces: string[] = [];
  for (let i = 0; i < message.content.length; i++) {
    const block = message.content[i]!;
    if (block.type === "toolCall") continue;
    pieces.push(block.text);
  }
  return pieces.join("");
}

/** A user message with one text block; the timestamp given (0 too), else the clock read at the call. */
export function userMessage(value: string, timestamp: number = Date.now()): UserMessage {
  return { role: "user", content: [text(value)], timestamp };
}

/** The result answering `call`, with a default parameter for the clock and a destructured outcome. */
export function toolResult(call: Pick<ToolCall, "id" | "name">, outcome: ToolOutcome, timestamp: number = Date.now()): ToolResultMessage {
  const { content, details, isError = false } = outcome;
  const result: ToolResultMessage = { role: "toolResult", toolCallId: call.id, toolName: call.name, content, details, isError, timestamp };
  if (details === undefined) delete result.details;
  return result;
}

/** Every call id mapped to "open" or "answered"; a Map iterates in insertion order. */
export function transcriptProblem(messages: readonly AgentMessage[]): TranscriptProblem | undefined {
  const calls = new Map<string, { index: number; answered: boolean }>();
  for (const [index, message] of messages.entries()) {
    if (message.role === "user") continue;
    if (message.role === "toolResult") {
      const call = calls.get(message.toolCallId);
      if (call === undefined) return { code: "TRANSCRIPT_ORPHAN_RESULT", toolCallId: message.toolCallId, index };
      if (call.answered) return { code: "TRANSCRIPT_DUPLICATE_RESULT", toolCallId: message.toolCallId, index };
      call.answered = true;
      continue;
    }
    for (const block of message.content) {
      if (block.type !== "toolCall") continue;
      if (calls.has(block.id)) return { code: "TRANSCRIPT_DUPLICATE_CALL_ID", toolCallId: block.id, index };
      calls.set(block.id, { index, answered: false });
    }
  }
  for (const [toolCallId, { index, answered }] of calls) {
    if (!answered) return { code: "TRANSCRIPT_UNANSWERED_CALL", toolCallId, index };
  }
  return undefined;
}
