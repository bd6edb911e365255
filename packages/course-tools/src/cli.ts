/**
 * The course's command line: every command declared once — its usage lines, what it does,
 * its options, how its arguments are read, what its exit statuses mean — in one table, and
 * the one entry point that runs them (`pi-course <command> [args]`, the tooling package's bin,
 * which the npm scripts start). Each command's module is imported only when that command runs, so a
 * command loads nothing of the others (rustlings declares its subcommands once in
 * `src/cli.rs`; epicshop imports each command's module inside its handler).
 *
 * `--help` of every command, its usage errors (`core/cli.ts`) and the table of exit statuses in
 * `docs/commands.md` (`core/exit-status.ts`) are rendered from here.
 */
import { chapterArgument, defineCommand, labId, parseTarget, runMain, type Command, type CommandContext, type Parsed } from "./core/cli.js";
import { COMMAND_NAMES, courseCommand, isCommandName, type CommandName } from "./core/command-line.js";
import { CourseError, formatError } from "./core/errors.js";
import { exitCodeFor } from "./core/exit-status.js";
import { COURSE_BRANCH, courseRoot, isPracticeFolder, MATRIX_LOGS, NODE_BUILDS } from "./core/paths.js";
import { RUNG_NAMES, RUNGS } from "./course/hint-rungs.js";
import { readPracticeMarker } from "./practice/marker.js";
import { CHALLENGE_TIMEOUT_SECONDS, DEFAULT_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS, MISTAKES_CHAPTER_BAR, MISTAKES_LAB_BAR } from "./testing/limits.js";
import { stepTitles } from "./verify/checks.js";
import type { CheckpointArgs } from "./checkpoint.js";
import type { FaultArgs } from "./fault.js";
import type { HintArgs } from "./hint.js";
import type { LabArgs } from "./lab.js";
import type { McpArgs } from "./mcp.js";
import type { MistakesArgs } from "./mistakes.js";
import type { MatrixArgs } from "./node-matrix.js";
import type { PracticeArgs } from "./practice.js";
import type { ResetArgs } from "./reset.js";
import type { VerifyArgs } from "./verify.js";

/** The Node lines the course supports (`engines` in package.json), oldest first. */
export const SUPPORTED_MAJORS = [20, 22, 24, 26] as const;

/** Throws `USAGE` unless there is exactly one positional, the chapter; returns it normalised. */
function oneChapter(positionals: readonly string[], example: string): string {
  if (positionals.length !== 1) throw new CourseError("USAGE", example);
  return chapterArgument(positionals[0]!);
}

/** `lab`'s, `hint`'s and `reset`'s positional: exactly one chapter or lab. */
function oneTarget(positionals: readonly string[], missing: string, extra: string): ReturnType<typeof parseTarget> {
  if (positionals.length === 0) throw new CourseError("USAGE", missing);
  if (positionals.length > 1) throw new CourseError("USAGE", `${extra}，多了 “${positionals[1]}”`);
  return parseTarget(positionals[0]!);
}

/** `--timeout`'s value: a positive number of seconds (fractions allowed), at most a day. */
function seconds(value: string): number {
  const parsed = /^\d+(?:\.\d+)?$/.test(value) ? Number(value) : Number.NaN;
  if (!(parsed > 0 && parsed <= MAX_TIMEOUT_SECONDS)) throw new CourseError("USAGE", `--timeout 需要 0 到 ${MAX_TIMEOUT_SECONDS} 之间的秒数，收到 “${value}”`);
  return parsed;
}

/** The bars of `mistakes` (`testing/limits.ts`), as percentages for its help. */
const LAB_BAR_PERCENT = Math.round(MISTAKES_LAB_BAR * 100);
const CHAPTER_BAR_PERCENT = Math.round(MISTAKES_CHAPTER_BAR * 100);

const SOURCE_OPTION = { type: "string", value: "<提交>", help: "用哪个提交生成教学历史（默认 HEAD）" } as const;

