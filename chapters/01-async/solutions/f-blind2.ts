// @ts-nocheck — a solution of Chapter 01, checked in place of packages/pi-course/src/async.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
// Written blind, second round: by a learner who saw only the practice folder (Lab 1.5 included), first try green in every lab; kept as written.
/**
 * Chapter 01 · TypeScript survival for agent code — the practice starter.
 *
 * The public types and the exported functions are fixed: the tests use them, and so does
 * every later chapter. Every lab's function is a construction site named after its lab.
 * Build them in order: Lab 1.1 deferred, errorMessage, tick → 1.2 Listeners → 1.3
 * abortReason, abortable → 1.4 linkedSignal → 1.5 isPlainObject, parseJsonObject,
 * assertNever. Add private helpers as you need them; keep the exports and the signatures of
 * the declarations marked 🔨.
 *
 * Run one lab:  npm run lab -w @pi/course -- 1.1
 *
 * Given as it is (no 🔨): `TimeoutError`, the reason a timed-out `linkedSignal` aborts
 * with; the `Set` that `Listeners` keeps its listeners in; `UnreachableError`, what
 * `assertNever` throws.
 */

// ── Lab 1.1 · deferred、errorMessage 与 tick ──

/** A promise together with the functions that settle it. */
export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
  /** True once `resolve` or `reject` has been called (later calls are ignored, as for any promise). */
  readonly settled: boolean;
}

/** 施工位的错误：消息说出哪个 Lab 来写这段代码。每个 Lab 都做完后没有代码再调用它，删掉或留着都行。 */
function labError(lab: string): Error {
  return new Error(`${lab} 尚未实现`);
}

/**
 * A promise settled from outside, for the places where the code that produces a value is
 * not the code that waits for it (a stream's final result, "the agent is idle"). The first
 * `resolve` or `reject` decides; every later call is ignored. Each call makes a deferred of
 * its own.
 */
export function deferred<T>(): Deferred<T> {
  let settle!: (value: T) => void;
  let fail!: (reason: unknown) => void;
  const promise = new Promise<T>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  let settled = false;
  return {
    promise,
    resolve(value: T): void {
      if (settled) return;
      settled = true;
      settle(value);
    },
    reject(reason: unknown): void {
      if (settled) return;
      settled = true;
      fail(reason);
    },
    get settled(): boolean {
      return settled;
    },
  };
}

/**
 * The text of anything thrown: an `Error`'s message (as it is, even empty; `String(message)`
 * when it is no string), otherwise `String(value)`; `"unprintable error"` when any of that
 * throws (a throwing `message` getter or `toString`, no prototype, a revoked Proxy, on which
 * even `instanceof` throws). Always a string; never throws itself.
 */
export function errorMessage(error: unknown): string {
  try {
    if (error instanceof Error) return String(error.message);
    return String(error);
  } catch {
    return "unprintable error";
  }
}

/**
 * Yields to the event loop once (a macrotask, after pending I/O callbacks). Producers that
 * emit many events use it between events, so a consumer gets the chance to react (abort,
 * say) before the next one is produced. It uses `setImmediate`, not a timer, so it still
 * yields when a test mocks `setTimeout`.
 */
export function tick(): Promise<void> {
  return new Promise<void>((resolve) => {
    setImmediate(() => resolve());
  });
}

// ── Lab 1.2 · Listeners：按顺序通知，谁也拖不垮谁 ──

/** Removes a listener added with `Listeners.add`. Calling it twice is harmless. */
export type Unsubscribe = () => void;

/**
 * A typed set of listeners for one kind of event.
 *
 * Guarantees: listeners run in the order they were added; a listener added during an
 * emit first hears the next event; one removed during an emit, before its turn, is not
 * called; a throwing listener never stops the others. `emit` never throws: it returns
 * what the listeners threw, so its owner decides what a failing listener means.
 */
export class Listeners<E> {
  // 🔨 Lab 1.2：add、size、emit 三处都要写。课文第 4 节，规则见附录 §C4；#listeners 已经给出
  readonly #listeners = new Set<(event: E) => void>();

  /** Adds `listener`; returns the function that removes it. Adding the same function twice adds it once. */
  add(listener: (event: E) => void): Unsubscribe {
    this.#listeners.add(listener);
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      this.#listeners.delete(listener);
    };
  }

  /** How many listeners are added now (a function added twice counts once). */
  get size(): number {
    return this.#listeners.size;
  }

  /** Calls every listener with `event`; returns the errors they threw, in order (empty when none did). */
  emit(event: E): unknown[] {
    const errors: unknown[] = [];
    // the list as it was when this emit began; one removed before its turn is skipped
    for (const listener of [...this.#listeners]) {
      if (!this.#listeners.has(listener)) continue;
      try {
        listener(event);
      } catch (error) {
        errors.push(error);
      }
    }
    return errors;
  }
}

// ── Lab 1.3 · abortable：中止只停下等待，不留监听 ──

/**
 * What an aborted signal rejects with: its `reason` (a `DOMException` named `AbortError` unless
 * the caller chose one). Only `undefined` is replaced: `null` is a reason like any other.
 */
export function abortReason(signal: AbortSignal): unknown {
  const reason: unknown = signal.reason;
  return reason === undefined ? new DOMException("This operation was aborted", "AbortError") : reason;
}

/**
 * Waits for `promise`, or rejects with the signal's reason as soon as `signal` aborts,
 * whichever comes first. The abort listener is removed once either happens, so a
 * long-lived signal does not collect one listener per wait. Aborting does not stop the
 * work behind `promise` (nothing can, from outside): it only stops the waiting, and a
 * later failure of that abandoned work is caught here, never an unhandled rejection.
 * On a signal that is already aborted it rejects at once and adds no listener.
 */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(abortReason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      promise.catch(() => {});
      reject(abortReason(signal));
    };
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

// ── Lab 1.4 · linkedSignal：跟随、超时、收拾干净 ──

/** The reason a `linkedSignal` aborts when its timeout fires; `code` is `TIMEOUT`. */
export class TimeoutError extends Error {
  readonly code = "TIMEOUT";
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super(`timed out after ${timeoutMs} ms`);
    this.name = "TimeoutError";
    this.timeoutMs = timeoutMs;
  }
}

