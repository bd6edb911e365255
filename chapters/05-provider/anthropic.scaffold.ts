/**
 * Chapter 05 · the Anthropic adapter — the practice starter (Labs 5.2–5.4).
 *
 * Given as they are: the wire types, the constants, `anthropicRequest` (the URL and the
 * headers, the key among them), `anthropicFacts`, `readAnthropicEvents` (it hands the events
 * to `translateEvents` and turns anything that throws into a failed turn), `replayThenRest`
 * and `createAnthropicModel`, which joins them over the transport of `provider-http.ts`.
 * The construction sites, each named after its lab: Lab 5.2 toAnthropicMessages and
 * anthropicRequestBody → 5.3 mapStopReason and translateEvents → 5.4 streamError and
 * openAnthropicEvents. Add private helpers as you need them; keep the exports and the
 * signatures of the declarations marked 🔨.
 *
 * Run one lab:  npm run lab -w @pi/course -- 5.2
 *
 * The imports are the reference's: unused ones are fine while you build.
 */

// scaffold: given replayThenRest

// scaffold: after AnthropicModelOptions
/** 施工位的错误：消息说出哪个 Lab 来写这段代码。每个 Lab 都做完后没有代码再调用它，删掉或留着都行。 */
function labError(lab: string): Error {
  return new Error(`${lab} 尚未实现`);
}

/** Our messages as the API's `messages`: see the chapter text, section 4. */
function toAnthropicMessages() {
  // 🔨 Lab 5.2：正文第 4 节的骨架（规则在附录 §C4）
  void messages;
  throw labError("Lab 5.2 request");
}

function anthropicRequestBody() {
  // 🔨 Lab 5.2：正文第 4 节（规则在附录 §C4.1）
  void request;
  void options;
  throw labError("Lab 5.2 request");
}

function mapStopReason() {
  // 🔨 Lab 5.3：正文第 5 节（规则在附录 §C5.4）
  void reason;
  throw labError("Lab 5.3 events to a turn");
}

/** The events of one response as `TurnBuilder` calls, until the turn is finished or failed: see the chapter text, section 5. */
function translateEvents() {
  // 🔨 Lab 5.3：正文第 5 节的骨架（规则在附录 §C5）
  // 🔨 Lab 5.3：error 事件交给 streamError（Lab 5.4）：这一处调用现在就写上，Lab 5.3 的测试不会走到它
  void events;
  void builder;
  void facts;
  throw labError("Lab 5.3 events to a turn");
}

/** The coded error of an `error` event; `early`: it came before any part of the answer (chapter text, section 6). */
function streamError() {
  // 🔨 Lab 5.4：正文第 6 节（规则在附录 §C6.1）
  void data;
  void facts;
  void early;
  throw labError("Lab 5.4 early errors");
}

/** Sends the request once and resolves with the response's events; see the chapter text, section 6. */
function openAnthropicEvents() {
  // 🔨 Lab 5.4：正文第 6 节的骨架（规则在附录 §C6.2、§C6.3）
  void http;
  void transport;
  void attempt;
  throw labError("Lab 5.4 early errors");
}
