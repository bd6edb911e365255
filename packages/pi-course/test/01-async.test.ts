/**
 * Chapter 01 labs · the async rules every later chapter leans on, and the narrowing of values
 * from outside. Fifteen tests in five labs (3 each); every name starts with its lab id, so one
 * lab runs alone with
 *
 *   node --test --test-name-pattern="Lab 1.1" packages/pi-course/dist/test/01-async.test.js
 *
 * Every check runs under `rule("§C…：…")` or, for a rule that holds for every input (any value
 * passes through unchanged, no bound, each listener once and in order), `holds("§C…：…")`
 * (fast-check with a fixed seed, support/properties.ts), naming the rule of the contract
 * appendix of chapters/01-async/README.md that it checks. Everything is observed from outside:
 * listeners on an AbortSignal through `events.getEventListeners`, timers through the test
 * runner's mock timers (setTimeout and Date) and a ledger of the timers started and not yet
 * fired or cleared, a wait's outcome after a few turns of the event loop (so a wait that
 * never ends fails its test instead of hanging the file). No check depends on the wall clock: the one check with a real timer
 * (a timeout beyond 2^31 - 1 ms) relies only on the order in which Node fires its timers.
 * Lab 1.5 also has rules of the types themselves, checked when this file is compiled
 * (`typeLevelRules`: a `@ts-expect-error` line that stops being an error fails the build).
 */
import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import test, { type TestContext } from "node:test";
import fc from "fast-check";
import {
  TimeoutError,
  UnreachableError,
  abortReason,
  abortable,
  assertNever,
  deferred,
  errorMessage,
  isPlainObject,
  linkedSignal,
  Listeners,
  parseJsonObject,
  tick,
  type Unsubscribe,
} from "../src/async.js";
import { holds } from "./support/properties.js";
import { isScaffold, rule } from "./support/rules.js";

// ---------------------------------------------------------------------------
// Rules, outcomes, listeners, timers
// ---------------------------------------------------------------------------

/** One turn of the real event loop (the test's own, whatever `tick` does). */
const realTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

type Outcome<T> = { status: "fulfilled"; value: T } | { status: "rejected"; reason: unknown } | { status: "pending" };

/** How `promise` stands after `turns` real turns of the event loop: a wait that never ends is "pending", not a hung test. */
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
  return outcome;
}

/**
 * Any value a caller may pass or throw: the falsy ones (0, -0, "", null, undefined, false, NaN,
 * 0n) often, since "any value" rules break on them first, and anything else fast-check makes.
 */
const anyValue = () =>
  fc.oneof({ weight: 1, arbitrary: fc.constantFrom<unknown>(0, -0, "", null, undefined, false, Number.NaN, 0n) }, { weight: 3, arbitrary: fc.anything() });

