/**
 * `npm start` from Chapter 13 on: one scripted session of the runtime (`runtime.ts`) in
 * the sample workspace, printed as a transcript or as JSON lines.
 *
 * The session, in order: the project (`examples/workspace`) and the user's own folder
 * (`examples/user`) are copied to a scratch folder, so the tools act on copies and no run
 * can change either; the runtime starts (lenient discovery, the user's extensions, the
 * project's trust decision, the project's extensions) and its diagnostics are shown once;
 * the user's turn is a `/template:` command; the scripted model (no network, the same run
 * every time) reads the skill catalog in its system prompt, calls `load_skill` itself, reads
 * the bundled file the skill's body names (`load_skill` with `resources`), reads the
 * project file, and tries a destructive shell command that the project's `guard` extension
 * blocks; finally `reload()` reports what changed (nothing). In a practice folder it runs
 * on the learner's own runtime.ts and stops at the first lab not finished yet. What it does
 * the way Chapter 12's session does (the folders, their copies, the scripted model's steps
 * and what it says about the tools' results) comes from `demo.ts`.
 *
 * This module is provided: no lab asks for it.
 */
import { mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { TOOL_CALLS_MISSING } from "../agent-loop.js";
import type { AssistantTurn, Model, ModelRequest, TurnFailure } from "../model.js";
import { discoverResources, type ResourceCatalog } from "../resources.js";
import {
  buildSkillCatalog,
  createLoadSkillTool,
  createRuntime,
  expandInput,
  type ReloadReport,
  type Runtime,
  type RuntimeContextOptions,
  type RuntimeDiagnostic,
  type RuntimeEvent,
  type TurnResult,
} from "../runtime.js";
import { ScriptedModel, toolCall, turn, type ScriptStep } from "../scripted-model.js";
import { textOf, type AgentMessage, type ToolResultMessage } from "../types.js";
import {
  checkFolder,
  checkSize,
  cleanupReport,
  cleanupStep,
  copyInto,
  copyLimits,
  exampleFolder,
  firstProjectFile,
  isBlocked,
  isUnfinishedLab,
  readStep,
  todoMarks,
  UNFINISHED_LAB,
  unreadReport,
  type DemoFolderOptions,
} from "./demo.js";
import { createTranscript, type ModelInfo, type SessionCounts, type Transcript } from "./runtime-transcript.js";

/** The sample project of `npm start`. */
export function sampleProject(): string {
  return exampleFolder("workspace");
}

/** The sample user folder (user-level skills and extensions) that goes with the sample project. */
export function sampleUserFolder(): string {
  return exampleFolder("user");
}

export interface RuntimeDemoOptions extends DemoFolderOptions {
  /** The user's own folder; default the sample user folder when the project is the sample, else none. `null`: none. */
  userRoot?: string | null;
  userLabel?: string;
  /** Trust a project other than the sample (whose own code is trusted). */
  trustProject?: boolean;
  /** The user's turn; default `defaultTurn` of the project (see `RuntimeSession.defaultInput`). */
  input?: string;
  /** The skill catalog's byte budget; default `DEFAULT_START_CATALOG_BYTES`. */
  maxCatalogBytes?: number;
  /** The skill the scripted model loads with `load_skill`; default a catalog skill whose description mentions reviewing. */
  skill?: string;
  /** `text` (default): a transcript; `json`: one JSON object per line. */
  format?: "text" | "json";
  /** The model; default the scripted one, its script played afresh at every turn. */
  model?: Model;
  /** What to say about `model` before the start (provider, model id, origin). */
  modelInfo?: ModelInfo;
  /** Hears the session's transcript once it exists, before any request (to print a provider's retries on it). */
  onTranscript?(transcript: Transcript): void;
  /** The context window of requests, in tokens; default 8000, reserving 1024 for output. */
  context?: { maxTokens: number; reservedOutput: number };
  /** Stops the turn (Ctrl-C). */
  signal?: AbortSignal;
}

export interface RuntimeDemoSummary {
  stopReason: string;
  turns: number;
  toolCalls: number;
  blocked: number;
  /** Names of the skills loaded, in order, with who asked. */
  skillLoads: { name: string; by: string }[];
  diagnostics: RuntimeDiagnostic[];
  extensions: { id: string; origin: string; status: string }[];
  catalog: { listed: string[]; dropped: string[]; hidden: string[]; text: string };
  /** The reload after the turn; none when the turn did not end with `stop`. */
  reload?: ReloadReport;
  /** Present when the turn did not end with `stop`: why, with a stable code (see `SessionTurn`). */
  failure?: TurnFailure;
  /** Every request the scripted model received (copies). */
  requests: ModelRequest[];
  messages: AgentMessage[];
}

/**
 * The skill catalog's byte budget `npm start` passes to the runtime (the runtime's own
 * default, 4096, stays as its labs test it). Measured: a catalog shaped like the public
 * anthropics/skills repository (17 skills, descriptions of one to three sentences, 177–312
 * characters) takes 4,706 bytes with its header (the fixture in `test/13-start.test.ts`),
 * so 4096 drops three of them; 8192 still lists all 17 with every description at 400
 * characters (about 7.3 KB), the top of that range.
 */
export const DEFAULT_START_CATALOG_BYTES = 8192;

/** The turn `npm start` runs when told nothing: the project's `review` template when it has one, else a plain request. */
export function defaultTurn(file: string | undefined, resources: Pick<ResourceCatalog, "templates">): string {
  const target = file ?? "README.md";
  if (resources.templates.some((template) => template.name === "review")) return `/template:review file=${target}`;
  return `请审查 ${target}，列出你发现的问题，但先不要修改任何文件。`;
}

const BASE_PROMPT = "You are a careful coding agent working in the user's project. Follow the project's instructions.";

/** The skills the catalog section of a system prompt lists, as the model would read them. */
function catalogEntries(systemPrompt: string): { name: string; description: string }[] {
  const at = systemPrompt.indexOf("# Skills\n");
  if (at === -1) return [];
  const entries: { name: string; description: string }[] = [];
  for (const line of systemPrompt.slice(at).split("\n").slice(1)) {
    if (line.startsWith("#")) break;
    const entry = /^- ([^:]+): (.*)$/.exec(line);
    if (entry !== null) entries.push({ name: entry[1]!, description: entry[2]! });
  }
  return entries;
}

/** This turn's messages: from its user message on (earlier turns stay in the session). */
function thisTurnOf(request: ModelRequest): AgentMessage[] {
  const start = request.messages.findLastIndex((m) => m.role === "user");
  return start === -1 ? request.messages : request.messages.slice(start);
}

/** The skill `/skill:` forced into the turn whose user message is `user`, if any. */
function forcedSkill(user: AgentMessage | undefined): string | undefined {
  return user !== undefined && user.role === "user" ? /^Skill "([^"]+)" \(loaded by the user/.exec(textOf(user))?.[1] : undefined;
}

