/**
 * The command behind `npm start` from Chapter 13 on: runs the runtime's scripted session
 * (`runtime-demo.ts`) and prints its transcript, or with `--json` one JSON object per line.
 *
 *     npm start
 *     npm start -- --json
 *     npm start -- --workspace ../my-project --trust-project --input "/skill:code-review 看看 src/app.js"
 *
 * Exit status: 0 when the session ran to its end, and when it stopped at an unfinished lab
 * of the learner's runtime.ts (a result, not a crash; 1 in CI); 1 when the workspace
 * cannot be used or the runtime cannot start (the error's code is printed); 2 for a
 * command-line mistake. This module is provided: no lab asks for it.
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { errorMessage } from "./async.js";
import { runRuntimeDemo } from "./runtime-demo.js";

export const USAGE = `用法：npm start -- [选项]

运行第 13 章的运行时：一次脚本化的 agent 会话（不联网，每次结果相同），并打印过程。
默认使用示例项目 examples/workspace 和示例的用户级目录 examples/user；agent 只在它们的副本里动手。

选项：
  --workspace <目录>     换成另一个项目（AGENTS.md、skills/、templates/、extensions/*.mjs）
  --user <目录>          用户级目录（skills/、extensions/*.mjs）；示例项目默认用 examples/user
  --no-user              不用任何用户级目录
  --trust-project        信任该项目，加载它 extensions/ 里的代码（示例项目默认信任）
  --trust-extensions     同 --trust-project
  --input <文字>         用户这一轮说的话，可以是 /skill:<名字> [文字] 或 /template:<名字> key=value …
                         （默认 /template:review file=<项目里的第一个文件>）
  --max-catalog-bytes <n>  技能目录的字节预算（默认 4096）
  --json                 每个事件一行 JSON（模型请求及其系统提示、工具调用、工具结果、诊断……）
  --help                 显示本帮助
`;

export interface StartIo {
  out(text: string): void;
  err(text: string): void;
  /** Where relative paths are resolved: the folder the user typed the command in. */
  cwd: string;
  /** The environment (`CI` decides the status of an unfinished lab); default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The session to run; default `runRuntimeDemo` (tests pass one that fails as they need). */
  run?: typeof runRuntimeDemo;
}

const defaultIo = (): StartIo => ({
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  // npm runs scripts in the package folder; INIT_CWD is where the user was.
  cwd: process.env.INIT_CWD ?? process.cwd(),
});

/** Runs the command with `argv` (without node and the script) and returns the exit status. */
export async function main(argv: readonly string[], io: StartIo = defaultIo()): Promise<number> {
  let values;
  try {
    values = parseArgs({
      args: [...argv],
      options: {
        workspace: { type: "string" },
        user: { type: "string" },
        "no-user": { type: "boolean" },
        "trust-project": { type: "boolean" },
        "trust-extensions": { type: "boolean" },
        input: { type: "string" },
        "max-catalog-bytes": { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean" },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    io.err(`用法错误：${errorMessage(error)}（npm start -- --help 查看用法）\n`);
    return 2;
  }
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  if (values.user !== undefined && values["no-user"]) {
    io.err("用法错误：--user 和 --no-user 只能选一个（npm start -- --help 查看用法）\n");
    return 2;
  }
  let maxCatalogBytes: number | undefined;
  if (values["max-catalog-bytes"] !== undefined) {
    maxCatalogBytes = Number(values["max-catalog-bytes"]);
    if (!/^\d+$/.test(values["max-catalog-bytes"]) || !Number.isSafeInteger(maxCatalogBytes)) {
      io.err(`用法错误：--max-catalog-bytes 需要一个非负整数，实际为 ${JSON.stringify(values["max-catalog-bytes"])}\n`);
      return 2;
    }
  }
  const json = values.json === true;
  try {
    const summary = await (io.run ?? runRuntimeDemo)({
      ...(values.workspace !== undefined ? { workspace: path.resolve(io.cwd, values.workspace), workspaceLabel: values.workspace } : { workspaceLabel: "examples/workspace" }),
      ...(values["no-user"] ? { userRoot: null } : values.user !== undefined ? { userRoot: path.resolve(io.cwd, values.user), userLabel: values.user } : { userLabel: "examples/user" }),
      ...(values["trust-project"] || values["trust-extensions"] ? { trustProject: true } : {}),
      ...(values.input !== undefined ? { input: values.input } : {}),
      ...(maxCatalogBytes !== undefined ? { maxCatalogBytes } : {}),
      format: json ? "json" : "text",
      write: (line) => io.out(`${line}\n`),
    });
    return summary.stopReason === "stop" ? 0 : 1;
  } catch (error) {
    io.err(failureText(error));
    if (json) io.out(`${JSON.stringify({ type: "error", code: codeOf(error) ?? (unfinishedLab(error) !== undefined ? "LAB_UNFINISHED" : "ERROR"), message: errorMessage(error) })}\n`);
    // An unfinished lab is a result, like a red lab (see the course's exit-status rule): no
    // npm error block after it, except in CI, which needs the failing status.
    return unfinishedLab(error) !== undefined && !inCi(io.env ?? process.env) ? 0 : 1;
  }
}

const UNFINISHED = /^(Lab (\d+)\.\d+) .*尚未实现$/;

/** `{ lab, chapter }` of a starter's scaffold error, or undefined. */
function unfinishedLab(error: unknown): { lab: string; chapter: string } | undefined {
  const match = UNFINISHED.exec(errorMessage(error));
  return match === null ? undefined : { lab: match[1]!, chapter: match[2]! };
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}

/** True when `CI` is set to anything but "", "0" or "false". */
function inCi(env: NodeJS.ProcessEnv): boolean {
  const value = (env.CI ?? "").trim().toLowerCase();
  return value !== "" && value !== "0" && value !== "false";
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
  const message = errorMessage(error);
  const unfinished = unfinishedLab(error);
  if (unfinished !== undefined) {
    return `未完成  ${message}\n      npm start 用的是你写的 ${teachingFileOf(unfinished.chapter)}：完成 ${unfinished.lab} 及之后的 Lab，再来看整次会话\n`;
  }
  const errorCode = codeOf(error);
  let hint = "";
  if (errorCode === "TEMPLATE_ARGUMENT_MISSING") hint = "      在 --input 的 /template: 命令里用 名字=值 提供模板参数\n";
  else if (errorCode !== undefined && errorCode.startsWith("RESOURCE_")) {
    hint =
      "      启动时的发现是严格的：一个坏文件让整个会话起不来。运行时的发现必须是宽松的（给 discoverResources 传 onDiagnostic，\n" +
      "      见第 13 章 5.1 节；那是第 12 章 9.2 节的第二版规则，第 12 章的 Lab 不要求它）：坏文件变成一条诊断，会话照常开始。\n";
  }
  return `错误  [${errorCode ?? "ERROR"}] ${message}\n${hint}`;
}

// `npm start` goes through scripts/start.mjs, which imports `main`; `node dist/src/runtime-start.js` works too.
if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}
