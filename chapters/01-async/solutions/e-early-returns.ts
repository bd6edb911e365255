// @ts-nocheck — checked inside the course package (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there), where it replaces async.ts.
/**
 * Chapter 01, solution E: written from the chapter text alone, with early returns and plain
 * arrays. `deferred` is a class whose `resolve`/`reject` are arrow-function fields;
 * `errorMessage` is a chain of early returns; `Listeners` keeps an array of functions,
 * de-duplicated with `includes`, and emits with `forEach` over a copy; `abortable` settles
 * through one `cleanup` in a promise executor; `linkedSignal` counts the time left down in a
 * `let` and validates with `!(timeoutMs >= 0)`.
 * Lab 1.5 (added with the lab, written from its section): the guard is a chain of early
 * returns; `parseJsonObject` too.
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

class OutsidePromise<T> {
  #done = false;
  #fulfil: (value: T) => void = () => {};
  #fail: (reason: unknown) => void = () => {};
  readonly promise = new Promise<T>((fulfil, fail) => {
    this.#fulfil = fulfil;
    this.#fail = fail;
  });

  get settled(): boolean {
    return this.#done;
  }

  resolve = (value: T): void => {
    if (this.#done) return;
    this.#done = true;
    this.#fulfil(value);
  };

  reject = (reason: unknown): void => {
    if (this.#done) return;
    this.#done = true;
    this.#fail(reason);
  };
}

/** A promise settled from outside; the first call decides. */
export function deferred<T>(): Deferred<T> {
  return new OutsidePromise<T>();
}

/** The text of anything thrown; never throws. */
export function errorMessage(error: unknown): string {
  let isError: boolean;
  try {
    isError = error instanceof Error;
  } catch {
    return "unprintable error";
  }
  if (!isError) return printable(error);
  let message: unknown;
  try {
    message = (error as Error).message;
  } catch {
    return "unprintable error";
  }
  return printable(message);
}

function printable(value: unknown): string {
  try {
    return String(value);
  } catch {
    return "unprintable error";
  }
}

/** One turn of the event loop. */
export function tick(): Promise<void> {
  let done!: () => void;
  const turned = new Promise<void>((resolve) => {
    done = resolve;
  });
  setImmediate(() => done());
  return turned;
}

// ── Lab 1.2 · Listeners：按顺序通知，谁也拖不垮谁 ──

/** Removes a listener added with `Listeners.add`. Calling it twice is harmless. */
export type Unsubscribe = () => void;

/** A typed set of listeners for one kind of event. */
export class Listeners<E> {
  readonly #listeners = new Set<(event: E) => void>();
  #list: ((event: E) => void)[] = [];

  /** Adds `listener`; returns the function that removes it. */
  add(listener: (event: E) => void): Unsubscribe {
    void this.#listeners;
    if (!this.#list.includes(listener)) this.#list.push(listener);
    let calls = 0;
    return () => {
      calls++;
      if (calls > 1) return;
      const at = this.#list.indexOf(listener);
      if (at < 0) return;
      this.#list.splice(at, 1);
    };
  }

  /** How many listeners are added now. */
  get size(): number {
    return this.#list.length;
  }

  /** Calls every listener with `event`; returns the errors they threw, in order. */
  emit(event: E): unknown[] {
    const errors: unknown[] = [];
    this.#list.slice().forEach((listener) => {
      if (!this.#list.includes(listener)) return;
      try {
        listener(event);
      } catch (error) {
        errors.push(error);
      }
    });
    return errors;
  }
}

// ── Lab 1.3 · abortable：中止只停下等待，不留监听 ──

/** What an aborted signal rejects with: its `reason`. */
export function abortReason(signal: AbortSignal): unknown {
  const { reason } = signal;
  if (typeof reason === "undefined") return new DOMException("This operation was aborted", "AbortError");
  return reason;
}

const ignore = () => {};

/** Waits for `promise` or the abort of `signal`, whichever is first; leaves no listener. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (typeof signal === "undefined") return promise;
  if (signal.aborted) {
    promise.catch(ignore);
    return Promise.reject(abortReason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const cleanup = () => signal.removeEventListener("abort", onAbort);
    const onAbort = () => {
      cleanup();
      promise.catch(ignore);
      reject(abortReason(signal));
    };
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        cleanup();
        resolve(value);
      },
      (error: unknown) => {
        cleanup();
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

/** A signal that follows `parent` and times out after `timeoutMs`; `dispose` leaves nothing behind. */
export function linkedSignal(parent: AbortSignal | undefined, timeoutMs?: number): LinkedSignal {
  if (timeoutMs !== undefined) {
    if (!(timeoutMs >= 0)) throw new RangeError(`timeoutMs must be >= 0, got ${timeoutMs}`);
    if (timeoutMs === Number.POSITIVE_INFINITY) throw new RangeError("timeoutMs must be finite");
  }
  const controller = new AbortController();
  if (parent !== undefined && parent.aborted) {
    controller.abort(abortReason(parent));
    return { signal: controller.signal, dispose: () => {} };
  }
  let timer: ReturnType<typeof setTimeout> | null = null;
  const dispose = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (parent !== undefined) parent.removeEventListener("abort", onParentAbort);
  };
  const onParentAbort = () => {
    dispose();
    controller.abort(abortReason(parent as AbortSignal));
  };
  if (parent !== undefined) parent.addEventListener("abort", onParentAbort, { once: true });
  if (timeoutMs === undefined) return { signal: controller.signal, dispose };
  let left = timeoutMs;
  const next = () => {
    const wait = left > 2147483647 ? 2147483647 : left;
    left = left - wait;
    timer = setTimeout(() => {
      timer = null;
      if (left > 0) {
        next();
        return;
      }
      dispose();
      controller.abort(new TimeoutError(timeoutMs));
    }, wait);
  };
  next();
  return { signal: controller.signal, dispose };
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

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null) return false;
  if (typeof value !== "object") return false;
  let proto: unknown;
  try {
    if (Array.isArray(value)) return false;
    proto = Object.getPrototypeOf(value);
  } catch {
    return false;
  }
  if (proto === null) return true;
  return proto === Object.prototype;
}

export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isPlainObject(parsed)) return undefined;
  return parsed;
}

export function assertNever(value: never, what: string): never {
  throw new UnreachableError(what, value);
}
