/**
 * Replaying a chapter text (`verify`'s "chapter text" check): every command the text marks
 * for running is run verbatim where and when the text puts it, and every output line it
 * claims must be seen (markup and claim rules: `chapter-text.ts`, `claims.ts`).
 *
 * Where commands run, inside a fresh scratch folder:
 * - `repo`: a clone of the verified course (HEAD = the verified commit), next to which the
 *   text's own `practice` command writes its folder, as it would beside a learner's clone.
 *   Repo commands run first, in the text's order.
 * - `practice`: the practice folder those commands created (the one new folder beside the
 *   clone); when the text creates none, one made as `practice NN --link-modules` would.
 *   Its commands run stage by stage in a learner's order — starter, after each lab,
 *   reference, fault, then each common mistake the text quotes — and in the text's order
 *   within a stage. Before a stage, the teaching files are written as the stage says: the
 *   starter; the reference for the labs done and the starter for the rest (`staged.ts`); the
 *   reference; the reference with the exercise's line injected; the reference with a
 *   catalogued fault's edit applied (a `mistake` block: its command is `lab <the fault's lab>`).
 *
 * How: each command runs through the platform's shell (`bash` when the text says so) with
 * a clean environment (no npm or test-runner variables inherited from `verify` itself, no
 * colours, no `CI`: the text shows what a learner's terminal shows). `node --test` commands get the spec reporter, which is what a terminal shows
 * (without a terminal Node 20 would print TAP). Each command has a generous time limit so
 * that a hanging command fails the check instead of the record.
 */
import { existsSync } from "node:fs";
import { mkdir, readdir, realpath, writeFile } from "node:fs/promises";
import fse from "fs-extra";
import path from "node:path";
import { CourseError } from "../core/errors.js";
import { courseRoot, TOOLING_BUILD, TOOLS_PACKAGE } from "../core/paths.js";
import { childEnv, NPM_SCRIPT_VARIABLES, runProcess, tempFolderEnv } from "../core/process.js";
import { linkNodeModules } from "../core/scratch.js";
import { git, gitOk, readFileAt, type GitOptions } from "../course/git.js";
import { readStarters } from "../course/starters.js";
import type { Checkpoint } from "../course/history.js";
import { applyFault, authorFaults } from "../course/faults.js";
import { courseCommand } from "../core/command-line.js";
import { createPractice } from "../practice/folder.js";
import {
  checkPlanAgainstManifest,
  describeStage,
  injectExercise,
  parseChapterText,
  stageOrder,
  type ChapterTextPlan,
  type Stage,
  type TextCommand,
} from "./chapter-text.js";
import { firstClaimMismatch } from "./claims.js";
import type { CheckResult } from "./checks.js";
import { firstLine } from "./runs.js";
import { stagedTeachingText } from "./staged.js";

/** The name of the course clone inside the replay folder (the text's `../x` lands beside it). */
export const REPLAY_COURSE_DIR = "pi-course";
/** The replayed commands' temporary folder, beside the clone (see `runShellCommand`'s `tmpDir`). */
const REPLAY_TMP_DIR = ".tmp";

/** Default time limit of one replayed command. */
export const COMMAND_TIME_LIMIT_MS = 5 * 60 * 1000;

export interface ReplayOptions {
  /** The verified course: a git work tree whose HEAD is the verified commit. */
  repo: string;
  checkpoint: Pick<Checkpoint, "chapter">;
  /** An empty folder the replay may fill (removed by the caller). */
  dir: string;
  signal?: AbortSignal;
  /** Called before each command with a one-line description. */
  onProgress?(message: string): void;
  commandTimeoutMs?: number;
}

/** What a replayed command did. */
export interface CommandOutcome {
  code: number | null;
  /** stdout and stderr, interleaved as they arrived. */
  output: string;
  timedOut: boolean;
}

/** `node … --test …` as a command of its own, at the start or after `;`, `&&`, `||` or `|`. */
const NODE_TEST_COMMAND = /(?:^|[;&|]\s*)node\s(?:[^;&|]*\s)?--test(?:\s|$)/;

/**
 * The environment of a replayed command (see the module comment). The spec reporter goes
 * through `NODE_OPTIONS`, so it reaches every node process of that command line: keep
 * `node --test` and the course commands (which choose their own reporter) on separate lines.
 */
