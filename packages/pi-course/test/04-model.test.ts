/**
 * Chapter 04 labs · the model contract: `TurnBuilder`, which every model (the scripted one,
 * chapter 05's providers) tells what arrived, and which emits the events and assembles the
 * finished turn from the same calls. Nine tests in three labs (3, 3, 3); every name starts
 * with its lab id, so one lab runs alone with
 *
 *   npm run lab -w @pi/course -- 4.1
 *
 * Every check runs under `rule("§C…：…")`, naming the rule of the contract appendix of
 * chapters/04-model/README.md that it checks. Everything is observed through the public surface:
 * what the builder's methods return or throw, the events a reader of `builder.stream` gets,
 * what `result()` settles to. A stream that never ends is looked at after a few turns of the
 * event loop and reported as "pending", so a missing `end` fails its test instead of hanging
 * the file. Failure messages are written here, in words and shown values, not left to
 * `node:assert`'s diff (which Node versions lay out differently). Rules that hold for every
 * input (any split of the pieces gives the same message; the events describe the message;
 * a failure or an abort at any moment keeps exactly what had finished) are also checked as
 * properties with `holds()` (fast-check, fixed seed), beside the examples that tell the story.
 *
 * The tests of a lab use nothing of a later lab, so each lab turns green on its own, in
 * order. The scripted model (given, `scripted-model.ts`) appears in Lab 4.3 only: it turns any
 * error into a call of the builder's `fail`, which is Lab 4.3's to write.
 */
import assert from "node:assert/strict";
import test from "node:test";
import fc from "fast-check";
import { ModelError, TurnBuilder, type AssistantEvent, type AssistantStream, type AssistantTurn, type ModelRequest } from "../src/model.js";
import { ScriptedModel, toolCall, turn } from "../src/scripted-model.js";
import { userMessage, type ToolCall } from "../src/types.js";
import { holds } from "./support/properties.js";
import { isScaffold, rule } from "./support/rules.js";

// ---------------------------------------------------------------------------
// Reading a stream, showing events, the running example
// ---------------------------------------------------------------------------

/** One turn of the real event loop. */
const realTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

type Outcome<T> = { status: "fulfilled"; value: T } | { status: "rejected"; reason: unknown } | { status: "pending" };

/**
 * How `watched` stands after at most `turns` turns of the event loop: a wait that never ends
 * is "pending", not a hung test. A starter's scaffold error is thrown on (it means "not
 * written yet", whichever promise carried it).
 */
async function outcomeOf<T>(watched: Promise<T>, turns = 3): Promise<Outcome<T>> {
  let outcome: Outcome<T> = { status: "pending" };
  watched.then(
    (fulfilled) => {
      outcome = { status: "fulfilled", value: fulfilled };
    },
    (rejected: unknown) => {
      outcome = { status: "rejected", reason: rejected };
    },
  );
  for (let i = 0; i < turns && outcome.status === "pending"; i++) await realTurn();
  const seen = outcome as Outcome<T>; // set by the callbacks above, which TypeScript does not follow
  if (seen.status === "rejected" && isScaffold(seen.reason)) throw seen.reason;
  return seen;
}

/** A value as a failure message shows it (`"我先"`, `{"path":"a.ts"}`, `undefined`). */
const show = (value: unknown): string => fc.stringify(value);

/** Fails with `message` unless `condition` holds (a message written here, never `node:assert`'s diff). */
function expect(condition: boolean, message: string): asserts condition {
  if (!condition) assert.fail(message);
}

/** Fails unless `got` is `wanted` (`Object.is`), saying what `what` should have been and was. */
function is(got: unknown, wanted: unknown, what: string): void {
  expect(Object.is(got, wanted), `${what}应当是 ${show(wanted)}，实际是 ${show(got)}`);
}

/** What was thrown, as a failure message names it. */
const thrownText = (error: unknown): string =>
  error instanceof ModelError ? `ModelError ${error.code}` : error instanceof Error ? `${error.name}：${error.message}` : show(error);

/** Fails unless `run` throws a `ModelError` with `code` (a scaffold error is thrown on). */
function throwsCode(run: () => unknown, code: string, what: string): void {
  let thrown: unknown;
  let threw = false;
  try {
    run();
  } catch (error) {
    if (isScaffold(error)) throw error;
    thrown = error;
    threw = true;
  }
  expect(
    threw && thrown instanceof ModelError && thrown.code === code,
    `${what}应当抛出 ModelError ${code}，实际${threw ? `抛出 ${thrownText(thrown)}` : "没有抛错"}`,
  );
}

/** What `run` returned, or a failure naming what it threw instead (a scaffold error is thrown on). */
function returned<T>(run: () => T, what: string): T {
  try {
    return run();
  } catch (error) {
    if (isScaffold(error)) throw error;
    assert.fail(`${what}不该抛错，实际抛出 ${thrownText(error)}`);
  }
}

/** More events than any test produces (the longest turn has some 30 000): a reader that gets this many is looping on one event. */
const READ_LIMIT = 200_000;

/** What a reader of a builder's stream saw: the events, and how the reading stopped. */
interface Reading {
  events: AssistantEvent[];
  end: "done" | "threw" | "pending";
  error?: unknown;
}

/** Reads `stream` the way `for await` does, until it ends, throws, or nothing comes for a few turns of the event loop. */
async function readAll(stream: AssistantStream): Promise<Reading> {
  const events: AssistantEvent[] = [];
  const loop = (async () => {
    for await (const event of stream) {
      events.push(event);
      if (events.length >= READ_LIMIT) return "endless";
    }
    return "done";
  })();
  loop.catch(() => {}); // how the loop stopped is what the outcome below reports
  const outcome = await outcomeOf(loop, 5);
  if (outcome.status === "fulfilled" && outcome.value === "done") return { events, end: "done" };
  if (outcome.status === "rejected") return { events, end: "threw", error: outcome.reason };
  return { events, end: "pending" };
}

/** The turn `result()` gave, or a failure saying what it did instead (pending: the stream never ended; rejected: it failed). */
async function resultOf(builder: TurnBuilder): Promise<AssistantTurn> {
  const outcome = await outcomeOf(builder.stream.result());
  if (outcome.status === "pending") assert.fail("result() 一直没有落定：流没有以一个回合结束（finish 或 fail 要调用 stream.end）");
  if (outcome.status === "rejected")
    assert.fail(`result() 拒绝了（${show(outcome.reason)}）：模型的流从不失败，失败也是一个回合（stream.end），不是 stream.fail`);
  return outcome.value;
}

/** One event as one line: `text_delta 0 "我先"`, `toolcall_end 1 call-1 read {"path":"a.ts"}`. */
function line(event: AssistantEvent): string {
  switch (event.type) {
    case "text_start":
      return `text_start ${event.index}`;
    case "text_delta":
      return `text_delta ${event.index} ${show(event.delta)}`;
    case "text_end":
      return `text_end ${event.index} ${show(event.text)}`;
    case "toolcall_start":
      return `toolcall_start ${event.index} ${event.id} ${event.name}`;
    case "toolcall_delta":
      return `toolcall_delta ${event.index} ${show(event.delta)}`;
    case "toolcall_end":
      return `toolcall_end ${event.index} ${show(event.toolCall)}`;
    default:
      return `（不是助手事件）${show(event)}`;
  }
}

