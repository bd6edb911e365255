// @ts-nocheck — checked inside the course package (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there), where it replaces async.ts.
/**
 * Chapter 01, solution A: written from the chapter text alone, closures over local state.
 * `deferred` keeps one `done` flag; `abortable` races the promise against an abort
 * promise and cleans up in `finally`; `linkedSignal` collects its clean-up steps in a list.
 * Lab 1.5 (added with the lab, written from its section): the guard reads the prototype with
 * `Reflect.getPrototypeOf`; `parseJsonObject` gets a parse result as a tagged union.
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

/** A promise settled from outside; the first call decides. */
export function deferred<T>(): Deferred<T> {
  let done = false;
  let settle: { resolve: (value: T) => void; reject: (reason: unknown) => void } | undefined;
  const promise = new Promise<T>((resolve, reject) => {
    settle = { resolve, reject };
  });
  const once =
    <A>(pick: (s: NonNullable<typeof settle>) => (arg: A) => void) =>
    (arg: A) => {
      if (done) return;
      done = true;
      pick(settle!)(arg);
    };
  return {
    promise,
    resolve: once<T>((s) => s.resolve),
    reject: once<unknown>((s) => s.reject),
    get settled() {
      return done;
    },
  };
}

/** The text of anything thrown; never throws. */
export function errorMessage(error: unknown): string {
  try {
    if (error instanceof Error) return String(error.message);
    return String(error);
  } catch {
    return "unprintable error";
  }
}

/** One turn of the event loop, through setImmediate. */
export function tick(): Promise<void> {
  return new Promise<void>((done) => {
    setImmediate(() => done());
  });
}

// ── Lab 1.2 · Listeners：按顺序通知，谁也拖不垮谁 ──

/** Removes a listener added with `Listeners.add`. Calling it twice is harmless. */
export type Unsubscribe = () => void;

/** A typed set of listeners for one kind of event. */
export class Listeners<E> {
  readonly #listeners = new Set<(event: E) => void>();

  /** Adds `listener`; returns the function that removes it. */
  add(listener: (event: E) => void): Unsubscribe {
    this.#listeners.add(listener);
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      this.#listeners.delete(listener);
    };
  }

  /** How many listeners are added now. */
  get size(): number {
    return this.#listeners.size;
  }

  /** Calls every listener with `event`; returns the errors they threw, in order. */
  emit(event: E): unknown[] {
    const snapshot = Array.from(this.#listeners);
    return snapshot.flatMap((listener) => {
      if (!this.#listeners.has(listener)) return [];
      try {
        listener(event);
        return [];
      } catch (thrown) {
        return [thrown];
      }
    });
  }
}

// ── Lab 1.3 · abortable：中止只停下等待，不留监听 ──

/** What an aborted signal rejects with: its `reason`. */
export function abortReason(signal: AbortSignal): unknown {
  if (signal.reason !== undefined) return signal.reason;
  return new DOMException("This operation was aborted", "AbortError");
}

/** Waits for `promise` or the abort of `signal`, whichever is first; leaves no listener. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  const ignore = (): void => {};
  if (signal.aborted) {
    promise.then(ignore, ignore);
    return Promise.reject(abortReason(signal));
  }
  let onAbort = ignore;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(abortReason(signal));
  });
  signal.addEventListener("abort", onAbort);
  aborted.catch(ignore);
  promise.catch(ignore);
  return Promise.race([promise, aborted]).finally(() => signal.removeEventListener("abort", onAbort));
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

/** A signal that follows `parent` and times out after `timeoutMs`; `dispose` leaves nothing behind. */
export function linkedSignal(parent: AbortSignal | undefined, timeoutMs?: number): LinkedSignal {
  if (typeof timeoutMs === "number" && (Number.isNaN(timeoutMs) || timeoutMs < 0 || timeoutMs === Infinity)) {
    throw new RangeError(`timeoutMs must be a finite number >= 0, got ${timeoutMs}`);
  }
  const own = new AbortController();
  const cleanups: (() => void)[] = [];
  const dispose = () => {
    while (cleanups.length > 0) cleanups.pop()!();
  };
  const stop = (reason: unknown) => {
    dispose();
    own.abort(reason);
  };
  if (parent !== undefined && parent.aborted) {
    own.abort(abortReason(parent));
    return { signal: own.signal, dispose };
  }
  if (parent !== undefined) {
    const follow = () => stop(abortReason(parent));
    parent.addEventListener("abort", follow);
    cleanups.push(() => parent.removeEventListener("abort", follow));
  }
  if (typeof timeoutMs === "number") {
    const ms = timeoutMs;
    // A timer holds at most 2^31 - 1 ms (Node fires a longer one after 1 ms): longer waits go in legs.
    const longest = 2147483647;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const leg = (left: number) => {
      timer = setTimeout(() => (left > longest ? leg(left - longest) : stop(new TimeoutError(ms))), Math.min(left, longest));
    };
    leg(ms);
    cleanups.push(() => clearTimeout(timer));
  }
  return { signal: own.signal, dispose };
}

// ── Lab 1.5 · 在边界上收窄：unknown、类型守卫与 never ──

/** What `assertNever` throws (given as it is in the starter). */
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

/** A plain object: no array, and its prototype is Object.prototype or null; never throws. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  try {
    const proto = Reflect.getPrototypeOf(value);
    return !Array.isArray(value) && (proto === null || proto === Object.prototype);
  } catch {
    return false;
  }
}

type Parsed = { ok: true; value: unknown } | { ok: false };

function parseText(text: string): Parsed {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** The JSON object in `text`, or undefined. */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  const parsed = parseText(text);
  if (!parsed.ok) return undefined;
  return isPlainObject(parsed.value) ? parsed.value : undefined;
}

/** The default of an exhaustive switch. */
export function assertNever(value: never, what: string): never {
  const error = new UnreachableError(what, value);
  throw error;
}
