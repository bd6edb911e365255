// test-process: shared
/**
 * `lab/open.ts` (`lab NN.L --open`): which editor runs, with which arguments for the
 * position, from which directory; what it prints; and its refusals with their codes. The
 * editors are fake ones — small node scripts named like the real editors — that record
 * their arguments.
 */
import assert from "node:assert/strict";
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import test from "node:test";
import { editorCommand, showCommand, splitCommandLine } from "../../src/lab/open.js";
import { fakeEditor } from "../support/fake-editor.js";
import { createMiniCourse, miniSource, removeMiniCourse, runInPackage } from "../support/lab-fixture.js";

const posix = process.platform !== "win32";

test("the editor is $VISUAL, else $EDITOR, else code -g; the position is passed the way each editor takes it", () => {
  const at = (env: NodeJS.ProcessEnv, platform: NodeJS.Platform = "linux") => {
    const editor = editorCommand("src/x.ts", 12, 5, env, platform);
    return [showCommand(editor), editor.from, editor.positioned];
  };
  assert.deepEqual(at({}), ["code -g src/x.ts:12:5", "default", true]);
  assert.deepEqual(at({}, "win32"), ["code.cmd -g src/x.ts:12:5", "default", true]);
  assert.deepEqual(at({ EDITOR: "vim", VISUAL: "nvim" }), ["nvim +12 src/x.ts", "VISUAL", true]);
  assert.deepEqual(at({ EDITOR: "vim", VISUAL: "  " }), ["vim +12 src/x.ts", "EDITOR", true]);
  assert.deepEqual(at({ EDITOR: "code --wait" }), ["code --wait -g src/x.ts:12:5", "EDITOR", true]);
  assert.deepEqual(at({ EDITOR: "code -g" }), ["code -g src/x.ts:12:5", "EDITOR", true], "-g is not repeated");
  assert.deepEqual(at({ EDITOR: "/usr/bin/nano" }), ["/usr/bin/nano +12,5 src/x.ts", "EDITOR", true]);
  assert.deepEqual(at({ EDITOR: "emacsclient -t" }), ["emacsclient -t +12:5 src/x.ts", "EDITOR", true]);
  assert.deepEqual(at({ EDITOR: "subl -w" }), ["subl -w src/x.ts:12:5", "EDITOR", true]);
  assert.deepEqual(at({ EDITOR: "C:\\Tools\\Cursor.exe" }, "win32"), ["'C:\\Tools\\Cursor.exe' -g src/x.ts:12:5", "EDITOR", true]);
  assert.deepEqual(at({ EDITOR: '"C:\\Program Files\\Notepad++\\notepad++.exe"' }, "win32"), [
    "'C:\\Program Files\\Notepad++\\notepad++.exe' src/x.ts",
    "EDITOR",
    false,
  ]);
  assert.deepEqual(at({ EDITOR: "idea" }), ["idea --line 12 src/x.ts", "EDITOR", true]);
  assert.deepEqual(at({ EDITOR: "notepad" }), ["notepad src/x.ts", "EDITOR", false], "an editor not known to take a position gets the file only");
  assert.deepEqual(splitCommandLine(`"/Applications/My Editor/bin/ed" --flag 'a b' c\\ d`), ["/Applications/My Editor/bin/ed", "--flag", "a b", "c d"]);
});

test("lab NN.L --open opens the lab's 🔨 construction site from where the command was typed, says what it ran, exit 0", {
  skip: !posix && "fake editors are shell-script executables",
}, async (t) => {
  const course = await createMiniCourse("starter", { practice: true });
  t.after(() => removeMiniCourse(course));
  const teaching = "packages/pi-course/src/mini.ts";
  const lines = miniSource("starter").split("\n");
  const marker = lines.findIndex((line) => line.includes("🔨 Lab 99.2")) + 1;

  const code = await fakeEditor(t, "code");
  const pkg = path.join(course.root, "packages", "pi-course");
  const run = await runInPackage(course.root, "lab.ts", ["99.2", "--open"], { EDITOR: code.command, VISUAL: "" });
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(code.calls(), [{ argv: ["-g", `src/mini.ts:${marker}:3`], cwd: pkg }], "relative to the package folder the command ran in");
  assert.equal(run.stdout.trim(), `已运行：${code.command} -g src/mini.ts:${marker}:3（来自 $EDITOR）`);

  // Typed at the course root (INIT_CWD), with a vi-like $VISUAL; the lab's markers removed (done): the declaration's start.
  const vim = await fakeEditor(t, "vim");
  writeFileSync(path.join(course.root, teaching), miniSource("reference"));
  const done = await runInPackage(course.root, "lab.ts", ["99.1", "--open"], { VISUAL: vim.command, EDITOR: code.command, INIT_CWD: course.root });
  assert.equal(done.code, 0, done.stderr);
  const add =
    miniSource("reference")
      .split("\n")
      .findIndex((line) => line.startsWith("export function add")) + 1;
  assert.deepEqual(vim.calls(), [{ argv: [`+${add}`, teaching], cwd: course.root }]);
  assert.match(done.stdout, /^已运行：.*vim \+\d+ packages\/pi-course\/src\/mini\.ts（来自 \$VISUAL）$/m);
  assert.equal(code.calls().length, 1, "$VISUAL wins over $EDITOR");
});

test("lab --open refuses outside a practice folder, and names a missing or failing editor, exit 1", {
  skip: !posix && "fake editors are shell-script executables",
}, async (t) => {
  const course = await createMiniCourse("starter", { practice: true });
  t.after(() => removeMiniCourse(course));
  const missing = await runInPackage(course.root, "lab.ts", ["99.1", "--open"], { EDITOR: path.join(course.root, "no-such-editor"), VISUAL: "" });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^错误 \[EDITOR_NOT_FOUND\] 找不到编辑器 .*no-such-editor（来自 \$EDITOR）：.*施工位在 src\/mini\.ts:\d+:3\n$/);

  const failing = await fakeEditor(t, "vim", 3);
  const failed = await runInPackage(course.root, "lab.ts", ["99.1", "--open"], { EDITOR: failing.command, VISUAL: "" });
  assert.equal(failed.code, 1);
  assert.match(failed.stderr, /^错误 \[EDITOR_FAILED\] 编辑器 .*vim \+\d+ src\/mini\.ts（来自 \$EDITOR） 以退出码 3 结束/);

  // In the course repository itself (no practice marker): refused before any editor starts.
  rmSync(path.join(course.root, ".pi-course", "practice.json"));
  const editor = await fakeEditor(t, "code");
  const repo = await runInPackage(course.root, "lab.ts", ["99.1", "--open"], { EDITOR: editor.command });
  assert.equal(repo.code, 1);
  assert.match(repo.stderr, /^错误 \[LAB_NEEDS_PRACTICE\] --open 只在练习目录里使用/);
  assert.deepEqual(editor.calls(), []);
});
