// @ts-nocheck — a solution of Chapter 07, checked in place of packages/pi-course/src/agent-loop.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 07 · the agent loop — solution D: a queue of calls. The calls of a turn go into a
 * queue that runTool's loop empties with `shift()`, so what is left after an abort is the
 * queue itself; the stop reasons are a `switch`; every event passes through one `send`
 * helper, which also copies the model's stream events (not needed, not wrong); runTool
 * tells a stop from a failure with `Object.is`; the history is copied message by message
 * with a `for…of`. The given part is the reference's.
 */
import { abortReason, errorMessage } from "./async.js";
import type { AssistantEvent, AssistantTurn, Model, ModelRequest, StopReason, ToolSpec, TurnFailure, Usage } from "./model.js";
import type { Tool, ToolExecutor, ToolRegistry } from "./tool.js";
import { text, toolResult, type AgentMessage, type AssistantMessage, type ToolCall, type ToolResultMessage } from "./types.js";

/** What a run reports while it happens, in order. Messages are copies. */
export type LoopEvent =
  | { type: "turn_start"; turn: number }
  | { type: "assistant"; turn: number; event: AssistantEvent }
  | { type: "message"; message: AgentMessage }
  | { type: "tool_start"; call: ToolCall }
  | { type: "tool_end"; call: ToolCall; result: ToolResultMessage }
  | { type: "turn_end"; turn: number; stopReason: StopReason; usage: Usage; errorMessage?: string; failure?: TurnFailure };

/** Why a run ended: the model answered (`stop`), ran out of output (`length`), failed, was aborted, or hit `maxTurns`. */
export type LoopStopReason = "stop" | "length" | "error" | "aborted" | "turn_limit";

export interface LoopResult {
  /** The messages this run added (its input first), in order. */
  messages: AgentMessage[];
  stopReason: LoopStopReason;
  /** Model calls made. */
  turns: number;
  /** Summed over the turns. */
  usage: Usage;
  /** Present when `stopReason` is `error` or `aborted`. */
  errorMessage?: string;
  /**
   * Present with `errorMessage` when the failure has a name: the failed turn's own (a
   * provider's `PROVIDER_*`), the loop's (`LoopFailureCode`), or, in the `run_end` of an
   * agent's run that rejected, the agent's (`AGENT_RUN_REJECTED`, chapter 09).
   */
  failure?: TurnFailure;
}

/** The codes of the failures the loop itself names in `LoopResult.failure`. */
export type LoopFailureCode = "LOOP_TOOL_CALLS_MISSING";

/** The conversation part of one request. */
export interface RequestContext {
  systemPrompt: string;
  messages: AgentMessage[];
}

export interface LoopConfig {
  model: Model;
  /** Listed before every model call, so a tool registered mid-run is offered from the next turn. */
  registry: ToolRegistry;
  /**
   * Runs one call; create it with the run's signal (`createToolExecutor(registry, { signal })`)
   * so tools can stop. After an abort the loop still waits for its answer (see the module
   * comment), so it must answer promptly once the signal aborts, as `createToolExecutor` does.
   */
  executor: ToolExecutor;
  /** Used by the default `prepareContext`; default `""`. */
  systemPrompt?: string;
  /** Most model calls in one run; a positive integer. */
  maxTurns: number;
  signal?: AbortSignal;
  /**
   * Builds each request from the whole transcript (a copy). Default: `systemPrompt` and
   * every message. Chapter 11's `buildContext` plugs in here to budget the request. `tools`
   * are the specs this very request will carry (listed once per turn, before this call), so
   * a budget that counts them counts exactly what is sent.
   */
  prepareContext?(transcript: AgentMessage[], tools: readonly ToolSpec[]): RequestContext | Promise<RequestContext>;
  /** Asked at every turn boundary for messages to add before the next model call (queued user input). */
  takeInput?(): AgentMessage[];
  emit?(event: LoopEvent): void;
}

/** Error codes thrown on purpose by this module. */
export type LoopErrorCode = "LOOP_CONFIG_INVALID";

/** An error with a stable `code`; messages may change, codes do not. */
export class LoopError extends Error {
  readonly code: LoopErrorCode;
  constructor(code: LoopErrorCode, message: string) {
    super(message);
    this.name = "LoopError";
    this.code = code;
  }
}

/** A tool as the model is told about it; a schema without a JSON Schema is offered as any object. */
export function toolSpec(tool: Tool): ToolSpec {
  return { name: tool.name, description: tool.description, parameters: structuredClone(tool.schema.jsonSchema ?? { type: "object" }) };
}

/** The failure of a `toolUse` turn that names no tool call. */
export const TOOL_CALLS_MISSING: TurnFailure & { code: LoopFailureCode } = {
  code: "LOOP_TOOL_CALLS_MISSING",
  message: "模型说要调用工具（stopReason 为 toolUse），却一个工具调用也没有给出，运行到此结束：请重试这一轮；反复出现时，换一个支持工具调用的模型。",
};

// ── Given: the run's state and the plumbing around the model ──