/** The fields each event type has (`AssistantEvent`), in the order a failure shows them. */
const FIELDS: Record<AssistantEvent["type"], readonly string[]> = {
  text_start: ["type", "index"],
  text_delta: ["type", "index", "delta"],
  text_end: ["type", "index", "text"],
  toolcall_start: ["type", "index", "id", "name"],
  toolcall_delta: ["type", "index", "delta"],
  toolcall_end: ["type", "index", "toolCall"],
};

/** Fails unless every event has exactly the fields of its type (§C3.4): no more (a partial message, say), no fewer. */
function assertFields(events: readonly AssistantEvent[]): void {
  for (const [i, event] of events.entries()) {
    const wanted = FIELDS[event.type];
    if (wanted === undefined) continue; // not an assistant event at all: `line` shows it
    const got = Object.keys(event);
    expect(
      got.length === wanted.length && wanted.every((field) => got.includes(field)),
      `第 ${i + 1} 个事件 ${line(event)} 的字段应当恰好是 ${wanted.join("、")}（§C3.4），实际是 ${got.join("、")}`,
    );
  }
}

/** Fails unless the events are `expected`, line by line (see `line`), naming the first that differs and showing both lists; `context` says which events. Each event must have exactly its type's fields (see `assertFields`). */
function assertEvents(events: readonly AssistantEvent[], expected: readonly string[], context?: string): void {
  assertFields(events);
  const got = events.map(line);
  if (got.length === expected.length && got.every((one, i) => one === expected[i])) return;
  const at = got.findIndex((one, i) => one !== expected[i]);
  const first = at === -1 ? Math.min(got.length, expected.length) : at;
  const list = (lines: readonly string[]) => lines.map((one) => `  ${one}`).join("\n") || "  （没有事件）";
  assert.fail(
    [
      ...(context === undefined ? [] : [`${context}：`]),
      `第 ${first + 1} 个事件不对（应当有 ${expected.length} 个，实际 ${got.length} 个）：`,
      `  应当是 ${expected[first] ?? "（没有了）"}`,
      `  实际是 ${got[first] ?? "（没有了）"}`,
      `应当的事件：\n${list(expected)}`,
      `实际的事件：\n${list(got)}`,
    ].join("\n"),
  );
}

/** Fails unless `got` deep-equals `wanted`, with the message `what` and both values shown. */
function assertSame(got: unknown, wanted: unknown, what: string): void {
  try {
    assert.deepStrictEqual(got, wanted);
  } catch {
    assert.fail(`${what}\n应当是：${show(wanted)}\n实际是：${show(got)}`);
  }
}

/**
 * The blocks a reader rebuilds from the events alone, the way a screen does: a text block
 * from its deltas, a tool call from its `toolcall_end`, each at its `index`. With `partial`,
 * an open text block (deltas, no `text_end`) counts too, when it has text: what a broken
 * turn keeps.
 */
function replay(events: readonly AssistantEvent[], partial = false): unknown[] {
  const blocks: unknown[] = [];
  const texts = new Map<number, string>();
  let open: number | undefined;
  for (const event of events) {
    if (event.type === "text_start") {
      texts.set(event.index, "");
      open = event.index;
    }
    if (event.type === "text_delta") texts.set(event.index, (texts.get(event.index) ?? "") + event.delta);
    if (event.type === "text_end") {
      blocks[event.index] = { type: "text", text: texts.get(event.index) ?? "" };
      open = undefined;
    }
    if (event.type === "toolcall_start") open = undefined;
    if (event.type === "toolcall_end") blocks[event.index] = event.toolCall;
  }
  if (partial && open !== undefined && (texts.get(open) ?? "") !== "") blocks.push({ type: "text", text: texts.get(open) });
  return blocks;
}

/** The running example: the answer of chapters 02 and 03, in chapter 02's three pieces, then a call to read a.ts. */
const PIECES = ["我先", "读一下", " a.ts。"];
const ANSWER = "我先读一下 a.ts。";
const ARGUMENT_PIECES = ['{"path":', '"a.ts"}'];
const READ_CALL: ToolCall = { type: "toolCall", id: "call-1", name: "read", arguments: { path: "a.ts" } };

/** A builder whose message timestamp is `at` (the clock is the builder's, read once). */
const builderAt = (at = 7, signal?: AbortSignal) => new TurnBuilder(signal === undefined ? { now: () => at } : { now: () => at, signal });

/** Text pieces as a model may send them: empty ones, spaces and line breaks alone, any Unicode. */
/**
 * Text pieces as a model may send them: empty ones, spaces and line breaks alone (also `\r\n`,
 * a no-break space, a byte order mark), the same piece twice, a combining accent on its own, half
 * of a surrogate pair, any code point.
 */
const piece = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.string({ unit: "grapheme", maxLength: 4 }),
  fc.string({ unit: "binary", maxLength: 3 }),
  fc.constantFrom("", " ", "\n", "\t", "\r\n", "\r", "\u00a0", "\ufeff", "\u200b", "\u0301", "e\u0301", "\ud83d", "哈", "。", "😀"),
);

// ---------------------------------------------------------------------------
// Lab 4.1 · 文本块：一次调用，既发事件也记进消息
// ---------------------------------------------------------------------------

