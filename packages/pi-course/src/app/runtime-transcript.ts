/**
 * How `npm start` shows a runtime session: a transcript of short labelled lines (`诊断`,
 * `请求`, `调用`, `结果`, …) or, with `--json`, one JSON object per line.
 *
 * One `Transcript` serves a whole session, scripted or on a real model, one turn or many:
 * it prints the start (resources, extensions, trust, the catalog), each runtime event, each
 * retry of a provider request, each failed turn with its code, each reload and each turn's
 * end. Every path it prints passes `relabel` first, so no line names the scratch copy the
 * tools act on. It never prints a key: nothing it is given holds one. The lines it prints the
 * way Chapter 12's session does (the folder, the assistant's words and calls, a tool's result)
 * come from `demo.ts`.
 *
 * This module is provided: no lab asks for it.
 */
import path from "node:path";
import { errorMessage } from "../async.js";
import type { TurnFailure } from "../model.js";
import type { RetryInfo } from "../provider-retry.js";
import type { ReloadReport, Runtime, RuntimeEvent } from "../runtime.js";
import { textOf } from "../types.js";
import { assistantLines, firstLine, folderLine, toolResultLine } from "./demo.js";

export interface TranscriptOptions {
  format: "text" | "json";
  /** Receives each output line (without a line end). */
  write(line: string): void;
  /** Replaces scratch paths by the folders the user named. */
  relabel(value: string): string;
}

/** The counts a turn, or a whole session, ends with. */
export interface SessionCounts {
  turns: number;
  toolCalls: number;
  blocked: number;
  skillLoads: number;
}

/** What a session told about its model when it is not the scripted one. */
export interface ModelInfo {
  provider: string;
  model: string;
  origin: string;
}

export interface Transcript {
  /** The folders of the session, before anything is loaded. */
  folders(facts: { project: string; user: string | null; trusted: boolean }): void;
  /** The model a provider session talks to (the scripted session prints no such line). */
  model(info: ModelInfo): void;
  /**
   * What the runtime started with: resources, extensions, trust, the catalog, the tools.
   * Skills the catalog's byte budget dropped are a diagnostic naming `--max-catalog-bytes`
   * and `catalogBytesNeeded`, the budget that would list every skill.
   */
  started(runtime: Runtime, facts: { projectCopy: string; trusted: boolean; catalogBytesNeeded?: number }): void;
  /**
   * One runtime event; `input` is what the user typed for the turn it belongs to. For a
   * `request`, `context.droppedMessages` says how many older messages of the conversation
   * the context budget left out of it (announced, and carried as `reason: "trimmed"` in JSON).
   */
  event(event: RuntimeEvent, input: string, context?: { droppedMessages: number }): void;
  /** A provider request that failed and is sent again after a wait. */
  retry(info: RetryInfo): void;
  /** A turn that failed or was interrupted, with its code. */
  failure(failure: TurnFailure): void;
  /** A finished reload (its diagnostics were printed or summed up already). */
  reload(report: ReloadReport, messages: number): void;
  /** The end of a turn (`scope: "turn"`) or of the session. */
  end(stopReason: string, counts: SessionCounts, scope: "turn" | "session"): void;
  /** A line of the interactive session's own (help, a command it did not understand). */
  note(text: string): void;
  /** While a reload runs, its diagnostics are not printed one by one: the reload line sums them up. */
  reloading: boolean;
}

/** The app's diagnostic code for skills the catalog's byte budget left out. */
export const CATALOG_BUDGET_CODE = "SKILL_CATALOG_OVER_BUDGET";

/** The text of the catalog diagnostic: what was dropped, what it means, and the option that lists them. */
function catalogDropText(dropped: readonly string[], maxBytes: number, needed: number | undefined): string {
  const raise = needed === undefined ? "--max-catalog-bytes <n>" : `--max-catalog-bytes ${needed}`;
  return `技能清单超出 ${maxBytes} 字节的预算，没有列出 ${dropped.length} 个技能：${dropped.join("、")}（模型看不到它们，/skill: 仍可加载；全部列出需要 ${raise}）`;
}

/**
 * The context window a `RUNTIME_CONTEXT_OVERFLOW` would have needed: the request's total,
 * read from the runtime's message (`… = N tokens，超过上限 M`); undefined for other errors.
 */
export function contextTokensNeeded(error: unknown): number | undefined {
  if ((error as { code?: unknown } | null | undefined)?.code !== "RUNTIME_CONTEXT_OVERFLOW") return undefined;
  const total = /= (\d+) tokens/.exec(errorMessage(error));
  return total === null ? undefined : Number(total[1]);
}

/** What to do about a request too large for the window: the option, and the figure it needs. */
export function overflowHint(needed: number | undefined): string {
  return needed === undefined
    ? "要让它放得下：用 --context-tokens <n> 给一个更大的上下文窗口（或者把这一轮说得短一些）"
    : `要让它放得下：--context-tokens ${needed}（或更大；模型的上下文窗口也得有这么大），或者把这一轮说得短一些`;
}

/** JSON of one event line: timestamps left out, so the same session prints the same lines. */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value, (key, inner: unknown) => (key === "timestamp" || key === "at" ? undefined : inner));
}

