import assert from "node:assert/strict";
import test from "node:test";
import { Agent, type AgentEvent } from "../src/agent.js";
import type { LoopResult } from "../src/agent-loop.js";
import { deferred } from "../src/async.js";
import { TurnBuilder, type Model } from "../src/model.js";
import { ScriptedModel, toolCall, turn, type ScriptStep } from "../src/scripted-model.js";
import { objectSchema, ToolRegistry, type Tool, type ToolContext } from "../src/tool.js";
import { text, textOf, userMessage, type AgentMessage, type ToolResultMessage } from "../src/types.js";

/** A tool that waits until the test releases it, and reports each run's context. */
function gateTool() {
  const started = deferred<ToolContext>();
  const release = deferred<void>();
  const tool: Tool = {
    name: "wait",
    description: "Waits for the test.",
    schema: objectSchema({}),
    async execute(_parameters, context) {
      started.resolve(context);
      await new Promise<void>((resolve, reject) => {
        release.promise.then(resolve);
        context.signal?.addEventListener("abort", () => reject(new Error("tool saw the abort")), { once: true });
      });
      return { content: [text("waited")] };
    },
  };
  return { tool, started: started.promise, release: () => release.resolve() };
}

function agentWith(script: ScriptStep[], tools: Tool[] = [], extra: Partial<ConstructorParameters<typeof Agent>[0]> = {}) {
  const model = new ScriptedModel(script, { now: () => 0 });
  const agent = new Agent({ model, registry: new ToolRegistry(tools), ...extra });
  const events: AgentEvent[] = [];
  agent.subscribe((event) => events.push(event));
  return { model, agent, events };
}

const roles = (messages: readonly AgentMessage[]) => messages.map((m) => (m.role === "user" ? `user:${textOf(m)}` : m.role));

test("Lab 9.1 · prompt 运行到模型收尾，记录整段对话；messages 返回副本", async () => {
  const { agent, events } = agentWith([turn("你好！")]);
  assert.equal(agent.running, false);
  const running = agent.prompt("hi");
  assert.equal(agent.running, true);
  const result = await running;
  assert.equal(agent.running, false);
  assert.equal(result.stopReason, "stop");
  assert.deepEqual(roles(agent.messages), ["user:hi", "assistant"]);
  agent.messages.pop();
  assert.equal(agent.messages.length, 2, "改动副本不影响 agent");
  assert.equal(events[0]!.type, "run_start");
  assert.equal(events.at(-1)!.type, "run_end");
});

test("Lab 9.1 · 对话跨运行保留：第二次 prompt 的请求带着第一次的全部消息", async () => {
  const initial: AgentMessage[] = [userMessage("earlier", 1), { role: "assistant", content: [text("noted")], timestamp: 2 }];
  const { agent, model } = agentWith([turn("one"), turn("two")], [], { messages: initial });
  await agent.prompt("first");
  await agent.prompt("second");
  assert.deepEqual(roles(model.requests[1]!.messages), ["user:earlier", "assistant", "user:first", "assistant", "user:second"]);
  assert.equal(agent.messages.length, 6);
});

test("Lab 9.2 · 运行中的输入进入队列，在当前工具结果之后、下一次模型调用之前送达", async () => {
  const gate = gateTool();
  const { agent, model, events } = agentWith([turn(toolCall("wait")), turn("都处理完了")], [gate.tool]);
  const first = agent.prompt("开始");
  await gate.started;
  const second = agent.prompt("再加一件事");
  assert.deepEqual(
    agent.queued.map((m) => textOf(m)),
    ["再加一件事"],
  );
  assert.ok(events.some((e) => e.type === "queued"));
  gate.release();
  const [a, b] = await Promise.all([first, second]);
  assert.equal(a, b, "排队的 prompt 得到同一次运行的结果");
  assert.deepEqual(roles(model.requests[1]!.messages), ["user:开始", "assistant", "toolResult", "user:再加一件事"]);
  assert.deepEqual(agent.queued, []);
});

test("Lab 9.2 · 模型收尾时队列里还有输入：运行继续，而不是丢掉它", async () => {
  const { agent, model } = agentWith([turn("第一个回答"), turn("第二个回答")]);
  const first = agent.prompt("一");
  const second = agent.prompt("二");
  const result = await first;
  assert.equal(await second, result);
  assert.equal(model.requests.length, 2);
  assert.deepEqual(roles(result.messages), ["user:一", "assistant", "user:二", "assistant"]);
  assert.equal(result.turns, 2);
});

