/**
 * The learner loop on the real chapter 12, in a practice folder laid out as
 * `practice 12 --link-modules` lays it out (under a path with spaces and parentheses):
 * `npm start` runs the learner's own `resources.ts` and stops at its first unfinished lab,
 * a result.
 *
 * `verify 12` replays the rest of the loop from the chapter text, and the tooling tests
 * check each step of it on the synthetic mini chapters, where a run costs a fraction of
 * chapter 12's build; the steps this file ran on chapter 12 until this round are there:
 * - a red lab through npm is a result with no npm error block, and not the reference:
 *   `launch-npm.test.ts`; every lab of chapter 12's starter is not started, the first on its
 *   own scaffold error: `verify 12` ("first red"; on the synthetic chapter,
 *   `practice/folder.test.ts`); its location in the learner's file: `lab.test.ts` and
 *   `mcp.test.ts` (on the mini chapter), and the lab outputs `verify 12` replays;
 * - a lab stuck in an endless loop ends at its time limit with one message naming the test and
 *   the function it was stuck in: `testing/labs.test.ts`; a busy `for (;;) {}` ended at the limit
 *   given by `lab --timeout`, said once, no temp folder left: `lab.test.ts`;
 * - watch mode reruns after each of two rename-style saves in a row: `lab.test.ts`;
 * - `reset` brings the starter and its scaffold errors back and keeps the learner's file:
 *   `reset/reset.test.ts`;
 * - `fault` on a correct solution whose trust branch is one line injects, is caught and
 *   restores the file byte for byte: `fault.test.ts` (the command) and `placement.test.ts`
 *   (chapter 12's own one-line `loadExtension`, patched in its own names).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { findHome } from "../src/course/chapter-home.js";
import { stagedTeachingText } from "../src/verify/staged.js";
import { practiceCopy, repoRoot } from "./support/lab-fixture.js";

const chapter12 = findHome(repoRoot, "12") !== undefined;
const TEACHING = "packages/pi-course/src/resources.ts";
const REFERENCE = chapter12 ? readFileSync(path.join(repoRoot, TEACHING), "utf8") : "";

let root = "";
let tmp = "";
/** The starter as the practice folder got it (derived from the reference and the scaffold). */
let STARTER = "";
test.before(async () => {
  if (!chapter12) return;
  root = await practiceCopy(repoRoot, "12");
  STARTER = readFileSync(path.join(root, TEACHING), "utf8");
  tmp = await mkdtemp(path.join(os.tmpdir(), "pi-ch12-tmp-"));
});
test.after(async () => {
  if (root !== "") await rm(root, { recursive: true, force: true, maxRetries: 3 });
  if (tmp !== "") await rm(tmp, { recursive: true, force: true, maxRetries: 3 });
});

const skip = !chapter12 && "chapter 12 is not in this tree";
// Typed at the folder's root (npm's INIT_CWD): locations are relative to it.
const env = () => ({ ...process.env, TMPDIR: tmp, TEMP: tmp, TMP: tmp, NO_COLOR: "1", CI: "", INIT_CWD: root });
const write = (text: string) => writeFileSync(path.join(root, TEACHING), text);

test("chapter 12 practice: npm start runs the learner's resources.ts and stops at its first unfinished lab, a result", { skip }, () => {
  const labIds = ["12.1", "12.2", "12.3", "12.4", "12.5"];
  const compiler = path.join(repoRoot, "node_modules", "typescript", "bin", "tsc");
  // One stage stands for every other: labs 12.1–12.3 finished, 12.4 and 12.5 still the starter's,
  // so the session has to stop at the first of the two unfinished labs (a second stage, 12.5 the
  // only one left, cost another build of the course and another session: about 1 s of CPU).
  const done = 3;
  // The labs before `done` finished, the rest still the starter's.
  write(stagedTeachingText({ file: TEACHING, reference: REFERENCE, starter: STARTER, labIds, done }).text);
  const built = spawnSync(process.execPath, [compiler, "-p", path.join(root, "packages/pi-course/tsconfig.json")], { encoding: "utf8" });
  assert.equal(built.status, 0, built.stdout);
  const run = spawnSync(process.execPath, [path.join(root, "packages", "pi-course", "bin", "start.mjs")], { cwd: root, env: env(), encoding: "utf8" });
  const lab = labIds[done]!;
  assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
  assert.match(
    run.stderr,
    new RegExp(`^未完成  Lab ${lab.replace(".", "\\.")} [^\\n]*尚未实现\\n[^\\n]*完成 Lab ${lab.replace(".", "\\.")} 及之后的 Lab`, "m"),
    `${run.stdout}${run.stderr}`,
  );
  assert.doesNotMatch(run.stdout, /结束  /, "the session does not pretend to have run to its end");
});
