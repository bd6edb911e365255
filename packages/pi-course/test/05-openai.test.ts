import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import test, { type TestContext } from "node:test";
import { finalTurn, type AssistantEvent, type AssistantTurn, type ModelRequest } from "../src/model.js";
import { createOpenAIModel, mapFinishReason, openAIRequestBody, toOpenAIMessages, type OpenAIModelOptions } from "../src/openai.js";
import { userMessage, type AgentMessage } from "../src/types.js";
import { testSourcePath } from "./support/files.js";
import { inPieces, startReplayServer, type ReplayStep } from "./support/replay-server.js";

const fixture = (name: string) => readFileSync(testSourcePath("fixtures", "openai", name), "utf8");
/** A safety net only: each test finishes in a fraction of a second, this bounds one that would hang. */
const LIMITS = { timeout: 20_000 };

const options = (origin: string, extra: Partial<OpenAIModelOptions> = {}): OpenAIModelOptions => ({
  baseUrl: `${origin}/v1`,
  model: "gpt-oss:20b",
  timeoutMs: 10_000,
  now: () => 5,
  ...extra,
});

const simpleRequest: ModelRequest = { systemPrompt: "", messages: [{ role: "user", content: [{ type: "text", text: "hi" }], timestamp: 1 }], tools: [] };

async function collect(model: ReturnType<typeof createOpenAIModel>): Promise<{ turn: AssistantTurn; events: AssistantEvent[] }> {
  const stream = model.stream(simpleRequest);
  const events: AssistantEvent[] = [];
  for await (const event of stream) events.push(event);
  return { turn: await stream.result(), events };
}

/** Plays one recorded response through a fresh local server and the adapter. */
async function play(t: TestContext, step: ReplayStep): Promise<{ turn: AssistantTurn; events: AssistantEvent[] }> {
  const server = await startReplayServer(t, [step]);
  return collect(createOpenAIModel(options(server.origin)));
}

/**
 * Plays a body in exactly these pieces, through an in-memory `fetch`: the network would merge
 * small writes into larger reads, so only this way does each piece reach the parser as it is.
 */
function playPieces(pieces: readonly Uint8Array[]): Promise<{ turn: AssistantTurn; events: AssistantEvent[] }> {
  const inMemory = (async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (const piece of pieces) controller.enqueue(piece);
          controller.close();
        },
      }),
      { status: 200, headers: { "content-type": "text/event-stream" } },
    )) as typeof fetch;
  return collect(createOpenAIModel(options("http://127.0.0.1:9", { fetch: inMemory })));
}

