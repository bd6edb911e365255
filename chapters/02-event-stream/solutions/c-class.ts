// @ts-nocheck — a solution of Chapter 02, checked in place of packages/pi-course/src/event-stream.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 02 · the event stream — solution C: the module as it stood before the chapter was
 * made interactive, kept as it was: one class, its state in private fields, no helper
 * functions (a head index into the queue, compacted now and then; the abort listener removed
 * synchronously when the stream closes). It shows that the lab tests ask for behaviour, not
 * for the starter's layout.
 *
 * A producer pushes events as they happen, one consumer
 * reads them with `for await`, and both meet again at one final result.
 *
 * A model answers token by token; the user wants to see the text as it arrives, while the
 * agent loop only needs the finished message. `EventStream` serves both: the events are
 * for watching, `result()` is for deciding. The queue has no backpressure on purpose:
 * `push` never waits, so a producer reading a network socket is never blocked by a slow
 * terminal (model events are small and finite; memory is the consumer's to spend).
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

type State = { kind: "open" } | { kind: "ended" } | { kind: "failed"; error: unknown };

/**
 * An async-iterable queue of events `E` that closes with a result `R` or an error.
 *
 * Guarantees:
 * - Events reach the consumer in push order, each exactly once; events pushed before the
 *   consumer starts are kept for it.
 * - After `end(result)`, iteration delivers what is queued and then finishes; `result()`
 *   resolves with `result`. After `fail(error)`, iteration delivers what is queued and
 *   then throws `error`; `result()` rejects with it.
 * - The first of `end`/`fail`/abort wins; every later `push`, `end` or `fail` returns
 *   `false` and changes nothing (an abort racing a producer is normal, not a bug).
 * - One consumer: a second `[Symbol.asyncIterator]()` throws `STREAM_ALREADY_CONSUMED`.
 *   A consumer that stops early (`break`) drops what is queued and what comes later;
 *   `result()` still settles when the producer finishes.
 * - A failure nobody asked about is not an unhandled rejection; `result()` reports it to
 *   whoever does ask.
 */
export class EventStream<E, R> implements AsyncIterable<E> {
  readonly #queue: E[] = [];
  #head = 0;
  readonly #waiters: Deferred<IteratorResult<E>>[] = [];
  readonly #result = deferred<R>();
  #state: State = { kind: "open" };
  #consumed = false;
  #detached = false;
  readonly #signal: AbortSignal | undefined;
  readonly #onAbort: (() => void) | undefined;

  constructor(options: EventStreamOptions<R> = {}) {
    this.#result.promise.catch(() => {}); // see the last guarantee
    const { signal, onAbort } = options;
    this.#signal = signal;
    if (signal === undefined) return;
    const close = () => {
      if (onAbort !== undefined) this.end(onAbort(signal.reason));
      else this.fail(signal.reason);
    };
    if (signal.aborted) {
      close();
      return;
    }
    this.#onAbort = close;
    signal.addEventListener("abort", close, { once: true });
  }

  /** False once the stream has ended, failed or been aborted. */
  get closed(): boolean {
    return this.#state.kind !== "open";
  }

  /** Queues `event` for the consumer (or hands it to a waiting one). Returns `false`, doing nothing, once closed. */
  push(event: E): boolean {
    if (this.#state.kind !== "open") return false;
    if (this.#detached) return true;
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) waiter.resolve({ value: event, done: false });
    else this.#queue.push(event);
    return true;
  }

  /** Closes the stream with `result`. Returns `false`, doing nothing, if it was already closed. */
  end(result: R): boolean {
    if (this.#state.kind !== "open") return false;
    this.#state = { kind: "ended" };
    this.#close();
    this.#result.resolve(result);
    for (const waiter of this.#waiters.splice(0)) waiter.resolve({ value: undefined, done: true });
    return true;
  }

  /** Closes the stream with `error`. Returns `false`, doing nothing, if it was already closed. */
  fail(error: unknown): boolean {
    if (this.#state.kind !== "open") return false;
    this.#state = { kind: "failed", error };
    this.#close();
    this.#result.reject(error);
    for (const waiter of this.#waiters.splice(0)) waiter.reject(error);
    return true;
  }

  /** The final result: resolves after `end`, rejects after `fail`. The same promise every time. */
  result(): Promise<R> {
    return this.#result.promise;
  }

  [Symbol.asyncIterator](): AsyncIterator<E> {
    if (this.#consumed) {
      throw new EventStreamError("STREAM_ALREADY_CONSUMED", "an event stream has one consumer; it is already being read");
    }
    this.#consumed = true;
    return {
      next: () => this.#next(),
      return: async () => {
        this.#detached = true;
        this.#queue.length = 0;
        this.#head = 0;
        for (const waiter of this.#waiters.splice(0)) waiter.resolve({ value: undefined, done: true });
        return { value: undefined, done: true };
      },
    };
  }

  #next(): Promise<IteratorResult<E>> {
    if (this.#head < this.#queue.length) {
      const value = this.#queue[this.#head++]!;
      // Compact now and then, so a long stream does not keep every delivered event alive.
      if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
        this.#queue.splice(0, this.#head);
        this.#head = 0;
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.#detached || this.#state.kind === "ended") return Promise.resolve({ value: undefined, done: true });
    if (this.#state.kind === "failed") return Promise.reject(this.#state.error);
    const waiter = deferred<IteratorResult<E>>();
    this.#waiters.push(waiter);
    return waiter.promise;
  }

  /** Detaches from the signal: a closed stream holds no listener on a long-lived signal. */
  #close(): void {
    if (this.#onAbort !== undefined) this.#signal?.removeEventListener("abort", this.#onAbort);
  }
}
