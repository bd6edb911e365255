/**
 * The command-line plumbing every course command shares: how a command is declared (its
 * synopsis, description, options, exit statuses and handler: `defineCommand`), parsing a
 * command line over node's `parseArgs` (any mistake is a one-line `USAGE` error, worded one
 * way for every command), rendering `--help` from the declaration, reading a chapter number
 * or a lab target, and running `main` when the file is the program node was started with.
 * The declarations themselves are the command table, `packages/course-tools/src/cli.ts`.
 *
 * Only node built-ins and `core/` are imported, so `lab` can load this module before it
 * starts the compiler without slowing its start-up.
 */
import { realpathSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { courseCommand, type CommandName } from "./command-line.js";
import { CourseError, formatError } from "./errors.js";
import { exitCodeFor, exitStatusHelp, type ExitStatuses } from "./exit-status.js";
import { sweepStaleScratch } from "./scratch.js";
import { displayWidth, padEnd, type TermStream } from "./term.js";

type OptionsConfig = NonNullable<ParseArgsConfig["options"]>;

/**
 * Parses `argv` strictly against `options` (positionals allowed). Guarantees that any
 * mistake node's parser finds (unknown option, missing value, …) becomes a `CourseError`
 * `USAGE` whose message is one line pointing at `--help` (see `usageMessage`).
 */
export function parseCommandLine<const O extends OptionsConfig>(
  argv: readonly string[],
  options: O,
): ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; strict: true; options: O }>> {
  try {
    return parseArgs({ args: [...argv], allowPositionals: true as const, strict: true as const, options });
  } catch (error) {
    throw new CourseError("USAGE", usageMessage(error), { cause: error });
  }
}

/**
 * One line, in the learner's language, for an error of node's argument parser, naming the
 * option; anything unrecognised keeps node's first line. Every usage error of every command
 * ends the same way, `（见 --help）`.
 */
export function usageMessage(error: unknown): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  const text = typeof message === "string" ? message : String(error);
  const quoted = /'([^']+)'/.exec(text)?.[1];
  if (quoted !== undefined && code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") return `未知选项 ${quoted}（见 --help）`;
  if (quoted !== undefined && code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    // node names the option as `--source <value>` or `-h, --help`.
    const option =
      quoted
        .replace(/ <value>$/, "")
        .split(", ")
        .pop() ?? quoted;
    if (text.endsWith("argument missing")) return `选项 ${option} 需要一个值（见 --help）`;
    if (text.endsWith("does not take an argument")) return `选项 ${option} 不接受值（见 --help）`;
    if (/argument is ambiguous/.test(text)) return `选项 ${option} 的值以 - 开头时要写成 ${option}=<值>（见 --help）`;
  }
  return `${text.split("\n")[0]}（见 --help）`;
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
  /** The manifest's chapter id: two digits (`03`, `12`). */
  chapter: string;
  /** The lab id as manifests write it: `<chapter number>.<n>` without leading zeros (`3.1`, `12.1`); absent for the whole chapter. */
  lab?: string;
}

/**
 * The lab id of lab `n` of chapter `chapter`, as manifests and test names write it: the
 * chapter's number without its leading zero (`labId("03", 1)` is `3.1`, `labId("12", 1)` is
 * `12.1`). The one place a lab id is made from its parts.
 */
export function labId(chapter: string, n: number): string {
  return `${Number(chapter)}.${n}`;
}

/**
 * Parses a target typed by a user: a chapter (`3`, `03`, `12`) or a lab of it (`3.1`,
 * `03.1`, `12.1`). The chapter comes back as the manifest's two-digit id, the lab as the
 * manifest's lab id (`3.1`, whichever way it was typed). Throws `USAGE` otherwise.
 */
export function parseTarget(text: string): LabTarget {
  const match = /^(\d{1,2})(?:\.(\d{1,2}))?$/.exec(text);
  if (match === null) throw new CourseError("USAGE", `无法识别 “${text}”：写章号（如 12）或 Lab 编号（如 12.1）`);
  const chapter = (match[1] ?? "").padStart(2, "0");
  const lab = match[2];
  return lab === undefined ? { chapter } : { chapter, lab: labId(chapter, Number(lab)) };
}

// ---------------------------------------------------------------------------------------
// Declaring a command
// ---------------------------------------------------------------------------------------

/** One option of a command: node's `parseArgs` settings, plus what `--help` says about it. */
export interface OptionSpec {
  type: "boolean" | "string";
  short?: string;
  multiple?: boolean;
  /** The value's name in `--help` (`<提交>`, `秒`); only for string options. */
  value?: string;
  /** What the option does, one line or several (Chinese). */
  help: string;
}

export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

/** The values `parseArgs` gives for `O`: a boolean, a string, or every string of a repeated option. */
export type OptionValues<O extends OptionSpecs> = {
  [K in keyof O]?: O[K]["type"] extends "boolean" ? boolean : O[K] extends { multiple: true } ? string[] : string;
};

