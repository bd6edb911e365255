// test-process: shared
/** The `verify` command's command line (`packages/course-tools/src/verify.ts`, declared in `packages/course-tools/src/cli.ts`). */
import assert from "node:assert/strict";
import test from "node:test";
import { parseCommand } from "../src/cli.js";

test("command line: one chapter, --json, --help; usage errors", () => {
  assert.deepEqual(parseCommand("verify", ["12", "--json"]), { help: false, chapter: "12", json: true });
  assert.deepEqual(parseCommand("verify", ["12", "--only", "chapter text", "--only", "leak audit"]), {
    help: false,
    chapter: "12",
    json: false,
    only: ["chapter text", "leak audit"],
  });
  assert.throws(() => parseCommand("verify", ["12", "--only", "nope"]), { code: "USAGE" }, "an unknown step is refused before any work");
  assert.equal(parseCommand("verify", ["3"]).chapter, "03");
  assert.equal(parseCommand("verify", ["-h"]).help, true);
  for (const argv of [[], ["12", "13"], ["abc"], ["12", "--all"], ["12", "--source", "nonexist"]])
    assert.throws(() => parseCommand("verify", argv), { code: "USAGE" }, argv.join(" "));
});
