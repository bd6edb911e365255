/**
 * Chapter 05 · the provider transport: one HTTP request to a model provider, its streamed
 * body, and every way that can fail, as a coded `ProviderError`.
 *
 * `openStream` sends one request with `fetch` and resolves once the response says the
 * answer is coming (a 2xx status), with the body as an async iterable of bytes. Guarantees:
 * - The caller's signal (Ctrl-C) cancels the request, and the body, at any moment.
 * - `timeoutMs` bounds silence, not length: it runs from the request to the response
 *   headers, and again from each chunk of the body to the next, so a long answer that
 *   keeps streaming is never cut off, while a service that stops sending is.
 * - Every failure is a `ProviderError`: an abort is `PROVIDER_ABORTED`, silence
 *   `PROVIDER_TIMEOUT`, no connection `PROVIDER_UNREACHABLE`, a status `PROVIDER_UNAUTHORIZED`
 *   / `PROVIDER_RATE_LIMITED` / `PROVIDER_OVERLOADED` / `PROVIDER_HTTP` (marked retryable or
 *   not, with the server's `retry-after`), a body that breaks off `PROVIDER_STREAM_ENDED`.
 * - No timer or listener outlives the request: reading the body to its end, stopping early,
 *   `close()` and every failure release them, and the connection with them.
 * - The key the request carries (`x-api-key`, `authorization`) is redacted from every detail.
 * Whether to send the request again is not decided here: see `provider-retry.ts`.
 *
 * `streamProviderTurn` is the turn both adapters share: merge the model's signal with the
 * turn's, build the request, open it with retries, read its events into a `TurnBuilder`,
 * and end the turn with a coded failure for anything that throws.
 */
import { abortable, abortReason, errorMessage, TimeoutError } from "./async.js";
import { TurnBuilder, type AssistantStream, type StreamOptions, type TurnFailure } from "./model.js";
import { apiErrorType, describeApiError, failTurn, ProviderError, redact, type ProviderErrorCode, type ProviderErrorFacts } from "./provider-error.js";
import { parseRetryAfter, RETRYABLE_STATUSES, withRetries, type RetryInfo, type RetryPolicy, type Sleep } from "./provider-retry.js";

/** Default limit of silence, in milliseconds: generous, because a local model may first have to load. */
export const DEFAULT_TIMEOUT_MS = 120_000;

/** How much of an error response's body is read for its message. */
const ERROR_BODY_LIMIT = 16 * 1024;

/** Who a request is for, as error messages name it. */
export interface ProviderFacts {
  /** `Anthropic`, `OpenAI 兼容服务`. */
  provider: string;
  model: string;
  /** The environment variable of the key. */
  keyEnv: string;
  /** Where the user sets the base URL. */
  baseUrlFrom: string;
}

/** One POST request with a JSON body. */
export interface HttpRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  facts: ProviderFacts;
}

export interface TransportOptions {
  /** Default the global `fetch`. */
  fetch?: typeof fetch;
  signal?: AbortSignal | undefined;
  /** Longest silence, in milliseconds; default `DEFAULT_TIMEOUT_MS`. */
  timeoutMs?: number;
  /** The clock `retry-after` dates are read against; default `Date.now`. */
  now?: () => number;
}

/** A response that is streaming its answer. */
export interface OpenedStream {
  status: number;
  /** The body's bytes; reading fails only with a `ProviderError`. Stopping early releases the connection. */
  body: AsyncIterable<Uint8Array>;
  /** Releases the connection and the timer without reading further. Idempotent. */
  close(): void;
}

/**
 * A signal of one attempt: it aborts when the caller's does (with the caller's reason) or
 * when `timeoutMs` pass without `reset()` (with a `TimeoutError`); it remembers which.
 */
