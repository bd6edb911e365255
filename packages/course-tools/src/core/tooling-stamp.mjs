// @ts-check
/**
 * What the compiled tooling (`.pi-course/tooling/`) was made from: a hash of the path and
 * content of every source of `scripts/` (tests aside) and of the base tsconfig. The launcher
 * keeps the build while the hash holds; a clone, a copy or a checkout of the same sources has
 * the same hash, so a build made elsewhere from them can be used as it is (the record's
 * replay copies the running course's build into its clone for that).
 *
 * Plain JavaScript on purpose: `scripts/launch.mjs` reads it before anything is compiled.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/**
 * The stamp of the tooling sources of the course tree at `courseRoot`: a hex digest. Reads
 * every `.ts`, `.mjs` and `.json` file below `scripts/` except `scripts/test/` (with `tests`,
 * those too: the stamp of the tooling tests' build), in path order.
 *
 * @param {string} courseRoot
 * @param {{ tests?: boolean }} [options]
 * @returns {string}
 */
export function toolingStamp(courseRoot, options = {}) {
  const files = [path.join(courseRoot, "tsconfig.base.json")];
  /** @param {string} dir */
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === "test" && options.tests !== true) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(ts|mjs|json)$/.test(entry.name)) files.push(full);
    }
  };
  walk(path.join(courseRoot, "scripts"));
  const hash = createHash("sha256");
  for (const file of files.sort()) hash.update(path.relative(courseRoot, file).split(path.sep).join("/")).update("\0").update(readFileSync(file)).update("\0");
  return hash.digest("hex");
}

/** The file written last into a finished build of the tooling tests: a folder without it is not used. */
export const TEST_BUILD_COMPLETE = "complete.json";

/**
 * Where the tooling tests' build of the sources of the course tree at `courseRoot` is kept:
 * `.pi-course/test-tooling/<stamp>` (`TEST_TOOLING_BUILD` in `paths.ts`), one folder per state
 * of `scripts/`, tests included (`scripts/test/support/tooling.ts` makes it). Plain JavaScript
 * for `scripts/run-tests.mjs`, which finds a finished build without loading TypeScript.
 *
 * @param {string} courseRoot
 * @returns {string}
 */
export function testToolingBuild(courseRoot) {
  return path.join(courseRoot, ".pi-course", "test-tooling", toolingStamp(courseRoot, { tests: true }).slice(0, 16));
}
