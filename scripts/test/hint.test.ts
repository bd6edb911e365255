import assert from "node:assert/strict";
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import {
  emptyHintState,
  formatHint,
  hintStateProblem,
  readHintState,
  removeStaleHintTemps,
  resetHints,
  takeHint,
  unwritable,
  writeHintState,
  type HintState,
} from "../lib/lab/hints.js";
import { parseCommand } from "../cli.js";
import { parseManifest, type LabSpec } from "../lib/course/manifest.js";
import { HINT_STATE } from "../lib/core/paths.js";
import { createPaint } from "../lib/core/term.js";
import { createMiniCourse, MINI_MANIFEST, removeMiniCourse, runScript } from "./lab-fixture.js";

const mini = parseManifest(MINI_MANIFEST, "checkpoints/99.yaml");
const [lab1, lab2] = mini.labs as [LabSpec, LabSpec];
const plain = createPaint(false);

async function tempRoot(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), "pi-hints-"));
  t.after(() => rm(root, { recursive: true, force: true }));
  return root;
}

test("hints climb the four rungs in order, then stay on the last one", () => {
  let state = emptyHintState();
  const seen: [number, string, boolean][] = [];
  for (let i = 0; i < 6; i++) {
    const taken = takeHint(state, lab2);
    seen.push([taken.view.level, taken.view.text, taken.view.repeated]);
    state = taken.state;
  }
  assert.deepEqual(seen, [
    [1, lab2.hints[0], false],
    [2, lab2.hints[1], false],
    [3, lab2.hints[2], false],
    [4, lab2.hints[3], false],
    [4, lab2.hints[3], true],
    [4, lab2.hints[3], true],
  ]);
  assert.deepEqual(state.labs, { "99.2": 4 });
});

test("each lab has its own ladder, and taking a hint never mutates the old state", () => {
  const before: HintState = { format: 1, labs: { "99.1": 3 } };
  const { state } = takeHint(before, lab2);
  assert.deepEqual(before.labs, { "99.1": 3 });
  assert.deepEqual(state.labs, { "99.1": 3, "99.2": 1 });
  assert.equal(takeHint(state, lab1).view.level, 4);
});

test("--level jumps to that rung (also backwards) and the ladder continues from there", () => {
  const jumped = takeHint(emptyHintState(), lab1, 3);
  assert.equal(jumped.view.text, lab1.hints[2]);
  assert.equal(takeHint(jumped.state, lab1).view.level, 4);
  const back = takeHint({ format: 1, labs: { "99.1": 4 } }, lab1, 1);
  assert.deepEqual([back.view.level, back.state.labs["99.1"]], [1, 1]);
  assert.throws(() => takeHint(emptyHintState(), lab1, 5), { code: "USAGE" });
  assert.throws(() => takeHint(emptyHintState(), lab1, 0), { code: "USAGE" });
});

test("reset forgets the given labs only", () => {
  const state: HintState = { format: 1, labs: { "99.1": 2, "99.2": 4, "12.1": 1 } };
  assert.deepEqual(resetHints(state, ["99.2"]).labs, { "99.1": 2, "12.1": 1 });
  assert.deepEqual(resetHints(state, ["99.1", "99.2"]).labs, { "12.1": 1 });
  assert.deepEqual(state.labs, { "99.1": 2, "99.2": 4, "12.1": 1 });
});

test("the text says which rung this is and what the next call shows, and when there is no more", () => {
  const first = formatHint(takeHint(emptyHintState(), lab1).view, plain);
  assert.match(first, /第 1\/4 级：定位文件/);
  assert.match(first, /下一次 npm run hint -w @pi\/course -- 99\.1 会显示第 2\/4 级：指出签名/);
  const last = formatHint(takeHint(emptyHintState(), lab1, 4).view, plain);
  assert.match(last, /第 4\/4 级：局部代码/);
  assert.match(last, /没有更多提示/);
  assert.doesNotMatch(last, /下一次/);
});

