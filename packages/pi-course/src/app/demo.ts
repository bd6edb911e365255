/**
 * `npm start` at Chapter 12: one scripted agent session that puts every chapter to work,
 * Chapter 12 last, and prints what happened as a short transcript.
 *
 * The session, in order: the workspace is copied to a scratch folder (the agent's tools
 * act on the copy, so no run of the demo can change your folder); its resources are
 * discovered; its extensions pass the trust gate and register their hooks; one skill is
 * activated into the system prompt (`formatResourceContext` → `buildContext`); a
 * template renders the user's turn; then a scripted model (no network, same run every
 * time) drives the agent loop through the coding tools, wrapped by the extension host.
 * The model's third request, a destructive shell command, is where the sample
 * workspace's `guard` extension earns its place: its `beforeToolCall` hook denies it,
 * the host answers with a paired error result, and the loop hands that back to the model.
 *
 * The first half of this module is what every later session of `npm start` does the same
 * way, so Chapter 13's (`runtime-demo.ts`, `runtime-transcript.ts`) imports it instead of
 * copying it: the sample folders, checking a folder and copying it to a scratch folder
 * within limits, the first project file, the scaffold error of an unfinished lab, the
 * scripted model's steps and what it says about the tools' results, and the transcript's
 * lines about the conversation.
 */
import { cp, lstat, mkdtemp, readdir, realpath, rm, stat } from "node:fs/promises";
import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Agent } from "../agent.js";
import { toolSpec } from "../agent-loop.js";
import { errorMessage } from "../async.js";
import { createCodingTools } from "../coding-tools.js";
import { buildContext, type ContextProjection } from "../context.js";
import type { ModelRequest } from "../model.js";
import {
  activateSkill,
  createExtensionHost,
  discoverResources,
  formatResourceContext,
  loadExtension,
  renderTemplate,
  type ActivatedSkill,
} from "../resources.js";
import { ScriptedModel, toolCall, turn, type ScriptedTurn, type ScriptStep } from "../scripted-model.js";
import { createSession } from "../session.js";
import { ToolRegistry } from "../tool.js";
import { textOf, userMessage, type AgentMessage, type AssistantMessage, type ToolResultMessage, type UserMessage } from "../types.js";
import { openWorkspace } from "../workspace.js";

// ---------------------------------------------------------------------------
// What every session of npm start shares
// ---------------------------------------------------------------------------

/** Error codes thrown on purpose by the sessions of `npm start` (Chapter 13's throws the first three). */
export type DemoErrorCode =
  | "DEMO_WORKSPACE_MISSING"
  | "DEMO_WORKSPACE_NOT_DIRECTORY"
  | "DEMO_WORKSPACE_TOO_LARGE"
  | "DEMO_TEMPLATE_NOT_FOUND"
  | "DEMO_SKILL_NOT_FOUND";

/** An error with a stable `code`; messages may change, codes do not. */
export class DemoError extends Error {
  readonly code: DemoErrorCode;
  constructor(code: DemoErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "DemoError";
    this.code = code;
  }
}

/** `examples/<name>` of the course, found from this file. */
export function exampleFolder(name: string): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, "examples", name);
    if (existsSync(candidate)) return candidate;
    const up = path.dirname(dir);
    if (up === dir) throw new DemoError("DEMO_WORKSPACE_MISSING", `the sample folder examples/${name} was not found`);
    dir = up;
  }
}

/** The sample workspace shipped with the course (`examples/workspace`). */
export function sampleWorkspace(): string {
  return exampleFolder("workspace");
}

/** What every session of `npm start` is told about its workspace and its output. */
export interface DemoFolderOptions {
  /** The workspace (the project) to run in; default the sample workspace. */
  workspace?: string;
  /** How the workspace is named in the output; default its path as given. */
  workspaceLabel?: string;
  /** Limits of the scratch copies; defaults 2000 files and 20 MiB (`copyLimits`). */
  limits?: { maxFiles?: number; maxBytes?: number };
  /** Where the scratch copies are made (and removed again); default the OS temp folder. */
  scratchParent?: string;
  /** Receives each output line (without a line end). */
  write(line: string): void;
}

/** `limits` with the defaults filled in: 2000 files and 20 MiB. */
export function copyLimits(limits: DemoFolderOptions["limits"]): { maxFiles: number; maxBytes: number } {
  return { maxFiles: limits?.maxFiles ?? 2000, maxBytes: limits?.maxBytes ?? 20 * 1024 * 1024 };
}