/** A signal of one's own, and the function that detaches it from everything it listens to. */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Removes the listener on the parent and clears the timer. Idempotent; does not abort. */
  dispose(): void;
}

/** The longest delay `setTimeout` honours (2^31 - 1 ms, about 24.8 days); longer waits go in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A signal that aborts when `parent` aborts (with the parent's reason) or, if `timeoutMs` is
 * given, when that many milliseconds pass (with a `TimeoutError`) — whichever is first.
 * Call `dispose()` when the work is done: it detaches from the parent and clears the timer,
 * so neither outlives the work (a forgotten timer keeps the process alive; a forgotten
 * listener on a session-long signal is a leak per call). `timeoutMs` must be a finite
 * number ≥ 0, otherwise `RangeError`; it has no upper bound (a wait longer than a timer can
 * hold is taken in steps).
 */
export function linkedSignal(parent: AbortSignal | undefined, timeoutMs?: number): LinkedSignal {
  if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs >= 0)) {
    throw new RangeError(`timeoutMs must be a finite number >= 0, got ${String(timeoutMs)}`);
  }
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onParentAbort: (() => void) | undefined;
  const dispose = (): void => {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (parent !== undefined && onParentAbort !== undefined) {
      parent.removeEventListener("abort", onParentAbort);
      onParentAbort = undefined;
    }
  };

  if (parent?.aborted) {
    // the abort event will not come again: no listener, no timer
    controller.abort(abortReason(parent));
    return { signal: controller.signal, dispose };
  }

  if (parent !== undefined) {
    const listener = (): void => {
      dispose();
      controller.abort(abortReason(parent));
    };
    onParentAbort = listener;
    parent.addEventListener("abort", listener, { once: true });
  }

  if (timeoutMs !== undefined) {
    const ms = timeoutMs;
    const deadline = Date.now() + ms;
    const wait = (remaining: number): void => {
      timer = setTimeout(() => {
        timer = undefined;
        const left = deadline - Date.now();
        if (left > 0) {
          wait(left);
          return;
        }
        dispose();
        controller.abort(new TimeoutError(ms));
      }, Math.min(remaining, MAX_TIMER_MS));
    };
    wait(ms);
  }

  return { signal: controller.signal, dispose };
}

// ── Lab 1.5 · 在边界上收窄：unknown、类型守卫与 never ──

/**
 * What `assertNever` throws: a value that the types said could not exist arrived anyway (a
 * message role added to the union and forgotten in a `switch`, a value that came from outside
 * through a cast). `code` is `UNREACHABLE`; `value` is that value as it came; the message shows
 * it as JSON when it has a JSON form, else as `errorMessage` gives it (it never throws).
 */
export class UnreachableError extends Error {
  readonly code = "UNREACHABLE";
  /** What the value was meant to be, as the caller named it ("message role"). */
  readonly what: string;
  readonly value: unknown;
  constructor(what: string, value: unknown) {
    super(`unexpected ${what}: ${UnreachableError.#shown(value)}`);
    this.name = "UnreachableError";
    this.what = what;
    this.value = value;
  }

  static #shown(value: unknown): string {
    try {
      const json = JSON.stringify(value);
      if (json !== undefined) return json;
    } catch {
      // a BigInt, a cycle, a revoked Proxy: no JSON form
    }
    return errorMessage(value);
  }
}

/**
 * True for a plain object, the kind `JSON.parse` makes: not `null`, not an array (not even one
 * whose prototype was replaced), and its prototype is `Object.prototype` or `null`. A class
 * instance (`Date`, `Map`, an `Error`), a boxed primitive, a function or an object that inherits
 * from another object is not one. Never throws: a value on which the check itself throws (a
 * revoked Proxy) is not a plain object. Narrows to `Record<string, unknown>`: each field is
 * still `unknown` until it is checked in turn.
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  try {
    if (Array.isArray(value)) return false;
    const proto: unknown = Object.getPrototypeOf(value);
    return proto === Object.prototype || proto === null;
  } catch {
    return false;
  }
}

/**
 * The JSON object that `text` holds, or `undefined` when it holds none: text that is not JSON
 * (cut off, empty) and JSON that is not an object (`[]`, `null`, `42`, `"x"`) alike. Never
 * throws. The boundary where text from the network or from a model becomes a value the
 * code may read, field by field.
 */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  return isPlainObject(parsed) ? parsed : undefined;
}

/**
 * The `default` of a `switch` over a tagged union: `value` has type `never` only when every
 * member has its `case`, so a member added to the union and forgotten here fails the build.
 * At run time it throws an `UnreachableError` carrying `value` (one that reached it through a
 * cast, or from a caller the compiler never saw); it never returns.
 */
export function assertNever(value: never, what: string): never {
  throw new UnreachableError(what, value);
}
