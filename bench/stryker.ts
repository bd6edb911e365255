/**
 * Mutation score of Chapter 12's lab tests: StrykerJS mutates the lab-taught declarations
 * of `packages/pi-course/src/resources.ts` and runs the chapter's lab tests against each
 * mutant.
 *
 *   npm run bench -- stryker [--concurrency 2] [--with-helpers] [--with-challenge] [--incremental] [--keep] [--list-reviewed]
 *   npm run bench -- stryker --report-only [--list-reviewed]     the last run's tables again, no run
 *
 * - What is mutated: the declarations the starter leaves to the learner, marked
 *   `🔨 Lab 12.N` in chapter 12's starter (discoverResources, activateSkill,
 *   renderTemplate, formatResourceContext, ExtensionHostImpl, createExtensionHost,
 *   loadExtension, hookedExecutor). `--with-helpers` adds every declaration of the
 *   reference that the starter lacks (the helpers a learner writes, the challenge tier's
 *   hardening and lenient discovery among them). String literals are not mutated
 *   (`StringLiteral` excluded): a message's wording is free, its code is what is taught.
 * - How: the command runner. Stryker instruments every mutant into one copy of the source
 *   (mutant switching), the sandbox builds that copy once (`buildCommand`, the course's
 *   tsc) and every mutant is one `node --test` of the compiled lab test file only, with the
 *   mutant chosen by the `__STRYKER_ACTIVE_MUTANT__` variable. The command runner has no
 *   coverage analysis: every mutant is run, none is "no coverage".
 * - Where: a copy of the course package in a temporary folder (src, test, tsconfig, the
 *   repo's node_modules linked), inside which Stryker makes its own sandbox; the repo's
 *   files are only read. The script checks that `resources.ts` is byte for byte unchanged.
 * - Stryker itself is not a dependency of the course (see the dependency table in docs/dependencies.md):
 *   the pinned version for the running Node (10.x needs Node 22; 9.6 runs on Node 20) is
 *   installed on first use into `.pi-course/stryker/<version>/` (git-ignored) with
 *   `npm install --prefix`, and reused afterwards.
 * - `--incremental`: Stryker's incremental file in `.pi-course/stryker/`. The command runner
 *   cannot tell Stryker which tests changed, so the file is used only while everything
 *   but `resources.ts` (the tests, the other sources) is what it was when the file was
 *   written; otherwise the run is a full one.
 *
 * - Coverage: the command runner gives Stryker none, so each test process loads a small
 *   hook (`node --import`) that writes the instrumented code's own coverage record during
 *   the dry run; a survivor that no lab test even reaches is counted as "no coverage".
 * - Reviewed survivors: `bench/stryker-reviewed.json` lists the survivors judged not to be
 *   gaps in the lab tests (equivalent mutants, and rules of the challenge tier, which the
 *   labs leave free on purpose), each with its reason; `--list-reviewed` prints them.
 *
 * Prints one row per declaration (per method for a class): killed / timeout / survived /
 * no coverage / errors / ignored, the score as Stryker counts it (timeouts detected, no
 * coverage not) and the score on covered code; the total; the score without the reviewed
 * survivors; every survivor not reviewed yet, with its line and replacement; the run time
 * and where the HTML and JSON reports are.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { loadManifest } from "../packages/course-tools/src/course/manifest.js";
import { starterOf } from "../packages/course-tools/src/course/starters.js";

const { values } = parseArgs({
  options: {
    concurrency: { type: "string", default: String(Math.max(1, Math.min(os.availableParallelism(), 4))) },
    "with-helpers": { type: "boolean" },
    "with-challenge": { type: "boolean" },
    incremental: { type: "boolean" },
    keep: { type: "boolean" },
    "list-reviewed": { type: "boolean" },
    "report-only": { type: "boolean" },
  },
});

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const PACKAGE = "packages/pi-course";
const TARGET = `${PACKAGE}/src/resources.ts`;
/** Where the lab markers are: chapter 12's starter (derived from its scaffold and the reference). */
const STARTER = "chapter 12's starter";
const LAB_TESTS = `${PACKAGE}/dist/test/12-resources-extensions.test.js`;
/** `--with-challenge`: the challenge tier too, i.e. every test the reference must pass, not only what a learner's labs check. */
const CHALLENGE_TESTS = ["catalog", "activation", "files", "extensions", "hooks"].map((theme) => `${PACKAGE}/dist/test/challenge/12-${theme}.test.js`);
const TESTS = values["with-challenge"] === true ? [LAB_TESTS, ...CHALLENGE_TESTS].join(" ") : LAB_TESTS;
const NODE_MAJOR = Number(process.versions.node.split(".")[0]);
/** Pinned: StrykerJS 10 needs Node ≥ 22; 9.6 is the last line that runs on Node 20. */
const STRYKER_VERSION = NODE_MAJOR >= 22 ? "10.1.1" : "9.6.1";
const cacheRoot = path.join(repo, ".pi-course", "stryker");
const install = path.join(cacheRoot, STRYKER_VERSION);
const reportDir = path.join(cacheRoot, "reports");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

