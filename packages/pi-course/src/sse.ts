/**
 * Chapter 05 · server-sent events: the wire format model providers stream in.
 *
 * A response body arrives in pieces cut wherever the network pleased: in the middle of a
 * line, between `\r` and `\n`, inside a multi-byte UTF-8 character. The parser below
 * follows the WHATWG event-stream rules, so none of those cuts changes what comes out:
 * the events of a body are the same however it was cut.
 *
 * `SseParser` is a thin door over one plain state record (`SseState`): `feed` hands each
 * piece of text to `feedText`, which splits it into lines and gives each finished line to
 * `takeLine`. `parseSse` turns bytes into text (UTF-8, in streaming mode) and text into
 * events, one piece at a time.
 */

/** One dispatched event. `event` is `"message"` when the stream named none. */
export interface SseEvent {
  event: string;
  data: string;
  /** The last event id seen so far in the stream, when there was one. */
  id?: string;
}

// ── Lab 5.1 · SSE 解码：网络片不是事件 ──

/** Everything the parser keeps from one piece of text to the next. */
interface SseState {
  /** The text after the last line end: a line not finished yet. */
  rest: string;
  /** The last piece ended in `"\r"`: a `"\n"` that opens the next piece belongs to that line end. */
  afterCarriageReturn: boolean;
  /** Some text has been fed: a byte-order mark can only open the stream. */
  started: boolean;
  /** The event being collected: its type (`""` when none was named) and its `data` lines. */
  eventType: string;
  data: string[];
  /** The last event id seen, if any: it stays until an `id` line changes it. */
  lastId: string | undefined;
}

/** The state of a parser that has seen nothing. */
function newSseState(): SseState {
  return { rest: "", afterCarriageReturn: false, started: false, eventType: "", data: [], lastId: undefined };
}

/**
 * Parses `text`, the next piece of the stream, and returns the events it completed, in
 * order. Rules: lines end at `\r\n`, `\n` or `\r`; a leading byte-order mark is dropped;
 * each finished line goes to `takeLine`; what follows the last line end waits for the next
 * piece; an empty line dispatches (`dispatch`). What is left when the stream ends without an
 * empty line is not an event.
 */
function feedText(state: SseState, text: string): SseEvent[] {
  if (text === "") return [];
  if (!state.started) {
    state.started = true;
    if (text.startsWith("\uFEFF")) text = text.slice(1);
  }
  if (state.afterCarriageReturn) {
    // The previous piece ended in "\r": a "\n" right here belongs to that line end.
    state.afterCarriageReturn = false;
    if (text.startsWith("\n")) text = text.slice(1);
  }
  const completed: SseEvent[] = [];
  const buffer = state.rest + text;
  let start = 0;
  for (let i = 0; i < buffer.length; i++) {
    const char = buffer[i];
    if (char !== "\n" && char !== "\r") continue;
    const line = buffer.slice(start, i);
    if (char === "\r") {
      if (i + 1 === buffer.length)
        state.afterCarriageReturn = true; // a "\n" may open the next piece
      else if (buffer[i + 1] === "\n") i++;
    }
    start = i + 1;
    if (line !== "") takeLine(state, line);
    else {
      const event = dispatch(state);
      if (event !== undefined) completed.push(event);
    }
  }
  state.rest = buffer.slice(start);
  return completed;
}

/**
 * One finished line that is not empty: `:` opens a comment; `field: value` loses one space
 * after the colon; a line without a colon is a field with the value `""`; `event`, `data`
 * and `id` are kept, `retry` and unknown fields ignored.
 */
function takeLine(state: SseState, line: string): void {
  if (line.startsWith(":")) return;
  const colon = line.indexOf(":");
  const field = colon === -1 ? line : line.slice(0, colon);
  let value = colon === -1 ? "" : line.slice(colon + 1);
  if (value.startsWith(" ")) value = value.slice(1);
  if (field === "event") state.eventType = value;
  else if (field === "data") state.data.push(value);
  else if (field === "id" && !value.includes("\0")) state.lastId = value;
}

/** The event collected so far (`data` lines joined with `\n`), or none when it has no `data`; either way the next one starts empty. */
function dispatch(state: SseState): SseEvent | undefined {
  const data = state.data;
  const type = state.eventType;
  state.data = [];
  state.eventType = "";
  if (data.length === 0) return undefined;
  const event: SseEvent = { event: type === "" ? "message" : type, data: data.join("\n") };
  if (state.lastId !== undefined) event.id = state.lastId;
  return event;
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
 * The decoder leaves a byte-order mark in the text (`ignoreBOM`): the parser drops the first
 * one, so bytes give the same events as their text.
 * A reader that stops early stops the source too (its `return` runs).
 */
export async function* parseSse(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent> {
  const parser = new SseParser();
  // ignoreBOM: the decoder keeps a leading U+FEFF, so that only the parser drops one (§C3.2).
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  for await (const chunk of chunks) {
    const text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    yield* parser.feed(text);
  }
  yield* parser.feed(decoder.decode());
}
