/**
 * Peak resident memory of one loader, measured in a process of its own so that no other
 * measurement's garbage shares its heap:
 *
 *   node --import tsx bench/lib/peak-rss.ts <loader> <root>
 *
 * Loaders: `strict` and `lenient` (`discoverResources`), `whole-file`,
 * `whole-file-sync` and `whole-file-copied` (the baselines of `whole-file-loader.ts`), and `idle` (loads the same
 * modules, reads nothing: what the process costs before any loader runs). Prints one JSON
 * line: the loader, how many skills it found and `process.resourceUsage().maxRSS` in KiB.
 * `measurePeakRss` spawns it and parses that line.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { discoverResources } from "../../packages/pi-course/src/resources.js";
import { loadSkillsWholeFile, loadSkillsWholeFileCopied, loadSkillsWholeFileSync } from "./whole-file-loader.js";

export type RssLoader = "idle" | "strict" | "lenient" | "whole-file" | "whole-file-sync" | "whole-file-copied";

export interface PeakRss {
  loader: RssLoader;
  skills: number;
  maxRssKiB: number;
}

async function run(loader: RssLoader, root: string): Promise<number> {
  switch (loader) {
    case "idle":
      return 0;
    case "strict":
      return (await discoverResources([root])).skills.length;
    case "lenient":
      return (await discoverResources([root], { onDiagnostic: () => {} })).skills.length;
    case "whole-file":
      return (await loadSkillsWholeFile(root)).length;
    case "whole-file-sync":
      return loadSkillsWholeFileSync(root).length;
    case "whole-file-copied":
      return (await loadSkillsWholeFileCopied(root)).length;
  }
}

/** Runs `loader` over `root` in a child process and returns its peak RSS. */
export function measurePeakRss(loader: RssLoader, root: string): PeakRss {
  const self = fileURLToPath(import.meta.url);
  const child = spawnSync(process.execPath, ["--import", "tsx", self, loader, root], { encoding: "utf8" });
  const line = child.stdout.trim().split("\n").pop() ?? "";
  if (child.status !== 0 || !line.startsWith("{")) throw new Error(`peak-rss ${loader} failed: ${child.stderr || child.stdout}`);
  return JSON.parse(line) as PeakRss;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [loader, root] = process.argv.slice(2) as [RssLoader, string];
  const skills = await run(loader, root);
  const result: PeakRss = { loader, skills, maxRssKiB: process.resourceUsage().maxRSS };
  console.log(JSON.stringify(result));
}
