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
 * - every change is an event, delivered to subscribers in order; a subscriber that throws
 *   never breaks the run (its error goes to `onListenerError`).
 * The transcript is always valid to send to a model: the loop pairs every tool call.
 *
 * Where the transcript is kept is deliberately simple here (an array in memory); chapter
 * 10's session tree can record it from the `message` events, and chapter 11's
 * `buildContext` can budget each request through `prepareContext`.
 */
import { errorMessage, Listeners, type Unsubscribe } from "./async.js";
import { runAgentLoop, type LoopConfig, type LoopEvent, type LoopResult } from "./agent-loop.js";
import type { Model } from "./model.js";
import { createToolExecutor, type ToolExecutor, type ToolRegistry } from "./tool.js";
import { userMessage, type AgentMessage, type UserMessage } from "./types.js";

/** Everything an agent reports, in order: the loop's events plus its own. Payloads are copies. */
export type AgentEvent =
  | LoopEvent
  | { type: "run_start" }
  | { type: "queued"; message: UserMessage }
  | { type: "dropped"; messages: UserMessage[]; reason: "aborted" | "error" | "turn_limit" }
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
  /** Where a subscriber's exception goes; default `console.error`. */
  onListenerError?(error: unknown, event: AgentEvent): void;
}

interface Run {
  controller: AbortController;
  done: Promise<LoopResult>;
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

  get running(): boolean {
    return this.#run !== undefined;
  }

  /** Copies of the input waiting for the next turn boundary. */
  get queued(): UserMessage[] {
    return structuredClone(this.#queue);
  }

  /** Adds a listener for every event; returns the function that removes it. */
  subscribe(listener: (event: AgentEvent) => void): Unsubscribe {
    return this.#listeners.add(listener);
  }

  /**
   * Sends user input. When idle, starts a run and resolves with its result. When a run is
   * busy, queues the input for its next turn boundary and resolves with the result of that
   * same run (which then includes the input, unless the run ends first without delivering
   * it: see `dropped`). Never rejects for a model or tool failure (those are results);
   * rejects only if `prepareContext` throws.
   */
  prompt(input: string | UserMessage): Promise<LoopResult> {
    const message = typeof input === "string" ? userMessage(input) : structuredClone(input);
    if (this.#run !== undefined) {
      this.#queue.push(message);
      this.#emit({ type: "queued", message: structuredClone(message) });
      return this.#run.done;
    }
    const controller = new AbortController();
    const run: Run = { controller, done: this.#execute([message], controller.signal) };
    this.#run = run;
    const clear = () => {
      if (this.#run === run) this.#run = undefined;
    };
    run.done.then(clear, clear);
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

  async #execute(first: UserMessage[], signal: AbortSignal): Promise<LoopResult> {
    const options = this.#options;
    this.#emit({ type: "run_start" });
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
        if (event.type === "message") this.#messages.push(structuredClone(event.message));
        this.#emit(event);
      },
    };
    let total: LoopResult | undefined;
    let input: AgentMessage[] = first;
    try {
      for (;;) {
        const result = await runAgentLoop(this.#messages, input, config);
        total = total === undefined ? result : sum(total, result);
        // Input that arrived as the loop was returning: the run goes on with it.
        if ((result.stopReason === "stop" || result.stopReason === "length") && this.#queue.length > 0) {
          input = this.#queue.splice(0);
          continue;
        }
        break;
      }
    } finally {
      if (this.#queue.length > 0) {
        const reason = total?.stopReason === "aborted" || total?.stopReason === "turn_limit" ? total.stopReason : "error";
        this.#emit({ type: "dropped", messages: this.#queue.splice(0), reason });
      }
    }
    this.#emit({ type: "run_end", result: structuredClone(total) });
    return total;
  }

  #emit(event: AgentEvent): void {
    const errors = this.#listeners.emit(event);
    for (const error of errors) {
      if (this.#options.onListenerError) this.#options.onListenerError(error, event);
      else console.error(`agent listener failed on "${event.type}": ${errorMessage(error)}`);
    }
  }
}
