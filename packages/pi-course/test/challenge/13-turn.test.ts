/**
 * Chapter 13 challenge · one turn (`runtime.prompt`) when things go wrong: a model stream
 * that fails midway or a model that throws, a tool that throws or is still running, a hook
 * that throws or never answers, the turn limit, the model asking load_skill with hostile
 * arguments, many prompts at once, listeners that scribble on what they get, and an
 * overflow message that names every part. Not a lab: `lab 13 --challenge` runs it on the
 * learner's own runtime.ts.
 *
 * Why a real host needs it: a provider drops a connection, a tool crashes, an extension's
 * hook hangs. The turn still ends with every tool call paired, the session holds what
 * happened, and the next prompt starts from there.
 */
import assert from "node:assert/strict";
import test from "node:test";
import type { ExtensionContext } from "../../src/resources.js";
import type { RuntimeEvent } from "../../src/runtime.js";
import { toolCall, turn, type ScriptStep } from "../../src/scripted-model.js";
import type { Tool } from "../../src/tool.js";
import { text, textOf, type AgentMessage } from "../../src/types.js";
import type { Model } from "../../src/model.js";
import {
  check,
  deferred,
  letOthersRun,
  eventsOf,
  fakeTool,
  moduleOf,
  put,
  ranTools,
  rejectsWith,
  roles,
  skillFile,
  start,
  toolResults,
  workspace,
} from "../fixtures/13-runtime.js";

/** Every tool call of the assistant messages is answered by exactly one result with its id. */
function assertPaired(messages: readonly AgentMessage[]): void {
  const calls = messages.flatMap((m) => (m.role === "assistant" ? m.content.filter((b) => b.type === "toolCall").map((b) => b.id) : []));
  const answered = toolResults(messages).map((r) => r.toolCallId);
  assert.deepEqual([...answered].sort(), [...calls].sort(), "every tool call has exactly one paired result");
}

test("turn: a model stream that fails midway ends the turn; the session keeps what happened; the next prompt runs", async (t) => {
  const { project } = await workspace(t);
  const script: ScriptStep[] = [{ ...turn("Let me look.", toolCall("shell", { command: "ls" })), error: "connection reset by peer" }, turn("back again")];
  const { runtime, toolRuns, events } = await start(script, { projectRoot: project });
  await check("§C7.9：流在中途出错：这一轮以 stopReason error 结束（不是异常），半截调用里的工具一个都不运行，却都有配对的错误结果", async () => {
    const result = await runtime.prompt("go");
    assert.equal(result.stopReason, "error");
    assert.deepEqual(ranTools(toolRuns), []);
    assert.deepEqual(roles(result.messages), ["user", "assistant", "toolResult"]);
    assert.equal(toolResults(result.messages)[0]?.isError, true);
    assertPaired(result.messages);
    assert.deepEqual(runtime.messages, result.messages);
  });
  await check("§C7.9：下一轮照常：它的请求以出错那一轮留下的整段对话开头", async () => {
    const before = runtime.messages;
    const result = await runtime.prompt("again");
    assert.equal(result.stopReason, "stop");
    const last = eventsOf(events, "request").at(-1)!;
    assert.deepEqual(last.messages.slice(0, before.length), before);
  });
});

test("turn: a model that throws instead of streaming ends the turn as an error, not an exception", async (t) => {
  const { project } = await workspace(t);
  const broken: Model = {
    name: "broken",
    stream: () => {
      throw new Error("socket hang up");
    },
  };
  const { runtime } = await start([], { projectRoot: project, model: broken });
  await check("§C7.9：模型的 stream() 直接抛错：prompt 以 stopReason error 结束，session 里留着用户消息，再来一轮也一样", async () => {
    const first = await runtime.prompt("one");
    assert.equal(first.stopReason, "error");
    const second = await runtime.prompt("two");
    assert.equal(second.stopReason, "error");
    assert.deepEqual(
      runtime.messages.filter((m) => m.role === "user").map((m) => textOf(m)),
      ["one", "two"],
    );
  });
});

test("turn: a tool that throws gives a paired error result and the turn goes on", async (t) => {
  const { project } = await workspace(t);
  const crashing: Tool = {
    name: "shell",
    description: "crashes",
    schema: { parse: (value: unknown) => value },
    execute: async () => {
      throw new Error("segfault");
    },
  };
  const { runtime } = await start([turn(toolCall("shell", { command: "ls" })), turn("done anyway")], {
    projectRoot: project,
    tools: () => [crashing],
  });
  await check("§C7.10：工具抛错：模型收到一条配对的错误结果，这一轮照常走到 stop", async () => {
    const result = await runtime.prompt("go");
    assert.equal(result.stopReason, "stop");
    assert.equal(result.turns, 2);
    assert.equal(toolResults(result.messages)[0]?.isError, true);
    assertPaired(result.messages);
  });
});

