/**
 * Chapter 00 · prologue: a whole agent on one screen.
 *
 * A coding agent is a loop: show the model the conversation, let it either answer or ask
 * for a tool, run the tool, add its result to the conversation, ask again. Everything the
 * course builds later is a better version of one piece of this file: real message types
 * (03), a streaming model (02, 04, 05), validated tools with paired results (06), a loop
 * that survives aborts and limits (07), real tools (08), state (09), memory (10, 11) and
 * knowledge and extensions (12, 13).
 *
 * Here the "model" is a handful of rules and the only tool is a calculator, so the file
 * runs anywhere, offline, the same way every time:
 *
 *     npm run build -w @pi/course
 *     node packages/pi-course/dist/src/prologue.js "12 * 7 等于多少？"
 *
 * The file reads in the order the chapter teaches it: the types, then the loop (Lab 0.1),
 * the tool (Lab 0.2), the model (Lab 0.3), and printing with `main` (Lab 0.4).
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

// ── Lab 0.1 · 循环：问模型，跑工具，记下结果，再问 ──

/**
 * The loop. Asks `model` at most `maxSteps` times, each time with the whole conversation so
 * far; each tool request becomes a `call` line and a `tool` line before the next ask. An
 * unknown tool or a tool that throws does not end the run, whatever it throws: the error
 * becomes the tool's result (`error: …`), so the model can see it and recover.
 */
export function runToyAgent(question: string, model: ToyModel, tools: Readonly<Record<string, ToyTool>>, maxSteps = 5): ToyRun {
  const conversation: Line[] = [{ role: "user", text: question }];
  for (let step = 0; step < maxSteps; step++) {
    const decision = model(conversation);
    if ("answer" in decision) {
      conversation.push({ role: "assistant", text: decision.answer });
      return { conversation, answer: decision.answer, stopped: "answered" };
    }
    conversation.push({ role: "call", tool: decision.tool, input: decision.input });
    // Only the table's own entries are tools: "toString" or "__proto__" must not name one.
    const tool = Object.hasOwn(tools, decision.tool) ? tools[decision.tool] : undefined;
    let result: string;
    try {
      result = tool === undefined ? `error: unknown tool "${decision.tool}"` : tool(decision.input);
    } catch (error) {
      // Whatever was thrown becomes a result, even a value whose text cannot be read (its
      // `message` getter or `String()` throws, or even `instanceof` does, on a revoked Proxy).
      try {
        result = `error: ${error instanceof Error ? String(error.message) : String(error)}`;
      } catch {
        result = "error: unprintable error";
      }
    }
    conversation.push({ role: "tool", tool: decision.tool, text: result });
  }
  return { conversation, stopped: "step_limit" };
}

// ── Lab 0.2 · 计算器只认“数 运算符 数” ──

/**
 * The tool: exactly one binary operation on two decimal numbers (`+ - * /`, also `× ÷`),
 * spaces around the parts allowed, nothing else. No `eval`: a tool must never run what a
 * model wrote as code unless that is its job. The result is rounded to 12 significant
 * digits. Throws on any other input, and on division by zero.
 */
export function calculator(input: string): string {
  const match = /^\s*(-?\d+(?:\.\d+)?)\s*([+\-*/×÷])\s*(-?\d+(?:\.\d+)?)\s*$/.exec(input);
  if (match === null) throw new Error(`not an expression of the form "a op b": ${input}`);
  const a = Number(match[1]);
  const b = Number(match[3]);
  const op = match[2];
  if ((op === "/" || op === "÷") && b === 0) throw new Error("division by zero");
  const value = op === "+" ? a + b : op === "-" ? a - b : op === "*" || op === "×" ? a * b : a / b;
  return String(Number(value.toPrecision(12)));
}

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
  const question = conversation.find((line) => line.role === "user");
  const expression = question?.role === "user" ? /-?\d+(?:\.\d+)?\s*[+\-*/×÷]\s*-?\d+(?:\.\d+)?/.exec(question.text) : null;
  if (expression === null) return { answer: "我只会算一步四则运算，比如“12 * 7 等于多少？”。" };
  return { tool: "calculator", input: expression[0] };
};

// ── Lab 0.4 · 打印对话，main 给出退出码 ──

/** The conversation as readable text: one line per entry, labelled in Chinese, no newline at the end. */
export function formatConversation(conversation: readonly Line[]): string {
  const labels: Record<Line["role"], string> = { user: "用户", assistant: "助手", call: "调用", tool: "结果" };
  return conversation
    .map((line) => {
      const body = line.role === "call" ? `${line.tool}(${line.input})` : line.role === "tool" ? `${line.tool} → ${line.text}` : line.text;
      return `${labels[line.role]}  ${body}`;
    })
    .join("\n");
}

/**
 * Runs the prologue agent on `argv` (the words of the question; a default question when
 * there are none) with `model` and the calculator, and writes the conversation. Returns the
 * exit status: 0 when the model answered, 1 when the step limit stopped it (after a
 * `停止` line saying so).
 */
export function main(argv: readonly string[], write: (text: string) => void = (t) => process.stdout.write(t), model: ToyModel = ruleModel): number {
  const question = argv.join(" ").trim() || "12 * 7 等于多少？";
  const run = runToyAgent(question, model, { calculator });
  write(`${formatConversation(run.conversation)}\n`);
  if (run.stopped === "answered") return 0;
  write("停止  达到步数上限，模型没有作答\n");
  return 1;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
