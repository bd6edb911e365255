/**
 * `lab NN.L --compare`: once a lab is green, the learner's declarations for it, then the
 * reference's, one after the other.
 *
 * - In a practice folder only (`LAB_NEEDS_PRACTICE`, said by the caller).
 * - The reference is read from the course repository the folder was made from, at the
 *   chapter's target commit, both recorded in the folder's marker by `practice`
 *   (`.pi-course/practice.json`: `course`, `target`), with `git cat-file` through the one
 *   process runner. It is printed, never written: nothing of it enters the folder, not even a
 *   temporary file. A marker without them (a folder made before they were recorded), a course
 *   folder that is gone or is no git repository, or a commit it does not have (the teaching
 *   branch was deleted and collected) is `COMPARE_COURSE_UNREACHABLE`, with the way back.
 * - Green means green now, on the learner's current code: the recorded result of `lab`
 *   (`progress.ts`) when it was reached on the teaching files as they are, else the lab is
 *   run first. A lab that is not green is `COMPARE_NOT_GREEN`, saying how far it is.
 * - "The lab's declarations" are those the starter marks for it, plus the helpers of each
 *   side's own that they use (`labDeclarations`): the learner's helpers beside theirs, the
 *   reference's beside the reference's.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { courseCommand } from "../core/command-line.js";
import { CourseError, isCourseError } from "../core/errors.js";
import { shownPath, starterCopyPath } from "../core/paths.js";
import type { Paint } from "../core/term.js";
import { readStarters } from "../course/starters.js";
import { gitOk, readFileAt } from "../course/git.js";
import type { ChapterManifest, LabSpec } from "../course/manifest.js";
import { readPracticeMarker } from "../practice/marker.js";
import type { StartedBuild } from "../testing/compiler.js";
import { runLab } from "../testing/labs.js";
import type { LabResult } from "../testing/results.js";
import { labDeclarations, type LabDeclaration } from "../ts/splice.js";
import { knownGreen, readProgress, recordProgress, teachingDigest } from "./progress.js";

/** Where the reference is: the course repository and the target commit, checked to be readable. */
export interface ReferenceSource {
  course: string;
  target: string;
}

/**
 * The course repository and target commit the folder at `root` records, once git confirms
 * the commit is there. Throws `COMPARE_COURSE_UNREACHABLE` (see the module comment).
 */
export async function referenceSource(root: string, manifest: ChapterManifest, signal?: AbortSignal): Promise<ReferenceSource> {
  const marker = readPracticeMarker(root);
  const again = `在课程仓库里重新生成练习目录（${courseCommand("practice", manifest.id, "<新目录>")}），把你的 ${manifest.starters.map((s) => s.to).join("、")} 复制过去`;
  if (marker?.course === undefined || marker.target === undefined) {
    throw new CourseError(
      "COMPARE_COURSE_UNREACHABLE",
      `.pi-course/practice.json 没有记录生成这个目录的课程仓库和 target 提交（较早的工具生成的目录），无法读取参考实现：${again}`,
    );
  }
  const { course, target } = marker;
  if (!existsSync(course)) {
    throw new CourseError(
      "COMPARE_COURSE_UNREACHABLE",
      `生成这个目录的课程仓库 ${course} 不在了（被移动或删除？），无法读取参考实现：把仓库放回原处，或者${again}`,
    );
  }
  let found: boolean;
  try {
    found = (await gitOk(course, ["cat-file", "-e", `${target}^{commit}`], signal === undefined ? {} : { signal })).ok;
  } catch (error) {
    if (isCourseError(error, "ABORTED")) throw error;
    throw new CourseError("COMPARE_COURSE_UNREACHABLE", `无法在 ${course} 里运行 git（${(error as Error).message}），读不到参考实现`, { cause: error });
  }
  if (!found) {
    throw new CourseError(
      "COMPARE_COURSE_UNREACHABLE",
      `${course} 里没有 target 提交 ${target.slice(0, 12)}（不是课程仓库，或者教学分支被删掉了）：在课程仓库里运行 ${courseCommand("checkpoint", manifest.id, "--source", marker.source ?? "<源提交>")} 重新生成它（结果与原来逐字节相同），再运行这个命令`,
    );
  }
  return { course, target };
}

export interface CompareOptions {
  paint: Paint;
  /** The directory locations are shown relative to (where the command was typed). */
  showFrom: string;
  signal: AbortSignal;
  /** The build `lab` started, used when the lab must be run. */
  build?: StartedBuild;
  timeoutMs: number;
}

/** The lab's result on the current code: recorded, or run now (and recorded); "aborted" when interrupted. */
async function currentResult(
  root: string,
  manifest: ChapterManifest,
  lab: LabSpec,
  options: CompareOptions,
): Promise<{ green: boolean; detail: string } | "aborted"> {
  const digest = teachingDigest(root, manifest);
  if (knownGreen(readProgress(root), lab.id, digest)) {
    await options.build?.stop();
    return { green: true, detail: "" };
  }
  const outcome = await runLab(
    root,
    manifest,
    { chapter: manifest.id, lab: lab.id },
    { signal: options.signal, timeoutMs: options.timeoutMs, showFrom: options.showFrom, ...(options.build === undefined ? {} : { started: options.build }) },
  );
  if (outcome.kind === "aborted") return "aborted";
  if (outcome.kind === "build_failed") return { green: false, detail: `编译失败（${outcome.diagnostics.length} 处错误）` };
  recordProgress(root, [...outcome.earlier, ...outcome.labs], digest);
  const result: LabResult | undefined = outcome.labs[0];
  if (result === undefined) return { green: false, detail: "没有结果" };
  return { green: result.status === "passed", detail: `${result.passed}/${result.total}${result.status === "not_started" ? "，还没有开始" : ""}` };
}

