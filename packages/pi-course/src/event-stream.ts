/**
 * Chapter 02 · the event stream: a producer pushes events as they happen, one reader
 * takes them with `for await`, and both meet again at one final result.
 *
 * A model answers piece by piece; the user wants to see the text as it arrives, while the
 * agent loop only needs the finished answer. `EventStream` serves both: the events are for
 * watching, `result()` is for deciding. The queue has no backpressure on purpose: `push`
 * never waits and never refuses an open stream, so a producer reading a network socket is
 * never held up by a slow terminal (model events are small and finite; memory is the
 * reader's to spend). `push` returning `false` means one thing only: the stream is closed,
 * stop producing.
 *
 * The public class is a thin door over one plain state record (`StreamState`); each lab of
 * the chapter writes the functions behind one of its doors, in this order: push and next
 * (2.1), end (2.2), fail (2.3), a reader leaving early (2.4), abort (2.5).
 */
import { deferred, type Deferred } from "./async.js";

/** Error codes thrown on purpose by this module. */
export type EventStreamErrorCode = "STREAM_ALREADY_CONSUMED";

/** An error with a stable `code`; messages may change, codes do not. */
export class EventStreamError extends Error {
  readonly code: EventStreamErrorCode;
  constructor(code: EventStreamErrorCode, message: string) {
    super(message);
    this.name = "EventStreamError";
    this.code = code;
  }
}

export interface EventStreamOptions<R> {
  /**
   * Closes the stream the moment it aborts, even if the producer is stuck waiting: with
   * `onAbort`, the stream ends with `onAbort(reason)` as its result; without it, the stream
   * fails with the signal's reason. The producer then sees `push` return `false` and stops.
   */
  signal?: AbortSignal;
  onAbort?(reason: unknown): R;
}

/**
 * Everything one stream keeps, in one plain record that the functions below share.
 *
 * Invariant: while `waiting` holds a reader's call, `queue` is empty (an event that
 * arrives goes straight to the oldest waiting call).
 */
interface StreamState<E, R> {
  /** Events pushed and not read yet, oldest first. */
  readonly queue: E[];
  /** The reader's `next()` calls that found the queue empty, oldest first. */
  readonly waiting: Deferred<IteratorResult<E>>[];
  /** The final result: resolved by `end`, rejected by `fail`. */
  readonly result: Deferred<R>;
  /** `open` until the first `end` or `fail`; it never changes after that. */
  status: "open" | "ended" | "failed";
  /** What `fail` was given (meaningful once `status` is `failed`). */
  error: unknown;
  /** Nobody has asked for the iterator yet, the one reader is reading, or it left early. */
  reader: "none" | "reading" | "left";
}

/** What a reader gets once there is nothing more for it. */
const DONE: IteratorReturnResult<undefined> = Object.freeze({ value: undefined, done: true });

/**
 * An async-iterable queue of events `E` that closes with a result `R` or an error.
 *
 * Guarantees:
 * - Events reach the reader in push order, each exactly once, as the very objects pushed;
 *   events pushed before the reader starts are kept for it.
 * - After `end(result)`, iteration delivers what is queued and then finishes; `result()`
 *   resolves with `result`. After `fail(error)`, iteration delivers what is queued and
 *   then throws `error`; `result()` rejects with it.
 * - The first of `end`/`fail`/abort wins; every later `push`, `end` or `fail` returns
 *   `false` and changes nothing (an abort racing a producer is normal, not a bug).
 * - One reader: a second `[Symbol.asyncIterator]()` throws `STREAM_ALREADY_CONSUMED`.
 *   A reader that stops early (`break`) gets nothing more; the stream stays open and
 *   `result()` still settles when the producer finishes.
 * - A failure nobody asked about is not an unhandled rejection; `result()` reports it to
 *   whoever does ask.
 */
export class EventStream<E, R> implements AsyncIterable<E> {
  readonly #state: StreamState<E, R> = { queue: [], waiting: [], result: deferred<R>(), status: "open", error: undefined, reader: "none" };

  constructor(options: EventStreamOptions<R> = {}) {
    if (options.signal !== undefined) watchSignal(this, options.signal, options.onAbort);
  }

  /** True once the stream has ended, failed or been aborted. */
  get closed(): boolean {
    return this.#state.status !== "open";
  }