test("hint arguments: a lab, --level 1-4, --reset for a lab or a chapter; everything else is a usage error", () => {
  assert.deepEqual(parseCommand("hint", ["12.2"]), { help: false, reset: false, json: false, target: { chapter: "12", lab: "12.2" } });
  assert.equal(parseCommand("hint", ["12.2", "--level", "3"]).level, 3);
  assert.equal(parseCommand("hint", ["12.2", "--level=4"]).level, 4);
  assert.equal(parseCommand("hint", ["12", "--reset"]).reset, true);
  assert.equal(parseCommand("hint", ["-h"]).help, true);
  const bad = [[], ["12"], ["12.2", "--level"], ["12.2", "--level", "0"], ["12.2", "--level", "5"], ["12.2", "--level", "two"], ["12.2", "--level", "1.5"], ["12.2", "--reset", "--level", "2"], ["12.2", "12.3"], ["12.2", "--more"]];
  for (const args of bad) assert.throws(() => parseCommand("hint", args), { code: "USAGE" }, args.join(" "));
});

test("state files: valid shapes pass, anything else names its problem", () => {
  assert.equal(hintStateProblem({ format: 1, labs: { "12.1": 1, "03.2": 4 } }), undefined);
  for (const bad of [null, [], "x", { format: 2, labs: {} }, { format: 1 }, { format: 1, labs: [] }, { format: 1, labs: { "12.1": 5 } }, { format: 1, labs: { "12.1": 1.5 } }, { format: 1, labs: { "12.1": "2" } }, { format: 1, labs: { lab: 1 } }]) {
    assert.equal(typeof hintStateProblem(bad), "string", JSON.stringify(bad));
  }
});

test("state round-trips through an atomic write that leaves no temporary file", async (t) => {
  const root = await tempRoot(t);
  assert.deepEqual(await readHintState(root), { state: emptyHintState() });
  const state: HintState = { format: 1, labs: { "99.1": 2 } };
  await writeHintState(root, state);
  await writeHintState(root, { format: 1, labs: { "99.1": 3 } });
  assert.deepEqual((await readHintState(root)).state.labs, { "99.1": 3 });
  assert.deepEqual(await readdir(path.join(root, ".pi-course")), ["hints.json"]);
});

test("a failed write leaves the previous state file intact and cleans up", async (t) => {
  const root = await tempRoot(t);
  await writeHintState(root, { format: 1, labs: { "99.1": 2 } });
  // Make the rename fail: the destination becomes a non-empty directory.
  const file = path.join(root, HINT_STATE);
  const saved = await readFile(file, "utf8");
  await rm(file);
  await mkdir(path.join(file, "blocker"), { recursive: true });
  await assert.rejects(writeHintState(root, { format: 1, labs: { "99.1": 4 } }));
  assert.deepEqual((await readdir(path.join(root, ".pi-course"))).sort(), ["hints.json"]);
  assert.deepEqual(await readdir(file), ["blocker"]);
  assert.match(saved, /"99\.1": 2/);
});

test("a state that cannot be saved is HINT_STATE_UNWRITABLE, with no temporary file left", { skip: (process.getuid?.() === 0 || process.platform === "win32") && "permissions do not bind here" }, async (t) => {
  const root = await tempRoot(t);
  await mkdir(path.join(root, ".pi-course"));
  await chmod(path.join(root, ".pi-course"), 0o555);
  t.after(() => chmod(path.join(root, ".pi-course"), 0o755));
  await assert.rejects(writeHintState(root, { format: 1, labs: { "99.1": 1 } }), (error: Error & { code?: string }) => {
    assert.equal(error.code, "HINT_STATE_UNWRITABLE");
    assert.match(error.message, /没有写入 \.pi-course 的权限（EACCES）/);
    return true;
  });
  assert.deepEqual(await readdir(path.join(root, ".pi-course")), []);
});

test("every way the state file cannot be written gets a code and says what is in the way", () => {
  const cases: [string, RegExp][] = [
    ["EACCES", /没有写入 \.pi-course 的权限（EACCES）/],
    ["EPERM", /权限（EPERM）/],
    ["EROFS", /权限（EROFS）/],
    ["EISDIR", /hints\.json 是一个目录/],
    ["ENOTEMPTY", /hints\.json 是一个目录/],
    ["ENOTDIR", /\.pi-course 不是目录/],
    ["ENOSPC", /ENOSPC/],
  ];
  for (const [code, message] of cases) {
    const error = unwritable(Object.assign(new Error(code), { code }));
    assert.equal(error.code, "HINT_STATE_UNWRITABLE", code);
    assert.match(error.message, message, code);
  }
});

