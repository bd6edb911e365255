/**
 * Chapter 02 labs · the event stream. Fifteen tests in five labs (4, 3, 3, 2, 3); every name
 * starts with its lab id, so one lab runs alone with
 *
 *   npm run lab -w @pi/course -- 2.1
 *
 * Every check runs under `rule("§C…：…")`, naming the rule of the contract appendix of
 * chapters/02-event-stream/README.md that it checks. Everything is observed through the public
 * class only: what `push`, `end`, `fail` and `closed` say, what the reader's `next()` gives,
 * what `result()` settles to, the listeners on a signal (`events.getEventListeners`). A read
 * that never ends is looked at after a few turns of the event loop and reported as
 * "pending", so a stream that hangs fails its test instead of hanging the file. No check
 * depends on the wall clock: a wait that must never time out is checked on node:test's fake
 * clock, every timer run. Rules that hold for every input (each event once, in order, the very
 * value pushed; any result, error or abort reason passed on as it is; leaving at any moment)
 * are also checked as properties with `holds()` (fast-check, fixed seed), beside the examples
 * that tell the story. The tests of a lab use nothing of a later lab, so each lab turns green
 * on its own, in order.
 */
import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import test from "node:test";
import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { EventStream, EventStreamError } from "../src/event-stream.js";
import { holds } from "./support/properties.js";
import { isScaffold, rule } from "./support/rules.js";

// ---------------------------------------------------------------------------
// Outcomes, reads, the running example
// ---------------------------------------------------------------------------

/** One turn of the real event loop. */
const realTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

type Outcome<T> = { status: "fulfilled"; value: T } | { status: "rejected"; reason: unknown } | { status: "pending" };

/**
 * How `watched` stands after at most `turns` turns of the event loop: a wait that never ends
 * is "pending", not a hung test. A starter's scaffold error is thrown on (it means "not
 * written yet", whichever promise carried it).
 */
async function outcomeOf<T>(watched: Promise<T>, turns = 3): Promise<Outcome<T>> {
  let outcome: Outcome<T> = { status: "pending" };
  watched.then(
    (fulfilled) => {
      outcome = { status: "fulfilled", value: fulfilled };
    },
    (rejected: unknown) => {
      outcome = { status: "rejected", reason: rejected };
    },
  );
  for (let i = 0; i < turns && outcome.status === "pending"; i++) await realTurn();
  const seen = outcome as Outcome<T>; // set by the callbacks above, which TypeScript does not follow
  if (seen.status === "rejected" && isScaffold(seen.reason)) throw seen.reason;
  return seen;
}

/**
 * How each of `watched` stands after at most `turns` turns of the event loop (all watched
 * at once: one wait for the lot). A scaffold error is thrown on, as in `outcomeOf`.
 */
async function outcomesOf<T>(watched: readonly Promise<T>[], turns = 3): Promise<Outcome<T>[]> {
  const outcomes: Outcome<T>[] = watched.map(() => ({ status: "pending" }));
  watched.forEach((promise, i) => {
    promise.then(
      (fulfilled) => {
        outcomes[i] = { status: "fulfilled", value: fulfilled };
      },
      (rejected: unknown) => {
        outcomes[i] = { status: "rejected", reason: rejected };
      },
    );
  });
  for (let i = 0; i < turns && outcomes.some((outcome) => outcome.status === "pending"); i++) await realTurn();
  for (const outcome of outcomes) if (outcome.status === "rejected" && isScaffold(outcome.reason)) throw outcome.reason;
  return outcomes;
}

/** A value as a failure message shows it (`undefined`, `""`, `{"delta":"我先"}`). */
const show = (value: unknown): string => fc.stringify(value);

/** Fails when the stream froze, sealed or closed a value it was given to pass on: 原样 means it does not touch it. */
function assertUntouched(value: unknown, what: string): void {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return;
  assert.ok(Object.isExtensible(value), `${what} ${show(value)} 被冻结（或封住）了：流只是把它交出去，不该改动它`);
}

/** What a failure adds when a value looks right and still is not the one: a copy has the content, not the identity. */
const copyNote = (got: unknown, wanted: unknown): string =>
  !Object.is(got, wanted) && isDeepStrictEqual(got, wanted) ? "：内容一样，却不是同一个对象（是副本）" : "";

/** What one call of `next()` gave: an event, the end (`done`), an error, or nothing yet. */
type Step<E> = { event: E } | { done: true } | { threw: unknown } | { pending: true };

function stepOf<E>(outcome: Outcome<IteratorResult<E>>): Step<E> {
  if (outcome.status === "pending") return { pending: true };
  if (outcome.status === "rejected") return { threw: outcome.reason };
  return outcome.value.done === true ? { done: true } : { event: outcome.value.value };
}

/** A step as a failure message shows it: the event, `done`, `（还在等）` or `（抛出 …）`. */
function shownStep<E>(got: Step<E>): string {
  if ("event" in got) return show(got.event);
  if ("done" in got) return "done";
  if ("threw" in got) return `（抛出 ${show(got.threw)}）`;
  return "（还在等）";
}

/** Calls `next()` once and reports what it gave. */
async function step<E>(reader: AsyncIterator<E>): Promise<Step<E>> {
  return stepOf(await outcomeOf(reader.next()));
}

/** What a `for await` loop over a stream saw: the events, and how it stopped (or that it has not stopped yet). */
interface Reading<E> {
  events: E[];
  end: "done" | "threw" | "pending";
  error?: unknown;
}

/** More events than any test pushes: a reader that gets this many is looping on one event. */
const READ_LIMIT = 100;

/**
 * Starts reading `stream` the way `for await` does (one iterator, then `next()` until `done`
 * or an error), as the example's screen does; `seen()` reports what it has read so far,
 * after `turns` turns of the event loop. It stops by itself after `READ_LIMIT` events, so a
 * stream that hands out the same event forever fails the test instead of spinning.
 */
