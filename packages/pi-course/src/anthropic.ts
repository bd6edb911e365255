/**
 * Chapter 05 · a provider adapter: our message IR ⇄ the Anthropic Messages API.
 *
 * Two translations, each a pure function you can test without a network:
 * - out: `anthropicRequest` turns a `ModelRequest` into the HTTP request the API expects
 *   (system prompt as a top-level field, tool results as `tool_result` blocks inside a
 *   user message, consecutive same-role messages merged, empty text dropped);
 * - in: `readAnthropicEvents` turns the API's server-sent events into `TurnBuilder` calls,
 *   so the turn and its events follow chapter 04's contract.
 * `createAnthropicModel` joins them over the transport of `provider-http.ts` and keeps the
 * model promise: whatever goes wrong (no connection, an HTTP status, an `error` event, a
 * body cut short, arguments that are not JSON) ends the turn as an error, never as a throw,
 * with the provider's own words as `errorMessage` and a coded `failure` (`PROVIDER_*`).
 * Running out of `max_tokens` is not something going wrong: the turn is `length`, also when
 * it stopped in the middle of a call's arguments (the API closes that block before it says
 * `max_tokens`; `TurnBuilder` waits for the stop reason and gives the call `{}`).
 *
 * Wire format: https://docs.anthropic.com/en/api/messages-streaming (event types
 * `message_start`, `content_block_start|delta|stop`, `message_delta`, `message_stop`,
 * `ping`, `error`). Unknown event and block types are skipped, as the API asks clients
 * to do; thinking blocks are not part of our IR and are skipped too.
 *
 * The chapter's labs write, in this order: the messages of a request (Lab 5.2:
 * `toAnthropicMessages`, `anthropicRequestBody`), the events read back into a turn (5.3:
 * `translateEvents`, `mapStopReason`), an `error` event and the retry before the answer
 * begins (5.4: `streamError`, `openAnthropicEvents`). The HTTP request (`anthropicRequest`),
 * the model that joins them (`createAnthropicModel`) and the transport are given.
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

/**
 * Our messages as Anthropic messages. Rules: user text and tool results both travel as
 * `role: "user"`, assistant messages as `role: "assistant"`; messages that map to the same
 * role in a row are merged into one, so roles alternate; in a merged user message every
 * `tool_result` block comes before every text block (the API wants the results first), each
 * kind in its own order; empty text blocks are dropped and a message left with no blocks is
 * dropped. A tool call's `input` is a copy of its arguments; arguments that are not a plain
 * object cannot be sent (`TOOL_ARGUMENTS_INVALID`). A role that is none of the three (one that
 * came around the types, through a cast) is an `UnreachableError`, never sent as a user's.
 */
export function toAnthropicMessages(messages: readonly AgentMessage[]): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  for (const message of messages) {
    const { role, content: blocks } = anthropicBlocks(message);
    if (blocks.length === 0) continue;
    const previous = out.at(-1);
    if (previous?.role === role) {
      // Tool results must open a user message: put them before the text merged earlier.
      const results = blocks.filter((b) => b.type === "tool_result");
      const others = blocks.filter((b) => b.type !== "tool_result");
      const firstNonResult = previous.content.findIndex((b) => b.type !== "tool_result");
      if (results.length > 0 && firstNonResult !== -1) previous.content.splice(firstNonResult, 0, ...results);
      else previous.content.push(...results);
      previous.content.push(...others);
    } else {
      out.push({ role, content: blocks });
    }
  }
  return out;
}

/** The text blocks of `blocks` that are not empty, as Anthropic text blocks. */
function textBlocks(blocks: readonly TextContent[]): AnthropicTextBlock[] {
  return blocks.filter((block) => block.text !== "").map((block) => ({ type: "text", text: block.text }));
}

/** One message as an Anthropic message: its role on the wire and its blocks, empty text left out. */
function anthropicBlocks(message: AgentMessage): AnthropicMessage {
  switch (message.role) {
    case "user":
      return { role: "user", content: textBlocks(message.content) };
    case "toolResult": {
      const content = textBlocks(message.content);
      return { role: "user", content: [{ type: "tool_result", tool_use_id: message.toolCallId, content, is_error: message.isError }] };
    }
    case "assistant": {
      const content: AnthropicMessage["content"] = [];
      for (const block of message.content) {
        if (block.type === "text") {
          if (block.text !== "") content.push({ type: "text", text: block.text });
        } else {
          if (!isPlainObject(block.arguments)) {
            throw new ModelError("TOOL_ARGUMENTS_INVALID", `tool call "${block.id}" has arguments that are not an object`);
          }
          content.push({ type: "tool_use", id: block.id, name: block.name, input: structuredClone(block.arguments) });
        }
      }
      return { role: "assistant", content };
    }
    default:
      return assertNever(message, "role of the message");
  }
}

