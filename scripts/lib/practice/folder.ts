/**
 * The practice folder: an answer-free copy of a chapter's starting point.
 *
 * Content (decided here, documented in the generated LEARNING.md and the README):
 * - the chapter's parent tree (every earlier chapter finished, nothing of this chapter),
 *   written from git objects, with no `.git`;
 * - the chapter's focused test file(s), its provided files (code the learner uses but does
 *   not write) and its text, taken from the target;
 * - each starter written over its teaching file. The `starters/` copy itself is not
 *   added: the starter already sits where the learner edits it, and a second copy would
 *   only invite editing the wrong file. `reset` takes the starter from a pristine copy in
 *   `.pi-course/starter/` (the tooling's folder, see `starterCopyPath`);
 * - `checkpoints/NN.yaml`: the chapter manifest (lab and hint data for `lab` and `hint`)
 *   whose `faults` are reduced to the learner-safe projection of the exercise faults
 *   (`learnerManifestText`): no `find`/`replace`, since those quote the reference;
 * - `.pi-course/practice.json`: the marker that puts the commands in learner mode;
 * - `LEARNING.md`: the guide to this chapter. The course guide the parent tree holds at
 *   that path is kept as `COURSE.md`.
 *
 * Safety: the destination must not exist and must lie outside the repository; the folder
 * is assembled in `.<name>.partial-<random>` beside the destination, audited for leaks,
 * and renamed into place only when complete. Any failure or interruption removes the
 * temporary folder, so the destination either appears complete or not at all.
 */
import { existsSync } from "node:fs";
import { constants as fsConstants } from "node:fs";
import { access, chmod, lstat, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { CourseError } from "../core/errors.js";
import { authorFaults, learnerFaultsProjection, learnerManifestText } from "../course/faults.js";
import { type GitOptions, listTree, type OutputFile, readObjects, type TreeEntry, writeFiles } from "../course/git.js";
import { type Checkpoint, publishHistory, resolveCheckpoint, unpublishHistory } from "../course/history.js";
import { assertNoLeaks, type AuditDocument, auditLeaks, findStarterLeaks, type Leak, type LeakPair } from "./leak-audit.js";
import type { ChapterManifest } from "../course/manifest.js";
import { distPathOf, PRACTICE_MARKER, starterCopyPath } from "../core/paths.js";
import { handOverScratchDir, linkNodeModules, makeScratchDir, removeScratchDir } from "../core/scratch.js";

/** Where the course guide of the parent tree goes, since LEARNING.md becomes the chapter guide. */
export const COURSE_GUIDE = "COURSE.md";
const LEARNING = "LEARNING.md";

/** The content of `.pi-course/practice.json`. */
export interface PracticeMarker {
  chapter: string;
  parent: string;
  target: string;
  source: string;
  createdBy: "practice";
}

/** The default destination: `pi-practice-NN` beside the repository. */
export function defaultPracticeDir(repo: string, id: string): string {
  return path.resolve(repo, "..", `pi-practice-${id}`);
}

/** `dest` resolved against `cwd` (the directory the user typed the command in), or the default. */
export function resolveDestination(repo: string, id: string, dest: string | undefined, cwd: string): string {
  return dest === undefined ? defaultPracticeDir(repo, id) : path.resolve(cwd, dest);
}

function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/** The deepest existing ancestor of `p` (inclusive), canonicalised, plus the part below it. */
async function canonicalise(p: string): Promise<string> {
  const rest: string[] = [];
  let current = path.resolve(p);
  for (;;) {
    try {
      return path.join(await realpath(current), ...rest.reverse());
    } catch {
      const up = path.dirname(current);
      if (up === current) return path.resolve(p);
      rest.push(path.basename(current));
      current = up;
    }
  }
}

/** The nearest ancestor of `p` (inclusive) that exists, with what it is. */
async function nearestExisting(p: string): Promise<{ path: string; isDirectory: boolean }> {
  let current = path.resolve(p);
  for (;;) {
    const info = await stat(current).catch(() => undefined);
    if (info !== undefined) return { path: current, isDirectory: info.isDirectory() };
    const up = path.dirname(current);
    if (up === current) return { path: current, isDirectory: true };
    current = up;
  }
}

/** Why a folder cannot be written, for an `EACCES`/`EPERM`/`EROFS`; undefined for any other error. */
export function readOnlyParent(parent: string, error: unknown): CourseError | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code !== "EACCES" && code !== "EPERM" && code !== "EROFS") return undefined;
  return new CourseError("DEST_PARENT_READONLY", `不能在 ${parent} 里创建目录（${code}）：换一个你有写权限的位置`, { cause: error });
}

