/**
 * The practice folder's MCP server on the official TypeScript SDK, over stdio: what a
 * learner's coding agent may ask the course — the lab table (`lab_status`), one lab's run
 * with its first failure (`run_lab`), the next rung of a hint ladder (`next_hint`), a section
 * of the chapter text (`chapter_section`) — and one prompt, `predict`, which asks the learner
 * to predict the next run before it happens.
 *
 * This module is the protocol side only: the tools' names, descriptions, input and output
 * schemas, and how an answer or a refusal becomes a result. What each tool does is
 * `PracticeTools`, which the command (`packages/course-tools/src/mcp.ts`) builds from `lab`'s and `hint`'s own
 * modules (a command's family never imports another's).
 *
 * Every answer is text (what `lab` or `hint` would print, without colour) and the same as
 * `structuredContent`, described by the tool's `outputSchema` (the SDK's client checks the
 * one against the other). A tool's refusal is a result with `isError` and one line
 * `错误 [CODE] …`; an unknown tool or prompt name, and a refusal of the `predict` prompt (which
 * has no result to mark), are JSON-RPC errors with the same line. The server never answers
 * outside a practice folder (checked again at every call), and it reads nothing but that
 * folder. Calls run one at a time: two lab runs would build into the same `dist/`, and a hint
 * is a read-modify-write of the rung state; a call cancelled while it waits does not run.
 *
 * The SDK's low-level `Server` with JSON Schemas written out, not `McpServer` with zod
 * shapes: the schemas are what goes over the wire either way, and type-checking zod's
 * inference through `registerTool` doubled the time the tooling (then `scripts/`) took to compile (231 714
 * type instantiations against 126 114), which every practice folder's first command pays.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type GetPromptResult,
  type Prompt,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { CourseError, formatError } from "../core/errors.js";
import { isPracticeFolder } from "../core/paths.js";
import { notPracticeError } from "./folder.js";

/** The name the server gives itself (and the configuration lines in docs/agents.md use). */
export const SERVER_NAME = "pi-course";

/** The tools, in the order `tools/list` gives them. */
export const TOOL_NAMES = ["lab_status", "run_lab", "next_hint", "chapter_section"] as const;

/** The prompts. */
export const PROMPT_NAMES = ["predict"] as const;

export type ToolName = (typeof TOOL_NAMES)[number];

// ---------------------------------------------------------------------------------------
// What the tools answer, as data
// ---------------------------------------------------------------------------------------

export type LabStatus = "passed" | "failed" | "not_started";

/** The next step: the lab to work on and the command the learner runs for it. */
export interface NextStep {
  lab: string;
  command: string;
}

/** Why a run could not judge every test. */
export interface RunProblem {
  kind: "build_failed" | "timeout" | "crashed" | "teaching_file_missing";
  message: string;
}

/** A lab's first failure. */
export interface FailureData {
  test: string;
  /** The rule the test checks: the message's first line, `§x.y：…`. */
  rule?: string;
  /** The chapter text's section that states the rule. */
  section?: string;
  /** `file:line:col` of the top frame in the practice folder: the learner's throw, or the test's assertion line. */
  location?: string;
  /** `file:line` where the test is declared. */
  testLocation?: string;
  excerpt: string;
  /** True when it stopped on a construction-site (scaffold) error. */
  notStarted: boolean;
  /** The earlier lab whose construction site it reached first. */
  waitingFor?: string;
  timedOut?: boolean;
}

export interface LabStatusData {
  chapter: string;
  title: string;
  labs: { id: string; title: string; passed: number; total: number; status: LabStatus; note?: string }[];
  passed: number;
  total: number;
  next: NextStep | null;
  problem?: RunProblem;
  notes: string[];
}

export interface RunLabData {
  lab: string;
  title: string;
  passed: number;
  total: number;
  status: LabStatus;
  firstFailure?: FailureData;
  earlier: { id: string; passed: number; total: number; status: LabStatus }[];
  next: NextStep | null;
  problem?: RunProblem;
  notes: string[];
}

