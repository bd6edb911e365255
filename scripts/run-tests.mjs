#!/usr/bin/env node
// Runs every test file of the repo with node:test, listing the files itself so that no
// shell glob is involved (Node 20's `node --test` does not expand globs, and Windows
// shells do not either). Course tests run from the compiled `dist/`, exactly as the
// chapters tell learners to run them; tooling tests run from source through tsx.
//
//   node scripts/run-tests.mjs                 course tests, then tooling tests
//   node scripts/run-tests.mjs --course-only   only packages/pi-course/dist/test
//   node scripts/run-tests.mjs --tooling-only  only scripts/test
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Test files directly inside `dir` whose names end with `suffix`, sorted by code unit. */
function testFiles(dir, suffix) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith(suffix))
    .sort()
    .map((name) => path.join(dir, name));
}

function run(label, args) {
  console.log(`\n# ${label}: node ${args.join(" ")}`);
  const result = spawnSync(process.execPath, args, { cwd: repo, stdio: "inherit" });
  return result.status === 0;
}

const flags = new Set(process.argv.slice(2));
const suites = [];
if (!flags.has("--tooling-only")) {
  // Listed from the sources, not from dist/, so a deleted test never keeps running
  // from a stale compiled copy; a source without its compiled file means a stale build.
  const sources = testFiles(path.join(repo, "packages/pi-course/test"), ".test.ts");
  const files = sources.map((source) =>
    path.join(repo, "packages/pi-course/dist/test", path.basename(source).replace(/\.ts$/, ".js")),
  );
  const missing = files.filter((file) => !existsSync(file));
  if (files.length === 0 || missing.length > 0) {
    console.error(`compiled course tests missing (${missing.map((f) => path.basename(f)).join(", ") || "none found"}): run \`npm run build\` first`);
    process.exit(1);
  }
  suites.push(["course tests", ["--test", ...files.map((f) => path.relative(repo, f))]]);
}
if (!flags.has("--course-only")) {
  const files = testFiles(path.join(repo, "scripts/test"), ".test.ts");
  if (files.length > 0) {
    suites.push(["tooling tests", ["--import", "tsx", "--test", ...files.map((f) => path.relative(repo, f))]]);
  }
}

let ok = true;
for (const [label, args] of suites) ok = run(label, args) && ok;
process.exitCode = ok ? 0 : 1;
