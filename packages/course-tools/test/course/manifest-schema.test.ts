// test-process: shared
/**
 * `course/manifest-schema.ts` through `parseManifest`: the rules `manifest.test.ts` does not
 * break one by one (each still `MANIFEST_INVALID` naming the file and the field), which issue
 * a message reports when a manifest breaks several, and zod left unloaded when a manifest is
 * remembered.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import test from "node:test";
import { CourseError } from "../../src/core/errors.js";
import { parseManifest } from "../../src/course/manifest.js";

const FILE = "chapters/12-resources/chapter.yaml";

const VALID = `format: 1
id: "12"
title: 资源与扩展
files:
  - packages/pi-course/src/resources.ts
  - packages/pi-course/test/12-resources-extensions.test.ts
  - packages/pi-course/src/resource-files.ts
  - packages/pi-course/test/challenge/12-catalog.test.ts
starters:
  - scaffold: resources.scaffold.ts
    to: packages/pi-course/src/resources.ts
focusedTests:
  - packages/pi-course/test/12-resources-extensions.test.ts
provided:
  - packages/pi-course/src/resource-files.ts
text: README.md
solutions: [solutions/a-kept.ts]
challenge:
  text: challenge.md
  tests:
    - file: packages/pi-course/test/challenge/12-catalog.test.ts
      title: 目录
labs:
  - id: "12.1"
    title: catalog
    tests: 2
    scaffoldError: Lab 12.1 resource catalog 尚未实现
    declarations: [discoverResources]
    sections: ["11", "C3.2"]
    challenge: [packages/pi-course/test/challenge/12-catalog.test.ts]
    hints: [a, b, c, d]
    faults:
      - id: f1
        lab: "12.1"
`;

/** Each case edits the valid manifest; `field` must be named in the error. */
const BAD: { name: string; edit: (s: string) => string; field: string }[] = [
  { name: "an empty files list", edit: (s) => s.replace(/files:\n(  - .*\n)+/, "files: []\n"), field: "files" },
  {
    name: "no focused test",
    edit: (s) => s.replace("focusedTests:\n  - packages/pi-course/test/12-resources-extensions.test.ts\n", "focusedTests: []\n"),
    field: "focusedTests",
  },
  { name: "a starter with neither from nor scaffold", edit: (s) => s.replace("  - scaffold: resources.scaffold.ts\n    to:", "  - to:"), field: "starters[0]" },
  {
    name: "two starters of one teaching file",
    edit: (s) => s.replace("starters:\n", "starters:\n  - from: resources.ts\n    to: packages/pi-course/src/resources.ts\n"),
    field: "starters[1].to",
  },
  {
    name: "a provided file listed twice",
    edit: (s) =>
      s.replace(
        "provided:\n  - packages/pi-course/src/resource-files.ts\n",
        "provided: [packages/pi-course/src/resource-files.ts, packages/pi-course/src/resource-files.ts]\n",
      ),
    field: "provided[1]",
  },
  {
    name: "a solution listed twice",
    edit: (s) => s.replace("solutions: [solutions/a-kept.ts]", "solutions: [solutions/a-kept.ts, solutions/a-kept.ts]"),
    field: "solutions[1]",
  },
  { name: "a solution neither a path nor a mapping", edit: (s) => s.replace("solutions: [solutions/a-kept.ts]", "solutions: [3]"), field: "solutions[0]" },
  { name: "the challenge text being the chapter text", edit: (s) => s.replace("  text: challenge.md", "  text: README.md"), field: "challenge.text" },
  {
    name: "a challenge test not in files",
    edit: (s) => s.replace("    - file: packages/pi-course/test/challenge/12-catalog.test.ts", "    - file: packages/pi-course/test/challenge/12-x.test.ts"),
    field: "challenge.tests[0].file",
  },
  {
    name: "a challenge test that is focused",
    edit: (s) =>
      s.replace("    - file: packages/pi-course/test/challenge/12-catalog.test.ts", "    - file: packages/pi-course/test/12-resources-extensions.test.ts"),
    field: "challenge.tests[0].file",
  },
  { name: "a challenge test without a title", edit: (s) => s.replace("      title: 目录\n", ""), field: "challenge.tests[0].title" },
  {
    name: "a challenge support file not in files",
    edit: (s) => s.replace("  tests:\n", "  support: [packages/x.ts]\n  tests:\n"),
    field: "challenge.support[0]",
  },
  { name: "an unknown challenge field", edit: (s) => s.replace("  tests:\n", "  test: []\n  tests:\n"), field: "challenge.test" },
  { name: "a lab id with a leading zero", edit: (s) => s.replace('id: "12.1"', 'id: "12.01"'), field: "labs[0].id" },
  { name: "a lab id written as a number", edit: (s) => s.replace('id: "12.1"', "id: 12.1"), field: "labs[0].id" },
  {
    name: "a lab id given twice",
    edit: (s) => s.replace("labs:\n", 'labs:\n  - id: "12.1"\n    title: t\n    tests: 1\n    scaffoldError: e\n    hints: [a, b, c, d]\n'),
    field: "labs[1].id",
  },
  { name: "five hints", edit: (s) => s.replace("hints: [a, b, c, d]", "hints: [a, b, c, d, e]"), field: "labs[0].hints" },
  { name: "a test count that is not an integer", edit: (s) => s.replace("tests: 2", "tests: 1.5"), field: "labs[0].tests" },
  {
    name: "a declaration that is no identifier",
    edit: (s) => s.replace("declarations: [discoverResources]", "declarations: [discoverResources, 1st]"),
    field: "labs[0].declarations[1]",
  },
  { name: "a section that is no section number", edit: (s) => s.replace('sections: ["11", "C3.2"]', 'sections: ["11", "§3"]'), field: "labs[0].sections[1]" },
  {
    name: "a lab challenge theme not in challenge.tests",
    edit: (s) => s.replace("challenge: [packages/pi-course/test/challenge/12-catalog.test.ts]", "challenge: [packages/pi-course/src/resource-files.ts]"),
    field: "labs[0].challenge[0]",
  },
  { name: "an unknown lab field", edit: (s) => s.replace("    tests: 2\n", "    tests: 2\n    test: 2\n"), field: "labs[0].test" },
  { name: "a lab's fault of another lab", edit: (s) => s.replace('        lab: "12.1"', '        lab: "12.2"'), field: "labs[0].faults[0].lab" },
  { name: "a lab's fault without an id", edit: (s) => s.replace("      - id: f1\n        lab:", "      - lab:"), field: "labs[0].faults[0].id" },
  {
    name: "a lab's fault that is no mapping",
    edit: (s) => s.replace('    faults:\n      - id: f1\n        lab: "12.1"\n', "    faults: [f1]\n"),
    field: "labs[0].faults[0]",
  },
];