export interface HintData {
  lab: string;
  title: string;
  level: number;
  of: number;
  rung: string;
  text: string;
  next: number | null;
  atTop: boolean;
  warning?: string;
}

export interface SectionData {
  chapter: string;
  section: string;
  title: string;
  text: string;
  subsections: { number: string; title: string }[];
}

/** An answer of a tool: what is shown, and the same as data. */
export interface Answer<D> {
  text: string;
  data: D;
}

/**
 * What the tools do, in the practice folder the server serves, for the chapter it is for
 * (another chapter is refused: section numbers belong to one chapter's text). Each throws
 * `CourseError` to refuse; an aborted `signal` ends a lab run and keeps a hint unsaved.
 */
export interface PracticeTools {
  /** The chapter's lab table, run as `lab NN` runs it. */
  labStatus(chapter: string | undefined, signal: AbortSignal): Promise<Answer<LabStatusData>>;
  /** One lab, run as `lab NN.L` runs it, with its first failure. */
  runLab(lab: string, signal: AbortSignal): Promise<Answer<RunLabData>>;
  /** The next rung of the lab's ladder, saved as `hint` saves it; nothing is saved once `signal` is aborted. */
  nextHint(lab: string, signal: AbortSignal): Promise<Answer<HintData>>;
  /** One numbered section of the chapter text, its subsections included. */
  chapterSection(section: string): Promise<Answer<SectionData>>;
  /** The `predict` prompt's message for `lab` (the next lab to work on when absent). */
  predict(lab: string | undefined): Promise<string>;
}

// ---------------------------------------------------------------------------------------
// The same, as JSON Schema (what `tools/list` gives)
// ---------------------------------------------------------------------------------------

type Schema = Record<string, unknown>;

const text = (description?: string): Schema => ({ type: "string", ...(description === undefined ? {} : { description }) });
const count = (description?: string): Schema => ({ type: "integer", minimum: 0, ...(description === undefined ? {} : { description }) });
const flag = (description?: string): Schema => ({ type: "boolean", ...(description === undefined ? {} : { description }) });
const list = (items: Schema, description?: string): Schema => ({ type: "array", items, ...(description === undefined ? {} : { description }) });
/** An object schema; every property is required unless listed in `optional`. */
const object = (properties: Record<string, Schema>, optional: readonly string[] = [], description?: string): Schema => ({
  type: "object",
  properties,
  required: Object.keys(properties).filter((key) => !optional.includes(key)),
  ...(description === undefined ? {} : { description }),
});

const STATUS: Schema = { type: "string", enum: ["passed", "failed", "not_started"] };
const NEXT: Schema = {
  anyOf: [object({ lab: text("the lab to work on next"), command: text("the command the learner runs for it") }), { type: "null" }],
  description: "the next step, or null when there is none: every lab is green, or (lab_status) the run could not judge; run_lab then names the lab it ran",
};
const PROBLEM = object(
  { kind: { type: "string", enum: ["build_failed", "timeout", "crashed", "teaching_file_missing"] }, message: text() },
  [],
  "set when the run could not judge every test: a compile error, the time limit, a test file that crashed, a missing teaching file",
);
const FAILURE = object(
  {
    test: text("the failing test's name"),
    rule: text("the rule it checks, the message's first line: §x.y：…"),
    section: text("the chapter text's section stating the rule (read it with chapter_section)"),
    location: text("file:line:col of the top frame in the practice folder: the learner's throw, or, for a wrong value, the test's assertion line"),
    testLocation: text("file:line where the test is declared"),
    excerpt: text("the first lines of the failure message"),
    notStarted: flag("true when it stopped on a lab's construction-site (scaffold) error"),
    waitingFor: text("the earlier lab whose construction site it reached first"),
    timedOut: flag(),
  },
  ["rule", "section", "location", "testLocation", "waitingFor", "timedOut"],
);
const NOTES = list(text(), "what the learner must know first (a fault exercise restored, …)");