// ---------------------------------------------------------------------------
// Stryker, installed on demand
// ---------------------------------------------------------------------------

function strykerBin(): string {
  const manifest = path.join(install, "node_modules", "@stryker-mutator", "core", "package.json");
  if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version === STRYKER_VERSION) {
    console.log(`StrykerJS ${STRYKER_VERSION} (cached in ${path.relative(repo, install)}/)`);
  } else {
    console.log(`installing StrykerJS ${STRYKER_VERSION} into ${path.relative(repo, install)}/ (git-ignored; not a dependency of the course) …`);
    mkdirSync(install, { recursive: true });
    writeFileSync(
      path.join(install, "package.json"),
      `${JSON.stringify({ private: true, description: "bench/stryker.ts's own copy of StrykerJS" }, null, 2)}\n`,
    );
    const start = performance.now();
    const result = spawnSync(
      npm,
      ["install", "--prefix", install, "--no-audit", "--no-fund", "--loglevel", "error", `@stryker-mutator/core@${STRYKER_VERSION}`],
      {
        stdio: "inherit",
        shell: process.platform === "win32",
      },
    );
    if (result.status !== 0) throw new Error(`npm install of @stryker-mutator/core@${STRYKER_VERSION} failed (${result.status})`);
    console.log(`installed in ${((performance.now() - start) / 1000).toFixed(1)} s, ${mebibytes(folderSize(path.join(install, "node_modules")))} on disk`);
  }
  return path.join(install, "node_modules", "@stryker-mutator", "core", "bin", "stryker.js");
}

function folderSize(folder: string): number {
  let total = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) total += folderSize(full);
    else if (entry.isFile()) total += statSync(full).size;
  }
  return total;
}

function mebibytes(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

// ---------------------------------------------------------------------------
// The declarations to mutate
// ---------------------------------------------------------------------------

interface Declaration {
  name: string;
  /** 1-based, inclusive: the declaration's own lines, without the comments after it. */
  start: number;
  end: number;
  text: string;
}

/**
 * The top-level declarations of a course source file. The course's sources are
 * formatted: every top-level declaration starts at column 0 with its keyword, and ends
 * where the next one (or its doc comment) begins.
 */
function declarationsOf(source: string): Declaration[] {
  const lines = source.split("\n");
  const starts: { name: string; line: number }[] = [];
  lines.forEach((line, index) => {
    const match = /^(?:export )?(?:async )?(?:function|class|const|let|interface|type) ([A-Za-z_$][\w$]*)/.exec(line);
    if (match !== null) starts.push({ name: match[1]!, line: index + 1 });
  });
  return starts.map(({ name, line }, index) => {
    let end = (starts[index + 1]?.line ?? lines.length + 1) - 1;
    // Give back the blank lines, comments and doc comment that precede the next declaration.
    while (end > line && /^(\s*|\/\/.*|\/\*\*.*|\s*\*.*|\s*\*\/)$/.test(lines[end - 1]!) && !/^[}\]);]/.test(lines[end - 1]!)) end--;
    return { name, start: line, end, text: lines.slice(line - 1, end).join("\n") };
  });
}

