/**
 * A chapter's catalog of learner mistakes: each entry one exact text edit of a teaching file
 * (of the reference, or of a kept solution), what rule of the chapter text it breaks, and,
 * for the entries shown to learners (its faults), the lab test(s) that must catch it.
 *
 * This module holds the data side only (validation, applying and undoing an edit, the
 * learner-safe projection that goes into a practice folder). Where a chapter keeps its
 * catalog and how it reaches the manifest is `catalog.ts`; running entries lives in
 * `testing/fault-runs.ts` (scratch copies of the reference: `verify`, `fault --all`,
 * `mistakes`) and `fault/learner.ts` (the learner's own file, always restored).
 *
 * Entry format (one list per chapter, `mistakes:` in its home's `solutions/mistakes.yaml`;
 * a practice folder's manifest, and a fixture's, hold their faults under the lab, `faults:`):
 *
 * ```yaml
 * - id: 12.4-import-untrusted        # unique in the catalog; a fault's is "<lab>-<slug>"
 *   lab: "12.4"                      # a lab of this chapter, quoted (implied under a lab)
 *   base: reference                  # optional: reference (default) or a kept solution's name
 *                                    #   (a-functional): the text the edit is made in
 *   file: packages/pi-course/src/resources.ts   # optional with one teaching file, or with a solution base
 *   rule: §7 不信任就什么都不 import      # the section of the chapter text and the rule broken (a
 *                                    #   fault's: "§<section> <rule>"; another entry's: one line)
 *   description: 未信任分支里先 import 了模块   # optional, one line, Chinese: makes the entry a FAULT
 *   in: loadExtension                # optional: the top-level declaration find lies in (its anchor)
 *   find: |                          # must occur exactly once (there), whitespace aside (fault-anchor.ts)
 *     ...
 *   replace: |                       # what the mistake looks like (may be empty: a deletion)
 *     ...
 *   killedBy: ["Lab 12.4 · 先 trust 后 import"]  # test names or unique prefixes, of this lab;
 *                                    #   absent: any focused test failing kills it
 *   exercise: true                   # optional: the chapter's own fault exercise
 *   learner:                         # required with exercise: a patch that needs no reference text
 *     function: loadExtension(source, options)   # the function, with the contract's parameter names
 *     before: return "skipped_untrusted"         # before each return of that value (`return`: every return;
 *                                                #   `start`: before the body's first statement)
 *     insert: "await options.importModule?.(source); // 故意错误"  # written with those names
 *     explain: ...                   # Chinese: what the line breaks and which test should notice
 *   class: ...                       # optional notes of the catalog's writer (class, why): never read
 * ```
 *
 * A *fault* is an entry with a `description`: a mistake learners are shown (`lab --where`,
 * `fault`, the exercise), made on the reference, with `killedBy` naming the lab tests that must
 * catch it; `verify` and `fault --all` run every fault and want each killed. The other entries
 * train and measure the tests (`mistakes NN`): any focused test failing kills them unless they
 * name their tests.
 *
 * The learner patch is placed with the syntax tree of the learner's file (`placement.ts`):
 * whatever the learner's braces, line breaks and parameter names, the line lands before
 * each return of that value and is rewritten for the learner's parameters.
 *
 * A practice folder gets only `learnerFaultsProjection` of the exercise faults: no `find`
 * or `replace`, since those are written against the reference solution.
 */
import { parseDocument } from "yaml";
import { testBelongsToLab } from "./lab-names.js";
import { CourseError } from "../core/errors.js";
import { teachingFilesOf } from "./history.js";
import { IDENTIFIER, type ChapterManifest } from "./manifest.js";
import { parseFunctionSpec, parseStatementSpec, placeLine } from "../ts/placement.js";
import { declarationRanges, locateFault, significantCode } from "./fault-anchor.js";
import { SECTION_NUMBER_SOURCE } from "./sections.js";

