/**
 * Chapter 07 labs · the agent loop: ask the model, run the tools it asks for, hand the results
 * back, until it answers without asking. Fourteen tests in three labs (6, 5, 3); every name
 * starts with its lab id, so one lab runs alone with
 *
 *   npm run lab -w @pi/course -- 7.1
 *
 * Every check runs under `rule("§C…：…")`, naming the rule of the contract appendix of
 * chapters/07-agent-loop/README.md that it checks. Everything is observed through the public
 * surface: what `runAgentLoop` resolves to or rejects with, the events its `emit` gets, the
 * requests the scripted model recorded, the calls the tools saw. Failure messages are written
 * here, in words and shown values, not left to `node:assert`'s diff (which Node versions lay
 * out differently). Rules that hold for every input are also checked as properties with
 * `holds()` (fast-check, fixed seed), beside the examples that tell the story: whatever the
 * model answers, with failures, cut-offs and aborts anywhere, the transcript can be sent
 * again; each message and each streamed event (empty deltas and repeats too) is reported
 * once, in order; an executor's answer, the request prepareContext returns (an empty
 * systemPrompt or message list too), a turn's errorMessage and failure, and an abort's reason
 * pass through unchanged, whatever they are. No bound is
 * invented: the examples use sizes well beyond any plausible cap (10 000 messages, 150 turns,
 * 1 000 calls, a tool answering after 2^31 ms on a fake clock).
 *
 * The tests of a lab use nothing of a later lab, so each lab turns green on its own, in order:
 * Lab 7.1's tests have no unfinished turn and no abort, Lab 7.2's no abort of the run.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import test, { type TestContext } from "node:test";
import fc from "fast-check";
import { runAgentLoop, toolSpec, type LoopConfig, type LoopEvent, type LoopResult } from "../src/agent-loop.js";
import { createAnthropicModel } from "../src/anthropic.js";
import { abortReason, deferred, errorMessage } from "../src/async.js";
import { EventStream } from "../src/event-stream.js";
import { TurnBuilder, type AssistantEvent, type AssistantTurn, type Model, type ModelRequest, type ToolSpec } from "../src/model.js";
import { createOpenAIModel } from "../src/openai.js";
import { ScriptedModel, toolCall, turn, type ScriptStep, type ScriptedTurn } from "../src/scripted-model.js";
import { createToolExecutor, objectSchema, stringValue, ToolRegistry, type Tool, type ToolExecutor } from "../src/tool.js";
import { text, textOf, transcriptProblem, userMessage, type AgentMessage, type ToolCall, type ToolResultMessage } from "../src/types.js";
import { testSourcePath } from "./support/files.js";
import { holds } from "./support/properties.js";
import { isScaffold, rule } from "./support/rules.js";
import { startReplayServer } from "./support/replay-server.js";

// ---------------------------------------------------------------------------
// Showing values, the running example
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
  if (!equal) assert.fail(`${what}\n应当是：${show(wanted)}\n实际是：${show(got)}`);
}

/** A message as one short line: `user:a.ts 里有什么？`, `assistant:[我先读一下 a.ts。 | read#call-1-1]`, `toolResult:call-1-1!`. */
function line(message: AgentMessage): string {
  if (message.role === "user") return `user:${textOf(message)}`;
  if (message.role === "toolResult") return `toolResult:${message.toolCallId}${message.isError ? "!" : ""}`;
  return `assistant:[${message.content.map((block) => (block.type === "text" ? block.text : `${block.name}#${block.id}`)).join(" | ")}]`;
}

const lines = (messages: readonly AgentMessage[]): string[] => messages.map(line);

/** The files of the running example. */
const FILES: Record<string, string> = { "a.ts": "export const a = 1;\n", "b.ts": "export const b = 2;\n" };

/** The running example's tool: reads a file of FILES and records the paths it was asked for. */
function readTool(ran: string[] = []): Tool<{ path: string }> {
  return {
    name: "read",
    description: "Read a file.",
    schema: objectSchema({ path: stringValue() }),
    async execute({ path }) {
      ran.push(path);
      const content = FILES[path];
      if (content === undefined) throw new Error(`no such file: ${path}`);
      return { content: [text(content)] };
    },
  };
}

const ASK = userMessage("a.ts 里有什么？", 1);

function setup(script: ScriptStep[], tools: Tool[] = [readTool()], extra: Partial<LoopConfig> = {}) {
  const model = new ScriptedModel(script, { now: () => 0 });
  const registry = new ToolRegistry(tools);
  const events: LoopEvent[] = [];
  const config: LoopConfig = { model, registry, executor: createToolExecutor(registry), maxTurns: 10, emit: (e) => events.push(e), ...extra };
  return { model, registry, events, config };
}

/**
 * What keeps `messages` from being sent to a model again, in words, or `undefined`: a problem
 * chapter 03's `transcriptProblem()` finds, or a call whose results do not follow its
 * assistant message right away, in call order.
 */
function unsendable(messages: readonly AgentMessage[]): string | undefined {
  const problem = transcriptProblem(messages);
  if (problem !== undefined) {
    return `transcriptProblem() 找到 ${problem.code}：调用 ${problem.toolCallId}，第 ${problem.index} 条消息`;
  }
  for (const [index, message] of messages.entries()) {
    if (message.role !== "assistant") continue;
    const ids = message.content.filter((block) => block.type === "toolCall").map((call) => call.id);
    const next = messages.slice(index + 1, index + 1 + ids.length).map((m) => (m.role === "toolResult" ? m.toolCallId : m.role));
    if (!ids.every((id, i) => next[i] === id)) {
      return `第 ${index} 条消息的调用 ${show(ids)} 之后，应当紧跟它们的结果，按调用的顺序；实际紧跟的是 ${show(next)}`;
    }
  }
  return undefined;
}

/** Fails unless the transcript can be sent again (see `unsendable`), showing it. */
function sendable(messages: readonly AgentMessage[], label: string): void {
  const why = unsendable(messages);
  expect(why === undefined, `${label}：交出的对话不能再发给模型：${why}\n对话：${show(lines(messages))}`);
}

/** A result for `call` as an executor would give it, with `change` applied. */
function answerFor(call: ToolCall, change: Partial<ToolResultMessage>): ToolResultMessage {
  return { role: "toolResult", toolCallId: call.id, toolName: call.name, content: [], isError: false, timestamp: 0, ...change };
}

/** The result answering `id` in `messages`. */
function answerOf(messages: readonly AgentMessage[], id: string): ToolResultMessage | undefined {
  return messages.find((m): m is ToolResultMessage => m.role === "toolResult" && m.toolCallId === id);
}

/** Fails unless the result answering `id` is an error whose text matches `pattern`. */
function answeredWithError(messages: readonly AgentMessage[], id: string, pattern: RegExp, label: string): void {
  const answer = answerOf(messages, id);
  expect(answer !== undefined, `${label}：调用 ${id} 没有结果`);
  expect(answer.isError, `${label}：调用 ${id} 的结果应当是错误（isError: true），实际是 ${show(answer)}`);
  expect(pattern.test(textOf(answer)), `${label}：调用 ${id} 的错误结果应当符合 ${pattern}，实际是 ${show(textOf(answer))}`);
}

function eventKinds(events: readonly LoopEvent[]): string[] {
  return events.filter((e) => e.type !== "assistant").map((e) => (e.type === "message" ? `message:${e.message.role}` : e.type));
}

/** Runs `run` and says how it settled: the result, or what it rejected with (a starter's scaffold error is thrown on). */
async function settle(run: Promise<LoopResult>): Promise<{ result: LoopResult } | { error: unknown }> {
  try {
    return { result: await run };
  } catch (error) {
    if (isScaffold(error)) throw error;
    return { error };
  }
}

/**
 * A model whose turn `n` (from 1) is written by `write` on a builder, which also ends it: no
 * copy of the request and no waiting between pieces, so a run of hundreds of turns or
 * thousands of calls stays fast.
 */
function builderModel(name: string, write: (builder: TurnBuilder, request: ModelRequest, n: number) => void): Model {
  let n = 0;
  return {
    name,
    stream(request) {
      const builder = new TurnBuilder({ now: () => 0 });
      write(builder, request, ++n);
      return builder.stream;
    },
  };
}

/** A model whose stream gives exactly `events` (copies), then ends with `final`: events no builder would emit (empty deltas, repeats). */
function eventModel(events: readonly AssistantEvent[], final: AssistantTurn): Model {
  return {
    name: "raw-events",
    stream() {
      const stream = new EventStream<AssistantEvent, AssistantTurn>();
      for (const event of events) stream.push(structuredClone(event));
      stream.end(structuredClone(final));
      return stream;
    },
  };
}

/** Writes one complete tool call on `builder`. */
function writeCall(builder: TurnBuilder, id: string, name: string, args: unknown = {}): void {
  builder.startToolCall(id, name);
  builder.appendToolArguments(JSON.stringify(args));
  builder.endBlock();
}

/** Any text: empty, only whitespace, with whitespace around it, 20 000 characters long, or random. */
const anyText = fc.oneof(fc.string(), fc.constantFrom("", " ", "\n", "  前后有空白 \n", "长".repeat(20_000)));

/** Anything a callback or an executor may throw, or an abort may carry: text, an Error, a number, null, undefined, an object. */
const anyValue = fc.oneof(
  anyText,
  anyText.map((message) => new Error(message)),
  fc.integer(),
  fc.constantFrom<unknown>(null, undefined, { code: "E_BUSY" }),
);

/**
 * A fake clock for timers: replaces the global `setTimeout` until `restore()`; `pass(ms)`
 * runs, at once, every timer due within `ms` milliseconds of fake time. A timer of no delay
 * (a yield to the event loop) is left to the real clock.
 */