/** A value as a failure message shows it: a string quoted, anything else as String gives it (by its tag when String throws). */
function shown(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** The abort listeners attached to `signal` right now. */
const abortListeners = (signal: AbortSignal) => getEventListeners(signal, "abort").length;

interface Clock {
  /** Advances the mocked clock by `ms`, firing the timers that fall due, each at its own time. */
  tick(ms: number): void;
  /** Timers started with setTimeout that have neither fired nor been cleared. */
  readonly pending: number;
}

/** More timers than this started within one advance of the clock: the code keeps starting timers and never gets there. */
const RUNAWAY_TIMERS = 100_000;

/**
 * Runs `body` with `setTimeout` and `Date` mocked by the test runner (so code that reads the
 * time with `Date.now()` sees the same clock) and a ledger of the timers the code under test
 * holds: when each one falls due. The mocked timers fire only when the test
 * advances the clock, and `clock.tick` advances it from one due time to the next, so a timer
 * started by a firing timer counts from the moment it was started (the test runner's own
 * `tick(ms)` moves "now" to the end first). A timeout that keeps starting a new timer whenever
 * one fires (a wait in steps that never reaches its last step) would hang `clock.tick`: past
 * RUNAWAY_TIMERS starts within one advance it fails.
 */
async function withClock(t: TestContext, body: (clock: Clock) => unknown): Promise<void> {
  t.mock.timers.enable({ apis: ["setTimeout", "Date"] });
  const mockedSet = globalThis.setTimeout;
  const mockedClear = globalThis.clearTimeout;
  let now = 0;
  const dueAt = new Map<unknown, number>();
  let startedThisAdvance = 0;
  const ledgerSet = (callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    if (++startedThisAdvance > RUNAWAY_TIMERS) {
      throw new assert.AssertionError({
        message: `推进一次时钟就启动了超过 ${RUNAWAY_TIMERS} 个定时器：每到点一次又启动一个新的，超时永远等不完（分段等待在剩下的时间用完时就该停下）`,
      });
    }
    const handle: unknown = mockedSet(() => {
      dueAt.delete(handle);
      callback(...args);
    }, ms);
    dueAt.set(handle, now + (ms ?? 0));
    return handle;
  };
  const ledgerClear = (handle: unknown) => {
    dueAt.delete(handle);
    mockedClear(handle as NodeJS.Timeout);
  };
  const advance = (ms: number) => {
    now += ms;
    t.mock.timers.tick(ms);
  };
  globalThis.setTimeout = ledgerSet as unknown as typeof setTimeout;
  globalThis.clearTimeout = ledgerClear as unknown as typeof clearTimeout;
  try {
    await body({
      tick: (ms) => {
        startedThisAdvance = 0;
        const target = now + ms;
        for (;;) {
          const next = Math.min(...dueAt.values());
          if (!(next <= target)) break;
          advance(Math.max(0, next - now));
        }
        advance(target - now);
      },
      get pending() {
        return dueAt.size;
      },
    });
  } finally {
    globalThis.setTimeout = mockedSet;
    globalThis.clearTimeout = mockedClear;
    t.mock.timers.reset();
  }
}

// ---------------------------------------------------------------------------
// Lab 1.1 · deferred、errorMessage 与 tick
// ---------------------------------------------------------------------------

test("Lab 1.1 · deferred 由外部兑现，第一次调用说了算", async () => {
  const reply = deferred<string>();
  await rule("§C3.1：新的 deferred 还没有结果：settled 是 false", () => {
    assert.equal(reply.settled, false);
  });
  await rule("§C3.1：第一次 resolve 决定结果；之后的 resolve、reject 都被忽略，settled 从此是 true", async () => {
    reply.resolve("第一句");
    assert.ok(reply.settled === true, "resolve 之后 settled 是 true（它是读取时的状态，不是创建时的快照）");
    reply.resolve("第二句");
    reply.reject(new Error("迟到的失败"));
    assert.equal(reply.settled, true);
    assert.deepEqual(await outcomeOf(reply.promise), { status: "fulfilled", value: "第一句" });
  });
  await rule("§C3.1：第一次 reject 决定结果：promise 以传进去的那个值拒绝；之后的 resolve 被忽略", async () => {
    const failing = deferred<string>();
    const cause = new Error("模型断线");
    failing.reject(cause);
    assert.equal(failing.settled, true, "reject 之后 settled 也是 true");
    failing.resolve("太晚了");
    assert.deepEqual(await outcomeOf(failing.promise), { status: "rejected", reason: cause });
  });
  await rule("§C3.1：每次调用 deferred() 得到一个独立的 deferred：兑现一个，另一个不受影响", async () => {
    const first = deferred<number>();
    const second = deferred<number>();
    first.resolve(1);
    assert.equal(second.settled, false);
    assert.deepEqual(await outcomeOf(second.promise), { status: "pending" });
    second.resolve(2);
    assert.deepEqual(await outcomeOf(second.promise), { status: "fulfilled", value: 2 });
  });
  await rule('§C3.1：不是 Error 的原因也原样拒绝：reject("断线") 以字符串 "断线" 拒绝，不包装成 Error', async () => {
    const plain = deferred<string>();
    plain.reject("断线");
    assert.deepEqual(await outcomeOf(plain.promise), { status: "rejected", reason: "断线" });
  });
  await holds(
    '§C3.1：resolve、reject 的值原样成为结果：任何值（0、""、null、undefined、对象）都是同一个值，不复制，不包装',
    fc.asyncProperty(anyValue(), async (given) => {
      const kept = deferred<unknown>();
      kept.resolve(given);
      const fulfilled = await outcomeOf(kept.promise);
      assert.equal(fulfilled.status, "fulfilled");
      assert.equal((fulfilled as { value: unknown }).value, given, "resolve(值) 之后，promise 兑现的不是传进去的那个值");
      const broken = deferred<unknown>();
      broken.reject(given);
      const rejected = await outcomeOf(broken.promise);
      assert.equal(rejected.status, "rejected");
      assert.equal((rejected as { reason: unknown }).reason, given, "reject(值) 之后，promise 拒绝的不是传进去的那个值");
    }),
    { numRuns: 60 },
  );
});

test("Lab 1.1 · errorMessage 把任何被抛出的值变成一句话，自己从不抛错", async () => {
  const cases: [string, unknown, string][] = [
    ["Error 给出它的 message", new Error("磁盘满了"), "磁盘满了"],
    ["Error 的子类也一样", new TypeError("不是函数"), "不是函数"],
    ["message 为空的 Error 给出空字符串（不换成别的字）", new Error(""), ""],
    ["字符串原样", "plain", "plain"],
    ["数字用 String()", 42, "42"],
    ["undefined 用 String()", undefined, "undefined"],
    ["null 用 String()", null, "null"],
    ["Symbol 用 String()（模板字符串会对它抛错）", Symbol("x"), "Symbol(x)"],
    ["只是长得像 Error 的对象不算 Error：用 String()", { message: "假的" }, "[object Object]"],
    [
      "toString 抛错的对象",
      {
        toString: () => {
          throw new Error("x");
        },
      },
      "unprintable error",
    ],
    ["没有原型、无法转成字符串的对象", Object.create(null), "unprintable error"],
    ["message 不是字符串的 Error：用 String(message)", Object.assign(new Error("x"), { message: 42 }), "42"],
    [
      "message 是抛错的 getter 的 Error",
      Object.defineProperty(new Error("x"), "message", {
        get: () => {
          throw new Error("x");
        },
      }),
      "unprintable error",
    ],
    ["已撤销的 Proxy（连 instanceof 都抛错）", revokedProxy(), "unprintable error"],
    ["message 两边的空白和换行原样保留（不修剪，不只取第一行）", new Error("  第一行\n  第二行\t\n"), "  第一行\n  第二行\t\n"],
    ["带 cause 的 Error 只给它自己的 message", new Error("外层", { cause: new Error("内层") }), "外层"],
    ["AggregateError 也只给它自己的 message", new AggregateError([new Error("甲"), new Error("乙")], "两个都失败了"), "两个都失败了"],
    ["message 是 undefined 的 Error：用 String(message)", Object.assign(new Error("x"), { message: undefined }), "undefined"],
    ["字符串两边的空白和换行原样保留", "  多行\n文本  ", "  多行\n文本  "],
  ];
  for (const [what, value, expected] of cases) {
    await rule(`§C3.2：${what}：期望 ${JSON.stringify(expected)}`, () => {
      assert.equal(errorMessage(value), expected);
    });
  }
  await rule("§C3.2：没有长度上限：十万个字符的 message 和字符串都原样交回，不截断", () => {
    const long = "很长的堆栈".repeat(20_000);
    for (const [what, value] of [
      ["Error 的 message ", new Error(long)],
      ["字符串", long],
    ] as const) {
      const got = errorMessage(value);
      assert.equal(got.length, long.length, `${what}有 ${long.length} 个字符，只交回了 ${got.length} 个`);
      assert.ok(got === long, `${what}被改动了`);
    }
  });
  await holds(
    "§C3.2：Error 的 message 原样交回，字符串原样交回：任何字符串（空白、换行、各种字符）都一字不改",
    fc.property(fc.string({ unit: "binary", maxLength: 200 }), (text) => {
      assert.equal(errorMessage(new Error(text)), text, "new Error(text) 的 message 没有原样交回");
      assert.equal(errorMessage(new RangeError(text)), text, "Error 子类的 message 没有原样交回");
      assert.equal(errorMessage(text), text, "字符串没有原样交回");
    }),
  );
  await holds(
    '§C3.2：不是 Error 的值一律用 String(值)；String 抛错时恰好是 "unprintable error"',
    fc.property(fc.anything({ withNullPrototype: true, withBoxedValues: true }), (thrown) => {
      let expected: string;
      try {
        expected = String(thrown);
      } catch {
        expected = "unprintable error";
      }
      assert.equal(errorMessage(thrown), expected);
    }),
  );
});

/** A Proxy of an Error, revoked: every operation on it throws, `instanceof` included. */
function revokedProxy(): unknown {
  const { proxy, revoke } = Proxy.revocable(new Error("x"), {});
  revoke();
  return proxy;
}

test("Lab 1.1 · tick 让出一整轮事件循环，不靠定时器", async (t) => {
  await rule("§C3.3：tick 之前排进队列的 setImmediate 回调先运行；每次调用都重新让出一轮", async () => {
    for (let round = 1; round <= 2; round++) {
      const order: string[] = [];
      setImmediate(() => order.push("immediate"));
      await tick();
      order.push("after tick");
      assert.deepEqual(order, ["immediate", "after tick"], `第 ${round} 次 tick`);
    }
  });
  await rule("§C3.3：tick 是一个宏任务：在它之前排队的微任务（一条 1000 步的 promise 链）全部先跑完", async () => {
    let steps = 0;
    const chain = async () => {
      for (let i = 0; i < 1000; i++) {
        await null;
        steps++;
      }
    };
    void chain();
    await tick();
    assert.equal(steps, 1000);
  });
  await rule("§C3.3：tick 不用定时器：测试把 setTimeout 换成假的之后，tick 照样结束", async () => {
    t.mock.timers.enable({ apis: ["setTimeout"] });
    try {
      assert.equal((await outcomeOf(tick(), 5)).status, "fulfilled", "setTimeout 被冻结时 tick 没有结束");
    } finally {
      t.mock.timers.reset();
    }
  });
});

// ---------------------------------------------------------------------------
// Lab 1.2 · Listeners：按顺序通知，谁也拖不垮谁
// ---------------------------------------------------------------------------

test("Lab 1.2 · 按添加顺序通知，退订只退自己，同一个函数只算一次", async () => {
  const listeners = new Listeners<{ text: string }>();
  const heard: string[] = [];
  const events: unknown[] = [];
  const ui = (event: { text: string }) => {
    heard.push(`ui:${event.text}`);
    events.push(event);
  };
  const log = (event: { text: string }) => heard.push(`log:${event.text}`);
  const metrics = (event: { text: string }) => heard.push(`metrics:${event.text}`);
  await rule("§C4.1：没有 listener 时 emit 什么都不做，返回空数组", () => {
    assert.equal(listeners.size, 0);
    assert.deepEqual(listeners.emit({ text: "无人" }), []);
  });
  const offUi = listeners.add(ui);
  const offLog = listeners.add(log);
  listeners.add(metrics);
  await rule("§C4.1：listener 按添加的顺序被调用，收到的正是 emit 的那个事件对象；没人抛错时 emit 返回空数组", () => {
    const event = { text: "a" };
    assert.deepEqual(listeners.emit(event), []);
    assert.deepEqual(heard, ["ui:a", "log:a", "metrics:a"]);
    assert.equal(events[0], event, "listener 收到的是同一个对象，不是副本");
  });
  await rule("§C4.1：同一个函数加两次只算一次：size 不变，每个事件只调用它一次", () => {
    heard.length = 0;
    const again = listeners.add(ui);
    assert.equal(typeof again, "function", "add 返回退订函数");
    assert.equal(listeners.size, 3);
    listeners.emit({ text: "b" });
    assert.deepEqual(heard, ["ui:b", "log:b", "metrics:b"]);
  });
  await rule("§C4.1：退订函数只移除自己那一个 listener；调用两次也无害，不会误删别人", () => {
    heard.length = 0;
    offLog();
    offLog();
    assert.equal(listeners.size, 2);
    listeners.emit({ text: "c" });
    assert.deepEqual(heard, ["ui:c", "metrics:c"]);
    offUi();
    offUi();
    assert.equal(listeners.size, 1);
    listeners.emit({ text: "d" });
    assert.deepEqual(heard, ["ui:c", "metrics:c", "metrics:d"]);
  });
  await rule("§C4.1：退订函数只生效一次：同一个函数退订后又被 add 回来，旧的退订函数再调用也不会把它删掉", () => {
    const bus = new Listeners<string>();
    const got: string[] = [];
    const render = (event: string) => got.push(event);
    const offFirst = bus.add(render);
    offFirst();
    const offSecond = bus.add(render);
    offFirst();
    assert.equal(bus.size, 1, "旧的退订函数又调用了一次，把重新 add 的 listener 删掉了：它只该生效一次");
    bus.emit("还在");
    assert.deepEqual(got, ["还在"]);
    offSecond();
    assert.equal(bus.size, 0, "新的退订函数删掉它自己的那一次添加");
    const log = (event: string) => got.push(`log:${event}`);
    const offOnce = bus.add(render);
    const offTwice = bus.add(render);
    bus.add(log);
    offOnce();
    offTwice();
    assert.equal(bus.size, 1, "同一个函数加了两次，两个退订函数都调用之后，别的 listener 应当还在");
    got.length = 0;
    bus.emit("别人");
    assert.deepEqual(got, ["log:别人"], "两个退订函数删掉的只是它们自己的 listener");
  });
  await holds(
    "§C4.1：任意一串 add、退订、emit：同一个函数只在册一次，位置是它第一次（或退订后重新）加入时的位置；每个退订函数第一次调用时移除它的 listener（若在册），之后什么都不做；emit 按顺序叫到在册的每一个，size 是在册的个数",
    fc.property(fc.array(listenerStep(), { maxLength: 30, size: "max" }), (steps) => {
      const bus = new Listeners<number>();
      const heard: number[] = [];
      const functions = [0, 1].map((id) => (event: number) => heard.push(id * 100 + event));
      const offs: Unsubscribe[] = [];
      const model = { order: [] as number[], handles: [] as { id: number; used: boolean }[] };
      let event = 0;
      const done: string[] = [];
      for (const step of steps) {
        if (step.kind === "add") {
          offs.push(bus.add(functions[step.id]!));
          if (!model.order.includes(step.id)) model.order.push(step.id);
          model.handles.push({ id: step.id, used: false });
          done.push(`add(f${step.id})`);
        } else if (step.kind === "off") {
          if (offs.length === 0) continue;
          const k = step.pick % offs.length;
          offs[k]!();
          const handle = model.handles[k]!;
          if (!handle.used) {
            handle.used = true;
            model.order = model.order.filter((id) => id !== handle.id);
          }
          done.push(`第 ${k + 1} 个退订函数()`);
        } else {
          event++;
          heard.length = 0;
          bus.emit(event);
          done.push("emit");
          assert.deepEqual(
            heard,
            model.order.map((id) => id * 100 + event),
            `${done.join("，")}：emit 叫到的应当是 ${JSON.stringify(model.order.map((id) => `f${id}`))}`,
          );
        }
        assert.equal(bus.size, model.order.length, `${done.join("，")}：size 应当是 ${model.order.length}`);
      }
    }),
    { numRuns: 300 },
  );
  await rule("§C4.1：每个 Listeners 有自己的名单：加在另一个上的 listener 不算在这里，也不被这里的 emit 叫到", () => {
    heard.length = 0;
    const other = new Listeners<{ text: string }>();
    other.add(log);
    assert.equal(other.size, 1);
    assert.equal(listeners.size, 1, "另一个 Listeners 的 add 改了这里的 size");
    listeners.emit({ text: "e" });
    assert.deepEqual(heard, ["metrics:e"]);
  });
  await rule("§C4.1、§C4.2：名单没有上限：一万个 listener 按添加的顺序各收到一次，五千个错误全部交回", () => {
    const crowd = new Listeners<number>();
    const order: number[] = [];
    for (let i = 0; i < 10_000; i++) {
      crowd.add(() => {
        order.push(i);
        if (i % 2 === 1) throw i;
      });
    }
    assert.equal(crowd.size, 10_000);
    const errors = crowd.emit(1);
    assert.equal(order.length, 10_000, "不是每个 listener 都被调用了");
    assert.ok(
      order.every((n, i) => n === i),
      "调用的顺序不是添加的顺序",
    );
    assert.equal(errors.length, 5_000, "抛出的错误没有全部交回");
    assert.ok(
      errors.every((e, i) => e === 2 * i + 1),
      "错误的顺序不对",
    );
  });
  await holds(
    '§C4.1：任何值都是事件：每个 listener 按添加的顺序各收到一次，收到的就是 emit 的那个值（0、""、null、undefined 也是）',
    fc.property(fc.integer({ min: 0, max: 6 }), fc.array(anyValue(), { minLength: 1, maxLength: 4 }), (count, events) => {
      const bus = new Listeners<unknown>();
      const received: [number, unknown][] = [];
      for (let i = 0; i < count; i++) bus.add((event) => received.push([i, event]));
      for (const event of events) {
        received.length = 0;
        assert.deepEqual(bus.emit(event), [], "没人抛错时 emit 返回空数组");
        assert.deepEqual(
          received.map(([i]) => i),
          Array.from({ length: count }, (_, i) => i),
          "不是每个 listener 按顺序各收到一次",
        );
        for (const [, got] of received) assert.equal(got, event, "listener 收到的不是 emit 的那个值");
      }
    }),
  );
});

test("Lab 1.2 · 一个 listener 抛错，其余照常；emit 交回错误，自己不抛", async () => {
  const listeners = new Listeners<string>();
  const heard: string[] = [];
  const boom = new Error("UI 崩了");
  listeners.add((event) => heard.push(`first:${event}`));
  listeners.add(() => {
    throw boom;
  });
  listeners.add((event) => heard.push(`middle:${event}`));
  listeners.add(() => {
    throw "不是 Error 的值";
  });
  listeners.add((event) => heard.push(`last:${event}`));
  let errors: unknown[] = [];
  await rule("§C4.2：emit 从不抛错：listener 抛出的东西都被接住", () => {
    errors = listeners.emit("x");
  });
  await rule("§C4.2：抛错的 listener 挡不住排在它后面的 listener", () => {
    assert.deepEqual(heard, ["first:x", "middle:x", "last:x"]);
  });
  await rule("§C4.2：emit 按顺序返回各个 listener 抛出的值，原样（不包装，不转成 Error）", () => {
    assert.equal(errors.length, 2);
    assert.equal(errors[0], boom);
    assert.equal(errors[1], "不是 Error 的值");
  });
  await rule("§C4.2：抛过错的 listener 仍然在册：下一个事件它照样被调用", () => {
    assert.equal(listeners.size, 5);
    heard.length = 0;
    assert.equal(listeners.emit("y").length, 2);
    assert.deepEqual(heard, ["first:y", "middle:y", "last:y"]);
  });
  await rule("§C4.2：每次 emit 返回一个新的数组：之后的 emit 不改它，调用方改它也不影响下一次", () => {
    const kept = errors;
    const next = listeners.emit("z");
    assert.notEqual(next, kept, "两次 emit 返回了同一个数组");
    assert.equal(kept.length, 2, "之后的 emit 改动了上一次交回的数组");
    assert.equal(kept[0], boom);
    const quiet = new Listeners<string>();
    quiet.add(() => {});
    const first = quiet.emit("a");
    first.push("调用方自己放进去的");
    assert.deepEqual(quiet.emit("b"), [], "调用方改了上一次的数组，下一次 emit 受到了影响");
  });
  await rule('§C4.2：一个不少：两个 listener 抛出同一个错误，它出现两次；抛出 0、""、undefined 也照样算', () => {
    const same = new Listeners<string>();
    const shared = new Error("同一个");
    for (const thrown of [shared, shared, 0, "", undefined]) {
      same.add(() => {
        throw thrown;
      });
    }
    const got = same.emit("x");
    assert.equal(got.length, 5, "有抛出的值没有交回");
    assert.deepEqual(got, [shared, shared, 0, "", undefined]);
  });
  await holds(
    "§C4.2：每个 listener 都被调用；emit 按顺序交回每一个抛出的值，原样，一个不少（重复的、假值也在）",
    fc.property(fc.array(fc.record({ throws: fc.boolean(), value: fc.oneof(anyValue(), fc.constant(boom)) }), { maxLength: 8 }), (plan) => {
      const bus = new Listeners<string>();
      const called: number[] = [];
      plan.forEach(({ throws, value }, i) => {
        bus.add(() => {
          called.push(i);
          if (throws) throw value;
        });
      });
      const got = bus.emit("e");
      const expected = plan.filter((p) => p.throws).map((p) => p.value);
      assert.deepEqual(
        called,
        plan.map((_, i) => i),
        "不是每个 listener 都按顺序被调用",
      );
      assert.equal(got.length, expected.length, "交回的错误个数不对");
      for (const [i, value] of got.entries()) assert.equal(value, expected[i], `第 ${i + 1} 个错误不是抛出的那个值`);
    }),
  );
});

test("Lab 1.2 · emit 期间的增删：新来的从下一个事件开始，被退订的不再收到", async () => {
  await rule("§C4.3：emit 期间新加的 listener 听不到当前这个事件，从下一个事件开始收到", () => {
    const listeners = new Listeners<number>();
    const heard: string[] = [];
    listeners.add((n) => {
      heard.push(`first${n}`);
      if (n === 1) listeners.add((m) => heard.push(`added${m}`));
    });
    listeners.emit(1);
    assert.ok(!heard.includes("added1"), `途中加进来的 listener 当场就听到了这个事件：收到的是 ${JSON.stringify(heard)}`);
    assert.deepEqual(heard, ["first1"]);
    listeners.emit(2);
    assert.deepEqual(heard, ["first1", "first2", "added2"]);
  });
  await rule("§C4.3：emit 期间被退订、还没轮到的 listener，这一次就不再被调用", () => {
    const listeners = new Listeners<number>();
    const heard: string[] = [];
    let offLater = () => {};
    listeners.add((n) => {
      heard.push(`first${n}`);
      offLater();
    });
    offLater = listeners.add((n) => heard.push(`later${n}`));
    listeners.add((n) => heard.push(`last${n}`));
    listeners.emit(1);
    assert.deepEqual(heard, ["first1", "last1"], "被退订的那个跳过，排在它后面的照常收到");
    assert.equal(listeners.size, 2);
  });
  await rule("§C4.3：emit 期间退订自己的 listener 不会让排在它后面的 listener 被跳过", () => {
    const listeners = new Listeners<number>();
    const heard: string[] = [];
    let offOnce = () => {};
    offOnce = listeners.add((n) => {
      heard.push(`once${n}`);
      offOnce();
    });
    listeners.add((n) => heard.push(`next${n}`));
    listeners.add((n) => heard.push(`last${n}`));
    listeners.emit(1);
    listeners.emit(2);
    assert.deepEqual(heard, ["once1", "next1", "last1", "next2", "last2"]);
  });
  await rule("§C4.3：轮到谁时，看它此刻在不在册：emit 期间被退订、又在轮到它之前加回来的 listener，在它原来的位置被调用一次", () => {
    const listeners = new Listeners<number>();
    const heard: string[] = [];
    const later = (n: number) => heard.push(`later${n}`);
    let offLater = () => {};
    listeners.add((n) => {
      heard.push(`first${n}`);
      if (n !== 1) return;
      offLater();
      offLater = listeners.add(later);
    });
    offLater = listeners.add(later);
    listeners.add((n) => heard.push(`last${n}`));
    listeners.emit(1);
    assert.deepEqual(heard, ["first1", "later1", "last1"], "退订又加回来的 listener 在开始那一刻的名单里，轮到它时又在册：照样被调用，而且只调用一次");
    heard.length = 0;
    listeners.emit(2);
    assert.deepEqual(heard, ["first2", "last2", "later2"], "下一个事件起，重新加入的 listener 排在最后");
  });
  await holds(
    "§C4.3：emit 期间任意的增删（退订、重新加回、新加）：开始那一刻的名单里、轮到时还在册的才被调用，各一次；途中新加的从下一个事件开始",
    fc.property(fc.array(midEmitAction(), { maxLength: 7 }), fc.integer({ min: 1, max: 3 }), (actions, events) => {
      assert.deepEqual(callsDuringEmit(actions, events), expectedCallsDuringEmit(actions, events));
    }),
  );
});

/** One step of a Listeners' life: add function f<id>, call the unsubscribe returned by the <pick>-th add, or emit. */
type ListenerStep = { kind: "add"; id: number } | { kind: "off"; pick: number } | { kind: "emit" };

function listenerStep(): fc.Arbitrary<ListenerStep> {
  return fc.oneof(
    fc.record({ kind: fc.constant("add" as const), id: fc.nat(1) }),
    fc.record({ kind: fc.constant("off" as const), pick: fc.nat(20) }),
    fc.constant({ kind: "emit" } as const),
  );
}

/**
 * What one listener does when it is called: nothing, unsubscribe the listener at `target` (with the
 * unsubscribe its latest add returned), add the listener at `target` back (its same function), or add
 * a new listener.
 */
type MidEmitAction = { kind: "none" } | { kind: "remove"; target: number } | { kind: "readd"; target: number } | { kind: "add" };

function midEmitAction(): fc.Arbitrary<MidEmitAction> {
  return fc.oneof(
    fc.constant({ kind: "none" } as const),
    fc.record({ kind: fc.constant("remove" as const), target: fc.nat(6) }),
    fc.record({ kind: fc.constant("readd" as const), target: fc.nat(6) }),
    fc.constant({ kind: "add" } as const),
  );
}

/** The calls (`<listener>@<event>`) a Listeners makes when listener i does actions[i] every time it is called. */
function callsDuringEmit(actions: MidEmitAction[], events: number): string[] {
  const bus = new Listeners<number>();
  const calls: string[] = [];
  const functions = new Map<string, (n: number) => void>();
  const off = new Map<string, Unsubscribe>();
  let added = 0;
  const listen = (id: string, action: MidEmitAction) => {
    const listener = (n: number) => {
      calls.push(`${id}@${n}`);
      if (action.kind === "remove") off.get(`L${action.target}`)?.();
      if (action.kind === "readd") {
        const again = functions.get(`L${action.target}`);
        if (again !== undefined) off.set(`L${action.target}`, bus.add(again));
      }
      if (action.kind === "add") listen(`N${added++}`, { kind: "none" });
    };
    functions.set(id, listener);
    off.set(id, bus.add(listener));
  };
  for (const [i, action] of actions.entries()) listen(`L${i}`, action);
  for (let n = 1; n <= events; n++) bus.emit(n);
  return calls;
}

/**
 * The same, as the rules of §C4.1 and §C4.3 say it: the list at the start of the emit, minus whoever is
 * not on the list at their turn; an unsubscribe acts once; adding a listener on the list changes nothing.
 */
function expectedCallsDuringEmit(actions: MidEmitAction[], events: number): string[] {
  let current = actions.map((_, i) => `L${i}`);
  const used = new Map<string, boolean>(current.map((id) => [id, false]));
  const calls: string[] = [];
  let added = 0;
  for (let n = 1; n <= events; n++) {
    for (const id of [...current]) {
      if (!current.includes(id)) continue;
      calls.push(`${id}@${n}`);
      const action: MidEmitAction = id.startsWith("L") ? actions[Number(id.slice(1))]! : { kind: "none" };
      if (action.kind === "remove" && used.get(`L${action.target}`) === false) {
        used.set(`L${action.target}`, true);
        current = current.filter((other) => other !== `L${action.target}`);
      }
      if (action.kind === "readd" && action.target < actions.length) {
        if (!current.includes(`L${action.target}`)) current.push(`L${action.target}`);
        used.set(`L${action.target}`, false);
      }
      if (action.kind === "add") current.push(`N${added++}`);
    }
  }
  return calls;
}

// ---------------------------------------------------------------------------
// Lab 1.3 · abortable：中止只停下等待，不留监听
// ---------------------------------------------------------------------------

test("Lab 1.3 · 等待时被中止：以 signal.reason 拒绝，监听随之摘掉", async () => {
  await rule("§C5.1：等待期间 signal 上恰好挂着一个 abort 监听", async () => {
    const user = new AbortController();
    const slow = deferred<string>();
    const waiting = abortable(slow.promise, user.signal);
    assert.equal(abortListeners(user.signal), 1);
    assert.deepEqual(await outcomeOf(waiting), { status: "pending" }, "promise 和 signal 都没有结束时，等待还在继续");
    assert.equal(abortListeners(user.signal), 1, "等待了几轮之后仍然只有一个监听");
    user.abort();
  });
  await rule("§C5.1：中止时以 signal.reason 本身拒绝（不是新建的 Error），abort 监听随之摘掉", async () => {
    const user = new AbortController();
    const slow = deferred<string>();
    const waiting = abortable(slow.promise, user.signal);
    const reason = new Error("用户按了 Ctrl-C");
    user.abort(reason);
    const outcome = await outcomeOf(waiting);
    assert.ok(outcome.status === "rejected", `中止之后等待应当以拒绝结束，实际是 ${outcome.status}`);
    const got = (outcome as { reason: unknown }).reason;
    assert.ok(got === reason, `拒绝的应当是 signal.reason 本身，实际是 ${shown(got)}`);
    assert.equal(abortListeners(user.signal), 0);
    const quiet = new AbortController();
    const waitingQuietly = abortable(deferred<string>().promise, quiet.signal);
    quiet.abort(null);
    assert.deepEqual(await outcomeOf(waitingQuietly), { status: "rejected", reason: null }, "null 也是一个原因：原样拒绝，只有 undefined 才换成 AbortError");
  });
  await rule("§C5.1：abort() 不带原因时，以 signal 自己的 reason（名为 AbortError 的 DOMException）拒绝；abortReason 给出同一个值", async () => {
    const user = new AbortController();
    const waiting = abortable(deferred<string>().promise, user.signal);
    user.abort();
    const outcome = await outcomeOf(waiting);
    assert.equal(outcome.status, "rejected");
    const reason = (outcome as { reason: unknown }).reason;
    assert.equal(reason, user.signal.reason);
    assert.equal((reason as Error).name, "AbortError");
    assert.equal(abortReason(user.signal), user.signal.reason);
    const chosen = new AbortController();
    chosen.abort("因为");
    assert.equal(abortReason(chosen.signal), "因为");
    const nulled = new AbortController();
    nulled.abort(null);
    assert.equal(abortReason(nulled.signal), null, "null 也是一个原因：abortReason 原样交回，只有 undefined 才换");
  });
  await rule("§C5.1：abortReason 从不交回 undefined：还没中止的 signal（reason 是 undefined）也得到一个真正的 DOMException，名为 AbortError", () => {
    const fresh = new AbortController();
    const reason = abortReason(fresh.signal);
    assert.ok(reason instanceof DOMException, `应当是 DOMException，实际是 ${String(reason)}`);
    assert.equal(reason.name, "AbortError");
  });
  await holds(
    '§C5.1：等待时被中止，以 signal.reason 本身拒绝：任何原因（字符串、0、""、false、对象）都是同一个值；监听随之摘掉',
    fc.asyncProperty(anyValue(), async (why) => {
      const user = new AbortController();
      const waiting = abortable(deferred<string>().promise, user.signal);
      user.abort(why);
      const outcome = await outcomeOf(waiting);
      assert.equal(outcome.status, "rejected", "中止之后等待没有以拒绝结束");
      assert.equal((outcome as { reason: unknown }).reason, user.signal.reason, "拒绝的不是 signal.reason 本身");
      assert.equal(abortReason(user.signal), user.signal.reason, "abortReason 没有原样交回 signal.reason");
      assert.equal(abortListeners(user.signal), 0, "中止之后 signal 上还留着监听");
    }),
    { numRuns: 60 },
  );
  await rule("§C5.1：中止之后，被放弃的工作再失败，也不会变成未处理的拒绝", async () => {
    const user = new AbortController();
    const slow = deferred<string>();
    const waiting = abortable(slow.promise, user.signal);
    user.abort();
    await outcomeOf(waiting);
    slow.reject(new Error("§C5.1：中止之后，被放弃的工作再失败，也不会变成未处理的拒绝（这一行是那次失败本身）"));
    await realTurn();
    await realTurn();
  });
});

test("Lab 1.3 · promise 先结束：原样交回结果，长寿的 signal 上不留监听", async () => {
  const session = new AbortController();
  await rule("§C5.2：promise 先兑现：得到它的值；每次等待结束后 signal 上不留监听", async () => {
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(await outcomeOf(abortable(Promise.resolve(i), session.signal)), { status: "fulfilled", value: i });
      assert.equal(abortListeners(session.signal), 0, `第 ${i + 1} 次等待之后`);
    }
  });
  await rule("§C5.2：promise 先拒绝：以它自己的错误拒绝（同一个值），监听同样摘掉", async () => {
    const own = new Error("工具失败");
    assert.deepEqual(await outcomeOf(abortable(Promise.reject(own), session.signal)), { status: "rejected", reason: own });
    assert.equal(abortListeners(session.signal), 0);
  });
  await rule("§C5.2：等了一会儿才兑现的 promise：得到值，监听摘掉；之后 signal 再中止，这次等待的结果不变", async () => {
    const later = deferred<string>();
    const waiting = abortable(later.promise, session.signal);
    assert.equal(abortListeners(session.signal), 1);
    later.resolve("答案");
    assert.deepEqual(await outcomeOf(waiting), { status: "fulfilled", value: "答案" });
    assert.equal(abortListeners(session.signal), 0);
    session.abort(new Error("会话结束"));
    assert.deepEqual(await outcomeOf(waiting), { status: "fulfilled", value: "答案" });
  });
  await rule("§C5.2：没有 signal（undefined）就原样等待：值照样交回，错误照样拒绝", async () => {
    assert.deepEqual(await outcomeOf(abortable(Promise.resolve("v"), undefined)), { status: "fulfilled", value: "v" });
    const own = new Error("自己的错");
    assert.deepEqual(await outcomeOf(abortable(Promise.reject(own), undefined)), { status: "rejected", reason: own });
  });
  await rule("§C5.2：promise 以不是 Error 的值拒绝：abortable 以同一个值拒绝，不包装成 Error", async () => {
    const live = new AbortController();
    assert.deepEqual(await outcomeOf(abortable(Promise.reject("磁盘满了"), live.signal)), { status: "rejected", reason: "磁盘满了" });
  });
  await holds(
    '§C5.2：promise 先结束，它的值或错误原样交回：任何值（0、""、null、undefined、对象）都是同一个值；有没有 signal 都一样，signal 上不留监听',
    fc.asyncProperty(anyValue(), async (given) => {
      for (const withSignal of [true, false]) {
        const live = new AbortController();
        const signal = withSignal ? live.signal : undefined;
        const where = withSignal ? "有 signal" : "没有 signal";
        const fulfilled = await outcomeOf(abortable(Promise.resolve(given), signal));
        assert.equal(fulfilled.status, "fulfilled", `${where}：promise 兑现了，abortable 却没有兑现`);
        assert.equal((fulfilled as { value: unknown }).value, given, `${where}：交回的不是 promise 兑现的那个值`);
        const rejected = await outcomeOf(abortable(Promise.reject(given), signal));
        assert.equal(rejected.status, "rejected", `${where}：promise 拒绝了，abortable 却没有拒绝`);
        assert.equal((rejected as { reason: unknown }).reason, given, `${where}：拒绝的不是 promise 自己的那个错误`);
        assert.equal(abortListeners(live.signal), 0, "等待结束之后 signal 上还留着监听");
      }
    }),
    { numRuns: 60 },
  );
});

