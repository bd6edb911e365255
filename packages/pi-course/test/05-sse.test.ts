/**
 * Chapter 05 labs · Lab 5.1, server-sent events: a piece of the network is not an event.
 * Four tests; every name starts with the lab id, so the lab runs alone with
 *
 *   npm run lab -w @pi/course -- 5.1
 *
 * Every check runs under `rule("§C3.…：…")` or `holds("§C3.…：…")`, naming the rule of the
 * contract appendix of chapters/05-provider/README.md that it checks. Everything is observed through
 * the public surface: the events `SseParser.feed` returns and `parseSse` yields, and what the
 * source of `parseSse` was asked for. Failure messages are written here, in words and shown
 * values. The rule that holds however the stream is cut (any split, between `\r` and `\n`
 * too, inside a UTF-8 character too) is checked as a property with `holds()` (fast-check,
 * fixed seed), against a reading of the whole text written here in another way.
 */
import assert from "node:assert/strict";
import test from "node:test";
import fc from "fast-check";
import { parseSse, SseParser, type SseEvent } from "../src/sse.js";
import { holds } from "./support/properties.js";
import { isScaffold, rule } from "./support/rules.js";

// ---------------------------------------------------------------------------
// Showing values, the running example
// ---------------------------------------------------------------------------

/** A value as a failure message shows it (control characters escaped). */
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

/** The events of `pieces`, fed one after another to one new parser. */
function fed(...pieces: string[]): SseEvent[] {
  const reader = new SseParser();
  const events: SseEvent[] = [];
  for (const piece of pieces) events.push(...reader.feed(piece));
  return events;
}

/** The running example: the third event of the model's answer (chapter text, section 1), as a server that ends lines with CRLF sends it. */
const DELTA = '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"我先"}}';
const EXAMPLE = `event: content_block_delta\r\ndata: ${DELTA}\r\n\r\n`;
const EXAMPLE_EVENT: SseEvent = { event: "content_block_delta", data: DELTA };

/** A source of pieces for `parseSse`, recording how far it was read and whether it was stopped. */
function source(pieces: readonly (string | Uint8Array)[], onAsk?: (index: number) => void) {
  const seen = { asked: 0, stopped: false };
  async function* generate(): AsyncGenerator<string | Uint8Array> {
    try {
      for (const [index, piece] of pieces.entries()) {
        onAsk?.(index);
        seen.asked = index + 1;
        yield piece;
      }
    } finally {
      seen.stopped = true;
    }
  }
  return { chunks: generate(), seen };
}

/** Every event `parseSse` yields for `pieces` (a starter's scaffold error is thrown on). */
async function parsed(pieces: readonly (string | Uint8Array)[]): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  try {
    for await (const event of parseSse(source(pieces).chunks)) events.push(event);
  } catch (error) {
    if (isScaffold(error)) throw error;
    assert.fail(`parseSse 不该抛错，却抛出了 ${show(error instanceof Error ? error.message : error)}`);
  }
  return events;
}

/** `text` as UTF-8 bytes, cut after each offset of `cuts` (0 to the length; repeats give empty pieces). */
function byteCuts(text: string, cuts: readonly number[]): Uint8Array[] {
  const bytes = new TextEncoder().encode(text);
  const at = [...cuts.map((cut) => cut % (bytes.length + 1))].sort((a, b) => a - b);
  const pieces: Uint8Array[] = [];
  let from = 0;
  for (const cut of [...at, bytes.length]) {
    pieces.push(bytes.slice(from, cut));
    from = cut;
  }
  return pieces;
}

/** `text` cut after each offset of `cuts`, by UTF-16 code units (0 to the length; repeats give empty pieces). */
function textCuts(text: string, cuts: readonly number[]): string[] {
  const at = [...cuts.map((cut) => cut % (text.length + 1))].sort((a, b) => a - b);
  return [...at, text.length].map((cut, i, all) => text.slice(i === 0 ? 0 : all[i - 1], cut));
}

