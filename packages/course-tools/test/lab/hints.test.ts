// test-process: shared
/** `lab/hints.ts`: the hint ladder and its state file. */
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
} from "../../src/lab/hints.js";
import { parseManifest, type LabSpec } from "../../src/course/manifest.js";
import { HINT_STATE } from "../../src/core/paths.js";
import { createPaint } from "../../src/core/term.js";
import { MINI_MANIFEST } from "../support/lab-fixture.js";

const mini = parseManifest(MINI_MANIFEST, "chapters/99-mini/chapter.yaml");

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

test("state files: valid shapes pass, anything else names its problem", () => {
  assert.equal(hintStateProblem({ format: 1, labs: { "12.1": 1, "03.2": 4 } }), undefined);
  for (const bad of [
    null,
    [],
    "x",
    { format: 2, labs: {} },
    { format: 1 },
    { format: 1, labs: [] },
    { format: 1, labs: { "12.1": 5 } },
    { format: 1, labs: { "12.1": 1.5 } },
    { format: 1, labs: { "12.1": "2" } },
    { format: 1, labs: { lab: 1 } },
  ]) {
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
  // A one-digit chapter's labs are written as the manifests write them (0.1, 3.2), and read back as they were.
  await writeHintState(root, { format: 1, labs: { "0.1": 2, "3.2": 4, "99.1": 3 } });
  assert.deepEqual(await readHintState(root), { state: { format: 1, labs: { "0.1": 2, "3.2": 4, "99.1": 3 } } });
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

test("a state that cannot be saved is HINT_STATE_UNWRITABLE, with no temporary file left", {
  skip: (process.getuid?.() === 0 || process.platform === "win32") && "permissions do not bind here",
}, async (t) => {
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
  const names = [
    "hints.json.pi-course-1073741824-deadbeef.tmp",
    `hints.json.pi-course-${process.ppid}-0badcafe.tmp`,
    "notes.pi-course-1073741824-deadbeef.tmp",
    "hints.json",
  ];
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
