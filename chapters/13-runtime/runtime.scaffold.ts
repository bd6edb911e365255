/**
 * Chapter 13 · the runtime — the practice starter.
 *
 * The public types and the exported functions are fixed (the tests and `npm start` use
 * them); every lab's function is a construction site named after its lab. Build them in
 * order: Lab 13.1 skill catalog → 13.2 load_skill → 13.3 user commands → 13.4 startup →
 * 13.5 one turn → 13.6 reload. Add private helpers as you need them; keep the exports and
 * the signatures of the functions marked 🔨 (the labs call them, and so does the fault
 * exercise).
 *
 * Run one lab:  npm run build -w @pi/course, then
 *   node --test --test-name-pattern="Lab 13.1" packages/pi-course/dist/test/13-runtime.test.js
 *
 * You write this file only. The declarations without a 🔨 mark are given: they are the
 * reference's own code (reading the disable-model-invocation flag, listing a skill's
 * files and the extension files, checking options, the queue that runs calls one after another, the default core
 * tools), so that the labs are about how the parts meet, not about plumbing. Chapter 12's
 * `resources.ts` beside this file is the finished reference: use its functions.
 */
// The imports below are the tools the reference uses; unused ones are fine while you build.

// scaffold: given DEFAULT_MAX_CATALOG_BYTES, DEFAULT_MAX_TURNS, DEFAULT_HOOK_TIMEOUT_MS, messageOf
// scaffold: given skillFilesOf, extensionSourcesOf, checkOptions, resolveRoots, serialized, defaultTools

// scaffold: after serialized
/** The scaffold's "not built yet" error: its message names the lab that builds the code. */
function labError(lab: string): Error {
  return new Error(`${lab} 尚未实现`);
}

// scaffold: before buildSkillCatalog
// 🔨 Lab 13.1（第 3 节）：在这里写一个 helper，把一个名字或描述压成一行（§C3.3）。

function buildSkillCatalog() {
  // 🔨 Lab 13.1（第 3 节的骨架，契约 §C3）：建出清单；hiddenFromModel() 已经写好，直接用
  void catalog;
  void options;
  throw labError("Lab 13.1 skill catalog");
}

// scaffold: before skillLoadError
// 🔨 Lab 13.2（第 4 节）：在这里写 load_skill 的参数 schema（§C4.1、§C4.2）、给名字和路径加引号的 helper（§C4.7）
//    和读文件时的错误翻译（§C4.6）。

function skillLoadError() {
  // 🔨 Lab 13.2（第 4 节，契约 §C4.6、§C4.7）：把第 12 章的错误翻译成模型可以看的错误，返回它
  void error;
  void name;
  throw labError("Lab 13.2 load_skill");
}

function createLoadSkillTool() {
  // 🔨 Lab 13.2（第 4 节的骨架，契约 §C4）：返回 load_skill 工具；skillFilesOf() 已经写好，直接用
  void options;
  throw labError("Lab 13.2 load_skill");
}

// scaffold: before expandInput
// 🔨 Lab 13.3（第 5 节）：建议在这里为 /skill: 和 /template: 各写一个 helper。

function expandInput() {
  // 🔨 Lab 13.3（第 5 节的骨架和判断表，契约 §C5）：展开用户的命令
  void input;
  void resources;
  void options;
  throw labError("Lab 13.3 user commands");
}

function loadState() {
  // 🔨 Lab 13.4（第 6 节的顺序表和骨架，契约 §C6.1–§C6.5）：按启动的顺序建出一份完整的状态
  void setup;
  void importModule;
  throw labError("Lab 13.4 runtime startup");
}

function createRuntime() {
  // 🔨 Lab 13.4（第 6 节，契约 §C6.6、§C6.7）：启动，返回 Runtime；checkOptions、resolveRoots、serialized 已经写好
  void options;
  throw labError("Lab 13.4 runtime startup");
}

function runTurn() {
  // 🔨 Lab 13.5（第 7 节的流水线和骨架，契约 §C7）：跑一轮；buildContext 和 runAgentLoop 已经写好，不要改它们
  void core;
  void input;
  void promptOptions;
  throw labError("Lab 13.5 runtime turn");
}

// scaffold: before reloadRuntime
// 🔨 Lab 13.6（第 8 节）：在这里写每次 import 出新模块实例的 helper（§C8.4）和比较两个状态的 helper（§C8.3）。

function reloadRuntime() {
  // 🔨 Lab 13.6（第 8 节的骨架，契约 §C8）：在旁边建一份新状态，只在不丢掉正在运行的东西时换上
  void core;
  throw labError("Lab 13.6 runtime reload");
}