class Watchdog {
  readonly #controller = new AbortController();
  readonly #parent: AbortSignal | undefined;
  readonly #timeoutMs: number;
  #timer: NodeJS.Timeout | undefined;
  #timedOut = false;
  readonly #onParentAbort = () => {
    this.#stopTimer();
    this.#controller.abort(abortReason(this.#parent!));
  };

  constructor(parent: AbortSignal | undefined, timeoutMs: number) {
    this.#parent = parent;
    this.#timeoutMs = timeoutMs;
    if (parent?.aborted) {
      this.#controller.abort(abortReason(parent));
      return;
    }
    parent?.addEventListener("abort", this.#onParentAbort, { once: true });
    this.reset();
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get callerAborted(): boolean {
    return this.#parent?.aborted === true;
  }

  get timedOut(): boolean {
    return this.#timedOut;
  }

  /** Starts the silence limit again (after a chunk arrived). */
  reset(): void {
    this.#stopTimer();
    if (this.#controller.signal.aborted) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#timedOut = true;
      this.#controller.abort(new TimeoutError(this.#timeoutMs));
    }, this.#timeoutMs);
  }

  /** Clears the timer and detaches from the caller's signal. Idempotent. */
  dispose(): void {
    this.#stopTimer();
    this.#parent?.removeEventListener("abort", this.#onParentAbort);
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

/** The values of the headers that carry a key, which must never appear in a detail. */
function secretsOf(headers: Readonly<Record<string, string>>): string[] {
  const secrets: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (lower === "x-api-key") secrets.push(value);
    if (lower === "authorization") secrets.push(value, value.replace(/^Bearer\s+/i, ""));
  }
  return secrets;
}

/** A network error's text with the causes node's `fetch` hides behind "fetch failed". */
function networkDetail(error: unknown): string {
  const parts = [errorMessage(error)];
  let cause = (error as { cause?: unknown } | null)?.cause;
  for (let depth = 0; cause !== undefined && cause !== null && depth < 4; depth++) {
    const inner = cause instanceof AggregateError && cause.errors.length > 0 ? cause.errors[0] : cause;
    const text = errorMessage(inner) || String((inner as { code?: unknown }).code ?? "");
    if (text !== "" && !parts.includes(text)) parts.push(text);
    cause = (cause as { cause?: unknown }).cause;
  }
  return parts.length === 1 ? parts[0]! : `${parts[0]} (${parts.slice(1).join(": ")})`;
}

/** Up to `limit` bytes of a body as text; what arrived before a read failed is lost with it. */
async function readText(body: ReadableStream<Uint8Array> | null, watchdog: Watchdog, limit: number): Promise<string> {
  if (body === null) return "";
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let bytes = 0;
  try {
    while (bytes < limit) {
      const next = await abortable(reader.read(), watchdog.signal);
      if (next.done) break;
      bytes += next.value.byteLength;
      text += decoder.decode(next.value, { stream: true });
      watchdog.reset();
    }
    return text + decoder.decode();
  } finally {
    reader.cancel().catch(() => {}); // releases the connection; a body already finished ignores it
  }
}

/**
 * Sends `request` once and resolves when its answer starts streaming; see the module comment
 * for the guarantees. `attempt` (1-based) is recorded in the errors' facts.
 */
export async function openStream(request: HttpRequest, options: TransportOptions = {}, attempt = 1): Promise<OpenedStream> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const doFetch = options.fetch ?? fetch;
  const secrets = secretsOf(request.headers);
  const base: Omit<ProviderErrorFacts, "detail"> = { ...request.facts, origin: originOf(request.url), attempts: attempt };
  const error = (
    code: ProviderErrorCode,
    detail: string,
    extra: Partial<ProviderErrorFacts> = {},
    more: { cause?: unknown; retryable?: boolean; retryAfterMs?: number } = {},
  ) => new ProviderError(code, { ...base, ...extra, detail: redact(detail, secrets) }, more);
  const watchdog = new Watchdog(options.signal, timeoutMs);
  /** The error of an abort or of the silence limit, if that is what stopped `cause`. */
  const interruption = (cause: unknown, phase: string): ProviderError | undefined => {
    if (watchdog.callerAborted) return error("PROVIDER_ABORTED", `aborted ${phase}: ${errorMessage(abortReason(options.signal!))}`, {}, { cause });
    if (watchdog.timedOut) return error("PROVIDER_TIMEOUT", `no data for ${timeoutMs} ms ${phase}`, { timeoutMs }, { cause });
    return undefined;
  };

  let response: Response;
  try {
    response = await abortable(
      doFetch(request.url, { method: "POST", headers: request.headers, body: request.body, signal: watchdog.signal }),
      watchdog.signal,
    );
  } catch (cause) {
    watchdog.dispose();
    throw interruption(cause, "before the response began") ?? error("PROVIDER_UNREACHABLE", networkDetail(cause), {}, { cause });
  }

  if (!response.ok) {
    let text = "";
    try {
      text = await readText(response.body, watchdog, ERROR_BODY_LIMIT);
    } catch (cause) {
      const stop = interruption(cause, "while reading an error response");
      if (stop !== undefined) {
        watchdog.dispose();
        throw stop;
      }
      // The error body broke off: the status alone still says what happened.
    }
    watchdog.dispose();
    throw statusError(response, text, options.now ?? Date.now, error);
  }

  const contentType = response.headers.get("content-type");
  if (response.body === null || (contentType !== null && !/text\/event-stream/i.test(contentType))) {
    const text = await readText(response.body, watchdog, 500).catch(() => "");
    watchdog.dispose();
    throw error(
      "PROVIDER_RESPONSE_INVALID",
      response.body === null ? "the response has no body" : `expected a text/event-stream response, got ${contentType}: ${text.trim().slice(0, 200)}`,
    );
  }

  watchdog.reset();
  const reader = response.body.getReader();
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    watchdog.dispose();
    reader.cancel().catch(() => {});
  };
  async function* chunks(): AsyncGenerator<Uint8Array> {
    try {
      while (!closed) {
        let next: Awaited<ReturnType<typeof reader.read>>;
        try {
          next = await abortable(reader.read(), watchdog.signal);
        } catch (cause) {
          throw (
            interruption(cause, "while the answer was streaming") ??
            error("PROVIDER_STREAM_ENDED", `the response broke off: ${networkDetail(cause)}`, {}, { cause })
          );
        }
        if (next.done) return;
        watchdog.reset();
        yield next.value;
      }
    } finally {
      close();
    }
  }
  return { status: response.status, body: chunks(), close };
}

