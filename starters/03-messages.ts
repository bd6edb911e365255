/**
 * Chapter 03 · the message IR — the practice starter.
 *
 * The types are given: every later chapter speaks in them, so their names and fields are
 * fixed. The five functions at the bottom are the labs, each a construction site named after
 * its lab: Lab 3.1 text() → Lab 3.2 textOf() → Lab 3.3 userMessage() → Lab 3.4 toolResult()
 * → Lab 3.5 transcriptProblem(). Keep their exports and signatures (the tests and the later
 * chapters call them); add private helpers if you like.
 *
 * Run one lab:  npm run lab -w @pi/course -- 3.1
 *
 * What the functions must do is in the chapter text: the lesson (sections 3–7) explains each
 * lab, the contract appendix (§C1–§C7) states every rule a test checks.
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

/** Wraps a string as a text block, the smallest piece of a message. */
export function text(value: string): TextContent {
  // 🔨 Lab 3.1：在这里写 text()。讲解在正文第 3 节，规则在附录 §C3 和 §C1。
  void value;
  throw labError("Lab 3.1 text block");
}

// ── Lab 3.2 · textOf：文本块首尾相接，工具调用不出声 ──

/** The text of a message as one string, for the places that want a single piece of text. */
export function textOf(message: { readonly content: readonly (TextContent | ToolCall)[] }): string {
  // 🔨 Lab 3.2：在这里写 textOf()。讲解在正文第 4 节，规则在附录 §C4。
  void message;
  throw labError("Lab 3.2 textOf");
}

// ── Lab 3.3 · userMessage：时间戳 0 也是时间戳 ──

/** The message for what the user typed, with the time it was written. */
export function userMessage(value: string, timestamp?: number): UserMessage {
  // 🔨 Lab 3.3：在这里写 userMessage()，用上 Lab 3.1 的 text()。讲解在正文第 5 节，规则在附录 §C5 和 §C1。
  void value;
  void timestamp;
  throw labError("Lab 3.3 user message");
}

// ── Lab 3.4 · toolResult：结果带着它回答的调用 ──

/** The result message answering `call` with what running its tool gave. */
export function toolResult(call: Pick<ToolCall, "id" | "name">, outcome: ToolOutcome, timestamp?: number): ToolResultMessage {
  // 🔨 Lab 3.4：在这里写 toolResult()。讲解在正文第 6 节，规则在附录 §C6 和 §C1。
  void call;
  void outcome;
  void timestamp;
  throw labError("Lab 3.4 tool result");
}

// ── Lab 3.5 · 配对检查：每个调用都有且只有一个结果 ──

/** Where a conversation first breaks the pairing of tool calls and results, or `undefined` when nothing does. */
export function transcriptProblem(messages: readonly AgentMessage[]): TranscriptProblem | undefined {
  // 🔨 Lab 3.5：在这里写 transcriptProblem()。讲解在正文第 7 节，规则在附录 §C7。
  void messages;
  throw labError("Lab 3.5 transcript check");
}
