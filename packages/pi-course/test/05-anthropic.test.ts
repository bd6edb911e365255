import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import test from "node:test";
import { anthropicRequestBody, createAnthropicModel, mapStopReason, toAnthropicMessages, type AnthropicModelOptions } from "../src/anthropic.js";
import { finalTurn, type AssistantEvent, type AssistantTurn, type ModelRequest } from "../src/model.js";
import type { AgentMessage } from "../src/types.js";
import { testSourcePath } from "./support/files.js";
import { startReplayServer } from "./support/replay-server.js";

const fixture = (name: string) => readFileSync(testSourcePath("fixtures", "anthropic", name), "utf8");

interface Sent {
  url: string;
  init: RequestInit;
}

/** A `fetch` that replays `body` in the given chunks and records what was sent. */
function replay(body: string | Uint8Array, options: { status?: number; chunk?: number; sent?: Sent[] } = {}): typeof fetch {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  const size = options.chunk ?? bytes.length;
  return (async (url: string | URL | Request, init?: RequestInit) => {
    options.sent?.push({ url: String(url), init: init ?? {} });
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += Math.max(size, 1)) controller.enqueue(bytes.slice(i, i + size));
        controller.close();
      },
    });
    return new Response(stream, { status: options.status ?? 200, headers: { "content-type": "text/event-stream" } });
  }) as typeof fetch;
}

const options = (fetchImpl: typeof fetch, extra: Partial<AnthropicModelOptions> = {}): AnthropicModelOptions => ({
  apiKey: "sk-test",
  model: "claude-sonnet-4-5",
  maxTokens: 1024,
  fetch: fetchImpl,
  now: () => 5,
  ...extra,
});

const simpleRequest: ModelRequest = { systemPrompt: "", messages: [{ role: "user", content: [{ type: "text", text: "hi" }], timestamp: 1 }], tools: [] };

async function play(body: string, chunk?: number): Promise<{ turn: AssistantTurn; events: AssistantEvent[] }> {
  const model = createAnthropicModel(options(replay(body, chunk === undefined ? {} : { chunk })));
  const stream = model.stream(simpleRequest);
  const events: AssistantEvent[] = [];
  for await (const event of stream) events.push(event);
  return { turn: await stream.result(), events };
}

const conversation: AgentMessage[] = [
  { role: "user", content: [{ type: "text", text: "Fix the greeting in src/greet.js" }], timestamp: 1 },
  {
    role: "assistant",
    content: [
      { type: "text", text: "Reading it first." },
      { type: "toolCall", id: "toolu_1", name: "read", arguments: { path: "src/greet.js" } },
      { type: "toolCall", id: "toolu_2", name: "list", arguments: { path: "../" } },
    ],
    timestamp: 2,
  },
  {
    role: "toolResult",
    toolCallId: "toolu_1",
    toolName: "read",
    content: [{ type: "text", text: 'function greet(name) {\n  return "Hello, " + nmae;\n}\n' }],
    isError: false,
    timestamp: 3,
  },
  {
    role: "toolResult",
    toolCallId: "toolu_2",
    toolName: "list",
    content: [{ type: "text", text: "PATH_OUTSIDE_WORKSPACE: ../ is outside the workspace" }],
    isError: true,
    timestamp: 4,
  },
  { role: "user", content: [{ type: "text", text: "Also keep the tests green." }], timestamp: 5 },
];

const readSpec = {
  name: "read",
  description: "Read a text file of the workspace.",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"], additionalProperties: false },
};

test("Lab 5.2 · 请求：系统提示放顶层，工具结果进 user 消息，与录制的请求体一致", async () => {
  const sent: Sent[] = [];
  const model = createAnthropicModel(options(replay(fixture("text.sse"), { sent })));
  await finalTurn(model.stream({ systemPrompt: "You are a careful coding agent.", messages: conversation, tools: [readSpec] }));
  assert.equal(sent.length, 1);
  assert.equal(sent[0]!.url, "https://api.anthropic.com/v1/messages");
  assert.equal(sent[0]!.init.method, "POST");
  const headers = sent[0]!.init.headers as Record<string, string>;
  assert.equal(headers["x-api-key"], "sk-test");
  assert.equal(headers["anthropic-version"], "2023-06-01");
  assert.equal(headers["content-type"], "application/json");
  assert.deepEqual(JSON.parse(String(sent[0]!.init.body)), JSON.parse(fixture("request.json")));
});