test("Lab 4.1 · 一段回答：每一片都是一个事件，块结束时消息里多一个文本块", async () => {
  const builder = builderAt(7);
  await rule("§C3.1：开着的流上，appendText 返回 true（空片也是）", () => {
    is(builder.appendText(PIECES[0]!), true, "开着的流上，appendText 的返回值");
    is(builder.appendText(""), true, 'appendText("") 的返回值');
    for (const one of PIECES.slice(1)) is(builder.appendText(one), true, `appendText(${show(one)}) 的返回值`);
  });
  await rule(
    "§C3.1、§C3.2：没有打开的块时 appendText 先发 text_start；每个非空片原样是一个 text_delta，空片什么都不发；finish 关上块，text_end 带着整段文字",
    async () => {
      is(builder.finish("stop"), true, "finish 的返回值");
      is(builder.closed, true, "finish 之后，closed ");
      const reading = await readAll(builder.stream);
      assertEvents(reading.events, ["text_start 0", 'text_delta 0 "我先"', 'text_delta 0 "读一下"', 'text_delta 0 " a.ts。"', `text_end 0 ${show(ANSWER)}`]);
      is(reading.end, "done", "读者读完这些事件之后，结束的方式");
    },
  );
  await rule("§C3.3：result() 是完成的回合：消息（role、content、timestamp，按这个顺序）、stopReason、usage，没有 errorMessage", async () => {
    const result = await resultOf(builder);
    assertSame(
      result,
      {
        message: { role: "assistant", content: [{ type: "text", text: ANSWER }], timestamp: 7 },
        stopReason: "stop",
        usage: { inputTokens: 0, outputTokens: 0 },
      },
      "完成的回合不对",
    );
    assertSame(Object.keys(result.message), ["role", "content", "timestamp"], "消息的字段按 role、content、timestamp 的顺序（第 03 章 §C1.2）");
    expect(!("errorMessage" in result) && !("failure" in result), `完成的回合没有 errorMessage 和 failure 字段，实际有：${show(Object.keys(result))}`);
  });
  await rule(
    "§C3.2：块按顺序排：startText 先关上打开的块；endBlock 关上它（之后的 appendText 开一个新块）；没有一片的块也是一个块，文字是空字符串",
    async () => {
      const blocks = builderAt(3);
      blocks.startText();
      blocks.appendText("我先");
      blocks.startText();
      blocks.appendText("读一下");
      is(blocks.endBlock(), true, "endBlock 的返回值");
      is(blocks.endBlock(), true, "没有打开的块时，endBlock 的返回值");
      blocks.appendText("a.ts");
      blocks.startText();
      blocks.finish("stop");
      const reading = await readAll(blocks.stream);
      assertEvents(reading.events, [
        "text_start 0",
        'text_delta 0 "我先"',
        'text_end 0 "我先"',
        "text_start 1",
        'text_delta 1 "读一下"',
        'text_end 1 "读一下"',
        "text_start 2",
        'text_delta 2 "a.ts"',
        'text_end 2 "a.ts"',
        "text_start 3",
        'text_end 3 ""',
      ]);
      assertSame(
        (await resultOf(blocks)).message.content,
        [
          { type: "text", text: "我先" },
          { type: "text", text: "读一下" },
          { type: "text", text: "a.ts" },
          { type: "text", text: "" },
        ],
        "消息的 content 不对",
      );
    },
  );
  await rule('§C3.1：没有打开的文本块时，appendText("") 也先打开一个（只是不发 text_delta）；同样的片连着来，每一片都是一个事件', async () => {
    const first = builderAt();
    is(first.appendText(""), true, '第一个调用就是 appendText("") 时，它的返回值');
    first.finish("stop");
    assertEvents((await readAll(first.stream)).events, ["text_start 0", 'text_end 0 ""'], '第一个调用是 appendText("")，然后 finish');
    assertSame((await resultOf(first)).message.content, [{ type: "text", text: "" }], 'appendText("") 打开的块也是一个块：消息的 content 不对');
    const later = builderAt();
    later.appendText("哈");
    later.endBlock();
    later.appendText("");
    later.appendText("哈");
    later.appendText("哈");
    later.finish("stop");
    assertEvents(
      (await readAll(later.stream)).events,
      ["text_start 0", 'text_delta 0 "哈"', 'text_end 0 "哈"', "text_start 1", 'text_delta 1 "哈"', 'text_delta 1 "哈"', 'text_end 1 "哈哈"'],
      'appendText("哈")、endBlock()、appendText("")、appendText("哈")、appendText("哈")，然后 finish',
    );
  });
  await rule("§C3.2：每个 TurnBuilder 只管自己的回合：两个同时在写，块、位置和消息互不影响", async () => {
    const one = builderAt(1);
    const two = builderAt(2);
    one.appendText("甲");
    two.startText();
    two.appendText("乙");
    one.startText();
    one.appendText("丙");
    two.finish("stop");
    one.finish("stop");
    assertEvents(
      (await readAll(one.stream)).events,
      ["text_start 0", 'text_delta 0 "甲"', 'text_end 0 "甲"', "text_start 1", 'text_delta 1 "丙"', 'text_end 1 "丙"'],
      "第一个 builder",
    );
    assertEvents((await readAll(two.stream)).events, ["text_start 0", 'text_delta 0 "乙"', 'text_end 0 "乙"'], "第二个 builder");
    assertSame((await resultOf(two)).message, { role: "assistant", content: [{ type: "text", text: "乙" }], timestamp: 2 }, "第二个 builder 的消息不对");
  });
});

test("Lab 4.1 · 片怎么切都一样：消息只看拼起来的文字，事件原样描述它", async () => {
  await rule("§C3.4：同一段回答，一次给完和分三片给，消息完全相同", async () => {
    const whole = builderAt(1);
    whole.appendText(ANSWER);
    whole.finish("stop");
    const split = builderAt(1);
    for (const one of PIECES) split.appendText(one);
    split.finish("stop");
    assertSame((await resultOf(split)).message, (await resultOf(whole)).message, "分片给出的回答，消息和一次给完的不一样");
  });
  await holds(
    "§C3.1、§C3.2、§C3.4：任何几段文字、任何切法（空片、只有空白的片、任何 Unicode）：每个非空片原样是一个 text_delta，text_end 的 text 是这一块的片首尾相接，消息的块和它一致，读者从事件重建的块就是消息的 content",
    fc.asyncProperty(fc.array(fc.array(piece, { maxLength: 6 }), { minLength: 1, maxLength: 4 }), async (blocks) => {
      const builder = builderAt(5);
      const expected: string[] = [];
      blocks.forEach((pieces, index) => {
        builder.startText();
        expected.push(`text_start ${index}`);
        for (const one of pieces) {
          builder.appendText(one);
          if (one !== "") expected.push(`text_delta ${index} ${show(one)}`);
        }
        expected.push(`text_end ${index} ${show(pieces.join(""))}`);
      });
      builder.finish("stop");
      const result = await resultOf(builder);
      const reading = await readAll(builder.stream);
      assertEvents(reading.events, expected);
      assertSame(
        result.message.content,
        blocks.map((pieces) => ({ type: "text", text: pieces.join("") })),
        "消息的每个文本块应当是它那些片首尾相接",
      );
      assertSame(replay(reading.events), result.message.content, "读者从事件重建的块和消息的 content 不一样");
    }),
  );
  await holds(
    "§C3.4：同一段文字（至少一片），任何切法给出的消息都和一次给完的完全相同（JSON 逐字节相同）",
    fc.asyncProperty(fc.array(piece, { minLength: 1, maxLength: 8 }), async (pieces) => {
      const split = builderAt(2);
      for (const one of pieces) split.appendText(one);
      split.finish("stop");
      const whole = builderAt(2);
      whole.appendText(pieces.join(""));
      whole.finish("stop");
      const [a, b] = [await resultOf(split), await resultOf(whole)];
      expect(
        JSON.stringify(a.message) === JSON.stringify(b.message),
        `分成 ${show(pieces)} 给出，消息是 ${JSON.stringify(a.message)}；一次给完是 ${JSON.stringify(b.message)}`,
      );
      assertSame(a.message.content, [{ type: "text", text: pieces.join("") }], `分成 ${show(pieces)} 给出，消息应当恰好是一个文本块，文字是它们首尾相接`);
    }),
  );
  await rule("§C3.2：没有上限：一片多长、一块几片、一个回合几块都行（试的是两百多万个字符的一片、一万两千片、一万块）", async () => {
    const builder = builderAt();
    // A reader that takes the events as they come (every 2 000 calls the test lets it run), as a screen does.
    const events: AssistantEvent[] = [];
    const reader = (async () => {
      for await (const event of builder.stream) events.push(event);
    })();
    const huge = "长".repeat(2 ** 21 + 1);
    builder.appendText(huge);
    for (let i = 1; i <= 12_000; i++) {
      builder.appendText("字");
      if (i % 2_000 === 0) await realTurn();
    }
    builder.finish("stop");
    const whole = huge + "字".repeat(12_000);
    const ended = await outcomeOf(reader, 5);
    expect(ended.status === "fulfilled", `读者应当以 done 结束，实际是 ${show(ended)}`);
    is(events.filter((event) => event.type === "text_delta").length, 12_001, "text_delta 的个数");
    const end = events.at(-1);
    expect(
      end?.type === "text_end" && end.text === whole,
      `最后一个事件应当是 text_end，带着全部 ${whole.length} 个字符，实际是 ${end?.type === "text_end" ? `带着 ${end.text.length} 个字符的 text_end` : show(end?.type)}`,
    );
    const content = (await resultOf(builder)).message.content;
    const text = content.length === 1 && content[0]?.type === "text" ? content[0].text : undefined;
    expect(
      text === whole,
      `消息应当是一个文本块，${whole.length} 个字符全部保留，实际是 ${text === undefined ? `${content.length} 个块` : `${text.length} 个字符`}`,
    );
    const blocks = builderAt();
    for (let i = 0; i < 10_000; i++) {
      blocks.startText();
      blocks.appendText("块");
    }
    blocks.finish("stop");
    const many = (await resultOf(blocks)).message.content;
    is(many.length, 10_000, "startText 一万次、每块一片之后，消息的块数");
    expect(
      many.every((block) => block.type === "text" && block.text === "块"),
      "一万块的每一块都应当是 “块”",
    );
  });
});

