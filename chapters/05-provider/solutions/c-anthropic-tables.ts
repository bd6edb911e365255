// @ts-nocheck — a solution of Chapter 05, checked in place of packages/pi-course/src/anthropic.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 05 · the Anthropic adapter — solution A (anthropic.ts): tables and handlers. The
 * messages are grouped by the role they travel as and each user group is put in order at the
 * end; the events are read by one handler per kind over a small reading record, stop reasons
 * and error types come from tables; the retry check reads ahead with a while loop. The given
 * part is the reference's.
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

type Block = AnthropicMessage["content"][number];

/** Our non-empty text blocks on the wire. */
const wireTexts = (blocks: readonly TextContent[]): AnthropicTextBlock[] =>
  blocks.flatMap((block): AnthropicTextBlock[] => (block.text.length > 0 ? [{ type: "text", text: block.text }] : []));

/** Groups our messages by the role they travel as, then puts each user group's results first. */
export function toAnthropicMessages(messages: readonly AgentMessage[]): AnthropicMessage[] {
  const groups: { role: "user" | "assistant"; blocks: Block[] }[] = [];
  for (const message of messages) {
    let role: "user" | "assistant";
    let blocks: Block[];
    switch (message.role) {
      case "user":
        role = "user";
        blocks = wireTexts(message.content);
        break;
      case "toolResult":
        role = "user";
        blocks = [{ type: "tool_result", tool_use_id: message.toolCallId, content: wireTexts(message.content), is_error: message.isError }];
        break;
      case "assistant":
        role = "assistant";
        blocks = message.content.flatMap((block): Block[] => {
          if (block.type === "text") return wireTexts([block]);
          if (!isPlainObject(block.arguments)) throw new ModelError("TOOL_ARGUMENTS_INVALID", `the arguments of tool call "${block.id}" are not a JSON object`);
          return [{ type: "tool_use", id: block.id, name: block.name, input: structuredClone(block.arguments) }];
        });
        break;
      default:
        assertNever(message, "message role");
    }
    if (blocks.length === 0) continue;
    const last = groups[groups.length - 1];
    if (last !== undefined && last.role === role) last.blocks = last.blocks.concat(blocks);
    else groups.push({ role, blocks });
  }
  return groups.map(({ role, blocks }) => ({
    role,
    content: role === "user" ? [...blocks.filter((b) => b.type === "tool_result"), ...blocks.filter((b) => b.type !== "tool_result")] : blocks,
  }));
}

