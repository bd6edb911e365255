/**
 * The command behind `npm start` at Chapter 12: runs the scripted demo session (`demo.ts`)
 * and prints its transcript.
 *
 *     npm start
 *     npm start -- --workspace ../my-project --trust-extensions
 *     npm start -- --template review --arg file=src/app.js
 *
 * Exit status: 0 when the session ran to its end, and when it stopped at an unfinished lab
 * of the learner's resources.ts (a result, not a crash; 1 in CI); 1 when the workspace
 * cannot be used (the error's code is printed); 2 for a command-line mistake.
 *
 * The first half of this module is what every later `npm start` command does the same way,
 * so Chapter 13's (`runtime-start.ts`) imports it instead of copying it: its input and
 * output, reading the command line (a mistake, `--help`), the workspace it names, and what a
 * failure prints and exits with.
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { errorMessage } from "../async.js";
import { runDemo } from "./demo.js";

// ---------------------------------------------------------------------------
// What every npm start command shares
// ---------------------------------------------------------------------------

/** Where a command writes and what it is run in; tests pass their own. */
export interface CommandIo {
  out(text: string): void;
  err(text: string): void;
  /** Where relative paths are resolved: the folder the user typed the command in. */
  cwd: string;
  /** The environment (`CI` decides the status of an unfinished lab); default `process.env`. */
  env?: NodeJS.ProcessEnv;
}

/** The process's own output, and the folder the user typed the command in. */
export function processIo(): CommandIo {
  return {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    // npm runs scripts in the package folder; INIT_CWD is where the user was.
    cwd: process.env.INIT_CWD ?? process.cwd(),
  };
}

/**
 * Reads the command line with `read`, which throws on a mistake. Returns what `read` returned,
 * or an exit status: 2 after a mistake (`用法错误：…`), 0 after printing `usage` for `--help`.
 */
export function readCommandLine<Values extends { help?: boolean | undefined }>(io: CommandIo, usage: string, read: () => Values): Values | number {
  let values: Values;
  try {
    values = read();
  } catch (error) {
    io.err(`用法错误：${errorMessage(error)}（npm start -- --help 查看用法）\n`);
    return 2;
  }
  if (values.help) {
    io.out(usage);
    return 0;
  }
  return values;
}

/** The session's workspace options: the folder `--workspace` gave, resolved from where the user typed it, or the sample, named `sampleLabel`. */
export function workspaceOptions(io: CommandIo, workspace: string | undefined, sampleLabel: string): { workspace?: string; workspaceLabel: string } {
  return workspace !== undefined ? { workspace: path.resolve(io.cwd, workspace), workspaceLabel: workspace } : { workspaceLabel: sampleLabel };
}

const UNFINISHED = /^(Lab (\d+)\.\d+) .*尚未实现$/;

/** `{ lab, chapter }` of a starter's scaffold error, or undefined. */
export function unfinishedLab(error: unknown): { lab: string; chapter: string } | undefined {
  const match = UNFINISHED.exec(errorMessage(error));
  return match === null ? undefined : { lab: match[1]!, chapter: match[2]! };
}

/** The `code` of an error, when it is a string. */
export function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}

/** True when `CI` is set to anything but "", "0" or "false". */
function inCi(env: NodeJS.ProcessEnv): boolean {
  const value = (env.CI ?? "").trim().toLowerCase();
  return value !== "" && value !== "0" && value !== "false";
}

/**
 * The exit status after the session failed with `error`: 1, except 0 for an unfinished lab,
 * which is a result, like a red lab (see the course's exit-status rule): no npm error block
 * after it, except in CI, which needs the failing status.
 */
export function failureStatus(error: unknown, env: NodeJS.ProcessEnv): number {
  return unfinishedLab(error) !== undefined && !inCi(env) ? 0 : 1;
}

/**
 * What `npm start` prints when the session cannot run. In a practice folder the session runs
 * on the learner's own code, so a starter's "Lab N.M … 尚未实现" names the lab and the file to
 * finish (`learnerFile` of the lab's chapter) rather than reading as a crash; any other error
 * prints its code and message, then `hint` of its code: lines that say what to do, or "".
 */
export function describeFailure(error: unknown, learnerFile: (chapter: string) => string, hint: (code: string | undefined) => string): string {
  const message = errorMessage(error);
  const unfinished = unfinishedLab(error);
  if (unfinished !== undefined) {
    return `未完成  ${message}\n      npm start 用的是你写的 ${learnerFile(unfinished.chapter)}：完成 ${unfinished.lab} 及之后的 Lab，再来看整次会话\n`;
  }
  const code = codeOf(error);
  return `错误  [${code ?? "ERROR"}] ${message}\n${hint(code)}`;
}

/** True when the module at `url` is the script node was started with (`node dist/src/app/start.js`). */
export function isScript(url: string): boolean {
  return process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(url);
}

// ---------------------------------------------------------------------------
// Chapter 12's command
// ---------------------------------------------------------------------------

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

export interface StartIo extends CommandIo {
  /** The session to run; default `runDemo` (tests pass one that fails as they need). */
  run?: typeof runDemo;
}

/** Runs the command with `argv` (without node and the script) and returns the exit status. */
export async function main(argv: readonly string[], io: StartIo = processIo()): Promise<number> {
  const values = readCommandLine(
    io,
    USAGE,
    () =>
      parseArgs({
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
      }).values,
  );
  if (typeof values === "number") return values;
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
      ...workspaceOptions(io, values.workspace, "examples/workspace（示例）"),
      ...(values["trust-extensions"] ? { trustExtensions: true } : {}),
      ...(values.template !== undefined ? { template: values.template } : {}),
      ...(values.skill !== undefined ? { skill: values.skill } : {}),
      args,
      write: (line) => io.out(`${line}\n`),
    });
    return summary.stopReason === "stop" ? 0 : 1;
  } catch (error) {
    io.err(failureText(error));
    return failureStatus(error, io.env ?? process.env);
  }
}

/**
 * What `npm start` prints when the session cannot run (see `describeFailure`): an unfinished
 * lab of the learner's resources.ts, or the error's code, message and what to do.
 */
export function failureText(error: unknown): string {
  return describeFailure(
    error,
    () => "resources.ts",
    (code) =>
      code === "TEMPLATE_ARGUMENT_MISSING"
        ? "      用 --arg 名字=值 提供模板参数\n"
        : code?.startsWith("RESOURCE_")
          ? "      如果它来自发现：演示要的是宽松发现（onDiagnostic），坏文件本该成为一条“诊断”并被跳过；你的 discoverResources 若只实现了\n" +
            "      严格模式，第一个坏文件就会停下整个会话——宽松模式是第 12 章挑战关 10.1 节的内容，不在 Lab 里：修好这个文件，或者实现它\n"
          : "",
  );
}

// `npm start` goes through scripts/start.mjs, which imports `main`; `node dist/src/app/start.js` works too.
if (isScript(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}