/** How the learner's own file is changed: one line inserted before a statement of one function (see `placement.ts`). */
export interface LearnerPatch {
  /** `name(param, …)`: the function, with the contract's names for the parameters `insert` uses. */
  function: string;
  /** `return "<literal>"` (or `return`): the statement(s) the line goes before. */
  before: string;
  /** The line to insert, written with the contract's parameter names, without indentation. */
  insert: string;
  /** Chinese explanation shown before the experiment. */
  explain: string;
}

/** What every fault records, on either side. */
interface CommonFields {
  id: string;
  lab: string;
  /** The rule of the chapter text the mistake breaks: `§<section> <the rule>`, e.g. `§3.4 同一个 root 里重复的 kind:name 是 RESOURCE_DUPLICATE`. */
  rule?: string;
  description: string;
  file: string;
  killedBy: string[];
  exercise: boolean;
  learner?: LearnerPatch;
  /** The top-level declaration of `file` that `find` lies in: where the fault is anchored. */
  in?: string;
}

/** A validated fault with every default filled in (author side: it carries the reference edit). */
export interface Fault extends CommonFields {
  find: string;
  replace: string;
}

/** A fault as a practice folder knows it: no reference text, only the learner patch. */
export interface LearnerFault extends CommonFields {
  learner: LearnerPatch;
}

/** The base an entry names for the reference (its teaching file) rather than a kept solution. */
export const REFERENCE_BASE = "reference";

/**
 * Any entry of a catalog, validated, defaults filled: a fault (`description` and `killedBy`
 * set, `base` the reference) or a mistake that only trains and measures the tests.
 */
export interface Mistake extends Omit<Fault, "description" | "killedBy"> {
  /** `reference` or the name of a kept solution (its file's, without `.ts`): the text `find` is looked for in. */
  base: string;
  /** Set on a fault: the mistake as learners are told it. */
  description?: string;
  /** The tests that must fail; absent: any focused test failing kills the mistake. */
  killedBy?: string[];
}

const AUTHOR_KEYS = new Set(["id", "lab", "base", "rule", "description", "file", "in", "find", "replace", "killedBy", "exercise", "learner", "class", "why"]);
/** Keys the manifest parser adds (never written by an author). */
const PARSER_KEYS = new Set(["outsideLab", "catalog", "catalogIndex"]);
const LEARNER_KEYS = new Set(["function", "before", "insert", "explain"]);
/** Fields a practice folder may hold (see `learnerFaultsProjection`). */
const PROJECTED_KEYS = ["id", "lab", "rule", "description", "file", "killedBy", "exercise", "learner"] as const;

/** A fault's `rule`: the section of the chapter text that states it, then the rule. */
const RULE = new RegExp(String.raw`^§${SECTION_NUMBER_SOURCE}\s+\S`);
const RULE_SECTION = new RegExp(`^§(${SECTION_NUMBER_SOURCE})`);

