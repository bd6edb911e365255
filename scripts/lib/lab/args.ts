/**
 * Command lines of `lab` and `hint`: the shared `NN` / `NN.L` target syntax and `lab`'s
 * flags. Parsing is pure; every mistake is a `CourseError` `USAGE` with a one-line message.
 */
import { CourseError } from "../core/errors.js";
import type { LabTarget } from "./runner.js";

/**
 * Parses a target typed by a user: `12` (a chapter) or `12.1` (a lab); a one-digit
 * chapter is padded (`3.1` → chapter `03`, lab `03.1`). Throws `USAGE` otherwise.
 */
export function parseTarget(text: string): LabTarget {
  const match = /^(\d{1,2})(?:\.(\d{1,2}))?$/.exec(text);
  if (match === null) throw new CourseError("USAGE", `无法识别 “${text}”：写章号（如 12）或 Lab 编号（如 12.1）`);
  const chapter = (match[1] ?? "").padStart(2, "0");
  const lab = match[2];
  return lab === undefined ? { chapter } : { chapter, lab: `${chapter}.${Number(lab)}` };
}

/** The command that runs lab (or chapter) `id`. */
export function labCommand(id: string): string {
  return `npm run lab -w @pi/course -- ${id}`;
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
}

export const LAB_USAGE = `用法：npm run lab -w @pi/course -- <NN.L | NN> [--watch] [--json]

  NN.L      编译并只运行这一个 Lab 的测试，例如 12.1
  NN        编译并运行本章所有 Lab，显示进度表，例如 12
  --watch   保存 packages/pi-course/src 或 test 下的文件后自动重跑（Ctrl-C 退出）
  --json    以 JSON 输出每个 Lab 的结果，给程序读
  --help    显示这段说明

只有 Lab（或全章）全部通过时退出码为 0。`;

/** Parses `lab`'s arguments (after `--`). Throws `USAGE` for anything it does not understand. */
export function parseLabArgs(argv: readonly string[]): LabArgs {
  const args: LabArgs = { help: false, watch: false, json: false };
  for (const arg of argv) {
    if (arg === "--help" || arg === "-h") args.help = true;
    else if (arg === "--watch" || arg === "-w") args.watch = true;
    else if (arg === "--json") args.json = true;
    else if (arg.startsWith("-")) throw new CourseError("USAGE", `未知选项 ${arg}（见 --help）`);
    else if (args.target !== undefined) throw new CourseError("USAGE", `只能给一个章号或 Lab 编号，多了 “${arg}”`);
    else args.target = parseTarget(arg);
  }
  if (args.help) return args;
  if (args.target === undefined) throw new CourseError("USAGE", "缺少章号或 Lab 编号，例如 npm run lab -w @pi/course -- 12.1");
  if (args.watch && args.json) throw new CourseError("USAGE", "--watch 和 --json 不能同时使用");
  return args;
}
