// test-process: shared
/**
 * `lab/editor-env.ts`: the learner's own `VISUAL`/`EDITOR` under npm, which writes its
 * `editor` setting (default `vi`) into every script's `EDITOR`.
 */
import assert from "node:assert/strict";
import test from "node:test";
import { learnerEditorVariables, npmFallbackEditor, parentPidOfStat, parseEnvironBlock } from "../../src/lab/editor-env.js";

const unreadable = () => undefined;
const underNpm = { npm_lifecycle_event: "lab" };

test("outside npm the editor variables are taken as they are, the start environment is never read", () => {
  const readStart = () => assert.fail("outside npm nothing else is read");
  assert.deepEqual(learnerEditorVariables({ EDITOR: "vi" }, readStart, "linux"), { EDITOR: "vi" });
  assert.deepEqual(learnerEditorVariables({ VISUAL: "nvim", EDITOR: "nano" }, readStart, "linux"), { VISUAL: "nvim", EDITOR: "nano" });
  assert.deepEqual(learnerEditorVariables({}, readStart, "linux"), {});
});

test("under npm, EDITOR is the one npm itself was started with; VISUAL passes as it is", () => {
  assert.deepEqual(
    learnerEditorVariables({ ...underNpm, EDITOR: "vi" }, () => ({}), "linux"),
    {},
    "npm's injected vi is not the learner's",
  );
  assert.deepEqual(
    learnerEditorVariables({ ...underNpm, EDITOR: "vi" }, () => ({ EDITOR: "vi" }), "linux"),
    { EDITOR: "vi" },
    "a learner's own vi is kept",
  );
  assert.deepEqual(
    learnerEditorVariables({ ...underNpm, EDITOR: "emacs", VISUAL: "emacs" }, () => ({ VISUAL: "emacs" }), "linux"),
    {
      VISUAL: "emacs",
    },
  );
});

test("under npm, an EDITOR set after npm (not what npm wrote from its start environment) is kept", () => {
  assert.deepEqual(
    learnerEditorVariables({ ...underNpm, EDITOR: "/opt/bin/code" }, () => ({}), "linux"),
    { EDITOR: "/opt/bin/code" },
  );
  assert.deepEqual(
    learnerEditorVariables({ ...underNpm, EDITOR: "vi" }, () => ({ EDITOR: "nano" }), "linux"),
    { EDITOR: "vi" },
  );
});

test("the start environment asked for is npm's, the one that runs this script", () => {
  const asked: (string | undefined)[] = [];
  learnerEditorVariables({ ...underNpm, npm_lifecycle_script: "exec node lab.mjs", EDITOR: "vi" }, (script) => (asked.push(script), {}), "linux");
  assert.deepEqual(asked, ["exec node lab.mjs"]);
});

test("under npm where the start environment cannot be read, only npm's own fallback is set aside", () => {
  assert.deepEqual(learnerEditorVariables({ ...underNpm, EDITOR: "vi" }, unreadable, "linux"), {});
  assert.deepEqual(learnerEditorVariables({ ...underNpm, EDITOR: "nano" }, unreadable, "darwin"), { EDITOR: "nano" });
  const windows = { ...underNpm, SYSTEMROOT: "C:\\Windows" };
  assert.equal(npmFallbackEditor(windows, "win32"), "C:\\Windows\\notepad.exe");
  assert.deepEqual(learnerEditorVariables({ ...windows, EDITOR: "C:\\Windows\\notepad.exe" }, unreadable, "win32"), {});
  assert.deepEqual(learnerEditorVariables({ ...windows, EDITOR: "vi" }, unreadable, "win32"), { EDITOR: "vi" });
});

test("an editor set in npm's own configuration (npm_config_editor) is the learner's choice", () => {
  const readStart = () => assert.fail("the configured editor is taken as it is");
  assert.deepEqual(learnerEditorVariables({ ...underNpm, npm_config_editor: "vi", EDITOR: "vi" }, readStart, "linux"), { EDITOR: "vi" });
});

test("a process's start environment and parent are read from /proc's formats", () => {
  assert.deepEqual(parseEnvironBlock("A=1\0EDITOR=code -w\0EMPTY=\0=skipped\0X=a=b\0"), { A: "1", EDITOR: "code -w", EMPTY: "", X: "a=b" });
  assert.equal(parentPidOfStat("4242 (node) S 17 4242 17 0 -1"), 17);
  assert.equal(parentPidOfStat("4242 (a (weird) name) R 99 1 1"), 99, "the name may hold spaces and parentheses");
  assert.equal(parentPidOfStat("garbage"), undefined);
});
