/**
 * The baseline the discovery benchmark compares against: a skill loader that reads each
 * SKILL.md whole and then parses its frontmatter, which is how pi's own loader works.
 * It reads files one after another, as a synchronous loader does.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { parse } from "yaml";

export interface LoadedSkill {
  name: string;
  description: string;
}

/** Reads `<root>/skills/<dir>/SKILL.md` whole for every skill directory under `root`. */
export async function loadSkillsWholeFile(root: string): Promise<LoadedSkill[]> {
  const skillsDir = path.join(root, "skills");
  const skills: LoadedSkill[] = [];
  for (const entry of await readdir(skillsDir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
    const content = await readFile(path.join(skillsDir, entry.name, "SKILL.md"), "utf8");
    const match = /^---\r?\n([\s\S]*?)\r?\n---(?:\r?\n|$)/.exec(content);
    if (match === null) throw new Error(`${entry.name}: no frontmatter`);
    const data = parse(match[1]!) as { name: string; description: string };
    skills.push({ name: data.name, description: data.description });
  }
  return skills.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
