/**
 * Chapter 05 · provider errors: one error class, a closed list of stable codes, and the
 * message of each code for the person at the keyboard.
 *
 * Everything that can go wrong between the agent and a model provider becomes a
 * `ProviderError`: options that cannot work (no key, no base URL), the network (refused,
 * silent, cut off) and the provider's own answers (401, 429, overloaded). Each one has
 * - `code`: stable; callers and tests decide on it, never on wording;
 * - `message`: Chinese, for the learner: what happened and what to do about it;
 * - `detail`: the technical one-liner in the provider's or the network's own words
 *   (`HTTP 529 overloaded_error: Overloaded`), which becomes a failed turn's `errorMessage`.
 *
 * No API key ever enters any of them. Messages are built only from `ProviderErrorFacts`,
 * which hold no key; text that comes from outside (an error body, a network error) passes
 * `redact` with the key the request carried before it becomes a `detail`.
 */
import { errorMessage, isPlainObject } from "./async.js";
import type { TurnBuilder, TurnFailure } from "./model.js";

/** Every code a `ProviderError` can have; a code not listed here does not compile. */
export type ProviderErrorCode =
  | "PROVIDER_UNKNOWN"
  | "PROVIDER_OPTIONS_INVALID"
  | "PROVIDER_KEY_MISSING"
  | "PROVIDER_BASE_URL_MISSING"
  | "PROVIDER_BASE_URL_INVALID"
  | "PROVIDER_UNAUTHORIZED"
  | "PROVIDER_UNREACHABLE"
  | "PROVIDER_TIMEOUT"
  | "PROVIDER_RATE_LIMITED"
  | "PROVIDER_OVERLOADED"
  | "PROVIDER_HTTP"
  | "PROVIDER_STREAM_ENDED"
  | "PROVIDER_STREAM_ERROR"
  | "PROVIDER_RESPONSE_INVALID"
  | "PROVIDER_ABORTED";

/** What a message is built from. By construction it holds no key: nothing here is copied from a header. */
export interface ProviderErrorFacts {
  /** The provider as the user knows it: `Anthropic`, `OpenAI 兼容服务`. */
  provider: string;
  /** The technical one-liner, already redacted. */
  detail: string;
  /** Scheme, host and port of the service (never a path, query or user info). */
  origin?: string;
  model?: string;
  /** The environment variable the key comes from, e.g. `ANTHROPIC_API_KEY`. */
  keyEnv?: string;
  /** Where the user sets the base URL, e.g. `--base-url`. */
  baseUrlFrom?: string;
  status?: number;
  /** How many times the request was sent. */
  attempts?: number;
  timeoutMs?: number;
  /** A wait the server asked for that the retry policy would not honour (longer than `maxDelayMs`). */
  refusedWaitMs?: number;
  maxDelayMs?: number;
  /** For option errors: which option, the value (redacted) and what it must be. */
  option?: string;
  value?: string;
  expected?: string;
}

const seconds = (ms: number | undefined): string => `${Math.round((ms ?? 0) / 100) / 10}`;
/** A duration for a sentence: whole milliseconds below a second, else seconds. */
const duration = (ms: number | undefined): string => ((ms ?? 0) < 1000 ? `${ms ?? 0} 毫秒` : `${seconds(ms)} 秒`);
/** A name followed by Chinese text: a space after a Latin last letter (`Anthropic 拒绝`), none after a Chinese one. */
const who = (name: string): string => (/[\x21-\x7e]$/.test(name) ? `${name} ` : name);

/** ", 共尝试 N 次" and why the wait the server asked for was not honoured, when those apply. */
function retried(f: ProviderErrorFacts): string {
  let text = f.attempts !== undefined && f.attempts > 1 ? `，共尝试 ${f.attempts} 次` : "";
  if (f.refusedWaitMs !== undefined) {
    text += `；服务要求等 ${seconds(f.refusedWaitMs)} 秒再试，超过了重试上限 ${seconds(f.maxDelayMs)} 秒，所以没有再等`;
  }
  return text;
}