/** One run's state, shared by the functions below. */
interface RunState {
  readonly config: LoopConfig;
  /** What the next request is built from: a copy of the history, then every message this run added. */
  readonly transcript: AgentMessage[];
  /** The messages this run added, in order (what `LoopResult.messages` reports). */
  readonly added: AgentMessage[];
  /** Summed over the turns. */
  readonly usage: Usage;
  /** Model calls made so far. */
  turns: number;
}

/** Adds `message` to the transcript and to what the run added, and reports a copy of it. */
function addMessage(run: RunState, message: AgentMessage): void {
  run.transcript.push(message);
  run.added.push(message);
  run.config.emit?.({ type: "message", message: structuredClone(message) });
}

/** The run's result: copies of what it added and of its usage; `errorMessage` and `failure` only with an error. */
function endRun(run: RunState, stopReason: LoopStopReason, error?: string, failure?: TurnFailure): LoopResult {
  const result: LoopResult = { messages: structuredClone(run.added), stopReason, turns: run.turns, usage: { ...run.usage } };
  if (error !== undefined) result.errorMessage = error;
  if (error !== undefined && failure !== undefined) result.failure = { code: failure.code, message: failure.message };
  return result;
}

/** A result for a call the loop answers itself. */
function pairedError(call: ToolCall, message: string): ToolResultMessage {
  return toolResult(call, { content: [text(message)], isError: true });
}

/**
 * Streams one turn, reporting its events; a model that breaks its contract (throws, fails)
 * gives an error turn. The model gets a signal of the turn's own that follows `signal` and
 * is aborted whenever this function stops reading before the stream's result (a listener
 * threw, the stream failed), so the request behind it stops too.
 */
async function streamTurn(
  model: Model,
  request: ModelRequest,
  signal: AbortSignal | undefined,
  onEvent: (event: AssistantEvent) => void,
): Promise<AssistantTurn> {
  const ownRequest = new AbortController();
  const follow = () => ownRequest.abort(abortReason(signal!));
  if (signal?.aborted) follow();
  else signal?.addEventListener("abort", follow, { once: true });
  let readToEnd = false;
  try {
    let stream;
    try {
      stream = model.stream(request, { signal: ownRequest.signal });
    } catch (error) {
      return brokenTurn(`model "${model.name}" threw: ${errorMessage(error)}`);
    }
    let listenerFailure: { error: unknown } | undefined;
    try {
      for await (const event of stream) {
        try {
          onEvent(event);
        } catch (error) {
          listenerFailure = { error };
          break;
        }
      }
      if (listenerFailure === undefined) {
        const turn = await stream.result();
        readToEnd = true;
        return turn;
      }
    } catch (error) {
      // The stream failed: the model broke its promise to report failures as turns.
      return brokenTurn(`model "${model.name}" failed its stream: ${errorMessage(error)}`);
    }
    throw listenerFailure.error; // the caller's own listener threw: that is the caller's error
  } finally {
    signal?.removeEventListener("abort", follow);
    if (!readToEnd) ownRequest.abort(new DOMException("the agent loop stopped reading this model turn", "AbortError"));
  }
}

function brokenTurn(message: string): AssistantTurn {
  return {
    message: { role: "assistant", content: [], timestamp: Date.now() },
    stopReason: "error",
    usage: { inputTokens: 0, outputTokens: 0 },
    errorMessage: message,
  };
}

// ── Lab 7.1 · 往返：工具的结果交回模型，直到它不再要工具 ──

/** Every event of the run goes out here. */
function send(config: LoopConfig, event: LoopEvent): void {
  if (typeof config.emit === "function") config.emit(event);
}

/** What the run does after a finished turn's calls: ask again, or stop. */
type Next = { kind: "ask"; asked: boolean } | { kind: "done"; result: LoopResult };

/** Runs the calls of a finished turn, one after another, emptying `queue`. */
async function runQueue(run: RunState, queue: ToolCall[]): Promise<LoopResult | undefined> {
  const { config } = run;
  while (queue.length > 0) {
    if (config.signal?.aborted) return stopAborted(run, queue);
    const call = queue.shift() as ToolCall;
    send(config, { type: "tool_start", call: structuredClone(call) });
    const result = await runTool(config.executor, call, config.signal);
    addMessage(run, result);
    send(config, { type: "tool_end", call: structuredClone(call), result: structuredClone(result) });
  }
  return undefined;
}

/** Decides what a turn leads to, once its message is in the transcript. */
async function afterTurn(run: RunState, turn: AssistantTurn): Promise<Next> {
  const calls = turn.message.content.filter((block): block is ToolCall => block.type === "toolCall");
  switch (turn.stopReason) {
    case "length":
    case "error":
    case "aborted": {
      const over = settleUnfinishedTurn(run, turn, calls);
      return over === undefined ? { kind: "ask", asked: false } : { kind: "done", result: over };
    }
    case "toolUse":
      if (calls.length === 0) {
        return { kind: "done", result: endRun(run, "error", "the model stopped to use tools (stopReason toolUse) but named no tool call", TOOL_CALLS_MISSING) };
      }
      break;
    default:
      break;
  }
  const stopped = await runQueue(run, [...calls]);
  return stopped === undefined ? { kind: "ask", asked: calls.length > 0 } : { kind: "done", result: stopped };
}

