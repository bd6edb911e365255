/**
 * Chapter manifests: `chapter.yaml` in each chapter's home `chapters/NN-<slug>/`
 * (`chapter-home.ts`), one per chapter, in course order.
 *
 * A manifest is the single source of truth about a chapter: which files it adds to the
 * course, which starters overlay which teaching files, which tests are focused, its labs
 * (with the exact scaffold error and a four-rung hint ladder) and its faults. Its format is
 * one zod schema (`manifest-schema.ts`): the types below are inferred from it, and the
 * format's description in `docs/chapter-home.md` is rendered from it (`manifest-format.ts`).
 *
 * Rules checked when a manifest is loaded (each failure is a `CourseError`
 * `MANIFEST_INVALID` naming the file, the field and what was expected):
 * - the manifest is `chapters/NN-<slug>/chapter.yaml`, its YAML parses, and it has the
 *   schema's shape (each value's own rules: `manifest-schema.ts`);
 * - then, here, what relates values to each other or to the file (the post-pass of
 *   `parseManifest`): `id` equals the home's `NN`; `files` lists each path once, none in the
 *   home: the home's files are the chapter's implicitly (`claimHome`; otherwise the chapter's
 *   data would leak into the base). The paths of `starters[].from`/`scaffold`, `text`,
 *   `challenge.text` and `solutions` are relative to the home (and stay inside it); the parsed
 *   manifest holds them repo-relative, and its `files` holds them with the listed files;
 * - every starter `to`, every focused test, every provided file, challenge test and support
 *   file is among the chapter's `files`; a provided file is neither a starter nor a teaching
 *   file; a starter's `to` differs from its `from`, one starter per teaching file;
 * - a `solutions` entry is a path (the chapter has exactly one teaching file, which it
 *   replaces) or `{ file, replaces }` with `replaces` a starter's `to` (any number of them);
 *   each is a distinct `.ts` file that is no other file the manifest names;
 * - lab ids are `<chapter number>.<n>` (no leading zero: `3.1`, `12.1`), each once; a lab's
 *   `challenge` entries are files of `challenge.tests`; a fault under a lab is that lab's (a
 *   `lab` field there must name it). Whether a lab's names name the right things is
 *   `verify`'s (`lab-address.ts`);
 * - `faults` is checked loosely (objects with string `id` and `lab`), the fault tooling
 *   validates the rest;
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
import {
  type ChallengeTestSchema,
  type KeptSolutionSchema,
  type LabSchema,
  MANIFEST_FORMAT,
  type ManifestDocument,
  found,
  manifestIssueMessage,
  manifestSchema,
  type StarterOverlaySchema,
} from "./manifest-schema.js";

/** The YAML library, loaded the first time a manifest is really parsed (most commands find theirs remembered, see `manifest-cache.ts`). */
const loadYaml = (): typeof Yaml => createRequire(import.meta.url)("yaml") as typeof Yaml;