export function anthropicRequestBody(request: ModelRequest, options: { model: string; maxTokens?: number }): AnthropicRequestBody {
  const { systemPrompt, messages, tools } = request;
  return {
    model: options.model,
    max_tokens: options.maxTokens === undefined ? 4096 : options.maxTokens,
    stream: true,
    ...(systemPrompt.length > 0 ? { system: systemPrompt } : {}),
    messages: toAnthropicMessages(messages),
    ...(tools.length > 0 ? { tools: tools.map(({ name, description, parameters }) => ({ name, description, input_schema: structuredClone(parameters) })) } : {}),
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

const STOP_REASONS: ReadonlyMap<unknown, "stop" | "toolUse" | "length"> = new Map([
  ["end_turn", "stop"],
  ["stop_sequence", "stop"],
  ["tool_use", "toolUse"],
  ["max_tokens", "length"],
] as const);

export function mapStopReason(reason: unknown): "stop" | "toolUse" | "length" | undefined {
  return STOP_REASONS.get(reason);
}

/** A count of tokens, when `value` is one. */
function tokens(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** What a handler says: go on reading, or the turn is over (finished or failed). */
type Next = "more" | "over";

interface Reading {
  builder: TurnBuilder;
  facts: ProviderFacts;
  /** The block open on the API's side: its index, and whether it is ours (`text`, `tool`) or skipped. */
  block: { index: unknown; ours: "text" | "tool" | null } | null;
  reason: unknown;
}

function invalid(reading: Reading, detail: string): Next {
  failTurn(reading.builder, new ProviderError("PROVIDER_RESPONSE_INVALID", { ...reading.facts, detail }));
  return "over";
}

function onBlockStart(reading: Reading, data: Record<string, unknown>): Next {
  const block = data.content_block;
  if (!isPlainObject(block)) return invalid(reading, "protocol error: content_block_start has no content_block object");
  switch (block.type) {
    case "text":
      reading.block = { index: data.index, ours: "text" };
      reading.builder.startText();
      if (typeof block.text === "string" && block.text !== "") reading.builder.appendText(block.text);
      return "more";
    case "tool_use":
      if (typeof block.id !== "string" || typeof block.name !== "string") return invalid(reading, "protocol error: tool_use block needs a string id and name");
      reading.block = { index: data.index, ours: "tool" };
      reading.builder.startToolCall(block.id, block.name);
      return "more";
    default:
      reading.block = { index: data.index, ours: null };
      return "more";
  }
}

function onBlockEvent(reading: Reading, data: Record<string, unknown>): Next {
  const open = reading.block;
  if (open === null || data.index !== open.index) return invalid(reading, `protocol error: ${String(data.type)} names block ${String(data.index)}, the open block is ${open === null ? "none" : String(open.index)}`);
  if (data.type === "content_block_stop") {
    if (open.ours !== null) reading.builder.endBlock();
    reading.block = null;
    return "more";
  }
  if (open.ours === null) return "more";
  const delta = data.delta;
  if (!isPlainObject(delta)) return invalid(reading, "protocol error: content_block_delta has no delta object");
  if (open.ours === "text" && delta.type === "text_delta") {
    if (typeof delta.text !== "string") return invalid(reading, "protocol error: text_delta.text is not a string");
    reading.builder.appendText(delta.text);
  }
  if (open.ours === "tool" && delta.type === "input_json_delta") {
    if (typeof delta.partial_json !== "string") return invalid(reading, "protocol error: input_json_delta.partial_json is not a string");
    reading.builder.appendToolArguments(delta.partial_json);
  }
  return "more";
}

function onEvent(reading: Reading, data: Record<string, unknown>): Next {
  const { builder } = reading;
  switch (data.type) {
    case "message_start": {
      const message = isPlainObject(data.message) ? data.message : undefined;
      const usage = message !== undefined && isPlainObject(message.usage) ? message.usage : undefined;
      builder.setUsage({ inputTokens: tokens(usage?.input_tokens) ?? 0, outputTokens: tokens(usage?.output_tokens) ?? 0 });
      return "more";
    }
    case "content_block_start":
      return onBlockStart(reading, data);
    case "content_block_delta":
    case "content_block_stop":
      return onBlockEvent(reading, data);
    case "message_delta": {
      if (!isPlainObject(data.delta)) return invalid(reading, "protocol error: message_delta has no delta object");
      if (data.delta.stop_reason != null) reading.reason = data.delta.stop_reason;
      if (isPlainObject(data.usage)) {
        const input = tokens(data.usage.input_tokens);
        const output = tokens(data.usage.output_tokens);
        if (input !== undefined) builder.setUsage({ inputTokens: input });
        if (output !== undefined) builder.setUsage({ outputTokens: output });
      }
      return "more";
    }
    case "message_stop": {
      const stop = mapStopReason(reading.reason);
      if (stop === undefined) return invalid(reading, `the model stopped for a reason this adapter does not handle: ${reading.reason === undefined ? "none given" : JSON.stringify(reading.reason)}`);
      builder.finish(stop);
      return "over";
    }
    case "error":
      failTurn(builder, streamError(data, reading.facts, false));
      return "over";
    default:
      return "more";
  }
}

async function translateEvents(events: AsyncIterable<SseEvent>, builder: TurnBuilder, facts: ProviderFacts): Promise<void> {
  const reading: Reading = { builder, facts, block: null, reason: undefined };
  for await (const event of events) {
    if (builder.closed) return;
    const data = parseJsonObject(event.data);
    if (data === undefined) {
      invalid(reading, `invalid JSON in "${event.event}" event: ${event.data.slice(0, 200)}`);
      return;
    }
    if (onEvent(reading, data) === "over") return;
  }
  failTurn(builder, new ProviderError("PROVIDER_STREAM_ENDED", { ...facts, detail: "the response ended before message_stop" }));
}

// ── Lab 5.4 · 出错：回答开始之前的错误才重试 ──

const ERROR_CODES: Readonly<Record<string, { code: ProviderErrorCode; transient: boolean }>> = {
  overloaded_error: { code: "PROVIDER_OVERLOADED", transient: true },
  rate_limit_error: { code: "PROVIDER_RATE_LIMITED", transient: true },
  api_error: { code: "PROVIDER_STREAM_ERROR", transient: true },
};

function streamError(data: Record<string, unknown>, facts: Omit<ProviderErrorFacts, "detail">, early: boolean): ProviderError {
  const type = apiErrorType(data);
  const known = type !== undefined && Object.hasOwn(ERROR_CODES, type) ? ERROR_CODES[type] : undefined;
  return new ProviderError(known?.code ?? "PROVIDER_STREAM_ERROR", { ...facts, detail: `provider error: ${describeApiError(data)}` }, { retryable: early && known?.transient === true });
}

/** Events that come before the answer itself. */
const PREAMBLE = new Set(["message_start", "ping"]);

async function openAnthropicEvents(http: HttpRequest, transport: TransportOptions, attempt: number): Promise<AsyncIterable<SseEvent>> {
  const response = await openStream(http, transport, attempt);
  const events = parseSse(response.body)[Symbol.asyncIterator]();
  const seen: SseEvent[] = [];
  let next = await events.next();
  while (!next.done) {
    seen.push(next.value);
    const data = parseJsonObject(next.value.data);
    const type = data?.type;
    if (typeof type === "string" && PREAMBLE.has(type)) {
      next = await events.next();
      continue;
    }
    if (data !== undefined && type === "error") {
      const failure = streamError(data, { ...http.facts, attempts: attempt }, true);
      if (failure.retryable) {
        await events.return?.(undefined);
        response.close();
        throw failure;
      }
    }
    break;
  }
  return replayThenRest(seen, events);
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