/** A transcript writing to `options.write`, in the format asked for. */
export function createTranscript(options: TranscriptOptions): Transcript {
  return options.format === "json" ? jsonTranscript(options) : textTranscript(options);
}

function textTranscript({ write, relabel }: TranscriptOptions): Transcript {
  // The load_skill calls the model made and whose loads are not reported yet, in call order: a
  // skill_load event says which skill, the call says whether it read the skill's files.
  const pendingLoads: { name: unknown; resources: unknown }[] = [];
  const transcript: Transcript = {
    reloading: false,
    folders({ project, user }) {
      write(folderLine(project));
      write(user === null ? "个人  无用户级目录（--user <目录>）" : `个人  ${user} · 用户自己的技能与扩展：在问项目信任之前加载`);
    },
    model({ provider, model, origin }) {
      write(`模型  ${provider} · ${model} · ${origin}（key 只从环境变量读取，不会打印）`);
    },
    started(runtime, { projectCopy, trusted, catalogBytesNeeded }) {
      const resources = runtime.resources;
      const catalog = runtime.catalog;
      const origin = (source: string) => (source.startsWith(`${projectCopy}${path.sep}`) ? "项目" : "个人");
      const names = (list: { name: string; source: string }[]) => (list.length > 0 ? list.map((r) => `${r.name}（${origin(r.source)}）`).join("、") : "无");
      // The AGENTS.md files in the order the system prompt carries them: the user's, then the project's.
      const instructions = runtime.instructions.length > 0 ? `（${runtime.instructions.map((found) => origin(found.source)).join("、")}）` : "";
      write(
        `资源  指令 ${runtime.instructions.length}${instructions} · 技能 ${resources.skills.length}：${names(resources.skills)} · 模板 ${resources.templates.length}：${names(resources.templates)}`,
      );
      for (const extension of runtime.extensions) {
        const where = extension.origin === "user" ? "个人" : "项目";
        const status =
          extension.status === "active"
            ? "已加载"
            : extension.status === "skipped_untrusted"
              ? "项目未受信任，没有 import（信任它：--trust-project）"
              : `加载失败 [${extension.code ?? "ERROR"}]，会话照常开始`;
        write(`扩展  ${extension.id}（${where}）：${status}`);
      }
      if (runtime.extensions.length === 0) write("扩展  无（extensions/*.mjs）");
      write(`信任  项目${trusted ? "受信任：它的扩展在用户级扩展之后加载" : "不受信任：它自己的代码一行都不运行"}`);
      const hidden = catalog.hidden.length > 0 ? `；对模型隐藏：${catalog.hidden.join("、")}` : "";
      const dropped = catalog.dropped.length > 0 ? `；超出预算：${catalog.dropped.join("、")}` : "";
      write(`清单  系统提示里的技能清单 ${catalog.bytes} / ${catalog.maxBytes} 字节${hidden}${dropped}`);
      for (const line of catalog.text.split("\n").filter((l) => l.startsWith("- "))) write(`      ${line}`);
      if (catalog.dropped.length > 0) write(`诊断  提醒 [${CATALOG_BUDGET_CODE}] ${catalogDropText(catalog.dropped, catalog.maxBytes, catalogBytesNeeded)}`);
      write(`工具  ${runtime.tools.join("、")}`);
    },
    event(event, input, context) {
      if (event.type === "diagnostic") {
        if (transcript.reloading) return;
        const d = event.diagnostic;
        write(`诊断  ${d.severity === "error" ? "跳过" : "提醒"} [${d.code}] ${firstLine(relabel(d.message), 160)}`);
      } else if (event.type === "request") {
        const t = event.tokens;
        write(
          `请求  #${event.turn} 系统提示 ${t.system} + 工具 ${t.tools} + 消息 ${t.messages} + 预留输出 ${t.reservedOutput} = ${t.total} / ${t.maxTokens} tokens`,
        );
        const droppedMessages = context?.droppedMessages ?? 0;
        if (droppedMessages > 0)
          write(`裁剪  上下文窗口放不下整段对话：这次请求省去了最早的 ${droppedMessages} 条消息（它们还在会话里；要带上它们：--context-tokens 更大的窗口）`);
      } else if (event.type === "skill_load") {
        const at = event.load.by === "model" ? pendingLoads.findIndex((call) => call.name === event.load.name) : -1;
        const call = at === -1 ? undefined : pendingLoads.splice(at, 1)[0];
        const files = Array.isArray(call?.resources) && call.resources.length > 0 ? call.resources.map(String) : undefined;
        write(
          event.load.by === "user"
            ? `技能  激活 ${event.load.name}：用户用 /skill: 强制加载，正文进入用户这一轮`
            : files !== undefined
              ? `技能  读取 ${event.load.name} 自带的 ${files.join("、")}：模型调用 load_skill 带上 resources，文件内容作为工具结果交回`
              : `技能  激活 ${event.load.name}：模型调用 load_skill，正文和技能自带的文件列表作为工具结果交回（清单里只有名字和描述）`,
        );
      } else if (event.type === "hook_diagnostic") {
        const d = event.diagnostic;
        write(`诊断  扩展 ${d.extensionId} 的 ${d.hook} ${d.kind === "timeout" ? "超时" : "出错"}：${firstLine(d.message, 160)}`);
      } else if (event.type === "message") {
        const message = event.message;
        if (message.role === "user") {
          write(`用户  ${input.startsWith("/") ? `（${firstLine(input, 60)}）` : ""}${firstLine(textOf(message), 160)}`);
        } else if (message.role === "assistant") {
          for (const line of assistantLines(message)) write(line);
          for (const block of message.content) {
            if (block.type !== "toolCall" || block.name !== "load_skill") continue;
            const args = block.arguments as { name?: unknown; resources?: unknown } | null;
            pendingLoads.push({ name: args?.name, resources: args?.resources });
          }
        } else {
          write(toolResultLine(message, relabel(textOf(message))));
        }
      }
    },
    retry(info) {
      write(`重试  第 ${info.attempt} 次请求没有成功 [${info.code}]，${Math.round(info.delayMs / 100) / 10} 秒后再试：${firstLine(info.detail, 120)}`);
    },
    failure(failure) {
      write(`失败  [${failure.code}] ${relabel(failure.message)}`);
    },
    reload(report, messages) {
      const found = `诊断 ${report.diagnostics.length} 条`;
      if (report.status === "failed") {
        write(`重载  失败 [${report.error.code}]：旧状态继续运行（${found}）`);
        return;
      }
      const changed = Object.entries(report.changes).filter(([key, list]) => key !== "extensionsReloaded" && list.length > 0);
      write(
        changed.length === 0
          ? `重载  没有变化：清单、工具和扩展都与启动时相同；${report.changes.extensionsReloaded.length} 个扩展重新 import，会话保留 ${messages} 条消息（${found}）`
          : `重载  ${changed.map(([key, list]) => `${key} ${list.join("、")}`).join(" · ")}（${found}）`,
      );
    },
    end(stopReason, counts, scope) {
      write(
        `${scope === "turn" ? "本轮" : "结束"}  ${stopReason} · 模型调用 ${counts.turns} 次 · 工具调用 ${counts.toolCalls} 次（被拦截 ${counts.blocked} 次）· 加载技能 ${counts.skillLoads} 次`,
      );
    },
    note(text) {
      write(text);
    },
  };
  return transcript;
}

