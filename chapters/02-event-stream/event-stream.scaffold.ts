/**
 * Chapter 02 · the event stream — the practice starter.
 *
 * The public class `EventStream` is given: a thin door over one plain state record
 * (`StreamState`), each method one call to a function below. Those functions are the
 * construction sites, each named after its lab. Build them in order: Lab 2.1 pushEvent,
 * nextEvent, claimReader → 2.2 endStream → 2.3 failStream → 2.4 leaveEarly → 2.5
 * watchSignal. Labs 2.2–2.4 also add a line or two to pushEvent and nextEvent (the chapter
 * text says which). Add private helpers as you need them; keep the exports and the
 * signatures of the declarations marked 🔨.
 *
 * Run one lab:  npm run lab -w @pi/course -- 2.1
 *
 * Given as it is (no 🔨): the error class and its code, the options, `StreamState`, `DONE`
 * and the class `EventStream`. `deferred` is chapter 01's.
 */

// scaffold: after EventStream
/** 施工位的错误：消息说出哪个 Lab 来写这段代码。每个 Lab 都做完后没有代码再调用它，删掉或留着都行。 */
function labError(lab: string): Error {
  return new Error(`${lab} 尚未实现`);
}

function pushEvent() {
  // 🔨 Lab 2.1：正文第 3 节（规则在附录 §C3）
  // 🔨 Lab 2.1：Lab 2.2（第 4 节）和 Lab 2.4（第 6 节）还会回到这里，各补一种情况
  void state;
  void event;
  throw labError("Lab 2.1 push and next");
}

function nextEvent() {
  // 🔨 Lab 2.1：正文第 3 节（规则在附录 §C3）
  // 🔨 Lab 2.1：Lab 2.2、2.3、2.4（第 4、5、6 节）还会回到这里，各补一种情况
  void state;
  throw labError("Lab 2.1 push and next");
}

function claimReader() {
  // 🔨 Lab 2.1：正文第 3 节（规则在附录 §C3.4）
  void state;
  throw labError("Lab 2.1 push and next");
}

function endStream() {
  // 🔨 Lab 2.2：正文第 4 节（规则在附录 §C4）
  // 🔨 Lab 2.2：写完再回到 pushEvent 和 nextEvent，各补一种情况（第 4 节的表）
  void state;
  void result;
  throw labError("Lab 2.2 end");
}

function failStream() {
  // 🔨 Lab 2.3：正文第 5 节（规则在附录 §C5）
  // 🔨 Lab 2.3：写完再回到 nextEvent 补一种情况（第 5 节的表）
  void state;
  void error;
  throw labError("Lab 2.3 fail");
}

function leaveEarly() {
  // 🔨 Lab 2.4：正文第 6 节（规则在附录 §C6）
  // 🔨 Lab 2.4：写完再回到 nextEvent 和 pushEvent，各补一种情况（第 6 节的表）
  void state;
  throw labError("Lab 2.4 early exit");
}

function watchSignal() {
  // 🔨 Lab 2.5：正文第 7 节（规则在附录 §C7）。这里只用 stream 的公开方法
  void stream;
  void signal;
  void onAbort;
  throw labError("Lab 2.5 abort");
}
