#!/usr/bin/env node
// Runs every test file of the repo with node:test, listing the files itself so that no
// shell glob is involved (Node 20's `node --test` does not expand globs, and Windows
// shells do not either). Course tests run from the compiled `dist/`, exactly as the
// chapters tell learners to run them. Tooling tests run compiled too, from the tooling
// package's build (`packages/course-tools/dist/test/`, made by `npm run build`, `tsc -b`;
// loading each test file through tsx instead cost 0.3–0.5 s of CPU per file), with source
// maps so that failures name TypeScript lines. Run through the tooling's bin:
//
//   pi-course run-tests                     format and lint, type check, course tests, then tooling tests
//   pi-course run-tests --course-only       only packages/pi-course/dist/test
//   pi-course run-tests --tooling-only      only packages/course-tools/test
//   pi-course run-tests --from-source       tooling tests from their sources, through tsx
//   pi-course run-tests --concurrency <n>   test files run at once (default: see below)
//
// Test files run in parallel: much of a tooling test's time is spent waiting for the
// processes it starts (git, the compiler, node) and for the time limits and debounces it
// exercises, so files run two per core: on two cores four files at once finish the tooling
// suite in 0.88× the time two at a time take, on the same CPU (bench/README.md), and two
// at a time in about 60% of one at a time. node's own default on two cores is one file at
// a time (available parallelism minus one).
//
// In the course repository the test files start longest first, by how long each took last time
// (kept in the git-ignored `.pi-course/test-durations.json`), so that a suite ends on short files
// instead of one long file running alone; `node --test` would sort them by path, so they run
// through `testing/run-files.mjs`, node's own runner in the order given (a practice folder
// runs its course tests with `node --test` as the chapters do). Tooling test files that open
// with `// test-process: shared` run together in one process. Both rules:
// `testing/test-order.mjs`.
//
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";

/**
 * The course tree this runner serves: the nearest folder above it that holds the course
 * package (this file is `packages/course-tools/dist/src/run-tests.mjs`, or its source in `src/`).
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

/** The tooling's test sources (none in a practice folder). */
const TOOLING_TESTS = path.join(repo, "packages/course-tools/test");

/** The module that imports every tooling test file that shares a process, written into the tooling tests' build. */
const SHARED_MODULE = "shared-process.mjs";
/** How long each tooling test file took last time, seconds by course-relative path (git-ignored). */
const DURATIONS = path.join(repo, ".pi-course", "test-durations.json");
/** The runner that keeps the order of its files (`node --test` sorts them by path). */
const RUN_FILES = path.join(path.dirname(fileURLToPath(import.meta.url)), "testing", "run-files.mjs");

/** The times `.pi-course/test-durations.json` holds; empty when there are none. */
function knownDurations() {
  try {
    const known = JSON.parse(readFileSync(DURATIONS, "utf8"));
    return known !== null && typeof known.files === "object" && known.files !== null ? known.files : {};
  } catch {
    return {};
  }
}

/**
 * Writes `content` to `file` unless it holds it already, through a temporary file renamed over
 * it (another run may read the same build at the same time).
 */
function writeIfChanged(file, content) {
  if (existsSync(file) && readFileSync(file, "utf8") === content) return;
  const temporary = `${file}.${process.pid}`;
  writeFileSync(temporary, content);
  renameSync(temporary, file);
}

/** `testing/test-order.mjs`, loaded when a suite is laid out by it (never in a practice folder). */
const testOrder = () => import(pathToFileURL(path.join(path.dirname(RUN_FILES), "test-order.mjs")).href);

/**
 * What `run-files.mjs` reports, to keep: the file it writes the seconds into (`reported`), by the
 * file node reported each test under (a test source with source maps, else a compiled file below
 * `compiled`), and the folder of the sources a compiled file below `compiled` comes from.
 */
const reports = [];

/**
 * Keeps the seconds the suites reported (`reports`) in `.pi-course/test-durations.json`
 * (`mergeDurations`), by course-relative source path, and removes the files they wrote.
 */
async function recordDurations() {
  if (reports.length === 0) return;
  const { mergeDurations } = await testOrder();
  const bySource = {};
  for (const { reported, compiled, sources } of reports) {
    let seconds;
    try {
      seconds = JSON.parse(readFileSync(reported, "utf8"));
    } catch {
      continue;
    } finally {
      rmSync(reported, { force: true });
    }
    for (const [file, value] of Object.entries(seconds)) {
      const below = path.relative(compiled, file);
      const source = below.startsWith("..") || path.isAbsolute(below) ? file : path.join(sources, below.replace(/\.js$/, ".ts"));
      const relative = path.relative(repo, source);
      if (!relative.startsWith("..") && !path.isAbsolute(relative) && existsSync(source)) bySource[relative.split(path.sep).join("/")] = value;
    }
  }
  const files = mergeDurations(knownDurations(), bySource, (file) => existsSync(path.join(repo, file)));
  writeFileSync(DURATIONS, `${JSON.stringify({ files }, null, 1)}\n`);
}

/**
 * The arguments that run `units` (`{ run, sources, size }`, see `test-order.mjs`) through
 * `run-files.mjs`, longest first, `concurrency` at a time, with node flags `nodeFlags`; what
 * they report is kept by `recordDurations` (compiled files below `compiled` come from `sources`).
 */
