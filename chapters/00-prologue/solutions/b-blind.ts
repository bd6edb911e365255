// @ts-nocheck — a solution of Chapter 00, checked in place of packages/pi-course/src/prologue.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
// Written blind: by a learner who saw only the practice folder (the chapter text, the starter, the lab commands' output), first try green in every lab.
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
 * unknown tool or a tool that throws does not end the run: the error becomes the tool's
 * result (`error: …`), so the model can see it and recover.
 */
export function runToyAgent(question: string, model: ToyModel, tools: Readonly<Record<string, ToyTool>>, maxSteps = 5): ToyRun {
  const conversation: Line[] = [{ role: "user", text: question }];
  for (let step = 0; step < maxSteps; step++) {
    const decision = model(conversation);
    if ("answer" in decision) {
      conversation.push({ role: "assistant", text: decision.answer });
      return { conversation, answer: decision.answer, stopped: "answered" };
    }
    const { tool, input } = decision;
    conversation.push({ role: "call", tool, input });
    conversation.push({ role: "tool", tool, text: runTool(tools, tool, input) });
  }
  return { conversation, stopped: "step_limit" };
}

/** Runs one tool; an unknown name or a throw becomes an `error: …` result instead of escaping. */
function runTool(tools: Readonly<Record<string, ToyTool>>, name: string, input: string): string {
  if (!Object.hasOwn(tools, name)) return `error: unknown tool "${name}"`;
  const tool = tools[name] as ToyTool;
  try {
    return tool(input);
  } catch (err) {
    try {
      return `error: ${err instanceof Error ? String(err.message) : String(err)}`;
    } catch {
      return "error: unprintable error"; // String() itself threw: no prototype, a throwing toString
    }
  }
}

// ── Lab 0.2 · 计算器只认“数 运算符 数” ──

/**
 * The tool: exactly one binary operation on two decimal numbers (`+ - * /`, also `× ÷`),
 * spaces around the parts allowed, nothing else. No `eval`: a tool must never run what a
 * model wrote as code unless that is its job. The result is rounded to 12 significant
 * digits. Throws on any other input, and on division by zero.
 */
export function calculator(input: string): string {
  const match = EXPRESSION.exec(input);
  if (match === null) throw new Error(`not an expression of the form "a op b": ${input}`);
  const [, left, op, right] = match as unknown as [string, string, string, string];
  const a = Number(left);
  const b = Number(right);
  let value: number;
  switch (op) {
    case "+":
      value = a + b;
      break;
    case "-":
      value = a - b;
      break;
    case "*":
    case "×":
      value = a * b;
      break;
    default: // "/" or "÷"
      if (b === 0) throw new Error("division by zero");
      value = a / b;
  }
  return String(Number(value.toPrecision(12)));
}

/** One number: optional minus, ASCII digits, optionally a dot and more digits. */
const NUMBER = String.raw`-?[0-9]+(?:\.[0-9]+)?`;
/** One operator: the four ASCII ones plus × and ÷. */
const OPERATOR = String.raw`[+\-*/×÷]`;
/** The whole input, anchored: number, operator, number, with optional whitespace around each. */
const EXPRESSION = new RegExp(String.raw`^\s*(${NUMBER})\s*(${OPERATOR})\s*(${NUMBER})\s*$`);

// ── Lab 0.3 · 规则模型：先要工具，见到结果再回答 ──

/**
 * The model: once the last line is a tool result, answer with it (or report its error);
 * before that, if the question holds an arithmetic expression, ask the calculator for the
 * first one, as written; with no expression at all, say what it can do.
 */
export const ruleModel: ToyModel = (conversation) => {
  const last = conversation.at(-1);
  if (last?.role === "tool") {
    return last.text.startsWith("error:") ? { answer: `计算失败（${last.text}）。` } : { answer: `答案是 ${last.text}。` };
  }
  const first = conversation.find((line) => line.role === "user");
  const found = first === undefined ? null : EXPRESSION_ANYWHERE.exec(first.text);
  if (found !== null) return { tool: "calculator", input: found[0] };
  return { answer: "我只会算一步四则运算，比如“12 * 7 等于多少？”。" };
};

/** The first "number operator number" anywhere in a text: not anchored, no surrounding spaces. */
const EXPRESSION_ANYWHERE = new RegExp(String.raw`${NUMBER}\s*${OPERATOR}\s*${NUMBER}`);

// ── Lab 0.4 · 打印对话，main 给出退出码 ──

/** The conversation as readable text: one line per entry, labelled in Chinese, no newline at the end. */
export function formatConversation(conversation: readonly Line[]): string {
  return conversation.map(formatLine).join("\n");
}

/** One conversation line as text: label, two spaces, content. */
function formatLine(line: Line): string {
  switch (line.role) {
    case "user":
      return `用户  ${line.text}`;
    case "assistant":
      return `助手  ${line.text}`;
    case "call":
      return `调用  ${line.tool}(${line.input})`;
    case "tool":
      return `结果  ${line.tool} \u2192 ${line.text}`;
  }
}

/**
 * Runs the prologue agent on `argv` (the words of the question; a default question when
 * there are none) with `model` and the calculator, and writes the conversation. Returns the
 * exit status: 0 when the model answered, 1 when the step limit stopped it (after a
 * `停止` line saying so).
 */
export function main(argv: readonly string[], write: (text: string) => void = (t) => process.stdout.write(t), model: ToyModel = ruleModel): number {
  const question = argv.join(" ").trim() || DEFAULT_QUESTION;
  const run = runToyAgent(question, model, { calculator });
  write(formatConversation(run.conversation) + "\n");
  if (run.stopped === "answered") return 0;
  write("停止  达到步数上限，模型没有作答\n");
  return 1;
}

/** The question `main` asks when the command line has no words. */
const DEFAULT_QUESTION = "12 * 7 等于多少？";

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