/** The heading load_skill puts before a skill's file list (Chapter 13, §C4.9). */
const FILE_LIST_HEADING = "\n# Files of skill ";

/**
 * A file a loaded skill bundles that its body names: the first listed path (in list order)
 * that the body mentions, or undefined. Read from the tool result as the model sees it: the
 * text before the file list is the body, `details.files` the list.
 */
function fileTheBodyNames(result: ToolResultMessage): string | undefined {
  const files = (result.details as { files?: unknown } | undefined)?.files;
  if (!Array.isArray(files)) return undefined;
  const said = textOf(result);
  const at = said.indexOf(FILE_LIST_HEADING);
  const body = at === -1 ? said : said.slice(0, at);
  return files.find((file): file is string => typeof file === "string" && body.includes(file));
}

/**
 * The model's next step, decided afresh from what it is sent, like a model would: it picks a
 * skill (the one `--skill` names, else one whose catalog description says it is for
 * reviewing) and loads it with `load_skill`, unless the user already forced one into the
 * turn; when the loaded body names a file the skill bundles, it reads that file with
 * `load_skill`'s `resources`; it reads the project file the turn names; it tries to clean up
 * with `rm -rf`; and its answer reports what the tools returned.
 */
function nextStep(file: string, wanted: string | undefined): ScriptStep {
  return (request) => {
    const thisTurn = thisTurnOf(request);
    const results = thisTurn.filter((m): m is ToolResultMessage => m.role === "toolResult");
    const forced = forcedSkill(thisTurn[0]);
    const loads = results.filter((r) => r.toolName === "load_skill");
    if (loads.length === 0 && !results.some((r) => r.toolName === "list")) {
      if (forced !== undefined) return turn(`用户已经把技能 ${forced} 的正文放进了这一轮，我照着它做，先看看工作区。`, toolCall("list", { path: "." }));
      if (wanted !== undefined) return turn(`用户要我用技能 ${wanted}，先把它的正文加载进来。`, toolCall("load_skill", { name: wanted }));
      const pick = catalogEntries(request.systemPrompt).find((entry) => /\breview/i.test(entry.description));
      if (pick === undefined) return turn("清单里没有讲审查的技能，我直接开始，先看看工作区。", toolCall("list", { path: "." }));
      return turn(`清单里的 ${pick.name} 讲的正是审查，先把它的正文加载进来。`, toolCall("load_skill", { name: pick.name }));
    }
    const loaded = loads[0];
    const named = loaded !== undefined && loads.length === 1 && !loaded.isError ? fileTheBodyNames(loaded) : undefined;
    if (loaded !== undefined && named !== undefined) {
      const name = (loaded.details as { name: string }).name;
      return turn(`正文提到了技能自带的 ${named}，先把它读进来。`, toolCall("load_skill", { name, resources: [named] }));
    }
    if (!results.some((r) => r.toolName === "read")) return readStep(file);
    if (!results.some((r) => r.toolName === "shell")) return cleanupStep();
    return turn(answerOf(file, results, forced));
  };
}