  /** Queues `event` for the reader (or hands it to a waiting one). Returns `false`, doing nothing, once closed. */
  push(event: E): boolean {
    return pushEvent(this.#state, event);
  }

  /** Closes the stream with `result`. Returns `false`, doing nothing, if it was already closed. */
  end(result: R): boolean {
    return endStream(this.#state, result);
  }

  /** Closes the stream with `error`. Returns `false`, doing nothing, if it was already closed. */
  fail(error: unknown): boolean {
    return failStream(this.#state, error);
  }

  /** The final result: resolves after `end`, rejects after `fail`. The same promise every time. */
  result(): Promise<R> {
    return this.#state.result.promise;
  }

  /** The one reader's iterator: `for await` calls `next()` for each event and `return()` when it stops early. */
  [Symbol.asyncIterator](): AsyncIterator<E> {
    const state = this.#state;
    claimReader(state);
    return {
      next: () => nextEvent(state),
      return: async () => {
        leaveEarly(state);
        return DONE;
      },
    };
  }
}

// ── Lab 2.1 · 边推边读：一个写者，一个读者 ──

/** Hands `event` to the oldest waiting call, or queues it. Never waits, never refuses an open stream. */
function pushEvent<E, R>(state: StreamState<E, R>, event: E): boolean {
  if (state.status !== "open") return false;
  if (state.reader === "left") return true; // nobody will read it: keep nothing
  const waiter = state.waiting.shift();
  if (waiter !== undefined) waiter.resolve({ value: event, done: false });
  else state.queue.push(event);
  return true;
}

/** The reader's next event: the oldest queued one; otherwise how the stream ended; otherwise a wait for the next push. */
function nextEvent<E, R>(state: StreamState<E, R>): Promise<IteratorResult<E>> {
  if (state.reader === "left") return Promise.resolve(DONE);
  if (state.queue.length > 0) return Promise.resolve({ value: state.queue.shift() as E, done: false });
  if (state.status === "ended") return Promise.resolve(DONE);
  if (state.status === "failed") return Promise.reject(state.error);
  const waiter = deferred<IteratorResult<E>>();
  state.waiting.push(waiter);
  return waiter.promise;
}

/** Makes the caller the stream's one reader; a second reader is refused at once. */
function claimReader<E, R>(state: StreamState<E, R>): void {
  if (state.reader !== "none") {
    throw new EventStreamError("STREAM_ALREADY_CONSUMED", "an event stream has one reader; it is already being read");
  }
  state.reader = "reading";
}

// ── Lab 2.2 · end 与 result：读完剩下的，再交出结果 ──

/** Closes the stream with `result`, the first close only; a waiting reader learns at once that nothing more comes. */
function endStream<E, R>(state: StreamState<E, R>, result: R): boolean {
  if (state.status !== "open") return false;
  state.status = "ended";
  state.result.resolve(result);
  for (const waiter of state.waiting.splice(0)) waiter.resolve(DONE);
  return true;
}

// ── Lab 2.3 · fail：失败也只结束一次 ──

/** Closes the stream with `error`, the first close only; a waiting reader gets the error at once. */
function failStream<E, R>(state: StreamState<E, R>, error: unknown): boolean {
  if (state.status !== "open") return false;
  state.status = "failed";
  state.error = error;
  state.result.promise.catch(() => {}); // nobody may ever ask: that is no unhandled rejection
  state.result.reject(error);
  for (const waiter of state.waiting.splice(0)) waiter.reject(error);
  return true;
}

// ── Lab 2.4 · 读者提前离开：break 之后 ──

/** The reader stops (`break`): what is queued is dropped, a waiting call ends; the stream itself stays open. */
function leaveEarly<E, R>(state: StreamState<E, R>): void {
  state.reader = "left";
  state.queue.length = 0;
  for (const waiter of state.waiting.splice(0)) waiter.resolve(DONE);
}

// ── Lab 2.5 · 中止：signal 一响，流就关 ──

/**
 * Closes `stream` when `signal` aborts: with `onAbort(reason)` as its result, or failed with
 * the reason. An aborted signal closes it at once. The listener goes once the stream has
 * closed, whichever way, so a session-long signal does not collect one per stream. A stream
 * that has already closed is left alone: the listener goes only when `result()`'s callbacks
 * run, and an abort in between (in the same synchronous run as `end`) must not call `onAbort`.
 */
function watchSignal<E, R>(stream: EventStream<E, R>, signal: AbortSignal, onAbort: ((reason: unknown) => R) | undefined): void {
  const close = () => {
    if (stream.closed) return;
    if (onAbort !== undefined) stream.end(onAbort(signal.reason));
    else stream.fail(signal.reason);
  };
  if (signal.aborted) {
    close();
    return;
  }
  signal.addEventListener("abort", close, { once: true });
  const detach = () => signal.removeEventListener("abort", close);
  stream.result().then(detach, detach);
}