function fakeTimeouts() {
  const real = globalThis.setTimeout;
  let pending: { at: number; run: () => void }[] = [];
  const fake = (run: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    const at = Number(ms ?? 0);
    if (!(at > 0)) return real(run, 0, ...args);
    pending.push({ at, run: () => run(...args) });
    return real(() => {}, 0);
  };
  globalThis.setTimeout = fake as unknown as typeof setTimeout;
  return {
    pass(ms: number): void {
      const due = pending.filter((timer) => timer.at <= ms).sort((a, b) => a.at - b.at);
      pending = pending.filter((timer) => timer.at > ms);
      for (const timer of due) timer.run();
    },
    restore(): void {
      globalThis.setTimeout = real;
    },
  };
}

// ── The property: whatever the model answers, the transcript can be sent again ──

type CallPlan = "ok" | "missing-file" | "unknown-tool" | "rejects" | "wrong-answer";
type TurnPlan = { words: string; calls: CallPlan[]; ending: "auto" | "stop" | "toolUse" | "length" | "error" };
interface RunPlan {
  turns: TurnPlan[];
  maxTurns: number;
  /** Messages `takeInput` gives at each boundary: how many. */
  queued: number[];
  /** Abort the run when the loop emits its event number `abortAt` (Lab 7.3's property only). */
  abortAt: number | null;
}

const callPlan = fc.constantFrom<CallPlan>("ok", "ok", "missing-file", "unknown-tool", "rejects", "wrong-answer");
/** A turn; `finished` keeps to the endings of Lab 7.1 (no `length`, no `error`). */
const turnPlan = (finished: boolean) =>
  fc.record({
    words: fc.constantFrom("", "好", "我先读一下"),
    calls: fc.array(callPlan, { maxLength: 3 }),
    ending: finished
      ? fc.constantFrom<TurnPlan["ending"]>("auto", "auto", "auto", "stop", "toolUse")
      : fc.constantFrom<TurnPlan["ending"]>("auto", "auto", "auto", "stop", "toolUse", "length", "error"),
  });
const runPlan = (withAbort: boolean, finished = false): fc.Arbitrary<RunPlan> =>
  fc
    .record({
      turns: fc.array(turnPlan(finished), { minLength: 1, maxLength: 5 }),
      maxTurns: fc.integer({ min: 1, max: 6 }),
      queued: fc.array(fc.integer({ min: 0, max: 1 }), { maxLength: 4 }),
      abortAt: withAbort ? fc.integer({ min: 0, max: 40 }) : fc.constant(null),
    })
    .map((plan) => (finished ? { ...plan, maxTurns: Math.min(plan.maxTurns, plan.turns.length) } : plan)); // a script that runs out is an error turn

function scriptOf(plan: TurnPlan): ScriptedTurn {
  const calls = plan.calls.map((mode) =>
    mode === "unknown-tool" ? toolCall("nope", { mode }) : toolCall("read", { path: mode === "missing-file" ? "gone.ts" : "a.ts", mode }),
  );
  const base = plan.words === "" ? turn(...calls) : turn(plan.words, ...calls);
  if (plan.ending === "error") return { ...base, error: "overloaded" };
  return plan.ending === "auto" ? base : { ...base, stopReason: plan.ending };
}

/** Plays `plan` through the loop; reports the result (or the rejection) and what the executor was handed. */
async function playPlan(plan: RunPlan) {
  const controller = new AbortController();
  const read: Tool<{ path: string; mode: string }> = {
    name: "read",
    description: "Read a file.",
    schema: objectSchema({ path: stringValue(), mode: stringValue() }),
    async execute({ path }) {
      const content = FILES[path];
      if (content === undefined) throw new Error(`no such file: ${path}`);
      return { content: [text(content)] };
    },
  };
  const registry = new ToolRegistry([read]);
  const inner = createToolExecutor(registry, { signal: controller.signal });
  const handed: string[] = [];
  const executor: ToolExecutor = async (call) => {
    handed.push(call.id);
    const mode = (call.arguments as { mode?: string }).mode;
    if (mode === "rejects") throw new Error("host crashed");
    if (mode === "wrong-answer") return { role: "toolResult", toolCallId: "someone-else", toolName: call.name, content: [], isError: false, timestamp: 0 };
    return inner(call);
  };
  const stops = new Map<number, string>();
  const events: LoopEvent[] = [];
  let emitted = 0;
  let queueAt = 0;
  const model = new ScriptedModel(plan.turns.map(scriptOf), { now: () => 0, chunkSize: 4 });
  const config: LoopConfig = {
    model,
    registry,
    executor,
    maxTurns: plan.maxTurns,
    signal: controller.signal,
    emit: (event) => {
      events.push(event);
      if (event.type === "turn_end") stops.set(event.turn, event.stopReason);
      if (emitted++ === plan.abortAt) controller.abort(new Error("用户中止"));
    },
    takeInput: () => Array.from({ length: plan.queued[queueAt++] ?? 0 }, (_, i) => userMessage(`又一句 ${queueAt}.${i}`, 5)),
  };
  const outcome = await settle(runAgentLoop([], [ASK], config));
  return { outcome, handed, stops, events, aborted: controller.signal.aborted };
}

/** An event as one short token: `turn_start 1`, `message user:…`, `tool_start call-1-1`, … (stream events aside). */
function eventToken(event: LoopEvent): string {
  if (event.type === "message") return `message ${line(event.message)}`;
  if (event.type === "tool_start" || event.type === "tool_end") return `${event.type} ${event.call.id}`;
  if (event.type === "turn_start" || event.type === "turn_end") return `${event.type} ${event.turn}`;
  return `assistant ${event.turn}`;
}

/**
 * The events a run of finished turns must have reported, built from the messages it added:
 * each input message; per turn `turn_start`, the assistant message, `turn_end`; per result
 * `tool_start`, the result, `tool_end`; each queued message.
 */
function eventsOf(messages: readonly AgentMessage[]): string[] {
  const tokens: string[] = [];
  let turnNumber = 0;
  for (const message of messages) {
    if (message.role === "assistant") {
      turnNumber++;
      tokens.push(`turn_start ${turnNumber}`, `message ${line(message)}`, `turn_end ${turnNumber}`);
    } else if (message.role === "toolResult") {
      tokens.push(`tool_start ${message.toolCallId}`, `message ${line(message)}`, `tool_end ${message.toolCallId}`);
    } else {
      tokens.push(`message ${line(message)}`);
    }
  }
  return tokens;
}

/** Fails unless the events of a run of finished turns report it exactly (see `eventsOf`), stream events inside their turn. */
function reportedExactly(events: readonly LoopEvent[], messages: readonly AgentMessage[]): void {
  same(events.filter((e) => e.type !== "assistant").map(eventToken), eventsOf(messages), "除流式事件以外的事件");
  const reported = events.flatMap((e) => (e.type === "message" ? [e.message] : []));
  same(reported, messages, "message 事件带着的消息（和运行添加的逐条相同）");
  const results = messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
  const ended = events.flatMap((e) => (e.type === "tool_end" ? [e.result] : []));
  same(ended, results, "tool_end 带着的结果（和加进对话的逐条相同）");
  let current = 0;
  let spoke = false;
  for (const event of events) {
    if (event.type === "turn_start") [current, spoke] = [event.turn, false];
    if (event.type === "message" && event.message.role === "assistant") spoke = true;
    if (event.type === "assistant") {
      expect(event.turn === current && !spoke, `流式事件 ${show(event)} 应当在第 ${event.turn} 轮的 turn_start 之后、它的助手消息之前`);
    }
  }
}

/** The checks every run must pass: it resolves, the transcript is sendable, no call of an unfinished turn was handed to the executor. */
function checkPlayed(played: Awaited<ReturnType<typeof playPlan>>): void {
  const { outcome, handed, stops } = played;
  expect("result" in outcome, `运行不该拒绝，实际以 ${"error" in outcome ? show(outcome.error) : ""} 拒绝`);
  const { messages } = outcome.result;
  same(line(messages[0]!), "user:a.ts 里有什么？", "运行添加的第一条消息（输入）");
  sendable(messages, `stopReason ${outcome.result.stopReason}`);
  for (const id of handed) {
    const turnNumber = Number(/^call-(\d+)-/.exec(id)?.[1]);
    const stop = stops.get(turnNumber);
    expect(stop === "toolUse" || stop === "stop", `调用 ${id} 属于 ${show(stop)} 的一轮，却交给了执行器：没有跑完的回合，调用一个都不运行`);
  }
}

// ---------------------------------------------------------------------------
// Lab 7.1 · 往返：工具的结果交回模型，直到它不再要工具
// ---------------------------------------------------------------------------

