/**
 * The teaching history: a generated branch `course/build-your-own-pi` with one
 * `course(base)` commit and then one `course(NN): <title>` commit per chapter, built from
 * the committed content of one source commit of `main`.
 *
 * Guarantees
 * - Chapter N's tree is the source tree minus every file claimed by a later chapter; the
 *   base is the source tree minus every claimed file. So `git diff parent target` of a
 *   chapter is exactly the files its manifest claims (checked by `verifyLayer`).
 * - Commit ids depend only on content: author, committer, dates and encoding are fixed,
 *   signing is off, and the message records the source *tree* (not the source commit).
 *   Two clones of the same content get the same ids.
 * - The trees and commits are computed in memory (`objects.ts`), byte for byte as git
 *   writes them, and the missing ones written with `git hash-object`: no index file is
 *   used at all, and the user's working tree, index, HEAD and configuration are never
 *   touched. The branch is moved with a compare-and-swap
 *   `update-ref`, only when its tip is provably what the tooling generates (generating its
 *   recorded source again gives that very commit), never to a history with fewer chapters
 *   unless asked, and only by `publishHistory`, which commands call once they have
 *   succeeded: a command that fails leaves the branch as it was.
 */
import { writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { CourseError } from "../core/errors.js";
import { COURSE_BRANCH } from "../core/paths.js";
import { git, gitOk, listTree, readObjects, requireObjects, requireRepoRoot, resolveCommit, type GitOptions, type TreeEntry } from "./git.js";
import { homesIn } from "./chapter-home.js";
import { catalogPath, withCatalog } from "./catalog.js";
import { byCourseOrder, claimHome, parseManifest, unknownChapter, validateCourse, type ChapterManifest } from "./manifest.js";
import { withScratchDir } from "../core/scratch.js";
import { commitObject, TreePruner, type CommitIdentity, type GitObject } from "./objects.js";

/** The generated branch (named in `core/paths.ts`, where the command table can read it without loading git). */
export { COURSE_BRANCH };

/** Bumped whenever the way commits are generated changes, so old branches are rebuilt (2: each chapter claims its whole home, `chapter-home.ts`). */
export const HISTORY_BUILDER_VERSION = "2";

/** The fixed identity and date of every generated commit. */
export const COURSE_IDENTITY = {
  name: "pi-course",
  email: "course@pi-course.invalid",
  date: "2026-01-01T00:00:00Z",
} as const;

const TRAILER_SOURCE_TREE = "Course-Source-Tree";
const TRAILER_BUILDER = "Course-Builder";
const TRAILER_CHAPTER = "Course-Chapter";

/** One chapter on the teaching branch. */
export interface ChapterCommit {
  id: string;
  title: string;
  /** The chapter's commit (its end state). */
  target: string;
  /** The previous chapter's commit, or `course(base)` for the first chapter. */
  parent: string;
  /** The tree id of `target`. */
  tree: string;
  manifest: ChapterManifest;
}

/** The teaching history as built (or found up to date) for one source commit. */
export interface CourseHistory {
  /** The source commit of `main` the history was generated from. */
  source: string;
  /** Its tree id (recorded in every generated commit). */
  sourceTree: string;
  branch: string;
  /** The `course(base)` commit. */
  base: string;
  /** The branch tip (the last chapter, or the base when there are no chapters). */
  tip: string;
  /** Chapters in course order. */
  chapters: ChapterCommit[];
  /** True when the existing branch already was exactly this history (`branchAction` is `reuse`). */
  reused: boolean;
  /** What becomes of the branch: left as it is (already this history), moved here, or kept (it has a newer course). */
  branchAction: "reuse" | "move" | "keep";
  /** The branch tip before, when there was one. */
  previousTip?: string;
  /** Chapters the kept (or, with `force`, replaced) branch has and this history lacks. */
  newerChapters: string[];
  /** Every file path of the source commit. */
  sourceFiles: string[];
}

export interface BuildHistoryOptions {
  /** Revision of the source commit; default `HEAD`. */
  source?: string;
  /** Branch to write; default `COURSE_BRANCH`. */
  branch?: string;
  /** Move the branch even when it already matches, or when it holds a newer course (never past a tip that is not provably generated). */
  force?: boolean;
  /** The chapter the caller needs: checked against the source's manifests before anything is written. */
  chapter?: string;
  signal?: AbortSignal;
}

/**
 * Reads and validates every chapter manifest of `commit` (not of the working tree), in
 * course order, and checks the course-wide rules against that commit's files.
 */
export async function readManifestsAt(repo: string, commit: string, entries: readonly TreeEntry[], options: GitOptions = {}): Promise<ChapterManifest[]> {
  const blobs = entries.filter((e) => e.type === "blob");
  const homes = homesIn(blobs.map((e) => e.path));
  const manifestEntries = homes.map((home) => blobs.find((e) => e.path === home.manifestPath)!);
  const catalogs = homes.map((home) => blobs.find((e) => e.path === catalogPath(home.home)));
  const objects = await readObjects(
    repo,
    [...manifestEntries, ...catalogs.filter((e) => e !== undefined)].map((e) => e.oid),
    options,
  );
  const paths = blobs.map((e) => e.path);
  // Each chapter claims its whole home: every file under it goes into the chapter's commit; its catalog's faults are its faults.
  const manifests = manifestEntries
    .map((e, i) => {
      const catalog = catalogs[i];
      return withCatalog(claimHome(parseManifest(objects.get(e.oid)!.toString("utf8"), e.path), paths), catalog && objects.get(catalog.oid)!.toString("utf8"));
    })
    .sort(byCourseOrder);
  validateCourse(manifests, new Set(entries.map((e) => e.path)), `源提交 ${commit.slice(0, 12)} `);
  return manifests;
}

function commitMessage(subject: string, sourceTree: string, chapter?: string): string {
  const trailers = [
    ...(chapter ? [`${TRAILER_CHAPTER}: ${chapter}`] : []),
    `${TRAILER_SOURCE_TREE}: ${sourceTree}`,
    `${TRAILER_BUILDER}: ${HISTORY_BUILDER_VERSION}`,
  ];
  return `${subject}\n\n${trailers.join("\n")}\n`;
}

/** The subject of a chapter's generated commit. */
export function chapterSubject(manifest: Pick<ChapterManifest, "id" | "title">): string {
  return `course(${manifest.id}): ${manifest.title}`;
}

/** The subject of the base commit. */
export const BASE_SUBJECT = "course(base): shared configuration, tooling and documentation";

interface ChainCommit {
  commit: string;
  tree: string;
  parents: string[];
  subject: string;
  trailers: Map<string, string>;
  author: string;
}

/** Reads up to `limit` first-parent commits from `tip`, newest first. */
async function readChain(repo: string, tip: string, limit: number, options: GitOptions): Promise<ChainCommit[]> {
  const out = await git(repo, ["log", "--first-parent", `--max-count=${limit}`, "--format=%H%x1f%T%x1f%P%x1f%an <%ae>%x1f%B%x1e", tip, "--"], options);
  return out
    .split("\x1e")
    .map((record) => record.replace(/^\n/, ""))
    .filter((record) => record !== "")
    .map((record) => {
      const [commit, tree, parents, author, body] = record.split("\x1f");
      const lines = (body ?? "").split("\n");
      const trailers = new Map<string, string>();
      for (const line of lines) {
        const m = /^([A-Za-z-]+): (.*)$/.exec(line);
        if (m) trailers.set(m[1]!, m[2]!);
      }
      return { commit: commit!, tree: tree!, parents: parents ? parents.split(" ") : [], subject: lines[0] ?? "", trailers, author: author! };
    });
}

const GENERATED_AUTHOR = `${COURSE_IDENTITY.name} <${COURSE_IDENTITY.email}>`;

/** True when `commit` says it was generated by the tooling (its author and its source-tree trailer). */
function looksGenerated(commit: ChainCommit): boolean {
  return commit.author === GENERATED_AUTHOR && commit.trailers.has(TRAILER_SOURCE_TREE);
}

/** The commits of a teaching history, as generated (objects written, no ref moved). */
interface GeneratedHistory {
  base: string;
  chapters: { target: string; parent: string; tree: string }[];
  tip: string;
}

/** A teaching history computed from a listing (`historyObjects`): its commits, and the new tree and commit objects they need. */
export interface PlannedHistory extends GeneratedHistory {
  objects: GitObject[];
}

/** The fixed identity of generated commits, as `objects.ts` writes it. */
const GENERATED_BY: CommitIdentity = { name: COURSE_IDENTITY.name, email: COURSE_IDENTITY.email, seconds: Date.parse(COURSE_IDENTITY.date) / 1000 };

/**
 * The teaching history of `sourceTree`, computed from its listing alone (`entries`, every file
 * and folder as `git ls-tree -r -t` lists them) and its chapters (`manifests`, in course
 * order), without git: chapter N's tree is the source tree minus every file a later chapter
 * claims (so the last chapter's is the source tree itself), the base's is the source tree
 * minus every claimed file, and folders left empty disappear. The base has no parent and each
 * chapter's parent is the commit before it; author, committer, date and message are fixed
 * (`COURSE_IDENTITY`, the subject, the chapter and source-tree trailers), so the same listing
 * and manifests give the same ids on every machine. `objects` holds the trees and commits the
 * source does not already have, to be written by `writeObjects`.
 */
export function historyObjects(sourceTree: string, entries: readonly TreeEntry[], manifests: readonly ChapterManifest[]): PlannedHistory {
  const pruner = new TreePruner(sourceTree, entries);
  // From the last chapter (the source tree itself) down to the base.
  const trees: string[] = [];
  const removed = new Set<string>();
  for (let i = manifests.length - 1; i >= 0; i--) {
    trees[i] = pruner.prune(removed);
    for (const file of manifests[i]!.files) removed.add(file);
  }
  const base = commitObject(pruner.prune(removed), undefined, GENERATED_BY, commitMessage(BASE_SUBJECT, sourceTree));
  const commits: GitObject[] = [base];
  const chapters: { target: string; parent: string; tree: string }[] = [];
  let parent = base.oid;
  for (const [i, m] of manifests.entries()) {
    const target = commitObject(trees[i]!, parent, GENERATED_BY, commitMessage(chapterSubject(m), sourceTree, m.id));
    commits.push(target);
    chapters.push({ target: target.oid, parent, tree: trees[i]! });
    parent = target.oid;
  }
  return { base: base.oid, chapters, tip: parent, objects: [...pruner.created, ...commits] };
}

/**
 * The commits of the teaching history of `sourceTree` (`historyObjects`); with `write`, the
 * objects the repository lacks are written (`writeObjects`). Moves no ref.
 */
async function generateHistory(
  repo: string,
  sourceTree: string,
  entries: readonly TreeEntry[],
  manifests: readonly ChapterManifest[],
  options: GitOptions,
  write: boolean,
): Promise<GeneratedHistory> {
  const { objects, ...history } = historyObjects(sourceTree, entries, manifests);
  if (write) await writeObjects(repo, objects, options);
  return history;
}

/**
 * Writes the objects of `objects` that the repository lacks: one `cat-file --batch-check`
 * to find them, then one `hash-object -w --stdin-paths` per object type, reading files from
 * a scratch folder (removed afterwards, also on an interruption). Git's own ids for them
 * must equal the computed ones (`HISTORY_MISMATCH` otherwise: the computation is wrong).
 */
async function writeObjects(repo: string, objects: readonly GitObject[], options: GitOptions): Promise<void> {
  const unique = [...new Map(objects.map((o) => [o.oid, o])).values()];
  if (unique.length === 0) return;
  const present = await git(repo, ["cat-file", "--batch-check"], { ...options, input: `${unique.map((o) => o.oid).join("\n")}\n` });
  const missing = new Set(
    present
      .split("\n")
      .filter((line) => line.endsWith(" missing"))
      .map((line) => line.split(" ")[0]!),
  );
  const toWrite = unique.filter((o) => missing.has(o.oid));
  if (toWrite.length === 0) return;
  await withScratchDir(os.tmpdir(), "pi-course-objects-", async (dir) => {
    for (const type of ["tree", "commit"] as const) {
      const ofType = toWrite.filter((o) => o.type === type);
      if (ofType.length === 0) continue;
      const files = ofType.map((_, i) => path.join(dir, `${type}-${i}`));
      await Promise.all(ofType.map((o, i) => writeFile(files[i]!, o.content)));
      const written = (await git(repo, ["hash-object", "-w", "-t", type, "--stdin-paths"], { ...options, input: `${files.join("\n")}\n` })).split("\n");
      const wrong = ofType.findIndex((o, i) => written[i] !== o.oid);
      if (wrong !== -1) {
        throw new CourseError(
          "HISTORY_MISMATCH",
          `生成的 ${type} 对象 ${ofType[wrong]!.oid} 与 git 计算的 ${written[wrong] ?? "（无）"} 不同：课程工具的对象编码有误`,
        );
      }
    }
  });
}

/** The refusal for a branch tip the tooling cannot prove it generated: move it aside first. */
function branchNotOurs(branch: string, tip: string, why: string): CourseError {
  return new CourseError(
    "HISTORY_BRANCH_BUSY",
    `分支 ${branch} 的最新提交 ${tip.slice(0, 12)} ${why}；为了不丢失其中的提交，请先把它改名（git branch -m ${branch} <新名字>）再重试`,
  );
}

/**
 * Proves that the branch tip `tip` is exactly what this tooling generates: its newest commit
 * names the source tree it was generated from, and generating that tree's history again
 * gives `tip` itself, byte for byte (so a commit made on the branch, an amended commit that
 * kept the author and trailers, or an older builder's output all fail the proof). Returns
 * the chapter ids of that history; throws `HISTORY_BRANCH_BUSY` (with the command to move
 * the branch aside) when the proof fails.
 */
async function proveGenerated(repo: string, branch: string, tip: string, options: GitOptions): Promise<string[]> {
  const [head] = await readChain(repo, tip, 1, options);
  if (head === undefined || !looksGenerated(head)) throw branchNotOurs(branch, tip, "不是课程工具生成的");
  const sourceTree = head.trailers.get(TRAILER_SOURCE_TREE)!;
  if (head.trailers.get(TRAILER_BUILDER) !== HISTORY_BUILDER_VERSION) {
    throw branchNotOurs(branch, tip, `是另一版课程工具（${TRAILER_BUILDER}: ${head.trailers.get(TRAILER_BUILDER) ?? "无"}）生成的，无法确认它没有被改动过`);
  }
  let again: GeneratedHistory;
  let manifests: ChapterManifest[];
  try {
    const entries = await listTree(repo, sourceTree, { ...options, withTrees: true });
    manifests = await readManifestsAt(
      repo,
      sourceTree,
      entries.filter((e) => e.type !== "tree"),
      options,
    );
    again = await generateHistory(repo, sourceTree, entries, manifests, options, false);
  } catch (error) {
    if (error instanceof CourseError && error.code === "ABORTED") throw error;
    throw branchNotOurs(branch, tip, "无法按它记录的源树重新生成");
  }
  if (again.tip !== tip) throw branchNotOurs(branch, tip, "与课程工具按同一源树生成的结果不同（被手动修改或 amend 过）");
  return manifests.map((m) => m.id);
}

/** Fails with `HISTORY_BRANCH_BUSY` if `branch` is checked out in any work tree of `repo`. */
async function refuseCheckedOut(repo: string, branch: string, options: GitOptions): Promise<void> {
  const out = await git(repo, ["worktree", "list", "--porcelain"], options);
  if (out.split("\n").includes(`branch refs/heads/${branch}`)) {
    throw new CourseError("HISTORY_BRANCH_BUSY", `分支 ${branch} 正被检出，无法更新它：先切回 main（git switch main）再重试`);
  }
}

/**
 * Plans the teaching history of the committed content of `options.source` (default
 * `HEAD`): validates every manifest against that commit (`MANIFEST_INVALID`) and, when
 * `options.chapter` is given, that the chapter exists (`CHAPTER_UNKNOWN`), before anything
 * is written; refuses a source that is itself a generated commit
 * (`HISTORY_SOURCE_GENERATED`); writes the history's commits as objects; and decides what
 * becomes of the branch, moving nothing yet (see `publishHistory`):
 * - `reuse`: the branch already is exactly this history;
 * - `move`: the branch is absent, or exactly a history the tooling generated (proved by
 *   generating it again) from another source, and the move loses no chapter;
 * - `keep`: the branch is a proven history with a chapter this source lacks (a newer
 *   course): it is left alone, unless `force`, and the commits here stay unreferenced.
 * A branch tip it cannot prove it generated is `HISTORY_BRANCH_BUSY`, `force` or not; so is
 * a branch checked out in a work tree when it would have to move.
 */
export async function planHistory(repo: string, options: BuildHistoryOptions = {}): Promise<CourseHistory> {
  const branch = options.branch ?? COURSE_BRANCH;
  const gitOptions: GitOptions = options.signal ? { signal: options.signal } : {};
  await requireRepoRoot(repo, gitOptions);
  const source = await resolveCommit(repo, options.source ?? "HEAD", gitOptions);
  const [sourceCommit] = await readChain(repo, source, 1, gitOptions);
  if (sourceCommit !== undefined && looksGenerated(sourceCommit)) {
    const chapter = sourceCommit.trailers.get(TRAILER_CHAPTER);
    throw new CourseError(
      "HISTORY_SOURCE_GENERATED",
      `源提交 ${source.slice(0, 12)} 是课程工具生成的${chapter === undefined ? " course(base) " : `第 ${chapter} 章`}提交，不是 main 上的提交；教学历史要从 main 生成：先 git switch main（或加 --source main）再运行`,
    );
  }
  const sourceTree = await git(repo, ["rev-parse", `${source}^{tree}`], gitOptions);
  const listing = await listTree(repo, source, { ...gitOptions, withTrees: true });
  const entries = listing.filter((e) => e.type !== "tree");
  await requireObjects(
    repo,
    entries.filter((e) => e.type === "blob").map((e) => e.oid),
    gitOptions,
  );
  const manifests = await readManifestsAt(repo, source, entries, gitOptions);
  if (options.chapter !== undefined && !manifests.some((m) => m.id === options.chapter)) {
    throw unknownChapter(
      options.chapter,
      manifests.map((m) => m.id),
    );
  }
  const ref = `refs/heads/${branch}`;
  const current = await gitOk(repo, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], gitOptions);
  const oldTip = current.ok ? current.stdout.trim() : undefined;
  const generated = await generateHistory(repo, sourceTree, listing, manifests, gitOptions, true);

  let branchAction: CourseHistory["branchAction"] = "move";
  let newerChapters: string[] = [];
  if (oldTip === generated.tip) {
    branchAction = options.force ? "move" : "reuse";
  } else if (oldTip !== undefined) {
    const oldChapters = await proveGenerated(repo, branch, oldTip, gitOptions);
    newerChapters = oldChapters.filter((id) => !manifests.some((m) => m.id === id));
    if (newerChapters.length > 0 && !options.force) branchAction = "keep";
  }
  if (branchAction === "move" && generated.tip !== oldTip) await refuseCheckedOut(repo, branch, gitOptions);
  return {
    source,
    sourceTree,
    branch,
    base: generated.base,
    tip: generated.tip,
    chapters: generated.chapters.map((c, i) => ({ ...c, id: manifests[i]!.id, title: manifests[i]!.title, manifest: manifests[i]! })),
    reused: branchAction === "reuse",
    branchAction,
    ...(oldTip !== undefined ? { previousTip: oldTip } : {}),
    newerChapters,
    sourceFiles: entries.map((e) => e.path),
  };
}

