/**
 * Chapter 05 · the retry policy: whether a failed provider request is sent again, and after
 * how long. It lives here and nowhere else; `DEFAULT_RETRY_POLICY` states it in full.
 *
 * The policy decides from what a failure says about itself (`ProviderError.retryable` and
 * `retryAfterMs`, set where the failure is recognised) and from how many attempts were made,
 * so it is a pure function (`decideRetry`) that tests call with numbers; `withRetries` only
 * adds the waiting, which a test replaces (`sleep`) so that no test waits for real.
 */
import { setTimeout as delay } from "node:timers/promises";
import { abortReason, errorMessage } from "./async.js";
import { ProviderError, type ProviderErrorCode } from "./provider-error.js";

export interface RetryPolicy {
  /** Retries after the first attempt: a request is sent at most `1 + maxRetries` times. */
  maxRetries: number;
  /** The backoff before retry n is `baseDelayMs · 2^(n−1)`, capped at `maxDelayMs`. */
  baseDelayMs: number;
  /** The longest wait before a retry, whether the server asked for it or the backoff chose it. */
  maxDelayMs: number;
}

/**
 * The retry policy.
 *
 * - At most 4 attempts: the first and `maxRetries` = 3 retries.
 * - Retried: HTTP 429, 500, 502, 503 and 529, and an Anthropic `overloaded_error`,
 *   `rate_limit_error` or `api_error` event that arrives before any part of the answer
 *   has (so nothing the caller saw is repeated).
 * - Never retried: 401, 403 and every other status; a refused connection or a name that
 *   does not resolve; a timeout (it already cost the whole timeout); an abort; a stream
 *   that broke off or reported an error after the answer began.
 * - The wait before a retry: the server's `retry-after-ms`, else its `retry-after` (seconds,
 *   or an HTTP date), when it sent one; a requested wait longer than `maxDelayMs` (30 s) is
 *   not shortened: the request fails at once, and the error says how long the server asked
 *   for. Without such a header: exponential backoff of `baseDelayMs` · 2^(n−1) before retry
 *   n (1 s, 2 s, 4 s), capped at `maxDelayMs`. No jitter: one user's agent sends one request
 *   at a time.
 * - Aborting the caller's signal ends a wait at once with `PROVIDER_ABORTED`.
 *
 * `createProviderModel` applies this policy (its `maxRetries` option replaces that field);
 * an adapter created on its own sends each request once unless it is given a policy.
 */
export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({ maxRetries: 3, baseDelayMs: 1000, maxDelayMs: 30_000 });

/** A single attempt, no retries: what an adapter does when it is given no policy. */
export const NO_RETRY: Readonly<RetryPolicy> = Object.freeze({ ...DEFAULT_RETRY_POLICY, maxRetries: 0 });

/** The HTTP statuses a later attempt may get past: rate limited, server errors, overloaded. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 529]);

/**
 * The wait a response asks for before the next request, in milliseconds: `retry-after-ms`
 * (a number of milliseconds), else `retry-after` as delta-seconds or as an HTTP date
 * (relative to `now`, never negative). `undefined` when neither is present or readable.
 */
export function parseRetryAfter(headers: Headers, now: number = Date.now()): number | undefined {
  const ms = headers.get("retry-after-ms")?.trim();
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms)) return Math.ceil(Number(ms));
  const value = headers.get("retry-after")?.trim();
  if (value === undefined || value === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export type RetryDecision =
  | { retry: true; delayMs: number }
  /** `refusedWaitMs`: the server asked for a wait longer than the policy allows. */
  | { retry: false; refusedWaitMs?: number };

/**
 * Whether attempt number `attempt` (1-based), which failed with `failure`, is followed by
 * another, and after how long. See `DEFAULT_RETRY_POLICY` for the rules.
 */
export function decideRetry(
  failure: { readonly retryable: boolean; readonly retryAfterMs?: number | undefined },
  attempt: number,
  policy: RetryPolicy,
): RetryDecision {
  if (!failure.retryable || attempt > policy.maxRetries) return { retry: false };
  if (failure.retryAfterMs !== undefined) {
    return failure.retryAfterMs <= policy.maxDelayMs ? { retry: true, delayMs: failure.retryAfterMs } : { retry: false, refusedWaitMs: failure.retryAfterMs };
  }
  return { retry: true, delayMs: Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1)) };
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The default `Sleep`: a timer that is cleared when the signal aborts. */
export const sleep: Sleep = (ms, signal) => delay(ms, undefined, signal ? { signal } : {});

/** What `onRetry` hears before each wait. Holds no key (the detail is redacted). */
export interface RetryInfo {
  /** The attempt that failed (1-based); the next one is `attempt + 1`. */
  attempt: number;
  delayMs: number;
  code: ProviderErrorCode;
  status?: number;
  detail: string;
}

export interface RetryOptions {
  policy?: Readonly<RetryPolicy>;
  signal?: AbortSignal | undefined;
  sleep?: Sleep;
  onRetry?(info: RetryInfo): void;
  /** Facts for the `PROVIDER_ABORTED` error of an abort during a wait. */
  provider?: string;
}

/**
 * Runs `attempt(1)`, `attempt(2)`, … until one resolves or the policy (default `NO_RETRY`)
 * says stop. Only a `ProviderError` is considered for a retry; anything else rejects at
 * once. The error that ends the run carries the number of attempts made (and a refused
 * server wait) in its facts and message. An abort during a wait rejects with
 * `PROVIDER_ABORTED` without another attempt.
 */
export async function withRetries<T>(attempt: (n: number) => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const policy = options.policy ?? NO_RETRY;
  const wait = options.sleep ?? sleep;
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      const decision = decideRetry(error, n, policy);
      if (!decision.retry) {
        const facts =
          decision.refusedWaitMs === undefined ? { attempts: n } : { attempts: n, refusedWaitMs: decision.refusedWaitMs, maxDelayMs: policy.maxDelayMs };
        throw error.with(facts);
      }
      const info: RetryInfo = { attempt: n, delayMs: decision.delayMs, code: error.code, detail: error.detail };
      if (error.status !== undefined) info.status = error.status;
      options.onRetry?.(info);
      const signal = options.signal;
      try {
        await wait(decision.delayMs, signal);
      } catch (reason) {
        if (!signal?.aborted) throw reason; // a broken sleep, not a cancelled wait
      }
      if (signal?.aborted) {
        const reason = abortReason(signal);
        throw new ProviderError(
          "PROVIDER_ABORTED",
          { provider: options.provider ?? error.facts.provider, detail: `aborted while waiting to retry: ${errorMessage(reason)}`, attempts: n },
          { cause: reason },
        );
      }
    }
  }
}
