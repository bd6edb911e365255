/**
 * Chapter 07 · the agent loop — the practice starter.
 *
 * The public types, `LoopError`, `toolSpec` and `TOOL_CALLS_MISSING` are given, and so is the
 * plumbing around the model and the run's state: `RunState`, `addMessage` (adds a message and
 * reports a copy of it), `endRun` (the run's result, as copies), `pairedError` (an error
 * result paired with a call) and `streamTurn` (reads one model turn, reporting its events;
 * a model that breaks its contract gives an error turn). Four functions are the construction
 * sites, each named after its lab: Lab 7.1 runAgentLoop and runTool → 7.2
 * settleUnfinishedTurn → 7.3 stopAborted. Lab 7.2 also adds two cases to runAgentLoop, and Lab
 * 7.3 one to runTool (the chapter text says which). Add private helpers as you need them;
 * keep the exports and the signatures of the declarations marked 🔨.
 *
 * Run one lab:  npm run lab -w @pi/course -- 7.1
 *
 * The imports are the reference's: unused ones are fine while you build.
 */

// scaffold: given RunState, addMessage, endRun, pairedError, streamTurn, brokenTurn

// scaffold: after brokenTurn
/** 施工位的错误：消息说出哪个 Lab 来写这段代码。每个 Lab 都做完后没有代码再调用它，删掉或留着都行。 */
function labError(lab: string): Error {
  return new Error(`${lab} 尚未实现`);
}

function runAgentLoop() {
  // 🔨 Lab 7.1：正文第 3 节的骨架（规则在附录 §C3）
  // 🔨 Lab 7.1：没有跑完的一轮交给 settleUnfinishedTurn（Lab 7.2），中止交给 stopAborted（Lab 7.3）：
  //    这两处调用现在就写上，Lab 7.1 的测试不会走到它们
  // 🔨 Lab 7.1：Lab 7.2（第 4 节）还会回到这里，补两处
  void history;
  void input;
  void config;
  throw labError("Lab 7.1 round trip");
}

function runTool() {
  // 🔨 Lab 7.1：正文第 3 节（规则在附录 §C3.4）：执行器的回答，或一个配对的错误结果
  // 🔨 Lab 7.1：Lab 7.3（第 5 节）还会回到这里，补一种情况
  void executor;
  void call;
  void signal;
  throw labError("Lab 7.1 round trip");
}

function settleUnfinishedTurn() {
  // 🔨 Lab 7.2：正文第 4 节（规则在附录 §C4）
  void run;
  void turn;
  void calls;
  throw labError("Lab 7.2 unfinished turn");
}

function stopAborted() {
  // 🔨 Lab 7.3：正文第 5 节（规则在附录 §C5）
  void run;
  void notStarted;
  throw labError("Lab 7.3 abort");
}