const LAB_STATUS_OUTPUT = object(
  {
    chapter: text(),
    title: text(),
    labs: list(
      object(
        { id: text(), title: text(), passed: count(), total: count(), status: STATUS, note: text("未开始 · 等待 Lab x, or the first failure in one line") },
        ["note"],
      ),
    ),
    passed: count(),
    total: count(),
    next: NEXT,
    problem: PROBLEM,
    notes: NOTES,
  },
  ["problem"],
);

const RUN_LAB_OUTPUT = object(
  {
    lab: text(),
    title: text(),
    passed: count(),
    total: count(),
    status: STATUS,
    firstFailure: FAILURE,
    earlier: list(
      object({ id: text(), passed: count(), total: count(), status: STATUS }),
      "the chapter's earlier labs that are not green (they run too: a later lab stands on them)",
    ),
    next: NEXT,
    problem: PROBLEM,
    notes: NOTES,
  },
  ["firstFailure", "problem"],
);

const NEXT_HINT_OUTPUT = object(
  {
    lab: text(),
    title: text(),
    level: count("the rung shown, 1–4"),
    of: count(),
    rung: text("what this rung does: 定位文件, 指出签名, 伪代码, 局部代码"),
    text: text("the rung's text, as the hint command shows it"),
    next: { anyOf: [count(), { type: "null" }], description: "the rung the next call shows, or null at the top" },
    atTop: flag("true at the last rung (asking again shows it again)"),
    warning: text("set when the progress could not be saved"),
  },
  ["warning"],
);

const CHAPTER_SECTION_OUTPUT = object({
  chapter: text(),
  section: text(),
  title: text(),
  text: text("the section's Markdown, its subsections included"),
  subsections: list(object({ number: text(), title: text() })),
});

/** One tool: its listing, and how a call's arguments reach `PracticeTools`. */
interface ToolEntry {
  definition: Tool;
  call(args: Record<string, string | undefined>, tools: PracticeTools, signal: AbortSignal): Promise<Answer<object>>;
}

/** A tool's input: string arguments only, `required` among them. */
function input(properties: Record<string, string>, required: readonly string[]): Tool["inputSchema"] {
  return {
    type: "object",
    properties: Object.fromEntries(Object.entries(properties).map(([name, description]) => [name, text(description)])),
    required: [...required],
  };
}

const TOOLS: Record<ToolName, ToolEntry> = {
  lab_status: {
    definition: {
      name: "lab_status",
      title: "Lab 进度表",
      description:
        "Builds the practice folder's code and runs every lab of the chapter, like `npm run lab -w @pi/course -- NN`: per lab its id, title, passed/total and status (passed, failed, not_started), and the next step. Takes a while (a build and the tests).",
      inputSchema: input({ chapter: 'chapter number, e.g. "12"; default: the practice folder\'s chapter' }, []),
      outputSchema: LAB_STATUS_OUTPUT as Tool["outputSchema"],
      annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: false },
    },
    call: (args, tools, signal) => tools.labStatus(args.chapter, signal),
  },
  run_lab: {
    definition: {
      name: "run_lab",
      title: "运行一关",
      description:
        "Builds and runs one lab, like `npm run lab -w @pi/course -- NN.L` (the chapter's earlier labs run too): passed/total and the first failure with the test's name, the rule it checks (`§x.y：…`), the chapter text's section number, where it failed (file:line:col: the learner's throw, or the test's assertion for a wrong value) and an excerpt of the message.",
      inputSchema: input({ lab: 'lab id, e.g. "12.3"' }, ["lab"]),
      outputSchema: RUN_LAB_OUTPUT as Tool["outputSchema"],
      annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: false },
    },
    call: (args, tools, signal) => tools.runLab(args.lab!, signal),
  },
  next_hint: {
    definition: {
      name: "next_hint",
      title: "下一级提示",
      description:
        "Shows the next rung of a lab's four-rung hint ladder (locate the file → the signature → pseudocode → partial code) and remembers it, as `npm run hint -w @pi/course -- NN.L` does (the same stored progress): one rung per call, never skipping one; at the top it says so. Give the learner this rung, not more.",
      inputSchema: input({ lab: 'lab id, e.g. "12.1"' }, ["lab"]),
      outputSchema: NEXT_HINT_OUTPUT as Tool["outputSchema"],
      annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: false },
    },
    call: (args, tools, signal) => tools.nextHint(args.lab!, signal),
  },
  chapter_section: {
    definition: {
      name: "chapter_section",
      title: "正文小节",
      description:
        'Returns one numbered section of the chapter text (Markdown, Chinese) by its number, e.g. "12", "18.1" or a contract rule\'s "C3.4" (a failure\'s `§3.4` is section "3.4", `§C3.4` is "C3.4"); a section includes its subsections. A challenge test\'s rule is found in the challenge tier\'s own text when the chapter has one.',
      inputSchema: input({ section: 'section number, e.g. "3.4", "12", "18.1" or "C3.4"' }, ["section"]),
      outputSchema: CHAPTER_SECTION_OUTPUT as Tool["outputSchema"],
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    call: (args, tools) => tools.chapterSection(args.section!),
  },
};

