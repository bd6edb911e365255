import assert from "node:assert/strict";
import test from "node:test";
import { text, textOf, userMessage, type AgentMessage, type AssistantMessage } from "../src/types.js";

test("Lab 3.1 · text() 生成一个纯文本块", () => {
  assert.deepEqual(text("hello"), { type: "text", text: "hello" });
  assert.deepEqual(text(""), { type: "text", text: "" });
  assert.notEqual(text("a"), text("a"), "每次调用都返回新对象");
});

test("Lab 3.1 · textOf() 按顺序直接拼接文本块，跳过工具调用", () => {
  const call = { type: "toolCall" as const, id: "c1", name: "read", arguments: { path: "a.ts" } };
  const cases: { name: string; content: AssistantMessage["content"]; expected: string }[] = [
    { name: "没有内容", content: [], expected: "" },
    { name: "单个文本块", content: [text("hi")], expected: "hi" },
    { name: "分片的流式文本不加分隔符", content: [text("Hel"), text("lo"), text(" world")], expected: "Hello world" },
    { name: "工具调用不产生文字", content: [text("before "), call, text("after")], expected: "before after" },
    { name: "只有工具调用", content: [call], expected: "" },
  ];
  for (const { name, content, expected } of cases) {
    assert.equal(textOf({ content }), expected, name);
  }
});

test("Lab 3.2 · userMessage() 默认时间戳取 Date.now()", (t) => {
  t.mock.method(Date, "now", () => 1_700_000_000_000);
  assert.deepEqual(userMessage("hi"), {
    role: "user",
    content: [{ type: "text", text: "hi" }],
    timestamp: 1_700_000_000_000,
  });
});

test("Lab 3.2 · userMessage() 保留显式时间戳，包括 0", (t) => {
  t.mock.method(Date, "now", () => 99);
  assert.equal(userMessage("a", 42).timestamp, 42);
  assert.equal(userMessage("a", 0).timestamp, 0);
  assert.equal(textOf(userMessage("原样保留")), "原样保留");
});

test("Lab 3.3 · 消息是纯 JSON 数据，复制与序列化都不丢内容", () => {
  const messages: AgentMessage[] = [
    userMessage("read a.ts", 1),
    { role: "assistant", content: [text("ok"), { type: "toolCall", id: "c1", name: "read", arguments: { path: "a.ts" } }], timestamp: 2 },
    { role: "toolResult", toolCallId: "c1", toolName: "read", content: [text("x")], details: { bytes: 1 }, isError: false, timestamp: 3 },
  ];
  assert.deepEqual(structuredClone(messages), messages);
  assert.deepEqual(JSON.parse(JSON.stringify(messages)), messages);
});