/** The coded error of a status that is not 2xx. */
function statusError(
  response: Response,
  text: string,
  now: () => number,
  error: (code: ProviderErrorCode, detail: string, extra?: Partial<ProviderErrorFacts>, more?: { retryable?: boolean; retryAfterMs?: number }) => ProviderError,
): ProviderError {
  const status = response.status;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const described = json !== undefined ? describeApiError(json) : text.trim().slice(0, 500);
  const detail = described === "" ? `HTTP ${status}` : `HTTP ${status} ${described}`;
  const type = apiErrorType(json);
  const code: ProviderErrorCode =
    status === 401 || status === 403
      ? "PROVIDER_UNAUTHORIZED"
      : status === 429 || type === "rate_limit_error"
        ? "PROVIDER_RATE_LIMITED"
        : status === 529 || status === 503 || type === "overloaded_error"
          ? "PROVIDER_OVERLOADED"
          : "PROVIDER_HTTP";
  const more: { retryable: boolean; retryAfterMs?: number } = { retryable: RETRYABLE_STATUSES.has(status) || type === "overloaded_error" };
  const retryAfterMs = parseRetryAfter(response.headers, now());
  if (retryAfterMs !== undefined) more.retryAfterMs = retryAfterMs;
  return error(code, detail, { status }, more);
}

/** Scheme, host and port of `url` (never its user info, path or query); the input itself if it is no URL. */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "(invalid URL)";
  }
}

/**
 * One signal that aborts when either `a` or `b` does, with that one's reason; `dispose()`
 * detaches it from both. With only one signal given, that signal itself.
 */
export function mergeSignals(a: AbortSignal | undefined, b: AbortSignal | undefined): { signal: AbortSignal | undefined; dispose(): void } {
  if (a === undefined || b === undefined) return { signal: a ?? b, dispose: () => {} };
  const controller = new AbortController();
  const dispose = () => {
    a.removeEventListener("abort", onA);
    b.removeEventListener("abort", onB);
  };
  const onA = () => {
    dispose();
    controller.abort(abortReason(a));
  };
  const onB = () => {
    dispose();
    controller.abort(abortReason(b));
  };
  if (a.aborted) controller.abort(abortReason(a));
  else if (b.aborted) controller.abort(abortReason(b));
  else {
    a.addEventListener("abort", onA, { once: true });
    b.addEventListener("abort", onB, { once: true });
  }
  return { signal: controller.signal, dispose };
}