/**
 * The events of a whole stream, read here in one go (a different way from a parser fed piece
 * by piece): the text split at every line end, the part after the last one left unread.
 */
function wholeReading(stream: string): SseEvent[] {
  const lines = (stream.startsWith("\uFEFF") ? stream.slice(1) : stream).split(/\r\n|\r|\n/);
  lines.pop();
  const out: SseEvent[] = [];
  let name = "";
  let values: string[] = [];
  let lastSeen: string | undefined;
  for (const line of lines) {
    if (line.length === 0) {
      if (values.length > 0)
        out.push(
          lastSeen === undefined ? { event: name || "message", data: values.join("\n") } : { event: name || "message", data: values.join("\n"), id: lastSeen },
        );
      [name, values] = ["", []];
      continue;
    }
    if (line[0] === ":") continue;
    const [key, rest] = line.includes(":") ? [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 1)] : [line, ""];
    const value = rest[0] === " " ? rest.substring(1) : rest;
    if (key === "data") values = [...values, value];
    if (key === "event") name = value;
    if (key === "id" && value.indexOf("\0") < 0) lastSeen = value;
  }
  return out;
}

/** Text of one field value: anything but a line end (NUL, spaces, colons and any Unicode included). */
const valueText = fc
  .string({
    unit: fc.oneof(fc.constantFrom(" ", ":", "\0", "a", "我", "😀", "\uFEFF"), fc.string({ unit: "binary", minLength: 1, maxLength: 1 })),
    maxLength: 8,
  })
  .map((text) => text.replace(/[\r\n]/g, ""));

/** One line of a stream, without its line end: a field, a comment or an empty line. */
const streamLine = fc.oneof(
  { weight: 2, arbitrary: fc.constant("") },
  { weight: 1, arbitrary: fc.constantFrom(" ", "  ", "\t", "event:", "event: ") },
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.constantFrom("data", "data", "event", "id", "retry", "Data", "foo", ""), fc.constantFrom(":", ": ", ":  ", ""), valueText)
      .map(([name, colon, value]) => (name === "" && colon === "" ? `x${value}` : `${name}${colon}${colon === "" ? "" : value}`)),
  },
  { weight: 1, arbitrary: valueText.map((text) => `:${text}`) },
);

/** A whole stream: lines each with any line end, maybe one or two byte-order marks first, maybe a last line with no end. */
const stream = fc
  .tuple(
    fc.constantFrom("", "\uFEFF", "\uFEFF\uFEFF"),
    fc.array(fc.tuple(streamLine, fc.constantFrom("\n", "\r", "\r\n")), { maxLength: 14 }),
    fc.oneof(fc.constant(""), streamLine),
  )
  .map(([bom, lines, unfinished]) => `${bom}${lines.map(([line, end]) => line + end).join("")}${unfinished}`);

// ---------------------------------------------------------------------------
// Lab 5.1 · SSE 解码：网络片不是事件
// ---------------------------------------------------------------------------

