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
 * the file, and tries a destructive shell command that the project's `guard` extension
 * blocks; finally `reload()` reports what changed (nothing). In a practice folder it runs
 * on the learner's own runtime.ts and stops at the first lab not finished yet.
 *
 * This module is provided: no lab asks for it.
 */
import { existsSync } from "node:fs";
import { cp, lstat, mkdtemp, readdir, realpath, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { errorMessage } from "./async.js";
import type { ModelRequest } from "./model.js";
import { discoverResources } from "./resources.js";
import {
  buildSkillCatalog,
  createLoadSkillTool,
  createRuntime,
  expandInput,
  type ReloadReport,
  type Runtime,
  type RuntimeDiagnostic,
  type RuntimeEvent,
} from "./runtime.js";
import { ScriptedModel, toolCall, turn, type ScriptStep } from "./scripted-model.js";
import { textOf, type AgentMessage, type ToolResultMessage } from "./types.js";

/** Error codes thrown on purpose by the runtime demo. */
export type RuntimeDemoErrorCode = "DEMO_WORKSPACE_MISSING" | "DEMO_WORKSPACE_NOT_DIRECTORY" | "DEMO_WORKSPACE_TOO_LARGE";

/** An error with a stable `code`; messages may change, codes do not. */
export class RuntimeDemoError extends Error {
  readonly code: RuntimeDemoErrorCode;
  constructor(code: RuntimeDemoErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "RuntimeDemoError";
    this.code = code;
  }
}

/** `examples/<name>` of the course, found from this file. */
function exampleFolder(name: string): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, "examples", name);
    if (existsSync(candidate)) return candidate;
    const up = path.dirname(dir);
    if (up === dir) throw new RuntimeDemoError("DEMO_WORKSPACE_MISSING", `the sample folder examples/${name} was not found`);
    dir = up;
  }
}

/** The sample project of `npm start`. */
export function sampleProject(): string {
  return exampleFolder("workspace");
}

/** The sample user folder (user-level skills and extensions) that goes with the sample project. */
export function sampleUserFolder(): string {
  return exampleFolder("user");
}

export interface RuntimeDemoOptions {
  /** The project; default the sample project. */
  workspace?: string;
  /** How the project is named in the output; default its path as given. */
  workspaceLabel?: string;
  /** The user's own folder; default the sample user folder when the project is the sample, else none. `null`: none. */
  userRoot?: string | null;
  userLabel?: string;
  /** Trust a project other than the sample (whose own code is trusted). */
  trustProject?: boolean;
  /** The user's turn; default `/template:review file=<the first project file>`. */
  input?: string;
  /** Default 4096. */
  maxCatalogBytes?: number;
  /** `text` (default): a transcript; `json`: one JSON object per line. */
  format?: "text" | "json";
  /** Limits of the scratch copies; defaults 2000 files and 20 MiB. */
  limits?: { maxFiles?: number; maxBytes?: number };
  /** Where the scratch copies are made (and removed again); default the OS temp folder. */
  scratchParent?: string;
  /** Receives each output line (without a line end). */
  write(line: string): void;
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
  reload: ReloadReport;
  /** Every request the scripted model received (copies). */
  requests: ModelRequest[];
  messages: AgentMessage[];
}

const NOT_COPIED = new Set(["node_modules", ".git"]);
const RESOURCE_FOLDERS = new Set(["skills", "templates", "extensions"]);

async function checkFolder(dir: string): Promise<void> {
  let info;
  try {
    info = await stat(dir);
  } catch (error) {
    throw new RuntimeDemoError("DEMO_WORKSPACE_MISSING", `工作区 ${dir} 不存在`, { cause: error });
  }
  if (!info.isDirectory()) throw new RuntimeDemoError("DEMO_WORKSPACE_NOT_DIRECTORY", `工作区 ${dir} 不是目录`);
}

/** Counts `source` without following links; refuses it (`DEMO_WORKSPACE_TOO_LARGE`) before anything is copied. */
async function checkSize(source: string, limits: { maxFiles: number; maxBytes: number }): Promise<void> {
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
        throw new RuntimeDemoError("DEMO_WORKSPACE_TOO_LARGE", `工作区 ${source} 超过演示的上限（${limits.maxFiles} 个文件或 ${limits.maxBytes} 字节）；请换一个小一些的目录`);
      }
    }
  };
  await walk(source);
}

