import assert from "node:assert/strict";
import test from "node:test";
import { deferred, tick } from "../src/async.js";
import { ToolRegistry, booleanValue, createToolExecutor, numberValue, objectSchema, optional, stringValue, type Tool, type ToolContext } from "../src/tool.js";
import { text, textOf, type ToolCall } from "../src/types.js";

const readSchema = objectSchema({ path: stringValue(), limit: optional(numberValue()), verbose: optional(booleanValue()) });

/** A tool that records what it received and echoes the path. */
function readTool(seen: { parameters: unknown; context: ToolContext }[] = []): Tool<{ path: string }> {
  return {
    name: "read",
    description: "read a file",
    schema: readSchema,
    async execute(parameters, context) {
      seen.push({ parameters, context });
      return { content: [text(`contents of ${parameters.path}`)], details: { path: parameters.path } };
    },
  };
}

function namedTool(name: string): Tool {
  return {
    name,
    description: `${name} tool`,
    schema: objectSchema({}),
    async execute() {
      return { content: [text(name)] };
    },
  };
}

function call(name: string, args: unknown, id = "call-1"): ToolCall {
  return { type: "toolCall", id, name, arguments: args };
}

test("Lab 6.1 · objectSchema 接受合法参数并返回新对象", () => {
  const input = { path: "a.ts", limit: 10 };
  const parsed = readSchema.parse(input);
  assert.deepEqual(parsed, { path: "a.ts", limit: 10 });
  assert.notEqual(parsed, input);
  assert.deepEqual(readSchema.parse({ path: "b.ts" }), { path: "b.ts" }, "可选字段可以缺席");
  assert.deepEqual(readSchema.parse({ path: "c.ts", verbose: false }), { path: "c.ts", verbose: false });
  // Only the caller's own fields count: an inherited `toString` is not an argument.
  const inherited = objectSchema({ path: stringValue(), toString: optional(stringValue()) });
  assert.deepEqual(inherited.parse({ path: "d.ts" }), { path: "d.ts" });
});

test("Lab 6.1 · objectSchema 拒绝错误类型、缺少字段和未知字段", () => {
  const rejected: { name: string; value: unknown }[] = [
    { name: "不是对象", value: "a.ts" },
    { name: "null", value: null },
    { name: "数组", value: ["a.ts"] },
    { name: "缺少必填字段", value: {} },
    { name: "必填字段为 undefined", value: { path: undefined } },
    { name: "字段类型错误", value: { path: 42 } },
    { name: "可选字段类型错误", value: { path: "a.ts", limit: "10" } },
    { name: "数字不是有限值", value: { path: "a.ts", limit: Number.NaN } },
    { name: "无穷大", value: { path: "a.ts", limit: Number.POSITIVE_INFINITY } },
    { name: "布尔字段类型错误", value: { path: "a.ts", verbose: "yes" } },
    { name: "未知字段（拼错的参数名）", value: { path: "a.ts", limt: 10 } },
  ];
  for (const { name, value } of rejected) {
    assert.throws(() => readSchema.parse(value), { code: "SCHEMA_INVALID" }, name);
  }
});

test("Lab 6.2 · ToolRegistry 按注册顺序列出工具", () => {
  const registry = new ToolRegistry([namedTool("b"), namedTool("a")]);
  registry.register(namedTool("c"));
  assert.deepEqual(
    registry.list().map((tool) => tool.name),
    ["b", "a", "c"],
  );
  assert.equal(registry.get("a")?.name, "a");
  assert.equal(registry.get("missing"), undefined);
  registry.list().pop();
  assert.equal(registry.list().length, 3, "list() 返回副本数组");
});

test("Lab 6.2 · 重名工具抛出 TOOL_CONFLICT，注册表保持不变", () => {
  const first = namedTool("read");
  const registry = new ToolRegistry([first, namedTool("write")]);
  assert.throws(() => registry.register(namedTool("read")), { code: "TOOL_CONFLICT" });
  assert.equal(registry.get("read"), first, "原来的工具没有被替换");
  assert.deepEqual(
    registry.list().map((tool) => tool.name),
    ["read", "write"],
  );
  assert.throws(() => new ToolRegistry([namedTool("x"), namedTool("x")]), { code: "TOOL_CONFLICT" });
});

