import assert from "node:assert/strict";
import test from "node:test";
import { buildContext, estimateTokens, type BuildContextOptions } from "../src/context.js";
import type { ToolSpec } from "../src/model.js";
import { createSession, type SessionEntry } from "../src/session.js";
import { text, textOf, userMessage, type AgentMessage } from "../src/types.js";

// Message builders. The tests budget with small, hand-countable estimators.
const user = (value: string): AgentMessage => userMessage(value, 0);
const reply = (value: string): AgentMessage => ({ role: "assistant", content: [text(value)], timestamp: 0 });
const calls = (...ids: string[]): AgentMessage => ({
  role: "assistant",
  content: ids.map((id) => ({ type: "toolCall" as const, id, name: "read", arguments: { path: `${id}.ts` } })),
  timestamp: 0,
});
const result = (id: string): AgentMessage => ({
  role: "toolResult",
  toolCallId: id,
  toolName: "read",
  content: [text(`result ${id}`)],
  isError: false,
  timestamp: 0,
});

/** The active path of a session holding `messages` in order; entry ids are e1, e2, … */
function pathOf(...messages: AgentMessage[]): SessionEntry[] {
  let id = 0;
  const session = createSession({ newId: () => `e${++id}`, now: () => 0 });
  for (const message of messages) session.append(message);
  return session.activePath();
}

/** Every message and every non-empty system prompt costs 1 token. */
const one = () => 1;
/** A message costs the length of its text; a system prompt its length. */
const chars = (value: string | AgentMessage) => (typeof value === "string" ? value.length : textOf(value).length);

/**
 * Three interactions, 8 messages (cost 8 with `one`):
 *   I1 = e1..e2 (2), I2 = e3..e6 (4: a tool call and its result), I3 = e7..e8 (2).
 */
const conversation = () => pathOf(user("u1"), reply("a1"), user("u2"), calls("c1"), result("c1"), reply("a2"), user("u3"), reply("a3"));

const I1 = ["e1", "e2"];
const I2 = ["e3", "e4", "e5", "e6"];
const I3 = ["e7", "e8"];

test("Lab 11.1 · 先扣除系统提示、输出预留和安全余量，再计算可用预算", () => {
  const cases: { name: string; options: BuildContextOptions; tokens: Record<string, number> }[] = [
    {
      name: "全部计入",
      options: { maxTokens: 20, systemPrompt: "SYSTEM", reservedOutput: 2, safetyMargin: 1, estimateTokens: one },
      tokens: { maxTokens: 20, system: 1, tools: 0, messages: 8, reservedOutput: 2, safetyMargin: 1, availableForMessages: 16, total: 12 },
    },
    {
      name: "默认值为 0",
      options: { maxTokens: 10, estimateTokens: one },
      tokens: { maxTokens: 10, system: 0, tools: 0, messages: 8, reservedOutput: 0, safetyMargin: 0, availableForMessages: 10, total: 8 },
    },
    {
      name: "刚好放下",
      options: { maxTokens: 12, systemPrompt: "S", reservedOutput: 2, safetyMargin: 1, estimateTokens: one },
      tokens: { maxTokens: 12, system: 1, tools: 0, messages: 8, reservedOutput: 2, safetyMargin: 1, availableForMessages: 8, total: 12 },
    },
    {
      name: "系统提示按估算器计价",
      // Message texts: u1 a1 u2 "" "result c1" a2 u3 a3 = 2+2+2+0+9+2+2+2 = 21 characters.
      options: { maxTokens: 40, systemPrompt: "ten chars!", estimateTokens: chars },
      tokens: { maxTokens: 40, system: 10, tools: 0, messages: 21, reservedOutput: 0, safetyMargin: 0, availableForMessages: 30, total: 31 },
    },
  ];
  for (const { name, options, tokens } of cases) {
    const projection = buildContext(conversation(), options);
    assert.deepEqual(projection.tokens, tokens, name);
    assert.equal(projection.reason, "within_budget", name);
    assert.deepEqual(projection.keptEntryIds, [...I1, ...I2, ...I3], name);
  }
});

test("Lab 11.1 · systemPrompt 原样返回；空字符串计 0 且不调用估算器", () => {
  const seen: (string | AgentMessage)[] = [];
  const spy = (value: string | AgentMessage) => {
    seen.push(value);
    return 1;
  };
  const prompt = "  Rules:\n- keep spaces\n";
  assert.equal(buildContext(conversation(), { maxTokens: 100, systemPrompt: prompt, estimateTokens: spy }).systemPrompt, prompt);
  assert.ok(seen.includes(prompt), "非空系统提示交给估算器");

  for (const options of [{ maxTokens: 100, systemPrompt: "" }, { maxTokens: 100 }]) {
    seen.length = 0;
    const projection = buildContext(conversation(), { ...options, estimateTokens: spy });
    assert.equal(projection.systemPrompt, "");
    assert.equal(projection.tokens.system, 0);
    assert.equal(seen.filter((value) => typeof value === "string").length, 0);
    assert.equal(seen.length, 8, "每条消息恰好估算一次");
  }
});