/** One row of the report: a declaration, or one method of a class (its other lines: `Class (fields)`). */
interface Part {
  name: string;
  start: number;
  end: number;
}

/** The rows of `declaration`: itself, or for a class each method and the rest. */
function partsOf(declaration: Declaration): Part[] {
  if (!/^(?:export )?class /.test(declaration.text)) return [declaration];
  const lines = declaration.text.split("\n");
  const parts: Part[] = [];
  lines.forEach((line, index) => {
    const method = /^ {2}(?:async |static |get |set |override )*(#?[A-Za-z_$][\w$]*)\s*[(<]/.exec(line);
    if (method === null) return;
    let end = index;
    while (end < lines.length - 1 && lines[end] !== "  }") end++;
    parts.push({ name: `${declaration.name}.${method[1]}`, start: declaration.start + index, end: declaration.start + end });
  });
  return [...parts, { name: `${declaration.name} (fields)`, start: declaration.start, end: declaration.end }];
}

/** What this run mutates: the lab-marked declarations (and with `--with-helpers`, every one the starter lacks). */
function selectDeclarations(reference: string, starter: string): { chosen: Declaration[]; helpers: boolean } {
  const starterDeclarations = new Map(declarationsOf(starter).map((d) => [d.name, d]));
  const chosen: Declaration[] = [];
  for (const declaration of declarationsOf(reference)) {
    if (/^(?:export )?(?:interface|type) /.test(declaration.text)) continue; // types: nothing to mutate
    const inStarter = starterDeclarations.get(declaration.name);
    const labMarked = inStarter !== undefined && /🔨 Lab 12\.\d|labError\(/.test(inStarter.text);
    if (labMarked || (values["with-helpers"] === true && inStarter === undefined)) chosen.push(declaration);
  }
  const names = chosen.map((d) => d.name);
  for (const expected of [
    "discoverResources",
    "activateSkill",
    "renderTemplate",
    "formatResourceContext",
    "ExtensionHostImpl",
    "createExtensionHost",
    "loadExtension",
    "hookedExecutor",
  ]) {
    if (!names.includes(expected)) throw new Error(`${expected} was expected among the lab-marked declarations of ${STARTER}; the starter or the scan changed`);
  }
  return { chosen, helpers: values["with-helpers"] === true };
}

// ---------------------------------------------------------------------------
// The workspace
// ---------------------------------------------------------------------------

/** A copy of the course package, as the retired `measure.ts` made one (the runner `testing/fault-runs.ts` makes one the same way). */
function makeWorkspace(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "pi-course-stryker-"));
  const pkg = path.join(dir, PACKAGE);
  mkdirSync(pkg, { recursive: true });
  for (const part of ["src", "test"]) cpSync(path.join(repo, PACKAGE, part), path.join(pkg, part), { recursive: true });
  for (const file of ["tsconfig.json", "package.json"]) cpSync(path.join(repo, PACKAGE, file), path.join(pkg, file));
  cpSync(path.join(repo, "tsconfig.base.json"), path.join(dir, "tsconfig.base.json"));
  symlinkSync(path.join(repo, "node_modules"), path.join(dir, "node_modules"), "junction");
  writeFileSync(path.join(dir, "package.json"), `${JSON.stringify({ private: true, type: "module" }, null, 2)}\n`);
  return dir;
}