/** Folders a copy leaves out: they are large and no part of a session. */
const NOT_COPIED = new Set(["node_modules", ".git"]);
/** Folders that hold the workspace's resources rather than its project files. */
const RESOURCE_FOLDERS = new Set(["skills", "templates", "extensions"]);

/** Refuses a folder that does not exist (`DEMO_WORKSPACE_MISSING`) or is not a directory (`DEMO_WORKSPACE_NOT_DIRECTORY`). */
export async function checkFolder(dir: string): Promise<void> {
  let info;
  try {
    info = await stat(dir);
  } catch (error) {
    throw new DemoError("DEMO_WORKSPACE_MISSING", `工作区 ${dir} 不存在`, { cause: error });
  }
  if (!info.isDirectory()) throw new DemoError("DEMO_WORKSPACE_NOT_DIRECTORY", `工作区 ${dir} 不是目录`);
}

/** Counts `source` without following links; refuses it (`DEMO_WORKSPACE_TOO_LARGE`) before anything is copied. */
export async function checkSize(source: string, limits: { maxFiles: number; maxBytes: number }): Promise<void> {
  let files = 0;
  let bytes = 0;
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (NOT_COPIED.has(entry.name)) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else {
        files++;
        bytes += (await lstat(full)).size;
      }
      if (files > limits.maxFiles || bytes > limits.maxBytes) {
        throw new DemoError(
          "DEMO_WORKSPACE_TOO_LARGE",
          `工作区 ${source} 超过演示的上限（${limits.maxFiles} 个文件或 ${limits.maxBytes} 字节）；请换一个小一些的目录`,
        );
      }
    }
  };
  await walk(source);
}

/** Copies `source` to `target` without `node_modules` and `.git`; symlinks are copied as links, unchanged. */
export async function copyInto(source: string, target: string): Promise<void> {
  await cp(source, target, { recursive: true, verbatimSymlinks: true, filter: (from) => !NOT_COPIED.has(path.basename(from)) });
}

/** The first project file of the workspace (code-unit order, depth first), skipping resources and dot entries. */
export async function firstProjectFile(root: string): Promise<string | undefined> {
  const visit = async (relative: string, depth: number): Promise<string | undefined> => {
    const entries = await readdir(path.join(root, relative), { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.name.startsWith(".") || NOT_COPIED.has(entry.name)) continue;
      if (relative === "" && (RESOURCE_FOLDERS.has(entry.name) || entry.name === "AGENTS.md")) continue;
      const child = relative === "" ? entry.name : `${relative}/${entry.name}`;
      if (entry.isFile()) return child;
      if (entry.isDirectory() && depth < 4) {
        const found = await visit(child, depth + 1);
        if (found !== undefined) return found;
      }
    }
    return; // no project file at this depth
  };
  return visit("", 0);
}

/** A starter's "not built yet" error, `Lab 12.5 hook execution 尚未实现`: the learner's teaching file is unfinished. */
export const UNFINISHED_LAB = /Lab \d+\.\d+ [^\n]*?尚未实现/;

/** True for the scaffold error of an unfinished lab. */
export function isUnfinishedLab(error: unknown): boolean {
  return UNFINISHED_LAB.test(errorMessage(error));
}

/** True for the paired error result of a call an extension's hook blocked. */
export const isBlocked = (result: ToolResultMessage): result is ToolResultMessage & { details: { blockedByExtension: string; reason: string } } =>
  typeof result.details === "object" && result.details !== null && typeof (result.details as { blockedByExtension?: unknown }).blockedByExtension === "string";

/** The first line of `value`, shortened to `max` characters. */
export const firstLine = (value: string, max = 72): string => {
  const line = value.split("\n")[0] ?? "";
  return line.length > max ? `${line.slice(0, max)}…` : line;
};

/** The scripted model's step that reads the project file `file`. */
export function readStep(file: string): ScriptedTurn {
  return turn(`读一下 ${file}。`, toolCall("read", { path: file }));
}

/** The scripted model's destructive step: the one a guard extension is there to block. */
export function cleanupStep(): ScriptedTurn {
  return turn("动手之前，先把旧的构建产物清理掉。", toolCall("shell", { command: "rm -rf build" }));
}

