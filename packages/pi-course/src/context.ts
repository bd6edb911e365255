/**
 * Chapter 11 · building the context of one model request.
 *
 * `buildContext` is the one place that budgets a request. It charges the fixed costs
 * first (system prompt, tool specs, reserved output, safety margin), then spends what is
 * left on the conversation, newest interaction first. The tool specs are charged because
 * the request carries every one of them: a budget without them lets a request with many
 * or long tool specs exceed the window. It drops only whole interactions and only from
 * the old end, so the model always sees a contiguous, recent slice of the active path in
 * which every tool call still has its result. It never changes the session: the
 * projection holds copies.
 */
import type { ToolSpec } from "./model.js";
import type { SessionEntry } from "./session.js";
import { transcriptProblem, type AgentMessage } from "./types.js";

export interface BuildContextOptions {
  /** The model's context window, in tokens. Finite and non-negative. */
  maxTokens: number;
  /** `""` or absent: no system text, and it costs 0 tokens. */
  systemPrompt?: string;
  /**
   * The tool specs the request carries, exactly as sent (Chapter 07's `toolSpec`); absent:
   * none. Each costs the estimate of one string, its name, description and the JSON of
   * its parameters schema joined by newlines; a fixed cost, like the system prompt.
   */
  tools?: readonly ToolSpec[];
  /** Tokens kept free for the answer; default 0. Finite and non-negative. */
  reservedOutput?: number;
  /** Tokens kept free for estimation error; default 0. Finite and non-negative. */
  safetyMargin?: number;
  /** Token estimate of a system prompt, a tool spec's text or a message; default {@link estimateTokens}. */
  estimateTokens?(value: string | AgentMessage): number;
}

export interface ContextProjection {
  /** Exactly `options.systemPrompt`, `""` when absent. */
  systemPrompt: string;
  /** Copies of the kept messages, oldest first. */
  messages: AgentMessage[];
  /** Ids of the entries whose messages were kept, oldest first. */
  keptEntryIds: string[];
  /**
   * `within_budget`: nothing was dropped. `trimmed`: older interactions were dropped so
   * the rest fits. `single_interaction_overflow`: the newest interaction alone does not
   * fit in `availableForMessages`; it is kept anyway (and everything older dropped),
   * so `total` exceeds `maxTokens`.
   */
  reason: "within_budget" | "trimmed" | "single_interaction_overflow";
  tokens: {
    maxTokens: number;
    system: number;
    /** The tool specs, summed; 0 without tools. */
    tools: number;
    messages: number;
    reservedOutput: number;
    safetyMargin: number;
    availableForMessages: number;
    total: number;
  };
}

/** Error codes thrown on purpose by this module. */
export type ContextErrorCode = "CONTEXT_BUDGET_INVALID" | "CONTEXT_ESTIMATE_INVALID" | "CONTEXT_UNPAIRED_TOOL_CALL" | "CONTEXT_UNPAIRED_TOOL_RESULT";

/** An error with a stable `code`; messages may change, codes do not. */
export class ContextError extends Error {
  readonly code: ContextErrorCode;
  constructor(code: ContextErrorCode, message: string) {
    super(message);
    this.name = "ContextError";
    this.code = code;
  }
}

/**
 * The default estimate: `ceil(characters / 4)`. A string counts its UTF-16 code units;
 * a message counts the text of its text blocks plus, for each tool call, its name and
 * the `JSON.stringify` of its arguments (the part the model must read back). Roles,
 * ids and timestamps are not counted. Rough by design; pass your own estimator when a
 * tokenizer is available.
 */
export function estimateTokens(value: string | AgentMessage): number {
  if (typeof value === "string") return Math.ceil(value.length / 4);
  let characters = 0;
  for (const block of value.content) {
    if (block.type === "text") characters += block.text.length;
    else characters += block.name.length + (JSON.stringify(block.arguments) ?? "").length;
  }
  return Math.ceil(characters / 4);
}

/**
 * The text a tool spec is estimated as: its name, its description and the JSON of its
 * parameters schema, one per line; the part of the spec the model reads, as with a tool
 * call's name and arguments. The wrapping each provider adds around it is not counted.
 */
function toolSpecText(spec: ToolSpec): string {
  return [spec.name, spec.description, JSON.stringify(spec.parameters) ?? ""].join("\n");
}

function budget(name: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new ContextError("CONTEXT_BUDGET_INVALID", `${name} must be a finite number >= 0, got ${String(value)}`);
  }
  return value;
}

function estimate(estimator: (value: string | AgentMessage) => number, value: string | AgentMessage): number {
  const tokens: unknown = estimator(value);
  if (typeof tokens !== "number" || !Number.isFinite(tokens) || tokens < 0) {
    throw new ContextError("CONTEXT_ESTIMATE_INVALID", `estimateTokens must return a finite number >= 0, got ${String(tokens)}`);
  }
  return tokens;
}

/** Consecutive entries of the active path: a user message and everything up to the next one. */
interface Interaction {
  entries: SessionEntry[];
  tokens: number;
}

/**
 * Splits the path into interactions. A user message opens a new one; messages before
 * the first user message (a path that starts mid-conversation) form one interaction
 * of their own, the oldest, trimmed like any other.
 */