const checkpoint = defineCommand("checkpoint", {
  synopsis: ["<章节号> [--json] [--source <提交>] [--rebuild]"],
  description: `打印第 <章节号> 章在教学分支 ${COURSE_BRANCH} 上的 parent 与 target（完整 40 位 SHA）、
聚焦测试、教学文件、本章这一层的改动统计，以及接下来要运行的命令。
教学分支只由已提交的内容生成（默认 HEAD），未提交的改动不参与；工作区、暂存区和当前分支都不会被改动。`,
  options: {
    json: { type: "boolean", help: "输出 JSON（给程序读）" },
    source: SOURCE_OPTION,
    rebuild: { type: "boolean", help: "即使分支已是最新也重新生成（结果相同）；分支上有更新的课程时也改写它\n（不是课程工具原样生成的分支永远不会被改写）" },
  },
  exits: {
    ok: { zh: "打印了本章的 parent、target 和接下来的命令", en: "printed the chapter's parent, target and next commands" },
    failed: {
      zh: "命令失败（不在课程仓库里、清单有误、浅克隆、分支不能移动……），教学分支保持原样",
      en: "it failed (not the course repository, a bad manifest, a shallow clone, a branch it must not move); the branch stays as it was",
    },
  },
  interpret: (values, positionals) => ({
    chapter: oneChapter(positionals, `需要恰好一个章节号，例如 ${courseCommand("checkpoint", "12")}`),
    json: values.json === true,
    source: values.source ?? "HEAD",
    rebuild: values.rebuild === true,
  }),
  run: async (args, context) => (await import("./checkpoint.js")).run(args, context),
});

const practice = defineCommand("practice", {
  synopsis: ["<章节号> [目录] [--link-modules] [--source <提交>] [--json]"],
  description: `从第 <章节号> 章的 parent 生成无答案练习目录：上一章结束时的代码、本章的聚焦测试、
覆盖在教学文件上的 starter、Lab 与提示数据，以及本章的 LEARNING.md。没有 .git，没有参考答案。
[目录] 相对于你运行命令的目录；省略时为课程仓库旁边的 pi-practice-<章节号>。
目录已存在或位于课程仓库内部时拒绝执行，不改动任何东西。`,
  options: {
    "link-modules": { type: "boolean", help: "把 node_modules 链接到课程仓库的 node_modules（免去 npm install，不需要网络）" },
    source: SOURCE_OPTION,
    json: { type: "boolean", help: "结果输出为 JSON" },
  },
  exits: {
    ok: { zh: "生成了练习目录", en: "wrote the practice folder" },
    failed: {
      zh: "拒绝或失败（目录已存在或在课程仓库内部、发现答案泄漏……），什么也没有留下",
      en: "it refused or failed (the folder exists or lies inside the repository, an answer leaked); nothing is left behind",
    },
  },
  interpret(values, positionals) {
    if (positionals.length < 1 || positionals.length > 2) {
      throw new CourseError("USAGE", `需要一个章节号和可选的目录，例如 ${courseCommand("practice", "12", "../my-12")}`);
    }
    const chapter = chapterArgument(positionals[0]!);
    if (positionals[1] === "") throw new CourseError("USAGE", "目录不能为空字符串");
    return {
      chapter,
      ...(positionals[1] !== undefined ? { dest: positionals[1] } : {}),
      linkModules: values["link-modules"] === true,
      json: values.json === true,
      source: values.source ?? "HEAD",
    };
  },
  run: async (args, context) => (await import("./practice.js")).run(args, context),
});

