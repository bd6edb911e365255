// @ts-nocheck — a solution of Chapter 02, checked in place of packages/pi-course/src/event-stream.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 02 · the event stream — solution B, written from the chapter text: the given
 * class kept, a state of its own behind it. No list of waiting calls: every waiting
 * `next()` sleeps on one shared "something happened" promise and looks again when it wakes
 * (an async loop); events are read through a head index. Calls of `next()` take turns in
 * the order they were made (each one starts looking once the one before it has its
 * answer), so a later call never takes the event a waiting one was owed (§C3.2).
 * watchSignal removes its listener through the listener's own `signal` option.
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

/** Everything one stream keeps. */
interface StreamState<E, R> {
  /** Events pushed; those before `head` were read already. */
  events: E[];
  head: number;
  /** Resolved, and replaced by a fresh one, each time a sleeping reader must look again. */
  wake: Deferred<void>;
  readonly result: Deferred<R>;
  /** How the stream closed, once it has. */
  outcome: { failed: false } | { failed: true; error: unknown } | undefined;
  /** The last `next()` call's turn: the next call starts looking once it is over. */
  line: Promise<unknown>;
  /** Someone asked for the iterator; the reader left early. */
  reading: boolean;
  gone: boolean;
}

/** Wakes every sleeping `next()`: they look at the state again. */
function poke<E, R>(state: StreamState<E, R>): void {
  const sleeping = state.wake;
  state.wake = deferred<void>();
  sleeping.resolve();
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
  readonly #state: StreamState<E, R> = { events: [], head: 0, wake: deferred<void>(), result: deferred<R>(), outcome: undefined, line: Promise.resolve(), reading: false, gone: false };

  constructor(options: EventStreamOptions<R> = {}) {
    if (options.signal !== undefined) watchSignal(this, options.signal, options.onAbort);
  }

  /** True once the stream has ended, failed or been aborted. */
  get closed(): boolean {
    return this.#state.outcome !== undefined;
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
  if (state.outcome !== undefined) return false;
  if (!state.gone) {
    state.events.push(event);
    poke(state);
  }
  return true;
}

function nextEvent<E, R>(state: StreamState<E, R>): Promise<IteratorResult<E>> {
  const turn = state.line.then(() => look(state));
  state.line = turn.catch(() => undefined);
  return turn;
}

async function look<E, R>(state: StreamState<E, R>): Promise<IteratorResult<E>> {
  for (;;) {
    if (state.gone) return DONE;
    if (state.head < state.events.length) {
      const value = state.events[state.head] as E;
      state.head += 1;
      if (state.head === state.events.length) {
        state.events = [];
        state.head = 0;
      }
      return { value, done: false };
    }
    if (state.outcome?.failed === true) throw state.outcome.error;
    if (state.outcome !== undefined) return DONE;
    await state.wake.promise;
  }
}

function claimReader<E, R>(state: StreamState<E, R>): void {
  if (state.reading) throw new EventStreamError("STREAM_ALREADY_CONSUMED", "only one reader per stream");
  state.reading = true;
}

// ── Lab 2.2 · end 与 result：读完剩下的，再交出结果 ──

function endStream<E, R>(state: StreamState<E, R>, result: R): boolean {
  if (state.outcome !== undefined) return false;
  state.outcome = { failed: false };
  state.result.resolve(result);
  poke(state);
  return true;
}

// ── Lab 2.3 · fail：失败也只结束一次 ──

function failStream<E, R>(state: StreamState<E, R>, error: unknown): boolean {
  if (state.outcome !== undefined) return false;
  state.outcome = { failed: true, error };
  void state.result.promise.then(undefined, () => {});
  state.result.reject(error);
  poke(state);
  return true;
}

// ── Lab 2.4 · 读者提前离开：break 之后 ──

function leaveEarly<E, R>(state: StreamState<E, R>): void {
  state.gone = true;
  state.events = [];
  state.head = 0;
  poke(state);
}

// ── Lab 2.5 · 中止：signal 一响，流就关 ──

function watchSignal<E, R>(stream: EventStream<E, R>, signal: AbortSignal, onAbort: ((reason: unknown) => R) | undefined): void {
  const close = (): void => {
    // The cleanup below waits for result()'s callbacks: an abort right after end() still lands here.
    if (stream.closed) return;
    if (onAbort) stream.end(onAbort(signal.reason));
    else stream.fail(signal.reason);
  };
  if (signal.aborted) return close();
  const cleanup = new AbortController();
  signal.addEventListener("abort", close, { once: true, signal: cleanup.signal });
  stream
    .result()
    .catch(() => undefined)
    .then(() => cleanup.abort());
}
