/**
 * The command-line plumbing every course command shares: parsing options into values and
 * positionals (any mistake is a one-line `USAGE` error), reading a chapter number, and
 * running `main` when the file is the program node was started with.
 *
 * Only node built-ins, `errors.ts` and `scratch.ts` (itself built-ins only) are imported, so
 * `lab` can load this module before it starts the compiler without slowing its start-up.
 */
import { realpathSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { CourseError, formatError } from "./errors.js";
import { exitCodeFor } from "./exit-status.js";
import { sweepStaleScratch } from "./scratch.js";

type OptionsConfig = NonNullable<ParseArgsConfig["options"]>;

/**
 * Parses `argv` strictly against `options` (positionals allowed). Guarantees that any
 * mistake node's parser finds (unknown option, missing value, …) becomes a `CourseError`
 * `USAGE` whose message is one line pointing at `--help` (see `usageMessage`).
 */
export function parseCommandLine<const O extends OptionsConfig>(argv: readonly string[], options: O) {
  try {
    return parseArgs({ args: [...argv], allowPositionals: true as const, strict: true as const, options });
  } catch (error) {
    throw new CourseError("USAGE", usageMessage(error), { cause: error });
  }
}

/**
 * One line, in the learner's language, for an error of node's argument parser: an unknown
 * option is worded as `lab` and `hint` word it; anything unrecognised keeps node's first line.
 */
export function usageMessage(error: unknown): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  const text = typeof message === "string" ? message : String(error);
  const quoted = /'([^']+)'/.exec(text)?.[1];
  if (quoted !== undefined && code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") return `未知选项 ${quoted}（见 --help）`;
  if (quoted !== undefined && code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    // node names the option as `--source <value>` or `-h, --help`.
    const option = quoted.replace(/ <value>$/, "").split(", ").pop() ?? quoted;
    if (text.endsWith("argument missing")) return `选项 ${option} 需要一个值（见 --help）`;
    if (text.endsWith("does not take an argument")) return `选项 ${option} 不接受值（见 --help）`;
  }
  return `${text.split("\n")[0]}（--help 查看用法）`;
}

/**
 * Normalises a chapter id typed by a user: `"12"` stays `"12"`, `"3"` becomes `"03"`.
 * Returns `undefined` for anything that is not a one- or two-digit number.
 */
export function normalizeChapterId(input: string): string | undefined {
  return /^\d{1,2}$/.test(input) ? input.padStart(2, "0") : undefined;
}

/**
 * The chapter id typed on the command line, normalised (see `normalizeChapterId`). Throws
 * `USAGE` for anything but a one- or two-digit number. (Whether the chapter exists is for
 * `loadManifest` to say.)
 */
export function chapterArgument(raw: string): string {
  const chapter = normalizeChapterId(raw);
  if (chapter === undefined) throw new CourseError("USAGE", `章节号应为一到两位数字，而不是 ${JSON.stringify(raw)}`);
  return chapter;
}

/** What `lab`, `hint` and `reset` are asked about: a whole chapter, or one lab of it. */
export interface LabTarget {
  chapter: string;
  /** `NN.L`; absent for the whole chapter. */
  lab?: string;
}

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

/** True when the module at `importMetaUrl` is the script node was started with (symlinks resolved). */
export function isEntryPoint(importMetaUrl: string): boolean {
  const script = process.argv[1];
  if (script === undefined || script === "") return false;
  if (importMetaUrl === pathToFileURL(script).href) return true;
  try {
    return realpathSync(fileURLToPath(importMetaUrl)) === realpathSync(script);
  } catch {
    return false;
  }
}

/**
 * When the module at `importMetaUrl` is the program being run, first removes the provable
 * leftovers of tooling processes that were killed outright (`sweepStaleScratch`), then calls
 * `main` with the command-line arguments and sets `process.exitCode` from its result; an
 * error it throws is printed as one line on stderr and sets the status `exitCodeFor` gives.
 * Never calls `process.exit`. Does nothing when the module is merely imported (by tests).
 */
export function runMain(importMetaUrl: string, main: (argv: readonly string[]) => Promise<number>): void {
  if (!isEntryPoint(importMetaUrl)) return;
  sweepStaleScratch();
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${formatError(error)}\n`);
      process.exitCode = exitCodeFor(error);
    },
  );
}
