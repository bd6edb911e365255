// @ts-nocheck (outside the course package its imports do not resolve; verify and mistakes remove this line)
/**
 * Chapter 00, a correct solution in a recursive style: the loop recurses on the steps left
 * (one frame a step: the 3000 steps of §C4.5 fit Node's stack), the tool table becomes a Map of its
 * own entries, the calculator reads its parts with a sticky regular expression built each
 * call, the model walks the conversation with for…of, printing builds a list of lines, and
 * `main` writes the stop line in the same write as the conversation.
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

function errorResult(thrown: unknown): string {
  let text: string;
  try {
    text = thrown instanceof Error ? String(thrown.message) : String(thrown);
  } catch {
    return "error: unprintable error";
  }
  return "error: " + text;
}

function step(conversation: Line[], model: ToyModel, tools: ReadonlyMap<string, ToyTool>, left: number): ToyRun {
  if (left <= 0) return { conversation, stopped: "step_limit" };
  const decision = model(conversation);
  if ("answer" in decision) {
    conversation.push({ role: "assistant", text: decision.answer });
    return { conversation, answer: decision.answer, stopped: "answered" };
  }
  conversation.push({ role: "call", tool: decision.tool, input: decision.input });
  const tool = tools.get(decision.tool);
  let text: string;
  if (tool === undefined) {
    text = 'error: unknown tool "' + decision.tool + '"';
  } else {
    try {
      text = tool(decision.input);
    } catch (thrown) {
      text = errorResult(thrown);
    }
  }
  conversation.push({ role: "tool", tool: decision.tool, text });
  return step(conversation, model, tools, left - 1);
}

export function runToyAgent(question: string, model: ToyModel, tools: Readonly<Record<string, ToyTool>>, maxSteps = 5): ToyRun {
  return step([{ role: "user", text: question }], model, new Map<string, ToyTool>(Object.entries(tools)), maxSteps);
}

const SPACE = String.raw`\s*`;
const NUMBER = String.raw`(-?\d+(?:\.\d+)?)`;

export function calculator(input: string): string {
  const reader = new RegExp(`${SPACE}${NUMBER}${SPACE}([+*/×÷-])${SPACE}${NUMBER}${SPACE}`, "y");
  const match = reader.exec(input);
  if (match === null || reader.lastIndex !== input.length) throw new Error('not an expression of the form "a op b": ' + input);
  const [, left, op, right] = match;
  const a = +left!;
  const b = +right!;
  let value: number;
  if (op === "+") value = a + b;
  else if (op === "-") value = a - b;
  else if (op === "*" || op === "×") value = a * b;
  else if (b === 0) throw new Error("division by zero");
  else value = a / b;
  return String(+value.toPrecision(12));
}

export const ruleModel: ToyModel = (conversation) => {
  const last = conversation.at(-1);
  if (last?.role === "tool") {
    return last.text.slice(0, "error:".length) === "error:" ? { answer: "计算失败（" + last.text + "）。" } : { answer: "答案是 " + last.text + "。" };
  }
  let question: string | undefined;
  for (const line of conversation) {
    if (line.role === "user") {
      question = line.text;
      break;
    }
  }
  const found = question === undefined ? null : new RegExp(`${NUMBER}\\s*[+*/×÷-]\\s*${NUMBER}`).exec(question);
  return found === null ? { answer: "我只会算一步四则运算，比如“12 * 7 等于多少？”。" } : { tool: "calculator", input: found[0] };
};

export function formatConversation(conversation: readonly Line[]): string {
  const lines: string[] = [];
  for (const line of conversation) {
    switch (line.role) {
      case "user":
        lines.push(`用户  ${line.text}`);
        break;
      case "assistant":
        lines.push(`助手  ${line.text}`);
        break;
      case "call":
        lines.push(`调用  ${line.tool}(${line.input})`);
        break;
      default:
        lines.push(`结果  ${line.tool} → ${line.text}`);
    }
  }
  return lines.join("\n");
}

export function main(argv: readonly string[], write: (text: string) => void = (t) => process.stdout.write(t), model: ToyModel = ruleModel): number {
  let question = argv.join(" ").trim();
  if (question === "") question = "12 * 7 等于多少？";
  const run = runToyAgent(question, model, { calculator });
  const printed = formatConversation(run.conversation) + "\n";
  if (run.stopped === "step_limit") {
    write(printed + "停止  达到步数上限，模型没有作答\n");
    return 1;
  }
  write(printed);
  return 0;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
