/**
 * Chapter 09 · the stateful agent: the loop of chapter 07 with a memory, a mailbox and a
 * stop button.
 *
 * A user does not wait politely for the agent to finish: they type the next message while
 * a tool runs, they press Ctrl-C, a UI watches everything. `Agent` owns the transcript
 * across runs and makes those moments well defined:
 * - input that arrives while a run is busy is queued and delivered at the next turn
 *   boundary (after the current tool results, before the next model call), in order;
 * - `abort()` stops the current run (the model mid-stream, a running tool through its
 *   signal) and drops the input still queued for it, saying so in a `dropped` event;
 * - a run is running from the moment `prompt()` starts it, before its `run_start` is
 *   delivered, until it ends: a `prompt()` or `abort()` made from any listener of the
 *   run's events (even `run_start`) reaches this run, so two loops never share the
 *   transcript. Its last events (`dropped` if input was left, then `run_end`) are emitted
 *   with the agent already idle, so a `prompt()` made there starts the next run, whose
 *   events come after this `run_end`;
 * - every run ends with exactly one `run_end`, whatever rejects (a throwing
 *   `prepareContext` or `wrapExecutor`, an invalid `maxTurns`): then `run_end` carries a
 *   result with `stopReason` `error`, the rejection's text as `errorMessage`, the failure
 *   code `AGENT_RUN_REJECTED` and what the run added until then, and `prompt()` rejects
 *   with the error itself, after `run_end` was delivered;
 * - every change is an event, delivered to every subscriber in emission order: an event
 *   emitted while another is being delivered (a listener calls `prompt()`, say) waits
 *   until that one has reached every listener. Each listener gets a copy of its own, so
 *   what one listener does with its event (a UI trims a message, a recorder keeps it)
 *   cannot change what the next one sees or the agent's transcript. A subscriber that
 *   throws never breaks the run: its error goes to `onListenerError`, and if that throws
 *   too, to `console.error`.
 * The transcript is always valid to send to a model: the loop pairs every tool call.
 *
 * Where the transcript is kept is deliberately simple here (an array in memory); chapter
 * 10's session tree can record it from the `message` events, and chapter 11's
 * `buildContext` can budget each request through `prepareContext`.
 */
import { deferred, errorMessage, Listeners, type Unsubscribe } from "./async.js";
import { runAgentLoop, type LoopConfig, type LoopEvent, type LoopResult } from "./agent-loop.js";
import type { Model, TurnFailure } from "./model.js";
import { createToolExecutor, type ToolExecutor, type ToolRegistry } from "./tool.js";
import { userMessage, type AgentMessage, type UserMessage } from "./types.js";

/** Everything an agent reports, in order: the loop's events plus its own. Each listener gets its own copy. */
export type AgentEvent =
  | LoopEvent
  | { type: "run_start" }
  | { type: "queued"; message: UserMessage }
  | { type: "dropped"; messages: UserMessage[]; reason: "aborted" | "error" | "turn_limit" }
  /** The last event of every run; for a run that rejected, `result.failure.code` is `AGENT_RUN_REJECTED`. */
  | { type: "run_end"; result: LoopResult };

export interface AgentOptions {
  model: Model;
  registry: ToolRegistry;
  systemPrompt?: string;
  /** Most model calls per run; default 25. */
  maxTurns?: number;
  /** The transcript to start from (copied). */
  messages?: readonly AgentMessage[];
  /** Wraps each run's executor, e.g. with an extension host's hooks. */
  wrapExecutor?(core: ToolExecutor): ToolExecutor;
  /** Builds each request; see `LoopConfig.prepareContext`. */
  prepareContext?: LoopConfig["prepareContext"];
  /** Where a subscriber's exception goes (with a copy of the event); default `console.error`, also used when this throws. */
  onListenerError?(error: unknown, event: AgentEvent): void;
}

/** The codes of the failures the agent itself names in `LoopResult.failure`. */
export type AgentFailureCode = "AGENT_RUN_REJECTED";