test("Lab 5.1 · 一行一行读：行尾、字段和交出事件的空行", async () => {
  await rule("§C3.1：一行在 \\r\\n、\\n 或单独的 \\r 处结束；三种行尾给出同样的事件", () => {
    same(fed(EXAMPLE), [EXAMPLE_EVENT], "第 1 节的例子（CRLF）一次读完");
    same(fed(EXAMPLE.replaceAll("\r\n", "\n")), [EXAMPLE_EVENT], "同一个事件，行尾换成 \\n");
    same(fed(EXAMPLE.replaceAll("\r\n", "\r")), [EXAMPLE_EVENT], "同一个事件，行尾换成单独的 \\r");
    same(
      fed("data: 1\r\rdata: 2\n\r\ndata: 3\r\n\n"),
      [1, 2, 3].map((n) => ({ event: "message", data: String(n) })),
      "三种行尾混在一个流里",
    );
  });
  await rule("§C3.2：`名字: 值` 去掉冒号后的一个空格（只去一个）；没有冒号的一行，整行是名字、值是空串；冒号开头的一行是注释", () => {
    same(fed("data:  two spaces\ndata:none\n\n"), [{ event: "message", data: " two spaces\nnone" }], "冒号后有两个空格、没有空格");
    same(fed("data\n\n"), [{ event: "message", data: "" }], "没有冒号的 data 行");
    same(fed("data: a:b: c\n\n"), [{ event: "message", data: "a:b: c" }], "值里的冒号是值的一部分");
    same(fed(": keep-alive\n:\ndata: x\n\n"), [{ event: "message", data: "x" }], "注释行");
  });
  await rule("§C3.2：只认 event、data、id 三个字段（大小写要完全一样）；retry 和不认识的字段都忽略", () => {
    same(fed("retry: 10\nfoo: bar\nData: no\nEVENT: no\ndata: z\n\n"), [{ event: "message", data: "z" }], "retry、foo、Data、EVENT 都不算");
    same(fed("retry: 10\nfoo: bar\n\n"), [], "只有被忽略的字段：不交出事件");
  });
  await rule("§C3.2、§C3.5：流最开头的一个字节序标记（U+FEFF）丢掉，只丢一个；别处的 U+FEFF 是普通的字；字节和文字给出同样的事件", async () => {
    same(fed("\uFEFFdata: x\n\n"), [{ event: "message", data: "x" }], "开头的 BOM");
    same(fed("", "\uFEFFdata: x\n\n"), [{ event: "message", data: "x" }], "第一片是空串，BOM 在第二片开头：仍是流的开头");
    same(fed("data: x\n\n", "\uFEFFdata: y\n\n"), [{ event: "message", data: "x" }], "流中间的 \\uFEFFdata 是一个不认识的字段");
    same(fed("data: \uFEFF\n\n"), [{ event: "message", data: "\uFEFF" }], "值里的 U+FEFF");
    const twice = "\uFEFF\uFEFFdata: x\n\ndata: y\n\n";
    same(fed(twice), [{ event: "message", data: "y" }], "开头两个 BOM（文字）：只丢第一个，第二个让第一行成了不认识的字段");
    same(await parsed([twice]), [{ event: "message", data: "y" }], "开头两个 BOM，parseSse 读文字片");
    const bytes = new TextEncoder().encode(twice);
    same(await parsed([bytes]), [{ event: "message", data: "y" }], "开头两个 BOM，parseSse 读字节（EF BB BF EF BB BF …）：和文字一样只丢一个");
    same(await parsed(Array.from(bytes, (byte) => Uint8Array.of(byte))), [{ event: "message", data: "y" }], "同样的字节，一个字节一片");
    same(await parsed([new TextEncoder().encode("\uFEFFdata: x\n\n")]), [{ event: "message", data: "x" }], "开头一个 BOM 的字节");
  });
  await rule("§C3.3：空行交出事件：data 各行以 \\n 连接，事件名默认 message；没有 data 的事件不交出，它的事件名也一并作废", () => {
    same(fed("event: ping\ndata: {}\n\n"), [{ event: "ping", data: "{}" }], "事件名与数据");
    same(fed("data: a\ndata: b\ndata:\n\n"), [{ event: "message", data: "a\nb\n" }], "三行 data（最后一行是空串）");
    same(fed("event: lonely\n\ndata: y\n\n"), [{ event: "message", data: "y" }], "没有 data 的事件之后");
    same(fed("\n\n\ndata: y\n\n\n"), [{ event: "message", data: "y" }], "连续的空行");
    same(fed("event: a\nevent: b\ndata: 1\n\n"), [{ event: "b", data: "1" }], "后一个 event 行覆盖前一个");
    same(
      fed("event:\ndata: 1\n\nevent: \ndata: 2\n\n"),
      [1, 2].map((n) => ({ event: "message", data: String(n) })),
      "event 行的值是空串：事件名是 message",
    );
    same(fed("data: a\n \n\t\ndata: b\n\n"), [{ event: "message", data: "a\nb" }], "只有空格、只有 \\t 的一行不是空行（它们是不认识的字段）");
  });
  await rule("§C3.3：id 一直保留到被下一个 id 行改写（包括改成空串）；含 NUL 的 id 行被忽略；从没有过 id 时事件没有 id 字段", () => {
    const events = fed("data: a\n\nid: 1\ndata: b\n\ndata: c\n\nid: 2\0x\ndata: d\n\nid\ndata: e\n\n");
    same(
      events,
      [
        { event: "message", data: "a" },
        { event: "message", data: "b", id: "1" },
        { event: "message", data: "c", id: "1" },
        { event: "message", data: "d", id: "1" },
        { event: "message", data: "e", id: "" },
      ],
      "五个事件",
    );
    expect(!("id" in events[0]!), `还没有 id 时，事件不应当有 id 字段，实际是 ${show(events[0])}`);
  });
  await rule("§C3.3：流结束时还没等到空行的事件，不是事件", () => {
    same(fed("data: done\n\ndata: cut"), [{ event: "message", data: "done" }], "最后一个事件只有 data 行，没有空行");
    same(fed("data: done\n\ndata: cut\n"), [{ event: "message", data: "done" }], "最后一个事件的 data 行结束了，空行没来");
  });
});