/**
 * Refuses a destination that exists (even as a broken symlink: `DEST_EXISTS`), lies inside
 * the repository after resolving symlinks (`DEST_INSIDE_REPO`, suggesting the real default
 * folder of chapter `id`), whose parent folder does not exist (`DEST_PARENT_MISSING`), is
 * a file or lies below one (`DEST_PARENT_NOT_DIR`, naming the file), or cannot be written
 * (`DEST_PARENT_READONLY`). Changes nothing.
 */
export async function checkDestination(repo: string, dest: string, id: string): Promise<void> {
  const exists = await lstat(dest).then(() => true, () => false);
  if (isInside(await realpath(repo), await canonicalise(dest)) || isInside(path.resolve(repo), path.resolve(dest))) {
    throw new CourseError("DEST_INSIDE_REPO", `${dest} 在课程仓库内部；练习目录要放在仓库之外，例如 ${defaultPracticeDir(repo, id)}`);
  }
  if (exists) throw new CourseError("DEST_EXISTS", `${dest} 已经存在；为了不覆盖任何东西，请换一个不存在的目录名`);
  const parent = path.dirname(dest);
  const existing = await nearestExisting(parent);
  if (!existing.isDirectory) {
    throw new CourseError("DEST_PARENT_NOT_DIR", `${existing.path} 是一个文件，不是目录，不能在它${existing.path === parent ? "" : "下面"}创建练习目录；换一个位置`);
  }
  if (existing.path !== parent) throw new CourseError("DEST_PARENT_MISSING", `${parent} 不存在；请先创建它，或换一个位置`);
  try {
    await access(parent, fsConstants.W_OK);
  } catch (error) {
    throw readOnlyParent(parent, error) ?? error;
  }
}

/** The chapter's compiled test files as a shell glob (for chapters without focused tests). */
export function chapterTestGlob(id: string): string {
  return `packages/pi-course/dist/test/${id}-*.test.js`;
}

/** The chapter's compiled focused test files, named one by one (no shell glob needed). */
export function focusedTestFiles(manifest: ChapterManifest): string {
  return manifest.focusedTests.map(distPathOf).join(" ");
}

/** The focused command for one lab, exactly as the chapter text prints it (no shell glob). */
export function manualLabCommand(manifest: ChapterManifest, labId: string): string {
  return `node --test --test-name-pattern="Lab ${labId}" ${focusedTestFiles(manifest)}`;
}

/** What the chapter guide needs to know. */
export interface GuideInput {
  manifest: ChapterManifest;
  parent: string;
  target: string;
  source: string;
  teachingFiles: readonly string[];
  /** Chapter ids up to and including this one, in course order. */
  throughChapters: readonly string[];
  /** True when the folder was created with `--link-modules`. */
  linkedModules: boolean;
}