export function replayEnvironment(command: string, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return childEnv(
    {
      // Not in CI mode either: a text shows what a learner's terminal shows (in CI a red lab exits 1, and npm adds its error block).
      without: [...NPM_SCRIPT_VARIABLES, "FORCE_COLOR", "CI"],
      set: { NO_COLOR: "1", ...(NODE_TEST_COMMAND.test(command) ? { NODE_OPTIONS: "--test-reporter=spec" } : {}) },
    },
    base,
  );
}

/** How long a replayed command that was told to end may take before it is killed. */
const KILL_GRACE_MS = 2000;

/**
 * Runs `command` through a shell in `cwd` and collects its output. Aborting `signal` or
 * reaching the time limit ends the command's whole process group (on POSIX): SIGTERM, then
 * SIGKILL after two seconds. With `tmpDir`, the command's temporary folder (`TMPDIR`, `TEMP`,
 * `TMP`) is that folder: what a command ended mid-cleanup leaves there goes with it. Never
 * throws for a failing command; rejects only when the shell cannot be started.
 */
export async function runShellCommand(
  command: string,
  options: { cwd: string; shell: "sh" | "bash"; signal?: AbortSignal; timeoutMs?: number; tmpDir?: string },
): Promise<CommandOutcome> {
  const result = await runProcess(command, [], {
    cwd: options.cwd,
    env: { ...replayEnvironment(command), ...(options.tmpDir === undefined ? {} : tempFolderEnv(options.tmpDir)) },
    shell: options.shell,
    group: true,
    kill: { signal: "SIGTERM", graceMs: KILL_GRACE_MS },
    timeoutMs: options.timeoutMs ?? COMMAND_TIME_LIMIT_MS,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  return { code: result.code, output: result.all, timedOut: result.timedOut };
}

/** Where a command ran, for messages. */
function whereOf(command: TextCommand): string {
  return command.place === "repo" ? "课程仓库" : `练习目录，${describeStage(command.stage)}`;
}

/**
 * The problem with one command's outcome, as a `file:line: …` message, or undefined when
 * it did what the text says: a command without a claim exited 0; a command with a claim
 * printed what the block shows, omissions marked (exit status not judged). Pure.
 */
export function judgeCommand(file: string, command: TextCommand, outcome: CommandOutcome, timeLimitMs = COMMAND_TIME_LIMIT_MS): string | undefined {
  const label = `命令 “${command.command}”（${whereOf(command)}）`;
  if (outcome.timedOut) return `${file}:${command.line}: ${label}超过 ${Math.round(timeLimitMs / 1000)} 秒没有结束`;
  if (command.expect === undefined) {
    if (outcome.code === 0) return undefined;
    return `${file}:${command.line}: ${label}退出码 ${outcome.code ?? "（被信号结束）"}：${firstLine(lastLines(outcome.output))}`;
  }
  const mismatch = firstClaimMismatch(outcome.output, command.expect);
  if (mismatch === undefined) return undefined;
  return `${file}:${mismatch.line}: ${label}：${mismatch.problem}`;
}

/** The last few non-blank lines of an output (where a failure usually says why). */
function lastLines(output: string): string {
  return output
    .split(/\r?\n/)
    .filter((line) => line.trim() !== "")
    .slice(-1)
    .join("\n");
}

/** The practice-folder teaching files of `stage`: path → content, or why they cannot be made. */
export async function teachingFilesAt(
  stage: Stage,
  manifest: Checkpoint["chapter"]["manifest"],
  texts: Map<string, { starter: string; reference: string }>,
): Promise<Map<string, string> | string> {
  const labIds = manifest.labs.map((lab) => lab.id);
  const files = new Map<string, string>();
  const order = stageOrder(stage, manifest);
  for (const [file, { starter, reference }] of texts) {
    if (stage.kind === "fault" || stage.kind === "mistake") files.set(file, reference);
    else files.set(file, stagedTeachingText({ file, starter, reference, labIds, done: Math.min(order, labIds.length) }).text);
  }
  if (stage.kind === "fault" || stage.kind === "mistake") {
    const fault = authorFaults(manifest).find((f) => f.id === stage.fault);
    if (fault === undefined) return `清单里没有故障 ${stage.fault}`;
    if (stage.kind === "mistake") {
      files.set(fault.file, applyFault(files.get(fault.file) ?? "", fault));
      return files;
    }
    const injected = injectExercise(files.get(fault.file) ?? "", fault);
    if (!injected.ok) return injected.reason;
    files.set(fault.file, injected.text);
  }
  return files;
}

/**
 * Gives the clone `course` the compiled tooling of the course this tooling runs from (the
 * tooling package's build of its commands, `dist/src/` and its build record), so that the
 * text's first course command does not compile them again: the bin's `tsc -b` finds the
 * record newer than the clone's sources and keeps the build. Only while the running course's
 * tooling sources equal its commit (the clone's): with uncommitted edits the clone compiles
 * its own, as it always would.
 */
async function seedToolingBuild(course: string): Promise<void> {
  const build = path.join(courseRoot, ...TOOLING_BUILD.split("/"));
  const record = `${build}.tsbuildinfo`;
  if (!existsSync(record) || !existsSync(path.join(build, "cli.js"))) return;
  const sources = [`${TOOLS_PACKAGE}/src`, `${TOOLS_PACKAGE}/tsconfig.json`, "tsconfig.base.json"];
  if (!(await gitOk(courseRoot, ["diff", "--quiet", "HEAD", "--", ...sources])).ok) return;
  await fse.copy(build, path.join(course, ...TOOLING_BUILD.split("/")));
  await fse.copy(record, path.join(course, ...`${TOOLING_BUILD}.tsbuildinfo`.split("/")));
}

/**
 * The common mistakes the text quotes as practice commands: `lab <the fault's lab>` at the
 * mistake's stage, claiming the quoted block. A fault the manifest lacks is left out here
 * (`checkPlanAgainstManifest` reports it).
 */
export function mistakeCommands(plan: ChapterTextPlan, manifest: Checkpoint["chapter"]["manifest"]): TextCommand[] {
  let faults: ReturnType<typeof authorFaults>;
  try {
    faults = authorFaults(manifest);
  } catch {
    return []; // an invalid catalog: checkPlanAgainstManifest names it
  }
  return plan.mistakes.flatMap((mistake) => {
    const fault = faults.find((f) => f.id === mistake.fault);
    if (fault === undefined) return [];
    const command: TextCommand = {
      line: mistake.line,
      command: courseCommand("lab", fault.lab),
      place: "practice",
      stage: { kind: "mistake", fault: fault.id },
      shell: "sh",
      expect: mistake.expect,
    };
    return [command];
  });
}

/** Summary counts of a replay, for the record line. */
interface Tally {
  repo: number;
  practice: number;
  stages: string[];
  claims: number;
  expectBlocks: number;
}

function summary(plan: ChapterTextPlan, tally: Tally): string {
  const extras = [
    plan.labsTables.length > 0 ? `labs table matches the manifest` : "",
    plan.injections.length > 0 ? `exercise line matches the fault it injects` : "",
    plan.mistakes.length > 0 ? `${plan.mistakes.length} common mistake${plan.mistakes.length === 1 ? "" : "s"} replayed` : "",
    plan.skipped.length > 0 ? `${plan.skipped.length} block${plan.skipped.length === 1 ? "" : "s"} shown only` : "",
  ].filter((s) => s !== "");
  return (
    `${plan.file}: ${tally.repo + tally.practice} commands replayed (${tally.repo} in the repo; ${tally.practice} in the practice folder at ${tally.stages.join(", ") || "no stage"}), ` +
    `${tally.claims} claimed lines seen in ${tally.expectBlocks} outputs` +
    (extras.length > 0 ? `; ${extras.join("; ")}` : "")
  );
}

/**
 * Replays the chapter text of `options.checkpoint` (see the module comment) and returns
 * the record's "chapter text" check. Never throws for what the text gets wrong — that is
 * a failed check naming file and line; throws `ABORTED` when `signal` is aborted.
 */
export async function replayChapterText(options: ReplayOptions): Promise<CheckResult> {
  const name = "chapter text";
  const { chapter } = options.checkpoint;
  const manifest = chapter.manifest;
  const gitOptions: GitOptions = options.signal ? { signal: options.signal } : {};
  if (manifest.text === undefined) return { name, ok: false, detail: `${manifest.manifestPath} 没有 text 字段：交互章节要有正文` };
  let plan: ChapterTextPlan;
  try {
    plan = parseChapterText(await readFileAt(options.repo, chapter.target, manifest.text, gitOptions), manifest.text);
  } catch (error) {
    if (error instanceof CourseError && error.code !== "ABORTED") return { name, ok: false, detail: error.message };
    throw error;
  }
  const problems = checkPlanAgainstManifest(plan, manifest);
  const tally: Tally = { repo: 0, practice: 0, stages: [], claims: 0, expectBlocks: 0 };
  const timeLimit = options.commandTimeoutMs ?? COMMAND_TIME_LIMIT_MS;
  // The commands' temporary files live in the replay's folder: a command ended while it cleans
  // up (an interrupted verify ends its group once the shell has gone) leaves nothing in the
  // machine's temp folder, where no journal of its would lead a later sweep.
  const tmpDir = path.join(options.dir, REPLAY_TMP_DIR);
  await mkdir(tmpDir, { recursive: true });
  const run = async (command: TextCommand, cwd: string) => {
    options.signal?.throwIfAborted();
    options.onProgress?.(`${whereOf(command)}: ${command.command}`);
    let outcome: CommandOutcome;
    try {
      outcome = await runShellCommand(command.command, {
        cwd,
        shell: command.shell,
        tmpDir,
        timeoutMs: timeLimit,
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      problems.push(`${plan.file}:${command.line}: 命令 “${command.command}” 无法启动（${command.shell}）：${(error as Error).message}`);
      return;
    }
    if (options.signal?.aborted) throw new CourseError("ABORTED", "已中断");
    if (command.place === "repo") tally.repo++;
    else tally.practice++;
    if (command.expect !== undefined) {
      tally.expectBlocks++;
      tally.claims += command.expect.filter((claim) => claim.omitted === undefined).length;
    }
    const problem = judgeCommand(plan.file, command, outcome, timeLimit);
    if (problem !== undefined) problems.push(problem);
  };

  // The repository: a clone of the verified commit, with the repository's node_modules.
  const course = path.join(options.dir, REPLAY_COURSE_DIR);
  await git(options.dir, ["clone", "--quiet", "--shared", "--", options.repo, course], gitOptions);
  await linkNodeModules(course, await realpath(path.join(options.repo, "node_modules")));
  await seedToolingBuild(course);
  for (const command of plan.commands.filter((c) => c.place === "repo")) await run(command, course);

  const practiceCommands = [...plan.commands.filter((c) => c.place === "practice"), ...mistakeCommands(plan, manifest)];
  if (practiceCommands.length > 0) {
    const made = (await readdir(options.dir, { withFileTypes: true })).filter(
      (e) => e.isDirectory() && e.name !== REPLAY_COURSE_DIR && e.name !== REPLAY_TMP_DIR,
    );
    let practice: string | undefined;
    if (made.length === 1) practice = path.join(options.dir, made[0]!.name);
    else if (made.length > 1)
      problems.push(`${plan.file}: 正文在课程仓库旁边生成了 ${made.length} 个目录（${made.map((e) => e.name).join("、")}），练习目录应只有一个`);
    else {
      const dest = path.join(options.dir, `pi-practice-${manifest.id}`);
      await createPractice({ repo: course, id: manifest.id, dest, linkModules: true, ...gitOptions });
      practice = dest;
    }
    if (practice !== undefined) {
      const texts = new Map<string, { starter: string; reference: string }>();
      for (const starter of await readStarters(manifest, (file) => readFileAt(options.repo, chapter.target, file, gitOptions))) {
        texts.set(starter.teachingFile, {
          starter: starter.text,
          reference: await readFileAt(options.repo, chapter.target, starter.teachingFile, gitOptions),
        });
      }
      const byStage = new Map<string, { stage: Stage; order: number; commands: TextCommand[] }>();
      for (const command of practiceCommands) {
        const key = describeStage(command.stage);
        const order = stageOrder(command.stage, manifest);
        if (order < 0) continue; // an unknown lab: already reported by checkPlanAgainstManifest
        const group = byStage.get(key) ?? { stage: command.stage, order, commands: [] };
        group.commands.push(command);
        byStage.set(key, group);
      }
      for (const group of [...byStage.values()].sort((a, b) => a.order - b.order)) {
        let files: Map<string, string> | string;
        try {
          files = await teachingFilesAt(group.stage, manifest, texts);
        } catch (error) {
          files = (error as Error).message;
        }
        if (typeof files === "string") {
          problems.push(`${plan.file}:${group.commands[0]!.line}: 无法准备 ${describeStage(group.stage)} 阶段的教学文件：${files}`);
          continue;
        }
        for (const [file, content] of files) await writeFile(path.join(practice, ...file.split("/")), content);
        tally.stages.push(describeStage(group.stage));
        for (const command of group.commands) await run(command, practice);
      }
    }
  }
  if (problems.length === 0) return { name, ok: true, detail: summary(plan, tally) };
  const shown = problems.slice(0, 3).join("；");
  return { name, ok: false, detail: `${problems.length} 处与仓库不符：${shown}${problems.length > 3 ? "；…" : ""}` };
}
