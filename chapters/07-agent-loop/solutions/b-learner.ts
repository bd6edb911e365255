// @ts-nocheck — a solution of Chapter 07, checked in place of packages/pi-course/src/agent-loop.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 07 · the agent loop — solution B: a learner's, written in the starter from the
 * chapter text and the hints alone: one loop with an index-based for over the calls, a
 * "did this turn ask for more" flag, runTool with try/catch and one return per outcome.
 * The given part is the reference's.
 *
 * Chapter 07 · the agent loop: ask the model, run the tools it asks for, hand the results
 * back, and repeat until it answers without asking for a tool.
 *
 * Everything an agent does is this loop; everything else is what it is given. Its rules:
 * - Every tool call gets exactly one result, right after its assistant message, in call
 *   order: the executor of chapter 06 pairs what it runs, and the loop pairs what it does
 *   not run (an abort before or during the call, an executor that rejects or answers the
 *   wrong call). A transcript the loop returns can always be sent to a model again.
 * - A turn that did not finish (`error` or `aborted`) is not a request to run anything:
 *   its text is kept, none of its calls runs, each call it completed is answered with a
 *   paired error saying why, and the run ends.
 * - A turn cut off by the output limit (`length`) is not one either: none of its calls
 *   runs (the last may be missing arguments, and the model never saw its own turn end),
 *   each is answered with a paired error saying so, and the run ends as `length` unless
 *   queued input arrived.
 * - A turn that stopped to use tools (`toolUse`) but names none ends the run as `error`
 *   with the failure code `LOOP_TOOL_CALLS_MISSING`: the model asked for something the loop
 *   cannot give, and answering "stop" would hide that.
 * - `maxTurns` bounds the model calls of one run, so a model that never stops asking for
 *   tools cannot spin forever; the run then ends as `turn_limit` with every call paired.
 * - Aborting stops the model mid-stream and ends the run; calls not started are answered
 *   "was not run". A running tool is the executor's to stop, because only the executor
 *   sees whether its result arrived first: the loop waits for the executor's answer and
 *   keeps it, so a write or command that finished is never reported as stopped (the model
 *   would run it again). `createToolExecutor` with the run's signal answers promptly.
 * - Whenever the loop stops reading a model stream before its end, for any reason (the
 *   caller's `emit` throws, the stream breaks its contract), it aborts that model request
 *   through the signal it gave the model, so no provider keeps streaming for nobody.
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

export async function runAgentLoop(history: readonly AgentMessage[], input: readonly AgentMessage[], config: LoopConfig): Promise<LoopResult> {
  const limit = config.maxTurns;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit <= 0) {
    throw new LoopError("LOOP_CONFIG_INVALID", "maxTurns must be a positive integer");
  }
  const emit = (event: LoopEvent) => {
    if (config.emit) config.emit(event);
  };
  const run: RunState = { config, transcript: structuredClone(history) as AgentMessage[], added: [], usage: { inputTokens: 0, outputTokens: 0 }, turns: 0 };
  for (const message of input) addMessage(run, structuredClone(message));

  while (true) {
    if (config.signal && config.signal.aborted) return stopAborted(run, []);
    if (run.turns >= limit) return endRun(run, "turn_limit");
    run.turns += 1;
    const n = run.turns;
    emit({ type: "turn_start", turn: n });
    const tools: ToolSpec[] = [];
    for (const tool of config.registry.list()) tools.push(toolSpec(tool));
    let ctx: RequestContext;
    if (config.prepareContext) ctx = await config.prepareContext(structuredClone(run.transcript), structuredClone(tools));
    else ctx = { systemPrompt: config.systemPrompt ?? "", messages: structuredClone(run.transcript) };
    const answer = await streamTurn(config.model, { systemPrompt: ctx.systemPrompt, messages: ctx.messages, tools }, config.signal, (event) => {
      emit({ type: "assistant", turn: n, event });
    });
    run.usage.inputTokens += answer.usage.inputTokens;
    run.usage.outputTokens += answer.usage.outputTokens;
    const reason = answer.stopReason;
    const unfinished = reason === "length" || reason === "error" || reason === "aborted";
    const failedEmpty = (reason === "error" || reason === "aborted") && answer.message.content.length === 0;
    if (!failedEmpty) addMessage(run, answer.message);
    const endEvent: LoopEvent = { type: "turn_end", turn: n, stopReason: reason, usage: { inputTokens: answer.usage.inputTokens, outputTokens: answer.usage.outputTokens } };
    if (answer.errorMessage !== undefined) endEvent.errorMessage = answer.errorMessage;
    if (answer.errorMessage !== undefined && answer.failure) endEvent.failure = { code: answer.failure.code, message: answer.failure.message };
    emit(endEvent);

    const calls: ToolCall[] = [];
    for (const block of answer.message.content) {
      if (block.type === "toolCall") calls.push(block);
    }
    let wantsMore = false;
    if (unfinished) {
      const done = settleUnfinishedTurn(run, answer, calls);
      if (done !== undefined) return done;
    } else if (reason === "toolUse" && calls.length === 0) {
      return endRun(run, "error", "the model stopped to use tools (stopReason toolUse) but named no tool call", TOOL_CALLS_MISSING);
    } else {
      for (let i = 0; i < calls.length; i++) {
        if (config.signal?.aborted) return stopAborted(run, calls.slice(i));
        const call = calls[i]!;
        emit({ type: "tool_start", call: structuredClone(call) });
        const result = await runTool(config.executor, call, config.signal);
        addMessage(run, result);
        emit({ type: "tool_end", call: structuredClone(call), result: structuredClone(result) });
      }
      wantsMore = calls.length > 0;
    }
    if (config.signal?.aborted) return stopAborted(run, []);

    const queued = config.takeInput === undefined ? [] : config.takeInput();
    for (const message of queued) addMessage(run, structuredClone(message));
    if (queued.length > 0) wantsMore = true;
    if (!wantsMore) {
      if (reason === "length") return endRun(run, "length");
      return endRun(run, "stop");
    }
  }
}

