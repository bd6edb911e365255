/**
 * Chapter 01 labs · the async rules every later chapter leans on. Twelve tests in four labs
 * (3 each); every name starts with its lab id, so one lab runs alone with
 *
 *   node --test --test-name-pattern="Lab 1.1" packages/pi-course/dist/test/01-async.test.js
 *
 * Every check runs under `rule("§C…：…")`, naming the rule of the contract appendix of
 * chapters/01-async.md that it checks. Everything is observed from outside: listeners on an
 * AbortSignal through `events.getEventListeners`, timers through the test runner's mock
 * timers and a ledger of the timers started and not yet fired or cleared, a wait's outcome
 * after a few turns of the event loop (so a wait that never ends fails its test instead of
 * hanging the file). No check depends on the wall clock: the one check with a real timer
 * (a timeout beyond 2^31 - 1 ms) relies only on the order in which Node fires its timers.
 */
import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import test, { type TestContext } from "node:test";
import { TimeoutError, abortReason, abortable, deferred, errorMessage, linkedSignal, Listeners, tick } from "../src/async.js";
import { rule } from "./support/rules.js";

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

/** The abort listeners attached to `signal` right now. */
const abortListeners = (signal: AbortSignal) => getEventListeners(signal, "abort").length;

interface Clock {
  /** Advances the mocked clock by `ms`, firing the timers that fall due. */
  tick(ms: number): void;
  /** Timers started with setTimeout that have neither fired nor been cleared. */
  readonly pending: number;
}

/**
 * Runs `body` with `setTimeout` mocked by the test runner and a ledger of the timers the code
 * under test holds. The mocked timers fire only when the test advances the clock.
 */
async function withClock(t: TestContext, body: (clock: Clock) => unknown): Promise<void> {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const mockedSet = globalThis.setTimeout;
  const mockedClear = globalThis.clearTimeout;
  const live = new Set<unknown>();
  const ledgerSet = (callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    const handle: unknown = mockedSet(() => {
      live.delete(handle);
      callback(...args);
    }, ms);
    live.add(handle);
    return handle;
  };
  const ledgerClear = (handle: unknown) => {
    live.delete(handle);
    mockedClear(handle as NodeJS.Timeout);
  };
  globalThis.setTimeout = ledgerSet as unknown as typeof setTimeout;
  globalThis.clearTimeout = ledgerClear as unknown as typeof clearTimeout;
  try {
    await body({
      tick: (ms) => t.mock.timers.tick(ms),
      get pending() {
        return live.size;
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
    assert.equal(reply.settled, true, "resolve 之后 settled 是 true（它是读取时的状态，不是创建时的快照）");
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
  ];
  for (const [what, value, expected] of cases) {
    await rule(`§C3.2：${what}：期望 ${JSON.stringify(expected)}`, () => {
      assert.equal(errorMessage(value), expected);
    });
  }
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
    listeners.emit(1);
    assert.deepEqual(heard, ["first1"]);
    assert.equal(listeners.size, 1);
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
});

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
    assert.deepEqual(await outcomeOf(waiting), { status: "rejected", reason });
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
      assert.equal(zero.signal.aborted, true, "timeoutMs 为 0 也是一个超时，不是“没有超时”");
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