test("Lab 4.1 · 回合的收尾：stopReason、用量和时间戳", async () => {
  await rule("§C3.3：finish 的 stopReason 原样进回合：stop、toolUse、length 都是完成的回合", async () => {
    const got: string[] = [];
    for (const reason of ["stop", "toolUse", "length"] as const) {
      const builder = builderAt();
      builder.appendText("好");
      builder.finish(reason);
      got.push((await resultOf(builder)).stopReason);
    }
    assertSame(got, ["stop", "toolUse", "length"], "回合的 stopReason 应当是 finish 收到的那个");
  });
  await rule("§C3.3：stop、toolUse、length 都是完成的回合：没有 errorMessage 和 failure 字段", async () => {
    for (const reason of ["stop", "toolUse", "length"] as const) {
      const builder = builderAt();
      builder.appendText("好");
      builder.finish(reason);
      const result = await resultOf(builder);
      expect(
        !("errorMessage" in result) && !("failure" in result),
        `finish(${show(reason)}) 的回合是完成的，不该有 errorMessage 和 failure 字段，实际是 ${show(result)}`,
      );
    }
  });
  await rule("§C3.3：usage 是 setUsage 最后给出的值（没给的字段保持原值，默认都是 0），回合里是它的一份副本", async () => {
    const builder = builderAt();
    builder.setUsage({ inputTokens: 5 });
    builder.appendText("好");
    builder.setUsage({ outputTokens: 9 });
    builder.finish("stop");
    assertSame((await resultOf(builder)).usage, { inputTokens: 5, outputTokens: 9 }, "回合的 usage 不对");
  });
  await rule("§C3.3：消息的 timestamp 是 builder 的（构造时给的 now() 的值），不是 finish 那一刻的时钟", async () => {
    const builder = new TurnBuilder({ now: () => 1_700_000_000_500 });
    builder.appendText("好");
    builder.finish("stop");
    is((await resultOf(builder)).message.timestamp, 1_700_000_000_500, "消息的 timestamp");
    const epoch = new TurnBuilder({ now: () => 0 });
    epoch.finish("stop");
    is((await resultOf(epoch)).message.timestamp, 0, "now() 给出 0（1970-01-01T00:00:00Z）时，消息的 timestamp");
  });
  await holds(
    "§C3.3：消息的 timestamp 就是构造时 now() 给出的那个数，原样：0、负数、超过 2^31 的数都一样",
    fc.asyncProperty(fc.oneof(fc.constantFrom(0, -1, 2 ** 31, 2 ** 32 + 5, Number.MAX_SAFE_INTEGER), fc.integer(), fc.maxSafeInteger()), async (at) => {
      const builder = new TurnBuilder({ now: () => at });
      builder.appendText("好");
      builder.finish("toolUse");
      is((await resultOf(builder)).message.timestamp, at, "消息的 timestamp");
    }),
    { numRuns: 50 },
  );
  await rule("§C3.3：一个块都没有的回合也能完成：content 是空数组，没有事件", async () => {
    const empty = builderAt();
    is(empty.finish("stop"), true, "空回合 finish 的返回值");
    assertSame((await resultOf(empty)).message.content, [], "空回合的 content 应当是 []");
    assertEvents((await readAll(empty.stream)).events, []);
  });
});

// ---------------------------------------------------------------------------
// Lab 4.2 · 工具调用：参数到齐了才解析
// ---------------------------------------------------------------------------

/** The running example's turn, fed by hand as a model would: the answer in three pieces, then the read call in two. */
function exampleTurn(builder: TurnBuilder): void {
  for (const one of PIECES) builder.appendText(one);
  builder.startToolCall("call-1", "read");
  for (const one of ARGUMENT_PIECES) builder.appendToolArguments(one);
}

