// @ts-nocheck — a solution of Chapter 05, checked in place of packages/pi-course/src/sse.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 05 · server-sent events — solution B (sse.ts): a learner's, character by
 * character. Each character is either a line end or goes onto the current line; a `\r`
 * ends the line at once and remembers that a `\n` right after it (in this piece or the next)
 * is part of the same line end. Fields are kept in separate state entries; `parseSse` drives
 * the source's iterator by hand and hands it back in a `finally`, with a decoder that leaves
 * the byte-order mark to the parser.
 */

/** One dispatched event. `event` is `"message"` when the stream named none. */
export interface SseEvent {
  event: string;
  data: string;
  /** The last event id seen so far in the stream, when there was one. */
  id?: string;
}

// ── Lab 5.1 · SSE 解码：网络片不是事件 ──

interface SseState {
  /** The text after the last line end: a line not finished yet. */
  rest: string;
  previousWasCR: boolean;
  sawText: boolean;
  eventName: string;
  dataLines: string[];
  hasData: boolean;
  lastEventId: string | null;
}

function newSseState(): SseState {
  return { rest: "", previousWasCR: false, sawText: false, eventName: "", dataLines: [], hasData: false, lastEventId: null };
}

function feedText(state: SseState, text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const char of text) {
    if (!state.sawText) {
      state.sawText = true;
      if (char === "\uFEFF") continue;
    }
    if (char === "\n" && state.previousWasCR) {
      state.previousWasCR = false;
      continue;
    }
    state.previousWasCR = char === "\r";
    if (char === "\r" || char === "\n") {
      const line = state.rest;
      state.rest = "";
      const done = processLine(state, line);
      if (done !== null) events.push(done);
    } else {
      state.rest += char;
    }
  }
  return events;
}

function processLine(state: SseState, line: string): SseEvent | null {
  if (line === "") {
    if (!state.hasData) {
      state.eventName = "";
      return null;
    }
    const event: SseEvent = { event: state.eventName === "" ? "message" : state.eventName, data: state.dataLines.join("\n") };
    if (state.lastEventId !== null) event.id = state.lastEventId;
    state.eventName = "";
    state.dataLines = [];
    state.hasData = false;
    return event;
  }
  if (line[0] === ":") return null;
  let field = line;
  let value = "";
  const index = line.indexOf(":");
  if (index >= 0) {
    field = line.slice(0, index);
    value = line.slice(index + 1);
    if (value[0] === " ") value = value.slice(1);
  }
  if (field === "event") {
    state.eventName = value;
  } else if (field === "data") {
    state.dataLines.push(value);
    state.hasData = true;
  } else if (field === "id") {
    if (value.indexOf("\u0000") === -1) state.lastEventId = value;
  }
  return null;
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

export async function* parseSse(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  const parser = new SseParser();
  const iterator = chunks[Symbol.asyncIterator]();
  try {
    while (true) {
      const next = await iterator.next();
      if (next.done) break;
      const text = next.value instanceof Uint8Array ? decoder.decode(next.value, { stream: true }) : next.value;
      const events = parser.feed(text);
      for (const event of events) yield event;
    }
    const tail = parser.feed(decoder.decode());
    for (const event of tail) yield event;
  } finally {
    await iterator.return?.();
  }
}