const PREDICT: Prompt = {
  name: "predict",
  title: "先预测，再运行",
  description: "Asks the learner to predict which tests of the next lab run pass or fail, and why, before running it.",
  arguments: [{ name: "lab", description: 'lab id, e.g. "12.2"; default: the next lab to work on', required: false }],
};

// ---------------------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------------------

export interface ServerOptions {
  /** The practice folder served. */
  root: string;
  /** The chapter it is for (its marker's). */
  chapter: string;
  tools: PracticeTools;
  /** Aborted when the server must stop (a signal, the client gone): a running lab ends its test processes. */
  stop?: AbortSignal;
  version?: string;
}

/** The server, and a promise for the moment no call is running any more. */
export interface PracticeServer {
  server: Server;
  /** Settles once every call received so far has ended. */
  idle(): Promise<void>;
}

/** What the server tells the agent about itself when it connects. */
function instructions(chapter: string): string {
  return [
    `pi-course 第 ${chapter} 章的练习目录。学习者在这里自己重写教学文件，一关（Lab）一关地让测试变绿。`,
    "lab_status 给出全章进度和下一步；run_lab 运行一关，给出第一处失败、它违反的规则（§x.y）和正文小节；",
    "chapter_section 读正文的那一节；next_hint 给出下一级提示（与 hint 命令共用进度，一次一级，不跳级）。",
    "请帮学习者理解失败和规则，不要替他写出答案代码；运行之前可以先用 predict 请他预测结果。",
  ].join("\n");
}

/** Runs each `fn` after every earlier one has settled (the calls of one server run one at a time). */
function serializer(): <T>(fn: () => Promise<T>) => Promise<T> {
  let chain: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>) => {
    const run = chain.then(fn, fn);
    chain = run.catch(() => undefined);
    return run;
  };
}

/** A call's arguments, checked against the tool's input schema: strings, the required ones present, nothing else. */
function callArguments(definition: Tool, given: Record<string, unknown> | undefined): Record<string, string | undefined> {
  const properties = Object.keys(definition.inputSchema.properties ?? {});
  const args: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(given ?? {})) {
    if (!properties.includes(name)) throw new CourseError("USAGE", `${definition.name} 没有参数 “${name}”；它的参数：${properties.join("、") || "（无）"}`);
    if (value === undefined || value === null) continue;
    // Clients that build arguments from a form (the MCP Inspector) send `12.2` and `10` as JSON numbers.
    if (typeof value === "number" && Number.isFinite(value) && value >= 0) {
      args[name] = String(value);
      continue;
    }
    if (typeof value !== "string")
      throw new CourseError("USAGE", `${definition.name} 的参数 ${name} 应为字符串或数字，例如 "12.1"，收到 ${JSON.stringify(value)}`);
    args[name] = value;
  }
  for (const name of definition.inputSchema.required ?? []) {
    if (args[name] === undefined) throw new CourseError("USAGE", `${definition.name} 需要参数 ${name}`);
  }
  return args;
}

