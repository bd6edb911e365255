// @ts-nocheck — a solution of Chapter 05, checked in place of packages/pi-course/src/anthropic.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 05 · the Anthropic adapter — solution D (anthropic.ts): a learner's. Messages are
 * pushed and merged as they come, and each user message is sorted at the end (a stable sort
 * keeps each kind's order); the events are read by one if/else chain with the open block in
 * two variables; a retryable early error closes the response only through `close()`. The
 * given part is the reference's.
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

// ── Lab 5.2 · 请求：对话写成 Anthropic 的消息 ──

export function toAnthropicMessages(messages: readonly AgentMessage[]): AnthropicMessage[] {
  const result: AnthropicMessage[] = [];
  for (const message of messages) {
    const content: AnthropicMessage["content"] = [];
    let role: "user" | "assistant" = "user";
    if (message.role === "user") {
      for (const block of message.content) if (block.text) content.push({ type: "text", text: block.text });
    } else if (message.role === "toolResult") {
      const texts: AnthropicTextBlock[] = [];
      for (const block of message.content) if (block.text) texts.push({ type: "text", text: block.text });
      content.push({ type: "tool_result", tool_use_id: message.toolCallId, content: texts, is_error: message.isError });
    } else if (message.role === "assistant") {
      role = "assistant";
      for (const block of message.content) {
        if (block.type === "toolCall") {
          if (!isPlainObject(block.arguments)) {
            throw new ModelError("TOOL_ARGUMENTS_INVALID", `cannot send tool call ${block.id}: its arguments are not an object`);
          }
          content.push({ type: "tool_use", id: block.id, name: block.name, input: structuredClone(block.arguments) });
        } else if (block.text) {
          content.push({ type: "text", text: block.text });
        }
      }
    } else {
      assertNever(message, "message role");
    }
    if (content.length === 0) continue;
    if (result.length > 0 && result[result.length - 1]!.role === role) {
      result[result.length - 1]!.content.push(...content);
    } else {
      result.push({ role, content });
    }
  }
  // Results first in every user message; Array.prototype.sort is stable, so each kind keeps its order.
  for (const message of result) {
    if (message.role === "user") message.content.sort((a, b) => Number(b.type === "tool_result") - Number(a.type === "tool_result"));
  }
  return result;
}

export function anthropicRequestBody(request: ModelRequest, options: { model: string; maxTokens?: number }): AnthropicRequestBody {
  const body: AnthropicRequestBody = { model: options.model, max_tokens: 4096, stream: true, messages: [] };
  if (options.maxTokens !== undefined) body.max_tokens = options.maxTokens;
  if (request.systemPrompt) body.system = request.systemPrompt;
  body.messages = toAnthropicMessages(request.messages);
  if (request.tools.length) {
    body.tools = [];
    for (const tool of request.tools) body.tools.push({ name: tool.name, description: tool.description, input_schema: structuredClone(tool.parameters) });
  }
  return body;
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

export function mapStopReason(reason: unknown): "stop" | "toolUse" | "length" | undefined {
  if (reason === "end_turn" || reason === "stop_sequence") return "stop";
  if (reason === "tool_use") return "toolUse";
  if (reason === "max_tokens") return "length";
  return undefined;
}

async function translateEvents(events: AsyncIterable<SseEvent>, builder: TurnBuilder, facts: ProviderFacts): Promise<void> {
  const bad = (detail: string) => {
    failTurn(builder, new ProviderError("PROVIDER_RESPONSE_INVALID", { ...facts, detail }));
  };
  let reason: unknown = undefined;
  let openIndex: unknown = undefined;
  let openKind: "none" | "text" | "tool" | "other" = "none";
  for await (const event of events) {
    if (builder.closed) return;
    const data = parseJsonObject(event.data);
    if (!data) {
      bad(`invalid JSON in "${event.event}" event: ${event.data.slice(0, 200)}`);
      return;
    }
    const type = data.type;
    if (type === "message_start") {
      let input = 0;
      let output = 0;
      if (isPlainObject(data.message) && isPlainObject(data.message.usage)) {
        const usage = data.message.usage;
        if (typeof usage.input_tokens === "number" && Number.isFinite(usage.input_tokens)) input = usage.input_tokens;
        if (typeof usage.output_tokens === "number" && Number.isFinite(usage.output_tokens)) output = usage.output_tokens;
      }
      builder.setUsage({ inputTokens: input, outputTokens: output });
    } else if (type === "content_block_start") {
      const block = data.content_block;
      if (!isPlainObject(block)) return bad("protocol error: bad content_block");
      openIndex = data.index;
      if (block.type === "text") {
        openKind = "text";
        builder.startText();
        if (typeof block.text === "string") builder.appendText(block.text);
      } else if (block.type === "tool_use") {
        if (typeof block.id !== "string" || typeof block.name !== "string") return bad("protocol error: tool_use without id or name");
        openKind = "tool";
        builder.startToolCall(block.id, block.name);
      } else {
        openKind = "other";
      }
    } else if (type === "content_block_delta") {
      if (openKind === "none" || data.index !== openIndex) return bad(`protocol error: delta for block ${String(data.index)}`);
      if (openKind === "other") continue;
      const delta = data.delta;
      if (!isPlainObject(delta)) return bad("protocol error: delta is not an object");
      if (openKind === "text" && delta.type === "text_delta") {
        if (typeof delta.text !== "string") return bad("protocol error: text is not a string");
        builder.appendText(delta.text);
      } else if (openKind === "tool" && delta.type === "input_json_delta") {
        if (typeof delta.partial_json !== "string") return bad("protocol error: partial_json is not a string");
        builder.appendToolArguments(delta.partial_json);
      }
    } else if (type === "content_block_stop") {
      if (openKind === "none" || data.index !== openIndex) return bad(`protocol error: stop for block ${String(data.index)}`);
      if (openKind === "text" || openKind === "tool") builder.endBlock();
      openKind = "none";
      openIndex = undefined;
    } else if (type === "message_delta") {
      if (!isPlainObject(data.delta)) return bad("protocol error: message_delta without a delta");
      if (data.delta.stop_reason !== undefined && data.delta.stop_reason !== null) reason = data.delta.stop_reason;
      if (isPlainObject(data.usage)) {
        const { input_tokens, output_tokens } = data.usage;
        if (typeof input_tokens === "number" && Number.isFinite(input_tokens)) builder.setUsage({ inputTokens: input_tokens });
        if (typeof output_tokens === "number" && Number.isFinite(output_tokens)) builder.setUsage({ outputTokens: output_tokens });
      }
    } else if (type === "message_stop") {
      const stop = mapStopReason(reason);
      if (stop) builder.finish(stop);
      else bad(`the model stopped for a reason this adapter does not handle: ${reason === undefined ? "none given" : JSON.stringify(reason)}`);
      return;
    } else if (type === "error") {
      failTurn(builder, streamError(data, facts, false));
      return;
    }
  }
  failTurn(builder, new ProviderError("PROVIDER_STREAM_ENDED", { ...facts, detail: "the response ended before message_stop" }));
}

// ── Lab 5.4 · 出错：回答开始之前的错误才重试 ──

function streamError(data: Record<string, unknown>, facts: Omit<ProviderErrorFacts, "detail">, early: boolean): ProviderError {
  const type = apiErrorType(data);
  let code: ProviderErrorCode = "PROVIDER_STREAM_ERROR";
  if (type === "overloaded_error") code = "PROVIDER_OVERLOADED";
  if (type === "rate_limit_error") code = "PROVIDER_RATE_LIMITED";
  const transient = type === "overloaded_error" || type === "rate_limit_error" || type === "api_error";
  return new ProviderError(code, { ...facts, detail: "provider error: " + describeApiError(data) }, { retryable: early ? transient : false });
}

async function openAnthropicEvents(http: HttpRequest, transport: TransportOptions, attempt: number): Promise<AsyncIterable<SseEvent>> {
  const opened = await openStream(http, transport, attempt);
  const reader = parseSse(opened.body)[Symbol.asyncIterator]();
  const buffered: SseEvent[] = [];
  for (;;) {
    const step = await reader.next();
    if (step.done === true) break;
    buffered.push(step.value);
    const data = parseJsonObject(step.value.data);
    const kind = data === undefined ? undefined : data.type;
    if (kind === "message_start" || kind === "ping") continue;
    if (kind === "error" && data !== undefined) {
      const error = streamError(data, { ...http.facts, attempts: attempt }, true);
      if (error.retryable) {
        opened.close();
        throw error;
      }
    }
    break;
  }
  return replayThenRest(buffered, reader);
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