/**
 * What the scripted model says about the result of its cleanup command, `undefined` when it
 * made none. A failure is quoted by its first line, cut at `quote` characters.
 */
export function cleanupReport(shell: ToolResultMessage | undefined, quote: number): string | undefined {
  if (shell !== undefined && isBlocked(shell))
    return `清理命令被扩展 ${shell.details.blockedByExtension} 拦下了（${shell.details.reason}）。我不再删除任何东西。`;
  if (shell?.isError) return `清理命令没有成功：${firstLine(textOf(shell), quote)}`;
  if (shell !== undefined) return "清理命令执行了：这个工作区没有扩展拦住它（好在演示只在副本里运行）。";
  return undefined;
}

/** What the scripted model says when reading `file` gave `read`, an error or nothing; quoted as by `cleanupReport`. */
export function unreadReport(file: string, read: ToolResultMessage | undefined, quote: number): string {
  return `没能读到 ${file}：${read ? firstLine(textOf(read), quote) : "没有结果"}`;
}

/** The TODO and FIXME lines among `lines`, as the scripted model lists them: `第 N 行：…`. */
export function todoMarks(lines: readonly string[]): string[] {
  return lines.flatMap((line, i) => (/\b(TODO|FIXME)\b/.test(line) ? [`第 ${i + 1} 行：${line.trim()}`] : []));
}

/** The transcript's first line: the folder the session works on, and that its tools act on a copy. */
export function folderLine(label: string): string {
  return `目录  ${label} · 工具只在它的副本里运行，原目录不会被改动`;
}

/** The transcript's lines for an assistant message: what it said (later lines indented), then a `调用` line per tool call. */
export function assistantLines(message: AssistantMessage): string[] {
  const said = textOf(message).split("\n");
  const lines = said[0] !== "" ? [`助手  ${said[0]}`] : [];
  for (const more of said.slice(1)) lines.push(`      ${more}`);
  for (const block of message.content) if (block.type === "toolCall") lines.push(`调用  ${block.name} ${JSON.stringify(block.arguments)}`);
  return lines;
}

/**
 * The transcript's line for a tool result: `拦截` for a call an extension blocked, else
 * `结果` with `output`, the result's text as it may be shown (default its text): a listing
 * reads best on one line; anything else shows its first line and its length.
 */
export function toolResultLine(message: ToolResultMessage, output = textOf(message)): string {
  if (isBlocked(message))
    return `拦截  ✗ 扩展 ${message.details.blockedByExtension} 拒绝了 ${message.toolName}：${message.details.reason}（配对的错误结果交回模型）`;
  const lines = output.split("\n");
  const shown =
    message.toolName === "list" && !message.isError
      ? firstLine(lines.join("  "), 120)
      : `${firstLine(output)}${lines.length > 1 ? ` …（共 ${lines.length} 行）` : ""}`;
  return `结果  ${message.isError ? "✗" : "✓"} ${shown}`;
}

// ---------------------------------------------------------------------------
// Chapter 12's session
// ---------------------------------------------------------------------------

export interface DemoOptions extends DemoFolderOptions {
  /** Trust the extensions of a workspace other than the sample (whose own are trusted). */
  trustExtensions?: boolean;
  /** The template that becomes the user's turn; default `review`, else the first one. */
  template?: string;
  /** The skill to activate; default the first one of the catalog. */
  skill?: string;
  /** Template arguments; `file` defaults to the first file of the workspace. */
  args?: Readonly<Record<string, string>>;
}

export interface DemoSummary {
  stopReason: string;
  turns: number;
  toolCalls: number;
  blocked: number;
  skill?: string;
  template?: string;
  extensions: { id: string; status: string }[];
  /** Every request the scripted model received (copies). */
  requests: ModelRequest[];
  /** The transcript of the session. */
  messages: AgentMessage[];
}