test("Lab 6.2 · unregister 只移除登记在这个名字下的同一个工具，其余顺序不变", () => {
  const read = namedTool("read");
  const registry = new ToolRegistry([read, namedTool("write"), namedTool("list")]);
  assert.equal(registry.unregister("read", namedTool("read")), false, "同名的另一个对象不会被移除");
  assert.equal(registry.unregister("missing", read), false);
  assert.equal(registry.get("read"), read);
  assert.equal(registry.unregister("read", read), true);
  assert.equal(registry.get("read"), undefined);
  assert.deepEqual(
    registry.list().map((tool) => tool.name),
    ["write", "list"],
  );
  registry.register(read);
  assert.deepEqual(
    registry.list().map((tool) => tool.name),
    ["write", "list", "read"],
  );
});

test("Lab 6.3 · 成功的调用得到配对的结果", async () => {
  const seen: { parameters: unknown; context: ToolContext }[] = [];
  const execute = createToolExecutor(new ToolRegistry([readTool(seen)]));
  const result = await execute(call("read", { path: "a.ts" }, "call-7"));
  assert.equal(result.role, "toolResult");
  assert.equal(result.toolCallId, "call-7");
  assert.equal(result.toolName, "read");
  assert.equal(result.isError, false);
  assert.equal(textOf(result), "contents of a.ts");
  assert.deepEqual(result.details, { path: "a.ts" });
  assert.equal(typeof result.timestamp, "number");
  assert.deepEqual(seen, [{ parameters: { path: "a.ts" }, context: { callId: "call-7" } }]);
});

test("Lab 6.3 · 未知工具、非法参数和抛错的工具都变成配对的错误结果", async () => {
  let executed = 0;
  const registry = new ToolRegistry([
    {
      ...readTool(),
      execute: async () => {
        executed += 1;
        return { content: [text("never")] };
      },
    },
    {
      name: "boom",
      description: "throws synchronously",
      schema: objectSchema({}),
      execute: () => {
        throw new Error("sync boom");
      },
    },
    {
      name: "reject",
      description: "rejects",
      schema: objectSchema({}),
      execute: async () => {
        throw new Error("async boom");
      },
    },
    {
      name: "throwString",
      description: "throws a non-Error",
      schema: objectSchema({}),
      execute: async () => {
        throw "plain";
      },
    },
  ]);
  const execute = createToolExecutor(registry);
  const cases: { name: string; call: ToolCall }[] = [
    { name: "未知工具", call: call("nope", {}, "u1") },
    { name: "缺少参数", call: call("read", {}, "u2") },
    { name: "参数类型错误", call: call("read", { path: 1 }, "u3") },
    { name: "未知参数", call: call("read", { path: "a", extra: true }, "u4") },
    { name: "参数不是对象", call: call("read", "a.ts", "u5") },
    { name: "同步抛错", call: call("boom", {}, "u6") },
    { name: "异步拒绝", call: call("reject", {}, "u7") },
    { name: "抛出非 Error 值", call: call("throwString", {}, "u8") },
  ];
  for (const { name, call: toolCall } of cases) {
    const result = await execute(toolCall);
    assert.equal(result.role, "toolResult", name);
    assert.equal(result.toolCallId, toolCall.id, name);
    assert.equal(result.toolName, toolCall.name, name);
    assert.equal(result.isError, true, name);
    assert.ok(textOf(result).length > 0, `${name}: 错误结果说明原因`);
  }
  assert.equal(executed, 0, "参数非法时工具不执行");
});

test("Lab 6.3 · 工具自己报告的 isError 原样保留", async () => {
  const failing: Tool = {
    name: "check",
    description: "reports failure",
    schema: objectSchema({}),
    async execute() {
      return { content: [text("2 tests failed")], isError: true };
    },
  };
  const result = await createToolExecutor(new ToolRegistry([failing]))(call("check", {}));
  assert.equal(result.isError, true);
  assert.equal(textOf(result), "2 tests failed");
  assert.equal("details" in result, false, "没有 details 时不写入该字段");
});