/** The model's answer: what the tools of this turn returned, in whole sentences. */
function answerOf(file: string, results: readonly ToolResultMessage[], forced: string | undefined): string {
  const loaded = results.find((r) => r.toolName === "load_skill" && !r.isError);
  const bundled = results.find((r) => r.toolName === "load_skill" && !r.isError && (r.details as { resources?: unknown } | undefined)?.resources !== undefined);
  const read = results.find((r) => r.toolName === "read");
  const shell = results.find((r) => r.toolName === "shell");
  const skill = loaded === undefined ? forced : (loaded.details as { name?: string } | undefined)?.name;
  const said: string[] = [];
  // This session quotes the first 72 characters of a failure's first line.
  const cleanup = cleanupReport(shell, 72);
  if (cleanup !== undefined) said.push(cleanup);
  if (bundled !== undefined) {
    const files = (bundled.details as { resources: string[] }).resources;
    said.push(`技能 ${skill} 自带的 ${files.join("、")} 也读过了（${textOf(bundled).split("\n").length} 行）。`);
  }
  if (read === undefined || read.isError) {
    said.push(unreadReport(file, read, 72));
  } else {
    const body = textOf(read).split("\n");
    const marks = todoMarks(body);
    const how =
      skill === undefined ? "没有加载任何技能，凭常识" : loaded === undefined ? `参照用户给的技能 ${skill}，` : `按 load_skill 拿到的技能 ${skill} 的正文`;
    // A sentence of its own whatever the file holds: the findings follow the colon, or the sentence says there are none.
    if (marks.length > 0) {
      said.push(`${how}审查了 ${file}（${body.length} 行），找到 ${marks.length} 处留下的 TODO / FIXME：`);
      said.push(...marks.map((mark) => `- ${mark}`));
    } else said.push(`${how}审查了 ${file}（${body.length} 行），没有找到留下的 TODO / FIXME。`);
  }
  return said.join("\n");
}

