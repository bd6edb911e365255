/**
 * A small, explicit layer over the git command line: every call names its repository,
 * never inherits a repository location from the environment, and reports failures as
 * `CourseError`s. Only plumbing is used for reading objects, so nothing here touches a
 * working tree, an index or HEAD unless a caller passes its own `GIT_INDEX_FILE`.
 */
import { chmod, mkdir, realpath, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { CourseError } from "../core/errors.js";
import { childEnv, runProcess } from "../core/process.js";

/**
 * Variables that would point git at another repository, index or object store. They are
 * set, for example, while a git hook runs; a command that inherits them would read or
 * write the wrong repository, so they are always removed.
 */
const LOCATION_VARIABLES = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_INDEX_FILE",
  "GIT_OBJECT_DIRECTORY",
  "GIT_ALTERNATE_OBJECT_DIRECTORIES",
  "GIT_COMMON_DIR",
  "GIT_NAMESPACE",
  "GIT_PREFIX",
  "GIT_QUARANTINE_PATH",
];

export interface GitOptions {
  /** Extra environment (e.g. `GIT_INDEX_FILE`, author identity). */
  env?: Record<string, string>;
  /** Data written to git's stdin. */
  input?: string | Uint8Array;
  /** Aborting kills the git process; the call then rejects with `ABORTED`. */
  signal?: AbortSignal;
}

function gitEnv(extra: Record<string, string> | undefined): NodeJS.ProcessEnv {
  // Never wait for a password or an editor: these commands are not interactive.
  return childEnv({ without: LOCATION_VARIABLES, set: { GIT_TERMINAL_PROMPT: "0", GIT_EDITOR: "true", ...extra } });
}

/** Signals that end git because the user interrupted the command (they reach the whole process group). */
const INTERRUPTIONS = new Set(["SIGINT", "SIGTERM", "SIGHUP"]);

interface RawResult {
  stdout: Uint8Array;
  stderr: string;
  exitCode: number;
}

