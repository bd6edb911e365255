/**
 * The baselines the discovery benchmark compares against: skill loaders that read each
 * SKILL.md whole and then parse its frontmatter. `loadSkillsWholeFileSync` is how pi's own
 * loader works (`readFileSync` in a loop); `loadSkillsWholeFile` is the same with
 * `await readFile`, one file after another.
 *
 * Both keep the metadata strings the YAML parser returns, and V8 may represent those as
 * slices of the file's whole string: then every file stays in memory as long as its
 * metadata does. `loadSkillsWholeFileCopied` copies the two strings out, so each file can
 * be collected once parsed; it shows what reading whole files costs without that effect.
 */
import { readdirSync, readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { parse } from "yaml";

export interface LoadedSkill {
  name: string;
  description: string;
}

function metadataOf(dirName: string, content: string, copy = false): LoadedSkill {
  const match = /^---\r?\n([\s\S]*?)\r?\n---(?:\r?\n|$)/.exec(content);
  if (match === null) throw new Error(`${dirName}: no frontmatter`);
  const data = parse(match[1]!) as { name: string; description: string };
  if (!copy) return { name: data.name, description: data.description };
  // A copy through bytes owns its characters: it keeps no reference to `content`.
  return { name: Buffer.from(data.name).toString(), description: Buffer.from(data.description).toString() };
}

function byName(a: LoadedSkill, b: LoadedSkill): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Reads `<root>/skills/<dir>/SKILL.md` whole, synchronously, for every skill folder. */
export function loadSkillsWholeFileSync(root: string): LoadedSkill[] {
  const skillsDir = path.join(root, "skills");
  const skills: LoadedSkill[] = [];
  for (const entry of readdirSync(skillsDir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
    skills.push(metadataOf(entry.name, readFileSync(path.join(skillsDir, entry.name, "SKILL.md"), "utf8")));
  }
  return skills.sort(byName);
}

/** The same with `await readFile`, one file after another (`copy`: see the module comment). */
export async function loadSkillsWholeFile(root: string, copy = false): Promise<LoadedSkill[]> {
  const skillsDir = path.join(root, "skills");
  const skills: LoadedSkill[] = [];
  for (const entry of await readdir(skillsDir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
    skills.push(metadataOf(entry.name, await readFile(path.join(skillsDir, entry.name, "SKILL.md"), "utf8"), copy));
  }
  return skills.sort(byName);
}

/** `loadSkillsWholeFile` with the metadata copied out of each file's string. */
export function loadSkillsWholeFileCopied(root: string): Promise<LoadedSkill[]> {
  return loadSkillsWholeFile(root, true);
}