/** The failure of a run that ended because one of the agent's callbacks (or its configuration) rejected it. */
export const RUN_REJECTED: TurnFailure & { code: AgentFailureCode } = {
  code: "AGENT_RUN_REJECTED",
  message: "这次运行没有正常结束：agent 自己的回调（如 prepareContext、wrapExecutor）或配置（如 maxTurns）出了错，原因见 errorMessage；prompt 以这个错误拒绝。",
};

interface Run {
  controller: AbortController;
  done: Promise<LoopResult>;
}

/** What the loop call in flight has reported so far, to describe a run that rejects. */
interface Progress {
  messages: AgentMessage[];
  turns: number;
  usage: LoopResult["usage"];
}

function noProgress(): Progress {
  return { messages: [], turns: 0, usage: { inputTokens: 0, outputTokens: 0 } };
}

function sum(a: LoopResult, b: LoopResult): LoopResult {
  const combined: LoopResult = {
    messages: [...a.messages, ...b.messages],
    stopReason: b.stopReason,
    turns: a.turns + b.turns,
    usage: { inputTokens: a.usage.inputTokens + b.usage.inputTokens, outputTokens: a.usage.outputTokens + b.usage.outputTokens },
  };
  if (b.errorMessage !== undefined) combined.errorMessage = b.errorMessage;
  if (b.failure !== undefined) combined.failure = { ...b.failure };
  return combined;
}

export class Agent {
  readonly #options: AgentOptions;
  readonly #listeners = new Listeners<AgentEvent>();
  /** Each subscriber's wrapper, which hands it a copy of its own. */
  readonly #wrappers = new Map<(event: AgentEvent) => void, (event: AgentEvent) => void>();
  /** Events emitted and not yet delivered to every listener, oldest first. */
  readonly #outbox: AgentEvent[] = [];
  #delivering = false;
  #messages: AgentMessage[];
  #queue: UserMessage[] = [];
  #run: Run | undefined;

  constructor(options: AgentOptions) {
    this.#options = options;
    this.#messages = structuredClone([...(options.messages ?? [])]);
  }