/** A fingerprint of everything the tests depend on except the mutated file. */
function testSideFingerprint(): string {
  const hash = createHash("sha256");
  const walk = (relative: string) => {
    const full = path.join(repo, relative);
    if (statSync(full).isDirectory()) {
      for (const name of readdirSync(full).sort()) walk(path.posix.join(relative, name));
    } else if (relative !== TARGET) {
      hash.update(`${relative}\0`).update(readFileSync(full)).update("\0");
    }
  };
  for (const part of [`${PACKAGE}/src`, `${PACKAGE}/test`, `${PACKAGE}/tsconfig.json`, "tsconfig.base.json"]) walk(part);
  return hash.update(`stryker ${STRYKER_VERSION} ${values["with-helpers"] === true ? "helpers" : "labs"}`).digest("hex");
}

// ---------------------------------------------------------------------------
// Coverage: which mutants the lab tests reach at all
// ---------------------------------------------------------------------------

/**
 * Loaded into every test process (`node --import`): when no mutant is active (Stryker's dry
 * run), it writes the instrumented code's own coverage record at exit. The command runner
 * gives Stryker no coverage, so the script reads these files itself: a mutant that the lab
 * tests never reach counts as "no coverage", not as survived.
 */
const COVERAGE_HOOK = `import { mkdirSync, writeFileSync } from "node:fs";
const out = process.env.PI_COURSE_STRYKER_COVERAGE;
if (out && !process.env.__STRYKER_ACTIVE_MUTANT__) {
  process.on("exit", () => {
    const coverage = globalThis.__stryker__?.mutantCoverage;
    if (coverage === undefined) return;
    mkdirSync(out, { recursive: true });
    writeFileSync(\`\${out}/\${process.pid}.json\`, JSON.stringify(coverage));
  });
}
`;

/** The ids of every mutant some lab test reached in the dry run, or undefined when nothing was recorded. */
function coveredMutants(folder: string): Set<string> | undefined {
  if (!existsSync(folder)) return undefined;
  const covered = new Set<string>();
  for (const name of readdirSync(folder)) {
    const coverage = JSON.parse(readFileSync(path.join(folder, name), "utf8")) as {
      static?: Record<string, number>;
      perTest?: Record<string, Record<string, number>>;
    };
    for (const id of Object.keys(coverage.static ?? {})) covered.add(id);
    for (const perTest of Object.values(coverage.perTest ?? {})) for (const id of Object.keys(perTest)) covered.add(id);
  }
  return covered;
}

// ---------------------------------------------------------------------------
// Reviewed survivors
// ---------------------------------------------------------------------------

/**
 * `bench/stryker-reviewed.json`: survivors judged not to be lab-test gaps (an equivalent
 * mutant, or a rule of the challenge tier, which the labs deliberately leave free), each
 * with its reason. A mutant is matched by declaration, mutator and `mutant`, a hash of its
 * original text and replacement (see `mutantKey`), never by line, so edits elsewhere in
 * the file keep the list valid. The code itself is not stored: the file is copied into
 * practice folders, where no line of the reference may appear (the leak audit);
 * `--list-reviewed` prints each reviewed mutant's code. Each entry stands for one survivor
 * (identical mutants in one declaration need one entry each); a survivor not on the list
 * is printed as new.
 */
interface Reviewed {
  declaration: string;
  mutator: string;
  mutant: string;
  reason: string;
}

/** The key of a mutant in the reviewed list: its original text and replacement (each on one line), hashed. */
function mutantKey(original: string, replacement: string): string {
  return createHash("sha256").update(`${original}\0${replacement}`).digest("hex").slice(0, 16);
}

const reviewedPath = path.join(repo, "bench", "stryker-reviewed.json");

function reviewedSurvivors(): Reviewed[] {
  return existsSync(reviewedPath) ? (JSON.parse(readFileSync(reviewedPath, "utf8")) as { survivors: Reviewed[] }).survivors : [];
}

// ---------------------------------------------------------------------------
// The report
// ---------------------------------------------------------------------------

interface ReportMutant {
  id: string;
  mutatorName: string;
  replacement?: string;
  status: string;
  location: { start: { line: number; column: number }; end: { line: number; column: number } };
}

