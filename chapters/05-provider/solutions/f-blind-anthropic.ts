// @ts-nocheck — a solution of Chapter 05, checked in place of packages/pi-course/src/anthropic.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 05 · the Anthropic adapter — solution F (anthropic.ts), a blind learner's: a
 * `switch` per message role that builds each message whole and merges by filtering the
 * blocks; the events read with one `switch` on `data.type` and early returns; the stop
 * reasons as a `switch`. Written from the chapter text alone, the starter's comments kept.
 *
 * (The starter's header, as the learner had it:)
 *
 * Given as they are: the wire types, the constants, `anthropicRequest` (the URL and the
 * headers, the key among them), `anthropicFacts`, `readAnthropicEvents` (it hands the events
 * to `translateEvents` and turns anything that throws into a failed turn), `replayThenRest`
 * and `createAnthropicModel`, which joins them over the transport of `provider-http.ts`.
 * The construction sites, each named after its lab: Lab 5.2 toAnthropicMessages and
 * anthropicRequestBody → 5.3 mapStopReason and translateEvents → 5.4 streamError and
 * openAnthropicEvents. Add private helpers as you need them; keep the exports and the
 * signatures of the declarations marked 🔨.
 *
 * Run one lab:  npm run lab -w @pi/course -- 5.2
 *
 * The imports are the reference's: unused ones are fine while you build.
 */
import { assertNever, isPlainObject, parseJsonObject } from "./async.js";
import { ModelError, type TurnBuilder, type AssistantStream, type Model, type ModelRequest, type StreamOptions } from "./model.js";
import { apiErrorType, describeApiError, failTurn, ProviderError, type ProviderErrorCode, type ProviderErrorFacts } from "./provider-error.js";
import {
  openStream,
  readProviderEvents,
  streamProviderTurn,
  type HttpRequest,
  type ProviderFacts,
  type ProviderModelOptions,
  type TransportOptions,
} from "./provider-http.js";
import { parseSse, type SseEvent } from "./sse.js";
import type { AgentMessage, TextContent } from "./types.js";

export const ANTHROPIC_API_VERSION = "2023-06-01";
export const ANTHROPIC_BASE_URL = "https://api.anthropic.com";
/** Where the key comes from, and the variable that overrides the base URL. */
export const ANTHROPIC_KEY_ENV = "ANTHROPIC_API_KEY";
export const ANTHROPIC_BASE_URL_ENV = "ANTHROPIC_BASE_URL";
/**
 * The model used when the user names none (`--model` overrides it). `claude-sonnet-4-5` is
 * the alias of Claude Sonnet 4.5 in Anthropic's models overview
 * (https://docs.anthropic.com/en/docs/about-claude/models/overview) and in the official
 * SDKs' list of model ids; an alias follows that model's latest snapshot, so pin one
 * (`claude-sonnet-4-5-20250929`) with `--model` when a run must be reproducible.
 */
export const DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-5";

export type AnthropicTextBlock = { type: "text"; text: string };
export type AnthropicToolUseBlock = { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };
export type AnthropicToolResultBlock = { type: "tool_result"; tool_use_id: string; content: AnthropicTextBlock[]; is_error: boolean };

export interface AnthropicMessage {
  role: "user" | "assistant";
  content: (AnthropicTextBlock | AnthropicToolUseBlock | AnthropicToolResultBlock)[];
}

export interface AnthropicRequestBody {
  model: string;
  max_tokens: number;
  stream: true;
  system?: string;
  messages: AnthropicMessage[];
  tools?: { name: string; description: string; input_schema: Record<string, unknown> }[];
}

export interface AnthropicModelOptions extends ProviderModelOptions {
  apiKey: string;
  /** The model id, e.g. `claude-sonnet-4-5`. */
  model: string;
  /** Default 4096. */
  maxTokens?: number;
  /** Default `ANTHROPIC_BASE_URL`. */
  baseUrl?: string;
}

/** 施工位的错误：消息说出哪个 Lab 来写这段代码。每个 Lab 都做完后没有代码再调用它，删掉或留着都行。 */
function labError(lab: string): Error {
  return new Error(`${lab} 尚未实现`);
}

// ── Lab 5.2 · 请求：对话写成 Anthropic 的消息 ──

/** Our text blocks as the API's, the empty ones left out; each a new object. */
function textBlocks(content: readonly TextContent[]): AnthropicTextBlock[] {
  const blocks: AnthropicTextBlock[] = [];
  for (const block of content) {
    if (block.type === "text" && block.text !== "") blocks.push({ type: "text", text: block.text });
  }
  return blocks;
}

/** One of our messages as the API's role and blocks (maybe none). */
function wireMessage(message: AgentMessage): AnthropicMessage {
  switch (message.role) {
    case "user":
      return { role: "user", content: textBlocks(message.content) };
    case "assistant": {
      const content: AnthropicMessage["content"] = [];
      for (const block of message.content) {
        if (block.type === "text") {
          if (block.text !== "") content.push({ type: "text", text: block.text });
        } else {
          const args: unknown = block.arguments;
          if (!isPlainObject(args)) {
            throw new ModelError("TOOL_ARGUMENTS_INVALID", `tool call ${JSON.stringify(block.id)}: its arguments are not a JSON object, so it cannot be sent`);
          }
          content.push({ type: "tool_use", id: block.id, name: block.name, input: structuredClone(args) });
        }
      }
      return { role: "assistant", content };
    }
    case "toolResult":
      return {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: message.toolCallId, content: textBlocks(message.content), is_error: message.isError }],
      };
    default:
      return assertNever(message, "message role");
  }
}

