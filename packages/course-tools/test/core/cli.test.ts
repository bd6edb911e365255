// test-process: shared
/**
 * `core/cli.ts`, the shared command-line plumbing: strict option parsing whose every mistake
 * is one Chinese `USAGE` line, chapter numbers, and the entry-point check behind `runMain`.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { pathToFileURL } from "node:url";
import { chapterArgument, isEntryPoint, parseCommandLine } from "../../src/core/cli.js";
import { CourseError } from "../../src/core/errors.js";

const OPTIONS = { help: { type: "boolean", short: "h" }, json: { type: "boolean" }, source: { type: "string" } } as const;

test("parseCommandLine returns values and positionals", () => {
  const { values, positionals } = parseCommandLine(["12", "--json", "--source", "abc", "dir"], OPTIONS);
  assert.deepEqual({ ...values }, { json: true, source: "abc" });
  assert.deepEqual(positionals, ["12", "dir"]);
});

test("every parser mistake is one USAGE line in Chinese naming the option", () => {
  const cases: [string[], string][] = [
    [["--bogus"], "未知选项 --bogus（见 --help）"],
    [["-x"], "未知选项 -x（见 --help）"],
    [["--source"], "选项 --source 需要一个值（见 --help）"],
    [["--json=1"], "选项 --json 不接受值（见 --help）"],
    [["--help=1"], "选项 --help 不接受值（见 --help）"],
  ];
  for (const [argv, message] of cases) {
    assert.throws(
      () => parseCommandLine(argv, OPTIONS),
      (error: unknown) => {
        assert.ok(error instanceof CourseError && error.code === "USAGE", argv.join(" "));
        assert.equal(error.message, message);
        return true;
      },
    );
  }
});

test("chapterArgument pads one digit and rejects anything else with USAGE", () => {
  assert.equal(chapterArgument("3"), "03");
  assert.equal(chapterArgument("12"), "12");
  for (const bad of ["", "123", "1a", "-1", " 3"]) assert.throws(() => chapterArgument(bad), { code: "USAGE" }, JSON.stringify(bad));
});

test("isEntryPoint: true for the script node runs, also through a symlink; false for an imported module", async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "pi-cli-test-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const script = path.join(dir, "real.ts");
  await writeFile(script, "");
  await symlink(script, path.join(dir, "link.ts"));
  const saved = process.argv[1];
  t.after(() => {
    process.argv[1] = saved!;
  });
  process.argv[1] = script;
  assert.equal(isEntryPoint(pathToFileURL(script).href), true);
  process.argv[1] = path.join(dir, "link.ts");
  assert.equal(isEntryPoint(pathToFileURL(script).href), true);
  assert.equal(isEntryPoint(pathToFileURL(path.join(dir, "other.ts")).href), false);
});
