/**
 * Chapter 05 · choosing a provider: the one function a runtime calls to get a real model.
 *
 * `createProviderModel` turns what the user asked for (a provider name, maybe a model id
 * and a base URL, the environment) into a chapter 04 `Model`, or refuses at once with a
 * coded `ProviderError` saying what to fix, before any request is made: an unknown
 * provider, a missing key, a missing or unusable base URL, a timeout or retry count that
 * cannot work. The model it returns applies `DEFAULT_RETRY_POLICY` (see
 * `provider-retry.ts`) and the transport's silence timeout; it holds the key only inside
 * the adapter's closure, so printing or inspecting the model shows none.
 */
import { ANTHROPIC_BASE_URL, ANTHROPIC_BASE_URL_ENV, ANTHROPIC_KEY_ENV, createAnthropicModel, DEFAULT_ANTHROPIC_MODEL } from "./anthropic.js";
import type { Model } from "./model.js";
import { createOpenAIModel, DEFAULT_OPENAI_MODEL, OPENAI_KEY_ENV } from "./openai.js";
import { ProviderError, redact, type ProviderErrorFacts } from "./provider-error.js";
import { DEFAULT_TIMEOUT_MS, originOf } from "./provider-http.js";
import { DEFAULT_RETRY_POLICY, type RetryInfo, type Sleep } from "./provider-retry.js";

/** The providers a user can name, in the order help texts list them. */
export const PROVIDER_NAMES = ["anthropic", "openai-compatible"] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** The most retries a caller may ask for: each one can cost a wait of up to the policy's cap. */
export const MAX_RETRIES_LIMIT = 10;

export interface ProviderModelOptions {
  /** `anthropic` or `openai-compatible`; anything else is `PROVIDER_UNKNOWN`. */
  provider: string;
  /** The model id; default `DEFAULT_ANTHROPIC_MODEL` / `DEFAULT_OPENAI_MODEL`. */
  model?: string;
  /**
   * The API root. Anthropic: default `ANTHROPIC_BASE_URL` from `env`, else
   * https://api.anthropic.com. OpenAI-compatible: required (`…/v1`).
   */
  baseUrl?: string;
  /** Where keys (and `ANTHROPIC_BASE_URL`) are read from; pass `process.env` or a copy. */
  env: Readonly<Record<string, string | undefined>>;
  /** Default the global `fetch`. */
  fetch?: typeof fetch;
  /** Longest silence of a request, in milliseconds (a positive number); default `DEFAULT_TIMEOUT_MS`. */
  timeoutMs?: number;
  /** Replaces `DEFAULT_RETRY_POLICY.maxRetries`; an integer from 0 to `MAX_RETRIES_LIMIT`. */
  maxRetries?: number;
  /** Output tokens per turn (a positive integer); Anthropic defaults to 4096, OpenAI-compatible servers to their own. */
  maxTokens?: number;
  /** Aborts every request of the model (a session's Ctrl-C), besides each turn's own signal. */
  signal?: AbortSignal;
  /** Hears about each retry before its wait (to show "重试中…"). */
  onRetry?(info: RetryInfo): void;
  /** The wait between attempts; tests pass one that returns at once. */
  sleep?: Sleep;
  /** Timestamp of each message; default `Date.now()`. */
  now?: () => number;
}

/** A provider-backed model, with what a runtime shows about it (never the key). */
export interface ProviderModel extends Model {
  readonly provider: ProviderName;
  readonly model: string;
  /** Scheme, host and port of the service. */
  readonly origin: string;
}

const LABELS: Record<ProviderName, string> = { anthropic: "Anthropic", "openai-compatible": "OpenAI 兼容服务" };

/** Every non-empty value of `env` that names a key, so that no message can echo one. */
function secretsOf(env: ProviderModelOptions["env"]): string[] {
  return [env[ANTHROPIC_KEY_ENV], env[OPENAI_KEY_ENV]].filter((value): value is string => typeof value === "string" && value.trim() !== "");
}

