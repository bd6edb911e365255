/**
 * Chapter 03 labs · the message IR. Fourteen tests in five labs (2, 2, 3, 3, 4); every name
 * starts with its lab id, so one lab runs alone with
 *
 *   npm run lab -w @pi/course -- 3.1
 *
 * Every check runs under `rule("§C…：…")`, the rule of the contract appendix of
 * chapters/03-messages/README.md it checks, so a failure names the rule before the values. Rules
 * that hold for every input (原样, a fresh object each call, the clock read at the call, any
 * number kept, every well-paired transcript accepted and every broken one caught) are also
 * checked as properties with `holds()` over generated inputs, beside the examples that tell
 * the story. The checks a common mistake of the text trips fail with messages written here
 * (not Node's assertion diff, whose layout differs between Node versions), so the text can
 * quote them.
 */
import assert from "node:assert/strict";
import test from "node:test";
import fc from "fast-check";
import {
  text,
  textOf,
  toolResult,
  transcriptProblem,
  userMessage,
  type AgentMessage,
  type AssistantMessage,
  type TextContent,
  type ToolCall,
  type ToolResultMessage,
  type TranscriptProblem,
  type UserMessage,
} from "../src/types.js";
import { holds } from "./support/properties.js";
import { ruleSync as rule } from "./support/rules.js";

// ---------------------------------------------------------------------------
// Rules, plain data and fixtures
// ---------------------------------------------------------------------------

/**
 * Where `value` stops being plain JSON data (§C1.1), or undefined when it is: strings,
 * finite numbers, booleans, `null`, arrays, and objects whose prototype is
 * `Object.prototype` holding only enumerable data fields none of which is `undefined`, each
 * object and array as a literal makes it (extensible, its fields writable and configurable,
 * no symbol keys).
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
  if (!Object.isExtensible(value)) return `${at} 不可扩展（被 Object.freeze、Object.seal 或 Object.preventExtensions 处理过）`;
  if (Object.getOwnPropertySymbols(value).length > 0) return `${at} 有 symbol 键：JSON 看不见它`;
  for (const [key, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(value))) {
    if (Array.isArray(value) && key === "length") continue;
    const field = `${at}.${key}`;
    if (!("value" in descriptor)) return `${field} 是 getter/setter，不是数据字段`;
    if (descriptor.enumerable !== true) return `${field} 不可枚举`;
    if (descriptor.writable !== true || descriptor.configurable !== true) return `${field} 只读或不可配置（不像对象字面量的字段）`;
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

/** The pieces generated strings are made of: whitespace, line ends, BOM, controls, combining marks, lone surrogates, emoji, letters. */
const PIECES = [" ", "  ", "\t", "\n", "\r\n", "\r", "\n\n\n", "\uFEFF", "\u0000", "\u001F", "\u007F", "\u00A0", "\u200B", "\u2028"];
const MORE_PIECES = ["e\u0301", "\u212B", "\uFB01", "\uFF21", "\uDFFF", "\uD800", "🙂", "a", "B", "读", "。", "\\", '"', "<b>"];

/**
 * Strings a "helpful" cleanup would change, the examples of 原样 (§C3.1, §C4.1, §C5.3): each is
 * a legal string and must come back with every code unit where it was.
 */
const AS_IS: { name: string; value: string }[] = [
  { name: "组合字符（e 加上组合重音，不做 NFC 规范化）", value: "cafe\u0301" },
  { name: "开头的 BOM", value: "\uFEFF第一行" },
  { name: "控制字符", value: "a\u0000b\u001Fc\u007F" },
  { name: "连续的空行", value: "上\n\n\n\n下" },
  { name: "Windows 的换行（\\r\\n 不改成 \\n）", value: "一\r\n二\r\n" },
  { name: "落单的代理项（不换成 U+FFFD）", value: "半个\uD800字" },
  { name: "很长的文字（一百万个字符，不截断）", value: "长".repeat(1_000_000) },
  { name: "各种空白、换行和特殊字符放在一起", value: [...PIECES, ...MORE_PIECES].join("") },
];

/** Any string, built from the pieces above and random ones: what 原样 has to keep. */
const anyText: fc.Arbitrary<string> = fc
  .array(fc.oneof(fc.constantFrom(...PIECES, ...MORE_PIECES), fc.string({ maxLength: 4 }), fc.string({ unit: "binary", maxLength: 2 })), { maxLength: 8 })
  .map((parts) => parts.join(""));

/** Any tool call: tool calls carry no text whatever their name and arguments hold. */
const anyToolCall: fc.Arbitrary<ToolCall> = fc.record(
  {
    type: fc.constant("toolCall" as const),
    id: fc.constantFrom("call-1", "call-2", ""),
    name: fc.constantFrom("read", "ls", "text", ""),
    arguments: fc.constantFrom<unknown>({ path: "a.ts" }, {}, { text: "参数里的文字" }),
  },
  { noNullPrototype: true },
);

/** Any content of an assistant message: text blocks and tool calls in any order. */
const anyContent: fc.Arbitrary<(TextContent | ToolCall)[]> = fc.array(fc.oneof(anyText.map(block), anyToolCall), { maxLength: 10 });

/** The text of `content` as the contract states it (§C4.1, §C4.2), written out for the tests. */
const expectedText = (content: readonly (TextContent | ToolCall)[]): string => content.map((item) => (item.type === "text" ? item.text : "")).join("");

/** Any finite number but -0 (which no JSON can hold): every timestamp a caller may give (§C5.2). */
const anyTimestamp: fc.Arbitrary<number> = fc
  .oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0, -1, 0.5, 2 ** 31, 8_640_000_000_000_000))
  .filter((value) => !Object.is(value, -0));

/** What a clock may read: from the epoch to the year 2100, 0 and 2^31 included (§C5.1). */
const anyClock: fc.Arbitrary<number> = fc.oneof(fc.constantFrom(0, 1, 999, 1_000, 2 ** 31, 1_700_000_000_000), fc.integer({ min: 0, max: 4_102_444_800_000 }));

/** How many generated inputs each property of this file tries: the examples carry the story, the properties widen it. */
const RUNS = 25;

/**
 * A string as a failure names it: JSON, cut short when long, every character outside printable
 * ASCII and CJK escaped, so that "e\u0301" and "é", or a BOM, can be told apart.
 */