test("Lab 1.3 · 已经中止：立即拒绝，不挂监听，替被放弃的 promise 接住失败", async () => {
  const user = new AbortController();
  const reason = new Error("早就停了");
  user.abort(reason);
  const never = new Promise<string>(() => {});
  await rule("§C5.3：signal 已经中止：不等 promise，立即以 signal.reason 拒绝", async () => {
    assert.deepEqual(await outcomeOf(abortable(never, user.signal)), { status: "rejected", reason });
    const nulled = new AbortController();
    nulled.abort(null);
    assert.deepEqual(await outcomeOf(abortable(never, nulled.signal)), { status: "rejected", reason: null }, "原因是 null 时原样以 null 拒绝");
  });
  await rule("§C5.3：signal 已经中止：不在它上面挂任何监听", () => {
    void abortable(never, user.signal).catch(() => {});
    assert.equal(abortListeners(user.signal), 0);
  });
  await rule("§C5.3：signal 已经中止时，那个 promise 之后再失败也不会变成未处理的拒绝", async () => {
    const doomed = deferred<string>();
    await outcomeOf(abortable(doomed.promise, user.signal));
    doomed.reject(new Error("§C5.3：signal 已经中止时，那个 promise 之后再失败也不会变成未处理的拒绝（这一行是那次失败本身）"));
    await realTurn();
    await realTurn();
  });
  await rule("§C5.3：已经中止却没有给原因的 signal：以名为 AbortError 的 reason 拒绝", async () => {
    const plain = new AbortController();
    plain.abort();
    const outcome = await outcomeOf(abortable(never, plain.signal));
    assert.equal(outcome.status, "rejected");
    assert.equal((outcome as { reason: unknown }).reason, plain.signal.reason);
    assert.equal(((outcome as { reason: unknown }).reason as Error).name, "AbortError");
  });
  await holds(
    '§C5.3：signal 早已以任何原因中止（字符串、0、""、false、对象）：立即以那个原因本身拒绝，不挂监听',
    fc.asyncProperty(anyValue(), async (why) => {
      const early = new AbortController();
      early.abort(why);
      const waiting = abortable(never, early.signal);
      assert.equal(abortListeners(early.signal), 0, "在已经中止的 signal 上挂了监听");
      const outcome = await outcomeOf(waiting);
      assert.equal(outcome.status, "rejected", "没有立即拒绝");
      assert.equal((outcome as { reason: unknown }).reason, early.signal.reason, "拒绝的不是 signal.reason 本身");
    }),
    { numRuns: 60 },
  );
});