function splitInteractions(path: readonly SessionEntry[]): SessionEntry[][] {
  const groups: SessionEntry[][] = [];
  for (const entry of path) {
    const current = groups.at(-1);
    if (current === undefined || entry.message.role === "user") groups.push([entry]);
    else current.push(entry);
  }
  return groups;
}

/**
 * Checks that every tool call in the interaction has exactly one result after it with
 * the same id, and every result answers such a call: chapter 03's `transcriptProblem` on
 * the interaction's messages. Ids are compared only within one interaction, because
 * interactions are the unit that is dropped. A repeated call id or a call left unanswered
 * is `CONTEXT_UNPAIRED_TOOL_CALL`; a result that answers no earlier, unanswered call (none
 * has its id, or that call was answered already) is `CONTEXT_UNPAIRED_TOOL_RESULT`.
 */
function checkPairing(entries: readonly SessionEntry[]): void {
  const problem = transcriptProblem(entries.map((entry) => entry.message));
  if (problem === undefined) return;
  const id = problem.toolCallId;
  switch (problem.code) {
    case "TRANSCRIPT_DUPLICATE_CALL_ID":
      throw new ContextError("CONTEXT_UNPAIRED_TOOL_CALL", `tool call id "${id}" appears twice in one interaction`);
    case "TRANSCRIPT_UNANSWERED_CALL":
      throw new ContextError("CONTEXT_UNPAIRED_TOOL_CALL", `tool call "${id}" has no result in its interaction`);
    case "TRANSCRIPT_ORPHAN_RESULT":
    case "TRANSCRIPT_DUPLICATE_RESULT":
      throw new ContextError("CONTEXT_UNPAIRED_TOOL_RESULT", `tool result "${id}" answers no earlier, unanswered call in its interaction`);
  }
}

/**
 * Projects the active path into one model request within `options.maxTokens`.
 *
 * Guarantees:
 * - `tokens.availableForMessages = max(0, maxTokens − system − tools − reservedOutput − safetyMargin)`
 *   and `tokens.total = system + tools + messages + reservedOutput + safetyMargin`, where
 *   `tools` sums the estimate of each spec's `toolSpecText`: the request carries them all,
 *   so they are a fixed cost like the system prompt, and `total` is the whole request.
 * - The kept messages are whole interactions forming a contiguous suffix of the path:
 *   interactions are added newest first while they fit, and the first one that does not
 *   fit ends the projection (an older, smaller one is never kept past a gap).
 * - The newest interaction is always kept, even alone over budget
 *   (`single_interaction_overflow`).
 * - The whole path is validated first, whatever is later dropped: a budget that is
 *   negative or not finite throws `CONTEXT_BUDGET_INVALID`; an estimate that is not a
 *   finite number ≥ 0 throws `CONTEXT_ESTIMATE_INVALID`; a tool call without a result in
 *   its interaction (or a repeated call id) throws `CONTEXT_UNPAIRED_TOOL_CALL`; a result
 *   that answers no earlier call in its interaction throws `CONTEXT_UNPAIRED_TOOL_RESULT`.
 * - The system prompt is estimated only when non-empty; `""` costs 0 without calling the
 *   estimator. Every tool spec and every message is estimated exactly once, as a copy.
 * - The input path is never changed and the projection shares no object with it.
 */
export function buildContext(activePath: readonly SessionEntry[], options: BuildContextOptions): ContextProjection {
  const maxTokens = budget("maxTokens", options.maxTokens);
  const reservedOutput = budget("reservedOutput", options.reservedOutput ?? 0);
  const safetyMargin = budget("safetyMargin", options.safetyMargin ?? 0);
  const estimator = options.estimateTokens ?? estimateTokens;
  const systemPrompt = options.systemPrompt ?? "";

  // Copy first: the estimator and the projection only ever see copies of the path.
  const groups = splitInteractions(structuredClone([...activePath]));
  for (const group of groups) checkPairing(group);

  const system = systemPrompt === "" ? 0 : estimate(estimator, systemPrompt);
  const tools = (options.tools ?? []).reduce((sum, spec) => sum + estimate(estimator, toolSpecText(spec)), 0);
  const interactions: Interaction[] = groups.map((entries) => ({
    entries,
    tokens: entries.reduce((sum, entry) => sum + estimate(estimator, entry.message), 0),
  }));
  const availableForMessages = Math.max(0, maxTokens - system - tools - reservedOutput - safetyMargin);

  const kept: Interaction[] = [];
  let messages = 0;
  for (let index = interactions.length - 1; index >= 0; index--) {
    const interaction = interactions[index]!;
    const isNewest = kept.length === 0;
    if (!isNewest && messages + interaction.tokens > availableForMessages) break;
    kept.unshift(interaction);
    messages += interaction.tokens;
  }

  const newest = interactions.at(-1);
  const reason: ContextProjection["reason"] =
    newest !== undefined && newest.tokens > availableForMessages
      ? "single_interaction_overflow"
      : kept.length < interactions.length
        ? "trimmed"
        : "within_budget";

  const keptEntries = kept.flatMap((interaction) => interaction.entries);
  return {
    systemPrompt,
    messages: keptEntries.map((entry) => entry.message),
    keptEntryIds: keptEntries.map((entry) => entry.id),
    reason,
    tokens: {
      maxTokens,
      system,
      tools,
      messages,
      reservedOutput,
      safetyMargin,
      availableForMessages,
      total: system + tools + messages + reservedOutput + safetyMargin,
    },
  };
}
