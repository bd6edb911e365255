#!/usr/bin/env node
// Runs every test file of the repo with node:test, listing the files itself so that no
// shell glob is involved (Node 20's `node --test` does not expand globs, and Windows
// shells do not either). Course tests run from the compiled `dist/`, exactly as the
// chapters tell learners to run them. Tooling tests run compiled too, once per state of
// their sources, into the git-ignored `.pi-course/test-tooling/` (scripts/test/support/
// tooling.ts; loading each test file through tsx instead cost 0.3–0.5 s of CPU per file),
// with source maps so that failures name TypeScript lines.
//
//   node scripts/run-tests.mjs                     format and lint, course tests, then tooling tests
//   node scripts/run-tests.mjs --course-only       only packages/pi-course/dist/test
//   node scripts/run-tests.mjs --tooling-only      only scripts/test
//   node scripts/run-tests.mjs --from-source       tooling tests from their sources, through tsx
//   node scripts/run-tests.mjs --concurrency <n>   test files run at once (default: see below)
//
// Test files run in parallel: much of a tooling test's time is spent waiting for the
// processes it starts (git, the compiler, node) and for the time limits and debounces it
// exercises, so files run two per core: on two cores four files at once finish the tooling
// suite in 0.88× the time two at a time take, on the same CPU (bench/README.md), and two
// at a time in about 60% of one at a time. node's own default on two cores is one file at
// a time (available parallelism minus one). Larger files start first, so that the longest
// end-to-end files do not end up alone at the end.
//
// The suites run at the same time, each a `node --test` of its own, the course tests one file
// per core beside the tooling tests: they then fill the cores while the tooling tests wait for
// their processes, instead of running before them. Each suite's report is printed whole and in
// suite order (the first as it comes, a later one once every suite before it is printed), with
// the reporter and colours a terminal would get when the runner's output is one.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";

/**
 * The course tree this runner serves: the nearest folder above it that holds the course
 * package (`scripts/` in the repository, `packages/course-tools/dist/` in a practice folder).
 */
function courseTree(from) {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "packages", "pi-course", "package.json"))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(from, "..");
  }
}

const repo = courseTree(path.dirname(fileURLToPath(import.meta.url)));

/** Test files directly inside `dir` whose names end with `suffix`, sorted by code unit. */
function testFiles(dir, suffix) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith(suffix))
    .sort()
    .map((name) => path.join(dir, name));
}

/** Test files inside `dir` and its folders (except `support/`, the fixtures), sorted by path. */
function testFilesBelow(dir, suffix) {
  if (!existsSync(dir)) return [];
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && entry.name !== "support") found.push(...testFilesBelow(path.join(dir, entry.name), suffix));
    else if (entry.isFile() && entry.name.endsWith(suffix)) found.push(path.join(dir, entry.name));
  }
  return found.sort();
}

/** `files` with the largest first (ties by name): a cheap stand-in for "longest first". */
function largestFirst(files) {
  return [...files].sort((a, b) => statSync(b).size - statSync(a).size || (a < b ? -1 : 1));
}

/**
 * Starts every suite at once and prints their reports one after the other, in order: the
 * first suite's output as it comes, a later suite's held until every suite before it has
 * been printed. Resolves with true when every suite passed.
 */