/** Our messages as the API's `messages`: see the chapter text, section 4. */
export function toAnthropicMessages(messages: readonly AgentMessage[]): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  for (const message of messages) {
    const next = wireMessage(message);
    if (next.content.length === 0) continue;
    const last = out.at(-1);
    if (last === undefined || last.role !== next.role) {
      out.push(next);
      continue;
    }
    if (last.role === "assistant") {
      last.content.push(...next.content);
      continue;
    }
    // Two user messages: every tool_result before every text, each kind in its own order.
    const blocks = [...last.content, ...next.content];
    last.content = [...blocks.filter((b) => b.type === "tool_result"), ...blocks.filter((b) => b.type !== "tool_result")];
  }
  return out;
}

/** The JSON body of a streaming Messages API request for `request`: `system` and `tools` only when there are some, `max_tokens` 4096 unless given. */
export function anthropicRequestBody(request: ModelRequest, options: { model: string; maxTokens?: number }): AnthropicRequestBody {
  const { systemPrompt, tools } = request;
  return {
    model: options.model,
    max_tokens: options.maxTokens ?? 4096,
    stream: true,
    ...(systemPrompt !== "" ? { system: systemPrompt } : {}),
    messages: toAnthropicMessages(request.messages),
    ...(tools.length > 0
      ? { tools: tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: structuredClone(tool.parameters) })) }
      : {}),
  };
}

// ── Given: the HTTP request, the names of the errors ──

/** The URL and `fetch` options of the request (the API key goes in `x-api-key`). */
export function anthropicRequest(
  request: ModelRequest,
  options: AnthropicModelOptions,
): { url: string; init: RequestInit & { body: string; headers: Record<string, string> } } {
  const base = (options.baseUrl ?? ANTHROPIC_BASE_URL).replace(/\/+$/, "");
  return {
    url: `${base}/v1/messages`,
    init: {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "text/event-stream",
        "x-api-key": options.apiKey,
        "anthropic-version": ANTHROPIC_API_VERSION,
      },
      body: JSON.stringify(anthropicRequestBody(request, options)),
    },
  };
}

/** What this adapter's error messages name: the provider, the model, where the key and the base URL come from. */
export function anthropicFacts(model: string): ProviderFacts {
  return { provider: "Anthropic", model, keyEnv: ANTHROPIC_KEY_ENV, baseUrlFrom: ANTHROPIC_BASE_URL_ENV };
}

/**
 * Feeds the API's events into `builder` until the turn is finished, failed or aborted (see
 * `translateEvents`). Never rejects: every failure ends the turn through `builder.fail`, with
 * a `PROVIDER_*` failure named after `facts`; what `translateEvents` throws (a `TurnBuilder`
 * error, such as arguments that are not JSON) becomes `PROVIDER_RESPONSE_INVALID`.
 */
export async function readAnthropicEvents(
  events: AsyncIterable<SseEvent>,
  builder: TurnBuilder,
  facts: ProviderFacts = anthropicFacts("unknown"),
): Promise<void> {
  return readProviderEvents(translateEvents, events, builder, facts);
}

// ── Lab 5.3 · 读回：Anthropic 的事件变成回合 ──