test("turn: a before hook that never answers is stopped by hookTimeoutMs and fails closed", async (t) => {
  const { project } = await workspace(t);
  await put(project, { "extensions/stuck.mjs": "export default () => {};\n" });
  const { runtime, toolRuns, events } = await start([turn(toolCall("shell", { command: "ls" })), turn("ok")], {
    projectRoot: project,
    hookTimeoutMs: 50,
    importModule: async () => moduleOf((context: ExtensionContext) => context.on("beforeToolCall", () => new Promise(() => {}))),
  });
  await check(
    "§C7.10：hookTimeoutMs 交给扩展宿主：一个永远不回答的 before hook 到时被放弃，调用被拦下（工具不运行），报告一条 timeout 的 hook_diagnostic，这一轮照常结束",
    async () => {
      const result = await runtime.prompt("go");
      assert.equal(result.stopReason, "stop");
      assert.deepEqual(ranTools(toolRuns), []);
      assert.equal(toolResults(result.messages)[0]?.isError, true);
      assert.deepEqual(
        eventsOf(events, "hook_diagnostic").map((e) => [e.diagnostic.extensionId, e.diagnostic.hook, e.diagnostic.kind]),
        [["stuck", "beforeToolCall", "timeout"]],
      );
    },
  );
});

test("turn: a hook that throws blocks the call and is reported as a hook diagnostic", async (t) => {
  const { project } = await workspace(t);
  await put(project, { "extensions/flaky.mjs": "export default () => {};\n" });
  const { runtime, toolRuns, events } = await start([turn(toolCall("shell", { command: "ls" })), turn("ok")], {
    projectRoot: project,
    importModule: async () =>
      moduleOf((context: ExtensionContext) =>
        context.on("beforeToolCall", () => {
          throw new Error("hook crashed");
        }),
      ),
  });
  await check("§C7.10：hook 抛错按拦下处理（fail closed），并作为 hook_diagnostic 事件报告", async () => {
    const result = await runtime.prompt("go");
    assert.deepEqual(ranTools(toolRuns), [], "fail closed: the tool did not run");
    const blocked = toolResults(result.messages)[0]!;
    assert.equal((blocked.details as { kind?: unknown }).kind, "error");
    assert.deepEqual(
      eventsOf(events, "hook_diagnostic").map((e) => [e.diagnostic.extensionId, e.diagnostic.hook, e.diagnostic.kind]),
      [["flaky", "beforeToolCall", "error"]],
    );
  });
});

test("turn: a model that never stops asking for tools meets the turn limit", async (t) => {
  const { project } = await workspace(t);
  const always: ScriptStep = (_request, n) => turn(toolCall("read", { path: `f${n}` }));
  const { runtime, toolRuns, events } = await start([always, always, always, always, always], { projectRoot: project, maxTurns: 3 });
  await check("§C7.11：maxTurns 交给 agent 循环：第三次调用模型之后这一轮以 turn_limit 结束，每个调用都配对，request 事件恰好三个", async () => {
    const result = await runtime.prompt("loop");
    assert.equal(result.stopReason, "turn_limit");
    assert.equal(result.turns, 3);
    assert.equal(toolRuns.length, 3);
    assertPaired(result.messages);
    assert.deepEqual(
      eventsOf(events, "request").map((e) => e.turn),
      [1, 2, 3],
    );
  });
});

test("turn: the model asking load_skill with hostile arguments gets paired refusals, and nothing is loaded", async (t) => {
  const { project } = await workspace(t);
  await put(project, { "skills/review/SKILL.md": skillFile("review", "Use when reviewing", "BODY") });
  const { runtime, events } = await start(
    [
      turn(
        toolCall("load_skill", { name: "../../etc/passwd" }),
        toolCall("load_skill", { name: "review", path: "/etc/passwd" }),
        toolCall("load_skill", { name: "constructor" }),
      ),
      turn("fine"),
    ],
    { projectRoot: project },
  );
  await check("§C7.12：路径一样的名字、多余的 path、原型上的名字：三个配对的错误结果，文字以错误码开头，没有 skill_load 事件", async () => {
    const result = await runtime.prompt("go");
    assert.equal(result.stopReason, "stop");
    const said = toolResults(result.messages).map((r) => [r.isError, textOf(r).match(/skill_[a-z_]+/)?.[0]]);
    assert.deepEqual(said, [
      [true, "skill_not_found"],
      [true, "skill_invalid_request"],
      [true, "skill_not_found"],
    ]);
    assert.deepEqual(eventsOf(events, "skill_load"), []);
    assert.deepEqual(runtime.skillLoads, []);
  });
});

test("turn: ten prompts at once run one after another, in call order", async (t) => {
  const { project } = await workspace(t);
  const echo: ScriptStep = (request) => turn(`re: ${textOf(request.messages.at(-1)!)}`);
  const { runtime, model } = await start(
    Array.from({ length: 10 }, () => echo),
    { projectRoot: project },
  );
  await check("§C7.13：同时发出的十个 prompt 一个接一个地跑：每一轮的请求都以前面所有轮的消息开头，结果与各自的输入对应", async () => {
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => runtime.prompt(`p${i}`)));
    results.forEach((result, i) => {
      assert.equal(textOf(result.messages.at(-1)!), `re: p${i}`);
    });
    assert.deepEqual(
      model.requests.map((request) => request.messages.length),
      [1, 3, 5, 7, 9, 11, 13, 15, 17, 19],
    );
    assert.equal(runtime.messages.length, 20);
  });
});

