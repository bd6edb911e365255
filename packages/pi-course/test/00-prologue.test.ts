/**
 * Chapter 00 labs · the prologue. Ten tests in four labs (3, 2, 2, 3); every name starts
 * with its lab id, so one lab runs alone with
 *
 *   node --test --test-name-pattern="Lab 0.1" packages/pi-course/dist/test/00-prologue.test.js
 *
 * Lab 0.1 drives the loop with scripted models and tools written here, so it needs nothing
 * else of the file; Labs 0.2 and 0.3 call the calculator and the model directly; Lab 0.4
 * runs the whole agent. Every check runs under `rule("§C…：…")`, naming the rule of the
 * contract appendix of chapters/00-prologue.md that it checks.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import test from "node:test";
import { fileURLToPath } from "node:url";
import { calculator, formatConversation, main, ruleModel, runToyAgent, type Decision, type Line, type ToyModel, type ToyTool } from "../src/prologue.js";
import { isScaffold, ruleSync as rule } from "./support/rules.js";

// ---------------------------------------------------------------------------
// How a check fails: under the rule it checks
// ---------------------------------------------------------------------------

// ---------------------------------------------------------------------------
// Scripted models and tools for the loop
// ---------------------------------------------------------------------------

interface Scripted {
  model: ToyModel;
  /** A copy of the conversation the model was shown at each ask. */
  seen: Line[][];
}

/** A model that makes `decisions` in order (and answers "（剧本结束）" after them), recording what it was shown. */
function scripted(decisions: readonly Decision[]): Scripted {
  const seen: Line[][] = [];
  const model: ToyModel = (conversation) => {
    seen.push(conversation.map((line) => ({ ...line })));
    return decisions[seen.length - 1] ?? { answer: "（剧本结束）" };
  };
  return { model, seen };
}

/** A model that answers `saw: <text>` once the last line is a tool result, and asks for `tool` until then. */
function askOnce(tool: string, input = "x"): Scripted {
  const seen: Line[][] = [];
  const model: ToyModel = (conversation) => {
    seen.push(conversation.map((line) => ({ ...line })));
    const final = conversation[conversation.length - 1];
    return final?.role === "tool" ? { answer: `saw: ${final.text}` } : { tool, input };
  };
  return { model, seen };
}

/** A model that asks for `calculator("1 + 1")` every time, counting the asks. */
function greedy(): { model: ToyModel; asks: () => number } {
  let asks = 0;
  return {
    model: () => {
      asks++;
      return { tool: "calculator", input: "1 + 1" };
    },
    asks: () => asks,
  };
}

/** A tool that records its inputs and answers `echo:<input>`. */
function echo(): { tool: ToyTool; inputs: string[] } {
  const inputs: string[] = [];
  return {
    tool: (input) => {
      inputs.push(input);
      return `echo:${input}`;
    },
    inputs,
  };
}

const user = (text: string): Line => ({ role: "user", text });
const call = (tool: string, input: string): Line => ({ role: "call", tool, input });
const result = (tool: string, text: string): Line => ({ role: "tool", tool, text });
const assistant = (text: string): Line => ({ role: "assistant", text });

// ---------------------------------------------------------------------------
// Lab 0.1 · 循环：问模型，跑工具，记下结果，再问
// ---------------------------------------------------------------------------

test("Lab 0.1 · 对话按顺序记下：问题、调用、结果、回答", () => {
  const question = " 先喊一声，再喊一声 ";
  const { model, seen } = scripted([{ tool: "echo", input: "hi" }, { tool: "echo", input: " again " }, { answer: "喊完了" }]);
  const { tool, inputs } = echo();
  const run = runToyAgent(question, model, { echo: tool });
  const expected = [
    user(question),
    call("echo", "hi"),
    result("echo", "echo:hi"),
    call("echo", " again "),
    result("echo", "echo: again "),
    assistant("喊完了"),
  ];
  rule("§C4.1：对话从一条 user 行开始，text 就是问题，原样不动", () => {
    assert.deepEqual(run.conversation[0], user(question));
  });
  rule("§C4.3：每个工具请求先记一条 call 行，再记一条 tool 行，tool 行的 text 是工具的返回值；工具收到的 input 原样不动", () => {
    assert.deepEqual(inputs, ["hi", " again "]);
    assert.deepEqual(run.conversation.slice(0, 5), expected.slice(0, 5));
  });
  rule('§C4.2：模型给出 answer 就记一条 assistant 行并结束：{ conversation, answer, stopped: "answered" }', () => {
    assert.deepEqual(run, { conversation: expected, answer: "喊完了", stopped: "answered" });
  });
  rule("§C4.1：每次问模型，都把到此为止的整段对话交给它：上一个工具的结果已经在里面", () => {
    assert.deepEqual(seen, [expected.slice(0, 1), expected.slice(0, 3), expected.slice(0, 5)]);
  });
  rule("§C4.2：有 answer 字段就是回答，空字符串也是", () => {
    const silent = scripted([{ answer: "" }]);
    assert.deepEqual(runToyAgent("q", silent.model, { echo: echo().tool }), { conversation: [user("q"), assistant("")], answer: "", stopped: "answered" });
  });
});

