/**
 * The command behind `npm start` from Chapter 13 on: runs the runtime's session
 * (`runtime-demo.ts`) and prints its transcript, or with `--json` one JSON object per line.
 *
 *     npm start                                          the scripted model: no network, the same run every time
 *     npm start -- --provider anthropic                  a real model (key in ANTHROPIC_API_KEY)
 *     npm start -- --provider openai-compatible --base-url http://127.0.0.1:11434/v1   a local server
 *     npm start -- --interactive                         a conversation, one line per turn
 *
 * Exit status: 0 when the session ran to its end, and when it stopped at an unfinished lab
 * of the learner's runtime.ts (a result, not a crash; 1 in CI); 1 when the workspace or the
 * provider cannot be used, the runtime cannot start, or the turn did not end well (the
 * error's code is printed), and with `--interactive` when any turn of the conversation
 * failed (Ctrl-C stopping a turn is not a failure); 2 for a command-line mistake; 130 after
 * Ctrl-C ends the session. No key is ever printed. What it does the way Chapter 12's command
 * does (reading the command line, the workspace, what a failure prints and exits with) comes
 * from `start.ts`. This module is provided: no lab asks for it.
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { ANTHROPIC_BASE_URL_ENV, ANTHROPIC_KEY_ENV, DEFAULT_ANTHROPIC_MODEL } from "../anthropic.js";
import { errorMessage } from "../async.js";
import { DEFAULT_OPENAI_MODEL, OPENAI_KEY_ENV } from "../openai.js";
import { createProviderModel, PROVIDER_NAMES } from "../provider.js";
import { DEFAULT_TIMEOUT_MS } from "../provider-http.js";
import type { RetryInfo, Sleep } from "../provider-retry.js";
import { DEFAULT_START_CATALOG_BYTES, openRuntimeSession, runRuntimeDemo, type RuntimeSessionOptions } from "./runtime-demo.js";
import { interruptFilter, onProcessInterrupt, runInteractive, type InteractiveOptions } from "./runtime-interactive.js";
import { contextTokensNeeded, overflowHint } from "./runtime-transcript.js";
import { codeOf, describeFailure, failureStatus, isScript, processIo, readCommandLine, unfinishedLab, workspaceOptions, type CommandIo } from "./start.js";

export const USAGE = `用法：npm start -- [选项]

运行第 13 章的运行时：默认是一次脚本化的 agent 会话（不联网，每次结果相同），并打印过程。
默认使用示例项目 examples/workspace 和示例的用户级目录 examples/user；agent 只在它们的副本里动手。

选项：
  --workspace <目录>     换成另一个项目（AGENTS.md、skills/、templates/、extensions/*.mjs）
  --user <目录>          用户级目录（skills/、extensions/*.mjs）；示例项目默认用 examples/user
  --no-user              不用任何用户级目录
  --trust-project        信任该项目，加载它 extensions/ 里的代码（示例项目默认信任）
  --trust-extensions     同 --trust-project
  --input <文字>         用户这一轮说的话，可以是 /skill:<名字> [文字] 或 /template:<名字> key=value …
                         （默认：项目有 review 模板时是 /template:review file=<项目里的第一个文件>，
                         没有时是一句普通的话“请审查 <项目里的第一个文件>……”，任何项目都能跑）
  --skill <名字>         脚本模型用 load_skill 加载的技能（默认：清单里描述提到 review 的第一个技能）；
                         它的正文提到技能自带的文件时，脚本模型再用 load_skill 的 resources 读那个文件
  --max-catalog-bytes <n>  技能清单的字节预算（默认 ${DEFAULT_START_CATALOG_BYTES}）；放不下的技能不进清单，会有一条诊断
  --interactive          对话：每行一轮；/skill:、/template:、/reload、/help、/exit；Ctrl-C 停下这一轮，再按一次退出
                         （退出状态：有一轮失败过就是 1，Ctrl-C 结束是 130，否则 0）
  --json                 每个事件一行 JSON（模型请求及其系统提示、工具调用、工具结果、诊断……）
  --help                 显示本帮助

换成真的模型（不指定 --provider 时用脚本模型）：
  --provider anthropic   Anthropic Messages API；key 读环境变量 ${ANTHROPIC_KEY_ENV}，
                         地址默认 https://api.anthropic.com，可用 ${ANTHROPIC_BASE_URL_ENV} 或 --base-url 换掉
  --provider openai-compatible --base-url <地址>
                         任何 OpenAI 兼容的 /chat/completions 服务，例如本地的 Ollama（http://127.0.0.1:11434/v1）、
                         llama.cpp server、vLLM、LM Studio；key 可选，读环境变量 ${OPENAI_KEY_ENV}
  --model <id>           模型 id（默认 anthropic：${DEFAULT_ANTHROPIC_MODEL}；openai-compatible：${DEFAULT_OPENAI_MODEL}）
  --timeout <秒>         一个请求最长多久没有任何数据就放弃（默认 ${DEFAULT_TIMEOUT_MS / 1000}）
  --context-tokens <n>   请求的上下文窗口（默认脚本模型 8000，真的模型 32000）；一次请求放不下时，错误会给出需要的数字
`;

export interface StartIo extends CommandIo {
  /** The environment (keys, `ANTHROPIC_BASE_URL`, `CI`); default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The one-turn session to run; default `runRuntimeDemo` (tests pass one that fails as they need). */
  run?: typeof runRuntimeDemo;
  /** Where `--interactive` reads lines; default `process.stdin` (a terminal gets a prompt). */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Registers a Ctrl-C handler, returns how to remove it; default `process.on("SIGINT")`. */
  onInterrupt?(handler: () => void): () => void;
  /** Ends the process at once (a second Ctrl-C while something still runs); default `process.exit`. */
  exit?(status: number): void;
  /** The `fetch` of provider requests; default the global one. */
  fetch?: typeof fetch;
  /** The wait between a provider's attempts; default a real timer (tests pass one that returns at once). */
  sleep?: Sleep;
}

