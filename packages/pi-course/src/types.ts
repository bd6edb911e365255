/**
 * Chapter 03 · the message IR.
 *
 * Every later chapter speaks in these shapes: the model sees `AgentMessage`s, tools
 * answer with `ToolResultMessage`s paired to a `ToolCall` by id, and a template
 * renders to a `UserMessage`. The shapes are plain JSON data on purpose, so that
 * `structuredClone` copies them and `JSON.stringify` shows everything they hold.
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

export interface UserMessage {
  role: "user";
  content: TextContent[];
  timestamp: number;
}

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

export type AgentMessage = UserMessage | AssistantMessage | ToolResultMessage;

/** Wraps a string as a text block. */
export function text(value: string): TextContent {
  return { type: "text", text: value };
}

/**
 * The text of a message: its text blocks joined with `""`, tool calls skipped.
 * Joining with nothing keeps a streamed answer that arrived in pieces identical to
 * the same answer delivered whole.
 */
export function textOf(message: { readonly content: readonly (TextContent | ToolCall)[] }): string {
  let joined = "";
  for (const block of message.content) {
    if (block.type === "text") joined += block.text;
  }
  return joined;
}

/** A user message holding one text block; `timestamp` defaults to `Date.now()`. */
export function userMessage(value: string, timestamp: number = Date.now()): UserMessage {
  return { role: "user", content: [text(value)], timestamp };
}
