/**
 * Chapter 05 · server-sent events — the practice starter (Lab 5.1).
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

// scaffold: after SseEvent
/** 施工位的错误：消息说出哪个 Lab 来写这段代码。Lab 做完后没有代码再调用它，删掉或留着都行。 */
function labError(lab: string): Error {
  return new Error(`${lab} 尚未实现`);
}

// 🔨 Lab 5.1：解析器从一片文字到下一片要记住的一切（正文第 3 节）。
//    先给了一项；别的字段由你决定，写在它下面。
interface SseState {
  /** 最后一个行尾之后的文字：还没有结束的那一行。 */
  rest: string;
}

function newSseState() {
  // 🔨 Lab 5.1：一个什么都还没读到的解析器
  throw labError("Lab 5.1 SSE decoding");
}

/** Parses `text`, the next piece of the stream, and returns the events it completed, in order. */
function feedText() {
  // 🔨 Lab 5.1：正文第 3 节的骨架（规则在附录 §C3）
  void state;
  void text;
  throw labError("Lab 5.1 SSE decoding");
}

function parseSse() {
  // 🔨 Lab 5.1：正文第 3 节（规则在附录 §C3.5、§C3.6）：字节先解码成文字，再交给一个 SseParser
  void chunks;
  throw labError("Lab 5.1 SSE decoding");
}