function startReading<E>(stream: AsyncIterable<E>): { seen(turns?: number): Promise<Reading<E>> } {
  const events: E[] = [];
  const loop = (async () => {
    const reader = stream[Symbol.asyncIterator]();
    while (events.length < READ_LIMIT) {
      const next = await reader.next();
      if (next.done === true) return "done";
      events.push(next.value);
    }
    return "endless";
  })();
  loop.catch(() => {}); // how the loop stopped is what seen() reports, however late it is asked
  return {
    async seen(turns = 5) {
      const outcome = await outcomeOf(loop, turns);
      if (outcome.status === "pending" || (outcome.status === "fulfilled" && outcome.value === "endless")) return { events: [...events], end: "pending" };
      if (outcome.status === "rejected") return { events: [...events], end: "threw", error: outcome.reason };
      return { events: [...events], end: "done" };
    },
  };
}

/** Reads `stream` as `for await` does, to its end (or for a few turns), and reports what the reader saw. */
function readAll<E>(stream: AsyncIterable<E>, turns = 5): Promise<Reading<E>> {
  return startReading(stream).seen(turns);
}

/**
 * Someone waits for `stream`'s result from the start, as the agent loop does: its failure
 * is then never unhandled, whether or not the stream guards it. Every test that makes a
 * stream fail does this, except the one that checks the guard itself (§C5.4).
 */
function askForResult<E, R>(stream: EventStream<E, R>): void {
  stream.result().catch(() => {});
}

/** The abort listeners attached to `signal` right now. */
const abortListeners = (signal: AbortSignal) => getEventListeners(signal, "abort").length;

/** The example's events: one model answer, in three pieces. */
interface Piece {
  delta: string;
}
const ANSWER = "我先读一下 a.ts。";
const pieces = (): Piece[] => [{ delta: "我先" }, { delta: "读一下" }, { delta: " a.ts。" }];

/** Values easily mistaken for "nothing": each is a value like any other (an event, a result, an error, a reason). */
const FALSY_VALUES: readonly unknown[] = [undefined, null, 0, -0, "", false, Number.NaN];

/** Any value at all: what fast-check makes up, and the falsy ones above more often than chance would give them. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(fc.anything(), fc.constantFrom(...FALSY_VALUES));

/** Objects that a property pushes more than once: the same object twice is two events. */
const SHARED: readonly Piece[] = [{ delta: "同一个对象" }, { delta: "又是它" }];

// ---------------------------------------------------------------------------
// Lab 2.1 · 边推边读：一个写者，一个读者
// ---------------------------------------------------------------------------

test("Lab 2.1 · 先推后读：按推入的顺序交付，每个一次，原样", async (t) => {
  const stream = new EventStream<Piece, string>();
  const [first, second, third] = pieces() as [Piece, Piece, Piece];
  await rule("§C3.1：开着的流上 push 返回 true", () => {
    assert.equal(stream.push(first), true);
    assert.equal(stream.push(second), true);
  });
  const reader = stream[Symbol.asyncIterator]();
  await rule("§C3.1：读者开始之前推入的事件都留着，按推入的顺序交付", async () => {
    assert.deepEqual(await step(reader), { event: first });
    stream.push(third);
    assert.deepEqual(await step(reader), { event: second });
    assert.deepEqual(await step(reader), { event: third });
  });
  await rule("§C3.1：交给读者的是推入的那个对象本身，不是副本，也没被冻结", async () => {
    const piece = { delta: "原样" };
    stream.push(piece);
    const got = await step(reader);
    assert.ok("event" in got, `next() 应当给出一个事件，实际是 ${JSON.stringify(got)}`);
    assert.equal(got.event, piece);
    assertUntouched(piece, "推入的事件");
  });
  await rule("§C3.1：每一次 push 都是一个事件：同一个对象推两次就交付两次；undefined、null、0、空字符串、false 也是事件", async () => {
    const again = { delta: "再说一遍" };
    const values: unknown[] = [again, again, undefined, null, 0, "", false];
    const other = new EventStream<unknown, string>();
    for (const value of values) assert.equal(other.push(value), true, `push(${show(value)}) 应当返回 true`);
    const otherReader = other[Symbol.asyncIterator]();
    const steps = [];
    for (let i = 0; i <= values.length; i++) steps.push(await step(otherReader));
    assert.deepEqual(steps, [...values.map((event) => ({ event })), { pending: true }]);
  });
  await rule("§C3.1：每个事件只交付一次：都读完了而流还开着，next() 就等着，不结束也不出错；等多久都一样（流没有超时）", async () => {
    t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
    try {
      const waiting = reader.next();
      assert.deepEqual(stepOf(await outcomeOf(waiting)), { pending: true });
      t.mock.timers.runAll();
      assert.deepEqual(stepOf(await outcomeOf(waiting)), { pending: true }, "假时钟走完了每一个定时器（5 秒的、2^31 毫秒的都算），next() 应当还在等");
    } finally {
      t.mock.timers.reset();
    }
  });
});