/**
 * Points the branch at `history` when `planHistory` decided to move it, with a
 * compare-and-swap against the tip it planned from: a branch moved in the meantime is
 * `HISTORY_BRANCH_BUSY` and stays as it is (a concurrent run that wrote the very same tip
 * is not a conflict: the ids are deterministic). Does nothing for `reuse` and `keep`.
 */
export async function publishHistory(repo: string, history: CourseHistory, options: { signal?: AbortSignal } = {}): Promise<void> {
  if (history.branchAction !== "move" || history.tip === history.previousTip) return;
  const gitOptions: GitOptions = options.signal ? { signal: options.signal } : {};
  const ref = `refs/heads/${history.branch}`;
  const moved = await gitOk(repo, ["update-ref", "-m", "pi-course: generate teaching history", ref, history.tip, history.previousTip ?? ""], gitOptions);
  if (!moved.ok) {
    const now = await gitOk(repo, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], gitOptions);
    if (now.stdout.trim() !== history.tip) {
      throw new CourseError("HISTORY_BRANCH_BUSY", `分支 ${history.branch} 在生成期间被别处改动了，请重试`);
    }
  }
}

/**
 * Undoes `publishHistory` (for a command that fails after publishing): points the branch
 * back at the tip it had, only if it still holds `history.tip`.
 */