async function copyInto(source: string, target: string): Promise<void> {
  await cp(source, target, { recursive: true, verbatimSymlinks: true, filter: (from) => !NOT_COPIED.has(path.basename(from)) });
}

/** The first project file (code-unit order, depth first), skipping resources and dot entries. */
async function firstProjectFile(root: string): Promise<string | undefined> {
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

/** A starter's "not built yet" error, `Lab 13.2 load_skill 尚未实现`. */
const UNFINISHED_LAB = /Lab \d+\.\d+ [^\n]*?尚未实现/;

/** True for the scaffold error of an unfinished lab. */
export function isUnfinishedLab(error: unknown): boolean {
  return UNFINISHED_LAB.test(errorMessage(error));
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

const isBlocked = (result: ToolResultMessage): result is ToolResultMessage & { details: { blockedByExtension: string; reason: string } } =>
  typeof result.details === "object" && result.details !== null && typeof (result.details as { blockedByExtension?: unknown }).blockedByExtension === "string";

const firstLine = (value: string, max = 72): string => {
  const line = value.split("\n")[0] ?? "";
  return line.length > max ? `${line.slice(0, max)}…` : line;
};

/**
 * The model's script. It reacts to what it is sent, like a model would: it picks a skill
 * from the catalog in its system prompt (one whose description says it is for reviewing)
 * and loads it with `load_skill`, unless the user already forced one into the turn; it
 * reads the file the turn names; it tries to clean up with `rm -rf`; and its answer reports
 * what the tools returned.
 */
function runtimeScript(file: string): ScriptStep[] {
  return [
    (request) => {
      const last = request.messages.at(-1);
      const forced = last !== undefined && last.role === "user" ? /^Skill "([^"]+)" \(loaded by the user/.exec(textOf(last))?.[1] : undefined;
      if (forced !== undefined) return turn(`用户已经把技能 ${forced} 的正文放进了这一轮，我照着它做，先看看工作区。`, toolCall("list", { path: "." }));
      const pick = catalogEntries(request.systemPrompt).find((entry) => /\breview/i.test(entry.description));
      if (pick === undefined) return turn("技能目录里没有讲审查的技能，我直接开始，先看看工作区。", toolCall("list", { path: "." }));
      return turn(`技能目录里的 ${pick.name} 讲的正是审查，先把它的正文加载进来。`, toolCall("load_skill", { name: pick.name }));
    },
    turn(`读一下 ${file}。`, toolCall("read", { path: file })),
    turn("动手之前，先把旧的构建产物清理掉。", toolCall("shell", { command: "rm -rf build" })),
    (request) => {
      const results = request.messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
      const loaded = results.find((r) => r.toolName === "load_skill" && !r.isError);
      const read = results.find((r) => r.toolName === "read");
      const shell = results.find((r) => r.toolName === "shell");
      const user = request.messages.find((m) => m.role === "user");
      const forced = user === undefined ? undefined : /^Skill "([^"]+)" \(loaded by the user/.exec(textOf(user))?.[1];
      const skill = loaded === undefined ? forced : (loaded.details as { name?: string } | undefined)?.name;
      const said: string[] = [];
      if (shell !== undefined && isBlocked(shell)) said.push(`清理命令被扩展 ${shell.details.blockedByExtension} 拦下了（${shell.details.reason}）。我不再删除任何东西。`);
      else if (shell !== undefined && shell.isError) said.push(`清理命令没有成功：${firstLine(textOf(shell))}`);
      else if (shell !== undefined) said.push("清理命令执行了：这个工作区没有扩展拦住它（好在演示只在副本里运行）。");
      if (read === undefined || read.isError) {
        said.push(`没能读到 ${file}：${read ? firstLine(textOf(read)) : "没有结果"}`);
      } else {
        const body = textOf(read).split("\n");
        const marks = body.flatMap((line, i) => (/\b(TODO|FIXME)\b/.test(line) ? [`第 ${i + 1} 行：${line.trim()}`] : []));
        const how = skill === undefined ? "没有加载任何技能，凭常识" : loaded === undefined ? `按用户给的技能 ${skill} ` : `按 load_skill 拿到的技能 ${skill} 的清单`;
        said.push(`${how}审查了 ${file}（${body.length} 行）：`);
        said.push(...(marks.length > 0 ? marks.map((mark) => `- ${mark}`) : ["- 没有找到留下的 TODO / FIXME。"]));
      }
      return turn(said.join("\n"));
    },
  ];
}