const COLUMNS = ["Killed", "Timeout", "Survived", "NoCoverage", "Errors", "Ignored"] as const;
type Column = (typeof COLUMNS)[number];

function columnOf(status: string, covered: Set<string> | undefined, id: string): Column {
  if (status === "CompileError" || status === "RuntimeError") return "Errors";
  if (status === "Survived" && covered !== undefined && !covered.has(id)) return "NoCoverage";
  return status as Column;
}

function percent(part: number, whole: number): string {
  return whole === 0 ? "—" : `${((100 * part) / whole).toFixed(1)}%`;
}

/** The text a mutant replaced, on one line and shortened. */
function originalText(lines: readonly string[], mutant: ReportMutant): string {
  const { start, end } = mutant.location;
  const picked =
    start.line === end.line
      ? lines[start.line - 1]!.slice(start.column - 1, end.column - 1)
      : [lines[start.line - 1]!.slice(start.column - 1), ...lines.slice(start.line, end.line - 1), lines[end.line - 1]!.slice(0, end.column - 1)].join("\n");
  return flattened(picked);
}

function flattened(value: string): string {
  return value.replace(/\s+/g, " ").trim();
}

function shorten(value: string): string {
  return value.length > 90 ? `${value.slice(0, 87)}…` : value;
}

function printReport(jsonReport: string, declarations: readonly Declaration[], source: string, covered: Set<string> | undefined): void {
  const report = JSON.parse(readFileSync(jsonReport, "utf8")) as { files: Record<string, { mutants: ReportMutant[] }> };
  const file = Object.entries(report.files).find(([name]) => name.replaceAll("\\", "/").endsWith(TARGET));
  if (file === undefined) throw new Error(`${jsonReport} holds no results for ${TARGET}`);
  const lines = source.split("\n");
  const parts = declarations.flatMap(partsOf);
  const rows = new Map<string, Record<Column, number>>(
    parts.map((part) => [part.name, { Killed: 0, Timeout: 0, Survived: 0, NoCoverage: 0, Errors: 0, Ignored: 0 }]),
  );
  const total: Record<Column, number> = { Killed: 0, Timeout: 0, Survived: 0, NoCoverage: 0, Errors: 0, Ignored: 0 };
  const reviewed = reviewedSurvivors();
  const matched = new Set<Reviewed>();
  const survivors: { part: string; mutant: ReportMutant; column: Column; original: string; review?: Reviewed }[] = [];
  for (const mutant of file[1].mutants) {
    const at = mutant.location.start.line;
    const part = parts.find((p) => p.start <= at && at <= p.end);
    if (part === undefined) throw new Error(`mutant ${mutant.id} at line ${at} lies in no selected declaration`);
    const column = columnOf(mutant.status, covered, mutant.id);
    rows.get(part.name)![column] += 1;
    total[column] += 1;
    if (column !== "Survived" && column !== "NoCoverage") continue;
    const original = originalText(lines, mutant);
    const declaration = part.name.split(/[. ]/)[0]!;
    const review = reviewed.find(
      (r) =>
        !matched.has(r) &&
        r.declaration === declaration &&
        r.mutator === mutant.mutatorName &&
        r.mutant === mutantKey(original, flattened(mutant.replacement ?? "")),
    );
    if (review !== undefined) matched.add(review);
    survivors.push({ part: part.name, mutant, column, original, review });
  }
  const header = ["declaration", "lines", "tested", "killed", "timeout", "survived", "no cov.", "errors", "ignored", "score", "covered"];
  const cells = (name: string, range: string, c: Record<Column, number>) => {
    const detected = c.Killed + c.Timeout;
    return [
      name,
      range,
      String(detected + c.Survived + c.NoCoverage + c.Errors),
      String(c.Killed),
      String(c.Timeout),
      String(c.Survived),
      String(c.NoCoverage),
      String(c.Errors),
      String(c.Ignored),
      percent(detected, detected + c.Survived + c.NoCoverage),
      percent(detected, detected + c.Survived),
    ];
  };
  const table = [...parts.map((part) => cells(part.name, `${part.start}-${part.end}`, rows.get(part.name)!)), cells("total", "", total)];
  const widths = header.map((h, column) => Math.max(h.length, ...table.map((row) => row[column]!.length)));
  const line = (row: readonly string[]) => row.map((cell, column) => (column >= 2 ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!))).join("  ");
  console.log(`\n${line(header)}`);
  table.forEach((row, index) => {
    if (index === table.length - 1) console.log(widths.map((w) => "-".repeat(w)).join("  "));
    console.log(line(row));
  });
  console.log(
    "\nscore: (killed + timeout) / (killed + timeout + survived + no coverage), as Stryker counts it; covered: the same without the mutants no lab test reaches" +
      (covered === undefined ? " (no coverage was recorded: every unkilled mutant counts as survived)" : ""),
  );
  const fresh = survivors.filter((s) => s.review === undefined);
  const detected = total.Killed + total.Timeout;
  const reviewedCount = survivors.length - fresh.length;
  console.log(
    `reviewed survivors (${path.relative(repo, reviewedPath)}): ${reviewedCount} of ${survivors.length}; ` +
      `score without them: ${detected} of ${detected + fresh.length} = ${percent(detected, detected + fresh.length)}`,
  );
  if (fresh.length > 0) {
    console.log(`\nsurvivors not yet reviewed (${fresh.length}):`);
    for (const { part, mutant, column, original } of fresh) {
      const { line: at, column: col } = mutant.location.start;
      console.log(
        `  #${mutant.id} ${part} ${at}:${col} ${mutant.mutatorName}${column === "NoCoverage" ? " [no coverage]" : ""}: ${shorten(original)}  →  ${shorten(flattened(mutant.replacement ?? "?"))}`,
      );
    }
  }
  if (values["list-reviewed"] === true && reviewedCount > 0) {
    console.log(`\nreviewed survivors (${reviewedCount}):`);
    for (const { part, mutant, column, original, review } of survivors) {
      if (review === undefined) continue;
      console.log(
        `  #${mutant.id} ${part} ${mutant.location.start.line} ${mutant.mutatorName}${column === "NoCoverage" ? " [no coverage]" : ""}: ${shorten(original)}  →  ${shorten(flattened(mutant.replacement ?? "?"))}\n      ${review.reason}`,
      );
    }
  }
  const stale = reviewed.filter((r) => !matched.has(r));
  if (stale.length > 0)
    console.log(
      `\n${stale.length} reviewed entries matched no survivor this run (killed now, or the code changed): ${stale.map((r) => `${r.declaration} ${r.mutator} ${r.mutant}`).join("; ")}`,
    );
}