async function run(repo: string, args: readonly string[], options: GitOptions): Promise<RawResult> {
  try {
    const result = await runProcess("git", args, {
      cwd: repo,
      env: gitEnv(options.env),
      ...(options.input !== undefined ? { input: options.input } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    // Ended by an interruption: ours (the signal), or the terminal's Ctrl-C reaching git too.
    if (options.signal?.aborted || INTERRUPTIONS.has(String(result.signal))) throw new CourseError("ABORTED", "已中断");
    return { stdout: result.stdout, stderr: result.stderr.toString("utf8"), exitCode: result.code ?? 1 };
  } catch (error) {
    if (error instanceof CourseError) throw error;
    if (options.signal?.aborted) throw new CourseError("ABORTED", "已中断", { cause: error });
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new CourseError("GIT_FAILED", "找不到 git 命令：请先安装 git 并确认它在 PATH 中", { cause: error });
    throw new CourseError("GIT_FAILED", `git ${args.join(" ")} 无法运行：${(error as Error).message}`, { cause: error });
  }
}

function failure(args: readonly string[], result: RawResult): CourseError {
  const detail = result.stderr.trim().split("\n")[0] ?? "";
  return new CourseError("GIT_FAILED", `git ${args.slice(0, 3).join(" ")} 失败（退出码 ${result.exitCode}）：${detail}`);
}

/** Runs git in `repo` and returns its stdout as text without the final newline; throws `GIT_FAILED`. */
export async function git(repo: string, args: readonly string[], options: GitOptions = {}): Promise<string> {
  const result = await run(repo, args, options);
  if (result.exitCode !== 0) throw failure(args, result);
  return Buffer.from(result.stdout).toString("utf8").replace(/\n$/, "");
}

/** Runs git in `repo` and returns its raw stdout; throws `GIT_FAILED`. */
export async function gitBytes(repo: string, args: readonly string[], options: GitOptions = {}): Promise<Buffer> {
  const result = await run(repo, args, options);
  if (result.exitCode !== 0) throw failure(args, result);
  return Buffer.from(result.stdout);
}

/** Runs git in `repo` and reports success or failure without throwing (for yes/no questions). */
export async function gitOk(repo: string, args: readonly string[], options: GitOptions = {}): Promise<{ ok: boolean; stdout: string }> {
  const result = await run(repo, args, options);
  return { ok: result.exitCode === 0, stdout: Buffer.from(result.stdout).toString("utf8").replace(/\n$/, "") };
}

/**
 * Guarantees that `dir` is the top level of a git work tree (not merely inside one: a
 * practice folder created inside some other repository must not be mistaken for the
 * course repository). Returns the canonical path; throws `NOT_A_GIT_REPO`.
 */
export async function requireRepoRoot(dir: string, options: GitOptions = {}): Promise<string> {
  const canonical = await realpath(dir);
  const { ok, stdout } = await gitOk(canonical, ["rev-parse", "--show-toplevel"], options);
  const top = ok ? await realpath(stdout).catch(() => stdout) : undefined;
  if (top !== canonical) {
    throw new CourseError("NOT_A_GIT_REPO", `${canonical} 不是 git 仓库的根目录：这个命令要在课程仓库（git clone 得到的目录）里运行，练习目录里没有 git 历史`);
  }
  return canonical;
}

/**
 * True when tracked files of `repo`'s working tree or index differ from HEAD (untracked
 * files do not count; false when git cannot tell). Asked with `--no-optional-locks`, so
 * git does not refresh and rewrite the user's index (or take its lock) to answer.
 */
export async function hasUncommittedChanges(repo: string, options: GitOptions = {}): Promise<boolean> {
  const { ok, stdout } = await gitOk(repo, ["--no-optional-locks", "status", "--porcelain", "--untracked-files=no"], {
    ...options,
    env: { ...options.env, GIT_OPTIONAL_LOCKS: "0" },
  });
  return ok && stdout.trim() !== "";
}

/** True when `repo` is a shallow clone (its history is cut off). */
export async function isShallow(repo: string, options: GitOptions = {}): Promise<boolean> {
  return (await git(repo, ["rev-parse", "--is-shallow-repository"], options)) === "true";
}

/**
 * Resolves `rev` to a full commit id. A revision that cannot be found in a shallow clone
 * is reported as `HISTORY_INCOMPLETE` (with the fix); otherwise a `HEAD` that names no
 * commit yet is `GIT_FAILED`, and any other revision `SOURCE_UNKNOWN` (it was typed by the
 * user: a command-line mistake).
 */
export async function resolveCommit(repo: string, rev: string, options: GitOptions = {}): Promise<string> {
  const { ok, stdout } = await gitOk(repo, ["rev-parse", "--verify", "--quiet", "--end-of-options", `${rev}^{commit}`], options);
  if (ok) return stdout.trim();
  if (await isShallow(repo, options)) {
    throw new CourseError("HISTORY_INCOMPLETE", `在浅克隆中找不到提交 ${rev}：运行 git fetch --unshallow 取回完整历史后再试`);
  }
  if (rev === "HEAD") throw new CourseError("GIT_FAILED", "HEAD 还没有指向任何提交：先提交一次再运行");
  throw new CourseError("SOURCE_UNKNOWN", `找不到提交 ${JSON.stringify(rev)}：--source 要写这个仓库里的分支名、标签或提交 id（见 git log --oneline）`);
}

/** One entry of a recursive `git ls-tree`. */
export interface TreeEntry {
  /** `100644`, `100755`, `120000` (symlink) or `160000` (submodule). */
  mode: string;
  type: "blob" | "commit" | "tree";
  oid: string;
  /** Repo-relative, `/`-separated. */
  path: string;
}

/**
 * Every file (blob, symlink, submodule) of `treeish`, recursively, in git's order; with
 * `withTrees`, every folder too (as `tree` entries, each before its contents).
 */
export async function listTree(repo: string, treeish: string, options: GitOptions & { withTrees?: boolean } = {}): Promise<TreeEntry[]> {
  const out = await gitBytes(repo, ["ls-tree", "-r", ...(options.withTrees === true ? ["-t"] : []), "-z", "--full-tree", treeish], options);
  const entries: TreeEntry[] = [];
  for (const record of out.toString("utf8").split("\0")) {
    if (record === "") continue;
    const tab = record.indexOf("\t");
    const [mode, type, oid] = record.slice(0, tab).split(" ");
    entries.push({ mode: mode!, type: type as TreeEntry["type"], oid: oid!, path: record.slice(tab + 1) });
  }
  return entries;
}

/**
 * Reads many objects in one `git cat-file --batch` call. Guarantees every requested id is
 * in the result; a missing object (shallow or partial clone) is `HISTORY_INCOMPLETE`.
 */
export async function readObjects(repo: string, oids: readonly string[], options: GitOptions = {}): Promise<Map<string, Buffer>> {
  const unique = [...new Set(oids)];
  const result = new Map<string, Buffer>();
  if (unique.length === 0) return result;
  const out = await gitBytes(repo, ["cat-file", "--batch"], { ...options, input: unique.join("\n") + "\n" });
  let pos = 0;
  for (const oid of unique) {
    const eol = out.indexOf(0x0a, pos);
    const header = out.subarray(pos, eol).toString("utf8");
    if (header.endsWith(" missing") || header.endsWith(" ambiguous")) {
      throw new CourseError("HISTORY_INCOMPLETE", `仓库缺少对象 ${oid}（浅克隆或部分克隆？）：运行 git fetch --unshallow，或重新完整 clone 课程仓库`);
    }
    const size = Number(header.split(" ")[2]);
    result.set(oid, out.subarray(eol + 1, eol + 1 + size));
    pos = eol + 1 + size + 1;
  }
  return result;
}

/**
 * Guarantees every object in `oids` is present locally (one `cat-file --batch-check`);
 * otherwise throws `HISTORY_INCOMPLETE`, so a shallow or damaged clone fails with advice
 * instead of a git error halfway through.
 */
export async function requireObjects(repo: string, oids: readonly string[], options: GitOptions = {}): Promise<void> {
  const unique = [...new Set(oids)];
  if (unique.length === 0) return;
  const out = await git(repo, ["cat-file", "--batch-check"], { ...options, input: unique.join("\n") + "\n" });
  const missing = out.split("\n").find((line) => line.endsWith(" missing") || line.endsWith(" ambiguous"));
  if (missing) {
    throw new CourseError(
      "HISTORY_INCOMPLETE",
      `仓库缺少对象 ${missing.split(" ")[0]}（浅克隆或部分克隆？）：运行 git fetch --unshallow，或重新完整 clone 课程仓库`,
    );
  }
}

/** Reads one file of a commit as UTF-8 text; throws `GIT_FAILED` if it does not exist there. */
export async function readFileAt(repo: string, commit: string, file: string, options: GitOptions = {}): Promise<string> {
  return (await gitBytes(repo, ["cat-file", "blob", `${commit}:${file}`], options)).toString("utf8");
}

/** A file to write: either a git object or literal content. */
export type OutputFile = { path: string; mode: string; oid: string; type?: TreeEntry["type"] } | { path: string; mode?: string; content: string | Buffer };

/**
 * Writes `files` under `dest` (which must exist), keeping git's modes: executables get
 * 0755, symlinks become symlinks, submodules become empty folders (as `git archive` does).
 * Object contents are fetched in one batch. Paths are checked to stay inside `dest`.
 */
export async function writeFiles(repo: string, dest: string, files: readonly OutputFile[], options: GitOptions = {}): Promise<void> {
  const objects = await readObjects(
    repo,
    files.flatMap((f) => ("oid" in f && f.type !== "commit" && f.mode !== "160000" ? [f.oid] : [])),
    options,
  );
  for (const file of files) {
    options.signal?.throwIfAborted();
    const target = path.resolve(dest, ...file.path.split("/"));
    const rel = path.relative(dest, target);
    if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) {
      throw new CourseError("GIT_FAILED", `拒绝写到目录之外的路径：${file.path}`);
    }
    await mkdir(path.dirname(target), { recursive: true });
    if (file.mode === "160000") {
      await mkdir(target, { recursive: true });
      continue;
    }
    const data = "oid" in file ? objects.get(file.oid)! : file.content;
    if (file.mode === "120000") {
      await symlink(data.toString(), target);
      continue;
    }
    await writeFile(target, data);
    if (file.mode === "100755") await chmod(target, 0o755);
  }
}