/** `value` shown in a message: JSON-quoted, redacted, shortened. */
function shown(value: unknown, secrets: readonly string[]): string {
  const text = redact(typeof value === "string" ? JSON.stringify(value) : String(value), secrets);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

/**
 * The base URL as the adapters use it, or a `PROVIDER_BASE_URL_INVALID` naming what is wrong:
 * it must parse as an absolute http(s) URL without user info (a key in a URL would be sent
 * and printed where a header is not) and without a query or fragment.
 */
function checkBaseUrl(value: string, facts: Omit<ProviderErrorFacts, "detail">, secrets: readonly string[]): string {
  const refuse = (expected: string) =>
    new ProviderError("PROVIDER_BASE_URL_INVALID", { ...facts, detail: `invalid base URL: ${expected}`, value: shown(value, secrets), expected });
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw refuse("它必须是完整的 http:// 或 https:// 地址");
  }
  if (url.username !== "" || url.password !== "") {
    throw new ProviderError("PROVIDER_BASE_URL_INVALID", {
      ...facts,
      detail: "invalid base URL: it holds user info",
      value: "（含用户名或密码，不予显示）",
      expected: "地址里不能带用户名或密码，key 请放在环境变量里",
    });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw refuse("它必须以 http:// 或 https:// 开头");
  if (url.search !== "" || url.hash !== "") throw refuse("它不能带 ? 查询参数或 # 片段");
  return value.replace(/\/+$/, "");
}

/**
 * The model `options` ask for. Throws `ProviderError` synchronously, before any request, for
 * an option that cannot work (`PROVIDER_UNKNOWN`, `PROVIDER_OPTIONS_INVALID`,
 * `PROVIDER_KEY_MISSING`, `PROVIDER_BASE_URL_MISSING`, `PROVIDER_BASE_URL_INVALID`); no
 * message names a key. Otherwise the model never throws (chapter 04's contract).
 */
export function createProviderModel(options: ProviderModelOptions): ProviderModel {
  const env = options.env;
  const secrets = secretsOf(env);
  if (!(PROVIDER_NAMES as readonly string[]).includes(options.provider)) {
    throw new ProviderError("PROVIDER_UNKNOWN", {
      provider: "provider",
      detail: `unknown provider ${shown(options.provider, secrets)}`,
      value: shown(options.provider, secrets),
    });
  }
  const provider = options.provider as ProviderName;
  const label = LABELS[provider];
  const invalid = (option: string, value: unknown, expected: string) =>
    new ProviderError("PROVIDER_OPTIONS_INVALID", {
      provider: label,
      detail: `invalid ${option}: ${shown(value, secrets)}`,
      option,
      value: shown(value, secrets),
      expected,
    });

  const model = options.model ?? (provider === "anthropic" ? DEFAULT_ANTHROPIC_MODEL : DEFAULT_OPENAI_MODEL);
  if (typeof model !== "string" || model.trim() === "" || /\s/.test(model))
    throw invalid("--model", model, "模型 id 是一个不含空白的非空字符串，例如 " + (provider === "anthropic" ? DEFAULT_ANTHROPIC_MODEL : DEFAULT_OPENAI_MODEL));
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw invalid("timeoutMs", timeoutMs, "超时是一个正的毫秒数");
  const maxRetries = options.maxRetries ?? DEFAULT_RETRY_POLICY.maxRetries;
  if (!Number.isInteger(maxRetries) || maxRetries < 0 || maxRetries > MAX_RETRIES_LIMIT)
    throw invalid("maxRetries", maxRetries, `重试次数是 0 到 ${MAX_RETRIES_LIMIT} 之间的整数`);
  if (options.maxTokens !== undefined && (!Number.isInteger(options.maxTokens) || options.maxTokens < 1))
    throw invalid("maxTokens", options.maxTokens, "输出 token 上限是正整数");

  const common = {
    model,
    timeoutMs,
    retry: { ...DEFAULT_RETRY_POLICY, maxRetries },
    ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onRetry ? { onRetry: options.onRetry } : {}),
    ...(options.sleep ? { sleep: options.sleep } : {}),
    ...(options.now ? { now: options.now } : {}),
  };

  if (provider === "anthropic") {
    const facts = { provider: label, model, keyEnv: ANTHROPIC_KEY_ENV, baseUrlFrom: options.baseUrl !== undefined ? "--base-url" : ANTHROPIC_BASE_URL_ENV };
    const apiKey = env[ANTHROPIC_KEY_ENV]?.trim() ?? "";
    if (apiKey === "") throw new ProviderError("PROVIDER_KEY_MISSING", { ...facts, detail: `${ANTHROPIC_KEY_ENV} is not set` });
    const fromEnv = env[ANTHROPIC_BASE_URL_ENV]?.trim();
    const baseUrl = checkBaseUrl(options.baseUrl ?? (fromEnv !== undefined && fromEnv !== "" ? fromEnv : ANTHROPIC_BASE_URL), facts, secrets);
    const inner = createAnthropicModel({ ...common, apiKey, baseUrl });
    return { name: inner.name, provider, model, origin: originOf(baseUrl), stream: (request, streamOptions) => inner.stream(request, streamOptions) };
  }

  const facts = { provider: label, model, keyEnv: OPENAI_KEY_ENV, baseUrlFrom: "--base-url" };
  if (options.baseUrl === undefined || options.baseUrl.trim() === "")
    throw new ProviderError("PROVIDER_BASE_URL_MISSING", { ...facts, detail: "no base URL given" });
  const baseUrl = checkBaseUrl(options.baseUrl.trim(), facts, secrets);
  const apiKey = env[OPENAI_KEY_ENV]?.trim() ?? "";
  const inner = createOpenAIModel({ ...common, baseUrl, ...(apiKey !== "" ? { apiKey } : {}) });
  return { name: inner.name, provider, model, origin: originOf(baseUrl), stream: (request, streamOptions) => inner.stream(request, streamOptions) };
}
