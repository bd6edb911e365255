/**
 * Chapter 03 labs · the message IR. Seven tests in three labs (2, 2, 3); every name starts
 * with its lab id, so one lab runs alone with
 *
 *   npm run lab -w @pi/course -- 3.1
 *
 * Every check runs under `rule("§C…：…")`, the rule of the contract appendix of
 * chapters/03-messages.md it checks, so a failure names the rule before the values.
 */
import assert from "node:assert/strict";
import test from "node:test";
import { text, textOf, userMessage, type AgentMessage, type AssistantMessage, type TextContent, type ToolCall, type ToolResultMessage } from "../src/types.js";
import { ruleSync as rule } from "./support/rules.js";

// ---------------------------------------------------------------------------
// Rules, plain data and fixtures
// ---------------------------------------------------------------------------

/**
 * Where `value` stops being plain JSON data (§C1.1), or undefined when it is: strings,
 * finite numbers, booleans, `null`, arrays, and objects whose prototype is
 * `Object.prototype` holding only enumerable data fields none of which is `undefined`.
 */
function notPlain(value: unknown, at = "消息"): string | undefined {
  if (value === null || typeof value === "string" || typeof value === "boolean") return undefined;
  if (typeof value === "number") return Number.isFinite(value) ? undefined : `${at} 是 ${value}`;
  if (typeof value !== "object") return `${at} 是 ${typeof value}`;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (Array.isArray(value)) {
    if (prototype !== Array.prototype) return `${at} 是一个特殊的数组`;
  } else if (prototype !== Object.prototype) {
    return `${at} 的原型不是 Object.prototype（${prototype === null ? "null" : ((prototype as { constructor?: { name?: string } }).constructor?.name ?? "?")}）`;
  }
  for (const [key, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(value))) {
    if (Array.isArray(value) && key === "length") continue;
    const field = `${at}.${key}`;
    if (!("value" in descriptor)) return `${field} 是 getter/setter，不是数据字段`;
    if (descriptor.enumerable !== true) return `${field} 不可枚举`;
    if (descriptor.value === undefined) return `${field} 的值是 undefined`;
    const inner = notPlain(descriptor.value, field);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

/** Checks §C1.1 on `value`: plain data, and `structuredClone` and a JSON round trip give it back whole. */
function assertPlainJson(value: unknown, what: string): void {
  assert.equal(notPlain(value, what), undefined, `${what} 不是纯数据`);
  assert.deepEqual(structuredClone(value), value, `${what}：structuredClone 之后应当深相等`);
  assert.deepEqual(JSON.parse(JSON.stringify(value)), value, `${what}：JSON 往返之后应当深相等`);
}

/** `value` and everything inside it, frozen (the input textOf must only read). */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** A text block written out as the contract states it, so that Lab 3.2's tests do not depend on Lab 3.1's function. */
const block = (value: string): TextContent => ({ type: "text", text: value });

/** The running example's tool call: the model asks to read a.ts. */
const readCall: ToolCall = { type: "toolCall", id: "call-1", name: "read", arguments: { path: "a.ts" } };
const listCall: ToolCall = { type: "toolCall", id: "call-2", name: "ls", arguments: { path: "." } };

// ---------------------------------------------------------------------------
// Lab 3.1 · 文本块：原样包住字符串，每次一个新对象
// ---------------------------------------------------------------------------

test("Lab 3.1 · text() 原样包住字符串：只有 type 和 text，先 type 后 text", () => {
  const values = ["a.ts 里有什么？", "", "  两边的空格  ", "第一行\r\n第二行\n", "tab\tand 🙂"];
  for (const value of values) {
    rule('§C3.1：text(value) 恰好是 { type: "text", text: value }：只有这两个字段，value 原样（不去首尾空白、不改换行，空字符串也照样包）', () => {
      assert.deepEqual(text(value), { type: "text", text: value }, JSON.stringify(value));
    });
    rule('§C1.2：字段按类型声明的顺序：text() 的 JSON 是 {"type":"text","text":…}', () => {
      assert.equal(JSON.stringify(text(value)), JSON.stringify({ type: "text", text: value }));
    });
  }
});

test("Lab 3.1 · text() 每次给出一个新的纯数据对象，调用者可以随意修改", () => {
  const made = text("hello");
  rule(
    "§C1.1：消息里的一切都是纯 JSON 数据：原型是 Object.prototype 的对象、数组、字符串、数字、布尔值，没有值为 undefined 的字段，structuredClone 和 JSON 往返都不丢东西",
    () => {
      assertPlainJson(made, 'text("hello")');
    },
  );
  rule('§C3.2：每次调用返回一个新对象：text("a") !== text("a")', () => {
    assert.notEqual(text("a"), text("a"));
    assert.notEqual(text("hello"), made);
  });
  rule("§C3.2：不冻结：调用者可以改它的 text，之后造的块不受影响", () => {
    made.text = "changed";
    assert.equal(made.text, "changed");
    assert.deepEqual(text("hello"), { type: "text", text: "hello" });
  });
});

// ---------------------------------------------------------------------------
// Lab 3.2 · textOf：文本块首尾相接，工具调用不出声
// ---------------------------------------------------------------------------

test("Lab 3.2 · textOf() 文本块按顺序首尾相接，工具调用不出声", () => {
  const cases: { rule: string; name: string; content: AssistantMessage["content"]; expected: string }[] = [
    { rule: "C4.1", name: "单个文本块", content: [block("hi")], expected: "hi" },
    { rule: "C4.1", name: "流式分片：中间不加任何字符", content: [block("我先"), block("读一下"), block(" a.ts。")], expected: "我先读一下 a.ts。" },
    { rule: "C4.1", name: "每块原样：首尾空白和换行都留着", content: [block("  a "), block(" b  "), block("\n")], expected: "  a  b  \n" },
    { rule: "C4.1", name: "空字符串块什么都不加", content: [block("a"), block(""), block("b")], expected: "ab" },
    { rule: "C4.2", name: "工具调用夹在中间", content: [block("before "), readCall, block("after")], expected: "before after" },
    { rule: "C4.2", name: "工具调用在最前", content: [readCall, block("after")], expected: "after" },
    { rule: "C4.2", name: "两个工具调用之后还有文字", content: [block("a"), readCall, listCall, block("b")], expected: "ab" },
    { rule: "C4.3", name: "没有内容", content: [], expected: "" },
    { rule: "C4.3", name: "只有工具调用", content: [readCall, listCall], expected: "" },
  ];
  const statements: Record<string, string> = {
    "C4.1": "§C4.1：文本块的 text 按 content 的顺序首尾相接，中间不加空格、换行或任何字符，每块原样",
    "C4.2": "§C4.2：工具调用不贡献任何字符：不写名字和参数，也不当分隔符，后面的文本块照样接上",
    "C4.3": '§C4.3：content 为空或只有工具调用时，结果是 ""',
  };
  for (const { rule: section, name, content, expected } of cases) {
    rule(statements[section]!, () => {
      assert.equal(textOf({ content }), expected, name);
    });
  }
});

test("Lab 3.2 · textOf() 对三种消息都适用，只读不写", () => {
  const messages: { name: string; message: AgentMessage; expected: string }[] = [
    { name: "用户消息", message: { role: "user", content: [block("a.ts 里"), block("有什么？")], timestamp: 1 }, expected: "a.ts 里有什么？" },
    {
      name: "助手消息",
      message: { role: "assistant", content: [block("我先"), block("读一下 a.ts。"), readCall], timestamp: 2 },
      expected: "我先读一下 a.ts。",
    },
    {
      name: "工具结果",
      message: {
        role: "toolResult",
        toolCallId: "call-1",
        toolName: "read",
        content: [block("export const a = 1;\n")],
        details: { bytes: 20 },
        isError: false,
        timestamp: 3,
      } satisfies ToolResultMessage,
      expected: "export const a = 1;\n",
    },
  ];
  for (const { name, message, expected } of messages) {
    const before = structuredClone(message);
    rule("§C4.4：textOf 接受任何带 content 的消息，只读它：冻结的消息、数组和块也照样工作，调用前后消息深相等", () => {
      const frozen = deepFreeze(message);
      assert.equal(textOf(frozen), expected, name);
      assert.equal(textOf(frozen), expected, `${name}（第二次调用结果相同）`);
      assert.deepEqual(frozen, before, `${name} 没有被改动`);
    });
  }
  rule("§C4.4：textOf 只读它的参数：没冻结的消息也一样，调用之后 content 一块不少、顺序不变", () => {
    const message: AssistantMessage = { role: "assistant", content: [block("a"), readCall, block("b")], timestamp: 4 };
    const before = structuredClone(message);
    assert.equal(textOf(message), "ab");
    assert.deepEqual(message, before);
  });
});

// ---------------------------------------------------------------------------
// Lab 3.3 · userMessage：时间戳 0 也是时间戳
// ---------------------------------------------------------------------------

test("Lab 3.3 · userMessage() 不给时间戳时，取调用那一刻的 Date.now()", (t) => {
  // The whole clock is faked, not only Date.now: new Date().getTime() and +new Date() read it too.
  t.mock.timers.enable({ apis: ["Date"], now: 1_700_000_000_000 });
  rule("§C5.1：不给 timestamp 时，它是这次调用时 Date.now() 的值（毫秒，不换算成秒）", () => {
    assert.deepEqual(userMessage("a.ts 里有什么？"), {
      role: "user",
      content: [{ type: "text", text: "a.ts 里有什么？" }],
      timestamp: 1_700_000_000_000,
    });
  });
  rule("§C5.1：每次调用都重新读 Date.now()，不是模块加载时读的那一次；传 undefined 和不传一样", () => {
    t.mock.timers.tick(500);
    assert.equal(userMessage("再来一条").timestamp, 1_700_000_000_500);
    t.mock.timers.tick(500);
    assert.equal(userMessage("还有一条", undefined).timestamp, 1_700_000_001_000);
  });
});

test("Lab 3.3 · userMessage() 原样保留给出的时间戳，0 也是时间戳", (t) => {
  t.mock.timers.enable({ apis: ["Date"], now: 99 });
  for (const timestamp of [42, 1_700_000_000_000, 0]) {
    rule("§C5.2：给出的数字原样成为 timestamp，0 也是：0 是 1970-01-01T00:00:00Z，不是“没给”", () => {
      assert.equal(userMessage("a", timestamp).timestamp, timestamp, `userMessage("a", ${timestamp})`);
    });
  }
});

test("Lab 3.3 · userMessage() 给出一条新的纯数据消息：恰好一个文本块", (t) => {
  t.mock.timers.enable({ apis: ["Date"], now: 7 });
  for (const value of ["a.ts 里有什么？", "", "两行\n文字", "  空白  "]) {
    rule("§C5.3：content 恰好是 [text(value)]：一个块，value 原样；空字符串也是一个块，多行文字也不拆开", () => {
      assert.deepEqual(userMessage(value, 1).content, [{ type: "text", text: value }], JSON.stringify(value));
    });
  }
  rule('§C1.2：字段按类型声明的顺序：userMessage() 的 JSON 是 {"role":"user","content":[…],"timestamp":…}', () => {
    assert.equal(JSON.stringify(userMessage("hi", 5)), '{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":5}');
  });
  rule(
    "§C1.1：消息里的一切都是纯 JSON 数据：原型是 Object.prototype 的对象、数组、字符串、数字、布尔值，没有值为 undefined 的字段，structuredClone 和 JSON 往返都不丢东西",
    () => {
      assertPlainJson(userMessage("a.ts 里有什么？"), 'userMessage("a.ts 里有什么？")');
      assertPlainJson(userMessage("", 0), 'userMessage("", 0)');
      const conversation: AgentMessage[] = [
        userMessage("a.ts 里有什么？", 1),
        { role: "assistant", content: [text("我先读一下 a.ts。"), readCall], timestamp: 2 },
        {
          role: "toolResult",
          toolCallId: "call-1",
          toolName: "read",
          content: [text("export const a = 1;\n")],
          details: { bytes: 20 },
          isError: false,
          timestamp: 3,
        },
      ];
      assertPlainJson(conversation, "一段对话");
    },
  );
  rule("§C5.4：每次调用都是新对象、新数组、新块：改一条消息，另一条和之后造的消息都不受影响", () => {
    const original = { role: "user", content: [{ type: "text", text: "x" }], timestamp: 1 };
    const first = userMessage("x", 1);
    const second = userMessage("x", 1);
    assert.notEqual(first, second, "两次调用是两个对象");
    assert.notEqual(first.content, second.content, "两条消息的 content 是两个数组");
    assert.notEqual(first.content[0], second.content[0], "两条消息的文本块是两个对象");
    first.content.push({ type: "text", text: "!" });
    first.content[0]!.text = "changed";
    first.timestamp = 2;
    assert.deepEqual(second, original, "另一条消息不受影响");
    assert.deepEqual(userMessage("x", 1), original, "之后造的消息不受影响");
  });
});