// ---------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------

const referencePath = path.join(repo, TARGET);
const reference = readFileSync(referencePath, "utf8");
const referenceHash = createHash("sha256").update(reference).digest("hex");
const manifest = await loadManifest(repo, "12");
const starter = starterOf(manifest, manifest.starters[0]!, (file) => readFileSync(path.join(repo, file), "utf8")).text;
const { chosen, helpers } = selectDeclarations(reference, starter);
const jsonReport = path.join(reportDir, "mutation.json");
const htmlReport = path.join(reportDir, "mutation.html");
/** The ids the lab tests reached in the last run, kept next to its report. */
const coverageRecord = path.join(reportDir, "lab-coverage.json");
if (values["report-only"] === true) {
  if (!existsSync(jsonReport)) throw new Error(`no report yet: run npm run bench -- stryker first`);
  const recorded = existsSync(coverageRecord) ? new Set(JSON.parse(readFileSync(coverageRecord, "utf8")) as string[]) : undefined;
  printReport(jsonReport, chosen, reference, recorded);
  console.log(`\nfrom ${path.relative(repo, jsonReport)} (the last run; the mutated file must be unchanged since)`);
  process.exit();
}
const bin = strykerBin();
const workspace = makeWorkspace();
const coverageFolder = path.join(workspace, "coverage");
writeFileSync(path.join(workspace, "stryker-coverage.mjs"), COVERAGE_HOOK);
mkdirSync(reportDir, { recursive: true });
const incrementalFile = path.join(cacheRoot, `incremental-${STRYKER_VERSION}${helpers ? "-helpers" : ""}.json`);
const fingerprintFile = `${incrementalFile}.fingerprint`;
const fingerprint = testSideFingerprint();
const incremental = values.incremental === true;
if (incremental && existsSync(incrementalFile) && (!existsSync(fingerprintFile) || readFileSync(fingerprintFile, "utf8") !== fingerprint)) {
  console.log("incremental: the tests or the other sources changed since the last run, so every mutant is tested again");
  rmSync(incrementalFile, { force: true });
}
const config = {
  packageManager: "npm",
  testRunner: "command",
  commandRunner: { command: `node --import ./stryker-coverage.mjs --test --test-reporter=dot ${TESTS}` },
  buildCommand: `tsc -p ${PACKAGE}/tsconfig.json`,
  coverageAnalysis: "off",
  mutate: chosen.map((d) => `${TARGET}:${d.start}-${d.end}`),
  mutator: { excludedMutations: ["StringLiteral"] },
  concurrency: Number(values.concurrency),
  reporters: ["json", "html", process.stdout.isTTY ? "progress" : "progress-append-only"],
  jsonReporter: { fileName: jsonReport },
  htmlReporter: { fileName: htmlReport },
  incremental,
  incrementalFile,
  tempDirName: ".stryker-tmp",
  cleanTempDir: values.keep !== true,
  thresholds: { high: 90, low: 80, break: null },
};
writeFileSync(path.join(workspace, "stryker.config.json"), `${JSON.stringify(config, null, 2)}\n`);

