// @ts-nocheck (outside the course package its imports do not resolve; verify and mistakes remove this line)
/**
 * Chapter 00, a correct solution in yet another style: the loop is a small class holding one
 * run's conversation, tools are looked up through their own property descriptor, the
 * calculator trims first and dispatches through a table of operator functions, the model
 * uses indexOf and String.prototype.match, printing is a reduce, and `main` decides the exit
 * status by whether the run carries an answer.
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

const DEFAULT_QUESTION = "12 * 7 等于多少？";
const FALLBACK = "我只会算一步四则运算，比如“12 * 7 等于多少？”。";

/** One run of the loop: its own conversation, its own step count. */
class ToyAgentRun {
  readonly lines: Line[];
  readonly model: ToyModel;
  readonly tools: Readonly<Record<string, ToyTool>>;
  readonly maxSteps: number;
  #asked = 0;

  constructor(question: string, model: ToyModel, tools: Readonly<Record<string, ToyTool>>, maxSteps: number) {
    this.lines = [{ role: "user", text: question }];
    this.model = model;
    this.tools = tools;
    this.maxSteps = maxSteps;
  }

  run(): ToyRun {
    while (this.#asked < this.maxSteps) {
      this.#asked++;
      const decision = this.model(this.lines);
      const answer = (decision as { answer?: unknown }).answer;
      if (typeof answer === "string") {
        this.lines.push({ role: "assistant", text: answer });
        return { conversation: this.lines, answer, stopped: "answered" };
      }
      const { tool, input } = decision as { tool: string; input: string };
      this.lines.push({ role: "call", tool, input });
      this.lines.push({ role: "tool", tool, text: this.#use(tool, input) });
    }
    return { conversation: this.lines, stopped: "step_limit" };
  }

  #use(name: string, input: string): string {
    const own = Object.getOwnPropertyDescriptor(this.tools, name);
    if (own === undefined) return `error: unknown tool "${name}"`;
    try {
      return (own.value as ToyTool)(input);
    } catch (thrown) {
      return describeThrown(thrown);
    }
  }
}

/** What a tool threw, as its result: never throws itself. */
function describeThrown(thrown: unknown): string {
  try {
    if (thrown instanceof Error) return "error: " + String(thrown.message);
    return "error: " + String(thrown);
  } catch {
    return "error: unprintable error";
  }
}

export function runToyAgent(question: string, model: ToyModel, tools: Readonly<Record<string, ToyTool>>, maxSteps = 5): ToyRun {
  return new ToyAgentRun(question, model, tools, maxSteps).run();
}

const OPERATIONS: Readonly<Record<string, (a: number, b: number) => number>> = {
  "+": (a, b) => a + b,
  "-": (a, b) => a - b,
  "*": (a, b) => a * b,
  "×": (a, b) => a * b,
  "/": (a, b) => a / b,
  "÷": (a, b) => a / b,
};

export function calculator(input: string): string {
  const parts = input.trim().match(/^(?<a>-?[0-9]+(?:\.[0-9]+)?)\s*(?<op>[-+*/×÷])\s*(?<b>-?[0-9]+(?:\.[0-9]+)?)$/u)?.groups;
  if (parts === undefined) throw new Error(`not an expression of the form "a op b": ${input}`);
  const a = Number.parseFloat(parts.a as string);
  const b = Number.parseFloat(parts.b as string);
  const op = parts.op as string;
  if ((op === "/" || op === "÷") && b === 0) throw new Error("division by zero");
  const value = (OPERATIONS[op] as (a: number, b: number) => number)(a, b);
  return Number.parseFloat(value.toPrecision(12)).toString();
}

export const ruleModel: ToyModel = (conversation) => {
  const last = conversation[conversation.length - 1];
  if (last !== undefined && last.role === "tool") {
    if (last.text.indexOf("error:") === 0) return { answer: `计算失败（${last.text}）。` };
    return { answer: `答案是 ${last.text}。` };
  }
  const index = conversation.findIndex((line) => line.role === "user");
  if (index === -1) return { answer: FALLBACK };
  const question = conversation[index] as { text: string };
  const found = question.text.match(/-?[0-9]+(?:\.[0-9]+)?\s*[-+*/×÷]\s*-?[0-9]+(?:\.[0-9]+)?/u);
  if (found === null) return { answer: FALLBACK };
  return { tool: "calculator", input: found[0] };
};

const LABELS = { user: "用户", assistant: "助手", call: "调用", tool: "结果" } as const;

export function formatConversation(conversation: readonly Line[]): string {
  return conversation.reduce((text, line, index) => {
    let content: string;
    if (line.role === "call") content = `${line.tool}(${line.input})`;
    else if (line.role === "tool") content = `${line.tool} → ${line.text}`;
    else content = line.text;
    return text + (index === 0 ? "" : "\n") + LABELS[line.role] + "  " + content;
  }, "");
}

export function main(argv: readonly string[], write: (text: string) => void = (t) => process.stdout.write(t), model: ToyModel = ruleModel): number {
  const words = argv.join(" ").trim();
  const run = runToyAgent(words.length > 0 ? words : DEFAULT_QUESTION, model, { calculator });
  write(`${formatConversation(run.conversation)}\n`);
  if (run.answer !== undefined) return 0;
  write("停止  达到步数上限，模型没有作答\n");
  return 1;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