/** The modules whose code decides what a valid manifest is: a change to any of them is a new cache entry. */
const VALIDATORS = ["./manifest", "./manifest-schema", "./chapter-home", "./sections", "../core/cli", "../core/errors"].map(
  // `.js` compiled, `.ts` when run from the sources.
  (name) => new URL(`${name}${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url),
);

// Chapter ids typed by users are normalised where the command line is read; re-exported here
// because a manifest's id is the normalised form.
export { normalizeChapterId };
export { IDENTIFIER, MANIFEST_FORMAT } from "./manifest-schema.js";

/**
 * A starter: `from` is the starter file in the course repo (repo-relative; the manifest writes
 * it relative to the home), or, with `scaffold: true` (the manifest says `scaffold:`), the
 * scaffold the starter is derived from, e.g. `chapters/13-runtime/runtime.scaffold.ts`; `to`
 * is the teaching file it replaces. Read either through `course/starters.ts`.
 */
export type StarterOverlay = StarterOverlaySchema;

/** A lab's address (see the schema's descriptions): id `NN.L`, title, test count, scaffold error, four hints, declarations, sections, challenge themes. */
export type LabSpec = Omit<LabSchema, "faults">;

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
 * way) and the teaching file (a starter's `to`) it is built in place of. In a chapter of one
 * teaching file the manifest may write the path alone; `replaces` is then that file.
 */
export type KeptSolutionSpec = KeptSolutionSchema;

/** One theme of a chapter's challenge tier: a test file and its title. */
export type ChallengeTest = ChallengeTestSchema;

/** A parsed manifest: the schema's document with every path repo-relative, the solutions and challenge tier flattened, and where it lives. */
export interface ChapterManifest extends Omit<ManifestDocument, "solutions" | "challenge" | "labs" | "faults"> {
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

/** Sorts chapter manifests (or anything with an `id`) into course order: numeric id order. */
export function byCourseOrder<T extends { id: string }>(a: T, b: T): number {
  return Number(a.id) - Number(b.id);
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

/** `parseManifest` itself, without the cache: the file name, the YAML, the schema, then the post-pass. */
function parseManifestNow(source: string, manifestPath: string): ChapterManifest {
  const fail = (field: string, expected: string, got?: unknown): never => {
    throw new CourseError("MANIFEST_INVALID", `${manifestPath}: 字段 ${field} 应为${expected}${found(got)}`);
  };
  const located = homeOfManifest(manifestPath) ?? fail("(文件名)", `${MANIFEST_PATH_PATTERN}，例如 chapters/12-resources-extensions/${MANIFEST_FILE}`);

  const doc = loadYaml().parseDocument(source, { prettyErrors: true });
  if (doc.errors.length > 0) {
    const first = doc.errors[0]!;
    throw new CourseError("MANIFEST_INVALID", `${manifestPath}: YAML 无法解析：${first.message.split("\n")[0]}`, { cause: first });
  }
  const parsed = manifestSchema().manifest.safeParse(doc.toJS());
  if (!parsed.success) throw new CourseError("MANIFEST_INVALID", manifestIssueMessage(manifestPath, parsed.error.issues));
  return relate(parsed.data, manifestPath, located, fail);
}

/**
 * The post-pass: the rules that relate a well-shaped document's values to each other, to its
 * file name and to its home (listed at the top of this module), and the paths it writes
 * relative to the home made repo-relative.
 */
function relate(
  raw: ManifestDocument,
  manifestPath: string,
  { id: fileId, home }: ChapterHome,
  fail: (field: string, expected: string, got?: unknown) => never,
): ChapterManifest {
  const { id } = raw;
  if (id !== fileId) fail("id", `与目录名一致的 "${fileId}"`, id);

  const files: string[] = [];
  raw.files.forEach((p, i) => {
    if (files.includes(p)) fail(`files[${i}]`, "不重复的路径", p);
    if (homeOf(p) === home) fail(`files[${i}]`, `本章目录 ${home}/ 之外的文件（目录里的文件自动属于本章，不必列出）`, p);
    files.push(p);
  });
  const claimed = (p: string, field: string): string => (files.includes(p) ? p : fail(field, "files 中列出的文件", p));
  // A path written relative to the home (a scaffold, the texts, a solution): claimed by the home itself.
  const named: string[] = [manifestPath];
  const homeFile = (relative: string): string => {
    const p = inHome(home, relative);
    if (!named.includes(p)) named.push(p);
    return p;
  };

  const starters: StarterOverlay[] = [];
  raw.starters.forEach((s, i) => {
    const from = homeFile(s.from);
    const to = claimed(s.to, `starters[${i}].to`);
    if (from === to) fail(`starters[${i}].to`, `与 ${s.scaffold ? "scaffold" : "from"} 不同的教学文件`, to);
    if (starters.some((other) => other.to === to)) fail(`starters[${i}].to`, "每个教学文件只有一个 starter", to);
    starters.push({ ...s, from });
  });

  const focusedTests = raw.focusedTests.map((p, i) => claimed(p, `focusedTests[${i}]`));

  const provided: string[] = [];
  raw.provided.forEach((entry, i) => {
    const p = claimed(entry, `provided[${i}]`);
    if (provided.includes(p)) fail(`provided[${i}]`, "不重复的路径", p);
    if (starters.some((s) => s.from === p || s.to === p) || focusedTests.includes(p)) {
      fail(`provided[${i}]`, "既不是 starter、教学文件也不是聚焦测试的文件", p);
    }
    provided.push(p);
  });
  const chapterText = raw.text === undefined ? undefined : homeFile(raw.text);

  const solutions: KeptSolutionSpec[] = [];
  raw.solutions.forEach((entry, i) => {
    const field = `solutions[${i}]`;
    if (starters.length === 0) fail("solutions", "只在有教学文件（starter）的章节里使用的字段");
    if (typeof entry === "string" && starters.length !== 1) {
      fail(field, "{ file, replaces } 的映射（这一章有几个教学文件，要说出它替换哪一个）", entry);
    }
    const p = homeFile(typeof entry === "string" ? entry : entry.file);
    const replaces = typeof entry === "string" ? starters[0]!.to : entry.replaces;
    if (!starters.some((starter) => starter.to === replaces)) {
      fail(`${field}.replaces`, `一个教学文件（starters 的 to 之一：${starters.map((starter) => starter.to).join("、")}）`, replaces);
    }
    if (!p.endsWith(".ts") || solutions.some((kept) => kept.file === p)) fail(field, "不重复的 .ts 文件", p);
    if ([...starters.flatMap((s) => [s.from, s.to]), ...focusedTests, ...provided, chapterText].includes(p)) {
      fail(field, "既不是 starter、教学文件、聚焦测试、提供的文件也不是正文的文件", p);
    }
    solutions.push({ file: p, replaces });
  });

  const challenge: ChallengeTest[] = [];
  const challengeSupport: string[] = [];
  let challengeText: string | undefined;
  if (raw.challenge !== undefined) {
    if (raw.challenge.text !== undefined) {
      challengeText = homeFile(raw.challenge.text);
      if (challengeText === chapterText) fail("challenge.text", "与 text 不同的文件", challengeText);
    }
    raw.challenge.tests.forEach((t, i) => {
      const field = `challenge.tests[${i}].file`;
      const file = claimed(t.file, field);
      if (focusedTests.includes(file) || challenge.some((other) => other.file === file)) fail(field, "不是聚焦测试、不重复的测试文件", file);
      challenge.push({ file, title: t.title });
    });
    challengeSupport.push(...raw.challenge.support.map((p, i) => claimed(p, `challenge.support[${i}]`)));
  }

  const labs: LabSpec[] = [];
  const faults: FaultSpec[] = [];
  // Lab ids carry the chapter number without its leading zero, as test names do: "3.1", "12.1".
  const chapterNumber = String(Number(id));
  const labId = new RegExp(`^${chapterNumber}\\.[1-9]\\d*$`);
  raw.labs.forEach(({ faults: labFaults, ...lab }, i) => {
    const field = `labs[${i}]`;
    if (!labId.test(lab.id)) fail(`${field}.id`, `"${chapterNumber}.<序号>" 形式的字符串`, lab.id);
    if (labs.some((l) => l.id === lab.id)) fail(`${field}.id`, "不重复的 Lab 编号", lab.id);
    lab.challenge.forEach((file, j) => {
      if (!challenge.some((t) => t.file === file)) fail(`${field}.challenge[${j}]`, "challenge.tests 里的测试文件", file);
    });
    labs.push(lab);
    labFaults.forEach((f, j) => {
      if (f.lab !== undefined && f.lab !== lab.id) fail(`${field}.faults[${j}].lab`, `所在 Lab 的编号 "${lab.id}"（或省略）`, f.lab);
      faults.push({ ...(f as unknown as FaultSpec), lab: lab.id });
    });
  });
  // Faults belong to the fault tooling: here only their outline is checked, and the entries
  // are passed through untouched. Those outside a lab entry come after the labs' own.
  for (const f of raw.faults) faults.push({ ...(f as unknown as FaultSpec), outsideLab: true });

  return {
    format: MANIFEST_FORMAT,
    id,
    title: raw.title,
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