/** The model's script: the same decision (`nextStep`) at every request, as many times as a turn can take. */
function runtimeScript(file: string, wanted: string | undefined): ScriptStep[] {
  return Array.from({ length: 8 }, () => nextStep(file, wanted));
}

/** Replaces every scratch path in `value` by the folder the user named, so no output names a copy. */
function relabeler(pairs: readonly [string, string][]): (value: string) => string {
  return (value) => {
    let out = value;
    for (const [from, to] of pairs) out = out.split(`${from}${path.sep}`).join(`${to}/`).split(from).join(to);
    return out;
  };
}

/** What a session's turn ended with: the runtime's result, and when it failed, the failure with its code. */
export interface SessionTurn extends Omit<TurnResult, "failure"> {
  /**
   * Present when the turn did not end well: the provider's failure (`PROVIDER_*`), the loop's
   * (`LOOP_TOOL_CALLS_MISSING`), the runtime's `TURN_ABORTED` when the caller's signal stopped it,
   * `TURN_FAILED` for a model failure without a name, `TURN_CUT_OFF` for an answer cut at
   * the token limit.
   */
  failure?: TurnFailure;
}

/** A session opened on copies of the folders, ready for turns; `close` removes the copies. */
export interface RuntimeSession {
  readonly runtime: Runtime;
  readonly transcript: Transcript;
  /** The project file the scripted model reviews, named by the default input. */
  readonly file: string;
  /**
   * The turn `npm start` runs when told nothing: `/template:review file=<file>` when the
   * project (or the user folder) has a `review` template, else a plain-text request to review
   * `<file>` (see `defaultTurn`), so any project can serve it.
   */
  readonly defaultInput: string;
  /** The conversation: the runtime's messages (a refused turn left none of its own there). */
  readonly conversation: AgentMessage[];
  /** How many messages the last rejected turn had reported and the runtime took back, since it sent nothing (0 otherwise). */
  readonly lastRetracted: number;
  /** How many messages the last rejected turn kept in the session: the exchange it had completed before a later request was refused. */
  readonly lastKept: number;
  /** Counts of the whole session so far. */
  readonly counts: SessionCounts;
  /** Counts of the last turn. */
  readonly lastTurnCounts: SessionCounts;
  /**
   * Runs one user turn and prints it. Resolves with the runtime's result (a failed model
   * call is a result with its `failure`, printed); rejects with the runtime's own coded
   * errors (an unknown `/skill:`, a request too large) and with the learner's scaffold error
   * at the first unfinished lab, every path in their messages naming the user's folders.
   * What a refused turn leaves is the runtime's rule: refused before its first request, the
   * conversation is as it was before it (`lastRetracted`); refused later, the exchange it
   * completed stays (`lastKept`). `signal` goes to the runtime's `prompt` (Ctrl-C).
   * A `/skill:` load is counted and printed only once the turn's first request is sent.
   */
  turn(input: string, options?: { signal?: AbortSignal }): Promise<SessionTurn>;
  /** Reloads and prints what changed. */
  reload(): Promise<ReloadReport>;
  /** What the scripted model received, every turn (empty with another model). */
  readonly requests: ModelRequest[];
  /** Removes the scratch copies; idempotent. */
  close(): Promise<void>;
}

export interface RuntimeSessionOptions extends Omit<RuntimeDemoOptions, "input" | "signal"> {
  /** The input the labs are probed with before anything is printed; default the default input. */
  probeInput?: string;
}