test("Lab 2.1 · 等着的读者：下一次 push 直接交给它", async () => {
  const stream = new EventStream<Piece, string>();
  const reader = stream[Symbol.asyncIterator]();
  const [first, second, third] = pieces() as [Piece, Piece, Piece];
  await rule("§C3.2：读者先到：next() 等着；下一次 push 把事件直接交给这个 next()", async () => {
    const waiting = reader.next();
    assert.deepEqual(stepOf(await outcomeOf(waiting)), { pending: true });
    assert.equal(stream.push(first), true);
    assert.deepEqual(stepOf(await outcomeOf(waiting)), { event: first });
  });
  await rule("§C3.2：几个 next() 一起等着：按调用的顺序，各得一个事件", async () => {
    const a = reader.next();
    const b = reader.next();
    const c = reader.next();
    stream.push(first);
    stream.push(second);
    stream.push(third);
    const got = [stepOf(await outcomeOf(a)), stepOf(await outcomeOf(b)), stepOf(await outcomeOf(c))];
    const wanted = [{ event: first }, { event: second }, { event: third }];
    if (!isDeepStrictEqual(got, wanted))
      assert.fail(`三个一起等着的 next() 应当依次拿到 ${wanted.map(shownStep).join("、")}，实际拿到 ${got.map(shownStep).join("、")}`);
  });
  await rule("§C3.2：一起等着的 next() 没有数目上限：一万个 next() 等着，接下来的一万次 push 按调用的顺序各交一个", async () => {
    const count = 10_000;
    const many = new EventStream<number, string>();
    const manyReader = many[Symbol.asyncIterator]();
    const waiting = Array.from({ length: count }, () => manyReader.next());
    for (let i = 0; i < count; i++) many.push(i);
    const steps = (await outcomesOf(waiting)).map(stepOf);
    const wrong = steps.findIndex((got, i) => !("event" in got) || got.event !== i);
    assert.equal(wrong, -1, `第 ${wrong + 1} 个 next() 拿到的是 ${show(steps[wrong])}，应当是第 ${wrong + 1} 次推入的 ${wrong}`);
  });
  await rule("§C3.2：直接交出去的事件不再排进队列：下一个 next() 拿到的是新推入的，没有新的就等着", async () => {
    const waiting = reader.next();
    stream.push(first);
    assert.deepEqual(stepOf(await outcomeOf(waiting)), { event: first });
    stream.push(second);
    assert.deepEqual(await step(reader), { event: second });
    assert.deepEqual(await step(reader), { pending: true });
  });
  await holds(
    '§C3.2、§C3.1：push 和 next() 任意交错：第 n 次 next() 拿到第 n 次 push 的那个值本身（同一个对象，不是副本；undefined、0、""、推两次的同一个对象也一样），多出来的 next() 等着',
    fc.asyncProperty(
      fc.array(fc.oneof(fc.constant("next" as const), fc.record({ push: fc.oneof(anyValue, fc.constantFrom(...SHARED)) })), { maxLength: 24 }),
      async (ops) => {
        const interleaved = new EventStream<unknown, string>();
        const interleavedReader = interleaved[Symbol.asyncIterator]();
        const pushed: unknown[] = [];
        const reads: Promise<IteratorResult<unknown>>[] = [];
        for (const op of ops) {
          if (op === "next") reads.push(interleavedReader.next());
          else {
            assert.equal(interleaved.push(op.push), true, `push(${show(op.push)}) 应当返回 true`);
            pushed.push(op.push);
          }
        }
        const steps = (await outcomesOf(reads)).map(stepOf);
        steps.forEach((got, i) => {
          if (i >= pushed.length) assert.deepEqual(got, { pending: true }, `推入的 ${pushed.length} 个都交出去了，第 ${i + 1} 次 next() 应当等着`);
          else if (!("event" in got) || !Object.is(got.event, pushed[i]))
            assert.fail(
              `第 ${i + 1} 次 next() 应当拿到第 ${i + 1} 次推入的那个值本身 ${show(pushed[i])}，实际拿到 ${show(got)}${"event" in got ? copyNote(got.event, pushed[i]) : ""}`,
            );
        });
        for (const value of pushed) assertUntouched(value, "推入的事件");
      },
    ),
  );
});

test("Lab 2.1 · push 从不等待：没人读也照收，不丢、不拒", async () => {
  const count = 20_000;
  const stream = new EventStream<number, string>();
  await rule(`§C3.3：没有读者时 push 也返回 true：连推 ${count} 个，每次都是 true`, () => {
    const refused: number[] = [];
    for (let i = 0; i < count; i++) if (stream.push(i) !== true) refused.push(i);
    assert.deepEqual(refused.slice(0, 3), [], `有 ${refused.length} 次 push 没有返回 true`);
  });
  await rule(`§C3.3：队列没有上限：${count} 个事件一个不丢，按顺序交付`, async () => {
    const reader = stream[Symbol.asyncIterator]();
    const seen: number[] = [];
    const reading = (async () => {
      for (let i = 0; i < count; i++) {
        const next = await reader.next();
        if (next.done === true) return;
        seen.push(next.value);
      }
    })();
    await outcomeOf(reading, 20);
    assert.equal(seen.length, count, `读到 ${seen.length} 个`);
    const outOfOrder = seen.findIndex((value, index) => value !== index);
    assert.equal(outOfOrder, -1, `第 ${outOfOrder} 个事件是 ${seen[outOfOrder]}`);
  });
});

test("Lab 2.1 · 只有一个读者：第二个当场被拒绝", async () => {
  await rule("§C3.4：已经有读者时（哪怕它还没调用 next）再要迭代器：当场抛出 EventStreamError，code 是 STREAM_ALREADY_CONSUMED", () => {
    const stream = new EventStream<Piece, string>();
    stream[Symbol.asyncIterator]();
    assert.throws(
      () => stream[Symbol.asyncIterator](),
      (error: unknown) => error instanceof EventStreamError && error.code === "STREAM_ALREADY_CONSUMED",
    );
  });
  await rule("§C3.4：for await 也是要迭代器：一个读者在读时，第二个 for await 立刻失败", async () => {
    const stream = new EventStream<Piece, string>();
    stream[Symbol.asyncIterator]();
    const second = await readAll(stream);
    assert.equal(second.end, "threw", "第二个 for await 应当失败");
    assert.equal((second.error as { code?: unknown }).code, "STREAM_ALREADY_CONSUMED");
  });
  await rule("§C3.4：被拒绝的第二个读者不打扰第一个：第一个照常读到每个事件", async () => {
    const stream = new EventStream<Piece, string>();
    const [first, second] = pieces() as [Piece, Piece];
    stream.push(first);
    const reader = stream[Symbol.asyncIterator]();
    assert.throws(() => stream[Symbol.asyncIterator]());
    stream.push(second);
    assert.deepEqual([await step(reader), await step(reader)], [{ event: first }, { event: second }]);
  });
});

