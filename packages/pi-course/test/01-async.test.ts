import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import test from "node:test";
import { TimeoutError, abortReason, abortable, deferred, errorMessage, linkedSignal, Listeners, tick } from "../src/async.js";

test("Lab 1.1 · deferred 由外部决定结果，只生效一次", async () => {
  const d = deferred<number>();
  assert.equal(d.settled, false);
  d.resolve(1);
  d.resolve(2);
  d.reject(new Error("late"));
  assert.equal(d.settled, true);
  assert.equal(await d.promise, 1);
  const failing = deferred<number>();
  failing.reject(new Error("no"));
  await assert.rejects(failing.promise, /no/);
});

test("Lab 1.1 · errorMessage 接受任何被抛出的值", () => {
  const cases: [unknown, string][] = [
    [new Error("e"), "e"],
    ["plain", "plain"],
    [42, "42"],
    [undefined, "undefined"],
    [
      {
        toString: () => {
          throw new Error("x");
        },
      },
      "unprintable error",
    ],
  ];
  for (const [value, expected] of cases) assert.equal(errorMessage(value), expected);
});

test("Lab 1.1 · tick 让出一次事件循环：排在它前面的定时回调先运行", async () => {
  const order: string[] = [];
  setImmediate(() => order.push("immediate"));
  await tick();
  order.push("after tick");
  assert.deepEqual(order, ["immediate", "after tick"]);
});

test("Lab 1.2 · Listeners 按添加顺序调用，可以退订，重复添加只算一次", () => {
  const listeners = new Listeners<number>();
  const seen: string[] = [];
  const a = (n: number) => seen.push(`a${n}`);
  const offA = listeners.add(a);
  listeners.add(a);
  listeners.add((n) => seen.push(`b${n}`));
  assert.equal(listeners.size, 2);
  assert.deepEqual(listeners.emit(1), []);
  offA();
  offA();
  listeners.emit(2);
  assert.deepEqual(seen, ["a1", "b1", "b2"]);
});

test("Lab 1.2 · 抛错的 listener 不影响其余 listener，emit 把错误交回调用方", () => {
  const listeners = new Listeners<string>();
  const seen: string[] = [];
  const boom = new Error("boom");
  listeners.add(() => {
    throw boom;
  });
  listeners.add((event) => seen.push(event));
  const errors = listeners.emit("x");
  assert.deepEqual(seen, ["x"]);
  assert.deepEqual(errors, [boom]);
});

test("Lab 1.2 · emit 期间新增的 listener 从下一个事件开始收到，被移除的不再收到", () => {
  const listeners = new Listeners<number>();
  const seen: string[] = [];
  let offLater = () => {};
  listeners.add((n) => {
    seen.push(`first${n}`);
    if (n === 1) {
      listeners.add((m) => seen.push(`added${m}`));
      offLater();
    }
  });
  offLater = listeners.add((n) => seen.push(`later${n}`));
  listeners.emit(1);
  listeners.emit(2);
  assert.deepEqual(seen, ["first1", "first2", "added2"]);
});

test("Lab 1.3 · abortable 在中止时以 signal.reason 拒绝，结束后移除监听", async () => {
  const controller = new AbortController();
  const slow = deferred<string>();
  const waiting = abortable(slow.promise, controller.signal);
  assert.equal(getEventListeners(controller.signal, "abort").length, 1);
  const reason = new Error("stop");
  controller.abort(reason);
  await assert.rejects(waiting, (error) => error === reason);
  assert.equal(getEventListeners(controller.signal, "abort").length, 0);

  const session = new AbortController();
  for (let i = 0; i < 3; i++) assert.equal(await abortable(Promise.resolve(i), session.signal), i);
  await assert.rejects(abortable(Promise.reject(new Error("own")), session.signal), /own/);
  assert.equal(getEventListeners(session.signal, "abort").length, 0, "长寿的 signal 上不留下监听");
});

test("Lab 1.3 · 已中止的 signal 立即拒绝；没有 signal 就原样等待", async () => {
  const controller = new AbortController();
  controller.abort();
  await assert.rejects(abortable(new Promise(() => {}), controller.signal), { name: "AbortError" });
  assert.equal((abortReason(controller.signal) as Error).name, "AbortError");
  assert.equal(await abortable(Promise.resolve("v"), undefined), "v");
});

test("Lab 1.4 · linkedSignal 跟随父 signal 中止，并带上父的原因", () => {
  const parent = new AbortController();
  const linked = linkedSignal(parent.signal);
  assert.equal(getEventListeners(parent.signal, "abort").length, 1);
  parent.abort("because");
  assert.equal(linked.signal.aborted, true);
  assert.equal(linked.signal.reason, "because");
  assert.equal(getEventListeners(parent.signal, "abort").length, 0);

  const early = new AbortController();
  early.abort("already");
  assert.equal(linkedSignal(early.signal).signal.reason, "already");
});

test("Lab 1.4 · linkedSignal 超时以 TimeoutError 中止；dispose 清掉定时器与监听", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const timed = linkedSignal(undefined, 50);
  t.mock.timers.tick(49);
  assert.equal(timed.signal.aborted, false);
  t.mock.timers.tick(1);
  assert.ok(timed.signal.reason instanceof TimeoutError);
  assert.equal((timed.signal.reason as TimeoutError).code, "TIMEOUT");

  const parent = new AbortController();
  const disposed = linkedSignal(parent.signal, 10);
  disposed.dispose();
  disposed.dispose();
  assert.equal(getEventListeners(parent.signal, "abort").length, 0);
  parent.abort();
  t.mock.timers.tick(20);
  assert.equal(disposed.signal.aborted, false, "dispose 之后既不跟随父 signal，也不会超时");

  for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) assert.throws(() => linkedSignal(undefined, bad), RangeError);
});
