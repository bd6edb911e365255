/**
 * Chapter 05 · a second provider adapter: our message IR ⇄ the OpenAI Chat Completions API,
 * as served by OpenAI and by the servers that copy it (Ollama, llama.cpp's server, vLLM,
 * LM Studio).
 *
 * The same two translations as the Anthropic adapter, in another wire format:
 * - out: `openAIRequest` turns a `ModelRequest` into `POST <base>/chat/completions` with
 *   `stream: true` (the system prompt as the first message, tool calls as `tool_calls` of an
 *   assistant message with JSON-string arguments, each tool result as a `tool` message right
 *   after the assistant message that asked for it);
 * - in: `readOpenAIEvents` turns the streamed `chat.completion.chunk`s into `TurnBuilder`
 *   calls. Text arrives as `delta.content`; a tool call arrives as `delta.tool_calls`
 *   fragments that share an `index`, the first carrying `id` and `function.name`, all of
 *   them pieces of `function.arguments`; `finish_reason` says why the turn ended; `data:
 *   [DONE]` ends the stream; a last chunk may carry `usage` (asked for with
 *   `stream_options.include_usage`).
 * `createOpenAIModel` joins them over the transport of `provider-http.ts`, keeping the model
 * promise exactly as the Anthropic adapter does (never a throw; coded `failure`s; a call cut
 * off by finish reason `length` is a `length` turn, its arguments `{}`, not a broken response).
 *
 * Wire format: https://platform.openai.com/docs/api-reference/chat/streaming. Leniencies for
 * compatible servers, each seen in the wild: a turn with tool calls whose finish reason is
 * `stop` is a `toolUse` turn; a body that ends cleanly after a finish reason but without
 * `[DONE]` is complete; a call sent without an `id` gets one of ours, unique in the session
 * (see `fallbackCallIds`); fields this adapter does not know (`reasoning_content`,
 * `logprobs`) are skipped. Nothing else is: a chunk whose choice is not in the documented
 * shape fails the turn (see `readOpenAIEvents`), so no text is ever lost silently.
 */
import { randomBytes } from "node:crypto";
import { assertNever, isPlainObject, parseJsonObject } from "./async.js";
import { ModelError, type TurnBuilder, type AssistantStream, type Model, type ModelRequest, type StreamOptions } from "./model.js";
import { apiErrorType, describeApiError, failTurn, ProviderError, type ProviderErrorCode } from "./provider-error.js";
import { openStream, readProviderEvents, streamProviderTurn, type ProviderFacts, type ProviderModelOptions } from "./provider-http.js";
import { parseSse, type SseEvent } from "./sse.js";
import { textOf, type AgentMessage } from "./types.js";

/** Where the (optional) key comes from. */
export const OPENAI_KEY_ENV = "OPENAI_API_KEY";
/**
 * The model used when the user names none (`--model` overrides it). `gpt-oss:20b` is the
 * model of the chat-completions examples on Ollama's OpenAI-compatibility page
 * (https://docs.ollama.com/api/openai-compatibility), one that can call tools. A llama.cpp
 * server answers with the model it was started with whatever this says; vLLM, LM Studio
 * and OpenAI itself need one of the ids their `GET <base>/models` lists.
 */
export const DEFAULT_OPENAI_MODEL = "gpt-oss:20b";

export type OpenAIToolCall = { id: string; type: "function"; function: { name: string; arguments: string } };

export type OpenAIMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: OpenAIToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

export interface OpenAIRequestBody {
  model: string;
  stream: true;
  stream_options: { include_usage: true };
  messages: OpenAIMessage[];
  tools?: { type: "function"; function: { name: string; description: string; parameters: Record<string, unknown> } }[];
  max_tokens?: number;
}

export interface OpenAIModelOptions extends ProviderModelOptions {
  /** The API root, ending in `/v1` for most servers: `http://127.0.0.1:11434/v1`. */
  baseUrl: string;
  model: string;
  /** Sent as `Authorization: Bearer <key>` when given; local servers usually need none. */
  apiKey?: string;
  /** Sent as `max_tokens` when given; otherwise the server's default applies. */
  maxTokens?: number;
}

const num = (value: unknown): number | undefined => (typeof value === "number" && Number.isFinite(value) ? value : undefined);

/**
 * Our conversation as Chat Completions messages. Rules: a non-empty system prompt is the
 * first message; text blocks of a message are joined as `textOf` joins them; a user message
 * with no text, and an assistant message with neither text nor tool calls, are dropped; an
 * assistant message with tool calls and no text has `content: null`. A tool result must
 * directly follow the assistant message that asked for it (after that message's earlier
 * results), so one that comes after user text queued in between is moved before that text.
 * Tool arguments that are not a plain object cannot be sent (`TOOL_ARGUMENTS_INVALID`). A
 * message whose role is none of the union's (one that reached it around the types, through a
 * cast) is an `UnreachableError`, never sent as if it were an assistant's.
 */