async function runTool(executor: ToolExecutor, call: ToolCall, signal: AbortSignal | undefined): Promise<ToolResultMessage> {
  let answer: ToolResultMessage;
  try {
    answer = await executor(structuredClone(call));
  } catch (error) {
    if (signal !== undefined && signal.aborted && error === signal.reason) {
      return pairedError(call, `tool "${call.name}" was stopped: ${errorMessage(error)}`);
    }
    return pairedError(call, `tool "${call.name}" failed: ${errorMessage(error)}`);
  }
  if (!answer || answer.role !== "toolResult") return pairedError(call, `tool "${call.name}": the executor did not answer this call`);
  if (answer.toolCallId !== call.id || answer.toolName !== call.name) {
    return pairedError(call, `tool "${call.name}": the executor did not answer this call`);
  }
  return answer;
}

// ── Lab 7.2 · 没有跑完的回合：调用一个都不运行，每个照样有结果 ──

function settleUnfinishedTurn(run: RunState, turn: AssistantTurn, calls: readonly ToolCall[]): LoopResult | undefined {
  let why: string;
  if (turn.stopReason === "length") {
    why = "the model's output was cut off at its token limit (stopReason length), so this call may be incomplete";
  } else if (turn.stopReason === "aborted") {
    why = `the turn was aborted before it finished (${turn.errorMessage ?? "aborted"})`;
  } else {
    why = `the model's turn failed before it finished (${turn.errorMessage ?? turn.stopReason})`;
  }
  for (const call of calls) {
    addMessage(run, pairedError(call, `tool "${call.name}" was not run: ${why}`));
  }
  if (turn.stopReason === "length") return undefined;
  if (turn.stopReason === "aborted") {
    if (run.config.signal?.aborted) return stopAborted(run, []);
    return endRun(run, "aborted", turn.errorMessage ?? "aborted", turn.failure);
  }
  return endRun(run, "error", turn.errorMessage ?? turn.stopReason, turn.failure);
}

// ── Lab 7.3 · 中止：没开始的调用不再开始，每个都有结果 ──

function stopAborted(run: RunState, notStarted: readonly ToolCall[]): LoopResult {
  const signal = run.config.signal!;
  const text = errorMessage(abortReason(signal));
  for (const call of notStarted) {
    addMessage(run, pairedError(call, `tool "${call.name}" was not run: ${text}`));
  }
  return endRun(run, "aborted", text);
}
