// @ts-nocheck (outside the course package its imports do not resolve; verify and mistakes remove this line)
/**
 * Chapter 00, a correct solution written from the chapter text alone, in another style than
 * the reference: a while loop with an explicit step counter, a hand-written scanner instead
 * of a regular expression, a switch over the roles, and plain statements in `main`.
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

/** What running one requested tool gives back: its text, or the error as text. */
function toolResult(tools: Readonly<Record<string, ToyTool>>, name: string, input: string): string {
  if (!Object.prototype.hasOwnProperty.call(tools, name)) return 'error: unknown tool "' + name + '"';
  try {
    return tools[name]!(input);
  } catch (problem) {
    return problemText(problem);
  }
}

/** What a tool threw, as a result: even a value whose text cannot be read (String() throws on it). */
function problemText(problem: unknown): string {
  try {
    if (problem instanceof Error) return "error: " + String(problem.message);
    return "error: " + String(problem);
  } catch {
    return "error: unprintable error";
  }
}

/** The loop: at most `maxSteps` asks, every tool request recorded as a call line and a tool line. */
export function runToyAgent(question: string, model: ToyModel, tools: Readonly<Record<string, ToyTool>>, maxSteps = 5): ToyRun {
  const conversation: Line[] = [];
  conversation.push({ role: "user", text: question });
  let asked = 0;
  while (asked < maxSteps) {
    asked += 1;
    const decision = model(conversation);
    if (Object.hasOwn(decision, "answer")) {
      const answer = (decision as { answer: string }).answer;
      conversation.push({ role: "assistant", text: answer });
      return { conversation, answer, stopped: "answered" };
    }
    const request = decision as { tool: string; input: string };
    conversation.push({ role: "call", tool: request.tool, input: request.input });
    conversation.push({ role: "tool", tool: request.tool, text: toolResult(tools, request.tool, request.input) });
  }
  const run: ToyRun = { conversation, stopped: "step_limit" };
  return run;
}

const OPERATORS = "+-*/×÷";

function isDigit(character: string | undefined): boolean {
  return character !== undefined && character >= "0" && character <= "9";
}

function isSpace(character: string | undefined): boolean {
  return character !== undefined && /\s/.test(character);
}

/** Reads a number (`-?digits(.digits)?`) at `at`; returns its text and where it ends, or undefined. */
function readNumber(text: string, at: number): { text: string; end: number } | undefined {
  let end = at;
  if (text[end] === "-") end += 1;
  const digitsFrom = end;
  while (isDigit(text[end])) end += 1;
  if (end === digitsFrom) return undefined;
  if (text[end] === ".") {
    const fractionFrom = end + 1;
    let after = fractionFrom;
    while (isDigit(text[after])) after += 1;
    if (after === fractionFrom) return undefined;
    end = after;
  }
  return { text: text.slice(at, end), end };
}

/** Reads `number op number` starting at `at` (spaces between the parts); returns its parts and end, or undefined. */
function readExpression(text: string, at: number): { a: string; op: string; b: string; end: number } | undefined {
  const first = readNumber(text, at);
  if (first === undefined) return undefined;
  let cursor = first.end;
  while (isSpace(text[cursor])) cursor += 1;
  const op = text[cursor];
  if (op === undefined || !OPERATORS.includes(op)) return undefined;
  cursor += 1;
  while (isSpace(text[cursor])) cursor += 1;
  const second = readNumber(text, cursor);
  if (second === undefined) return undefined;
  return { a: first.text, op, b: second.text, end: second.end };
}

/** The calculator: exactly `number op number`, spaces allowed around the parts; 12 significant digits. */
export function calculator(input: string): string {
  let start = 0;
  while (isSpace(input[start])) start += 1;
  const expression = readExpression(input, start);
  let end = expression === undefined ? -1 : expression.end;
  while (end !== -1 && isSpace(input[end])) end += 1;
  if (expression === undefined || end !== input.length) throw new Error('not an expression of the form "a op b": ' + input);
  const a = parseFloat(expression.a);
  const b = parseFloat(expression.b);
  let value: number;
  switch (expression.op) {
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
    default:
      if (b === 0) throw new Error("division by zero");
      value = a / b;
  }
  return `${+value.toPrecision(12)}`;
}

/** The rule model: answer from the last tool result; else ask the calculator for the question's first expression. */
export const ruleModel: ToyModel = (conversation) => {
  const last = conversation[conversation.length - 1];
  if (last !== undefined && last.role === "tool") {
    if (last.text.slice(0, 6) === "error:") return { answer: "计算失败（" + last.text + "）。" };
    return { answer: "答案是 " + last.text + "。" };
  }
  let question = "";
  for (const line of conversation) {
    if (line.role === "user") {
      question = line.text;
      break;
    }
  }
  for (let at = 0; at < question.length; at++) {
    const found = readExpression(question, at);
    if (found !== undefined) return { tool: "calculator", input: question.slice(at, found.end) };
  }
  return { answer: "我只会算一步四则运算，比如“12 * 7 等于多少？”。" };
};

/** The conversation as text, one labelled line per entry. */
export function formatConversation(conversation: readonly Line[]): string {
  const out: string[] = [];
  for (const line of conversation) {
    switch (line.role) {
      case "user":
        out.push("用户  " + line.text);
        break;
      case "assistant":
        out.push("助手  " + line.text);
        break;
      case "call":
        out.push("调用  " + line.tool + "(" + line.input + ")");
        break;
      case "tool":
        out.push("结果  " + line.tool + " \u2192 " + line.text);
        break;
    }
  }
  return out.join("\n");
}

/** Runs the agent on the question in `argv` and prints the conversation; 0 when answered, 1 at the step limit. */
export function main(argv: readonly string[], write: (text: string) => void = (t) => process.stdout.write(t), model: ToyModel = ruleModel): number {
  let question = argv.join(" ").trim();
  if (question.length === 0) question = "12 * 7 等于多少？";
  const run = runToyAgent(question, model, { calculator: calculator });
  write(formatConversation(run.conversation) + "\n");
  if (run.stopped === "step_limit") {
    write("停止  达到步数上限，模型没有作答\n");
    return 1;
  }
  return 0;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
