import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import test, { type TestContext } from "node:test";
import { deferred } from "../src/async.js";
import { runAgentLoop, toolSpec, type LoopConfig, type LoopEvent } from "../src/agent-loop.js";
import { createAnthropicModel } from "../src/anthropic.js";
import { TurnBuilder, type Model, type ToolSpec } from "../src/model.js";
import { createOpenAIModel } from "../src/openai.js";
import { ScriptedModel, toolCall, turn, type ScriptStep } from "../src/scripted-model.js";
import { createToolExecutor, objectSchema, stringValue, ToolRegistry, type Tool, type ToolExecutor } from "../src/tool.js";
import { text, textOf, userMessage, type AgentMessage, type ToolResultMessage } from "../src/types.js";
import { testSourcePath } from "./support/files.js";
import { startReplayServer } from "./support/replay-server.js";

/** A tool that echoes its `value` and records the calls it ran. */
function echoTool(ran: string[] = []): Tool<{ value: string }> {
  return {
    name: "echo",
    description: "Echo a value back.",
    schema: objectSchema({ value: stringValue() }),
    async execute({ value }) {
      ran.push(value);
      return { content: [text(`echo: ${value}`)] };
    },
  };
}

function setup(script: ScriptStep[], tools: Tool[] = [echoTool()], extra: Partial<LoopConfig> = {}) {
  const model = new ScriptedModel(script, { now: () => 0 });
  const registry = new ToolRegistry(tools);
  const events: LoopEvent[] = [];
  const config: LoopConfig = { model, registry, executor: createToolExecutor(registry), maxTurns: 10, emit: (e) => events.push(e), ...extra };
  return { model, registry, events, config };
}

/** Every tool call has exactly one result, right after its assistant message, in call order. */
function assertPaired(messages: readonly AgentMessage[]): void {
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role !== "assistant") continue;
    const calls = message.content.filter((b) => b.type === "toolCall");
    const results = messages.slice(i + 1, i + 1 + calls.length) as ToolResultMessage[];
    assert.deepEqual(
      results.map((r) => r.role === "toolResult" && r.toolCallId),
      calls.map((c) => c.id),
      `calls of message ${i} are answered in order`,
    );
  }
}

test("Lab 7.1 · 模型请求工具、结果交回模型，直到模型不再调用工具", async () => {
  const ran: string[] = [];
  const { model, config } = setup([turn("先试试", toolCall("echo", { value: "a" }), toolCall("echo", { value: "b" })), turn("都好了")], [echoTool(ran)]);
  const result = await runAgentLoop([], [userMessage("go", 1)], config);
  assert.equal(result.stopReason, "stop");
  assert.equal(result.turns, 2);
  assert.deepEqual(ran, ["a", "b"]);
  assert.deepEqual(
    result.messages.map((m) => m.role),
    ["user", "assistant", "toolResult", "toolResult", "assistant"],
  );
  assertPaired(result.messages);
  assert.equal(textOf(result.messages.at(-1)!), "都好了");
  // The second request carries everything, including both results, and offers the tool.
  const second = model.requests[1]!;
  assert.deepEqual(
    second.messages.map((m) => m.role),
    ["user", "assistant", "toolResult", "toolResult"],
  );
  assert.deepEqual(second.tools, [toolSpec(echoTool())]);
  assert.deepEqual(second.tools[0]!.parameters, {
    type: "object",
    properties: { value: { type: "string" } },
    required: ["value"],
    additionalProperties: false,
  });
});

test("Lab 7.1 · 事件顺序：回合开始、流式事件、消息、工具开始与结束、回合结束", async () => {
  const { events, config } = setup([turn("x", toolCall("echo", { value: "v" })), turn("y")]);
  await runAgentLoop([], [userMessage("go", 1)], config);
  const kinds = events.filter((e) => e.type !== "assistant").map((e) => (e.type === "message" ? `message:${e.message.role}` : e.type));
  assert.deepEqual(kinds, [
    "message:user",
    "turn_start",
    "message:assistant",
    "turn_end",
    "tool_start",
    "message:toolResult",
    "tool_end",
    "turn_start",
    "message:assistant",
    "turn_end",
  ]);
  assert.ok(
    events.some((e) => e.type === "assistant" && e.event.type === "text_delta"),
    "流式事件被转发",
  );
});

