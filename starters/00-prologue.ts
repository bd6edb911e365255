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
import path from "node:path";
import { fileURLToPath } from "node:url";

/** One line of the conversation. A `tool` line is the answer to the `call` line just before it. */
export type Line =
  | { role: "user"; text: string }
  | { role: "assistant"; text: string }
  | { role: "call"; tool: string; input: string }
  | { role: "tool"; tool: string; text: string };

/** What a model does with the conversation so far: answer, or ask for one tool run. */
export type Decision = { answer: string } | { tool: string; input: string };

/** A model: reads the whole conversation so far and decides. */
export type ToyModel = (conversation: readonly Line[]) => Decision;
/** A tool: text in, text out; it throws when it cannot do what it was asked. */
export type ToyTool = (input: string) => string;

export interface ToyRun {
  conversation: Line[];
  /** The final answer; the field is absent when the step limit ended the run first. */
  answer?: string;
  stopped: "answered" | "step_limit";
}

/** The scaffold's "not built yet" error: its message names the lab that builds the code. */
function labError(lab: string): Error {
  return new Error(`${lab} 尚未实现`);
}

// ── Lab 0.1 · 循环：问模型，跑工具，记下结果，再问 ──

/**
 * The loop. Asks `model` at most `maxSteps` times, each time with the whole conversation so
 * far; each tool request becomes a `call` line and a `tool` line before the next ask. An
 * unknown tool or a tool that throws does not end the run, whatever it throws: the error
 * becomes the tool's result (`error: …`), so the model can see it and recover.
 */
export function runToyAgent(question: string, model: ToyModel, tools: Readonly<Record<string, ToyTool>>, maxSteps = 5): ToyRun {
  // 🔨 Lab 0.1 · 循环：正文第 4 节讲它，附录 §C4 是它的规则。
  void question;
  void model;
  void tools;
  void maxSteps;
  throw labError("Lab 0.1 agent loop");
}

// ── Lab 0.2 · 计算器只认“数 运算符 数” ──

/**
 * The tool: exactly one binary operation on two decimal numbers (`+ - * /`, also `× ÷`),
 * spaces around the parts allowed, nothing else. No `eval`: a tool must never run what a
 * model wrote as code unless that is its job. The result is rounded to 12 significant
 * digits. Throws on any other input, and on division by zero.
 */
export function calculator(input: string): string {
  // 🔨 Lab 0.2 · 计算器：正文第 5 节讲它，附录 §C5 是它的规则。
  void input;
  throw labError("Lab 0.2 calculator");
}

// ── Lab 0.3 · 规则模型：先要工具，见到结果再回答 ──

/**
 * The model: once the last line is a tool result, answer with it (or report its error);
 * before that, if the question holds an arithmetic expression, ask the calculator for the
 * first one, as written; with no expression at all, say what it can do.
 */
export const ruleModel: ToyModel = (conversation) => {
  // 🔨 Lab 0.3 · 规则模型：正文第 6 节讲它，附录 §C6 是它的规则。
  void conversation;
  throw labError("Lab 0.3 rule model");
};

// ── Lab 0.4 · 打印对话，main 给出退出码 ──

/** The conversation as readable text: one line per entry, labelled in Chinese, no newline at the end. */
export function formatConversation(conversation: readonly Line[]): string {
  // 🔨 Lab 0.4 · 打印对话：正文第 7 节讲它，附录 §C7.1、§C7.2 是它的规则。
  void conversation;
  throw labError("Lab 0.4 print and main");
}

/**
 * Runs the prologue agent on `argv` (the words of the question; a default question when
 * there are none) with `model` and the calculator, and writes the conversation. Returns the
 * exit status: 0 when the model answered, 1 when the step limit stopped it (after a
 * `停止` line saying so).
 */
export function main(argv: readonly string[], write: (text: string) => void = (t) => process.stdout.write(t), model: ToyModel = ruleModel): number {
  // 🔨 Lab 0.4 · main：正文第 7 节讲它，附录 §C7.3 到 §C7.5 是它的规则。
  void argv;
  void write;
  void model;
  throw labError("Lab 0.4 print and main");
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
