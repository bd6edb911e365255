/**
 * The tutoring protocol of a practice folder, for whatever AI agent the learner opens there:
 *
 * - `AGENTS.md` (the name agents read by convention), from the template `agents.md` next to
 *   this module: predict, then run; one action a turn; the four hint rungs in order, only
 *   through `npm run hint` and never beyond the rung the learner's hint state records; run the
 *   lab commands rather than reading the tests aloud; never write or paste a whole function of
 *   the teaching file; what to do when the learner asks for the answer;
 * - `CLAUDE.md`, which imports it (`@AGENTS.md`) for the agents that read that name;
 * - a skill in the Agent Skills format, `.agents/skills/pi-course-tutor/SKILL.md`, from the
 *   template `tutor-skill.md`: the same protocol as steps of a turn, loaded on demand by agents
 *   that support skills (its name equals its folder, its description says when to use it).
 *
 * All three are generated from the chapter's manifest (Chinese, like the course) and written
 * over whatever the parent tree holds at those paths (the course repository's own `AGENTS.md`
 * is for its authors). They are files the chapter adds to the folder, so the leak audit
 * checks them in full.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { courseCommand } from "../core/command-line.js";
import { courseRoot, HINT_STATE } from "../core/paths.js";
import { authorFaults, learnerFaultsProjection } from "../course/faults.js";
import { RUNG_NAMES } from "../course/hint-rungs.js";
import type { ChapterManifest } from "../course/manifest.js";
import { renderTemplate, type TemplateValues } from "./guide.js";

/** The templates, in the tooling's own sources (read at run time: the compiled tooling has no copy). */
export const AGENTS_TEMPLATE = "packages/course-tools/src/practice/agents.md";
export const SKILL_TEMPLATE = "packages/course-tools/src/practice/tutor-skill.md";

/** The tutoring skill's name, which is also its folder's. */
export const TUTOR_SKILL = "pi-course-tutor";

/** Where the three files go in a practice folder. */
export const TUTOR_FILES = {
  agents: "AGENTS.md",
  claude: "CLAUDE.md",
  skill: `.agents/skills/${TUTOR_SKILL}/SKILL.md`,
} as const;

/** `CLAUDE.md`: an import of `AGENTS.md`, so both names say the same. */
export const CLAUDE_TEXT = "@AGENTS.md\n";

/** The two templates' texts. */
export interface TutorTemplates {
  agents: string;
  skill: string;
}

function readTemplate(file: string): string {
  return readFileSync(path.join(courseRoot, ...file.split("/")), "utf8");
}

/** The templates as the tooling ships them. */
export function defaultTutorTemplates(): TutorTemplates {
  return { agents: readTemplate(AGENTS_TEMPLATE), skill: readTemplate(SKILL_TEMPLATE) };
}

/** The values both templates are filled in with, from the manifest and the chapter's teaching files. Pure. */
export function tutorValues(manifest: ChapterManifest, teachingFiles: readonly string[]): TemplateValues {
  const m = manifest;
  const first = m.labs[0]?.id ?? `${m.id}.1`;
  const exercise = learnerFaultsProjection(authorFaults(m)).length > 0;
  const challenge = m.challenge.length > 0;
  return {
    id: m.id,
    title: m.title,
    text: m.text ?? "",
    teachingFiles: teachingFiles.map((f) => `\`${f}\``).join("、"),
    teachingFilesPlain: teachingFiles.join("、"),
    labRows: m.labs.map((lab) => `| ${lab.id} | ${lab.title} | ${lab.tests} |`).join("\n"),
    firstLab: first,
    labFirst: courseCommand("lab", first),
    labChapter: courseCommand("lab", m.id),
    hintFirst: courseCommand("hint", first),
    openFirst: courseCommand("lab", first, "--open"),
    compareFirst: courseCommand("lab", first, "--compare"),
    compareAny: courseCommand("lab", "NN.L", "--compare"),
    resetFirst: courseCommand("reset", first),
    faultChapter: courseCommand("fault", m.id),
    challengeChapter: courseCommand("lab", m.id, "--challenge"),
    exercise,
    challenge,
    afterGreen: exercise || challenge,
    rungs: RUNG_NAMES.join(" → "),
    rung1: RUNG_NAMES[0],
    rung2: RUNG_NAMES[1],
    rung3: RUNG_NAMES[2],
    rung4: RUNG_NAMES[3],
    hintState: HINT_STATE,
    manifestPath: m.manifestPath,
    skillName: TUTOR_SKILL,
    skillPath: TUTOR_FILES.skill,
  };
}

/** The three files (path and content) for chapter `manifest`'s practice folder. */
export function renderTutorFiles(
  manifest: ChapterManifest,
  teachingFiles: readonly string[],
  templates: TutorTemplates = defaultTutorTemplates(),
): { path: string; content: string }[] {
  const values = tutorValues(manifest, teachingFiles);
  return [
    { path: TUTOR_FILES.agents, content: renderTemplate(templates.agents, values) },
    { path: TUTOR_FILES.claude, content: CLAUDE_TEXT },
    { path: TUTOR_FILES.skill, content: renderTemplate(templates.skill, values) },
  ];
}