/** The API's stop reasons in ours; `undefined` for one we do not know. */
export function mapStopReason(reason: unknown): "stop" | "toolUse" | "length" | undefined {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
      return "stop";
    case "tool_use":
      return "toolUse";
    case "max_tokens":
      return "length";
    default:
      return undefined;
  }
}

/** A token count from the wire: a number, or `undefined` (leave the usage as it is). */
function tokens(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** The block the API has open, in its own numbering: one we build (`text`, `toolCall`) or one we skip. */
type WireBlock = { index: unknown; kind: "text" | "toolCall" | "skipped" };

/** The events of one response as `TurnBuilder` calls, until the turn is finished or failed: see the chapter text, section 5. */
async function translateEvents(events: AsyncIterable<SseEvent>, builder: TurnBuilder, facts: ProviderFacts): Promise<void> {
  const invalid = (detail: string): void => {
    failTurn(builder, new ProviderError("PROVIDER_RESPONSE_INVALID", { ...facts, detail }));
  };
  let open: WireBlock | undefined;
  let stopReason: unknown; // the API's, as `message_delta` gave it
  for await (const event of events) {
    if (builder.closed) return;
    const data = parseJsonObject(event.data);
    if (data === undefined) return invalid(`invalid JSON in ${JSON.stringify(event.event)} event: ${event.data.slice(0, 200)}`);
    switch (data.type) {
      case "message_start": {
        const usage = isPlainObject(data.message) && isPlainObject(data.message.usage) ? data.message.usage : {};
        builder.setUsage({ inputTokens: tokens(usage.input_tokens) ?? 0, outputTokens: tokens(usage.output_tokens) ?? 0 });
        break;
      }
      case "content_block_start": {
        const block = data.content_block;
        if (!isPlainObject(block)) return invalid(`protocol error: content_block of content_block_start ${JSON.stringify(data.index)} is not an object`);
        if (block.type === "text") {
          builder.startText();
          if (typeof block.text === "string" && block.text !== "") builder.appendText(block.text);
          open = { index: data.index, kind: "text" };
        } else if (block.type === "tool_use") {
          if (typeof block.id !== "string" || typeof block.name !== "string") {
            return invalid(`protocol error: tool_use block ${JSON.stringify(data.index)} needs a string id and name`);
          }
          builder.startToolCall(block.id, block.name);
          open = { index: data.index, kind: "toolCall" };
        } else {
          open = { index: data.index, kind: "skipped" }; // thinking, redacted_thinking, a type we do not know
        }
        break;
      }
      case "content_block_delta": {
        if (open === undefined || data.index !== open.index) {
          return invalid(`protocol error: content_block_delta for block ${JSON.stringify(data.index)}, but the open block is ${open === undefined ? "none" : JSON.stringify(open.index)}`);
        }
        if (open.kind === "skipped") break;
        const delta = data.delta;
        if (!isPlainObject(delta)) return invalid(`protocol error: delta of content_block_delta ${JSON.stringify(data.index)} is not an object`);
        if (open.kind === "text" && delta.type === "text_delta") {
          if (typeof delta.text !== "string") return invalid(`protocol error: text of text_delta ${JSON.stringify(data.index)} is not a string`);
          builder.appendText(delta.text);
        } else if (open.kind === "toolCall" && delta.type === "input_json_delta") {
          if (typeof delta.partial_json !== "string") {
            return invalid(`protocol error: partial_json of input_json_delta ${JSON.stringify(data.index)} is not a string`);
          }
          builder.appendToolArguments(delta.partial_json);
        } // other deltas (signature_delta, citations_delta, …) are skipped
        break;
      }
      case "content_block_stop": {
        if (open === undefined || data.index !== open.index) {
          return invalid(`protocol error: content_block_stop for block ${JSON.stringify(data.index)}, but the open block is ${open === undefined ? "none" : JSON.stringify(open.index)}`);
        }
        if (open.kind !== "skipped") builder.endBlock();
        open = undefined;
        break;
      }
      case "message_delta": {
        const delta = data.delta;
        if (!isPlainObject(delta)) return invalid("protocol error: delta of message_delta is not an object");
        if (delta.stop_reason !== null && delta.stop_reason !== undefined) stopReason = delta.stop_reason;
        if (isPlainObject(data.usage)) {
          const inputTokens = tokens(data.usage.input_tokens);
          const outputTokens = tokens(data.usage.output_tokens);
          builder.setUsage({ ...(inputTokens !== undefined ? { inputTokens } : {}), ...(outputTokens !== undefined ? { outputTokens } : {}) });
        }
        break;
      }
      case "message_stop": {
        const reason = mapStopReason(stopReason);
        if (reason === undefined) {
          return invalid(`protocol error: stop reason ${stopReason === undefined ? "none given" : JSON.stringify(stopReason)} is not one we know`);
        }
        builder.finish(reason);
        return;
      }
      case "error":
        failTurn(builder, streamError(data, facts, false));
        return;
      default:
        break; // ping, and event types added later
    }
  }
  if (!builder.closed) {
    failTurn(builder, new ProviderError("PROVIDER_STREAM_ENDED", { ...facts, detail: "the response ended before message_stop" }));
  }
}

// ── Lab 5.4 · 出错：回答开始之前的错误才重试 ──

/** The `error.type`s that may go away when the same request is sent again. */
const TRANSIENT_ERROR_TYPES: ReadonlySet<string> = new Set(["overloaded_error", "rate_limit_error", "api_error"]);

/** The coded error of an `error` event; `early`: it came before any part of the answer (chapter text, section 6). */
function streamError(data: Record<string, unknown>, facts: Omit<ProviderErrorFacts, "detail">, early: boolean): ProviderError {
  const type = apiErrorType(data);
  const code: ProviderErrorCode =
    type === "overloaded_error" ? "PROVIDER_OVERLOADED" : type === "rate_limit_error" ? "PROVIDER_RATE_LIMITED" : "PROVIDER_STREAM_ERROR";
  const retryable = early && type !== undefined && TRANSIENT_ERROR_TYPES.has(type);
  return new ProviderError(code, { ...facts, detail: `provider error: ${describeApiError(data)}` }, { retryable });
}

/** Events that hand the reader nothing: while only these have come, the answer has not begun. */
const BEFORE_THE_ANSWER: ReadonlySet<unknown> = new Set(["message_start", "ping"]);

/** Sends the request once and resolves with the response's events; see the chapter text, section 6. */
async function openAnthropicEvents(http: HttpRequest, transport: TransportOptions, attempt: number): Promise<AsyncIterable<SseEvent>> {
  const opened = await openStream(http, transport, attempt);
  const events = parseSse(opened.body)[Symbol.asyncIterator]();
  const ahead: SseEvent[] = []; // read to see whether the answer begins with an error: all of them go to the turn
  try {
    for (;;) {
      const next = await events.next();
      if (next.done) break;
      ahead.push(next.value);
      const data = parseJsonObject(next.value.data);
      if (BEFORE_THE_ANSWER.has(data?.type)) continue;
      if (data !== undefined && data.type === "error") {
        const error = streamError(data, http.facts, true);
        if (error.retryable) {
          // Nothing was handed to the reader yet: give this response up, so another one can be asked for.
          await events.return?.(undefined);
          opened.close();
          throw error;
        }
      }
      break; // the first event of the answer (or an error that will not go away): the turn reads it
    }
  } catch (error) {
    opened.close();
    throw error;
  }
  return replayThenRest(ahead, events);
}

/** The events `first`, then the rest of `rest`; stopping early stops `rest` too. */
async function* replayThenRest<T>(first: readonly T[], rest: AsyncIterator<T>): AsyncGenerator<T> {
  try {
    yield* first;
    for (;;) {
      const next = await rest.next();
      if (next.done) return;
      yield next.value;
    }
  } finally {
    await rest.return?.(undefined);
  }
}

// ── The model (given) ──

/**
 * A `Model` backed by the Messages API. `stream()` posts the request and translates the
 * response as it arrives. An HTTP status other than 2xx becomes an error turn quoting the
 * API's error (`HTTP 529 overloaded_error: Overloaded`) with a coded `failure`; aborting
 * (the turn's signal or `options.signal`) cancels the request and ends the turn as `aborted`
 * at once. Requests are sent once unless `options.retry` allows more (see
 * `provider-retry.ts`); a retry happens only before any event of the turn was emitted.
 */
export function createAnthropicModel(options: AnthropicModelOptions): Model {
  const facts = anthropicFacts(options.model);
  return {
    name: `anthropic:${options.model}`,
    stream(request: ModelRequest, streamOptions: StreamOptions = {}): AssistantStream {
      return streamProviderTurn({
        options,
        facts,
        streamOptions,
        request: () => {
          const { url, init } = anthropicRequest(request, options);
          return { url, headers: init.headers, body: init.body, facts };
        },
        open: openAnthropicEvents,
        read: (events, builder) => readAnthropicEvents(events, builder, facts),
      });
    },
  };
}
