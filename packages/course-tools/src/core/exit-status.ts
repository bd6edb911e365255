/**
 * The exit-status contract of the course commands, stated once: every command's `--help`
 * and the table in `docs/commands.md` are rendered from here (`exitStatusHelp`,
 * `exitStatusTable`), and the commands end with the statuses the functions below give.
 *
 * - 0: the command did its work. For the learner commands, a red result — a lab that is not
 *   green, a fault the tests did not catch — is a result the learner asked for, not a
 *   failure of the command: it exits 0 too, so that `npm run …` prints its result and no
 *   `npm error` block that reads like a crash.
 * - 1: the command failed; or, where a command has a red result, that result when a machine
 *   asks (`--json`) or the run is in CI (the `CI` environment variable).
 * - 2: a mistake on the command line (an unknown option, a wrong argument, a chapter the
 *   course does not have, a `--source` that names no commit).
 * - Interrupted (Ctrl-C, SIGTERM, SIGHUP), a command cleans up and then ends by the same
 *   signal (130 where a signal cannot be raised); `lab --watch` ends by Ctrl-C with 0.
 */
import { isCourseError } from "./errors.js";

/** A phrase in the learner's language (`zh`, for `--help`) and in the docs' (`en`). */
export interface Words {
  zh: string;
  en: string;
}

/** What the statuses mean for one command (its entry in the command table). */
export interface ExitStatuses {
  /** When it exits 0. */
  ok: Words;
  /** When it exits 1. */
  failed: Words;
  /** Its red result, when it has one: 0 for a person, 1 with `--json` or in CI. */
  red?: Words;
  /** Set when Ctrl-C is how the command's watch mode ends (then it exits 0). */
  watch?: Words;
}

/**
 * The exit status a command should end with for `error`: 2 for a mistake on the command
 * line (a usage error, a chapter the course does not have, a `--source` that names no
 * commit), 130 for an interruption, 1 for everything else.
 */
export function exitCodeFor(error: unknown): number {
  if (isCourseError(error, "USAGE") || isCourseError(error, "CHAPTER_UNKNOWN") || isCourseError(error, "SOURCE_UNKNOWN")) return 2;
  if (isCourseError(error, "ABORTED")) return 130;
  return 1;
}

/** True when `CI` is set to anything but "", "0" or "false" (how CI services announce themselves). */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = (env.CI ?? "").trim().toLowerCase();
  return value !== "" && value !== "0" && value !== "false";
}

/**
 * The exit status of a learner command whose result is `ok` (green) or not: 0 when green,
 * and also when red unless `json` was asked for or the run is in CI, then 1.
 */
export function resultStatus(ok: boolean, options: { json: boolean }, env: NodeJS.ProcessEnv = process.env): number {
  return ok || !(options.json || inCi(env)) ? 0 : 1;
}

const USAGE_WORDS: Words = {
  zh: "用法错误：未知选项、参数不对、没有这一章（或这个 Lab）",
  en: "a command-line mistake: an unknown option, a wrong argument, a chapter (or lab) the course does not have",
};

const INTERRUPTED_WORDS: Words = {
  zh: "按 Ctrl-C（或收到 SIGTERM、SIGHUP）时，命令结束自己启动的进程、删除临时文件，然后以同一个信号结束",
  en: "ends the processes it started, removes its temporary files, then ends by the same signal",
};

/** The four lines of one command's statuses: 0, 1, 2 and interrupted, in `lang`. */
function clauses(exits: ExitStatuses, lang: keyof Words): [string, string, string, string] {
  const zh = lang === "zh";
  const red = exits.red?.[lang];
  const ok = `${exits.ok[lang]}${red === undefined ? "" : zh ? "（红灯是结果，不是错误：npm 不会打印错误块）" : " (a red result is a result, not an error: npm prints no error block)"}`;
  const failed = `${red === undefined ? "" : zh ? `加 --json 或设置了环境变量 CI（如 CI=1）时：${red}；` : `with \`--json\` or \`CI\` set (to anything but \`0\`/\`false\`): ${red}; `}${exits.failed[lang]}`;
  const watch = exits.watch === undefined ? "" : zh ? `（${exits.watch[lang]}）` : ` (${exits.watch[lang]})`;
  return [ok, failed, USAGE_WORDS[lang], `${INTERRUPTED_WORDS[lang]}${watch}`];
}

/** The `退出码：` section of a command's `--help` (Chinese). */
export function exitStatusHelp(exits: ExitStatuses): string {
  const [ok, failed, usage, interrupted] = clauses(exits, "zh");
  return ["退出码：", `  0     ${ok}`, `  1     ${failed}`, `  2     ${usage}`, `  中断  ${interrupted}`].join("\n");
}

/** The table of every command's statuses in `docs/commands.md` (Markdown, English), from `commands` in table order. */
export function exitStatusTable(commands: readonly { name: string; exits: ExitStatuses }[]): string {
  const rows = commands.map(({ name, exits }) => {
    const [ok, failed] = clauses(exits, "en");
    return `| \`${name}\` | ${ok}${exits.watch === undefined ? "" : `; ${exits.watch.en}`} | ${failed} |`;
  });
  const [, , usage, interrupted] = clauses({ ok: { zh: "", en: "" }, failed: { zh: "", en: "" } }, "en");
  return [
    "| command | exits 0 | exits 1 |",
    "|---|---|---|",
    ...rows,
    "",
    `Every command exits 2 for ${usage}. Interrupted (Ctrl-C, SIGTERM, SIGHUP), a command ${interrupted} (130 where a signal cannot be raised).`,
  ].join("\n");
}
