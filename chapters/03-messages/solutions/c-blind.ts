// @ts-nocheck — a solution of Chapter 03, checked in place of packages/pi-course/src/types.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
// Written blind: by a learner who saw only the practice folder (the chapter text, the starter, the lab commands' output), first try green in every lab.
/**
 * Chapter 03 · the message IR — the practice starter.
 *
 * The types are given: every later chapter speaks in them, so their names and fields are
 * fixed. The three helpers at the bottom are the labs, each a construction site named after
 * its lab: Lab 3.1 text() → Lab 3.2 textOf() → Lab 3.3 userMessage(). Keep their exports and
 * signatures (the tests call them); add private helpers if you like.
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

/** The scaffold's "not built yet" error: its message names the lab that builds the code. */
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
  // 🔨 Lab 3.1：返回一个对象字面量，只有两个字段，先 type 后 text；字符串原样放进去，不 trim、不改换行
  // 🔨 Lab 3.1：每次调用都新建一个：不缓存、不冻结、不用 class
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
  // 🔨 Lab 3.2：按顺序看 content 里的每一块：type 是 "text" 的，把它的文字原样接到结果后面
  // 🔨 Lab 3.2：工具调用跳过，不留任何字符；块与块之间什么都不加；一块文字都没有时结果是 ""
  // 🔨 Lab 3.2：只读：不要改 message 和它的数组（它可能是冻结的）
  let result = "";
  for (const block of message.content) {
    if (block.type === "text") result += block.text;
  }
  return result;
}

// ── Lab 3.3 · userMessage：时间戳 0 也是时间戳 ──

/**
 * A user message holding exactly one text block `text(value)` (also for `""`), as
 * `{ role, content, timestamp }` in that order. `timestamp` defaults to `Date.now()` read at
 * the call, also when `undefined` is passed; any number given is kept as it is, `0` included.
 * Each call returns a new plain object, its own `content` array and block.
 */
export function userMessage(value: string, timestamp?: number): UserMessage {
  // 🔨 Lab 3.3：没给时间戳（或给的是 undefined）才用调用这一刻的 Date.now()；0 是一个合法的时间戳，原样保留
  // 🔨 Lab 3.3：content 恰好一个文本块，用 Lab 3.1 的 text()；字段顺序 role、content、timestamp
  return { role: "user", content: [text(value)], timestamp: timestamp ?? Date.now() };
}

// ── Lab 3.4 · toolResult：结果带着它回答的调用 ──

/** The result answering `call`. */
export function toolResult(call: Pick<ToolCall, "id" | "name">, outcome: ToolOutcome, timestamp?: number): ToolResultMessage {
  // 🔨 Lab 3.4：id 和名字抄调用的；details 没有就不写这个字段
  const result: ToolResultMessage = Object.assign(
    { role: "toolResult" as const, toolCallId: call.id, toolName: call.name, content: outcome.content },
    outcome.details !== undefined ? { details: outcome.details } : {},
    { isError: Boolean(outcome.isError), timestamp: timestamp !== undefined ? timestamp : Date.now() },
  );
  return result;
}

// ── Lab 3.5 · 配对检查：每个调用都有且只有一个结果 ──

/** The first break of the pairing, or undefined. */
export function transcriptProblem(messages: readonly AgentMessage[]): TranscriptProblem | undefined {
  // 🔨 Lab 3.5：state[id] 是 "open"（等结果）或 "done"（答过了）；用没有原型的对象，id 叫 toString 也不怕
  const state: Record<string, "open" | "done"> = Object.create(null);
  const order: { id: string; index: number }[] = [];
  let index = 0;
  for (const message of messages) {
    if (message.role === "assistant") {
      for (const block of message.content) {
        if (block.type === "text") continue;
        if (Object.hasOwn(state, block.id)) return { code: "TRANSCRIPT_DUPLICATE_CALL_ID", toolCallId: block.id, index };
        state[block.id] = "open";
        order.push({ id: block.id, index });
      }
    } else if (message.role === "toolResult") {
      const id = message.toolCallId;
      if (!Object.hasOwn(state, id)) return { code: "TRANSCRIPT_ORPHAN_RESULT", toolCallId: id, index };
      if (state[id] === "done") return { code: "TRANSCRIPT_DUPLICATE_RESULT", toolCallId: id, index };
      state[id] = "done";
    }
    index++;
  }
  const left = order.find((call) => state[call.id] === "open");
  if (left === undefined) return undefined;
  return { code: "TRANSCRIPT_UNANSWERED_CALL", toolCallId: left.id, index: left.index };
}
