// test-process: shared
/**
 * What `docs/chapters.md` and `docs/layout.md` state about `packages/pi-course/src/`: every
 * module directly in it is a chapter's and opens with that chapter (`Chapter NN · …`), the
 * chapter whose manifest claims it; the app of `npm start` lives in `src/app/` and is claimed
 * by a chapter too, so a checkpoint holds only the app of the chapters it has.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import test from "node:test";
import { courseRoot } from "../src/core/paths.js";
import { loadManifests } from "../src/course/manifest.js";

const SRC = "packages/pi-course/src";

/** The `.ts` files directly in `dir` (relative to the course), sorted. */
function modulesIn(dir: string): string[] {
  const full = path.join(courseRoot, dir);
  if (!existsSync(full)) return [];
  return readdirSync(full, { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => `${dir}/${entry.name}`)
    .sort();
}

test("every module of src/ opens with the chapter that claims it; every module of src/app/ is claimed", async () => {
  const claimedBy = new Map<string, string>();
  for (const manifest of await loadManifests(courseRoot)) for (const file of manifest.files) claimedBy.set(file, manifest.id);
  const problems: string[] = [];
  for (const module of modulesIn(SRC)) {
    const opening = /^\/\*\*\n \* Chapter (\d\d) · /.exec(readFileSync(path.join(courseRoot, module), "utf8"))?.[1];
    const chapter = claimedBy.get(module);
    if (opening === undefined) problems.push(`${module}: does not open with "/**\\n * Chapter NN · "`);
    else if (opening !== chapter) problems.push(`${module}: opens with chapter ${opening}, claimed by ${chapter ?? "no chapter"}`);
  }
  for (const module of modulesIn(`${SRC}/app`)) if (!claimedBy.has(module)) problems.push(`${module}: claimed by no chapter`);
  assert.deepEqual(problems, []);
});
