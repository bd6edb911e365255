// @ts-nocheck — checked inside the course package (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there), where it replaces async.ts.
/**
 * Chapter 01, solution G: written by the course authors in idioms the other solutions lack.
 * `deferred` is a class with a private state field; `tick` awaits inside an async function;
 * `Listeners` hands out one-shot unsubscribes (a function that replaces itself with a no-op)
 * and walks a copy with an index; `abortable` and `linkedSignal` attach their listeners with
 * the `signal` option of `addEventListener` and detach them by aborting a controller of their
 * own; `linkedSignal` splits a long timeout into a remainder first and whole steps after it.
 * Lab 1.5: the guard reads the prototype before it asks `Array.isArray`; `parseJsonObject`
 * hands out a shallow copy (`{ ...parsed }`) of what it parsed; `assertNever` builds its error
 * first and throws it after.
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

class Settleable<T> implements Deferred<T> {
  readonly promise: Promise<T>;
  #state: "pending" | "settled" = "pending";
  #fulfil: (value: T) => void = () => {};
  #fail: (reason: unknown) => void = () => {};

  constructor() {
    this.promise = new Promise<T>((fulfil, fail) => {
      this.#fulfil = fulfil;
      this.#fail = fail;
    });
  }

  get settled(): boolean {
    return this.#state === "settled";
  }

  resolve(value: T): void {
    if (this.#state === "settled") return;
    this.#state = "settled";
    this.#fulfil(value);
  }

  reject(reason: unknown): void {
    if (this.#state === "settled") return;
    this.#state = "settled";
    this.#fail(reason);
  }
}

/** A promise settled from outside. */
export function deferred<T>(): Deferred<T> {
  return new Settleable<T>();
}

/** The text of anything thrown; never throws. */
export function errorMessage(error: unknown): string {
  let text = "unprintable error";
  try {
    const isError = error instanceof Error;
    text = isError ? String((error as Error).message) : String(error);
  } catch {
    // text stays the fixed sentence
  }
  return text;
}

/** Yields to the event loop once, through setImmediate. */
export async function tick(): Promise<void> {
  await new Promise<void>((done) => {
    setImmediate(done);
  });
}

// ── Lab 1.2 · Listeners：按顺序通知，谁也拖不垮谁 ──

/** Removes a listener added with `Listeners.add`. Calling it twice is harmless. */
export type Unsubscribe = () => void;

/** A typed set of listeners for one kind of event. */
export class Listeners<E> {
  readonly #listeners = new Set<(event: E) => void>();

  /** Adds `listener`; returns a one-shot function that removes it. */
  add(listener: (event: E) => void): Unsubscribe {
    this.#listeners.add(listener);
    let remove = () => {
      remove = () => {};
      this.#listeners.delete(listener);
    };
    return () => remove();
  }

  /** How many listeners are added now. */
  get size(): number {
    return this.#listeners.size;
  }

  /** Calls every listener with `event`; returns the errors they threw, in order. */
  emit(event: E): unknown[] {
    const roster = Array.from(this.#listeners);
    const failures: unknown[] = [];
    let i = 0;
    while (i < roster.length) {
      const next = roster[i++]!;
      if (this.#listeners.has(next)) {
        try {
          next(event);
        } catch (failure) {
          failures.push(failure);
        }
      }
    }
    return failures;
  }
}

// ── Lab 1.3 · abortable：中止只停下等待，不留监听 ──

/** The signal's reason; a DOMException named AbortError only when it is undefined. */
export function abortReason(signal: AbortSignal): unknown {
  const { reason } = signal;
  if (reason !== undefined) return reason;
  return new DOMException("This operation was aborted", "AbortError");
}

/** Waits for `promise`, or rejects with the signal's reason when it aborts first. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  const ignore = () => {};
  if (signal.aborted) {
    promise.then(undefined, ignore);
    return Promise.reject(abortReason(signal));
  }
  const detach = new AbortController();
  return new Promise<T>((resolve, reject) => {
    signal.addEventListener(
      "abort",
      () => {
        detach.abort();
        promise.then(undefined, ignore);
        reject(abortReason(signal));
      },
      { once: true, signal: detach.signal },
    );
    promise.then(
      (value) => {
        detach.abort();
        resolve(value);
      },
      (failure: unknown) => {
        detach.abort();
        reject(failure);
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

const LONGEST_TIMER = 0x7fffffff;

/** A signal that follows `parent` and times out after `timeoutMs`; `dispose` detaches it. */
export function linkedSignal(parent: AbortSignal | undefined, timeoutMs?: number): LinkedSignal {
  if (timeoutMs !== undefined) {
    const valid = typeof timeoutMs === "number" && !Number.isNaN(timeoutMs) && timeoutMs >= 0 && timeoutMs !== Number.POSITIVE_INFINITY;
    if (!valid) throw new RangeError(`timeoutMs: ${timeoutMs}`);
  }
  const own = new AbortController();
  const detach = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const dispose = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    detach.abort();
  };
  const result: LinkedSignal = { signal: own.signal, dispose };
  if (parent !== undefined && parent.aborted) {
    own.abort(abortReason(parent));
    return result;
  }
  parent?.addEventListener(
    "abort",
    () => {
      dispose();
      own.abort(abortReason(parent));
    },
    { once: true, signal: detach.signal },
  );
  if (timeoutMs === undefined) return result;
  // the remainder first, then as many whole steps as the timeout holds
  let wholeSteps = Math.floor(timeoutMs / LONGEST_TIMER);
  const arm = (delay: number) => {
    timer = setTimeout(() => {
      if (wholeSteps > 0) {
        wholeSteps--;
        arm(LONGEST_TIMER);
        return;
      }
      dispose();
      own.abort(new TimeoutError(timeoutMs));
    }, delay);
  };
  arm(timeoutMs - wholeSteps * LONGEST_TIMER);
  return result;
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

/** True for a plain object: its prototype is Object.prototype or null, and it is no array. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object") return false;
  if (!value) return false;
  try {
    const proto = Reflect.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return false;
    return Array.isArray(value) === false;
  } catch {
    return false;
  }
}

/** The JSON object `text` holds (a copy of its fields), or undefined. */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isPlainObject(value)) return undefined;
  return { ...value };
}

/** The default of an exhaustive switch: throws an UnreachableError carrying the value. */
export function assertNever(value: never, what: string): never {
  const unreachable = new UnreachableError(what, value);
  throw unreachable;
}