/** The chapter's `LEARNING.md` (Chinese), generated from the manifest. Pure. */
export function renderLearningGuide(input: GuideInput): string {
  const { manifest: m } = input;
  const firstLab = m.labs[0];
  const total = m.labs.reduce((n, lab) => n + lab.tests, 0);
  const exercise = learnerFaultsProjection(authorFaults(m)).length > 0;
  const lines: string[] = [
    `# 第 ${m.id} 章练习：${m.title}`,
    "",
    "这个目录由 `npm run practice` 生成，是本章的无答案练习起点。它没有 `.git`，也没有本章的参考实现；",
    `课程的总体学习指南保留在 \`${COURSE_GUIDE}\`。`,
    "",
    "## 起点与终点",
    "",
    `- 模式：重建。从上一章的 target 出发，只增加本章这一层。`,
    `- parent（起点）：\`${input.parent}\``,
    `- target（终点）：\`${input.target}\``,
    `- 源提交（生成教学历史所用的 main 提交）：\`${input.source}\``,
    ...(m.text === undefined ? [] : [`- 本章正文：\`${m.text}\`（概念、每个 Lab 的契约、命令和预期输出都在这里）`]),
    `- 教学文件（你要写的文件）：${input.teachingFiles.map((f) => `\`${f}\``).join("、")}`,
    ...(m.provided.length === 0 ? [] : [`- 本章提供的文件（直接使用，不用改写）：${m.provided.map((f) => `\`${f}\``).join("、")}`]),
    `- 聚焦测试：${m.focusedTests.map((f) => `\`${f}\``).join("、")}`,
    "",
    "教学文件现在是 starter：公共类型和导出函数都已固定，函数体只有按 Lab 编号的施工位。",
    "",
    ...(m.text === undefined
      ? []
      : [
          "## 先读正文",
          "",
          `本章的正文就在这个目录里：\`${m.text}\`。先读它的“重建入口”一节（怎样确认起点、第一次红灯长什么样），`,
          "然后每做一个 Lab，先读那一节引用的概念小节，再读这个 Lab 自己的小节：测试检查什么、第一次红灯、",
          "聚焦命令、变绿说明了什么。正文里的命令在这个目录里都能原样运行，预期输出也都经过机器核对。",
          "",
        ]),
    "## 第一步",
    "",
    "```sh",
    input.linkedModules ? "# node_modules 已链接到课程仓库（--link-modules）；正常情况下请运行 npm install" : "npm install",
    "npm run build -w @pi/course",
    ...(firstLab ? [manualLabCommand(m, firstLab.id)] : [`node --test ${m.focusedTests.map(distPathOf).join(" ")}`]),
    "```",
    "",
    "`npm install` 是正常做法（需要网络）。已经有一份装好依赖的课程仓库时，也可以用",
    "`npm run practice -w @pi/course -- " + m.id + " <新目录> --link-modules` 生成目录，直接复用仓库的 `node_modules`。",
    "",
  ];
  if (firstLab) {
    lines.push(
      "## 预期的第一次红灯",
      "",
      `starter 可以编译。只运行 Lab ${firstLab.id} 时应看到 **0/${firstLab.tests}**，每个失败的错误都是：`,
      "",
      "```text",
      firstLab.scaffoldError,
      "```",
      "",
      "如果编译失败，或者错误信息不同，先不要写代码：检查这个目录是不是用正确的 parent 生成的。",
      "",
      "## Lab 顺序",
      "",
      "| Lab | 内容 | 测试数 |",
      "|---|---|---|",
      ...m.labs.map((lab) => `| ${lab.id} | ${lab.title} | ${lab.tests} |`),
      `| 合计 | | ${total} |`,
      "",
      "每个 Lab：先写下你对下一次测试输出的预测，再动手；只比较当前 Lab 的输入、输出和第一处偏差。",
      "",
      "```sh",
      `npm run lab -w @pi/course -- ${firstLab.id}     # 编译并只运行这个 Lab，给出通过数和第一处失败`,
      `npm run lab -w @pi/course -- ${firstLab.id} --watch   # 保存即重跑（每次运行默认限时 30 秒，--timeout 秒 可调）`,
      `npm run lab -w @pi/course -- ${m.id}       # 全章进度表`,
      `npm run reset -w @pi/course -- ${firstLab.id}   # 把这个 Lab 的函数恢复成 starter（你的文件先另存在旁边）`,
      "npm run build -w @pi/course             # 手动方式：先编译",
      manualLabCommand(m, firstLab.id) + "   # 再运行一个 Lab",
      "```",
      "",
      "## 卡住时要提示",
      "",
      "```sh",
      `npm run hint -w @pi/course -- ${firstLab.id}`,
      "```",
      "",
      "每次给出下一级提示：定位文件 → 指出签名 → 伪代码 → 局部代码。已看到的级别记在 `.pi-course/hints.json`。",
      "",
    );
  }
  lines.push("## 故障实验", "");
  if (exercise) {
    lines.push(
      "全部 Lab 变绿之后，故意把本章的典型错误注入你自己的代码，看哪条测试抓住它，然后恢复：",
      "",
      "```sh",
      `npm run fault -w @pi/course -- ${m.id}`,
      "```",
      "",
      "命令结束时（即使中途按了 Ctrl-C）你的文件会逐字节恢复原样。注入的位置按语法树查找，与你的写法无关；",
      "找不到时命令会说明原因，并告诉你怎样手动做这个实验。",
      "",
    );
  } else {
    lines.push("本章没有登记故障实验。", "");
  }
  lines.push(
    "## 最后的验收",
    "",
    "```sh",
    "npm run build -w @pi/course",
    `node --test ${focusedTestFiles(m)}${total > 0 ? `        # 本章全量：应为 ${total}/${total}` : ""}`,
    `npm test -w @pi/course   # 到第 ${m.id} 章为止（${input.throughChapters.join("、")}）的全部测试都通过`,
    "```",
    "",
    "`npm test -w @pi/course` 先编译，再逐个运行这个目录里每一章的测试文件，不依赖 shell 的通配符，在 Windows 上也一样。",
    "",
  );
  return lines.join("\n");
}

