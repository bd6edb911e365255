/**
 * Chapter 04 ground tests · the scripted model (`scripted-model.ts`), which the chapter gives
 * as it is: the labs (04-model.test.ts) write the `TurnBuilder` it drives. These tests hold
 * what the chapter text says of it: one turn per call, in order, in chunks of code points, with
 * ids fixed by the script; a deep copy of every request, made before anything else; every
 * failure a turn, never a throw; an abort that lands mid-turn.
 */
import assert from "node:assert/strict";
import test from "node:test";
import { finalTurn, type AssistantEvent, type AssistantStream, type ModelRequest } from "../src/model.js";
import { ScriptedModel, toolCall, turn } from "../src/scripted-model.js";
import { textOf, userMessage, type ToolCall } from "../src/types.js";

const request = (text = "hi"): ModelRequest => ({ systemPrompt: "", messages: [userMessage(text, 1)], tools: [] });

async function events(stream: AssistantStream): Promise<AssistantEvent[]> {
  const seen: AssistantEvent[] = [];
  for await (const event of stream) seen.push(event);
  return seen;
}

/** Rebuilds the message content from events alone, the way a UI would. */
function replay(seen: readonly AssistantEvent[]): unknown[] {
  const blocks: unknown[] = [];
  const texts = new Map<number, string>();
  for (const event of seen) {
    if (event.type === "text_start") texts.set(event.index, "");
    if (event.type === "text_delta") texts.set(event.index, texts.get(event.index)! + event.delta);
    if (event.type === "text_end") blocks[event.index] = { type: "text", text: texts.get(event.index) };
    if (event.type === "toolcall_end") blocks[event.index] = event.toolCall;
  }
  return blocks;
}

test("脚本模型 · 按顺序播放回合，分块流式输出，id 确定", async () => {
  const script = [turn("读一下文件", toolCall("read", { path: "src/a.ts" })), turn("文件很短。")];
  const play = async () => {
    const model = new ScriptedModel(script, { chunkSize: 3, now: () => 0 });
    const first = model.stream(request());
    const firstEvents = await events(first);
    const second = await finalTurn(model.stream(request("again")));
    return { firstEvents, first: await first.result(), second, model };
  };
  const a = await play();
  const b = await play();
  assert.deepEqual(a, b, "同样的脚本，同样的事件与结果");
  assert.equal(a.first.stopReason, "toolUse");
  assert.deepEqual(a.first.message.content, [
    { type: "text", text: "读一下文件" },
    { type: "toolCall", id: "call-1-1", name: "read", arguments: { path: "src/a.ts" } },
  ]);
  const deltas = a.firstEvents.filter((e) => e.type === "text_delta").map((e) => (e as { delta: string }).delta);
  assert.deepEqual(deltas, ["读一下", "文件"]);
  assert.ok(a.firstEvents.filter((e) => e.type === "toolcall_delta").length > 1, "参数按片段到达");
  assert.deepEqual(replay(a.firstEvents), a.first.message.content);
  assert.equal(a.second.stopReason, "stop");
  assert.equal(textOf(a.second.message), "文件很短。");
  assert.equal(a.model.remaining, 0);
});

test("脚本模型 · 分块按码点切分，不会切开代理对", async () => {
  const model = new ScriptedModel([turn("a😀b😀")], { chunkSize: 1 });
  const deltas = (await events(model.stream(request()))).filter((e) => e.type === "text_delta").map((e) => (e as { delta: string }).delta);
  assert.deepEqual(deltas, ["a", "😀", "b", "😀"]);
});

test("脚本模型 · 记录收到的请求副本；之后改动请求不影响记录", async () => {
  const model = new ScriptedModel([turn("ok")]);
  const sent = request("原文");
  const stream = model.stream(sent);
  (sent.messages[0]!.content[0] as { text: string }).text = "改过";
  await finalTurn(stream);
  assert.equal(textOf(model.requests[0]!.messages[0]!), "原文");
});

test("脚本模型 · 函数回合根据请求写出回合（能对工具结果作出反应）", async () => {
  const model = new ScriptedModel([(req, n) => turn(`第 ${n} 回合，看到 ${req.messages.length} 条消息`)]);
  const result = await finalTurn(model.stream(request()));
  assert.equal(textOf(result.message), "第 1 回合，看到 1 条消息");
});

