import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { CourseError } from "../../src/core/errors.js";
import { git, listTree } from "../../src/course/git.js";
import { loadManifest, loadManifests, normalizeChapterId, parseManifest, validateCourse } from "../../src/course/manifest.js";
import { realRepo, tempDir } from "../support/fake-course.js";

const VALID = `format: 1
id: "12"
title: 资源与扩展
files:
  - packages/pi-course/src/resources.ts
  - packages/pi-course/test/12-resources-extensions.test.ts
  - starters/12-resources.ts
  - packages/pi-course/src/resource-files.ts
  - chapters/12.md
  - checkpoints/12.yaml
starters:
  - from: starters/12-resources.ts
    to: packages/pi-course/src/resources.ts
focusedTests:
  - packages/pi-course/test/12-resources-extensions.test.ts
provided:
  - packages/pi-course/src/resource-files.ts
text: chapters/12.md
labs:
  - id: "12.1"
    title: catalog
    tests: 2
    scaffoldError: Lab 12.1 resource catalog 尚未实现
    hints: [a, b, c, d]
faults:
  - id: import-before-trust
    lab: "12.4"
    description: 未信任也 import
    killedBy: [x]
`;

test("a valid manifest parses, keeping every field and passing faults through", () => {
  const m = parseManifest(VALID, "checkpoints/12.yaml");
  assert.equal(m.id, "12");
  assert.equal(m.title, "资源与扩展");
  assert.equal(m.manifestPath, "checkpoints/12.yaml");
  assert.deepEqual(m.starters, [{ from: "starters/12-resources.ts", to: "packages/pi-course/src/resources.ts" }]);
  assert.equal(m.labs[0]?.hints.length, 4);
  assert.equal(m.faults[0]?.id, "import-before-trust");
  assert.equal(m.faults[0]?.description, "未信任也 import");
  assert.deepEqual(m.provided, ["packages/pi-course/src/resource-files.ts"]);
  assert.equal(m.text, "chapters/12.md");
  assert.deepEqual(m.solutions, []);
  const kept = parseManifest(
    VALID.replace("  - checkpoints/12.yaml\n", "  - checkpoints/12.yaml\n  - x/a-kept.ts\n").replace(
      "text: chapters/12.md\n",
      "text: chapters/12.md\nsolutions: [x/a-kept.ts]\n",
    ),
    "checkpoints/12.yaml",
  );
  assert.deepEqual(kept.solutions, [{ file: "x/a-kept.ts", replaces: "packages/pi-course/src/resources.ts" }]);
});

test("a solutions entry names the teaching file it replaces: optional with one teaching file, required with several", () => {
  const twoStarters = VALID.replace(
    "  - checkpoints/12.yaml\n",
    "  - checkpoints/12.yaml\n  - x/a-kept.ts\n  - x/b-kept.ts\n  - starters/12-types.ts\n",
  ).replace(
    "    to: packages/pi-course/src/resources.ts\n",
    "    to: packages/pi-course/src/resources.ts\n  - from: starters/12-types.ts\n    to: packages/pi-course/src/resource-files.ts\n",
  );
  const withSolutions = (solutions: string) =>
    parseManifest(
      twoStarters
        .replace("provided:\n  - packages/pi-course/src/resource-files.ts\n", "")
        .replace("text: chapters/12.md\n", `text: chapters/12.md\n${solutions}`),
      "checkpoints/12.yaml",
    );
  const kept = withSolutions(
    "solutions:\n  - file: x/a-kept.ts\n    replaces: packages/pi-course/src/resource-files.ts\n  - { file: x/b-kept.ts, replaces: packages/pi-course/src/resources.ts }\n",
  );
  assert.deepEqual(kept.solutions, [
    { file: "x/a-kept.ts", replaces: "packages/pi-course/src/resource-files.ts" },
    { file: "x/b-kept.ts", replaces: "packages/pi-course/src/resources.ts" },
  ]);
  const refused = (solutions: string, field: RegExp) =>
    assert.throws(
      () => withSolutions(solutions),
      (error: unknown) => error instanceof CourseError && error.code === "MANIFEST_INVALID" && field.test(error.message),
    );
  refused("solutions: [x/a-kept.ts]\n", /字段 solutions\[0\] 应为\{ file, replaces \}/);
  refused("solutions:\n  - { file: x/a-kept.ts, replaces: packages/pi-course/src/types.ts }\n", /字段 solutions\[0\]\.replaces 应为一个教学文件/);
  refused("solutions:\n  - { file: x/a-kept.ts }\n", /字段 solutions\[0\]\.replaces 应为非空字符串/);
  refused("solutions:\n  - { file: x/a-kept.ts, replaces: packages/pi-course/src/resources.ts, lab: x }\n", /字段 solutions\[0\]\.lab 应为以下之一/);
  refused("solutions:\n  - { file: x/z.ts, replaces: packages/pi-course/src/resources.ts }\n", /字段 solutions\[0\]\.file 应为files 中列出的文件/);
});