test("Lab 7.1 · 一次往返：结果交回模型，模型不再要工具时运行以 stop 结束", async () => {
  await rule("§C3.1：每一轮先问模型；它要的调用按顺序交给执行器，结果紧跟在助手消息后面；下一次请求带着全部消息；没有调用的一轮结束运行（stop）", async () => {
    const ran: string[] = [];
    const usage = { inputTokens: 10, outputTokens: 5 };
    const { model, config } = setup(
      [
        { ...turn("我先读一下 a.ts。", toolCall("read", { path: "a.ts" }), toolCall("read", { path: "b.ts" })), usage },
        { ...turn("a.ts 只有一行。"), usage },
      ],
      [readTool(ran)],
    );
    const result = await runAgentLoop([], [ASK], config);
    same(
      lines(result.messages),
      [
        "user:a.ts 里有什么？",
        "assistant:[我先读一下 a.ts。 | read#call-1-1 | read#call-1-2]",
        "toolResult:call-1-1",
        "toolResult:call-1-2",
        "assistant:[a.ts 只有一行。]",
      ],
      "运行添加的消息（输入在前）",
    );
    same(ran, ["a.ts", "b.ts"], "read 工具按调用的顺序各运行一次");
    same(textOf(result.messages[2]!), FILES["a.ts"], "call-1-1 的结果是 read 的输出");
    same([result.stopReason, result.turns], ["stop", 2], "[stopReason, turns]");
    same(result.usage, { inputTokens: 20, outputTokens: 10 }, "usage 是各轮之和");
    same(
      model.requests.map((request) => lines(request.messages)),
      [
        ["user:a.ts 里有什么？"],
        ["user:a.ts 里有什么？", "assistant:[我先读一下 a.ts。 | read#call-1-1 | read#call-1-2]", "toolResult:call-1-1", "toolResult:call-1-2"],
      ],
      "两次请求的消息：第二次带着两个结果",
    );
    same(model.requests[1]!.tools, [toolSpec(readTool())], "每次请求都带着注册表里的工具说明");
    same(model.requests[0]!.systemPrompt, "", "没给 systemPrompt 时请求的 systemPrompt");
  });
  await rule("§C3.1：工具说明在每次请求之前从注册表列一次：运行中注册的工具，下一轮就提供给模型", async () => {
    const late: Tool = { ...readTool(), name: "late" };
    const { model, registry, config } = setup([turn(toolCall("read", { path: "a.ts" })), turn("好")], [readTool()], {
      emit: (event) => {
        if (event.type === "tool_end") registry.register(late);
      },
    });
    await runAgentLoop([], [ASK], config);
    same(
      model.requests.map((request) => request.tools.map((tool) => tool.name)),
      [["read"], ["read", "late"]],
      "两次请求提供的工具",
    );
  });
  await rule(
    "§C3.1：助手消息加进对话，没有内容的 stop 回合也加；没给 prepareContext 时，请求的 systemPrompt 原样，消息是整段对话（多长都一样）；工具说明按注册表列出的顺序",
    async () => {
      const quiet = await runAgentLoop([], [ASK], setup([turn()]).config);
      same(lines(quiet.messages), ["user:a.ts 里有什么？", "assistant:[]"], "模型答了一个没有内容的 stop 回合：运行添加的消息");
      const history = Array.from({ length: 10_000 }, (_, i) => userMessage(`第 ${i} 句`, i));
      const seen: unknown[] = [];
      const model = builderModel("counting", (builder, request) => {
        const { systemPrompt, messages, tools } = request;
        seen.push([systemPrompt, messages.length, line(messages[0]!), line(messages.at(-1)!), tools.map((tool) => tool.name)]);
        builder.appendText("好");
        builder.finish("stop");
      });
      const tools = ["zeta", "read", "alpha"].map((name) => ({ ...readTool(), name }));
      await runAgentLoop(history, [ASK], setup([], tools, { model, systemPrompt: "  你是助手。\n" }).config);
      same(
        seen,
        [["  你是助手。\n", 10_001, "user:第 0 句", "user:a.ts 里有什么？", ["zeta", "read", "alpha"]]],
        "history 有 10 000 条时，请求的 [systemPrompt, 消息条数, 第一条, 最后一条, 工具]",
      );
    },
  );
});

test("Lab 7.1 · 事件：按发生的顺序报告，消息是副本", async () => {
  await rule(
    "§C3.2：事件的顺序：输入的 message，turn_start，模型的流式事件，message:assistant，turn_end（带这一轮自己的 stopReason 和 usage），每个调用的 tool_start、message:toolResult、tool_end",
    async () => {
      const { events, config } = setup([
        { ...turn("我先读一下 a.ts。", toolCall("read", { path: "a.ts" })), usage: { inputTokens: 10, outputTokens: 5 } },
        { ...turn("a.ts 只有一行。"), usage: { inputTokens: 20, outputTokens: 1 } },
      ]);
      await runAgentLoop([], [ASK], config);
      same(
        eventKinds(events),
        [
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
        ],
        "除流式事件以外的事件",
      );
      const first = events.findIndex((e) => e.type === "turn_start");
      const streamed = events.filter((e) => e.type === "assistant");
      expect(
        streamed.length > 0 && streamed.every((e) => e.type === "assistant" && e.turn >= 1),
        `模型的流式事件应当以 { type: "assistant", turn, event } 转发，实际一个都没有`,
      );
      const firstStreamed = events.findIndex((e) => e.type === "assistant");
      const firstAssistant = events.findIndex((e) => e.type === "message" && e.message.role === "assistant");
      expect(first < firstStreamed && firstStreamed < firstAssistant, "流式事件应当在 turn_start 之后、message:assistant 之前");
      const ends = events.filter((e) => e.type === "turn_end");
      same(
        ends.map((e) => e.type === "turn_end" && [e.turn, e.stopReason, e.usage]),
        [
          [1, "toolUse", { inputTokens: 10, outputTokens: 5 }],
          [2, "stop", { inputTokens: 20, outputTokens: 1 }],
        ],
        "turn_end 的 [turn, stopReason, usage]（都是这一轮自己的）",
      );
    },
  );
  await rule("§C3.2：模型的流式事件原样转发：每个恰好一次，按流里的顺序，带着它所在的轮次", async () => {
    const script = [turn("我先读一下 a.ts。", toolCall("read", { path: "a.ts" })), turn("a.ts 只有一行。")];
    const { events, config } = setup(script);
    await runAgentLoop([], [ASK], config);
    const twin = new ScriptedModel(script, { now: () => 0 });
    const streamed: { turn: number; event: AssistantEvent }[] = [];
    for (const turnNumber of [1, 2]) {
      for await (const event of twin.stream({ systemPrompt: "", messages: [], tools: [] })) streamed.push({ turn: turnNumber, event });
    }
    same(
      events.flatMap((e) => (e.type === "assistant" ? [{ turn: e.turn, event: e.event }] : [])),
      streamed,
      "转发的流式事件 { turn, event }（模型的流给出的，逐个）",
    );
  });
  await holds(
    "§C3.2：模型的流式事件原样转发：流给出的每个事件恰好一次，按流里的顺序；空的 text_delta、和上一个一模一样的事件也照样转发（不过滤、不合并、不去重）",
    fc.asyncProperty(fc.array(fc.array(fc.constantFrom("", "", " ", "\n", "好", "好"), { maxLength: 5 }), { minLength: 1, maxLength: 3 }), async (blocks) => {
      const streamed: AssistantEvent[] = blocks.flatMap((deltas, index): AssistantEvent[] => [
        { type: "text_start", index },
        ...deltas.map((delta): AssistantEvent => ({ type: "text_delta", index, delta })),
        { type: "text_end", index, text: deltas.join("") },
      ]);
      const final: AssistantTurn = {
        message: { role: "assistant", content: blocks.map((deltas) => text(deltas.join(""))), timestamp: 0 },
        stopReason: "stop",
        usage: { inputTokens: 0, outputTokens: 0 },
      };
      const { events, config } = setup([], undefined, { model: eventModel(streamed, final) });
      await runAgentLoop([], [ASK], config);
      same(
        events.flatMap((e) => (e.type === "assistant" ? [{ turn: e.turn, event: e.event }] : [])),
        streamed.map((event) => ({ turn: 1, event })),
        "转发的流式事件 { turn, event }（模型的流给出的，逐个）",
      );
    }),
    { numRuns: 30 },
  );
  await rule("§C3.2：循环自己造的事件（message、tool_start、tool_end）里的消息、调用、结果都是副本：读者改了它们，运行交出的消息不变", async () => {
    const { config } = setup([turn("我先读一下 a.ts。", toolCall("read", { path: "a.ts" })), turn("a.ts 只有一行。")], undefined, {
      emit: (event) => {
        if (event.type === "message") event.message.role === "user" ? (event.message.content = []) : (event.message.timestamp = -1);
        if (event.type === "tool_start") (event.call.arguments as { path: string }).path = "被读者改了.ts";
        if (event.type === "tool_end") for (const block of event.result.content) if (block.type === "text") block.text = "被读者改了";
      },
    });
    const result = await runAgentLoop([], [ASK], config);
    same(
      lines(result.messages),
      ["user:a.ts 里有什么？", "assistant:[我先读一下 a.ts。 | read#call-1-1]", "toolResult:call-1-1", "assistant:[a.ts 只有一行。]"],
      "读者改了事件之后，运行交出的消息",
    );
    same(textOf(result.messages[2]!), FILES["a.ts"], "读者改了 tool_end 的结果之后，结果的文字");
    expect(
      result.messages.every((m) => m.timestamp !== -1),
      "读者改了 message 事件里的 timestamp，运行交出的消息跟着变了",
    );
  });
  await holds(
    "§C3.1、§C3.2：任意一串完成的回合（文字、调用、stop、toolUse；执行器成功、拒绝或答非所问；回合上限；排队的输入）：每一轮的助手消息都加进对话，交出的对话可以再发送；每条加进对话的消息恰好一个 message 事件，按顺序，内容相同；每一轮 turn_start、流式事件、message:assistant、turn_end；每个运行的调用 tool_start、结果的 message、tool_end 紧挨着",
    fc.asyncProperty(runPlan(false, true), async (plan) => {
      const { outcome, events } = await playPlan(plan);
      expect("result" in outcome, `运行不该拒绝，实际以 ${"error" in outcome ? show(outcome.error) : ""} 拒绝`);
      const { messages, turns, stopReason } = outcome.result;
      same(messages.filter((m) => m.role === "assistant").length, turns, `问了模型 ${turns} 次，对话里的助手消息条数`);
      sendable(messages, `stopReason ${stopReason}`);
      reportedExactly(events, messages);
    }),
    { numRuns: 30 },
  );
});

