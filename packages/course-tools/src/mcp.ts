/**
 * `npm run --silent mcp -w @pi/course` (practice folder only): the course as an MCP server
 * on stdio, for the learner's coding agent (`lib/mcp/server.ts` declares its tools and its
 * prompt). It serves the folder it runs in and reads nothing else: the practice folder's
 * files are leak-audited when `practice` writes them, the course repository is where the
 * answers are. Outside a practice folder it refuses to start (`MCP_NOT_PRACTICE`, exit 1),
 * writing nothing to stdout.
 *
 * What each tool does is built here from the learner commands' own modules, so that an
 * agent sees what the learner would: `lab_status` and `run_lab` run the labs as `lab` does
 * (and record the same progress), with `lab`'s own report as their text; `next_hint` takes
 * the next rung from `hint`'s ladder and stores it in the same `.pi-course/hints.json`;
 * `chapter_section` reads the folder's copy of the chapter text (and of the challenge tier's text, for its rules).
 *
 * The server runs until its client closes stdin. Interrupted (SIGINT, SIGTERM, SIGHUP), it
 * ends a running lab's test processes, removes their temporary folders and ends by the signal.
 */
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { chapterArgument, labId, parseTarget, type CommandContext, type LabTarget } from "./core/cli.js";
import { courseCommand } from "./core/command-line.js";
import { CourseError } from "./core/errors.js";
import { catchInterruptions } from "./core/interrupt.js";
import { createPaint } from "./core/term.js";
import { testBelongsToLab } from "./course/lab-names.js";
import { loadManifest, type ChapterManifest } from "./course/manifest.js";
import { chapterSections, findSection, ruleOf } from "./course/sections.js";
import { interruptedNote, missingFilesNote, missingTeachingFiles } from "./lab/command.js";
import { formatOutcome, totals } from "./lab/format.js";
import { formatHint, loadHintProgress, RUNG_NAMES, RUNGS, saveShownHint, takeHint, unsavedHintWarning } from "./lab/hints.js";
import { courseRelative, formatLocation, locateFailure } from "./lab/locate.js";
import { knownGreen, readProgress, recordProgress, teachingDigest } from "./lab/progress.js";
import { practiceChapter } from "./mcp/folder.js";
import type { FailureData, HintData, LabStatusData, PracticeTools, RunLabData, RunProblem, SectionData } from "./mcp/server.js";
import { learnerPreamble } from "./practice/preamble.js";
import { runLab as runLabs, selectLabs, type LabOutcome } from "./testing/labs.js";
import { DEFAULT_TIMEOUT_SECONDS } from "./testing/limits.js";
import type { FirstFailure, LabResult } from "./testing/results.js";

/** `mcp`'s arguments (declared in the command table, `cli.ts`): none. */
export type McpArgs = Record<string, never>;

/** How many lines of a failure's message an answer carries (as many as `lab` shows). */
const EXCERPT_LINES = 12;

const PLAIN = createPaint(false);

/** The first `max` lines of `text`, with a note of how many were left out. */
function excerpt(text: string, max = EXCERPT_LINES): string {
  const lines = text.replace(/\s+$/, "").split(/\r?\n/);
  return lines.length <= max ? lines.join("\n") : [...lines.slice(0, max), `…（还有 ${lines.length - max} 行）`].join("\n");
}

