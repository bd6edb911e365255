/**
 * Chapter 12 · the Agent Skills specification's rules for a SKILL.md, as warnings.
 *
 * This module is provided: the practice folder receives it as it is, and the chapter's
 * labs never ask for it (they run discovery strictly, and strict discovery computes no
 * warnings). A lenient discovery calls it for every skill that enters the catalog, and for
 * every skill folder that holds no `SKILL.md`.
 *
 * Guarantee: for a frontmatter that discovery accepted (its `name` and `description` are
 * non-empty strings), `skillSpecWarnings` returns each rule of the specification
 * (https://agentskills.io/specification) that the skill breaks, as its reference validator
 * skills-ref judges it, at most one warning per rule, in the order of `SkillSpecCode`
 * below. `misnamedSkillFiles` names the files of a folder that spell `SKILL.md` in
 * another case. Both read no file, never throw, and change nothing they are given: a
 * warning never decides whether a skill is listed. `skillSpecDiagnostics` and
 * `skillFileCaseWarnings` give the same findings as lenient discovery reports them (the
 * second lists the folder, and never throws either); `holdsSkillFile` tells whether an
 * entry would be a skill, for one whose name cannot be read as UTF-8.
 *
 * Where these rules read the specification differently from skills-ref, on purpose:
 * - skills-ref reads YAML with strictyaml, where every scalar is a string; this course
 *   parses YAML 1.2, where `version: 1.0` is a number. A field the specification types as a
 *   string (`compatibility`, `allowed-tools`, a `metadata` value) is therefore warned when
 *   it is anything else: the specification's own example quotes `version: "1.0"`.
 * - skills-ref coerces `metadata` and never checks `allowed-tools`; both are checked here
 *   against the specification's text (a map of strings to strings; a space-separated string).
 * - skills-ref strips a name before judging it; this course keeps the name as written (it is
 *   what the model sees), so surrounding spaces are a format warning.
 * - skills-ref accepts a lowercase `skill.md`; pi and this course read only `SKILL.md`, so
 *   such a folder is no skill, and the file is named in a warning instead of ignored.
 * - `disable-model-invocation`, pi's own field (the course's runtime reads it), is allowed.
 */
import path from "node:path";
import { isPlainObject } from "./async.js";
import { listDirectory, statIfPresent } from "./resource-files.js";
import type { ResourceDiagnostic } from "./resource-types.js";

/** The warning codes of these rules, in the order one skill's warnings are returned. */
export type SkillSpecCode =
  | "SKILL_NAME_FORMAT" // not 1-64 lowercase letters or digits (any script) and single inner hyphens
  | "SKILL_NAME_MISMATCH" // the name differs from its skill folder's name (both NFKC-normalised)
  | "SKILL_DESCRIPTION_LONG" // a description over 1024 characters
  | "SKILL_COMPATIBILITY_LONG" // compatibility over 500 characters, or not a string at all
  | "SKILL_METADATA_INVALID" // metadata that is not a map of strings to strings
  | "SKILL_ALLOWED_TOOLS_INVALID" // allowed-tools that is not a (space-separated) string
  | "SKILL_FIELD_UNKNOWN"; // fields the specification does not define (one warning names them all)

/** The code of a folder whose `SKILL.md` is spelt in another case (see `misnamedSkillFiles`). */
export type SkillFileCode = "SKILL_FILE_CASE";

export interface SkillSpecWarning {
  code: SkillSpecCode;
  /** What is wrong, without the file: the caller puts the file in front. */
  message: string;
}

/** The file that makes a folder a skill. */
export const SKILL_FILE = "SKILL.md";

/** The frontmatter fields the specification defines, plus pi's own `disable-model-invocation`. */
export const SKILL_FIELDS: readonly string[] = ["name", "description", "license", "compatibility", "metadata", "allowed-tools", "disable-model-invocation"];

const NAME_MAX = 64;
const DESCRIPTION_MAX = 1024;
const COMPATIBILITY_MAX = 500;
// Letters and digits of any script (what Python's isalnum accepts), in runs joined by single hyphens.
const NAME_SHAPE = /^[\p{L}\p{N}]+(?:-[\p{L}\p{N}]+)*$/u;

/** Characters (code points), not UTF-16 units: 1024 emoji are 1024 characters. */
const characters = (value: string) => [...value].length;

/** A value named for a message: "a list", "a number", "empty"… */
function kindOf(value: unknown): string {
  if (value === null || value === undefined) return "empty";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a map";
  return `a ${typeof value}`;
}

/** Why `name` breaks the naming rule, or `undefined` when it keeps it (judged after NFKC, as skills-ref does). */
function nameFormatProblem(name: string): string | undefined {
  const normalized = name.normalize("NFKC");
  if (characters(normalized) > NAME_MAX) return `has ${characters(normalized)} characters, more than ${NAME_MAX}`;
  if (normalized !== normalized.toLowerCase()) return "is not lowercase";
  if (!NAME_SHAPE.test(normalized)) return "is not letters and digits joined by single hyphens (none at either end)";
  return undefined;
}

/**
 * The Agent Skills warnings of one accepted frontmatter, found in the folder named `folder`
 * (its entry in `skills/`; for a linked skill, the link's name), in `SkillSpecCode` order.
 */
