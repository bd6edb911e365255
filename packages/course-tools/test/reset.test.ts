// test-process: shared
/** The `reset` command's command line (`packages/course-tools/src/reset.ts`, declared in `packages/course-tools/src/cli.ts`). */
import assert from "node:assert/strict";
import test from "node:test";
import { parseCommand } from "../src/cli.js";

test("reset arguments", () => {
  assert.deepEqual(parseCommand("reset", ["12"]), { help: false, target: { chapter: "12" } });
  assert.deepEqual(parseCommand("reset", ["12.3"]), { help: false, target: { chapter: "12", lab: "12.3" } });
  for (const bad of [[], ["12", "13"], ["x"], ["12", "--force"]]) assert.throws(() => parseCommand("reset", bad), { code: "USAGE" }, bad.join(" "));
});