// ---------------------------------------------------------------------------
// Lab 2.2 · end 与 result：读完剩下的，再交出结果
// ---------------------------------------------------------------------------

test("Lab 2.2 · end 之后：先读完排着的事件，再结束；result 给出最终结果", async () => {
  const stream = new EventStream<Piece, string>();
  const all = pieces();
  for (const piece of all) stream.push(piece);
  await rule("§C4.2：流还开着时，result() 还没有结果", async () => {
    assert.deepEqual(await outcomeOf(stream.result()), { status: "pending" });
  });
  await rule("§C4.1：end 返回 true，closed 当场变成 true", () => {
    assert.equal(stream.closed, false);
    assert.equal(stream.end(ANSWER), true);
    assert.equal(stream.closed, true);
  });
  const reader = stream[Symbol.asyncIterator]();
  await rule("§C4.1：end 之前排着的事件照样按顺序交付；读完之后 next() 给出 done，之后每次都是 done", async () => {
    const steps = [];
    for (let i = 0; i < all.length + 2; i++) steps.push(await step(reader));
    assert.deepEqual(steps, [...all.map((event) => ({ event })), { done: true }, { done: true }]);
  });
  await rule("§C4.2：end 之后，result() 兑现为传给 end 的那个值", async () => {
    assert.deepEqual(await outcomeOf(stream.result()), { status: "fulfilled", value: ANSWER });
  });
  await holds(
    '§C4.2：end(任何值) 之后，result() 兑现为那个值本身：对象不复制、不冻结，undefined、null、0、"" 也原样',
    fc.asyncProperty(anyValue, async (value) => {
      const ended = new EventStream<Piece, unknown>();
      assert.equal(ended.end(value), true);
      const [outcome] = await outcomesOf([ended.result()]);
      assert.ok(outcome?.status === "fulfilled", `result() 应当兑现，实际是 ${show(outcome)}`);
      assert.ok(
        Object.is(outcome.value, value),
        `result() 应当兑现为传给 end 的那个值本身 ${show(value)}，实际是 ${show(outcome.value)}${copyNote(outcome.value, value)}`,
      );
      assertUntouched(value, "传给 end 的结果");
    }),
  );
});

test("Lab 2.2 · 边推边读到结束：等着的读者随 end 一起结束", async () => {
  const stream = new EventStream<Piece, string>();
  const screen = startReading(stream);
  const all = pieces();
  for (const piece of all) {
    stream.push(piece);
    await realTurn();
  }
  await rule("§C4.1：读者正等着时 end：它的 next() 当场以 done 结束，for await 退出，推过的事件一个不少", async () => {
    assert.equal(stream.end(ANSWER), true);
    assert.deepEqual(await screen.seen(), { events: all, end: "done" });
  });
  await rule("§C4.1：几个 next() 一起等着时 end：每一个都以 done（{ value: undefined, done: true }）结束", async () => {
    const other = new EventStream<Piece, string>();
    const reader = other[Symbol.asyncIterator]();
    const waiting = [reader.next(), reader.next(), reader.next()];
    other.end("");
    const outcomes = [];
    for (const one of waiting) outcomes.push(await outcomeOf(one));
    const steps = outcomes.map(stepOf);
    const wanted: Step<Piece>[] = [{ done: true }, { done: true }, { done: true }];
    if (!isDeepStrictEqual(steps, wanted))
      assert.fail(`三个一起等着的 next() 应当都以 ${wanted.map(shownStep).join("、")} 结束，实际是 ${steps.map(shownStep).join("、")}`);
    assert.deepEqual(
      outcomes,
      [0, 1, 2].map(() => ({ status: "fulfilled", value: { value: undefined, done: true } })),
      "每一个都得到 DONE，也就是 { value: undefined, done: true }：结果只从 result() 拿，不放进 done",
    );
  });
  await rule("§C4.2：只关心结果的一方（agent 循环）：result() 兑现为 end 的值", async () => {
    assert.deepEqual(await outcomeOf(stream.result()), { status: "fulfilled", value: ANSWER });
  });
});

test("Lab 2.2 · 只结束一次：之后的 push 和 end 都返回 false，什么都不变", async () => {
  const stream = new EventStream<Piece, string>();
  const [first, late] = pieces() as [Piece, Piece];
  stream.push(first);
  await rule("§C4.3：end 之后 push 返回 false，这个事件不会交给读者", async () => {
    assert.equal(stream.end("第一次"), true);
    assert.equal(stream.push(late), false);
    const reader = stream[Symbol.asyncIterator]();
    assert.deepEqual([await step(reader), await step(reader)], [{ event: first }, { done: true }]);
  });
  await rule("§C4.3：第二次 end 返回 false：result 仍是第一次的值，closed 仍是 true", async () => {
    assert.equal(stream.end("第二次"), false);
    assert.equal(stream.closed, true);
    assert.deepEqual(await outcomeOf(stream.result()), { status: "fulfilled", value: "第一次" });
  });
});

// ---------------------------------------------------------------------------
// Lab 2.3 · fail：失败也只结束一次
// ---------------------------------------------------------------------------