/** What a practice folder will contain, computed without touching the disk. */
export interface PracticePlan {
  files: OutputFile[];
  marker: PracticeMarker;
  /** Reference/starter pairs the leak audit compares (contents filled in by `createPractice`). */
  pairs: { teachingFile: string; starterFile: string; referenceOid: string; starterOid: string }[];
  /** The chapter's lab ids (which throws of a starter are scaffold throws). */
  labIds: string[];
  /** Extra documents the audit checks besides the files (the manifest's lab texts). */
  extraDocuments: AuditDocument[];
  /** Paths of files copied verbatim from the parent commit (the audit's inherited files). */
  inherited: Set<string>;
}

/**
 * Plans the folder: the parent tree (LEARNING.md moved to COURSE.md), the focused tests
 * and starters from the target, the fault-free manifest, the marker and the guide. Pure;
 * throws `PRACTICE_UNAVAILABLE` for a chapter without starters.
 */
export function planPractice(input: {
  checkpoint: Pick<Checkpoint, "chapter" | "teachingFiles" | "history">;
  parentEntries: readonly TreeEntry[];
  targetEntries: readonly TreeEntry[];
  manifestText: string;
  linkedModules: boolean;
  /** Plan without rendering the manifest copy (for auditing an existing folder). */
  skipManifestText?: boolean;
}): PracticePlan {
  const { chapter, history } = input.checkpoint;
  const m = chapter.manifest;
  if (m.starters.length === 0) {
    throw new CourseError(
      "PRACTICE_UNAVAILABLE",
      `第 ${m.id} 章还没有 starter（尚未做成互动章节），不能生成练习目录；可以用 npm run checkpoint -w @pi/course -- ${m.id} 查看它的 parent 和 target`,
    );
  }
  const target = new Map(input.targetEntries.map((e) => [e.path, e]));
  const fromTarget = (p: string): TreeEntry => {
    const e = target.get(p);
    if (!e) throw new CourseError("HISTORY_MISMATCH", `target ${chapter.target.slice(0, 12)} 中没有 ${p}`);
    return e;
  };
  const parentPaths = new Set(input.parentEntries.map((e) => e.path));
  if (parentPaths.has(LEARNING) && parentPaths.has(COURSE_GUIDE)) {
    throw new CourseError("PRACTICE_CONFLICT", `parent 里已经有 ${COURSE_GUIDE}，无法把课程指南 ${LEARNING} 改名保存`);
  }
  const files: OutputFile[] = input.parentEntries.map((e) => (e.path === LEARNING ? { ...e, path: COURSE_GUIDE } : { ...e }));
  for (const test of m.focusedTests) files.push({ ...fromTarget(test) });
  for (const given of [...m.provided, ...(m.text === undefined ? [] : [m.text])]) files.push({ ...fromTarget(given) });
  // The challenge tier: the chapter's hardening tests and what they import, run on the learner's code by `lab NN --challenge`.
  for (const extra of [...m.challenge.map((t) => t.file), ...m.challengeSupport]) files.push({ ...fromTarget(extra) });
  for (const s of m.starters) files.push({ ...fromTarget(s.from), path: s.to });
  for (const s of m.starters) files.push({ ...fromTarget(s.from), path: starterCopyPath(s.to) });
  files.push({ path: m.manifestPath, content: input.skipManifestText ? "" : learnerManifestText(input.manifestText, m) });
  const marker: PracticeMarker = { chapter: m.id, parent: chapter.parent, target: chapter.target, source: history.source, createdBy: "practice" };
  files.push({ path: PRACTICE_MARKER, content: JSON.stringify(marker, null, 2) + "\n" });
  const throughChapters = history.chapters.map((c) => c.id).filter((id) => Number(id) <= Number(m.id));
  files.push({
    path: LEARNING,
    content: renderLearningGuide({
      manifest: m,
      parent: chapter.parent,
      target: chapter.target,
      source: history.source,
      teachingFiles: input.checkpoint.teachingFiles,
      throughChapters,
      linkedModules: input.linkedModules,
    }),
  });
  const seen = new Set<string>();
  for (const f of files) {
    if (seen.has(f.path)) throw new CourseError("PRACTICE_CONFLICT", `练习目录里 ${f.path} 会被写两次`);
    seen.add(f.path);
  }
  const labText = m.labs.flatMap((lab) => [lab.title, lab.scaffoldError, ...lab.hints]).join("\n");
  return {
    files,
    marker,
    pairs: m.starters.map((s) => ({ teachingFile: s.to, starterFile: s.from, referenceOid: fromTarget(s.to).oid, starterOid: fromTarget(s.from).oid })),
    labIds: m.labs.map((lab) => lab.id),
    extraDocuments: [{ file: `${m.manifestPath}（Lab 与提示文本）`, text: labText }],
    inherited: new Set(input.parentEntries.map((e) => (e.path === LEARNING ? COURSE_GUIDE : e.path))),
  };
}