test("Lab 9.2 · 输入恰好在循环返回的那一刻到达：运行继续处理它，不会丢", async () => {
  const { agent, model, events } = agentWith([turn("第一个回答"), turn("第二个回答")]);
  // The loop has already asked for queued input when turn_end is emitted; this prompt
  // lands after that, before the agent sees the loop's result.
  const off = agent.subscribe((event) => {
    if (event.type === "turn_end") {
      off();
      queueMicrotask(() => void agent.prompt("迟到的输入"));
    }
  });
  const result = await agent.prompt("开始");
  assert.deepEqual(roles(result.messages), ["user:开始", "assistant", "user:迟到的输入", "assistant"]);
  assert.equal(model.requests.length, 2);
  assert.equal(
    events.some((e) => e.type === "dropped"),
    false,
  );
});

test("Lab 9.3 · abort：工具通过 signal 停下，运行以 aborted 结束，排队的输入被丢弃并报告", async () => {
  const gate = gateTool();
  const { agent, events } = agentWith([turn(toolCall("wait")), turn("不会到这里")], [gate.tool]);
  const running = agent.prompt("开始");
  const context = await gate.started;
  void agent.prompt("排队中");
  assert.equal(agent.abort("用户按了 Esc"), true);
  const result = await running;
  assert.equal(result.stopReason, "aborted");
  assert.equal(context.signal?.aborted, true, "工具拿到的是这次运行的 signal");
  const answer = agent.messages.find((m): m is ToolResultMessage => m.role === "toolResult")!;
  assert.equal(answer.isError, true, "被中止的调用也有配对的结果");
  const dropped = events.find((e) => e.type === "dropped");
  assert.deepEqual(dropped && dropped.type === "dropped" ? [dropped.reason, dropped.messages.map((m) => textOf(m))] : undefined, ["aborted", ["排队中"]]);
  assert.equal(
    agent.messages.some((m) => m.role === "user" && textOf(m) === "排队中"),
    false,
  );
  assert.equal(agent.abort(), false, "空闲时没有可中止的运行");
});

test("Lab 9.3 · 中止之后可以开始新的运行，新运行有自己的 signal", async () => {
  const gate = gateTool();
  const { agent } = agentWith([turn(toolCall("wait")), turn("重新开始")], [gate.tool]);
  const running = agent.prompt("a");
  await gate.started;
  agent.abort();
  await running;
  const next = await agent.prompt("b");
  assert.equal(next.stopReason, "stop");
  assert.equal(textOf(agent.messages.at(-1)!), "重新开始");
});

test("Lab 9.4 · 订阅者抛错不影响运行，错误交给 onListenerError；退订之后不再收到事件", async () => {
  const failures: string[] = [];
  const { agent } = agentWith([turn("ok"), turn("again")], [], {
    onListenerError: (error, event) => failures.push(`${event.type}: ${(error as Error).message}`),
  });
  const seen: string[] = [];
  const off = agent.subscribe((event) => {
    seen.push(event.type);
    if (event.type === "run_start") throw new Error("ui bug");
  });
  assert.equal((await agent.prompt("x")).stopReason, "stop");
  assert.deepEqual(failures, ["run_start: ui bug"]);
  const count = seen.length;
  off();
  await agent.prompt("y");
  assert.equal(seen.length, count);
});

test("Lab 9.4 · 没有 onListenerError 时，订阅者的错误写到 console.error", async (t) => {
  const logged = t.mock.method(console, "error", () => {});
  const { agent } = agentWith([turn("ok")]);
  agent.subscribe(() => {
    throw new Error("loud");
  });
  await agent.prompt("x");
  assert.ok(logged.mock.calls.length > 0);
  assert.match(String(logged.mock.calls[0]!.arguments[0]), /loud/);
});

test("Lab 9.4 · idle 在空闲时立即完成，运行中则等到结束", async () => {
  const { agent } = agentWith([turn("ok")]);
  await agent.idle();
  const running = agent.prompt("x");
  await agent.idle();
  assert.equal(agent.running, false);
  assert.equal((await running).stopReason, "stop");
});