export async function unpublishHistory(repo: string, history: CourseHistory): Promise<void> {
  if (history.branchAction !== "move" || history.tip === history.previousTip) return;
  const ref = `refs/heads/${history.branch}`;
  if (history.previousTip === undefined) await gitOk(repo, ["update-ref", "-d", ref, history.tip]);
  else await gitOk(repo, ["update-ref", "-m", "pi-course: undo", ref, history.previousTip, history.tip]);
}

/**
 * `planHistory` and then `publishHistory`: the teaching history of `options.source`, with
 * the branch pointing at it unless it is kept (see `planHistory` for every guarantee).
 */
export async function buildHistory(repo: string, options: BuildHistoryOptions = {}): Promise<CourseHistory> {
  const history = await planHistory(repo, options);
  await publishHistory(repo, history, options.signal ? { signal: options.signal } : {});
  return history;
}

/** A chapter located on the teaching history, with what `checkpoint` prints. */
export interface Checkpoint {
  history: CourseHistory;
  chapter: ChapterCommit;
  /** Files the learner writes: the starters' `to`, or the chapter's source files without a starter. */
  teachingFiles: string[];
  /** `git diff --name-only parent target`, sorted. */
  layer: string[];
}

/**
 * The files a learner writes in a chapter: each starter's `to`, or, for a chapter without
 * starters, its claimed files under a `src/` folder.
 */
