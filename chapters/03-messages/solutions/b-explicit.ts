// @ts-nocheck — a solution of Chapter 03, checked in place of packages/pi-course/src/types.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 03 · the message IR, written from the chapter text alone, step by step: fields
 * assigned one at a time, a reduce, an explicit `undefined` check.
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
  const block = {} as TextContent;
  block.type = "text";
  block.text = value;
  return block;
}

/** The text blocks' text in order, joined with nothing; tool calls add nothing; only reads the message. */
export function textOf(message: { readonly content: readonly (TextContent | ToolCall)[] }): string {
  return message.content.reduce((joined, block) => (block.type === "text" ? joined + block.text : joined), "");
}

/** A user message with one text block; the timestamp given (0 too), else Date.now() at the call. */
export function userMessage(value: string, timestamp?: number): UserMessage {
  if (timestamp === undefined) timestamp = Date.now();
  const content: TextContent[] = [];
  content.push(text(value));
  return { role: "user", content, timestamp };
}

/** The result answering `call`, built field by field in the order of its type. */
export function toolResult(call: Pick<ToolCall, "id" | "name">, outcome: ToolOutcome, timestamp?: number): ToolResultMessage {
  const result = {} as ToolResultMessage;
  result.role = "toolResult";
  result.toolCallId = call.id;
  result.toolName = call.name;
  result.content = outcome.content;
  if (outcome.details !== undefined) result.details = outcome.details;
  result.isError = outcome.isError === true;
  result.timestamp = timestamp === undefined ? Date.now() : timestamp;
  return result;
}

/** Each call with how many results answered it so far; the first problem met wins. */
export function transcriptProblem(messages: readonly AgentMessage[]): TranscriptProblem | undefined {
  const calls: { id: string; index: number; answers: number }[] = [];
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    if (message.role === "assistant") {
      for (const block of message.content) {
        if (block.type !== "toolCall") continue;
        if (calls.some((call) => call.id === block.id)) return { code: "TRANSCRIPT_DUPLICATE_CALL_ID", toolCallId: block.id, index };
        calls.push({ id: block.id, index, answers: 0 });
      }
    }
    if (message.role === "toolResult") {
      const call = calls.find((candidate) => candidate.id === message.toolCallId);
      if (call === undefined) return { code: "TRANSCRIPT_ORPHAN_RESULT", toolCallId: message.toolCallId, index };
      call.answers += 1;
      if (call.answers > 1) return { code: "TRANSCRIPT_DUPLICATE_RESULT", toolCallId: message.toolCallId, index };
    }
  }
  for (const call of calls) {
    if (call.answers === 0) return { code: "TRANSCRIPT_UNANSWERED_CALL", toolCallId: call.id, index: call.index };
  }
  return undefined;
}
