// @ts-nocheck — a solution of Chapter 02, checked in place of packages/pi-course/src/event-stream.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 02 · the event stream — solution E, written from the chapter text the way a learner
 * new to async code writes it: the given class and state kept, `nextEvent` an `async`
 * function that throws the failure, index `for` loops and `while (…length > 0)` to wake
 * waiting calls, `splice` to take the oldest, the guard `catch` attached after the rejection
 * (same synchronous run), and a listener without `{ once: true }` that `then(…).catch(…)`
 * removes whichever way the stream closes.
 *
 * (The starter's own notes follow.)
 *
 * The public class `EventStream` is given: a thin door over one plain state record
 * (`StreamState`), each method one call to a function below. Those functions are the
 * construction sites, each named after its lab. Build them in order: Lab 2.1 pushEvent,
 * nextEvent, claimReader → 2.2 endStream → 2.3 failStream → 2.4 leaveEarly → 2.5
 * watchSignal. Labs 2.2–2.4 also add a line or two to pushEvent and nextEvent (the chapter
 * text says which). Add private helpers as you need them; keep the exports and the
 * signatures of the declarations marked 🔨.
 *
 * Run one lab:  npm run lab -w @pi/course -- 2.1
 *
 * Given as it is (no 🔨): the error class and its code, the options, `StreamState`, `DONE`
 * and the class `EventStream`. `deferred` is chapter 01's.
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

function pushEvent<E, R>(state: StreamState<E, R>, event: E): boolean {
  if (state.status === "ended" || state.status === "failed") {
    return false;
  }
  if (state.reader === "left") {
    return true;
  }
  if (state.waiting.length > 0) {
    const [first] = state.waiting.splice(0, 1);
    first?.resolve({ value: event, done: false });
    return true;
  }
  state.queue.push(event);
  return true;
}

async function nextEvent<E, R>(state: StreamState<E, R>): Promise<IteratorResult<E>> {
  if (state.reader === "left") {
    return DONE;
  }
  if (state.queue.length > 0) {
    const [event] = state.queue.splice(0, 1);
    return { value: event as E, done: false };
  }
  if (state.status === "ended") {
    return DONE;
  }
  if (state.status === "failed") {
    throw state.error;
  }
  const waiter = deferred<IteratorResult<E>>();
  state.waiting.push(waiter);
  return waiter.promise;
}

function claimReader<E, R>(state: StreamState<E, R>): void {
  if (state.reader === "reading" || state.reader === "left") {
    throw new EventStreamError("STREAM_ALREADY_CONSUMED", "someone is reading this stream already (or did)");
  }
  state.reader = "reading";
}

// ── Lab 2.2 · end 与 result：读完剩下的，再交出结果 ──

function endStream<E, R>(state: StreamState<E, R>, result: R): boolean {
  if (state.status === "ended" || state.status === "failed") {
    return false;
  }
  state.status = "ended";
  state.result.resolve(result);
  for (let i = 0; i < state.waiting.length; i++) {
    state.waiting[i]?.resolve(DONE);
  }
  state.waiting.length = 0;
  return true;
}

// ── Lab 2.3 · fail：失败也只结束一次 ──

function failStream<E, R>(state: StreamState<E, R>, error: unknown): boolean {
  if (state.status === "ended" || state.status === "failed") {
    return false;
  }
  state.status = "failed";
  state.error = error;
  state.result.reject(error);
  state.result.promise.catch(() => {
    // handled: whoever calls result() later still gets the rejection
  });
  while (state.waiting.length > 0) {
    state.waiting.shift()?.reject(error);
  }
  return true;
}

// ── Lab 2.4 · 读者提前离开：break 之后 ──

function leaveEarly<E, R>(state: StreamState<E, R>): void {
  state.reader = "left";
  state.queue.splice(0, state.queue.length);
  const waiters = state.waiting.splice(0, state.waiting.length);
  for (let i = 0; i < waiters.length; i++) {
    waiters[i]?.resolve(DONE);
  }
}

// ── Lab 2.5 · 中止：signal 一响，流就关 ──

function watchSignal<E, R>(stream: EventStream<E, R>, signal: AbortSignal, onAbort: ((reason: unknown) => R) | undefined): void {
  function handleAbort() {
    if (stream.closed) {
      return;
    }
    if (typeof onAbort === "function") {
      stream.end(onAbort(signal.reason));
    } else {
      stream.fail(signal.reason);
    }
  }
  if (signal.aborted) {
    handleAbort();
    return;
  }
  signal.addEventListener("abort", handleAbort);
  function removeListener() {
    signal.removeEventListener("abort", handleAbort);
  }
  stream.result().then(removeListener).catch(removeListener);
}