test("a starters entry names a hand-kept starter (from) or the scaffold its starter is derived from (scaffold)", () => {
  const m = parseManifest(VALID.replace("  - from: starters/12-resources.ts", "  - scaffold: starters/12-resources.ts"), "checkpoints/12.yaml");
  assert.deepEqual(m.starters, [{ from: "starters/12-resources.ts", to: "packages/pi-course/src/resources.ts", scaffold: true }]);
});

test("optional sections default to empty arrays", () => {
  const m = parseManifest(`format: 1\nid: "03"\ntitle: t\nfiles: [a.ts, checkpoints/03.yaml]\nfocusedTests: [a.ts]\n`, "checkpoints/03.yaml");
  assert.deepEqual([m.starters, m.labs, m.faults, m.provided], [[], [], [], []]);
  assert.equal(m.text, undefined);
});

/** Each case edits the valid manifest; `field` must be named in the error. */
const BAD: { name: string; edit: (s: string) => string; field: string; file?: string }[] = [
  { name: "missing title", edit: (s) => s.replace("title: 资源与扩展\n", ""), field: "title" },
  { name: "files is not an array", edit: (s) => s.replace(/files:\n(  - .*\n)+/, "files: packages/pi-course/src/resources.ts\n"), field: "files" },
  { name: "wrong format version", edit: (s) => s.replace("format: 1", "format: 2"), field: "format" },
  { name: "id not a string", edit: (s) => s.replace('id: "12"', "id: 12"), field: "id" },
  { name: "id not matching the file name", edit: (s) => s.replace('id: "12"', 'id: "13"'), field: "id" },
  { name: "three hints", edit: (s) => s.replace("hints: [a, b, c, d]", "hints: [a, b, c]"), field: "labs[0].hints" },
  { name: "empty hint", edit: (s) => s.replace("hints: [a, b, c, d]", 'hints: [a, b, c, ""]'), field: "labs[0].hints[3]" },
  { name: "tests not a positive integer", edit: (s) => s.replace("tests: 2", "tests: 0"), field: "labs[0].tests" },
  { name: "lab id of another chapter", edit: (s) => s.replace('id: "12.1"', 'id: "11.1"'), field: "labs[0].id" },
  {
    name: "starter to not in files",
    edit: (s) => s.replace("    to: packages/pi-course/src/resources.ts", "    to: packages/pi-course/src/other.ts"),
    field: "starters[0].to",
  },
  {
    name: "starter with both from and scaffold",
    edit: (s) => s.replace("  - from: starters/12-resources.ts\n", "  - from: starters/12-resources.ts\n    scaffold: starters/12-resources.ts\n"),
    field: "starters[0]",
  },
  {
    name: "scaffold not in files",
    edit: (s) => s.replace("  - from: starters/12-resources.ts", "  - scaffold: starters/12-resources.scaffold.ts"),
    field: "starters[0].scaffold",
  },
  {
    name: "focused test not in files",
    edit: (s) =>
      s.replace("focusedTests:\n  - packages/pi-course/test/12-resources-extensions.test.ts", "focusedTests:\n  - packages/pi-course/test/12-x.test.ts"),
    field: "focusedTests[0]",
  },
  {
    name: "provided file not in files",
    edit: (s) => s.replace("provided:\n  - packages/pi-course/src/resource-files.ts", "provided:\n  - packages/pi-course/src/x.ts"),
    field: "provided[0]",
  },
  {
    name: "provided file that is the teaching file",
    edit: (s) => s.replace("provided:\n  - packages/pi-course/src/resource-files.ts", "provided:\n  - packages/pi-course/src/resources.ts"),
    field: "provided[0]",
  },
  {
    name: "provided file that is a focused test",
    edit: (s) => s.replace("provided:\n  - packages/pi-course/src/resource-files.ts", "provided:\n  - packages/pi-course/test/12-resources-extensions.test.ts"),
    field: "provided[0]",
  },
  { name: "text not in files", edit: (s) => s.replace("text: chapters/12.md", "text: chapters/13.md"), field: "text" },
  { name: "solution not in files", edit: (s) => s.replace("text: chapters/12.md\n", "text: chapters/12.md\nsolutions: [x/a.ts]\n"), field: "solutions[0]" },
  {
    name: "solution that is the teaching file",
    edit: (s) => s.replace("text: chapters/12.md\n", "text: chapters/12.md\nsolutions: [packages/pi-course/src/resources.ts]\n"),
    field: "solutions[0]",
  },
  {
    name: "solution that is not TypeScript",
    edit: (s) => s.replace("text: chapters/12.md\n", "text: chapters/12.md\nsolutions: [chapters/12.md]\n"),
    field: "solutions[0]",
  },
  {
    name: "solutions in a chapter without one teaching file",
    edit: (s) =>
      s
        .replace("starters:\n  - from: starters/12-resources.ts\n    to: packages/pi-course/src/resources.ts\n", "")
        .replace("text: chapters/12.md\n", "text: chapters/12.md\nsolutions: [packages/pi-course/src/resource-files.ts]\n"),
    field: "solutions",
  },
  { name: "text not a path", edit: (s) => s.replace("text: chapters/12.md", "text: [chapters/12.md]"), field: "text" },
  { name: "manifest not claimed", edit: (s) => s.replace("  - checkpoints/12.yaml\n", ""), field: "files" },
  { name: "path escaping the repo", edit: (s) => s.replace("  - checkpoints/12.yaml\n", "  - checkpoints/12.yaml\n  - ../outside.ts\n"), field: "files[6]" },
  {
    name: "file listed twice",
    edit: (s) => s.replace("  - checkpoints/12.yaml\n", "  - checkpoints/12.yaml\n  - starters/12-resources.ts\n"),
    field: "files[6]",
  },
  { name: "unknown top-level field", edit: (s) => s + "focussedTests: []\n", field: "focussedTests" },
  { name: "fault without lab", edit: (s) => s.replace('    lab: "12.4"\n', ""), field: "faults[0].lab" },
  { name: "YAML syntax error", edit: (s) => s.replace("title: 资源与扩展", "title: [unclosed"), field: "YAML" },
  { name: "not a mapping", edit: () => "- just\n- a list\n", field: "(根)" },
  { name: "bad file name", edit: (s) => s, field: "(文件名)", file: "checkpoints/twelve.yaml" },
];

