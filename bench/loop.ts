/**
 * The learner's edit → result loop, in a practice folder.
 *
 *   npm run bench -- loop [--runs 5] [--skip-ts5]
 *
 * After a one-line edit to `resources.ts`, measures (median of `runs`):
 *  - manual: the chapter's two commands, `npm run build -w @pi/course` then
 *    `node --test --test-name-pattern="Lab 12.1" <lab file>`;
 *  - `npm run lab -w @pi/course -- 12.1`, as a learner types it;
 *  - the same runner without npm (`node packages/course-tools/bin/pi-course.mjs lab 12.1`, the
 *    compiled tooling the practice folder holds: it has no tooling sources to run through tsx);
 *  - watch mode: `npm run lab -w @pi/course -- 12.1 --watch` running, the time from a
 *    rename-style save (a temporary file renamed over `resources.ts`, as editors save) to the
 *    result printed, against the manual commands' median above.
 * Then the compiler alone: TypeScript as installed (7.x) against the previous major
 * (5.x, fetched once into a cache folder outside the repo), cold and after an edit.
 * The practice folder holds the reference solution so every run does the full work.
 */
import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, copyFileSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { median, ms, ratio } from "./lib/stats.js";

const { values } = parseArgs({ options: { runs: { type: "string", default: "5" }, "skip-ts5": { type: "boolean" } } });
const runs = Number(values.runs);
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

function run(cwd: string, command: string, args: string[], expectOk = true): number {
  const start = performance.now();
  const result = spawnSync(command, args, { cwd, encoding: "utf8", shell: process.platform === "win32" });
  const elapsed = performance.now() - start;
  if (expectOk && result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
  }
  return elapsed;
}

const work = mkdtempSync(path.join(os.tmpdir(), "pi-bench-loop-"));
const practice = path.join(work, "practice");
try {
  run(repo, process.execPath, ["--import", "tsx", "packages/course-tools/src/cli.ts", "practice", "12", practice, "--link-modules"]);
  const teaching = path.join(practice, "packages/pi-course/src/resources.ts");
  copyFileSync(path.join(repo, "packages/pi-course/src/resources.ts"), teaching);
  const original = readFileSync(teaching, "utf8");
  let edits = 0;
  const edit = () => appendFileSync(teaching, `// edit ${++edits}\n`);
  const labFile = "packages/pi-course/dist/test/12-resources-extensions.test.js";

  run(practice, npm, ["run", "build", "-w", "@pi/course"]);
  const loops: Record<string, () => number> = {
    "manual (npm run build + node --test)": () =>
      run(practice, npm, ["run", "build", "-w", "@pi/course"]) + run(practice, process.execPath, ["--test", "--test-name-pattern=Lab 12.1", labFile]),
    "npm run lab -w @pi/course -- 12.1": () => run(practice, npm, ["run", "lab", "-w", "@pi/course", "--", "12.1"]),
    "node packages/course-tools/bin/pi-course.mjs lab 12.1": () => run(practice, process.execPath, ["packages/course-tools/bin/pi-course.mjs", "lab", "12.1"]),
  };
  console.log(`learner loop benchmark · node ${process.version} · one-line edit, then Lab 12.1 · median of ${runs}`);
  const medians: Record<string, number> = {};
  for (const [name, loop] of Object.entries(loops)) {
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      edit();
      times.push(loop());
    }
    medians[name] = median(times);
  }
  const manual = medians["manual (npm run build + node --test)"]!;
  for (const [name, value] of Object.entries(medians)) {
    console.log(`${name.padEnd(40)} ${ms(value).padStart(9)}   ${name.startsWith("manual") ? "baseline" : `${ratio(manual / value)} the manual speed`}`);
  }

  // Watch mode: save → result printed, against the manual commands after the same kind of save.
  const renameSave = () => {
    const temporary = path.join(path.dirname(teaching), ".resources.ts.swp");
    writeFileSync(temporary, `${readFileSync(teaching, "utf8")}// save ${++edits}\n`);
    renameSync(temporary, teaching);
  };
  const watcher = spawn(npm, ["run", "lab", "-w", "@pi/course", "--", "12.1", "--watch"], {
    cwd: practice,
    stdio: ["ignore", "pipe", "ignore"],
    shell: process.platform === "win32",
  });
  let printed = "";
  let wake = () => {};
  watcher.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    printed += chunk;
    wake();
  });
  const FOOTER = /保存即重跑/g;
  const results = () => printed.match(FOOTER)?.length ?? 0;
  const waitFor = async (n: number) => {
    while (results() < n) await new Promise<void>((resolve) => (wake = resolve));
  };
  await waitFor(1);
  const watchTimes: number[] = [];
  for (let i = 0; i < runs; i++) {
    const before = results();
    const start = performance.now();
    renameSave();
    await waitFor(before + 1);
    watchTimes.push(performance.now() - start);
  }
  watcher.kill("SIGINT");
  const watchMedian = median(watchTimes);
  console.log(`${"watch: save → result printed".padEnd(40)} ${ms(watchMedian).padStart(9)}   ${ratio(manual / watchMedian)} the manual speed`);

  // The compiler alone: installed TypeScript against the previous major, same tree.
  writeFileSync(teaching, original);
  const compilers: [string, string][] = [["TypeScript (installed)", path.join(repo, "node_modules/typescript/bin/tsc")]];
  if (!values["skip-ts5"]) {
    const cache = path.join(os.tmpdir(), "pi-bench-typescript-5");
    const ts5 = path.join(cache, "node_modules/typescript/bin/tsc");
    if (!existsSync(ts5)) run(os.tmpdir(), npm, ["install", "--prefix", cache, "--no-save", "--no-audit", "--no-fund", "typescript@5"]);
    compilers.push(["TypeScript 5.x", ts5]);
  }
  console.log("\ncompiler                      version    cold        after a one-line edit");
  for (const [index, [name, tsc]] of compilers.entries()) {
    const version = spawnSync(process.execPath, [tsc, "--version"], { encoding: "utf8" }).stdout.trim().replace("Version ", "");
    const outDir = path.join(work, `out-${index}`);
    const args = [tsc, "-p", "packages/pi-course/tsconfig.json", "--outDir", outDir, "--tsBuildInfoFile", path.join(outDir, ".tsbuildinfo")];
    const cold: number[] = [];
    const warm: number[] = [];
    for (let i = 0; i < runs; i++) {
      rmSync(outDir, { recursive: true, force: true });
      cold.push(run(practice, process.execPath, args));
      edit();
      warm.push(run(practice, process.execPath, args));
    }
    console.log(`${name.padEnd(29)} ${version.padEnd(10)} ${ms(median(cold)).padStart(9)}   ${ms(median(warm)).padStart(9)}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