test("Lab 5.1 · 网络怎么切都一样：任意切法（包括 \\r 和 \\n 之间）给出同样的事件", async () => {
  await rule("§C3.4：第 1 节的例子切成两片、三片，每一种切法（包括 \\r 和 \\n 之间、空片）都给出同样的一个事件", () => {
    for (let i = 0; i <= EXAMPLE.length; i++) {
      for (let j = i; j <= EXAMPLE.length; j++) {
        const pieces = [EXAMPLE.slice(0, i), EXAMPLE.slice(i, j), EXAMPLE.slice(j)];
        same(fed(...pieces), [EXAMPLE_EVENT], `切成 ${show(pieces)}`);
      }
    }
  });
  await rule("§C3.4：一片以 \\r 结尾：这一行已经结束；下一片开头的 \\n 属于同一个行尾，不是一个空行", () => {
    same(fed("data: 1\r", "\ndata: 2\r", "\n\r", "\n"), [{ event: "message", data: "1\n2" }], "每个 \\r\\n 都被切开");
    same(fed("data: 1\r", "\r"), [{ event: "message", data: "1" }], "\\r 之后又是 \\r：一个空行");
    same(fed("data: 1\r", "", "\n", "\n"), [{ event: "message", data: "1" }], "\\r 与 \\n 之间隔着一个空片");
    same(fed("data: 1\r", "data: 2\r", "\r"), [{ event: "message", data: "1\n2" }], "\\r 之后是下一行");
  });
  await rule("§C3.4：一行多长、一个事件有多少行、一个流有多少事件，都没有上限", () => {
    const long = "x".repeat(4 * 2 ** 20);
    const pieces = ["data: ", ...Array.from({ length: 8 }, (_, i) => long.slice(i * 2 ** 19, (i + 1) * 2 ** 19)), "\n\n"];
    const events = fed(...pieces);
    expect(
      events.length === 1 && events[0]!.data === long,
      `一行 data 有 4 MiB（${long.length} 个字符），切成 ${pieces.length} 片：应当交出一个事件，data 原样；实际交出 ${events.length} 个，data 长 ${show(events.map((e) => e.data.length))}`,
    );
    const manyLines = fed(`${"data: n\n".repeat(10_000)}\n`);
    same([manyLines.length, manyLines[0]?.data.split("\n").length], [1, 10_000], "一万行 data 的一个事件：[事件个数, data 的行数]");
    same(fed("data: e\n\n".repeat(10_000)).length, 10_000, "一万个事件一次交来：交出的事件个数");
  });
  await holds(
    "§C3.1、§C3.2、§C3.3、§C3.4：任何一个流（三种行尾、注释、不认识的字段、BOM、没结束的最后一行），任意切成几片（空片也算）：交出的事件和一次读完整个流相同",
    fc.property(stream, fc.array(fc.nat(), { maxLength: 8 }), (text, cuts) => {
      const pieces = textCuts(text, cuts);
      same(fed(...pieces), wholeReading(text), `流 ${show(text)} 切成 ${show(pieces)} 的事件`);
    }),
  );
});