// ---------------------------------------------------------------------------
// Lab 1.4 · linkedSignal：跟随、超时、收拾干净
// ---------------------------------------------------------------------------

test("Lab 1.4 · 跟随父 signal：同一个原因，摘掉监听，清掉定时器", async (t) => {
  await withClock(t, async (clock) => {
    await rule("§C6.1：linkedSignal 返回一个新的 signal（不是父 signal 本身），父 signal 上挂一个监听，还没有中止", () => {
      const parent = new AbortController();
      const linked = linkedSignal(parent.signal);
      assert.notEqual(linked.signal, parent.signal);
      assert.equal(linked.signal.aborted, false);
      assert.equal(abortListeners(parent.signal), 1);
      linked.dispose();
    });
    await rule("§C6.1：父 signal 中止，linked 随之中止，原因是父的 reason 本身；父 signal 上的监听摘掉", () => {
      const parent = new AbortController();
      const linked = linkedSignal(parent.signal);
      const reason = new Error("会话被中止");
      parent.abort(reason);
      assert.equal(linked.signal.aborted, true);
      assert.equal(linked.signal.reason, reason);
      assert.equal(abortListeners(parent.signal), 0);
      const nulled = new AbortController();
      const following = linkedSignal(nulled.signal);
      nulled.abort(null);
      assert.equal(following.signal.aborted, true);
      assert.equal(following.signal.reason, null, "父的原因是 null：linked 的原因也是 null，原样");
    });
    await rule("§C6.1：有超时时，父 signal 先中止：定时器被清掉，之后到点也不会改成 TimeoutError", () => {
      const parent = new AbortController();
      const linked = linkedSignal(parent.signal, 1000);
      assert.equal(clock.pending, 1, "有 timeoutMs 时启动一个定时器");
      parent.abort("先停");
      assert.equal(clock.pending, 0, "父 signal 中止之后不留定时器");
      clock.tick(1000);
      assert.equal(linked.signal.reason, "先停");
    });
    await rule("§C6.1：父 signal 已经中止：linked 一出生就以父的 reason 中止，不挂监听，不启动定时器", () => {
      const parent = new AbortController();
      parent.abort("已经停了");
      const linked = linkedSignal(parent.signal, 1000);
      assert.equal(linked.signal.aborted, true);
      assert.equal(linked.signal.reason, "已经停了");
      assert.equal(abortListeners(parent.signal), 0);
      assert.equal(clock.pending, 0);
      const nulled = new AbortController();
      nulled.abort(null);
      assert.equal(linkedSignal(nulled.signal).signal.reason, null, "父早已以 null 中止：linked 的原因也是 null，原样");
    });
    await rule("§C6.1：linked 自己中止不影响父 signal：它们之间只有从父到子一个方向", () => {
      const parent = new AbortController();
      const linked = linkedSignal(parent.signal, 10);
      clock.tick(10);
      assert.equal(linked.signal.aborted, true);
      assert.equal(parent.signal.aborted, false);
    });
    await holds(
      '§C6.1：父 signal 以任何原因中止（字符串、0、""、false、对象），linked 的原因就是父的 reason 本身；早已中止的父也一样',
      fc.property(anyValue(), (why) => {
        for (const early of [false, true]) {
          const parent = new AbortController();
          if (early) parent.abort(why);
          const linked = linkedSignal(parent.signal, 1000);
          if (!early) parent.abort(why);
          const when = early ? "父早已中止" : "父后来中止";
          assert.equal(linked.signal.aborted, true, `${when}：linked 没有跟着中止`);
          assert.equal(linked.signal.reason, parent.signal.reason, `${when}：linked 的原因不是父的 reason 本身`);
          assert.equal(abortListeners(parent.signal), 0, `${when}：父 signal 上还留着监听`);
          assert.equal(clock.pending, 0, `${when}：还留着定时器`);
        }
      }),
    );
  });
});