test("Lab 4.2 · 工具调用：参数一片片到，块结束时才解析成对象", async () => {
  const builder = builderAt(9);
  await rule(
    "§C4.1：startToolCall 先关上打开的文本块（text_end），再打开一个调用（toolcall_start 带 id 和 name），参数的每一片是一个 toolcall_delta",
    async () => {
      exampleTurn(builder);
      is(builder.finish("toolUse"), true, "finish 的返回值");
      assertEvents((await readAll(builder.stream)).events, [
        "text_start 0",
        'text_delta 0 "我先"',
        'text_delta 0 "读一下"',
        'text_delta 0 " a.ts。"',
        `text_end 0 ${show(ANSWER)}`,
        "toolcall_start 1 call-1 read",
        `toolcall_delta 1 ${show(ARGUMENT_PIECES[0])}`,
        `toolcall_delta 1 ${show(ARGUMENT_PIECES[1])}`,
        `toolcall_end 1 ${show(READ_CALL)}`,
      ]);
    },
  );
  await rule("§C4.2：块结束时参数解析成对象：消息里的调用和 toolcall_end 带的一样", async () => {
    const result = await resultOf(builder);
    assertSame(result.message.content, [{ type: "text", text: ANSWER }, READ_CALL], "消息的 content 不对");
    is(result.stopReason, "toolUse", "回合的 stopReason");
  });
  await rule("§C4.1、§C4.2：没有参数（一片都没有，或只有空白）就是 {}；空片不发 toolcall_delta", async () => {
    const none = builderAt();
    none.startToolCall("c1", "list");
    is(none.appendToolArguments(""), true, '流还开着时 appendToolArguments("") 的返回值（空片什么都不发，可流没关）');
    none.startToolCall("c2", "list");
    none.appendToolArguments(" \n ");
    none.finish("toolUse");
    assertEvents((await readAll(none.stream)).events, [
      "toolcall_start 0 c1 list",
      'toolcall_end 0 {"type":"toolCall","id":"c1","name":"list","arguments":{}}',
      "toolcall_start 1 c2 list",
      'toolcall_delta 1 " \\n "',
      'toolcall_end 1 {"type":"toolCall","id":"c2","name":"list","arguments":{}}',
    ]); // Whitespace is what String.prototype.trim removes: a no-break space, a byte order mark, an ideographic space too.
    for (const blank of ["\t\r\n", "\u00a0", "\ufeff", "\u3000", "\u2028 \u2029"]) {
      const spaced = builderAt();
      spaced.startToolCall("c1", "list");
      spaced.appendToolArguments(blank);
      spaced.finish("toolUse");
      assertSame(
        (await resultOf(spaced)).message.content,
        [{ type: "toolCall", id: "c1", name: "list", arguments: {} }],
        `参数文字只有空白 ${show(blank)}：参数应当是 {}`,
      );
    }
  });
  await rule("§C4.2：toolcall_end 带的是调用的一份副本：读者改了它，消息里的调用不变", async () => {
    const copied = builderAt();
    copied.startToolCall("call-1", "read");
    copied.appendToolArguments('{"path":"a.ts"}');
    copied.endBlock();
    const reader = copied.stream[Symbol.asyncIterator]();
    let ended: Extract<AssistantEvent, { type: "toolcall_end" }> | undefined;
    for (let i = 0; i < 5 && ended === undefined; i++) {
      const next = await outcomeOf(reader.next(), 2);
      if (next.status !== "fulfilled" || next.value.done === true) break;
      if (next.value.value.type === "toolcall_end") ended = next.value.value;
    }
    expect(ended !== undefined, "endBlock 之后，读者应当已经拿到 toolcall_end");
    (ended.toolCall.arguments as { path: string }).path = "被读者改了.ts";
    ended.toolCall.name = "write";
    copied.finish("toolUse");
    assertSame((await resultOf(copied)).message.content, [READ_CALL], "读者改了 toolcall_end 的 toolCall，消息里的调用跟着变了");
    const nested = builderAt();
    nested.startToolCall("call-2", "read");
    nested.appendToolArguments('{"path":"a.ts","range":{"from":1,"lines":[1,2]}}');
    nested.finish("toolUse");
    const end = (await readAll(nested.stream)).events.find((event) => event.type === "toolcall_end");
    expect(end?.type === "toolcall_end", "finish 之后，读者应当拿到 toolcall_end");
    const range = (end.toolCall.arguments as { range: { from: number; lines: number[] } }).range;
    range.from = 9;
    range.lines.push(3);
    assertSame(
      (await resultOf(nested)).message.content,
      [{ type: "toolCall", id: "call-2", name: "read", arguments: { path: "a.ts", range: { from: 1, lines: [1, 2] } } }],
      "读者改了 toolcall_end 的 arguments 里面的对象，消息里的调用跟着变了：副本要复制到最里层",
    );
  });
  await rule("§C4.2：参数没有上限：多长、分几片都行（试的是两百多万个字符、一万个数的数组，分成一万两千片）", async () => {
    const args = { path: "big.md", content: "长".repeat(2 ** 21 + 1), lines: Array.from({ length: 10_000 }, (_, i) => i) };
    const json = JSON.stringify(args);
    const size = Math.ceil(json.length / 12_000);
    const builder = builderAt();
    builder.startToolCall("call-1", "write");
    let refused = 0;
    for (let at = 0; at < json.length; at += size) if (builder.appendToolArguments(json.slice(at, at + size)) !== true) refused++;
    is(refused, 0, "appendToolArguments 没有返回 true 的次数");
    is(builder.finish("toolUse"), true, "finish 的返回值");
    const content = (await resultOf(builder)).message.content;
    const call = content[0];
    expect(
      content.length === 1 && call?.type === "toolCall" && JSON.stringify(call.arguments) === json,
      `消息应当是一个调用，参数就是那 ${json.length} 个字符的 JSON 对象，实际是 ${call?.type === "toolCall" ? `参数 ${JSON.stringify(call.arguments).length} 个字符` : `${content.length} 个块`}`,
    );
  });
  await holds(
    "§C4.1、§C4.2、§C3.4：任何 id 和 name、任何参数对象（键可以是 constructor、__proto__）、任何切法，穿插在文本块之间：id、name 原样，消息里的 arguments 就是原来的对象（JSON 逐字节相同，键的顺序也不变），读者从事件重建的块就是消息的 content",
    fc.asyncProperty(
      fc.array(
        fc.oneof(
          fc.record({ text: fc.array(piece, { maxLength: 3 }), viaAppend: fc.boolean() }),
          fc.record({
            id: label,
            name: label,
            args: fc.dictionary(argumentKey, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
            cuts: fc.array(fc.nat(), { maxLength: 4 }),
          }),
        ),
        { minLength: 1, maxLength: 5 },
      ),
      async (blocks) => {
        const builder = builderAt(4);
        const expected: unknown[] = [];
        const starts: string[] = [];
        let previous: "text" | "call" | undefined;
        for (const block of blocks) {
          if ("text" in block) {
            // appendText alone opens a block when no text block is open (nothing yet, or a call); else startText does
            if (!block.viaAppend || previous === "text") builder.startText();
            else if (block.text.length === 0) continue; // no call at all: no block
            for (const one of block.text) builder.appendText(one);
            expected.push({ type: "text", text: block.text.join("") });
            previous = "text";
          } else {
            const json = JSON.stringify(block.args);
            const cuts = [...new Set(block.cuts.map((cut) => cut % (json.length + 1)))].sort((a, b) => a - b);
            builder.startToolCall(block.id, block.name);
            starts.push(`toolcall_start ${expected.length} ${block.id} ${block.name}`);
            let from = 0;
            for (const cut of [...cuts, json.length]) {
              builder.appendToolArguments(json.slice(from, cut));
              from = cut;
            }
            // JSON.parse gives back what JSON.stringify wrote (a -0 becomes 0), so that is what the call holds
            expected.push({ type: "toolCall", id: block.id, name: block.name, arguments: JSON.parse(json) });
            previous = "call";
          }
        }
        builder.finish("toolUse");
        const result = await resultOf(builder);
        assertSame(result.message.content, expected, "消息的 content 不对");
        expect(
          JSON.stringify(result.message.content) === JSON.stringify(expected),
          `消息的 content 和原来的参数不是逐字节相同（键的顺序？）：\n应当是：${JSON.stringify(expected)}\n实际是：${JSON.stringify(result.message.content)}`,
        );
        const events = (await readAll(builder.stream)).events;
        assertFields(events);
        assertSame(events.filter((event) => event.type === "toolcall_start").map(line), starts, "toolcall_start 应当原样带着 startToolCall 给的 id 和 name");
        assertSame(replay(events), result.message.content, "读者从事件重建的块和消息的 content 不一样");
      },
    ),
  );
});

/** An id or a tool name as a model may send it: empty, with spaces around it, any code point. */
const label = fc.oneof(fc.string({ maxLength: 6 }), fc.string({ unit: "binary", maxLength: 3 }), fc.constantFrom("", " ", " read ", "READ", "call-1"));

/** A key of an arguments object: any string, also the names of Object.prototype's own properties. */
const argumentKey = fc.oneof(fc.string({ maxLength: 5 }), fc.constantFrom("__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", ""));

/** A builder with one tool call open whose argument text is `json`; `closeFirst`: its block already ended (endBlock). */
function withArguments(json: string, closeFirst: boolean): TurnBuilder {
  const builder = builderAt();
  builder.startToolCall("call-1", "read");
  builder.appendToolArguments(json);
  if (closeFirst) is(builder.endBlock(), true, `参数是 ${show(json)} 时（endBlock 不抛错，接下来的调用才决定它算不算错），endBlock 的返回值`);
  return builder;
}

test("Lab 4.2 · 参数不是 JSON 对象：回合要继续或正常结束时，是一个明确的错误", async () => {
  const broken = ["{not json", "[1,2]", "42", '"a.ts"', "null", '{"path":', "0", "false", '""', "[]", "true"];
  await rule("§C4.3：参数解析不成对象，endBlock 只把调用标成结束：返回 true，不发 toolcall_end（再 endBlock 一次也一样）", async () => {
    for (const json of broken) {
      const builder = withArguments(json, true);
      is(
        returned(() => builder.endBlock(), `参数是 ${show(json)}，第二次 endBlock `),
        true,
        `参数是 ${show(json)}，第二次 endBlock 的返回值`,
      );
      assertEvents(
        (await readAll(builder.stream)).events,
        ["toolcall_start 0 call-1 read", `toolcall_delta 0 ${show(json)}`],
        `参数是 ${show(json)}，endBlock 之后`,
      );
    }
  });
  await rule(
    "§C4.3：回合接着往下走（startText、appendText、startToolCall）或以 stop、toolUse 结束：抛出 ModelError，code 是 TOOL_ARGUMENTS_INVALID（endBlock 调用过没有都一样）",
    () => {
      const next: [string, (builder: TurnBuilder) => unknown][] = [
        ["startText()", (builder) => builder.startText()],
        ['appendText("x")', (builder) => builder.appendText("x")],
        ['startToolCall("call-2", "list")', (builder) => builder.startToolCall("call-2", "list")],
        ['finish("toolUse")', (builder) => builder.finish("toolUse")],
        ['finish("stop")', (builder) => builder.finish("stop")],
      ];
      for (const json of broken) {
        for (const closeFirst of [false, true]) {
          for (const [label, then] of next) {
            const builder = withArguments(json, closeFirst);
            throwsCode(() => then(builder), "TOOL_ARGUMENTS_INVALID", `参数是 ${show(json)}${closeFirst ? "，endBlock 之后" : ""}，${label} `);
          }
        }
      }
    },
  );
  await rule("§C4.4：没有打开的调用时来了参数（文本块开着、什么都没开、这个调用的块已经 endBlock）：抛出 ModelError，code 是 TURN_BUILDER_MISUSE", () => {
    const textOpen = builderAt();
    textOpen.appendText("我先");
    throwsCode(() => textOpen.appendToolArguments("{}"), "TURN_BUILDER_MISUSE", "文本块开着时 appendToolArguments ");
    throwsCode(() => builderAt().appendToolArguments("{}"), "TURN_BUILDER_MISUSE", "什么都没开时 appendToolArguments ");
    const ended = withArguments('{"path":', true);
    throwsCode(() => ended.appendToolArguments('"a.ts"}'), "TURN_BUILDER_MISUSE", "块已经 endBlock（参数还没写完）时 appendToolArguments ");
    const closed = withArguments('{"path":"a.ts"}', true);
    throwsCode(() => closed.appendToolArguments("{}"), "TURN_BUILDER_MISUSE", "块已经 endBlock（参数完整）时 appendToolArguments ");
    throwsCode(() => builderAt().appendToolArguments(""), "TURN_BUILDER_MISUSE", '什么都没开时 appendToolArguments("")（空片也算）');
    const textThenEmpty = builderAt();
    textThenEmpty.appendText("我先");
    throwsCode(() => textThenEmpty.appendToolArguments(""), "TURN_BUILDER_MISUSE", '文本块开着时 appendToolArguments("")（空片也算）');
  });
});

test("Lab 4.2 · 写到一半被截断：length 回合的最后一个调用以 {} 收尾", async () => {
  await rule(
    "§C4.5：以 length 结束时，最后一个调用的参数解析不成对象（endBlock 调用过没有都一样）：这个调用的参数是 {}，toolcall_end 照发，回合没有 errorMessage",
    async () => {
      for (const closeFirst of [false, true]) {
        const builder = builderAt(3);
        builder.appendText("写文件");
        builder.startToolCall("call-1", "read");
        builder.appendToolArguments('{"path":"a.ts"}');
        builder.startToolCall("call-2", "write");
        builder.appendToolArguments('{"path":"b.md","content":"# 标题\\n第一');
        if (closeFirst) is(builder.endBlock(), true, "参数写到一半时 endBlock 的返回值");
        is(builder.finish("length"), true, `finish("length") 的返回值（endBlock 调用过：${closeFirst}）`);
        const result = await resultOf(builder);
        const cutOff = { type: "toolCall", id: "call-2", name: "write", arguments: {} };
        assertSame(
          result.message.content,
          [{ type: "text", text: "写文件" }, READ_CALL, cutOff],
          `截断的回合的 content 不对（endBlock 调用过：${closeFirst}）`,
        );
        is(result.stopReason, "length", "回合的 stopReason");
        expect(!("errorMessage" in result), "截断是完成的回合，没有 errorMessage");
        assertSame(replay((await readAll(builder.stream)).events), result.message.content, "toolcall_end 带的应当就是消息里的调用");
      }
    },
  );
  await rule("§C4.5：最后一个调用的参数完整时，length 回合照样保留它们", async () => {
    const builder = builderAt();
    builder.startToolCall("call-1", "read");
    builder.appendToolArguments('{"path":"a.ts"}');
    builder.finish("length");
    assertSame((await resultOf(builder)).message.content, [READ_CALL], "参数完整的调用应当原样保留");
  });
});

// ---------------------------------------------------------------------------
// Lab 4.3 · 失败也是一个回合
// ---------------------------------------------------------------------------

test("Lab 4.3 · fail：失败是 result() 给出的一个回合，不是异常", async () => {
  const builder = builderAt(11);
  let reading: Reading = { events: [], end: "pending" };
  await rule("§C5.1：fail 返回 true，流当场关闭，但不是失败：result() 兑现，读者以 done 结束", async () => {
    for (const one of PIECES) builder.appendText(one);
    builder.setUsage({ inputTokens: 12 });
    is(builder.fail("连接断了"), true, "fail 的返回值");
    is(builder.closed, true, "fail 之后，closed ");
    reading = await readAll(builder.stream);
    expect(reading.end === "done", `读者应当以 done 结束，实际是 ${reading.end}${reading.end === "threw" ? `：for await 抛出了 ${show(reading.error)}` : ""}`);
  });
  await rule("§C5.2：fail 自己不发事件：打开的文本块没有 text_end，读者看到的就是 fail 之前的那些事件", () => {
    assertEvents(reading.events, ["text_start 0", 'text_delta 0 "我先"', 'text_delta 0 "读一下"', 'text_delta 0 " a.ts。"'], "说完三片之后 fail");
  });
  await rule("§C5.1、§C5.2：失败的回合：stopReason 是 error，errorMessage 是 fail 的那句话，打开的文本块的文字留在消息里", async () => {
    assertSame(
      await resultOf(builder),
      {
        message: { role: "assistant", content: [{ type: "text", text: ANSWER }], timestamp: 11 },
        stopReason: "error",
        usage: { inputTokens: 12, outputTokens: 0 },
        errorMessage: "连接断了",
      },
      "失败的回合不对",
    );
  });
  await rule("§C5.1：关了之后，每个方法都返回 false，什么都不发、什么都不改（没有打开的调用时来了参数，也只是 false）", async () => {
    const before = await resultOf(builder);
    assertSame(
      [
        builder.appendText("多余"),
        builder.startText(),
        builder.startToolCall("c", "read"),
        builder.appendToolArguments("{}"),
        builder.endBlock(),
        builder.finish("stop"),
        builder.fail("又一次"),
      ],
      [false, false, false, false, false, false, false],
      "关了之后的 appendText、startText、startToolCall、appendToolArguments、endBlock、finish、fail",
    );
    assertSame(await resultOf(builder), before, "关了之后的调用改变了结果");
  });
  await rule("§C5.2：完成的块都留着；打开的文本块有文字（只有空白也算）就留在最后；打开的调用丢掉（参数完整也丢），没有文字的文本块也丢", async () => {
    const cases: [string, (b: TurnBuilder) => void, unknown[]][] = [
      ["文本之后，调用开着", (b) => exampleTurn(b), [{ type: "text", text: ANSWER }]],
      [
        "调用结束之后，文本开着",
        (b) => {
          exampleTurn(b);
          b.appendText("读到了");
        },
        [{ type: "text", text: ANSWER }, READ_CALL, { type: "text", text: "读到了" }],
      ],
      [
        "参数解析不成对象的调用，endBlock 之后",
        (b) => {
          b.startToolCall("call-1", "read");
          b.appendToolArguments('{"path":');
          b.endBlock();
        },
        [],
      ],
      [
        "只有空白的打开的文本块（空白也是说过的话）",
        (b) => {
          b.appendText("我先");
          b.startText();
          b.appendText(" ");
          b.appendText("\n");
        },
        [
          { type: "text", text: "我先" },
          { type: "text", text: " \n" },
        ],
      ],
      [
        "刚打开、还没有一片的文本块",
        (b) => {
          b.appendText("我先");
          b.endBlock();
          b.startText();
        },
        [{ type: "text", text: "我先" }],
      ],
    ];
    for (const [name, feed, expected] of cases) {
      const broken = builderAt();
      feed(broken);
      broken.fail("连接断了");
      assertSame((await resultOf(broken)).message.content, expected, `${name}时 fail：消息的 content 不对`);
    }
  });
  await rule("§C5.3：给了 failure：回合带着它的一份副本（只有 code 和 message）；没给：回合没有 failure 字段", async () => {
    const named = builderAt();
    const failure = { code: "PROVIDER_UNAUTHORIZED", message: "API key 不对：检查 ANTHROPIC_API_KEY", extra: "不该带上" };
    named.fail("401 Unauthorized", "error", failure);
    failure.message = "事后改了";
    const result = await resultOf(named);
    assertSame(
      result.failure,
      { code: "PROVIDER_UNAUTHORIZED", message: "API key 不对：检查 ANTHROPIC_API_KEY" },
      "回合的 failure 应当是给出的那个的副本，只有 code 和 message",
    );
    const plain = builderAt();
    plain.fail("连接断了", "aborted");
    const plainTurn = await resultOf(plain);
    is(plainTurn.stopReason, "aborted", 'fail(…, "aborted") 的回合的 stopReason');
    expect(!("failure" in plainTurn), `没给 failure 时，回合没有 failure 字段，实际是 ${show(plainTurn)}`);
  });
  await holds(
    "§C5.1、§C5.3：fail 给的原因原样是 errorMessage（空字符串、首尾的空白、任何字符都一样），stopReason 是给的那个（默认 error）；给了 failure，回合带着一个新对象，恰好是它的 code 和 message（空字符串也是），原样",
    fc.asyncProperty(
      fc.oneof(fc.string({ maxLength: 8 }), fc.string({ unit: "binary", maxLength: 4 }), fc.constantFrom("", " ", "断了\n", "  断了  ", "\u00a0")),
      fc.constantFrom(undefined, "error" as const, "aborted" as const),
      fc.option(
        fc.record({ code: fc.oneof(fc.string({ maxLength: 6 }), fc.constant("")), message: fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom("", " ")) }),
        { nil: undefined },
      ),
      async (message, stopReason, failure) => {
        const builder = builderAt();
        builder.appendText("我先");
        if (stopReason === undefined) builder.fail(message, undefined, failure);
        else builder.fail(message, stopReason, failure);
        const turn = await resultOf(builder);
        is(turn.errorMessage, message, "回合的 errorMessage");
        is(turn.stopReason, stopReason ?? "error", "回合的 stopReason");
        if (failure === undefined) expect(!("failure" in turn), `没给 failure 时，回合没有 failure 字段，实际是 ${show(turn)}`);
        else {
          assertSame(turn.failure, { code: failure.code, message: failure.message }, "回合的 failure 应当恰好是给出的 code 和 message");
          expect(turn.failure !== failure, "回合的 failure 应当是一个新对象，不是给出的那个");
        }
      },
    ),
    { numRuns: 60 },
  );
  await rule("§C5.1：errorMessage 没有长度上限：一百多万个字符的原因也原样保留", async () => {
    const long = `连接断了：${"长".repeat(2 ** 20 + 1)}`;
    const builder = builderAt();
    builder.fail(long);
    const got = (await resultOf(builder)).errorMessage;
    expect(got === long, `errorMessage 应当是给的那 ${long.length} 个字符，原样，实际是 ${got === undefined ? "undefined" : `${got.length} 个字符`}`);
  });
});

