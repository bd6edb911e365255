import assert from "node:assert/strict";
import test from "node:test";
import { parseSse, SseParser, type SseEvent } from "../src/sse.js";

function parseWhole(text: string): SseEvent[] {
  return new SseParser().feed(text);
}

async function collect(chunks: (Uint8Array | string)[]): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  async function* source() {
    yield* chunks;
  }
  for await (const event of parseSse(source())) events.push(event);
  return events;
}

test("Lab 5.1 · SSE 字段规则：事件名、多行 data、注释、冒号后的一个空格、无 data 不派发", () => {
  const cases: { name: string; input: string; expected: SseEvent[] }[] = [
    { name: "事件名与数据", input: "event: ping\ndata: {}\n\n", expected: [{ event: "ping", data: "{}" }] },
    { name: "默认事件名 message", input: "data: x\n\n", expected: [{ event: "message", data: "x" }] },
    { name: "多行 data 以 \\n 连接", input: "data: a\ndata: b\n\n", expected: [{ event: "message", data: "a\nb" }] },
    { name: "只去掉一个空格", input: "data:  two\ndata:none\n\n", expected: [{ event: "message", data: " two\nnone" }] },
    { name: "注释行被忽略", input: ": keep-alive\ndata: x\n\n", expected: [{ event: "message", data: "x" }] },
    { name: "没有 data 的事件不派发，事件名也随之重置", input: "event: lonely\n\ndata: y\n\n", expected: [{ event: "message", data: "y" }] },
    { name: "没有冒号的字段值为空", input: "data\n\n", expected: [{ event: "message", data: "" }] },
    { name: "未知字段与 retry 被忽略", input: "retry: 10\nfoo: bar\ndata: z\n\n", expected: [{ event: "message", data: "z" }] },
    {
      name: "id 一直保留到被改写",
      input: "id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\n",
      expected: [
        { event: "message", data: "a", id: "1" },
        { event: "message", data: "b", id: "1" },
        { event: "message", data: "c", id: "2" },
      ],
    },
    {
      name: "CRLF 与单独的 CR 都是行尾",
      input: "event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\r",
      expected: [
        { event: "a", data: "1" },
        { event: "b", data: "2" },
      ],
    },
    { name: "开头的 BOM 被丢弃", input: "\uFEFFdata: x\n\n", expected: [{ event: "message", data: "x" }] },
    { name: "结尾没有空行的事件不派发", input: "data: done\n\ndata: cut", expected: [{ event: "message", data: "done" }] },
  ];
  for (const c of cases) assert.deepEqual(parseWhole(c.input), c.expected, c.name);
});

test("Lab 5.1 · 无论在哪里切块（包括 \\r 与 \\n 之间），解析结果都相同", () => {
  const input = "event: a\r\ndata: 1\r\n\r\n: c\ndata: 2\rdata: 3\r\rid: 9\ndata: 4\n\n";
  const whole = parseWhole(input);
  assert.equal(whole.length, 3);
  for (let i = 0; i <= input.length; i++) {
    for (let j = i; j <= input.length; j++) {
      const parser = new SseParser();
      const events = [...parser.feed(input.slice(0, i)), ...parser.feed(input.slice(i, j)), ...parser.feed(input.slice(j))];
      assert.deepEqual(events, whole, `cut at ${i}/${j}`);
    }
  }
});

test("Lab 5.1 · 字节流按 UTF-8 流式解码：被切开的多字节字符完整还原", async () => {
  const bytes = new TextEncoder().encode("data: 你好😀\n\n");
  const oneByOne = Array.from(bytes, (byte) => Uint8Array.of(byte));
  assert.deepEqual(await collect(oneByOne), [{ event: "message", data: "你好😀" }]);
  assert.deepEqual(await collect(["data: a", "\n", "\n"]), [{ event: "message", data: "a" }], "也接受字符串块");
});
