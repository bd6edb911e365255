/**
 * The chapter text as something `verify` can replay: its commands, where and when each one
 * runs, and what the text claims it prints. Pure: parsing and checking against the manifest.
 *
 * The text stays ordinary Markdown for people. Machine-readable markup is one HTML comment
 * (invisible when rendered) on its own line right before a fenced block or a table:
 *
 *     <!-- verify: repo -->                       the commands below run in the course repository
 *     <!-- verify: practice starter -->           … in the practice folder, starter as generated
 *     <!-- verify: practice after 12.3 -->        … with Labs 12.1–12.3 done (reference code for
 *                                                 them, the starter for the rest)
 *     <!-- verify: practice reference -->         … with every lab done
 *     <!-- verify: practice fault <fault id> -->  … every lab done, the exercise's line injected
 *     <!-- verify: expect -->                     the block below is what the last command of the
 *                                                 run block above prints: all of it, or each
 *                                                 omission marked `…（省略 N 行）`
 *     <!-- verify: skip <reason> -->              the command block below is shown, not replayed
 *     <!-- verify: inject <fault id> -->          the block below is the exercise's line; it must
 *                                                 be exactly the line the fault stage injects
 *     <!-- verify: mistake <fault id> -->         the block below is what `lab <the fault's lab>`
 *                                                 prints in the practice folder with every lab
 *                                                 done and that catalogued fault's edit applied to
 *                                                 the reference: a common mistake the text quotes,
 *                                                 replayed (whole, or omissions marked)
 *     <!-- verify: labs -->                       the table below lists the labs
 *     <!-- verify: record -->                     the block below is the acceptance record
 *
 * A run directive may end with `bash` when its commands need bash (brace expansion and the
 * like); the others run with the platform's plain shell (`/bin/sh`, `cmd.exe`).
 *
 * Rules the parser enforces, each failure naming the file and line:
 * - every fenced block whose language is a shell (sh, bash, shell, console, zsh) carries a
 *   run or a skip directive, so no command of the text escapes the replay unnoticed;
 * - a command is one line of a run block (a line ending in `\` continues on the next);
 *   blank lines and lines starting with `#` are not commands; `cd` is refused (the
 *   directive says where a block runs);
 * - an expect directive follows a run block (only blank lines or prose in between) and
 *   belongs to that block's last command; a skip directive needs a reason;
 * - a claim holds on every supported Node version: after a `node --test` run filtered by
 *   `--test-name-pattern`, the `tests` and `skipped` counts are refused (Node 20 counts the
 *   filtered-out tests as skipped, Node 22 and later do not count them at all).
 *
 * Meaning of a claim (see `claims.ts`): the non-blank lines of an expect block are the
 * command's output line by line, except where a line `…（省略 N 行）` stands for exactly N
 * output lines; a bare `…` is refused, since it would hide how much is left out. A command
 * without an expect block must succeed (exit status 0); a command with one is judged by its
 * output alone (a red test run exits 1).
 *
 * The labs table has the columns Lab id | title | test count | scaffold error, one row per
 * lab in course order, optionally a last row `合计` with the total in the count column;
 * every cell is compared with the manifest.
 *
 * The acceptance record is checked line by line against the manifest (whose counts the
 * rest of `verify` checks against the tests); each line must have one of these forms:
 *
 *     fresh build: pass
 *     first red: Lab <first lab> 0/<its tests> … "<its scaffold error>"   (“…” quotes too)
 *     Lab <id>: <tests>/<tests>
 *     fault <id>: … “<a test that kills it>” … Lab <its lab> <tests>/<tests>
 *     chapter total: <sum>/<sum>
 *     through chapter <chapter id>: all pass
 */
import { CourseError } from "../core/errors.js";
import type { ChapterManifest } from "../course/manifest.js";
import { applyLearnerPatch, authorFaults, type Fault } from "../course/faults.js";
import { type ClaimLine, omittedCount } from "./claims.js";

/**
 * When, in a learner's progress, a practice-folder command runs. `fault`: the exercise's line
 * injected (its learner patch); `mistake`: a catalogued fault's own edit of the reference.
 */
export type Stage =
  | { kind: "starter" }
  | { kind: "after"; lab: string }
  | { kind: "reference" }
  | { kind: "fault"; fault: string }
  | { kind: "mistake"; fault: string };

