// @ts-nocheck — a solution of Chapter 03, checked in place of packages/pi-course/src/types.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 03 · the message IR, written from the chapter text alone, reading the clock through
 * a `Date` object: `new Date().getTime()` is the same clock as `Date.now()`, so the default
 * timestamp is just as correct. A for…of loop joins the text; the block is spread from a literal.
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
  return { ...{ type: "text" as const }, text: value };
}

/** The text blocks' text in order, joined with nothing; tool calls add nothing; only reads the message. */
export function textOf(message: { readonly content: readonly (TextContent | ToolCall)[] }): string {
  let joined = "";
  for (const block of message.content) {
    if (block.type !== "text") continue;
    joined += block.text;
  }
  return joined;
}

/** A user message with one text block; the timestamp given (0 too), else the clock read at the call. */
export function userMessage(value: string, timestamp?: number): UserMessage {
  return { role: "user", content: [text(value)], timestamp: timestamp === undefined ? new Date().getTime() : timestamp };
}

/** The result answering `call`; the clock is read through a Date object. */
export function toolResult(call: Pick<ToolCall, "id" | "name">, outcome: ToolOutcome, timestamp?: number): ToolResultMessage {
  const at = timestamp === undefined ? new Date().getTime() : timestamp;
  const base = { role: "toolResult" as const, toolCallId: call.id, toolName: call.name, content: outcome.content };
  if (outcome.details === undefined) return { ...base, isError: outcome.isError === true, timestamp: at };
  return { ...base, details: outcome.details, isError: outcome.isError === true, timestamp: at };
}

/** Open calls kept in a list in call order; a result crosses its call off. */
export function transcriptProblem(messages: readonly AgentMessage[]): TranscriptProblem | undefined {
  const seen = new Set<string>();
  const open: { id: string; index: number }[] = [];
  for (const [index, message] of messages.entries()) {
    switch (message.role) {
      case "assistant":
        for (const block of message.content) {
          if (block.type !== "toolCall") continue;
          if (seen.has(block.id)) return { code: "TRANSCRIPT_DUPLICATE_CALL_ID", toolCallId: block.id, index };
          seen.add(block.id);
          open.push({ id: block.id, index });
        }
        break;
      case "toolResult": {
        const at = open.findIndex((call) => call.id === message.toolCallId);
        if (at !== -1) {
          open.splice(at, 1);
          break;
        }
        const code = seen.has(message.toolCallId) ? "TRANSCRIPT_DUPLICATE_RESULT" : "TRANSCRIPT_ORPHAN_RESULT";
        return { code, toolCallId: message.toolCallId, index };
      }
      default:
        break;
    }
  }
  return open.length === 0 ? undefined : { code: "TRANSCRIPT_UNANSWERED_CALL", toolCallId: open[0]!.id, index: open[0]!.index };
}