/** The top-level lab test names of `manifest`'s focused tests in the folder, for lab `id`, in file order. */
function labTestNames(root: string, manifest: ChapterManifest, id: string): string[] {
  const names: string[] = [];
  for (const file of manifest.focusedTests) {
    let text = "";
    try {
      text = readFileSync(path.join(root, ...file.split("/")), "utf8");
    } catch {
      continue;
    }
    for (const match of text.matchAll(/^test\(\s*(["'`])(Lab [^"'`\n]+)\1/gm)) if (testBelongsToLab(match[2]!, id)) names.push(match[2]!);
  }
  return names;
}

/**
 * The tools of the practice folder at `root` (the chapter of its marker is `chapter`). They
 * answer for that chapter only: a failure's section number points into its text, the one
 * `chapter_section` reads, so another chapter is refused with `MCP_OTHER_CHAPTER`.
 */
export function practiceTools(root: string, chapter: string): PracticeTools {
  const ownChapter = (id: string): string => {
    if (id !== chapter) throw new CourseError("MCP_OTHER_CHAPTER", `这个练习目录是第 ${chapter} 章的，不回答第 ${id} 章（正文的节号只属于本章）`);
    return id;
  };
  const ownTarget = (target: LabTarget): LabTarget => (ownChapter(target.chapter), target);
  /** What a failure tells the learner, as data: the rule and its section, where it failed, an excerpt. */
  const failureData = (failure: FirstFailure, lab: LabResult): FailureData => {
    const rule = ruleOf(failure.message);
    const where = locateFailure(failure.stack, root, failure.scaffoldOf);
    const testFile = failure.testFile === undefined ? undefined : courseRelative(failure.testFile, root);
    return {
      test: failure.test,
      ...(rule === undefined ? {} : { rule: rule.rule, section: rule.section }),
      ...(where === undefined ? {} : { location: formatLocation(where, root) }),
      ...(testFile === undefined || failure.testLine === undefined ? {} : { testLocation: `${testFile}:${failure.testLine}` }),
      excerpt: excerpt(failure.message),
      notStarted: failure.scaffoldOf !== undefined,
      ...(failure.scaffoldOf !== undefined && failure.scaffoldOf !== lab.id ? { waitingFor: failure.scaffoldOf } : {}),
      ...(failure.timedOut === true ? { timedOut: true } : {}),
    };
  };

  /** Why the outcome could not judge every test, when it could not. */
  const problemOf = (outcome: Exclude<LabOutcome, { kind: "aborted" }>): RunProblem | undefined => {
    if (outcome.kind === "build_failed") return { kind: "build_failed", message: excerpt(outcome.diagnostics.slice(0, 5).join("\n"), 30) };
    if (outcome.timedOut !== undefined)
      return { kind: "timeout", message: `超过时间上限 ${outcome.timedOut.seconds} 秒：${outcome.timedOut.labs.map((id) => `Lab ${id}`).join("、")}` };
    const crash = outcome.crashes[0];
    if (crash !== undefined) return { kind: "crashed", message: excerpt(`测试文件没能运行完：${crash.file}\n${crash.stderr}`) };
    return undefined;
  };

  /**
   * Runs `target` as `lab` does (the preamble first, the teaching files checked, the
   * progress recorded) and returns the outcome with `lab`'s own report.
   */
  const run = async (target: LabTarget, signal: AbortSignal) => {
    const manifest = await loadManifest(root, target.chapter);
    const selected = selectLabs(manifest, target);
    const notes = learnerPreamble(root, manifest.id);
    const missing = missingTeachingFiles(root, manifest);
    if (missing.length > 0) {
      const note = missingFilesNote(missing, manifest, true);
      return { manifest, selected, notes, missing: note } as const;
    }
    const digest = teachingDigest(root, manifest);
    const outcome = await runLabs(root, manifest, target, { signal, timeoutMs: DEFAULT_TIMEOUT_SECONDS * 1000 });
    if (outcome.kind === "aborted") throw new CourseError("ABORTED", interruptedNote(target));
    if (outcome.kind === "tested") recordProgress(root, [...outcome.earlier, ...outcome.labs], digest);
    const progress = readProgress(root);
    const laterGreen = (id: string) => knownGreen(progress, id, digest);
    const report = formatOutcome(outcome, manifest, target, { paint: PLAIN, courseRoot: root, watch: false, laterGreen });
    return { manifest, selected, notes, outcome, report, laterGreen } as const;
  };

  const withNotes = (notes: readonly string[], text: string) => [...notes, text].join("\n");
  const optional = (problem: RunProblem | undefined) => (problem === undefined ? {} : { problem });
  const sum = (labs: readonly { total: number }[]) => labs.reduce((total, lab) => total + lab.total, 0);

  return {
    async labStatus(raw, signal) {
      const target: LabTarget = { chapter: raw === undefined ? chapter : ownChapter(chapterArgument(raw.trim())) };
      const ran = await run(target, signal);
      const { manifest, notes } = ran;
      // Every lab failed and unrun, with why: a teaching file missing, or a build that failed.
      const unrun = (note: string, problem: RunProblem | undefined): LabStatusData => {
        const labs = ran.selected.map((lab) => ({ id: lab.id, title: lab.title, passed: 0, total: lab.tests, status: "failed" as const, note }));
        return { chapter: manifest.id, title: manifest.title, labs, passed: 0, total: sum(labs), next: null, ...optional(problem), notes };
      };
      if (ran.missing !== undefined) {
        const data = unrun("教学文件不见了", { kind: "teaching_file_missing", message: ran.missing });
        return { text: withNotes(notes, ran.missing), data };
      }
      const { outcome, report } = ran;
      if (outcome.kind !== "tested") return { text: withNotes(notes, report), data: unrun("编译失败，测试没有运行", problemOf(outcome)) };
      const labs = outcome.labs.map((lab) => {
        const failure = lab.firstFailure;
        let note: string | undefined;
        if (lab.status === "not_started")
          note = failure?.scaffoldOf !== undefined && failure.scaffoldOf !== lab.id ? `未开始 · 等待 Lab ${failure.scaffoldOf}` : "未开始";
        else if (lab.status === "failed" && failure !== undefined) note = `${failure.test}：${failure.message.split("\n")[0] ?? ""}`;
        return { id: lab.id, title: lab.title, passed: lab.passed, total: lab.total, status: lab.status, ...(note === undefined ? {} : { note }) };
      });
      const next = outcome.labs.find((lab) => lab.status !== "passed");
      const problem = problemOf(outcome);
      const data: LabStatusData = {
        chapter: manifest.id,
        title: manifest.title,
        labs,
        ...totals(outcome.labs),
        next: next === undefined ? null : { lab: next.id, command: courseCommand("lab", next.id) },
        ...optional(problem),
        notes,
      };
      return { text: withNotes(notes, report), data };
    },

    async runLab(raw, signal) {
      const target = ownTarget(parseTarget(raw.trim()));
      if (target.lab === undefined) throw new CourseError("USAGE", `run_lab 针对单个 Lab：写 ${labId(target.chapter, 1)} 这样的编号（全章进度用 lab_status）`);
      const ran = await run(target, signal);
      const { manifest, notes } = ran;
      const spec = ran.selected[0]!;
      if (ran.missing !== undefined) {
        const data: RunLabData = {
          lab: spec.id,
          title: spec.title,
          passed: 0,
          total: spec.tests,
          status: "failed",
          earlier: [],
          next: null,
          problem: { kind: "teaching_file_missing", message: ran.missing },
          notes,
        };
        return { text: withNotes(notes, ran.missing), data };
      }
      const { outcome, report, laterGreen } = ran;
      if (outcome.kind !== "tested") {
        const data: RunLabData = {
          lab: spec.id,
          title: spec.title,
          passed: 0,
          total: spec.tests,
          status: "failed",
          earlier: [],
          next: { lab: spec.id, command: courseCommand("lab", spec.id) },
          ...optional(problemOf(outcome)),
          notes,
        };
        return { text: withNotes(notes, report), data };
      }
      const lab = outcome.labs[0]!;
      const failure = lab.firstFailure === undefined ? undefined : failureData(lab.firstFailure, lab);
      const index = manifest.labs.findIndex((l) => l.id === lab.id);
      const after = manifest.labs.slice(index + 1).find((l) => !laterGreen(l.id));
      const nextLab = lab.status === "passed" ? after?.id : (failure?.waitingFor ?? lab.id);
      const problem = problemOf(outcome);
      const data: RunLabData = {
        lab: lab.id,
        title: lab.title,
        passed: lab.passed,
        total: lab.total,
        status: lab.status,
        ...(failure === undefined ? {} : { firstFailure: failure }),
        earlier: outcome.earlier.filter((l) => l.status !== "passed").map((l) => ({ id: l.id, passed: l.passed, total: l.total, status: l.status })),
        next: nextLab === undefined ? null : { lab: nextLab, command: courseCommand("lab", nextLab) },
        ...optional(problem),
        notes,
      };
      return { text: withNotes(notes, report), data };
    },

    async nextHint(raw, signal) {
      const target = ownTarget(parseTarget(raw.trim()));
      if (target.lab === undefined) throw new CourseError("USAGE", `提示针对单个 Lab：写 ${labId(target.chapter, 1)} 这样的编号`);
      const manifest = await loadManifest(root, target.chapter);
      const [lab] = selectLabs(manifest, target);
      const lines = learnerPreamble(root, manifest.id);
      const loaded = await loadHintProgress(root);
      if (loaded.warning !== undefined) lines.push(loaded.warning);
      // The same climb as `hint`: the rung after the highest reached, never further.
      const { state, view } = takeHint(loaded.state, lab!);
      // Cancelled (the client gave up, the server is stopping): the rung is not shown, so it is not saved.
      if (signal.aborted) throw new CourseError("MCP_CALL_CANCELLED", `next_hint 已被取消：第 ${view.level} 级提示没有给出，也没有记下`);
      const unsaved = await saveShownHint(root, state);
      const warning = unsaved === undefined ? undefined : unsavedHintWarning(unsaved, view.level);
      const text = [...lines, formatHint(view, PLAIN), ...(warning === undefined ? [] : [warning])].join("\n");
      const data: HintData = {
        lab: lab!.id,
        title: lab!.title,
        level: view.level,
        of: RUNGS,
        rung: RUNG_NAMES[view.level - 1] ?? "",
        text: view.text,
        next: view.level < RUNGS ? view.level + 1 : null,
        atTop: view.level === RUNGS,
        ...(warning === undefined ? {} : { warning }),
      };
      return { text, data };
    },

    async chapterSection(raw) {
      const manifest = await loadManifest(root, chapter);
      if (manifest.text === undefined) throw new CourseError("MCP_TEXT_MISSING", `第 ${manifest.id} 章没有正文`);
      const read = async (file: string): Promise<string> => {
        try {
          return await readFile(path.join(root, ...file.split("/")), "utf8");
        } catch (error) {
          throw new CourseError(
            "MCP_TEXT_MISSING",
            `练习目录里没有第 ${manifest.id} 章的正文 ${file}（${(error as { code?: string }).code ?? (error as Error).message}）`,
            { cause: error },
          );
        }
      };
      let markdown = await read(manifest.text);
      const challengeFile = manifest.challengeText;
      // A rule of the challenge tier (a challenge test's failure) is stated in its own text, when it has one.
      const inChapterText = findSection(markdown, raw) !== undefined;
      let challengeText = inChapterText || challengeFile === undefined ? undefined : await read(challengeFile);
      if (challengeText !== undefined && findSection(challengeText, raw) !== undefined) markdown = challengeText;
      const section = findSection(markdown, raw);
      const all = chapterSections(markdown);
      if (section === undefined) {
        const top = all.filter((s) => s.level === Math.min(...all.map((x) => x.level))).map((s) => s.number);
        const known = top.length === 0 ? "正文里没有编号的小节" : `有的节：${top.join("、")}（小节写成 18.1 这样）`;
        throw new CourseError("MCP_SECTION_UNKNOWN", `第 ${manifest.id} 章的正文没有第 “${raw}” 节；${known}`);
      }
      // A section's subsections may continue in the challenge tier's text (Chapter 12's 10.1–10.5 under its section 10).
      if (inChapterText && challengeFile !== undefined) challengeText = await read(challengeFile).catch(() => undefined);
      const continued = challengeText === undefined || markdown === challengeText ? [] : chapterSections(challengeText);
      const subsections = [...all, ...continued]
        .filter((s) => s.number.startsWith(`${section.number}.`) && (s.level > section.level || continued.includes(s)))
        .map((s) => ({ number: s.number, title: s.title }));
      const data: SectionData = { chapter: manifest.id, section: section.number, title: section.title, text: section.text, subsections };
      return { text: section.text, data };
    },

    async predict(raw) {
      const target = raw === undefined ? undefined : ownTarget(parseTarget(raw.trim()));
      if (target !== undefined && target.lab === undefined) throw new CourseError("USAGE", `predict 针对单个 Lab：写 ${labId(target.chapter, 1)} 这样的编号`);
      const manifest = await loadManifest(root, target?.chapter ?? chapter);
      const digest = teachingDigest(root, manifest);
      const progress = readProgress(root);
      // Without a lab: the first one not known to be green on the code as it is now.
      const lab = target === undefined ? manifest.labs.find((l) => !knownGreen(progress, l.id, digest)) : selectLabs(manifest, target)[0];
      if (lab === undefined)
        return `第 ${manifest.id} 章的每个 Lab 在当前代码上都已通过。请学习者预测：挑战关（${courseCommand("lab", manifest.id, "--challenge")}）里哪些主题会失败，为什么？写下预测之后再运行。`;
      const names = labTestNames(root, manifest, lab.id);
      const last = progress.labs[lab.id];
      const lastLine =
        last === undefined
          ? "这个 Lab 还没有运行过。"
          : `上一次运行：${last.passed}/${last.total}（${last.status === "passed" ? "通过" : last.status === "not_started" ? "未开始" : "失败"}）${last.files === digest ? "，之后教学文件没有改过" : "，之后教学文件改过了"}。`;
      return [
        `在运行 Lab ${lab.id}（${lab.title}）之前，先请学习者预测结果，先不要运行它。`,
        "",
        `Lab ${lab.id} 有 ${names.length > 0 ? names.length : lab.tests} 项测试：`,
        ...(names.length > 0 ? names.map((name, i) => `  ${i + 1}. ${name}`) : []),
        lastLine,
        "",
        "请学习者逐项写下：这一项会通过还是失败？失败的话，会停在哪一条规则（§x.y）上、为什么——是还没写（施工位）、写错了，还是依赖的前一个 Lab 还没完成？",
        `等他写完预测，再调用 run_lab（lab: "${lab.id}"），或请他自己运行 ${courseCommand("lab", lab.id)}，把结果和预测逐项对照。`,
        "猜错的那一项最值得弄懂：用 chapter_section 读失败信息里的那一节，请他用自己的话说出规则，再改代码。不要替他写出答案。",
      ].join("\n");
    },
  };
}

/** Runs `mcp` in the practice folder at `root`: serves its tools on stdio until the client closes stdin. */
export async function run(_args: McpArgs, { root }: CommandContext): Promise<number> {
  const chapter = practiceChapter(root);
  const interruption = catchInterruptions();
  const stop = new AbortController();
  const stopped = AbortSignal.any([interruption.signal, stop.signal]);
  try {
    const { createPracticeServer, serveStdio } = await import("./mcp/server.js");
    const server = createPracticeServer({ root, chapter, tools: practiceTools(root, chapter), stop: stopped });
    await serveStdio(server.server, stopped);
    // The client is gone: a lab still running ends its processes and removes its temporary folders.
    stop.abort();
    await server.idle();
    return 0;
  } finally {
    interruption.finish();
  }
}