test("Lab 1.4 · 超时：恰好到点以 TimeoutError 中止，并摘掉父 signal 上的监听", async (t) => {
  await rule("§C6.2：timeoutMs 大于 2^31 - 1 也是毫秒：真实的定时器下，2^31 ms 的 linked 不会 1 ms 就中止", async () => {
    // The real timers the call starts are cleared at the end whatever dispose does: a 24-day
    // timer left behind would keep the test process alive.
    const realSet = globalThis.setTimeout;
    const started: NodeJS.Timeout[] = [];
    globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
      const handle = realSet(...args);
      started.push(handle);
      return handle;
    }) as typeof setTimeout;
    let long: ReturnType<typeof linkedSignal>;
    try {
      long = linkedSignal(undefined, 2 ** 31);
    } finally {
      globalThis.setTimeout = realSet;
    }
    try {
      // Node runs a setTimeout longer than 2^31 - 1 ms after 1 ms: such a timer fires before this one.
      await new Promise((resolve) => setTimeout(resolve, 1));
      assert.equal(long.signal.aborted, false, "2^31 ms 的超时 1 ms 之后就中止了：setTimeout 把超过 2^31 - 1 的延迟当作 1 ms");
    } finally {
      long.dispose();
      for (const handle of started) clearTimeout(handle);
    }
  });
  await withClock(t, async (clock) => {
    await rule("§C6.2：timeoutMs 毫秒之前不中止，恰好到点以 TimeoutError 中止（code 是 TIMEOUT，timeoutMs 是给的数）", () => {
      const parent = new AbortController();
      const linked = linkedSignal(parent.signal, 50);
      clock.tick(49);
      assert.equal(linked.signal.aborted, false, "49 ms 时还没有中止");
      clock.tick(1);
      assert.equal(linked.signal.aborted, true, "50 ms 时中止");
      const reason = linked.signal.reason as TimeoutError;
      assert.ok(reason instanceof TimeoutError, "原因是 TimeoutError");
      assert.equal(reason.code, "TIMEOUT");
      assert.equal(reason.timeoutMs, 50);
    });
    await rule("§C6.2：超时之后父 signal 上的监听摘掉，定时器也不再存在；父之后再中止，原因仍是 TimeoutError", () => {
      const parent = new AbortController();
      const linked = linkedSignal(parent.signal, 20);
      clock.tick(20);
      assert.equal(abortListeners(parent.signal), 0);
      assert.equal(clock.pending, 0);
      parent.abort("太晚了");
      assert.ok(linked.signal.reason instanceof TimeoutError);
    });
    await rule("§C6.2：没有父 signal 也能超时；timeoutMs 为 0 是合法的：下一轮定时器就中止", () => {
      const alone = linkedSignal(undefined, 30);
      clock.tick(30);
      assert.ok(alone.signal.reason instanceof TimeoutError);
      const zero = linkedSignal(undefined, 0);
      clock.tick(0);
      assert.ok(zero.signal.aborted === true, "timeoutMs 为 0 也是一个超时，不是“没有超时”");
      assert.equal((zero.signal.reason as TimeoutError).timeoutMs, 0);
    });
    await rule("§C6.2：timeoutMs 大于 2^31 - 1：2^31 ms 之前不中止，恰好到点以 TimeoutError 中止", () => {
      const long = linkedSignal(undefined, 2 ** 31);
      clock.tick(2 ** 31 - 1);
      assert.equal(long.signal.aborted, false, "2^31 - 1 ms 时还没有中止");
      clock.tick(1);
      assert.equal(long.signal.aborted, true, "2^31 ms 时中止");
      assert.equal((long.signal.reason as TimeoutError).timeoutMs, 2 ** 31);
      assert.equal(clock.pending, 0, "中止之后不留定时器");
    });
    await rule("§C6.2：既没有父 signal 也没有 timeoutMs：一个永远不会自己中止的 signal，不启动定时器", () => {
      const free = linkedSignal(undefined);
      assert.equal(clock.pending, 0);
      clock.tick(1_000_000);
      assert.equal(free.signal.aborted, false);
      free.dispose();
    });
    await rule("§C6.2：timeoutMs 没有上限：3 × 2^31 + 5 ms 的超时，早 1 ms 不中止，恰好到点才中止", () => {
      const far = 3 * 2 ** 31 + 5;
      const parent = new AbortController();
      const long = linkedSignal(parent.signal, far);
      clock.tick(far - 1);
      assert.equal(long.signal.aborted, false, `${far - 1} ms 时还没有中止`);
      assert.equal(clock.pending, 1, "任何时候只有一个定时器在走");
      clock.tick(1);
      assert.equal(long.signal.aborted, true, `${far} ms 时中止`);
      assert.equal((long.signal.reason as TimeoutError).timeoutMs, far, "TimeoutError 的 timeoutMs 是给的数");
      assert.equal(clock.pending, 0);
      assert.equal(abortListeners(parent.signal), 0);
    });
    await holds(
      "§C6.2：任何 timeoutMs（0 到 2^40 ms，约 35 年）：早 1 ms 不中止，恰好到点以 TimeoutError(timeoutMs) 中止；只有一个定时器在走，之后一个不留",
      fc.property(
        fc.oneof(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 2 ** 31 - 3, max: 2 ** 31 + 3 }), fc.integer({ min: 0, max: 2 ** 40 })),
        (timeoutMs) => {
          const timed = linkedSignal(undefined, timeoutMs);
          assert.equal(clock.pending, 1, "有 timeoutMs 时恰好一个定时器在走");
          if (timeoutMs > 0) {
            clock.tick(timeoutMs - 1);
            assert.equal(timed.signal.aborted, false, `${timeoutMs - 1} ms 时就中止了`);
            assert.equal(clock.pending, 1, "任何时候只有一个定时器在走");
            clock.tick(1);
          } else {
            clock.tick(0);
          }
          assert.equal(timed.signal.aborted, true, `${timeoutMs} ms 时没有中止`);
          const reason = timed.signal.reason as TimeoutError;
          assert.ok(reason instanceof TimeoutError, "原因不是 TimeoutError");
          assert.equal(reason.timeoutMs, timeoutMs, "TimeoutError 的 timeoutMs 不是给的数");
          assert.equal(clock.pending, 0, "中止之后还留着定时器");
        },
      ),
      { numRuns: 60 },
    );
  });
});

