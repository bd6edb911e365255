// @ts-nocheck: written blind from the chapter text by a learner who saw only the practice folder (no hint used); verify and the mistake measurement drop this line when they build it in place of agent-loop.ts.
/**
 * Chapter 07 · the agent loop — the practice starter.
 *
 * The public types, `LoopError`, `toolSpec` and `TOOL_CALLS_MISSING` are given, and so is the
 * plumbing around the model and the run's state: `RunState`, `addMessage` (adds a message and
 * reports a copy of it), `endRun` (the run's result, as copies), `pairedError` (an error
 * result paired with a call) and `streamTurn` (reads one model turn, reporting its events;
 * a model that breaks its contract gives an error turn). Four functions are the construction
 * sites, each named after its lab: Lab 7.1 runAgentLoop and runTool → 7.2
 * settleUnfinishedTurn → 7.3 stopAborted. Lab 7.2 also adds a case to runAgentLoop, and Lab
 * 7.3 one to runTool (the chapter text says which). Add private helpers as you need them;
 * keep the exports and the signatures of the declarations marked 🔨.
 *
 * Run one lab:  npm run lab -w @pi/course -- 7.1
 *
 * The imports are the reference's: unused ones are fine while you build.
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

/** 施工位的错误：消息说出哪个 Lab 来写这段代码。每个 Lab 都做完后没有代码再调用它，删掉或留着都行。 */
function labError(lab: string): Error {
  return new Error(`${lab} 尚未实现`);
}

// ── Lab 7.1 · 往返：工具的结果交回模型，直到它不再要工具 ──

/**
 * Runs the loop on `history` plus `input` until the model stops asking for tools, the run
 * is aborted, a turn fails, or `maxTurns` model calls were made. Returns what the run
 * added; never changes `history` or `input`. Rejects only when one of the caller's own
 * callbacks (`emit`, `prepareContext`, `takeInput`) throws, or with `LOOP_CONFIG_INVALID`
 * for a `maxTurns` that is not a positive integer. See the module comment for the rules.
 */
export async function runAgentLoop(history: readonly AgentMessage[], input: readonly AgentMessage[], config: LoopConfig): Promise<LoopResult> {
  const maxTurns = config.maxTurns;
  if (typeof maxTurns !== "number" || !Number.isInteger(maxTurns) || maxTurns <= 0) {
    throw new LoopError("LOOP_CONFIG_INVALID", `maxTurns must be a positive integer, got ${String(maxTurns)}`);
  }
  const run: RunState = {
    config,
    transcript: history.map((message) => structuredClone(message)),
    added: [],
    usage: { inputTokens: 0, outputTokens: 0 },
    turns: 0,
  };
  for (const message of input) addMessage(run, structuredClone(message));
  const signal = config.signal;
  for (;;) {
    if (signal?.aborted) return stopAborted(run, []);
    if (run.turns >= maxTurns) return endRun(run, "turn_limit");
    run.turns += 1;
    const turnNumber = run.turns;
    config.emit?.({ type: "turn_start", turn: turnNumber });
    const tools = config.registry.list().map(toolSpec); // listed once per turn
    const context: RequestContext = config.prepareContext
      ? await config.prepareContext(structuredClone(run.transcript), structuredClone(tools))
      : { systemPrompt: config.systemPrompt ?? "", messages: structuredClone(run.transcript) };
    const request: ModelRequest = { systemPrompt: context.systemPrompt, messages: context.messages, tools };
    const turn = await streamTurn(config.model, request, signal, (event) => config.emit?.({ type: "assistant", turn: turnNumber, event }));
    run.usage.inputTokens += turn.usage.inputTokens;
    run.usage.outputTokens += turn.usage.outputTokens;

    const unfinished = turn.stopReason === "length" || turn.stopReason === "error" || turn.stopReason === "aborted";
    const failed = turn.stopReason === "error" || turn.stopReason === "aborted";
    if (!(failed && turn.message.content.length === 0)) addMessage(run, turn.message);
    const turnEnd: LoopEvent = { type: "turn_end", turn: turnNumber, stopReason: turn.stopReason, usage: { ...turn.usage } };
    if (turn.errorMessage !== undefined) turnEnd.errorMessage = turn.errorMessage;
    if (turn.failure !== undefined) turnEnd.failure = { code: turn.failure.code, message: turn.failure.message };
    config.emit?.(turnEnd);

    const calls = turn.message.content.filter((block): block is ToolCall => block.type === "toolCall");
    if (unfinished) {
      const ended = settleUnfinishedTurn(run, turn, calls);
      if (ended !== undefined) return ended;
    } else {
      if (turn.stopReason === "toolUse" && calls.length === 0) {
        return endRun(run, "error", "the model stopped to use tools (stopReason toolUse) but named no tool call", TOOL_CALLS_MISSING);
      }
      // stop or toolUse: every call runs, in order, its result right after the previous one
      for (const [index, call] of calls.entries()) {
        if (signal?.aborted) return stopAborted(run, calls.slice(index));
        config.emit?.({ type: "tool_start", call: structuredClone(call) });
        const result = await runTool(config.executor, call, signal);
        addMessage(run, result);
        config.emit?.({ type: "tool_end", call: structuredClone(call), result: structuredClone(result) });
      }
    }

    // the turn boundary
    if (signal?.aborted) return stopAborted(run, []);
    const queued = config.takeInput?.() ?? [];
    for (const message of queued) addMessage(run, structuredClone(message));
    if (queued.length > 0) continue;
    if (turn.stopReason === "length") return endRun(run, "length");
    if (calls.length === 0) return endRun(run, "stop");
  }
}