async function runAll(suites) {
  // Piped output is no terminal: the reporter and colours a terminal would get are asked for.
  const terminal = process.stdout.isTTY === true;
  const env = terminal ? { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? "1" } : process.env;
  const runs = suites.map(([label, args]) => {
    const reporterArgs = terminal && args.includes("--test") ? ["--test-reporter=spec"] : [];
    const started = performance.now();
    const child = spawn(process.execPath, [...reporterArgs, ...args], { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"] });
    const run = { label, args, chunks: [], live: false, done: undefined };
    const take = (stream) => (chunk) => {
      if (run.live) stream.write(chunk);
      else run.chunks.push([stream, chunk]);
    };
    child.stdout.on("data", take(process.stdout));
    child.stderr.on("data", take(process.stderr));
    run.done = new Promise((resolve) => {
      child.on("error", (error) => resolve({ ok: false, seconds: 0, error }));
      child.on("close", (code) => resolve({ ok: code === 0, seconds: (performance.now() - started) / 1000 }));
    });
    return run;
  });
  let ok = true;
  for (const run of runs) {
    console.log(`\n# ${run.label}: node ${run.args.join(" ")}`);
    for (const [stream, chunk] of run.chunks) stream.write(chunk);
    run.chunks = [];
    run.live = true;
    const { ok: passed, seconds, error } = await run.done;
    if (error !== undefined) console.error(`# ${run.label}: ${error.message}`);
    console.log(`# ${run.label}: ${seconds.toFixed(1)} s`);
    ok = passed && ok;
  }
  return ok;
}

let options;
try {
  options = parseArgs({
    options: { "course-only": { type: "boolean" }, "tooling-only": { type: "boolean" }, "from-source": { type: "boolean" }, concurrency: { type: "string" } },
  }).values;
} catch (error) {
  console.error(`${error.message}\nusage: node scripts/run-tests.mjs [--course-only | --tooling-only] [--from-source] [--concurrency <n>]`);
  process.exit(2);
}
const concurrency = options.concurrency === undefined ? Math.max(2, 2 * os.availableParallelism()) : Number(options.concurrency);
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error(`--concurrency expects a positive integer, not ${JSON.stringify(options.concurrency)}`);
  process.exit(2);
}

// A hang guard, not a speed check: a test still waiting after this long fails with node's
// own timeout message and the suite goes on, instead of `npm test` never ending. From Node
// 24 on the limit is each test's (its after hooks run, so the processes it started are
// ended); Node 20 and 22 apply it to each test file's process as a whole and cancel the file.
// The slowest test file here takes well under a minute on a loaded two-core machine.
const HANG_GUARD_MS = 300_000;

const suites = [];
// The repository's formatting and lint rules (biome.json, about a second), in the course
// repository only: a practice folder's teaching files are the learner's own.
const practiceFolder = existsSync(path.join(repo, ".pi-course", "practice.json"));
if (!practiceFolder && !options["course-only"] && !options["tooling-only"]) {
  suites.push(["format and lint", [path.join(repo, "node_modules/@biomejs/biome/bin/biome"), "check", "--reporter=summary"]]);
}
if (!options["tooling-only"]) {
  // Listed from the sources, not from dist/, so a deleted test never keeps running
  // from a stale compiled copy; a source without its compiled file means a stale build.
  // The challenge tier (test/challenge/) belongs to every run in the course repository, where
  // the reference must pass it; in a practice folder it is the learner's optional next step
  // (`lab NN --challenge`), not part of the chapters' tests.
  const test = path.join(repo, "packages/pi-course/test");
  const sources = [...testFiles(test, ".test.ts"), ...(practiceFolder ? [] : testFiles(path.join(test, "challenge"), ".test.ts"))];
  const files = sources.map((source) => path.join(repo, "packages/pi-course/dist/test", path.relative(test, source).replace(/\.ts$/, ".js")));
  const missing = files.filter((file) => !existsSync(file));
  if (files.length === 0 || missing.length > 0) {
    console.error(`compiled course tests missing (${missing.map((f) => path.basename(f)).join(", ") || "none found"}): run \`npm run build\` first`);
    process.exit(1);
  }
  // Beside the tooling tests, one course test file per core (a course test waits for nothing).
  const besideTooling = !options["course-only"] && testFilesBelow(path.join(repo, "scripts/test"), ".test.ts").length > 0;
  const courseConcurrency = besideTooling && options.concurrency === undefined ? os.availableParallelism() : concurrency;
  suites.push([
    "course tests",
    [`--test-timeout=${HANG_GUARD_MS}`, "--test", `--test-concurrency=${courseConcurrency}`, ...files.map((f) => path.relative(repo, f))],
  ]);
}
if (!options["course-only"]) {
  const files = largestFirst(testFilesBelow(path.join(repo, "scripts/test"), ".test.ts"));
  if (files.length > 0 && options["from-source"]) {
    suites.push([
      "tooling tests",
      [`--test-timeout=${HANG_GUARD_MS}`, "--import", "tsx", "--test", `--test-concurrency=${concurrency}`, ...files.map((f) => path.relative(repo, f))],
    ]);
  } else if (files.length > 0) {
    const compiled = spawnSync(process.execPath, ["--import", "tsx", path.join(repo, "scripts/test/support/tooling.ts")], { cwd: repo, encoding: "utf8" });
    if (compiled.status !== 0) {
      console.error(`compiling the tooling tests failed:\n${compiled.stdout}${compiled.stderr}`);
      process.exit(1);
    }
    const build = compiled.stdout.trim();
    const compiledFiles = files.map((f) =>
      path.relative(repo, path.join(build, "test", path.relative(path.join(repo, "scripts/test"), f).replace(/\.ts$/, ".js"))),
    );
    suites.push([
      "tooling tests",
      [`--test-timeout=${HANG_GUARD_MS}`, "--enable-source-maps", "--test", `--test-concurrency=${concurrency}`, ...compiledFiles],
    ]);
  }
}

process.exitCode = (await runAll(suites)) ? 0 : 1;