test("temporary state files of a killed hint are removed; a live writer's and anything else stay", async (t) => {
  const root = await tempRoot(t);
  const dir = path.join(root, ".pi-course");
  await mkdir(dir);
  const names = ["hints.json.pi-course-1073741824-deadbeef.tmp", `hints.json.pi-course-${process.ppid}-0badcafe.tmp`, "notes.pi-course-1073741824-deadbeef.tmp", "hints.json"];
  for (const name of names) await writeFile(path.join(dir, name), "{}");
  removeStaleHintTemps(root);
  assert.deepEqual((await readdir(dir)).sort(), names.slice(1).sort());
});

test("a corrupt or ill-shaped state file is reported and read as empty, never thrown", async (t) => {
  const root = await tempRoot(t);
  await mkdir(path.join(root, ".pi-course"));
  for (const text of ["{not json", '{"format":1,"labs":{"99.1":9}}', "[]", ""]) {
    await writeFile(path.join(root, HINT_STATE), text);
    const loaded = await readHintState(root);
    assert.deepEqual(loaded.state, emptyHintState(), text);
    assert.equal(typeof loaded.problem, "string", text);
  }
});

test("hint command: walks four rungs, remembers them, resets, and survives a corrupt state file", async (t) => {
  const course = await createMiniCourse("starter", { practice: true });
  t.after(() => removeMiniCourse(course));
  // The climb itself is `takeHint`'s (tested above); here: the command remembers between runs.
  const levels: string[] = [];
  for (let i = 0; i < 2; i++) {
    const run = await runScript(course.root, "hint.ts", ["99.2"]);
    assert.equal(run.code, 0, run.stderr);
    levels.push(/第 (\d)\/4 级/.exec(run.stdout)?.[1] ?? "?");
  }
  assert.deepEqual(levels, ["1", "2"]);
  assert.deepEqual((await readHintState(course.root)).state.labs, { "99.2": 2 });

  const reset = await runScript(course.root, "hint.ts", ["99", "--reset"]);
  assert.equal(reset.code, 0);
  assert.deepEqual((await readHintState(course.root)).state.labs, {});

  const jump = await runScript(course.root, "hint.ts", ["99.1", "--level", "3", "--json"]);
  assert.deepEqual(JSON.parse(jump.stdout), { lab: "99.1", title: "两数相加", level: 3, of: 4, text: lab1.hints[2], next: 4 });

  await writeFile(path.join(course.root, HINT_STATE), "{\"format\":1,");
  const recovered = await runScript(course.root, "hint.ts", ["99.1"]);
  assert.equal(recovered.code, 0);
  assert.match(recovered.stderr, /^警告 \[HINT_STATE_INVALID\] 提示进度文件 \.pi-course\/hints\.json 无法使用（不是合法的 JSON）/);
  assert.match(recovered.stdout, /第 1\/4 级/);
  assert.deepEqual((await readHintState(course.root)).state.labs, { "99.1": 1 });

  // A directory where the state file belongs: the hint is still shown, with a coded warning saying why.
  await rm(path.join(course.root, HINT_STATE));
  await mkdir(path.join(course.root, HINT_STATE, "in-the-way"), { recursive: true });
  const blocked = await runScript(course.root, "hint.ts", ["99.1"]);
  assert.equal(blocked.code, 0, blocked.stderr);
  assert.match(blocked.stdout, /第 1\/4 级：定位文件\n  第一级：打开 packages\/pi-course\/src\/mini\.ts/);
  assert.match(blocked.stderr, /\[HINT_STATE_INVALID\][^\n]*它是一个目录/);
  assert.match(blocked.stderr, /警告 \[HINT_STATE_UNWRITABLE\] 无法保存提示进度：\.pi-course\/hints\.json 是一个目录；删除或改名它之后，进度就能保存/);
  assert.doesNotMatch(blocked.stderr, /EISDIR|ENOTEMPTY|at /, "no raw error, no stack");

  // Usage mistakes are `parseHintArgs`'s (tested above); here: the exit status and one line.
  const usage = await runScript(course.root, "hint.ts", ["99.9"]);
  assert.equal(usage.code, 2);
  assert.equal(usage.stderr.trim().split("\n").length, 1);
});
