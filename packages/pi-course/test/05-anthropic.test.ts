/**
 * Chapter 05 labs · the Anthropic adapter: our conversation written as the Messages API's
 * request (Lab 5.2), the API's server-sent events read back into a chapter 04 turn (Lab 5.3),
 * an `error` event and the retry before the answer begins (Lab 5.4). Twelve tests in three
 * labs (4, 5, 3); every name starts with its lab id, so one lab runs alone with
 *
 *   npm run lab -w @pi/course -- 5.3
 *
 * Every check runs under `rule("§C…：…")` or `holds("§C…：…")`, naming the rule of the contract
 * appendix of chapters/05-provider/README.md that it checks. Everything is observed through the
 * public surface: the request `anthropicRequest` would send, the events and the turn a
 * `TurnBuilder` gets from `readAnthropicEvents`, and, in Lab 5.4, what a model made by
 * `createAnthropicModel` asks a local replay server (127.0.0.1, never the network) and answers.
 * Failure messages are written here, in words and shown values. Rules that hold for every input
 * (any conversation is sent with alternating roles and nothing lost; however the events are
 * split and the bytes cut, the same turn) are also checked as properties with `holds()`.
 *
 * The tests of a lab use nothing of a later lab, so each lab turns green on its own, in order:
 * Lab 5.2 reads the request without sending it, Lab 5.3 reads events without a model (the
 * model's way in is Lab 5.4's `openAnthropicEvents`) and without any `error` event.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import test, { type TestContext } from "node:test";
import fc from "fast-check";
import { assertNever, UnreachableError } from "../src/async.js";
import {
  anthropicFacts,
  anthropicRequest,
  anthropicRequestBody,
  createAnthropicModel,
  mapStopReason,
  readAnthropicEvents,
  toAnthropicMessages,
  type AnthropicModelOptions,
} from "../src/anthropic.js";
import { ModelError, TurnBuilder, type AssistantEvent, type AssistantTurn, type ModelRequest, type ToolSpec } from "../src/model.js";
import type { RetryInfo, RetryPolicy } from "../src/provider-retry.js";
import { parseSse, type SseEvent } from "../src/sse.js";
import type { AgentMessage, AssistantMessage, ToolResultMessage } from "../src/types.js";
import { testSourcePath } from "./support/files.js";
import { holds } from "./support/properties.js";
import { startReplayServer, type ReplayStep } from "./support/replay-server.js";
import { isScaffold, rule } from "./support/rules.js";

// ---------------------------------------------------------------------------
// Showing values, reading turns, the running example
// ---------------------------------------------------------------------------

/** A value as a failure message shows it. */
const show = (value: unknown): string => fc.stringify(value);

/** Fails with `message` unless `condition` holds (a message written here, never `node:assert`'s diff). */
function expect(condition: boolean, message: string): asserts condition {
  if (!condition) assert.fail(message);
}

/** Fails unless `got` equals `wanted` (deep, strict), saying what `what` should have been and was. */
function same(got: unknown, wanted: unknown, what: string): void {
  let equal = true;
  try {
    assert.deepStrictEqual(got, wanted);
  } catch {
    equal = false;
  }
  expect(equal, `${what}\n应当是：${show(wanted)}\n实际是：${show(got)}`);
}

const fixture = (name: string) => readFileSync(testSourcePath("fixtures", "anthropic", name), "utf8");
const FACTS = anthropicFacts("claude-sonnet-4-5");

/** A starter's scaffold error at the end of a turn's `errorMessage`: the adapter caught it; it still means "not written yet". */
const SCAFFOLD_IN_TEXT = /(Lab \d+\.\d+ .+ 尚未实现)$/;

/** Throws the scaffold error a failed turn carries, if it carries one. */
function scaffoldOf(turn: AssistantTurn): void {
  const scaffold = turn.errorMessage === undefined ? null : SCAFFOLD_IN_TEXT.exec(turn.errorMessage);
  if (scaffold !== null) throw new Error(scaffold[1]);
}

