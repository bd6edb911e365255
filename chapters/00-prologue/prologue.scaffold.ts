/**
 * Chapter 00 · prologue: a whole agent on one screen — the practice starter.
 *
 * The types and the exported signatures are fixed (the tests call them); every function is
 * a construction site named after its lab. Build them in order: Lab 0.1 the loop → 0.2 the
 * calculator → 0.3 the rule model → 0.4 printing and `main`. Add private helpers as you need
 * them; keep the exports and the signatures of the functions marked 🔨.
 *
 * Run one lab:  npm run lab -w @pi/course -- 0.1
 *
 * The last statement of the file is given: it lets `node` run the compiled file directly,
 *
 *     npm run build -w @pi/course
 *     node packages/pi-course/dist/src/prologue.js "12 * 7 等于多少？"
 */

// scaffold: after ToyRun
/** The scaffold's "not built yet" error: its message names the lab that builds the code. */
function labError(lab: string): Error {
  return new Error(`${lab} 尚未实现`);
}

function runToyAgent() {
  // 🔨 Lab 0.1 · 循环：正文第 4 节讲它，附录 §C4 是它的规则。
  void question;
  void model;
  void tools;
  void maxSteps;
  throw labError("Lab 0.1 agent loop");
}

function calculator() {
  // 🔨 Lab 0.2 · 计算器：正文第 5 节讲它，附录 §C5 是它的规则。
  void input;
  throw labError("Lab 0.2 calculator");
}

const ruleModel = () => {
  // 🔨 Lab 0.3 · 规则模型：正文第 6 节讲它，附录 §C6 是它的规则。
  void conversation;
  throw labError("Lab 0.3 rule model");
};

function formatConversation() {
  // 🔨 Lab 0.4 · 打印对话：正文第 7 节讲它，附录 §C7.1、§C7.2 是它的规则。
  void conversation;
  throw labError("Lab 0.4 print and main");
}

function main() {
  // 🔨 Lab 0.4 · main：正文第 7 节讲它，附录 §C7.3 到 §C7.5 是它的规则。
  void argv;
  void write;
  void model;
  throw labError("Lab 0.4 print and main");
}
