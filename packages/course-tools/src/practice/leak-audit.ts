/**
 * The leak audit: a practice folder must not contain the chapter's answer.
 *
 * Rule: no file may contain a line of the target teaching file (the reference solution)
 * that the starter does not also contain. A reference line is taken trimmed, and it is
 * found anywhere inside a line (so a commented-out, quoted or indented copy is caught
 * too). Reference lines that are short after trimming (fewer than `MIN_LEAK_LINE_LENGTH`
 * characters, e.g. `}`, `return out;`), that contain no letter or digit, or that are one
 * item of a list or type broken over lines by the formatter (`listDirectory,` in an import,
 * `name: string;` in a type) are ignored, because they occur in any code and say nothing
 * about the answer.
 *
 * Files copied verbatim from the parent commit ("inherited": earlier chapters, tooling,
 * docs) are checked for distinctive answer lines only, at least
 * `INHERITED_LEAK_LINE_LENGTH` characters long. They are written by other people for other
 * purposes and legitimately share idioms with the reference (`clearTimeout(timer);`); a
 * short shared idiom there must not block every learner, while a pasted block of the
 * answer is still caught. Files the practice folder adds from the chapter (focused tests,
 * the starter, the manifest and hints, the guide) get the full check.
 *
 * The starter itself is audited by a second rule (`starter-audit.ts`): lines are not
 * enough there, since every line a starter holds is exempt from the rule above. Its
 * leaks come first in `auditWithPlan` (practice/folder.ts)' result, since they are the cause to fix.
 */
