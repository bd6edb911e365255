import assert from "node:assert/strict";
import test from "node:test";
import { finalTurn, TurnBuilder, type AssistantEvent, type AssistantStream, type ModelRequest } from "../src/model.js";
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

test("Lab 4.1 · TurnBuilder：事件与最终消息出自同一组调用，二者一致", async () => {
  const builder = new TurnBuilder({ now: () => 7 });
  const seen = events(builder.stream);
  builder.appendText("Hel");
  builder.appendText("");
  builder.appendText("lo");
  builder.startToolCall("c1", "read");
  builder.appendToolArguments('{"pa');
  builder.appendToolArguments('th":"a.ts"}');
  builder.startToolCall("c2", "list");
  builder.setUsage({ inputTokens: 5 });
  builder.setUsage({ outputTokens: 9 });
  builder.finish("toolUse");
  const result = await builder.stream.result();
  assert.deepEqual(result, {
    message: {
      role: "assistant",
      timestamp: 7,
      content: [
        { type: "text", text: "Hello" },
        { type: "toolCall", id: "c1", name: "read", arguments: { path: "a.ts" } },
        { type: "toolCall", id: "c2", name: "list", arguments: {} },
      ],
    },
    stopReason: "toolUse",
    usage: { inputTokens: 5, outputTokens: 9 },
  });
  const list = await seen;
  assert.deepEqual(
    list.map((e) => e.type),
    [
      "text_start",
      "text_delta",
      "text_delta",
      "text_end",
      "toolcall_start",
      "toolcall_delta",
      "toolcall_delta",
      "toolcall_end",
      "toolcall_start",
      "toolcall_end",
    ],
    "空 delta 不产生事件",
  );
  assert.deepEqual(replay(list), result.message.content);
});

test("Lab 4.1 · TurnBuilder：参数不是 JSON 对象、回合却继续或以 stop/toolUse 结束，没有打开的工具调用时收到参数，都是明确的错误", () => {
  for (const json of ["{not json", "[1,2]", "42", '{"path":']) {
    const next: [string, (b: TurnBuilder) => unknown][] = [
      ["下一个块开始", (b) => b.startText()],
      ["下一个调用开始", (b) => b.startToolCall("c2", "list")],
      ["接着来文本", (b) => b.appendText("x")],
      ["以 toolUse 结束", (b) => b.finish("toolUse")],
      ["以 stop 结束", (b) => b.finish("stop")],
    ];
    for (const closeFirst of [false, true]) {
      for (const [label, then] of next) {
        const builder = new TurnBuilder();
        builder.startToolCall("c", "read");
        builder.appendToolArguments(json);
        if (closeFirst) builder.endBlock();
        assert.throws(() => then(builder), { code: "TOOL_ARGUMENTS_INVALID" }, `${json} · ${label} · 块已结束: ${closeFirst}`);
      }
    }
  }
  const builder = new TurnBuilder();
  builder.appendText("x");
  assert.throws(() => builder.appendToolArguments("{}"), { code: "TURN_BUILDER_MISUSE" });
  const ended = new TurnBuilder();
  ended.startToolCall("c", "read");
  ended.appendToolArguments('{"path":');
  ended.endBlock();
  assert.throws(() => ended.appendToolArguments('"a"}'), { code: "TURN_BUILDER_MISUSE" }, "块结束之后不能再补参数");
});

test("Lab 4.1 · TurnBuilder：length 回合的最后一个调用参数写到一半（块结束与否都一样），以参数 {} 收尾，事件与消息一致", async () => {
  for (const closeFirst of [false, true]) {
    const builder = new TurnBuilder({ now: () => 3 });
    const seen = events(builder.stream);
    builder.appendText("写文件");
    builder.startToolCall("c1", "read");
    builder.appendToolArguments('{"path":"a.ts"}');
    builder.startToolCall("c2", "write");
    builder.appendToolArguments('{"path":"b.md","content":"# 标题\\n第一');
    if (closeFirst) assert.equal(builder.endBlock(), true);
    assert.equal(builder.finish("length"), true);
    const result = await builder.stream.result();
    assert.equal(result.stopReason, "length", `块已结束: ${closeFirst}`);
    assert.equal("errorMessage" in result, false);
    assert.deepEqual(result.message.content, [
      { type: "text", text: "写文件" },
      { type: "toolCall", id: "c1", name: "read", arguments: { path: "a.ts" } },
      { type: "toolCall", id: "c2", name: "write", arguments: {} },
    ]);
    const list = await seen;
    assert.deepEqual(replay(list), result.message.content, "toolcall_end 带的就是消息里的调用");
    assert.equal(list.filter((e) => e.type === "toolcall_end").length, 2);
  }
});

test("Lab 4.1 · TurnBuilder.fail 保留已完成的块和未完成的文本，丢掉未完成的工具调用；之后的调用都返回 false", async () => {
  const builder = new TurnBuilder({ now: () => 1 });
  builder.appendText("partial");
  builder.fail("network down");
  assert.equal(builder.appendText("more"), false);
  assert.equal(builder.finish("stop"), false);
  const result = await builder.stream.result();
  assert.equal(result.stopReason, "error");
  assert.equal(result.errorMessage, "network down");
  assert.deepEqual(result.message.content, [{ type: "text", text: "partial" }]);

  const withCall = new TurnBuilder();
  withCall.appendText("a");
  withCall.startToolCall("c1", "read");
  withCall.appendToolArguments('{"path":');
  withCall.fail("cut");
  assert.deepEqual((await withCall.stream.result()).message.content, [{ type: "text", text: "a" }]);
});

test("Lab 4.2 · 脚本模型按顺序播放回合，分块流式输出，id 确定", async () => {
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

test("Lab 4.2 · 分块按码点切分，不会切开代理对", async () => {
  const model = new ScriptedModel([turn("a😀b😀")], { chunkSize: 1 });
  const deltas = (await events(model.stream(request()))).filter((e) => e.type === "text_delta").map((e) => (e as { delta: string }).delta);
  assert.deepEqual(deltas, ["a", "😀", "b", "😀"]);
});

test("Lab 4.2 · 模型记录收到的请求副本；之后改动请求不影响记录", async () => {
  const model = new ScriptedModel([turn("ok")]);
  const sent = request("原文");
  const stream = model.stream(sent);
  (sent.messages[0]!.content[0] as { text: string }).text = "改过";
  await finalTurn(stream);
  assert.equal(textOf(model.requests[0]!.messages[0]!), "原文");
});

test("Lab 4.3 · 函数回合根据请求写出回合（能对工具结果作出反应）", async () => {
  const model = new ScriptedModel([(req, n) => turn(`第 ${n} 回合，看到 ${req.messages.length} 条消息`)]);
  const result = await finalTurn(model.stream(request()));
  assert.equal(textOf(result.message), "第 1 回合，看到 1 条消息");
});

test("Lab 4.3 · 失败都变成 error 回合而不是抛出：脚本用完、函数回合抛错、脚本声明的错误、参数不是 JSON", async () => {
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

test("Lab 4.3 · 中止：流式输出途中中止，回合以 aborted 结束，只保留已完成的部分", async () => {
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

test("Lab 4.3 · stopReason 默认按内容推断，也可以由脚本指定", async () => {
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
