// @ts-nocheck — a solution of Chapter 05, checked in place of packages/pi-course/src/sse.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 05 · server-sent events — solution E (sse.ts), a blind learner's: the state record
 * holds the event being collected field by field, `feedText` scans the text code unit by
 * code unit, and `parseSse` keeps the decoder from dropping a byte-order mark (`ignoreBOM`).
 * Written from the chapter text alone, the starter's comments kept.
 *
 * (The starter's header, as the learner had it:)
 *
 * `SseEvent` and the class `SseParser` are given: a thin door whose `feed` hands each piece
 * of text to `feedText`, with the one state record `newSseState` made. The construction
 * sites, all of Lab 5.1: `SseState` (what the parser keeps from one piece to the next: one
 * field is there, the rest is yours to decide), `newSseState`, `feedText` and `parseSse`.
 * Add private helpers as you need them; keep the exports and the signatures of the
 * declarations marked 🔨.
 *
 * Run the lab:  npm run lab -w @pi/course -- 5.1
 */

/** One dispatched event. `event` is `"message"` when the stream named none. */
export interface SseEvent {
  event: string;
  data: string;
  /** The last event id seen so far in the stream, when there was one. */
  id?: string;
}

/** 施工位的错误：消息说出哪个 Lab 来写这段代码。Lab 做完后没有代码再调用它，删掉或留着都行。 */
function labError(lab: string): Error {
  return new Error(`${lab} 尚未实现`);
}

// ── Lab 5.1 · SSE 解码：网络片不是事件 ──

// 🔨 Lab 5.1：解析器从一片文字到下一片要记住的一切（正文第 3 节）。
//    先给了一项；别的字段由你决定，写在它下面。
interface SseState {
  /** 最后一个行尾之后的文字：还没有结束的那一行。 */
  rest: string;
  /** 上一片以 `\r` 结尾：下一片开头的 `\n` 是同一个行尾的后一半。 */
  afterCr: boolean;
  /** 已经见过一片非空的文字（开头的 BOM 只在这之前丢）。 */
  started: boolean;
  /** 这个事件最后一个 `event` 行的值；没有时 `undefined`。 */
  eventName: string | undefined;
  /** 这个事件的 `data` 行，按到达的顺序。 */
  dataLines: string[];
  /** 到此为止最后一个（有效的）`id` 行的值。 */
  lastId: string | undefined;
}

/** The state of a parser that has seen nothing. */
function newSseState(): SseState {
  return { rest: "", afterCr: false, started: false, eventName: undefined, dataLines: [], lastId: undefined };
}

/** One complete line (without its line ending): a field, a comment, or the empty line that dispatches. */
function processLine(state: SseState, line: string, out: SseEvent[]): void {
  if (line === "") {
    if (state.dataLines.length > 0) {
      const event: SseEvent = { event: state.eventName || "message", data: state.dataLines.join("\n") };
      if (state.lastId !== undefined) event.id = state.lastId;
      out.push(event);
    }
    state.eventName = undefined;
    state.dataLines = [];
    return;
  }
  if (line.startsWith(":")) return;
  const colon = line.indexOf(":");
  let name: string;
  let value: string;
  if (colon === -1) {
    name = line;
    value = "";
  } else {
    name = line.slice(0, colon);
    value = line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
  }
  switch (name) {
    case "event":
      state.eventName = value;
      break;
    case "data":
      state.dataLines.push(value);
      break;
    case "id":
      if (!value.includes("\0")) state.lastId = value;
      break;
    default:
      break; // retry and unknown names are skipped
  }
}

/** Parses `text`, the next piece of the stream, and returns the events it completed, in order. */
function feedText(state: SseState, text: string): SseEvent[] {
  if (text === "") return [];
  if (!state.started) {
    state.started = true;
    if (text.startsWith("\uFEFF")) text = text.slice(1);
  }
  if (state.afterCr && text.startsWith("\n")) text = text.slice(1);
  state.afterCr = false;
  if (text === "") return [];

  const out: SseEvent[] = [];
  const buf = state.rest + text;
  let lineStart = 0;
  let i = 0;
  while (i < buf.length) {
    const c = buf.charCodeAt(i);
    if (c === 0x0d /* \r */) {
      processLine(state, buf.slice(lineStart, i), out);
      if (i + 1 === buf.length) {
        state.afterCr = true;
        i += 1;
      } else if (buf.charCodeAt(i + 1) === 0x0a) {
        i += 2;
      } else {
        i += 1;
      }
      lineStart = i;
    } else if (c === 0x0a /* \n */) {
      processLine(state, buf.slice(lineStart, i), out);
      i += 1;
      lineStart = i;
    } else {
      i += 1;
    }
  }
  state.rest = buf.slice(lineStart);
  return out;
}

/**
 * An incremental parser: `feed` it text in any pieces, get back the events those pieces
 * completed (see `feedText`). The events of a stream are the same however it was cut.
 */
export class SseParser {
  readonly #state: SseState = newSseState();

  /** Parses `text` and returns the events it completed, in order. */
  feed(text: string): SseEvent[] {
    return feedText(this.#state, text);
  }
}

/**
 * The events of a byte stream (a `fetch` response body) or of text pieces, each as soon as
 * its empty line has arrived. Bytes are decoded as UTF-8 in streaming mode, so a character
 * split across pieces is decoded whole; invalid bytes become U+FFFD rather than an exception.
 * A reader that stops early stops the source too (its `return` runs).
 */
export async function* parseSse(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent> {
  const parser = new SseParser();
  // ignoreBOM: keep a leading U+FEFF in the text, so that the parser drops exactly the first one.
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  for await (const chunk of chunks) {
    const text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    for (const event of parser.feed(text)) yield event;
  }
  for (const event of parser.feed(decoder.decode())) yield event;
}
