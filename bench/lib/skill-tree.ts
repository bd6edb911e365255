/**
 * Builds throw-away skill trees for the benchmarks: `count` skills under
 * `<root>/skills/skill-NNNNN/SKILL.md`, each with a short frontmatter and a body of
 * `bodyBytes` bytes. Trees are written once per benchmark run and removed afterwards.
 *
 * With `sparse`, each body is a hole (the file is extended with `truncate`): it reads as
 * NUL bytes and takes no disk space, so a tree of 10 000 × 256 KiB costs seconds, not
 * 2.5 GiB of writes. Only loaders that read the body ever see it.
 */
import { mkdir, mkdtemp, open, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

export interface SkillTree {
  root: string;
  count: number;
  bodyBytes: number;
  remove(): Promise<void>;
}

async function writeSparse(file: string, head: string, size: number): Promise<void> {
  const handle = await open(file, "w");
  try {
    await handle.write(head);
    await handle.truncate(size);
  } finally {
    await handle.close();
  }
}

/** Writes a fresh tree in the OS temp folder and returns where it is. */
export async function makeSkillTree(count: number, bodyBytes: number, options: { sparse?: boolean } = {}): Promise<SkillTree> {
  const root = await mkdtemp(path.join(os.tmpdir(), "pi-bench-skills-"));
  const line = "Read the diff first, then run the focused tests and note every surprise.\n";
  const body = options.sparse ? "" : line.repeat(Math.ceil(bodyBytes / line.length)).slice(0, bodyBytes);
  const width = String(count).length;
  const batch = 64;
  for (let start = 0; start < count; start += batch) {
    const writes: Promise<void>[] = [];
    for (let i = start; i < Math.min(count, start + batch); i++) {
      const name = `skill-${String(i).padStart(width, "0")}`;
      const dir = path.join(root, "skills", name);
      const frontmatter = `---\nname: ${name}\ndescription: benchmark skill number ${i}\n---\n`;
      const file = path.join(dir, "SKILL.md");
      writes.push(
        mkdir(dir, { recursive: true }).then(() =>
          options.sparse ? writeSparse(file, frontmatter, Buffer.byteLength(frontmatter) + bodyBytes) : writeFile(file, frontmatter + body),
        ),
      );
    }
    await Promise.all(writes);
  }
  return { root, count, bodyBytes, remove: () => rm(root, { recursive: true, force: true }) };
}