test("脚本模型 · 失败都变成 error 回合而不是抛出：脚本用完、函数回合抛错、脚本声明的错误、参数不是 JSON", async () => {
  const cases: { name: string; model: ScriptedModel; message: RegExp; text?: string }[] = [
    { name: "脚本用完", model: new ScriptedModel([]), message: /no turn left/ },
    {
      name: "函数回合抛错",
      model: new ScriptedModel([
        () => {
          throw new Error("script bug");
        },
      ]),
      message: /script bug/,
    },
    { name: "声明的错误", model: new ScriptedModel([{ ...turn("半句"), error: "overloaded" }]), message: /overloaded/, text: "半句" },
    { name: "参数不是 JSON", model: new ScriptedModel([turn(toolCall("read", { n: 1n } as never))]), message: /BigInt|serialize/i },
  ];
  for (const c of cases) {
    const result = await finalTurn(c.model.stream(request()));
    assert.equal(result.stopReason, "error", c.name);
    assert.match(result.errorMessage ?? "", c.message, c.name);
    assert.equal(textOf(result.message), c.text ?? "", c.name);
  }
});

test("脚本模型 · 中止：流式输出途中中止，回合以 aborted 结束，只保留已完成的部分", async () => {
  const controller = new AbortController();
  const model = new ScriptedModel([turn("第一段", toolCall("read", { path: "a" }), "第二段")], { chunkSize: 1 });
  const stream = model.stream(request(), { signal: controller.signal });
  const seen: AssistantEvent[] = [];
  for await (const event of stream) {
    seen.push(event);
    if (event.type === "toolcall_start") controller.abort("用户按了 Ctrl-C");
  }
  const result = await stream.result();
  assert.equal(result.stopReason, "aborted");
  assert.match(result.errorMessage ?? "", /Ctrl-C/);
  assert.deepEqual(result.message.content, [{ type: "text", text: "第一段" }], "未完成的工具调用和之后的内容都不在消息里");
  assert.equal(seen.at(-1)!.type, "toolcall_start", "中止之后不再有事件");

  const early = new ScriptedModel([turn("x")]);
  const aborted = await finalTurn(early.stream(request(), { signal: AbortSignal.abort() }));
  assert.equal(aborted.stopReason, "aborted");
  assert.deepEqual(aborted.message.content, []);
});

test("脚本模型 · stopReason 默认按内容推断，也可以由脚本指定", async () => {
  const model = new ScriptedModel([turn("a"), turn(toolCall("x")), { ...turn("cut"), stopReason: "length" }]);
  const reasons = [];
  for (let i = 0; i < 3; i++) reasons.push((await finalTurn(model.stream(request()))).stopReason);
  assert.deepEqual(reasons, ["stop", "toolUse", "length"]);
  const calls = (await finalTurn(new ScriptedModel([turn(toolCall("a"), toolCall("b", {}, "mine"))]).stream(request()))).message.content as ToolCall[];
  assert.deepEqual(
    calls.map((c) => c.id),
    ["call-1-1", "mine"],
  );
});

test("脚本模型 · 请求先复制再用：函数回合拿到的也是副本；复制不了的请求是一个 error 回合，不记录", async () => {
  const model = new ScriptedModel([
    (req) => {
      (req.messages[0]!.content[0] as { text: string }).text = "函数回合改了它";
      return turn("好");
    },
    turn("不会播放"),
  ]);
  await finalTurn(model.stream(request("原文")));
  assert.equal(textOf(model.requests[0]!.messages[0]!), "原文", "函数回合改的是自己的副本");
  const odd = { ...request("带着一个函数"), tools: [{ name: "f", description: "", parameters: { check: () => true } }] };
  const result = await finalTurn(model.stream(odd));
  assert.equal(result.stopReason, "error");
  assert.match(result.errorMessage ?? "", /request cannot be copied/);
  assert.equal(model.requests.length, 1, "复制不了的请求不记录");
  assert.equal(model.remaining, 1, "也不消耗脚本里的回合");
});

test("脚本模型 · stream() 先交出流，第一个事件在下一轮事件循环才来；早已中止的 signal 照样记录请求、消耗一个回合", async () => {
  const model = new ScriptedModel([turn("第一轮"), turn("第二轮")]);
  const stream = model.stream(request());
  let seen = 0;
  const reading = (async () => {
    for await (const _event of stream) seen++;
  })();
  assert.equal(seen, 0, "stream() 返回时还没有事件");
  await reading;
  assert.ok(seen > 0);
  const aborted = await finalTurn(model.stream(request("已经中止"), { signal: AbortSignal.abort("不用了") }));
  assert.equal(aborted.stopReason, "aborted");
  assert.deepEqual(aborted.message.content, []);
  assert.equal(model.requests.length, 2, "请求照样记录");
  assert.equal(model.remaining, 0, "第二轮被这次调用消耗了");
});

test("脚本模型 · chunkSize 不是正整数：构造时就抛 RangeError（stream() 之外的错误是写脚本的人的错）", () => {
  for (const chunkSize of [0, -1, 1.5, Number.NaN]) assert.throws(() => new ScriptedModel([], { chunkSize }), RangeError, String(chunkSize));
});
