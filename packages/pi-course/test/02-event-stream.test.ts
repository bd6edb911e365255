import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import test from "node:test";
import { tick } from "../src/async.js";
import { EventStream } from "../src/event-stream.js";

async function collect<E>(stream: AsyncIterable<E>): Promise<E[]> {
  const seen: E[] = [];
  for await (const event of stream) seen.push(event);
  return seen;
}

test("Lab 2.1 · 先推后读：事件按顺序排队，end 之后读完即结束，result 给出最终结果", async () => {
  const stream = new EventStream<number, string>();
  for (let i = 1; i <= 3; i++) assert.equal(stream.push(i), true);
  assert.equal(stream.end("done"), true);
  assert.equal(stream.closed, true);
  assert.deepEqual(await collect(stream), [1, 2, 3]);
  assert.equal(await stream.result(), "done");
  assert.equal(stream.result(), stream.result(), "同一个 promise");
});

test("Lab 2.1 · 边推边读：等待中的消费者直接拿到新事件，push 从不等待", async () => {
  const stream = new EventStream<string, number>();
  const reading = collect(stream);
  const produced: string[] = [];
  void (async () => {
    for (const word of ["a", "b", "c"]) {
      await tick();
      stream.push(word);
      produced.push(word);
    }
    stream.end(produced.length);
  })();
  assert.deepEqual(await reading, ["a", "b", "c"]);
  assert.equal(await stream.result(), 3);
});

test("Lab 2.1 · 大量事件不丢不重，顺序不变", async () => {
  const stream = new EventStream<number, void>();
  const count = 5000;
  for (let i = 0; i < count; i++) stream.push(i);
  stream.end();
  const seen = await collect(stream);
  assert.equal(seen.length, count);
  assert.ok(seen.every((value, index) => value === index));
});

test("Lab 2.2 · fail：先交付已排队的事件，再抛出同一个错误；result 以它拒绝", async () => {
  const stream = new EventStream<number, string>();
  const boom = new Error("boom");
  stream.push(1);
  stream.push(2);
  stream.fail(boom);
  const seen: number[] = [];
  await assert.rejects(
    (async () => {
      for await (const event of stream) seen.push(event);
    })(),
    (error) => error === boom,
  );
  assert.deepEqual(seen, [1, 2]);
  await assert.rejects(stream.result(), (error) => error === boom);

  const waiting = new EventStream<number, string>();
  const pending = collect(waiting);
  await tick();
  waiting.fail(boom);
  await assert.rejects(pending, (error) => error === boom, "正在等待的消费者也会收到错误");
});

test("Lab 2.2 · 先到先得：关闭之后 push、end、fail 都返回 false 且不改变任何东西", async () => {
  const stream = new EventStream<number, string>();
  stream.push(1);
  stream.end("first");
  assert.equal(stream.push(2), false);
  assert.equal(stream.end("second"), false);
  assert.equal(stream.fail(new Error("late")), false);
  assert.deepEqual(await collect(stream), [1]);
  assert.equal(await stream.result(), "first");
});

test("Lab 2.2 · 没人询问的失败不会变成 unhandledRejection", async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  try {
    new EventStream<number, string>().fail(new Error("nobody asked"));
    await tick();
    await tick();
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
  assert.deepEqual(unhandled, []);
});

test("Lab 2.3 · 只有一个消费者：第二次迭代抛出 STREAM_ALREADY_CONSUMED", async () => {
  const stream = new EventStream<number, void>();
  stream[Symbol.asyncIterator]();
  assert.throws(() => stream[Symbol.asyncIterator](), { code: "STREAM_ALREADY_CONSUMED" });
});

test("Lab 2.3 · 消费者提前 break：丢弃剩余事件，生产者照常结束，result 仍然到达", async () => {
  const stream = new EventStream<number, string>();
  stream.push(1);
  stream.push(2);
  stream.push(3);
  const seen: number[] = [];
  for await (const event of stream) {
    seen.push(event);
    break;
  }
  assert.deepEqual(seen, [1]);
  assert.equal(stream.push(4), true, "流仍然开着，只是没人读了");
  stream.end("finished");
  assert.equal(await stream.result(), "finished");
});

test("Lab 2.4 · signal 中止时流立刻以 onAbort 的结果结束，生产者的 push 返回 false", async () => {
  const controller = new AbortController();
  const stream = new EventStream<number, string>({ signal: controller.signal, onAbort: (reason) => `aborted: ${String(reason)}` });
  stream.push(1);
  controller.abort("user");
  assert.equal(stream.closed, true);
  assert.equal(stream.push(2), false);
  assert.deepEqual(await collect(stream), [1]);
  assert.equal(await stream.result(), "aborted: user");
});

test("Lab 2.4 · 没有 onAbort 时以中止原因失败；已中止的 signal 让流一开始就关闭", async () => {
  const controller = new AbortController();
  const stream = new EventStream<number, string>({ signal: controller.signal });
  const reason = new Error("stop");
  controller.abort(reason);
  await assert.rejects(stream.result(), (error) => error === reason);

  const early = new EventStream<number, string>({ signal: AbortSignal.abort("gone"), onAbort: () => "early" });
  assert.equal(early.closed, true);
  assert.equal(early.push(1), false);
  assert.equal(await early.result(), "early");
});

test("Lab 2.4 · 流结束后不再挂在长寿的 signal 上", async () => {
  const session = new AbortController();
  for (let i = 0; i < 3; i++) {
    const stream = new EventStream<number, number>({ signal: session.signal, onAbort: () => -1 });
    stream.end(i);
    assert.equal(await stream.result(), i);
  }
  assert.equal(getEventListeners(session.signal, "abort").length, 0);
  session.abort();
});