/** Steps of `createPractice`, reported to `hooks.afterStep` (tests use it to inject failures). */
export type PracticeStep = "checkpoint" | "destination" | "files" | "audit" | "modules";

export interface CreatePracticeOptions {
  /** The course repository (a git work tree). */
  repo: string;
  /** Chapter id, e.g. `12`. */
  id: string;
  /** Destination (absolute, or relative to `cwd`); default `pi-practice-NN` beside the repo. */
  dest?: string;
  /** What a relative `dest` is relative to; default `process.cwd()`. */
  cwd?: string;
  /** Source revision of the teaching history; default `HEAD`. */
  source?: string;
  /** Link `node_modules` to the repository's instead of requiring `npm install`. */
  linkModules?: boolean;
  /** Aborting stops the work, removes the temporary folder and rejects with `ABORTED`. */
  signal?: AbortSignal;
  /** Point the teaching branch at the history the folder comes from (default true; `verify` decides for itself). */
  publish?: boolean;
  /** The chapter as the caller already resolved it (for `id`, from `source`): saves generating the history again. */
  checkpoint?: Checkpoint;
  hooks?: { afterStep?(step: PracticeStep, tempDir: string | undefined): void | Promise<void> };
}

export interface PracticeResult {
  dest: string;
  chapter: string;
  title: string;
  parent: string;
  target: string;
  source: string;
  /** Number of files written. */
  files: number;
  /** Files (and extra documents) the leak audit read. */
  audited: number;
}

/**
 * Creates the practice folder of chapter `id` (see the module comment for its content and
 * safety rules). Either the destination appears complete and leak-free, or nothing is
 * left behind: refusals (`DEST_EXISTS`, `DEST_INSIDE_REPO`, …) happen before anything is
 * written; failures, leaks (`LEAK_DETECTED`) and aborts remove the temporary folder.
 */