/** The failure of a turn whose `stopReason` is not `stop`: the runtime's own (an abort), else from the last model turn it saw. */
function failureOf(result: TurnResult, last: AssistantTurn | undefined): TurnFailure | undefined {
  if (result.stopReason === "stop") return undefined;
  if (result.failure?.code === "TURN_ABORTED")
    return { code: "TURN_ABORTED", message: `这一轮被中断了（${result.failure.message}）：已经完成的消息留在会话里，可以接着说下一句` };
  if (result.stopReason === "length")
    return { code: "TURN_CUT_OFF", message: "模型的回答到了输出 token 上限被截断；截断的工具调用一个都没有运行（每个都配了一个错误结果）" };
  if (result.stopReason === "turn_limit") return { code: "TURN_LIMIT", message: `这一轮已经调用模型 ${result.turns} 次，到了上限，停在这里` };
  if (last?.failure !== undefined) return last.failure;
  if (last !== undefined && last.stopReason === "toolUse" && !last.message.content.some((block) => block.type === "toolCall")) return TOOL_CALLS_MISSING;
  return { code: "TURN_FAILED", message: `模型这一轮没有完成：${last?.errorMessage ?? result.stopReason}` };
}

/**
 * Opens a session: checks and copies the folders (nothing is copied when a check fails),
 * probes the learner's runtime lab by lab, prints the folders and the start, and returns
 * the session. On any error the copies are removed and paths in the message name the
 * user's folders.
 */