/** The options every HTTP provider's model takes besides its own: how requests travel, how long silence may last, how they are retried. */
export interface ProviderModelOptions {
  /** Default the global `fetch`; tests pass one that replays a recorded response. */
  fetch?: typeof fetch;
  /** Timestamp of each message; default `Date.now()`. */
  now?: () => number;
  /** Aborts every request of this model (a session's Ctrl-C), besides each turn's own signal. */
  signal?: AbortSignal;
  /** Longest silence of a request, in milliseconds; default `DEFAULT_TIMEOUT_MS`. */
  timeoutMs?: number;
  /** Default `NO_RETRY`: one attempt (`createProviderModel` passes `DEFAULT_RETRY_POLICY`). */
  retry?: Readonly<RetryPolicy>;
  /** The wait between attempts; tests pass one that returns at once. */
  sleep?: Sleep;
  onRetry?(info: RetryInfo): void;
}

/**
 * Reads a response's events into a turn with `translate` (one provider's wire format). Never
 * rejects: whatever `translate` throws ends the turn through `failTurn`, as the
 * `ProviderError` it is (a body that broke off) or as `PROVIDER_RESPONSE_INVALID` named after
 * `facts` (anything else, e.g. arguments that are not JSON when their block ends).
 */
export async function readProviderEvents<Event>(
  translate: (events: AsyncIterable<Event>, builder: TurnBuilder, facts: ProviderFacts) => Promise<void>,
  events: AsyncIterable<Event>,
  builder: TurnBuilder,
  facts: ProviderFacts,
): Promise<void> {
  try {
    await translate(events, builder, facts);
  } catch (error) {
    failTurn(
      builder,
      error instanceof ProviderError ? error : new ProviderError("PROVIDER_RESPONSE_INVALID", { ...facts, detail: errorMessage(error) }, { cause: error }),
    );
  }
}

/** What one provider contributes to a turn: its request, how to open it, how to read what it streams. */
export interface ProviderTurn<Opened> {
  options: ProviderModelOptions;
  facts: ProviderFacts;
  streamOptions: StreamOptions;
  /** The request of this turn (called once, inside the turn: a throw fails the turn). */
  request(): HttpRequest;
  /** Sends it once (`attempt` counts from 1). */
  open(request: HttpRequest, transport: TransportOptions, attempt: number): Promise<Opened>;
  /** Reads the opened response's events into the turn. */
  read(opened: Opened, builder: TurnBuilder): Promise<void>;
}

/** A turn builder that takes the request's keys out of every failure it records. */
class RedactingTurnBuilder extends TurnBuilder {
  secrets: readonly string[] = [];

  override fail(message: string, stopReason: "error" | "aborted" = "error", failure?: TurnFailure): boolean {
    const clean = (text: string) => redact(text, this.secrets);
    return super.fail(clean(message), stopReason, failure === undefined ? undefined : { ...failure, message: clean(failure.message) });
  }
}

/**
 * Runs one turn of an HTTP provider and returns its stream at once. Guarantees: the model's
 * signal and the turn's both cancel it; the request is opened through `withRetries` with
 * the options' policy (so a retry happens only before the turn emitted anything); anything
 * that throws ends the turn through `failTurn` (a coded failure, or `aborted`), never as a
 * rejection; the merged signal's listeners are released when the turn ends; the key the
 * request carries never appears in the turn's `errorMessage` or `failure`, whoever wrote them
 * (an `error` event in the stream may quote it).
 */
export function streamProviderTurn<Opened>(turn: ProviderTurn<Opened>): AssistantStream {
  const { options, facts } = turn;
  const merged = mergeSignals(options.signal, turn.streamOptions.signal);
  const signal = merged.signal;
  const builder = new RedactingTurnBuilder({ ...(signal ? { signal } : {}), ...(options.now ? { now: options.now } : {}) });
  const transport: TransportOptions = {
    signal,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
  };
  void (async () => {
    const request = turn.request();
    builder.secrets = secretsOf(request.headers);
    const opened = await withRetries((attempt) => turn.open(request, transport, attempt), {
      policy: options.retry,
      signal,
      ...(options.sleep ? { sleep: options.sleep } : {}),
      ...(options.onRetry ? { onRetry: options.onRetry } : {}),
      provider: facts.provider,
    });
    await turn.read(opened, builder);
  })()
    .catch((error: unknown) => failTurn(builder, error))
    .finally(merged.dispose);
  return builder.stream;
}