/**
 * Runs one call through the executor and makes sure the answer is a result paired with it.
 * It waits for the executor even after an abort: the executor decides whether a result
 * arrived before the abort (kept) or the tool was stopped.
 */
async function runTool(executor: ToolExecutor, call: ToolCall, signal: AbortSignal | undefined): Promise<ToolResultMessage> {
  let answer: unknown;
  try {
    answer = await executor(structuredClone(call));
  } catch (error) {
    // stopped only when it rejects with the abort's reason itself; anything else is a failure
    if (signal?.aborted && error === signal.reason) return pairedError(call, `tool "${call.name}" was stopped: ${errorMessage(error)}`);
    return pairedError(call, `tool "${call.name}" failed: ${errorMessage(error)}`);
  }
  if (!answersCall(answer, call)) return pairedError(call, `tool "${call.name}": the executor did not answer this call`);
  return answer;
}

/** Whether the executor's answer is a result paired with `call` (its role, id and name). */
function answersCall(answer: unknown, call: ToolCall): answer is ToolResultMessage {
  if (typeof answer !== "object" || answer === null) return false;
  const result = answer as Partial<ToolResultMessage>;
  return result.role === "toolResult" && result.toolCallId === call.id && result.toolName === call.name;
}

// ── Lab 7.2 · 没有跑完的回合：调用一个都不运行，每个照样有结果 ──

/**
 * A turn that did not finish (`length`, `error`, `aborted`): answers each of its calls with a
 * paired error, in call order, and runs none. A failed or aborted turn ends the run (its
 * result); a cut-off one gives `undefined`, and the loop goes on to the turn boundary.
 */
function settleUnfinishedTurn(run: RunState, turn: AssistantTurn, calls: readonly ToolCall[]): LoopResult | undefined {
  const turnError = turn.errorMessage ?? "";
  const reason =
    turn.stopReason === "length"
      ? "the model's output was cut off at its token limit (stopReason length), so this call may be incomplete"
      : turn.stopReason === "aborted"
        ? `the turn was aborted before it finished (${turnError})`
        : `the model's turn failed before it finished (${turnError})`;
  for (const call of calls) addMessage(run, pairedError(call, `tool "${call.name}" was not run: ${reason}`));
  if (turn.stopReason === "length") return undefined; // on to the turn boundary
  if (turn.stopReason === "aborted" && run.config.signal?.aborted) return stopAborted(run, []);
  return endRun(run, turn.stopReason === "aborted" ? "aborted" : "error", turnError, turn.failure);
}

// ── Lab 7.3 · 中止：没开始的调用不再开始，每个都有结果 ──

/** Ends an aborted run: each call in `notStarted` is answered "was not run", in order; the run ends `aborted` with the abort's reason. */
function stopAborted(run: RunState, notStarted: readonly ToolCall[]): LoopResult {
  const signal = run.config.signal;
  const reason = signal === undefined ? "aborted" : errorMessage(abortReason(signal));
  for (const call of notStarted) addMessage(run, pairedError(call, `tool "${call.name}" was not run: ${reason}`));
  return endRun(run, "aborted", reason);
}
