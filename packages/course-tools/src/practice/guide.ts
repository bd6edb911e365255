/**
 * The practice folder's `LEARNING.md`: the chapter guide, written as a template next to this
 * module (`learning.md`, Chinese) and filled in from the manifest. The template's text is the
 * learner's; this module only computes the values and renders, with one small function:
 *
 * - `{{name}}` is replaced by the value `name` (a missing value is a bug of the template);
 * - a section `{{#name}}` … `{{/name}}` is kept when `name` is truthy (a non-empty string, a
 *   non-zero number, `true`), `{{^name}}` … `{{/name}}` when it is not. A marker on a line of
 *   its own takes its line with it; a section may also sit inside one line.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { BUILD_COMMAND, courseCommand, focusedTestFiles, manualLabCommand } from "../core/command-line.js";
import { courseRoot, HINT_STATE } from "../core/paths.js";
import { learnerFaultsProjection, authorFaults } from "../course/faults.js";
import { RUNG_NAMES } from "../course/hint-rungs.js";
import type { ChapterManifest } from "../course/manifest.js";
import { DEFAULT_TIMEOUT_SECONDS } from "../testing/limits.js";

/** The template, in the tooling's own sources (read at run time: the compiled tooling has no copy). */
export const LEARNING_TEMPLATE = "packages/course-tools/src/practice/learning.md";

/** Where the course guide of the parent tree goes, since LEARNING.md becomes the chapter guide. */
export const COURSE_GUIDE = "COURSE.md";

export type TemplateValues = Readonly<Record<string, string | number | boolean>>;

/** `template` with its sections and placeholders filled in from `values` (see the module comment). Pure. */
export function renderTemplate(template: string, values: TemplateValues): string {
  const value = (name: string): string | number | boolean => {
    const found = values[name];
    if (found === undefined) throw new Error(`template value ${name} is missing`);
    return found;
  };
  const section = (marker: string, name: string, body: string): string => (Boolean(value(name)) === (marker === "#") ? body : "");
  let text = template;
  // Sections on lines of their own first (they take their marker lines along), then those inside a line.
  for (let previous = ""; previous !== text; ) {
    previous = text;
    text = text.replace(/^\{\{([#^])(\w+)\}\}\n([\s\S]*?)^\{\{\/\2\}\}\n/m, (_whole, marker: string, name: string, body: string) =>
      section(marker, name, body),
    );
  }
  text = text.replace(/\{\{([#^])(\w+)\}\}([\s\S]*?)\{\{\/\2\}\}/g, (_whole, marker: string, name: string, body: string) => section(marker, name, body));
  return text.replace(/\{\{(\w+)\}\}/g, (_whole, name: string) => String(value(name)));
}

/** What the chapter guide needs to know. */
export interface GuideInput {
  manifest: ChapterManifest;
  parent: string;
  target: string;
  source: string;
  teachingFiles: readonly string[];
  /** Chapter ids up to and including this one, in course order. */
  throughChapters: readonly string[];
  /** True when the folder was created with `--link-modules`. */
  linkedModules: boolean;
}

const quoted = (files: readonly string[]): string => files.map((f) => `\`${f}\``).join("、");

/** The values the guide's template is filled in with (see `learning.md`). Pure. */
export function guideValues(input: GuideInput): TemplateValues {
  const { manifest: m } = input;
  const firstLab = m.labs[0];
  const total = m.labs.reduce((n, lab) => n + lab.tests, 0);
  const firstRun = firstLab ? manualLabCommand(m.focusedTests, firstLab.id) : `node --test ${focusedTestFiles(m.focusedTests)}`;
  return {
    id: m.id,
    title: m.title,
    courseGuide: COURSE_GUIDE,
    parent: input.parent,
    target: input.target,
    source: input.source,
    text: m.text ?? "",
    teachingFiles: quoted(input.teachingFiles),
    provided: quoted(m.provided),
    focusedTests: quoted(m.focusedTests),
    linkedModules: input.linkedModules,
    build: BUILD_COMMAND,
    firstRun,
    practiceLinked: courseCommand("practice", m.id, "<新目录>", "--link-modules"),
    firstLab: firstLab?.id ?? "",
    firstLabTests: firstLab?.tests ?? 0,
    firstLabError: firstLab?.scaffoldError ?? "",
    labRows: m.labs.map((lab) => `| ${lab.id} | ${lab.title} | ${lab.tests} |`).join("\n"),
    total,
    labFirst: firstLab ? courseCommand("lab", firstLab.id) : "",
    labTimeout: DEFAULT_TIMEOUT_SECONDS,
    labChapter: courseCommand("lab", m.id),
    resetFirst: firstLab ? courseCommand("reset", firstLab.id) : "",
    manualFirst: firstRun,
    hintFirst: firstLab ? courseCommand("hint", firstLab.id) : "",
    rungs: RUNG_NAMES.join(" → "),
    hintState: HINT_STATE,
    exercise: learnerFaultsProjection(authorFaults(m)).length > 0,
    faultChapter: courseCommand("fault", m.id),
    challenge: m.challenge.length > 0,
    challengeChapter: courseCommand("lab", m.id, "--challenge"),
    challengeText: m.challengeText ?? "",
    focusedFiles: focusedTestFiles(m.focusedTests),
    throughChapters: input.throughChapters.join("、"),
  };
}

/** The chapter's `LEARNING.md` (Chinese): the template filled in from the manifest. */
export function renderLearningGuide(
  input: GuideInput,
  template: string = readFileSync(path.join(courseRoot, ...LEARNING_TEMPLATE.split("/")), "utf8"),
): string {
  return renderTemplate(template, guideValues(input));
}