const OPTIONS = {
  workspace: { type: "string" },
  user: { type: "string" },
  "no-user": { type: "boolean" },
  "trust-project": { type: "boolean" },
  "trust-extensions": { type: "boolean" },
  input: { type: "string" },
  skill: { type: "string" },
  "max-catalog-bytes": { type: "string" },
  interactive: { type: "boolean" },
  json: { type: "boolean" },
  help: { type: "boolean" },
  provider: { type: "string" },
  model: { type: "string" },
  "base-url": { type: "string" },
  timeout: { type: "string" },
  "context-tokens": { type: "string" },
} as const;

class UsageError extends Error {}

/** `value` of option `name` as a whole number of at least `min`, or a usage error. */
function wholeNumber(name: string, value: string, min: number): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(number) || number < min) {
    throw new UsageError(`--${name} 需要一个不小于 ${min} 的整数，实际为 ${JSON.stringify(value)}`);
  }
  return number;
}

/** Runs the command with `argv` (without node and the script) and returns the exit status. */
export async function main(argv: readonly string[], io: StartIo = processIo()): Promise<number> {
  let maxCatalogBytes: number | undefined;
  let timeoutSeconds: number | undefined;
  let contextTokens: number | undefined;
  const values = readCommandLine(io, USAGE, () => {
    const values = parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: false }).values;
    if (values.user !== undefined && values["no-user"]) throw new UsageError("--user 和 --no-user 只能选一个");
    if (values.provider === undefined) {
      const needsProvider = (["model", "base-url", "timeout"] as const).find((name) => values[name] !== undefined);
      if (needsProvider !== undefined) throw new UsageError(`--${needsProvider} 只对真的模型有用，请同时给出 --provider（${PROVIDER_NAMES.join(" 或 ")}）`);
    }
    if (values.provider !== undefined && values.skill !== undefined) throw new UsageError("--skill 只对脚本模型有用：真的模型自己决定加载哪个技能");
    if (values["max-catalog-bytes"] !== undefined) maxCatalogBytes = wholeNumber("max-catalog-bytes", values["max-catalog-bytes"], 0);
    if (values.timeout !== undefined) timeoutSeconds = wholeNumber("timeout", values.timeout, 1);
    if (values["context-tokens"] !== undefined)
      contextTokens = wholeNumber("context-tokens", values["context-tokens"], 2 * (values.provider === undefined ? 1024 : 4096));
    return values;
  });
  if (typeof values === "number") return values;
  const json = values.json === true;
  const env = io.env ?? process.env;
  const report = (error: unknown) => {
    io.err(failureText(error));
    if (json) {
      const needed = contextTokensNeeded(error);
      io.out(
        `${JSON.stringify({
          type: "error",
          code: codeOf(error) ?? (unfinishedLab(error) !== undefined ? "LAB_UNFINISHED" : "ERROR"),
          message: errorMessage(error),
          ...(needed !== undefined ? { option: "--context-tokens", contextTokensNeeded: needed } : {}),
        })}\n`,
      );
    }
    return failureStatus(error, env);
  };

  // Ctrl-C: the first one stops what runs (the one-turn session's turn, or the
  // interactive session's own rule takes over), a second one leaves at once.
  const controller = new AbortController();
  let interrupts = 0;
  const isPress = interruptFilter(env);
  const removeInterrupt = values.interactive
    ? () => {}
    : (io.onInterrupt ?? onProcessInterrupt)(() => {
        if (!isPress()) return;
        interrupts++;
        if (interrupts === 1) controller.abort(new Error("用户按了 Ctrl-C"));
        else (io.exit ?? process.exit)(130);
      });

  try {
    const session: RuntimeSessionOptions = {
      ...workspaceOptions(io, values.workspace, "examples/workspace"),
      ...(values["no-user"]
        ? { userRoot: null }
        : values.user !== undefined
          ? { userRoot: path.resolve(io.cwd, values.user), userLabel: values.user }
          : { userLabel: "examples/user" }),
      ...(values["trust-project"] || values["trust-extensions"] ? { trustProject: true } : {}),
      ...(maxCatalogBytes !== undefined ? { maxCatalogBytes } : {}),
      ...(values.skill !== undefined ? { skill: values.skill } : {}),
      format: json ? "json" : "text",
      write: (line) => io.out(`${line}\n`),
    };
    if (values.provider !== undefined) {
      // Built once now, so a missing key or a bad address is refused before anything is copied.
      let onRetry = (info: RetryInfo): void => void info;
      const model = createProviderModel({
        provider: values.provider,
        env,
        ...(values.model !== undefined ? { model: values.model } : {}),
        ...(values["base-url"] !== undefined ? { baseUrl: values["base-url"] } : {}),
        ...(timeoutSeconds !== undefined ? { timeoutMs: timeoutSeconds * 1000 } : {}),
        ...(io.fetch ? { fetch: io.fetch } : {}),
        ...(io.sleep ? { sleep: io.sleep } : {}),
        ...(values.provider === "anthropic" ? { maxTokens: 4096 } : {}),
        onRetry: (info) => onRetry(info),
      });
      session.model = model;
      session.modelInfo = { provider: model.provider, model: model.model, origin: model.origin };
      session.context = { maxTokens: contextTokens ?? 32_000, reservedOutput: 4096 };
      session.onTranscript = (transcript) => (onRetry = (info) => transcript.retry(info));
    } else if (contextTokens !== undefined) {
      session.context = { maxTokens: contextTokens, reservedOutput: 1024 };
    }

    if (values.interactive) {
      const opened = await openRuntimeSession({ ...session, ...(values.input !== undefined ? { probeInput: values.input } : {}) });
      try {
        const stdin = io.stdin ?? process.stdin;
        const interactive: InteractiveOptions = { session: opened, input: stdin, output: process.stdout, terminal: stdin.isTTY === true, env };
        if (values.input !== undefined) interactive.firstInput = values.input;
        if (io.onInterrupt) interactive.onInterrupt = io.onInterrupt;
        if (io.exit) interactive.exit = io.exit;
        return await runInteractive(interactive);
      } finally {
        await opened.close();
      }
    }

    const summary = await (io.run ?? runRuntimeDemo)({ ...session, ...(values.input !== undefined ? { input: values.input } : {}), signal: controller.signal });
    if (controller.signal.aborted) return 130;
    return summary.stopReason === "stop" ? 0 : 1;
  } catch (error) {
    return report(error);
  } finally {
    removeInterrupt();
  }
}