const lab = defineCommand("lab", {
  synopsis: [
    "<NN.L | NN> [--watch] [--verbose] [--timeout 秒] [--json]",
    "NN --challenge [--timeout 秒] [--json]",
    "NN.L --where [--json]",
    "NN.L --open",
    "NN.L --compare [--timeout 秒]",
  ],
  description: `编译课程，运行一个 Lab（或全章）的测试，给出通过数、第一处失败和下一步。在课程仓库和练习目录里都能用。
输出里的每个位置都是 path:line:col，相对于你运行命令的目录（终端里可以点开）。
--open 和 --compare 只在练习目录里使用。`,
  arguments: [
    ["NN.L", "编译并运行这个 Lab 的测试（同时检查本章之前的 Lab 仍然通过），例如 12.1"],
    ["NN", "编译并运行本章所有 Lab，显示进度表，例如 12"],
  ],
  options: {
    challenge: {
      type: "boolean",
      help: `挑战关：在你的代码上运行本章的加固测试，按主题列表显示；每项测试有自己的时间上限\n（--timeout，默认 ${CHALLENGE_TIMEOUT_SECONDS} 秒），一项卡住只记一条红，其余照常运行；不影响 Lab 的进度`,
    },
    where: {
      type: "boolean",
      help: "不运行测试：按本章清单里这个 Lab 的地址，列出它的每个部分及其 path:line:col：\n要写的声明（和它们用到的 helper）、starter、正文的节、测试、四级提示、故障、挑战关",
    },
    open: {
      type: "boolean",
      help: "不运行测试：在编辑器里打开这个 Lab 的施工位（🔨 标记所在的声明），并打印运行的命令。\n编辑器取 $VISUAL，其次 $EDITOR，都没有时用 code -g",
    },
    compare: {
      type: "boolean",
      help: "这个 Lab 在你的代码上通过之后：依次显示你为它写的声明和参考实现的声明。参考实现从生成\n练习目录的课程仓库（target 提交）读取，只显示，不写进目录；Lab 还没通过时拒绝",
    },
    watch: { type: "boolean", short: "w", help: "保存 packages/pi-course/src 或 test 下的文件后自动重跑（Ctrl-C 退出）" },
    verbose: { type: "boolean", short: "v", help: "显示完整的断言差异、每一项失败的测试，以及测试打印的输出" },
    timeout: { type: "string", value: "秒", help: `每次运行测试的时间上限，默认 ${DEFAULT_TIMEOUT_SECONDS} 秒；超时后测试进程被结束` },
    json: { type: "boolean", help: "以 JSON 输出每个 Lab 的结果，给程序读" },
  },
  exits: {
    ok: { zh: "命令运行完毕，不论 Lab 是绿是红", en: "it ran, green or red" },
    red: { zh: "Lab（或全章）没有全部通过", en: "not every lab asked for passed" },
    failed: {
      zh: "命令本身失败；--open、--compare 拒绝执行（不在练习目录里、Lab 还没通过、课程仓库读不到、编辑器打不开）",
      en: "the command itself failed; `--open` or `--compare` refused (outside a practice folder, a lab not green yet, the course repository unreachable, an editor that cannot start)",
    },
    watch: { zh: "--watch 靠 Ctrl-C 结束，那时为 0", en: "`--watch`, which Ctrl-C ends, exits 0 then" },
  },
  interpret(values, positionals) {
    const target = oneTarget(positionals, `缺少章号或 Lab 编号，例如 ${courseCommand("lab", "12.1")}`, "只能给一个章号或 Lab 编号");
    const args: LabArgs = {
      target,
      watch: values.watch === true,
      json: values.json === true,
      verbose: values.verbose === true,
      challenge: values.challenge === true,
      where: values.where === true,
      open: values.open === true,
      compare: values.compare === true,
      timeoutSeconds: values.timeout === undefined ? DEFAULT_TIMEOUT_SECONDS : seconds(values.timeout),
    };
    if (args.where) {
      if (target.lab === undefined) throw new CourseError("USAGE", `--where 针对一个 Lab：写 ${labId(target.chapter, 1)} 这样的编号`);
      const other = args.watch
        ? "--watch"
        : args.verbose
          ? "--verbose"
          : args.challenge
            ? "--challenge"
            : args.open
              ? "--open"
              : args.compare
                ? "--compare"
                : values.timeout !== undefined
                  ? "--timeout"
                  : undefined;
      if (other !== undefined) throw new CourseError("USAGE", `--where 和 ${other} 不能同时使用`);
    }
    for (const [option, set] of [
      ["--open", args.open],
      ["--compare", args.compare],
    ] as const) {
      if (!set) continue;
      if (target.lab === undefined) throw new CourseError("USAGE", `${option} 针对一个 Lab：写 ${labId(target.chapter, 1)} 这样的编号`);
      const other = args.watch
        ? "--watch"
        : args.json
          ? "--json"
          : args.verbose
            ? "--verbose"
            : args.challenge
              ? "--challenge"
              : option === "--open" && args.compare
                ? "--compare"
                : undefined;
      if (other !== undefined) throw new CourseError("USAGE", `${option} 和 ${other} 不能同时使用`);
      if (option === "--open" && values.timeout !== undefined) throw new CourseError("USAGE", "--open 不运行测试，不需要 --timeout");
    }
    if (args.watch && args.json) throw new CourseError("USAGE", "--watch 和 --json 不能同时使用");
    if (args.challenge && target.lab !== undefined) throw new CourseError("USAGE", `--challenge 针对整章：写章号（如 ${target.chapter}），不是 Lab 编号`);
    if (args.challenge && args.watch) throw new CourseError("USAGE", "--challenge 和 --watch 不能同时使用");
    if (args.challenge && values.timeout === undefined) args.timeoutSeconds = CHALLENGE_TIMEOUT_SECONDS;
    return args;
  },
  run: async (args, context) => (await import("./lab.js")).run(args, context),
});