export async function createPractice(options: CreatePracticeOptions): Promise<PracticeResult> {
  const { repo, id, signal } = options;
  const gitOptions: GitOptions = signal ? { signal } : {};
  const step = async (name: PracticeStep, temp: string | undefined): Promise<void> => {
    await options.hooks?.afterStep?.(name, temp);
    if (signal?.aborted) throw new CourseError("ABORTED", "已中断，没有留下任何文件");
  };
  const dest = resolveDestination(repo, id, options.dest, options.cwd ?? process.cwd());
  await checkDestination(repo, dest, id);
  const repoModules = path.join(repo, "node_modules");
  if (options.linkModules && !existsSync(repoModules)) {
    throw new CourseError("MODULES_MISSING", `课程仓库里还没有 node_modules，无法链接：先在 ${repo} 运行 npm install，或去掉 --link-modules`);
  }
  const checkpoint = options.checkpoint ?? (await resolveCheckpoint(repo, id, { ...(options.source ? { source: options.source } : {}), ...gitOptions }));
  await step("checkpoint", undefined);
  const { chapter } = checkpoint;
  const [parentEntries, targetEntries] = await Promise.all([listTree(repo, chapter.parent, gitOptions), listTree(repo, chapter.target, gitOptions)]);
  const manifestEntry = targetEntries.find((e) => e.path === chapter.manifest.manifestPath);
  if (!manifestEntry) throw new CourseError("HISTORY_MISMATCH", `target 中没有 ${chapter.manifest.manifestPath}`);
  const manifestText = (await readObjects(repo, [manifestEntry.oid], gitOptions)).get(manifestEntry.oid)!.toString("utf8");
  const plan = planPractice({ checkpoint, parentEntries, targetEntries, manifestText, linkedModules: options.linkModules === true });
  await checkDestination(repo, dest, id); // again: resolving the checkpoint took a moment

  const temp = await makeScratchDir(path.dirname(dest), `.${path.basename(dest)}.partial-`).catch((error: unknown) => {
    throw readOnlyParent(path.dirname(dest), error) ?? error;
  });
  try {
    await step("destination", temp);
    await writeFiles(repo, temp, plan.files, gitOptions);
    await step("files", temp);
    assertNoLeaks(await auditWithPlan(repo, temp, plan, gitOptions));
    await step("audit", temp);
    if (options.linkModules) await linkNodeModules(temp, repoModules);
    await step("modules", temp);
    await chmod(temp, 0o755); // mkdtemp makes it private; the result is an ordinary folder
    if (await lstat(dest).then(() => true, () => false)) {
      throw new CourseError("DEST_EXISTS", `${dest} 在生成期间被创建了；没有改动它`);
    }
    // The teaching branch moves only with a folder to show for it.
    const publish = options.publish !== false;
    if (publish) await publishHistory(repo, checkpoint.history, signal ? { signal } : {});
    try {
      await handOverScratchDir(temp, dest);
    } catch (error) {
      if (publish) await unpublishHistory(repo, checkpoint.history);
      throw error;
    }
  } catch (error) {
    await removeScratchDir(temp);
    if (signal?.aborted && !(error instanceof CourseError && error.code === "ABORTED")) {
      throw new CourseError("ABORTED", "已中断，没有留下任何文件", { cause: error });
    }
    throw error;
  }
  return {
    dest,
    chapter: chapter.id,
    title: chapter.title,
    parent: chapter.parent,
    target: chapter.target,
    source: checkpoint.history.source,
    files: plan.files.length,
    audited: plan.files.length + plan.extraDocuments.length,
  };
}

async function auditWithPlan(repo: string, dir: string, plan: PracticePlan, gitOptions: GitOptions): Promise<Leak[]> {
  const objects = await readObjects(repo, plan.pairs.flatMap((p) => [p.referenceOid, p.starterOid]), gitOptions);
  const pairs: LeakPair[] = plan.pairs.map((p) => ({
    teachingFile: p.teachingFile,
    starterFile: p.starterFile,
    reference: objects.get(p.referenceOid)!.toString("utf8"),
    starter: objects.get(p.starterOid)!.toString("utf8"),
  }));
  const leaks = await auditLeaks(dir, pairs, { extra: plan.extraDocuments, inherited: plan.inherited });
  // Build output (`packages/*/dist`) is compiled from the folder's own sources: nothing new.
  // The starter's own leaks come first: they are the cause to fix.
  return [...findStarterLeaks(pairs, plan.labIds), ...leaks.filter((leak) => !/^packages\/[^/]+\/dist\//.test(leak.file))];
}