test("Lab 7.1 · 历史与输入不被改动；prepareContext 决定每次请求看到什么", async () => {
  const history: AgentMessage[] = [userMessage("old", 1), { role: "assistant", content: [text("old answer")], timestamp: 2 }];
  const before = structuredClone(history);
  const { model, config } = setup([turn("ok")], [], {
    prepareContext: (transcript) => ({ systemPrompt: `你看到 ${transcript.length} 条`, messages: transcript.slice(-1) }),
  });
  const input = [userMessage("new", 3)];
  const result = await runAgentLoop(history, input, config);
  assert.deepEqual(history, before);
  assert.deepEqual(
    result.messages.map((m) => textOf(m)),
    ["new", "ok"],
    "只返回本次运行新增的消息",
  );
  assert.equal(model.requests[0]!.systemPrompt, "你看到 3 条");
  assert.deepEqual(
    model.requests[0]!.messages.map((m) => textOf(m)),
    ["new"],
  );
});

test("Lab 7.1 · prepareContext 拿到的工具说明正是这次请求带着的那一份：它在准备时改了注册表也不变", async () => {
  const seen: (readonly ToolSpec[])[] = [];
  const late: Tool = { ...echoTool(), name: "late" };
  const { model, registry, config } = setup([turn("ok")], [echoTool()], {
    prepareContext: (transcript, tools) => {
      seen.push(tools);
      registry.register(late);
      return { systemPrompt: "", messages: transcript };
    },
  });
  await runAgentLoop([], [userMessage("hi", 1)], config);
  assert.deepEqual(seen, [[toolSpec(echoTool())]]);
  assert.deepEqual(model.requests[0]!.tools, seen[0], "预算看到的工具说明与发出的完全一样");
});

test("Lab 7.2 · 执行器拒绝、答非所问：循环自己补上配对的错误结果", async () => {
  const rejecting: ToolExecutor = async () => {
    throw new Error("host crashed");
  };
  const wrongId: ToolExecutor = async (call) => ({ role: "toolResult", toolCallId: "other", toolName: call.name, content: [], isError: false, timestamp: 0 });
  for (const [name, executor, pattern] of [
    ["rejecting", rejecting, /host crashed/],
    ["wrong id", wrongId, /did not answer this call/],
  ] as const) {
    const { config } = setup([turn(toolCall("echo", { value: "v" })), turn("done")], undefined, { executor });
    const result = await runAgentLoop([], [userMessage("go", 1)], config);
    assertPaired(result.messages);
    const answer = result.messages[2] as ToolResultMessage;
    assert.equal(answer.isError, true, name);
    assert.match(textOf(answer), pattern, name);
    assert.equal(result.stopReason, "stop", `${name}: 模型看到错误后照常收尾`);
  }
});

test("Lab 7.2 · 未知工具与非法参数由执行器配对，模型看到错误后可以改正", async () => {
  const { config } = setup([
    turn(toolCall("nope", {}), toolCall("echo", { wrong: 1 })),
    (request) => turn(`看到 ${request.messages.filter((m) => m.role === "toolResult" && m.isError).length} 个错误`),
  ]);
  const result = await runAgentLoop([], [userMessage("go", 1)], config);
  assertPaired(result.messages);
  assert.equal(textOf(result.messages.at(-1)!), "看到 2 个错误");
});

test("Lab 7.3 · 回合上限：一直要工具的模型在 maxTurns 次调用后停下，每个调用都已配对", async () => {
  const always = Array.from({ length: 5 }, () => turn(toolCall("echo", { value: "again" })));
  const { model, config } = setup(always, undefined, { maxTurns: 3 });
  const result = await runAgentLoop([], [userMessage("go", 1)], config);
  assert.equal(result.stopReason, "turn_limit");
  assert.equal(result.turns, 3);
  assert.equal(model.requests.length, 3);
  assertPaired(result.messages);
  for (const bad of [0, -1, 1.5, Number.NaN]) {
    await assert.rejects(runAgentLoop([], [], { ...config, maxTurns: bad }), { code: "LOOP_CONFIG_INVALID" });
  }
});