  /** A copy of the transcript, including what the current run has added so far. */
  get messages(): AgentMessage[] {
    return structuredClone(this.#messages);
  }

  /** True from the moment `prompt()` starts a run (before its `run_start`) until the run's last events (`dropped`, `run_end`) are emitted. */
  get running(): boolean {
    return this.#run !== undefined;
  }

  /** Copies of the input waiting for the next turn boundary. */
  get queued(): UserMessage[] {
    return structuredClone(this.#queue);
  }

  /**
   * Adds a listener for every event, which gets a copy of each event of its own; returns
   * the function that removes it. Adding the same function twice adds it once.
   */
  subscribe(listener: (event: AgentEvent) => void): Unsubscribe {
    let wrapper = this.#wrappers.get(listener);
    if (wrapper === undefined) {
      wrapper = (event) => listener(structuredClone(event));
      this.#wrappers.set(listener, wrapper);
    }
    const remove = this.#listeners.add(wrapper);
    return () => {
      remove();
      this.#wrappers.delete(listener);
    };
  }

  /**
   * Sends user input. When idle, starts a run and resolves with its result. When a run is
   * busy (from its first event on), queues the input for its next turn boundary and
   * resolves with the result of that same run (which then includes the input, unless the
   * run ends first without delivering it: see `dropped`). Never rejects for a model or
   * tool failure (those are results); rejects only when the agent's own callbacks or
   * configuration do (`prepareContext` or `wrapExecutor` throws, `maxTurns` is invalid),
   * after the run's `run_end` was delivered.
   */
  prompt(input: string | UserMessage): Promise<LoopResult> {
    const message = typeof input === "string" ? userMessage(input) : structuredClone(input);
    if (this.#run !== undefined) {
      this.#queue.push(message);
      this.#emit({ type: "queued", message: structuredClone(message) });
      return this.#run.done;
    }
    // The run is current before its first event is emitted, so a listener's prompt() joins it.
    const done = deferred<LoopResult>();
    const run: Run = { controller: new AbortController(), done: done.promise };
    this.#run = run;
    this.#execute(run, [message]).then(done.resolve, done.reject);
    return run.done;
  }

  /** Aborts the current run, if any; returns whether there was one. The run then ends as `aborted`. */
  abort(reason?: unknown): boolean {
    if (this.#run === undefined) return false;
    this.#run.controller.abort(reason ?? new DOMException("aborted by the user", "AbortError"));
    return true;
  }

  /** Resolves when no run is busy (at once if none is). Never rejects. */
  async idle(): Promise<void> {
    while (this.#run !== undefined)
      await this.#run.done.then(
        () => {},
        () => {},
      );
  }

  async #execute(run: Run, first: UserMessage[]): Promise<LoopResult> {
    const options = this.#options;
    const signal = run.controller.signal;
    let progress = noProgress();
    let total: LoopResult | undefined;
    let rejection: { error: unknown } | undefined;
    this.#emit({ type: "run_start" });
    try {
      const core = createToolExecutor(options.registry, { signal });
      const executor = options.wrapExecutor ? options.wrapExecutor(core) : core;
      const config: LoopConfig = {
        model: options.model,
        registry: options.registry,
        executor,
        maxTurns: options.maxTurns ?? 25,
        signal,
        ...(options.systemPrompt !== undefined ? { systemPrompt: options.systemPrompt } : {}),
        ...(options.prepareContext ? { prepareContext: options.prepareContext } : {}),
        takeInput: () => this.#queue.splice(0),
        emit: (event) => {
          if (event.type === "message") {
            this.#messages.push(structuredClone(event.message));
            progress.messages.push(structuredClone(event.message));
          }
          if (event.type === "turn_end") {
            progress.turns++;
            progress.usage.inputTokens += event.usage.inputTokens;
            progress.usage.outputTokens += event.usage.outputTokens;
          }
          this.#emit(event);
        },
      };
      let input: AgentMessage[] = first;
      for (;;) {
        progress = noProgress();
        const result = await runAgentLoop(this.#messages, input, config);
        total = total === undefined ? result : sum(total, result);
        // Input that arrived as the loop was returning: the run goes on with it.
        if ((result.stopReason === "stop" || result.stopReason === "length") && this.#queue.length > 0) {
          input = this.#queue.splice(0);
          continue;
        }
        break;
      }
    } catch (error) {
      rejection = { error };
      const partial: LoopResult = { ...progress, stopReason: "error", errorMessage: errorMessage(error), failure: { ...RUN_REJECTED } };
      total = total === undefined ? partial : sum(total, partial);
    }
    const ended: LoopResult = total!;
    // The run ends here: later input starts a new run. What is still queued is dropped,
    // and both events go out together, so a run started from a listener of `dropped`
    // reports its events after this run's `run_end`.
    const left = this.#queue.splice(0);
    if (this.#run === run) this.#run = undefined;
    const endEvents: AgentEvent[] = [];
    if (left.length > 0) {
      const reason = ended.stopReason === "aborted" || ended.stopReason === "turn_limit" ? ended.stopReason : "error";
      endEvents.push({ type: "dropped", messages: left, reason });
    }
    endEvents.push({ type: "run_end", result: structuredClone(ended) });
    this.#emit(...endEvents);
    if (rejection !== undefined) throw rejection.error;
    return ended;
  }

  /**
   * Queues `events` and, unless a delivery is already under way further up the stack,
   * delivers the queue: each event reaches every listener before the next one starts.
   * Never throws.
   */
  #emit(...events: AgentEvent[]): void {
    this.#outbox.push(...events);
    if (this.#delivering) return;
    this.#delivering = true;
    try {
      for (let event = this.#outbox.shift(); event !== undefined; event = this.#outbox.shift()) {
        for (const error of this.#listeners.emit(event)) this.#report(error, event);
      }
    } finally {
      this.#delivering = false;
    }
  }

  /** Hands a listener's error to `onListenerError`, or to `console.error` (also when `onListenerError` throws). Never throws. */
  #report(error: unknown, event: AgentEvent): void {
    let text = `agent listener failed on "${event.type}": ${errorMessage(error)}`;
    const handler = this.#options.onListenerError;
    if (handler) {
      try {
        handler(error, structuredClone(event));
        return;
      } catch (handlerError) {
        text += `; onListenerError failed too: ${errorMessage(handlerError)}`;
      }
    }
    try {
      console.error(text);
    } catch {
      // Nowhere left to report to; the run goes on.
    }
  }
}