const hint = defineCommand("hint", {
  synopsis: ["<NN.L> [--level N] [--json]", "<NN.L | NN> --reset"],
  description: "显示一个 Lab 的下一级提示，并在练习目录的 .pi-course/hints.json 里记住已经看到第几级。",
  arguments: [["NN.L", `显示这个 Lab 的下一级提示（共 ${RUNGS} 级：${RUNG_NAMES.join(" → ")}）`]],
  options: {
    level: { type: "string", value: "N", help: `直接显示第 N 级（1–${RUNGS}），之后从 N+1 级继续` },
    reset: { type: "boolean", help: "从第 1 级重新开始；给章号（如 12）时重置本章所有 Lab" },
    json: { type: "boolean", help: "以 JSON 输出，给程序读" },
  },
  exits: {
    ok: {
      zh: "显示了提示（或重置了进度）；进度没能保存时照常显示，另有一行警告",
      en: "it showed the hint (or reset the progress); progress it could not save is a warning",
    },
    failed: { zh: "重置的进度没能保存；命令本身失败", en: "a reset it could not save; the command itself failed" },
  },
  interpret(values, positionals) {
    const target = oneTarget(positionals, `缺少 Lab 编号，例如 ${courseCommand("hint", "12.1")}`, "只能给一个 Lab 编号");
    const level = values.level;
    if (level !== undefined && (!/^[1-9]\d*$/.test(level) || Number(level) > RUNGS)) {
      throw new CourseError("USAGE", `--level 需要 1–${RUNGS} 之间的整数，收到 “${level}”`);
    }
    const reset = values.reset === true;
    if (reset && level !== undefined) throw new CourseError("USAGE", "--reset 和 --level 不能同时使用");
    if (!reset && target.lab === undefined)
      throw new CourseError("USAGE", `提示针对单个 Lab：写 ${labId(target.chapter, 1)} 这样的编号（或用 --reset 重置整章）`);
    return { target, reset, json: values.json === true, ...(level === undefined ? {} : { level: Number(level) }) };
  },
  run: async (args, context) => (await import("./hint.js")).run(args, context),
});

const fault = defineCommand("fault", {
  synopsis: ["<章节号> [故障编号] [--all] [--list] [--json]"],
  description: `课程仓库里（作者模式）：把登记在本章清单（chapters/<章节号>-名字/chapter.yaml）的故障注入参考实现的临时副本，
确认清单指定的测试抓住它，再撤销并确认测试恢复全绿。不改动仓库里的任何文件。
练习目录里（学习者模式）：把本章的故障实验注入你自己的教学文件，看哪条测试抓住它，
然后逐字节恢复你的文件（中途按 Ctrl-C 时立即恢复；进程被强行结束时，下一个命令会先恢复）。
插入位置按语法树查找，与你的花括号、换行和参数名无关；实在找不到时会说明怎样手动做这个实验。

不给故障编号也不加 --all 时，运行本章的故障实验（exercise）。`,
  options: {
    all: { type: "boolean", help: "运行本章登记的全部故障" },
    list: { type: "boolean", help: "只列出故障，不运行" },
    json: { type: "boolean", help: "结果输出为 JSON" },
  },
  exits: {
    ok: {
      zh: "作者模式下每个故障都被抓住并恢复；学习者模式下实验做完、文件已恢复，不论结果（没抓住、还不能做、需要手动）",
      en: "author mode: every fault was killed and restored; learner mode: the exercise ran and the file is restored, whatever it showed",
    },
    red: { zh: "学习者模式下故障没有被抓住并恢复", en: "learner mode: the fault was not caught and restored" },
    failed: { zh: "作者模式下有故障没被抓住或没恢复；命令本身失败", en: "author mode: a fault survived or was not restored; the command itself failed" },
  },
  interpret(values, positionals) {
    if (positionals.length < 1 || positionals.length > 2) {
      throw new CourseError("USAGE", `需要一个章节号和可选的故障编号，例如 ${courseCommand("fault", "12", "--all")}`);
    }
    const chapter = chapterArgument(positionals[0]!);
    const id = positionals[1];
    const all = values.all === true;
    if (id !== undefined && all) throw new CourseError("USAGE", "故障编号与 --all 只能二选一");
    return { chapter, ...(id !== undefined ? { id } : {}), all, list: values.list === true, json: values.json === true };
  },
  run: async (args, context) => (await import("./fault.js")).run(args, context),
});