test("Lab 2.3 · fail 之后：先读完排着的事件，再抛出同一个错误", async () => {
  const stream = new EventStream<Piece, string>();
  const [first, second] = pieces() as [Piece, Piece];
  const lost = new Error("连接断了");
  askForResult(stream);
  stream.push(first);
  stream.push(second);
  await rule("§C5.1：fail 返回 true，closed 当场变成 true", () => {
    assert.equal(stream.fail(lost), true);
    assert.equal(stream.closed, true);
  });
  await rule("§C5.1：fail 之前排着的事件照样交付，然后 for await 抛出 fail 的那个错误本身", async () => {
    const seen = await readAll(stream);
    assert.deepEqual(seen.events, [first, second]);
    assert.equal(seen.end, "threw", "排着的事件读完之后，循环应当抛错");
    assert.equal(seen.error, lost, "抛出的应当是 fail 收到的那个对象");
  });
  await rule("§C5.2：result() 以同一个错误拒绝", async () => {
    const outcome = await outcomeOf(stream.result());
    assert.equal(outcome.status, "rejected");
    assert.equal((outcome as { reason: unknown }).reason, lost);
  });
  await rule("§C5.1、§C5.2：读者正等着时 fail：一起等着的每一个 next() 当场以那个错误拒绝；不是 Error 的值也原样交出，result() 也以它拒绝", async () => {
    const other = new EventStream<Piece, string>();
    askForResult(other);
    const reader = other[Symbol.asyncIterator]();
    const waiting = [reader.next(), reader.next(), reader.next()];
    other.fail("断线");
    assert.deepEqual((await outcomesOf(waiting)).map(stepOf), [{ threw: "断线" }, { threw: "断线" }, { threw: "断线" }], "一起等着的每一个 next() 都以它拒绝");
    assert.deepEqual(await step(reader), { threw: "断线" }, "之后的 next() 也以它拒绝");
    assert.deepEqual(await step(reader), { threw: "断线" }, "之后每一次 next() 都以它拒绝，不是只报一次就变成 done");
    assert.deepEqual(await outcomeOf(other.result()), { status: "rejected", reason: "断线" }, "result() 以同一个值拒绝");
  });
  await holds(
    '§C5.1、§C5.2：fail(任何值)：等着的 next()、之后的 next()、result() 都以那个值本身拒绝：不包装、不冻结，undefined、null、0、"" 也不换成别的错误',
    fc.asyncProperty(anyValue, async (error) => {
      const failed = new EventStream<Piece, string>();
      askForResult(failed);
      const reader = failed[Symbol.asyncIterator]();
      const waiting = reader.next();
      assert.equal(failed.fail(error), true);
      const outcomes = await outcomesOf<unknown>([waiting, reader.next(), failed.result()]);
      ["等着的 next()", "之后的 next()", "result()"].forEach((who, i) => {
        const outcome = outcomes[i];
        assert.ok(
          outcome?.status === "rejected" && Object.is(outcome.reason, error),
          `${who} 应当以 fail 收到的那个值本身 ${show(error)} 拒绝，实际是 ${show(outcome)}${outcome?.status === "rejected" ? copyNote(outcome.reason, error) : ""}`,
        );
      });
      assertUntouched(error, "传给 fail 的错误");
    }),
  );
});

test("Lab 2.3 · 先到先得：end 和 fail 谁先谁算", async () => {
  await rule("§C5.3：end 之后 fail 返回 false：result 仍是 end 的值，读者仍以 done 结束", async () => {
    const stream = new EventStream<Piece, string>();
    stream.end(ANSWER);
    assert.equal(stream.fail(new Error("晚到的失败")), false);
    assert.deepEqual(await outcomeOf(stream.result()), { status: "fulfilled", value: ANSWER });
    assert.deepEqual(await readAll(stream), { events: [], end: "done" });
  });
  await rule("§C5.3：fail 之后 end、push、fail 都返回 false：result 仍以第一个错误拒绝", async () => {
    const stream = new EventStream<Piece, string>();
    const first = new Error("第一个错误");
    stream.fail(first);
    assert.equal(stream.end(ANSWER), false, "end");
    assert.equal(stream.push({ delta: "晚了" }), false, "push");
    assert.equal(stream.fail(new Error("第二个错误")), false, "fail");
    const outcome = await outcomeOf(stream.result());
    assert.equal((outcome as { reason?: unknown }).reason, first);
    const seen = await readAll(stream);
    assert.deepEqual(seen.events, [], "失败之后推的事件不交付");
    assert.equal(seen.error, first);
  });
});

test("Lab 2.3 · 没人问的失败：不是未处理的拒绝，问的时候照样拿到", async () => {
  await rule("§C5.4：没人读、也没人调用 result() 时 fail：不产生未处理的拒绝（unhandledRejection）", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      new EventStream<Piece, string>().fail(new Error("§C5.4：没人问的失败不能变成未处理的拒绝（这一行是那次失败本身）"));
      await realTurn();
      await realTurn();
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
    assert.equal(unhandled.length, 0, `出现了 ${unhandled.length} 个未处理的拒绝`);
  });
  await rule("§C5.4：过一会儿再问：result() 仍以那个错误拒绝", async () => {
    const stream = new EventStream<Piece, string>();
    const later = new Error("稍后才问");
    stream.fail(later);
    await realTurn();
    await realTurn();
    const outcome = await outcomeOf(stream.result());
    assert.equal((outcome as { reason?: unknown }).reason, later);
  });
});

// ---------------------------------------------------------------------------
// Lab 2.4 · 读者提前离开：break 之后
// ---------------------------------------------------------------------------

