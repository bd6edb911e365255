/**
 * What `verify` checks: the course as the author is about to commit it.
 *
 * The authors' workflow (`docs/adding-a-chapter.md`) runs `verify` before committing, so
 * it must see uncommitted work. The record therefore runs on a private clone whose `main`
 * is a snapshot of the repository's working tree: HEAD plus every change `git add -A`
 * would stage (modified, deleted and new files; whatever `.gitignore` excludes stays out).
 * Without changes the snapshot is HEAD itself. The repository is only read: its index,
 * HEAD, branches and objects are left exactly as they were (the snapshot's objects are
 * written into the clone, which shares the repository's objects read-only), and the
 * teaching branch is generated in the clone.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { git, type GitOptions } from "../course/git.js";
import { COURSE_IDENTITY } from "../course/history.js";
import { linkNodeModules } from "../core/scratch.js";

export interface VerifiedSource {
  /** The private clone (a work tree checked out at `commit` on branch `main`). */
  clone: string;
  /** The commit verified: HEAD, or the snapshot of HEAD plus the working tree's changes. */
  commit: string;
  /** The repository's HEAD. */
  head: string;
  /** Paths whose content in `commit` differs from HEAD, sorted (empty when `commit` is HEAD). */
  changed: string[];
}

const SNAPSHOT_ENV: Record<string, string> = {
  GIT_AUTHOR_NAME: COURSE_IDENTITY.name,
  GIT_AUTHOR_EMAIL: COURSE_IDENTITY.email,
  GIT_AUTHOR_DATE: COURSE_IDENTITY.date,
  GIT_COMMITTER_NAME: COURSE_IDENTITY.name,
  GIT_COMMITTER_EMAIL: COURSE_IDENTITY.email,
  GIT_COMMITTER_DATE: COURSE_IDENTITY.date,
};

/**
 * Clones `repo` into `dest` (which must not exist) with `main` at the snapshot of `repo`'s
 * working tree (see the module comment) and checks it out; links the repository's
 * `node_modules` into the clone when there is one. Throws `GIT_FAILED`.
 */
export async function cloneWorkingTree(repo: string, dest: string, options: GitOptions = {}): Promise<VerifiedSource> {
  const head = await git(repo, ["rev-parse", "--verify", "HEAD^{commit}"], options);
  await git(path.dirname(dest), ["clone", "--quiet", "--shared", "--no-checkout", "--", repo, dest], options);
  const gitDir = path.join(dest, ".git");
  // A private index in the clone: `add -A` reads the repository's files and .gitignore
  // but writes objects and the index into the clone only.
  const indexed: GitOptions = { ...options, env: { ...options.env, GIT_INDEX_FILE: path.join(gitDir, "pi-course-snapshot.index") } };
  await git(dest, ["read-tree", head], indexed);
  await git(repo, [`--git-dir=${gitDir}`, `--work-tree=${repo}`, "add", "--all", "--", "."], indexed);
  const tree = await git(dest, ["write-tree"], indexed);
  let commit = head;
  let changed: string[] = [];
  if (tree !== (await git(dest, ["rev-parse", `${head}^{tree}`], options))) {
    const message = `verify: working tree of ${head.slice(0, 12)} with its uncommitted changes\n`;
    commit = await git(dest, ["commit-tree", "--no-gpg-sign", tree, "-p", head, "-F", "-"], {
      ...options,
      env: { ...options.env, ...SNAPSHOT_ENV },
      input: message,
    });
    changed = (await git(dest, ["diff", "--no-renames", "--name-only", "-z", head, commit], options))
      .split("\0")
      .filter((f) => f !== "")
      .sort();
  }
  await git(dest, ["checkout", "--quiet", "-B", "main", commit], options);
  const modules = path.join(repo, "node_modules");
  if (existsSync(modules)) await linkNodeModules(dest, modules);
  return { clone: dest, commit, head, changed };
}
