/**
 * Chapter 06 · tools: schemas, a registry and the executor — the practice starter.
 *
 * The executor is the one place a `ToolCall` becomes a `ToolResultMessage`. Its
 * guarantee is pairing: whatever goes wrong, the caller gets exactly one result carrying
 * the call's id and name, never an exception. A tool runs only with arguments its schema
 * accepted, and never once the run was aborted.
 *
 * Given as it is (no 🔨): the error class and its codes, the interfaces, the leaf
 * validators (`stringValue`, `numberValue`, `booleanValue`, `optional`) and their helper
 * `invalid`, `objectSchema` (its `jsonSchema`; its `parse` calls `parseObject`), the
 * registry's constructor and its map, `createToolExecutor` (it calls `executeCall`), the
 * helper `errorResult` and the marker `STOPPED`. The construction sites are named after
 * their labs. Build them in order: Lab 6.1 parseObject → 6.2 the methods of ToolRegistry →
 * 6.3 executeCall → 6.4 untilStopped. Add private helpers as you need them; keep the exports
 * and the signatures of the declarations marked 🔨.
 *
 * Run one lab:  npm run lab -w @pi/course -- 6.1
 *
 * `isPlainObject` and `errorMessage` are chapter 01's; `abortReason` and `tick` too.
 */

// scaffold: given errorResult, STOPPED

// scaffold: after objectSchema
/** 施工位的错误：消息说出哪个 Lab 来写这段代码。每个 Lab 都做完后没有代码再调用它，删掉或留着都行。 */
function labError(lab: string): Error {
  return new Error(`${lab} 尚未实现`);
}

function parseObject() {
  // 🔨 Lab 6.1：正文第 3 节的骨架（规则在附录 §C3）。invalid、isOptional 和第 01 章的 isPlainObject 直接用
  void shape;
  void value;
  void path;
  throw labError("Lab 6.1 object schema");
}

class ToolRegistry {
  // 🔨 Lab 6.2：register、unregister、get、list 四处都要写。正文第 4 节，规则见附录 §C4；#tools 和构造函数已经给出
  readonly #tools;

  constructor() {
    for (const tool of tools) this.register(tool);
  }

  register() {
    // 🔨 Lab 6.2：register（§C4.1、§C4.2）
    void tool;
    void this.#tools;
    throw labError("Lab 6.2 registry");
  }

  unregister() {
    // 🔨 Lab 6.2：unregister（§C4.3；第 4 节的预测问的就是它）
    void name;
    void tool;
    throw labError("Lab 6.2 registry");
  }

  get() {
    void name;
    throw labError("Lab 6.2 registry");
  }

  list() {
    throw labError("Lab 6.2 registry");
  }
}

function executeCall() {
  // 🔨 Lab 6.3：正文第 5 节的骨架（规则在附录 §C5）。errorResult 直接用；有 signal 时交给 untilStopped（Lab 6.4），这一行现在就写上
  void registry;
  void call;
  void signal;
  void errorMessage;
  void abortReason;
  void STOPPED;
  throw labError("Lab 6.3 executor");
}

/**
 * How `work` settled (its value, or a rejection with its error), or `STOPPED` when the
 * abort was observed first. When an abort counts as observed is the chapter text's
 * section 6 (contract §C6.2).
 */
function untilStopped() {
  // 🔨 Lab 6.4：正文第 6 节的骨架（规则在附录 §C6）
  void work;
  void signal;
  void tick;
  throw labError("Lab 6.4 abort");
}