const reset = defineCommand("reset", {
  synopsis: ["<NN | NN.L>"],
  description: `只在练习目录里使用。恢复之前，你当前的文件会先另存到它旁边，
名为 <文件名>.reset-<日期>-<时间>.bak，不会覆盖任何已有文件；命令会告诉你保存在哪里。`,
  arguments: [
    ["NN", "把本章的教学文件恢复成 starter（例如 12）"],
    ["NN.L", "只把这个 Lab 的函数恢复成 starter，其余代码保持不变（例如 12.3）"],
  ],
  options: {},
  exits: {
    ok: { zh: "恢复完成，或者本来就不需要恢复", en: "it restored the starter, or nothing needed restoring" },
    failed: {
      zh: "拒绝执行（不在练习目录里、只恢复一个 Lab 时文件有语法错误……）或失败；文件保持原样",
      en: "it refused (outside a practice folder, a lab reset of a file with a syntax error, …) or failed; the file stays as it was",
    },
  },
  interpret: (_values, positionals) => ({
    target: oneTarget(positionals, `缺少章号或 Lab 编号，例如 ${courseCommand("reset", "12")}`, "只能给一个章号或 Lab 编号"),
  }),
  run: async (args, context) => (await import("./reset.js")).run(args, context),
});

const mcp = defineCommand("mcp", {
  synopsis: ["（不带参数：由你的 agent 启动，经 stdin/stdout 通信）"],
  description: `只在练习目录里使用。把这个练习目录作为 MCP 服务（stdio）提供给你的编程 agent：
工具 lab_status（全章进度表）、run_lab（运行一个 Lab：第一处失败、它违反的规则 §x.y、正文小节、
file:line:col）、next_hint（下一级提示，与 hint 共用进度，一次一级）、chapter_section（按节号取正文），
以及提示词 predict（运行之前先预测结果）。只读练习目录，不读课程仓库（那里的代码就是答案）。
stdout 只留给协议：经 npm 启动时要加 --silent，否则 npm 的 “> …” 行会混进去。
各种 agent 的一行配置见 docs/agents.md。`,
  options: {},
  exits: {
    ok: { zh: "服务运行到客户端关闭 stdin 为止", en: "it served until its client closed stdin" },
    failed: {
      zh: "拒绝启动（不在练习目录里）或失败；stdout 上什么也没有写",
      en: "it refused to start (outside a practice folder) or failed; nothing was written to stdout",
    },
  },
  interpret(_values, positionals) {
    if (positionals.length > 0) throw new CourseError("USAGE", `mcp 不接受参数，多了 “${positionals[0]}”`);
    return {};
  },
  run: async (args, context) => (await import("./mcp.js")).run(args, context),
});

const verify = defineCommand("verify", {
  synopsis: ["<章节号> [--only <步骤>]... [--json]"],
  description: `第 <章节号> 章的验收记录（作者用）：在临时目录里检查你现在的工作区（HEAD 加上未提交的改动，
即 git add -A 之后会提交的内容；仓库本身只读不写），依次检查 history、parent、fresh build、
public surface、first red、staged first red（每个 Lab 一行）、chapter text（重放本章正文里的命令
与预期输出）、leak audit、各 Lab 的参考实现、全部故障被抓住并恢复、chapter total、到本章为止的
全部测试。每项一行。
复用仓库的 node_modules，不需要网络；要在课程仓库（git clone 得到的目录）里运行。`,
  options: {
    only: {
      type: "string",
      multiple: true,
      value: "<步骤>",
      help: '只做这一步（可重复），以及它依赖的前面几步；例如修改正文后只重放正文：\n--only "chapter text"。步骤名就是每行开头的名字（staged first red 等）',
    },
    json: { type: "boolean", help: "结果输出为 JSON：{ checks: [{ name, ok, detail }], ok, seconds }" },
  },
  exits: {
    ok: { zh: "每一项检查都通过", en: "every check passed" },
    failed: { zh: "有检查没有通过；命令本身失败", en: "a check failed; the command itself failed" },
  },
  interpret(values, positionals) {
    const chapter = oneChapter(positionals, `需要一个章节号，例如 ${courseCommand("verify", "12")}`);
    const only = values.only;
    if (only !== undefined) stepTitles(only); // an unknown step is a usage error before any work
    return { chapter, json: values.json === true, ...(only === undefined ? {} : { only }) };
  },
  run: async (args, context) => (await import("./verify.js")).run(args, context),
});

