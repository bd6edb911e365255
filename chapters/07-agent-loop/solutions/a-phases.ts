// @ts-nocheck — a solution of Chapter 07, checked in place of packages/pi-course/src/agent-loop.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 07 · the agent loop — solution A: in phases. The loop asks the model in a helper of
 * its own (askModel), answers a finished turn's calls in another (answerCalls), and branches
 * on the stop reason with a switch; runTool settles the executor's promise into a tagged
 * value instead of try/catch. The given part is the reference's.
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

/** The tool calls of a message, in order. */
function callsOf(message: AssistantMessage): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const block of message.content) if (block.type === "toolCall") calls.push(block);
  return calls;
}

/** One model call: reports turn_start, builds the request, streams the turn, records it and reports turn_end. */
async function askModel(run: RunState): Promise<AssistantTurn> {
  const { config } = run;
  const turnNumber = ++run.turns;
  config.emit?.({ type: "turn_start", turn: turnNumber });
  const specs = config.registry.list().map((tool) => toolSpec(tool));
  const prepared = config.prepareContext
    ? await config.prepareContext(structuredClone(run.transcript), structuredClone(specs))
    : { systemPrompt: config.systemPrompt ?? "", messages: structuredClone(run.transcript) };
  const turn = await streamTurn(config.model, { systemPrompt: prepared.systemPrompt, messages: prepared.messages, tools: specs }, config.signal, (event) =>
    config.emit?.({ type: "assistant", turn: turnNumber, event }),
  );
  run.usage.inputTokens += turn.usage.inputTokens;
  run.usage.outputTokens += turn.usage.outputTokens;
  const broke = turn.stopReason === "error" || turn.stopReason === "aborted";
  if (!(broke && turn.message.content.length === 0)) addMessage(run, turn.message);
  const end: LoopEvent = { type: "turn_end", turn: turnNumber, stopReason: turn.stopReason, usage: { ...turn.usage } };
  if (turn.errorMessage !== undefined) {
    end.errorMessage = turn.errorMessage;
    if (turn.failure !== undefined) end.failure = { code: turn.failure.code, message: turn.failure.message };
  }
  config.emit?.(end);
  return turn;
}

/** Runs a finished turn's calls in order; an abort before a call ends the run. */
async function answerCalls(run: RunState, calls: ToolCall[]): Promise<LoopResult | undefined> {
  const { signal, executor, emit } = run.config;
  for (let i = 0; i < calls.length; i++) {
    if (signal?.aborted) return stopAborted(run, calls.slice(i));
    const call = calls[i]!;
    emit?.({ type: "tool_start", call: structuredClone(call) });
    const answer = await runTool(executor, call, signal);
    addMessage(run, answer);
    emit?.({ type: "tool_end", call: structuredClone(call), result: structuredClone(answer) });
  }
  return undefined;
}

export async function runAgentLoop(history: readonly AgentMessage[], input: readonly AgentMessage[], config: LoopConfig): Promise<LoopResult> {
  if (!(Number.isInteger(config.maxTurns) && config.maxTurns > 0)) {
    throw new LoopError("LOOP_CONFIG_INVALID", `maxTurns: expected a positive integer, got ${String(config.maxTurns)}`);
  }
  const run: RunState = { config, transcript: history.map((message) => structuredClone(message)), added: [], usage: { inputTokens: 0, outputTokens: 0 }, turns: 0 };
  input.forEach((message) => addMessage(run, structuredClone(message)));
  const { signal } = config;
  while (true) {
    if (signal?.aborted) return stopAborted(run, []);
    if (run.turns === config.maxTurns) return endRun(run, "turn_limit");
    const turn = await askModel(run);
    const calls = callsOf(turn.message);
    if (turn.stopReason === "toolUse" && calls.length === 0) {
      return endRun(run, "error", "the model stopped to use tools (stopReason toolUse) but named no tool call", TOOL_CALLS_MISSING);
    }
    let askedForTools: boolean;
    switch (turn.stopReason) {
      case "toolUse":
      case "stop": {
        const ended = await answerCalls(run, calls);
        if (ended) return ended;
        askedForTools = calls.length > 0;
        break;
      }
      default: {
        const ended = settleUnfinishedTurn(run, turn, calls);
        if (ended) return ended;
        askedForTools = false;
      }
    }
    if (signal?.aborted) return stopAborted(run, []);
    const more = config.takeInput ? config.takeInput() : [];
    more.forEach((message) => addMessage(run, structuredClone(message)));
    if (!askedForTools && more.length === 0) return endRun(run, turn.stopReason === "length" ? "length" : "stop");
  }
}

async function runTool(executor: ToolExecutor, call: ToolCall, signal: AbortSignal | undefined): Promise<ToolResultMessage> {
  const settled: { ok: true; value: ToolResultMessage } | { ok: false; error: unknown } = await Promise.resolve()
    .then(() => executor(structuredClone(call)))
    .then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
  if (!settled.ok) {
    const stopped = signal !== undefined && signal.aborted && settled.error === signal.reason;
    return pairedError(call, `tool "${call.name}" ${stopped ? "was stopped" : "failed"}: ${errorMessage(settled.error)}`);
  }
  const answer = settled.value as ToolResultMessage | undefined | null;
  const forThisCall = typeof answer === "object" && answer !== null && answer.role === "toolResult" && answer.toolCallId === call.id && answer.toolName === call.name;
  return forThisCall ? answer : pairedError(call, `tool "${call.name}": the executor did not answer this call`);
}

// ── Lab 7.2 · 没有跑完的回合：调用一个都不运行，每个照样有结果 ──

const NOT_RUN_BECAUSE: Record<"error" | "aborted", string> = { error: "the model's turn failed", aborted: "the turn was aborted" };

function settleUnfinishedTurn(run: RunState, turn: AssistantTurn, calls: readonly ToolCall[]): LoopResult | undefined {
  if (turn.stopReason === "length") {
    for (const call of calls) {
      addMessage(run, pairedError(call, `tool "${call.name}" was not run: the model's output was cut off at its token limit (stopReason length), so this call may be incomplete`));
    }
    return undefined;
  }
  const kind = turn.stopReason === "aborted" ? "aborted" : "error";
  const detail = turn.errorMessage ?? turn.stopReason;
  for (const call of calls) addMessage(run, pairedError(call, `tool "${call.name}" was not run: ${NOT_RUN_BECAUSE[kind]} before it finished (${detail})`));
  if (kind === "aborted" && run.config.signal?.aborted === true) return stopAborted(run, []);
  return endRun(run, kind, detail, turn.failure);
}

// ── Lab 7.3 · 中止：没开始的调用不再开始，每个都有结果 ──

function stopAborted(run: RunState, notStarted: readonly ToolCall[]): LoopResult {
  const why = errorMessage(abortReason(run.config.signal as AbortSignal));
  notStarted.forEach((call) => addMessage(run, pairedError(call, `tool "${call.name}" was not run: ${why}`)));
  return endRun(run, "aborted", why);
}