export function toOpenAIMessages(systemPrompt: string, messages: readonly AgentMessage[]): OpenAIMessage[] {
  const out: OpenAIMessage[] = [];
  if (systemPrompt !== "") out.push({ role: "system", content: systemPrompt });
  // Where the next tool result goes: right after the last assistant message with tool calls and its results so far.
  let resultsAt: number | undefined;
  for (const message of messages) {
    // One case per role of the union: a role added in Chapter 03 and forgotten here fails the build at assertNever.
    switch (message.role) {
      case "toolResult": {
        const result: OpenAIMessage = { role: "tool", tool_call_id: message.toolCallId, content: textOf(message) };
        if (resultsAt === undefined) out.push(result);
        else out.splice(resultsAt++, 0, result);
        break;
      }
      case "user": {
        const content = textOf(message);
        if (content !== "") out.push({ role: "user", content });
        break;
      }
      case "assistant": {
        const calls: OpenAIToolCall[] = [];
        for (const block of message.content) {
          if (block.type !== "toolCall") continue;
          if (!isPlainObject(block.arguments)) {
            throw new ModelError("TOOL_ARGUMENTS_INVALID", `tool call "${block.id}" has arguments that are not an object`);
          }
          calls.push({ id: block.id, type: "function", function: { name: block.name, arguments: JSON.stringify(block.arguments) } });
        }
        const content = textOf(message);
        resultsAt = undefined;
        if (content === "" && calls.length === 0) break;
        out.push(calls.length > 0 ? { role: "assistant", content: content === "" ? null : content, tool_calls: calls } : { role: "assistant", content });
        if (calls.length > 0) resultsAt = out.length;
        break;
      }
      default:
        assertNever(message, "message role");
    }
  }
  return out;
}

/** The JSON body of a streaming Chat Completions request for `request`. */
export function openAIRequestBody(request: ModelRequest, options: { model: string; maxTokens?: number }): OpenAIRequestBody {
  const body: OpenAIRequestBody = {
    model: options.model,
    stream: true,
    stream_options: { include_usage: true },
    messages: toOpenAIMessages(request.systemPrompt, request.messages),
  };
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: structuredClone(tool.parameters) },
    }));
  }
  if (options.maxTokens !== undefined) body.max_tokens = options.maxTokens;
  return body;
}

/** The URL and `fetch` options of the request; `authorization` only when there is a key. */
export function openAIRequest(
  request: ModelRequest,
  options: OpenAIModelOptions,
): { url: string; init: RequestInit & { body: string; headers: Record<string, string> } } {
  const headers: Record<string, string> = { "content-type": "application/json", accept: "text/event-stream" };
  if (options.apiKey !== undefined && options.apiKey !== "") headers.authorization = `Bearer ${options.apiKey}`;
  return {
    url: `${options.baseUrl.replace(/\/+$/, "")}/chat/completions`,
    init: { method: "POST", headers, body: JSON.stringify(openAIRequestBody(request, options)) },
  };
}

/** The API's finish reasons in our stop reasons; `undefined` for one we do not know. */
export function mapFinishReason(reason: unknown): "stop" | "toolUse" | "length" | undefined {
  switch (reason) {
    case "stop":
      return "stop";
    case "tool_calls":
    case "function_call":
      return "toolUse";
    case "length":
      return "length";
    default:
      return undefined;
  }
}

/** What this adapter's error messages name. */
export function openAIFacts(model: string): ProviderFacts {
  return { provider: "OpenAI 兼容服务", model, keyEnv: OPENAI_KEY_ENV, baseUrlFrom: "--base-url" };
}

/** The coded error of an `{ error: … }` object sent inside the stream. */
function streamError(data: Record<string, unknown>, facts: ProviderFacts): ProviderError {
  const type = apiErrorType(data) ?? "";
  const code: ProviderErrorCode = /overloaded/i.test(type)
    ? "PROVIDER_OVERLOADED"
    : /rate_limit/i.test(type)
      ? "PROVIDER_RATE_LIMITED"
      : "PROVIDER_STREAM_ERROR";
  return new ProviderError(code, { ...facts, detail: `provider error: ${describeApiError(data)}` });
}

