/**
 * The command behind `npm start`: runs the scripted demo session (`demo.ts`) and prints
 * its transcript.
 *
 *     npm start
 *     npm start -- --workspace ../my-project --trust-extensions
 *     npm start -- --template review --arg file=src/app.js
 *
 * Exit status: 0 when the session ran to its end, and when it stopped at an unfinished lab
 * of the learner's resources.ts (a result, not a crash; 1 in CI); 1 when the workspace
 * cannot be used (the error's code is printed); 2 for a command-line mistake.
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { errorMessage } from "./async.js";
import { runDemo } from "./demo.js";

export const USAGE = `用法：npm start -- [选项]

在一个工作区里运行一次脚本化的 agent 会话（不联网，每次结果相同），并打印过程。
默认使用仓库自带的示例工作区 examples/workspace；agent 只在它的副本里动手。

选项：
  --workspace <目录>     换成另一个工作区（AGENTS.md、skills/、templates/、extensions/*.mjs）
  --trust-extensions     信任该工作区 extensions/ 里的代码（示例工作区默认信任）
  --template <名字>      作为用户输入的模板（默认 review，没有则取第一个）
  --skill <名字>         激活的技能（默认取第一个）
  --arg <键=值>          模板参数，可重复；file 默认是工作区里的第一个文件
  --help                 显示本帮助
`;

export interface StartIo {
  out(text: string): void;
  err(text: string): void;
  /** Where relative paths are resolved: the folder the user typed the command in. */
  cwd: string;
  /** The environment (`CI` decides the status of an unfinished lab); default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The session to run; default `runDemo` (tests pass one that fails as they need). */
  run?: typeof runDemo;
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
        "trust-extensions": { type: "boolean" },
        template: { type: "string" },
        skill: { type: "string" },
        arg: { type: "string", multiple: true },
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
  const args: Record<string, string> = {};
  for (const pair of values.arg ?? []) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(pair);
    if (match === null) {
      io.err(`用法错误：--arg 需要 键=值 的形式，键是字母、数字或下划线，实际为 ${JSON.stringify(pair)}\n`);
      return 2;
    }
    args[match[1]!] = match[2]!;
  }
  try {
    const summary = await (io.run ?? runDemo)({
      ...(values.workspace !== undefined
        ? { workspace: path.resolve(io.cwd, values.workspace), workspaceLabel: values.workspace }
        : { workspaceLabel: "examples/workspace（示例）" }),
      ...(values["trust-extensions"] ? { trustExtensions: true } : {}),
      ...(values.template !== undefined ? { template: values.template } : {}),
      ...(values.skill !== undefined ? { skill: values.skill } : {}),
      args,
      write: (line) => io.out(`${line}\n`),
    });
    return summary.stopReason === "stop" ? 0 : 1;
  } catch (error) {
    io.err(failureText(error));
    // An unfinished lab is a result, like a red lab (see the course's exit-status rule): no
    // npm error block after it, except in CI, which needs the failing status.
    return isUnfinishedLab(error) && !inCi(io.env ?? process.env) ? 0 : 1;
  }
}

const UNFINISHED = /^(Lab \d+\.\d+) .*尚未实现$/;

function isUnfinishedLab(error: unknown): boolean {
  return UNFINISHED.test(errorMessage(error));
}

/** True when `CI` is set to anything but "", "0" or "false". */
function inCi(env: NodeJS.ProcessEnv): boolean {
  const value = (env.CI ?? "").trim().toLowerCase();
  return value !== "" && value !== "0" && value !== "false";
}

/**
 * What `npm start` prints when the session cannot run: the error's code and message, plus
 * what to do. In a practice folder the session runs on the learner's own resources.ts, so
 * a starter's "Lab N.M … 尚未实现" says which lab to finish rather than reading as a crash.
 */
export function failureText(error: unknown): string {
  const message = errorMessage(error);
  const unfinished = UNFINISHED.exec(message);
  if (unfinished !== null) {
    return `未完成  ${message}\n      npm start 用的是你写的 resources.ts：完成 ${unfinished[1]} 及之后的 Lab，再来看整次会话\n`;
  }
  const code = (error as { code?: unknown }).code;
  const hint =
    code === "TEMPLATE_ARGUMENT_MISSING"
      ? "      用 --arg 名字=值 提供模板参数\n"
      : typeof code === "string" && code.startsWith("RESOURCE_")
        ? "      如果它来自发现：演示要的是宽松发现（onDiagnostic），坏文件本该成为一条“诊断”并被跳过；你的 discoverResources 若只实现了\n" +
          "      严格模式，第一个坏文件就会停下整个会话——宽松模式是第 12 章挑战关 10.1 节的内容，不在 Lab 里：修好这个文件，或者实现它\n"
        : "";
  return `错误  [${typeof code === "string" ? code : "ERROR"}] ${message}\n${hint}`;
}

// `npm start` goes through scripts/start.mjs, which imports `main`; `node dist/src/start.js` works too.
if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}