test("Lab 7.1 · 调用方的东西不被改动；prepareContext 决定每次请求看到什么", async () => {
  await rule("§C3.3：history 和 input 不被改动；结果只有这次运行添加的消息；prepareContext（可以是异步的）拿到整段对话的副本，它返回的就是请求", async () => {
    const history: AgentMessage[] = [userMessage("old", 1), { role: "assistant", content: [text("old answer")], timestamp: 2 }];
    const input = [userMessage("new", 3)];
    const before = structuredClone([history, input]);
    const seen: number[] = [];
    const { model, config } = setup([turn(toolCall("read", { path: "a.ts" })), turn("ok")], undefined, {
      prepareContext: async (transcript) => {
        await new Promise((resolve) => setImmediate(resolve)); // a budget may take its time
        seen.push(transcript.length);
        for (const message of transcript) message.timestamp = -1; // a budget may change its copy freely, at any depth
        transcript.length = 0;
        return { systemPrompt: `你看到 ${seen.at(-1)} 条`, messages: [userMessage("只发这一条", 4)] };
      },
    });
    const result = await runAgentLoop(history, input, config);
    same([history, input], before, "运行之后的 history 和 input");
    same(lines(result.messages), ["user:new", "assistant:[read#call-1-1]", "toolResult:call-1-1", "assistant:[ok]"], "只返回这次运行添加的消息");
    same(seen, [3, 5], "两次 prepareContext 看到的消息条数（history 2 条加输入 1 条；再加助手消息和结果）");
    expect(
      result.messages.every((m) => m.timestamp !== -1),
      `prepareContext 改了它那份对话里消息的 timestamp，运行交出的消息跟着变了：${show(result.messages.map((m) => m.timestamp))}`,
    );
    same(model.requests[0]!.systemPrompt, "你看到 3 条", "请求的 systemPrompt 是 prepareContext 返回的");
    same(lines(model.requests[1]!.messages), ["user:只发这一条"], "请求的消息就是 prepareContext 返回的");
  });
  await holds(
    '§C3.3：prepareContext 返回的 systemPrompt 和 messages 就是请求的，原样：空字符串、空白、空的消息列表也一样，不换回配置的 systemPrompt 或整段对话；没给 prepareContext 时，请求的 systemPrompt 是配置的，原样（没给是 ""）',
    fc.asyncProperty(
      fc.option(anyText, { nil: undefined }),
      fc.option(fc.record({ systemPrompt: anyText, messages: fc.constantFrom("none" as const, "last" as const, "other" as const) }), { nil: undefined }),
      async (configured, prepared) => {
        const sent: unknown[] = [];
        const model = builderModel("seeing", (builder, request) => {
          sent.push([request.systemPrompt, structuredClone(request.messages)]);
          builder.appendText("好");
          builder.finish("stop");
        });
        const returned: unknown[] = [];
        const extra: Partial<LoopConfig> = { model, ...(configured === undefined ? {} : { systemPrompt: configured }) };
        if (prepared !== undefined) {
          extra.prepareContext = (transcript) => {
            const pick = { none: [], last: transcript.slice(-1), other: [userMessage("只发这一条", 4)] };
            const context = { systemPrompt: prepared.systemPrompt, messages: pick[prepared.messages] };
            returned.push([context.systemPrompt, structuredClone(context.messages)]);
            return context;
          };
        }
        const history = [userMessage("old", 1)];
        await runAgentLoop(history, [ASK], setup([], undefined, extra).config);
        const wanted = prepared === undefined ? [[configured ?? "", [...history, ASK]]] : returned;
        same(
          sent,
          wanted,
          prepared === undefined ? "没给 prepareContext 时，请求的 [systemPrompt, messages]" : "prepareContext 返回的和请求的 [systemPrompt, messages]",
        );
      },
    ),
    { numRuns: 40 },
  );
  await rule("§C3.3：prepareContext 拿到的工具说明和这次请求带着的那一份相同，又是它自己的副本：它改了注册表、改了这份说明，请求都不变", async () => {
    const seen: (readonly ToolSpec[])[] = [];
    const late: Tool = { ...readTool(), name: "late" };
    const { model, registry, config } = setup([turn("ok")], [readTool()], {
      prepareContext: (transcript, tools) => {
        seen.push(structuredClone(tools));
        registry.register(late);
        const mine = tools as ToolSpec[];
        mine[0]!.description = "被 prepareContext 改了";
        (mine[0]!.parameters as { type?: string }).type = "被 prepareContext 改了";
        mine.push({ name: "fake", description: "", parameters: {} });
        return { systemPrompt: "", messages: transcript };
      },
    });
    await runAgentLoop([], [ASK], config);
    same(seen, [[toolSpec(readTool())]], "prepareContext 拿到的工具说明");
    same(model.requests[0]!.tools, seen[0], "prepareContext 改了注册表和它那份说明之后，请求带着的工具说明");
  });
  await rule("§C3.3、§C3.7：对话从 history 的副本开始，输入和排队的消息都以副本加入：调用方之后改了自己的这些消息（多深都是），运行的对话不变", async () => {
    const history: AgentMessage[] = [userMessage("old", 1)];
    const input = [userMessage("new", 3)];
    const queued = [userMessage("排队的一句", 5)];
    const queue = [queued];
    const { model, config } = setup([turn("先答一句"), turn("ok")], undefined, {
      takeInput: () => queue.shift() ?? [],
      emit: (event) => {
        if (event.type !== "turn_start" || event.turn !== 2) return;
        for (const message of [...history, ...input, ...queued]) {
          message.timestamp = -1;
          if (message.role !== "assistant") message.content[0]!.text = "调用方后来改了";
        }
      },
    });
    const result = await runAgentLoop(history, input, config);
    same(lines(model.requests[1]!.messages), ["user:old", "user:new", "assistant:[先答一句]", "user:排队的一句"], "调用方改了自己的消息之后，第二次请求的消息");
    same(lines(result.messages), ["user:new", "assistant:[先答一句]", "user:排队的一句", "assistant:[ok]"], "运行添加的消息");
    expect(
      result.messages.every((m) => m.timestamp !== -1),
      `调用方改了自己消息的 timestamp，运行交出的消息跟着变了：${show(result.messages.map((m) => m.timestamp))}`,
    );
  });
  await rule(
    "§C3.3：调用方自己的回调（emit、prepareContext、takeInput）抛错时，运行以抛出的那个值本身拒绝（不包装、不吞掉），不管它在哪个事件、第几次调用时抛",
    async () => {
      const places: [string, (thrown: unknown) => Partial<LoopConfig>][] = [
        ...(["message", "turn_start", "assistant", "turn_end", "tool_start", "tool_end"] as const).map(
          (kind): [string, (thrown: unknown) => Partial<LoopConfig>] => [
            `emit 在 ${kind} 事件时`,
            (thrown) => ({
              emit: (event) => {
                if (event.type === kind) throw thrown;
              },
            }),
          ],
        ),
        [
          "prepareContext 第二次被调用时",
          (thrown) => {
            let calls = 0;
            return {
              prepareContext: async (transcript) => {
                if (++calls === 2) throw thrown;
                return { systemPrompt: "", messages: transcript };
              },
            };
          },
        ],
        [
          "takeInput 第一次被调用时",
          (thrown) => ({
            takeInput: () => {
              throw thrown;
            },
          }),
        ],
      ];
      for (const [label, extra] of places) {
        for (const thrown of [new Error("callback bug"), "callback bug", { bug: label }]) {
          const { config } = setup([turn(toolCall("read", { path: "a.ts" })), turn("好")], undefined, extra(thrown));
          const outcome = await settle(runAgentLoop([], [ASK], config));
          expect(
            "error" in outcome && outcome.error === thrown,
            `${label}抛出 ${show(thrown)}，运行应当以它本身拒绝，实际${"error" in outcome ? `以 ${show(outcome.error)} 拒绝` : `兑现为 ${show(outcome.result.stopReason)}`}`,
          );
        }
      }
    },
  );
});

