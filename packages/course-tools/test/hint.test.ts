// test-process: shared
/** The `hint` command (`packages/course-tools/src/hint.ts`): its command line, and a learner's walk up a ladder. */
import assert from "node:assert/strict";
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import test from "node:test";
import { readHintState } from "../src/lab/hints.js";
import { parseCommand } from "../src/cli.js";
import { HINT_STATE } from "../src/core/paths.js";
import { parseManifest, type LabSpec } from "../src/course/manifest.js";
import { createMiniCourse, MINI_MANIFEST, removeMiniCourse, runInPackage } from "./support/lab-fixture.js";

const [lab1] = parseManifest(MINI_MANIFEST, "chapters/99-mini/chapter.yaml").labs as [LabSpec, LabSpec];

test("hint arguments: a lab, --level 1-4, --reset for a lab or a chapter; everything else is a usage error", () => {
  assert.deepEqual(parseCommand("hint", ["12.2"]), { help: false, reset: false, json: false, target: { chapter: "12", lab: "12.2" } });
  assert.equal(parseCommand("hint", ["12.2", "--level", "3"]).level, 3);
  assert.equal(parseCommand("hint", ["12.2", "--level=4"]).level, 4);
  assert.equal(parseCommand("hint", ["12", "--reset"]).reset, true);
  assert.equal(parseCommand("hint", ["-h"]).help, true);
  const bad = [
    [],
    ["12"],
    ["12.2", "--level"],
    ["12.2", "--level", "0"],
    ["12.2", "--level", "5"],
    ["12.2", "--level", "two"],
    ["12.2", "--level", "1.5"],
    ["12.2", "--reset", "--level", "2"],
    ["12.2", "12.3"],
    ["12.2", "--more"],
  ];
  for (const args of bad) assert.throws(() => parseCommand("hint", args), { code: "USAGE" }, args.join(" "));
});

test("hint command: walks four rungs, remembers them, resets, and survives a corrupt state file", async (t) => {
  const course = await createMiniCourse("starter", { practice: true });
  t.after(() => removeMiniCourse(course));
  // The climb itself is `takeHint`'s (tested in lab/hints.test.ts); here: the command remembers between runs.
  const levels: string[] = [];
  for (let i = 0; i < 2; i++) {
    const run = await runInPackage(course.root, "hint.ts", ["99.2"]);
    assert.equal(run.code, 0, run.stderr);
    levels.push(/第 (\d)\/4 级/.exec(run.stdout)?.[1] ?? "?");
  }
  assert.deepEqual(levels, ["1", "2"]);
  assert.deepEqual((await readHintState(course.root)).state.labs, { "99.2": 2 });

  const reset = await runInPackage(course.root, "hint.ts", ["99", "--reset"]);
  assert.equal(reset.code, 0);
  assert.deepEqual((await readHintState(course.root)).state.labs, {});

  const jump = await runInPackage(course.root, "hint.ts", ["99.1", "--level", "3", "--json"]);
  assert.deepEqual(JSON.parse(jump.stdout), { lab: "99.1", title: "两数相加", level: 3, of: 4, text: lab1.hints[2], next: 4 });

  await writeFile(path.join(course.root, HINT_STATE), '{"format":1,');
  const recovered = await runInPackage(course.root, "hint.ts", ["99.1"]);
  assert.equal(recovered.code, 0);
  assert.match(recovered.stderr, /^警告 \[HINT_STATE_INVALID\] 提示进度文件 \.pi-course\/hints\.json 无法使用（不是合法的 JSON）/);
  assert.match(recovered.stdout, /第 1\/4 级/);
  assert.deepEqual((await readHintState(course.root)).state.labs, { "99.1": 1 });

  // A directory where the state file belongs: the hint is still shown, with a coded warning saying why.
  await rm(path.join(course.root, HINT_STATE));
  await mkdir(path.join(course.root, HINT_STATE, "in-the-way"), { recursive: true });
  const blocked = await runInPackage(course.root, "hint.ts", ["99.1"]);
  assert.equal(blocked.code, 0, blocked.stderr);
  assert.match(blocked.stdout, /第 1\/4 级：定位文件\n  第一级：打开 packages\/pi-course\/src\/mini\.ts/);
  assert.match(blocked.stderr, /\[HINT_STATE_INVALID\][^\n]*它是一个目录/);
  assert.match(blocked.stderr, /警告 \[HINT_STATE_UNWRITABLE\] 无法保存提示进度：\.pi-course\/hints\.json 是一个目录；删除或改名它之后，进度就能保存/);
  assert.doesNotMatch(blocked.stderr, /EISDIR|ENOTEMPTY|at /, "no raw error, no stack");

  // Usage mistakes are the command table's (tested above); here: the exit status and one line.
  const usage = await runInPackage(course.root, "hint.ts", ["99.9"]);
  assert.equal(usage.code, 2);
  assert.equal(usage.stderr.trim().split("\n").length, 1);
});