/** The JSON body of a streaming Messages API request for `request`: `system` and `tools` only when there are some, `max_tokens` 4096 unless given. */
export function anthropicRequestBody(request: ModelRequest, options: { model: string; maxTokens?: number }): AnthropicRequestBody {
  const messages = toAnthropicMessages(request.messages);
  const body: AnthropicRequestBody = { model: options.model, max_tokens: options.maxTokens ?? 4096, stream: true, messages };
  if (request.systemPrompt !== "") body.system = request.systemPrompt;
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: structuredClone(tool.parameters) }));
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

/** The API's stop reasons in ours; `undefined` for one we do not know. */
export function mapStopReason(reason: unknown): "stop" | "toolUse" | "length" | undefined {
  if (reason === "end_turn" || reason === "stop_sequence") return "stop";
  if (reason === "tool_use") return "toolUse";
  return reason === "max_tokens" ? "length" : undefined;
}

/** A finite number, or `undefined` for anything else. */
function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/**
 * The events of one response as `TurnBuilder` calls. Each event's `data` is narrowed one
 * check at a time: a JSON object, then its `type`, then the fields that type needs. Blocks
 * arrive one after another: a text block and a `tool_use` block are the builder's, any other
 * block (thinking) is skipped with its deltas; a delta or a stop names the open block by the
 * API's index, which differs from ours once a skipped block came first. `message_stop`
 * finishes the turn with the stop reason `message_delta` gave. What does not follow the wire
 * format fails the turn as `PROVIDER_RESPONSE_INVALID`, an `error` event as its own kind
 * (Lab 5.4), a body that ends before `message_stop` as `PROVIDER_STREAM_ENDED`. Reading stops
 * once the turn is closed. Unknown event types and `ping` are skipped, as the API asks.
 */
async function translateEvents(events: AsyncIterable<SseEvent>, builder: TurnBuilder, facts: ProviderFacts): Promise<void> {
  const stop = (code: ProviderErrorCode, detail: string) => failTurn(builder, new ProviderError(code, { ...facts, detail }));
  const invalid = (detail: string) => stop("PROVIDER_RESPONSE_INVALID", detail);
  let stopReason: unknown;
  let open: { apiIndex: unknown; kind: "text" | "toolCall" | "skipped" } | undefined;
  for await (const sse of events) {
    if (builder.closed) return;
    const data = parseJsonObject(sse.data);
    if (data === undefined) {
      invalid(`invalid JSON in "${sse.event}" event: ${sse.data.slice(0, 200)}`);
      return;
    }
    switch (data.type) {
      case "message_start": {
        const usage = isPlainObject(data.message) && isPlainObject(data.message.usage) ? data.message.usage : {};
        builder.setUsage({ inputTokens: num(usage.input_tokens) ?? 0, outputTokens: num(usage.output_tokens) ?? 0 });
        break;
      }
      case "content_block_start": {
        const block = data.content_block;
        if (!isPlainObject(block)) {
          invalid("protocol error: content_block_start without a content_block object");
          return;
        }
        if (block.type === "text") {
          open = { apiIndex: data.index, kind: "text" };
          builder.startText();
          if (typeof block.text === "string") builder.appendText(block.text);
        } else if (block.type === "tool_use") {
          const { id, name } = block;
          if (typeof id !== "string" || typeof name !== "string") {
            invalid("protocol error: a tool_use block without a string id and name");
            return;
          }
          open = { apiIndex: data.index, kind: "toolCall" };
          builder.startToolCall(id, name);
        } else {
          open = { apiIndex: data.index, kind: "skipped" };
        }
        break;
      }
      case "content_block_delta":
      case "content_block_stop": {
        const current = open === undefined ? "no block" : `block ${String(open.apiIndex)}`;
        if (open === undefined || open.apiIndex !== data.index) {
          const what = data.type === "content_block_delta" ? "a delta" : "a stop";
          invalid(`protocol error: ${what} for block ${String(data.index)} arrived while ${current} is open`);
          return;
        }
        if (data.type === "content_block_stop") {
          if (open.kind !== "skipped") builder.endBlock();
          open = undefined;
          break;
        }
        if (open.kind === "skipped") break; // a skipped block's deltas are skipped unread
        const delta = data.delta;
        if (!isPlainObject(delta)) {
          invalid("protocol error: content_block_delta without a delta object");
          return;
        }
        if (open.kind === "text" && delta.type === "text_delta") {
          if (typeof delta.text !== "string") {
            invalid("protocol error: a text_delta whose text is not a string");
            return;
          }
          builder.appendText(delta.text);
        } else if (open.kind === "toolCall" && delta.type === "input_json_delta") {
          if (typeof delta.partial_json !== "string") {
            invalid("protocol error: an input_json_delta whose partial_json is not a string");
            return;
          }
          builder.appendToolArguments(delta.partial_json);
        }
        break;
      }
      case "message_delta": {
        const delta = data.delta;
        if (!isPlainObject(delta)) {
          invalid("protocol error: message_delta without a delta object");
          return;
        }
        if (delta.stop_reason !== undefined && delta.stop_reason !== null) stopReason = delta.stop_reason;
        const usage = isPlainObject(data.usage) ? data.usage : {};
        const input = num(usage.input_tokens);
        const output = num(usage.output_tokens);
        if (input !== undefined) builder.setUsage({ inputTokens: input });
        if (output !== undefined) builder.setUsage({ outputTokens: output });
        break;
      }
      case "message_stop": {
        const mapped = mapStopReason(stopReason);
        if (mapped !== undefined) builder.finish(mapped);
        else invalid(`the model stopped for a reason this adapter does not handle: ${JSON.stringify(stopReason) ?? "none given"}`);
        return;
      }
      case "error":
        failTurn(builder, streamError(data, facts, false));
        return;
      default:
        // `ping` and event types added after this adapter was written.
        break;
    }
  }
  stop("PROVIDER_STREAM_ENDED", "the response ended before message_stop");
}