const conversation: AgentMessage[] = [
  { role: "user", content: [{ type: "text", text: "Fix the greeting in src/greet.js" }], timestamp: 1 },
  {
    role: "assistant",
    content: [
      { type: "text", text: "Reading it first." },
      { type: "toolCall", id: "call_1", name: "read", arguments: { path: "src/greet.js" } },
      { type: "toolCall", id: "call_2", name: "list", arguments: { path: "../" } },
    ],
    timestamp: 2,
  },
  {
    role: "toolResult",
    toolCallId: "call_1",
    toolName: "read",
    content: [{ type: "text", text: 'function greet(name) {\n  return "Hello, " + nmae;\n}\n' }],
    isError: false,
    timestamp: 3,
  },
  {
    role: "toolResult",
    toolCallId: "call_2",
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

test("OpenAI 兼容服务 · 请求：POST <base>/chat/completions，系统提示是第一条消息，与录制的请求体一致；有 key 才带 Authorization", LIMITS, async (t) => {
  const server = await startReplayServer(t, [{ body: fixture("text.sse") }, { body: fixture("text.sse") }]);
  const full: ModelRequest = { systemPrompt: "You are a careful coding agent.", messages: conversation, tools: [readSpec] };
  await finalTurn(createOpenAIModel(options(server.origin, { apiKey: "sk-local-1234", maxTokens: 1024 })).stream(full));
  await finalTurn(createOpenAIModel(options(server.origin, { baseUrl: `${server.origin}/v1/` })).stream(simpleRequest));
  const [first, second] = server.requests;
  assert.equal(first?.method, "POST");
  assert.equal(first?.url, "/v1/chat/completions");
  assert.equal(first?.headers.authorization, "Bearer sk-local-1234");
  assert.equal(first?.headers["content-type"], "application/json");
  assert.deepEqual(JSON.parse(first?.body ?? ""), JSON.parse(fixture("request.json")));
  assert.equal(second?.url, "/v1/chat/completions", "base URL 末尾的 / 不重复");
  assert.equal(second?.headers.authorization, undefined, "没有 key 就不发 Authorization");
});

test("OpenAI 兼容服务 · 消息转换规则：结果紧跟在要它的助手消息后、只有调用时 content 为 null、空消息丢弃、不需要的字段不发送", () => {
  const text = (t: string) => ({ type: "text" as const, text: t });
  const call = { type: "toolCall" as const, id: "t1", name: "x", arguments: { a: 1 } };
  const cases: { name: string; input: AgentMessage[]; expected: unknown }[] = [
    {
      name: "排队的用户文本之后才到的结果，移到文本前面",
      input: [
        { role: "assistant", content: [call], timestamp: 0 },
        { role: "user", content: [text("queued")], timestamp: 0 },
        { role: "toolResult", toolCallId: "t1", toolName: "x", content: [text("r")], isError: false, timestamp: 0 },
      ],
      expected: [
        { role: "assistant", content: null, tool_calls: [{ id: "t1", type: "function", function: { name: "x", arguments: '{"a":1}' } }] },
        { role: "tool", tool_call_id: "t1", content: "r" },
        { role: "user", content: "queued" },
      ],
    },
    {
      name: "空文本的用户消息与空的助手消息被丢弃；空的工具结果保留配对",
      input: [
        { role: "user", content: [text("")], timestamp: 0 },
        { role: "assistant", content: [text("")], timestamp: 0 },
        { role: "toolResult", toolCallId: "t", toolName: "x", content: [], isError: false, timestamp: 0 },
      ],
      expected: [{ role: "tool", tool_call_id: "t", content: "" }],
    },
  ];
  for (const c of cases) assert.deepEqual(toOpenAIMessages("", c.input), c.expected, c.name);
  const bare = openAIRequestBody(simpleRequest, { model: "m" });
  assert.deepEqual(bare.messages, [{ role: "user", content: "hi" }], "没有系统提示就没有 system 消息");
  assert.equal("tools" in bare, false);
  assert.equal("max_tokens" in bare, false, "没给上限就用服务端的默认值");
  assert.deepEqual(bare.stream_options, { include_usage: true });
  assert.throws(() => toOpenAIMessages("", [{ role: "assistant", content: [{ ...call, arguments: [1] }], timestamp: 0 }]), { code: "TOOL_ARGUMENTS_INVALID" });
});

test("OpenAI 兼容服务 · 文本回合：content 片段拼成文本，最后一块带用量，[DONE] 结束", LIMITS, async (t) => {
  const { turn, events } = await play(t, { body: fixture("text.sse") });
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

test("OpenAI 兼容服务 · 工具回合：delta.tool_calls 的片段按 index 拼成调用，跳过 reasoning_content", LIMITS, async (t) => {
  const { turn, events } = await play(t, { body: fixture("tool-calls.sse") });
  assert.equal(turn.stopReason, "toolUse");
  assert.deepEqual(turn.usage, { inputTokens: 412, outputTokens: 89 });
  assert.deepEqual(turn.message.content, [
    { type: "text", text: "I'll read the file first." },
    { type: "toolCall", id: "call_9Jk2mQ7rXw4T", name: "read", arguments: { path: "src/greet.js", limit: 40 } },
    { type: "toolCall", id: "call_3Vn8pLs1Yd6E", name: "list", arguments: { path: "src" } },
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
      ["toolcall_start", 2],
      ["toolcall_delta", 2],
      ["toolcall_end", 2],
    ],
  );
});

test("OpenAI 兼容服务 · 同一份录制，整块、逐字节还是 7 字节一块，LF 还是 CRLF，结果都相同", LIMITS, async (t) => {
  for (const name of ["text.sse", "tool-calls.sse", "midstream-error.sse", "truncated.sse"]) {
    const lf = fixture(name);
    const expected = await play(t, { body: lf });
    for (const body of [lf, lf.replace(/\n/g, "\r\n")]) {
      for (const size of [1, 7]) assert.deepEqual(await playPieces(inPieces(body, size)), expected, `${name} size=${size} crlf=${body !== lf}`);
    }
  }
});

test("OpenAI 兼容服务 · finish_reason 映射", () => {
  const cases: [unknown, string | undefined][] = [
    ["stop", "stop"],
    ["tool_calls", "toolUse"],
    ["function_call", "toolUse"],
    ["length", "length"],
    ["content_filter", undefined],
    [null, undefined],
  ];
  for (const [reason, expected] of cases) assert.equal(mapFinishReason(reason), expected, String(reason));
});

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const callFragment = (index: number, fn: Record<string, unknown>, id?: string) => ({
  tool_calls: [{ index, ...(id ? { id, type: "function" } : {}), function: fn }],
});
/** A tool turn whose single call has no `id`, as some compatible servers send it. */
const callWithoutId = chunk(callFragment(0, { name: "list", arguments: "{}" })) + chunk({}, "tool_calls") + "data: [DONE]\n\n";

test(
  "OpenAI 兼容服务 · 兼容服务的宽松之处：带调用却说 stop 的回合是 toolUse；有 finish_reason 而缺 [DONE] 的回合是完整的；length 照实报告",
  LIMITS,
  async (t) => {
    const stopWithCall = chunk(callFragment(0, { name: "read", arguments: '{"path":"a"}' }, "call_a")) + chunk({}, "stop") + "data: [DONE]\n\n";
    const withCall = (await play(t, { body: stopWithCall })).turn;
    assert.equal(withCall.stopReason, "toolUse");
    assert.deepEqual(withCall.message.content, [{ type: "toolCall", id: "call_a", name: "read", arguments: { path: "a" } }]);

    const noDone = chunk({ content: "ok" }) + chunk({}, "stop");
    const complete = (await play(t, { body: noDone })).turn;
    assert.equal(complete.stopReason, "stop");
    assert.equal("errorMessage" in complete, false);

    const cut = chunk({ content: "说到一半" }) + chunk({}, "length") + "data: [DONE]\n\n";
    assert.equal((await play(t, { body: cut })).turn.stopReason, "length");

    const [noId] = (await play(t, { body: callWithoutId })).turn.message.content;
    assert.ok(noId?.type === "toolCall");
    assert.match(noId.id, /^call_[0-9a-f]{12}_\d+$/, "缺 id 的调用得到我们的 id");
    assert.deepEqual({ ...noId, id: "" }, { type: "toolCall", id: "", name: "list", arguments: {} });
  },
);

test(
  "OpenAI 兼容服务 · 出错都是带代码的 error 回合，保留已到达的文本：流中的 error、截断、非法 JSON、交错或无名的调用片段、未知的结束原因",
  LIMITS,
  async (t) => {
    const midstream = (await play(t, { body: fixture("midstream-error.sse") })).turn;
    assert.equal(midstream.stopReason, "error");
    assert.equal(midstream.errorMessage, "provider error: server_error: The model stopped generating because the server ran out of memory.");
    assert.equal(midstream.failure?.code, "PROVIDER_STREAM_ERROR");
    assert.deepEqual(midstream.message.content, [{ type: "text", text: "Let me" }]);

    const truncated = (await play(t, { body: fixture("truncated.sse") })).turn;
    assert.equal(truncated.failure?.code, "PROVIDER_STREAM_ENDED");
    assert.equal(truncated.errorMessage, "the response ended before [DONE]");
    // The last chunk of the recording has no blank line after it, so by the SSE rules it never arrived.
    assert.deepEqual(truncated.message.content, [{ type: "text", text: "The connection" }]);

    const cases: [string, string, RegExp][] = [
      ["invalid JSON", "data: {oops\n\n", /invalid JSON/],
      [
        "interleaved fragments",
        chunk(callFragment(0, { name: "a", arguments: "{}" }, "c0")) +
          chunk(callFragment(1, { name: "b", arguments: "{}" }, "c1")) +
          chunk(callFragment(0, { arguments: " " })),
        /protocol error: a fragment of tool call 0/,
      ],
      ["a call without a name", chunk(callFragment(0, { arguments: "{}" }, "c0")), /began without a function name/],
      ["unknown finish reason", chunk({ content: "x" }, "content_filter") + "data: [DONE]\n\n", /content_filter/],
      [
        "arguments that are not JSON",
        chunk(callFragment(0, { name: "a", arguments: '{"path": ' }, "c0")) + chunk({}, "tool_calls") + "data: [DONE]\n\n",
        /not valid JSON/,
      ],
    ];
    for (const [label, body, pattern] of cases) {
      const turn = (await play(t, { body })).turn;
      assert.equal(turn.stopReason, "error", label);
      assert.equal(turn.failure?.code, "PROVIDER_RESPONSE_INVALID", label);
      assert.match(turn.errorMessage ?? "", pattern, label);
    }
  },
);

test("OpenAI 兼容服务 · 写到一半的工具调用碰上 finish_reason length：回合是 length 而不是坏响应；完整的调用保留参数，残缺的参数为 {}", LIMITS, async (t) => {
  const body =
    chunk({ content: "Writing both." }) +
    chunk(callFragment(0, { name: "read", arguments: '{"path":"a.md"}' }, "call_a")) +
    chunk(callFragment(1, { name: "write", arguments: '{"path": "notes.md", "content": "# Notes\\n\\nFir' }, "call_b")) +
    chunk({}, "length") +
    "data: [DONE]\n\n";
  const { turn, events } = await play(t, { body });
  assert.equal(turn.stopReason, "length");
  assert.equal(turn.failure, undefined);
  assert.deepEqual(turn.message.content, [
    { type: "text", text: "Writing both." },
    { type: "toolCall", id: "call_a", name: "read", arguments: { path: "a.md" } },
    { type: "toolCall", id: "call_b", name: "write", arguments: {} },
  ]);
  const ends = events.flatMap((e) => (e.type === "toolcall_end" ? [e.toolCall] : []));
  assert.deepEqual(ends, turn.message.content.slice(1), "事件与消息一致");
  assert.doesNotThrow(() => toOpenAIMessages("", [turn.message]), "消息可以再发送");

  const notCut = (await play(t, { body: body.replace('"finish_reason":"length"', '"finish_reason":"tool_calls"') })).turn;
  assert.equal(notCut.stopReason, "error", "tool_calls 回合里的残缺参数仍是坏响应");
  assert.equal(notCut.failure?.code, "PROVIDER_RESPONSE_INVALID");
});

const callIdOf = (turn: AssistantTurn): string => {
  const block = turn.message.content.find((b) => b.type === "toolCall");
  assert.ok(block?.type === "toolCall", "the turn has a call");
  return block.id;
};

test("OpenAI 兼容服务 · 服务端没给调用 id：补上的 id 在会话里唯一（每一轮、每个模型都不同），也不与对话里已有的 id 重复", LIMITS, async (t) => {
  const server = await startReplayServer(t, [{ body: callWithoutId }, { body: callWithoutId }, { body: callWithoutId }, { body: callWithoutId }]);
  const model = createOpenAIModel(options(server.origin));
  const first = callIdOf(await finalTurn(model.stream(simpleRequest)));
  const second = callIdOf(await finalTurn(model.stream(simpleRequest)));
  assert.notEqual(first, second, "同一个模型的两轮不重复");
  const other = callIdOf(await finalTurn(createOpenAIModel(options(server.origin)).stream(simpleRequest)));
  assert.ok(other !== first && other !== second, "另一个模型（另一次会话）的 id 也不同");

  // Fallback ids are `call_<tag>_<n>` (see openai.ts): the next one of `model` would be `<tag>_3`.
  // A server gave that id earlier in the conversation, so the adapter must not reuse it.
  const taken = second.replace(/\d+$/, (n) => String(Number(n) + 1));
  assert.notEqual(taken, second);
  const history: AgentMessage[] = [
    userMessage("list", 1),
    { role: "assistant", content: [{ type: "toolCall", id: taken, name: "list", arguments: {} }], timestamp: 2 },
    { role: "toolResult", toolCallId: taken, toolName: "list", content: [{ type: "text", text: "a.md" }], isError: false, timestamp: 3 },
  ];
  const third = callIdOf(await finalTurn(model.stream({ systemPrompt: "", messages: history, tools: [] })));
  assert.ok(![first, second, taken].includes(third), `${third} 是新的 id`);
});

test("OpenAI 兼容服务 · 只有真正的用量块（choices 为 [] 或缺失而带 usage）被跳过；choices 形状不对的块是 PROVIDER_RESPONSE_INVALID", LIMITS, async (t) => {
  const raw = (data: Record<string, unknown>) => `data: ${JSON.stringify(data)}\n\n`;
  const skipped = (
    await play(t, {
      body:
        raw({ id: "c", choices: [], prompt_filter_results: [] }) +
        chunk({ content: "ok" }, "stop") +
        raw({ id: "c", usage: { prompt_tokens: 3, completion_tokens: 1 } }) +
        "data: [DONE]\n\n",
    })
  ).turn;
  assert.equal(skipped.stopReason, "stop");
  assert.deepEqual(skipped.message.content, [{ type: "text", text: "ok" }]);
  assert.deepEqual(skipped.usage, { inputTokens: 3, outputTokens: 1 });

  const broken: [string, Record<string, unknown>][] = [
    ["choices 是对象", { id: "c", choices: { index: 0, delta: { content: "lost" }, finish_reason: null } }],
    ["choices 是 null", { id: "c", choices: null, usage: { prompt_tokens: 1, completion_tokens: 1 } }],
    ["choices 缺失也没有 usage", { id: "c", object: "chat.completion.chunk" }],
    ["choice 不是对象", { id: "c", choices: ["lost"] }],
    ["delta 不是对象", { id: "c", choices: [{ index: 0, delta: "lost", finish_reason: null }] }],
    ["content 不是字符串", { id: "c", choices: [{ index: 0, delta: { content: ["lost"] }, finish_reason: null }] }],
    ["tool_calls 不是数组", { id: "c", choices: [{ index: 0, delta: { tool_calls: { index: 0 } }, finish_reason: null }] }],
    ["调用片段不是对象", { id: "c", choices: [{ index: 0, delta: { tool_calls: ["lost"] }, finish_reason: null }] }],
    ["finish_reason 不是字符串", { id: "c", choices: [{ index: 0, delta: {}, finish_reason: 1 }] }],
  ];
  for (const [label, data] of broken) {
    const turn = (await play(t, { body: chunk({ content: "kept " }) + raw(data) + chunk({}, "stop") + "data: [DONE]\n\n" })).turn;
    assert.equal(turn.stopReason, "error", label);
    assert.equal(turn.failure?.code, "PROVIDER_RESPONSE_INVALID", label);
    assert.deepEqual(turn.message.content, [{ type: "text", text: "kept " }], `${label}: 已到达的文本保留`);
  }
});