test("Lab 7.1 · 每个调用恰好一个结果：执行器拒绝或答非所问时，循环替它回答", async () => {
  await rule(
    "§C3.4：交给执行器的是调用的副本；执行器拒绝、答的不是这个调用（id 或名字不同、不是结果）：循环给这个调用配上一个错误结果，模型照常往下走",
    async () => {
      const other = answerFor;
      const cases: [string, ToolExecutor, RegExp][] = [
        [
          "执行器拒绝",
          async () => {
            throw new Error("host crashed");
          },
          /^tool "read" failed: host crashed$/,
        ],
        ["答了别的 id", async (call) => other(call, { toolCallId: "other" }), /^tool "read": the executor did not answer this call$/],
        ["答了别的名字", async (call) => other(call, { toolName: "write" }), /^tool "read": the executor did not answer this call$/],
        ["答的不是结果", async () => undefined as unknown as ToolResultMessage, /^tool "read": the executor did not answer this call$/],
        ["答了 null", async () => null as unknown as ToolResultMessage, /^tool "read": the executor did not answer this call$/],
      ];
      const meddling: ToolExecutor = async (call) => {
        (call.arguments as { path: string }).path = "执行器改了.ts";
        return other(call, {});
      };
      const { config: meddled } = setup([turn(toolCall("read", { path: "a.ts" })), turn("好")], undefined, { executor: meddling });
      const kept = await runAgentLoop([], [ASK], meddled);
      same(
        lines(kept.messages).slice(0, 3),
        ["user:a.ts 里有什么？", "assistant:[read#call-1-1]", "toolResult:call-1-1"],
        "执行器改了它拿到的调用之后：运行添加的前三条消息",
      );
      const asked = kept.messages[1]!;
      same(
        asked.role === "assistant" ? asked.content : undefined,
        [{ type: "toolCall", id: "call-1-1", name: "read", arguments: { path: "a.ts" } }],
        "交给执行器的是调用的副本：执行器改了它的参数，助手消息里的调用不变",
      );
      for (const [label, executor, pattern] of cases) {
        const { config } = setup([turn(toolCall("read", { path: "a.ts" })), turn("好")], undefined, { executor });
        const result = await runAgentLoop([], [ASK], config);
        sendable(result.messages, label);
        answeredWithError(result.messages, "call-1-1", pattern, label);
        same(result.stopReason, "stop", `${label}：模型看到错误结果之后照常收尾，stopReason`);
      }
    },
  );
  await rule("§C3.4：找不到的工具、不合 schema 的参数由执行器配上错误结果（第 06 章）；模型在下一轮看到它们", async () => {
    const { config } = setup([
      turn(toolCall("nope"), toolCall("read", { wrong: 1 })),
      (request) => turn(`看到 ${request.messages.filter((m) => m.role === "toolResult" && m.isError).length} 个错误`),
    ]);
    const result = await runAgentLoop([], [ASK], config);
    sendable(result.messages, "未知工具与非法参数");
    same(textOf(result.messages.at(-1)!), "看到 2 个错误", "模型在第二轮的回答");
  });
  await holds(
    '§C3.4：执行器拒绝，不管拒绝的是什么（Error、文字、数字、null、undefined、对象）：结果的文字是 tool "read" failed: <errorMessage(原因)>，一字不差；执行器答了这个调用：那条结果原样加进对话（时间戳、文字、details、isError 都不动），下一次请求带着的也是它',
    fc.asyncProperty(
      fc.array(
        fc.oneof(
          anyValue.map((value) => ({ rejects: true as const, value })),
          fc.record({
            rejects: fc.constant(false as const),
            texts: fc.array(anyText, { maxLength: 2 }),
            isError: fc.boolean(),
            timestamp: fc.oneof(fc.integer(), fc.double({ noNaN: true })),
            details: fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }),
          }),
        ),
        { minLength: 1, maxLength: 3 },
      ),
      async (plans) => {
        const answers = new Map<string, ToolResultMessage>();
        const executor: ToolExecutor = async (call) => {
          const plan = plans[Number(call.id.slice("call-".length)) - 1]!;
          if (plan.rejects) throw plan.value;
          const { texts, isError, timestamp, details } = plan;
          const answer = answerFor(call, { content: texts.map((t) => text(t)), isError, timestamp, ...(details === undefined ? {} : { details }) });
          answers.set(call.id, structuredClone(answer));
          return answer;
        };
        const requests: ModelRequest[] = [];
        const model = builderModel("asks-once", (builder, request, n) => {
          requests.push(request);
          if (n === 1) for (const i of plans.keys()) writeCall(builder, `call-${i + 1}`, "read", { path: "a.ts" });
          else builder.appendText("好");
          builder.finish(n === 1 ? "toolUse" : "stop");
        });
        const result = await runAgentLoop([], [ASK], setup([], undefined, { model, executor }).config);
        for (const [i, plan] of plans.entries()) {
          const id = `call-${i + 1}`;
          const answer = answerOf(result.messages, id);
          if (plan.rejects) {
            const wanted = `tool "read" failed: ${errorMessage(plan.value)}`;
            same(answer && [answer.isError, textOf(answer)], [true, wanted], `执行器以 ${show(plan.value)} 拒绝 ${id}：结果的 [isError, 文字]`);
          } else {
            same(answer, answers.get(id), `执行器对 ${id} 的回答，加进对话之后`);
            same(answerOf(requests[1]?.messages ?? [], id), answers.get(id), `执行器对 ${id} 的回答，在下一次请求里`);
          }
        }
      },
    ),
    { numRuns: 40 },
  );
  await rule("§C3.4：循环等执行器回答，自己不设时限：执行器在（假时钟上）2^31 毫秒之后才答，结果照样是它的", async () => {
    const started = deferred<void>();
    const late = deferred<void>();
    const executor: ToolExecutor = async (call) => {
      started.resolve();
      await late.promise;
      return answerFor(call, { content: [text("终于好了")] });
    };
    const clock = fakeTimeouts();
    try {
      const running = runAgentLoop([], [ASK], setup([turn(toolCall("read", { path: "a.ts" })), turn("好")], undefined, { executor }).config);
      await started.promise;
      clock.pass(2 ** 31 + 1);
      await new Promise((resolve) => setImmediate(resolve));
      late.resolve();
      const result = await running;
      const answer = answerOf(result.messages, "call-1-1");
      same(answer && [answer.isError, textOf(answer)], [false, "终于好了"], "执行器很久之后才给的结果 [isError, 文字]");
    } finally {
      clock.restore();
    }
  });
});

test("Lab 7.1 · 停止原因：stop 带着调用照样运行；说要用工具却一个调用都没有是错误", async () => {
  await rule("§C3.5：stopReason 为 stop 的一轮带着调用：调用照样运行、配上结果，运行继续问模型", async () => {
    const ran: string[] = [];
    const { model, config } = setup([{ ...turn("顺手读一下", toolCall("read", { path: "a.ts" })), stopReason: "stop" }, turn("读完了")], [readTool(ran)]);
    const result = await runAgentLoop([], [ASK], config);
    same(ran, ["a.ts"], "stop 一轮里的调用运行了");
    same(
      lines(result.messages),
      ["user:a.ts 里有什么？", "assistant:[顺手读一下 | read#call-1-1]", "toolResult:call-1-1", "assistant:[读完了]"],
      "运行添加的消息",
    );
    same([result.stopReason, model.requests.length], ["stop", 2], "[stopReason, 模型请求次数]");
  });
  await rule("§C3.5：stopReason 为 toolUse 却没有调用：运行以 error 结束，failure 的代码是 LOOP_TOOL_CALLS_MISSING，文字留下，不再问模型", async () => {
    const { model, events, config } = setup([{ ...turn("我来调用工具"), stopReason: "toolUse" }, turn("不该被调用")]);
    const result = await runAgentLoop([], [ASK], config);
    same([result.stopReason, result.failure?.code], ["error", "LOOP_TOOL_CALLS_MISSING"], "[stopReason, failure.code]");
    same(result.errorMessage, "the model stopped to use tools (stopReason toolUse) but named no tool call", "errorMessage");
    same(model.requests.length, 1, "模型请求次数");
    same(lines(result.messages), ["user:a.ts 里有什么？", "assistant:[我来调用工具]"], "运行添加的消息（这一轮的文字留下）");
    const end = events.find((e) => e.type === "turn_end");
    same(end?.type === "turn_end" && end.stopReason, "toolUse", "turn_end 报告的是这一轮自己的 stopReason");
    const blank = await runAgentLoop([], [ASK], setup([{ ...turn(), stopReason: "toolUse" }]).config);
    same(
      [blank.stopReason, lines(blank.messages)],
      ["error", ["user:a.ts 里有什么？", "assistant:[]"]],
      "toolUse 一轮连文字都没有：[stopReason, 运行添加的消息]（消息照样留下）",
    );
  });
});