test("Lab 5.1 · 字节：被切开的 UTF-8 字符完整还原，坏字节不让解码停下", async () => {
  await rule("§C3.5：第 1 节的例子一个字节一片：“我先” 被切在字节中间，交出的事件照样完整", async () => {
    const bytes = new TextEncoder().encode(EXAMPLE);
    same(await parsed(Array.from(bytes, (byte) => Uint8Array.of(byte))), [EXAMPLE_EVENT], "一个字节一片");
  });
  await rule("§C3.5：也接受文字片；坏的字节（不是 UTF-8）变成 U+FFFD，不抛错", async () => {
    same(await parsed(["data: a", "\n", "\n"]), [{ event: "message", data: "a" }], "三片文字");
    same(await parsed([Uint8Array.of(0x64, 0x61, 0x74, 0x61, 0x3a, 0x20, 0xff, 0x0a, 0x0a)]), [{ event: "message", data: "\uFFFD" }], "data: 后面是字节 0xFF");
  });
  await rule("§C3.3、§C3.5：来源结束了，最后一个事件的空行还没来：parseSse 不交出它", async () => {
    same(await parsed(["data: done\n\ndata: cut\n"]), [{ event: "message", data: "done" }], "最后一个事件没有空行");
    same(await parsed([new TextEncoder().encode("data: done\n\ndata: 我")]), [{ event: "message", data: "done" }], "最后一行连行尾都没有");
  });
  await holds(
    "§C3.4、§C3.5：任何一个流，编码成 UTF-8，在任意字节处切开（多字节字符的中间也算）：parseSse 交出的事件和一次读完整个流相同",
    fc.asyncProperty(stream, fc.array(fc.nat(), { maxLength: 8 }), async (text, cuts) => {
      const pieces = byteCuts(text, cuts);
      same(await parsed(pieces), wholeReading(text), `流 ${show(text)} 的字节切成 ${pieces.length} 片的事件`);
    }),
  );
});

test("Lab 5.1 · 边读边交：空行一到就交出事件，读者离开时来源也停下", async () => {
  await rule("§C3.6：一个事件的空行到了，parseSse 就交出它，不等后面的片", async () => {
    const events: SseEvent[] = [];
    let seenWhenAsked: number | undefined;
    const { chunks } = source(["data: 1\n\n", "data: 2\n\n"], (index) => {
      if (index === 1) seenWhenAsked = events.length;
    });
    for await (const event of parseSse(chunks)) events.push(event);
    same(events.length, 2, "交出的事件个数");
    same(seenWhenAsked, 1, "来源被要第二片的时候，读者已经拿到的事件个数");
  });
  await rule("§C3.6：读者拿到第一个事件就离开（break）：来源不再被读，它的 finally 也运行了（连接随之释放）", async () => {
    const { chunks, seen } = source(["data: 1\n\n", "data: 2\n\n", "data: 3\n\n"]);
    for await (const event of parseSse(chunks)) {
      same(event, { event: "message", data: "1" }, "第一个事件");
      break;
    }
    same(seen, { asked: 1, stopped: true }, "来源被读了几片、是否停下");
  });
});