/** Asserts that `source` is refused as `MANIFEST_INVALID`, naming the file and `field`. */
function refused(source: string, field: string): void {
  assert.throws(
    () => parseManifest(source, FILE),
    (error: unknown) => {
      assert.ok(error instanceof CourseError);
      assert.equal(error.code, "MANIFEST_INVALID");
      assert.ok(error.message.startsWith(`${FILE}:`), error.message);
      assert.ok(error.message.includes(`字段 ${field} `), `${error.message} should name ${field}`);
      return true;
    },
  );
}

test("the manifest these cases edit is valid, its optional lists left empty or null alike", () => {
  const m = parseManifest(VALID, FILE);
  assert.deepEqual(m.solutions, [{ file: "chapters/12-resources/solutions/a-kept.ts", replaces: "packages/pi-course/src/resources.ts" }]);
  assert.deepEqual(m.faults, [{ id: "f1", lab: "12.1" }]);
  assert.equal(m.challengeText, "chapters/12-resources/challenge.md");
  const bare = parseManifest(VALID.replace("provided:\n  - packages/pi-course/src/resource-files.ts\n", "provided:\n"), FILE);
  assert.deepEqual(bare.provided, []);
});

for (const c of BAD) {
  test(`a manifest with ${c.name} is MANIFEST_INVALID naming ${c.field}`, () => refused(c.edit(VALID), c.field));
}

test("a misspelt field is named before the field it leaves missing, in its own mapping and at the top", () => {
  refused(VALID.replace("    title: catalog\n", "    titel: catalog\n"), "labs[0].titel");
  refused(VALID.replace("focusedTests:", "focussedTests:"), "focussedTests");
});

test("a solution written as a mapping reports the mapping's own field", () => {
  refused(VALID.replace("solutions: [solutions/a-kept.ts]", "solutions: [{ file: solutions/a-kept.ts, replaces: 3 }]"), "solutions[0].replaces");
});

test("a remembered manifest is read without loading zod; a manifest to validate loads it", () => {
  const manifest = new URL("../../src/course/manifest.js", import.meta.url).href;
  /** Parses `source` in a fresh node and says whether zod was loaded. */
  const loadsZod = (source: string): boolean => {
    const script = `
      import { createRequire } from "node:module";
      const { parseManifest } = await import(${JSON.stringify(manifest)});
      try { parseManifest(${JSON.stringify(source)}, ${JSON.stringify(FILE)}); } catch {}
      const loaded = Object.keys(createRequire(${JSON.stringify(manifest)}).cache).some((file) => /[\\\\/]node_modules[\\\\/]zod[\\\\/]/.test(file));
      process.stdout.write(JSON.stringify(loaded));`;
    return JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" })) as boolean;
  };
  loadsZod(VALID); // remembered from here on (the manifest cache of this course tree)
  assert.equal(loadsZod(VALID), false);
  assert.equal(loadsZod(VALID.replace("tests: 2", "tests: 0")), true, "an invalid manifest is never remembered");
});