/**
 * Makes the ids of tool calls a server streams without one: `call_<tag>_<n>`, where `tag` is
 * 12 random hex digits drawn once per source and `n` counts from 1, skipping any id in
 * `taken`. A model keeps one source for its whole life, so its ids never repeat: the
 * session's transcript must not hold one call id twice (chapter 11's `buildContext` refuses
 * that, and a provider would pair results with the wrong call), and a fixed `call_<index>`
 * would repeat on every turn. The random tag keeps ids of another model or an earlier run of
 * the session apart, and `taken` rules out every id the adapter can see in use.
 */
export function fallbackCallIds(): (taken: ReadonlySet<string>) => string {
  const tag = randomBytes(6).toString("hex");
  let count = 0;
  return (taken) => {
    for (;;) {
      const id = `call_${tag}_${++count}`;
      if (!taken.has(id)) return id;
    }
  };
}

/** Where `readOpenAIEvents` gets the ids of calls sent without one. */
export interface FallbackIds {
  /** Makes an id not in `taken`; default a fresh `fallbackCallIds()` per call of `readOpenAIEvents`. */
  next?: (taken: ReadonlySet<string>) => string;
  /** Ids already in use (the request's conversation); the turn's own ids are added as they arrive. */
  taken?: Iterable<string>;
}

/** Every tool call id of `messages`: the calls' and the ids their results answer. */
function toolCallIdsOf(messages: readonly AgentMessage[]): Set<string> {
  const ids = new Set<string>();
  for (const message of messages) {
    if (message.role === "toolResult") ids.add(message.toolCallId);
    else if (message.role === "assistant") for (const block of message.content) if (block.type === "toolCall") ids.add(block.id);
  }
  return ids;
}

/** The parts of a chunk's first choice this adapter reads. */
interface ChoiceParts {
  content: string;
  toolCalls: Record<string, unknown>[];
  finishReason: string | undefined;
}

/**
 * The first choice of a chunk; `undefined` for a chunk that carries no choice on purpose;
 * a string saying how the chunk breaks the wire format. A chunk without a choice is one whose
 * `choices` is `[]` (OpenAI's usage chunk, Azure's `prompt_filter_results` chunk) or one with
 * no `choices` field and a `usage` object (the usage chunk of some compatible servers); any
 * other `choices` must be an array whose first item is an object, with `delta` an object
 * (or absent/`null`: nothing), `delta.content` a string (or absent/`null`), `delta.tool_calls`
 * an array of objects (or absent/`null`) and `finish_reason` a string (or absent/`null`).
 */
function choiceOf(data: Record<string, unknown>): ChoiceParts | undefined | string {
  const choices = data.choices;
  if (Array.isArray(choices) && choices.length === 0) return undefined;
  if (choices === undefined && isPlainObject(data.usage)) return undefined;
  if (!Array.isArray(choices)) return "a chunk whose choices is not an array";
  const choice: unknown = choices[0];
  if (!isPlainObject(choice)) return "a choice that is not an object";
  const delta = choice.delta ?? {};
  if (!isPlainObject(delta)) return "a delta that is not an object";
  const content = delta.content ?? "";
  if (typeof content !== "string") return "delta.content that is not a string";
  const toolCalls = delta.tool_calls ?? [];
  if (!Array.isArray(toolCalls) || !toolCalls.every(isPlainObject)) return "delta.tool_calls that is not an array of objects";
  const finishReason = choice.finish_reason ?? undefined;
  if (finishReason !== undefined && typeof finishReason !== "string") return "a finish_reason that is not a string";
  return { content, toolCalls, finishReason };
}

/**
 * Feeds the streamed chunks into `builder` until the turn is finished, failed or aborted.
 * Only the first choice is read, and only the chunks `choiceOf` names carry none (the usage
 * chunk); a chunk that breaks the wire format (invalid JSON, a `choices` that is not an array,
 * a first choice that is not an object, a part of it of the wrong type) fails the turn as `PROVIDER_RESPONSE_INVALID`
 * rather than being skipped with its text. Tool calls stream one after another: a fragment
 * whose `index` is new starts a call (it must name the function; a missing `id` is made by
 * `ids.next`, never one of `ids.taken` or of this turn's calls), a fragment of the open call
 * adds argument text, and a fragment of an earlier call is a protocol error. Never rejects:
 * every failure ends the turn through `builder.fail` with a `PROVIDER_*` failure, as in
 * `readAnthropicEvents`.
 */