// ── Lab 5.4 · 出错：回答开始之前的错误才重试 ──

/** Error types of an `error` event that a later attempt may get past (when no part of the answer had arrived). */
const RETRYABLE_STREAM_ERRORS: ReadonlySet<string> = new Set(["overloaded_error", "rate_limit_error", "api_error"]);

/**
 * The coded error of an `error` event: `PROVIDER_OVERLOADED`, `PROVIDER_RATE_LIMITED` or
 * `PROVIDER_STREAM_ERROR` by the error's type, its detail `provider error: <type>: <message>`.
 * Retryable only when it came `early` (before any part of the answer) and its type is one a
 * later attempt may get past.
 */
function streamError(data: Record<string, unknown>, facts: Omit<ProviderErrorFacts, "detail">, early: boolean): ProviderError {
  const type = apiErrorType(data);
  const kind = type === "overloaded_error" ? "PROVIDER_OVERLOADED" : type === "rate_limit_error" ? "PROVIDER_RATE_LIMITED" : "PROVIDER_STREAM_ERROR";
  const retryable = early && type !== undefined && RETRYABLE_STREAM_ERRORS.has(type);
  return new ProviderError(kind, { ...facts, detail: `provider error: ${describeApiError(data)}` }, { retryable });
}

/**
 * Sends the request once (attempt `attempt`) and reads its events up to the first one that is
 * part of the answer (anything but `message_start` and `ping`). An `error` event that a later
 * attempt may get past, arriving before that, rejects as retryable, having closed the
 * response; otherwise this resolves with every event of the response, the ones read ahead
 * first (`replayThenRest`).
 */
async function openAnthropicEvents(http: HttpRequest, transport: TransportOptions, attempt: number): Promise<AsyncIterable<SseEvent>> {
  const opened = await openStream(http, transport, attempt);
  const iterator = parseSse(opened.body)[Symbol.asyncIterator]();
  const ahead: SseEvent[] = [];
  try {
    for (;;) {
      const step = await iterator.next();
      if (step.done) break;
      ahead.push(step.value);
      const data = parseJsonObject(step.value.data);
      if (data?.type === "message_start" || data?.type === "ping") continue;
      if (data?.type === "error") {
        const early = streamError(data, { ...http.facts, attempts: attempt }, true);
        if (early.retryable) throw early;
      }
      break;
    }
  } catch (abandoned) {
    await iterator.return?.(undefined);
    opened.close();
    throw abandoned;
  }
  return replayThenRest(ahead, iterator);
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