test("Lab 2.4 · break 之后：读者什么都不再收到，流照常开着", async () => {
  const [first, second, third] = pieces() as [Piece, Piece, Piece];
  await rule("§C6.1：for await 里 break：循环正常退出，不抛错", async () => {
    const stream = new EventStream<Piece, string>();
    stream.push(first);
    stream.push(second);
    const seen: Piece[] = [];
    const loop = (async () => {
      for await (const piece of stream) {
        seen.push(piece);
        break;
      }
    })();
    assert.deepEqual(await outcomeOf(loop), { status: "fulfilled", value: undefined });
    assert.deepEqual(seen, [first]);
  });
  const stream = new EventStream<Piece, string>();
  stream.push(first);
  stream.push(second);
  stream.push(third);
  const reader = stream[Symbol.asyncIterator]();
  await rule("§C6.1：离开之后 next() 一律是 done：还排着的事件不再交付", async () => {
    assert.deepEqual(await step(reader), { event: first });
    await reader.return?.();
    assert.deepEqual([await step(reader), await step(reader)], [{ done: true }, { done: true }]);
  });
  await rule("§C6.2：读者离开不结束流：closed 仍是 false，push 仍返回 true，但这个事件没人收到", async () => {
    assert.equal(stream.closed, false);
    assert.equal(stream.push({ delta: "没人看了" }), true);
    assert.deepEqual(await step(reader), { done: true });
  });
  await rule("§C6.2：生产者照常结束：end 返回 true，result() 兑现为它的值；结束之后 push 返回 false", async () => {
    assert.equal(stream.end(ANSWER), true);
    assert.equal(stream.push({ delta: "结束之后" }), false, "流结束之后 push 返回 false，读者走没走都一样");
    assert.deepEqual(await outcomeOf(stream.result()), { status: "fulfilled", value: ANSWER });
  });
});

test("Lab 2.4 · 离开只有一次：等着的 next 随之结束，不能再来一个读者", async () => {
  const stream = new EventStream<Piece, string>();
  const reader = stream[Symbol.asyncIterator]();
  await rule("§C6.1：离开时还在等的 next()：一起等着的每一个都当场以 done 结束", async () => {
    const waiting = [reader.next(), reader.next(), reader.next()];
    assert.deepEqual(stepOf(await outcomeOf(waiting[0] as Promise<IteratorResult<Piece>>)), { pending: true });
    await reader.return?.();
    assert.deepEqual((await outcomesOf(waiting)).map(stepOf), [{ done: true }, { done: true }, { done: true }]);
  });
  await rule("§C6.3：离开之后再要迭代器：仍然抛出 STREAM_ALREADY_CONSUMED（一个流一辈子只有一个读者）", () => {
    assert.throws(
      () => stream[Symbol.asyncIterator](),
      (error: unknown) => error instanceof EventStreamError && error.code === "STREAM_ALREADY_CONSUMED",
    );
  });
  await rule("§C6.2：离开之后流失败：result() 以那个错误拒绝，离开的读者却不受影响，next() 仍是 done", async () => {
    const lost = new Error("连接断了");
    assert.equal(stream.fail(lost), true);
    const outcome = await outcomeOf(stream.result());
    assert.equal((outcome as { reason?: unknown }).reason, lost);
    assert.deepEqual(await step(reader), { done: true });
  });
  await holds(
    "§C6.1、§C6.2、§C6.3：任何时候离开都一样（排着事件、有 next() 在等、流开着、已结束或已失败，return() 调用一次或几次）：return() 不抛错，之后 next() 一律是 done，不再有读者，流照旧",
    fc.asyncProperty(
      fc.record({
        queued: fc.nat({ max: 4 }),
        reads: fc.nat({ max: 6 }),
        before: fc.constantFrom("open", "ended", "failed"),
        after: fc.constantFrom("nothing", "end", "fail"),
        returns: fc.integer({ min: 1, max: 3 }),
      }),
      async ({ queued, reads, before, after, returns }) => {
        const left = new EventStream<number, string>();
        const lost = new Error("连接断了");
        askForResult(left);
        for (let i = 0; i < queued; i++) left.push(i);
        const leaving = left[Symbol.asyncIterator]();
        const earlier = outcomesOf(Array.from({ length: reads }, () => leaving.next()));
        if (before === "ended") left.end(ANSWER);
        if (before === "failed") left.fail(lost);
        const returned = await outcomesOf(Array.from({ length: returns }, () => leaving.return?.() ?? Promise.reject(new Error("迭代器没有 return()"))));
        for (const [i, outcome] of returned.entries())
          assert.equal(outcome.status, "fulfilled", `第 ${i + 1} 次 return() 应当正常返回，实际是 ${show(outcome)}`);
        // Calls made before leaving: none is left waiting. Each has the event it was owed, the stream's
        // error, or done (whether the leaving or the event reached it first is the solution's own business).
        const fits = (got: Step<number>, i: number) =>
          "done" in got || ("event" in got && got.event === i) || (before === "failed" && "threw" in got && got.threw === lost);
        for (const [i, got] of (await earlier).map(stepOf).entries()) {
          assert.ok(fits(got, i), `离开之前的第 ${i + 1} 次 next() 应当已经落定（done、排着的 ${i}，或者流失败时的那个错误），实际是 ${show(got)}`);
        }
        assert.deepEqual((await outcomesOf([leaving.next(), leaving.next()])).map(stepOf), [{ done: true }, { done: true }], "离开之后 next() 一律是 done");
        assert.throws(
          () => left[Symbol.asyncIterator](),
          (error: unknown) => error instanceof EventStreamError && error.code === "STREAM_ALREADY_CONSUMED",
          "离开之后再要迭代器：仍然抛出 STREAM_ALREADY_CONSUMED",
        );
        assert.equal(left.closed, before !== "open", "读者离开不改变流开着还是关着");
        assert.equal(left.push(99), before === "open", before === "open" ? "流还开着：push 返回 true" : "流已经关了：push 返回 false");
        if (before === "open" && after === "end") assert.equal(left.end(ANSWER), true, "读者走后，写者照常 end");
        if (before === "open" && after === "fail") assert.equal(left.fail(lost), true, "读者走后，写者照常 fail");
        assert.deepEqual((await outcomesOf([leaving.next()])).map(stepOf), [{ done: true }], "离开的读者：next() 仍是 done");
      },
    ),
  );
});