for (const c of BAD) {
  test(`a manifest with ${c.name} is MANIFEST_INVALID naming the file and ${c.field}`, () => {
    const file = c.file ?? "checkpoints/12.yaml";
    assert.throws(
      () => parseManifest(c.edit(VALID), file),
      (error: unknown) => {
        assert.ok(error instanceof CourseError);
        assert.equal(error.code, "MANIFEST_INVALID");
        assert.ok(error.message.startsWith(`${file}:`), error.message);
        const named = c.field === "YAML" ? "YAML 无法解析" : `字段 ${c.field} `;
        assert.ok(error.message.includes(named), `${error.message} should name ${c.field}`);
        return true;
      },
    );
  });
}

test("the bad-manifest cases are each valid without their edit (so every case tests one rule)", () => {
  assert.doesNotThrow(() => parseManifest(VALID, "checkpoints/12.yaml"));
});

test("a file claimed by two chapters is MANIFEST_INVALID naming both manifests", () => {
  const a = parseManifest(`format: 1\nid: "03"\ntitle: a\nfiles: [x.ts, checkpoints/03.yaml]\nfocusedTests: [x.ts]\n`, "checkpoints/03.yaml");
  const b = parseManifest(`format: 1\nid: "06"\ntitle: b\nfiles: [x.ts, checkpoints/06.yaml]\nfocusedTests: [x.ts]\n`, "checkpoints/06.yaml");
  assert.doesNotThrow(() => validateCourse([a]));
  assert.throws(
    () => validateCourse([a, b]),
    (e: unknown) =>
      e instanceof CourseError && e.code === "MANIFEST_INVALID" && e.message.includes("checkpoints/03.yaml") && e.message.includes("checkpoints/06.yaml"),
  );
});