test("Lab 9.5 · wrapExecutor 包住每次运行的执行器；prepareContext 与 maxTurns 交给循环", async () => {
  const { agent, model, events } = agentWith([turn(toolCall("wait")), turn(toolCall("wait"))], [], {
    wrapExecutor: () => async (call) => ({
      role: "toolResult",
      toolCallId: call.id,
      toolName: call.name,
      content: [text("wrapped")],
      isError: false,
      timestamp: 0,
    }),
    prepareContext: (messages) => ({ systemPrompt: "budgeted", messages }),
    maxTurns: 1,
  });
  const running = agent.prompt("go");
  void agent.prompt("too late");
  const result = await running;
  assert.equal(result.stopReason, "turn_limit");
  assert.equal(model.requests[0]!.systemPrompt, "budgeted");
  assert.equal(textOf(agent.messages[2]!), "wrapped");
  // The queued input was delivered at the boundary before the limit stopped the run.
  assert.deepEqual(roles(agent.messages), ["user:go", "assistant", "toolResult", "user:too late"]);
  assert.equal(
    events.some((e) => e.type === "dropped"),
    false,
  );
});

test("Lab 9.1 · 运行以失败结束时带着失败的 failure，运行因迟到的输入继续过一次也是如此", async () => {
  let calls = 0;
  const model: Model = {
    name: "second-fails",
    stream() {
      const builder = new TurnBuilder({ now: () => 0 });
      if (++calls === 1) {
        builder.appendText("第一个回答");
        builder.finish("stop");
      } else {
        builder.fail("HTTP 529 overloaded_error: Overloaded", "error", { code: "PROVIDER_OVERLOADED", message: "服务过载，请稍后重试" });
      }
      return builder.stream;
    },
  };
  const agent = new Agent({ model, registry: new ToolRegistry() });
  const off = agent.subscribe((event) => {
    if (event.type === "turn_end") {
      off();
      queueMicrotask(() => void agent.prompt("迟到的输入"));
    }
  });
  const result = await agent.prompt("开始");
  assert.equal(calls, 2, "迟到的输入让运行继续了一次");
  assert.equal(result.stopReason, "error");
  assert.equal(result.errorMessage, "HTTP 529 overloaded_error: Overloaded");
  assert.deepEqual(result.failure, { code: "PROVIDER_OVERLOADED", message: "服务过载，请稍后重试" });
});

test("Lab 9.2 · 运行从第一个事件起就在进行：run_start、输入、turn_start 里的 prompt 进入队列，同一时刻只有一个循环", async () => {
  for (const first of ["run_start", "message", "turn_start"] as const) {
    const { agent, model } = agentWith([turn("a"), turn("b")]);
    const running: boolean[] = [];
    let second: Promise<LoopResult> | undefined;
    const off = agent.subscribe((event) => {
      if (event.type !== first) return;
      off();
      running.push(agent.running);
      second = agent.prompt("second");
    });
    const result = await agent.prompt("first");
    assert.deepEqual(running, [true], `${first}: the run is running from its first event`);
    assert.equal(await second, result, `${first}: the prompt joined the same run`);
    assert.deepEqual(roles(model.requests[0]!.messages), ["user:first"], `${first}: the first request carries only the first input`);
    assert.deepEqual(roles(agent.messages), ["user:first", "assistant", "user:second", "assistant"], `${first}: one loop, input in order`);
  }
});

test("Lab 9.3 · run_start 里就能 abort：返回 true，运行以 aborted 结束，不调用模型", async () => {
  const { agent, model, events } = agentWith([turn("never")]);
  const answers: boolean[] = [];
  agent.subscribe((event) => {
    if (event.type === "run_start") answers.push(agent.abort("too soon"));
  });
  const result = await agent.prompt("go");
  assert.deepEqual(answers, [true]);
  assert.equal(result.stopReason, "aborted");
  assert.equal(model.requests.length, 0);
  assert.equal(events.filter((e) => e.type === "run_end").length, 1);
});