/** A line of text with the 1-based line number it has in the chapter file. */
export interface NumberedLine {
  line: number;
  text: string;
}

/** One command of the text, with where it runs and what it claims. */
export interface TextCommand {
  /** Line of the command (its first line when continued). */
  line: number;
  /** The command exactly as the text prints it (continuations joined). */
  command: string;
  place: "repo" | "practice";
  /** For practice commands; `starter` for repo commands (where it means nothing). */
  stage: Stage;
  shell: "sh" | "bash";
  /** The expected output (omissions marked), for the last command of a block with an expect block. */
  expect?: ClaimLine[];
}

export interface LabsTable {
  line: number;
  rows: { line: number; cells: string[] }[];
}

export interface ChapterTextPlan {
  file: string;
  /** Acceptance records (`record` blocks): their non-blank lines. */
  records: NumberedLine[][];
  commands: TextCommand[];
  /** Command blocks shown but not replayed, with the text's reason. */
  skipped: { line: number; reason: string }[];
  labsTables: LabsTable[];
  /** Exercise lines the text shows (`inject` blocks). */
  injections: { line: number; fault: string; text: string }[];
  /** Common mistakes the text quotes (`mistake` blocks): the fault, and what its lab's run prints. */
  mistakes: { line: number; fault: string; expect: ClaimLine[] }[];
}