test("Lab 0.1 · 未知工具和抛错的工具都变成 error: 结果，循环继续", () => {
  rule('§C4.4：工具表里没有的名字，结果是 error: unknown tool "<名字>"，不运行任何工具，循环继续', () => {
    const { tool, inputs } = echo();
    const { model, seen } = askOnce("search", "天气");
    const run = runToyAgent("q", model, { echo: tool });
    assert.deepEqual(run.conversation, [
      user("q"),
      call("search", "天气"),
      result("search", 'error: unknown tool "search"'),
      assistant('saw: error: unknown tool "search"'),
    ]);
    assert.deepEqual(inputs, [], "echo 不该被运行");
    assert.equal(seen.length, 2, "模型应当被再问一次，看到错误结果");
  });
  rule("§C4.4：只有工具表自己的属性才是工具：toString、constructor、__proto__ 这些继承来的名字都是未知工具", () => {
    for (const name of ["toString", "constructor", "__proto__", "hasOwnProperty"]) {
      const run = runToyAgent("q", askOnce(name).model, { echo: echo().tool });
      assert.equal(run.answer, `saw: error: unknown tool "${name}"`, name);
    }
  });
  rule("§C4.4：工具抛出 Error 时，结果是 error: 加上它的 message（不带 Error: 前缀），循环继续", () => {
    const boom: ToyTool = () => {
      throw new TypeError("kaput");
    };
    const run = runToyAgent("q", askOnce("boom", "1").model, { boom });
    assert.deepEqual(run.conversation, [user("q"), call("boom", "1"), result("boom", "error: kaput"), assistant("saw: error: kaput")]);
    assert.equal(run.stopped, "answered");
  });
  rule("§C4.4：工具抛出的不是 Error（比如一个字符串）时，结果是 error: 加上 String(它)", () => {
    const odd: ToyTool = () => {
      throw "no power";
    };
    assert.equal(runToyAgent("q", askOnce("odd").model, { odd }).answer, "saw: error: no power");
    const symbolic: ToyTool = () => {
      throw Symbol("x");
    };
    assert.equal(runToyAgent("q", askOnce("symbolic").model, { symbolic }).answer, "saw: error: Symbol(x)", "Symbol 用 String()：模板字符串会对它抛错");
  });
  rule("§C4.4：取不出文字的值也不结束循环：结果恰好是 error: unprintable error", () => {
    for (const [what, thrown] of unprintable()) {
      const odd: ToyTool = () => {
        throw thrown;
      };
      let run: ReturnType<typeof runToyAgent> | undefined;
      assert.doesNotThrow(() => {
        run = runToyAgent("q", askOnce("odd").model, { odd });
      }, `工具抛出${what}：循环不该因此结束`);
      assert.deepEqual(run?.conversation.slice(2), [result("odd", "error: unprintable error"), assistant("saw: error: unprintable error")], `工具抛出${what}`);
    }
  });
});

/** Thrown values whose text cannot be read: String() throws on them, or reading message does, or even instanceof does. */
function unprintable(): [string, unknown][] {
  const revoked = Proxy.revocable(new Error("x"), {});
  revoked.revoke();
  return [
    ["没有原型的对象", Object.create(null)],
    [
      "toString 抛错的对象",
      {
        toString: () => {
          throw new Error("x");
        },
      },
    ],
    [
      "message 是抛错的 getter 的 Error",
      Object.defineProperty(new Error("x"), "message", {
        get: () => {
          throw new Error("x");
        },
      }),
    ],
    ["已撤销的 Proxy（连 instanceof 都抛错）", revoked.proxy],
  ];
}