console.log(
  `Node ${process.version}; mutating ${chosen.length} declarations of ${TARGET}${helpers ? " (lab-marked and helpers)" : " (the lab-marked ones)"}, StringLiteral excluded; ` +
    `tests: node --test ${TESTS}; concurrency ${config.concurrency}${incremental ? "; incremental" : ""}`,
);
console.log(`workspace: ${workspace}`);
const start = performance.now();
const run = spawnSync(process.execPath, [bin, "run", "stryker.config.json"], {
  cwd: workspace,
  stdio: "inherit",
  env: { ...process.env, PI_COURSE_STRYKER_COVERAGE: coverageFolder },
});
const seconds = (performance.now() - start) / 1000;

const after = createHash("sha256").update(readFileSync(referencePath)).digest("hex");
if (after !== referenceHash) {
  console.error(`\n${TARGET} changed during the run: restore it (git checkout -- ${TARGET})`);
  process.exitCode = 1;
}
if (run.status !== 0) {
  console.error(`\nStryker exited with ${run.status}; workspace kept: ${workspace}`);
  process.exitCode = 1;
} else {
  if (incremental) writeFileSync(fingerprintFile, fingerprint);
  const covered = coveredMutants(coverageFolder);
  if (covered === undefined) rmSync(coverageRecord, { force: true });
  else writeFileSync(coverageRecord, `${JSON.stringify([...covered].sort((a, b) => Number(a) - Number(b)))}\n`);
  printReport(jsonReport, chosen, reference, covered);
  console.log(`\nStrykerJS ${STRYKER_VERSION}, Node ${process.version}, ${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`);
  console.log(`reports: ${path.relative(repo, htmlReport)} and ${path.relative(repo, jsonReport)}`);
  console.log(`${TARGET} unchanged (sha256 ${referenceHash.slice(0, 12)})`);
  if (values.keep === true) console.log(`workspace kept: ${workspace}`);
  else rmSync(workspace, { recursive: true, force: true });
}
