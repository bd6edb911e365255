/**
 * The practice folder: an answer-free copy of a chapter's starting point.
 *
 * Content (decided in `plan.ts`, documented in the generated LEARNING.md and docs/practice-folder.md):
 * - the chapter's parent tree (every earlier chapter finished, nothing of this chapter),
 *   written from git objects, with no `.git`;
 * - the chapter's focused test file(s), its provided files (code the learner uses but does
 *   not write) and its text, taken from the target;
 * - each starter written over its teaching file: the hand-kept one, or the one derived from
 *   the reference and the chapter's scaffold (`course/starters.ts`). The scaffold itself is not
 *   added: the starter already sits where the learner edits it, and a second copy would
 *   only invite editing the wrong file. `reset` takes the starter from a pristine copy in
 *   `.pi-course/starter/` (the tooling's folder, see `starterCopyPath`);
 * - `chapters/NN-<slug>/chapter.yaml`: the chapter manifest (lab and hint data for `lab` and `hint`)
 *   whose `faults` are reduced to the learner-safe projection of the exercise faults
 *   (`learnerManifestText`): no `find`/`replace`, since those quote the reference;
 * - `.pi-course/practice.json`: the marker that puts the commands in learner mode; it also
 *   records the course repository and the chapter's target commit (for `lab --compare`);
 * - `LEARNING.md`: the guide to this chapter (`guide.ts`, from the template `learning.md`).
 *   The course guide the parent tree holds at that path is kept as `COURSE.md`;
 * - `AGENTS.md`, `CLAUDE.md` (`@AGENTS.md`) and `.agents/skills/pi-course-tutor/SKILL.md`:
 *   the tutoring protocol for the learner's AI agent (`tutor.ts`, from the templates
 *   `agents.md` and `tutor-skill.md`), in place of the parent tree's author-facing files.
 *
 * Safety (`destination.ts`): the destination must not exist and must lie outside the repository; the folder
 * is assembled in `.<name>.partial-<random>` beside the destination, audited for leaks,
 * and renamed into place only when complete. Any failure or interruption removes the
 * temporary folder, so the destination either appears complete or not at all.
 */
import { existsSync } from "node:fs";
import { chmod, lstat, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { CourseError } from "../core/errors.js";
import { handOverScratchDir, linkNodeModules, makeScratchDir, removeScratchDir } from "../core/scratch.js";
import { listTree, readObjects, writeFiles, type GitOptions } from "../course/git.js";
import { publishHistory, resolveCheckpoint, unpublishHistory, type Checkpoint } from "../course/history.js";
import { readStarters } from "../course/starters.js";
import { checkDestination, readOnlyParent, resolveDestination } from "./destination.js";
import { assertNoLeaks, auditLeaks, findStarterLeaks, type Leak, type LeakPair } from "./leak-audit.js";
import { learnerRootPackageJson, planPractice, type PracticePlan } from "./plan.js";
import { installPracticeTooling } from "./tooling.js";
import type { TutorTemplates } from "./tutor.js";

/** Steps of `createPractice`, reported to `hooks.afterStep` (tests use it to inject failures). */
export type PracticeStep = "checkpoint" | "destination" | "files" | "tooling" | "audit" | "modules";

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
  /** The tutoring templates (a test seam; default: the tooling's own). */
  tutorTemplates?: TutorTemplates;
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
  // The manifest's text and what the starters are made of, in one read: each starter as the
  // target has it, a hand-kept file or derived from the target's reference and scaffold.
  const oidAtTarget = (file: string): string => {
    const entry = targetEntries.find((e) => e.path === file);
    if (entry === undefined) throw new CourseError("HISTORY_MISMATCH", `target ${chapter.target.slice(0, 12)} 中没有 ${file}`);
    return entry.oid;
  };
  const starterFiles = chapter.manifest.starters.flatMap((overlay) => (overlay.scaffold === true ? [overlay.from, overlay.to] : [overlay.from]));
  const objects = await readObjects(repo, [manifestEntry.oid, ...starterFiles.map(oidAtTarget)], gitOptions);
  const manifestText = objects.get(manifestEntry.oid)!.toString("utf8");
  const starters = await readStarters(chapter.manifest, async (file) => objects.get(oidAtTarget(file))!.toString("utf8"));
  const plan = planPractice({
    starters,
    checkpoint,
    parentEntries,
    targetEntries,
    manifestText,
    linkedModules: options.linkModules === true,
    course: path.resolve(repo),
    ...(options.tutorTemplates === undefined ? {} : { tutorTemplates: options.tutorTemplates }),
  });
  await checkDestination(repo, dest, id); // again: resolving the checkpoint took a moment

  const temp = await makeScratchDir(path.dirname(dest), `.${path.basename(dest)}.partial-`).catch((error: unknown) => {
    throw readOnlyParent(path.dirname(dest), error) ?? error;
  });
  try {
    await step("destination", temp);
    await writeFiles(repo, temp, plan.files, gitOptions);
    await step("files", temp);
    const tooling = await installWorkshopFree(temp, signal);
    await step("tooling", temp);
    // The compiled tooling comes from the parent tree's own tooling sources: audited as inherited files are.
    assertNoLeaks(await auditWithPlan(repo, temp, { ...plan, inherited: new Set([...plan.inherited, ...tooling]) }, gitOptions));
    await step("audit", temp);
    if (options.linkModules) await linkNodeModules(temp, repoModules);
    await step("modules", temp);
    await chmod(temp, 0o755); // mkdtemp makes it private; the result is an ordinary folder
    if (
      await lstat(dest).then(
        () => true,
        () => false,
      )
    ) {
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

/** Writes the folder's own tooling (compiled, `tooling.ts`) and its root package.json without the workshop's scripts; returns the tooling's files. */
async function installWorkshopFree(folder: string, signal: AbortSignal | undefined): Promise<string[]> {
  const tooling = await installPracticeTooling(folder, signal);
  const manifest = path.join(folder, "package.json");
  if (existsSync(manifest)) await writeFile(manifest, learnerRootPackageJson(await readFile(manifest, "utf8")));
  return tooling;
}

async function auditWithPlan(repo: string, dir: string, plan: PracticePlan, gitOptions: GitOptions): Promise<Leak[]> {
  const objects = await readObjects(
    repo,
    plan.pairs.map((p) => p.referenceOid),
    gitOptions,
  );
  const pairs: LeakPair[] = plan.pairs.map((p) => ({
    teachingFile: p.teachingFile,
    starterFile: p.starter.source,
    reference: objects.get(p.referenceOid)!.toString("utf8"),
    starter: p.starter.text,
    origin: p.starter.origin,
  }));
  const leaks = await auditLeaks(dir, pairs, { extra: plan.extraDocuments, inherited: plan.inherited });
  // The course package's build output is compiled from the folder's own sources: nothing new.
  // The tooling's compiled JavaScript (packages/course-tools/dist) is audited like any file.
  // The starter's own leaks come first: they are the cause to fix.
  return [...findStarterLeaks(pairs, plan.labIds), ...leaks.filter((leak) => !/^packages\/pi-course\/dist\//.test(leak.file))];
}