test("Lab 1.4 · dispose 与参数检查：dispose 只收拾不中止，坏的 timeoutMs 什么都不留下", async (t) => {
  await withClock(t, async (clock) => {
    await rule("§C6.3：dispose 摘掉父 signal 上的监听、清掉定时器，但不中止 linked；调用两次也无害", () => {
      const parent = new AbortController();
      const disposed = linkedSignal(parent.signal, 10);
      disposed.dispose();
      disposed.dispose();
      assert.equal(abortListeners(parent.signal), 0);
      assert.equal(clock.pending, 0);
      assert.equal(disposed.signal.aborted, false);
    });
    await rule("§C6.3：dispose 之后，父 signal 中止或时间到了，linked 都不再中止", () => {
      const parent = new AbortController();
      const disposed = linkedSignal(parent.signal, 10);
      disposed.dispose();
      parent.abort();
      clock.tick(20);
      assert.equal(disposed.signal.aborted, false);
    });
    await rule("§C6.3：已经超时的 linked 再 dispose：无害，原因不变", () => {
      const timed = linkedSignal(undefined, 5);
      clock.tick(5);
      timed.dispose();
      assert.ok(timed.signal.reason instanceof TimeoutError);
    });
    await rule("§C6.3：每次调用 linkedSignal 得到独立的一个：dispose 一个，别的照常按自己的时间中止", () => {
      const parent = new AbortController();
      const first = linkedSignal(parent.signal, 10);
      const second = linkedSignal(parent.signal, 20);
      first.dispose();
      clock.tick(10);
      assert.equal(first.signal.aborted, false, "dispose 过的 linked 到点还是中止了");
      clock.tick(10);
      assert.equal(second.signal.aborted, true, "dispose 了另一个 linked，这一个到点却没有中止");
      assert.equal(clock.pending, 0);
      assert.equal(abortListeners(parent.signal), 0);
    });
    await holds(
      "§C6.1、§C6.2、§C6.3：同一个父 signal 上的几个 linked 各管各的：没有 dispose 的，谁先到听谁的（自己的 timeoutMs 或父的中止），dispose 过的永远不中止；最后一个监听、一个定时器都不留",
      fc.property(
        fc.array(fc.record({ timeoutMs: fc.option(fc.integer({ min: 0, max: 30 }), { nil: undefined }), disposed: fc.boolean() }), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.option(fc.integer({ min: 0, max: 31 }), { nil: undefined }),
        (plan, parentAbortsAt) => {
          const parent = new AbortController();
          const stop = new Error("会话结束");
          const linked = plan.map(({ timeoutMs }) => linkedSignal(parent.signal, timeoutMs));
          plan.forEach(({ disposed }, i) => {
            if (disposed) linked[i]!.dispose();
          });
          for (let now = 0; now <= 31; now++) {
            clock.tick(now === 0 ? 0 : 1);
            if (now === parentAbortsAt) parent.abort(stop);
            plan.forEach(({ timeoutMs, disposed }, i) => {
              const timedOut = !disposed && timeoutMs !== undefined && timeoutMs <= now && (parentAbortsAt === undefined || timeoutMs <= parentAbortsAt);
              const followed = !disposed && !timedOut && parentAbortsAt !== undefined && parentAbortsAt <= now;
              const who = `第 ${i + 1} 个 linked（timeoutMs ${timeoutMs ?? "无"}${disposed ? "，已 dispose" : ""}${parentAbortsAt === undefined ? "" : `，父在 ${parentAbortsAt} ms 中止`}）在 ${now} ms 时`;
              const signal = linked[i]!.signal;
              assert.equal(signal.aborted, timedOut || followed, `${who}${timedOut || followed ? "应当已经" : "不应"}中止`);
              if (timedOut) assert.ok(signal.reason instanceof TimeoutError, `${who}的原因应当是 TimeoutError`);
              if (followed) assert.equal(signal.reason, stop, `${who}的原因应当是父的 reason`);
            });
          }
          for (const one of linked) one.dispose();
          assert.equal(clock.pending, 0, "还留着定时器");
          assert.equal(abortListeners(parent.signal), 0, "父 signal 上还留着监听");
        },
      ),
      { numRuns: 40 },
    );
    await rule("§C6.3：有限且 ≥ 0 的数都合法：小数 1.5 也是毫秒（1 ms 时不中止，2 ms 时已中止），-0、极大的数都不抛错", () => {
      const fractional = linkedSignal(undefined, 1.5);
      clock.tick(1);
      assert.equal(fractional.signal.aborted, false, "1.5 ms 的超时在 1 ms 时就中止了");
      clock.tick(1);
      assert.equal(fractional.signal.aborted, true, "1.5 ms 的超时在 2 ms 时还没有中止");
      assert.equal((fractional.signal.reason as TimeoutError).timeoutMs, 1.5);
      const minusZero = linkedSignal(undefined, -0);
      clock.tick(0);
      assert.equal(minusZero.signal.aborted, true, "-0 是一个合法的 0 ms 超时");
      for (const huge of [Number.MAX_SAFE_INTEGER, 1e300]) {
        const far = linkedSignal(undefined, huge);
        assert.equal(clock.pending, 1, `${huge} ms 的超时：一个定时器在走`);
        clock.tick(2 ** 33);
        assert.equal(far.signal.aborted, false, `${huge} ms 的超时不会在 2^33 ms 时中止`);
        far.dispose();
        assert.equal(clock.pending, 0);
      }
    });
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      await rule(`§C6.3：timeoutMs 必须是有限且 ≥ 0 的数：${bad} 抛出 RangeError，而且不在父 signal 上挂监听、不启动定时器`, () => {
        const parent = new AbortController();
        assert.throws(() => linkedSignal(parent.signal, bad), RangeError);
        assert.equal(abortListeners(parent.signal), 0);
        assert.equal(clock.pending, 0);
      });
    }
  });
});

// ---------------------------------------------------------------------------
// Lab 1.5 · 在边界上收窄：unknown、类型守卫与 never
// ---------------------------------------------------------------------------

/** What `run` did instead of returning: the value it threw (a scaffold error is passed on: not started, not wrong), or RETURNED. */
const RETURNED = Symbol("returned");
function thrownBy(run: () => unknown): unknown {
  try {
    run();
  } catch (thrown) {
    if (isScaffold(thrown)) throw thrown;
    return thrown;
  }
  return RETURNED;
}

/** A value as a Lab 1.5 failure message shows it: its JSON when it has one (an array as `[1,2]`), else as `shown` gives it. */
function asJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? shown(value);
  } catch {
    return shown(value);
  }
}

/** The JSON text of `value`, or undefined when it has none (JSON.stringify gives undefined or throws). */
function jsonOf(value: unknown): string | undefined {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    // a BigInt or a cycle: no JSON form
  }
  return json;
}

/** A thrown value named for a failure message by its kind only (an engine's own wording differs between Node versions). */
function kindOf(thrown: unknown): string {
  return thrown instanceof Error ? thrown.name : typeof thrown;
}

/** What the guard answers for `value`; a guard that throws fails here with a message of the course's own. */
function guardAnswer(value: unknown): unknown {
  const answer: { value?: unknown } = {};
  const thrown = thrownBy(() => {
    answer.value = isPlainObject(value);
  });
  if (thrown !== RETURNED) assert.fail(`isPlainObject 自己抛出了 ${kindOf(thrown)}：守卫对任何值都只答 true 或 false，从不抛错`);
  return answer.value;
}

/** What `parseJsonObject(text)` returns; a throw fails here with a message of the course's own. */
function parsedFrom(text: string, named = `parseJsonObject(${JSON.stringify(text)})`): unknown {
  const result: { value?: unknown } = {};
  const thrown = thrownBy(() => {
    result.value = parseJsonObject(text);
  });
  if (thrown !== RETURNED) assert.fail(`${named} 抛出了 ${kindOf(thrown)}：它对任何文字都不抛错，不是 JSON 对象就返回 undefined`);
  return result.value;
}

/**
 * Rules of the types themselves, checked when this file is compiled (`npm run lab` builds the
 * tests with tsc first): each line after `@ts-expect-error` must be a type error, or the build
 * fails there with TS2578 "Unused '@ts-expect-error' directive". Never called.
 */
function typeLevelRules(raw: unknown, message: { role: "user"; text: string } | { role: "assistant"; text: string }): void {
  if (isPlainObject(raw)) {
    // @ts-expect-error §C7.1：守卫之后每个字段仍是 unknown：没有检查过的字段不能当字符串用
    raw.text.toUpperCase();
    if (typeof raw.text === "string") raw.text.toUpperCase();
  }
  const parsed = parseJsonObject(String(raw));
  // @ts-expect-error §C7.2：parseJsonObject 可能返回 undefined：先判断，再读字段
  void parsed.type;
  switch (message.role) {
    case "user":
      break;
    default:
      // @ts-expect-error §C7.3：漏掉了 "assistant" 的 case：message 不是 never，这一行编译不过
      assertNever(message, "message role");
  }
}
void typeLevelRules;

test("Lab 1.5 · isPlainObject：只有 JSON 造得出的那种对象才算", async () => {
  const { proxy: revoked, revoke } = Proxy.revocable({}, {});
  revoke();
  const cases: [string, unknown, boolean][] = [
    ["对象字面量 {}", {}, true],
    ["JSON.parse 得到的对象", JSON.parse('{"type":"text","text":"你好"}'), true],
    ["JSON 里有自己的 constructor 字段的对象", JSON.parse('{"constructor":"x"}'), true],
    ["JSON 里有自己的 __proto__ 字段的对象", JSON.parse('{"__proto__":{"x":1}}'), true],
    ["没有原型的对象 Object.create(null)", Object.create(null), true],
    ["冻结的对象", Object.freeze({ type: "text" }), true],
    ["封住的、不可扩展的对象", Object.seal(Object.preventExtensions({ type: "text" })), true],
    ["Object.create(Object.prototype)（原型就是 Object.prototype）", Object.create(Object.prototype), true],
    ["自己带 Symbol.toStringTag 的对象（只看原型，不看 toString 标签）", { [Symbol.toStringTag]: "Map" }, true],
    ["字段的 getter 会抛错的对象（守卫不读字段）", throwingGetter(), true],
    ["一万个字段的对象（字段多少都行）", Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i])), true],
    ["包着普通对象的 Proxy（它报告的原型是 Object.prototype）", new Proxy({}, {}), true],
    ["new Map()（JSON.stringify 会把它写成 {}）", new Map([["type", "text"]]), false],
    ["new Date(0)", new Date(0), false],
    ["new Error(…)", new Error("x"), false],
    [
      "自己写的 class 的实例",
      new (class Point {
        x = 1;
      })(),
      false,
    ],
    ['继承自别的对象的对象 Object.create({ type: "text" })', Object.create({ type: "text" }), false],
    ["原型是一个没有原型的对象：Object.create(Object.create(null))（只看直接的原型）", Object.create(Object.create(null)), false],
    ['包装对象 Object("x")', Object("x"), false],
    ["正则 /x/", /x/, false],
    ['null（typeof null 也是 "object"）', null, false],
    ["undefined", undefined, false],
    ['字符串 "{}"', "{}", false],
    ["数字 0", 0, false],
    ["true", true, false],
    ["Symbol", Symbol("x"), false],
    ["BigInt 1n", 1n, false],
    ["函数", () => ({}), false],
    ["原型被换成 null 的函数（typeof 是 function）", Object.setPrototypeOf(function detached() {}, null), false],
    ["原型被换成 Object.prototype 的函数", Object.setPrototypeOf(() => ({}), Object.prototype), false],
    ["class 本身（它也是函数）", class Point {}, false],
    ["数组 []", [], false],
    ["JSON.parse 得到的数组", JSON.parse('[{"type":"text"}]'), false],
    ["原型被换成 null 的数组", Object.setPrototypeOf([1], null), false],
    ["包着数组的 Proxy", new Proxy([], {}), false],
    ["已撤销的 Proxy（连 Array.isArray 都会抛错）", revoked, false],
    [
      "getPrototypeOf 陷阱抛错的 Proxy",
      new Proxy(
        {},
        {
          getPrototypeOf() {
            throw new Error("陷阱");
          },
        },
      ),
      false,
    ],
  ];
  for (const [what, value, expected] of cases) {
    await rule(`§C7.1：${what}${expected ? "是" : "不是"}普通对象`, () => {
      const answer = guardAnswer(value);
      assert.ok(answer === expected, `isPlainObject 应当答 ${expected}，实际答 ${shown(answer)}`);
    });
  }
  await holds(
    "§C7.1：任何 JSON 文本解析出的值，恰好在它是 {…} 时是普通对象（数组、null、字符串、数字、布尔都不是）",
    fc.property(fc.jsonValue(), (json) => {
      const text = JSON.stringify(json);
      const answer = guardAnswer(JSON.parse(text));
      assert.ok(answer === text.startsWith("{"), `isPlainObject(JSON.parse(${JSON.stringify(text)})) 答了 ${shown(answer)}`);
    }),
  );
  await holds(
    "§C7.1：对任何值（Map、Set、Date、类型化数组、包装对象、稀疏数组、没有原型的对象、多层的原型链、换了原型的函数和数组、报告别的原型的 Proxy……）：恰好在 typeof 是 object、不是 null、不是数组、直接的原型是 Object.prototype 或 null 时答 true，答案总是布尔值",
    fc.property(
      fc.oneof(
        fc.anything({
          withBigInt: true,
          withBoxedValues: true,
          withDate: true,
          withMap: true,
          withNullPrototype: true,
          withObjectString: true,
          withSet: true,
          withSparseArray: true,
          withTypedArray: true,
        }),
        edgeObject(),
      ),
      (candidate) => {
        const expected = plainByContract(candidate);
        const answer = guardAnswer(candidate);
        assert.ok(answer === expected, `应当答 ${expected}，实际答 ${shown(answer)}`);
      },
    ),
    { numRuns: 200 },
  );
});