/**
 * One side's declarations as text: a header per declaration, then its text as it is. On the
 * reference's side (`same` given) a declaration equal to the learner's is named, not repeated.
 */
function showSide(declarations: readonly LabDeclaration[], where: (d: LabDeclaration) => string, paint: Paint, same?: ReadonlySet<string>): string[] {
  const lines: string[] = [];
  for (const d of declarations) {
    const repeated = same?.has(d.name) === true;
    const notes = [d.marked ? "" : "辅助函数", repeated ? "和你的逐字相同，不再重复" : ""].filter((n) => n !== "").join("，");
    lines.push("", paint.bold(`${d.name} · ${where(d)}${notes === "" ? "" : `（${notes}）`}`));
    if (!repeated) lines.push(d.text);
  }
  return lines;
}

/**
 * Runs `lab NN.L --compare` in the practice folder at `root` and returns the text to print
 * (see the module comment); resolves with "aborted" when `signal` ended the run. Throws
 * `COMPARE_COURSE_UNREACHABLE`, `COMPARE_NOT_GREEN`, and what `labDeclarations` throws.
 */
export async function compareLab(root: string, manifest: ChapterManifest, lab: LabSpec, options: CompareOptions): Promise<string | "aborted"> {
  const { paint } = options;
  let source: ReferenceSource;
  try {
    source = await referenceSource(root, manifest, options.signal);
  } catch (error) {
    await options.build?.stop();
    throw error;
  }
  const result = await currentResult(root, manifest, lab, options);
  if (result === "aborted") return "aborted";
  if (!result.green) {
    throw new CourseError(
      "COMPARE_NOT_GREEN",
      `Lab ${lab.id} 现在还没有通过（${result.detail}）：参考实现要等这个 Lab 在你的代码上变绿之后才显示，先自己写出来。运行 ${courseCommand("lab", lab.id)} 看第一处失败，卡住时 ${courseCommand("hint", lab.id)}`,
    );
  }
  const labIds = manifest.labs.map((l) => l.id);
  const lines = [
    paint.bold(`Lab ${lab.id} · ${lab.title}  ✓ 已通过 · 对照参考实现`),
    paint.dim(`参考实现读自课程仓库 ${source.course} 的 target ${source.target.slice(0, 12)}（只显示，不写进练习目录）`),
  ];
  for (const overlay of manifest.starters) {
    const { to } = overlay;
    const file = path.join(root, ...to.split("/"));
    if (!existsSync(file)) continue;
    const learnerText = readFileSync(file, "utf8");
    const copy = path.join(root, ...starterCopyPath(to).split("/"));
    let referenceText: string;
    let starterText: string;
    try {
      const atTarget = (name: string) => readFileAt(source.course, source.target, name, { signal: options.signal });
      referenceText = await atTarget(to);
      // The folder's pristine copy; without one, the starter as the target has it (hand-kept or derived).
      starterText = existsSync(copy) ? readFileSync(copy, "utf8") : (await readStarters({ labs: manifest.labs, starters: [overlay] }, atTarget))[0]!.text;
    } catch (error) {
      // Only what cannot be read is the course's absence; a scaffold that does not derive says so itself.
      if (isCourseError(error, "ABORTED") || (error instanceof CourseError && error.code.startsWith("SCAFFOLD_"))) throw error;
      throw new CourseError("COMPARE_COURSE_UNREACHABLE", `读不到 target ${source.target.slice(0, 12)} 里的 ${to}：${(error as Error).message}`, {
        cause: error,
      });
    }
    const names = { starter: `${to} (starter)` };
    const mine = labDeclarations(learnerText, starterText, lab.id, labIds, { ...names, text: to });
    const theirs = labDeclarations(referenceText, starterText, lab.id, labIds, { ...names, text: `${to}@${source.target.slice(0, 12)}` });
    if (mine.length === 0 && theirs.length === 0) continue;
    const reference = new Map(theirs.map((d) => [d.name, d.text.trim()]));
    const same = new Set(mine.filter((d) => reference.get(d.name) === d.text.trim()).map((d) => d.name));
    const shown = shownPath(file, options.showFrom);
    lines.push("", paint.cyan(`── 你的代码 · ${shown} ──`));
    lines.push(...showSide(mine, (d) => `${shown}:${d.line}:${d.column}`, paint));
    lines.push("", paint.cyan(`── 参考实现 · ${to}（target ${source.target.slice(0, 12)}）──`));
    lines.push(...showSide(theirs, (d) => (d.line === d.endLine ? `第 ${d.line} 行` : `第 ${d.line}–${d.endLine} 行`), paint, same));
  }
  const next = manifest.labs[manifest.labs.findIndex((l) => l.id === lab.id) + 1];
  lines.push(
    "",
    "两边都通过了同样的测试：写法不同不等于错。看看参考实现在哪些地方和你不同（边界情况、错误码、副本与顺序），想一想为什么。",
    next === undefined
      ? `下一步：${courseCommand("lab", manifest.id)} 看全章进度`
      : `下一步：Lab ${next.id} · ${next.title}，运行 ${paint.cyan(courseCommand("lab", next.id))}`,
  );
  return lines.join("\n");
}