test("Lab 7.1 · 回合上限与排队的输入", async () => {
  await rule("§C3.6：maxTurns 次模型调用之后模型还要工具：运行以 turn_limit 结束，每个调用都已配上结果", async () => {
    const always = Array.from({ length: 5 }, () => turn(toolCall("read", { path: "a.ts" })));
    const { model, config } = setup(always, undefined, { maxTurns: 3 });
    const result = await runAgentLoop([], [ASK], config);
    same([result.stopReason, result.turns, model.requests.length], ["turn_limit", 3, 3], "[stopReason, turns, 模型请求次数]");
    sendable(result.messages, "turn_limit");
  });
  await rule("§C3.6：maxTurns 不是正整数：运行以 LoopError LOOP_CONFIG_INVALID 拒绝，不问模型", async () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      const { model, config } = setup([turn("x")], undefined, { maxTurns: bad });
      const outcome = await settle(runAgentLoop([], [ASK], config));
      const code = "error" in outcome ? (outcome.error as { code?: unknown }).code : undefined;
      same(code, "LOOP_CONFIG_INVALID", `maxTurns 为 ${bad} 时拒绝的 code`);
      same(model.requests.length, 0, `maxTurns 为 ${bad} 时的模型请求次数`);
    }
  });
  await rule("§C3.7：每一轮的调用都有了结果之后，takeInput 的消息加进对话；没有调用的一轮之后有新输入，运行继续", async () => {
    const queue: AgentMessage[][] = [[], [userMessage("顺便看看 b.ts", 9)]];
    const { model, config } = setup([turn(toolCall("read", { path: "a.ts" })), turn("a.ts 好了"), turn("b.ts 也好了")], undefined, {
      takeInput: () => queue.shift() ?? [],
    });
    const result = await runAgentLoop([], [ASK], config);
    same(
      lines(result.messages),
      ["user:a.ts 里有什么？", "assistant:[read#call-1-1]", "toolResult:call-1-1", "assistant:[a.ts 好了]", "user:顺便看看 b.ts", "assistant:[b.ts 也好了]"],
      "运行添加的消息",
    );
    same([result.stopReason, model.requests.length], ["stop", 3], "[stopReason, 模型请求次数]");
    same(lines(model.requests[2]!.messages).at(-1), "user:顺便看看 b.ts", "第三次请求的最后一条消息");
  });
  await rule("§C3.6：循环没有别的上限：maxTurns 是 2^31 时，模型连着 149 轮要工具，运行就问它 150 次，直到它不再要", async () => {
    const model = builderModel("keeps-asking", (builder, _request, n) => {
      if (n < 150) writeCall(builder, `call-${n}`, "read", { path: "a.ts" });
      else builder.appendText("够了");
      builder.finish(n < 150 ? "toolUse" : "stop");
    });
    const executor: ToolExecutor = async (call) => answerFor(call, {});
    const result = await runAgentLoop([], [ASK], { model, registry: new ToolRegistry([readTool()]), executor, maxTurns: 2 ** 31 });
    same([result.stopReason, result.turns, result.messages.length], ["stop", 150, 1 + 149 * 2 + 1], "[stopReason, turns, 运行添加的消息条数]");
  });
  await rule("§C3.7：takeInput 一次给多少条，就逐条加进多少条：一次给 10 000 条，下一次请求以这 10 000 条结尾", async () => {
    const queue = [Array.from({ length: 10_000 }, (_, i) => userMessage(`排队的第 ${i} 句`, i))];
    const seen: unknown[] = [];
    const model = builderModel("counting", (builder, request) => {
      const { messages } = request;
      seen.push([messages.length, ...[messages.at(-10_000), messages.at(-1)].map((m) => m && line(m))]);
      builder.appendText("好");
      builder.finish("stop");
    });
    const result = await runAgentLoop([], [ASK], {
      model,
      registry: new ToolRegistry([]),
      executor: async (call) => answerFor(call, {}),
      maxTurns: 5,
      takeInput: () => queue.shift() ?? [],
    });
    same(seen.at(-1), [10_002, "user:排队的第 0 句", "user:排队的第 9999 句"], "排队的 10 000 条之后，第二次请求的 [消息条数, 倒数第 10 000 条, 最后一条]");
    same([result.stopReason, result.messages.length], ["stop", 10_003], "[stopReason, 运行添加的消息条数]");
  });
});

// ---------------------------------------------------------------------------
// Lab 7.2 · 没有跑完的回合：调用一个都不运行，每个照样有结果
// ---------------------------------------------------------------------------

