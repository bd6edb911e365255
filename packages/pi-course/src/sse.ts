/**
 * Chapter 05 · server-sent events: the wire format model providers stream in.
 *
 * A response body arrives in chunks cut wherever the network pleased: in the middle of a
 * line, between `\r` and `\n`, inside a multi-byte UTF-8 character. The parser below
 * follows the WHATWG event-stream rules, so none of those cuts changes what comes out:
 * the events of a body are the same however it was chunked.
 */

/** One dispatched event. `event` is `"message"` when the stream named none. */
export interface SseEvent {
  event: string;
  data: string;
  /** The last event id seen so far in the stream, when there was one. */
  id?: string;
}

/**
 * An incremental parser: `feed` it text in any pieces, get back the events those pieces
 * completed. Rules: lines end at `\r\n`, `\n` or `\r`; an empty line dispatches; a line
 * starting with `:` is a comment; `field: value` loses one space after the colon; several
 * `data` lines join with `\n`; an event with no `data` is not dispatched; `retry` and
 * unknown fields are ignored; a leading byte-order mark is dropped. What is left when the
 * stream ends without an empty line is not an event (as the standard says).
 */
export class SseParser {
  #buffer = "";
  #skipLineFeed = false;
  #started = false;
  #eventType = "";
  #data: string[] = [];
  #lastId: string | undefined;

  /** Parses `text` and returns the events it completed, in order. */
  feed(text: string): SseEvent[] {
    if (text === "") return [];
    if (!this.#started) {
      this.#started = true;
      if (text.startsWith("\uFEFF")) text = text.slice(1);
    }
    if (this.#skipLineFeed) {
      // The previous chunk ended in "\r": a "\n" right here belongs to that line end.
      this.#skipLineFeed = false;
      if (text.startsWith("\n")) text = text.slice(1);
    }
    const events: SseEvent[] = [];
    this.#buffer += text;
    let start = 0;
    for (let i = 0; i < this.#buffer.length; i++) {
      const char = this.#buffer[i];
      if (char !== "\n" && char !== "\r") continue;
      const line = this.#buffer.slice(start, i);
      if (char === "\r") {
        if (i + 1 === this.#buffer.length)
          this.#skipLineFeed = true; // a "\n" may start the next chunk
        else if (this.#buffer[i + 1] === "\n") i++;
      }
      start = i + 1;
      const event = this.#line(line);
      if (event !== undefined) events.push(event);
    }
    this.#buffer = this.#buffer.slice(start);
    return events;
  }

  #line(line: string): SseEvent | undefined {
    if (line === "") return this.#dispatch();
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.#eventType = value;
    else if (field === "data") this.#data.push(value);
    else if (field === "id" && !value.includes("\0")) this.#lastId = value;
    return undefined;
  }

  #dispatch(): SseEvent | undefined {
    const data = this.#data;
    const type = this.#eventType;
    this.#data = [];
    this.#eventType = "";
    if (data.length === 0) return undefined;
    const event: SseEvent = { event: type === "" ? "message" : type, data: data.join("\n") };
    if (this.#lastId !== undefined) event.id = this.#lastId;
    return event;
  }
}

/**
 * The events of a byte stream (a `fetch` response body) or of text chunks. Bytes are
 * decoded as UTF-8 in streaming mode, so a character split across chunks is decoded
 * whole; invalid bytes become U+FFFD rather than an exception.
 */
export async function* parseSse(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent> {
  const parser = new SseParser();
  const decoder = new TextDecoder("utf-8");
  for await (const chunk of chunks) {
    const text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    yield* parser.feed(text);
  }
  yield* parser.feed(decoder.decode());
}