test("turn: a tool still running holds the prompts and reloads called after it", async (t) => {
  const { project } = await workspace(t);
  const release = deferred();
  const started = deferred();
  const order: string[] = [];
  const slow: Tool = {
    name: "shell",
    description: "slow",
    schema: { parse: (value: unknown) => value },
    execute: async () => {
      started.resolve();
      await release.promise;
      order.push("tool:done");
      return { content: [text("finally")] };
    },
  };
  let asked = 0;
  const { runtime } = await start(
    [
      turn(toolCall("shell", { command: "sleep" })),
      () => {
        order.push("model:first-done");
        return turn("first");
      },
      () => {
        order.push("model:second");
        return turn("second");
      },
    ],
    {
      projectRoot: project,
      tools: () => [slow, fakeTool("read", [])],
      isProjectTrusted: () => {
        asked += 1;
        if (asked > 1) order.push("reload:trust");
        return true;
      },
    },
  );
  await check("§C7.13：工具还没返回时，之后调用的 reload 和 prompt 都在排队：信任没有被再问，模型没有被再调用；工具返回后按调用顺序进行", async () => {
    const first = runtime.prompt("one");
    await started.promise;
    const reloading = runtime.reload();
    const second = runtime.prompt("two");
    await letOthersRun();
    assert.deepEqual(order, []);
    assert.equal(asked, 1);
    release.resolve();
    await Promise.all([first, reloading, second]);
    assert.deepEqual(order, ["tool:done", "model:first-done", "reload:trust", "model:second"]);
  });
});

test("turn: events are copies, in order; getters hand out copies too", async (t) => {
  const { project } = await workspace(t);
  await put(project, { "skills/review/SKILL.md": skillFile("review", "Use when reviewing", "BODY") });
  const seen: RuntimeEvent[] = [];
  const { runtime } = await start([turn(toolCall("load_skill", { name: "review" })), turn("done")], {
    projectRoot: project,
    onEvent: (event) => {
      seen.push(event);
      if (event.type === "message") event.message.content.length = 0; // a listener that scribbles on its copy
      if (event.type === "request") event.messages.length = 0;
    },
  });
  await check("§C7.14：事件按发生顺序到达，每个都是副本：监听者改它碰不到 session", async () => {
    await runtime.prompt("go");
    assert.deepEqual(
      seen.map((event) => (event.type === "message" ? `message:${event.message.role}` : event.type)),
      ["message:user", "request", "message:assistant", "skill_load", "message:toolResult", "request", "message:assistant"],
    );
    assert.equal(textOf(runtime.messages[0]!), "go", "the session kept its own message");
    assert.equal(eventsOf(seen, "request")[1]!.turn, 2);
  });
  await check("§C7.14：getter 每次给一份副本：改 messages、catalog、skillLoads、extensions、diagnostics 的返回值不改变运行时", async () => {
    const messages = runtime.messages;
    messages.length = 0;
    const catalog = runtime.catalog;
    catalog.listed.push("evil");
    runtime.skillLoads.push({ name: "evil", by: "user", at: 0 });
    runtime.extensions.push({ id: "evil", origin: "user", status: "active" });
    runtime.diagnostics.push({ area: "trust", severity: "error", code: "X", source: "x", message: "x" });
    runtime.tools.push("evil");
    runtime.resources.skills.length = 0;
    assert.equal(runtime.messages.length, 4);
    assert.deepEqual(runtime.catalog.listed, ["review"]);
    assert.equal(runtime.skillLoads.length, 1);
    assert.deepEqual(runtime.extensions, []);
    assert.deepEqual(runtime.diagnostics, []);
    assert.ok(!runtime.tools.includes("evil"));
    assert.equal(runtime.resources.skills.length, 1);
  });
});

test("turn: a request that overflows names every part of the sum", async (t) => {
  const { project } = await workspace(t);
  const system = "s".repeat(400);
  const { runtime } = await start([turn("x")], {
    projectRoot: project,
    baseSystemPrompt: system,
    // The system prompt costs 100, each of the three tools (read, shell, load_skill) 1, a message 2.
    context: { maxTokens: 110, reservedOutput: 10, safetyMargin: 5, estimateTokens: (value) => (typeof value !== "string" ? 2 : value === system ? 100 : 1) },
  });
  await check("§C7.3：RUNTIME_CONTEXT_OVERFLOW 的消息写出系统提示、工具、消息、预留输出、安全余量、总数和上限", async () => {
    const error = await rejectsWith(runtime.prompt("hello"), "RUNTIME_CONTEXT_OVERFLOW", "overflow");
    for (const part of ["100", "3", "2", "10", "5", "120", "110"]) assert.match(error.message, new RegExp(`\\b${part}\\b`), part);
  });
});
