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
 */
import { isPlainObject, parseJsonObject } from "./async.js";
import { ModelError, type TurnBuilder, type AssistantStream, type Model, type ModelRequest, type StopReason, type StreamOptions } from "./model.js";
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
import type { AgentMessage } from "./types.js";

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

/**
 * Our messages as Anthropic messages. Rules: user text and tool results both travel as
 * `role: "user"` (results first, as the API requires, then any text); messages that map
 * to the same role in a row are merged into one, so roles alternate; empty text blocks
 * are dropped and a message left with no blocks is dropped. A tool call whose arguments
 * are not a plain object cannot be sent (`TOOL_ARGUMENTS_INVALID`).
 */
export function toAnthropicMessages(messages: readonly AgentMessage[]): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  for (const message of messages) {
    const role = message.role === "assistant" ? "assistant" : "user";
    const blocks: AnthropicMessage["content"] = [];
    if (message.role === "toolResult") {
      blocks.push({
        type: "tool_result",
        tool_use_id: message.toolCallId,
        content: message.content.filter((block) => block.text !== "").map((block) => ({ type: "text", text: block.text })),
        is_error: message.isError,
      });
    } else {
      for (const block of message.content) {
        if (block.type === "text") {
          if (block.text !== "") blocks.push({ type: "text", text: block.text });
        } else {
          if (!isPlainObject(block.arguments)) {
            throw new ModelError("TOOL_ARGUMENTS_INVALID", `tool call "${block.id}" has arguments that are not an object`);
          }
          blocks.push({ type: "tool_use", id: block.id, name: block.name, input: structuredClone(block.arguments) });
        }
      }
    }
    if (blocks.length === 0) continue;
    const previous = out.at(-1);
    if (previous?.role === role) {
      // Tool results must open a user message: put them before text merged earlier.
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

/** The JSON body of a streaming Messages API request for `request`. */
export function anthropicRequestBody(request: ModelRequest, options: { model: string; maxTokens?: number }): AnthropicRequestBody {
  const body: AnthropicRequestBody = {
    model: options.model,
    max_tokens: options.maxTokens ?? 4096,
    stream: true,
    messages: toAnthropicMessages(request.messages),
  };
  if (request.systemPrompt !== "") body.system = request.systemPrompt;
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: structuredClone(tool.parameters) }));
  }
  return body;
}

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

const num = (value: unknown): number | undefined => (typeof value === "number" && Number.isFinite(value) ? value : undefined);

/** What this adapter's error messages name: the provider, the model, where the key and the base URL come from. */
export function anthropicFacts(model: string): ProviderFacts {
  return { provider: "Anthropic", model, keyEnv: ANTHROPIC_KEY_ENV, baseUrlFrom: ANTHROPIC_BASE_URL_ENV };
}

/** Error types of an `error` event that a later attempt may get past (when no part of the answer had arrived). */
const RETRYABLE_STREAM_ERRORS: ReadonlySet<string> = new Set(["overloaded_error", "rate_limit_error", "api_error"]);

/** The coded error of an `error` event; `early`: it came before any part of the answer. */
function streamError(data: Record<string, unknown>, facts: Omit<ProviderErrorFacts, "detail">, early: boolean): ProviderError {
  const type = apiErrorType(data);
  const code: ProviderErrorCode =
    type === "overloaded_error" ? "PROVIDER_OVERLOADED" : type === "rate_limit_error" ? "PROVIDER_RATE_LIMITED" : "PROVIDER_STREAM_ERROR";
  return new ProviderError(
    code,
    { ...facts, detail: `provider error: ${describeApiError(data)}` },
    { retryable: early && type !== undefined && RETRYABLE_STREAM_ERRORS.has(type) },
  );
}

/**
 * Feeds the API's events into `builder` until the turn is finished, failed or aborted.
 * Blocks arrive one after another; their API index is mapped to our content index (they
 * differ once a skipped block, such as thinking, came first). A delta for a block that is
 * not the open one is a protocol error. The body ending before `message_stop` is an error.
 * Never rejects: every failure ends the turn through `builder.fail`, with a `PROVIDER_*`
 * failure named after `facts` (`PROVIDER_RESPONSE_INVALID` for what does not follow the wire
 * format, `PROVIDER_STREAM_ENDED` for a body cut short, the `error` event's own kind).
 */
export async function readAnthropicEvents(
  events: AsyncIterable<SseEvent>,
  builder: TurnBuilder,
  facts: ProviderFacts = anthropicFacts("unknown"),
): Promise<void> {
  return readProviderEvents(translate, events, builder, facts);
}

