/**
 * What a practice folder holds, decided without touching the disk (see `folder.ts` for the
 * list and for how it is written): the parent tree with `LEARNING.md` moved to `COURSE.md`,
 * the chapter's focused tests, provided files, text and challenge tier from the target, each
 * starter over its teaching file (and a pristine copy for `reset`), the learner-safe
 * manifest, the marker, the chapter guide and the tutoring protocol (`tutor.ts`) in place of
 * the parent's own `AGENTS.md` and `CLAUDE.md`.
 */
import { CourseError } from "../core/errors.js";
import { courseCommand } from "../core/command-line.js";
import { PRACTICE_MARKER, starterCopyPath, TOOLS_PACKAGE } from "../core/paths.js";
import { isAuthorOnly } from "../course/chapter-home.js";
import { learnerManifestText } from "../course/faults.js";
import type { OutputFile, TreeEntry } from "../course/git.js";
import type { Checkpoint } from "../course/history.js";
import type { Starter } from "../course/starters.js";
import { COURSE_GUIDE, renderLearningGuide } from "./guide.js";
import type { AuditDocument } from "./leak-audit.js";
import { renderTutorFiles, TUTOR_FILES, type TutorTemplates } from "./tutor.js";

/** The chapter guide's name in a practice folder (the parent tree's course guide moves to `COURSE_GUIDE`). */
export const LEARNING = "LEARNING.md";

/**
 * What the parent tree holds for the course's authors only, left out of a practice folder:
 * the tooling's TypeScript sources and tests and their build configuration (the folder gets
 * the compiled tooling instead, `tooling.ts`; the tooling package keeps its manifest and its
 * bin), the benchmarks, the author's README and docs, CI and the formatter's settings, and the
 * root's build configuration, which references the tooling's. Entries ending in `/` are
 * folders. The chapters' homes come answer-free: without their scaffolds and `solutions/`
 * (`chapter-home.ts`, `isAuthorOnly`), an earlier chapter's as well.
 */
export const WORKSHOP_PATHS: readonly string[] = [
  `${TOOLS_PACKAGE}/src/`,
  `${TOOLS_PACKAGE}/test/`,
  `${TOOLS_PACKAGE}/tsconfig.json`,
  "bench/",
  "docs/",
  ".ci/",
  ".github/",
  "README.md",
  "biome.json",
  "tsconfig.json",
];

/** True for a parent-tree path that belongs to the authors' workshop (`WORKSHOP_PATHS`). */
export function isWorkshopPath(file: string): boolean {
  if (isAuthorOnly(file)) return true;
  return WORKSHOP_PATHS.some((entry) => (entry.endsWith("/") ? file.startsWith(entry) : file === entry));
}

/** The npm scripts of the course's root package.json that only the repository can run (type-check, lint, format, benchmarks). */
const WORKSHOP_SCRIPTS = ["typecheck", "lint", "format", "bench"];
/** Development dependencies only the workshop uses (the formatter: 96 MB a learner need not install). */
const WORKSHOP_DEPENDENCIES = ["@biomejs/biome"];

/** A practice folder's `npm run build`: the course package's own build script. */
export const LEARNER_BUILD = "npm run build -w @pi/course";

/**
 * The practice folder's root package.json from the parent tree's: the workshop's scripts and
 * dependencies left out, and `npm run build` building the course package only
 * (`LEARNER_BUILD`): the repository's `tsc -b` builds the tooling's sources too, which the
 * folder does not have (its tooling comes compiled), so `npm test` builds and runs the
 * course's tests without them. Everything
 * else (workspaces, engines, the other scripts) as it was. Throws `PRACTICE_CONFLICT` when
 * the text is not a JSON object.
 */
export function learnerRootPackageJson(text: string): string {
  let manifest: Record<string, unknown>;
  try {
    manifest = JSON.parse(text) as Record<string, unknown>;
    if (typeof manifest !== "object" || manifest === null || Array.isArray(manifest)) throw new Error("not an object");
  } catch (error) {
    throw new CourseError("PRACTICE_CONFLICT", `parent 的 package.json 读不出来（${(error as Error).message}），无法生成练习目录`);
  }
  const scripts = { ...((manifest.scripts as Record<string, string> | undefined) ?? {}) };
  for (const name of WORKSHOP_SCRIPTS) delete scripts[name];
  if (typeof scripts.build === "string") scripts.build = LEARNER_BUILD;
  if (typeof scripts.test === "string") scripts.test = scripts.test.replace(/\s*&&\s*npm run typecheck\b/, "");
  const learner: Record<string, unknown> = { ...manifest, scripts };
  if (typeof manifest.devDependencies === "object" && manifest.devDependencies !== null) {
    const devDependencies = { ...(manifest.devDependencies as Record<string, string>) };
    for (const name of WORKSHOP_DEPENDENCIES) delete devDependencies[name];
    learner.devDependencies = devDependencies;
  }
  return `${JSON.stringify(learner, null, 2)}\n`;
}

