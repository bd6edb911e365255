import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import test from "node:test";
import { fileURLToPath } from "node:url";
import { calculator, formatConversation, main, ruleModel, runToyAgent, type Line, type ToyModel } from "../src/prologue.js";

test("Lab 0.1 · 模型先请求工具，工具结果回到对话里，模型再作答", () => {
  const run = runToyAgent("12 * 7 等于多少？", ruleModel, { calculator });
  assert.equal(run.stopped, "answered");
  assert.equal(run.answer, "答案是 84。");
  assert.deepEqual(run.conversation, [
    { role: "user", text: "12 * 7 等于多少？" },
    { role: "call", tool: "calculator", input: "12 * 7" },
    { role: "tool", tool: "calculator", text: "84" },
    { role: "assistant", text: "答案是 84。" },
  ]);
});

test("Lab 0.1 · 没有表达式时模型直接回答，不调用工具", () => {
  const run = runToyAgent("你好", ruleModel, { calculator });
  assert.equal(run.stopped, "answered");
  assert.equal(run.conversation.length, 2);
  assert.equal(run.conversation[1]!.role, "assistant");
});

test("Lab 0.2 · 未知工具和抛错的工具都变成结果，模型能看到并收尾", () => {
  const askFor =
    (tool: string): ToyModel =>
    (conversation) =>
      conversation.at(-1)?.role === "tool" ? { answer: `saw: ${(conversation.at(-1) as { text: string }).text}` } : { tool, input: "x" };
  const unknown = runToyAgent("q", askFor("nope"), { calculator });
  assert.equal(unknown.answer, 'saw: error: unknown tool "nope"');
  const inherited = runToyAgent("q", askFor("toString"), { calculator });
  assert.equal(inherited.answer, 'saw: error: unknown tool "toString"', "只认自己的工具表，不认原型链上的名字");
  const throwing = runToyAgent("q", askFor("boom"), {
    boom: () => {
      throw new Error("kaput");
    },
  });
  assert.equal(throwing.answer, "saw: error: kaput");
  const divide = runToyAgent("1 / 0 是多少", ruleModel, { calculator });
  assert.equal(divide.answer, "计算失败（error: division by zero）。");
});

test("Lab 0.2 · 一直要工具的模型在步数上限处停下", () => {
  let asked = 0;
  const greedy: ToyModel = () => {
    asked++;
    return { tool: "calculator", input: "1 + 1" };
  };
  const run = runToyAgent("q", greedy, { calculator }, 3);
  assert.equal(run.stopped, "step_limit");
  assert.equal(run.answer, undefined);
  assert.equal(asked, 3);
  assert.equal(run.conversation.filter((line) => line.role === "tool").length, 3, "每次调用都有结果");
});

test("Lab 0.3 · calculator 只做一步四则运算，不 eval", () => {
  const cases: [string, string][] = [
    ["2 + 3", "5"],
    ["10 - 4", "6"],
    ["6 × 7", "42"],
    ["9 ÷ 3", "3"],
    ["0.1 + 0.2", "0.3"],
    ["-2 * 3", "-6"],
    ["7 / 2", "3.5"],
  ];
  for (const [input, expected] of cases) assert.equal(calculator(input), expected, input);
  for (const bad of ["process.exit(1)", "two plus two", ""]) assert.throws(() => calculator(bad), /not an expression/, bad);
  assert.throws(() => calculator("5 / 0"), /division by zero/);
});

test("Lab 0.3 · 对话按角色打上中文标签，main 打印并以 0 退出", () => {
  const lines: Line[] = [
    { role: "user", text: "q" },
    { role: "call", tool: "calculator", input: "1 + 1" },
    { role: "tool", tool: "calculator", text: "2" },
    { role: "assistant", text: "a" },
  ];
  assert.equal(formatConversation(lines), "用户  q\n调用  calculator(1 + 1)\n结果  calculator → 2\n助手  a");
  let printed = "";
  assert.equal(
    main([], (t) => (printed += t)),
    0,
  );
  assert.match(printed, /^用户  12 \* 7 等于多少？\n调用  calculator\(12 \* 7\)\n结果  calculator → 84\n助手  答案是 84。\n$/);
  printed = "";
  assert.equal(
    main(["3", "+", "4"], (t) => (printed += t)),
    0,
  );
  assert.match(printed, /答案是 7。/);
});

test("Lab 0.3 · 编译后的 prologue.js 可以直接用 node 运行", () => {
  const script = fileURLToPath(new URL("../src/prologue.js", import.meta.url));
  const run = spawnSync(process.execPath, [script, "6 * 7"], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /结果  calculator → 42\n助手  答案是 42。/);
});