async function translate(events: AsyncIterable<SseEvent>, builder: TurnBuilder, facts: ProviderFacts): Promise<void> {
  const stop = (code: ProviderErrorCode, detail: string) => failTurn(builder, new ProviderError(code, { ...facts, detail }));
  let stopReason: StopReason | undefined;
  let rawStopReason: unknown;
  let open: { apiIndex: number; kind: "text" | "toolCall" | "skipped" } | undefined;
  for await (const sse of events) {
    if (builder.closed) return;
    const data = parseJsonObject(sse.data);
    if (data === undefined) {
      stop("PROVIDER_RESPONSE_INVALID", `invalid JSON in "${sse.event}" event: ${sse.data.slice(0, 200)}`);
      return;
    }
    switch (data.type) {
      case "message_start": {
        const usage = isPlainObject(data.message) && isPlainObject(data.message.usage) ? data.message.usage : {};
        builder.setUsage({ inputTokens: num(usage.input_tokens) ?? 0, outputTokens: num(usage.output_tokens) ?? 0 });
        break;
      }
      case "content_block_start": {
        const block = isPlainObject(data.content_block) ? data.content_block : {};
        const apiIndex = num(data.index) ?? -1;
        if (block.type === "text") {
          open = { apiIndex, kind: "text" };
          builder.startText();
          if (typeof block.text === "string") builder.appendText(block.text);
        } else if (block.type === "tool_use" && typeof block.id === "string" && typeof block.name === "string") {
          open = { apiIndex, kind: "toolCall" };
          builder.startToolCall(block.id, block.name);
        } else {
          open = { apiIndex, kind: "skipped" };
        }
        break;
      }
      case "content_block_delta": {
        const delta = isPlainObject(data.delta) ? data.delta : {};
        if (open === undefined || open.apiIndex !== data.index) {
          stop(
            "PROVIDER_RESPONSE_INVALID",
            `protocol error: a delta for block ${String(data.index)} arrived while ${open ? `block ${open.apiIndex}` : "no block"} is open`,
          );
          return;
        }
        if (open.kind === "text" && delta.type === "text_delta" && typeof delta.text === "string") builder.appendText(delta.text);
        else if (open.kind === "toolCall" && delta.type === "input_json_delta" && typeof delta.partial_json === "string") {
          builder.appendToolArguments(delta.partial_json);
        }
        break;
      }
      case "content_block_stop": {
        if (open !== undefined && open.apiIndex === data.index && open.kind !== "skipped") builder.endBlock();
        open = undefined;
        break;
      }
      case "message_delta": {
        const delta = isPlainObject(data.delta) ? data.delta : {};
        if ("stop_reason" in delta && delta.stop_reason !== null) {
          rawStopReason = delta.stop_reason;
          stopReason = mapStopReason(delta.stop_reason);
        }
        const usage = isPlainObject(data.usage) ? data.usage : {};
        const output = num(usage.output_tokens);
        if (output !== undefined) builder.setUsage({ outputTokens: output });
        break;
      }
      case "message_stop": {
        if (stopReason === "stop" || stopReason === "toolUse" || stopReason === "length") builder.finish(stopReason);
        else stop("PROVIDER_RESPONSE_INVALID", `the model stopped for a reason this adapter does not handle: ${JSON.stringify(rawStopReason) ?? "none given"}`);
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

/**
 * Sends the request once and reads its events up to the first one that is part of the answer.
 * An `error` event that a later attempt may get past and that arrives before any part of the
 * answer (after `message_start`, say) rejects as retryable, having closed the response; the
 * events read ahead are replayed first by the iterable this resolves with.
 */
async function openAnthropicEvents(http: HttpRequest, transport: TransportOptions, attempt: number): Promise<AsyncIterable<SseEvent>> {
  const opened = await openStream(http, transport, attempt);
  const iterator = parseSse(opened.body)[Symbol.asyncIterator]();
  const ahead: SseEvent[] = [];
  try {
    for (;;) {
      const next = await iterator.next();
      if (next.done) break;
      ahead.push(next.value);
      const data = parseJsonObject(next.value.data);
      if (data?.type === "message_start" || data?.type === "ping") continue;
      if (data?.type === "error") {
        const early = streamError(data, { ...http.facts, attempts: attempt }, true);
        if (early.retryable) throw early;
      }
      break;
    }
  } catch (error) {
    await iterator.return?.(undefined);
    opened.close();
    throw error;
  }
  return replayThenRest(ahead, iterator);
}

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