export async function readOpenAIEvents(
  events: AsyncIterable<SseEvent>,
  builder: TurnBuilder,
  facts: ProviderFacts = openAIFacts("unknown"),
  ids: FallbackIds = {},
): Promise<void> {
  const next = ids.next ?? fallbackCallIds();
  const taken = new Set(ids.taken ?? []);
  /** The id of a call that starts: the server's, or a new one; taken from then on either way. */
  const callId = (given: unknown): string => {
    const id = typeof given === "string" && given !== "" ? given : next(taken);
    taken.add(id);
    return id;
  };
  return readProviderEvents((e, b, f) => translate(e, b, f, callId), events, builder, facts);
}

async function translate(events: AsyncIterable<SseEvent>, builder: TurnBuilder, facts: ProviderFacts, callId: (given: unknown) => string): Promise<void> {
  const stop = (code: ProviderErrorCode, detail: string) => failTurn(builder, new ProviderError(code, { ...facts, detail }));
  let finishReason: unknown;
  let openCall: number | undefined;
  const startedCalls = new Set<number>();
  const finish = () => {
    const reason = mapFinishReason(finishReason);
    if (reason === undefined) {
      stop("PROVIDER_RESPONSE_INVALID", `the model stopped for a reason this adapter does not handle: ${JSON.stringify(finishReason) ?? "none given"}`);
      return;
    }
    builder.finish(reason === "stop" && startedCalls.size > 0 ? "toolUse" : reason);
  };
  for await (const sse of events) {
    if (builder.closed) return;
    if (sse.data.trim() === "[DONE]") {
      finish();
      return;
    }
    const data = parseJsonObject(sse.data);
    if (data === undefined) {
      stop("PROVIDER_RESPONSE_INVALID", `invalid JSON in a stream chunk: ${sse.data.slice(0, 200)}`);
      return;
    }
    if (data.error !== undefined && data.error !== null) {
      failTurn(builder, streamError(data, facts));
      return;
    }
    if (isPlainObject(data.usage)) {
      const input = num(data.usage.prompt_tokens);
      const output = num(data.usage.completion_tokens);
      builder.setUsage({ ...(input !== undefined ? { inputTokens: input } : {}), ...(output !== undefined ? { outputTokens: output } : {}) });
    }
    const choice = choiceOf(data);
    if (typeof choice === "string") {
      stop("PROVIDER_RESPONSE_INVALID", `protocol error: ${choice}: ${sse.data.slice(0, 200)}`);
      return;
    }
    if (choice === undefined) continue; // the usage chunk
    if (choice.content !== "") {
      openCall = undefined;
      builder.appendText(choice.content);
    }
    for (const fragment of choice.toolCalls) {
      const index = num(fragment.index) ?? 0;
      const fn = isPlainObject(fragment.function) ? fragment.function : {};
      if (index !== openCall) {
        if (startedCalls.has(index)) {
          stop("PROVIDER_RESPONSE_INVALID", `protocol error: a fragment of tool call ${index} arrived after tool call ${String(openCall ?? "none")} began`);
          return;
        }
        if (typeof fn.name !== "string" || fn.name === "") {
          stop("PROVIDER_RESPONSE_INVALID", `protocol error: tool call ${index} began without a function name`);
          return;
        }
        builder.startToolCall(callId(fragment.id), fn.name);
        startedCalls.add(index);
        openCall = index;
      }
      if (typeof fn.arguments === "string") builder.appendToolArguments(fn.arguments);
    }
    if (choice.finishReason !== undefined) finishReason = choice.finishReason;
  }
  if (builder.closed) return;
  if (finishReason !== undefined) finish();
  else stop("PROVIDER_STREAM_ENDED", "the response ended before [DONE]");
}

/**
 * A `Model` backed by a Chat Completions server. Same promises as `createAnthropicModel`:
 * a status other than 2xx, a broken stream or an abort is a turn (`error` with a coded
 * `failure`, or `aborted`), never a throw; requests are sent once unless `options.retry`
 * allows more, and only before any event of the turn was emitted. Ids it makes for calls sent
 * without one come from one `fallbackCallIds()` for the model's life and skip every call id
 * of the request's conversation, so they are unique in the session.
 */
export function createOpenAIModel(options: OpenAIModelOptions): Model {
  const facts = openAIFacts(options.model);
  const nextCallId = fallbackCallIds();
  return {
    name: `openai-compatible:${options.model}`,
    stream(request: ModelRequest, streamOptions: StreamOptions = {}): AssistantStream {
      return streamProviderTurn({
        options,
        facts,
        streamOptions,
        request: () => {
          const { url, init } = openAIRequest(request, options);
          return { url, headers: init.headers, body: init.body, facts };
        },
        open: openStream,
        read: (opened, builder) => readOpenAIEvents(parseSse(opened.body), builder, facts, { next: nextCallId, taken: toolCallIdsOf(request.messages) }),
      });
    },
  };
}