/**
 * Two tool specs as a request carries them. Their texts (name, description, parameters JSON,
 * one per line) are "read\nRead a file\n{"type":"object"}" (34 characters) and "sh\n\n{}" (6).
 */
const specs = (): ToolSpec[] => [
  { name: "read", description: "Read a file", parameters: { type: "object" } },
  { name: "sh", description: "", parameters: {} },
];

test("Lab 11.1 · 工具说明与系统提示一样是固定开销：每个按名字、描述和参数 JSON 估算一次，计入总数", () => {
  const seen: string[] = [];
  const spy = (value: string | AgentMessage) => {
    if (typeof value === "string") seen.push(value);
    return chars(value);
  };
  const tools = specs();
  const before = structuredClone(tools);
  // Messages cost 21 with `chars` (see Lab 11.1's first test); the tools cost 34 + 6 = 40.
  const projection = buildContext(conversation(), { maxTokens: 50, tools, estimateTokens: spy });
  assert.deepEqual(seen, ['read\nRead a file\n{"type":"object"}', "sh\n\n{}"], "每个工具说明恰好估算一次，估算的是它发送出去的文字");
  assert.deepEqual(projection.tokens, {
    maxTokens: 50,
    system: 0,
    tools: 40,
    messages: 4,
    reservedOutput: 0,
    safetyMargin: 0,
    availableForMessages: 10,
    total: 44,
  });
  assert.equal(projection.reason, "trimmed", "同样的对话没有工具时放得下，工具占去的预算让旧交互被丢弃");
  assert.deepEqual(projection.keptEntryIds, I3);
  assert.deepEqual(tools, before, "工具说明不被改动");
  assert.equal(buildContext(conversation(), { maxTokens: 50, estimateTokens: chars }).reason, "within_budget");

  const overflow = buildContext(conversation(), { maxTokens: 30, systemPrompt: "ten chars!", tools, estimateTokens: chars });
  assert.equal(overflow.reason, "single_interaction_overflow", "工具说明本身就超过窗口");
  assert.equal(overflow.tokens.availableForMessages, 0);
  assert.equal(overflow.tokens.total, 10 + 40 + 4, "total 是整个请求：系统提示 + 工具 + 消息");
  assert.ok(overflow.tokens.total > overflow.tokens.maxTokens);

  assert.equal(buildContext([], { maxTokens: 100, tools }).tokens.tools, 9 + 2, "默认估算器：ceil(34 / 4) + ceil(6 / 4)");
  for (const none of [{}, { tools: [] }]) {
    seen.length = 0;
    assert.equal(buildContext(conversation(), { maxTokens: 100, estimateTokens: spy, ...none }).tokens.tools, 0);
    assert.deepEqual(seen, [], "没有工具时计 0，不调用估算器");
  }
  const onTool = (value: string | AgentMessage) => (typeof value === "string" ? -1 : 1);
  assert.throws(() => buildContext(conversation(), { maxTokens: 100, tools, estimateTokens: onTool }), { code: "CONTEXT_ESTIMATE_INVALID" });
});

test("Lab 11.1 · 默认估算器为 ceil(字符数 / 4)，消息计文本与工具调用 JSON", () => {
  const cases: { value: string | AgentMessage; expected: number }[] = [
    { value: "", expected: 0 },
    { value: "abcd", expected: 1 },
    { value: "abcde", expected: 2 },
    { value: user("abcdefgh"), expected: 2 },
    { value: reply(""), expected: 0 },
    // "read" (4) + '{"path":"a.ts"}' (15) = 19 characters
    { value: { role: "assistant", content: [{ type: "toolCall", id: "c", name: "read", arguments: { path: "a.ts" } }], timestamp: 0 }, expected: 5 },
    // "ab" + "read" + "null" = 10 characters
    { value: { role: "assistant", content: [text("ab"), { type: "toolCall", id: "c", name: "read", arguments: null }], timestamp: 0 }, expected: 3 },
    { value: result("c1"), expected: 3 },
  ];
  for (const { value, expected } of cases) assert.equal(estimateTokens(value), expected, JSON.stringify(value));

  const projection = buildContext(pathOf(user("abcdefgh")), { maxTokens: 100, systemPrompt: "abcde" });
  assert.equal(projection.tokens.system, 2);
  assert.equal(projection.tokens.messages, 2);
});

