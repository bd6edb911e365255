/**
 * Command lines of `lab` and `hint`: the shared `NN` / `NN.L` target syntax and `lab`'s
 * flags. Parsing is pure; every mistake is a `CourseError` `USAGE` with a one-line message.
 */
import { CourseError } from "../core/errors.js";
import { parseTarget, type LabTarget } from "../core/cli.js";
import { CHALLENGE_TIMEOUT_SECONDS, DEFAULT_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS } from "../testing/limits.js";

/** The command that runs lab (or chapter) `id`. */
export function labCommand(id: string): string {
  return `npm run lab -w @pi/course -- ${id}`;
}

/** The command that gives a practice folder's teaching file(s) of chapter (or lab) `id` their starter back. */
export function resetCommand(id: string): string {
  return `npm run reset -w @pi/course -- ${id}`;
}

/** The command that shows the next hint for lab `id`. */
export function hintCommand(id: string): string {
  return `npm run hint -w @pi/course -- ${id}`;
}

export interface LabArgs {
  help: boolean;
  target?: LabTarget;
  watch: boolean;
  json: boolean;
  verbose: boolean;
  /** Run the chapter's challenge tier instead of its labs (`NN` only). */
  challenge: boolean;
  /** Time limit of each test run (of each test, with `challenge`), in seconds. */
  timeoutSeconds: number;
}

export const LAB_USAGE = `用法：npm run lab -w @pi/course -- <NN.L | NN> [--watch] [--verbose] [--timeout 秒] [--json]
      npm run lab -w @pi/course -- NN --challenge [--timeout 秒] [--json]

  NN.L          编译并运行这个 Lab 的测试（同时检查本章之前的 Lab 仍然通过），例如 12.1
  NN            编译并运行本章所有 Lab，显示进度表，例如 12
  --challenge   挑战关：在你的代码上运行本章的加固测试，按主题列表显示；每项测试有自己的时间上限
                （--timeout，默认 ${CHALLENGE_TIMEOUT_SECONDS} 秒），一项卡住只记一条红，其余照常运行；不影响 Lab 的进度
  --watch       保存 packages/pi-course/src 或 test 下的文件后自动重跑（Ctrl-C 退出）
  --verbose     显示完整的断言差异、每一项失败的测试，以及测试打印的输出
  --timeout 秒  每次运行测试的时间上限，默认 ${DEFAULT_TIMEOUT_SECONDS} 秒；超时后测试进程被结束
  --json        以 JSON 输出每个 Lab 的结果，给程序读
  --help        显示这段说明

红灯是结果，不是错误：Lab 没有通过时退出码仍为 0（npm 不会打印错误块）。
加 --json，或者设置了环境变量 CI（如 CI=1）时，只有 Lab（或全章）全部通过退出码才为 0，否则为 1。
用法错误退出码为 2；按 Ctrl-C 中断时，命令清理完测试进程和临时文件后以同一个信号结束
（--watch 本来就要靠 Ctrl-C 结束，所以那时退出码为 0）。`;

/** Parses `lab`'s arguments (after `--`). Throws `USAGE` for anything it does not understand. */
export function parseLabArgs(argv: readonly string[]): LabArgs {
  const args: LabArgs = { help: false, watch: false, json: false, verbose: false, challenge: false, timeoutSeconds: DEFAULT_TIMEOUT_SECONDS };
  let timeoutGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--help" || arg === "-h") args.help = true;
    else if (arg === "--watch" || arg === "-w") args.watch = true;
    else if (arg === "--json") args.json = true;
    else if (arg === "--verbose" || arg === "-v") args.verbose = true;
    else if (arg === "--challenge") args.challenge = true;
    else if (arg === "--timeout" || arg.startsWith("--timeout=")) {
      const value = arg === "--timeout" ? argv[++i] : arg.slice("--timeout=".length);
      args.timeoutSeconds = parseSeconds(value);
      timeoutGiven = true;
    } else if (arg.startsWith("-")) throw new CourseError("USAGE", `未知选项 ${arg}（见 --help）`);
    else if (args.target !== undefined) throw new CourseError("USAGE", `只能给一个章号或 Lab 编号，多了 “${arg}”`);
    else args.target = parseTarget(arg);
  }
  if (args.help) return args;
  if (args.target === undefined) throw new CourseError("USAGE", "缺少章号或 Lab 编号，例如 npm run lab -w @pi/course -- 12.1");
  if (args.watch && args.json) throw new CourseError("USAGE", "--watch 和 --json 不能同时使用");
  if (args.challenge && args.target.lab !== undefined) throw new CourseError("USAGE", `--challenge 针对整章：写章号（如 ${args.target.chapter}），不是 Lab 编号`);
  if (args.challenge && args.watch) throw new CourseError("USAGE", "--challenge 和 --watch 不能同时使用");
  if (args.challenge && !timeoutGiven) args.timeoutSeconds = CHALLENGE_TIMEOUT_SECONDS;
  return args;
}

/** `--timeout`'s value: a positive number of seconds (fractions allowed), at most a day. */
function parseSeconds(value: string | undefined): number {
  const seconds = value === undefined || !/^\d+(?:\.\d+)?$/.test(value) ? Number.NaN : Number(value);
  if (!(seconds > 0 && seconds <= MAX_TIMEOUT_SECONDS)) {
    throw new CourseError("USAGE", `--timeout 需要 0 到 ${MAX_TIMEOUT_SECONDS} 之间的秒数${value === undefined ? "" : `，收到 “${value}”`}`);
  }
  return seconds;
}