/** Replaces every scratch path in `value` by the folder the user named, so no output names a copy. */
function relabeler(pairs: readonly [string, string][]): (value: string) => string {
  return (value) => {
    let out = value;
    for (const [from, to] of pairs) out = out.split(`${from}${path.sep}`).join(`${to}/`).split(from).join(to);
    return out;
  };
}

/** JSON of one event line: timestamps left out, so the same session prints the same lines. */
function jsonLine(value: unknown): string {
  return JSON.stringify(value, (key, inner: unknown) => (key === "timestamp" || key === "at" ? undefined : inner));
}

/**
 * Runs the session and writes its output line by line. Resolves with a summary; rejects
 * with a coded error before the session starts when the workspace cannot be used, and with
 * the learner's scaffold error (`Lab 13.N … 尚未实现`) at the first unfinished lab, in lab
 * order. The scratch copies are removed in every case.
 */
export async function runRuntimeDemo(options: RuntimeDemoOptions): Promise<RuntimeDemoSummary> {
  const write = options.write;
  const json = options.format === "json";
  const project = path.resolve(options.workspace ?? sampleProject());
  await checkFolder(project);
  const sample = await realpath(sampleProject()).catch(() => undefined);
  const isSample = (await realpath(project)) === sample;
  const userSource = options.userRoot === null ? undefined : options.userRoot !== undefined ? path.resolve(options.userRoot) : isSample ? sampleUserFolder() : undefined;
  if (userSource !== undefined) await checkFolder(userSource);
  const limits = { maxFiles: options.limits?.maxFiles ?? 2000, maxBytes: options.limits?.maxBytes ?? 20 * 1024 * 1024 };
  await checkSize(project, limits);
  if (userSource !== undefined) await checkSize(userSource, limits);

  const scratch = await realpath(await mkdtemp(path.join(options.scratchParent ?? os.tmpdir(), "pi-runtime-")));
  try {
    const projectCopy = path.join(scratch, "project");
    const userCopy = path.join(scratch, "user");
    await copyInto(project, projectCopy);
    if (userSource !== undefined) await copyInto(userSource, userCopy);
    const projectLabel = options.workspaceLabel ?? project;
    const userLabel = options.userLabel ?? userSource ?? "";
    const relabel = relabeler(userSource === undefined ? [[projectCopy, projectLabel]] : [[projectCopy, projectLabel], [userCopy, userLabel]]);
    const trusted = isSample || options.trustProject === true;
    try {
      return await runSession();
    } catch (error) {
      // A message about a file names the folder the user gave, never the scratch copy.
      if (error instanceof Error) error.message = relabel(error.message);
      throw error;
    }

    async function runSession(): Promise<RuntimeDemoSummary> {

    // Lab by lab, in lab order: a practice folder's unfinished runtime.ts stops here with its first scaffold error.
    const roots = userSource === undefined ? [projectCopy] : [projectCopy, userCopy];
    const probeResources = await discoverResources(roots, { onDiagnostic: () => {} });
    const probeCatalog = await buildSkillCatalog(probeResources, { maxCatalogBytes: options.maxCatalogBytes ?? 4096 });
    createLoadSkillTool({ resources: probeResources, hidden: probeCatalog.hidden });
    const file = (await firstProjectFile(projectCopy)) ?? "README.md";
    const input = options.input ?? `/template:review file=${file}`;
    await expandInput(input, probeResources).catch((error: unknown) => {
      if (isUnfinishedLab(error)) throw error;
    });

    if (json) {
      write(jsonLine({ type: "session", project: projectLabel, user: userSource === undefined ? null : userLabel, trusted }));
    } else {
      write(`目录  ${projectLabel} · 工具只在它的副本里运行，原目录不会被改动`);
      write(userSource === undefined ? "个人  无用户级目录（--user <目录>）" : `个人  ${userLabel} · 用户自己的技能与扩展：在问项目信任之前加载`);
    }

    let toolCalls = 0;
    let blocked = 0;
    let reloading = false;
    let unfinished: Error | undefined;
    const loads: { name: string; by: string }[] = [];
    const printEvent = (event: RuntimeEvent) => {
      if (json) {
        if (event.type === "message") {
          const message = event.message;
          if (message.role === "user") write(jsonLine({ type: "user", text: textOf(message) }));
          else if (message.role === "assistant") {
            const said = textOf(message);
            if (said !== "") write(jsonLine({ type: "assistant", text: said }));
            for (const block of message.content) if (block.type === "toolCall") write(jsonLine({ type: "tool_call", id: block.id, name: block.name, arguments: block.arguments }));
          } else {
            write(jsonLine({ type: "tool_result", toolCallId: message.toolCallId, toolName: message.toolName, isError: message.isError, text: textOf(message), details: message.details }));
          }
        } else if (event.type === "diagnostic") {
          const d = event.diagnostic;
          write(jsonLine({ type: "diagnostic", area: d.area, severity: d.severity, code: d.code, source: relabel(d.source), message: relabel(d.message) }));
        } else if (event.type === "skill_load") {
          write(jsonLine({ type: "skill_load", name: event.load.name, by: event.load.by }));
        } else if (event.type === "reload") {
          write(jsonLine({ type: "reload", report: JSON.parse(relabel(JSON.stringify(event.report))) as unknown }));
        } else {
          write(jsonLine(event));
        }
        return;
      }
      if (event.type === "diagnostic") {
        if (reloading) return; // the reload line sums them up
        const d = event.diagnostic;
        write(`诊断  ${d.severity === "error" ? "跳过" : "提醒"} [${d.code}] ${firstLine(relabel(d.message), 160)}`);
      } else if (event.type === "request") {
        const t = event.tokens;
        write(`请求  #${event.turn} 系统提示 ${t.system} + 消息 ${t.messages} + 预留输出 ${t.reservedOutput} = ${t.total} / ${t.maxTokens} tokens`);
      } else if (event.type === "skill_load") {
        write(
          event.load.by === "model"
            ? `技能  激活 ${event.load.name}：模型调用 load_skill，正文作为工具结果交回（目录里只有名字和描述）`
            : `技能  激活 ${event.load.name}：用户用 /skill: 强制加载，正文进入用户这一轮`,
        );
      } else if (event.type === "hook_diagnostic") {
        const d = event.diagnostic;
        write(`诊断  扩展 ${d.extensionId} 的 ${d.hook} ${d.kind === "timeout" ? "超时" : "出错"}：${firstLine(d.message, 160)}`);
      } else if (event.type === "message") {
        const message = event.message;
        if (message.role === "user") {
          write(`用户  ${input.startsWith("/") ? `（${firstLine(input, 60)}）` : ""}${firstLine(textOf(message), 160)}`);
        } else if (message.role === "assistant") {
          const said = textOf(message).split("\n");
          if (said[0] !== "") write(`助手  ${said[0]}`);
          for (const more of said.slice(1)) write(`      ${more}`);
          for (const block of message.content) if (block.type === "toolCall") write(`调用  ${block.name} ${JSON.stringify(block.arguments)}`);
        } else if (isBlocked(message)) {
          write(`拦截  ✗ 扩展 ${message.details.blockedByExtension} 拒绝了 ${message.toolName}：${message.details.reason}（配对的错误结果交回模型）`);
        } else {
          const output = textOf(message);
          const lines = output.split("\n");
          const shown = message.toolName === "list" && !message.isError ? firstLine(lines.join("  "), 120) : `${firstLine(output)}${lines.length > 1 ? ` …（共 ${lines.length} 行）` : ""}`;
          write(`结果  ${message.isError ? "✗" : "✓"} ${shown}`);
        }
      }
    };
    const onEvent = (event: RuntimeEvent) => {
      if (event.type === "message" && event.message.role === "assistant") {
        toolCalls += event.message.content.filter((block) => block.type === "toolCall").length;
      }
      if (event.type === "message" && event.message.role === "toolResult" && isBlocked(event.message)) blocked++;
      if (event.type === "skill_load") loads.push({ name: event.load.name, by: event.load.by });
      if (event.type === "message" && event.message.role === "toolResult" && event.message.isError) {
        // A tool ran into a lab the learner has not finished (a Chapter 12 hook, say): stop there.
        const scaffold = UNFINISHED_LAB.exec(textOf(event.message));
        if (scaffold !== null) {
          unfinished ??= new Error(scaffold[0]);
          return;
        }
      }
      printEvent(event);
    };

    const model = new ScriptedModel(runtimeScript(file), { chunkSize: 24 });
    const runtime: Runtime = await createRuntime({
      projectRoot: projectCopy,
      ...(userSource === undefined ? {} : { userRoot: userCopy }),
      isProjectTrusted: () => trusted,
      model,
      baseSystemPrompt: BASE_PROMPT,
      context: { maxTokens: 8000, reservedOutput: 1024 },
      maxCatalogBytes: options.maxCatalogBytes ?? 4096,
      onEvent,
    });

    const catalog = runtime.catalog;
    const resources = runtime.resources;
    const origin = (source: string) => (source.startsWith(`${projectCopy}${path.sep}`) ? "项目" : "个人");
    const names = (list: { name: string; source: string }[]) => (list.length > 0 ? list.map((r) => `${r.name}（${origin(r.source)}）`).join("、") : "无");
    if (json) {
      write(jsonLine({ type: "catalog", text: catalog.text, bytes: catalog.bytes, maxBytes: catalog.maxBytes, listed: catalog.listed, dropped: catalog.dropped, hidden: catalog.hidden }));
      write(jsonLine({ type: "extensions", extensions: runtime.extensions, tools: runtime.tools }));
    } else {
      write(`资源  指令 ${resources.instructions.length} · 技能 ${resources.skills.length}：${names(resources.skills)} · 模板 ${resources.templates.length}：${names(resources.templates)}`);
      for (const extension of runtime.extensions) {
        const where = extension.origin === "user" ? "个人" : "项目";
        const status = extension.status === "active" ? "已加载" : extension.status === "skipped_untrusted" ? "项目未受信任，没有 import（信任它：--trust-project）" : `加载失败 [${extension.code ?? "ERROR"}]，会话照常开始`;
        write(`扩展  ${extension.id}（${where}）：${status}`);
      }
      if (runtime.extensions.length === 0) write("扩展  无（extensions/*.mjs）");
      write(`信任  项目${trusted ? "受信任：它的扩展在用户级扩展之后加载" : "不受信任：它自己的代码一行都不运行"}`);
      const hidden = catalog.hidden.length > 0 ? `；对模型隐藏：${catalog.hidden.join("、")}` : "";
      const dropped = catalog.dropped.length > 0 ? `；超出预算：${catalog.dropped.join("、")}` : "";
      write(`清单  系统提示里的技能目录 ${catalog.bytes} / ${catalog.maxBytes} 字节${hidden}${dropped}`);
      for (const line of catalog.text.split("\n").filter((l) => l.startsWith("- "))) write(`      ${line}`);
      write(`工具  ${runtime.tools.join("、")}`);
    }

    const result = await runtime.prompt(input);
    if (unfinished !== undefined) throw unfinished;
    reloading = true;
    const report = await runtime.reload();
    reloading = false;
    if (!json) {
      const found = `诊断 ${report.diagnostics.length} 条`;
      if (report.status === "failed") write(`重载  失败 [${report.error.code}]：旧状态继续运行（${found}）`);
      else {
        const changed = Object.entries(report.changes).filter(([key, list]) => key !== "extensionsReloaded" && list.length > 0);
        write(
          changed.length === 0
            ? `重载  没有变化：目录、工具和扩展都与启动时相同；${report.changes.extensionsReloaded.length} 个扩展重新 import，会话保留 ${runtime.messages.length} 条消息（${found}）`
            : `重载  ${changed.map(([key, list]) => `${key} ${list.join("、")}`).join(" · ")}（${found}）`,
        );
      }
      write(`结束  ${result.stopReason} · 模型调用 ${result.turns} 次 · 工具调用 ${toolCalls} 次（被拦截 ${blocked} 次）· 加载技能 ${loads.length} 次`);
    } else {
      write(jsonLine({ type: "end", stopReason: result.stopReason, turns: result.turns, toolCalls, blocked, skillLoads: loads.length }));
    }
    return {
      stopReason: result.stopReason,
      turns: result.turns,
      toolCalls,
      blocked,
      skillLoads: loads,
      diagnostics: runtime.diagnostics,
      extensions: runtime.extensions,
      catalog: { listed: catalog.listed, dropped: catalog.dropped, hidden: catalog.hidden, text: catalog.text },
      reload: report,
      requests: model.requests,
      messages: runtime.messages,
    };
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
