// test-process: shared
/** The version matrix (`packages/course-tools/src/node-matrix.ts`): its command line and its lines. */
import assert from "node:assert/strict";
import test from "node:test";
import { parseCommand, SUPPORTED_MAJORS } from "../src/cli.js";
import { matrixLine, stepNote, testCounts } from "../src/node-matrix.js";

test("matrix command line: supported majors, default every one; anything else is USAGE", () => {
  assert.deepEqual(parseCommand("node-matrix", []), { help: false, majors: [...SUPPORTED_MAJORS] });
  assert.deepEqual(parseCommand("node-matrix", ["24", "26", "24"]), { help: false, majors: [24, 26] });
  assert.equal(parseCommand("node-matrix", ["--help"]).help, true);
  for (const bad of [["18"], ["24.1"], ["v24"], ["--fast"]]) assert.throws(() => parseCommand("node-matrix", bad), { code: "USAGE" }, bad.join(" "));
});

const TAP_RUN = "# course tests: node --test …\n# tests 254\n# pass 252\n# fail 0\n# skipped 2\n# course tests: 3.0 s\n";

const SPEC_RUN = "# tooling tests: node --test …\nℹ tests 236\nℹ suites 0\nℹ pass 235\nℹ fail 0\nℹ skipped 1\n";

test("matrix lines: test counts from TAP and spec summaries, verify's summary, failures pointing at the log", () => {
  assert.deepEqual(testCounts(TAP_RUN + SPEC_RUN), [
    { tests: 254, pass: 252, fail: 0, skipped: 2 },
    { tests: 236, pass: 235, fail: 0, skipped: 1 },
  ]);
  assert.equal(stepNote("npm test", TAP_RUN + SPEC_RUN), "course 254（2 skipped）, tooling 236（1 skipped）");
  assert.equal(stepNote("verify 12", "…\nverify 12: all 34 checks pass\n"), "all 34 checks pass");
  assert.equal(stepNote("verify 12", "verify 12: 1 of 34 checks FAIL\n"), "1 of 34 checks FAIL");
  const ok = matrixLine(
    "24.22.3",
    [
      { label: "npm ci", ok: true, seconds: 3.2, note: "" },
      { label: "npm test", ok: true, seconds: 58.6, note: "course 254" },
    ],
    "x.log",
  );
  assert.equal(ok, "node 24.22.3: ✔ npm ci 3 s · ✔ npm test 59 s (course 254)");
  const failed = matrixLine("26.12.1", [{ label: "npm test", ok: false, seconds: 70, note: "" }], ".pi-course/node-matrix/node-26.12.1.log");
  assert.equal(failed, "node 26.12.1: ✖ npm test 70 s — 见 .pi-course/node-matrix/node-26.12.1.log");
});