test("Lab 6.3 · 结果持有输出的副本；无法复制的输出变成配对的错误结果", async () => {
  const cachedContent = [text("cached answer")];
  const cachedDetails = { hits: 1 };
  const cached: Tool = {
    name: "cached",
    description: "returns the same objects on every call",
    schema: objectSchema({}),
    async execute() {
      return { content: cachedContent, details: cachedDetails };
    },
  };
  const opaque: Tool = {
    name: "opaque",
    description: "returns details that are not data",
    schema: objectSchema({}),
    async execute() {
      return { content: [text("done")], details: { callback() {} } };
    },
  };
  const execute = createToolExecutor(new ToolRegistry([cached, opaque]));

  const first = await execute(call("cached", {}, "c1"));
  first.content.push(text(" and more"));
  (first.details as { hits: number }).hits = 99;
  assert.deepEqual(cachedContent, [text("cached answer")], "改写结果不会改到工具自己的数组");
  assert.deepEqual(cachedDetails, { hits: 1 });
  cachedContent.push(text(" changed later by the tool"));
  assert.equal(textOf(first), "cached answer and more", "工具之后改动自己的数组也不会改到已返回的结果");

  const result = await execute(call("opaque", {}, "o1"));
  assert.equal(result.toolCallId, "o1");
  assert.equal(result.toolName, "opaque");
  assert.equal(result.isError, true);
  assert.ok(textOf(result).length > 0);
});

test("Lab 6.3 · 执行器在调用时查找工具，之后注册的工具也能找到", async () => {
  const registry = new ToolRegistry();
  const execute = createToolExecutor(registry);
  assert.equal((await execute(call("read", { path: "a.ts" }))).isError, true);
  registry.register(readTool());
  const result = await execute(call("read", { path: "a.ts" }));
  assert.equal(result.isError, false);
  assert.equal(textOf(result), "contents of a.ts");
});

test("Lab 6.3 · 执行器把 signal 交给工具；signal 已中止时不运行工具，给出配对的错误结果", async () => {
  const seen: { parameters: unknown; context: ToolContext }[] = [];
  const controller = new AbortController();
  const execute = createToolExecutor(new ToolRegistry([readTool(seen)]), { signal: controller.signal });
  await execute(call("read", { path: "a.ts" }));
  assert.equal(seen[0]!.context.signal, controller.signal);
  assert.equal(seen[0]!.context.callId, "call-1");

  controller.abort();
  const result = await execute(call("read", { path: "b.ts" }, "late"));
  assert.equal(seen.length, 1, "中止之后工具不再运行");
  assert.equal(result.toolCallId, "late");
  assert.equal(result.isError, true);
  assert.match(textOf(result), /aborted/);

  const plain: { parameters: unknown; context: ToolContext }[] = [];
  await createToolExecutor(new ToolRegistry([readTool(plain)]))(call("read", { path: "c.ts" }));
  assert.deepEqual(plain[0]!.context, { callId: "call-1" }, "没有 signal 时上下文里也没有这个字段");
});

test("Lab 6.3 · 中止时已经到达的结果原样保留；中止时还在运行的工具得到“被中止”的配对错误，执行器不再等它", async () => {
  const controller = new AbortController();
  const release = deferred<void>();
  const started = deferred<void>();
  const finished: Tool = {
    name: "finished",
    description: "finishes; the abort lands right after",
    schema: objectSchema({}),
    async execute() {
      queueMicrotask(() => controller.abort(new Error("Ctrl-C")));
      return { content: [text("done")] };
    },
  };
  const stubborn: Tool = {
    name: "stubborn",
    description: "ignores its signal",
    schema: objectSchema({}),
    async execute() {
      started.resolve();
      await release.promise;
      return { content: [text("too late")] };
    },
  };
  const execute = createToolExecutor(new ToolRegistry([finished, stubborn]), { signal: controller.signal });
  const kept = await execute(call("finished", {}, "first"));
  assert.deepEqual([kept.toolCallId, kept.isError, textOf(kept)], ["first", false, "done"], "the result arrived before the abort: kept");

  const again = new AbortController();
  const stopping = createToolExecutor(new ToolRegistry([stubborn]), { signal: again.signal });
  const answered = stopping(call("stubborn", {}, "second"));
  await started.promise;
  again.abort(new Error("Ctrl-C"));
  // The stubborn tool finishes only after the abort was observed: its late result is not waited for.
  await tick();
  await tick();
  release.resolve();
  const stopped = await answered;
  assert.deepEqual([stopped.toolCallId, stopped.isError], ["second", true]);
  assert.match(textOf(stopped), /was stopped: Ctrl-C/);
});
