/**
 * `reset`: give a practice folder's teaching file(s) back their starter state, after saving
 * the learner's current file beside it, so that nothing the learner wrote is ever lost.
 *
 * - `reset 12`: every teaching file of the chapter becomes its starter again;
 * - `reset 12.3`: only the top-level declarations the starter marks `🔨 Lab 12.3` are taken
 *   from the starter (each with its doc comment and marker block); everything else of the
 *   learner's file stays byte for byte. Declarations of the starter that belong to no lab and
 *   that the learner's file no longer has (the `labError` helper, a deleted type) come back
 *   too, so the result compiles. This is the same splice `verify` uses for its staged first
 *   red (`../ts/splice.ts`).
 *
 * The starter comes from the practice folder's pristine copy (`starterCopyPath`). The
 * learner's file is saved as `<file>.reset-<date>-<time>.bak` in its own folder (never
 * overwriting anything; a name that exists gets a `-2`, `-3`, … suffix), a name no compiler
 * or watcher picks up, and only then is the teaching file replaced, atomically. A file that
 * already holds what reset would write is left alone, and nothing is saved.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { CourseError, isCourseError } from "../core/errors.js";
import { writeAtomicSync } from "../core/files.js";
import { courseCommand } from "../core/command-line.js";
import { isPracticeFolder, packageDirOf, PRACTICE_MARKER, starterCopyPath } from "../core/paths.js";
import type { ChapterManifest } from "../course/manifest.js";
import { BACKUP_DIR, readBackupSync } from "../practice/backup.js";
import { spliceLabs } from "../ts/splice.js";
import { projectErrors } from "../ts/source.js";

/** What reset did to one teaching file. */
export interface ResetResult {
  /** The teaching file, relative to the practice folder. */
  file: string;
  /** `restored`: the file now holds the starter (or the lab's starter declarations); `unchanged`: it already did. */
  status: "restored" | "unchanged";
  /** Where the learner's previous file was saved (relative), when it existed and was changed. */
  savedAs?: string;
  /** For a lab reset: the declarations taken from the starter. */
  declarations?: string[];
}