export async function openRuntimeSession(options: RuntimeSessionOptions): Promise<RuntimeSession> {
  const write = options.write;
  const project = path.resolve(options.workspace ?? sampleProject());
  await checkFolder(project);
  const sample = await realpath(sampleProject()).catch(() => undefined);
  const isSample = (await realpath(project)) === sample;
  const userSource =
    options.userRoot === null ? undefined : options.userRoot !== undefined ? path.resolve(options.userRoot) : isSample ? sampleUserFolder() : undefined;
  if (userSource !== undefined) await checkFolder(userSource);
  const limits = copyLimits(options.limits);
  await checkSize(project, limits);
  if (userSource !== undefined) await checkSize(userSource, limits);

  const scratch = await realpath(await mkdtemp(path.join(options.scratchParent ?? os.tmpdir(), "pi-runtime-")));
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await rm(scratch, { recursive: true, force: true });
  };
  const projectCopy = path.join(scratch, "project");
  const userCopy = path.join(scratch, "user");
  const projectLabel = options.workspaceLabel ?? project;
  const userLabel = options.userLabel ?? userSource ?? "";
  const relabel = relabeler(
    userSource === undefined
      ? [[projectCopy, projectLabel]]
      : [
          [projectCopy, projectLabel],
          [userCopy, userLabel],
        ],
  );
  // A message about a file names the folder the user gave, never the scratch copy.
  const relabeled = (error: unknown): unknown => {
    if (error instanceof Error) error.message = relabel(error.message);
    return error;
  };
  try {
    await copyInto(project, projectCopy);
    if (userSource !== undefined) await copyInto(userSource, userCopy);
    const trusted = isSample || options.trustProject === true;
    const transcript = createTranscript({ format: options.format ?? "text", write, relabel });
    options.onTranscript?.(transcript);

    // Lab by lab, in lab order: a practice folder's unfinished runtime.ts stops here with its first scaffold error.
    const roots = userSource === undefined ? [projectCopy] : [projectCopy, userCopy];
    const probeResources = await discoverResources(roots, { onDiagnostic: () => {} });
    const maxCatalogBytes = options.maxCatalogBytes ?? DEFAULT_START_CATALOG_BYTES;
    const probeCatalog = await buildSkillCatalog(probeResources, { maxCatalogBytes });
    createLoadSkillTool({ resources: probeResources, hidden: probeCatalog.hidden });
    const found = await firstProjectFile(projectCopy);
    const file = found ?? "README.md";
    const defaultInput = defaultTurn(found, probeResources);
    await expandInput(options.probeInput ?? defaultInput, probeResources).catch((error: unknown) => {
      if (isUnfinishedLab(error)) throw error;
    });

    transcript.folders({ project: projectLabel, user: userSource === undefined ? null : userLabel, trusted });
    if (options.model !== undefined && options.modelInfo !== undefined) transcript.model(options.modelInfo);

    const counts: SessionCounts = { turns: 0, toolCalls: 0, blocked: 0, skillLoads: 0 };
    let lastCounts: SessionCounts = { turns: 0, toolCalls: 0, blocked: 0, skillLoads: 0 };
    let input = "";
    let unfinished: Error | undefined;
    /** The conversation the model sees: the runtime's session (a refused turn left nothing of its own there). */
    const conversation = () => runtime?.messages ?? [];
    // Messages the current turn reported before its first request: the runtime takes them back if it sends nothing.
    let reported = 0;
    // The events of a turn before its first request: a `/skill:` load waits there until the request is sent.
    let beforeSend: RuntimeEvent[] | undefined;
    /** Shows what a turn that sent no request still held back: what the user said, once; a `/skill:` load never sent is neither printed nor counted. */
    const showUnsent = () => {
      for (const held of beforeSend ?? []) if (held.type !== "skill_load") transcript.event(held, input);
      beforeSend = undefined;
    };
    let runtime: Runtime | undefined;
    const onEvent = (event: RuntimeEvent) => {
      if (event.type === "message" && beforeSend !== undefined) reported++;
      if (beforeSend !== undefined && event.type !== "request" && event.type !== "diagnostic") {
        beforeSend.push(event);
        return;
      }
      if (event.type === "request") {
        const waiting = beforeSend ?? [];
        beforeSend = undefined;
        for (const held of waiting) onEvent(held);
        transcript.event(event, input, { droppedMessages: Math.max(0, conversation().length - event.messages.length) });
        return;
      }
      if (event.type === "message" && event.message.role === "assistant") {
        counts.toolCalls += event.message.content.filter((block) => block.type === "toolCall").length;
      }
      if (event.type === "message" && event.message.role === "toolResult" && isBlocked(event.message)) counts.blocked++;
      if (event.type === "skill_load") counts.skillLoads++;
      if (event.type === "message" && event.message.role === "toolResult" && event.message.isError) {
        // A tool ran into a lab the learner has not finished (a Chapter 12 hook, say): stop there.
        const scaffold = UNFINISHED_LAB.exec(textOf(event.message));
        if (scaffold !== null) {
          unfinished ??= new Error(scaffold[0]);
          return;
        }
      }
      transcript.event(event, input);
    };

    // The model every request goes through: the caller's (or this turn's scripted one), with
    // its last turn remembered, so a failure can be named. The runtime hands it the turn's signal.
    const requests: ModelRequest[] = [];
    let current: Model = options.model ?? new ScriptedModel([]);
    let lastTurn: AssistantTurn | undefined;
    const model: Model = {
      get name() {
        return current.name;
      },
      stream(request, streamOptions = {}) {
        const stream = current.stream(request, streamOptions);
        stream.result().then(
          (turn) => (lastTurn = turn),
          () => {},
        );
        return stream;
      },
    };

    const context: RuntimeContextOptions = options.context ?? { maxTokens: 8000, reservedOutput: 1024 };
    const started: Runtime = await createRuntime({
      projectRoot: projectCopy,
      ...(userSource === undefined ? {} : { userRoot: userCopy }),
      isProjectTrusted: () => trusted,
      model,
      baseSystemPrompt: BASE_PROMPT,
      context,
      maxCatalogBytes,
      onEvent,
    });
    runtime = started;
    const fullCatalog =
      started.catalog.dropped.length === 0 ? undefined : await buildSkillCatalog(started.resources, { maxCatalogBytes: Number.MAX_SAFE_INTEGER });
    transcript.started(started, { projectCopy, trusted, ...(fullCatalog !== undefined ? { catalogBytesNeeded: fullCatalog.bytes } : {}) });
    let lastRetracted = 0;
    let lastKept = 0;

    return {
      runtime: started,
      transcript,
      file,
      defaultInput,
      requests,
      get conversation() {
        return conversation();
      },
      get lastRetracted() {
        return lastRetracted;
      },
      get lastKept() {
        return lastKept;
      },
      get counts() {
        return { ...counts };
      },
      get lastTurnCounts() {
        return { ...lastCounts };
      },
      async turn(text, turnOptions = {}) {
        input = text;
        const before = { ...counts };
        let scripted: ScriptedModel | undefined;
        if (options.model === undefined) current = scripted = new ScriptedModel(runtimeScript(file, options.skill), { chunkSize: 24 });
        lastTurn = undefined;
        lastRetracted = 0;
        lastKept = 0;
        reported = 0;
        const already = started.messages.length;
        beforeSend = [];
        try {
          const result = await started.prompt(text, turnOptions.signal ? { signal: turnOptions.signal } : {});
          // A turn that ended before its first request (stopped at once): what the user said is still shown, no load counted.
          showUnsent();
          if (unfinished !== undefined) throw unfinished;
          counts.turns += result.turns;
          const failure = failureOf(result, lastTurn);
          if (failure !== undefined) transcript.failure(failure);
          lastCounts = {
            turns: result.turns,
            toolCalls: counts.toolCalls - before.toolCalls,
            blocked: counts.blocked - before.blocked,
            skillLoads: counts.skillLoads - before.skillLoads,
          };
          return failure === undefined ? result : { ...result, failure };
        } catch (error) {
          if (!isUnfinishedLab(error)) {
            // Refused: the runtime kept what the turn had completed, if it sent anything, and took back the rest.
            lastKept = started.messages.length - already;
            lastRetracted = lastKept === 0 ? reported : 0;
            showUnsent();
          }
          throw relabeled(error);
        } finally {
          beforeSend = undefined;
          if (scripted !== undefined) requests.push(...scripted.requests);
        }
      },
      async reload() {
        transcript.reloading = true;
        try {
          const reloaded = await started.reload();
          transcript.reloading = false;
          transcript.reload(reloaded, conversation().length);
          return reloaded;
        } catch (error) {
          throw relabeled(error);
        } finally {
          transcript.reloading = false;
        }
      },
      close,
    };
  } catch (error) {
    await close();
    throw relabeled(error);
  }
}