function shown(value: string): string {
  const escaped = (part: string) =>
    JSON.stringify(part).replace(/[^\x20-\x7E\u3000-\u303F\u4E00-\u9FFF\uFF01-\uFF5E]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return value.length <= 40 ? escaped(value) : `${escaped(value.slice(0, 12))}…（共 ${value.length} 个字符）`;
}

/** Fails unless `actual` is `expected` unit for unit, naming where they part (long strings cut short). */
function assertSameText(actual: unknown, expected: string, what: string): void {
  if (actual === expected) return;
  if (typeof actual !== "string") assert.fail(`${what}：应当是字符串 ${shown(expected)}，实际是 ${typeof actual}`);
  let same = 0;
  while (same < actual.length && same < expected.length && actual[same] === expected[same]) same++;
  assert.fail(`${what}：应当是 ${shown(expected)}，实际是 ${shown(actual)}（前 ${same} 个字符相同，之后不一样）`);
}

/** Checks that `made` is exactly the text block of `value`: its text first (原样), then its shape. */
function assertBlockOf(made: TextContent, value: string, what: string): void {
  assertSameText(made.text, value, what);
  assert.deepEqual(made, { type: "text", text: value }, what);
}

// ---------------------------------------------------------------------------
// Lab 3.1 · 文本块：原样包住字符串，每次一个新对象
// ---------------------------------------------------------------------------

const C3_1 =
  '§C3.1：text(value) 恰好是 { type: "text", text: value }：只有这两个字段，value 原样（不去首尾空白、不改换行，不规范化、不过滤、不截断，空字符串也照样包）';

test("Lab 3.1 · text() 原样包住字符串：只有 type 和 text，先 type 后 text", async () => {
  const values = ["a.ts 里有什么？", "", "  两边的空格  ", "第一行\r\n第二行\n", "tab\tand 🙂"];
  for (const value of values) {
    rule(C3_1, () => {
      assertBlockOf(text(value), value, `text(${shown(value)})`);
    });
    rule('§C1.2：字段按类型声明的顺序：text() 的 JSON 是 {"type":"text","text":…}', () => {
      assert.equal(JSON.stringify(text(value)), JSON.stringify({ type: "text", text: value }));
    });
  }
  for (const { name, value } of AS_IS) {
    rule(C3_1, () => {
      assertBlockOf(text(value), value, `${name}：text(${shown(value)})`);
    });
  }
  await holds(
    C3_1,
    fc.property(anyText, (value) => {
      assertBlockOf(text(value), value, `text(${shown(value)})`);
    }),
    { numRuns: RUNS },
  );
});

test("Lab 3.1 · text() 每次给出一个新的纯数据对象，调用者可以随意修改", async () => {
  const made = text("hello");
  rule('§C3.2：每次调用返回一个新对象：text("a") !== text("a")', () => {
    assert.notEqual(text("a"), text("a"));
    assert.notEqual(text(""), text(""), '空字符串也一样：text("") !== text("")');
    assert.notEqual(text("hello"), made);
  });
  rule("§C3.2：不冻结：调用者可以改它的 text，之后造的块不受影响", () => {
    made.text = "changed";
    assert.equal(made.text, "changed");
    assert.deepEqual(text("hello"), { type: "text", text: "hello" });
  });
  await holds(
    "§C3.2：不缓存、不复用：同样的字符串（空字符串也是）每次都得到一个新对象；改了它，之后造的块不受影响",
    fc.property(fc.array(fc.oneof(fc.constantFrom("", "a", " "), anyText), { minLength: 1, maxLength: 8 }), (values) => {
      const blocks = [...values, ...values].map((value) => text(value));
      const first = blocks.map((made) => structuredClone(made));
      assert.equal(new Set(blocks).size, blocks.length, "每次调用都应当是一个新对象");
      for (const made of blocks) made.text = `${made.text}（改过）`;
      for (const [i, value] of values.entries()) {
        assert.deepEqual(text(value), first[i], `改过之后再造 text(${shown(value)})：应当和第一次造的一样`);
      }
    }),
    { numRuns: RUNS },
  );
  rule(
    "§C1.1：消息里的一切都是纯 JSON 数据：像对象字面量造出的那样（原型是 Object.prototype，可扩展，字段可写），没有值为 undefined 的字段，structuredClone 和 JSON 往返都不丢东西",
    () => {
      assertPlainJson(text("hello"), 'text("hello")');
      assertPlainJson(text(""), 'text("")');
    },
  );
});

// ---------------------------------------------------------------------------
// Lab 3.2 · textOf：文本块首尾相接，工具调用不出声
// ---------------------------------------------------------------------------

const C4_1 = "§C4.1：文本块的 text 按 content 的顺序首尾相接，中间不加空格、换行或任何字符，每块原样";
const C4_2 = "§C4.2：工具调用不贡献任何字符：不写名字和参数，也不当分隔符，后面的文本块照样接上";
const C4_4 =
  "§C4.4：textOf 接受任何带 content 的消息，结果只看 content（role、isError 等字段不影响它）；它只读消息：冻结的消息、数组和块也照样工作，调用前后消息深相等";

test("Lab 3.2 · textOf() 文本块按顺序首尾相接，工具调用不出声", async () => {
  const many = Array.from({ length: 10_000 }, (_, i) => `${i % 10}`);
  const cases: { rule: string; name: string; content: AssistantMessage["content"]; expected: string }[] = [
    { rule: "C4.1", name: "单个文本块", content: [block("hi")], expected: "hi" },
    { rule: "C4.1", name: "流式分片：中间不加任何字符", content: [block("我先"), block("读一下"), block(" a.ts。")], expected: "我先读一下 a.ts。" },
    { rule: "C4.1", name: "每块原样：首尾空白和换行都留着", content: [block("  a "), block(" b  "), block("\n")], expected: "  a  b  \n" },
    { rule: "C4.1", name: "空字符串块什么都不加", content: [block("a"), block(""), block("b")], expected: "ab" },
    { rule: "C4.1", name: "相邻两块文字一样：两块都接上，不去重", content: [block("哈"), block("哈"), block("哈")], expected: "哈哈哈" },
    ...AS_IS.map(({ name, value }) => ({ rule: "C4.1", name: `每块原样：${name}`, content: [block("["), block(value), block("]")], expected: `[${value}]` })),
    { rule: "C4.1", name: "一万个文本块，一块不丢", content: many.map(block), expected: many.join("") },
    { rule: "C4.2", name: "工具调用夹在中间", content: [block("before "), readCall, block("after")], expected: "before after" },
    { rule: "C4.2", name: "工具调用在最前", content: [readCall, block("after")], expected: "after" },
    { rule: "C4.2", name: "两个工具调用之后还有文字", content: [block("a"), readCall, listCall, block("b")], expected: "ab" },
    { rule: "C4.2", name: "一万个工具调用之后还有文字", content: [...Array.from({ length: 10_000 }, () => readCall), block("end")], expected: "end" },
    { rule: "C4.3", name: "没有内容", content: [], expected: "" },
    { rule: "C4.3", name: "只有工具调用", content: [readCall, listCall], expected: "" },
    { rule: "C4.3", name: "只有一个空文本块", content: [block("")], expected: "" },
  ];
  const statements: Record<string, string> = {
    "C4.1": C4_1,
    "C4.2": C4_2,
    "C4.3": '§C4.3：content 为空或只有工具调用时，结果是 ""',
  };
  for (const { rule: section, name, content, expected } of cases) {
    rule(statements[section]!, () => {
      const got = textOf({ content });
      assertSameText(got, expected, name);
    });
  }
  await holds(
    C4_1,
    fc.property(fc.array(anyText, { maxLength: 10 }), (texts) => {
      assertSameText(textOf({ content: texts.map(block) }), texts.join(""), "textOf");
    }),
    { numRuns: RUNS },
  );
  await holds(
    C4_2,
    fc.property(anyContent, (content) => {
      assertSameText(textOf({ content }), expectedText(content), "textOf");
    }),
    { numRuns: RUNS },
  );
});

test("Lab 3.2 · textOf() 对三种消息都适用，只读不写", async () => {
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
    {
      name: "失败的工具结果（isError 不加任何前缀）",
      message: {
        role: "toolResult",
        toolCallId: "call-2",
        toolName: "read",
        content: [block("ENOENT: b.ts 不存在")],
        isError: true,
        timestamp: 4,
      } satisfies ToolResultMessage,
      expected: "ENOENT: b.ts 不存在",
    },
  ];
  for (const { name, message, expected } of messages) {
    const before = structuredClone(message);
    rule(C4_4, () => {
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
  const C4_4_NOW = "§C4.4：textOf 不记住以前的结果：同一条消息改过之后再交给它，结果按改过的 content 算";
  rule(C4_4_NOW, () => {
    const message: AssistantMessage = { role: "assistant", content: [block("a")], timestamp: 5 };
    assert.equal(textOf(message), "a");
    message.content.push(readCall, block("b"));
    assert.equal(textOf(message), "ab", "content 里多了一块");
    (message.content[0] as TextContent).text = "A";
    assert.equal(textOf(message), "Ab", "第一块的 text 改了");
    message.content = [block("新的")];
    assert.equal(textOf(message), "新的", "content 换成了另一个数组");
  });
  await holds(
    `${C4_4}；${C4_4_NOW.slice("§C4.4：".length)}`,
    fc.property(fc.constantFrom("user", "assistant", "toolResult"), fc.boolean(), anyContent, anyContent, (role, isError, content, more) => {
      // The message gets its own array: fast-check keeps the generated one to shrink it.
      const own = [...content];
      const message = (
        role === "toolResult" ? { role, toolCallId: "call-1", toolName: "read", content: own, isError, timestamp: 1 } : { role, content: own, timestamp: 1 }
      ) as AgentMessage;
      const before = structuredClone(message);
      assertSameText(textOf(message), expectedText(content), "textOf");
      assert.deepEqual(message, before, "调用之后消息没有被改动");
      own.push(...more);
      assertSameText(textOf(message), expectedText(own), "消息改过之后再调用 textOf");
    }),
    { numRuns: RUNS },
  );
});

// ---------------------------------------------------------------------------
// Lab 3.3 · userMessage：时间戳 0 也是时间戳
// ---------------------------------------------------------------------------

test("Lab 3.3 · userMessage() 不给时间戳时，取调用那一刻的 Date.now()", async (t) => {
  // The whole clock is faked, not only Date.now: new Date().getTime() and +new Date() read it too.
  t.mock.timers.enable({ apis: ["Date"], now: 1_700_000_000_000 });
  rule("§C5.1：不给 timestamp 时，它是这次调用时 Date.now() 的值（毫秒，不换算成秒）", () => {
    assert.deepEqual(userMessage("a.ts 里有什么？"), {
      role: "user",
      content: [{ type: "text", text: "a.ts 里有什么？" }],
      timestamp: 1_700_000_000_000,
    });
  });
  const C5_1_EACH = "§C5.1：每次调用都重新读 Date.now()，不是模块加载时读的那一次；传 undefined 和不传一样";
  rule(C5_1_EACH, () => {
    t.mock.timers.tick(500);
    assert.equal(userMessage("再来一条").timestamp, 1_700_000_000_500);
    t.mock.timers.tick(500);
    assert.equal(userMessage("还有一条", undefined).timestamp, 1_700_000_001_000);
  });
  rule(`${C5_1_EACH}：同一毫秒里的两条消息时间戳相同，时钟往回拨也照读`, () => {
    assert.equal(userMessage("同一毫秒，第一条").timestamp, 1_700_000_001_000, "时钟没走：还是那一刻的 Date.now()（不自己加 1）");
    assert.equal(userMessage("同一毫秒，第二条").timestamp, 1_700_000_001_000, "时钟没走：还是那一刻的 Date.now()（不自己加 1）");
    userMessage("给了将来的时间", 5_000_000_000_000);
    assert.equal(userMessage("之后不给").timestamp, 1_700_000_001_000, "给出的时间戳不影响之后的默认值");
    t.mock.timers.setTime(1_000);
    assert.equal(userMessage("时钟拨回了 1970 年").timestamp, 1_000, "时钟往回拨到 1000：时间戳就是 1000，不保留更大的旧值");
    t.mock.timers.setTime(0);
    assert.equal(userMessage("时钟是 0").timestamp, 0, "时钟是 0：时间戳就是 0");
  });
  await holds(
    `${C5_1_EACH}：任何时刻、任何调用顺序，默认的时间戳都是那一刻的 Date.now()`,
    fc.property(
      // Calls that give a timestamp sit in between (what they keep is §C5.2's test): they must not change the next default.
      fc.array(fc.record({ clock: anyClock, given: fc.option(anyClock, { nil: undefined }), passUndefined: fc.boolean() }, { noNullPrototype: true }), {
        minLength: 1,
        maxLength: 8,
      }),
      (calls) => {
        for (const { clock, given, passUndefined } of calls) {
          t.mock.timers.setTime(clock);
          if (given !== undefined) {
            userMessage("给了时间戳", given);
            continue;
          }
          const message = passUndefined ? userMessage("a", undefined) : userMessage("a");
          assert.equal(message.timestamp, clock, `时钟是 ${clock}，${passUndefined ? "传了 undefined" : "没给"}`);
        }
      },
    ),
    { numRuns: RUNS },
  );
});

const C5_2 = "§C5.2：给出的数字原样成为 timestamp，0 也是：0 是 1970-01-01T00:00:00Z，不是“没给”";

test("Lab 3.3 · userMessage() 原样保留给出的时间戳，0 也是时间戳", async (t) => {
  t.mock.timers.enable({ apis: ["Date"], now: 99 });
  for (const timestamp of [42, 1_700_000_000_000, 0]) {
    rule(C5_2, () => {
      const kept = userMessage("a", timestamp).timestamp;
      assert.ok(Object.is(kept, timestamp), `userMessage("a", ${timestamp}) 的 timestamp 应当是 ${timestamp}，实际是 ${kept}`);
    });
  }
  const others = [-1, -1_700_000_000_000, 1.5, 0.25, 1_700_000_000_000.5, 2 ** 31, 8_640_000_000_000_000, Number.MAX_SAFE_INTEGER, 1e300];
  for (const timestamp of others) {
    rule(`${C5_2}；负数、小数、很大的数也一样：不取整，不截断，不拒绝`, () => {
      assert.equal(userMessage("a", timestamp).timestamp, timestamp, `userMessage("a", ${timestamp})`);
    });
  }
  await holds(
    `${C5_2}；任何有限的数字都原样保留`,
    fc.property(anyTimestamp, (timestamp) => {
      assert.equal(userMessage("a", timestamp).timestamp, timestamp);
    }),
    { numRuns: RUNS },
  );
});

const C5_3 = "§C5.3：content 恰好是 [text(value)]：一个块，value 原样；空字符串也是一个块，多行文字也不拆开";
const C5_4 = "§C5.4：每次调用都是新对象、新数组、新块，不冻结：改一条消息，另一条和之后造的消息都不受影响";

/** Checks that `message.content` is exactly `[text(value)]`: one block, `value` 原样. */
function assertContentOf(message: UserMessage, value: string, what: string): void {
  assert.ok(Array.isArray(message.content), `${what}：content 应当是数组`);
  assert.equal(message.content.length, 1, `${what}：content 应当恰好一个块`);
  assertBlockOf(message.content[0]!, value, what);
}

test("Lab 3.3 · userMessage() 给出一条新的纯数据消息：恰好一个文本块", async (t) => {
  t.mock.timers.enable({ apis: ["Date"], now: 7 });
  for (const value of ["a.ts 里有什么？", "", "两行\n文字", "  空白  ", "Windows 的\r\n换行"]) {
    rule(C5_3, () => {
      assertContentOf(userMessage(value, 1), value, `userMessage(${shown(value)}, 1)`);
    });
  }
  for (const { name, value } of AS_IS) {
    rule(C5_3, () => {
      assertContentOf(userMessage(value, 1), value, `${name}：userMessage(${shown(value)}, 1)`);
    });
  }
  await holds(
    C5_3,
    fc.property(anyText, anyTimestamp, (value, timestamp) => {
      assertContentOf(userMessage(value, timestamp), value, `userMessage(${shown(value)}, ${timestamp})`);
    }),
    { numRuns: RUNS },
  );
  rule('§C1.2：字段按类型声明的顺序：userMessage() 的 JSON 是 {"role":"user","content":[…],"timestamp":…}', () => {
    assert.equal(JSON.stringify(userMessage("hi", 5)), '{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":5}');
  });
  rule(C5_4, () => {
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
  await holds(
    `${C5_4}；同样的文字、同样的时间戳（不给也一样）也不复用`,
    fc.property(
      fc.array(fc.record({ value: fc.constantFrom("", "x", "a.ts 里有什么？"), timestamp: fc.constantFrom(undefined, 0, 1) }, { noNullPrototype: true }), {
        minLength: 1,
        maxLength: 6,
      }),
      (calls) => {
        const made = [...calls, ...calls].map(({ value, timestamp }) => userMessage(value, timestamp));
        const first = made.map((message) => structuredClone(message));
        assert.equal(new Set(made).size, made.length, "每次调用都是一个新对象");
        assert.equal(new Set(made.map((message) => message.content)).size, made.length, "每条消息都有自己的 content 数组");
        assert.equal(new Set(made.map((message) => message.content[0])).size, made.length, "每条消息都有自己的文本块");
        for (const message of made) {
          message.content[0]!.text += "（改过）";
          message.content.push({ type: "text", text: "!" });
          message.timestamp = 2;
        }
        for (const [i, { value, timestamp }] of calls.entries()) {
          assert.deepEqual(userMessage(value, timestamp), first[i], `改过之后再造 userMessage(${shown(value)}, ${timestamp})：应当和第一次造的一样`);
        }
      },
    ),
    { numRuns: RUNS },
  );
  rule(
    "§C1.1：消息里的一切都是纯 JSON 数据：像对象字面量造出的那样（原型是 Object.prototype，可扩展，字段可写），没有值为 undefined 的字段，structuredClone 和 JSON 往返都不丢东西",
    () => {
      assertPlainJson(userMessage("a.ts 里有什么？"), 'userMessage("a.ts 里有什么？")');
      assertPlainJson(userMessage("", 0), 'userMessage("", 0)');
      const conversation: AgentMessage[] = [
        userMessage("a.ts 里有什么？", 1),
        { role: "assistant", content: [text("我先读一下 a.ts。"), structuredClone(readCall)], timestamp: 2 },
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
});

// ---------------------------------------------------------------------------
// Lab 3.4 · toolResult：结果带着它回答的调用
// ---------------------------------------------------------------------------

const C6_1 = "§C6.1：toolCallId 恰好是 call.id，toolName 恰好是 call.name，都原样";
const C6_FIELDS = "§C6.1、§C1.2：结果的字段依次是 role、toolCallId、toolName、content、isError、timestamp（details 见 §C6.3）：调用的 type、arguments 不进结果";
const C6_3_FIELDS = "§C6.3、§C1.2：有 details 时，它排在 content 之后、isError 之前";
const C6_2 =
  "§C6.2、§C6.5：content 是 outcome.content 里的块，按原来的顺序、每块原样：一块不少（空文本块也留着），不合并，不改 text，失败的结果（isError: true）也不加前缀；outcome 只被读";
const C6_3 = '§C6.3：outcome 没有 details（或 details 是 undefined）时，结果里没有 details 字段；别的值（null、0、""、false 也是）原样成为 details';
const C6_3_ERROR =
  "§C6.3：isError 总是布尔值，只看 outcome.isError：是 true 时为 true，是 false、没给或 undefined 时为 false；content 的文字、有没有块、details 都不影响它";
const C6_4 = "§C6.4：timestamp 同 §C5.1、§C5.2：没给或给 undefined 时是这次调用时的 Date.now()，给出的数字原样保留，0 也是";
const C6_5 = "§C6.5：每次调用都是一个新的消息对象，不冻结：改一条结果的字段，另一条和之后造的结果都不受影响";
const C1_1_HANDED = "§C1.1、§C6.2、§C6.3：结果里的块和 details 就是交进来的那些值本身（===）：不复制，不冻结也不解冻；装块的 content 数组可以是新的";

/** A result's fields in the order of its type (§C1.2): without `details`, and with it. */
const RESULT_KEYS = ["role", "toolCallId", "toolName", "content", "isError", "timestamp"];
const RESULT_KEYS_WITH_DETAILS = ["role", "toolCallId", "toolName", "content", "details", "isError", "timestamp"];

/**
 * Fails unless `made` has exactly `keys`, in that order, saying what is extra, missing or out of
 * place. Without `details` among `keys`, a `details` field is left to §C6.3's own check.
 */
function assertKeys(made: object, keys: readonly string[], what: string): void {
  const got = Object.keys(made).filter((key) => keys.includes("details") || key !== "details");
  if (got.length === keys.length && got.every((key, i) => key === keys[i])) return;
  const extra = got.filter((key) => !keys.includes(key));
  const missing = keys.filter((key) => !got.includes(key));
  const how = extra.length > 0 ? `多了 ${extra.join("、")}` : missing.length > 0 ? `少了 ${missing.join("、")}` : "顺序不对";
  assert.fail(`${what}：字段应当依次是 ${keys.join("、")}，实际是 ${got.join("、") || "（没有字段）"}（${how}）`);
}

/** Fails unless `content` holds exactly the blocks of `expected`, in order, each text 原样. */
function assertBlocks(content: unknown, expected: readonly TextContent[], what: string): void {
  assert.ok(Array.isArray(content), `${what}：content 应当是数组`);
  if (content.length !== expected.length) assert.fail(`${what}：content 应当有 ${expected.length} 块，实际有 ${content.length} 块`);
  for (const [i, wanted] of expected.entries()) {
    const made: unknown = content[i];
    const plainBlock =
      made !== null &&
      typeof made === "object" &&
      Object.getPrototypeOf(made) === Object.prototype &&
      Object.keys(made).join() === "type,text" &&
      (made as TextContent).type === "text" &&
      (made as TextContent).text === wanted.text;
    if (!plainBlock) assertBlockOf(made as TextContent, wanted.text, `${what}：第 ${i + 1} 块`);
  }
}

test("Lab 3.4 · toolResult() 带上调用的 id 和名字，内容原样", async () => {
  const outcome = { content: [block("export const a = 1;\n")] };
  rule(C6_1, () => {
    const made = toolResult(readCall, outcome, 1_700_000_000_900);
    assert.ok(made.role === "toolResult", `role 应当是 "toolResult"，实际是 ${JSON.stringify(made.role)}`);
    assertSameText(made.toolCallId, "call-1", "读 a.ts 的调用：toolCallId");
    assertSameText(made.toolName, "read", "读 a.ts 的调用：toolName");
  });
  rule(C6_FIELDS, () => {
    assertKeys(toolResult(readCall, outcome, 1_700_000_000_900), RESULT_KEYS, "读 a.ts 的调用的结果");
    const json = JSON.stringify(toolResult(readCall, outcome, 1_700_000_000_900));
    const expected =
      '{"role":"toolResult","toolCallId":"call-1","toolName":"read","content":[{"type":"text","text":"export const a = 1;\\n"}],"isError":false,"timestamp":1700000000900}';
    assert.ok(json === expected, `JSON 应当是 ${expected}，实际是 ${json}`);
  });
  const calls = [
    listCall,
    { id: " call-2 ", name: "Read " },
    { id: "", name: "" },
    { id: "toolu_01\u00e9", name: "读文件" },
    { id: "__proto__", name: "toString" },
  ];
  for (const call of calls) {
    rule(C6_1, () => {
      const frozen = deepFreeze(structuredClone(call));
      const made = toolResult(frozen, { content: [] }, 1);
      assertSameText(made.toolCallId, call.id, `call.id 是 ${shown(call.id)}：toolCallId`);
      assertSameText(made.toolName, call.name, `call.name 是 ${shown(call.name)}：toolName`);
      assert.deepEqual(frozen, call, "调用只被读：前后深相等");
    });
  }
  await holds(
    C6_1,
    fc.property(anyText, anyText, (id, name) => {
      const call: ToolCall = { type: "toolCall", id, name, arguments: { id: "别的", name: "别的" } };
      const made = toolResult(call, { content: [] }, 1);
      assertSameText(made.toolCallId, id, "toolCallId");
      assertSameText(made.toolName, name, "toolName");
    }),
    { numRuns: RUNS },
  );
  await holds(
    C6_FIELDS,
    fc.property(anyToolCall, (call) => {
      assertKeys(toolResult(call, { content: [] }, 1), RESULT_KEYS, `toolResult(${JSON.stringify(call)}, { content: [] })`);
    }),
    { numRuns: RUNS },
  );
  const contents: { name: string; content: TextContent[] }[] = [
    { name: "没有块", content: [] },
    { name: "一个空文本块", content: [block("")] },
    { name: "两块文字一样：两块都留着", content: [block("哈"), block("哈")] },
    { name: "三块：不合并，顺序不变", content: [block("第一块 "), block(""), block(" 第三块\n")] },
    ...AS_IS.map(({ name, value }) => ({ name, content: [block(value)] })),
    { name: "五万块，一块不丢", content: Array.from({ length: 50_000 }, (_, i) => block(`${i % 10}`)) },
    { name: "失败的工具的文字", content: [block("ENOENT: no such file"), block("")] },
  ];
  for (const { name, content } of contents) {
    for (const failed of content.length > 10 ? [false] : [false, true]) {
      rule(C6_2, () => {
        const outcome = deepFreeze(
          failed ? { content: structuredClone(content), details: { code: "ENOENT" }, isError: true } : { content: structuredClone(content) },
        );
        const what = failed ? `${name}（失败的结果：isError 是 true）` : name;
        assertBlocks(toolResult(readCall, outcome, 1).content, content, what);
        assertBlocks(outcome.content, content, `${what}（交进来的 outcome 没有被改动）`);
      });
    }
  }
  await holds(
    C6_2,
    fc.property(
      fc.array(anyText.map(block), { maxLength: 8 }),
      fc.option(fc.boolean(), { nil: undefined }),
      fc.option(fc.jsonValue(), { nil: undefined }),
      (content, isError, details) => {
        const made = toolResult(readCall, { content: structuredClone(content), details, isError }, 1);
        assertBlocks(made.content, content, `isError 是 ${String(isError)} 的结果`);
      },
    ),
    { numRuns: RUNS },
  );
});

test("Lab 3.4 · toolResult() 的 details 没给就不写，isError 总是布尔值", async () => {
  const absent: { name: string; outcome: { content: TextContent[]; details?: unknown } }[] = [
    { name: "outcome 没有 details", outcome: { content: [block("a")] } },
    { name: "outcome 的 details 是 undefined", outcome: { content: [block("a")], details: undefined } },
  ];
  for (const { name, outcome } of absent) {
    rule(C6_3, () => {
      const made = toolResult(readCall, outcome, 1);
      if (Object.hasOwn(made, "details")) {
        assert.fail(`${name}：结果里不该有 details 字段，实际有（值是 ${String(made.details)}）。JSON.stringify 会丢掉它，structuredClone 却留着它`);
      }
    });
  }
  const given: unknown[] = [null, 0, "", false, { bytes: 20 }, [], "文字", { kind: "uncopyable", reason: "a function" }];
  for (const details of given) {
    rule(C6_3, () => {
      const made = toolResult(readCall, { content: [], details: structuredClone(details) }, 1);
      assert.ok(Object.hasOwn(made, "details"), `details 是 ${JSON.stringify(details)}：结果里应当有 details 字段，实际没有`);
      assert.deepEqual(made.details, details, `details 是 ${JSON.stringify(details)}：应当原样`);
    });
    rule(C6_3_FIELDS, () => {
      assertKeys(
        toolResult(readCall, { content: [], details: structuredClone(details) }, 1),
        RESULT_KEYS_WITH_DETAILS,
        `details 是 ${JSON.stringify(details)} 的结果`,
      );
    });
  }
  const flags: { name: string; outcome: { content: TextContent[]; isError?: boolean }; expected: boolean }[] = [
    { name: "没给 isError", outcome: { content: [] }, expected: false },
    { name: "isError 是 undefined", outcome: { content: [], isError: undefined }, expected: false },
    { name: "isError 是 false", outcome: { content: [], isError: false }, expected: false },
    { name: "isError 是 true", outcome: { content: [], isError: true }, expected: true },
    { name: "没给 isError，文字像一条错误（Error: …）", outcome: { content: [block("Error: ENOENT")] }, expected: false },
    { name: "没给 isError，文字是 error", outcome: { content: [block("error")] }, expected: false },
    { name: "isError 是 false，文字是“失败”", outcome: { content: [block("失败"), block("FAILED")], isError: false }, expected: false },
    { name: "isError 是 true，文字看着没问题", outcome: { content: [block("ok")], isError: true }, expected: true },
  ];
  for (const { name, outcome, expected } of flags) {
    rule(C6_3_ERROR, () => {
      const flag: unknown = toolResult(readCall, outcome, 1).isError;
      assert.ok(flag === expected, `${name}：结果的 isError 应当是 ${expected}，实际是 ${String(flag)}`);
    });
  }
  const anyDetails = fc.option(fc.oneof(fc.constantFrom<unknown>(null, 0, "", false, [], {}), fc.jsonValue()), { nil: undefined });
  /** Any outcome content, failure-looking texts among them: isError never reads them. */
  const anyOutcomeContent = fc.array(fc.oneof(anyText, fc.constantFrom("Error: ENOENT", "error", "ERROR", "失败", "exit code 1", "")).map(block), {
    maxLength: 4,
  });
  await holds(
    `${C6_3}；${C6_3_ERROR.slice("§C6.3：".length)}`,
    fc.property(anyDetails, fc.option(fc.boolean(), { nil: undefined }), fc.boolean(), anyOutcomeContent, (details, isError, spell, content) => {
      // `spell`: write an absent value as a missing field, or as a field holding undefined.
      const outcome: { content: TextContent[]; details?: unknown; isError?: boolean } = { content };
      if (details !== undefined || spell) outcome.details = details;
      if (isError !== undefined || spell) outcome.isError = isError;
      const made = toolResult(readCall, outcome, 1);
      if (Object.hasOwn(made, "details") !== (details !== undefined))
        assert.fail(`details 是 ${String(details)}：结果里${details === undefined ? "不该" : "应当"}有 details 字段`);
      if (details !== undefined) assert.deepEqual(made.details, details, "details 原样");
      assert.ok(
        made.isError === (isError === true),
        `isError 是 ${String(isError)}：结果的 isError 应当是 ${isError === true}，实际是 ${String(made.isError)}`,
      );
    }),
    { numRuns: RUNS },
  );
  rule(
    "§C1.1：消息里的一切都是纯 JSON 数据：像对象字面量造出的那样（原型是 Object.prototype，可扩展，字段可写），没有值为 undefined 的字段，structuredClone 和 JSON 往返都不丢东西",
    () => {
      assertPlainJson(toolResult(readCall, { content: [block("export const a = 1;\n")] }, 3), "没有 details 的结果");
      assertPlainJson(toolResult(readCall, { content: [block("export const a = 1;\n")], details: { bytes: 20 } }, 3), "带 details 的结果");
      assertPlainJson(
        toolResult(readCall, { content: [block("ENOENT")], details: undefined, isError: undefined }, 0),
        "details 和 isError 都是 undefined 的结果",
      );
    },
  );
});

test("Lab 3.4 · toolResult() 的时间戳和 userMessage 一样，每次一个新对象", async (t) => {
  t.mock.timers.enable({ apis: ["Date"], now: 1_700_000_000_900 });
  const empty = () => ({ content: [] });
  rule(C6_4, () => {
    const first = toolResult(readCall, empty()).timestamp;
    assert.ok(first === 1_700_000_000_900, `没给时间戳：应当是此刻的 Date.now()（1700000000900），实际是 ${first}`);
    t.mock.timers.tick(100);
    const later = toolResult(readCall, empty(), undefined).timestamp;
    assert.ok(later === 1_700_000_001_000, `时钟走了 100 毫秒、传了 undefined：应当是 1700000001000，实际是 ${later}`);
  });
  for (const timestamp of [0, 42, -1, 1.5, 1_700_000_000_000]) {
    rule(C6_4, () => {
      const kept = toolResult(readCall, empty(), timestamp).timestamp;
      assert.ok(kept === timestamp, `toolResult(call, outcome, ${timestamp}) 的 timestamp 应当是 ${timestamp}，实际是 ${kept}`);
    });
  }
  await holds(
    C6_4,
    fc.property(
      fc.array(fc.record({ clock: anyClock, given: fc.option(anyTimestamp, { nil: undefined }) }, { noNullPrototype: true }), { minLength: 1, maxLength: 6 }),
      (calls) => {
        for (const { clock, given } of calls) {
          t.mock.timers.setTime(clock);
          const made = toolResult(readCall, empty(), given).timestamp;
          const expected = given ?? clock;
          assert.ok(made === expected, `时钟是 ${clock}，给的是 ${String(given)}：timestamp 应当是 ${expected}，实际是 ${made}`);
        }
      },
    ),
    { numRuns: RUNS },
  );
  rule(C6_5, () => {
    const outcome = { content: [block("x")], details: { n: 1 } };
    const first = toolResult(readCall, outcome, 5);
    const second = toolResult(readCall, outcome, 5);
    assert.ok(first !== second, "同一个调用、同一个 outcome 调用两次：应当是两个对象");
    const before = structuredClone(second);
    first.toolCallId = "改过";
    first.toolName = "改过";
    first.isError = true;
    first.timestamp = 6;
    assert.deepEqual(second, before, "另一条结果不受影响");
    const again = toolResult(readCall, outcome, 5);
    assert.ok(again.toolCallId === "call-1" && again.isError === false && again.timestamp === 5, "之后造的结果不受影响");
    const fromFrozen = toolResult(deepFreeze({ id: "call-1", name: "read" }), deepFreeze({ content: [block("x")], details: { n: 1 } }), 5);
    assert.ok(Object.isExtensible(fromFrozen), "调用和 outcome 是冻结的：结果本身仍是函数自己造的新对象，不冻结");
    fromFrozen.isError = true;
    assert.ok(fromFrozen.isError, "调用和 outcome 是冻结的：结果的字段仍然可写");
  });
  rule(C1_1_HANDED, () => {
    class Stat {
      size = 3;
    }
    const stat = new Stat();
    const made = toolResult(readCall, { content: [block("x")], details: stat }, 5);
    assert.ok(made.details === stat, "details 是一个 class 的实例：结果里的 details 应当就是它本身，不是复制出来的普通对象");
  });
  await holds(
    C1_1_HANDED,
    fc.property(
      fc.array(fc.record({ value: anyText, frozen: fc.boolean() }, { noNullPrototype: true }), { maxLength: 4 }),
      fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }))),
      fc.boolean(),
      (blocks, details, frozen) => {
        const content = blocks.map(({ value, frozen }) => (frozen ? Object.freeze(block(value)) : block(value)));
        const outcome = { content: frozen ? (Object.freeze(content) as TextContent[]) : content, details: frozen ? deepFreeze(details) : details };
        const made = toolResult(readCall, outcome, 5);
        const what = frozen ? "交进来的 outcome 是冻结的" : "交进来的 outcome 没冻结";
        for (const [i, handed] of content.entries()) {
          assert.ok(
            made.content[i] === handed,
            `${what}：结果里的第 ${i + 1} 块应当就是交进来的第 ${i + 1} 块（===），实际是${made.content[i] === undefined ? "没有这一块" : "另一个对象"}`,
          );
        }
        assert.ok(Object.is(made.details, details), `${what}：结果里的 details 应当就是交进来的那个值（Object.is），实际是 ${fc.stringify(made.details)}`);
      },
    ),
    { numRuns: RUNS },
  );
});

// ---------------------------------------------------------------------------
// Lab 3.5 · 配对检查：每个调用都有且只有一个结果
// ---------------------------------------------------------------------------

const C7_1 =
  "§C7.1：配对完整时返回 undefined：每个工具调用的 id 只出现一次，由它后面恰好一个同 id 的结果回答，每个结果都回答这样一个调用；用户消息、文字、结果之间的先后、toolName 都不影响配对；对话多长都读完，不设上限";
const C7_2_UNANSWERED = "§C7.2：读完还有没被回答的调用：TRANSCRIPT_UNANSWERED_CALL，toolCallId 是它的 id，index 是它所在的助手消息的下标";
const C7_2_RESULT = "§C7.2：结果的 id 前面没有调用：TRANSCRIPT_ORPHAN_RESULT；它的调用已经被回答过：TRANSCRIPT_DUPLICATE_RESULT；index 都是这个结果的下标";
const C7_2_CALL = "§C7.2：调用的 id 前面出现过：TRANSCRIPT_DUPLICATE_CALL_ID，index 是第二次出现所在的助手消息的下标";
const C7_3 = "§C7.3：按顺序读（消息按下标，助手消息里的块按顺序），返回读到的第一个问题；没被回答的调用要读完才知道，所以最后报，报最早的那个";
const C7_4 = "§C7.4：只读它的参数：冻结的消息也照样工作，调用前后深相等；结果是一个只有 code、toolCallId、index 的新对象";

/** Lab 3.5's messages, written out so that its tests do not depend on the functions of Labs 3.1–3.4. */
const asked = (value: string): UserMessage => ({ role: "user", content: [block(value)], timestamp: 1 });
const saying = (value: string): AssistantMessage => ({ role: "assistant", content: [block(value)], timestamp: 2 });
const asking = (...ids: string[]): AssistantMessage => ({
  role: "assistant",
  content: [block("我先看看。"), ...ids.map((id): ToolCall => ({ type: "toolCall", id, name: "read", arguments: { path: `${id}.ts` } }))],
  timestamp: 2,
});
const answering = (id: string, toolName = "read"): ToolResultMessage => ({
  role: "toolResult",
  toolCallId: id,
  toolName,
  content: [block(`${id} 的结果`)],
  isError: false,
  timestamp: 3,
});

/** A long stretch of a transcript that holds no call and no result: `count` user messages. */
const longTalk = (count: number): AgentMessage[] => new Array<AgentMessage>(count).fill(asked("接着说"));

/** A problem as a failure names it: `{ code, toolCallId, index }`, any other field named. */
function shownProblem(problem: unknown): string {
  if (problem === undefined) return "undefined（配对完整）";
  if (problem === null || typeof problem !== "object") return `${String(problem)}（不是对象）`;
  const { code, toolCallId, index, ...rest } = problem as Record<string, unknown>;
  const extra = Object.keys(rest).length > 0 ? `，多出的字段 ${Object.keys(rest).join("、")}` : "";
  const id = typeof toolCallId === "string" ? shown(toolCallId) : `${String(toolCallId)}（不是字符串）`;
  return `{ code: ${typeof code === "string" ? code : `${String(code)}（不是字符串）`}, toolCallId: ${id}, index: ${JSON.stringify(index) ?? "undefined"}${extra} }`;
}

/** Fails unless `transcriptProblem(messages)` is `expected`, naming both. */
function assertProblem(messages: readonly AgentMessage[], expected: TranscriptProblem | undefined, what: string): void {
  const got: unknown = transcriptProblem(messages);
  if (shownProblem(got) !== shownProblem(expected)) assert.fail(`${what}：应当是 ${shownProblem(expected)}，实际是 ${shownProblem(got)}`);
}

/** Call ids a checker must treat as plain strings: names a plain object inherits, look-alikes, the empty string. */
const ODD_IDS = ["toString", "__proto__", "constructor", "hasOwnProperty", "", "call-1 ", "CALL-1", "call-1"];

/** An id no generated transcript uses: longer than any generated one, and not one of ODD_IDS. */
const NO_SUCH_CALL = "no-such-call-id";

/**
 * Any well-paired transcript: user messages, assistant text, assistant messages with 0–3 calls
 * (distinct ids), and for each call exactly one result, after it, in any order and at any
 * distance (other messages, other calls and results in between).
 */
const wellPaired: fc.Arbitrary<AgentMessage[]> = fc
  .record(
    {
      ids: fc.uniqueArray(fc.oneof(fc.constantFrom(...ODD_IDS), fc.string({ maxLength: 6 })), { minLength: 12, maxLength: 12 }),
      steps: fc.array(fc.record({ kind: fc.integer({ min: 0, max: 3 }), calls: fc.integer({ min: 0, max: 3 }), pick: fc.nat() }, { noNullPrototype: true }), {
        maxLength: 10,
      }),
      last: fc.array(fc.nat(), { maxLength: 12 }),
    },
    { noNullPrototype: true },
  )
  .map(({ ids, steps, last }) => {
    const messages: AgentMessage[] = [];
    const open: string[] = [];
    let used = 0;
    const answerOne = (pick: number) => messages.push(answering(open.splice(pick % open.length, 1)[0]!));
    for (const { kind, calls, pick } of steps) {
      if (kind === 0) messages.push(asked("接着说"));
      else if (kind === 1 && used < ids.length) {
        const fresh = ids.slice(used, used + calls);
        used += fresh.length;
        messages.push(asking(...fresh));
        open.push(...fresh);
      } else if (open.length > 0) answerOne(pick);
      else messages.push(saying("好的。"));
    }
    for (let i = 0; open.length > 0; i++) answerOne(last[i] ?? 0);
    return messages;
  });

/** Where the calls and results of a transcript are: each result's index and id, and the index of the message holding each call id. */
function layout(messages: readonly AgentMessage[]): { results: { at: number; id: string }[]; callAt: Map<string, number> } {
  const results: { at: number; id: string }[] = [];
  const callAt = new Map<string, number>();
  for (const [at, message] of messages.entries()) {
    if (message.role === "toolResult") results.push({ at, id: message.toolCallId });
    if (message.role === "assistant") for (const item of message.content) if (item.type === "toolCall") callAt.set(item.id, at);
  }
  return { results, callAt };
}

/** `messages` with `message` inserted at `at`. */
const inserted = (messages: readonly AgentMessage[], at: number, message: AgentMessage): AgentMessage[] => [
  ...messages.slice(0, at),
  message,
  ...messages.slice(at),
];

test("Lab 3.5 · 配对完整的对话：transcriptProblem() 返回 undefined", async () => {
  const cases: { name: string; messages: AgentMessage[] }[] = [
    { name: "空对话", messages: [] },
    { name: "只有文字，没有工具调用", messages: [asked("你好"), saying("你好！")] },
    { name: "本章的对话：问、读 a.ts、答", messages: [asked("a.ts 里有什么？"), asking("call-1"), answering("call-1"), saying("a.ts 导出 a = 1。")] },
    { name: "一条消息里两个调用，结果倒着回来", messages: [asked("读两个文件"), asking("call-1", "call-2"), answering("call-2"), answering("call-1")] },
    { name: "结果不紧跟调用：中间隔着别的消息", messages: [asking("call-1"), saying("稍等。"), asking("call-2"), answering("call-2"), answering("call-1")] },
    { name: "结果前面插进了一条用户消息", messages: [asking("call-1"), asked("顺便看看 b.ts"), answering("call-1")] },
    { name: "结果的 toolName 和调用的不一样：配对只看 id", messages: [asking("call-1"), answering("call-1", "ls")] },
    { name: "失败的结果也是回答", messages: [asking("call-1"), { ...answering("call-1"), isError: true }] },
    { name: "没有内容的结果（content 是空数组）也是回答", messages: [asking("call-1"), { ...answering("call-1"), content: [] }] },
    {
      name: "失败、没有内容的结果也是回答",
      messages: [asking("call-1", "call-2"), { ...answering("call-2"), content: [], isError: true }, answering("call-1")],
    },
    {
      name: "调用 id 像对象自带的属性名",
      messages: [asking("toString", "__proto__", "constructor"), answering("__proto__"), answering("constructor"), answering("toString")],
    },
    { name: "空字符串也是一个 id", messages: [asking(""), answering("")] },
    { name: "很长的对话（十万条消息）：第一个调用的结果在最后", messages: [asking("call-0"), ...longTalk(100_000), answering("call-0")] },
    {
      name: "一条助手消息里一千个调用，结果都在后面",
      messages: ((ids: string[]) => [asking(...ids), ...ids.map((id) => answering(id))])(Array.from({ length: 1000 }, (_, i) => `call-${i}`)),
    },
  ];
  for (const { name, messages } of cases) {
    rule(C7_1, () => {
      assertProblem(messages, undefined, name);
    });
  }
  await holds(
    C7_1,
    fc.property(wellPaired, (messages) => {
      assertProblem(messages, undefined, "配对完整的对话");
    }),
    { numRuns: 50 },
  );
  rule(C7_4, () => {
    const messages = [asked("读两个文件"), asking("call-1", "call-2"), answering("call-2"), answering("call-1")];
    const before = structuredClone(messages);
    assertProblem(deepFreeze(structuredClone(messages)), undefined, "冻结的对话");
    assertProblem(messages, undefined, "没冻结的对话");
    assert.deepEqual(messages, before, "检查之后对话没有被改动");
  });
  await holds(
    C7_4,
    fc.property(wellPaired, (messages) => {
      const before = structuredClone(messages);
      assertProblem(deepFreeze(messages), undefined, "冻结的、配对完整的对话");
      assert.deepEqual(messages, before, "检查之后对话没有被改动");
    }),
    { numRuns: RUNS },
  );
});

test("Lab 3.5 · 没有结果的调用：TRANSCRIPT_UNANSWERED_CALL", async () => {
  const cases: { name: string; messages: AgentMessage[]; expected: TranscriptProblem }[] = [
    {
      name: "调用之后就结束了",
      messages: [asked("a.ts 里有什么？"), asking("call-1")],
      expected: { code: "TRANSCRIPT_UNANSWERED_CALL", toolCallId: "call-1", index: 1 },
    },
    {
      name: "两个调用只答了第二个",
      messages: [asking("call-1", "call-2"), answering("call-2")],
      expected: { code: "TRANSCRIPT_UNANSWERED_CALL", toolCallId: "call-1", index: 0 },
    },
    {
      name: "前一轮答完了，后一轮没答",
      messages: [asking("call-1"), answering("call-1"), asking("call-2")],
      expected: { code: "TRANSCRIPT_UNANSWERED_CALL", toolCallId: "call-2", index: 2 },
    },
    {
      name: "两条消息都没答：报最早的",
      messages: [asking("call-1"), asking("call-2")],
      expected: { code: "TRANSCRIPT_UNANSWERED_CALL", toolCallId: "call-1", index: 0 },
    },
    {
      name: "同一条消息里两个都没答：报排在前面的块",
      messages: [asking("call-2", "call-1")],
      expected: { code: "TRANSCRIPT_UNANSWERED_CALL", toolCallId: "call-2", index: 0 },
    },
    { name: "id 是 __proto__", messages: [asking("__proto__")], expected: { code: "TRANSCRIPT_UNANSWERED_CALL", toolCallId: "__proto__", index: 0 } },
    {
      name: "一条助手消息里一千个调用，只有最后一个没答",
      messages: ((ids: string[]) => [asking(...ids), ...ids.slice(0, -1).map((id) => answering(id))])(Array.from({ length: 1000 }, (_, i) => `call-${i}`)),
      expected: { code: "TRANSCRIPT_UNANSWERED_CALL", toolCallId: "call-999", index: 0 },
    },
    {
      name: "很长的对话（十万条消息），最后一个调用没答",
      messages: [...longTalk(100_000), asking("call-last")],
      expected: { code: "TRANSCRIPT_UNANSWERED_CALL", toolCallId: "call-last", index: 100_000 },
    },
  ];
  for (const { name, messages, expected } of cases) {
    rule(C7_2_UNANSWERED, () => {
      assertProblem(messages, expected, name);
    });
  }
  await holds(
    `${C7_2_UNANSWERED}：配对完整的对话拿掉任何一个结果，都报它的调用`,
    fc.property(wellPaired, fc.nat(), (messages, pick) => {
      const { results, callAt } = layout(messages);
      if (results.length === 0) return;
      const removed = results[pick % results.length]!;
      const expected: TranscriptProblem = { code: "TRANSCRIPT_UNANSWERED_CALL", toolCallId: removed.id, index: callAt.get(removed.id)! };
      assertProblem([...messages.slice(0, removed.at), ...messages.slice(removed.at + 1)], expected, `拿掉下标 ${removed.at} 的结果`);
    }),
    { numRuns: 50 },
  );
});

test("Lab 3.5 · 没有调用的结果、第二个结果：TRANSCRIPT_ORPHAN_RESULT、TRANSCRIPT_DUPLICATE_RESULT", async () => {
  const cases: { name: string; messages: AgentMessage[]; expected: TranscriptProblem }[] = [
    {
      name: "对话里没有这个调用",
      messages: [asked("a.ts 里有什么？"), answering("call-1")],
      expected: { code: "TRANSCRIPT_ORPHAN_RESULT", toolCallId: "call-1", index: 1 },
    },
    {
      name: "结果在调用之前",
      messages: [answering("call-1"), asking("call-1")],
      expected: { code: "TRANSCRIPT_ORPHAN_RESULT", toolCallId: "call-1", index: 0 },
    },
    {
      name: "结果的 id 对不上",
      messages: [asking("call-1"), answering("call-2"), answering("call-1")],
      expected: { code: "TRANSCRIPT_ORPHAN_RESULT", toolCallId: "call-2", index: 1 },
    },
    {
      name: "同一个调用答了两次",
      messages: [asking("call-1"), answering("call-1"), answering("call-1")],
      expected: { code: "TRANSCRIPT_DUPLICATE_RESULT", toolCallId: "call-1", index: 2 },
    },
    {
      name: "很久以后又答了一次",
      messages: [asking("call-1"), answering("call-1"), asking("call-2"), answering("call-2"), asked("好"), answering("call-1")],
      expected: { code: "TRANSCRIPT_DUPLICATE_RESULT", toolCallId: "call-1", index: 5 },
    },
    {
      name: "很长的对话（十万条消息），最后多了一个结果",
      messages: [asking("call-1"), answering("call-1"), ...longTalk(100_000), answering("call-1")],
      expected: { code: "TRANSCRIPT_DUPLICATE_RESULT", toolCallId: "call-1", index: 100_002 },
    },
    {
      name: "同一个结果对象在数组里放了两次：第二次的下标是 2",
      messages: ((answer: ToolResultMessage) => [asking("call-1"), answer, answer])(answering("call-1")),
      expected: { code: "TRANSCRIPT_DUPLICATE_RESULT", toolCallId: "call-1", index: 2 },
    },
    {
      name: "id 像对象自带的属性名：constructor 没有被调用过",
      messages: [asking("toString"), answering("toString"), answering("constructor")],
      expected: { code: "TRANSCRIPT_ORPHAN_RESULT", toolCallId: "constructor", index: 2 },
    },
  ];
  for (const { name, messages, expected } of cases) {
    rule(C7_2_RESULT, () => {
      assertProblem(messages, expected, name);
    });
  }
  await holds(
    `${C7_2_RESULT}：配对完整的对话里，任何位置插进一个没有调用的结果，都报它`,
    fc.property(wellPaired, fc.nat(), (messages, pick) => {
      const at = pick % (messages.length + 1);
      const expected: TranscriptProblem = { code: "TRANSCRIPT_ORPHAN_RESULT", toolCallId: NO_SUCH_CALL, index: at };
      assertProblem(inserted(messages, at, answering(NO_SUCH_CALL)), expected, `在下标 ${at} 插进一个没有调用的结果`);
    }),
    { numRuns: RUNS },
  );
  await holds(
    `${C7_2_RESULT}：把一个结果挪到它的调用之前，报它（它前面没有这个调用）`,
    fc.property(wellPaired, fc.nat(), fc.nat(), (messages, pick, where) => {
      const { results, callAt } = layout(messages);
      if (results.length === 0) return;
      const moved = results[pick % results.length]!;
      const at = where % (callAt.get(moved.id)! + 1);
      const without = [...messages.slice(0, moved.at), ...messages.slice(moved.at + 1)];
      const expected: TranscriptProblem = { code: "TRANSCRIPT_ORPHAN_RESULT", toolCallId: moved.id, index: at };
      assertProblem(inserted(without, at, messages[moved.at]!), expected, `把下标 ${moved.at} 的结果挪到下标 ${at}`);
    }),
    { numRuns: RUNS },
  );
  await holds(
    `${C7_2_RESULT}：从配对完整的对话里拿掉一个调用，报回答它的结果`,
    fc.property(wellPaired, fc.nat(), (messages, pick) => {
      const { results, callAt } = layout(messages);
      if (results.length === 0) return;
      const orphaned = results[pick % results.length]!;
      const at = callAt.get(orphaned.id)!;
      const holder = messages[at] as AssistantMessage;
      const without: AssistantMessage = { ...holder, content: holder.content.filter((item) => item.type !== "toolCall" || item.id !== orphaned.id) };
      const expected: TranscriptProblem = { code: "TRANSCRIPT_ORPHAN_RESULT", toolCallId: orphaned.id, index: orphaned.at };
      assertProblem([...messages.slice(0, at), without, ...messages.slice(at + 1)], expected, `拿掉下标 ${at} 的消息里 id 为 ${shown(orphaned.id)} 的调用`);
    }),
    { numRuns: RUNS },
  );
  await holds(
    `${C7_2_RESULT}：在一个结果之后的任何位置再放一个同样的结果，报第二个`,
    fc.property(wellPaired, fc.nat(), fc.nat(), (messages, pick, where) => {
      const { results } = layout(messages);
      if (results.length === 0) return;
      const copied = results[pick % results.length]!;
      const at = copied.at + 1 + (where % (messages.length - copied.at));
      const expected: TranscriptProblem = { code: "TRANSCRIPT_DUPLICATE_RESULT", toolCallId: copied.id, index: at };
      assertProblem(inserted(messages, at, answering(copied.id)), expected, `下标 ${copied.at} 的结果在下标 ${at} 又出现一次`);
    }),
    { numRuns: RUNS },
  );
});

test("Lab 3.5 · 重复的调用 id：TRANSCRIPT_DUPLICATE_CALL_ID；先读到的问题先报", async () => {
  const cases: { name: string; messages: AgentMessage[]; expected: TranscriptProblem }[] = [
    {
      name: "下一轮又用了同一个 id",
      messages: [asking("call-1"), answering("call-1"), asking("call-1"), answering("call-1")],
      expected: { code: "TRANSCRIPT_DUPLICATE_CALL_ID", toolCallId: "call-1", index: 2 },
    },
    {
      name: "同一条消息里两个调用同一个 id",
      messages: [asking("call-1", "call-1"), answering("call-1"), answering("call-1")],
      expected: { code: "TRANSCRIPT_DUPLICATE_CALL_ID", toolCallId: "call-1", index: 0 },
    },
    {
      name: "同一个助手消息对象在数组里放了两次：第二次的下标是 2",
      messages: ((ask: AssistantMessage) => [ask, answering("call-1"), ask])(asking("call-1")),
      expected: { code: "TRANSCRIPT_DUPLICATE_CALL_ID", toolCallId: "call-1", index: 2 },
    },
    {
      name: "第一个还没答，又来一个同 id 的调用",
      messages: [asking("call-1"), asking("call-1")],
      expected: { code: "TRANSCRIPT_DUPLICATE_CALL_ID", toolCallId: "call-1", index: 1 },
    },
  ];
  for (const { name, messages, expected } of cases) {
    rule(C7_2_CALL, () => {
      assertProblem(messages, expected, name);
    });
  }
  const ordered: { name: string; messages: AgentMessage[]; expected: TranscriptProblem }[] = [
    {
      name: "先有一个对不上的结果，后有重复的调用：先报结果",
      messages: [asking("call-1"), answering("call-9"), asking("call-1")],
      expected: { code: "TRANSCRIPT_ORPHAN_RESULT", toolCallId: "call-9", index: 1 },
    },
    {
      name: "先有重复的调用，后有对不上的结果：先报调用",
      messages: [asking("call-1", "call-1"), answering("call-9")],
      expected: { code: "TRANSCRIPT_DUPLICATE_CALL_ID", toolCallId: "call-1", index: 0 },
    },
    {
      name: "前面有没答的调用，后面有第二个结果：没答的要读完才知道，先报第二个结果",
      messages: [asking("call-1"), asking("call-2"), answering("call-2"), answering("call-2")],
      expected: { code: "TRANSCRIPT_DUPLICATE_RESULT", toolCallId: "call-2", index: 3 },
    },
    {
      name: "没答的调用和对不上的结果：先报结果",
      messages: [asking("call-1"), answering("call-2")],
      expected: { code: "TRANSCRIPT_ORPHAN_RESULT", toolCallId: "call-2", index: 1 },
    },
  ];
  for (const { name, messages, expected } of ordered) {
    rule(C7_3, () => {
      assertProblem(messages, expected, name);
    });
  }
  rule(C7_4, () => {
    const messages = [asked("读两个文件"), asking("call-1", "call-2"), answering("call-2"), asking("call-2")];
    const expected: TranscriptProblem = { code: "TRANSCRIPT_DUPLICATE_CALL_ID", toolCallId: "call-2", index: 3 };
    const before = structuredClone(messages);
    const frozen = deepFreeze(structuredClone(messages));
    assertProblem(frozen, expected, "冻结的对话");
    assertProblem(frozen, expected, "冻结的对话，第二次检查");
    assertProblem(messages, expected, "没冻结的对话");
    assert.deepEqual(messages, before, "检查之后对话没有被改动");
    const first = transcriptProblem(messages);
    assert.ok(first !== transcriptProblem(messages), "每次检查都给出一个新对象");
    assertPlainJson(first, "检查的结果");
  });
  await holds(
    `${C7_2_CALL}：在一个调用之后的任何位置再放一个同 id 的调用，报第二个`,
    fc.property(wellPaired, fc.nat(), fc.nat(), (messages, pick, where) => {
      const { callAt } = layout(messages);
      const ids = [...callAt.keys()];
      if (ids.length === 0) return;
      const id = ids[pick % ids.length]!;
      const at = callAt.get(id)! + 1 + (where % (messages.length - callAt.get(id)!));
      const expected: TranscriptProblem = { code: "TRANSCRIPT_DUPLICATE_CALL_ID", toolCallId: id, index: at };
      assertProblem(inserted(messages, at, asking(id)), expected, `id ${shown(id)} 在下标 ${at} 又被调用一次`);
    }),
    { numRuns: RUNS },
  );
  await holds(
    C7_ANY,
    fc.property(pooledTranscript, (messages) => {
      assertProblem(messages, problemByDefinition(messages), "这段对话");
    }),
    { numRuns: 200 },
  );
  await holds(
    C7_4,
    fc.property(pooledTranscript, (messages) => {
      const problem: unknown = transcriptProblem(messages);
      if (problem === undefined) return;
      assert.equal(notPlain(problem, "返回的问题"), undefined, `返回的问题 ${shownProblem(problem)} 不是纯数据（§C1.1）`);
      assert.ok(problem !== transcriptProblem(messages), `同一段对话检查两次，应当是两个新对象（${shownProblem(problem)}）`);
    }),
    { numRuns: 100 },
  );
});

const C7_ANY =
  "§C7.1–§C7.3：任何对话（同一个消息对象可以出现几次，结果的 content、isError、toolName 随意）：报的是按顺序读到的第一处问题，index 是那条消息在数组里的位置";

/**
 * Transcripts that are mostly well paired, with the slips a transcript can hold: a message
 * object appended again (the same object at two indexes), an id used twice, ids that differ only
 * in case, a space or Unicode form, a result with no
 * call, results with any content (none, a failure, another tool's name), calls left open.
 */
const pooledTranscript: fc.Arbitrary<AgentMessage[]> = fc
  .record(
    {
      steps: fc.array(fc.record({ kind: fc.integer({ min: 0, max: 5 }), pick: fc.nat(), variant: fc.integer({ min: 0, max: 3 }) }, { noNullPrototype: true }), {
        minLength: 2,
        maxLength: 14,
      }),
      closeAll: fc.boolean(),
    },
    { noNullPrototype: true },
  )
  .map(({ steps, closeAll }) => {
    const ids = ["call-1", "toString", "", "CALL-1", "__proto__", " call-1", "\u00e9", "e\u0301", "call-2"];
    const messages: AgentMessage[] = [];
    const open: string[] = [];
    let next = 0;
    const answer = (id: string, variant: number): ToolResultMessage => {
      const made = answering(id, variant === 3 ? "ls" : "read");
      return variant === 1 ? { ...made, content: [] } : variant === 2 ? { ...made, content: [], isError: true } : made;
    };
    for (const { kind, pick, variant } of steps) {
      if (kind === 0) messages.push(asked("接着说"));
      else if (kind === 1) {
        const id = variant === 3 && next > 0 ? ids[pick % Math.min(next, ids.length)]! : ids[next++ % ids.length]!;
        messages.push(asking(id));
        open.push(id);
      } else if (kind === 2 && open.length > 0) messages.push(answer(open.splice(pick % open.length, 1)[0]!, variant));
      else if (kind === 3 && messages.length > 0) messages.push(messages[pick % messages.length]!);
      else if (kind === 4) messages.push(answer(ids[pick % ids.length]!, variant));
      else messages.push(saying("好的。"));
    }
    if (closeAll) for (const id of open.splice(0)) messages.push(answer(id, 1));
    return messages;
  });

/**
 * The problem §C7.2–§C7.3 define, found the slow way: for each call or result in reading
 * order, look back over everything read before it; the unanswered call last.
 */
function problemByDefinition(messages: readonly AgentMessage[]): TranscriptProblem | undefined {
  const seen: { kind: "call" | "result"; id: string; at: number }[] = [];
  for (const [at, message] of messages.entries()) {
    const items: { kind: "call" | "result"; id: string }[] =
      message.role === "assistant"
        ? message.content.flatMap((item) => (item.type === "toolCall" ? [{ kind: "call" as const, id: item.id }] : []))
        : message.role === "toolResult"
          ? [{ kind: "result", id: message.toolCallId }]
          : [];
    for (const item of items) {
      const before = (kind: "call" | "result") => seen.some((earlier) => earlier.kind === kind && earlier.id === item.id);
      if (item.kind === "call" && before("call")) return { code: "TRANSCRIPT_DUPLICATE_CALL_ID", toolCallId: item.id, index: at };
      if (item.kind === "result" && !before("call")) return { code: "TRANSCRIPT_ORPHAN_RESULT", toolCallId: item.id, index: at };
      if (item.kind === "result" && before("result")) return { code: "TRANSCRIPT_DUPLICATE_RESULT", toolCallId: item.id, index: at };
      seen.push({ ...item, at });
    }
  }
  const unanswered = seen.find((call) => call.kind === "call" && !seen.some((later) => later.kind === "result" && later.id === call.id));
  return unanswered === undefined ? undefined : { code: "TRANSCRIPT_UNANSWERED_CALL", toolCallId: unanswered.id, index: unanswered.at };
}
