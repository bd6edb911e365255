/**
 * Discovery cost against body size.
 *
 *   npm run bench -- discovery [--skills 300] [--runs 7] [--many 10000]
 *
 * 1. `discoverResources` over N skills with 1 KiB bodies and over N skills with 1 MiB
 *    bodies: discovery reads each SKILL.md only up to the end of its frontmatter, so the
 *    two medians should be close (target: growth ≤ 1.2×).
 * 2. The same 1 MiB tree through a whole-file loader (`readFile` + frontmatter parse, one
 *    file after another): target ≥ 10× slower than discovery. The synchronous variant
 *    (`readFileSync`, the way pi's own loader reads) is shown beside it.
 * 3. Throughput on many small skills (skills per second).
 */
import { parseArgs } from "node:util";
import { discoverResources } from "../packages/pi-course/src/resources.js";
import { makeSkillTree } from "./lib/skill-tree.js";
import { median, ms, ratio, timeRuns } from "./lib/stats.js";
import { loadSkillsWholeFile, loadSkillsWholeFileSync } from "./lib/whole-file-loader.js";

const { values } = parseArgs({
  options: {
    skills: { type: "string", default: "300" },
    runs: { type: "string", default: "7" },
    many: { type: "string", default: "10000" },
  },
});
const skills = Number(values.skills);
const runs = Number(values.runs);
const many = Number(values.many);

console.log(`discovery benchmark · node ${process.version} · ${skills} skills · median of ${runs} runs`);
console.log("discovery reads up to 16 skills at once (SKILLS_IN_FLIGHT in resources.ts)");

const small = await makeSkillTree(skills, 1024);
const big = await makeSkillTree(skills, 1024 * 1024);
try {
  const check = await discoverResources([big.root]);
  if (check.skills.length !== skills) throw new Error(`expected ${skills} skills, got ${check.skills.length}`);

  // Interleaved, so that a slow moment of the machine hits both sides alike.
  const smallTimes: number[] = [];
  const bigTimes: number[] = [];
  for (let i = 0; i < runs; i++) {
    smallTimes.push(...(await timeRuns(() => discoverResources([small.root]), 1)));
    bigTimes.push(...(await timeRuns(() => discoverResources([big.root]), 1)));
  }
  const smallMs = median(smallTimes);
  const bigMs = median(bigTimes);
  const wholeMs = median(await timeRuns(() => loadSkillsWholeFile(big.root), runs));
  const wholeSyncMs = median(await timeRuns(() => loadSkillsWholeFileSync(big.root), runs));

  const growth = bigMs / smallMs;
  const speedup = wholeMs / bigMs;
  console.log(`discoverResources, 1 KiB bodies:  ${ms(smallMs)}`);
  console.log(`discoverResources, 1 MiB bodies:  ${ms(bigMs)}`);
  console.log(`whole-file loader, 1 MiB bodies:  ${ms(wholeMs)} (await readFile, one file after another)`);
  console.log(`  readFileSync variant:           ${ms(wholeSyncMs)} (${ratio(wholeSyncMs / bigMs)} discovery's time)`);
  console.log(`body-size growth:                 ${ratio(growth)} (target ≤ 1.20×) ${growth <= 1.2 ? "ok" : "MISSED"}`);
  console.log(`vs whole-file loader:             ${ratio(speedup)} faster (target ≥ 10×) ${speedup >= 10 ? "ok" : "MISSED"}`);
} finally {
  await small.remove();
  await big.remove();
}

const manyTree = await makeSkillTree(many, 512);
try {
  const manyMs = median(await timeRuns(() => discoverResources([manyTree.root]), Math.max(3, Math.floor(runs / 2))));
  console.log(`${many} small skills:              ${ms(manyMs)} · ${Math.round((many / manyMs) * 1000)} skills/s`);
} finally {
  await manyTree.remove();
}
