/**
 * Discovery cost against body size, strict and lenient, and its peak memory.
 *
 *   npm run bench -- discovery [--skills 300] [--runs 7] [--many 10000] [--rss-body 262144]
 *
 * 1. `discoverResources` over N skills with 1 KiB bodies and over N skills with 1 MiB
 *    bodies: discovery reads each SKILL.md only up to the end of its frontmatter, so the
 *    two medians should be close (target: growth ≤ 1.2×). Lenient mode (`onDiagnostic`)
 *    on the 1 MiB tree is shown beside them.
 * 2. The same 1 MiB tree through a whole-file loader (`readFile` + frontmatter parse, one
 *    file after another): target ≥ 10× slower than discovery. The synchronous variant
 *    (`readFileSync`, the way pi's own loader reads) is shown beside it.
 * 3. A tree of `--many` skills (default 10 000) whose bodies are `--rss-body` bytes
 *    (default 256 KiB, sparse files): strict and lenient discovery time, skills per second.
 * 4. Peak RSS over that tree for each loader, each in a process of its own
 *    (`lib/peak-rss.ts`), against an idle process that loads the same modules. The
 *    whole-file loaders keep every file alive through metadata sliced from it; the
 *    `copied` variant does not, and shows the cost of the reads alone.
 */
import { parseArgs } from "node:util";
import { discoverResources, type ResourceDiagnostic } from "../packages/pi-course/src/resources.js";
import { measurePeakRss, type RssLoader } from "./lib/peak-rss.js";
import { makeSkillTree } from "./lib/skill-tree.js";
import { median, ms, ratio, timeRuns } from "./lib/stats.js";
import { loadSkillsWholeFile, loadSkillsWholeFileSync } from "./lib/whole-file-loader.js";

const { values } = parseArgs({
  options: {
    skills: { type: "string", default: "300" },
    runs: { type: "string", default: "7" },
    many: { type: "string", default: "10000" },
    "rss-body": { type: "string", default: String(256 * 1024) },
  },
});
const skills = Number(values.skills);
const runs = Number(values.runs);
const many = Number(values.many);
const rssBody = Number(values["rss-body"]);

console.log(`discovery benchmark · node ${process.version} · ${skills} skills · median of ${runs} runs`);
console.log("discovery reads up to 16 skills at once (READS_IN_FLIGHT in resources.ts)");

/** Lenient discovery that must find nothing to report on these trees. */
async function lenient(root: string) {
  const diagnostics: ResourceDiagnostic[] = [];
  const catalog = await discoverResources([root], { onDiagnostic: (diagnostic) => diagnostics.push(diagnostic) });
  if (diagnostics.length > 0) throw new Error(`unexpected diagnostic: ${diagnostics[0]!.message}`);
  return catalog;
}

const small = await makeSkillTree(skills, 1024);
const big = await makeSkillTree(skills, 1024 * 1024);
try {
  const check = await discoverResources([big.root]);
  if (check.skills.length !== skills) throw new Error(`expected ${skills} skills, got ${check.skills.length}`);

  // Interleaved, so that a slow moment of the machine hits every side alike.
  const smallTimes: number[] = [];
  const bigTimes: number[] = [];
  const lenientTimes: number[] = [];
  for (let i = 0; i < runs; i++) {
    smallTimes.push(...(await timeRuns(() => discoverResources([small.root]), 1)));
    bigTimes.push(...(await timeRuns(() => discoverResources([big.root]), 1)));
    lenientTimes.push(...(await timeRuns(() => lenient(big.root), 1)));
  }
  const smallMs = median(smallTimes);
  const bigMs = median(bigTimes);
  const lenientMs = median(lenientTimes);
  const wholeMs = median(await timeRuns(() => loadSkillsWholeFile(big.root), runs));
  const wholeSyncMs = median(await timeRuns(() => loadSkillsWholeFileSync(big.root), runs));

  const growth = bigMs / smallMs;
  const speedup = wholeMs / bigMs;
  console.log(`discoverResources, 1 KiB bodies:  ${ms(smallMs)}`);
  console.log(`discoverResources, 1 MiB bodies:  ${ms(bigMs)}`);
  console.log(`  lenient (onDiagnostic):         ${ms(lenientMs)} (${ratio(lenientMs / bigMs)} strict)`);
  console.log(`whole-file loader, 1 MiB bodies:  ${ms(wholeMs)} (await readFile, one file after another)`);
  console.log(`  readFileSync variant:           ${ms(wholeSyncMs)} (${ratio(wholeSyncMs / bigMs)} discovery's time)`);
  console.log(`body-size growth:                 ${ratio(growth)} (target ≤ 1.20×) ${growth <= 1.2 ? "ok" : "MISSED"}`);
  console.log(`vs whole-file loader:             ${ratio(speedup)} faster (target ≥ 10×) ${speedup >= 10 ? "ok" : "MISSED"}`);
} finally {
  await small.remove();
  await big.remove();
}

const manyTree = await makeSkillTree(many, rssBody, { sparse: true });
try {
  const manyRuns = Math.max(3, Math.floor(runs / 2));
  const strictTimes: number[] = [];
  const lenientTimes: number[] = [];
  for (let i = 0; i < manyRuns; i++) {
    strictTimes.push(...(await timeRuns(() => discoverResources([manyTree.root]), 1)));
    lenientTimes.push(...(await timeRuns(() => lenient(manyTree.root), 1)));
  }
  const strictMs = median(strictTimes);
  const lenientMs = median(lenientTimes);
  const label = `${many} skills × ${Math.round(rssBody / 1024)} KiB`;
  console.log(`\n${label}, strict:   ${ms(strictMs)} · ${Math.round((many / strictMs) * 1000)} skills/s`);
  console.log(`${label}, lenient:  ${ms(lenientMs)} · ${Math.round((many / lenientMs) * 1000)} skills/s (${ratio(lenientMs / strictMs)} strict)`);

  console.log(`\npeak RSS, ${label} (sparse bodies), each loader in its own process:`);
  const loaders: RssLoader[] = ["idle", "strict", "lenient", "whole-file", "whole-file-sync", "whole-file-copied"];
  const peaks = new Map(loaders.map((loader) => [loader, measurePeakRss(loader, manyTree.root)]));
  const idle = peaks.get("idle")!.maxRssKiB;
  for (const [loader, peak] of peaks) {
    if (loader !== "idle" && peak.skills !== many) throw new Error(`${loader} found ${peak.skills} skills, expected ${many}`);
    const above = loader === "idle" ? "" : ` (+${((peak.maxRssKiB - idle) / 1024).toFixed(1)} MiB over idle)`;
    console.log(`  ${loader.padEnd(16)} ${(peak.maxRssKiB / 1024).toFixed(1).padStart(7)} MiB${above}`);
  }
} finally {
  await manyTree.remove();
}