/**
 * Runs the session `npm start` shows: one turn (the given input, or a `/template:` review
 * of the first project file), then a reload, and writes its output line by line. Resolves
 * with a summary (a turn that failed resolves too, its stop reason saying so); rejects with
 * a coded error before the session starts when the workspace cannot be used, and with the
 * learner's scaffold error (`Lab 13.N … 尚未实现`) at the first unfinished lab, in lab order.
 * The scratch copies are removed in every case.
 */
export async function runRuntimeDemo(options: RuntimeDemoOptions): Promise<RuntimeDemoSummary> {
  const { input, signal, ...rest } = options;
  const session = await openRuntimeSession({ ...rest, ...(input !== undefined ? { probeInput: input } : {}) });
  try {
    const result = await session.turn(input ?? session.defaultInput, signal ? { signal } : {});
    // After a turn that did not end well there is nothing to show a reload against.
    const report = result.stopReason === "stop" ? await session.reload() : undefined;
    const runtime = session.runtime;
    const counts = session.counts;
    session.transcript.end(result.stopReason, counts, "session");
    const summary: RuntimeDemoSummary = {
      stopReason: result.stopReason,
      turns: result.turns,
      toolCalls: counts.toolCalls,
      blocked: counts.blocked,
      skillLoads: runtime.skillLoads.map((load) => ({ name: load.name, by: load.by })),
      diagnostics: runtime.diagnostics,
      extensions: runtime.extensions,
      catalog: { listed: runtime.catalog.listed, dropped: runtime.catalog.dropped, hidden: runtime.catalog.hidden, text: runtime.catalog.text },
      ...(report !== undefined ? { reload: report } : {}),
      requests: session.requests,
      messages: runtime.messages,
    };
    if (result.failure !== undefined) summary.failure = result.failure;
    return summary;
  } finally {
    await session.close();
  }
}