async function orderedRun(units, concurrency, { nodeFlags = [], compiled, sources }) {
  const { longestFirst } = await testOrder();
  const reported = path.join(repo, ".pi-course", `test-durations.${process.pid}.${reports.length}.json`);
  mkdirSync(path.dirname(reported), { recursive: true });
  reports.push({ reported, compiled, sources });
  return [
    // Also a node flag: the test processes inherit it, and from Node 24 on it is each test's limit there.
    `--test-timeout=${HANG_GUARD_MS}`,
    ...nodeFlags,
    RUN_FILES,
    "--concurrency",
    String(concurrency),
    "--timeout",
    String(HANG_GUARD_MS),
    "--durations",
    reported,
    ...longestFirst(units, knownDurations()).map((unit) => path.relative(repo, unit.run)),
  ];
}

/** A unit of `run-files.mjs`: the file node runs, the test sources it holds and their size. */
function unitOf(run, sources) {
  return {
    run,
    sources: sources.map((f) => path.relative(repo, f).split(path.sep).join("/")),
    size: sources.reduce((sum, f) => sum + statSync(f).size, 0),
  };
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
  const runs = suites.map(([label, args, command = process.execPath]) => {
    let nodeArgs = terminal && args.includes("--test") ? ["--test-reporter=spec", ...args] : args;
    if (terminal && args.includes(RUN_FILES)) nodeArgs = args.flatMap((arg) => (arg === RUN_FILES ? [arg, "--reporter", "spec"] : [arg]));
    const started = performance.now();
    const child = spawn(command, nodeArgs, { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"] });
    const run = { label, command, args, chunks: [], live: false, done: undefined };
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
    console.log(`\n# ${run.label}: ${run.command === process.execPath ? "node" : path.basename(run.command)} ${run.args.join(" ")}`);
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
  console.error(`${error.message}\nusage: pi-course run-tests [--course-only | --tooling-only] [--from-source] [--concurrency <n>]`);
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
  // The type check of bench/ (the rest of `npm run typecheck`: the build before the tests,
  // `tsc -b`, has checked the course and the tooling), beside the tests rather than before
  // them: nothing here waits for it.
  const { findCompiler } = await import(pathToFileURL(path.join(path.dirname(fileURLToPath(import.meta.url)), "core", "typescript.mjs")).href);
  const compiler = findCompiler(path.join(repo, "packages", "pi-course"));
  if (!("command" in compiler)) {
    console.error("no TypeScript compiler in node_modules: run npm install first");
    process.exit(1);
  }
  suites.push(["type check", [...compiler.args, "-p", "bench/tsconfig.json", "--pretty", "false"], compiler.command]);
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
  const besideTooling = !options["course-only"] && testFilesBelow(TOOLING_TESTS, ".test.ts").length > 0;
  const courseConcurrency = besideTooling && options.concurrency === undefined ? os.availableParallelism() : concurrency;
  if (practiceFolder) {
    suites.push([
      "course tests",
      [`--test-timeout=${HANG_GUARD_MS}`, "--test", `--test-concurrency=${courseConcurrency}`, ...files.map((f) => path.relative(repo, f))],
    ]);
  } else {
    // In the course repository, longest first too (a practice folder keeps node's own order).
    const units = files.map((file, index) => unitOf(file, [sources[index]]));
    suites.push(["course tests", await orderedRun(units, courseConcurrency, { compiled: path.join(repo, "packages/pi-course/dist/test"), sources: test })]);
  }
}
if (!options["course-only"]) {
  const files = testFilesBelow(TOOLING_TESTS, ".test.ts");
  if (files.length > 0 && options["from-source"]) {
    suites.push([
      "tooling tests",
      [`--test-timeout=${HANG_GUARD_MS}`, "--import", "tsx", "--test", `--test-concurrency=${concurrency}`, ...files.map((f) => path.relative(repo, f))],
    ]);
  } else if (files.length > 0) {
    // Listed from the sources, like the course tests: a source without its compiled file means a stale build.
    const build = path.join(repo, "packages/course-tools/dist");
    const compiledOf = (f) => path.join(build, "test", path.relative(TOOLING_TESTS, f).replace(/\.ts$/, ".js"));
    const missing = files.filter((f) => !existsSync(compiledOf(f)));
    if (missing.length > 0) {
      console.error(`compiled tooling tests missing (${missing.map((f) => path.basename(f)).join(", ")}): run \`npm run build\` first`);
      process.exit(1);
    }
    const { SHARED_PROCESS, sharesProcess } = await testOrder();
    const shared = files.filter((f) => sharesProcess(readFileSync(f, "utf8")));
    const units = files.filter((f) => !shared.includes(f)).map((f) => unitOf(compiledOf(f), [f]));
    if (shared.length > 0) {
      const module = path.join(build, "test", SHARED_MODULE);
      const imports = shared.map((f) => `import ${JSON.stringify(`./${path.relative(path.dirname(module), compiledOf(f)).split(path.sep).join("/")}`)};\n`);
      writeIfChanged(
        module,
        `// The tooling test files that open with "${SHARED_PROCESS}", in one process (packages/course-tools/src/run-tests.mjs).\n${imports.join("")}`,
      );
      units.push(unitOf(module, shared));
    }
    suites.push([
      "tooling tests",
      await orderedRun(units, concurrency, {
        nodeFlags: ["--enable-source-maps"],
        compiled: path.join(build, "test"),
        sources: TOOLING_TESTS,
      }),
    ]);
  }
}

const passed = await runAll(suites);
await recordDurations();
process.exitCode = passed ? 0 : 1;
