// @ts-nocheck — a solution of Chapter 02, checked in place of packages/pi-course/src/event-stream.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 02 · the event stream — solution F, written from the chapter text's contract
 * alone, without the starter's layout: one class, its state in private fields; the events
 * in a singly linked list (constant-time take from the front, however many pile up); the
 * waiting calls as plain resolve/reject pairs from `new Promise`; the reader's seat as two
 * booleans; the signal watched by a listener that `result().finally(…)` removes, with the
 * `catch` that a `finally` chain needs when the result rejects.
 */

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

/** One queued event and the one after it. */
interface Node<E> {
  readonly event: E;
  next: Node<E> | undefined;
}

/** A `next()` call that found nothing to read yet. */
interface Waiter<E> {
  resolve(result: IteratorResult<E>): void;
  reject(reason: unknown): void;
}

/** How the stream closed, once it has. */
type Ending<R> = { kind: "ended"; result: R } | { kind: "failed"; error: unknown };

/** An async-iterable queue of events `E` that closes with a result `R` or an error. */
export class EventStream<E, R> implements AsyncIterable<E> {
  #head: Node<E> | undefined = undefined;
  #tail: Node<E> | undefined = undefined;
  #waiters: Waiter<E>[] = [];
  #ending: Ending<R> | undefined = undefined;
  #claimed = false;
  #left = false;
  #resolveResult!: (result: R) => void;
  #rejectResult!: (reason: unknown) => void;
  readonly #result = new Promise<R>((resolve, reject) => {
    this.#resolveResult = resolve;
    this.#rejectResult = reject;
  });

  constructor(options: EventStreamOptions<R> = {}) {
    const { signal, onAbort } = options;
    if (signal === undefined) return;
    const close = () => {
      if (this.closed) return;
      if (onAbort === undefined) this.fail(signal.reason);
      else this.end(onAbort(signal.reason));
    };
    if (signal.aborted) {
      close();
      return;
    }
    signal.addEventListener("abort", close);
    this.result()
      .finally(() => signal.removeEventListener("abort", close))
      .catch(() => {});
  }

  /** True once the stream has ended, failed or been aborted. */
  get closed(): boolean {
    return this.#ending !== undefined;
  }

  /** Queues `event` for the reader (or hands it to a waiting one). Returns `false`, doing nothing, once closed. */
  push(event: E): boolean {
    if (this.#ending !== undefined) return false;
    if (this.#left) return true;
    const waiter = this.#waiters.shift();
    if (waiter) {
      waiter.resolve({ value: event, done: false });
      return true;
    }
    const node: Node<E> = { event, next: undefined };
    if (this.#tail === undefined) this.#head = node;
    else this.#tail.next = node;
    this.#tail = node;
    return true;
  }

  /** Closes the stream with `result`. Returns `false`, doing nothing, if it was already closed. */
  end(result: R): boolean {
    if (this.#ending !== undefined) return false;
    this.#ending = { kind: "ended", result };
    this.#resolveResult(result);
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter.resolve({ value: undefined, done: true });
    return true;
  }

  /** Closes the stream with `error`. Returns `false`, doing nothing, if it was already closed. */
  fail(error: unknown): boolean {
    if (this.#ending !== undefined) return false;
    this.#ending = { kind: "failed", error };
    this.#result.then(undefined, () => {});
    this.#rejectResult(error);
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter.reject(error);
    return true;
  }

  /** The final result: resolves after `end`, rejects after `fail`. The same promise every time. */
  result(): Promise<R> {
    return this.#result;
  }

  /** The one reader's iterator: `for await` calls `next()` for each event and `return()` when it stops early. */
  [Symbol.asyncIterator](): AsyncIterator<E> {
    if (this.#claimed) throw new EventStreamError("STREAM_ALREADY_CONSUMED", "one reader per stream, for its whole life");
    this.#claimed = true;
    return {
      next: () => this.#next(),
      return: async () => {
        this.#leave();
        return { value: undefined, done: true };
      },
    };
  }

  #next(): Promise<IteratorResult<E>> {
    if (this.#left) return Promise.resolve({ value: undefined, done: true });
    const node = this.#head;
    if (node !== undefined) {
      this.#head = node.next;
      if (this.#head === undefined) this.#tail = undefined;
      return Promise.resolve({ value: node.event, done: false });
    }
    const ending = this.#ending;
    if (ending?.kind === "ended") return Promise.resolve({ value: undefined, done: true });
    if (ending?.kind === "failed") return Promise.reject(ending.error);
    return new Promise((resolve, reject) => {
      this.#waiters.push({ resolve, reject });
    });
  }

  #leave(): void {
    this.#left = true;
    this.#head = undefined;
    this.#tail = undefined;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter.resolve({ value: undefined, done: true });
  }
}