test("Lab 7.2 · 失败的回合：文字留下，调用不运行，每个配上未运行的错误结果，运行结束", async () => {
  await rule(
    "§C4.1：error 回合：它的消息留下（文字和调用），调用一个都不运行，每个紧跟着配上 “was not run” 的错误结果；运行以 error 结束，errorMessage 是这一轮的",
    async () => {
      const ran: string[] = [];
      const failed = { ...turn("说到一半", toolCall("read", { path: "a.ts" })), error: "overloaded", usage: { inputTokens: 7, outputTokens: 3 } };
      const { model, config } = setup([failed, turn("不该被调用")], [readTool(ran)]);
      const result = await runAgentLoop([], [ASK], config);
      same([result.stopReason, result.errorMessage], ["error", "overloaded"], "[stopReason, errorMessage]");
      same(ran, [], "运行过的 read");
      same(model.requests.length, 1, "模型请求次数");
      same(lines(result.messages), ["user:a.ts 里有什么？", "assistant:[说到一半 | read#call-1-1]", "toolResult:call-1-1!"], "运行添加的消息");
      answeredWithError(result.messages, "call-1-1", /^tool "read" was not run: the model's turn failed before it finished \(overloaded\)$/, "error 回合");
      same(result.usage, { inputTokens: 7, outputTokens: 3 }, "运行的 usage（失败的一轮也算）");
    },
  );
  await rule(
    "§C4.1：模型自己以 aborted 结束的一轮（运行没有被中止）：调用配上 “the turn was aborted” 的结果，运行以 aborted 结束，errorMessage 是这一轮的",
    async () => {
      const model = builderModel("gave-up", (builder) => {
        builder.startToolCall("call-x", "read");
        builder.appendToolArguments('{"path":"a.ts"}');
        builder.endBlock();
        builder.fail("aborted: upstream", "aborted");
      });
      const { config } = setup([], undefined, { model });
      const result = await runAgentLoop([], [ASK], config);
      same([result.stopReason, result.errorMessage], ["aborted", "aborted: upstream"], "[stopReason, errorMessage]");
      answeredWithError(result.messages, "call-x", /^tool "read" was not run: the turn was aborted before it finished \(aborted: upstream\)$/, "aborted 回合");
      sendable(result.messages, "aborted 回合");
    },
  );
  await rule(
    "§C4.1：失败回合的 failure（代码与说明）原样交给 turn_end 和运行结果，errorMessage 是空字符串也带；错误结果里写的是 errorMessage，不是 failure 的说明；没有名字的失败不带 failure；没有内容的失败回合不留下空消息",
    async () => {
      const model = builderModel("failing", (builder) => {
        builder.appendText("半句");
        writeCall(builder, "call-1", "read", { path: "a.ts" });
        builder.fail("HTTP 401 authentication_error: invalid x-api-key", "error", { code: "PROVIDER_UNAUTHORIZED", message: "请检查 key" });
      });
      const { events, config } = setup([], undefined, { model });
      const result = await runAgentLoop([], [ASK], config);
      same([result.stopReason, result.errorMessage], ["error", "HTTP 401 authentication_error: invalid x-api-key"], "[stopReason, errorMessage]");
      same(result.failure, { code: "PROVIDER_UNAUTHORIZED", message: "请检查 key" }, "运行结果的 failure");
      const end = events.find((e) => e.type === "turn_end");
      same(end?.type === "turn_end" ? end.failure : undefined, { code: "PROVIDER_UNAUTHORIZED", message: "请检查 key" }, "turn_end 的 failure");
      answeredWithError(
        result.messages,
        "call-1",
        /^tool "read" was not run: the model's turn failed before it finished \(HTTP 401 authentication_error: invalid x-api-key\)$/,
        "有 failure 的 error 回合（括号里是这一轮的 errorMessage，不是 failure 的说明）",
      );
      const silent = builderModel("silent", (builder) => builder.fail("", "error", { code: "PROVIDER_OVERLOADED", message: "服务商忙，请稍后再试" }));
      const quiet = setup([], undefined, { model: silent });
      const quietResult = await runAgentLoop([], [ASK], quiet.config);
      const quietEnd = quiet.events.find((e) => e.type === "turn_end");
      same(
        [quietResult.errorMessage, quietResult.failure, quietEnd?.type === "turn_end" ? quietEnd.failure : "（没有 turn_end）"],
        ["", { code: "PROVIDER_OVERLOADED", message: "服务商忙，请稍后再试" }, { code: "PROVIDER_OVERLOADED", message: "服务商忙，请稍后再试" }],
        "errorMessage 是空字符串、有 failure 的一轮：[运行结果的 errorMessage, 运行结果的 failure, turn_end 的 failure]",
      );
      const plain = setup([{ ...turn("x"), error: "no code" }]);
      const unnamed = await runAgentLoop([], [ASK], plain.config);
      expect(!("failure" in unnamed), `没有名字的失败，运行结果不该有 failure 字段，实际是 ${show(unnamed)}`);
      const plainEnd = plain.events.find((e) => e.type === "turn_end");
      expect(plainEnd !== undefined && !("failure" in plainEnd), `没有名字的失败，turn_end 不该有 failure 字段，实际是 ${show(plainEnd)}`);
      for (const stop of ["error", "aborted"] as const) {
        const empty = builderModel("empty", (builder) => builder.fail("connection reset", stop));
        const nothing = await runAgentLoop([], [ASK], setup([], undefined, { model: empty }).config);
        same([nothing.stopReason, lines(nothing.messages)], [stop, ["user:a.ts 里有什么？"]], `没有内容的 ${stop} 回合之后：[stopReason, 运行添加的消息]`);
      }
    },
  );
  await holds(
    "§C4.1：这一轮的 errorMessage 原样（空字符串、空白、两万个字符，什么文字都一样）：运行结果和 turn_end 都带着它；每个调用的结果是 “was not run: … before it finished (<它>)”，一字不差，有 failure 也一样；有 failure 时（代码、说明是什么文字都一样）运行结果和 turn_end 都带着它，没有就不带这个字段",
    fc.asyncProperty(
      anyText,
      fc.constantFrom("error" as const, "aborted" as const),
      fc.integer({ min: 0, max: 2 }),
      fc.option(
        fc.record({ code: fc.constantFrom("", "PROVIDER_OVERLOADED"), message: anyText }).map(({ code, message }) => ({ code, message })),
        { nil: undefined },
      ),
      async (why, stop, count, failure) => {
        const model = builderModel("failing", (builder) => {
          builder.appendText("说到一半");
          for (let i = 1; i <= count; i++) writeCall(builder, `call-${i}`, "read", { path: "a.ts" });
          builder.fail(why, stop, failure);
        });
        const { events, config } = setup([], undefined, { model });
        const result = await runAgentLoop([], [ASK], config);
        same([result.stopReason, result.errorMessage], [stop, why], "[stopReason, errorMessage]");
        const end = events.find((e) => e.type === "turn_end");
        same(end?.type === "turn_end" && "errorMessage" in end ? end.errorMessage : "（没有这个字段）", why, "turn_end 的 errorMessage");
        const absent = "（没有这个字段）";
        same(
          ["failure" in result ? result.failure : absent, end !== undefined && "failure" in end ? end.failure : absent],
          [failure ?? absent, failure ?? absent],
          "[运行结果的 failure, turn_end 的 failure]",
        );
        const head = stop === "aborted" ? "the turn was aborted" : "the model's turn failed";
        for (let i = 1; i <= count; i++) {
          const answer = answerOf(result.messages, `call-${i}`);
          same(
            answer && [answer.isError, textOf(answer)],
            [true, `tool "read" was not run: ${head} before it finished (${why})`],
            `call-${i} 的结果 [isError, 文字]`,
          );
        }
      },
    ),
    { numRuns: 40 },
  );
  await rule("§C4.1：调用没有条数上限：error 回合带着 1 000 个调用，每个都按顺序、紧跟着配上错误结果", async () => {
    const ids = Array.from({ length: 1_000 }, (_, i) => `call-${i + 1}`);
    const model = builderModel("many", (builder) => {
      for (const id of ids) writeCall(builder, id, "read", { path: "a.ts" });
      builder.fail("overloaded");
    });
    const result = await runAgentLoop([], [ASK], setup([], undefined, { model }).config);
    same(
      result.messages.slice(2).map((m) => (m.role === "toolResult" && m.isError ? m.toolCallId : line(m))),
      ids,
      "助手消息之后的错误结果，按调用的 id",
    );
  });
});

test("Lab 7.2 · 模型违约：stream 抛错或流失败是一个 error 回合；循环不再读时中止这次请求", async () => {
  await rule("§C4.2：model.stream() 抛错、它的流失败：都当作一个没有内容的 error 回合，errorMessage 说出原因", async () => {
    const broken: Model = {
      name: "broken",
      stream() {
        throw new Error("bug in model");
      },
    };
    const { config } = setup([], undefined, { model: broken });
    const crashed = await runAgentLoop([], [ASK], config);
    same(crashed.stopReason, "error", "stream() 抛错时的 stopReason");
    expect(/bug in model/.test(crashed.errorMessage ?? ""), `errorMessage 应当说出 “bug in model”，实际是 ${show(crashed.errorMessage)}`);
    same(lines(crashed.messages), ["user:a.ts 里有什么？"], "运行添加的消息（没有空的助手消息）");
  });
  await rule("§C4.2：循环在流结束之前不再读它（emit 抛错、流失败）：它中止交给模型的那个 signal；运行自己的 signal 不受影响", async () => {
    const signals: (AbortSignal | undefined)[] = [];
    const waiting: Model = {
      name: "waiting",
      stream(_request, options) {
        signals.push(options?.signal);
        const builder = new TurnBuilder({ now: () => 0, ...(options?.signal ? { signal: options.signal } : {}) });
        builder.appendText("半句");
        return builder.stream; // never finishes on its own, like a provider mid HTTP stream
      },
    };
    const throwing = (event: LoopEvent) => {
      if (event.type === "assistant") throw new Error("listener bug");
    };
    const run = new AbortController();
    for (const signal of [undefined, run.signal]) {
      const { config } = setup([], undefined, { model: waiting, emit: throwing, ...(signal ? { signal } : {}) });
      const outcome = await settle(runAgentLoop([], [ASK], config));
      expect("error" in outcome, "emit 抛错时运行应当拒绝");
      same(signals.at(-1)?.aborted, true, `emit 抛错（运行${signal ? "有" : "没有"} signal）之后，交给模型的 signal 已中止`);
    }
    same(run.signal.aborted, false, "运行自己的 signal 没有被循环中止");
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
    const result = await runAgentLoop([], [ASK], config);
    same(result.stopReason, "error", "流失败时的 stopReason");
    same(signals.at(-1)?.aborted, true, "流失败之后，交给模型的 signal 已中止");
  });
});

test("Lab 7.2 · 截断的回合：调用一个都不运行，每个配上错误结果；有排队的输入时运行继续", async () => {
  await rule("§C4.3：length 回合：调用一个都不运行（没有 tool_start），每个紧跟着配上 “output was cut off” 的错误结果；运行以 length 结束", async () => {
    const ran: string[] = [];
    const { model, events, config } = setup(
      [{ ...turn("先读两个", toolCall("read", { path: "a.ts" }), toolCall("read", { path: "b.ts" })), stopReason: "length" }, turn("不该被调用")],
      [readTool(ran)],
    );
    const result = await runAgentLoop([], [ASK], config);
    same([result.stopReason, model.requests.length], ["length", 1], "[stopReason, 模型请求次数]");
    same(ran, [], "运行过的 read");
    same(eventKinds(events).includes("tool_start"), false, "有没有 tool_start");
    same(
      lines(result.messages),
      ["user:a.ts 里有什么？", "assistant:[先读两个 | read#call-1-1 | read#call-1-2]", "toolResult:call-1-1!", "toolResult:call-1-2!"],
      "运行添加的消息",
    );
    for (const id of ["call-1-1", "call-1-2"]) {
      answeredWithError(
        result.messages,
        id,
        /^tool "read" was not run: the model's output was cut off at its token limit \(stopReason length\), so this call may be incomplete$/,
        "length 回合",
      );
    }
    const plain = setup([{ ...turn("被截"), stopReason: "length" }]);
    same((await runAgentLoop([], [ASK], plain.config)).stopReason, "length", "没有调用的 length 回合之后的 stopReason");
    const blank = await runAgentLoop([], [ASK], setup([{ ...turn(), stopReason: "length" }]).config);
    same(
      [blank.stopReason, lines(blank.messages)],
      ["length", ["user:a.ts 里有什么？", "assistant:[]"]],
      "没有内容的 length 回合：[stopReason, 运行添加的消息]（消息照样留下）",
    );
  });
  await rule("§C4.3：length 回合之后有排队的输入：运行继续，模型看到未运行调用的错误结果", async () => {
    const queue: AgentMessage[][] = [[userMessage("输出上限调大了，再来", 9)]];
    const ran: string[] = [];
    const { model, config } = setup(
      [
        { ...turn(toolCall("read", { path: "a.ts" })), stopReason: "length" },
        (request) => turn(`看到 ${request.messages.filter((m) => m.role === "toolResult" && m.isError).length} 个未运行的调用`),
      ],
      [readTool(ran)],
      { takeInput: () => queue.shift() ?? [] },
    );
    const result = await runAgentLoop([], [ASK], config);
    same([result.stopReason, model.requests.length, ran], ["stop", 2, []], "[stopReason, 模型请求次数, 运行过的 read]");
    sendable(result.messages, "length 之后继续");
    same(textOf(result.messages.at(-1)!), "看到 1 个未运行的调用", "模型在第二轮的回答");
  });
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

test("Lab 7.2 · 真实 provider 的回答截断在调用参数中途：运行以 length 结束，调用不运行，对话还能接着发送", async (t) => {
  await rule(
    "§C4.3：Anthropic 和 OpenAI 的回答截断在工具调用参数中途（第 04 章给出参数 {}）：调用不运行，配上错误结果；下一次运行把调用和它的结果原样发回",
    async () => {
      for (const wire of CUT_IN_CALL) {
        const { server, ran, events, config, result } = await cutOffRun(t, wire);
        const id = `${wire.wire === "anthropic" ? "toolu" : "call"}_cut`;
        same([result.stopReason, result.failure], ["length", undefined], `${wire.wire}：[stopReason, failure]（不是 error：服务没坏）`);
        same(ran, [], `${wire.wire}：运行过的 write`);
        same(eventKinds(events).includes("tool_start"), false, `${wire.wire}：有没有 tool_start`);
        same(lines(result.messages), ["user:把笔记写进 notes.md", `assistant:[write#${id}]`, `toolResult:${id}!`], `${wire.wire}：运行添加的消息`);
        answeredWithError(result.messages, id, /was not run: the model's output was cut off/, wire.wire);
        const next = await runAgentLoop(result.messages, [userMessage("分成几次写", 2)], config);
        same([next.stopReason, server.requests.length], ["stop", 2], `${wire.wire}：下一次运行的 [stopReason, HTTP 请求次数]`);
        const sent = server.requests[1]!.body;
        expect(
          sent.includes(id) && sent.includes("was not run: the model's output was cut off"),
          `${wire.wire}：第二个 HTTP 请求应当带着 ${id} 和它的错误结果`,
        );
      }
    },
  );
});

test("Lab 7.2 · 不管模型怎么回答：交出的对话总能再发给模型", async () => {
  await holds(
    "§C4.4：任意一串回合（文字、调用、stop、toolUse、length、error，执行器失败或答非所问，回合上限，排队的输入）：每个调用恰好一个结果，紧跟它的助手消息，按调用的顺序；没跑完的回合的调用不交给执行器",
    fc.asyncProperty(runPlan(false), async (plan) => checkPlayed(await playPlan(plan))),
  );
});

// ---------------------------------------------------------------------------
// Lab 7.3 · 中止：没开始的调用不再开始，每个都有结果
// ---------------------------------------------------------------------------

test("Lab 7.3 · 中止在模型说话时：运行以 aborted 结束，原因原样，这一轮的调用配上结果", async () => {
  await rule("§C5.1：运行开始前已中止：只记下输入，不问模型，turns 为 0，运行以 aborted 结束", async () => {
    const { model, config } = setup([turn("never")], undefined, { signal: AbortSignal.abort("早就不要了") });
    const result = await runAgentLoop([], [ASK], config);
    same(
      [result.stopReason, result.errorMessage, result.turns, model.requests.length],
      ["aborted", "早就不要了", 0, 0],
      "[stopReason, errorMessage, turns, 模型请求次数]",
    );
    same(lines(result.messages), ["user:a.ts 里有什么？"], "运行添加的消息");
  });
  await rule("§C5.1：模型说话时中止：运行以 aborted 结束，errorMessage 是中止原因的文字；这一轮已经完整的调用不运行，配上 “was not run” 的结果", async () => {
    const controller = new AbortController();
    const ran: string[] = [];
    const { model, config } = setup([turn("我先读一下 a.ts。", toolCall("read", { path: "a.ts" }), "然后再说"), turn("不该被调用")], [readTool(ran)], {
      signal: controller.signal,
      emit: (event) => {
        if (event.type === "assistant" && event.event.type === "toolcall_end") controller.abort("stop");
      },
    });
    const result = await runAgentLoop([], [ASK], config);
    same([result.stopReason, result.errorMessage], ["aborted", "stop"], "[stopReason, errorMessage]");
    same([ran, model.requests.length], [[], 1], "[运行过的 read, 模型请求次数]");
    same(lines(result.messages), ["user:a.ts 里有什么？", "assistant:[我先读一下 a.ts。 | read#call-1-1]", "toolResult:call-1-1!"], "运行添加的消息");
    answeredWithError(result.messages, "call-1-1", /^tool "read" was not run: /, "模型说话时中止");
  });
});

test("Lab 7.3 · 中止在工具运行时：等执行器的回答，到了的结果留下，没开始的调用配上未运行的结果", async () => {
  await rule(
    "§C5.2：工具运行时中止：循环等执行器的回答（createToolExecutor 不等不理会 signal 的工具，当场答 “was stopped”）；之后的调用不再开始，配上 “was not run: <原因>”；不再问模型",
    async () => {
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
      const registry = new ToolRegistry([stubborn, readTool(ran)]);
      const model = new ScriptedModel([turn(toolCall("stubborn"), toolCall("read", { path: "a.ts" }))]);
      const running = runAgentLoop([], [ASK], {
        model,
        registry,
        executor: createToolExecutor(registry, { signal: controller.signal }),
        maxTurns: 5,
        signal: controller.signal,
      });
      await started.promise;
      controller.abort(new Error("用户中止"));
      const result = await running;
      same([result.stopReason, result.errorMessage], ["aborted", "用户中止"], "[stopReason, errorMessage]");
      sendable(result.messages, "工具运行时中止");
      answeredWithError(result.messages, "call-1-1", /^tool "stubborn" was stopped: 用户中止$/, "正在运行的调用");
      answeredWithError(result.messages, "call-1-2", /^tool "read" was not run: 用户中止$/, "还没开始的调用");
      same([ran, model.requests.length], [[], 1], "[运行过的 read, 模型请求次数]");
    },
  );
  await rule("§C5.2：中止落在工具完成之后、结果到达循环之前：那个结果原样留下，不说成 “stopped”；只有没开始的调用配上错误结果", async () => {
    const controller = new AbortController();
    const write: Tool = {
      name: "write",
      description: "Writes, then the user presses Ctrl-C at that very moment.",
      schema: objectSchema({}),
      async execute() {
        queueMicrotask(() => controller.abort(new Error("Ctrl-C")));
        return { content: [text("wrote a.txt")] };
      },
    };
    const ran: string[] = [];
    const registry = new ToolRegistry([write, readTool(ran)]);
    const model = new ScriptedModel([turn(toolCall("write"), toolCall("read", { path: "a.ts" })), turn("不会到这里")]);
    const result = await runAgentLoop([], [ASK], {
      model,
      registry,
      executor: createToolExecutor(registry, { signal: controller.signal }),
      maxTurns: 5,
      signal: controller.signal,
    });
    same(result.stopReason, "aborted", "stopReason");
    sendable(result.messages, "工具完成之后中止");
    const written = answerOf(result.messages, "call-1-1");
    same(written && [written.isError, textOf(written)], [false, "wrote a.txt"], "已经完成的 write 的结果 [isError, 文字]");
    answeredWithError(result.messages, "call-1-2", /^tool "read" was not run: Ctrl-C$/, "还没开始的调用");
    same([ran, model.requests.length], [[], 1], "[运行过的 read, 模型请求次数]");
  });
  await rule("§C5.2：执行器以中止原因本身拒绝：结果是 “was stopped: <原因的文字>”；以别的错误拒绝，仍是 “failed”", async () => {
    for (const [label, rejectWith, pattern] of [
      ["以中止原因拒绝", (signal: AbortSignal) => signal.reason, /^tool "read" was stopped: 用户中止$/],
      ["以别的错误拒绝", () => new Error("disk gone"), /^tool "read" failed: disk gone$/],
    ] as const) {
      const controller = new AbortController();
      const started = deferred<void>();
      const executor: ToolExecutor = () => {
        started.resolve();
        return new Promise((_, reject) => controller.signal.addEventListener("abort", () => reject(rejectWith(controller.signal)), { once: true }));
      };
      const { config } = setup([turn(toolCall("read", { path: "a.ts" }), toolCall("read", { path: "b.ts" }))], undefined, {
        executor,
        signal: controller.signal,
      });
      const running = runAgentLoop([], [ASK], config);
      await started.promise;
      controller.abort(new Error("用户中止"));
      const result = await running;
      same(result.stopReason, "aborted", `${label}：stopReason`);
      answeredWithError(result.messages, "call-1-1", pattern, label);
      answeredWithError(result.messages, "call-1-2", /^tool "read" was not run: 用户中止$/, `${label}：还没开始的调用`);
    }
  });
  await rule("§C5.2：一轮的调用都有了结果之后中止：不再取排队的输入，不再问模型，运行以 aborted 结束", async () => {
    const controller = new AbortController();
    let asked = 0;
    const { model, config } = setup([turn(toolCall("read", { path: "a.ts" })), turn("不会到这里")], undefined, {
      signal: controller.signal,
      emit: (event) => {
        if (event.type === "tool_end") controller.abort(new Error("Ctrl-C"));
      },
      takeInput: () => {
        asked++;
        return [userMessage("排队的一句", 9)];
      },
    });
    const result = await runAgentLoop([], [ASK], config);
    same(
      [result.stopReason, result.errorMessage, asked, model.requests.length],
      ["aborted", "Ctrl-C", 0, 1],
      "[stopReason, errorMessage, takeInput 被调用的次数, 模型请求次数]",
    );
    same(lines(result.messages), ["user:a.ts 里有什么？", "assistant:[read#call-1-1]", "toolResult:call-1-1"], "运行添加的消息");
  });
  await rule("§C5.2：还没开始的调用有多少，就配上多少条 “was not run”：一轮 1 000 个调用，中止落在第一个的 tool_end，其余 999 个按顺序各有一条", async () => {
    const controller = new AbortController();
    const ids = Array.from({ length: 1_000 }, (_, i) => `call-${i + 1}`);
    const model = builderModel("many", (builder) => {
      for (const id of ids) writeCall(builder, id, "read", { path: "a.ts" });
      builder.finish("toolUse");
    });
    const emit = (event: LoopEvent) => {
      if (event.type === "tool_end") controller.abort("够了");
    };
    const result = await runAgentLoop([], [ASK], setup([], undefined, { model, signal: controller.signal, emit }).config);
    same(
      result.messages.slice(2).map((m) => (m.role === "toolResult" ? `${m.toolCallId}${m.isError ? ` ${textOf(m)}` : ""}` : line(m))),
      ids.map((id, i) => (i === 0 ? id : `${id} tool "read" was not run: 够了`)),
      "助手消息之后的结果：第一个是 read 的，其余是未运行的错误结果，按调用的 id",
    );
  });
  await holds(
    "§C5.1、§C5.2：中止的原因是什么都行（文字、空字符串、空白、两万个字符、Error、数字、null、undefined、对象）：运行的 errorMessage 是 errorMessage(abortReason(signal))，一字不差；没开始的调用是 “was not run: <同一段文字>”",
    fc.asyncProperty(anyValue, async (reason) => {
      const controller = new AbortController();
      const model = builderModel("asks", (builder) => {
        writeCall(builder, "call-1", "read", { path: "a.ts" });
        writeCall(builder, "call-2", "read", { path: "b.ts" });
        builder.finish("toolUse");
      });
      const emit = (event: LoopEvent) => {
        if (event.type === "turn_end") controller.abort(reason);
      };
      const result = await runAgentLoop([], [ASK], setup([], undefined, { model, signal: controller.signal, emit }).config);
      const words = errorMessage(abortReason(controller.signal));
      same([result.stopReason, result.errorMessage], ["aborted", words], "[stopReason, errorMessage]");
      for (const id of ["call-1", "call-2"]) {
        const answer = answerOf(result.messages, id);
        same(answer && [answer.isError, textOf(answer)], [true, `tool "read" was not run: ${words}`], `还没开始的 ${id} 的结果 [isError, 文字]`);
      }
    }),
    { numRuns: 40 },
  );
});

test("Lab 7.3 · 任何时刻中止：交出的对话总能再发给模型", async () => {
  await holds(
    "§C5.3：在任意一个事件处中止（问模型之前、模型说话时、工具开始前后、回合之间）：运行以 aborted 结束或已经结束，每个调用恰好一个结果，紧跟它的助手消息，按调用的顺序",
    fc.asyncProperty(runPlan(true), async (plan) => {
      const played = await playPlan(plan);
      checkPlayed(played);
      if ("result" in played.outcome && played.aborted) {
        const { stopReason, errorMessage } = played.outcome.result;
        expect(
          stopReason !== "aborted" || errorMessage === "用户中止",
          `中止的运行，errorMessage 应当是中止原因的文字 “用户中止”，实际是 ${show(errorMessage)}`,
        );
      }
    }),
  );
});
