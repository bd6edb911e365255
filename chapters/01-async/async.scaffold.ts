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

// scaffold: after Deferred
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
function deferred() {
  // 🔨 Lab 1.1：deferred。课文第 3 节，规则见附录 §C3.1
  throw labError("Lab 1.1 async basics");
}

/**
 * The text of anything thrown: an `Error`'s message (as it is, even empty; `String(message)`
 * when it is no string), otherwise `String(value)`; `"unprintable error"` when any of that
 * throws (a throwing `message` getter or `toString`, no prototype, a revoked Proxy, on which
 * even `instanceof` throws). Always a string; never throws itself.
 */
function errorMessage() {
  // 🔨 Lab 1.1：errorMessage。课文第 3 节，规则见附录 §C3.2
  void error;
  throw labError("Lab 1.1 async basics");
}

/**
 * Yields to the event loop once (a macrotask, after pending I/O callbacks). Producers that
 * emit many events use it between events, so a consumer gets the chance to react (abort,
 * say) before the next one is produced. It uses `setImmediate`, not a timer, so it still
 * yields when a test mocks `setTimeout`.
 */
function tick() {
  // 🔨 Lab 1.1：tick。课文第 3 节的表，规则见附录 §C3.3
  throw labError("Lab 1.1 async basics");
}

/**
 * A typed set of listeners for one kind of event.
 *
 * Guarantees: listeners run in the order they were added; a listener added during an
 * emit first hears the next event; one removed during an emit, before its turn, is not
 * called (one removed and added back before its turn is on the list at its turn: it is
 * called, once, at its old place); a throwing listener never stops the others. `emit` never throws: it returns
 * what the listeners threw, so its owner decides what a failing listener means.
 */
class Listeners {
  // 🔨 Lab 1.2：add、size、emit 三处都要写。课文第 4 节，规则见附录 §C4；#listeners 已经给出
  readonly #listeners;

  /**
   * Adds `listener`; returns the function that removes it. Adding the same function twice adds it
   * once. Each returned function acts once: called again, it does nothing, even when the same
   * function has been added back since (that add returned an unsubscribe of its own).
   */
  add() {
    // 🔨 Lab 1.2：add（§C4.1）
    void listener;
    void this.#listeners;
    throw labError("Lab 1.2 listeners");
  }

  /** How many listeners are added now (a function added twice counts once). */
  get size() {
    throw labError("Lab 1.2 listeners");
  }

  /** Calls every listener with `event`; returns the errors they threw, in order (empty when none did). */
  emit() {
    // 🔨 Lab 1.2：emit（§C4.1–§C4.3；第 4 节的表说的是 emit 期间名单变了怎么办）
    void event;
    throw labError("Lab 1.2 listeners");
  }
}

/**
 * What an aborted signal rejects with: its `reason` (a `DOMException` named `AbortError` unless
 * the caller chose one). Only `undefined` is replaced: `null` is a reason like any other.
 */
function abortReason() {
  // 🔨 Lab 1.3：abortReason。课文第 5 节，规则见附录 §C5.1
  void signal;
  throw labError("Lab 1.3 abortable");
}

/**
 * Waits for `promise`, or rejects with the signal's reason as soon as `signal` aborts,
 * whichever comes first. The abort listener is removed once either happens, so a
 * long-lived signal does not collect one listener per wait. Aborting does not stop the
 * work behind `promise` (nothing can, from outside): it only stops the waiting, and a
 * later failure of that abandoned work is caught here, never an unhandled rejection.
 * On a signal that is already aborted it rejects at once and adds no listener.
 */
function abortable() {
  // 🔨 Lab 1.3：abortable。课文第 5 节的三种起点，规则见附录 §C5
  void promise;
  void signal;
  throw labError("Lab 1.3 abortable");
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
function linkedSignal() {
  // 🔨 Lab 1.4：linkedSignal。课文第 6 节（包括“分段”那一段），规则见附录 §C6
  void parent;
  void timeoutMs;
  throw labError("Lab 1.4 linked signal");
}

/**
 * True for a plain object, the kind `JSON.parse` makes: not `null`, not an array (not even one
 * whose prototype was replaced), and its prototype is `Object.prototype` or `null`. A class
 * instance (`Date`, `Map`, an `Error`), a boxed primitive, a function or an object that inherits
 * from another object is not one. Never throws: a value on which the check itself throws (a
 * revoked Proxy) is not a plain object. Narrows to `Record<string, unknown>`: each field is
 * still `unknown` until it is checked in turn.
 */
function isPlainObject() {
  // 🔨 Lab 1.5：isPlainObject。课文第 7 节，规则见附录 §C7.1
  void value;
  throw labError("Lab 1.5 narrowing");
}

/**
 * The JSON object that `text` holds, or `undefined` when it holds none: text that is not JSON
 * (cut off, empty) and JSON that is not an object (`[]`, `null`, `42`, `"x"`) alike. Never
 * throws. The boundary where text from the network or from a model becomes a value the
 * code may read, field by field.
 */
function parseJsonObject() {
  // 🔨 Lab 1.5：parseJsonObject。课文第 7 节，规则见附录 §C7.2
  void text;
  throw labError("Lab 1.5 narrowing");
}

/**
 * The `default` of a `switch` over a tagged union: `value` has type `never` only when every
 * member has its `case`, so a member added to the union and forgotten here fails the build.
 * At run time it throws an `UnreachableError` carrying `value` (one that reached it through a
 * cast, or from a caller the compiler never saw); it never returns.
 */
function assertNever() {
  // 🔨 Lab 1.5：assertNever。课文第 7 节，规则见附录 §C7.3
  void value;
  void what;
  throw labError("Lab 1.5 narrowing");
}