/** A plain object whose field has a getter that throws: a guard that reads the fields throws on it. */
function throwingGetter(): object {
  return Object.defineProperty({}, "text", {
    enumerable: true,
    get() {
      throw new Error("读了字段");
    },
  });
}

/** What §C7.1 answers for `candidate`, as the contract defines it (a check that throws means false). */
function plainByContract(candidate: unknown): candidate is Record<string, unknown> {
  let plain = false;
  if (candidate !== null && typeof candidate === "object") {
    try {
      const reported = Reflect.getPrototypeOf(candidate);
      plain = !Array.isArray(candidate) && (reported === null || reported === Object.prototype);
    } catch {
      plain = false; // the check itself threw: a revoked Proxy, a throwing trap
    }
  }
  return plain;
}

/**
 * Values at the edges of §C7.1: an object at the end of a prototype chain of any length (each
 * link a plain or prototype-less object), functions and arrays whose prototype was replaced,
 * plain objects decorated (frozen, a toString tag, a throwing getter, symbol keys), and
 * proxies of an object, an array or a function whose getPrototypeOf trap reports a prototype.
 */
function edgeObject(): fc.Arbitrary<unknown> {
  type Proto = "null" | "Object.prototype" | "plain" | "bare";
  const proto = fc.constantFrom<Proto>("null", "Object.prototype", "plain", "bare");
  const made = (which: Proto): object | null =>
    which === "null" ? null : which === "Object.prototype" ? Object.prototype : which === "plain" ? { inherited: "字段" } : Object.create(null);
  const chained = fc
    .tuple(fc.constantFrom<Proto>("null", "Object.prototype"), fc.array(fc.constantFrom<Proto>("plain", "bare"), { maxLength: 3 }))
    .map(([end, links]) =>
      links.reduce<object | null>((below, link) => Object.create(below, link === "plain" ? { own: { value: 1, enumerable: true } } : {}), made(end)),
    );
  const functions = fc
    .tuple(
      fc.constantFrom<() => unknown>(
        () => () => 1,
        () => function named() {},
        () => class Made {},
        () => async () => {},
        () => function* generator() {},
      ),
      fc.option(proto, { nil: undefined }),
    )
    .map(([make, replaced]) => (replaced === undefined ? make() : Object.setPrototypeOf(make(), made(replaced))));
  const arrays = fc.tuple(fc.array(fc.jsonValue(), { maxLength: 3 }), proto).map(([items, replaced]) => Object.setPrototypeOf(items, made(replaced)));
  const decorated = fc
    .record({ bare: fc.boolean(), frozen: fc.boolean(), tag: fc.boolean(), getter: fc.boolean(), symbol: fc.boolean() })
    .map(({ bare, frozen, tag, getter, symbol }) => {
      const object: Record<PropertyKey, unknown> = bare ? Object.create(null) : {};
      object["type"] = "text";
      if (tag) object[Symbol.toStringTag] = "Map";
      if (symbol) object[Symbol("key")] = 1;
      if (getter) Object.defineProperty(object, "text", { get: () => assert.fail("isPlainObject 读了字段") });
      return frozen ? Object.freeze(object) : object;
    });
  const proxies = fc.tuple(fc.constantFrom("object", "array", "function"), fc.option(proto, { nil: undefined })).map(([target, reported]) => {
    const wrapped = target === "object" ? {} : target === "array" ? [] : () => 1;
    return new Proxy(wrapped, reported === undefined ? {} : { getPrototypeOf: () => made(reported) });
  });
  return fc.oneof(chained, functions, arrays, decorated, proxies);
}

test("Lab 1.5 · parseJsonObject：网络上的一段文字，要么是对象，要么是 undefined", async () => {
  await rule("§C7.2：文字是一个 JSON 对象：返回解析出的对象（JSON 允许的首尾空白也行，分成好几行的也行）", () => {
    for (const [text, expected] of [
      ['{"type":"text","text":"你好"}', { type: "text", text: "你好" }],
      ['  {"a":[1,{"b":null}]}\n', { a: [1, { b: null }] }],
      ["{}", {}],
      ['{\n  "type": "text",\n  "text": "你好"\n}', { type: "text", text: "你好" }],
      ['\r\n\t{"text":"第一行\\n第二行"}\r\n', { text: "第一行\n第二行" }],
    ] as const) {
      const parsed = parsedFrom(text);
      assert.ok(plainByContract(parsed), `parseJsonObject(${JSON.stringify(text)}) 应当返回一个对象，实际是 ${asJson(parsed)}`);
      assert.ok(JSON.stringify(parsed) === JSON.stringify(expected), `parseJsonObject(${JSON.stringify(text)}) 返回的是 ${JSON.stringify(parsed)}`);
    }
  });
  await rule("§C7.2：文字原样交给 JSON.parse：字段名和字符串一字不改（不做 Unicode 规范化），__proto__、constructor 字段照样是自己的字段", () => {
    const text = '{"__proto__":{"x":1},"constructor":"c","text":"Cafe\u0301 \u212B it\'s","e\u0301":1}';
    const parsed = parsedFrom(text);
    assert.ok(plainByContract(parsed), `parseJsonObject(${JSON.stringify(text)}) 应当返回一个对象，实际是 ${asJson(parsed)}`);
    const object = parsed as Record<string, unknown>;
    for (const field of ["__proto__", "constructor", "e\u0301"]) {
      assert.ok(Object.hasOwn(object, field), `返回的对象没有自己的 ${JSON.stringify(field)} 字段：JSON 里有它`);
    }
    assert.ok(object["text"] === "Cafe\u0301 \u212B it's", `text 字段被改成了 ${JSON.stringify(object["text"])}：字符串要一字不改`);
    assert.deepStrictEqual(parsed, JSON.parse(text), `parseJsonObject(${JSON.stringify(text)}) 返回的对象与 JSON.parse 的不同`);
  });
  await rule("§C7.2：没有上限：一千六百多万个字符的文字、一万个字段、一万层嵌套，都照样解析成对象", () => {
    const length = 2 ** 24 + 16;
    const long = parsedFrom(`{"text":"${"x".repeat(length)}"}`, `一段 ${length + 11} 个字符的 JSON 对象`);
    const text = plainByContract(long) ? (long as Record<string, unknown>)["text"] : undefined;
    assert.ok(
      typeof text === "string" && text.length === length,
      `${length} 个字符的字段没有原样交回：得到 ${plainByContract(long) ? `长 ${String((text as string | undefined)?.length)} 的字段` : asJson(long)}`,
    );
    const wide = parsedFrom(JSON.stringify(Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]))), "一个有一万个字段的 JSON 对象");
    assert.ok(
      plainByContract(wide) && Object.keys(wide).length === 10_000,
      `一万个字段的对象没有原样交回：得到 ${plainByContract(wide) ? `${Object.keys(wide).length} 个字段` : asJson(wide)}`,
    );
    const depth = 10_000;
    let deep = parsedFrom(`${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`, `一个嵌套 ${depth} 层的 JSON 对象`);
    for (let level = 0; level < depth; level++) {
      if (!plainByContract(deep)) assert.fail(`嵌套 ${depth} 层的对象，第 ${level + 1} 层不是对象：得到 ${asJson(deep).slice(0, 80)}`);
      deep = deep["a"];
    }
    assert.equal(deep, 1);
  });
  await rule("§C7.2：每次调用返回新解析出的对象：调用方改了上一次得到的对象，同样的文字再解析，得到的仍是 JSON.parse 的结果", () => {
    const text = '{"type":"text","nested":{"n":1}}';
    const first = parsedFrom(text) as Record<string, unknown>;
    assert.ok(plainByContract(first), `parseJsonObject(${JSON.stringify(text)}) 应当返回一个对象，实际是 ${asJson(first)}`);
    first["type"] = "调用方改过";
    (first["nested"] as Record<string, unknown>)["n"] = 2;
    const second = parsedFrom(text);
    assert.ok(second !== first, "同样的文字，两次调用交回了同一个对象：调用方的改动会带到下一次");
    assert.deepStrictEqual(second, JSON.parse(text), `调用方改了上一次的结果，再解析 ${JSON.stringify(text)} 得到的是 ${asJson(second)}`);
  });
  const refused: [string, string][] = [
    ["数组", "[1,2]"],
    ["null", "null"],
    ["数字", "42"],
    ["字符串（哪怕里面写着 {}）", '"{}"'],
    ["布尔", "true"],
    ["断线截断的 JSON", '{"type":"te'],
    ["空字符串", ""],
    ["单引号（不是 JSON）", "{'a':1}"],
    ["对象后面还有别的字", '{"a":1} x'],
    ["SSE 的一整行（data: 前缀不是 JSON）", 'data: {"type":"text","text":"你好"}'],
    ["前面带 BOM 的对象（\\uFEFF 不是 JSON 允许的空白）", '\uFEFF{"a":1}'],
    ["两边是不换行空格 \\u00A0 的对象（它也不是 JSON 允许的空白）", '\u00A0{"a":1}\u00A0'],
    ["两行各一个对象", '{"a":1}\n{"b":2}'],
    ["包在 Markdown 代码块里的对象", '```json\n{"a":1}\n```'],
    ["前面有一句话的对象", '好的：{"a":1}'],
    ["最后多一个逗号的对象", '{"a":1,}'],
  ];
  for (const [what, text] of refused) {
    await rule(`§C7.2：${what}不是 JSON 对象：返回 undefined，不抛错`, () => {
      const parsed = parsedFrom(text);
      assert.ok(parsed === undefined, `parseJsonObject(${JSON.stringify(text)}) 应当是 undefined，实际是 ${asJson(parsed)}`);
    });
  }
  await holds(
    "§C7.2：任何文字原样交给 JSON.parse：JSON 对象（字段名、字符串里什么字符都有，分行或不分行，首尾有或没有别的字）得到与 JSON.parse 深度相等的新对象，调用方改了它也不影响下一次；JSON.parse 不接受或不是对象的，得到 undefined",
    fc.property(decoratedJsonText(), (text) => {
      let reference: unknown;
      try {
        reference = JSON.parse(text);
      } catch {
        reference = undefined;
      }
      const first = parsedFrom(text);
      if (!plainByContract(reference)) {
        assert.ok(first === undefined, `parseJsonObject(${JSON.stringify(text)}) 应当是 undefined，实际是 ${asJson(first)}`);
        return;
      }
      assert.ok(plainByContract(first), `parseJsonObject(${JSON.stringify(text)}) 应当返回一个对象，实际是 ${asJson(first)}`);
      assert.deepStrictEqual(first, reference, `parseJsonObject(${JSON.stringify(text)}) 返回的对象与 JSON.parse 的不同：${asJson(first)}`);
      (first as Record<string, unknown>)["调用方加的"] = true;
      const second = parsedFrom(text);
      assert.ok(second !== first, "同样的文字，两次调用交回了同一个对象");
      assert.deepStrictEqual(second, reference, `调用方改了上一次的结果，再解析 ${JSON.stringify(text)} 得到的与 JSON.parse 的不同`);
    }),
    { numRuns: 200 },
  );
  await holds(
    "§C7.2：任何文字都不抛错：返回 undefined 或者一个普通对象，恰好在 JSON.parse 得到普通对象时是对象",
    fc.property(
      fc.oneof(
        fc.string(),
        fc.json(),
        fc.json().map((text) => text.slice(0, -1)),
      ),
      (text) => {
        let expected = false;
        try {
          const value: unknown = JSON.parse(text);
          expected = typeof value === "object" && value !== null && !Array.isArray(value);
        } catch {
          expected = false;
        }
        const parsed = parsedFrom(text);
        assert.ok(expected ? plainByContract(parsed) : parsed === undefined, `parseJsonObject(${JSON.stringify(text)}) 返回了 ${asJson(parsed)}`);
      },
    ),
  );
});

