// @ts-nocheck — a solution of Chapter 01, checked in place of packages/pi-course/src/async.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
// Written blind: by a learner who saw only the practice folder (the chapter text, the starter, the lab commands' output), first try green in every lab.
// Lab 1.5 was added after the blind run, by the course authors, in the style of the rest of the file.
/**
 * Chapter 01 · TypeScript survival for agent code — the practice starter.
 *
 * The public types and the exported functions are fixed: the tests use them, and so does
 * every later chapter. Every lab's function is a construction site named after its lab.
 * Build them in order: Lab 1.1 deferred, errorMessage, tick → 1.2 Listeners → 1.3
 * abortReason, abortable → 1.4 linkedSignal. Add private helpers as you need them; keep the
 * exports and the signatures of the declarations marked 🔨.
 *
 * Run one lab:  npm run lab -w @pi/course -- 1.1
 *
 * Given as it is (no 🔨): `TimeoutError`, the reason a timed-out `linkedSignal` aborts
 * with, and the `Set` that `Listeners` keeps its listeners in.
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
  const promise = new Promise<T>((res, rej) => {
    settle = res;
    fail = rej;
  });
  let done = false;
  return {
    promise,
    resolve(value: T) {
      if (done) return;
      done = true;
      settle(value);
    },
    reject(reason: unknown) {
      if (done) return;
      done = true;
      fail(reason);
    },
    get settled() {
      return done;
    },
  };
}

/**
 * The text of anything thrown: an `Error`'s message (as it is, even empty), otherwise
 * `String(value)`; `"unprintable error"` when even that throws. Never throws itself.
 */
export function errorMessage(error: unknown): string {
  try {
    return error instanceof Error ? String(error.message) : String(error);
  } catch {
    // String() threw (no prototype, a throwing toString), or reading message did, or instanceof (a revoked Proxy).
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
  return new Promise<void>((res) => {
    setImmediate(res);
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
  // 🔨 Lab 1.2：add、size、emit 三处都要写；#listeners 已经给出（Set 按插入顺序遍历，同一个函数只存一次）
  readonly #listeners = new Set<(event: E) => void>();

  /** Adds `listener`; returns the function that removes it. Adding the same function twice adds it once. */
  add(listener: (event: E) => void): Unsubscribe {
    this.#listeners.add(listener);
    // Added by the course authors when §C4.1 came to say that an unsubscribe acts once.
    let gone = false;
    return () => {
      if (gone) return;
      gone = true;
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

/** What an aborted signal rejects with: its `reason` (a `DOMException` named `AbortError` unless the caller chose one). */
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
  const ignore = (): void => {};
  if (signal.aborted) {
    promise.catch(ignore);
    return Promise.reject(abortReason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      signal.removeEventListener("abort", onAbort);
      promise.catch(ignore);
      reject(abortReason(signal));
    };
    signal.addEventListener("abort", onAbort);
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

/**
 * A signal that aborts when `parent` aborts (with the parent's reason) or, if `timeoutMs` is
 * given, when that many milliseconds pass (with a `TimeoutError`) — whichever is first.
 * Call `dispose()` when the work is done: it detaches from the parent and clears the timer,
 * so neither outlives the work (a forgotten timer keeps the process alive; a forgotten
 * listener on a session-long signal is a leak per call). `timeoutMs` must be a finite
 * number ≥ 0, otherwise `RangeError`.
 */
export function linkedSignal(parent: AbortSignal | undefined, timeoutMs?: number): LinkedSignal {
  if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs >= 0)) {
    throw new RangeError(`timeoutMs must be a finite number >= 0, got ${String(timeoutMs)}`);
  }
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const onParentAbort = (): void => {
    dispose();
    controller.abort(parent === undefined ? undefined : abortReason(parent));
  };
  function dispose(): void {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    parent?.removeEventListener("abort", onParentAbort);
  }
  if (parent?.aborted) {
    controller.abort(abortReason(parent));
    return { signal: controller.signal, dispose };
  }
  parent?.addEventListener("abort", onParentAbort);
  if (timeoutMs !== undefined) {
    // setTimeout holds at most 2^31 - 1 ms; a longer timeout is waited for leg by leg.
    const startLeg = (remaining: number): void => {
      const leg = remaining > 0x7fffffff ? 0x7fffffff : remaining;
      timer = setTimeout(() => {
        timer = undefined;
        if (remaining > leg) {
          startLeg(remaining - leg);
          return;
        }
        dispose();
        controller.abort(new TimeoutError(timeoutMs));
      }, leg);
    };
    startLeg(timeoutMs);
  }
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
  try {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
    const proto = Object.getPrototypeOf(value);
    return proto === null || proto === Object.prototype;
  } catch {
    return false;
  }
}

export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    data = undefined;
  }
  if (!isPlainObject(data)) return undefined;
  return data;
}

export function assertNever(value: never, what: string): never {
  throw new UnreachableError(what, value);
}
