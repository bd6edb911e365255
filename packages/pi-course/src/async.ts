/**
 * Chapter 01 · TypeScript survival for agent code: promises you settle from outside,
 * listeners you can remove, waits that stop on abort, timers that never outlive their
 * use, and values from outside narrowed before they are trusted.
 *
 * An agent is a handful of things happening at once: a model streaming, a tool running,
 * a user pressing Ctrl-C, a UI listening. Every later chapter leans on the small idioms
 * below, and each one exists to close a leak: a promise nobody can settle, a listener
 * still attached after its work ended, a timer that keeps the process alive, an abort
 * that nobody hears, a value from the network used as the type it was hoped to have.
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

/**
 * A promise settled from outside, for the places where the code that produces a value is
 * not the code that waits for it (a stream's final result, "the agent is idle"). The first
 * `resolve` or `reject` decides; every later call is ignored. Each call makes a deferred of
 * its own.
 */
export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  let settled = false;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return {
    promise,
    get settled() {
      return settled;
    },
    resolve(value) {
      settled = true;
      resolve(value);
    },
    reject(reason) {
      settled = true;
      reject(reason);
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
    return error instanceof Error ? String(error.message) : String(error);
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
  return new Promise((resolve) => setImmediate(resolve));
}

// ── Lab 1.2 · Listeners：按顺序通知，谁也拖不垮谁 ──

/** Removes a listener added with `Listeners.add`. Calling it twice is harmless. */
export type Unsubscribe = () => void;

/**
 * A typed set of listeners for one kind of event.
 *
 * Guarantees: listeners run in the order they were added; a listener added during an
 * emit first hears the next event; one removed during an emit, before its turn, is not
 * called (one removed and added back before its turn is on the list at its turn: it is
 * called, once, at its old place); a throwing listener never stops the others. `emit` never throws: it returns
 * what the listeners threw, so its owner decides what a failing listener means.
 */
export class Listeners<E> {
  readonly #listeners = new Set<(event: E) => void>();

  /**
   * Adds `listener`; returns the function that removes it. Adding the same function twice adds it
   * once. Each returned function acts once: called again, it does nothing, even when the same
   * function has been added back since (that add returned an unsubscribe of its own).
   */
  add(listener: (event: E) => void): Unsubscribe {
    this.#listeners.add(listener);
    let spent = false;
    return () => {
      if (spent) return;
      spent = true;
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
    for (const listener of [...this.#listeners]) {
      // Removed by an earlier listener of this same emit: it asked not to hear any more.
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
  return signal.reason === undefined ? new DOMException("This operation was aborted", "AbortError") : signal.reason;
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
    promise.catch(() => {}); // its outcome no longer matters to anyone
    return Promise.reject(abortReason(signal));
  }
  return new Promise<T>((settle, fail) => {
    const stopWaiting = () => {
      promise.catch(() => {});
      fail(abortReason(signal));
    };
    signal.addEventListener("abort", stopWaiting, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", stopWaiting);
        settle(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", stopWaiting);
        fail(error);
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
    throw new RangeError(`timeoutMs must be a finite number >= 0, got ${timeoutMs}`);
  }
  const own = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const onParentAbort = () => {
    dispose();
    own.abort(abortReason(parent!));
  };
  const dispose = () => {
    clearTimeout(timer); // harmless when no timer was started
    timer = undefined;
    parent?.removeEventListener("abort", onParentAbort);
  };
  if (parent?.aborted) {
    own.abort(abortReason(parent));
    return { signal: own.signal, dispose };
  }
  parent?.addEventListener("abort", onParentAbort, { once: true });
  if (timeoutMs !== undefined) {
    // Node runs a timer set above 2^31 - 1 ms after 1 ms instead: a longer wait goes in steps.
    const wait = (left: number) => {
      const step = Math.min(left, 2 ** 31 - 1);
      timer = setTimeout(() => {
        if (left > step) return wait(left - step);
        dispose();
        own.abort(new TimeoutError(timeoutMs));
      }, step);
    };
    wait(timeoutMs);
  }
  return { signal: own.signal, dispose };
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
    const prototype: unknown = Object.getPrototypeOf(value);
    return prototype === Object.prototype || prototype === null;
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
  let parsed: unknown; // JSON.parse returns `any`: kept as `unknown` until checked
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