test("Lab 7.3 · 失败的回合结束运行：保留文字，不运行任何工具，它的每个调用都配上“回合失败、未运行”的错误结果", async () => {
  const ran: string[] = [];
  const call = toolCall("echo", { value: "never" });
  const { config } = setup([{ ...turn("说到一半", call), error: "overloaded" }], [echoTool(ran)]);
  const result = await runAgentLoop([], [userMessage("go", 1)], config);
  assert.equal(result.stopReason, "error");
  assert.equal(result.errorMessage, "overloaded");
  assert.deepEqual(ran, []);
  const [assistant, answer] = result.messages.slice(-2);
  assert.equal(assistant?.role, "assistant");
  assert.deepEqual(
    assistant.role === "assistant" ? assistant.content.map((block) => block.type) : [],
    ["text", "toolCall"],
    "the call the model made stays, with the text",
  );
  assert.ok(answer?.role === "toolResult" && answer.isError, "the call is answered, right after its message");
  assert.match(answer.role === "toolResult" ? textOf(answer) : "", /^tool "echo" was not run: the model's turn failed before it finished \(overloaded\)$/);
  assertPaired(result.messages);

  const broken: Model = {
    name: "broken",
    stream() {
      throw new Error("bug in model");
    },
  };
  const crashed = await runAgentLoop([], [userMessage("go", 1)], { ...config, model: broken });
  assert.equal(crashed.stopReason, "error");
  assert.match(crashed.errorMessage ?? "", /bug in model/);
  assert.deepEqual(
    crashed.messages.map((m) => m.role),
    ["user"],
    "没有内容的失败回合不留下空消息",
  );
});

test("Lab 7.4 · 中止：流式输出途中中止，运行以 aborted 结束", async () => {
  const controller = new AbortController();
  const { config } = setup([turn("一段很长的回答", toolCall("echo", { value: "x" }))], undefined, {
    signal: controller.signal,
    emit: (event) => {
      if (event.type === "assistant" && event.event.type === "text_delta") controller.abort("stop");
    },
  });
  const result = await runAgentLoop([], [userMessage("go", 1)], config);
  assert.equal(result.stopReason, "aborted");
  assert.equal(result.errorMessage, "stop", "the abort's reason, as for an abort during a tool");
  assertPaired(result.messages);
  assert.equal(
    result.messages.some((m) => m.role === "toolResult"),
    false,
  );
});

test("Lab 7.4 · 中止：不再等待不理会 signal 的工具，剩下的调用都配上“未运行”的结果", async () => {
  const controller = new AbortController();
  const started = deferred<void>();
  const stubborn: Tool = {
    name: "stubborn",
    description: "Never finishes.",
    schema: objectSchema({}),
    execute: () => {
      started.resolve();
      return new Promise(() => {});
    },
  };
  const ran: string[] = [];
  const registry = new ToolRegistry([stubborn, echoTool(ran)]);
  const model = new ScriptedModel([turn(toolCall("stubborn"), toolCall("echo", { value: "later" }))]);
  const running = runAgentLoop([], [userMessage("go", 1)], {
    model,
    registry,
    executor: createToolExecutor(registry, { signal: controller.signal }),
    maxTurns: 5,
    signal: controller.signal,
  });
  await started.promise;
  controller.abort(new Error("用户中止"));
  const result = await running;
  assert.equal(result.stopReason, "aborted");
  assert.equal(result.errorMessage, "用户中止");
  assertPaired(result.messages);
  const [first, second] = result.messages.slice(2) as ToolResultMessage[];
  assert.match(textOf(first!), /stopped: 用户中止/);
  assert.match(textOf(second!), /not run: 用户中止/);
  assert.deepEqual(ran, [], "中止之后不再开始新的工具");
  assert.equal(model.requests.length, 1, "也不再调用模型");
});

test("Lab 7.4 · 运行开始前已中止：只记录输入，不调用模型", async () => {
  const { model, config } = setup([turn("never")], undefined, { signal: AbortSignal.abort() });
  const result = await runAgentLoop([], [userMessage("go", 1)], config);
  assert.equal(result.stopReason, "aborted");
  assert.equal(result.turns, 0);
  assert.equal(model.requests.length, 0);
});

test("Lab 7.5 · takeInput：回合边界送入排队的输入；模型收尾时若有新输入，运行继续", async () => {
  const queue: AgentMessage[][] = [[], [userMessage("顺便看看 b", 9)]];
  const { model, config } = setup([turn(toolCall("echo", { value: "a" })), turn("a 好了"), turn("b 也好了")], undefined, {
    takeInput: () => queue.shift() ?? [],
  });
  const result = await runAgentLoop([], [userMessage("看看 a", 1)], config);
  assert.equal(result.stopReason, "stop");
  assert.deepEqual(
    result.messages.map((m) => (m.role === "user" ? `user:${textOf(m)}` : m.role)),
    ["user:看看 a", "assistant", "toolResult", "assistant", "user:顺便看看 b", "assistant"],
  );
  assert.equal(model.requests.length, 3);
  assert.equal(textOf(model.requests[2]!.messages.at(-1)!), "顺便看看 b");
});

test("Lab 7.5 · 调用方自己的回调抛错时，运行以该错误拒绝", async () => {
  const { config } = setup([turn("x")], undefined, {
    emit: (event) => {
      if (event.type === "assistant") throw new Error("listener bug");
    },
  });
  await assert.rejects(runAgentLoop([], [userMessage("go", 1)], config), /listener bug/);
  const { config: second } = setup([turn("x")], undefined, {
    prepareContext: () => {
      throw new Error("budget bug");
    },
  });
  await assert.rejects(runAgentLoop([], [userMessage("go", 1)], second), /budget bug/);
});

test("Lab 7.5 · length：没有工具调用且输出被截断时，以 length 结束", async () => {
  const { config } = setup([{ ...turn("被截"), stopReason: "length" }]);
  assert.equal((await runAgentLoop([], [userMessage("go", 1)], config)).stopReason, "length");
});

/** Every tool call of the transcript has exactly one result with its id and name, and no result answers nothing. */
function assertEveryCallAnswered(messages: readonly AgentMessage[], label: string): void {
  const calls = messages.flatMap((m) => (m.role === "assistant" ? m.content.filter((b) => b.type === "toolCall") : []));
  const results = messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
  assert.deepEqual(
    results.map((r) => [r.toolCallId, r.toolName]),
    calls.map((c) => [c.id, c.name]),
    `${label}: one result per call, same id and name, in call order`,
  );
  assertPaired(messages);
}

test("Lab 7.5 · length 回合里的调用一个都不运行：每个都配上“输出被截断、未运行”的错误结果，运行以 length 结束", async () => {
  const ran: string[] = [];
  const { model, events, config } = setup(
    [{ ...turn("先读两个", toolCall("echo", { value: "a" }), toolCall("echo", { value: "b" })), stopReason: "length" }, turn("不该被调用")],
    [echoTool(ran)],
  );
  const result = await runAgentLoop([], [userMessage("go", 1)], config);
  assert.equal(result.stopReason, "length");
  assert.deepEqual(ran, [], "截断回合的调用一个都没有运行");
  assert.equal(model.requests.length, 1, "运行在截断的回合之后结束");
  assert.deepEqual(
    result.messages.map((m) => m.role),
    ["user", "assistant", "toolResult", "toolResult"],
  );
  assertEveryCallAnswered(result.messages, "length");
  for (const answer of result.messages.slice(2) as ToolResultMessage[]) {
    assert.equal(answer.isError, true);
    assert.match(textOf(answer), /was not run: the model's output was cut off/);
  }
  assert.equal(
    events.some((e) => e.type === "tool_start"),
    false,
    "没有工具开始运行",
  );
});

test("Lab 7.5 · length 回合之后有排队的输入：运行继续，模型看到未运行调用的错误结果", async () => {
  const queue: AgentMessage[][] = [[userMessage("输出上限调大了，再来", 9)]];
  const ran: string[] = [];
  const { model, config } = setup(
    [
      { ...turn(toolCall("echo", { value: "cut" })), stopReason: "length" },
      (request) => turn(`看到 ${request.messages.filter((m) => m.role === "toolResult" && m.isError).length} 个未运行的调用`),
    ],
    [echoTool(ran)],
    { takeInput: () => queue.shift() ?? [] },
  );
  const result = await runAgentLoop([], [userMessage("go", 1)], config);
  assert.equal(result.stopReason, "stop");
  assert.deepEqual(ran, []);
  assert.equal(model.requests.length, 2);
  assertEveryCallAnswered(result.messages, "length then input");
  assert.equal(textOf(result.messages.at(-1)!), "看到 1 个未运行的调用");
});

test("Lab 7.3 · 说要用工具却一个调用都没有：运行以 error 结束，failure 的代码是 LOOP_TOOL_CALLS_MISSING", async () => {
  const { model, events, config } = setup([{ ...turn("我来调用工具"), stopReason: "toolUse" }, turn("不该被调用")]);
  const result = await runAgentLoop([], [userMessage("go", 1)], config);
  assert.equal(result.stopReason, "error");
  assert.match(result.errorMessage ?? "", /toolUse.*no tool call/);
  assert.equal(result.failure?.code, "LOOP_TOOL_CALLS_MISSING");
  assert.match(result.failure?.message ?? "", /工具/);
  assert.equal(model.requests.length, 1, "不再调用模型");
  assert.deepEqual(
    result.messages.map((m) => textOf(m)),
    ["go", "我来调用工具"],
    "回合的文字保留",
  );
  const end = events.find((e) => e.type === "turn_end");
  assert.equal(end?.type === "turn_end" && end.stopReason, "toolUse");
});

test("Lab 7.3 · 失败回合的 failure（代码与给用户的说明）原样交给 turn_end 事件与运行结果", async () => {
  const failing: Model = {
    name: "failing",
    stream() {
      const builder = new TurnBuilder({ now: () => 0 });
      builder.appendText("半句");
      builder.fail("HTTP 401 authentication_error: invalid x-api-key", "error", { code: "PROVIDER_UNAUTHORIZED", message: "请检查 key" });
      return builder.stream;
    },
  };
  const { events, config } = setup([], undefined, { model: failing });
  const result = await runAgentLoop([], [userMessage("go", 1)], config);
  assert.equal(result.stopReason, "error");
  assert.equal(result.errorMessage, "HTTP 401 authentication_error: invalid x-api-key");
  assert.deepEqual(result.failure, { code: "PROVIDER_UNAUTHORIZED", message: "请检查 key" });
  const end = events.find((e) => e.type === "turn_end");
  assert.deepEqual(end?.type === "turn_end" ? end.failure : undefined, { code: "PROVIDER_UNAUTHORIZED", message: "请检查 key" });
  const plain = setup([{ ...turn("x"), error: "no code" }]);
  assert.equal("failure" in (await runAgentLoop([], [userMessage("go", 1)], plain.config)), false, "没有名字的失败不带 failure");
});

test("Lab 7.3 · 每一种结束状态下，模型发出的每个调用都有配对的结果（id 与名字相同）", async () => {
  const calls = (n: number) => Array.from({ length: n }, (_, i) => toolCall("echo", { value: `v${i}` }));
  const cases: { label: string; script: ScriptStep[]; expected: string; extra?: Partial<LoopConfig> }[] = [
    { label: "stop", script: [turn(...calls(2)), turn("done")], expected: "stop" },
    { label: "stop with calls", script: [{ ...turn(...calls(1)), stopReason: "stop" }, turn("done")], expected: "stop" },
    { label: "length", script: [{ ...turn(...calls(3)), stopReason: "length" }], expected: "length" },
    { label: "turn_limit", script: [turn(...calls(2)), turn(...calls(2))], expected: "turn_limit", extra: { maxTurns: 2 } },
    { label: "error", script: [turn(...calls(1)), { ...turn("x", ...calls(2)), error: "boom" }], expected: "error" },
    { label: "toolUse without calls", script: [turn(...calls(1)), { ...turn("x"), stopReason: "toolUse" }], expected: "error" },
  ];
  for (const c of cases) {
    const { config } = setup(c.script, undefined, c.extra ?? {});
    const result = await runAgentLoop([], [userMessage("go", 1)], config);
    assert.equal(result.stopReason, c.expected, c.label);
    assertEveryCallAnswered(result.messages, c.label);
  }
  const controller = new AbortController();
  const { config } = setup([turn(...calls(3))], undefined, {
    signal: controller.signal,
    emit: (event) => {
      if (event.type === "tool_end") controller.abort("stop");
    },
  });
  const aborted = await runAgentLoop([], [userMessage("go", 1)], config);
  assert.equal(aborted.stopReason, "aborted");
  assertEveryCallAnswered(aborted.messages, "aborted after the first tool");
});

/** A `write` call cut off by the output limit in the middle of its arguments, as each provider streams it. */
const CUT_IN_CALL: { wire: "anthropic" | "openai"; body: string; model(origin: string): Model }[] = [
  {
    wire: "anthropic",
    body: [
      { type: "message_start", message: { id: "msg_cut", type: "message", role: "assistant", content: [], usage: { input_tokens: 30, output_tokens: 1 } } },
      { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_cut", name: "write", input: {} } },
      { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"path": "notes.md", "content": "# Notes\\n\\nFirst' } },
      { type: "content_block_stop", index: 0 },
      { type: "message_delta", delta: { stop_reason: "max_tokens", stop_sequence: null }, usage: { output_tokens: 4096 } },
      { type: "message_stop" },
    ]
      .map((data) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`)
      .join(""),
    model: (origin) => createAnthropicModel({ apiKey: "sk-test", model: "claude-sonnet-4-5", baseUrl: origin, timeoutMs: 10_000 }),
  },
  {
    wire: "openai",
    body:
      [
        { index: 0, delta: { tool_calls: [{ index: 0, id: "call_cut", type: "function", function: { name: "write", arguments: "" } }] }, finish_reason: null },
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, function: { arguments: '{"path": "notes.md", "content": "# Notes\\n\\nFirst' } }] },
          finish_reason: null,
        },
        { index: 0, delta: {}, finish_reason: "length" },
      ]
        .map((choice) => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [choice] })}\n\n`)
        .join("") + "data: [DONE]\n\n",
    model: (origin) => createOpenAIModel({ baseUrl: `${origin}/v1`, model: "gpt-oss:20b", timeoutMs: 10_000 }),
  },
];

/** A `write` tool that records what it was asked to write. */
function writeTool(ran: string[]): Tool<{ path: string; content: string }> {
  return {
    name: "write",
    description: "Write a file.",
    schema: objectSchema({ path: stringValue(), content: stringValue() }),
    async execute({ path }) {
      ran.push(path);
      return { content: [text(`wrote ${path}`)] };
    },
  };
}

async function cutOffRun(t: TestContext, wire: (typeof CUT_IN_CALL)[number]) {
  const answer = readFileSync(testSourcePath("fixtures", wire.wire, "text.sse"), "utf8");
  const server = await startReplayServer(t, [{ body: wire.body }, { body: answer }]);
  const ran: string[] = [];
  const registry = new ToolRegistry([writeTool(ran)]);
  const events: LoopEvent[] = [];
  const config: LoopConfig = { model: wire.model(server.origin), registry, executor: createToolExecutor(registry), maxTurns: 5, emit: (e) => events.push(e) };
  const result = await runAgentLoop([], [userMessage("把笔记写进 notes.md", 1)], config);
  return { server, ran, events, config, result };
}

test("Lab 7.5 · 真实 provider 的回答在工具调用参数中途被输出上限截断：运行以 length 结束（TURN_CUT_OFF），调用不运行、配上错误结果，对话还能接着发送", async (t) => {
  for (const wire of CUT_IN_CALL) {
    const { server, ran, events, config, result } = await cutOffRun(t, wire);
    assert.equal(result.stopReason, "length", `${wire.wire}: 不是 error（不是“服务坏了”）`);
    assert.equal(result.failure, undefined, wire.wire);
    assert.deepEqual(ran, [], `${wire.wire}: 截断的调用没有运行`);
    assert.equal(
      events.some((e) => e.type === "tool_start"),
      false,
      wire.wire,
    );
    assert.deepEqual(
      result.messages.map((m) => m.role),
      ["user", "assistant", "toolResult"],
      wire.wire,
    );
    assertEveryCallAnswered(result.messages, wire.wire);
    const [, assistant, answer] = result.messages;
    assert.deepEqual(assistant?.role === "assistant" && assistant.content, [
      { type: "toolCall", id: `${wire.wire === "anthropic" ? "toolu" : "call"}_cut`, name: "write", arguments: {} },
    ]);
    assert.ok(answer?.role === "toolResult" && answer.isError, wire.wire);
    assert.match(textOf(answer), /was not run: the model's output was cut off/, wire.wire);

    // The transcript goes back to the provider as it is: the next run's request carries the cut call and its answer.
    const next = await runAgentLoop(result.messages, [userMessage("分成几次写", 2)], config);
    assert.equal(next.stopReason, "stop", wire.wire);
    assert.equal(server.requests.length, 2, wire.wire);
    const sent = server.requests[1]!.body;
    assert.match(
      sent,
      wire.wire === "anthropic"
        ? /"type":"tool_use","id":"toolu_cut","name":"write","input":\{\}/
        : /"id":"call_cut","type":"function","function":\{"name":"write","arguments":"\{\}"\}/,
      wire.wire,
    );
    assert.match(sent, /was not run: the model's output was cut off/, wire.wire);
  }
});

test("Lab 7.4 · 循环不再读模型的流时（emit 抛错、流违约失败）就中止这次模型请求，不让它在后台跑完", async () => {
  /** A model that streams one delta and then waits (like a provider mid HTTP stream); it records the signal it got. */
  const signals: (AbortSignal | undefined)[] = [];
  const waiting: Model = {
    name: "waiting",
    stream(_request, options) {
      signals.push(options?.signal);
      const builder = new TurnBuilder({ now: () => 0, ...(options?.signal ? { signal: options.signal } : {}) });
      builder.appendText("半句");
      return builder.stream; // never finishes on its own
    },
  };
  const throwing = (event: LoopEvent) => {
    if (event.type === "assistant") throw new Error("listener bug");
  };
  const run = new AbortController();
  for (const signal of [undefined, run.signal]) {
    const { config } = setup([], undefined, { model: waiting, emit: throwing, ...(signal ? { signal } : {}) });
    await assert.rejects(runAgentLoop([], [userMessage("go", 1)], config), /listener bug/);
    assert.equal(signals.at(-1)?.aborted, true, `emit threw (run signal ${signal ? "given" : "absent"}): the model request is aborted`);
  }
  assert.equal(run.signal.aborted, false, "the run's own signal is not aborted by the loop");

  /** A model that breaks its contract: its stream fails instead of reporting an error turn. */
  const failing: Model = {
    name: "failing-stream",
    stream(_request, options) {
      signals.push(options?.signal);
      const builder = new TurnBuilder({ now: () => 0 });
      builder.stream.fail(new Error("socket reset"));
      return builder.stream;
    },
  };
  const { config } = setup([], undefined, { model: failing });
  const result = await runAgentLoop([], [userMessage("go", 1)], config);
  assert.equal(result.stopReason, "error");
  assert.equal(signals.at(-1)?.aborted, true, "a stream that failed: the model request is aborted too");
});

test("Lab 7.4 · 中止落在工具完成之后：已经到达的结果原样保留，只有没完成、没开始的调用配上错误结果", async () => {
  const controller = new AbortController();
  const writeTool: Tool = {
    name: "write",
    description: "Writes, then the user presses Ctrl-C at that very moment.",
    schema: objectSchema({}),
    async execute() {
      // The abort lands after the tool has finished, before its result reached the loop.
      queueMicrotask(() => controller.abort(new Error("Ctrl-C")));
      return { content: [text("wrote a.txt")] };
    },
  };
  const ran: string[] = [];
  const registry = new ToolRegistry([writeTool, echoTool(ran)]);
  const model = new ScriptedModel([turn(toolCall("write"), toolCall("echo", { value: "later" })), turn("不会到这里")]);
  const result = await runAgentLoop([], [userMessage("go", 1)], {
    model,
    registry,
    executor: createToolExecutor(registry, { signal: controller.signal }),
    maxTurns: 5,
    signal: controller.signal,
  });
  assert.equal(result.stopReason, "aborted");
  assertEveryCallAnswered(result.messages, "abort after a finished tool");
  const [written, notRun] = result.messages.slice(2) as ToolResultMessage[];
  assert.equal(written!.isError, false, "the finished write keeps its real result");
  assert.equal(textOf(written!), "wrote a.txt");
  assert.equal(notRun!.isError, true);
  assert.match(textOf(notRun!), /not run: Ctrl-C/);
  assert.deepEqual(ran, []);
  assert.equal(model.requests.length, 1);
});