test("Lab 9.4 · 每次运行恰好以一个 run_end 结束：回调抛错让 prompt 拒绝时，run_end 也发出，带着 AGENT_RUN_REJECTED", async (t) => {
  t.mock.method(console, "error", () => {});
  const budgetBug = Object.assign(new Error("budget bug"), { code: "BUDGET_BUG" });
  let calls = 0;
  const cases: { label: string; extra: Partial<ConstructorParameters<typeof Agent>[0]>; code: string; roles: string[]; turns: number }[] = [
    {
      label: "prepareContext throws on the second turn",
      extra: {
        prepareContext: (messages) => {
          if (++calls === 2) throw budgetBug;
          return { systemPrompt: "", messages };
        },
      },
      code: "BUDGET_BUG",
      roles: ["user:go", "assistant", "toolResult"],
      turns: 1,
    },
    {
      label: "wrapExecutor throws",
      extra: {
        wrapExecutor: () => {
          throw budgetBug;
        },
      },
      code: "BUDGET_BUG",
      roles: [],
      turns: 0,
    },
    { label: "maxTurns is not a positive integer", extra: { maxTurns: 0 }, code: "LOOP_CONFIG_INVALID", roles: [], turns: 0 },
  ];
  const gate = gateTool();
  gate.release();
  for (const c of cases) {
    const { agent, events } = agentWith([turn(toolCall("wait")), turn("never")], [gate.tool], c.extra);
    await assert.rejects(agent.prompt("go"), { code: c.code }, c.label);
    const ends = events.filter((e) => e.type === "run_end");
    assert.equal(ends.length, 1, `${c.label}: exactly one run_end`);
    assert.equal(events.at(-1)?.type, "run_end", `${c.label}: run_end is the last event`);
    const result = ends[0]!.type === "run_end" ? ends[0]!.result : undefined;
    assert.equal(result?.stopReason, "error", c.label);
    assert.equal(result?.failure?.code, "AGENT_RUN_REJECTED", c.label);
    assert.match(result?.errorMessage ?? "", c.code === "BUDGET_BUG" ? /budget bug/ : /maxTurns/, c.label);
    assert.deepEqual(roles(result?.messages ?? []), c.roles, `${c.label}: what the run added before it rejected`);
    assert.equal(result?.turns, c.turns, `${c.label}: model calls made`);
    assert.equal(agent.running, false, `${c.label}: the run is over`);
  }

  // The agent's own emit hook never throws, even when onListenerError does: the run ends normally.
  const { agent, events } = agentWith([turn("ok")], [], {
    onListenerError: () => {
      throw new Error("error handler bug");
    },
  });
  agent.subscribe(() => {
    throw new Error("ui bug");
  });
  assert.equal((await agent.prompt("go")).stopReason, "stop");
  assert.equal(events.filter((e) => e.type === "run_end").length, 1);
});

test("Lab 9.4 · 事件按发出顺序送到每个订阅者：订阅者里引发的事件排在当前事件之后；每个订阅者拿到自己的副本", async () => {
  const { agent, events } = agentWith([turn("a"), turn("b")]);
  const mine: AgentEvent[] = [];
  agent.subscribe((event) => {
    mine.push(event);
    if (event.type === "turn_start" && event.turn === 1) void agent.prompt("more");
    if (event.type === "message") event.message.timestamp = -1; // changes this listener's copy only
  });
  const last: AgentEvent[] = [];
  agent.subscribe((event) => last.push(event));
  await agent.prompt("go");
  const order = (list: AgentEvent[]) => list.map((e) => (e.type === "turn_start" ? `turn_start:${e.turn}` : e.type)).filter((type) => type !== "assistant");
  for (const [label, list] of [
    ["first", events],
    ["second", mine],
    ["third", last],
  ] as const) {
    const seen = order(list);
    assert.ok(seen.indexOf("turn_start:1") < seen.indexOf("queued"), `${label} listener: turn_start before the queued event it caused`);
    assert.deepEqual(seen, order(events), `${label} listener: the same order as everyone`);
  }
  assert.deepEqual(
    last.filter((e) => e.type === "message").map((e) => e.type === "message" && e.message.timestamp === -1),
    [false, false, false, false],
    "another listener's change does not reach this one",
  );
  assert.equal(
    agent.messages.some((m) => m.timestamp === -1),
    false,
    "nor the agent's transcript",
  );
  assert.equal(
    events.every((event, i) => event !== last[i]),
    true,
    "each listener gets its own object",
  );
});