/** `YYYYMMDD-HHMMSS` of `date`, local time. */
function stamp(date: Date): string {
  const two = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}${two(date.getMonth() + 1)}${two(date.getDate())}-${two(date.getHours())}${two(date.getMinutes())}${two(date.getSeconds())}`;
}

/**
 * Saves `data` as a new file `<file>.reset-<stamp>[-n].bak` beside `file` and returns its
 * path. Never overwrites: the name is taken with an exclusive create.
 */
export function saveBeside(file: string, data: Uint8Array, now = new Date()): string {
  const base = `${file}.reset-${stamp(now)}`;
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? `${base}.bak` : `${base}-${n}.bak`;
    try {
      writeFileSync(candidate, data, { flag: "wx" });
      return candidate;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
}

/**
 * The learner's `current` text with lab `lab`'s starter declarations put back (see the
 * module comment). Throws `RESET_UNPARSABLE` when `current` has a syntax error (only a whole
 * reset can help then) and whatever `labOwnership` throws for an ambiguous starter.
 */
export function resetLabText(current: string, starter: string, lab: string, labIds: readonly string[], file: string): { text: string; declarations: string[] } {
  try {
    const spliced = spliceLabs(current, starter, new Set([lab]), labIds, { base: file, starter: `starter of ${file}` });
    return { text: spliced.text, declarations: spliced.replaced.concat(spliced.inserted) };
  } catch (error) {
    if (!isCourseError(error, "TS_SYNTAX") || !error.message.startsWith(`${file}:`)) throw error;
    throw new CourseError(
      "RESET_UNPARSABLE",
      `${error.message}。有语法错误的文件没法只恢复 Lab ${lab} 的函数：先修好这处语法，或者用 reset ${lab.split(".")[0]} 恢复整个文件（会先备份）`,
      { cause: error },
    );
  }
}

/** An error message without its position, so that the same error is recognised after lines moved. */
const withoutLine = (error: string): string => error.replace(/^([^:]*):\d+: /, "$1: ");

/**
 * Refuses (`RESET_LAB_BREAKS_BUILD`, nothing written) a lab reset whose result would not
 * compile where the learner's file did: a learner who restructured the file (a class where
 * the starter has functions, a helper renamed) gets the lab's starter declarations beside
 * code that no longer fits them. Compared with the project's errors as they are now, so a
 * file that was already red is not held against the reset.
 */
function refuseIfItBreaksTheBuild(root: string, file: string, current: string, next: string, lab: string, chapter: string): void {
  const tsconfig = path.join(root, packageDirOf(file), "tsconfig.json");
  if (!existsSync(tsconfig)) return;
  const overlayFile = path.join(root, ...file.split("/"));
  const before = new Map<string, number>();
  for (const error of projectErrors(tsconfig, { file: overlayFile, text: current })) before.set(withoutLine(error), (before.get(withoutLine(error)) ?? 0) + 1);
  const added = projectErrors(tsconfig, { file: overlayFile, text: next }).filter((error) => {
    const left = before.get(withoutLine(error)) ?? 0;
    before.set(withoutLine(error), left - 1);
    return left <= 0;
  });
  if (added.length === 0) return;
  throw new CourseError(
    "RESET_LAB_BREAKS_BUILD",
    `只恢复 Lab ${lab} 的函数会让代码无法编译（${added.length} 处新错误，第一处：${added[0]}）：你的文件结构和 starter 不同，` +
      `starter 里这个 Lab 的声明放回去之后对不上。文件没有改动。可以用 ${courseCommand("reset", chapter)} 恢复整个文件（会先另存你的文件），或者手动改回这个 Lab 的函数`,
  );
}

export interface ResetOptions {
  /** The practice folder. */
  root: string;
  manifest: ChapterManifest;
  /** A lab id of the chapter, for a lab reset; undefined for the whole chapter. */
  lab?: string;
  now?: Date;
}

/**
 * Resets the chapter's teaching files in the practice folder `root` (see the module
 * comment). Throws `RESET_NOT_PRACTICE` outside a practice folder, `RESET_OTHER_CHAPTER` for
 * a chapter the folder was not made for, `RESET_FAULT_PENDING` while a fault exercise's
 * backup exists (restore a dead one first: `learnerPreamble`), `RESET_NO_STARTER` when the
 * folder has no starter copy, `RESET_NO_FILE` for a lab reset of a missing file,
 * `RESET_UNPARSABLE`, `RESET_LAB_BREAKS_BUILD` for a lab reset whose result would not compile
 * (where the file did), `RESET_MARKER_INVALID` for a marker that cannot be read, `RESET_WRITE_FAILED`
 * when a file cannot be saved or written. Each file is saved before it is replaced; a failure
 * leaves it as it was.
 */
export function resetTeachingFiles(options: ResetOptions): ResetResult[] {
  const { root, manifest, lab } = options;
  if (!isPracticeFolder(root)) {
    throw new CourseError("RESET_NOT_PRACTICE", "reset 只在练习目录里使用：这里是课程仓库本身（参考实现），没有要恢复的 starter");
  }
  if (readBackupSync(root) !== undefined) {
    // A fault exercise still running, or a backup that could not be restored: replacing the
    // file now would leave the exercise nothing to restore to.
    throw new CourseError("RESET_FAULT_PENDING", `${BACKUP_DIR} 里还有故障实验的备份：等 fault 结束，或先按 fault 的提示处理它，再 reset`);
  }
  let marker: { chapter?: unknown };
  try {
    marker = JSON.parse(readFileSync(path.join(root, ...PRACTICE_MARKER.split("/")), "utf8")) as { chapter?: unknown };
  } catch (error) {
    throw new CourseError(
      "RESET_MARKER_INVALID",
      `${PRACTICE_MARKER} 读不出来（${(error as Error).message}）：这个文件由 practice 生成，说明这是哪一章的练习目录；重新生成练习目录，或把它改回 { "chapter": "${manifest.id}" }`,
      { cause: error },
    );
  }
  if (typeof marker.chapter === "string" && marker.chapter !== manifest.id) {
    throw new CourseError("RESET_OTHER_CHAPTER", `这个练习目录是第 ${marker.chapter} 章的，不能恢复第 ${manifest.id} 章的 starter`);
  }
  if (manifest.starters.length === 0) throw new CourseError("RESET_NO_STARTER", `第 ${manifest.id} 章没有 starter`);
  const results: ResetResult[] = [];
  for (const { to } of manifest.starters) {
    const copy = path.join(root, ...starterCopyPath(to).split("/"));
    if (!existsSync(copy)) {
      throw new CourseError(
        "RESET_NO_STARTER",
        `练习目录里没有 ${to} 的 starter 副本（${starterCopyPath(to)}）：它是旧版工具生成的。在课程仓库里运行 ${courseCommand("practice", manifest.id, "<新目录>")} 生成一个新的练习目录`,
      );
    }
    const starter = readFileSync(copy, "utf8");
    const file = path.join(root, ...to.split("/"));
    const current = existsSync(file) ? readFileSync(file) : undefined;
    let next = starter;
    let declarations: string[] | undefined;
    if (lab !== undefined) {
      if (current === undefined) {
        throw new CourseError("RESET_NO_FILE", `${to} 不存在，没法只恢复 Lab ${lab}；用 reset ${manifest.id} 恢复整个文件`);
      }
      const spliced = resetLabText(
        current.toString("utf8"),
        starter,
        lab,
        manifest.labs.map((l) => l.id),
        to,
      );
      next = spliced.text;
      declarations = spliced.declarations;
      refuseIfItBreaksTheBuild(root, to, current.toString("utf8"), next, lab, manifest.id);
    }
    if (current !== undefined && current.toString("utf8") === next) {
      results.push({ file: to, status: "unchanged", ...(declarations ? { declarations } : {}) });
      continue;
    }
    let saved: string | undefined;
    try {
      saved = current === undefined ? undefined : saveBeside(file, current, options.now);
      writeAtomicSync(file, next);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      const kept = saved === undefined ? "" : `；你原来的文件已另存为 ${path.relative(root, saved)}`;
      throw new CourseError("RESET_WRITE_FAILED", `无法写入 ${to}（${code}）：检查这个目录的权限和磁盘空间${kept}；${to} 没有改动`, { cause: error });
    }
    const result: ResetResult = { file: to, status: "restored" };
    if (saved !== undefined) result.savedAs = path.relative(root, saved).split(path.sep).join("/");
    if (declarations !== undefined) result.declarations = declarations;
    results.push(result);
  }
  return results;
}