test("Lab 11.2 · 预算不足时从最旧的完整交互开始丢弃", () => {
  const cases: { maxTokens: number; kept: string[]; messages: number }[] = [
    { maxTokens: 7, kept: [...I2, ...I3], messages: 6 },
    // I2 would half-fit (3 of its 4 messages): it is dropped whole, never split.
    { maxTokens: 5, kept: I3, messages: 2 },
    { maxTokens: 2, kept: I3, messages: 2 },
  ];
  for (const { maxTokens, kept, messages } of cases) {
    const projection = buildContext(conversation(), { maxTokens, estimateTokens: one });
    assert.equal(projection.reason, "trimmed", `maxTokens ${maxTokens}`);
    assert.deepEqual(projection.keptEntryIds, kept, `maxTokens ${maxTokens}`);
    assert.equal(projection.tokens.messages, messages, `maxTokens ${maxTokens}`);
    assert.ok(projection.tokens.total <= maxTokens);
    assert.equal(projection.messages[0]?.role, "user", "保留部分总是从用户消息开始");
  }
});

test("Lab 11.2 · 保留的是连续后缀：放不下的交互之前的更小交互也丢弃", () => {
  // Costs with `chars`: I1 = 1, I2 = 10, I3 = 2.
  const path = pathOf(user("a"), user("bbbbbbbbbb"), user("cc"));
  const projection = buildContext(path, { maxTokens: 5, estimateTokens: chars });
  assert.equal(projection.reason, "trimmed");
  assert.deepEqual(projection.keptEntryIds, ["e3"]);
  assert.deepEqual(
    projection.messages.map((message) => textOf(message)),
    ["cc"],
  );
});

test("Lab 11.2 · 第一条用户消息之前的消息自成最旧的交互", () => {
  const path = pathOf(reply("summary of earlier work"), user("u"), reply("a"));
  assert.deepEqual(buildContext(path, { maxTokens: 3, estimateTokens: one }).keptEntryIds, ["e1", "e2", "e3"]);
  const trimmed = buildContext(path, { maxTokens: 2, estimateTokens: one });
  assert.equal(trimmed.reason, "trimmed");
  assert.deepEqual(trimmed.keptEntryIds, ["e2", "e3"]);
});

test("Lab 11.3 · 最新交互单独超预算时仍然保留，原因是 single_interaction_overflow", () => {
  const cases: { name: string; options: BuildContextOptions; available: number; total: number }[] = [
    { name: "窗口太小", options: { maxTokens: 1, estimateTokens: one }, available: 1, total: 2 },
    { name: "固定开销吃掉全部窗口", options: { maxTokens: 3, reservedOutput: 2, safetyMargin: 1, estimateTokens: one }, available: 0, total: 5 },
    { name: "系统提示超过窗口", options: { maxTokens: 4, systemPrompt: "long system", estimateTokens: chars }, available: 0, total: 15 },
  ];
  for (const { name, options, available, total } of cases) {
    const projection = buildContext(conversation(), options);
    assert.equal(projection.reason, "single_interaction_overflow", name);
    assert.deepEqual(projection.keptEntryIds, I3, name);
    assert.deepEqual(
      projection.messages.map((message) => textOf(message)),
      ["u3", "a3"],
      name,
    );
    assert.equal(projection.tokens.availableForMessages, available, name);
    assert.equal(projection.tokens.total, total, name);
  }

  const alone = buildContext(pathOf(user("only"), calls("c1"), result("c1")), { maxTokens: 2, estimateTokens: one });
  assert.equal(alone.reason, "single_interaction_overflow");
  assert.deepEqual(alone.keptEntryIds, ["e1", "e2", "e3"]);
});

test("Lab 11.3 · 空路径在预算内，什么也不保留", () => {
  const projection = buildContext([], { maxTokens: 0 });
  assert.equal(projection.reason, "within_budget");
  assert.deepEqual(projection.messages, []);
  assert.deepEqual(projection.keptEntryIds, []);
  assert.equal(projection.tokens.total, 0);
});

test("Lab 11.4 · 负数或非有限的预算被拒绝", () => {
  for (const field of ["maxTokens", "reservedOutput", "safetyMargin"] as const) {
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      const options: BuildContextOptions = { maxTokens: 100, estimateTokens: one, [field]: bad };
      assert.throws(() => buildContext(conversation(), options), { code: "CONTEXT_BUDGET_INVALID" }, `${field} = ${bad}`);
    }
  }
  const missing = { estimateTokens: one } as unknown as BuildContextOptions;
  assert.throws(() => buildContext(conversation(), missing), { code: "CONTEXT_BUDGET_INVALID" });
  assert.doesNotThrow(() => buildContext(conversation(), { maxTokens: 0, reservedOutput: 0, safetyMargin: 0 }));
});