test("Lab 0.1 · 步数上限：最多问模型 maxSteps 次", () => {
  rule('§C4.5：模型最多被问 maxSteps 次；用完还没回答就返回 { conversation, stopped: "step_limit" }，没有 answer 字段', () => {
    const { model, asks } = greedy();
    const run = runToyAgent("q", model, { calculator: () => "2" }, 3);
    assert.equal(asks(), 3, "应当恰好问 3 次");
    const pair = [call("calculator", "1 + 1"), result("calculator", "2")];
    assert.deepEqual(run, { conversation: [user("q"), ...pair, ...pair, ...pair], stopped: "step_limit" });
    assert.equal(Object.hasOwn(run, "answer"), false, "步数用完时 run 里没有 answer 字段（不是 answer: undefined）");
  });
  rule("§C4.5：不给 maxSteps 时上限是 5", () => {
    const { model, asks } = greedy();
    const run = runToyAgent("q", model, { calculator: () => "2" });
    assert.equal(asks(), 5);
    assert.equal(run.conversation.length, 11);
    assert.equal(run.stopped, "step_limit");
  });
  rule("§C4.5：maxSteps 为 0 时一次也不问，对话只有那条 user 行", () => {
    const { model, asks } = greedy();
    assert.deepEqual(runToyAgent("q", model, { calculator: () => "2" }, 0), { conversation: [user("q")], stopped: "step_limit" });
    assert.equal(asks(), 0);
  });
  rule("§C4.5：回答也占一步：在最后一次被问时回答，照样是 answered", () => {
    const { model } = scripted([{ tool: "echo", input: "1" }, { tool: "echo", input: "2" }, { answer: "好了" }]);
    const run = runToyAgent("q", model, { echo: echo().tool }, 3);
    assert.equal(run.stopped, "answered");
    assert.equal(run.answer, "好了");
    const once = runToyAgent("q", scripted([{ answer: "马上" }]).model, {}, 1);
    assert.deepEqual(once, { conversation: [user("q"), assistant("马上")], answer: "马上", stopped: "answered" });
  });
});

// ---------------------------------------------------------------------------
// Lab 0.2 · 计算器只认“数 运算符 数”
// ---------------------------------------------------------------------------

/**
 * Expects `run` to throw a plain `Error` whose message is exactly `message`. A starter's
 * scaffold error is rethrown as it is: it means "not started", not "accepted".
 */
function refuses(run: () => unknown, message: string, why: string): void {
  assert.throws(
    run,
    (error: unknown) => {
      if (isScaffold(error)) throw error;
      assert.ok(error instanceof Error, `${why}：抛出的应当是 Error，实际是 ${String(error)}`);
      assert.equal(error.name, "Error", `${why}：应当是普通的 Error`);
      assert.equal(error.message, message, why);
      return true;
    },
    `${why}：应当被拒绝（抛出 Error），实际返回了结果`,
  );
}

test("Lab 0.2 · 一步四则运算，结果四舍五入到 12 位有效数字", () => {
  rule("§C5.1：六个运算符 + - * / × ÷，数可以带负号和小数，各部分前后可以有空白", () => {
    const cases: [string, string][] = [
      ["2 + 3", "5"],
      ["10 - 4", "6"],
      ["2 - 5", "-3"],
      ["6 * 7", "42"],
      ["6 × 7", "42"],
      ["7 / 2", "3.5"],
      ["9 ÷ 3", "3"],
      ["-2 * 3", "-6"],
      ["-1.5 - -2.5", "1"],
      ["1.5 * 4", "6"],
      ["2+3", "5"],
      ["  4 *   5  ", "20"],
      ["123456789 * 1000", "123456789000"],
    ];
    for (const [input, expected] of cases) assert.equal(calculator(input), expected, JSON.stringify(input));
  });
  rule("§C5.2：结果先四舍五入到 12 位有效数字，再写成 String(数)：0.1 + 0.2 是 0.3", () => {
    const cases: [string, string][] = [
      ["0.1 + 0.2", "0.3"],
      ["1 / 3", "0.333333333333"],
      ["2 / 3", "0.666666666667"],
      ["0.000001 / 3", "3.33333333333e-7"],
      ["1 - 0.9", "0.1"],
      ["0 * -5", "0"],
    ];
    for (const [input, expected] of cases) assert.equal(calculator(input), expected, JSON.stringify(input));
  });
});