export async function runAgentLoop(history: readonly AgentMessage[], input: readonly AgentMessage[], config: LoopConfig): Promise<LoopResult> {
  const { maxTurns, signal } = config;
  if (typeof maxTurns !== "number" || !Number.isInteger(maxTurns) || maxTurns <= 0) {
    throw new LoopError("LOOP_CONFIG_INVALID", `maxTurns should be a positive integer, not ${maxTurns}`);
  }
  const run: RunState = { config, transcript: [], added: [], usage: { inputTokens: 0, outputTokens: 0 }, turns: 0 };
  for (const old of history) run.transcript.push(structuredClone(old));
  for (const message of input) addMessage(run, structuredClone(message));
  for (;;) {
    if (signal?.aborted) return stopAborted(run, []);
    if (run.turns >= maxTurns) return endRun(run, "turn_limit");
    run.turns += 1;
    const number = run.turns;
    send(config, { type: "turn_start", turn: number });
    const tools: ToolSpec[] = [];
    for (const tool of config.registry.list()) tools.push(toolSpec(tool));
    let systemPrompt = config.systemPrompt ?? "";
    let messages = structuredClone(run.transcript);
    if (config.prepareContext) ({ systemPrompt, messages } = await config.prepareContext(messages, structuredClone(tools)));
    const turn = await streamTurn(config.model, { systemPrompt, messages, tools }, signal, (event) =>
      send(config, { type: "assistant", turn: number, event: structuredClone(event) }),
    );
    run.usage.inputTokens += turn.usage.inputTokens;
    run.usage.outputTokens += turn.usage.outputTokens;
    const brokeEmpty = (turn.stopReason === "error" || turn.stopReason === "aborted") && turn.message.content.length === 0;
    if (!brokeEmpty) addMessage(run, turn.message);
    const end: LoopEvent = { type: "turn_end", turn: number, stopReason: turn.stopReason, usage: { inputTokens: turn.usage.inputTokens, outputTokens: turn.usage.outputTokens } };
    if (turn.errorMessage !== undefined) {
      end.errorMessage = turn.errorMessage;
      if (turn.failure !== undefined) end.failure = { code: turn.failure.code, message: turn.failure.message };
    }
    send(config, end);

    const next = await afterTurn(run, turn);
    if (next.kind === "done") return next.result;
    if (signal?.aborted) return stopAborted(run, []);
    const queued = config.takeInput?.() ?? [];
    for (const message of queued) addMessage(run, structuredClone(message));
    if (!next.asked && queued.length === 0) return endRun(run, turn.stopReason === "length" ? "length" : "stop");
  }
}

async function runTool(executor: ToolExecutor, call: ToolCall, signal: AbortSignal | undefined): Promise<ToolResultMessage> {
  let answer: unknown;
  try {
    answer = await executor(structuredClone(call));
  } catch (problem) {
    const byAbort = signal !== undefined && signal.aborted && Object.is(problem, signal.reason);
    const verb = byAbort ? "was stopped" : "failed";
    return pairedError(call, `tool "${call.name}" ${verb}: ${errorMessage(problem)}`);
  }
  const result = answer as Partial<ToolResultMessage> | null | undefined;
  const answersThisCall = result != null && result.role === "toolResult" && result.toolCallId === call.id && result.toolName === call.name;
  if (!answersThisCall) return pairedError(call, `tool "${call.name}": the executor did not answer this call`);
  return result as ToolResultMessage;
}

// ── Lab 7.2 · 没有跑完的回合：调用一个都不运行，每个照样有结果 ──

function settleUnfinishedTurn(run: RunState, turn: AssistantTurn, calls: readonly ToolCall[]): LoopResult | undefined {
  const said = turn.errorMessage ?? turn.stopReason;
  let because: string;
  if (turn.stopReason === "length") because = "the model's output was cut off at its token limit (stopReason length), so this call may be incomplete";
  else if (turn.stopReason === "aborted") because = `the turn was aborted before it finished (${said})`;
  else because = `the model's turn failed before it finished (${said})`;
  for (let i = 0; i < calls.length; i++) addMessage(run, pairedError(calls[i]!, `tool "${calls[i]!.name}" was not run: ${because}`));
  if (turn.stopReason === "length") return undefined;
  if (turn.stopReason === "aborted") return run.config.signal?.aborted ? stopAborted(run, []) : endRun(run, "aborted", said, turn.failure);
  return endRun(run, "error", said, turn.failure);
}

// ── Lab 7.3 · 中止：没开始的调用不再开始，每个都有结果 ──

function stopAborted(run: RunState, notStarted: readonly ToolCall[]): LoopResult {
  const signal = run.config.signal as AbortSignal;
  const reason = errorMessage(abortReason(signal));
  for (let i = 0; i < notStarted.length; i++) {
    const call = notStarted[i]!;
    addMessage(run, pairedError(call, `tool "${call.name}" was not run: ${reason}`));
  }
  return endRun(run, "aborted", reason);
}
