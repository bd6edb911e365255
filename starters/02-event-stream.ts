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
  // 🔨 Lab 2.1：有 next() 在等（waiting 不空）→ 把事件交给最早的那一个（用 { value, done: false } 兑现它）；没人等 → 排进 queue 末尾
  // 🔨 Lab 2.1：返回 true。不设上限，不丢事件，也不等读者：这个流没有背压
  // 🔨 Lab 2.1：（流关了、读者走了这两种情况，Lab 2.2 和 Lab 2.4 再回来补上）
  void state;
  void event;
  throw labError("Lab 2.1 push and next");
}

/** The reader's next event: the oldest queued one; otherwise how the stream ended; otherwise a wait for the next push. */
function nextEvent<E, R>(state: StreamState<E, R>): Promise<IteratorResult<E>> {
  // 🔨 Lab 2.1：queue 里有事件 → 取出最早的一个，返回一个已经兑现的 promise
  // 🔨 Lab 2.1：queue 空了 → 用第 01 章的 deferred 造一个等待者，排进 waiting 末尾，返回它的 promise
  // 🔨 Lab 2.1：（流结束、失败、读者离开之后该给什么，Lab 2.2、2.3、2.4 再回来补上）
  void state;
  throw labError("Lab 2.1 push and next");
}

/** Makes the caller the stream's one reader; a second reader is refused at once. */
function claimReader<E, R>(state: StreamState<E, R>): void {
  // 🔨 Lab 2.1：还没有人读过（reader 是 none）→ 记下“有人在读了”；否则抛出 code 为 STREAM_ALREADY_CONSUMED 的 EventStreamError
  void state;
  throw labError("Lab 2.1 push and next");
}

// ── Lab 2.2 · end 与 result：读完剩下的，再交出结果 ──

/** Closes the stream with `result`, the first close only; a waiting reader learns at once that nothing more comes. */
function endStream<E, R>(state: StreamState<E, R>, result: R): boolean {
  // 🔨 Lab 2.2：流已经关了 → 返回 false，什么都不改
  // 🔨 Lab 2.2：否则记下状态 ended，兑现 result，把每一个还在等的 next() 都以 DONE 兑现，返回 true
  // 🔨 Lab 2.2：别忘了回到 pushEvent 和 nextEvent，各补一种情况（见正文第 4 节的表）
  void state;
  void result;
  throw labError("Lab 2.2 end");
}

// ── Lab 2.3 · fail：失败也只结束一次 ──

/** Closes the stream with `error`, the first close only; a waiting reader gets the error at once. */
function failStream<E, R>(state: StreamState<E, R>, error: unknown): boolean {
  // 🔨 Lab 2.3：和 endStream 一样只关一次；记下状态 failed 和这个错误，原样（不包装）
  // 🔨 Lab 2.3：result 以它拒绝，每一个还在等的 next() 也以它拒绝
  // 🔨 Lab 2.3：可能永远没人调用 result()：先给 result 的 promise 接一个什么都不做的 catch，再拒绝
  // 🔨 Lab 2.3：回到 nextEvent：失败的流，排着的事件读完之后，以这个错误拒绝
  void state;
  void error;
  throw labError("Lab 2.3 fail");
}

// ── Lab 2.4 · 读者提前离开：break 之后 ──

/** The reader stops (`break`): what is queued is dropped, a waiting call ends; the stream itself stays open. */
function leaveEarly<E, R>(state: StreamState<E, R>): void {
  // 🔨 Lab 2.4：记下读者走了（reader 是 left：位置不会再空出来）；清空 queue；还在等的 next() 都以 DONE 兑现
  // 🔨 Lab 2.4：不要关闭流：status 不动，生产者照常 end 或 fail
  // 🔨 Lab 2.4：回到 nextEvent（读者走了 → 一律 DONE，先于别的情况判断）和 pushEvent（读者走了 → 不再排队，照样返回 true）
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
  // 🔨 Lab 2.5：怎么关：流已经关了 → 什么都不做；有 onAbort → 以它对中止原因（signal.reason）的返回值 end；
  // 🔨 Lab 2.5：没有 onAbort → 以中止原因本身 fail
  // 🔨 Lab 2.5：signal 已经中止 → 现在就关，不挂监听
  // 🔨 Lab 2.5：否则挂一个 abort 监听，中止时同步地关（不要等下一个微任务）
  // 🔨 Lab 2.5：流不管怎样关了（result 兑现或拒绝），都把这个监听摘掉；拒绝的那条路也要接住
  void stream;
  void signal;
  void onAbort;
  throw labError("Lab 2.5 abort");
}