test("Lab 5.2 · 消息转换规则：同角色合并、结果排在文本前、空文本与空消息丢弃、无系统提示与工具时不发送字段", () => {
  const text = (t: string) => ({ type: "text" as const, text: t });
  const cases: { name: string; input: AgentMessage[]; expected: unknown }[] = [
    {
      name: "空文本块与空消息被丢弃",
      input: [
        { role: "user", content: [text(""), text("a")], timestamp: 0 },
        { role: "assistant", content: [text("")], timestamp: 0 },
      ],
      expected: [{ role: "user", content: [text("a")] }],
    },
    {
      name: "用户文本之后再来的工具结果也排在文本前面",
      input: [
        { role: "assistant", content: [{ type: "toolCall", id: "t1", name: "x", arguments: {} }], timestamp: 0 },
        { role: "user", content: [text("queued")], timestamp: 0 },
        { role: "toolResult", toolCallId: "t1", toolName: "x", content: [text("r")], isError: false, timestamp: 0 },
      ],
      expected: [
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "x", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: [text("r")], is_error: false }, text("queued")] },
      ],
    },
    {
      name: "空的工具结果保留配对，内容为空数组",
      input: [{ role: "toolResult", toolCallId: "t", toolName: "x", content: [text("")], isError: false, timestamp: 0 }],
      expected: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: [], is_error: false }] }],
    },
  ];
  for (const c of cases) assert.deepEqual(toAnthropicMessages(c.input), c.expected, c.name);
  const bare = anthropicRequestBody(simpleRequest, { model: "m" });
  assert.equal("system" in bare, false);
  assert.equal("tools" in bare, false);
  assert.equal(bare.max_tokens, 4096);
  assert.throws(() => toAnthropicMessages([{ role: "assistant", content: [{ type: "toolCall", id: "t", name: "x", arguments: "raw" }], timestamp: 0 }]), {
    code: "TOOL_ARGUMENTS_INVALID",
  });
});

test("Lab 5.3 · 文本回合：事件、最终消息、用量与停止原因", async () => {
  const { turn, events } = await play(fixture("text.sse"));
  assert.deepEqual(turn, {
    message: { role: "assistant", content: [{ type: "text", text: "你好，我在。😀" }], timestamp: 5 },
    stopReason: "stop",
    usage: { inputTokens: 25, outputTokens: 12 },
  });
  assert.deepEqual(
    events.map((e) => e.type),
    ["text_start", "text_delta", "text_delta", "text_end"],
  );
});