test("Lab 0.2 · 不是“数 运算符 数”的输入和除以零都被拒绝，不 eval", () => {
  rule('§C5.3：别的输入一律抛出 Error，message 是 not an expression of the form "a op b": 加上原样的输入', () => {
    const refused = [
      "process.exit(1)",
      "two plus two",
      "  two plus two  ",
      "",
      "1 + 2 + 3",
      "2 + 3 等于几",
      "算 2 + 3",
      "(2 + 3)",
      "2 ** 3",
      "2 % 3",
      "2 x 3",
      "1e3 + 1",
      ".5 + 1",
      "5. + 1",
      "+2 + 3",
      "2 +",
      "Infinity * 2",
      "１２ + 3",
    ];
    for (const input of refused) {
      refuses(() => calculator(input), `not an expression of the form "a op b": ${input}`, JSON.stringify(input));
    }
  });
  rule("§C5.3：输入从不被当作代码执行", () => {
    const probe = globalThis as { prologueProbe?: unknown };
    delete probe.prologueProbe;
    refuses(() => calculator("globalThis.prologueProbe = 1 + 1"), 'not an expression of the form "a op b": globalThis.prologueProbe = 1 + 1', "代码不是算式");
    assert.equal(probe.prologueProbe, undefined, "输入被执行了");
  });
  rule("§C5.3：除数是 0（/ 或 ÷）时抛出 Error，message 恰好是 division by zero", () => {
    for (const input of ["5 / 0", "5 ÷ 0", "5 / 0.0", "0 / -0"]) refuses(() => calculator(input), "division by zero", input);
    assert.equal(calculator("0 / 5"), "0", "被除数是 0 没有问题");
    assert.equal(calculator("5 * 0"), "0", "乘以 0 没有问题");
  });
});

// ---------------------------------------------------------------------------
// Lab 0.3 · 规则模型：先要工具，见到结果再回答
// ---------------------------------------------------------------------------

/** `lines` frozen, each line too: a model that writes to its conversation throws. */
function frozen(...lines: Line[]): readonly Line[] {
  return Object.freeze(lines.map((line) => Object.freeze(line)));
}

test("Lab 0.3 · 问题里有表达式就请求 calculator，原样交出第一个表达式", () => {
  rule("§C6.4：模型只读对话，不改动它", () => {
    const lines = frozen(user("12 * 7 等于多少？"));
    ruleModel(lines);
    ruleModel(frozen(user("你好"), call("calculator", "1 + 1"), result("calculator", "2")));
    assert.deepEqual(lines, [user("12 * 7 等于多少？")]);
  });
  rule('§C6.2：问题里有“数 运算符 数”，就请求 { tool: "calculator", input: 那一段原样 }', () => {
    const cases: [string, string][] = [
      ["12 * 7 等于多少？", "12 * 7"],
      ["请算 3+4", "3+4"],
      ["-2 × 0.5 是几", "-2 × 0.5"],
      ["9   ÷ 3 呢", "9   ÷ 3"],
      ["10 - 4", "10 - 4"],
      ["1.25 / 5 和 2 * 2", "1.25 / 5"],
      ["先算 1 + 2 + 3", "1 + 2"],
    ];
    for (const [question, input] of cases) assert.deepEqual(ruleModel(frozen(user(question))), { tool: "calculator", input }, question);
  });
  rule("§C6.3：问题里没有表达式，就直接回答：我只会算一步四则运算，比如“12 * 7 等于多少？”。", () => {
    for (const question of ["你好", "十二乘七", "2 的平方", ""]) {
      assert.deepEqual(ruleModel(frozen(user(question))), { answer: "我只会算一步四则运算，比如“12 * 7 等于多少？”。" }, JSON.stringify(question));
    }
  });
});

test("Lab 0.3 · 最后一行是工具结果就回答，错误也照实说", () => {
  const asked = [user("12 * 7 等于多少？"), call("calculator", "12 * 7")];
  rule("§C6.1：最后一行是 tool 行，就回答 答案是 <结果>。", () => {
    assert.deepEqual(ruleModel(frozen(...asked, result("calculator", "84"))), { answer: "答案是 84。" });
    assert.deepEqual(ruleModel(frozen(...asked, result("calculator", "-0.5"))), { answer: "答案是 -0.5。" });
  });
  rule("§C6.1：结果以 error: 开头时，回答 计算失败（<结果>）。", () => {
    assert.deepEqual(ruleModel(frozen(...asked, result("calculator", "error: division by zero"))), { answer: "计算失败（error: division by zero）。" });
    assert.deepEqual(ruleModel(frozen(...asked, result("search", 'error: unknown tool "search"'))), { answer: '计算失败（error: unknown tool "search"）。' });
  });
  rule("§C6.1：只看最后一行：前面失败过、最后一次成功了，回答的是最后的结果", () => {
    const retried = frozen(...asked, result("calculator", "error: busy"), call("calculator", "12 * 7"), result("calculator", "84"));
    assert.deepEqual(ruleModel(retried), { answer: "答案是 84。" });
  });
});