/** One Anthropic event per `data` object, `event:` named after its `type`, as the API streams them. */
function sse(...events: Record<string, unknown>[]): string {
  return events.map((data) => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`).join("");
}

/** The events of `body`, its bytes cut after each offset of `cuts`, through chapter 05's `parseSse` (Lab 5.1). */
function eventsOf(body: string, cuts: readonly number[] = []): AsyncIterable<SseEvent> {
  const bytes = new TextEncoder().encode(body);
  const at = [...cuts.map((cut) => cut % (bytes.length + 1))].sort((a, b) => a - b);
  async function* pieces(): AsyncGenerator<Uint8Array> {
    let from = 0;
    for (const cut of [...at, bytes.length]) {
      yield bytes.slice(from, cut);
      from = cut;
    }
  }
  return parseSse(pieces());
}

/** What `readAnthropicEvents` made of `events`: every assistant event and the turn (a scaffold error in it is thrown on). */
async function read(events: AsyncIterable<SseEvent>): Promise<{ turn: AssistantTurn; events: AssistantEvent[] }> {
  const builder = new TurnBuilder({ now: () => 5 });
  await readAnthropicEvents(events, builder, FACTS);
  expect(builder.closed, "readAnthropicEvents 返回了，回合却还没有结束（既没有 finish，也没有 fail）");
  const seen: AssistantEvent[] = [];
  for await (const event of builder.stream) seen.push(event);
  const turn = await builder.stream.result();
  scaffoldOf(turn);
  return { turn, events: seen };
}

/** The events as short lines: `text_delta 0 "我先"`, `toolcall_end 1 read {"path":"a.ts"}`. */
function lines(events: readonly AssistantEvent[]): string[] {
  return events.map((event) => {
    switch (event.type) {
      case "text_start":
        return `text_start ${event.index}`;
      case "text_delta":
        return `text_delta ${event.index} ${JSON.stringify(event.delta)}`;
      case "text_end":
        return `text_end ${event.index} ${JSON.stringify(event.text)}`;
      case "toolcall_start":
        return `toolcall_start ${event.index} ${event.id} ${event.name}`;
      case "toolcall_delta":
        return `toolcall_delta ${event.index} ${JSON.stringify(event.delta)}`;
      case "toolcall_end":
        return `toolcall_end ${event.index} ${event.toolCall.name} ${JSON.stringify(event.toolCall.arguments)}`;
      default:
        return assertNever(event, "assistant event");
    }
  });
}

/** Fails unless `turn` failed with `code`, its `errorMessage` matching `detail`, keeping `content`. */
function failedWith(turn: AssistantTurn, code: string, detail: RegExp, content: AssistantMessage["content"], what: string): void {
  same([turn.stopReason, turn.failure?.code], ["error", code], `${what}：[stopReason, failure.code]`);
  expect(detail.test(turn.errorMessage ?? ""), `${what}：errorMessage 应当符合 ${detail}，实际是 ${show(turn.errorMessage)}`);
  same(turn.message.content, content, `${what}：回合的消息里留下的块`);
}

/** The running example (chapter text, section 1): the question, the model's first turn, the tool's result. */
const ASK: AgentMessage = { role: "user", content: [{ type: "text", text: "a.ts 里有什么？" }], timestamp: 1 };
const ANSWER: AssistantMessage = {
  role: "assistant",
  content: [
    { type: "text", text: "我先读一下 a.ts。" },
    { type: "toolCall", id: "toolu_01ReadA", name: "read", arguments: { path: "a.ts" } },
  ],
  timestamp: 2,
};
const RESULT: ToolResultMessage = {
  role: "toolResult",
  toolCallId: "toolu_01ReadA",
  toolName: "read",
  content: [{ type: "text", text: "export const a = 1;\n" }],
  isError: false,
  timestamp: 3,
};
const READ: ToolSpec = {
  name: "read",
  description: "Read a file of the workspace.",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};

const OPTIONS: AnthropicModelOptions = { apiKey: "sk-ant-test-key", model: "claude-sonnet-4-5" };

/** The JSON body `anthropicRequest` (given) would send for `request`. */
function bodyOf(request: ModelRequest, options: Partial<AnthropicModelOptions> = {}): Record<string, unknown> {
  return JSON.parse(anthropicRequest(request, { ...OPTIONS, ...options }).init.body) as Record<string, unknown>;
}

/** What `run` threw (a scaffold error is thrown on), or a failure saying it did not throw. */
function thrownBy(run: () => unknown, what: string): unknown {
  try {
    run();
  } catch (error) {
    if (isScaffold(error)) throw error;
    return error;
  }
  return assert.fail(`${what}：应当抛错，却没有抛`);
}

const text = (value: string) => ({ type: "text" as const, text: value });

// ---------------------------------------------------------------------------
// Lab 5.2 · 请求：对话写成 Anthropic 的消息
// ---------------------------------------------------------------------------

test("Lab 5.2 · 例子：第 1 节那段对话写成请求体", async () => {
  const request: ModelRequest = {
    systemPrompt: "你是一个细心的编程助手。",
    messages: [ASK, ANSWER, RESULT, { role: "user", content: [text("顺便看看 b.ts。")], timestamp: 4 }],
    tools: [READ],
  };
  await rule(
    "§C4.1、§C4.2：请求体：model、max_tokens、stream、system、tools；用户的文字和工具结果是 user，助手的是 assistant；调用是 tool_use，结果是 tool_result",
    () => {
      same(
        bodyOf(request),
        {
          model: "claude-sonnet-4-5",
          max_tokens: 4096,
          stream: true,
          system: "你是一个细心的编程助手。",
          messages: [
            { role: "user", content: [text("a.ts 里有什么？")] },
            { role: "assistant", content: [text("我先读一下 a.ts。"), { type: "tool_use", id: "toolu_01ReadA", name: "read", input: { path: "a.ts" } }] },
            {
              role: "user",
              content: [
                { type: "tool_result", tool_use_id: "toolu_01ReadA", content: [text("export const a = 1;\n")], is_error: false },
                text("顺便看看 b.ts。"),
              ],
            },
          ],
          tools: [{ name: "read", description: "Read a file of the workspace.", input_schema: READ.parameters }],
        },
        "第 1 节那段对话的请求体",
      );
    },
  );
  await rule("§C4.1：max_tokens 是给定的值，没给时 4096；没有系统提示、没有工具时，请求体里没有 system、tools 这两个字段", () => {
    const bare = bodyOf({ systemPrompt: "", messages: [ASK], tools: [] }, { maxTokens: 1024 });
    same(Object.keys(bare).sort(), ["max_tokens", "messages", "model", "stream"], "没有系统提示和工具时请求体的字段");
    same(bare.max_tokens, 1024, "给了 maxTokens 时的 max_tokens");
    same(bodyOf({ systemPrompt: "", messages: [ASK], tools: [] }, { maxTokens: 0 }).max_tokens, 0, "maxTokens 是 0（给了，就原样用）时的 max_tokens");
    same(bodyOf({ systemPrompt: " \n", messages: [ASK], tools: [] }).system, " \n", "系统提示只有空白（不是空串）时的 system：原样");
  });
  await rule("§C4.1、§C4.2、§C4.3：录制的请求（一轮两个调用、一个错误结果、之后用户又说了一句）和课程的请求体一致", () => {
    const conversation: AgentMessage[] = [
      { role: "user", content: [text("Fix the greeting in src/greet.js")], timestamp: 1 },
      {
        role: "assistant",
        content: [
          text("Reading it first."),
          { type: "toolCall", id: "toolu_1", name: "read", arguments: { path: "src/greet.js" } },
          { type: "toolCall", id: "toolu_2", name: "list", arguments: { path: "../" } },
        ],
        timestamp: 2,
      },
      {
        role: "toolResult",
        toolCallId: "toolu_1",
        toolName: "read",
        content: [text('function greet(name) {\n  return "Hello, " + nmae;\n}\n')],
        isError: false,
        timestamp: 3,
      },
      {
        role: "toolResult",
        toolCallId: "toolu_2",
        toolName: "list",
        content: [text("PATH_OUTSIDE_WORKSPACE: ../ is outside the workspace")],
        isError: true,
        timestamp: 4,
      },
      { role: "user", content: [text("Also keep the tests green.")], timestamp: 5 },
    ];
    const readSpec: ToolSpec = {
      name: "read",
      description: "Read a text file of the workspace.",
      parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"], additionalProperties: false },
    };
    same(
      bodyOf({ systemPrompt: "You are a careful coding agent.", messages: conversation, tools: [readSpec] }, { maxTokens: 1024 }),
      JSON.parse(fixture("request.json")),
      "test/fixtures/anthropic/request.json",
    );
  });
});

test("Lab 5.2 · 合并与丢弃：同角色相邻就合成一条，结果排在文字前面，空文本和空消息不发", async () => {
  await rule("§C4.3：用户的文字排在工具结果前面时，合成的 user 消息里结果在前、文字在后，各自保持原来的顺序", () => {
    same(
      toAnthropicMessages([
        { role: "assistant", content: [{ type: "toolCall", id: "t1", name: "x", arguments: {} }], timestamp: 0 },
        { role: "user", content: [text("排队的一句")], timestamp: 0 },
        { role: "toolResult", toolCallId: "t1", toolName: "x", content: [text("r1")], isError: false, timestamp: 0 },
        { role: "user", content: [text("又一句")], timestamp: 0 },
      ]),
      [
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "x", input: {} }] },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "t1", content: [text("r1")], is_error: false }, text("排队的一句"), text("又一句")],
        },
      ],
      "调用、用户的一句、结果、又一句",
    );
  });
  await rule("§C4.3：相邻的两条助手消息合成一条，块按原来的顺序", () => {
    same(
      toAnthropicMessages([
        { role: "assistant", content: [text("一")], timestamp: 0 },
        { role: "assistant", content: [text("二"), { type: "toolCall", id: "t", name: "x", arguments: { n: 1 } }], timestamp: 0 },
      ]),
      [{ role: "assistant", content: [text("一"), text("二"), { type: "tool_use", id: "t", name: "x", input: { n: 1 } }] }],
      "两条助手消息",
    );
  });
  await rule("§C4.3：空的文本块不发；一个块都不剩的消息整条不发（它两边的同角色消息因此相邻，合成一条）；空的工具结果照样发，content 是空数组", () => {
    same(
      toAnthropicMessages([
        { role: "user", content: [text(""), text("a")], timestamp: 0 },
        { role: "assistant", content: [text("")], timestamp: 0 },
        { role: "user", content: [text("b")], timestamp: 0 },
        { role: "assistant", content: [], timestamp: 0 },
      ]),
      [{ role: "user", content: [text("a"), text("b")] }],
      "空文本、只有空文本的助手消息、没有块的助手消息",
    );
    same(
      toAnthropicMessages([
        { role: "user", content: [text(" "), text("\n")], timestamp: 0 },
        { role: "assistant", content: [text("\t"), text("  两边有空格  \r\n")], timestamp: 0 },
        { role: "toolResult", toolCallId: "t", toolName: "x", content: [text(" ")], isError: false, timestamp: 0 },
      ]),
      [
        { role: "user", content: [text(" "), text("\n")] },
        { role: "assistant", content: [text("\t"), text("  两边有空格  \r\n")] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: [text(" ")], is_error: false }] },
      ],
      "只有空白的文字不是空的：照样发，文字原样（不去空白、不改行尾）",
    );
    same(
      toAnthropicMessages([{ role: "toolResult", toolCallId: "t", toolName: "x", content: [text("")], isError: true, timestamp: 0 }]),
      [{ role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: [], is_error: true }] }],
      "文字为空的错误结果",
    );
  });
});

/** The text of a block: empty, only whitespace, or anything (line ends and surrounding spaces included). */
const anyText = fc.oneof(fc.constantFrom("", "", " ", "\n", "\r\n", " 好 "), fc.string({ unit: "binary", maxLength: 6 }));

/** A block of an assistant message, as the property below generates it. */
const assistantBlock = fc.oneof(
  anyText.map(text),
  fc
    .tuple(
      fc.constantFrom("t1", "t2", "call_3"),
      fc.constantFrom("read", "list"),
      fc.dictionary(fc.constantFrom("path", "n"), fc.jsonValue(), { maxKeys: 2, noNullPrototype: true }),
    )
    .map(([id, name, args]) => ({ type: "toolCall" as const, id, name, arguments: args as Record<string, unknown> })),
);

/** Any message of our IR, empty text included. */
const anyMessage: fc.Arbitrary<AgentMessage> = fc.oneof(
  fc.array(anyText.map(text), { maxLength: 3 }).map((content) => ({ role: "user" as const, content, timestamp: 0 })),
  fc.array(assistantBlock, { maxLength: 3 }).map((content) => ({ role: "assistant" as const, content, timestamp: 0 })),
  fc
    .tuple(fc.constantFrom("t1", "t2"), fc.array(anyText.map(text), { maxLength: 2 }), fc.boolean())
    .map(([id, content, isError]) => ({ role: "toolResult" as const, toolCallId: id, toolName: "read", content, isError, timestamp: 0 })),
);

/** The Anthropic blocks a message of ours should become, written here another way: empty text left out. */
function expectedBlocks(message: AgentMessage): { role: "user" | "assistant"; results: unknown[]; others: unknown[] } {
  const texts = (blocks: readonly { type: string; text?: string }[]) => blocks.flatMap((b) => (b.type === "text" && b.text !== "" ? [text(b.text!)] : []));
  if (message.role === "toolResult") {
    return {
      role: "user",
      results: [{ type: "tool_result", tool_use_id: message.toolCallId, content: texts(message.content), is_error: message.isError }],
      others: [],
    };
  }
  if (message.role === "user") return { role: "user", results: [], others: texts(message.content) };
  const others = message.content.flatMap((b): unknown[] =>
    b.type === "text" ? texts([b]) : [{ type: "tool_use", id: b.id, name: b.name, input: b.arguments }],
  );
  return { role: "assistant", results: [], others };
}

test("Lab 5.2 · 任意一段对话：角色交替，每条 user 消息结果在前，内容一个不少、次序不乱", async () => {
  await holds(
    "§C4.2、§C4.3：任何一串消息（文字、空文本、调用、结果，任意顺序）：相邻两条的 role 不同；没有空的文本块、没有空消息；每条 user 消息里 tool_result 都在文字前；按 role 合并之后，内容和原来的一一对应（文字原样，只有空白的也发）、次序不变；对话本身不被改动",
    fc.property(fc.array(anyMessage, { maxLength: 8 }), (messages) => {
      const input = structuredClone(messages);
      const sent = toAnthropicMessages(input);
      same(input, messages, "写过请求体之后的对话（不应当被改动）");
      const runs: { role: string; results: unknown[]; others: unknown[] }[] = [];
      for (const one of messages) {
        const blocks = expectedBlocks(one);
        if (blocks.results.length + blocks.others.length === 0) continue;
        const last = runs.at(-1);
        if (last?.role === blocks.role) {
          last.results.push(...blocks.results);
          last.others.push(...blocks.others);
        } else runs.push({ ...blocks, results: [...blocks.results], others: [...blocks.others] });
      }
      same(
        sent,
        runs.map((run) => ({ role: run.role, content: [...run.results, ...run.others] })),
        `消息 ${show(messages.map((m) => m.role))} 写成的 Anthropic 消息`,
      );
    }),
  );
});

test("Lab 5.2 · 调用方的东西不被改动；参数不是对象、role 不是三种之一：拒绝发送", async () => {
  await rule("§C4.4：请求体里的 input、input_schema 是副本（深拷贝，里面每一层都是新的）：改了请求体，对话和工具说明不变；反过来也一样", () => {
    const call = { type: "toolCall" as const, id: "toolu_01ReadA", name: "read", arguments: { path: "a.ts", range: { from: 1, to: 3 } } };
    const answer: AssistantMessage = { ...ANSWER, content: [text("我先读一下 a.ts。"), call] };
    const spec = structuredClone(READ);
    const request: ModelRequest = { systemPrompt: "", messages: [ASK, answer, RESULT], tools: [spec] };
    const before = structuredClone(request);
    const body = anthropicRequestBody(request, { model: "claude-sonnet-4-5" });
    same(request, before, "写请求体之后的请求");
    const toolUse = body.messages[1]!.content[1] as unknown as { input: { path: string; range: { from: number } } };
    toolUse.input.path = "b.ts";
    toolUse.input.range.from = 7;
    same(call.arguments, { path: "a.ts", range: { from: 1, to: 3 } }, "改了 tool_use 的 input（包括里面的 range）之后，消息里调用的参数");
    call.arguments.range.to = 9;
    same(toolUse.input, { path: "b.ts", range: { from: 7, to: 3 } }, "改了消息里调用的参数之后，tool_use 的 input");
    const schema = body.tools![0]!.input_schema as { properties: { path: { type: string } } };
    schema.properties.path.type = "number";
    same(spec, READ, "改了请求体的 input_schema（里面的 properties）之后，工具说明");
    const first: AgentMessage = { role: "user", content: [text("一")], timestamp: 0 };
    const second: AgentMessage = { role: "user", content: [text("二")], timestamp: 0 };
    const pair = [first, second];
    const merged = toAnthropicMessages(pair);
    same(
      pair,
      [
        { role: "user", content: [text("一")], timestamp: 0 },
        { role: "user", content: [text("二")], timestamp: 0 },
      ],
      "两条用户消息合成一条之后，对话里的这两条消息",
    );
    merged[0]!.content.push(text("后加的"));
    same(first.content, [text("一")], "往请求体的消息里加了一个块之后，对话里第一条消息的块");
  });
  await rule("§C4.4：调用的参数不是普通对象（字符串、数组、null、Map）：抛 ModelError，code 是 TOOL_ARGUMENTS_INVALID，消息里说出调用的 id", () => {
    for (const args of ["raw", [1], null, new Map([["path", "a.ts"]])]) {
      const broken: AgentMessage = {
        role: "assistant",
        content: [{ type: "toolCall", id: "toolu_bad", name: "read", arguments: args as never }],
        timestamp: 0,
      };
      const error = thrownBy(() => toAnthropicMessages([ASK, broken]), `参数是 ${show(args)}`);
      expect(
        error instanceof ModelError && error.code === "TOOL_ARGUMENTS_INVALID" && error.message.includes("toolu_bad"),
        `参数是 ${show(args)}：应当抛 ModelError TOOL_ARGUMENTS_INVALID 且消息含 "toolu_bad"，实际抛出 ${show(error instanceof Error ? [error.name, (error as { code?: unknown }).code, error.message] : error)}`,
      );
    }
  });
  await rule("§C4.4：一条消息的 role 不是三种之一（绕过类型来的）：抛第 01 章的 UnreachableError（code UNREACHABLE），不当成 user 发出去", () => {
    const stray = { role: "system", content: [text("你是谁")], timestamp: 0 } as unknown as AgentMessage;
    const error = thrownBy(() => toAnthropicMessages([ASK, stray]), "role 是 system");
    expect(
      error instanceof UnreachableError && error.code === "UNREACHABLE",
      `role 是 system：应当抛 UnreachableError，实际抛出 ${show(error instanceof Error ? [error.name, error.message] : error)}`,
    );
  });
});

// ---------------------------------------------------------------------------
// Lab 5.3 · 读回：Anthropic 的事件变成回合
// ---------------------------------------------------------------------------

test("Lab 5.3 · 例子：第 1 节那一轮的事件读回成回合", async () => {
  await rule(
    "§C5.2、§C5.3、§C5.4：文本块和 tool_use 块各自开始、接片、结束；message_start 给用量，message_delta 给停止原因和输出用量，message_stop 结束回合",
    async () => {
      const { turn, events } = await read(eventsOf(fixture("read-a.sse")));
      same(
        turn,
        {
          message: {
            role: "assistant",
            content: [text("我先读一下 a.ts。"), { type: "toolCall", id: "toolu_01ReadA", name: "read", arguments: { path: "a.ts" } }],
            timestamp: 5,
          },
          stopReason: "toolUse",
          usage: { inputTokens: 20, outputTokens: 31 },
        },
        "第 1 节那一轮的回合",
      );
      same(
        lines(events),
        [
          "text_start 0",
          'text_delta 0 "我先"',
          'text_delta 0 "读一下 a.ts。"',
          'text_end 0 "我先读一下 a.ts。"',
          "toolcall_start 1 toolu_01ReadA read",
          'toolcall_delta 1 "{\\"path\\":"',
          'toolcall_delta 1 " \\"a.ts\\"}"',
          'toolcall_end 1 read {"path":"a.ts"}',
        ],
        "回合的事件",
      );
    },
  );
  await rule("§C5.2、§C5.4：录制的文本回合（end_turn）是 stop，文字、用量都对", async () => {
    const { turn } = await read(eventsOf(fixture("text.sse")));
    same(
      turn,
      { message: { role: "assistant", content: [text("你好，我在。😀")], timestamp: 5 }, stopReason: "stop", usage: { inputTokens: 25, outputTokens: 12 } },
      "text.sse 的回合",
    );
  });
  await rule("§C5.2：content_block_start 自带的文字（非空字符串）是这一块的第一片", async () => {
    const body = sse(
      { type: "message_start", message: { usage: { input_tokens: 3, output_tokens: 1 } } },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "开头" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "，然后" } },
      { type: "content_block_stop", index: 0 },
      { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 4 } },
      { type: "message_stop" },
    );
    const { turn, events } = await read(eventsOf(body));
    same(lines(events), ["text_start 0", 'text_delta 0 "开头"', 'text_delta 0 "，然后"', 'text_end 0 "开头，然后"'], "事件");
    same(turn.usage, { inputTokens: 3, outputTokens: 4 }, "用量");
  });
  await rule("§C5.2、§C5.3：文字的片、参数的片原样接上：空白、\\r\\n 被切开、字符串里的空格都不改动", async () => {
    const textPieces = ["  a\r", "\nb ", " ", "\t\r\n"];
    const jsonPieces = ['{"path": "a ', " b.ts", '" }'];
    const body = sse(
      { type: "message_start", message: { usage: { input_tokens: 3, output_tokens: 1 } } },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      ...textPieces.map((piece) => ({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: piece } })),
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "t", name: "read", input: {} } },
      ...jsonPieces.map((piece) => ({ type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: piece } })),
      { type: "content_block_stop", index: 1 },
      { type: "message_delta", delta: { stop_reason: "tool_use" } },
      { type: "message_stop" },
    );
    const { turn, events } = await read(eventsOf(body));
    same(turn.message.content, [text(textPieces.join("")), { type: "toolCall", id: "t", name: "read", arguments: { path: "a  b.ts" } }], "消息");
    same(
      lines(events).filter((line) => line.includes("_delta")),
      [...textPieces.map((piece) => `text_delta 0 ${JSON.stringify(piece)}`), ...jsonPieces.map((piece) => `toolcall_delta 1 ${JSON.stringify(piece)}`)],
      "片的事件",
    );
  });
  await rule("§C5.4：用量：message_start 给输入和输出；message_delta 里有的数替换它，没有的、不是数的保持原样", async () => {
    const usage = (delta: Record<string, unknown> | undefined) =>
      sse(
        { type: "message_start", message: { usage: { input_tokens: 7, output_tokens: 1 } } },
        ...(delta === undefined ? [] : [{ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: delta }]),
        { type: "message_delta", delta: { stop_reason: "end_turn" } },
        { type: "message_stop" },
      );
    same((await read(eventsOf(usage({ output_tokens: 9 })))).turn.usage, { inputTokens: 7, outputTokens: 9 }, "message_delta 只给 output_tokens");
    same((await read(eventsOf(usage({ input_tokens: 8, output_tokens: 9 })))).turn.usage, { inputTokens: 8, outputTokens: 9 }, "message_delta 两个都给");
    same((await read(eventsOf(usage({ output_tokens: "9" })))).turn.usage, { inputTokens: 7, outputTokens: 1 }, "output_tokens 是字符串");
    same((await read(eventsOf(usage(undefined)))).turn.usage, { inputTokens: 7, outputTokens: 1 }, "message_delta 没有 usage");
    same((await read(eventsOf(usage({ output_tokens: 0 })))).turn.usage, { inputTokens: 7, outputTokens: 0 }, "output_tokens 是 0（是数，照样替换）");
    same(
      (await read(eventsOf(usage({ input_tokens: 2.5, output_tokens: -1 })))).turn.usage,
      { inputTokens: 2.5, outputTokens: -1 },
      "小数、负数也是数：原样替换",
    );
    same((await read(eventsOf(usage({ input_tokens: null, output_tokens: "9" })))).turn.usage, { inputTokens: 7, outputTokens: 1 }, "null 和字符串不是数");
    const start = (message: unknown, ...more: Record<string, unknown>[]) =>
      sse({ type: "message_start", message }, ...more, { type: "message_delta", delta: { stop_reason: "end_turn" } }, { type: "message_stop" });
    const lenient = await read(eventsOf(start("msg")));
    same(
      [lenient.turn.stopReason, lenient.turn.usage],
      ["stop", { inputTokens: 0, outputTokens: 0 }],
      "message_start 的 message 不是对象：不是坏响应，用量是 0",
    );
    same(
      (await read(eventsOf(start({ usage: { input_tokens: "20", output_tokens: 0 } })))).turn.usage,
      { inputTokens: 0, outputTokens: 0 },
      "message_start 的 input_tokens 是字符串：那一项是 0",
    );
    same(
      (await read(eventsOf(start({ usage: { input_tokens: 7, output_tokens: 1 } }, { type: "message_start", message: { usage: { input_tokens: 3 } } })))).turn
        .usage,
      { inputTokens: 3, outputTokens: 0 },
      "又来一个 message_start，只给了 input_tokens：它设定两项，没给的是 0",
    );
  });
});

test("Lab 5.3 · 跳过的块和事件：thinking 和不认识的块连同它们的片一起跳过，索引换成我们自己的位置", async () => {
  await rule("§C5.3：录制的工具回合先有一个 thinking 块（API 的第 0 块）：它被跳过；API 的第 1、2 块是我们的第 0、1 块", async () => {
    const { turn, events } = await read(eventsOf(fixture("tool-use.sse")));
    same(
      turn.message.content,
      [
        text("I'll read the file first."),
        { type: "toolCall", id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", name: "read", arguments: { path: "src/greet.js", limit: 40 } },
      ],
      "tool-use.sse 的消息",
    );
    same([turn.stopReason, turn.usage], ["toolUse", { inputTokens: 412, outputTokens: 89 }], "[stopReason, usage]");
    same(
      lines(events).filter((line) => !line.startsWith("toolcall_delta")),
      [
        "text_start 0",
        'text_delta 0 "I\'ll read the file "',
        'text_delta 0 "first."',
        'text_end 0 "I\'ll read the file first."',
        "toolcall_start 1 toolu_01T1x1fJ34qAmk2tNTrN7Up6 read",
        'toolcall_end 1 read {"path":"src/greet.js","limit":40}',
      ],
      "事件（参数片之外）",
    );
  });
  await rule("§C5.1、§C5.3：ping、不认识的事件、不认识的块（连同它的片，片的内容不看）、块里不认识的片（signature_delta、citations_delta）都跳过", async () => {
    const body = sse(
      { type: "message_start", message: { usage: { input_tokens: 5, output_tokens: 1 } } },
      { type: "x_future_event", note: "added after this adapter was written" },
      { type: "content_block_start", index: 0, content_block: { type: "redacted_thinking", data: "EmwKAhgB" } },
      { type: "content_block_delta", index: 0, delta: "跳过的块的片，里面是什么都不看" },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "x_future_block" } },
      { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "不是我们的" } },
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "{" } },
      { type: "content_block_stop", index: 1 },
      { type: "ping" },
      { type: "content_block_start", index: 2, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 2, delta: { type: "citations_delta", citation: { cited_text: "x" } } },
      { type: "content_block_delta", index: 2, delta: { type: "text_delta", text: "好。" } },
      { type: "content_block_delta", index: 2, delta: { type: "signature_delta", signature: "abc" } },
      { type: "content_block_stop", index: 2 },
      { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 6 } },
      { type: "message_stop" },
    );
    const { turn, events } = await read(eventsOf(body));
    same(lines(events), ["text_start 0", 'text_delta 0 "好。"', 'text_end 0 "好。"'], "事件");
    same([turn.stopReason, turn.message.content], ["stop", [text("好。")]], "[stopReason, content]");
  });
  await rule("§C5.1：switch 看的是 JSON 里的 type，不是 SSE 的事件名", async () => {
    const renamed = fixture("text.sse").replaceAll(/^event: .*$/gm, "event: message");
    same((await read(eventsOf(renamed))).turn.message.content, [text("你好，我在。😀")], "事件名都改成 message 之后的消息");
  });
});

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

/** The events of `body` as a local replay server sends them (real sockets, 127.0.0.1), read by `parseSse`. */
async function served(t: TestContext, body: string): Promise<AsyncIterable<SseEvent>> {
  const server = await startReplayServer(t, [{ body }]);
  const response = await fetch(`${server.origin}/v1/messages`, { method: "POST", body: "{}" });
  expect(response.body !== null, "回放服务器的响应没有 body");
  return parseSse(response.body);
}

test("Lab 5.3 · 停止原因：message_stop 用 message_delta 给的原因结束回合", async (t) => {
  await rule("§C5.4：写到一半的调用碰上 max_tokens（真实的 socket）：回合是 length，调用的参数是 {}，无论 API 先没先结束那个块（第 04 章 §C4.5）", async () => {
    for (const closeBlock of [true, false]) {
      const { turn } = await read(await served(t, cutInCall({ closeBlock, stopReason: "max_tokens" })));
      same(
        [turn.stopReason, turn.usage, turn.message.content],
        [
          "length",
          { inputTokens: 30, outputTokens: 4096 },
          [text("I'll write the notes."), { type: "toolCall", id: "toolu_cut", name: "write", arguments: {} }],
        ],
        `content_block_stop 先到：${closeBlock}`,
      );
    }
  });
  await rule(
    "§C5.4：end_turn、stop_sequence 是 stop，tool_use 是 toolUse，max_tokens 是 length；别的（refusal、pause_turn、null、不是字符串的值）不认识",
    () => {
      const cases: [unknown, string | undefined][] = [
        ["end_turn", "stop"],
        ["stop_sequence", "stop"],
        ["tool_use", "toolUse"],
        ["max_tokens", "length"],
        ["refusal", undefined],
        ["pause_turn", undefined],
        ["END_TURN", undefined],
        [null, undefined],
        [undefined, undefined],
        [1, undefined],
      ];
      same(
        cases.map(([reason]) => mapStopReason(reason)),
        cases.map(([, mapped]) => mapped),
        `mapStopReason 对 ${show(cases.map(([reason]) => reason))} 的回答`,
      );
    },
  );
  await rule(
    "§C5.4：停止原因不认识，或者 message_stop 之前没有 message_delta 给过：PROVIDER_RESPONSE_INVALID，errorMessage 说出那个原因，已到的文字留下",
    async () => {
      const ending = (reason: unknown) =>
        sse(
          { type: "message_start", message: { usage: { input_tokens: 1, output_tokens: 1 } } },
          { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
          { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "抱歉" } },
          { type: "content_block_stop", index: 0 },
          ...(reason === undefined ? [] : [{ type: "message_delta", delta: { stop_reason: reason } }]),
          { type: "message_stop" },
        );
      failedWith((await read(eventsOf(ending("refusal")))).turn, "PROVIDER_RESPONSE_INVALID", /"refusal"/, [text("抱歉")], "停止原因 refusal");
      failedWith((await read(eventsOf(ending(undefined)))).turn, "PROVIDER_RESPONSE_INVALID", /none given/, [text("抱歉")], "没有 message_delta");
      failedWith((await read(eventsOf(ending({ why: [1] })))).turn, "PROVIDER_RESPONSE_INVALID", /\{"why":\[1\]\}/, [text("抱歉")], "停止原因是一个对象");
    },
  );
  await rule("§C5.4：回合在 message_stop 结束，不在 message_delta：stop_reason 是 null 的 message_delta 不改停止原因，它带的用量照样算数", async () => {
    const body = sse(
      { type: "message_start", message: { usage: { input_tokens: 1, output_tokens: 1 } } },
      { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2 } },
      { type: "message_delta", delta: { stop_reason: null }, usage: { output_tokens: 3 } },
      { type: "message_stop" },
    );
    const { turn } = await read(eventsOf(body));
    same([turn.stopReason, turn.usage], ["stop", { inputTokens: 1, outputTokens: 3 }], "两个 message_delta（先 end_turn、后 null）之后的 [stopReason, usage]");
  });
  await rule(
    "§C5.5：参数残缺的调用，回合却是 tool_use 或 end_turn：TurnBuilder 抛的错让回合以 PROVIDER_RESPONSE_INVALID 结束，残缺的调用不进消息",
    async () => {
      for (const stopReason of ["tool_use", "end_turn"]) {
        for (const closeBlock of [true, false]) {
          const { turn } = await read(await served(t, cutInCall({ closeBlock, stopReason })));
          failedWith(
            turn,
            "PROVIDER_RESPONSE_INVALID",
            /not valid JSON/,
            [text("I'll write the notes.")],
            `${stopReason}，content_block_stop 先到：${closeBlock}`,
          );
        }
      }
    },
  );
});

/** Events a turn opens with, then `more`, as a body. */
const opening = (...more: Record<string, unknown>[]) =>
  sse(
    { type: "message_start", message: { usage: { input_tokens: 1, output_tokens: 1 } } },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "读到这里" } },
    ...more,
  );

test("Lab 5.3 · 读不懂的就是坏响应：非法 JSON、类型不对的字段、不是打开的块的片；没等到 message_stop 就断了", async () => {
  await rule(
    "§C5.1：data 不是一个 JSON 对象（读不懂的文字、数组、数、null）：PROVIDER_RESPONSE_INVALID，errorMessage 说出事件名和 data 的开头，已到的文字留下",
    async () => {
      for (const data of ["{oops", "[]", "42", "null"]) {
        const body = `${opening()}event: content_block_delta\ndata: ${data}\n\n`;
        const detail = new RegExp(`^invalid JSON in "content_block_delta" event: ${data.replace(/[[\]{}]/g, "\\$&")}`);
        failedWith((await read(eventsOf(body))).turn, "PROVIDER_RESPONSE_INVALID", detail, [text("读到这里")], `data 是 ${data}`);
      }
      const long = `{"type":"content_block_delta",${"x".repeat(300)}`;
      const { turn } = await read(eventsOf(`${opening()}event: content_block_delta\ndata: ${long}\n\n`));
      same(
        turn.errorMessage,
        `invalid JSON in "content_block_delta" event: ${long.slice(0, 200)}`,
        `data 有 ${long.length} 个字符：errorMessage 只带它的前 200 个`,
      );
    },
  );
  await rule(
    "§C5.1、§C5.3：读到的字段类型不对：content_block 不是对象、tool_use 没有字符串的 id 或 name、content_block_delta 或 message_delta 的 delta 不是对象、text 或 partial_json 不是字符串：PROVIDER_RESPONSE_INVALID（protocol error）",
    async () => {
      const broken: [string, Record<string, unknown>[]][] = [
        [
          "content_block 不是对象",
          [
            { type: "content_block_stop", index: 0 },
            { type: "content_block_start", index: 1, content_block: "text" },
          ],
        ],
        [
          "tool_use 没有 id",
          [
            { type: "content_block_stop", index: 0 },
            { type: "content_block_start", index: 1, content_block: { type: "tool_use", name: "read" } },
          ],
        ],
        [
          "tool_use 的 name 是数",
          [
            { type: "content_block_stop", index: 0 },
            { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "t", name: 7 } },
          ],
        ],
        ["content_block_delta 的 delta 不是对象", [{ type: "content_block_delta", index: 0, delta: "x" }]],
        [
          "message_delta 的 delta 不是对象",
          [
            { type: "content_block_stop", index: 0 },
            { type: "message_delta", delta: "end_turn" },
          ],
        ],
        ["text_delta 的 text 不是字符串", [{ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: ["x"] } }]],
        [
          "input_json_delta 的 partial_json 不是字符串",
          [
            { type: "content_block_stop", index: 0 },
            { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "t", name: "read" } },
            { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: { path: "a.ts" } } },
          ],
        ],
      ];
      for (const [what, events] of broken) {
        failedWith((await read(eventsOf(opening(...events)))).turn, "PROVIDER_RESPONSE_INVALID", /^protocol error: /, [text("读到这里")], what);
      }
    },
  );
  await rule("§C5.3：片或块的结束指向的不是打开的那一块（别的索引、没有打开的块）：PROVIDER_RESPONSE_INVALID（protocol error）", async () => {
    const stray: [string, Record<string, unknown>[]][] = [
      ["第 3 块的片，打开的是第 0 块", [{ type: "content_block_delta", index: 3, delta: { type: "text_delta", text: "x" } }]],
      ["第 3 块结束，打开的是第 0 块", [{ type: "content_block_stop", index: 3 }]],
      [
        "第 0 块结束之后又来了它的片",
        [
          { type: "content_block_stop", index: 0 },
          { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "x" } },
        ],
      ],
      [
        "第 0 块结束了两次",
        [
          { type: "content_block_stop", index: 0 },
          { type: "content_block_stop", index: 0 },
        ],
      ],
    ];
    for (const [what, events] of stray) {
      failedWith((await read(eventsOf(opening(...events)))).turn, "PROVIDER_RESPONSE_INVALID", /^protocol error: /, [text("读到这里")], what);
    }
  });
  await rule("§C5.5：响应在 message_stop 之前结束：PROVIDER_STREAM_ENDED，errorMessage 是 the response ended before message_stop，已到的文字留下", async () => {
    failedWith(
      (await read(eventsOf(fixture("truncated.sse")))).turn,
      "PROVIDER_STREAM_ENDED",
      /^the response ended before message_stop$/,
      [text("The connection")],
      "truncated.sse（最后一个事件没有空行，按 SSE 的规则它没有到）",
    );
    failedWith((await read(eventsOf(""))).turn, "PROVIDER_STREAM_ENDED", /^the response ended before message_stop$/, [], "空的响应");
    const noStop = opening(
      { type: "content_block_stop", index: 0 },
      { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2 } },
    );
    failedWith(
      (await read(eventsOf(noStop))).turn,
      "PROVIDER_STREAM_ENDED",
      /^the response ended before message_stop$/,
      [text("读到这里")],
      "message_delta 给了 end_turn，message_stop 没来",
    );
  });
  await rule("§C5.5：message_stop 之后回合已经结束：后面的事件不再读", async () => {
    const pulled: string[] = [];
    async function* events(): AsyncGenerator<SseEvent> {
      for await (const event of eventsOf(`${fixture("text.sse")}event: junk\ndata: {oops\n\n`)) {
        pulled.push(event.event);
        yield event;
      }
    }
    const { turn } = await read(events());
    same(turn.stopReason, "stop", "message_stop 之后还有一个坏事件的回合");
    same(pulled.at(-1), "message_stop", "最后读到的事件");
  });
  await rule("§C5.5：回合被中止（它的 signal）之后，后面的事件不再读：下一个事件一到就返回", async () => {
    const controller = new AbortController();
    const builder = new TurnBuilder({ now: () => 5, signal: controller.signal });
    let pulled = 0;
    async function* events(): AsyncGenerator<SseEvent> {
      for await (const event of eventsOf(fixture("text.sse"))) {
        pulled++;
        if (pulled === 3) controller.abort(new Error("用户按了 Ctrl-C"));
        yield event;
      }
    }
    await readAnthropicEvents(events(), builder, FACTS);
    const turn = await builder.stream.result();
    scaffoldOf(turn);
    same([turn.stopReason, pulled], ["aborted", 3], "第 3 个事件之前中止：[stopReason, 读了几个事件]");
  });
});

/** One block of a generated turn: its text or arguments in pieces. */
type GeneratedBlock =
  | { kind: "text" | "thinking"; pieces: string[] }
  | { kind: "tool"; id: string; name: string; args: Record<string, unknown>; pieces: string[] };

/** `whole` cut at the offsets `cuts` (by UTF-16 code units), into at least one piece. */
function cutText(whole: string, cuts: readonly number[]): string[] {
  const at = [...new Set(cuts.map((cut) => cut % (whole.length + 1)))].sort((a, b) => a - b);
  return [...at, whole.length].map((cut, i, all) => whole.slice(i === 0 ? 0 : all[i - 1], cut));
}

const generatedBlock: fc.Arbitrary<GeneratedBlock> = fc.oneof(
  fc
    .tuple(
      fc.constantFrom("text", "thinking") as fc.Arbitrary<"text" | "thinking">,
      fc.oneof(fc.constantFrom(" a\r\nb ", "\r\n\r\n", "  "), fc.string({ unit: "binary", maxLength: 12 })),
      fc.array(fc.nat(), { maxLength: 4 }),
    )
    .map(([kind, whole, cuts]) => ({ kind, pieces: cutText(whole, cuts) })),
  fc
    .tuple(
      fc.constantFrom("toolu_a", "toolu_b"),
      fc.constantFrom("read", "write"),
      fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3, noNullPrototype: true }),
      fc.array(fc.nat(), { maxLength: 4 }),
    )
    .map(([id, name, args, cuts]) => ({ kind: "tool" as const, id, name, args: args as Record<string, unknown>, pieces: cutText(JSON.stringify(args), cuts) })),
);

/** The body of a generated turn: its blocks at API indexes from 0, pings after some events, its stop reason and usage. */
function generatedBody(blocks: readonly GeneratedBlock[], reason: string, usage: [number, number, number], pings: readonly boolean[]): string {
  const events: Record<string, unknown>[] = [{ type: "message_start", message: { usage: { input_tokens: usage[0], output_tokens: usage[1] } } }];
  blocks.forEach((block, index) => {
    if (block.kind === "tool")
      events.push({ type: "content_block_start", index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } });
    else if (block.kind === "text") events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
    else events.push({ type: "content_block_start", index, content_block: { type: "thinking", thinking: "" } });
    for (const piece of block.pieces) {
      const delta =
        block.kind === "text"
          ? { type: "text_delta", text: piece }
          : block.kind === "thinking"
            ? { type: "thinking_delta", thinking: piece }
            : { type: "input_json_delta", partial_json: piece };
      events.push({ type: "content_block_delta", index, delta });
    }
    events.push({ type: "content_block_stop", index });
  });
  events.push({ type: "message_delta", delta: { stop_reason: reason }, usage: { output_tokens: usage[2] } }, { type: "message_stop" });
  return sse(...events.flatMap((event, i) => (pings[i % Math.max(pings.length, 1)] === true ? [event, { type: "ping" }] : [event])));
}

test("Lab 5.3 · 任意切法：片怎么分、网络怎么切、ping 插在哪里，读回的回合都一样", async () => {
  await holds(
    "§C5.2、§C5.3、§C5.4、§C5.6：任何一轮（文本块、thinking 块、调用，片任意切分，ping 任意插入，字节任意切开）：回合的消息是文本块的片首尾相接、调用的参数解析成的对象，thinking 不出现；事件的索引是我们的位置；停止原因和用量都对",
    fc.asyncProperty(
      fc.array(generatedBlock, { maxLength: 4 }),
      fc.constantFrom("end_turn", "stop_sequence", "tool_use", "max_tokens"),
      fc.tuple(fc.nat(5000), fc.nat(5), fc.nat(5000)),
      fc.array(fc.boolean(), { maxLength: 6 }),
      fc.array(fc.nat(), { maxLength: 6 }),
      async (blocks, reason, usage, pings, cuts) => {
        const body = generatedBody(blocks, reason, usage, pings);
        const { turn, events } = await read(eventsOf(body, cuts));
        const ours = blocks.filter((block) => block.kind !== "thinking");
        const content = ours.map((block) =>
          block.kind === "tool"
            ? { type: "toolCall", id: block.id, name: block.name, arguments: JSON.parse(JSON.stringify(block.args)) }
            : text(block.pieces.join("")),
        );
        const stopReason = { end_turn: "stop", stop_sequence: "stop", tool_use: "toolUse", max_tokens: "length" }[reason];
        same(
          [turn.stopReason, turn.usage, turn.message.content],
          [stopReason, { inputTokens: usage[0], outputTokens: usage[2] }, content],
          "[stopReason, usage, content]",
        );
        const expected = ours.flatMap((block, index) =>
          block.kind === "tool"
            ? [
                `toolcall_start ${index} ${block.id} ${block.name}`,
                ...block.pieces.filter((piece) => piece !== "").map((piece) => `toolcall_delta ${index} ${JSON.stringify(piece)}`),
                `toolcall_end ${index} ${block.name} ${JSON.stringify(block.args)}`,
              ]
            : [
                `text_start ${index}`,
                ...block.pieces.filter((piece) => piece !== "").map((piece) => `text_delta ${index} ${JSON.stringify(piece)}`),
                `text_end ${index} ${JSON.stringify(block.pieces.join(""))}`,
              ],
        );
        same(lines(events), expected, "回合的事件");
      },
    ),
  );
});

// ---------------------------------------------------------------------------
// Lab 5.4 · 出错：回答开始之前的错误才重试
// ---------------------------------------------------------------------------

/** An `error` event of type `type`. */
const errorEvent = (type: string, message = "Overloaded") => ({ type: "error", error: { type, message } });

/** A retry policy that allows `maxRetries`, and a sleep that records each wait and returns at once. */
function retrying(maxRetries: number) {
  const waits: number[] = [];
  const retries: RetryInfo[] = [];
  const policy: RetryPolicy = { maxRetries, baseDelayMs: 100, maxDelayMs: 1000 };
  return {
    waits,
    retries,
    options: { retry: policy, sleep: async (ms: number) => void waits.push(ms), onRetry: (info: RetryInfo) => void retries.push(info) },
  };
}

const HI: ModelRequest = { systemPrompt: "", messages: [ASK], tools: [] };

/** The turn a model made by `createAnthropicModel` gives for `steps`, played by a local replay server, and the requests the server got. */
async function modelTurn(t: TestContext, steps: ReplayStep[], extra: Partial<AnthropicModelOptions> = {}) {
  const server = await startReplayServer(t, steps);
  const model = createAnthropicModel({ ...OPTIONS, baseUrl: server.origin, now: () => 5, timeoutMs: 10_000, ...extra });
  const stream = model.stream(HI);
  const events: AssistantEvent[] = [];
  for await (const event of stream) events.push(event);
  const turn = await stream.result();
  scaffoldOf(turn);
  return { turn, events, requests: server.requests.length };
}

test("Lab 5.4 · 回答途中的 error 事件：按类型给代码，已到的文字留下，不重试", async (t) => {
  await rule(
    "§C6.1：error 事件的类型决定代码：overloaded_error 是 PROVIDER_OVERLOADED，rate_limit_error 是 PROVIDER_RATE_LIMITED，别的（也包括没有类型的）是 PROVIDER_STREAM_ERROR；errorMessage 是 provider error: <类型>: <消息>",
    async () => {
      const cases: [Record<string, unknown>, string, string][] = [
        [errorEvent("overloaded_error"), "PROVIDER_OVERLOADED", "provider error: overloaded_error: Overloaded"],
        [errorEvent("rate_limit_error", "Too many requests"), "PROVIDER_RATE_LIMITED", "provider error: rate_limit_error: Too many requests"],
        [errorEvent("api_error", "Internal error"), "PROVIDER_STREAM_ERROR", "provider error: api_error: Internal error"],
        [errorEvent("invalid_request_error", "prompt is too long"), "PROVIDER_STREAM_ERROR", "provider error: invalid_request_error: prompt is too long"],
        [{ type: "error", error: { message: "no type" } }, "PROVIDER_STREAM_ERROR", "provider error: no type"],
        [{ type: "error" }, "PROVIDER_STREAM_ERROR", 'provider error: {"type":"error"}'],
        ...["toString", "constructor", "__proto__", "hasOwnProperty"].map((type): [Record<string, unknown>, string, string] => [
          errorEvent(type, "odd"),
          "PROVIDER_STREAM_ERROR",
          `provider error: ${type}: odd`,
        ]),
      ];
      for (const [event, code, detail] of cases) {
        const { turn } = await read(eventsOf(opening(event)));
        failedWith(turn, code, new RegExp(`^${detail.replace(/[{}]/g, "\\$&")}$`), [text("读到这里")], `error 事件 ${show(event)}`);
      }
    },
  );
  await rule(
    "§C6.2：回答已经开始之后的 error 事件（录制的 overloaded-midstream.sse）：即使允许重试也只发一次请求，回合是 error，已到的文字 “Let me” 留下",
    async () => {
      const { options, waits } = retrying(3);
      const { turn, requests } = await modelTurn(t, [{ body: fixture("overloaded-midstream.sse") }, { body: fixture("text.sse") }], options);
      failedWith(turn, "PROVIDER_OVERLOADED", /^provider error: overloaded_error: Overloaded$/, [text("Let me")], "overloaded-midstream.sse");
      same([requests, waits], [1, []], "[请求次数, 等待]");
    },
  );
  await rule("§C6.2：content_block_start 之后（还没有文字）的 error 事件也在回答开始之后：不重试", async () => {
    const { options } = retrying(3);
    const body = sse(
      { type: "message_start", message: { usage: { input_tokens: 1, output_tokens: 1 } } },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      errorEvent("overloaded_error"),
    );
    const { turn, requests } = await modelTurn(t, [{ body }, { body: fixture("text.sse") }], options);
    same([turn.stopReason, turn.failure?.code, requests], ["error", "PROVIDER_OVERLOADED", 1], "[stopReason, failure.code, 请求次数]");
  });
});

test("Lab 5.4 · 回答开始之前的 error 事件：能好转的再发一次请求，别的照样是 error 回合", async (t) => {
  const early = (error: Record<string, unknown>) =>
    sse({ type: "message_start", message: { usage: { input_tokens: 1, output_tokens: 1 } } }, { type: "ping" }, error);
  await rule("§C6.3：只有 message_start 和 ping（多少个都行）之后的 overloaded_error、rate_limit_error、api_error：重试；第二次的回答就是这一轮", async () => {
    for (const type of ["overloaded_error", "rate_limit_error", "api_error"]) {
      const { options, retries } = retrying(2);
      const { turn, requests } = await modelTurn(t, [{ body: early(errorEvent(type)) }, { body: fixture("text.sse") }], options);
      same([turn.stopReason, turn.message.content, requests], ["stop", [text("你好，我在。😀")], 2], `${type}：[stopReason, content, 请求次数]`);
      same(
        retries.map((info) => [info.attempt, info.code]),
        [[1, type === "overloaded_error" ? "PROVIDER_OVERLOADED" : type === "rate_limit_error" ? "PROVIDER_RATE_LIMITED" : "PROVIDER_STREAM_ERROR"]],
        `${type}：onRetry 听到的 [第几次, 代码]`,
      );
    }
    const { options } = retrying(2);
    const recorded = await modelTurn(t, [{ body: fixture("overloaded-early.sse") }, { body: fixture("text.sse") }], options);
    same([recorded.turn.stopReason, recorded.requests], ["stop", 2], "录制的 overloaded-early.sse：[stopReason, 请求次数]");
    const pings = sse(
      { type: "message_start", message: { usage: { input_tokens: 1, output_tokens: 1 } } },
      ...Array.from({ length: 10_000 }, () => ({ type: "ping" })),
      errorEvent("overloaded_error"),
    );
    const patient = await modelTurn(t, [{ body: pings }, { body: fixture("text.sse") }], retrying(2).options);
    same([patient.turn.stopReason, patient.requests], ["stop", 2], "message_start 之后一万个 ping，然后 overloaded_error：[stopReason, 请求次数]");
  });
  await rule(
    "§C6.3：回答开始之前，类型不会因重试好转的 error 事件（invalid_request_error、没有类型、toString 这样的名字）：不重试，回合是 PROVIDER_STREAM_ERROR",
    async () => {
      const others = [
        errorEvent("invalid_request_error", "max_tokens: must be positive"),
        { type: "error", error: { message: "?" } },
        ...["toString", "constructor", "__proto__", "valueOf"].map((type) => errorEvent(type, "odd")),
      ];
      for (const event of others) {
        const { options, waits } = retrying(2);
        const { turn, requests } = await modelTurn(t, [{ body: early(event) }, { body: fixture("text.sse") }], options);
        same(
          [turn.stopReason, turn.failure?.code, requests, waits],
          ["error", "PROVIDER_STREAM_ERROR", 1, []],
          `${show(event)}：[stopReason, failure.code, 请求次数, 等待]`,
        );
        same(turn.usage, { inputTokens: 1, outputTokens: 1 }, `${show(event)}：读在前面的 message_start 照样交给回合，用量`);
      }
    },
  );
  await rule("§C6.3：重试用完（或者不允许重试）：回合是 error，代码是那个事件的，errorMessage 是它的文字，failure 的消息说出尝试了几次", async () => {
    const { options } = retrying(2);
    const body = early(errorEvent("overloaded_error"));
    const exhausted = await modelTurn(t, [{ body }, { body }, { body }, { body: fixture("text.sse") }], options);
    failedWith(exhausted.turn, "PROVIDER_OVERLOADED", /^provider error: overloaded_error: Overloaded$/, [], "三次都过载");
    expect(/共尝试 3 次/.test(exhausted.turn.failure?.message ?? ""), `failure 的消息应当说出共尝试 3 次，实际是 ${show(exhausted.turn.failure?.message)}`);
    same(exhausted.requests, 3, "请求次数（第四个录制的响应从未被要）");
    const once = await modelTurn(t, [{ body }, { body: fixture("text.sse") }]);
    failedWith(once.turn, "PROVIDER_OVERLOADED", /^provider error: overloaded_error: Overloaded$/, [], "不允许重试（默认）");
    same(once.requests, 1, "不允许重试时的请求次数");
  });
});

test("Lab 5.4 · 为了看清错误而读在前面的事件，照样交给回合；放弃的响应被关上", async (t) => {
  await rule("§C6.3：读在前面的 message_start 和 ping 之后，回答照常读完：用量来自 message_start，文字一片不少", async () => {
    const body = sse(
      { type: "message_start", message: { usage: { input_tokens: 20, output_tokens: 1 } } },
      { type: "ping" },
      { type: "ping" },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "a.ts 只有一行。" } },
      { type: "content_block_stop", index: 0 },
      { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 8 } },
      { type: "message_stop" },
    );
    const { turn, events, requests } = await modelTurn(t, [{ body }]);
    same(
      [turn.stopReason, turn.usage, turn.message.content, requests],
      ["stop", { inputTokens: 20, outputTokens: 8 }, [text("a.ts 只有一行。")], 1],
      "[stopReason, usage, content, 请求次数]",
    );
    same(lines(events), ["text_start 0", 'text_delta 0 "a.ts 只有一行。"', 'text_end 0 "a.ts 只有一行。"'], "事件");
    const { turn: example } = await modelTurn(t, [{ body: fixture("read-a.sse") }]);
    same([example.stopReason, example.usage], ["toolUse", { inputTokens: 20, outputTokens: 31 }], "第 1 节那一轮：[stopReason, usage]");
  });
  await rule("§C6.3：读在前面时连接断了：回合以传输给的那个错误结束（PROVIDER_STREAM_ENDED，the response broke off: …），不当成响应正常结束", async () => {
    const broken = (async () => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(sse({ type: "message_start", message: { usage: { input_tokens: 1, output_tokens: 1 } } })));
          controller.error(new Error("connection reset"));
        },
      });
      return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
    }) as typeof fetch;
    const model = createAnthropicModel({ ...OPTIONS, fetch: broken, now: () => 5, timeoutMs: 10_000 });
    const stream = model.stream(HI);
    for await (const _event of stream) {
      // read to the end
    }
    const turn = await stream.result();
    scaffoldOf(turn);
    failedWith(turn, "PROVIDER_STREAM_ENDED", /^the response broke off: /, [], "message_start 之后连接断了");
  });
  await rule("§C6.3：要重试时，放弃的那个响应被关上（对它的 body 调用 cancel()），然后才发下一次请求", async () => {
    const cancelled: number[] = [];
    let sent = 0;
    const bodies = [
      sse({ type: "message_start", message: { usage: { input_tokens: 1, output_tokens: 1 } } }, errorEvent("overloaded_error")),
      fixture("text.sse"),
    ];
    const inMemory = (async () => {
      const attempt = ++sent;
      const bytes = new TextEncoder().encode(bodies[attempt - 1]!);
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes);
          // The first response stays open after its events, as a server that has not hung up yet.
          if (attempt > 1) controller.close();
        },
        cancel() {
          cancelled.push(attempt);
        },
      });
      return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
    }) as typeof fetch;
    const { options } = retrying(2);
    const model = createAnthropicModel({ ...OPTIONS, fetch: inMemory, now: () => 5, timeoutMs: 10_000, ...options });
    const stream = model.stream(HI);
    for await (const _event of stream) {
      // read to the end
    }
    const turn = await stream.result();
    scaffoldOf(turn);
    same([turn.stopReason, sent], ["stop", 2], "[stopReason, 请求次数]");
    same(cancelled.includes(1), true, "第一个响应的 body 被 cancel() 了吗");
  });
});
