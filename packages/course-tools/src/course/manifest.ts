/**
 * Chapter manifests: `chapter.yaml` in each chapter's home `chapters/NN-<slug>/`
 * (`chapter-home.ts`), one per chapter, in course order.
 *
 * A manifest is the single source of truth about a chapter: which files it adds to the
 * course, which starters overlay which teaching files, which tests are focused, its labs
 * (with the exact scaffold error and a four-rung hint ladder) and its faults.
 *
 * Format (version 1):
 *
 * ```yaml
 * format: 1
 * id: "12"                     # two digits, also the home's (chapters/12-<slug>/)
 * title: 资源与扩展             # shown in `course(12): <title>` and by `checkpoint`
 * files:                       # every file this chapter adds outside its home (repo-relative,
 *   - packages/pi-course/src/resources.ts   # "/" separated); the home's files are its own
 * starters:                    # optional; each `to` must also be in `files`
 *   - from: resources.ts                   # a hand-kept starter in the home, or
 *     to: packages/pi-course/src/resources.ts
 *   - scaffold: runtime.scaffold.ts        # the scaffold (in the home) the starter is derived
 *     to: packages/pi-course/src/runtime.ts      # from with this reference (course/starters.ts)
 * focusedTests:                # test sources (in `files`) copied into the practice folder
 *   - packages/pi-course/test/12-resources-extensions.test.ts
 * provided:                    # optional; chapter files (in `files`) the practice folder gets
 *   - packages/pi-course/src/resource-files.ts   # as they are: the learner uses, not writes, them
 * text: README.md              # optional; the chapter text (in the home),
 *                              # copied into the practice folder too
 * solutions:                   # optional; correct solutions kept green (in `files`): each, built in
 *   - solutions/a-functional.ts   # (in the home) place of the one teaching file, passes
 *                              # every focused test and declares the starter's surface (`verify`)
 *   - file: solutions/a-sse.ts    # with several teaching files, each entry
 *     replaces: packages/pi-course/src/sse.ts             # names the one it replaces (a starter's `to`)
 * challenge:                   # optional; the challenge tier (`lab NN --challenge`), in order
 *   text: challenge.md         # optional; its rules (in the home), a text of their own that
 *                              # the practice folder gets with the tests; `chapter_section`
 *                              # and `verify` read it after the chapter text (its numbers must
 *                              # not repeat the chapter text's)
 *   tests:                     # test files (in `files`, not focused), one theme each
 *     - file: packages/pi-course/test/challenge/12-catalog.test.ts
 *       title: 目录与宽松发现   # the theme, as the table shows it
 *   support:                   # files those tests import (in `files`), copied with them
 *     - packages/pi-course/test/fixtures/12-workspace.ts
 * labs:                        # optional, in teaching order; each entry is the lab's address
 *   - id: "12.1"
 *     title: roots 顺序决定 catalog winner
 *     tests: 2
 *     scaffoldError: Lab 12.1 resource catalog 尚未实现
 *     declarations: [discoverResources]   # the starter's declarations marked 🔨 Lab 12.1
 *     sections: ["11", "3"]        # the text's sections: the lab's own first, then the rules it checks
 *     challenge: [packages/pi-course/test/challenge/12-catalog.test.ts]   # optional; challenge themes
 *     hints: [定位文件…, 指出签名…, 伪代码…, 局部代码…]   # exactly four rungs
 *     faults: []                 # optional; this lab's faults, see FaultSpec (`lab` implied)
 * faults: []                   # optional; faults outside any lab entry (fixtures only: `verify`
 *                              # wants every fault under its lab)
 * ```
 *
 * Rules checked when a manifest is loaded (each failure is a `CourseError`
 * `MANIFEST_INVALID` naming the file, the field and what was expected):
 * - the manifest is `chapters/NN-<slug>/chapter.yaml`; `format` is `MANIFEST_FORMAT`; `id` is a
 *   quoted two-digit string equal to the home's `NN`;
 * - `files` lists repo-relative paths (no `..`, no `\`, no leading `/`), each once, none in the
 *   home: the home's files are the chapter's implicitly (`claimHome`; otherwise the chapter's
 *   data would leak into the base). The paths of `starters[].from`/`scaffold`, `text`,
 *   `challenge.text` and `solutions` are relative to the home (and stay inside it); the parsed
 *   manifest holds them repo-relative, and its `files` holds them with the listed files;
 * - every starter `to`, every focused test and every provided file are among the chapter's
 *   `files`; a provided file is neither a starter nor a teaching file;
 * - a `solutions` entry is a path (the chapter has exactly one teaching file, which it
 *   replaces) or `{ file, replaces }` with `replaces` a starter's `to` (any number of them);
 * - lab ids are `<chapter number>.<n>` (no leading zero: `3.1`, `12.1`), `tests` is a positive integer, `hints` has exactly four rungs;
 * - a lab's `declarations` are identifiers, its `sections` section numbers (`11`, `3.4`, a contract appendix's `C3.2`), its
 *   `challenge` entries files of `challenge.tests`; a fault under a lab is that lab's (a `lab`
 *   field there must name it). Whether they name the right things is `verify`'s (`lab-address.ts`);
 * - `faults` is checked loosely here (objects with string `id` and `lab`), the fault
 *   tooling validates the rest;
 * - across chapters: no file is claimed twice; against a source commit (see
 *   `validateCourse`), every claimed file exists in it.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type * as Yaml from "yaml";
import { normalizeChapterId } from "../core/cli.js";
import { CourseError } from "../core/errors.js";
import { CHAPTERS_DIR, type ChapterHome, homeFiles, homeOf, homeOfManifest, inHome, listHomes, MANIFEST_FILE, MANIFEST_PATH_PATTERN } from "./chapter-home.js";
import { withHomeCatalog } from "./catalog.js";
import { cachedParse } from "./manifest-cache.js";
import { SECTION_NUMBER_SOURCE } from "./sections.js";

/** The YAML library, loaded the first time a manifest is really parsed (most commands find theirs remembered, see `manifest-cache.ts`). */
const loadYaml = (): typeof Yaml => createRequire(import.meta.url)("yaml") as typeof Yaml;