/** One step a model may take, as the properties try them. */
type Step = { text: string[] } | { call: string[] } | { end: true };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ text: fc.array(piece, { maxLength: 3 }) }),
  fc.record({ call: fc.array(fc.constantFrom('{"a', '":1', "}", " ", ""), { maxLength: 4 }) }),
  fc.constant({ end: true as const }),
);

/**
 * Feeds `steps` to `builder` as a model would, stopping at the first call that throws: a
 * half-written call that the turn goes on past (`TOOL_ARGUMENTS_INVALID`), where a model
 * fails the turn, as the property does next.
 */
function feed(builder: TurnBuilder, steps: readonly Step[]): void {
  for (const [i, one] of steps.entries()) {
    try {
      if ("text" in one) {
        builder.startText();
        for (const text of one.text) builder.appendText(text);
      } else if ("call" in one) {
        builder.startToolCall(`call-${i}`, "tool");
        for (const json of one.call) builder.appendToolArguments(json);
      } else builder.endBlock();
    } catch (error) {
      if (isScaffold(error) || !(error instanceof ModelError && error.code === "TOOL_ARGUMENTS_INVALID")) throw error;
      return;
    }
  }
}

test("Lab 4.3 · 中止：signal 一响，回合以 aborted 结束，留下已经完成的部分", async () => {
  await rule("§C5.4：signal 早已中止：builder 一出生就关了，回合是 aborted，content 是空的", async () => {
    const builder = builderAt(1, AbortSignal.abort("早就停了"));
    is(builder.closed, true, "构造完，closed ");
    is(builder.appendText("晚了"), false, "关了之后，appendText 的返回值");
    const result = await resultOf(builder);
    assertSame(
      result,
      {
        message: { role: "assistant", content: [], timestamp: 1 },
        stopReason: "aborted",
        usage: { inputTokens: 0, outputTokens: 0 },
        errorMessage: "aborted: 早就停了",
      },
      "早已中止的回合不对",
    );
  });
  await rule("§C5.4：流式输出途中中止：abort() 一返回就关了；回合是 aborted，errorMessage 说出原因，完成的块和打开的文本留着，打开的调用丢掉", async () => {
    const user = new AbortController();
    const builder = builderAt(2, user.signal);
    builder.appendText("我先");
    builder.startToolCall("call-1", "read");
    builder.appendToolArguments('{"pa');
    user.abort("用户按了 Ctrl-C");
    is(builder.closed, true, "abort() 返回时，closed ");
    is(builder.appendToolArguments('th":"a.ts"}'), false, "中止之后，appendToolArguments 的返回值");
    const result = await resultOf(builder);
    is(result.stopReason, "aborted", "回合的 stopReason");
    is(result.errorMessage, "aborted: 用户按了 Ctrl-C", "回合的 errorMessage");
    assertSame(result.message.content, [{ type: "text", text: "我先" }], "中止的回合的 content 不对");
    assertEvents((await readAll(builder.stream)).events, [
      "text_start 0",
      'text_delta 0 "我先"',
      'text_end 0 "我先"',
      "toolcall_start 1 call-1 read",
      'toolcall_delta 1 "{\\"pa"',
    ]);
  });
  await rule("§C5.4：中止原因是 Error 时，errorMessage 是 aborted: 加上它的 message；文本块开着时，它的文字留着", async () => {
    const user = new AbortController();
    const builder = builderAt(2, user.signal);
    builder.appendText("我先读");
    user.abort(new Error("按了 Esc"));
    const result = await resultOf(builder);
    is(result.errorMessage, "aborted: 按了 Esc", "回合的 errorMessage");
    assertSame(result.message.content, [{ type: "text", text: "我先读" }], "中止时打开的文本块的文字应当留着");
  });
  await holds(
    "§C5.2、§C5.4：在任何时刻 fail 或中止：消息恰好是事件描述过的完成的块，加上打开的文本块已有的文字；fail 和中止自己不发事件；result() 兑现，读者以 done 结束",
    fc.asyncProperty(fc.array(step, { maxLength: 6 }), fc.boolean(), async (steps, abort) => {
      const user = new AbortController();
      const builder = builderAt(6, user.signal);
      feed(builder, steps);
      const iterator = builder.stream[Symbol.asyncIterator]();
      const events: AssistantEvent[] = [];
      let next = iterator.next();
      for (let got = await outcomeOf(next, 1); got.status === "fulfilled" && got.value.done !== true; got = await outcomeOf(next, 1)) {
        events.push(got.value.value);
        next = iterator.next();
      }
      if (abort) user.abort("停");
      else builder.fail("断了");
      const after = await outcomeOf(next);
      expect(
        after.status === "fulfilled" && after.value.done === true,
        `${abort ? "中止" : "fail"}之后，读者应当以 done 结束，不再收到事件，实际是 ${after.status === "fulfilled" && after.value.done !== true ? line(after.value.value) : show(after)}`,
      );
      const result = await resultOf(builder);
      is(result.stopReason, abort ? "aborted" : "error", "回合的 stopReason");
      is(result.errorMessage, abort ? "aborted: 停" : "断了", "回合的 errorMessage");
      assertSame(result.message.content, replay(events, true), "消息应当是事件描述过的完成的块，加上打开的文本块已有的文字");
    }),
  );
  await holds(
    '§C5.4：中止的回合的 errorMessage 是 "aborted: " 加上原因的文字：原因是 Error 时是它的 message，否则是 String(原因)（空字符串、0、null 也是）；没给原因时是 signal 自己的 AbortError',
    fc.asyncProperty(
      fc.oneof(
        fc.string({ maxLength: 6 }),
        fc.constantFrom("", " ", 0, -1, null, false, undefined, Number.NaN),
        fc.integer(),
        fc.string({ maxLength: 6 }).map((message) => new Error(message)),
        fc.string({ maxLength: 6 }).map((message) => new TypeError(message)),
      ),
      async (reason) => {
        const user = new AbortController();
        const builder = builderAt(1, user.signal);
        builder.appendText("我先");
        user.abort(reason);
        const given: unknown = user.signal.reason; // abort() without a reason: the signal's own DOMException
        const wanted = `aborted: ${given instanceof Error ? given.message : String(given)}`;
        is((await resultOf(builder)).errorMessage, wanted, `中止原因是 ${show(given)} 时，回合的 errorMessage`);
      },
    ),
    { numRuns: 60 },
  );
});