export function teachingFilesOf(manifest: ChapterManifest): string[] {
  if (manifest.starters.length > 0) return manifest.starters.map((s) => s.to);
  return manifest.files.filter((f) => f.split("/").includes("src"));
}

/** The chapter `id` of `history`, or `CHAPTER_UNKNOWN` listing the known ones. */
export function findChapter(history: CourseHistory, id: string): ChapterCommit {
  const chapter = history.chapters.find((c) => c.id === id);
  if (!chapter)
    throw unknownChapter(
      id,
      history.chapters.map((c) => c.id),
    );
  return chapter;
}

/**
 * Checks, with git itself, that the chapter has the shape the history promises: its parent
 * is `target^`, and `git diff --name-only parent target` is exactly the claimed files.
 * Returns the layer; throws `HISTORY_MISMATCH`.
 */
export async function verifyLayer(repo: string, chapter: ChapterCommit, options: GitOptions = {}): Promise<string[]> {
  const parent = await git(repo, ["rev-parse", `${chapter.target}^`], options);
  if (parent !== chapter.parent) {
    throw new CourseError("HISTORY_MISMATCH", `第 ${chapter.id} 章：target^ 是 ${parent}，不是记录的 parent ${chapter.parent}`);
  }
  const out = await git(repo, ["diff", "--no-renames", "--name-only", "-z", chapter.parent, chapter.target], options);
  const layer = out
    .split("\0")
    .filter((f) => f !== "")
    .sort();
  const claimed = [...chapter.manifest.files].sort();
  if (layer.join("\n") !== claimed.join("\n")) {
    const extra = layer.filter((f) => !claimed.includes(f));
    const missing = claimed.filter((f) => !layer.includes(f));
    throw new CourseError("HISTORY_MISMATCH", `第 ${chapter.id} 章的 diff 与清单不一致：多出 ${extra.join(", ") || "无"}；缺少 ${missing.join(", ") || "无"}`);
  }
  return layer;
}

/**
 * Plans the history (see `planHistory`: nothing is published, and an unknown chapter is
 * refused before anything is written), locates chapter `id` and verifies its layer. This is
 * what `checkpoint` prints and what `practice` and `verify` start from; each publishes the
 * history with `publishHistory` once it has succeeded.
 */
export async function resolveCheckpoint(repo: string, id: string, options: BuildHistoryOptions = {}): Promise<Checkpoint> {
  const history = await planHistory(repo, { ...options, chapter: id });
  const chapter = findChapter(history, id);
  const layer = await verifyLayer(repo, chapter, options.signal ? { signal: options.signal } : {});
  return { history, chapter, teachingFiles: teachingFilesOf(chapter.manifest), layer };
}