/** Strings that a "helpful" rewrite of the text changes: quotes, prototype keys, decomposed Unicode, non-JSON whitespace, an SSE prefix, a BOM. */
const TRICKY_STRINGS = [
  "__proto__",
  "constructor",
  "toString",
  "",
  " ",
  "it's",
  "'",
  "Cafe\u0301",
  "\u212B",
  "\u00A0",
  "data: x",
  "{}",
  "\n",
  "\uFEFF",
  "a\u2028b",
  "\u{1F600}",
];

/**
 * A JSON object written as text (keys and strings from TRICKY_STRINGS or anything, on one line or
 * pretty-printed with spaces or tabs), with something before and after it: often only what JSON
 * allows (spaces, tabs, line breaks), else what it does not (a BOM, a no-break space, an SSE
 * `data: ` prefix, a code fence, a second object, a word).
 */
function decoratedJsonText(): fc.Arbitrary<string> {
  const tricky = fc.constantFrom(...TRICKY_STRINGS);
  const key = fc.oneof(tricky, fc.string({ unit: "binary", maxLength: 6 }));
  const leaf = fc.oneof(tricky, fc.jsonValue({ maxDepth: 2 }), fc.string({ unit: "binary", maxLength: 6 }));
  const space = fc.constantFrom<string | number | undefined>(undefined, 2, "\t");
  const body = fc.tuple(fc.array(fc.tuple(key, leaf), { maxLength: 5 }), space).map(([pairs, indent]) => {
    if (indent === undefined || pairs.length === 0) return `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(",")}}`;
    const pad = typeof indent === "number" ? " ".repeat(indent) : indent;
    const lines = pairs.map(([k, v]) => `${pad}${JSON.stringify(k)}: ${(JSON.stringify(v, null, indent) ?? "null").replaceAll("\n", `\n${pad}`)}`);
    return `{\n${lines.join(",\n")}\n}`;
  });
  const allowed = fc.constantFrom("", " ", "\n", "\t", "\r\n", "  \n\t");
  const refused = fc.constantFrom("\uFEFF", "\u00A0", "\u2028", "\u3000", "\v", "\f", "data: ", "```json\n", "\n```", "x", ",", '\n{"b":2}', "好的：");
  const edge = fc.oneof({ weight: 3, arbitrary: allowed }, { weight: 1, arbitrary: refused });
  return fc.tuple(edge, body, edge).map(([before, object, after]) => before + object + after);
}

test("Lab 1.5 · assertNever：编译器说不可能的值，运行时真的来了就抛错", async () => {
  type Message = { role: "user"; text: string } | { role: "assistant"; text: string };
  /** A switch over every member of the union, as a later chapter writes it. */
  const wireRole = (message: Message): string => {
    switch (message.role) {
      case "user":
        return "user";
      case "assistant":
        return "assistant";
      default:
        return assertNever(message, "message role");
    }
  };
  await rule("§C7.3：类型之外的值（经过 as 转换从 JSON 来的 role）到了 default：assertNever 抛出 UnreachableError，不返回", () => {
    const stray = JSON.parse('{"role":"system","text":"你是助手"}') as Message;
    const thrown = thrownBy(() => wireRole(stray));
    assert.ok(thrown !== RETURNED, "assertNever 返回了，没有抛错：switch 把一个不存在的 role 当成结果交了出去");
    assert.ok(thrown instanceof UnreachableError, `抛出的应当是 UnreachableError，实际是 ${kindOf(thrown)}`);
    assert.equal(thrown.code, "UNREACHABLE");
    assert.ok(thrown.value === stray, "UnreachableError 的 value 应当是传给 assertNever 的那个值本身");
    assert.equal(thrown.what, "message role", "UnreachableError 的 what 应当是传给 assertNever 的 what");
    assert.equal(thrown.message, 'unexpected message role: {"role":"system","text":"你是助手"}');
  });
  await holds(
    "§C7.3：任何值（Symbol、BigInt、循环引用的对象、0、undefined 也是）、任何 what（空的、两边有空白的也是）到了 assertNever：都抛出 UnreachableError，value 是那个值本身（不复制，不改动），what 原样，有 JSON 形式的值 message 就是 unexpected <what>: <它的 JSON>",
    fc.property(
      fc.oneof(anyValue(), fc.anything({ withBigInt: true, withNullPrototype: true, withBoxedValues: true })),
      fc.oneof(fc.string({ unit: "binary", maxLength: 20 }), fc.constantFrom("", " ", "  message role  ", "\n")),
      (value, what) => {
        const before = fc.stringify(value);
        const frozen = typeof value === "object" && value !== null && Object.isFrozen(value);
        const thrown = thrownBy(() => assertNever(value as never, what));
        assert.ok(thrown !== RETURNED, "assertNever 返回了，没有抛错");
        assert.ok(thrown instanceof UnreachableError, `抛出的应当是 UnreachableError，实际是 ${kindOf(thrown)}`);
        assert.ok(Object.is(thrown.value, value), "UnreachableError 的 value 不是传给 assertNever 的那个值");
        assert.ok(thrown.what === what, `UnreachableError 的 what 不是传给 assertNever 的 what：得到 ${shown(thrown.what)}`);
        assert.ok(fc.stringify(value) === before, "assertNever 改动了传给它的值");
        if (typeof value === "object" && value !== null) assert.ok(Object.isFrozen(value) === frozen, "assertNever 冻结了传给它的对象");
        const json = jsonOf(value);
        if (json !== undefined) {
          const message = `unexpected ${what}: ${json}`;
          assert.ok(thrown.message === message, `message 应当是 ${JSON.stringify(message)}，实际是 ${JSON.stringify(thrown.message)}`);
        }
      },
    ),
  );
  await rule(
    "§C7.3：没有上限：两百多万个字符的字符串、十万个元素的数组到了 assertNever，value 仍是那个值本身，message 里是它完整的 JSON；十万个字符的 what 也原样",
    () => {
      for (const [named, value] of [
        [`${2 ** 21 + 16} 个字符的字符串`, "x".repeat(2 ** 21 + 16)],
        ["十万个元素的数组", Array.from({ length: 100_000 }, (_, i) => i)],
      ] as const) {
        const thrown = thrownBy(() => assertNever(value as never, "value"));
        assert.ok(thrown instanceof UnreachableError, `${named}：抛出的应当是 UnreachableError，实际是 ${kindOf(thrown)}`);
        assert.ok(thrown.value === value, `${named}：UnreachableError 的 value 不再是那个值本身（被截短、复制或转换了）`);
        const message = `unexpected value: ${JSON.stringify(value)}`;
        assert.ok(thrown.message === message, `${named}：message 应当有 ${message.length} 个字符（完整的 JSON），实际有 ${thrown.message.length} 个`);
      }
      const what = "很长的名字".repeat(20_000);
      const thrown = thrownBy(() => assertNever("system" as never, what));
      assert.ok(thrown instanceof UnreachableError, `抛出的应当是 UnreachableError，实际是 ${kindOf(thrown)}`);
      assert.ok(thrown.what === what, `${what.length} 个字符的 what 没有原样带上：得到 ${thrown.what.length} 个字符`);
    },
  );
  await rule("§C7.3：没有 JSON 形式的值也能抛出 UnreachableError：message 换成 errorMessage 给出的文字（循环引用的对象、Symbol）", () => {
    const cycle: Record<string, unknown> = { role: "loop" };
    cycle["self"] = cycle;
    for (const [what, value, message] of [
      ["循环引用的对象", cycle, "unexpected value: [object Object]"],
      ["Symbol", Symbol("x"), "unexpected value: Symbol(x)"],
    ] as const) {
      const thrown = thrownBy(() => assertNever(value as never, "value"));
      assert.ok(thrown instanceof UnreachableError && thrown.value === value, `${what}：抛出的应当是带着它的 UnreachableError，实际是 ${kindOf(thrown)}`);
      assert.ok(thrown.message === message, `${what}：message 应当是 ${JSON.stringify(message)}，实际是 ${JSON.stringify(thrown.message)}`);
    }
  });
});