/** The modules whose code decides what a valid manifest is: a change to any of them is a new cache entry. */
const VALIDATORS = ["./manifest", "./chapter-home", "./sections", "../core/cli", "../core/errors"].map(
  // `.js` compiled, `.ts` when run from the sources.
  (name) => new URL(`${name}${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url),
);

// Chapter ids typed by users are normalised where the command line is read; re-exported here
// because a manifest's id is the normalised form.
export { normalizeChapterId };

/** The current manifest format version. */
export const MANIFEST_FORMAT = 1;

export interface StarterOverlay {
  /**
   * The starter file in the course repo (repo-relative; the manifest writes it relative to the
   * home), or (with `scaffold`) the scaffold the starter is derived from, e.g.
   * `chapters/13-runtime/runtime.scaffold.ts`.
   * Read either through `course/starters.ts`.
   */
  from: string;
  /** The teaching file it replaces in the practice folder (the reference a scaffold's starter is derived from). */
  to: string;
  /** Set when `from` is a scaffold (the manifest says `scaffold:` instead of `from:`). */
  scaffold?: true;
}

export interface LabSpec {
  /** `NN.L`, e.g. `12.1`; test names of this lab start with `Lab 12.1`. */
  id: string;
  title: string;
  /** How many tests the lab has. */
  tests: number;
  /** The exact message the starter throws for this lab. */
  scaffoldError: string;
  /** Four rungs: locate the file, name the signature, pseudocode, partial code. */
  hints: [string, string, string, string];
  /** The top-level declarations of the teaching file(s) that the starter marks `🔨 Lab NN.L`. */
  declarations: string[];
  /** Sections of the chapter text: the lab's own (its heading names the lab) first, then those stating the rules it checks. */
  sections: string[];
  /** The challenge tier's test files (of `challenge.tests`) that go beyond this lab. */
  challenge: string[];
}

/**
 * One fault as written in a manifest. Validated (and defaulted) by `packages/course-tools/src/course/faults.ts`:
 * `authorFaults` in the repo, `learnerFaults` in a practice folder, whose copy of the
 * manifest holds only exercise faults, without `find`/`replace` (they quote the reference).
 */
export interface FaultSpec {
  id: string;
  /** The lab whose test must catch the fault, e.g. `12.4`. */
  lab: string;
  /** One line, in Chinese: the mistake a learner makes. */
  description: string;
  /** One line, in Chinese: the rule of the chapter text the mistake breaks (optional). */
  rule?: string;
  /** The teaching file the fault edits; defaults to the chapter's only teaching file. */
  file?: string;
  /** Exact text that must occur exactly once in the reference file (absent in a practice folder). */
  find?: string;
  /** What replaces it (absent in a practice folder). */
  replace?: string;
  /** Names (or unique prefixes) of the test(s) that must fail. */
  killedBy: string[];
  /** True for the fault the chapter text itself uses as its exercise. */
  exercise?: boolean;
  /** For an exercise: how to inject it into the learner's own file without reference text. */
  learner?: { function: string; before: string; insert: string; explain: string };
  /** The top-level declaration of the teaching file that `find` lies in (its anchor). */
  in?: string;
  /** Set by the parser for a fault listed in the top-level `faults`, not under its lab. */
  outsideLab?: true;
}

/**
 * A kept solution as the manifest names it: the file (a whole teaching file written another
 * way) and the teaching file it stands in for. In a chapter of one teaching file the manifest
 * may write the path alone; `replaces` is then that file.
 */
export interface KeptSolutionSpec {
  file: string;
  /** The teaching file (a starter's `to`) the solution is built in place of. */
  replaces: string;
}

/** One theme of a chapter's challenge tier: a test file and its title. */
export interface ChallengeTest {
  file: string;
  title: string;
}

export interface ChapterManifest {
  format: number;
  id: string;
  title: string;
  files: string[];
  starters: StarterOverlay[];
  focusedTests: string[];
  /** Chapter files copied into the practice folder as they are (the learner does not write them). */
  provided: string[];
  /** The chapter text (Chinese), when the chapter has one. */
  text?: string;
  /** Correct solutions that `verify` keeps green, each with the teaching file it replaces (empty when none). */
  solutions: KeptSolutionSpec[];
  /** The challenge tier's test files, by theme (empty when the chapter has none). */
  challenge: ChallengeTest[];
  /** Files the challenge tests import (fixtures), copied into the practice folder with them. */
  challengeSupport: string[];
  /** The challenge tier's own text (its rules, Chinese), when it has one; copied with the tests. */
  challengeText?: string;
  labs: LabSpec[];
  faults: FaultSpec[];
  /** Repo-relative path of the manifest itself, e.g. `chapters/12-resources-extensions/chapter.yaml`. */
  manifestPath: string;
  /** The chapter's home folder, e.g. `chapters/12-resources-extensions` (`chapter-home.ts`): every file in it is the chapter's. */
  home: string;
}

const TOP_LEVEL_KEYS = new Set(["format", "id", "title", "files", "starters", "focusedTests", "provided", "text", "solutions", "challenge", "labs", "faults"]);
const CHALLENGE_KEYS = new Set(["text", "tests", "support"]);
const CHALLENGE_TEST_KEYS = new Set(["file", "title"]);
const STARTER_KEYS = new Set(["from", "scaffold", "to"]);
const SOLUTION_KEYS = new Set(["file", "replaces"]);
const LAB_KEYS = new Set(["id", "title", "tests", "scaffoldError", "declarations", "sections", "challenge", "hints", "faults"]);
/** A top-level declaration's name, as a lab's `declarations` and a fault's `in` write it. */
export const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const SECTION_NUMBER = new RegExp(`^${SECTION_NUMBER_SOURCE}$`);

/** Sorts chapter manifests (or anything with an `id`) into course order: numeric id order. */
export function byCourseOrder<T extends { id: string }>(a: T, b: T): number {
  return Number(a.id) - Number(b.id);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "数组";
  if (typeof value === "string") return `字符串 ${JSON.stringify(value)}`;
  if (typeof value === "object") return "对象";
  return `${typeof value} ${String(value)}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const NOTHING: unique symbol = Symbol("nothing");

/** A validator bound to one file, so every message names the file. */
class Checker {
  readonly file: string;
  constructor(file: string) {
    this.file = file;
  }

  fail(field: string, expected: string, got: unknown = NOTHING): never {
    const suffix = got === NOTHING ? "" : `，实际为 ${describe(got)}`;
    throw new CourseError("MANIFEST_INVALID", `${this.file}: 字段 ${field} 应为${expected}${suffix}`);
  }

  record(value: unknown, field: string): Record<string, unknown> {
    return isRecord(value) ? value : this.fail(field, "一个映射（key: value）", value);
  }

  keys(value: Record<string, unknown>, allowed: Set<string>, field: string): void {
    for (const key of Object.keys(value)) {
      if (!allowed.has(key)) {
        const where = field ? `${field}.${key}` : key;
        this.fail(where, `以下之一：${[...allowed].join(", ")}（未知字段）`);
      }
    }
  }

  string(value: unknown, field: string): string {
    return typeof value === "string" && value.trim() !== "" ? value : this.fail(field, "非空字符串", value);
  }

  array(value: unknown, field: string): unknown[] {
    return Array.isArray(value) ? value : this.fail(field, "数组", value);
  }

  repoPath(value: unknown, field: string): string {
    const p = this.string(value, field);
    const segments = p.split("/");
    if (p.includes("\\") || p.startsWith("/") || /^[A-Za-z]:/.test(p) || segments.some((s) => s === "" || s === "." || s === "..")) {
      this.fail(field, "仓库内的相对路径（用 / 分隔，不含 .、..、\\ 或开头的 /）", p);
    }
    return p;
  }
}

/**
 * Parses and validates the text of one manifest. `manifestPath` is its repo-relative path
 * (`chapters/NN-<slug>/chapter.yaml`): it names the file in errors, fixes the expected `id`
 * and the home that home-relative paths start from.
 * Guarantees on return: every rule listed at the top of this module holds, except the
 * cross-chapter ones (see `validateCourse`). Throws `CourseError` `MANIFEST_INVALID`.
 */
export function parseManifest(source: string, manifestPath: string): ChapterManifest {
  return cachedParse(source, manifestPath, VALIDATORS, (text) => parseManifestNow(text, manifestPath));
}

/** `parseManifest` itself, without the cache. */
function parseManifestNow(source: string, manifestPath: string): ChapterManifest {
  const c: Checker = new Checker(manifestPath); // annotated so `c.fail()` narrows types
  const located = homeOfManifest(manifestPath);
  if (!located) c.fail("(文件名)", `${MANIFEST_PATH_PATTERN}，例如 chapters/12-resources-extensions/${MANIFEST_FILE}`);
  const { id: fileId, home } = located;

  const doc = loadYaml().parseDocument(source, { prettyErrors: true });
  if (doc.errors.length > 0) {
    const first = doc.errors[0]!;
    throw new CourseError("MANIFEST_INVALID", `${manifestPath}: YAML 无法解析：${first.message.split("\n")[0]}`, { cause: first });
  }
  const raw = c.record(doc.toJS(), "(根)");
  c.keys(raw, TOP_LEVEL_KEYS, "");

  if (raw.format !== MANIFEST_FORMAT) c.fail("format", `格式版本 ${MANIFEST_FORMAT}`, raw.format);
  if (typeof raw.id !== "string" || !/^\d{2}$/.test(raw.id)) c.fail("id", '带引号的两位数字字符串，例如 "12"', raw.id);
  const id = raw.id;
  if (id !== fileId) c.fail("id", `与目录名一致的 "${fileId}"`, id);
  const title = c.string(raw.title, "title");

  const filesRaw = c.array(raw.files, "files");
  if (filesRaw.length === 0) c.fail("files", "至少一个文件的数组", filesRaw);
  const files: string[] = [];
  filesRaw.forEach((entry, i) => {
    const p = c.repoPath(entry, `files[${i}]`);
    if (files.includes(p)) c.fail(`files[${i}]`, "不重复的路径", p);
    if (homeOf(p) === home) c.fail(`files[${i}]`, `本章目录 ${home}/ 之外的文件（目录里的文件自动属于本章，不必列出）`, p);
    files.push(p);
  });
  const claimed = (p: string, field: string): string => {
    if (!files.includes(p)) c.fail(field, "files 中列出的文件", p);
    return p;
  };
  // A path written relative to the home (a scaffold, the texts, a solution): claimed by the home itself.
  const named: string[] = [manifestPath];
  const homeFile = (value: unknown, field: string): string => {
    const p = inHome(home, c.repoPath(value, field));
    if (!named.includes(p)) named.push(p);
    return p;
  };

  const starters: StarterOverlay[] = [];
  c.array(raw.starters ?? [], "starters").forEach((entry, i) => {
    const s = c.record(entry, `starters[${i}]`);
    c.keys(s, STARTER_KEYS, `starters[${i}]`);
    if ((s.from === undefined) === (s.scaffold === undefined))
      c.fail(`starters[${i}]`, "恰好有 from（手写的 starter）或 scaffold（导出 starter 的脚手架文件）之一的映射");
    const key = s.scaffold === undefined ? "from" : "scaffold";
    const from = homeFile(s[key], `starters[${i}].${key}`);
    const to = claimed(c.repoPath(s.to, `starters[${i}].to`), `starters[${i}].to`);
    if (from === to) c.fail(`starters[${i}].to`, `与 ${key} 不同的教学文件`, to);
    if (starters.some((other) => other.to === to)) c.fail(`starters[${i}].to`, "每个教学文件只有一个 starter", to);
    starters.push(key === "scaffold" ? { from, to, scaffold: true } : { from, to });
  });

  const testsRaw = c.array(raw.focusedTests, "focusedTests");
  if (testsRaw.length === 0) c.fail("focusedTests", "至少一个测试文件的数组", testsRaw);
  const focusedTests = testsRaw.map((entry, i) => claimed(c.repoPath(entry, `focusedTests[${i}]`), `focusedTests[${i}]`));

  const provided: string[] = [];
  c.array(raw.provided ?? [], "provided").forEach((entry, i) => {
    const p = claimed(c.repoPath(entry, `provided[${i}]`), `provided[${i}]`);
    if (provided.includes(p)) c.fail(`provided[${i}]`, "不重复的路径", p);
    if (starters.some((s) => s.from === p || s.to === p) || focusedTests.includes(p)) {
      c.fail(`provided[${i}]`, "既不是 starter、教学文件也不是聚焦测试的文件", p);
    }
    provided.push(p);
  });
  const chapterText = raw.text === undefined ? undefined : homeFile(raw.text, "text");

  const solutions: KeptSolutionSpec[] = [];
  c.array(raw.solutions ?? [], "solutions").forEach((entry, i) => {
    const field = `solutions[${i}]`;
    if (starters.length === 0) c.fail("solutions", "只在有教学文件（starter）的章节里使用的字段");
    let p: string;
    let replaces: string;
    if (typeof entry === "string") {
      if (starters.length !== 1) c.fail(field, "{ file, replaces } 的映射（这一章有几个教学文件，要说出它替换哪一个）", entry);
      p = homeFile(entry, field);
      replaces = starters[0]!.to;
    } else {
      const s = c.record(entry, field);
      c.keys(s, SOLUTION_KEYS, field);
      p = homeFile(s.file, `${field}.file`);
      replaces = c.repoPath(s.replaces, `${field}.replaces`);
      if (!starters.some((starter) => starter.to === replaces)) {
        c.fail(`${field}.replaces`, `一个教学文件（starters 的 to 之一：${starters.map((starter) => starter.to).join("、")}）`, replaces);
      }
    }
    if (!p.endsWith(".ts") || solutions.some((kept) => kept.file === p)) c.fail(field, "不重复的 .ts 文件", p);
    if ([...starters.flatMap((s) => [s.from, s.to]), ...focusedTests, ...provided, chapterText].includes(p)) {
      c.fail(field, "既不是 starter、教学文件、聚焦测试、提供的文件也不是正文的文件", p);
    }
    solutions.push({ file: p, replaces });
  });

  const challenge: ChallengeTest[] = [];
  const challengeSupport: string[] = [];
  let challengeText: string | undefined;
  if (raw.challenge !== undefined) {
    const block = c.record(raw.challenge, "challenge");
    c.keys(block, CHALLENGE_KEYS, "challenge");
    if (block.text !== undefined) {
      challengeText = homeFile(block.text, "challenge.text");
      if (challengeText === chapterText) c.fail("challenge.text", "与 text 不同的文件", challengeText);
    }
    c.array(block.tests, "challenge.tests").forEach((entry, i) => {
      const field = `challenge.tests[${i}]`;
      const t = c.record(entry, field);
      c.keys(t, CHALLENGE_TEST_KEYS, field);
      const file = claimed(c.repoPath(t.file, `${field}.file`), `${field}.file`);
      if (focusedTests.includes(file) || challenge.some((other) => other.file === file)) c.fail(`${field}.file`, "不是聚焦测试、不重复的测试文件", file);
      challenge.push({ file, title: c.string(t.title, `${field}.title`) });
    });
    c.array(block.support ?? [], "challenge.support").forEach((entry, i) => {
      challengeSupport.push(claimed(c.repoPath(entry, `challenge.support[${i}]`), `challenge.support[${i}]`));
    });
  }

  const labs: LabSpec[] = [];
  const faults: FaultSpec[] = [];
  c.array(raw.labs ?? [], "labs").forEach((entry, i) => {
    const field = `labs[${i}]`;
    const lab = c.record(entry, field);
    c.keys(lab, LAB_KEYS, field);
    const labId = c.string(lab.id, `${field}.id`);
    // Lab ids carry the chapter number without its leading zero, as test names do: "3.1", "12.1".
    const chapterNumber = String(Number(id));
    if (!new RegExp(`^${chapterNumber}\\.[1-9]\\d*$`).test(labId)) c.fail(`${field}.id`, `"${chapterNumber}.<序号>" 形式的字符串`, lab.id);
    if (labs.some((l) => l.id === labId)) c.fail(`${field}.id`, "不重复的 Lab 编号", labId);
    const labTitle = c.string(lab.title, `${field}.title`);
    const tests = lab.tests;
    if (typeof tests !== "number" || !Number.isInteger(tests) || tests < 1) {
      c.fail(`${field}.tests`, "正整数（该 Lab 的测试数）", tests);
    }
    const scaffoldError = c.string(lab.scaffoldError, `${field}.scaffoldError`);
    const hintsRaw = c.array(lab.hints, `${field}.hints`);
    if (hintsRaw.length !== 4) c.fail(`${field}.hints`, `恰好 4 级提示（定位文件、签名、伪代码、局部代码），实际 ${hintsRaw.length} 级`);
    const hints = hintsRaw.map((h, j) => c.string(h, `${field}.hints[${j}]`)) as [string, string, string, string];
    const names = (key: string, pattern: RegExp, expected: string): string[] =>
      c.array(lab[key] ?? [], `${field}.${key}`).map((entry, j) => {
        const value = c.string(entry, `${field}.${key}[${j}]`);
        return pattern.test(value) ? value : c.fail(`${field}.${key}[${j}]`, expected, value);
      });
    const declarations = names("declarations", IDENTIFIER, "一个顶层声明的名字");
    const sections = names("sections", SECTION_NUMBER, '正文的节号（如 "11"、"3.4"，契约条目 "C3.4"）');
    const labChallenge = c.array(lab.challenge ?? [], `${field}.challenge`).map((entry, j) => {
      const file = c.repoPath(entry, `${field}.challenge[${j}]`);
      return challenge.some((t) => t.file === file) ? file : c.fail(`${field}.challenge[${j}]`, "challenge.tests 里的测试文件", file);
    });
    labs.push({ id: labId, title: labTitle, tests, scaffoldError, hints, declarations, sections, challenge: labChallenge });
    c.array(lab.faults ?? [], `${field}.faults`).forEach((entry, j) => {
      const f = c.record(entry, `${field}.faults[${j}]`);
      c.string(f.id, `${field}.faults[${j}].id`);
      if (f.lab !== undefined && f.lab !== labId) c.fail(`${field}.faults[${j}].lab`, `所在 Lab 的编号 "${labId}"（或省略）`, f.lab);
      faults.push({ ...(f as unknown as FaultSpec), lab: labId });
    });
  });

  // Faults belong to the fault tooling; here only their outline is checked, and the
  // entries are passed through untouched. Those outside a lab entry come after the labs' own.
  c.array(raw.faults ?? [], "faults").forEach((entry, i) => {
    const f = c.record(entry, `faults[${i}]`);
    c.string(f.id, `faults[${i}].id`);
    c.string(f.lab, `faults[${i}].lab`);
    faults.push({ ...(f as unknown as FaultSpec), outsideLab: true });
  });

  return {
    format: MANIFEST_FORMAT,
    id,
    title,
    files: [...files, ...named],
    starters,
    focusedTests,
    provided,
    ...(chapterText === undefined ? {} : { text: chapterText }),
    solutions,
    challenge,
    challengeSupport,
    ...(challengeText === undefined ? {} : { challengeText }),
    labs,
    faults,
    manifestPath,
    home,
  };
}

/**
 * `manifest` with every file of its home claimed: `files` is the files the manifest lists
 * (outside its home) and `homeFiles`, every file under the home (in the working tree or a
 * commit). A chapter's history commit thus holds its whole home.
 */
export function claimHome(manifest: ChapterManifest, homeFiles: readonly string[]): ChapterManifest {
  const inside = homeFiles.filter((file) => homeOf(file) === manifest.home);
  return { ...manifest, files: [...new Set([...manifest.files, ...inside])] };
}

/**
 * Checks the rules that involve several chapters: no file is claimed by two chapters,
 * ids are unique, and — when `sourceFiles` (every file path of a source commit) is given —
 * every claimed file exists in that commit. Throws `CourseError` `MANIFEST_INVALID`.
 */
export function validateCourse(manifests: readonly ChapterManifest[], sourceFiles?: ReadonlySet<string>, sourceName = "源提交"): void {
  const owner = new Map<string, ChapterManifest>();
  const ids = new Set<string>();
  for (const m of manifests) {
    if (ids.has(m.id)) throw new CourseError("MANIFEST_INVALID", `${m.manifestPath}: 字段 id 应唯一，第 ${m.id} 章出现了两次`);
    ids.add(m.id);
    m.files.forEach((file, i) => {
      const other = owner.get(file);
      if (other) {
        throw new CourseError("MANIFEST_INVALID", `${m.manifestPath}: 字段 files[${i}] 应为只属于一章的文件，但 ${file} 已由 ${other.manifestPath} 声明`);
      }
      owner.set(file, m);
      if (sourceFiles && !sourceFiles.has(file)) {
        throw new CourseError("MANIFEST_INVALID", `${m.manifestPath}: 字段 files[${i}] 应为${sourceName}中存在的文件，但 ${file} 不存在`);
      }
    });
  }
}

/** Chapter ids that have a home (`chapter-home.ts`) in `repoRoot`, in course order. */
export async function listChapterIds(repoRoot: string): Promise<string[]> {
  return (await listHomes(repoRoot)).map((home) => home.id);
}

/** Reads and validates the manifest of `home` in the working tree of `repoRoot`, its whole home claimed (`claimHome`), its catalog's faults merged (`catalog.ts`). */
async function readHomeManifest(repoRoot: string, home: ChapterHome): Promise<ChapterManifest> {
  const manifest = parseManifest(await readFile(path.join(repoRoot, ...home.manifestPath.split("/")), "utf8"), home.manifestPath);
  return withHomeCatalog(repoRoot, claimHome(manifest, await homeFiles(repoRoot, home.home)));
}

/**
 * Reads and validates chapter `id`'s manifest (`chapters/NN-<slug>/chapter.yaml`) from the
 * working tree of `repoRoot` (the repo or a practice folder). Throws `CHAPTER_UNKNOWN`
 * (listing the known chapters) when there is no such chapter, `MANIFEST_INVALID` when it is
 * malformed.
 */
export async function loadManifest(repoRoot: string, id: string): Promise<ChapterManifest> {
  const normalized = normalizeChapterId(id);
  const homes = await listHomes(repoRoot);
  const home = homes.find((h) => h.id === normalized);
  if (normalized === undefined || home === undefined)
    throw unknownChapter(
      id,
      homes.map((h) => h.id),
    );
  return readHomeManifest(repoRoot, home);
}

/**
 * Reads and validates every chapter manifest of `repoRoot`, in course order, and checks that
 * no file is claimed twice. (Whether claimed files exist is checked against a commit by the
 * history builder, since a practice folder lacks later files on purpose.)
 */
export async function loadManifests(repoRoot: string): Promise<ChapterManifest[]> {
  const manifests: ChapterManifest[] = [];
  for (const home of await listHomes(repoRoot)) manifests.push(await readHomeManifest(repoRoot, home));
  validateCourse(manifests);
  return manifests;
}

/** The `CHAPTER_UNKNOWN` error for `id`, listing the chapters that do exist. */
export function unknownChapter(id: string, known: readonly string[]): CourseError {
  const list = known.length > 0 ? known.join(", ") : "（没有任何章节清单）";
  return new CourseError("CHAPTER_UNKNOWN", `没有第 ${id} 章的目录（${CHAPTERS_DIR}/${id}-名字/${MANIFEST_FILE}）；已知章节：${list}`);
}
