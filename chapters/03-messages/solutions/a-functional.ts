// @ts-nocheck — a solution of Chapter 03, checked in place of packages/pi-course/src/types.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 03 · the message IR, written from the chapter text alone, in a functional style:
 * a type guard, filter/map/join, `??` for the default timestamp.
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
  const block: TextContent = { type: "text", text: value };
  return block;
}

/** True for a text block. */
const isText = (block: TextContent | ToolCall): block is TextContent => block.type === "text";

/** The text blocks' text in order, joined with nothing; tool calls add nothing; only reads the message. */
export function textOf(message: { readonly content: readonly (TextContent | ToolCall)[] }): string {
  return message.content
    .filter(isText)
    .map((block) => block.text)
    .join("");
}

/** A user message with one text block; the timestamp given (0 too), else Date.now() at the call. */
export function userMessage(value: string, timestamp?: number): UserMessage {
  const at = timestamp ?? Date.now();
  return { role: "user", content: [text(value)], timestamp: at };
}

/** The result answering `call`: its id and name, the outcome's blocks, details only when given, isError a boolean. */
export function toolResult(call: Pick<ToolCall, "id" | "name">, outcome: ToolOutcome, timestamp?: number): ToolResultMessage {
  const optional = outcome.details === undefined ? {} : { details: outcome.details };
  return {
    role: "toolResult",
    toolCallId: call.id,
    toolName: call.name,
    content: outcome.content,
    ...optional,
    isError: outcome.isError ?? false,
    timestamp: timestamp ?? Date.now(),
  };
}

/** The first break of the pairing, read in order; unanswered calls last, the earliest first. */
export function transcriptProblem(messages: readonly AgentMessage[]): TranscriptProblem | undefined {
  const calls = new Map<string, number>();
  const answered = new Set<string>();
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    if (message.role === "assistant") {
      const ids = message.content.filter((block): block is ToolCall => block.type === "toolCall").map((block) => block.id);
      const repeated = ids.find((id, i) => calls.has(id) || ids.indexOf(id) < i);
      if (repeated !== undefined) return { code: "TRANSCRIPT_DUPLICATE_CALL_ID", toolCallId: repeated, index };
      for (const id of ids) calls.set(id, index);
    } else if (message.role === "toolResult") {
      const id = message.toolCallId;
      if (!calls.has(id)) return { code: "TRANSCRIPT_ORPHAN_RESULT", toolCallId: id, index };
      if (answered.has(id)) return { code: "TRANSCRIPT_DUPLICATE_RESULT", toolCallId: id, index };
      answered.add(id);
    }
  }
  const unanswered = [...calls.entries()].find(([id]) => !answered.has(id));
  return unanswered && { code: "TRANSCRIPT_UNANSWERED_CALL", toolCallId: unanswered[0], index: unanswered[1] };
}