/** The signal a call listens to: the client's cancellation and the server's stop, whichever comes first. */
function callSignal(request: AbortSignal, stop: AbortSignal | undefined): AbortSignal {
  return stop === undefined ? request : AbortSignal.any([request, stop]);
}

/** The course's MCP server with its four tools and its prompt (not yet connected). */
export function createPracticeServer(options: ServerOptions): PracticeServer {
  const { root, tools, stop } = options;
  const server = new Server(
    { name: SERVER_NAME, version: options.version ?? "1.0.0" },
    { capabilities: { tools: {}, prompts: {} }, instructions: instructions(options.chapter) },
  );
  const serial = serializer();

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOL_NAMES.map((name) => TOOLS[name].definition) }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra): Promise<CallToolResult> => {
    const entry = (TOOLS as Partial<Record<string, ToolEntry>>)[request.params.name];
    if (entry === undefined) {
      const known = new CourseError("MCP_TOOL_UNKNOWN", `没有工具 “${request.params.name}”；这里的工具：${TOOL_NAMES.join("、")}`);
      throw new McpError(ErrorCode.InvalidParams, formatError(known));
    }
    return serial(async () => {
      try {
        const signal = callSignal(extra.signal, stop);
        // A call cancelled while it waited its turn does nothing: a hint nobody sees must not count as seen.
        if (signal.aborted) throw new CourseError("MCP_CALL_CANCELLED", `${request.params.name} 在轮到它之前已被取消，没有运行`);
        if (!isPracticeFolder(root)) throw notPracticeError(root);
        const answer = await entry.call(callArguments(entry.definition, request.params.arguments), tools, signal);
        return { content: [{ type: "text", text: answer.text }], structuredContent: answer.data as Record<string, unknown> };
      } catch (error) {
        // No data with a refusal: the output schema describes answers.
        return { content: [{ type: "text", text: formatError(error) }], isError: true };
      }
    });
  });

  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: [PREDICT] }));
  server.setRequestHandler(GetPromptRequestSchema, async (request): Promise<GetPromptResult> => {
    if (request.params.name !== PREDICT.name) {
      const known = new CourseError("MCP_PROMPT_UNKNOWN", `没有提示模板 “${request.params.name}”；这里只有 ${PREDICT.name}`);
      throw new McpError(ErrorCode.InvalidParams, formatError(known));
    }
    try {
      if (!isPracticeFolder(root)) throw notPracticeError(root);
      const text = await tools.predict(request.params.arguments?.lab);
      return { description: "先预测下一次运行的结果", messages: [{ role: "user", content: { type: "text", text } }] };
    } catch (error) {
      throw new McpError(ErrorCode.InvalidParams, formatError(error));
    }
  });
  return { server, idle: () => serial(async () => undefined) };
}

/**
 * Serves `server` on this process's stdin and stdout until the client closes stdin (or the
 * transport closes, or `stop` aborts). Nothing else may write to stdout meanwhile: it is the
 * protocol. A stdout that breaks (the client went away) ends the serving too.
 */
export async function serveStdio(server: Server, stop?: AbortSignal): Promise<void> {
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(transport);
  const close = () => void server.close().catch(() => undefined);
  process.stdin.once("end", close);
  process.stdin.once("close", close);
  process.stdout.on("error", close);
  stop?.addEventListener("abort", close, { once: true });
  if (stop?.aborted) close();
  await closed;
  process.stdin.off("end", close);
  process.stdin.off("close", close);
  process.stdout.off("error", close);
  stop?.removeEventListener("abort", close);
}