test("Lab 5.3 · 工具回合：跳过 thinking 块，参数分片拼成对象，索引换成我们的位置", async () => {
  const { turn, events } = await play(fixture("tool-use.sse"));
  assert.equal(turn.stopReason, "toolUse");
  assert.deepEqual(turn.usage, { inputTokens: 412, outputTokens: 89 });
  assert.deepEqual(turn.message.content, [
    { type: "text", text: "I'll read the file first." },
    { type: "toolCall", id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", name: "read", arguments: { path: "src/greet.js", limit: 40 } },
  ]);
  const toolEvents = events.filter((e) => e.type.startsWith("toolcall"));
  assert.deepEqual(
    toolEvents.map((e) => [e.type, e.index]),
    [
      ["toolcall_start", 1],
      ["toolcall_delta", 1],
      ["toolcall_delta", 1],
      ["toolcall_delta", 1],
      ["toolcall_end", 1],
    ],
  );
});

test("Lab 5.3 · 同一份录制，无论整块、逐字节还是 7 字节一块，LF 还是 CRLF，结果都相同", async () => {
  for (const name of ["text.sse", "tool-use.sse", "overloaded-midstream.sse", "truncated.sse"]) {
    const lf = fixture(name);
    const expected = await play(lf);
    for (const body of [lf, lf.replace(/\n/g, "\r\n")]) {
      for (const chunk of [1, 7]) assert.deepEqual(await play(body, chunk), expected, `${name} chunk=${chunk} crlf=${body !== lf}`);
    }
  }
});

test("Lab 5.4 · 流中途的 error 事件与被截断的响应都成为 error 回合，保留已到达的文本", async () => {
  const overloaded = (await play(fixture("overloaded-midstream.sse"))).turn;
  assert.equal(overloaded.stopReason, "error");
  assert.equal(overloaded.errorMessage, "provider error: overloaded_error: Overloaded");
  assert.deepEqual(overloaded.message.content, [{ type: "text", text: "Let me" }]);

  const truncated = (await play(fixture("truncated.sse"))).turn;
  assert.equal(truncated.stopReason, "error");
  assert.match(truncated.errorMessage ?? "", /before message_stop/);
  // The last event of the recording has no blank line after it, so by the SSE rules it never arrived.
  assert.deepEqual(truncated.message.content, [{ type: "text", text: "The connection" }]);
});

test("Lab 5.4 · HTTP 错误、网络错误、非法 JSON、未知停止原因、参数不是 JSON：都是 error 回合，从不抛出", async () => {
  const httpTurn = await finalTurn(createAnthropicModel(options(replay(fixture("http-529.json"), { status: 529 }))).stream(simpleRequest));
  assert.equal(httpTurn.stopReason, "error");
  assert.equal(httpTurn.errorMessage, "HTTP 529 overloaded_error: Overloaded");

  const plainHttp = await finalTurn(createAnthropicModel(options(replay("Bad Gateway", { status: 502 }))).stream(simpleRequest));
  assert.equal(plainHttp.errorMessage, "HTTP 502 Bad Gateway");

  const offline = (async () => {
    throw new TypeError("fetch failed");
  }) as unknown as typeof fetch;
  assert.equal((await finalTurn(createAnthropicModel(options(offline)).stream(simpleRequest))).errorMessage, "fetch failed");

  const start = 'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":1,"output_tokens":1}}}\n\n';
  const stop = (reason: string) =>
    `event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"${reason}"},"usage":{"output_tokens":2}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n`;
  const badJson = `${start}event: content_block_delta\ndata: {oops\n\n`;
  assert.match((await play(badJson)).turn.errorMessage ?? "", /invalid JSON/);
  assert.match((await play(start + stop("refusal"))).turn.errorMessage ?? "", /refusal/);
  const badArgs = `${start}event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"read","input":{}}}\n\nevent: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\\"path\\": "}}\n\nevent: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n${stop("tool_use")}`;
  const badArgsTurn = (await play(badArgs)).turn;
  assert.equal(badArgsTurn.stopReason, "error");
  assert.match(badArgsTurn.errorMessage ?? "", /not valid JSON/);
  assert.deepEqual(badArgsTurn.message.content, [], "参数残缺的工具调用不进入消息");
  const stray = `${start}event: content_block_delta\ndata: {"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}\n\n`;
  assert.match((await play(stray)).turn.errorMessage ?? "", /protocol error/);

  const unsendable = await finalTurn(
    createAnthropicModel(options(replay(fixture("text.sse")))).stream({
      systemPrompt: "",
      messages: [{ role: "assistant", content: [{ type: "toolCall", id: "t", name: "x", arguments: [1] }], timestamp: 0 }],
      tools: [],
    }),
  );
  assert.equal(unsendable.stopReason, "error");
  assert.match(unsendable.errorMessage ?? "", /not an object/);
});

test("Lab 5.4 · 停止原因映射", () => {
  const cases: [unknown, string | undefined][] = [
    ["end_turn", "stop"],
    ["stop_sequence", "stop"],
    ["tool_use", "toolUse"],
    ["max_tokens", "length"],
    ["refusal", undefined],
    [null, undefined],
  ];
  for (const [reason, expected] of cases) assert.equal(mapStopReason(reason), expected, String(reason));
});

test("Lab 5.4 · 中止：请求被取消，回合立刻以 aborted 结束，保留已到达的文本", async () => {
  const controller = new AbortController();
  const head = fixture("text.sse").split("event: content_block_stop")[0]!;
  let requestSignal: AbortSignal | undefined;
  const hanging = (async (_url: string | URL | Request, init?: RequestInit) => {
    requestSignal = init?.signal ?? undefined;
    const bytes = new TextEncoder().encode(head);
    const body = new ReadableStream<Uint8Array>({
      start(stream) {
        stream.enqueue(bytes);
        init?.signal?.addEventListener("abort", () => stream.error(init.signal!.reason));
      },
    });
    return new Response(body, { status: 200 });
  }) as typeof fetch;
  const stream = createAnthropicModel(options(hanging)).stream(simpleRequest, { signal: controller.signal });
  const texts: string[] = [];
  for await (const event of stream) {
    if (event.type === "text_delta") texts.push(event.delta);
    if (texts.join("") === "你好，我在。😀") controller.abort("用户中止");
  }
  const turn = await stream.result();
  assert.equal(turn.stopReason, "aborted");
  assert.match(turn.errorMessage ?? "", /用户中止/);
  assert.deepEqual(turn.message.content, [{ type: "text", text: "你好，我在。😀" }]);
  assert.equal(requestSignal?.aborted, true, "中止传到了 fetch");
});

/** Anthropic events, one `event:`/`data:` pair each, as the API streams them. */
const sse = (...events: Record<string, unknown>[]) => events.map((data) => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`).join("");

/** A turn that writes some text, then starts a `write` call and is cut off in the middle of its arguments. */
function cutInCall(options: { closeBlock: boolean; stopReason: string }): string {
  return sse(
    { type: "message_start", message: { id: "msg_cut", type: "message", role: "assistant", content: [], usage: { input_tokens: 30, output_tokens: 1 } } },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "I'll write the notes." } },
    { type: "content_block_stop", index: 0 },
    { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_cut", name: "write", input: {} } },
    { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"path": "notes.md", "content": "# Notes\\n\\nFirst' } },
    ...(options.closeBlock ? [{ type: "content_block_stop", index: 1 }] : []),
    { type: "message_delta", delta: { stop_reason: options.stopReason, stop_sequence: null }, usage: { output_tokens: 4096 } },
    { type: "message_stop" },
  );
}

test("Lab 5.4 · 写到一半的工具调用碰上 max_tokens：回合是 length 而不是坏响应，无论块是否先结束；调用参数为 {}，回合可以再发送", async (t) => {
  for (const closeBlock of [true, false]) {
    const server = await startReplayServer(t, [{ body: cutInCall({ closeBlock, stopReason: "max_tokens" }) }]);
    const model = createAnthropicModel(options(fetch, { baseUrl: server.origin }));
    const stream = model.stream(simpleRequest);
    const events: AssistantEvent[] = [];
    for await (const event of stream) events.push(event);
    const turn = await stream.result();
    const label = `content_block_stop 先到: ${closeBlock}`;
    assert.equal(turn.stopReason, "length", label);
    assert.equal(turn.failure, undefined, label);
    assert.equal(turn.errorMessage, undefined, label);
    assert.deepEqual(turn.usage, { inputTokens: 30, outputTokens: 4096 }, label);
    assert.deepEqual(
      turn.message.content,
      [
        { type: "text", text: "I'll write the notes." },
        { type: "toolCall", id: "toolu_cut", name: "write", arguments: {} },
      ],
      label,
    );
    const end = events.find((e) => e.type === "toolcall_end");
    assert.deepEqual(end?.type === "toolcall_end" && end.toolCall, turn.message.content[1], `${label}: 事件与消息一致`);
    assert.doesNotThrow(() => toAnthropicMessages([turn.message]), `${label}: 消息可以再发送`);
  }
});

test("Lab 5.4 · 参数残缺的调用只有在 max_tokens 回合里才算被截断：tool_use 或 end_turn 回合里仍是 PROVIDER_RESPONSE_INVALID", async (t) => {
  for (const stopReason of ["tool_use", "end_turn"]) {
    for (const closeBlock of [true, false]) {
      const server = await startReplayServer(t, [{ body: cutInCall({ closeBlock, stopReason }) }]);
      const turn = await finalTurn(createAnthropicModel(options(fetch, { baseUrl: server.origin })).stream(simpleRequest));
      const label = `${stopReason} · content_block_stop 先到: ${closeBlock}`;
      assert.equal(turn.stopReason, "error", label);
      assert.equal(turn.failure?.code, "PROVIDER_RESPONSE_INVALID", label);
      assert.deepEqual(turn.message.content, [{ type: "text", text: "I'll write the notes." }], `${label}: 残缺的调用不进入消息`);
    }
  }
});