import { lstat, readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { CourseError } from "../core/errors.js";
import { auditStarter, type StarterLeak } from "./starter-audit.js";

/** Trimmed lines shorter than this are ignored by the audit. */
export const MIN_LEAK_LINE_LENGTH = 12;

/** In inherited files, only answer lines at least this long count (see the module comment). */
export const INHERITED_LEAK_LINE_LENGTH = 40;

/** Files larger than this are not read (a practice folder holds source code, not data). */
const MAX_AUDITED_BYTES = 8 * 1024 * 1024;

/** One reference file and the starter that replaces it in the practice folder. */
export interface LeakPair {
  /** The teaching file, e.g. `packages/pi-course/src/resources.ts`. */
  teachingFile: string;
  /** Its content at the chapter's target (the answer). */
  reference: string;
  /** The starter's content (what the learner is given). */
  starter: string;
  /** Where the starter comes from in the course (a scaffold, or a hand-kept starter, in the chapter's home), named by a starter leak. */
  starterFile?: string;
  /** Where a line of `starter` comes from in the course (a derived starter's: the scaffold's or the reference's line), named by a starter leak. */
  origin?: (line: number) => { file: string; line: number };
}

/** A line of the answer found in a file. */
export interface Leak {
  /** Path relative to the audited folder (or the name of an extra document). */
  file: string;
  /** 1-based line number. */
  line: number;
  /** The leaked line, trimmed (for a starter leak: the starter's text of the piece). */
  text: string;
  teachingFile: string;
  /** Set for a leak the starter audit found: where in the starter, and the reference line it copies. */
  starter?: { where: StarterLeak["where"]; referenceLine: number };
}

/** A text to audit that is not (only) a file on disk, e.g. the hint strings of a manifest. */
export interface AuditDocument {
  file: string;
  text: string;
  /** True for a file copied verbatim from the parent commit (see the module comment). */
  inherited?: boolean;
}

/** One name of an import or export list, or one member of a type with a plain type, on a line of its own. */
const LIST_ITEM = /^(?:type )?[\w$]+(?: as [\w$]+)?,?$|^(?:readonly )?[\w$]+\??: [\w$.]+(?:\[\])?;$/;

/** True when `trimmed` is long enough, has a letter or digit and is more than a list item, so it can identify an answer. */
export function isSignificantLine(trimmed: string): boolean {
  return trimmed.length >= MIN_LEAK_LINE_LENGTH && /[\p{L}\p{N}]/u.test(trimmed) && !LIST_ITEM.test(trimmed);
}

function trimmedLines(text: string): string[] {
  return text.split(/\r?\n/).map((line) => line.trim());
}

/**
 * The lines that would give the answer away: significant trimmed lines of the reference
 * that the starter does not contain. Returned as a map line -> teaching file.
 */
export function answerLines(pairs: readonly LeakPair[]): Map<string, string> {
  const answer = new Map<string, string>();
  for (const pair of pairs) {
    for (const line of trimmedLines(pair.reference)) {
      if (isSignificantLine(line) && !pair.starter.includes(line) && !answer.has(line)) answer.set(line, pair.teachingFile);
    }
  }
  return answer;
}

/** Every line of `documents` that contains an answer line, in document and line order. */
export function findLeaks(documents: readonly AuditDocument[], pairs: readonly LeakPair[]): Leak[] {
  const answer = [...answerLines(pairs)];
  const leaks: Leak[] = [];
  if (answer.length === 0) return leaks;
  for (const doc of documents) {
    const min = doc.inherited ? INHERITED_LEAK_LINE_LENGTH : MIN_LEAK_LINE_LENGTH;
    const needles = answer.filter(([needle]) => needle.length >= min);
    doc.text.split(/\r?\n/).forEach((line, i) => {
      if (line.trim().length < min) return; // cannot contain an answer line
      const hit = needles.find(([needle]) => line.includes(needle));
      if (hit) leaks.push({ file: doc.file, line: i + 1, text: hit[0], teachingFile: hit[1] });
    });
  }
  return leaks;
}

/**
 * Reads every regular file under `dir` as a document (paths `/`-separated, relative to
 * `dir`), without following symlinks and skipping `node_modules`; binary files (with a NUL
 * byte) are skipped.
 */
export async function readDocuments(dir: string): Promise<AuditDocument[]> {
  const documents: AuditDocument[] = [];
  async function walk(rel: string): Promise<void> {
    const entries = await readdir(path.join(dir, rel), { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const child = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (entry.name === "node_modules") continue;
      if (entry.isDirectory()) {
        await walk(child);
      } else if (entry.isFile()) {
        const full = path.join(dir, child);
        if ((await lstat(full)).size > MAX_AUDITED_BYTES) continue;
        const data = await readFile(full);
        if (data.includes(0)) continue;
        documents.push({ file: child, text: data.toString("utf8") });
      }
    }
  }
  await walk("");
  return documents;
}

/**
 * Audits the folder `dir` (plus `extra` documents; files listed in `inherited`, relative
 * `/`-separated paths, get the inherited-file check) and returns every leak found; an
 * empty array means the folder passes.
 */
export async function auditLeaks(
  dir: string,
  pairs: readonly LeakPair[],
  options: { extra?: readonly AuditDocument[]; inherited?: ReadonlySet<string> } = {},
): Promise<Leak[]> {
  const documents = (await readDocuments(dir)).map((doc) => (options.inherited?.has(doc.file) ? { ...doc, inherited: true } : doc));
  return findLeaks([...documents, ...(options.extra ?? [])], pairs);
}

/**
 * The starter audit (see `starter-audit.ts`) of every pair, as leaks named by the course file
 * and line they come from: the pair's `origin` of the line (a derived starter's scaffold line),
 * else the starter's course path (`starterFile`, else the teaching file) and its line.
 * `labIds` are the chapter's labs.
 */
export function findStarterLeaks(pairs: readonly LeakPair[], labIds?: readonly string[]): Leak[] {
  return pairs.flatMap((pair) =>
    auditStarter(pair.reference, pair.starter, labIds).map((leak) => ({
      ...(pair.origin?.(leak.line) ?? { file: pair.starterFile ?? pair.teachingFile, line: leak.line }),
      text: leak.text,
      teachingFile: pair.teachingFile,
      starter: { where: leak.where, referenceLine: leak.referenceLine },
    })),
  );
}

const WHERE = { comment: "注释", string: "字符串", code: "代码" } as const;

/** One line (Chinese) naming a leak: the file and line, what leaked, and from where. */
export function describeLeak(leak: Leak): string {
  if (leak.starter !== undefined) {
    return `${leak.file}:${leak.line} 的${WHERE[leak.starter.where]}含有 ${leak.teachingFile} 参考实现函数体中的代码「${leak.text}」（参考实现第 ${leak.starter.referenceLine} 行）；starter 只能有公开接口、施工位的 throw 和 🔨 提示`;
  }
  return `${leak.file}:${leak.line} 含有 ${leak.teachingFile} 参考实现中的一行「${leak.text}」，而 starter 里没有这一行`;
}

/** Throws `LEAK_DETECTED` naming the first leak (file, line number, text) and the total count. */
export function assertNoLeaks(leaks: readonly Leak[]): void {
  const first = leaks[0];
  if (!first) return;
  const more = leaks.length > 1 ? `（共 ${leaks.length} 处）` : "";
  throw new CourseError("LEAK_DETECTED", `答案泄漏：${describeLeak(first)}${more}`);
}