function jsonTranscript({ write, relabel }: TranscriptOptions): Transcript {
  return {
    reloading: false,
    folders({ project, user, trusted }) {
      write(jsonLine({ type: "session", project, user, trusted }));
    },
    model(info) {
      write(jsonLine({ type: "model", ...info }));
    },
    started(runtime, { catalogBytesNeeded }) {
      const catalog = runtime.catalog;
      write(
        jsonLine({
          type: "catalog",
          text: catalog.text,
          bytes: catalog.bytes,
          maxBytes: catalog.maxBytes,
          listed: catalog.listed,
          dropped: catalog.dropped,
          hidden: catalog.hidden,
        }),
      );
      if (catalog.dropped.length > 0)
        write(
          jsonLine({
            type: "diagnostic",
            area: "catalog",
            severity: "warning",
            code: CATALOG_BUDGET_CODE,
            message: catalogDropText(catalog.dropped, catalog.maxBytes, catalogBytesNeeded),
            dropped: catalog.dropped,
            maxBytes: catalog.maxBytes,
            ...(catalogBytesNeeded !== undefined ? { bytesNeeded: catalogBytesNeeded } : {}),
            option: "--max-catalog-bytes",
          }),
        );
      write(jsonLine({ type: "extensions", extensions: runtime.extensions, tools: runtime.tools }));
    },
    event(event, _input, context) {
      if (event.type === "request") {
        const droppedMessages = context?.droppedMessages ?? 0;
        write(jsonLine({ ...event, reason: droppedMessages > 0 ? "trimmed" : "within_budget", droppedMessages }));
      } else if (event.type === "message") {
        const message = event.message;
        if (message.role === "user") write(jsonLine({ type: "user", text: textOf(message) }));
        else if (message.role === "assistant") {
          const said = textOf(message);
          if (said !== "") write(jsonLine({ type: "assistant", text: said }));
          for (const block of message.content)
            if (block.type === "toolCall") write(jsonLine({ type: "tool_call", id: block.id, name: block.name, arguments: block.arguments }));
        } else {
          write(
            jsonLine({
              type: "tool_result",
              toolCallId: message.toolCallId,
              toolName: message.toolName,
              isError: message.isError,
              text: relabel(textOf(message)),
              details: message.details,
            }),
          );
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
    },
    retry(info) {
      write(jsonLine({ type: "retry", ...info }));
    },
    failure(failure) {
      write(jsonLine({ type: "error", code: failure.code, message: relabel(failure.message) }));
    },
    reload() {
      // the `reload` event carried the report
    },
    end(stopReason, counts, scope) {
      write(jsonLine({ type: scope === "turn" ? "turn_end" : "end", stopReason, ...counts }));
    },
    note() {
      // notes are for people; JSON readers get the events
    },
  };
}
