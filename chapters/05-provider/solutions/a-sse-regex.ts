// @ts-nocheck — a solution of Chapter 05, checked in place of packages/pi-course/src/sse.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 05 · server-sent events — solution A (sse.ts): a regular expression finds the line
 * ends in what has arrived; a `\r` that ends a piece is a line end at once, and a flag eats
 * the `\n` that may open the next piece. The event being collected is one object that a
 * dispatch swaps for a fresh one. `parseSse` asks the decoder to keep a byte-order mark (`ignoreBOM`),
 * so that only the parser drops one.
 */

/** One dispatched event. `event` is `"message"` when the stream named none. */
export interface SseEvent {
  event: string;
  data: string;
  /** The last event id seen so far in the stream, when there was one. */
  id?: string;
}

// ── Lab 5.1 · SSE 解码：网络片不是事件 ──

/** What the parser keeps between pieces. */
interface SseState {
  /** The text after the last line end: a line not finished yet. */
  rest: string;
  /** Eat one "\n" at the start of the next piece: the last piece ended in "\r". */
  eatNewline: boolean;
  /** Nothing but empty pieces so far. */
  fresh: boolean;
  collecting: { type?: string; lines: string[] };
  id?: string;
}

const LINE_END = /\r\n|\r|\n/g;

function newSseState(): SseState {
  return { rest: "", eatNewline: false, fresh: true, collecting: { lines: [] } };
}

function feedText(state: SseState, text: string): SseEvent[] {
  if (text.length === 0) return [];
  let piece = text;
  if (state.fresh) {
    state.fresh = false;
    if (piece.charCodeAt(0) === 0xfeff) piece = piece.substring(1);
  }
  if (state.eatNewline) {
    state.eatNewline = false;
    if (piece[0] === "\n") piece = piece.substring(1);
  }
  const all = state.rest + piece;
  const out: SseEvent[] = [];
  let from = 0;
  LINE_END.lastIndex = 0;
  for (let match = LINE_END.exec(all); match !== null; match = LINE_END.exec(all)) {
    const end = match.index + match[0].length;
    if (match[0] === "\r" && end === all.length) state.eatNewline = true;
    const event = lineOf(state, all.substring(from, match.index));
    if (event) out.push(event);
    from = end;
  }
  state.rest = all.substring(from);
  return out;
}

/** One line: a field, a comment, or the empty line that dispatches. */
function lineOf(state: SseState, line: string): SseEvent | undefined {
  if (line.length === 0) {
    const { type, lines } = state.collecting;
    state.collecting = { lines: [] };
    if (lines.length === 0) return undefined;
    return { event: type || "message", data: lines.join("\n"), ...(state.id === undefined ? {} : { id: state.id }) };
  }
  const colon = line.indexOf(":");
  if (colon === 0) return undefined;
  const name = colon < 0 ? line : line.substring(0, colon);
  const raw = colon < 0 ? "" : line.substring(colon + 1);
  const value = raw.charAt(0) === " " ? raw.substring(1) : raw;
  switch (name) {
    case "data":
      state.collecting.lines.push(value);
      break;
    case "event":
      state.collecting.type = value;
      break;
    case "id":
      if (!value.includes("\u0000")) state.id = value;
      break;
  }
  return undefined;
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
  for await (const chunk of chunks) {
    for (const event of parser.feed(typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true }))) yield event;
  }
  for (const event of parser.feed(decoder.decode())) yield event;
}