test("Lab 11.4 · 负数、非有限或非数字的估算被拒绝，包括将被丢弃的旧消息", () => {
  const badValues: unknown[] = [-1, Number.NaN, Number.POSITIVE_INFINITY, "3", undefined];
  for (const bad of badValues) {
    const everywhere = () => bad as number;
    assert.throws(() => buildContext(conversation(), { maxTokens: 100, estimateTokens: everywhere }), { code: "CONTEXT_ESTIMATE_INVALID" }, String(bad));
    const onSystem = (value: string | AgentMessage) => (typeof value === "string" ? (bad as number) : 1);
    assert.throws(
      () => buildContext(conversation(), { maxTokens: 100, systemPrompt: "S", estimateTokens: onSystem }),
      { code: "CONTEXT_ESTIMATE_INVALID" },
      `system ${String(bad)}`,
    );
    const onOldest = (value: string | AgentMessage) => (typeof value !== "string" && textOf(value) === "u1" ? (bad as number) : 1);
    assert.throws(
      () => buildContext(conversation(), { maxTokens: 2, estimateTokens: onOldest }),
      { code: "CONTEXT_ESTIMATE_INVALID" },
      `oldest ${String(bad)}`,
    );
  }
});

test("Lab 11.4 · 交互内的工具调用与结果必须按 id 配对", () => {
  const cases: { name: string; messages: AgentMessage[]; code: string }[] = [
    { name: "调用没有结果", messages: [user("u"), calls("c1")], code: "CONTEXT_UNPAIRED_TOOL_CALL" },
    { name: "两个调用只答了一个", messages: [user("u"), calls("c1", "c2"), result("c2")], code: "CONTEXT_UNPAIRED_TOOL_CALL" },
    { name: "结果落在下一个交互", messages: [user("u"), calls("c1"), user("v"), result("c1")], code: "CONTEXT_UNPAIRED_TOOL_CALL" },
    { name: "同一交互内重复的调用 id", messages: [user("u"), calls("c1"), result("c1"), calls("c1"), result("c1")], code: "CONTEXT_UNPAIRED_TOOL_CALL" },
    { name: "结果没有调用", messages: [user("u"), result("c1")], code: "CONTEXT_UNPAIRED_TOOL_RESULT" },
    { name: "结果 id 不匹配", messages: [user("u"), calls("c1"), result("c2")], code: "CONTEXT_UNPAIRED_TOOL_RESULT" },
    { name: "结果在调用之前", messages: [user("u"), result("c1"), calls("c1")], code: "CONTEXT_UNPAIRED_TOOL_RESULT" },
    { name: "同一调用有两个结果", messages: [user("u"), calls("c1"), result("c1"), result("c1")], code: "CONTEXT_UNPAIRED_TOOL_RESULT" },
    { name: "旧交互即使会被丢弃也要配对", messages: [user("old"), calls("c1"), user("new"), reply("ok")], code: "CONTEXT_UNPAIRED_TOOL_CALL" },
  ];
  for (const { name, messages, code } of cases) {
    assert.throws(() => buildContext(pathOf(...messages), { maxTokens: 2, estimateTokens: one }), { code }, name);
  }
  const parallel = pathOf(user("u"), calls("c1", "c2"), result("c2"), result("c1"), reply("done"));
  assert.equal(buildContext(parallel, { maxTokens: 100, estimateTokens: one }).keptEntryIds.length, 5, "并行调用可以乱序作答");
});

test("Lab 11.5 · 投影是深副本，修改它不会改动输入", () => {
  const path = conversation();
  const before = structuredClone(path);
  const projection = buildContext(path, { maxTokens: 100, estimateTokens: one });
  assert.deepEqual(
    projection.messages,
    path.map((entry) => entry.message),
    "消息按从旧到新的顺序",
  );
  for (let i = 0; i < path.length; i++) assert.notEqual(projection.messages[i], path[i]!.message);

  projection.messages[0]!.content[0] = text("rewritten");
  projection.messages.push(user("extra"));
  const call = projection.messages[3]!.content[0];
  assert.ok(call?.type === "toolCall");
  (call.arguments as { path: string }).path = "/etc/passwd";
  projection.keptEntryIds.length = 0;
  assert.deepEqual(path, before);

  const again = buildContext(path, { maxTokens: 100, estimateTokens: one });
  assert.deepEqual(again.keptEntryIds, [...I1, ...I2, ...I3]);
  assert.equal(textOf(again.messages[0]!), "u1");
});

test("Lab 11.5 · 估算器拿到的是副本，改动它也不会影响输入", () => {
  const path = conversation();
  const before = structuredClone(path);
  buildContext(path, {
    maxTokens: 100,
    estimateTokens(value) {
      if (typeof value !== "string") value.content.length = 0;
      return 1;
    },
  });
  assert.deepEqual(path, before);
});