/** The content of `.pi-course/practice.json`. */
export interface PracticeMarker {
  chapter: string;
  parent: string;
  target: string;
  source: string;
  /** The course repository the folder was made from (absolute): where `lab --compare` reads the reference at `target`. */
  course: string;
  createdBy: "practice";
}

/** What a practice folder will contain, computed without touching the disk. */
export interface PracticePlan {
  files: OutputFile[];
  marker: PracticeMarker;
  /** Reference/starter pairs the leak audit compares (the reference's content filled in by `createPractice`). */
  pairs: { teachingFile: string; referenceOid: string; starter: Starter }[];
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
  /** The course repository (absolute), recorded in the marker. */
  course: string;
  /** Plan without rendering the manifest copy (for auditing an existing folder). */
  skipManifestText?: boolean;
  /** The tutoring templates (default: the tooling's own, see `tutor.ts`). */
  tutorTemplates?: TutorTemplates;
  /** The chapter's starters at the target, one per `starters` entry (`course/starters.ts`: hand-kept or derived). */
  starters: readonly Starter[];
}): PracticePlan {
  const { chapter, history } = input.checkpoint;
  const m = chapter.manifest;
  if (m.starters.length === 0) {
    throw new CourseError(
      "PRACTICE_UNAVAILABLE",
      `第 ${m.id} 章还没有 starter（尚未做成互动章节），不能生成练习目录；可以用 ${courseCommand("checkpoint", m.id)} 查看它的 parent 和 target`,
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
  // The parent's own AGENTS.md and CLAUDE.md speak to the course's authors: the learner's take their place.
  const tutor = renderTutorFiles(m, input.checkpoint.teachingFiles, input.tutorTemplates);
  const replaced = new Set<string>([TUTOR_FILES.agents, TUTOR_FILES.claude]);
  const parentEntries = input.parentEntries.filter((e) => !replaced.has(e.path) && !isWorkshopPath(e.path));
  const files: OutputFile[] = parentEntries.map((e) => (e.path === LEARNING ? { ...e, path: COURSE_GUIDE } : { ...e }));
  for (const test of m.focusedTests) files.push({ ...fromTarget(test) });
  for (const given of [...m.provided, ...(m.text === undefined ? [] : [m.text])]) files.push({ ...fromTarget(given) });
  // The challenge tier: the chapter's hardening tests, what they import and the text of their rules, run on the learner's code by `lab NN --challenge`.
  for (const extra of [...m.challenge.map((t) => t.file), ...m.challengeSupport, ...(m.challengeText === undefined ? [] : [m.challengeText])])
    files.push({ ...fromTarget(extra) });
  const starterOf = (to: string): Starter => {
    const starter = input.starters.find((s) => s.teachingFile === to);
    if (starter === undefined) throw new CourseError("HISTORY_MISMATCH", `没有 ${to} 的 starter`);
    return starter;
  };
  for (const s of m.starters) files.push({ path: s.to, content: starterOf(s.to).text });
  for (const s of m.starters) files.push({ path: starterCopyPath(s.to), content: starterOf(s.to).text });
  files.push({ path: m.manifestPath, content: input.skipManifestText ? "" : learnerManifestText(input.manifestText, m) });
  const marker: PracticeMarker = {
    chapter: m.id,
    parent: chapter.parent,
    target: chapter.target,
    source: history.source,
    course: input.course,
    createdBy: "practice",
  };
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
  files.push(...tutor);
  const seen = new Set<string>();
  for (const f of files) {
    if (seen.has(f.path)) throw new CourseError("PRACTICE_CONFLICT", `练习目录里 ${f.path} 会被写两次`);
    seen.add(f.path);
  }
  const labText = m.labs.flatMap((lab) => [lab.title, lab.scaffoldError, ...lab.hints]).join("\n");
  return {
    files,
    marker,
    pairs: m.starters.map((s) => ({ teachingFile: s.to, referenceOid: fromTarget(s.to).oid, starter: starterOf(s.to) })),
    labIds: m.labs.map((lab) => lab.id),
    extraDocuments: [{ file: `${m.manifestPath}（Lab 与提示文本）`, text: labText }],
    inherited: new Set(parentEntries.map((e) => (e.path === LEARNING ? COURSE_GUIDE : e.path))),
  };
}