const DIRECTIVE = /^\s*<!--\s*verify:\s*(.*?)\s*-->\s*$/;
const FENCE = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/;
const SHELL_LANGUAGES = new Set(["sh", "bash", "shell", "console", "zsh"]);
const ELLIPSIS = /^(…|\.\.\.|⋯|⋮)$/;
/** A `node --test` run that filters tests by name. */
const FILTERED_RUN = /(?:^|[;&|]\s*)node\s[^;&|]*--test-name-pattern/;
/** Summary counts that depend on the Node version when tests are filtered by name (see `parseChapterText`). */
const FILTER_DEPENDENT_COUNT = /^\s*(?:ℹ|#)\s*(?:tests|skipped)\s+\d+\s*$/;

interface Fence {
  /** Line of the opening fence. */
  line: number;
  language: string;
  content: NumberedLine[];
  /** Line index (0-based) just after the closing fence. */
  next: number;
}

/**
 * The claimed lines of an expect or mistake block: its non-blank lines, trimmed, each
 * `…（省略 N 行）` a marker. Refuses a bare `…` (it hides how much is left out) and a block
 * with nothing but markers.
 */
function claimLinesOf(fence: Fence, file: string): ClaimLine[] {
  const lines = fence.content.filter((l) => l.text.trim() !== "");
  const bare = lines.find((l) => ELLIPSIS.test(l.text.trim()));
  if (bare !== undefined) invalid(file, bare.line, "省略要写明行数：…（省略 N 行），N 是这里略去的输出行数");
  if (lines.every((l) => omittedCount(l.text) !== undefined)) invalid(file, fence.line, "expect 块是空的");
  return lines.map((l) => {
    const omitted = omittedCount(l.text);
    return omitted === undefined ? { line: l.line, text: l.text.trim() } : { line: l.line, text: l.text.trim(), omitted };
  });
}

function invalid(file: string, line: number, message: string): never {
  throw new CourseError("CHAPTER_TEXT_INVALID", `${file}:${line}: ${message}`);
}

/** The fenced block opening at line index `at`, or undefined when that line is no fence. */
function fenceAt(lines: readonly string[], at: number, file: string): Fence | undefined {
  const open = FENCE.exec(lines[at]!);
  if (!open) return undefined;
  const indent = open[1]!.length;
  const marker = open[2]!;
  const content: NumberedLine[] = [];
  for (let i = at + 1; i < lines.length; i++) {
    const raw = lines[i]!;
    const trimmed = raw.trim();
    if (trimmed.startsWith(marker[0]!.repeat(marker.length)) && /^(`+|~+)$/.test(trimmed)) {
      return { line: at + 1, language: open[3]!.toLowerCase(), content, next: i + 1 };
    }
    content.push({ line: i + 1, text: raw.slice(Math.min(indent, raw.length - raw.trimStart().length)) });
  }
  return invalid(file, at + 1, "代码块没有结束的围栏");
}

/** The commands of a run block: continued lines joined, comments and blank lines dropped. */
function commandsOf(fence: Fence, file: string): NumberedLine[] {
  const commands: NumberedLine[] = [];
  let pending: NumberedLine | undefined;
  for (const { line, text } of fence.content) {
    const trimmed = text.trim();
    if (pending === undefined && (trimmed === "" || trimmed.startsWith("#"))) continue;
    const continued = trimmed.endsWith("\\");
    const piece = continued ? trimmed.slice(0, -1).trim() : trimmed;
    pending = pending === undefined ? { line, text: piece } : { line: pending.line, text: `${pending.text} ${piece}`.trim() };
    if (!continued) {
      if (/^cd(\s|$)/.test(pending.text)) invalid(file, pending.line, "命令块里不能有 cd：用 verify 标记说明这一块在哪里运行（repo 或 practice）");
      commands.push(pending);
      pending = undefined;
    }
  }
  if (pending !== undefined) invalid(file, pending.line, "命令以 \\ 结尾，但后面没有续行");
  return commands;
}

function parseStage(words: readonly string[], file: string, line: number): Stage {
  const [kind, arg, ...rest] = words;
  const done = (stage: Stage, extra: readonly string[]): Stage => {
    if (extra.length > 0) invalid(file, line, `verify 标记多出了 “${extra.join(" ")}”`);
    return stage;
  };
  if (kind === "starter") return done({ kind: "starter" }, words.slice(1));
  if (kind === "reference") return done({ kind: "reference" }, words.slice(1));
  if (kind === "after" && arg !== undefined && /^\d+\.\d+$/.test(arg)) return done({ kind: "after", lab: arg }, rest);
  if (kind === "fault" && arg !== undefined) return done({ kind: "fault", fault: arg }, rest);
  return invalid(file, line, `练习目录命令需要阶段：starter、after <Lab>、reference 或 fault <故障 id>，而不是 “${words.join(" ")}”`);
}

/** The Markdown table starting at or after line index `at` (blank lines skipped). */
function tableAt(lines: readonly string[], at: number, file: string, directiveLine: number): { table: LabsTable; next: number } {
  let i = at;
  while (i < lines.length && lines[i]!.trim() === "") i++;
  const rows: { line: number; cells: string[] }[] = [];
  for (; i < lines.length && lines[i]!.trim().startsWith("|"); i++) {
    const cells = lines[i]!.trim()
      .replace(/^\|/, "")
      .replace(/\|$/, "")
      .split("|")
      .map((c) => c.trim());
    rows.push({ line: i + 1, cells });
  }
  if (rows.length < 3 || !rows[1]!.cells.every((c) => /^:?-+:?$/.test(c)))
    invalid(file, directiveLine, "verify: labs 之后应紧跟一张 Markdown 表格（表头、分隔行、每个 Lab 一行）");
  return { table: { line: rows[0]!.line, rows: rows.slice(2) }, next: i };
}

/**
 * Parses the chapter text `text` (repo-relative `file`, for messages) into its replay plan.
 * Throws `CHAPTER_TEXT_INVALID` naming the line for any markup the rules above refuse.
 */
export function parseChapterText(text: string, file: string): ChapterTextPlan {
  const lines = text.split(/\r?\n/);
  const plan: ChapterTextPlan = { file, records: [], commands: [], skipped: [], labsTables: [], injections: [], mistakes: [] };
  /** The last run block's commands, which a following expect block may claim. */
  let lastRun: TextCommand[] | undefined;
  let i = 0;
  const nextFence = (from: number, directiveLine: number, what: string): Fence => {
    let j = from;
    while (j < lines.length && lines[j]!.trim() === "") j++;
    const fence = j < lines.length ? fenceAt(lines, j, file) : undefined;
    if (fence === undefined) return invalid(file, directiveLine, `${what} 之后应紧跟一个代码块`);
    return fence;
  };
  while (i < lines.length) {
    const directive = DIRECTIVE.exec(lines[i]!);
    if (directive === null) {
      const fence = fenceAt(lines, i, file);
      if (fence !== undefined) {
        if (SHELL_LANGUAGES.has(fence.language)) {
          invalid(file, fence.line, "命令块前没有 verify 标记：写 <!-- verify: repo|practice … --> 让 verify 运行它，或 <!-- verify: skip 理由 -->");
        }
        lastRun = undefined; // an expect block claims the run block right above it, nothing earlier
        i = fence.next;
        continue;
      }
      i++;
      continue;
    }
    const line = i + 1;
    const words = directive[1]!.split(/\s+/).filter((w) => w !== "");
    const [kind, ...rest] = words;
    if (kind === "repo" || kind === "practice") {
      const bash = rest.at(-1) === "bash";
      const stageWords = bash ? rest.slice(0, -1) : rest;
      if (kind === "repo" && stageWords.length > 0) invalid(file, line, "课程仓库里的命令没有阶段：只写 <!-- verify: repo -->");
      const stage: Stage = kind === "repo" ? { kind: "starter" } : parseStage(stageWords, file, line);
      const fence = nextFence(i + 1, line, "verify 运行标记");
      if (!SHELL_LANGUAGES.has(fence.language)) invalid(file, fence.line, `verify 运行的代码块要标成 sh 或 bash，而不是 “${fence.language || "（无）"}”`);
      const commands = commandsOf(fence, file);
      if (commands.length === 0) invalid(file, fence.line, "命令块里没有命令");
      lastRun = commands.map((c) => ({ line: c.line, command: c.text, place: kind, stage, shell: bash ? "bash" : "sh" }));
      plan.commands.push(...lastRun);
      i = fence.next;
    } else if (kind === "expect") {
      if (rest.length > 0) invalid(file, line, "verify: expect 不带参数");
      const last = lastRun?.at(-1);
      if (last === undefined) invalid(file, line, "verify: expect 之前没有被运行的命令块");
      if (last.expect !== undefined) invalid(file, line, `第 ${last.line} 行的命令已经有一个 expect 块`);
      const fence = nextFence(i + 1, line, "verify: expect");
      const expected = claimLinesOf(fence, file);
      const unportable = FILTERED_RUN.test(last.command) ? expected.find((l) => FILTER_DEPENDENT_COUNT.test(l.text)) : undefined;
      if (unportable !== undefined) {
        invalid(
          file,
          unportable.line,
          `“${unportable.text.trim()}” 随 Node 版本而变：--test-name-pattern 过滤掉的测试，Node 20 记为 skipped 并计入 tests，Node 22 起两者都不计；只声明 ℹ pass、ℹ fail 和 ✔/✖ 行`,
        );
      }
      last.expect = expected;
      i = fence.next;
    } else if (kind === "skip") {
      if (rest.length === 0) invalid(file, line, "verify: skip 要写明理由，例如 <!-- verify: skip 需要网络 -->");
      const fence = nextFence(i + 1, line, "verify: skip");
      plan.skipped.push({ line: fence.line, reason: rest.join(" ") });
      lastRun = undefined;
      i = fence.next;
    } else if (kind === "inject") {
      if (rest.length !== 1) invalid(file, line, "verify: inject 需要恰好一个故障 id");
      const fence = nextFence(i + 1, line, "verify: inject");
      const content = fence.content.filter((l) => l.text.trim() !== "");
      if (content.length !== 1) invalid(file, fence.line, "inject 块应恰好是一行代码");
      plan.injections.push({ line: content[0]!.line, fault: rest[0]!, text: content[0]!.text.trim() });
      lastRun = undefined;
      i = fence.next;
    } else if (kind === "mistake") {
      if (rest.length !== 1) invalid(file, line, "verify: mistake 需要恰好一个故障 id");
      const fence = nextFence(i + 1, line, "verify: mistake");
      plan.mistakes.push({ line: fence.line, fault: rest[0]!, expect: claimLinesOf(fence, file) });
      lastRun = undefined;
      i = fence.next;
    } else if (kind === "record") {
      if (rest.length > 0) invalid(file, line, "verify: record 不带参数");
      const fence = nextFence(i + 1, line, "verify: record");
      plan.records.push(fence.content.filter((l) => l.text.trim() !== "").map((l) => ({ line: l.line, text: l.text.trim() })));
      lastRun = undefined;
      i = fence.next;
    } else if (kind === "labs") {
      if (rest.length > 0) invalid(file, line, "verify: labs 不带参数");
      const { table, next } = tableAt(lines, i + 1, file, line);
      plan.labsTables.push(table);
      lastRun = undefined;
      i = next;
    } else {
      invalid(file, line, `不认识的 verify 标记 “${directive[1]}”：可用 repo、practice、expect、skip、inject、mistake、labs、record`);
    }
  }
  return plan;
}

/** Sort key of a stage in a learner's progress: starter, after each lab, reference, fault. */
export function stageOrder(stage: Stage, manifest: ChapterManifest): number {
  const labs = manifest.labs.length;
  switch (stage.kind) {
    case "starter":
      return 0;
    case "after": {
      const index = manifest.labs.findIndex((lab) => lab.id === stage.lab);
      return index < 0 ? -1 : index + 1;
    }
    case "reference":
      return labs;
    case "fault":
      return labs + 1;
    case "mistake":
      return labs + 2;
  }
}

/** How a stage reads in messages. */
export function describeStage(stage: Stage): string {
  switch (stage.kind) {
    case "starter":
      return "starter";
    case "after":
      return `after ${stage.lab}`;
    case "reference":
      return "reference";
    case "fault":
      return `fault ${stage.fault}`;
    case "mistake":
      return `mistake ${stage.fault}`;
  }
}

const stripCode = (cell: string) => cell.replace(/^`(.*)`$/, "$1").trim();

/**
 * Everything the text claims that the manifest alone can confirm, as `file:line: …`
 * problems (empty when all holds): the labs exist (stages, tables), the labs tables match
 * the manifest cell by cell, every fault stage and inject block names an exercise fault
 * with a learner patch, every inject block shows exactly the line that patch inserts, and
 * every mistake block names a fault of the chapter's catalog.
 */
export function checkPlanAgainstManifest(plan: ChapterTextPlan, manifest: ChapterManifest): string[] {
  const problems: string[] = [];
  const at = (line: number, message: string) => problems.push(`${plan.file}:${line}: ${message}`);
  let faults: Fault[] | undefined;
  try {
    faults = authorFaults(manifest);
  } catch (error) {
    problems.push(`${manifest.manifestPath}: ${(error as Error).message}`);
  }
  const exercise = (id: string, line: number): Fault | undefined => {
    if (faults === undefined) return undefined;
    const fault = faults.find((f) => f.id === id);
    if (fault === undefined) at(line, `清单里没有故障 ${id}`);
    else if (fault.learner === undefined) at(line, `故障 ${id} 没有 learner 注入方式，练习目录里无法注入`);
    else return fault;
    return undefined;
  };
  for (const command of plan.commands) {
    if (command.stage.kind === "after" && stageOrder(command.stage, manifest) < 0) at(command.line, `本章没有 Lab ${command.stage.lab}`);
    if (command.stage.kind === "fault") exercise(command.stage.fault, command.line);
  }
  for (const mistake of plan.mistakes) {
    if (faults !== undefined && !faults.some((f) => f.id === mistake.fault))
      at(mistake.line, `清单里没有故障 ${mistake.fault}：正文引用的常见错误要登记成本章的故障`);
  }
  for (const injection of plan.injections) {
    const fault = exercise(injection.fault, injection.line);
    if (fault?.learner !== undefined && injection.text !== fault.learner.insert.trim()) {
      at(injection.line, `正文里的故障行 “${injection.text}” 与清单注入的 “${fault.learner.insert.trim()}” 不同`);
    }
  }
  for (const table of plan.labsTables) {
    const rows = [...table.rows];
    const total = rows.at(-1)?.cells[0] === "合计" ? rows.pop() : undefined;
    if (rows.length !== manifest.labs.length) at(table.line, `表格列出 ${rows.length} 个 Lab，本章有 ${manifest.labs.length} 个`);
    rows.forEach((row, index) => {
      const lab = manifest.labs[index];
      if (lab === undefined) return;
      const expected = [lab.id, lab.title, String(lab.tests), lab.scaffoldError];
      const names = ["Lab", "标题", "测试数", "施工位错误"];
      expected.forEach((value, column) => {
        const cell = stripCode(row.cells[column] ?? "");
        if (cell !== value) at(row.line, `${names[column]}一栏写的是 “${cell}”，清单里 Lab ${lab.id} 是 “${value}”`);
      });
    });
    if (total !== undefined) {
      const sum = String(manifest.labs.reduce((n, lab) => n + lab.tests, 0));
      const cell = stripCode(total.cells[2] ?? "");
      if (cell !== sum) at(total.line, `合计写的是 “${cell}”，各 Lab 的测试数加起来是 ${sum}`);
    }
  }
  for (const record of plan.records) {
    for (const entry of record) {
      const problem = recordLineProblem(entry.text, manifest, faults ?? []);
      if (problem !== undefined) at(entry.line, problem);
    }
  }
  return problems;
}

/** The quoted strings of a record line (“…” or "…"). */
function quoted(text: string): string[] {
  return [...text.matchAll(/“([^”]*)”|"([^"]*)"/g)].map((m) => m[1] ?? m[2] ?? "");
}

/**
 * What is wrong with one line of an acceptance record (forms in the module comment), or
 * undefined when the manifest confirms it.
 */
export function recordLineProblem(text: string, manifest: ChapterManifest, faults: readonly Fault[]): string | undefined {
  const labOf = (id: string) => manifest.labs.find((lab) => lab.id === id);
  const counts = (passed: string, total: string, expected: number, what: string) =>
    Number(passed) === expected && Number(total) === expected ? undefined : `${what}应为 ${expected}/${expected}，记录写的是 ${passed}/${total}`;
  if (text === "fresh build: pass") return undefined;
  let m = /^first red: Lab (\S+) (\d+)\/(\d+)(.*)$/.exec(text);
  if (m) {
    const first = manifest.labs[0];
    if (first === undefined || m[1] !== first.id) return `first red 说的应是第一个 Lab ${first?.id ?? "（没有）"}`;
    if (m[2] !== "0" || Number(m[3]) !== first.tests) return `first red 应为 0/${first.tests}，记录写的是 ${m[2]}/${m[3]}`;
    const errors = quoted(m[4]!);
    if (errors.length > 0 && errors.some((e) => e !== first.scaffoldError)) return `first red 的错误应是 “${first.scaffoldError}”`;
    return undefined;
  }
  m = /^Lab (\S+): (\d+)\/(\d+)$/.exec(text);
  if (m) {
    const lab = labOf(m[1]!);
    return lab === undefined ? `本章没有 Lab ${m[1]}` : counts(m[2]!, m[3]!, lab.tests, `Lab ${lab.id} `);
  }
  m = /^fault (\S+): (.*)$/.exec(text);
  if (m) {
    const fault = faults.find((f) => f.id === m![1]);
    if (fault === undefined) return `清单里没有故障 ${m[1]}`;
    const names = quoted(m[2]!);
    if (names.length === 0 || !names.every((name) => fault.killedBy.some((k) => name === k || name.startsWith(k)))) {
      return `故障 ${fault.id} 应被 “${fault.killedBy.join("”、“")}” 抓住`;
    }
    const restored = /Lab (\S+) (\d+)\/(\d+)$/.exec(m[2]!);
    const lab = labOf(fault.lab)!;
    if (restored === null || restored[1] !== lab.id) return `故障 ${fault.id} 的记录应以恢复后的 “Lab ${lab.id} ${lab.tests}/${lab.tests}” 结尾`;
    return counts(restored[2]!, restored[3]!, lab.tests, `恢复后的 Lab ${lab.id} `);
  }
  m = /^chapter total: (\d+)\/(\d+)$/.exec(text);
  if (m)
    return counts(
      m[1]!,
      m[2]!,
      manifest.labs.reduce((n, lab) => n + lab.tests, 0),
      "chapter total ",
    );
  m = /^through chapter (\S+): all pass$/.exec(text);
  if (m) return m[1] === manifest.id ? undefined : `应是 through chapter ${manifest.id}`;
  return `验收记录里不认识的一行（可用的写法见 packages/course-tools/src/verify/chapter-text.ts）`;
}

/** The teaching text with the exercise line of `fault` injected (its learner patch), or a reason it cannot be. */
export function injectExercise(reference: string, fault: Fault): { ok: true; text: string } | { ok: false; reason: string } {
  if (fault.learner === undefined) return { ok: false, reason: `故障 ${fault.id} 没有 learner 注入方式` };
  const patched = applyLearnerPatch(reference, fault.learner);
  if (!patched.ok) return { ok: false, reason: `故障 ${fault.id} 的练习注入对参考实现不成立：${patched.reason}` };
  return { ok: true, text: patched.text };
}
