/**
 * Chapter 02 · the event stream — the practice starter.
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

/** 施工位的错误：消息说出哪个 Lab 来写这段代码。每个 Lab 都做完后没有代码再调用它，删掉或留着都行。 */
function labError(lab: string): Error {
  return new Error(`${lab} 尚未实现`);
}

// ── Lab 2.1 · 边推边读：一个写者，一个读者 ──

/** Hands `event` to the oldest waiting call, or queues it. Never waits, never refuses an open stream. */
function pushEvent<E, R>(state: StreamState<E, R>, event: E): boolean {
  // 🔨 Lab 2.1：正文第 3 节（规则在附录 §C3）
  // 🔨 Lab 2.1：Lab 2.2（第 4 节）和 Lab 2.4（第 6 节）还会回到这里，各补一种情况
  void state;
  void event;
  throw labError("Lab 2.1 push and next");
}

/** The reader's next event: the oldest queued one; otherwise how the stream ended; otherwise a wait for the next push. */
function nextEvent<E, R>(state: StreamState<E, R>): Promise<IteratorResult<E>> {
  // 🔨 Lab 2.1：正文第 3 节（规则在附录 §C3）
  // 🔨 Lab 2.1：Lab 2.2、2.3、2.4（第 4、5、6 节）还会回到这里，各补一种情况
  void state;
  throw labError("Lab 2.1 push and next");
}

/** Makes the caller the stream's one reader; a second reader is refused at once. */
function claimReader<E, R>(state: StreamState<E, R>): void {
  // 🔨 Lab 2.1：正文第 3 节（规则在附录 §C3.4）
  void state;
  throw labError("Lab 2.1 push and next");
}

// ── Lab 2.2 · end 与 result：读完剩下的，再交出结果 ──

/** Closes the stream with `result`, the first close only; a waiting reader learns at once that nothing more comes. */
function endStream<E, R>(state: StreamState<E, R>, result: R): boolean {
  // 🔨 Lab 2.2：正文第 4 节（规则在附录 §C4）
  // 🔨 Lab 2.2：写完再回到 pushEvent 和 nextEvent，各补一种情况（第 4 节的表）
  void state;
  void result;
  throw labError("Lab 2.2 end");
}

// ── Lab 2.3 · fail：失败也只结束一次 ──

/** Closes the stream with `error`, the first close only; a waiting reader gets the error at once. */
function failStream<E, R>(state: StreamState<E, R>, error: unknown): boolean {
  // 🔨 Lab 2.3：正文第 5 节（规则在附录 §C5）
  // 🔨 Lab 2.3：写完再回到 nextEvent 补一种情况（第 5 节的表）
  void state;
  void error;
  throw labError("Lab 2.3 fail");
}

// ── Lab 2.4 · 读者提前离开：break 之后 ──

/** The reader stops (`break`): what is queued is dropped, a waiting call ends; the stream itself stays open. */
function leaveEarly<E, R>(state: StreamState<E, R>): void {
  // 🔨 Lab 2.4：正文第 6 节（规则在附录 §C6）
  // 🔨 Lab 2.4：写完再回到 nextEvent 和 pushEvent，各补一种情况（第 6 节的表）
  void state;
  throw labError("Lab 2.4 early exit");
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
  // 🔨 Lab 2.5：正文第 7 节（规则在附录 §C7）。这里只用 stream 的公开方法
  void stream;
  void signal;
  void onAbort;
  throw labError("Lab 2.5 abort");
}
