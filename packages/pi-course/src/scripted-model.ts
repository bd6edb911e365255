/**
 * Chapter 04 · the scripted model: a `Model` that plays a script of assistant turns.
 *
 * It is what every later test, and `npm start`, talks to instead of a network: the same
 * request always gets the same events, in the same pieces, with the same ids. It streams
 * like a real model (text in chunks, tool arguments as JSON fragments, a yield to the
 * event loop between events), so a consumer's abort lands mid-turn exactly as it would
 * against a provider. It also records every request it received, which is how a test
 * sees what an agent actually sent.
 */
import { errorMessage, tick } from "./async.js";
import { TurnBuilder, type AssistantStream, type Model, type ModelRequest, type StreamOptions, type Usage } from "./model.js";
import type { TextContent } from "./types.js";

/** A tool call in a script; `id` defaults to `call-<turn>-<n>` (both 1-based). */
export interface ScriptedToolCall {
  type: "toolCall";
  name: string;
  arguments: Record<string, unknown>;
  id?: string;
}

export type ScriptedBlock = TextContent | ScriptedToolCall;

/** One assistant turn to play. */
export interface ScriptedTurn {
  content: ScriptedBlock[];
  /** Default: `toolUse` when the turn holds a tool call, else `stop`. */
  stopReason?: "stop" | "toolUse" | "length";
  /** Plays the content, then ends the turn as an error with this message. */
  error?: string;
  usage?: Partial<Usage>;
}

/** A turn, or a function that writes the turn from the request (a script that reacts to tool results). */
export type ScriptStep = ScriptedTurn | ((request: ModelRequest, turnNumber: number) => ScriptedTurn);

export interface ScriptedModelOptions {
  name?: string;
  /** Characters (code points) per text delta and per argument fragment; default 16. */
  chunkSize?: number;
  /** Timestamp of each message; default `Date.now()`. */
  now?: () => number;
}

/** A tool call block for a script. */
export function toolCall(name: string, args: Record<string, unknown> = {}, id?: string): ScriptedToolCall {
  return id === undefined ? { type: "toolCall", name, arguments: args } : { type: "toolCall", name, arguments: args, id };
}

/** A turn of the given blocks; strings become text blocks. */
export function turn(...blocks: (string | ScriptedBlock)[]): ScriptedTurn {
  return { content: blocks.map((block) => (typeof block === "string" ? { type: "text", text: block } : block)) };
}

/** Splits by code points, so a chunk never ends in half a surrogate pair. */
function chunks(value: string, size: number): string[] {
  const points = Array.from(value);
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(""));
  return out;
}

/**
 * Plays `script` one turn per `stream()` call, in order.
 *
 * Guarantees: deterministic events and ids for a given script and options; `stream()`
 * records a deep copy of the request before anything else; a script that has run out, a
 * step function that throws, or arguments that are not plain JSON end the turn as an
 * `error` (the model contract: never a throw); an abort ends it as `aborted` with the
 * blocks finished so far.
 */
export class ScriptedModel implements Model {
  readonly name: string;
  /** Copies of every request received, in order. */
  readonly requests: ModelRequest[] = [];
  readonly #script: readonly ScriptStep[];
  readonly #chunkSize: number;
  readonly #now: (() => number) | undefined;
  #next = 0;

  constructor(script: readonly ScriptStep[], options: ScriptedModelOptions = {}) {
    const chunkSize = options.chunkSize ?? 16;
    if (!Number.isInteger(chunkSize) || chunkSize < 1) throw new RangeError(`chunkSize must be a positive integer, got ${chunkSize}`);
    this.#script = [...script];
    this.name = options.name ?? "scripted";
    this.#chunkSize = chunkSize;
    this.#now = options.now;
  }

  /** How many turns of the script have not been played yet. */
  get remaining(): number {
    return this.#script.length - this.#next;
  }

  stream(request: ModelRequest, options: StreamOptions = {}): AssistantStream {
    const builder = new TurnBuilder({ ...(options.signal ? { signal: options.signal } : {}), ...(this.#now ? { now: this.#now } : {}) });
    let copy: ModelRequest;
    try {
      copy = structuredClone(request);
    } catch (error) {
      builder.fail(`request cannot be copied: ${errorMessage(error)}`);
      return builder.stream;
    }
    this.requests.push(copy);
    const turnNumber = ++this.#next;
    const step = this.#script[turnNumber - 1];
    void this.#play(builder, step, copy, turnNumber).catch((error: unknown) => builder.fail(errorMessage(error)));
    return builder.stream;
  }

  async #play(builder: TurnBuilder, step: ScriptStep | undefined, request: ModelRequest, turnNumber: number): Promise<void> {
    // Let the caller attach to the stream before the first event, as a network would.
    await tick();
    if (step === undefined) {
      builder.fail(`scripted model "${this.name}": no turn left (the script has ${this.#script.length})`);
      return;
    }
    const scripted = typeof step === "function" ? step(structuredClone(request), turnNumber) : step;
    let calls = 0;
    for (const block of scripted.content) {
      if (block.type === "text") {
        if (!builder.startText()) return;
        for (const piece of chunks(block.text, this.#chunkSize)) {
          await tick();
          if (!builder.appendText(piece)) return;
        }
      } else {
        const id = block.id ?? `call-${turnNumber}-${++calls}`;
        const json = JSON.stringify(block.arguments);
        if (json === undefined) throw new TypeError(`arguments of scripted tool call "${block.name}" are not JSON`);
        if (!builder.startToolCall(id, block.name)) return;
        for (const piece of chunks(json, this.#chunkSize)) {
          await tick();
          if (!builder.appendToolArguments(piece)) return;
        }
      }
      await tick();
      if (!builder.endBlock()) return;
    }
    if (scripted.usage) builder.setUsage(scripted.usage);
    if (scripted.error !== undefined) {
      builder.fail(scripted.error);
      return;
    }
    const hasToolCall = scripted.content.some((block) => block.type === "toolCall");
    builder.finish(scripted.stopReason ?? (hasToolCall ? "toolUse" : "stop"));
  }
}
