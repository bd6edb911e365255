// @ts-nocheck — checked inside the course package (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there), where it replaces async.ts.
/**
 * Chapter 01, solution B: written from the chapter text alone, in classes and arrays.
 * `deferred` returns an instance of a private class; `Listeners` keeps an array of entries
 * of its own (the given Set goes unused); `abortable` settles through one `finish` helper;
 * `linkedSignal` keeps its timer and listener in `let` variables.
 * Lab 1.5 (added with the lab, written from its section): the guard looks the prototype up in
 * a set of the two allowed ones; `parseJsonObject` returns from inside its `try`.
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
  #settled = false;
  #resolve!: (value: T) => void;
  #reject!: (reason: unknown) => void;

  constructor() {
    this.promise = new Promise<T>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  get settled(): boolean {
    return this.#settled;
  }

  resolve(value: T): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#resolve(value);
  }

  reject(reason: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#reject(reason);
  }
}

/** A promise settled from outside; the first call decides. */
export function deferred<T>(): Deferred<T> {
  return new Settleable<T>();
}

/** The text of anything thrown; never throws. */
export function errorMessage(error: unknown): string {
  try {
    if (!(error instanceof Error)) {
      return String(error);
    }
    const message: unknown = error.message;
    return typeof message === "string" ? message : String(message);
  } catch {
    return "unprintable error";
  }
}

/** One turn of the event loop, through setImmediate. */
export function tick(): Promise<void> {
  return new Promise((resolve) => {
    setImmediate(resolve);
  });
}

// ── Lab 1.2 · Listeners：按顺序通知，谁也拖不垮谁 ──

/** Removes a listener added with `Listeners.add`. Calling it twice is harmless. */
export type Unsubscribe = () => void;

interface Entry<E> {
  listener: (event: E) => void;
  active: boolean;
}

/** A typed set of listeners for one kind of event. */
export class Listeners<E> {
  #entries: Entry<E>[] = [];
  /** Each function's one entry: a function added back gets its old entry again, so an emit under way finds it active. */
  readonly #entryOf = new WeakMap<(event: E) => void, Entry<E>>();

  /** Adds `listener`; returns the function that removes it (once). */
  add(listener: (event: E) => void): Unsubscribe {
    let entry = this.#entryOf.get(listener);
    if (entry === undefined) {
      entry = { listener, active: false };
      this.#entryOf.set(listener, entry);
    }
    if (!entry.active) {
      entry.active = true;
      this.#entries.push(entry);
    }
    const mine = entry;
    let used = false;
    return () => {
      if (used) return;
      used = true;
      mine.active = false;
      const index = this.#entries.indexOf(mine);
      if (index !== -1) this.#entries.splice(index, 1);
    };
  }

  /** How many listeners are added now. */
  get size(): number {
    return this.#entries.length;
  }

  /** Calls every listener with `event`; returns the errors they threw, in order. */
  emit(event: E): unknown[] {
    const errors: unknown[] = [];
    const current = this.#entries.slice();
    for (let i = 0; i < current.length; i++) {
      const entry = current[i]!;
      if (!entry.active) continue;
      try {
        entry.listener(event);
      } catch (error) {
        errors.push(error);
      }
    }
    return errors;
  }
}

// ── Lab 1.3 · abortable：中止只停下等待，不留监听 ──

/** What an aborted signal rejects with: its `reason`. */
export function abortReason(signal: AbortSignal): unknown {
  const reason: unknown = signal.reason;
  return reason === undefined ? new DOMException("This operation was aborted", "AbortError") : reason;
}

/** Waits for `promise` or the abort of `signal`, whichever is first; leaves no listener. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    let done = false;
    const finish = (settle: () => void) => {
      if (done) return;
      done = true;
      signal.removeEventListener("abort", onAbort);
      settle();
    };
    function onAbort(): void {
      finish(() => reject(abortReason(signal!)));
    }
    promise.then(
      (value) => finish(() => resolve(value)),
      (error: unknown) => finish(() => reject(error)),
    );
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener("abort", onAbort);
  });
}

// ── Lab 1.4 · linkedSignal：跟随、超时、收拾干净 ──

/** The longest delay a Node timer holds: a longer one fires after 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

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
    if (!Number.isFinite(timeoutMs)) throw new RangeError(`timeoutMs must be finite, got ${timeoutMs}`);
    if (timeoutMs < 0) throw new RangeError(`timeoutMs must be >= 0, got ${timeoutMs}`);
  }
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let listening = false;
  function detach(): void {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (listening) {
      listening = false;
      parent!.removeEventListener("abort", onParentAbort);
    }
  }
  function onParentAbort(): void {
    detach();
    controller.abort(abortReason(parent!));
  }
  if (parent?.aborted === true) {
    controller.abort(abortReason(parent));
  } else {
    if (parent !== undefined) {
      parent.addEventListener("abort", onParentAbort);
      listening = true;
    }
    if (timeoutMs !== undefined) {
      const ms = timeoutMs;
      let left = ms;
      const arm = (): void => {
        const leg = Math.min(left, MAX_TIMER_MS);
        left -= leg;
        timer = setTimeout(() => {
          if (left > 0) return arm();
          timer = undefined;
          detach();
          controller.abort(new TimeoutError(ms));
        }, leg);
      };
      arm();
    }
  }
  return { signal: controller.signal, dispose: detach };
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

const PLAIN_PROTOTYPES: ReadonlySet<unknown> = new Set<unknown>([Object.prototype, null]);

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  try {
    return !Array.isArray(value) && PLAIN_PROTOTYPES.has(Object.getPrototypeOf(value));
  } catch {
    return false;
  }
}

export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (isPlainObject(value)) return value;
  } catch {
    // not JSON at all
  }
  return undefined;
}

export function assertNever(value: never, what: string): never {
  throw new UnreachableError(what, value as unknown);
}