export function skillSpecWarnings(fields: Readonly<Record<string, unknown>>, folder: string): SkillSpecWarning[] {
  const warnings: SkillSpecWarning[] = [];
  const warn = (code: SkillSpecCode, message: string) => warnings.push({ code, message });
  const has = (key: string) => Object.hasOwn(fields, key);
  const name = fields["name"] as string;
  const description = fields["description"] as string;

  const format = nameFormatProblem(name);
  if (format !== undefined) warn("SKILL_NAME_FORMAT", `skill name ${JSON.stringify(name)} ${format}`);
  if (name.normalize("NFKC") !== folder.normalize("NFKC")) {
    warn("SKILL_NAME_MISMATCH", `skill name ${JSON.stringify(name)} differs from its folder name ${JSON.stringify(folder)}`);
  }
  if (characters(description) > DESCRIPTION_MAX) {
    warn("SKILL_DESCRIPTION_LONG", `description has ${characters(description)} characters, more than ${DESCRIPTION_MAX}`);
  }

  const compatibility = fields["compatibility"];
  if (has("compatibility") && typeof compatibility !== "string") {
    warn("SKILL_COMPATIBILITY_LONG", `compatibility is ${kindOf(compatibility)}, not a string of at most ${COMPATIBILITY_MAX} characters`);
  } else if (typeof compatibility === "string" && characters(compatibility) > COMPATIBILITY_MAX) {
    warn("SKILL_COMPATIBILITY_LONG", `compatibility has ${characters(compatibility)} characters, more than ${COMPATIBILITY_MAX}`);
  }

  const metadata = fields["metadata"];
  if (has("metadata")) {
    if (!isPlainObject(metadata)) {
      warn("SKILL_METADATA_INVALID", `metadata is ${kindOf(metadata)}, not a map of strings to strings`);
    } else {
      const [key, value] = Object.entries(metadata).find(([, entry]) => typeof entry !== "string") ?? [];
      const hint = typeof value === "number" || typeof value === "boolean" ? " (quote it)" : "";
      if (key !== undefined) warn("SKILL_METADATA_INVALID", `metadata ${JSON.stringify(key)} is ${kindOf(value)}, not a string${hint}`);
    }
  }

  const tools = fields["allowed-tools"];
  if (has("allowed-tools") && typeof tools !== "string") {
    warn("SKILL_ALLOWED_TOOLS_INVALID", `allowed-tools is ${kindOf(tools)}, not a space-separated string of tools`);
  }

  const unknown = Object.keys(fields)
    .filter((key) => !SKILL_FIELDS.includes(key))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (unknown.length > 0) {
    warn(
      "SKILL_FIELD_UNKNOWN",
      `${unknown.map((key) => JSON.stringify(key)).join(", ")} ${unknown.length === 1 ? "is not a field" : "are not fields"} of the Agent Skills specification`,
    );
  }
  return warnings;
}

/**
 * The entries of a folder without `SKILL.md` that spell it in another case (`skill.md`,
 * `Skill.md`…), in the order given. Such a folder is no skill; the caller names the file.
 * Names that are not valid UTF-8 come as `undefined` and never match.
 */
export function misnamedSkillFiles(names: readonly (string | undefined)[]): string[] {
  return names.filter((name): name is string => name !== undefined && name !== SKILL_FILE && name.toLowerCase() === "skill.md");
}

/**
 * `skillSpecWarnings` as lenient discovery reports them: warnings about the catalog skill
 * whose SKILL.md is `source`, each message starting with that file.
 */
export function skillSpecDiagnostics(source: string, fields: Readonly<Record<string, unknown>>, folder: string): ResourceDiagnostic[] {
  return skillSpecWarnings(fields, folder).map(({ code, message }) => ({ severity: "warning", code, source, message: `${source}: ${message}` }));
}

/**
 * A lenient discovery's word on a skill folder without SKILL.md: each file in `skillRoot`
 * that spells SKILL.md in another case is a `SKILL_FILE_CASE` warning naming that file; the
 * folder stays no skill. A folder that cannot be listed gets no word: it was never a skill,
 * and a hint must not become an error.
 */
export async function skillFileCaseWarnings(skillRoot: string): Promise<ResourceDiagnostic[]> {
  let names: (string | undefined)[];
  try {
    names = (await listDirectory(skillRoot)).map((entry) => entry.name);
  } catch {
    return [];
  }
  return misnamedSkillFiles(names).map((name) => {
    const source = path.join(skillRoot, name);
    const message = `${source}: a skill's file is named "SKILL.md", not ${JSON.stringify(name)}: this folder is not read as a skill`;
    return { severity: "warning", code: "SKILL_FILE_CASE", source, message };
  });
}

/**
 * True when the entry at `entryPath` (a path, or raw bytes for a name that is not UTF-8) would
 * be a skill: a folder, or a link to one, that holds a SKILL.md. I/O errors other than ENOENT
 * propagate.
 */
export async function holdsSkillFile(entryPath: string | Buffer): Promise<boolean> {
  if (!(await statIfPresent(entryPath))?.isDirectory()) return false;
  const manifest = typeof entryPath === "string" ? path.join(entryPath, SKILL_FILE) : Buffer.concat([entryPath, Buffer.from(`${path.sep}${SKILL_FILE}`)]);
  return (await statIfPresent(manifest)) !== undefined;
}