const mistakes = defineCommand("mistakes", {
  synopsis: ["<章节号> [--catalog <文件>] [--compile-only] [--json]"],
  description: `用本章的 Lab 测试衡量一份学习者错误目录（作者用）：默认是本章 home 里的 solutions/mistakes.yaml，
--catalog 给另一份（例如 bench/held-out/NN-K.yaml 这样的留出目录）。每条错误在它的 base（参考实现或一份解答）上
做一次修改，在临时副本里一次编译全部，再跑本章的聚焦测试：写了 killedBy 的要那些测试都失败，没写的任何一条
聚焦测试失败就算抓住。先列出每份解答每个 Lab 的通过数，再列出每个 Lab 抓住的比例和每条存活的错误（编号、规则）。
每个 Lab 至少要抓住 ${LAB_BAR_PERCENT}%，全章至少 ${CHAPTER_BAR_PERCENT}%。目录有问题（不是映射、字段不对、find 不是恰好出现一次）时
什么都不编译，直接报错并指出是哪一条。仓库只读不写。`,
  options: {
    catalog: { type: "string", value: "<文件>", help: "衡量这份目录，而不是本章的 solutions/mistakes.yaml" },
    "compile-only": { type: "boolean", help: "只检查每条错误能否注入并编译，不运行也不提任何测试（留出目录的作者用）" },
    json: { type: "boolean", help: "结果输出为 JSON" },
  },
  exits: {
    ok: {
      zh: `每个 Lab 至少抓住 ${LAB_BAR_PERCENT}%、全章至少 ${CHAPTER_BAR_PERCENT}%，每条错误都能编译，每份解答全绿（--compile-only：每条都能注入并编译）`,
      en: `every lab killed at least ${LAB_BAR_PERCENT}% of its mistakes and the chapter ${CHAPTER_BAR_PERCENT}%, every entry compiled, every kept solution green (--compile-only: every entry applied and compiled)`,
    },
    failed: {
      zh: "有 Lab 或全章低于这个比例、有错误无法编译、有解答没有全绿；目录有问题；命令本身失败",
      en: "a lab or the chapter is below the bar, an entry does not compile, a kept solution is not green; a bad catalog; the command itself failed",
    },
  },
  interpret(values, positionals) {
    const chapter = oneChapter(positionals, `需要一个章节号，例如 ${courseCommand("mistakes", "07")}`);
    const catalog = values.catalog;
    return { chapter, ...(catalog === undefined ? {} : { catalog }), compileOnly: values["compile-only"] === true, json: values.json === true };
  },
  run: async (args, context) => (await import("./mistakes.js")).run(args, context),
});

const nodeMatrix = defineCommand("node-matrix", {
  synopsis: ["[主版本号...]"],
  description: `在其他 Node 版本下跑课程自己的检查（作者用）：对每个主版本（默认 ${SUPPORTED_MAJORS.join(" ")}），从 npm 仓库取官方
Node 包（缓存在 ${NODE_BUILDS}/），在 HEAD 的临时 clone 里依次运行 npm ci、npm test 和每个有正文的
章节的 verify，每个版本一行结果；完整输出写到 ${MATRIX_LOGS}/node-<版本>.log。检查的是 HEAD（和 CI 一样），
未提交的改动不包括在内。`,
  options: {},
  exits: {
    ok: { zh: "每个版本都通过", en: "every version passed" },
    failed: { zh: "有版本没有通过；命令本身失败", en: "a version failed; the command itself failed" },
  },
  interpret(_values, positionals) {
    const majors = positionals.map((raw) => {
      const major = /^\d{2}$/.test(raw) ? Number(raw) : Number.NaN;
      if (!(SUPPORTED_MAJORS as readonly number[]).includes(major)) {
        throw new CourseError("USAGE", `主版本号应为 ${SUPPORTED_MAJORS.join("、")} 之一，而不是 ${JSON.stringify(raw)}`);
      }
      return major;
    });
    return { majors: majors.length > 0 ? [...new Set(majors)] : [...SUPPORTED_MAJORS] };
  },
  run: async (args, context) => (await import("./node-matrix.js")).run(args, context),
});

