/**
 * The baselines the discovery benchmark compares against: skill loaders that read each
 * SKILL.md whole and then parse its frontmatter. `loadSkillsWholeFileSync` is how pi's own
 * loader works (`readFileSync` in a loop); `loadSkillsWholeFile` is the same with
 * `await readFile`, one file after another.
 */
import { readdirSync, readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { parse } from "yaml";

export interface LoadedSkill {
  name: string;
  description: string;
}

function metadataOf(dirName: string, content: string): LoadedSkill {
  const match = /^---\r?\n([\s\S]*?)\r?\n---(?:\r?\n|$)/.exec(content);
  if (match === null) throw new Error(`${dirName}: no frontmatter`);
  const data = parse(match[1]!) as { name: string; description: string };
  return { name: data.name, description: data.description };
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

/** The same with `await readFile`, one file after another. */
export async function loadSkillsWholeFile(root: string): Promise<LoadedSkill[]> {
  const skillsDir = path.join(root, "skills");
  const skills: LoadedSkill[] = [];
  for (const entry of await readdir(skillsDir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
    skills.push(metadataOf(entry.name, await readFile(path.join(skillsDir, entry.name, "SKILL.md"), "utf8")));
  }
  return skills.sort(byName);
}