// ---------------------------------------------------------------------------
// Lab 2.5 · 中止：signal 一响，流就关
// ---------------------------------------------------------------------------

/** An abort as a property tries it: any reason (abort(undefined) means "no reason"), with or without onAbort, and what onAbort returns. */
const abortCase = fc.record({ reason: anyValue.filter((value) => value !== undefined), withOnAbort: fc.boolean(), returned: anyValue });

/**
 * One stream closed by an abort, `already` (the signal aborted before the stream exists) or
 * while a reader reads one pushed event: the reason reaches onAbort as it is, and the stream
 * ends with what onAbort returned (any value, undefined too) or fails with the reason itself.
 */
async function abortedAsItIs({ reason, withOnAbort, returned }: { reason: unknown; withOnAbort: boolean; returned: unknown }, already: boolean): Promise<void> {
  const controller = new AbortController();
  if (already) controller.abort(reason);
  const given: unknown[] = [];
  const onAbort = (got: unknown) => {
    given.push(got);
    return returned;
  };
  const stream = new EventStream<Piece, unknown>(withOnAbort ? { signal: controller.signal, onAbort } : { signal: controller.signal });
  askForResult(stream);
  const [piece] = pieces() as [Piece];
  const pushed = stream.push(piece);
  const screen = startReading(stream);
  await realTurn();
  if (!already) controller.abort(reason);
  assert.equal(stream.closed, true, "中止之后 closed 应当是 true");
  if (withOnAbort) {
    assert.ok(
      given.length === 1 && Object.is(given[0], reason),
      `onAbort 应当恰好被调用一次，收到 signal.reason 本身 ${show(reason)}，实际收到 ${show(given)}`,
    );
    const [outcome] = await outcomesOf([stream.result()]);
    assert.ok(
      outcome?.status === "fulfilled" && Object.is(outcome.value, returned),
      `result() 应当兑现为 onAbort 返回的那个值本身 ${show(returned)}，实际是 ${show(outcome)}${outcome?.status === "fulfilled" ? copyNote(outcome.value, returned) : ""}`,
    );
  } else {
    const [outcome] = await outcomesOf([stream.result()]);
    assert.ok(
      outcome?.status === "rejected" && Object.is(outcome.reason, reason),
      `result() 应当以 signal.reason 本身 ${show(reason)} 拒绝，实际是 ${show(outcome)}`,
    );
  }
  const seen = await screen.seen();
  assert.deepEqual(seen.events, pushed ? [piece] : [], "读者先读完中止之前推入的事件");
  if (withOnAbort) assert.equal(seen.end, "done", "有 onAbort：读者以 done 结束");
  else assert.ok(seen.end === "threw" && Object.is(seen.error, reason), `没有 onAbort：读者应当收到 signal.reason 本身 ${show(reason)}，实际是 ${show(seen)}`);
  assertUntouched(reason, "中止原因");
  if (withOnAbort) assertUntouched(returned, "onAbort 返回的结果");
}

test("Lab 2.5 · 中止：有 onAbort 就以它的结果结束，没有就以中止原因失败", async (t) => {
  const [first, second] = pieces() as [Piece, Piece];
  const turn = new AbortController();
  const reasons: unknown[] = [];
  const stream = new EventStream<Piece, string>({
    signal: turn.signal,
    onAbort: (reason) => {
      reasons.push(reason);
      return "（已中止）";
    },
  });
  const screen = startReading(stream);
  stream.push(first);
  await realTurn();
  await rule("§C7.1：abort() 一返回，流就已经关了：closed 是 true，push 返回 false", () => {
    turn.abort("用户按了 Ctrl-C");
    assert.equal(stream.closed, true);
    assert.equal(stream.push(second), false);
  });
  await rule("§C7.1：有 onAbort：它只被调用一次，收到的是 signal.reason 本身；流以它的返回值结束", async () => {
    assert.deepEqual(reasons, ["用户按了 Ctrl-C"]);
    assert.deepEqual(await outcomeOf(stream.result()), { status: "fulfilled", value: "（已中止）" });
  });
  await rule("§C7.1：正在读的读者：中止之前推的事件照样收到，然后以 done 结束", async () => {
    assert.deepEqual(await screen.seen(), { events: [first], end: "done" });
  });
  await rule("§C7.1：abort() 不带原因时，onAbort 收到 signal 自己的 reason（名为 AbortError 的 DOMException）", () => {
    const plain = new AbortController();
    const got: unknown[] = [];
    new EventStream<Piece, string>({ signal: plain.signal, onAbort: (reason) => (got.push(reason), "") });
    plain.abort();
    assert.equal(got.length, 1);
    assert.equal(got[0], plain.signal.reason);
    assert.equal((got[0] as Error).name, "AbortError");
  });
  await rule("§C7.2：没有 onAbort：流以 signal.reason 本身失败：读者先读完排着的事件再收到它，result() 以它拒绝", async () => {
    const user = new AbortController();
    const bare = new EventStream<Piece, string>({ signal: user.signal });
    askForResult(bare);
    bare.push(first);
    const reason = new Error("用户按了 Ctrl-C");
    user.abort(reason);
    assert.equal(bare.closed, true);
    const seen = await readAll(bare);
    assert.deepEqual(seen.events, [first]);
    assert.equal(seen.error, reason);
    const outcome = await outcomeOf(bare.result());
    assert.equal((outcome as { reason?: unknown }).reason, reason);
  });
  await rule("§C7.1：signal 上的监听一直挂到流结束，没有时限：开着的流过了多久（这里是 2^31 ms 以上，假时钟）都照样被中止关闭", () => {
    t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
    try {
      const later = new AbortController();
      const open = new EventStream<Piece, string>({ signal: later.signal, onAbort: () => "（很久以后中止）" });
      t.mock.timers.tick(2 ** 31 + 1);
      later.abort("很久以后");
      assert.equal(open.closed, true, "过了多久，中止都应当关掉这个流");
    } finally {
      t.mock.timers.reset();
    }
  });
  await rule("§C7.1：同一个 signal 上开着的几个流：abort 时各自关闭，各自的 onAbort 各调用一次", async () => {
    const session = new AbortController();
    const calls: string[] = [];
    const streams = ["第一个", "第二个", "第三个"].map(
      (name) =>
        new EventStream<Piece, string>({
          signal: session.signal,
          onAbort: () => {
            calls.push(name);
            return `${name}（已中止）`;
          },
        }),
    );
    session.abort("会话结束");
    assert.deepEqual(
      streams.map((one) => one.closed),
      [true, true, true],
      "每个流都应当关闭",
    );
    assert.deepEqual(calls, ["第一个", "第二个", "第三个"]);
    assert.deepEqual(
      (await outcomesOf(streams.map((one) => one.result()))).map((outcome) => (outcome.status === "fulfilled" ? outcome.value : outcome)),
      ["第一个（已中止）", "第二个（已中止）", "第三个（已中止）"],
    );
  });
  await holds(
    "§C7.1、§C7.2：中止原因原样传下去：onAbort 收到 signal.reason 本身，它返回什么（undefined 也算）流就以什么结束；没有 onAbort，读者和 result() 收到 signal.reason 本身（字符串、0、null 也不包装）",
    fc.asyncProperty(abortCase, (one) => abortedAsItIs(one, false)),
  );
});