const MESSAGES: { readonly [C in ProviderErrorCode]: (f: ProviderErrorFacts) => string } = {
  PROVIDER_UNKNOWN: (f) => `不认识的 provider ${f.value}：可选 anthropic 或 openai-compatible；不指定 provider 时使用脚本模型。`,
  PROVIDER_OPTIONS_INVALID: (f) => `${who(f.provider)}的选项 ${f.option} 不能是 ${f.value}：${f.expected}。`,
  PROVIDER_KEY_MISSING: (f) =>
    `没有找到 ${who(f.provider)}的 API key：请先设置环境变量 ${f.keyEnv}（例如 export ${f.keyEnv}=<你的 key>）再运行；只想看看流程，就不要指定 provider，使用默认的脚本模型。`,
  PROVIDER_BASE_URL_MISSING: (f) =>
    `${who(f.provider)}需要服务地址：请用 ${f.baseUrlFrom} 指定，例如 http://127.0.0.1:11434/v1（Ollama）或 http://127.0.0.1:8080/v1（llama.cpp server）。`,
  PROVIDER_BASE_URL_INVALID: (f) => `${who(f.provider)}的服务地址 ${f.value} 不能用：${f.expected}；请检查 ${f.baseUrlFrom}。`,
  PROVIDER_UNAUTHORIZED: (f) =>
    `${who(f.provider)}拒绝了认证（${f.detail}）：请检查环境变量 ${f.keyEnv} 是否设置、是否正确、是否过期，以及它能否使用模型 ${f.model}。`,
  PROVIDER_UNREACHABLE: (f) => `连不上 ${f.origin}（${f.detail}）：服务没有运行，或者地址写错了；请确认服务已启动，并检查 ${f.baseUrlFrom}。`,
  PROVIDER_TIMEOUT: (f) =>
    `${f.origin} 超过 ${duration(f.timeoutMs)}没有传来任何数据（${f.detail}）：网络或服务卡住了；请稍后重试（本地模型第一次加载可能很慢，可以调大超时）。`,
  PROVIDER_RATE_LIMITED: (f) => `${who(f.provider)}因请求过多拒绝了这次请求（${f.detail}）${retried(f)}：请等一会儿再试，或者检查账户的速率限制。`,
  PROVIDER_OVERLOADED: (f) => `${who(f.provider)}暂时过载（${f.detail}）${retried(f)}：这是服务端的问题，请稍后重试这一轮。`,
  PROVIDER_HTTP: (f) =>
    f.status === 404
      ? `${who(f.provider)}找不到这个接口或模型（${f.detail}）：请检查模型 id ${f.model}（--model）和服务地址（OpenAI 兼容服务的地址通常以 /v1 结尾）。`
      : (f.status ?? 0) >= 500
        ? `${who(f.provider)}出了服务端错误（${f.detail}）${retried(f)}：请稍后重试这一轮。`
        : `${who(f.provider)}不接受这个请求（${f.detail}）：请检查模型 id ${f.model}（--model）和服务地址。`,
  PROVIDER_STREAM_ENDED: (f) => `${who(f.provider)}的回答没有传完就断了（${f.detail}）：已经收到的文字保留在回合里，请重试这一轮。`,
  PROVIDER_STREAM_ERROR: (f) => `${who(f.provider)}在回答途中报告了错误（${f.detail}）：请重试这一轮；反复出现时检查请求和模型 id ${f.model}。`,
  PROVIDER_RESPONSE_INVALID: (f) =>
    `${who(f.provider)}的回答无法按约定的格式读懂（${f.detail}）：请确认服务地址指向兼容的服务；只是偶尔出现时，重试这一轮即可。`,
  PROVIDER_ABORTED: (f) => `请求已取消（${f.detail}），没有等到 ${who(f.provider)}的回答；需要时重新发送即可。`,
};

export interface ProviderErrorOptions {
  cause?: unknown;
  /** Whether the same request, sent again, may succeed (the retry policy decides whether it is). */
  retryable?: boolean;
  /** The wait the server asked for (`retry-after`), in milliseconds. */
  retryAfterMs?: number;
}

/** An error with a stable `code`; messages may change, codes do not. See the module comment. */
export class ProviderError extends Error {
  readonly code: ProviderErrorCode;
  readonly detail: string;
  readonly facts: Readonly<ProviderErrorFacts>;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(code: ProviderErrorCode, facts: ProviderErrorFacts, options: ProviderErrorOptions = {}) {
    super(MESSAGES[code](facts), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ProviderError";
    this.code = code;
    this.detail = facts.detail;
    this.facts = { ...facts };
    this.retryable = options.retryable ?? false;
    this.retryAfterMs = options.retryAfterMs;
  }

  /** The HTTP status the provider answered with, when the failure was one. */
  get status(): number | undefined {
    return this.facts.status;
  }

  /** The same failure with more facts (its message rebuilt from them); code, cause and retry facts are kept. */
  with(facts: Partial<ProviderErrorFacts>): ProviderError {
    const options: ProviderErrorOptions = { retryable: this.retryable };
    if (this.cause !== undefined) options.cause = this.cause;
    if (this.retryAfterMs !== undefined) options.retryAfterMs = this.retryAfterMs;
    return new ProviderError(this.code, { ...this.facts, ...facts }, options);
  }

  /** The failure as a turn records it: plain data. */
  toFailure(): TurnFailure {
    return { code: this.code, message: this.message };
  }
}

/**
 * `text` with every occurrence of each secret replaced by `***`. Secrets shorter than four
 * characters are ignored (replacing them would shred ordinary text and protect nothing).
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join("***");
  }
  return out;
}

/**
 * The text of a provider's error object, in either wire format: `{ error: { type, message } }`
 * gives `type: message`, `{ error: "text" }` gives the text, anything else its JSON.
 */
export function describeApiError(value: unknown): string {
  if (isPlainObject(value) && typeof value.error === "string") return value.error;
  const error = isPlainObject(value) && isPlainObject(value.error) ? value.error : value;
  if (isPlainObject(error) && typeof error.message === "string") {
    return typeof error.type === "string" ? `${error.type}: ${error.message}` : error.message;
  }
  return JSON.stringify(value) ?? String(value);
}

/** The `type` (or else the `code`) of a provider's error object, when it has one. */
export function apiErrorType(value: unknown): string | undefined {
  const error = isPlainObject(value) && isPlainObject(value.error) ? value.error : value;
  if (!isPlainObject(error)) return undefined;
  if (typeof error.type === "string") return error.type;
  return typeof error.code === "string" ? error.code : undefined;
}

/**
 * Ends `builder`'s turn as an error for `error`: a `ProviderError` gives its `detail` as the
 * turn's `errorMessage` and its code and message as the turn's `failure`; anything else gives
 * its text alone. Returns what `builder.fail` returned (`false` once the turn was closed).
 */
export function failTurn(builder: TurnBuilder, error: unknown): boolean {
  if (error instanceof ProviderError) return builder.fail(error.detail, "error", error.toFailure());
  return builder.fail(errorMessage(error));
}
