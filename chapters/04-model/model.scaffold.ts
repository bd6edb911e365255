/**
 * Chapter 04 · the model contract — the practice starter.
 *
 * What a model is, to the agent: a function from a request to a stream of assistant events
 * that ends in one finished turn. It never throws and its stream never fails: a failure is a
 * turn too, with `stopReason` `"error"` or `"aborted"` and an `errorMessage`.
 *
 * Given as it is (no 🔨): the types, `ModelError`, the state record `TurnState`, the class
 * `TurnBuilder` (a thin door: each method checks that the stream is still open and calls one
 * function below) and `finalTurn`. The functions behind the door are the construction sites,
 * each named after its lab. Build them in order: Lab 4.1 the text blocks (startTextBlock,
 * appendTextDelta, endOpenBlock, closeOpenBlock, finishTurn, assembleTurn) → 4.2 the tool
 * calls (startToolCallBlock, appendArgumentText, endToolCall, closeToolCall, parseArguments)
 * → 4.3 the turn of a failure or an abort (brokenTurn, failTurn, abortedTurn). Add private
 * helpers as you need them; keep the exports and the signatures of the declarations marked 🔨.
 *
 * Run one lab:  npm run lab -w @pi/course -- 4.1
 *
 * The scripted model of `scripted-model.ts` (given too) drives this builder in the chapter's
 * examples: it plays a script one builder call at a time.
 */

// scaffold: after TurnBuilder
/** 施工位的错误：消息说出哪个 Lab 来写这段代码。每个 Lab 都做完后没有代码再调用它，删掉或留着都行。 */
function labError(lab: string): Error {
  return new Error(`${lab} 尚未实现`);
}

/** Finishes the open block, then opens a text block at the next position of the message and emits `text_start`. */
function startTextBlock() {
  // 🔨 Lab 4.1：正文第 3 节（规则在附录 §C3）
  void state;
  void stream;
  throw labError("Lab 4.1 text blocks");
}

/** Appends `delta` to the open text block and emits it, opening a text block first when none is open; `""` emits nothing. */
function appendTextDelta() {
  // 🔨 Lab 4.1：正文第 3 节（规则在附录 §C3.1）
  void state;
  void stream;
  void delta;
  throw labError("Lab 4.1 text blocks");
}

/** `endBlock()`: a text block closes at once; a tool call goes to `endToolCall`, which may have to wait (Lab 4.2). */
function endOpenBlock() {
  // 🔨 Lab 4.1：正文第 3 节（规则在附录 §C3.2）
  void state;
  void stream;
  throw labError("Lab 4.1 text blocks");
}

/**
 * Closes the open block for good, if any: a text block joins the message and emits `text_end`
 * with its whole text; a tool call is closed by `closeToolCall` (Lab 4.2). `cutOff`: the turn
 * ended at the output limit right after this block.
 */
function closeOpenBlock() {
  // 🔨 Lab 4.1：正文第 3 节（规则在附录 §C3.2）
  void state;
  void stream;
  void cutOff;
  throw labError("Lab 4.1 text blocks");
}

/** `finish()`: closes the open block (a cut-off call of a `length` turn gets `{}`) and ends the stream with the finished turn. */
function finishTurn() {
  // 🔨 Lab 4.1：正文第 3 节（规则在附录 §C3.3）
  void state;
  void stream;
  void stopReason;
  throw labError("Lab 4.1 text blocks");
}

/** The turn of the finished blocks: the message, why it stopped, the usage. The builder never touches them once the turn is out, so a copy is optional. */
function assembleTurn() {
  // 🔨 Lab 4.1：正文第 3 节（规则在附录 §C3.3）
  void state;
  void stopReason;
  throw labError("Lab 4.1 text blocks");
}

/** Finishes the open block, then opens a tool call block at the next position and emits `toolcall_start`. */
function startToolCallBlock() {
  // 🔨 Lab 4.2：正文第 4 节（规则在附录 §C4.1）
  void state;
  void stream;
  void id;
  void name;
  throw labError("Lab 4.2 tool calls");
}

/** Appends raw argument text to the open tool call and emits it; `""` emits nothing. No tool call open (or its block ended): `TURN_BUILDER_MISUSE`. */
function appendArgumentText() {
  // 🔨 Lab 4.2：正文第 4 节（规则在附录 §C4.1、§C4.4）
  void state;
  void stream;
  void delta;
  throw labError("Lab 4.2 tool calls");
}

/** `endBlock()` on a tool call: arguments that parse close it; arguments that do not only mark it ended, and what comes next decides. */
function endToolCall() {
  // 🔨 Lab 4.2：正文第 4 节（规则在附录 §C4.3）
  void state;
  void stream;
  void open;
  throw labError("Lab 4.2 tool calls");
}

/**
 * Closes the open tool call for good: the call joins the message and `toolcall_end` carries a
 * copy of it. Arguments that do not parse throw their `TOOL_ARGUMENTS_INVALID`, unless the
 * turn was cut off right after this block (`cutOff`): then the call keeps arguments `{}`.
 */
function closeToolCall() {
  // 🔨 Lab 4.2：正文第 4 节（规则在附录 §C4.2、§C4.3、§C4.5）
  void state;
  void stream;
  void open;
  void cutOff;
  throw labError("Lab 4.2 tool calls");
}

/** The arguments as an object (no text at all means `{}`), or the `TOOL_ARGUMENTS_INVALID` error saying why not. */
function parseArguments() {
  // 🔨 Lab 4.2：正文第 4 节（规则在附录 §C4.2、§C4.3）
  void toolName;
  void json;
  throw labError("Lab 4.2 tool calls");
}

/**
 * The turn of a failure (`error`) or an abort (`aborted`): the finished blocks, then the text
 * of an open text block if it has any (an open tool call is dropped), with `errorMessage` and,
 * when given, a copy of `failure`.
 */
function brokenTurn() {
  // 🔨 Lab 4.3：正文第 5 节（规则在附录 §C5.2、§C5.3）
  void state;
  void stopReason;
  void message;
  void failure;
  throw labError("Lab 4.3 failed turn");
}

/** `fail()`: the stream ends, it does not fail: the failure is the turn `result()` gives. */
function failTurn() {
  // 🔨 Lab 4.3：正文第 5 节（规则在附录 §C5.1）
  void state;
  void stream;
  void message;
  void stopReason;
  void failure;
  throw labError("Lab 4.3 failed turn");
}

/** The stream's `onAbort`: the turn an abort ends it with, its message saying why. */
function abortedTurn() {
  // 🔨 Lab 4.3：正文第 5 节（规则在附录 §C5.4）
  void state;
  void reason;
  throw labError("Lab 4.3 failed turn");
}