/** Where a command writes (`process` fits). */
export interface Io {
  stdout: TermStream;
  stderr: TermStream;
}

/** What every handler is given besides its arguments: the course it works on and where it writes. */
export interface CommandContext {
  /** The course root (the repository or a practice folder). */
  root: string;
  io: Io;
}

/** A command as the command table declares it. */
export interface CommandDeclaration<O extends OptionSpecs, A> {
  /** Usage lines after the npm invocation, e.g. `<章节号> [--json]`. */
  synopsis: readonly string[];
  /** What the command does (Chinese), shown under the usage lines. */
  description: string;
  /** The positional arguments, explained: `[name, help]`. */
  arguments?: readonly (readonly [string, string])[];
  /** Options besides `-h, --help`, which every command has. */
  options: O;
  exits: ExitStatuses;
  /** The command's arguments from what `parseArgs` found; throws `USAGE` for anything else. Pure. */
  interpret(values: OptionValues<O>, positionals: string[]): A;
  /** Loads the command's module (on demand) and runs it; resolves with the exit status. */
  run(args: A, context: CommandContext): Promise<number>;
}

/** A command's parsed command line: `--help` (and none of its arguments), or its arguments. */
export type Parsed<A> = ({ help: true } & { [K in keyof A]?: undefined }) | ({ help: false } & A);

/** A declared command, with its parser and help text. */
export interface Command<A = unknown> {
  readonly name: CommandName;
  readonly exits: ExitStatuses;
  /** Parses `argv` (after the command name). Throws `USAGE`. */
  parse(argv: readonly string[]): Parsed<A>;
  /** The whole `--help` text. */
  help(): string;
  run(args: A, context: CommandContext): Promise<number>;
}

const HELP: OptionSpec = { type: "boolean", short: "h", help: "显示这段说明" };

/** The `-x, --name 值` label of an option in `--help`. */
function optionLabel(name: string, option: OptionSpec): string {
  return `${option.short === undefined ? "" : `-${option.short}, `}--${name}${option.value === undefined ? "" : ` ${option.value}`}`;
}

/** Rows of `[label, text]` as aligned lines: each text starts in one column, its continuation lines too. */
function table(rows: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(...rows.map(([label]) => displayWidth(label))) + 2;
  return rows.flatMap(([label, text]) => text.split("\n").map((line, index) => `  ${padEnd(index === 0 ? label : "", width)}${line}`.trimEnd()));
}

/**
 * The `--help` of command `name` (Chinese): the usage lines, the description, the arguments
 * and options with what each does, and the exit statuses (`exitStatusHelp`). Pure.
 */
export function renderHelp<O extends OptionSpecs, A>(name: CommandName, declaration: CommandDeclaration<O, A>): string {
  const invocation = courseCommand(name);
  const [first, ...rest] = declaration.synopsis;
  const usage = [`用法：${invocation} ${first ?? ""}`.trimEnd(), ...rest.map((line) => `${" ".repeat(displayWidth("用法："))}${invocation} ${line}`)];
  const options = { ...declaration.options, help: HELP } as OptionSpecs;
  const sections = [usage.join("\n"), declaration.description];
  if (declaration.arguments !== undefined && declaration.arguments.length > 0) sections.push(["参数：", ...table(declaration.arguments)].join("\n"));
  sections.push(["选项：", ...table(Object.entries(options).map(([option, spec]) => [optionLabel(option, spec), spec.help] as const))].join("\n"));
  sections.push(exitStatusHelp(declaration.exits));
  return sections.join("\n\n");
}

/**
 * Declares command `name` (see `CommandDeclaration`): its parser runs node's `parseArgs`
 * over the declared options plus `-h, --help` (help wins over anything else on the line),
 * then the declaration's `interpret`.
 */
export function defineCommand<const O extends OptionSpecs, A>(name: CommandName, declaration: CommandDeclaration<O, A>): Command<A> {
  const config: OptionsConfig = { help: { type: "boolean", short: "h" } };
  for (const [option, spec] of Object.entries(declaration.options)) {
    config[option] = { type: spec.type, ...(spec.short === undefined ? {} : { short: spec.short }), ...(spec.multiple === true ? { multiple: true } : {}) };
  }
  return {
    name,
    exits: declaration.exits,
    parse(argv) {
      const { values, positionals } = parseCommandLine(argv, config);
      if (values.help === true) return { help: true };
      return { help: false, ...declaration.interpret(values as OptionValues<O>, positionals) };
    },
    help: () => renderHelp(name, declaration),
    run: (args, context) => declaration.run(args, context),
  };
}

// ---------------------------------------------------------------------------------------
// The entry point
// ---------------------------------------------------------------------------------------

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