test("Lab 2.5 · 已经中止的 signal：流一出生就关闭", async () => {
  await rule("§C7.3：signal 已经中止：构造完 closed 就是 true，push 返回 false，result 是 onAbort 的结果", async () => {
    const stream = new EventStream<Piece, string>({ signal: AbortSignal.abort("早就停了"), onAbort: (reason) => `已中止：${String(reason)}` });
    assert.equal(stream.closed, true);
    assert.equal(stream.push({ delta: "晚了" }), false);
    assert.deepEqual(await outcomeOf(stream.result()), { status: "fulfilled", value: "已中止：早就停了" });
  });
  await rule("§C7.3：没有 onAbort 时同样当场关闭：result() 以 signal.reason 拒绝", async () => {
    const reason = new Error("早就停了");
    const stream = new EventStream<Piece, string>({ signal: AbortSignal.abort(reason) });
    assert.equal(stream.closed, true);
    const outcome = await outcomeOf(stream.result());
    assert.equal((outcome as { reason?: unknown }).reason, reason);
  });
  await rule("§C7.3：不在已经中止的 signal 上挂监听", () => {
    const gone = new AbortController();
    gone.abort();
    new EventStream<Piece, string>({ signal: gone.signal, onAbort: () => "" });
    assert.equal(abortListeners(gone.signal), 0);
  });
  await holds(
    "§C7.3：signal 早已中止也一样原样：onAbort 收到 signal.reason 本身，result() 是它返回的值本身（undefined 也算）；没有 onAbort，result() 以 signal.reason 本身拒绝",
    fc.asyncProperty(abortCase, (one) => abortedAsItIs(one, true)),
  );
});

test("Lab 2.5 · 流先结束：长寿的 signal 上不留监听，之后的中止什么都不改", async () => {
  const session = new AbortController();
  let aborts = 0;
  const onAbort = () => {
    aborts++;
    return "（已中止）";
  };
  await rule("§C7.4：同一个 signal 上的流各自 end 之后，signal 上一个监听都不剩", async () => {
    for (let i = 0; i < 3; i++) {
      const stream = new EventStream<Piece, string>({ signal: session.signal, onAbort });
      stream.end(`第 ${i + 1} 轮`);
      await realTurn();
    }
    assert.equal(abortListeners(session.signal), 0);
  });
  await rule("§C7.4：以 fail 结束的流也不留监听", async () => {
    const stream = new EventStream<Piece, string>({ signal: session.signal });
    askForResult(stream);
    stream.fail(new Error("模型出错"));
    await realTurn();
    assert.equal(abortListeners(session.signal), 0);
  });
  await rule("§C7.4：流先结束（end 或 fail，哪怕中止紧跟在同一段同步代码里）之后 signal 才中止：onAbort 不被调用，result 不变", async () => {
    const stream = new EventStream<Piece, string>({ signal: session.signal, onAbort });
    stream.end(ANSWER);
    await realTurn();
    session.abort("会话结束");
    assert.equal(aborts, 0, "onAbort 被调用了");
    assert.deepEqual(await outcomeOf(stream.result()), { status: "fulfilled", value: ANSWER });
    const turn = new AbortController();
    const ended = new EventStream<Piece, string>({ signal: turn.signal, onAbort });
    ended.end(ANSWER);
    turn.abort("同一段同步代码里紧跟着的中止");
    assert.equal(aborts, 0, "end 之后、result 的回调还没运行时中止：onAbort 被调用了");
    assert.deepEqual(await outcomeOf(ended.result()), { status: "fulfilled", value: ANSWER });
    const other = new AbortController();
    const failed = new EventStream<Piece, string>({ signal: other.signal, onAbort });
    const cause = new Error("模型出错");
    failed.fail(cause);
    other.abort("同一段同步代码里紧跟着的中止");
    assert.equal(aborts, 0, "fail 之后、result 的回调还没运行时中止：onAbort 被调用了");
    const outcome = await outcomeOf(failed.result());
    assert.equal((outcome as { reason?: unknown }).reason, cause);
  });
});