// ---------------------------------------------------------------------------
// Lab 0.4 · 打印对话，main 给出退出码
// ---------------------------------------------------------------------------

/** Runs `main` with `argv` (and `model`), returning what it wrote and its exit status. */
function runMain(argv: readonly string[], model?: ToyModel): { printed: string; status: number } {
  let printed = "";
  const write = (text: string) => {
    printed += text;
  };
  const status = model === undefined ? main(argv, write) : main(argv, write, model);
  return { printed, status };
}

test("Lab 0.4 · 每条一行，按角色打上中文标签", () => {
  rule("§C7.2：标签加两个空格再加内容；call 行写成 工具(input)，tool 行写成 工具 → 结果", () => {
    const lines: Line[] = [user("q"), call("calculator", "1 + 1"), result("calculator", "2"), assistant("a")];
    assert.equal(formatConversation(lines), "用户  q\n调用  calculator(1 + 1)\n结果  calculator → 2\n助手  a");
  });
  rule("§C7.1：一条一行，行与行之间一个换行，最后没有换行；空对话是空字符串", () => {
    assert.equal(formatConversation([]), "");
    assert.equal(formatConversation([assistant("只有一行")]), "助手  只有一行");
    assert.equal(formatConversation([user(""), result("search", 'error: unknown tool "search"')]), '用户  \n结果  search → error: unknown tool "search"');
  });
});

test("Lab 0.4 · main 打印整段对话：回答了退出码是 0，步数用完是 1", () => {
  rule("§C7.3：没有参数时问默认的问题 12 * 7 等于多少？", () => {
    const { printed, status } = runMain([]);
    assert.equal(printed, "用户  12 * 7 等于多少？\n调用  calculator(12 * 7)\n结果  calculator → 84\n助手  答案是 84。\n");
    assert.equal(status, 0);
  });
  rule("§C7.3：参数用一个空格连成问题，再去掉首尾空白；只有空白时也用默认问题", () => {
    assert.equal(runMain(["3", "+", "4", "是多少"]).printed, "用户  3 + 4 是多少\n调用  calculator(3 + 4)\n结果  calculator → 7\n助手  答案是 7。\n");
    assert.equal(runMain(["  你好 "]).printed, "用户  你好\n助手  我只会算一步四则运算，比如“12 * 7 等于多少？”。\n");
    assert.match(runMain([" ", ""]).printed, /^用户 {2}12 \* 7 等于多少？\n/);
  });
  rule("§C7.4：模型回答了就返回 0，计算失败的回答也是回答", () => {
    const { printed, status } = runMain(["5 / 0"]);
    assert.equal(printed, "用户  5 / 0\n调用  calculator(5 / 0)\n结果  calculator → error: division by zero\n助手  计算失败（error: division by zero）。\n");
    assert.equal(status, 0);
  });
  rule("§C7.3：工具表里只有 calculator，换一个模型也一样", () => {
    const { printed } = runMain(["q"], askOnce("search", "天气").model);
    assert.equal(printed, '用户  q\n调用  search(天气)\n结果  search → error: unknown tool "search"\n助手  saw: error: unknown tool "search"\n');
  });
  rule("§C7.4：步数用完（上限 5）时多写一行 停止  达到步数上限，模型没有作答，返回 1", () => {
    const { model, asks } = greedy();
    const { printed, status } = runMain(["q"], model);
    const pair = "调用  calculator(1 + 1)\n结果  calculator → 2\n";
    assert.equal(printed, `用户  q\n${pair.repeat(5)}停止  达到步数上限，模型没有作答\n`);
    assert.equal(status, 1);
    assert.equal(asks(), 5);
  });
});

test("Lab 0.4 · 编译后的 prologue.js 可以直接用 node 运行", () => {
  const script = fileURLToPath(new URL("../src/prologue.js", import.meta.url));
  const run = spawnSync(process.execPath, [script, "6", "*", "7"], { encoding: "utf8" });
  // A construction site that threw in the child is the lab's own "not started", as in-process.
  const scaffold = /Lab 0\.\d+ [^\n]* 尚未实现/.exec(run.stderr ?? "")?.[0];
  if (run.status !== 0 && scaffold !== undefined) throw new Error(scaffold);
  rule("§C7.5：命令行参数就是 main 的 argv，main 的返回值就是进程的退出码", () => {
    assert.equal(run.stdout, "用户  6 * 7\n调用  calculator(6 * 7)\n结果  calculator → 42\n助手  答案是 42。\n", run.stderr);
    assert.equal(run.status, 0, run.stderr);
  });
});