/** The learner's file for a lab of `chapter`, as it stands in a practice folder. */
function teachingFileOf(chapter: string): string {
  return chapter === "12" ? "packages/pi-course/src/resources.ts" : "packages/pi-course/src/runtime.ts";
}

/**
 * What `npm start` prints when the session cannot run: the error's code and message, plus
 * what to do. In a practice folder the session runs on the learner's own runtime.ts, so a
 * starter's "Lab N.M … 尚未实现" names the lab and the learner's file rather than reading as
 * a crash; a resource error escaping the start means the runtime's discovery was strict.
 */
export function failureText(error: unknown): string {
  return describeFailure(error, teachingFileOf, (code) => {
    if (code === "RUNTIME_CONTEXT_OVERFLOW") return `      ${overflowHint(contextTokensNeeded(error))}\n`;
    if (code === "TEMPLATE_ARGUMENT_MISSING") return "      在 --input 的 /template: 命令里用 名字=值 提供模板参数\n";
    if (code?.startsWith("RESOURCE_"))
      return (
        "      启动时的发现是严格的：一个坏文件让整个会话起不来。运行时的发现必须是宽松的（给 discoverResources 传 onDiagnostic，\n" +
        "      见第 13 章 §C6.1；那是第 12 章挑战关 10.1 节的第二版规则，第 12 章的 Lab 不要求它）：坏文件变成一条诊断，会话照常开始。\n"
      );
    return "";
  });
}

// `npm start` goes through scripts/start.mjs, which imports `main`; `node dist/src/app/runtime-start.js` works too.
if (isScript(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}