const request = (text: string): ModelRequest => ({ systemPrompt: "", messages: [userMessage(text, 1)], tools: [] });

test("Lab 4.3 · 脚本模型：不论哪里出错，都经过 fail 成为一个回合", async () => {
  await rule("§C5.5：脚本模型（已经给出）把每一种错误都交给你的 fail：脚本用完、函数回合抛错、脚本声明的错误、参数不是 JSON", async () => {
    const first = builderAt();
    is(first.fail("先直接试一次"), true, "fail 的返回值");
    const cases: { name: string; model: ScriptedModel; message: RegExp; content: unknown[] }[] = [
      { name: "脚本用完", model: new ScriptedModel([]), message: /no turn left/, content: [] },
      {
        name: "函数回合抛错",
        model: new ScriptedModel([
          () => {
            throw new Error("script bug");
          },
        ]),
        message: /script bug/,
        content: [],
      },
      {
        name: "脚本声明的错误",
        model: new ScriptedModel([{ ...turn("半句"), error: "overloaded" }]),
        message: /overloaded/,
        content: [{ type: "text", text: "半句" }],
      },
      {
        name: "参数不是 JSON",
        model: new ScriptedModel([turn("先说一句", toolCall("read", { n: 1n } as never))]),
        message: /BigInt|serialize/i,
        content: [{ type: "text", text: "先说一句" }],
      },
    ];
    for (const c of cases) {
      const stream = c.model.stream(request("a.ts 里有什么？"));
      const reading = await readAll(stream);
      is(reading.end, "done", `${c.name}：读者结束的方式`);
      const outcome = await outcomeOf(stream.result());
      expect(outcome.status === "fulfilled", `${c.name}：result() 应当兑现为一个回合，实际是 ${show(outcome)}`);
      is(outcome.value.stopReason, "error", `${c.name}：回合的 stopReason `);
      expect(
        c.message.test(outcome.value.errorMessage ?? ""),
        `${c.name}：errorMessage 应当说出原因（${c.message}），实际是 ${show(outcome.value.errorMessage)}`,
      );
      assertSame(outcome.value.message.content, c.content, `${c.name}：content 不对`);
    }
  });
  await rule("§C5.4：脚本模型播放途中中止：回合是 aborted，只留下已经完成的部分，中止之后没有事件", async () => {
    const user = new AbortController();
    const model = new ScriptedModel([turn("第一段", toolCall("read", { path: "a.ts" }), "第二段")], { chunkSize: 1 });
    const stream = model.stream(request("a.ts 里有什么？"), { signal: user.signal });
    const seen: AssistantEvent[] = [];
    for await (const event of stream) {
      seen.push(event);
      if (event.type === "toolcall_start") user.abort("用户按了 Ctrl-C");
    }
    const result = await outcomeOf(stream.result());
    expect(result.status === "fulfilled", `result() 应当兑现，实际是 ${show(result)}`);
    is(result.value.stopReason, "aborted", "回合的 stopReason");
    expect(/Ctrl-C/.test(result.value.errorMessage ?? ""), `errorMessage 应当说出中止的原因，实际是 ${show(result.value.errorMessage)}`);
    assertSame(result.value.message.content, [{ type: "text", text: "第一段" }], "未完成的调用和之后的内容都不在消息里");
    is(seen.at(-1)?.type, "toolcall_start", "中止之后不再有事件：读者拿到的最后一个事件的 type ");
  });
});