/** The arguments of each command, as its handler receives them. */
export interface CommandArgsByName {
  checkpoint: CheckpointArgs;
  practice: PracticeArgs;
  lab: LabArgs;
  hint: HintArgs;
  fault: FaultArgs;
  reset: ResetArgs;
  mcp: McpArgs;
  verify: VerifyArgs;
  mistakes: MistakesArgs;
  "node-matrix": MatrixArgs;
}

export type CommandArgs<N extends CommandName> = CommandArgsByName[N];

/** The command table: every course command, by name (the type makes it declare each exactly once). */
export const COMMANDS: { readonly [N in CommandName]: Command<CommandArgs<N>> } = {
  checkpoint,
  practice,
  lab,
  hint,
  fault,
  reset,
  mcp,
  verify,
  mistakes,
  "node-matrix": nodeMatrix,
};

/** Parses the command line of command `name` (`--help`, or its arguments); throws `USAGE`. */
export function parseCommand<N extends CommandName>(name: N, argv: readonly string[]): Parsed<CommandArgs<N>> {
  return COMMANDS[name].parse(argv) as Parsed<CommandArgs<N>>;
}

/** The line of the tooling's bin (`packages/course-tools/bin/pi-course.mjs`) for a command it does not know. */
export const LAUNCH_USAGE = `usage: pi-course <${COMMAND_NAMES.join("|")}> [args]`;

/** The commands (and `fault --all`) that belong to the course's authors: they need the repository's history and reference code. */
function isAuthorCommand(name: CommandName, args: unknown): boolean {
  if (name === "fault") return (args as { all?: boolean }).all === true;
  return name === "checkpoint" || name === "practice" || name === "verify" || name === "mistakes" || name === "node-matrix";
}

/**
 * Throws `AUTHOR_ONLY` for an author command run in a practice folder (`root`), naming the
 * course repository the folder was made from (its marker's `course`) when it records one,
 * and the command to run there, with the arguments as they were `typed`.
 */
function refuseAuthorCommandInPractice(name: CommandName, args: unknown, typed: readonly string[], root: string): void {
  if (!isAuthorCommand(name, args) || !isPracticeFolder(root)) return;
  const course = readPracticeMarker(root)?.course;
  const what = name === "fault" ? "fault --all" : name;
  const where = course === undefined ? "课程仓库里" : `课程仓库 ${course} 里`;
  const example = courseCommand(name, ...typed);
  throw new CourseError("AUTHOR_ONLY", `${what} 是课程作者的命令，练习目录里没有它要的教学历史和参考实现：请到${where}运行 ${example}`);
}

/**
 * Runs the command line `[command, ...args]` in `context` (default: this course, this
 * process's streams) and resolves with the exit status: the command's own, 0 for `--help`,
 * 2 for an unknown command or a usage error (one line on stderr), 1 (or what `exitCodeFor`
 * says) for an error the command throws.
 */
export async function runCommandLine(argv: readonly string[], context: CommandContext = { root: courseRoot, io: process }): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || !isCommandName(name)) {
    context.io.stderr.write(`${LAUNCH_USAGE}\n`);
    return 2;
  }
  // Each command's parser and handler agree on its arguments (the table's type says so).
  const command: Command<unknown> = COMMANDS[name];
  try {
    const parsed = command.parse(args);
    if (parsed.help) {
      context.io.stdout.write(`${command.help()}\n`);
      return 0;
    }
    const { help: _help, ...commandArgs } = parsed;
    refuseAuthorCommandInPractice(name, commandArgs, args, context.root);
    return await command.run(commandArgs, context);
  } catch (error) {
    context.io.stderr.write(`${formatError(error)}\n`);
    return exitCodeFor(error);
  }
}

runMain(import.meta.url, (argv) => runCommandLine(argv));