test("a claimed file missing from the source commit is MANIFEST_INVALID naming it", () => {
  const a = parseManifest(`format: 1\nid: "03"\ntitle: a\nfiles: [x.ts, checkpoints/03.yaml]\nfocusedTests: [x.ts]\n`, "checkpoints/03.yaml");
  assert.doesNotThrow(() => validateCourse([a], new Set(["x.ts", "checkpoints/03.yaml"])));
  assert.throws(
    () => validateCourse([a], new Set(["checkpoints/03.yaml"])),
    (e: unknown) => e instanceof CourseError && e.code === "MANIFEST_INVALID" && e.message.includes("x.ts"),
  );
});

test("loadManifests returns chapters in numeric order; loadManifest of an unknown chapter lists the known ones", async (t) => {
  const dir = tempDir(t);
  mkdirSync(path.join(dir, "checkpoints"));
  for (const id of ["10", "03", "06"]) {
    writeFileSync(
      path.join(dir, "checkpoints", `${id}.yaml`),
      `format: 1\nid: "${id}"\ntitle: t${id}\nfiles: [f${id}.ts, checkpoints/${id}.yaml]\nfocusedTests: [f${id}.ts]\n`,
    );
  }
  writeFileSync(path.join(dir, "checkpoints", "README.md"), "not a manifest");
  assert.deepEqual(
    (await loadManifests(dir)).map((m) => m.id),
    ["03", "06", "10"],
  );
  assert.equal((await loadManifest(dir, "6")).id, "06");
  await assert.rejects(loadManifest(dir, "12"), (e: unknown) => e instanceof CourseError && e.code === "CHAPTER_UNKNOWN" && e.message.includes("03, 06, 10"));
});

test("normalizeChapterId pads one digit and rejects anything else", () => {
  assert.equal(normalizeChapterId("3"), "03");
  assert.equal(normalizeChapterId("12"), "12");
  for (const bad of ["", "123", "1a", "-1", " 3"]) assert.equal(normalizeChapterId(bad), undefined);
});

test("every manifest committed in this repository is valid against HEAD", async () => {
  const manifests = await loadManifests(realRepo);
  const head = new Set((await listTree(realRepo, "HEAD")).map((e) => e.path));
  const committed = manifests.filter((m) => head.has(m.manifestPath));
  assert.ok(committed.length > 0);
  validateCourse(committed, head);
  assert.ok((await git(realRepo, ["rev-parse", "HEAD"])).length === 40);
});