/** The section a fault's rule names (`"§3.4 …"` → `"3.4"`), or undefined when it has no rule. */
export function ruleSection(fault: Pick<CommonFields, "rule">): string | undefined {
  return fault.rule === undefined ? undefined : RULE_SECTION.exec(fault.rule)?.[1];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Where entries are read from, for messages: the manifest (faults under its labs) or a catalog file. */
interface Source {
  manifest: ChapterManifest;
  /** The file the entries are written in (repo-relative, or as typed on the command line). */
  file: string;
}

function invalid(source: Source, field: string, expected: string): never {
  throw new CourseError("FAULT_INVALID", `${source.file}: 字段 ${field} 应为${expected}`);
}

function nonEmpty(source: Source, value: unknown, field: string): string {
  return typeof value === "string" && value.trim() !== "" ? value : invalid(source, field, "非空字符串");
}

function oneLine(source: Source, value: unknown, field: string): string {
  const text = nonEmpty(source, value, field);
  return /[\r\n]/.test(text.trim()) ? invalid(source, field, "单行文字") : text.trim();
}

function learnerPatch(source: Source, value: unknown, field: string): LearnerPatch {
  if (!isRecord(value)) invalid(source, field, "映射（function, before, insert, explain）");
  for (const key of Object.keys(value)) {
    if (!LEARNER_KEYS.has(key)) invalid(source, `${field}.${key}`, `以下之一：${[...LEARNER_KEYS].join(", ")}（未知字段）`);
  }
  const fn = oneLine(source, value.function, `${field}.function`);
  if (parseFunctionSpec(fn) === undefined)
    invalid(source, `${field}.function`, `“函数名(参数名, …)” 形式，例如 loadExtension(source, options)，实际为 ${JSON.stringify(fn)}`);
  const before = oneLine(source, value.before, `${field}.before`);
  if (parseStatementSpec(before) === undefined)
    invalid(source, `${field}.before`, `“return "<字符串>"”、“return” 或 “start” 形式，例如 return "skipped_untrusted"，实际为 ${JSON.stringify(before)}`);
  const insert = oneLine(source, value.insert, `${field}.insert`);
  const explain = nonEmpty(source, value.explain, `${field}.explain`).trim();
  return { function: fn, before, insert, explain };
}

/** The kept solutions of a chapter by name (`a-functional`), each with the teaching file it replaces. */
function solutionsByName(manifest: ChapterManifest): Map<string, string> {
  return new Map(manifest.solutions.map((solution) => [solution.file.replace(/^.*\//, "").replace(/\.ts$/, ""), solution.replaces]));
}

/**
 * One entry, every field checked (see the module comment); `fault` says whether it must be
 * one (the manifest's `faults`) or may be any mistake (a catalog). Throws `FAULT_INVALID`
 * naming the source and the field.
 */
function validEntry(source: Source, raw: Record<string, unknown>, field: string, seen: Set<string>, options: { fault: boolean; edit: boolean }): Mistake {
  const { manifest } = source;
  for (const key of Object.keys(raw)) {
    if (!AUTHOR_KEYS.has(key) && !PARSER_KEYS.has(key)) invalid(source, `${field}.${key}`, `以下之一：${[...AUTHOR_KEYS].join(", ")}（未知字段）`);
  }
  const lab = nonEmpty(source, raw.lab, `${field}.lab`);
  if (!manifest.labs.some((l) => l.id === lab)) {
    invalid(source, `${field}.lab`, `本章的一个 Lab（${manifest.labs.map((l) => l.id).join(", ") || "本章没有 Lab"}），实际为 ${JSON.stringify(lab)}`);
  }
  const isFault = options.fault || raw.description !== undefined;
  const id = nonEmpty(source, raw.id, `${field}.id`);
  if (isFault && (!/^[a-z0-9][a-z0-9.-]*$/.test(id) || !id.startsWith(`${lab}-`) || id.length === lab.length + 1)) {
    invalid(source, `${field}.id`, `"${lab}-<简短英文名>" 形式（小写字母、数字、- 和 .），实际为 ${JSON.stringify(id)}`);
  }
  if (!isFault && !/^[a-z0-9][a-z0-9.-]*$/.test(id)) invalid(source, `${field}.id`, `小写字母、数字、- 和 . 组成的编号，实际为 ${JSON.stringify(id)}`);
  if (seen.has(id)) invalid(source, `${field}.id`, `不重复的编号，${id} 出现了两次`);
  seen.add(id);
  const description = isFault ? oneLine(source, raw.description, `${field}.description`) : undefined;
  const rule = raw.rule === undefined ? undefined : oneLine(source, raw.rule, `${field}.rule`);
  if (isFault && rule !== undefined && !RULE.test(rule))
    invalid(source, `${field}.rule`, `“§<节号> <规则>” 形式，例如 “§3.4 同一个 root 里重复的 kind:name 是 RESOURCE_DUPLICATE”，实际为 ${JSON.stringify(rule)}`);

  const base = raw.base === undefined ? REFERENCE_BASE : oneLine(source, raw.base, `${field}.base`);
  const solutions = solutionsByName(manifest);
  if (base !== REFERENCE_BASE && !solutions.has(base))
    invalid(
      source,
      `${field}.base`,
      `reference 或本章 solutions 里一份解答的名字（${[...solutions.keys()].join(", ") || "本章没有解答"}），实际为 ${JSON.stringify(base)}`,
    );
  if (isFault && base !== REFERENCE_BASE) invalid(source, `${field}.base`, "reference（故障是对参考实现的修改，给学习者看）");
  let file: string;
  if (raw.file === undefined) {
    const teaching = base === REFERENCE_BASE ? teachingFilesOf(manifest) : [solutions.get(base)!];
    if (teaching.length !== 1) invalid(source, `${field}.file`, `被修改的教学文件（本章有 ${teaching.length} 个教学文件，不能省略）`);
    file = teaching[0]!;
  } else {
    file = nonEmpty(source, raw.file, `${field}.file`);
    if (!manifest.files.includes(file)) invalid(source, `${field}.file`, `本章 files 中的文件，实际为 ${JSON.stringify(file)}`);
    if (base !== REFERENCE_BASE && file !== solutions.get(base))
      invalid(source, `${field}.file`, `解答 ${base} 所替换的教学文件 ${solutions.get(base)}（或省略），实际为 ${JSON.stringify(file)}`);
  }

  let killedBy: string[] | undefined;
  if (raw.killedBy !== undefined || isFault) {
    if (!Array.isArray(raw.killedBy) || raw.killedBy.length === 0) invalid(source, `${field}.killedBy`, "至少一个测试名（或唯一前缀）的数组");
    killedBy = raw.killedBy.map((name, i) => {
      const text = oneLine(source, name, `${field}.killedBy[${i}]`);
      if (!testBelongsToLab(text, lab))
        invalid(source, `${field}.killedBy[${i}]`, `Lab ${lab} 的测试名（以 “Lab ${lab}” 开头），实际为 ${JSON.stringify(text)}`);
      return text;
    });
  }

  if (raw.exercise !== undefined && typeof raw.exercise !== "boolean") invalid(source, `${field}.exercise`, "true 或 false");
  const exercise = raw.exercise === true;
  const anchor = raw.in === undefined ? undefined : oneLine(source, raw.in, `${field}.in`);
  if (anchor !== undefined && !IDENTIFIER.test(anchor)) invalid(source, `${field}.in`, `教学文件里一个顶层声明的名字，实际为 ${JSON.stringify(anchor)}`);
  const learner = raw.learner === undefined ? undefined : learnerPatch(source, raw.learner, `${field}.learner`);
  if (exercise && learner === undefined) invalid(source, `${field}.learner`, "故障实验（exercise: true）所需的 learner 补丁");
  if (exercise && !isFault) invalid(source, `${field}.description`, "给学习者看的一句话（故障实验是一个故障）");
  let find = "";
  let replace = "";
  if (options.edit) {
    if (typeof raw.find !== "string" || raw.find.trim() === "") invalid(source, `${field}.find`, "被修改的文本中的一段原文（非空字符串）");
    if (typeof raw.replace !== "string") invalid(source, `${field}.replace`, "替换后的文字（字符串，可以为空：删掉 find）");
    if (raw.replace === raw.find) invalid(source, `${field}.replace`, "与 find 不同的文字");
    find = raw.find;
    replace = raw.replace;
  }
  return {
    id,
    lab,
    base,
    file,
    exercise,
    find,
    replace,
    ...(description === undefined ? {} : { description }),
    ...(killedBy === undefined ? {} : { killedBy }),
    ...(rule === undefined ? {} : { rule }),
    ...(anchor === undefined ? {} : { in: anchor }),
    ...(learner === undefined ? {} : { learner }),
  };
}

/** A validated fault entry as the fault side types it (`base` dropped: a fault's is the reference). */
function asFault(entry: Mistake): Fault {
  const { base: _base, description, killedBy, ...rest } = entry;
  return { ...rest, description: description!, killedBy: killedBy! };
}

/**
 * The chapter's faults as the author side needs them, every field checked: ids
 * `<lab>-<slug>` and unique, `lab` one of the chapter's labs, `killedBy` names tests of
 * that lab, `find` non-empty and `replace` different, an exercise carries a learner patch.
 * Defaults: `file` is the chapter's only teaching file, `exercise` false. Throws
 * `FAULT_INVALID` naming the file and the field. (Whether `find` still matches the
 * reference is checked when a fault is applied: `FAULT_DRIFTED`.)
 */
export function authorFaults(manifest: ChapterManifest): Fault[] {
  const seen = new Set<string>();
  return manifest.faults.map((raw, i) => {
    const { source, field } = whereWritten(manifest, raw, i);
    return asFault(validEntry(source, record(source, raw, field), field, seen, { fault: true, edit: true }));
  });
}

/**
 * Where fault `index` of the manifest is written, for messages: its entry of the home's catalog
 * when it came from there (`catalog.ts` marks it), else the manifest's `faults[index]`.
 */
function whereWritten(manifest: ChapterManifest, raw: unknown, index: number): { source: Source; field: string } {
  const { catalog, catalogIndex, id } = (isRecord(raw) ? raw : {}) as { catalog?: unknown; catalogIndex?: unknown; id?: unknown };
  if (typeof catalog !== "string") return { source: { manifest, file: manifest.manifestPath }, field: `faults[${index}]` };
  return { source: { manifest, file: catalog }, field: `mistakes[${String(catalogIndex)}]${typeof id === "string" ? `（${id}）` : ""}` };
}

function record(source: Source, raw: unknown, field: string): Record<string, unknown> {
  return isRecord(raw) ? raw : invalid(source, field, "映射");
}

/**
 * Every entry of a catalog (`entries`, the `mistakes:` list of `file`), validated as the
 * module comment says: an entry with a `description` is held to a fault's rules. Throws
 * `FAULT_INVALID` naming the file and the entry's field.
 */
export function catalogMistakes(manifest: ChapterManifest, entries: readonly unknown[], file: string): Mistake[] {
  const seen = new Set<string>();
  const source = { manifest, file };
  return entries.map((entry, i) => {
    const raw = record(source, entry, `mistakes[${i}]`);
    const label = typeof raw.id === "string" ? `mistakes[${i}]（${raw.id}）` : `mistakes[${i}]`;
    return validEntry(source, raw, label, seen, { fault: false, edit: true });
  });
}

/**
 * The faults a practice folder can run: those with a learner patch (in a practice folder
 * these are all there is; in the repo, the exercise faults). Same checks as `authorFaults`
 * for the fields they share; `find`/`replace` are not needed and, if present, ignored.
 */
export function learnerFaults(manifest: ChapterManifest): LearnerFault[] {
  const seen = new Set<string>();
  const faults: LearnerFault[] = [];
  manifest.faults.forEach((entry, i) => {
    const { source, field } = whereWritten(manifest, entry, i);
    const raw = record(source, entry, field);
    const { find: _find, replace: _replace, ...common } = asFault(validEntry(source, raw, field, seen, { fault: true, edit: false }));
    if (common.learner !== undefined) faults.push({ ...common, learner: common.learner });
  });
  return faults;
}

/**
 * The learner-safe projection of a chapter's faults: only exercise faults, only the
 * fields in `PROJECTED_KEYS` (never `find`/`replace`, which quote the reference).
 */
export function learnerFaultsProjection(faults: readonly Fault[]): Record<string, unknown>[] {
  return faults
    .filter((fault) => fault.exercise && fault.learner !== undefined)
    .map((fault) => {
      const projected: Record<string, unknown> = {};
      for (const key of PROJECTED_KEYS) projected[key] = structuredClone(fault[key]);
      return projected;
    });
}

/**
 * The manifest text a practice folder gets: the same document (comments and layout of the
 * other fields kept) with each lab's `faults` list set to `learnerFaultsProjection` of its
 * faults (wherever the repository writes them: the home's catalog or the manifest), or
 * removed when none of them is an exercise; a top-level `faults` list (fixtures) likewise.
 * `manifest` is the parsed form of `manifestText`, its catalog's faults merged (`catalog.ts`).
 */
export function learnerManifestText(manifestText: string, manifest: ChapterManifest): string {
  const outside = new Set(manifest.faults.filter((fault) => fault.outsideLab === true).map((fault) => fault.id));
  const projected = learnerFaultsProjection(authorFaults(manifest));
  const doc = parseDocument(manifestText);
  const project = (path: (string | number)[], kept: readonly Record<string, unknown>[]) => {
    if (kept.length === 0) doc.deleteIn(path);
    else doc.setIn(path, doc.createNode(kept));
  };
  for (const [index, lab] of manifest.labs.entries()) {
    project(
      ["labs", index, "faults"],
      projected.filter((fault) => fault.lab === lab.id && !outside.has(String(fault.id))),
    );
  }
  project(
    ["faults"],
    projected.filter((fault) => outside.has(String(fault.id))),
  );
  // The kept solutions are answers: the folder has none of them, and its manifest names none.
  doc.deleteIn(["solutions"]);
  return String(doc);
}

// ---------------------------------------------------------------------------
// Applying and undoing an edit: exactly once, or not at all
// ---------------------------------------------------------------------------

/** `text` with its line ends written the way `file` writes them (a CRLF checkout on Windows). */
function inEolOf(file: string, text: string): string {
  return file.includes("\r\n") ? text.replace(/\r?\n/g, "\r\n") : text;
}

/** A fault put into a reference text, and the way to take it out again. */
export interface InjectedFault {
  text: string;
  /** `patched` with the fault's replacement turned back into the reference's own text (`FAULT_DRIFTED` unless it occurs exactly once). */
  undo(patched: string): string;
}

/**
 * Applies `fault` to the reference text. Guarantees: `find` occurs exactly once in
 * `reference` (inside the declaration `in` names), comparing significant characters only
 * (`fault-anchor.ts`: a reindented or rewrapped reference still matches; else
 * `FAULT_DRIFTED` naming the fault: the code changed and the catalog must follow); the
 * match is replaced by `replace` without its surrounding whitespace. Line ends follow the
 * file. `undo` restores the reference byte for byte from the patched text, where the
 * replacement was put (`FAULT_DRIFTED` when the patched text changed there).
 */
export function injectFault(reference: string, fault: Pick<Fault, "id" | "file" | "find" | "replace"> & { in?: string }): InjectedFault {
  const span = locateFault(reference, fault);
  const removed = reference.slice(span.start, span.end);
  const lineEnd = reference.indexOf("\n", span.end);
  const restOfLine = reference.slice(span.end, lineEnd === -1 ? reference.length : lineEnd);
  // A replacement that ends its line (a comment, say) keeps ending it when code follows on that line.
  const replacement = span.exact
    ? fault.replace
    : inEolOf(reference, fault.replace.trim() + (/\n\s*$/.test(fault.replace) && restOfLine.trim() !== "" ? "\n" : ""));
  const text = reference.slice(0, span.start) + replacement + reference.slice(span.end);
  return {
    text,
    undo(patched) {
      // The replacement is undone where it was put, so a replacement that also occurs elsewhere is no ambiguity.
      if (patched.slice(span.start, span.start + replacement.length) !== replacement || patched.length !== text.length) {
        throw new CourseError("FAULT_DRIFTED", `故障 ${fault.id}：注入后的 ${fault.file} 在故障的位置上已经不是 replace 的文字，无法撤销`);
      }
      return patched.slice(0, span.start) + removed + patched.slice(span.start + replacement.length);
    },
  };
}

/** A teaching file as it is and as a formatter writes it at another line width and indent (`reformatProblems`). */
export interface ReformattedFile {
  text: string;
  reformatted: string;
}

/**
 * What reformatting its teaching files would break in a chapter's fault catalog: `files` gives
 * each fault's file as it is and reformatted. A fault survives when it is still put in exactly
 * once in the reformatted file, undone byte for byte there, and makes the same code
 * (`significantCode`) as on the file as it is; a formatter that changed more than whitespace and
 * separators makes every comparison moot, so that is a problem of its own. Then `fault NN --all`
 * kills and restores every fault of a reformatted chapter as it does today. Returns one line
 * (Chinese) per problem; none when every fault survives. Where a fault names its declaration
 * (`in`), the code compared is that declaration's: the edit lies inside it, and the rest of
 * both files is their unpatched text, compared once per file.
 */
export function reformatProblems(faults: readonly Fault[], files: ReadonlyMap<string, ReformattedFile>): string[] {
  const problems: string[] = [];
  const usable = new Set<string>();
  for (const [file, { text, reformatted }] of files) {
    if (significantCode(reformatted) === significantCode(text)) usable.add(file);
    else problems.push(`格式化工具对 ${file} 改动的不只是空白和分隔符，无法比较故障`);
  }
  /** The code of `patched` (`unpatched` with the fault put in) that the fault can have changed: its declarations', from the first to the last. */
  const code = (unpatched: string, patched: string, fault: Fault) => {
    const ranges = fault.in === undefined ? [] : declarationRanges(unpatched, fault.in, fault.file);
    if (ranges.length === 0) return significantCode(patched);
    // Located in the unpatched text (parsed once per file): the edit lies inside, so only their end moves.
    return significantCode(patched.slice(ranges[0]!.start, ranges.at(-1)!.end + patched.length - unpatched.length));
  };
  for (const fault of faults) {
    const file = files.get(fault.file);
    if (file === undefined || !usable.has(fault.file)) continue;
    const inject = (text: string, reformatted: boolean): InjectedFault | undefined => {
      try {
        return injectFault(text, fault);
      } catch (error) {
        const message = error instanceof CourseError ? error.message : `故障 ${fault.id}：${(error as Error).message}`;
        problems.push(reformatted ? `格式化后：${message}` : message);
        return undefined;
      }
    };
    const original = inject(file.text, false);
    const moved = original === undefined ? undefined : inject(file.reformatted, true);
    if (original === undefined || moved === undefined) continue;
    if (moved.undo(moved.text) !== file.reformatted) problems.push(`故障 ${fault.id}：在格式化后的 ${fault.file} 里撤销后不是原文`);
    else if (code(file.reformatted, moved.text, fault) !== code(file.text, original.text, fault))
      problems.push(`故障 ${fault.id}：在格式化后的 ${fault.file} 里注入的不是同一个错误`);
  }
  return problems;
}

/** `injectFault(reference, fault).text`. */
export function applyFault(reference: string, fault: Pick<Fault, "id" | "file" | "find" | "replace"> & { in?: string }): string {
  return injectFault(reference, fault).text;
}

/** Result of trying a learner patch on a file's text. */
export type LearnerPatchResult =
  /** `line` is the 1-based number of the (first) inserted line; `lines` all of them. */
  | { ok: true; text: string; line: number; lines: number[] }
  /** Not placed: `reason` says why (Chinese); `lines` are the candidate statements found, if any. */
  | { ok: false; lines: number[]; reason: string };

/**
 * Inserts `patch.insert` before each statement `patch.before` names in the function
 * `patch.function` names, found in the syntax tree of `text` and rewritten for the learner's
 * parameter names (see `placement.ts`). Pure: reports (never throws) when the spot cannot be
 * found, so that the caller can explain the manual edit.
 */
export function applyLearnerPatch(text: string, patch: LearnerPatch, fileName?: string): LearnerPatchResult {
  const fn = parseFunctionSpec(patch.function);
  const at = parseStatementSpec(patch.before);
  if (fn === undefined || at === undefined)
    return { ok: false, lines: [], reason: `故障实验的 function/before 写法无效（${patch.function} / ${patch.before}）` };
  const placed = placeLine(text, fn, at, patch.insert, fileName);
  return placed.ok ? { ok: true, text: placed.text, line: placed.lines[0]!, lines: placed.lines } : { ok: false, lines: placed.lines, reason: placed.reason };
}
