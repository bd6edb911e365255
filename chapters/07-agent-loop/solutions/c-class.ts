// @ts-nocheck — a solution of Chapter 07, checked in place of packages/pi-course/src/agent-loop.ts (see ../../../docs/chapter-home.md, step 5: verify and mistakes build it there)
/**
 * Chapter 07 · the agent loop — solution C: a class and recursion. One `AgentRun` object holds
 * the run's state and its callbacks; each turn is a method that ends by calling the next turn
 * (no `for (;;)`); the calls are collected with `reduce` and run with `for…of` over
 * `entries()`; runTool settles the executor with `.then(onAnswer, onRejection)`;
 * settleUnfinishedTurn looks its reasons up in a table; stopAborted uses `forEach`. Copies are
 * `structuredClone` throughout, the executor's result included (a copy is as good as the
 * original: the contract only asks that nothing of it changes). The given part is the
 * reference's.
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

/** One run: the state the given helpers share, and the turns as methods. */
class AgentRun {
  readonly state: RunState;
  readonly #config: LoopConfig;

  constructor(history: readonly AgentMessage[], config: LoopConfig) {
    this.#config = config;
    this.state = { config, transcript: history.map((message) => structuredClone(message)), added: [], usage: { inputTokens: 0, outputTokens: 0 }, turns: 0 };
  }

  #emit(event: LoopEvent): void {
    if (this.#config.emit !== undefined) this.#config.emit(event);
  }

  #aborted(): boolean {
    return this.#config.signal !== undefined && this.#config.signal.aborted;
  }

  async #request(): Promise<ModelRequest> {
    const specs = this.#config.registry.list().map(toolSpec);
    if (this.#config.prepareContext === undefined) {
      return { systemPrompt: this.#config.systemPrompt === undefined ? "" : this.#config.systemPrompt, messages: structuredClone(this.state.transcript), tools: specs };
    }
    const prepared = await this.#config.prepareContext(structuredClone(this.state.transcript), structuredClone(specs));
    return { systemPrompt: prepared.systemPrompt, messages: prepared.messages, tools: specs };
  }

  /** Asks the model once more, or ends the run; every path returns the run's result. */
  async next(): Promise<LoopResult> {
    if (this.#aborted()) return stopAborted(this.state, []);
    if (this.state.turns === this.#config.maxTurns) return endRun(this.state, "turn_limit");
    const turnNumber = (this.state.turns += 1);
    this.#emit({ type: "turn_start", turn: turnNumber });
    const request = await this.#request();
    const turn = await streamTurn(this.#config.model, request, this.#config.signal, (event) => this.#emit({ type: "assistant", turn: turnNumber, event }));
    this.state.usage.inputTokens = this.state.usage.inputTokens + turn.usage.inputTokens;
    this.state.usage.outputTokens = this.state.usage.outputTokens + turn.usage.outputTokens;

    const failed = turn.stopReason === "error" || turn.stopReason === "aborted";
    if (!failed || turn.message.content.length !== 0) addMessage(this.state, turn.message);
    const end: LoopEvent = { type: "turn_end", turn: turnNumber, stopReason: turn.stopReason, usage: structuredClone(turn.usage) };
    if (Object.hasOwn(turn, "errorMessage") && turn.errorMessage !== undefined) {
      end.errorMessage = turn.errorMessage;
      if (turn.failure) end.failure = structuredClone(turn.failure);
    }
    this.#emit(end);

    const calls = turn.message.content.reduce<ToolCall[]>((found, block) => (block.type === "toolCall" ? [...found, block] : found), []);
    let more = false;
    if (turn.stopReason === "toolUse" || turn.stopReason === "stop") {
      if (calls.length === 0 && turn.stopReason === "toolUse") {
        return endRun(this.state, "error", "the model stopped to use tools (stopReason toolUse) but named no tool call", TOOL_CALLS_MISSING);
      }
      for (const [position, call] of calls.entries()) {
        if (this.#aborted()) return stopAborted(this.state, calls.slice(position));
        this.#emit({ type: "tool_start", call: structuredClone(call) });
        const result = await runTool(this.#config.executor, call, this.#config.signal);
        addMessage(this.state, result);
        this.#emit({ type: "tool_end", call: structuredClone(call), result: structuredClone(result) });
      }
      more = calls.length > 0;
    } else {
      const ended = settleUnfinishedTurn(this.state, turn, calls);
      if (ended) return ended;
    }
    if (this.#aborted()) return stopAborted(this.state, []);
    const queued = this.#config.takeInput ? this.#config.takeInput() : [];
    queued.forEach((message) => addMessage(this.state, structuredClone(message)));
    if (more || queued.length > 0) return this.next();
    return endRun(this.state, turn.stopReason === "length" ? "length" : "stop");
  }
}

export async function runAgentLoop(history: readonly AgentMessage[], input: readonly AgentMessage[], config: LoopConfig): Promise<LoopResult> {
  if (!(Number.isInteger(config.maxTurns) && config.maxTurns >= 1)) throw new LoopError("LOOP_CONFIG_INVALID", `bad maxTurns: ${config.maxTurns}`);
  const run = new AgentRun(history, config);
  for (const message of input) addMessage(run.state, structuredClone(message));
  return run.next();
}

function runTool(executor: ToolExecutor, call: ToolCall, signal: AbortSignal | undefined): Promise<ToolResultMessage> {
  const refuse = () => pairedError(call, `tool "${call.name}": the executor did not answer this call`);
  return Promise.resolve()
    .then(() => executor(structuredClone(call)))
    .then(
      (answer: ToolResultMessage | null | undefined) => {
        if (answer === null || typeof answer !== "object") return refuse();
        if (answer.role !== "toolResult" || answer.toolCallId !== call.id || answer.toolName !== call.name) return refuse();
        return structuredClone(answer);
      },
      (reason: unknown) => {
        const stopped = signal?.aborted === true && Object.is(reason, signal.reason);
        return pairedError(call, `tool "${call.name}" ${stopped ? "was stopped" : "failed"}: ${errorMessage(reason)}`);
      },
    );
}

// ── Lab 7.2 · 没有跑完的回合：调用一个都不运行，每个照样有结果 ──

const UNFINISHED: Record<"error" | "aborted", string> = { error: "the model's turn failed", aborted: "the turn was aborted" };

function settleUnfinishedTurn(run: RunState, turn: AssistantTurn, calls: readonly ToolCall[]): LoopResult | undefined {
  const stop = turn.stopReason as "length" | "error" | "aborted";
  const detail = turn.errorMessage !== undefined ? turn.errorMessage : stop;
  const reason =
    stop === "length" ? "the model's output was cut off at its token limit (stopReason length), so this call may be incomplete" : `${UNFINISHED[stop]} before it finished (${detail})`;
  calls.forEach((call) => addMessage(run, pairedError(call, `tool "${call.name}" was not run: ${reason}`)));
  switch (stop) {
    case "length":
      return undefined;
    case "aborted":
      if (run.config.signal?.aborted) return stopAborted(run, []);
      return endRun(run, "aborted", detail, turn.failure);
    default:
      return endRun(run, "error", detail, turn.failure);
  }
}

// ── Lab 7.3 · 中止：没开始的调用不再开始，每个都有结果 ──

function stopAborted(run: RunState, notStarted: readonly ToolCall[]): LoopResult {
  const words = errorMessage(abortReason(run.config.signal as AbortSignal));
  notStarted.forEach((call) => addMessage(run, pairedError(call, `tool "${call.name}" was not run: ${words}`)));
  return endRun(run, "aborted", words);
}