/** `text` on one line: line breaks and runs of spaces become one space. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** Extension modules of the workspace: `extensions/*.mjs`, regular files, in code-unit order. */
async function extensionSources(root: string): Promise<{ id: string; path: string }[]> {
  const dir = path.join(root, "extensions");
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith(".mjs") && !entry.name.startsWith("."))
    .map((entry) => ({ id: entry.name.slice(0, -".mjs".length), path: path.join(dir, entry.name) }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * The model's script. It reacts to what it is sent, like a model would: the file it reads
 * comes from the user's turn, and its final answer reports what the tools returned, which
 * skill its system prompt carried, and whether its cleanup command was blocked.
 */
function demoScript(file: string): ScriptStep[] {
  return [
    turn("我先看看工作区里有什么。", toolCall("list", { path: "." })),
    readStep(file),
    cleanupStep(),
    (request) => {
      const results = request.messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
      const read = results.find((r) => r.toolName === "read");
      const shell = results.find((r) => r.toolName === "shell");
      const skill = /^# Active skill: (.+)$/m.exec(request.systemPrompt)?.[1];
      // This session quotes a failure's first line whole.
      const lines: string[] = [];
      const cleanup = cleanupReport(shell, Number.POSITIVE_INFINITY);
      if (cleanup !== undefined) lines.push(cleanup);
      if (read === undefined || read.isError) {
        lines.push(unreadReport(file, read, Number.POSITIVE_INFINITY));
      } else {
        const body = textOf(read).split("\n");
        const marks = todoMarks(body);
        lines.push(`${skill ? `按技能 ${skill} 的清单` : "没有激活任何技能，凭常识"}审查了 ${file}（${body.length} 行）：`);
        lines.push(...(marks.length > 0 ? marks.map((mark) => `- ${mark}`) : ["- 没有找到留下的 TODO / FIXME。"]));
      }
      return turn(lines.join("\n"));
    },
  ];
}

/**
 * Runs the session and writes the transcript line by line. Resolves with a summary; rejects
 * with a coded error (`DemoError`, or the `ResourceError` of a resource that cannot be used)
 * before the session starts when the workspace cannot be used; such a message names the
 * workspace's own file, never the scratch copy. The scratch copy is removed in every case.
 */
export async function runDemo(options: DemoOptions): Promise<DemoSummary> {
  const write = options.write;
  const source = path.resolve(options.workspace ?? sampleWorkspace());
  await checkFolder(source);
  const sample = await (async () => realpath(sampleWorkspace()))().catch(() => undefined);
  const isSample = (await realpath(source)) === sample;
  await checkSize(source, copyLimits(options.limits));
  const scratch = await realpath(await mkdtemp(path.join(options.scratchParent ?? os.tmpdir(), "pi-demo-")));
  const copy = path.join(scratch, "workspace");
  try {
    await copyInto(source, copy);
  } catch (error) {
    await rm(scratch, { recursive: true, force: true });
    throw error;
  }
  try {
    write(folderLine(options.workspaceLabel ?? source));

    // Lenient discovery, as a real host runs it: a broken skill or template is left out and
    // reported as a "诊断" line; the rest of the workspace still serves the session.
    const catalog = await discoverResources([copy], {
      onDiagnostic: (d) =>
        write(
          `诊断  ${d.severity === "error" ? "跳过" : "提醒"} ${path.relative(copy, d.source) || "."} [${d.code}] ${oneLine(d.message.split(copy + path.sep).join(""))}`,
        ),
    });
    const names = (list: { name: string }[]) => (list.length > 0 ? list.map((r) => r.name).join("、") : "无");
    write(
      `资源  指令 ${catalog.instructions.length} · 技能 ${catalog.skills.length}（${names(catalog.skills)}）· 模板 ${catalog.templates.length}（${names(catalog.templates)}）`,
    );

    let activated: ActivatedSkill | undefined;
    const skillName = options.skill ?? catalog.skills[0]?.name;
    if (skillName !== undefined) {
      if (!catalog.skills.some((s) => s.name === skillName))
        throw new DemoError("DEMO_SKILL_NOT_FOUND", `工作区里没有技能 ${skillName}；可用：${names(catalog.skills)}`);
      activated = await activateSkill(catalog, skillName);
    }
    const systemPrompt = formatResourceContext(catalog, activated ? [activated] : []);
    write(activated ? `技能  激活 ${activated.name}：正文进入系统提示（其余技能只列名字和描述）` : "技能  无可激活的技能");

    const file = options.args?.file ?? (await firstProjectFile(copy)) ?? "README.md";
    const templateName = options.template ?? (catalog.templates.some((t) => t.name === "review") ? "review" : catalog.templates[0]?.name);
    let prompt: UserMessage;
    if (templateName !== undefined) {
      const template = catalog.templates.find((t) => t.name === templateName);
      if (template === undefined) throw new DemoError("DEMO_TEMPLATE_NOT_FOUND", `工作区里没有模板 ${templateName}；可用：${names(catalog.templates)}`);
      prompt = renderTemplate(template, { file, ...options.args });
    } else {
      prompt = userMessage(`请看看 ${file}，列出你发现的问题，但先不要修改任何文件。`);
    }

    const workspace = await openWorkspace(copy);
    const registry = new ToolRegistry(createCodingTools(workspace, { shellTimeoutMs: 10_000 }));
    const host = createExtensionHost(registry, {
      hookTimeoutMs: 2000,
      onDiagnostic: (d) => write(`诊断  扩展 ${d.extensionId} 的 ${d.hook} ${d.kind === "timeout" ? "超时" : "出错"}：${d.message}`),
    });
    const extensions: { id: string; status: string }[] = [];
    for (const extension of await extensionSources(copy)) {
      try {
        const loaded = await loadExtension(extension, { host, isTrusted: () => isSample || options.trustExtensions === true });
        extensions.push(loaded);
        write(loaded.status === "active" ? `扩展  ${extension.id}：已信任并加载` : `扩展  ${extension.id}：未受信任，没有导入（信任它：--trust-extensions）`);
      } catch (error) {
        if (isUnfinishedLab(error)) throw error;
        const code = (error as { code?: string }).code ?? "ERROR";
        extensions.push({ id: extension.id, status: code });
        write(`扩展  ${extension.id}：加载失败 [${code}] ${errorMessage(error)}`);
      }
    }
    if (extensions.length === 0) write("扩展  无（extensions/*.mjs）");

    const session = createSession();
    let firstProjection: ContextProjection | undefined;
    const model = new ScriptedModel(demoScript(file), { chunkSize: 24 });
    const agent = new Agent({
      model,
      registry,
      maxTurns: 8,
      wrapExecutor: (core) => host.wrapExecutor(core),
      prepareContext: () => {
        // The loop sends every registered tool's spec with the request: the budget counts the same list.
        const tools = registry.list().map(toolSpec);
        const projection = buildContext(session.activePath(), { maxTokens: 8000, reservedOutput: 1024, systemPrompt, tools });
        if (firstProjection === undefined) {
          firstProjection = projection;
          const t = projection.tokens;
          write(
            `预算  buildContext：系统提示 ${t.system} + 工具 ${t.tools} + 消息 ${t.messages} + 预留输出 ${t.reservedOutput} = ${t.total} / ${t.maxTokens} tokens`,
          );
        }
        return { systemPrompt: projection.systemPrompt, messages: projection.messages };
      },
    });

    let toolCalls = 0;
    let blocked = 0;
    let unfinished: Error | undefined;
    agent.subscribe((event) => {
      if (event.type !== "message") return;
      const message = event.message;
      session.append(message);
      if (message.role === "user") {
        write(`用户  ${templateName ? `（模板 ${templateName}）` : ""}${firstLine(textOf(message), 200)}`);
      } else if (message.role === "assistant") {
        for (const line of assistantLines(message)) write(line);
        toolCalls += message.content.filter((block) => block.type === "toolCall").length;
      } else if (unfinished === undefined && message.isError && UNFINISHED_LAB.test(textOf(message))) {
        // The tools ran through the learner's own host: a lab it does not have yet.
        unfinished = new Error(UNFINISHED_LAB.exec(textOf(message))![0]);
      } else {
        if (isBlocked(message)) blocked++;
        write(toolResultLine(message));
      }
    });

    const result = await agent.prompt(prompt);
    if (unfinished !== undefined) throw unfinished;
    write(`结束  ${result.stopReason} · 模型调用 ${result.turns} 次 · 工具调用 ${toolCalls} 次（被拦截 ${blocked} 次）`);
    return {
      stopReason: result.stopReason,
      turns: result.turns,
      toolCalls,
      blocked,
      ...(activated ? { skill: activated.name } : {}),
      ...(templateName ? { template: templateName } : {}),
      extensions,
      requests: model.requests,
      messages: agent.messages,
    };
  } catch (error) {
    // The scratch copy is gone when the user reads this: a message about a file names the
    // file in the workspace the user gave, not its copy.
    if (error instanceof Error) error.message = error.message.split(copy).join(source);
    throw error;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
