/**
 * Chapter 03 · the message IR — the practice starter.
 *
 * The types are given: every later chapter speaks in them, so their names and fields are
 * fixed. The five functions at the bottom are the labs, each a construction site named after
 * its lab: Lab 3.1 text() → Lab 3.2 textOf() → Lab 3.3 userMessage() → Lab 3.4 toolResult()
 * → Lab 3.5 transcriptProblem(). Keep their exports and signatures (the tests and the later
 * chapters call them); add private helpers if you like.
 *
 * Run one lab:  npm run lab -w @pi/course -- 3.1
 *
 * What the functions must do is in the chapter text: the lesson (sections 3–7) explains each
 * lab, the contract appendix (§C1–§C7) states every rule a test checks.
 */

// scaffold: after TranscriptProblem
/** The scaffold's "not built yet" error: its message names the lab that builds the code. 每个 Lab 都做完后没有代码再调用它，删掉或留着都行。 */
function labError(lab: string): Error {
  return new Error(`${lab} 尚未实现`);
}

/** Wraps a string as a text block, the smallest piece of a message. */
function text() {
  // 🔨 Lab 3.1：在这里写 text()。讲解在正文第 3 节，规则在附录 §C3 和 §C1。
  void value;
  throw labError("Lab 3.1 text block");
}

/** The text of a message as one string, for the places that want a single piece of text. */
function textOf() {
  // 🔨 Lab 3.2：在这里写 textOf()。讲解在正文第 4 节，规则在附录 §C4。
  void message;
  throw labError("Lab 3.2 textOf");
}

/** The message for what the user typed, with the time it was written. */
function userMessage() {
  // 🔨 Lab 3.3：在这里写 userMessage()，用上 Lab 3.1 的 text()。讲解在正文第 5 节，规则在附录 §C5 和 §C1。
  void value;
  void timestamp;
  throw labError("Lab 3.3 user message");
}

/** The result message answering `call` with what running its tool gave. */
function toolResult() {
  // 🔨 Lab 3.4：在这里写 toolResult()。讲解在正文第 6 节，规则在附录 §C6 和 §C1。
  void call;
  void outcome;
  void timestamp;
  throw labError("Lab 3.4 tool result");
}

/** Where a conversation first breaks the pairing of tool calls and results, or `undefined` when nothing does. */
function transcriptProblem() {
  // 🔨 Lab 3.5：在这里写 transcriptProblem()。讲解在正文第 7 节，规则在附录 §C7。
  void messages;
  throw labError("Lab 3.5 transcript check");
}
