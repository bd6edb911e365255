import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { CourseError } from "../../src/core/errors.js";
import { git, listTree } from "../../src/course/git.js";
import { claimHome, loadManifest, loadManifests, normalizeChapterId, parseManifest, validateCourse } from "../../src/course/manifest.js";
import { realRepo, tempDir } from "../support/fake-course.js";

/** Chapter 12's home in these fixtures: the manifest's own folder, which its home-relative paths start from. */
const HOME = "chapters/12-resources";
const HOME12 = `${HOME}/chapter.yaml`;

const VALID = `format: 1
id: "12"
title: 资源与扩展
files:
  - packages/pi-course/src/resources.ts
  - packages/pi-course/test/12-resources-extensions.test.ts
  - packages/pi-course/src/resource-files.ts
  - packages/pi-course/src/app/demo.ts
starters:
  - from: resources.ts
    to: packages/pi-course/src/resources.ts
focusedTests:
  - packages/pi-course/test/12-resources-extensions.test.ts
provided:
  - packages/pi-course/src/resource-files.ts
text: README.md
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
  const m = parseManifest(VALID, HOME12);
  assert.equal(m.id, "12");
  assert.equal(m.title, "资源与扩展");
  assert.equal(m.manifestPath, HOME12);
  assert.equal(m.home, HOME);
  assert.deepEqual(m.starters, [{ from: `${HOME}/resources.ts`, to: "packages/pi-course/src/resources.ts" }]);
  assert.equal(m.labs[0]?.hints.length, 4);
  assert.equal(m.faults[0]?.id, "import-before-trust");
  assert.equal(m.faults[0]?.description, "未信任也 import");
  assert.deepEqual(m.provided, ["packages/pi-course/src/resource-files.ts"]);
  assert.equal(m.text, `${HOME}/README.md`);
  // What the manifest names in its home is claimed with the files it lists elsewhere.
  assert.deepEqual(m.files.slice(4).sort(), [`${HOME}/README.md`, HOME12, `${HOME}/resources.ts`]);
  assert.deepEqual(m.solutions, []);
  const kept = parseManifest(VALID.replace("text: README.md\n", "text: README.md\nsolutions: [solutions/a-kept.ts]\n"), HOME12);
  assert.deepEqual(kept.solutions, [{ file: `${HOME}/solutions/a-kept.ts`, replaces: "packages/pi-course/src/resources.ts" }]);
});

test("a solutions entry names the teaching file it replaces: optional with one teaching file, required with several", () => {
  const twoStarters = VALID.replace(
    "    to: packages/pi-course/src/resources.ts\n",
    "    to: packages/pi-course/src/resources.ts\n  - from: types.ts\n    to: packages/pi-course/src/resource-files.ts\n",
  );
  const withSolutions = (solutions: string) =>
    parseManifest(
      twoStarters.replace("provided:\n  - packages/pi-course/src/resource-files.ts\n", "").replace("text: README.md\n", `text: README.md\n${solutions}`),
      HOME12,
    );
  const kept = withSolutions(
    "solutions:\n  - file: solutions/a-kept.ts\n    replaces: packages/pi-course/src/resource-files.ts\n  - { file: solutions/b-kept.ts, replaces: packages/pi-course/src/resources.ts }\n",
  );
  assert.deepEqual(kept.solutions, [
    { file: `${HOME}/solutions/a-kept.ts`, replaces: "packages/pi-course/src/resource-files.ts" },
    { file: `${HOME}/solutions/b-kept.ts`, replaces: "packages/pi-course/src/resources.ts" },
  ]);
  const refused = (solutions: string, field: RegExp) =>
    assert.throws(
      () => withSolutions(solutions),
      (error: unknown) => error instanceof CourseError && error.code === "MANIFEST_INVALID" && field.test(error.message),
    );
  refused("solutions: [solutions/a-kept.ts]\n", /字段 solutions\[0\] 应为\{ file, replaces \}/);
  refused("solutions:\n  - { file: solutions/a-kept.ts, replaces: packages/pi-course/src/types.ts }\n", /字段 solutions\[0\]\.replaces 应为一个教学文件/);
  refused("solutions:\n  - { file: solutions/a-kept.ts }\n", /字段 solutions\[0\]\.replaces 应为非空字符串/);
  refused("solutions:\n  - { file: solutions/a-kept.ts, replaces: packages/pi-course/src/resources.ts, lab: x }\n", /字段 solutions\[0\]\.lab 应为以下之一/);
  refused("solutions:\n  - { file: ../z.ts, replaces: packages/pi-course/src/resources.ts }\n", /字段 solutions\[0\]\.file 应为仓库内的相对路径/);
});

test("a starters entry names a hand-kept starter (from) or the scaffold its starter is derived from (scaffold)", () => {
  const m = parseManifest(VALID.replace("  - from: resources.ts", "  - scaffold: resources.ts"), HOME12);
  assert.deepEqual(m.starters, [{ from: `${HOME}/resources.ts`, to: "packages/pi-course/src/resources.ts", scaffold: true }]);
});

test("optional sections default to empty arrays", () => {
  const m = parseManifest(`format: 1\nid: "03"\ntitle: t\nfiles: [a.ts]\nfocusedTests: [a.ts]\n`, "chapters/03-t/chapter.yaml");
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
    edit: (s) => s.replace("  - from: resources.ts\n", "  - from: resources.ts\n    scaffold: resources.ts\n"),
    field: "starters[0]",
  },
  {
    name: "scaffold outside the home",
    edit: (s) => s.replace("  - from: resources.ts", "  - scaffold: ../resources.scaffold.ts"),
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
  { name: "text outside the home", edit: (s) => s.replace("text: README.md", "text: /README.md"), field: "text" },
  { name: "solution outside the home", edit: (s) => s.replace("text: README.md\n", "text: README.md\nsolutions: [../x/a.ts]\n"), field: "solutions[0]" },
  {
    name: "solution that is the starter",
    edit: (s) => s.replace("text: README.md\n", "text: README.md\nsolutions: [resources.ts]\n"),
    field: "solutions[0]",
  },
  {
    name: "solution that is not TypeScript",
    edit: (s) => s.replace("text: README.md\n", "text: README.md\nsolutions: [README.md]\n"),
    field: "solutions[0]",
  },
  {
    name: "solutions in a chapter without one teaching file",
    edit: (s) =>
      s
        .replace("starters:\n  - from: resources.ts\n    to: packages/pi-course/src/resources.ts\n", "")
        .replace("text: README.md\n", "text: README.md\nsolutions: [packages/pi-course/src/resource-files.ts]\n"),
    field: "solutions",
  },
  { name: "text not a path", edit: (s) => s.replace("text: README.md", "text: [README.md]"), field: "text" },
  {
    name: "a file of its own home listed in files",
    edit: (s) => s.replace("  - packages/pi-course/src/app/demo.ts\n", `  - packages/pi-course/src/app/demo.ts\n  - ${HOME}/README.md\n`),
    field: "files[4]",
  },
  {
    name: "path escaping the repo",
    edit: (s) => s.replace("  - packages/pi-course/src/app/demo.ts\n", "  - packages/pi-course/src/app/demo.ts\n  - ../outside.ts\n"),
    field: "files[4]",
  },
  {
    name: "file listed twice",
    edit: (s) => s.replace("  - packages/pi-course/src/app/demo.ts\n", "  - packages/pi-course/src/app/demo.ts\n  - packages/pi-course/src/resources.ts\n"),
    field: "files[4]",
  },
  { name: "unknown top-level field", edit: (s) => s + "focussedTests: []\n", field: "focussedTests" },
  { name: "fault without lab", edit: (s) => s.replace('    lab: "12.4"\n', ""), field: "faults[0].lab" },
  { name: "YAML syntax error", edit: (s) => s.replace("title: 资源与扩展", "title: [unclosed"), field: "YAML" },
  { name: "not a mapping", edit: () => "- just\n- a list\n", field: "(根)" },
  { name: "bad file name", edit: (s) => s, field: "(文件名)", file: "chapters/twelve/chapter.yaml" },
  { name: "manifest outside a home", edit: (s) => s, field: "(文件名)", file: "checkpoints/12.yaml" },
];

for (const c of BAD) {
  test(`a manifest with ${c.name} is MANIFEST_INVALID naming the file and ${c.field}`, () => {
    const file = c.file ?? HOME12;
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
  assert.doesNotThrow(() => parseManifest(VALID, HOME12));
});

/** A minimal manifest of chapter `id` in home `chapters/<id>-<slug>`. */
const minimal = (id: string, slug = "c", file = `f${id}.ts`) =>
  parseManifest(`format: 1\nid: "${id}"\ntitle: t${id}\nfiles: [${file}]\nfocusedTests: [${file}]\n`, `chapters/${id}-${slug}/chapter.yaml`);

test("a file claimed by two chapters is MANIFEST_INVALID naming both manifests", () => {
  const a = minimal("03", "a", "x.ts");
  const b = minimal("06", "b", "x.ts");
  assert.doesNotThrow(() => validateCourse([a]));
  assert.throws(
    () => validateCourse([a, b]),
    (e: unknown) =>
      e instanceof CourseError &&
      e.code === "MANIFEST_INVALID" &&
      e.message.includes("chapters/03-a/chapter.yaml") &&
      e.message.includes("chapters/06-b/chapter.yaml"),
  );
});

test("a claimed file missing from the source commit is MANIFEST_INVALID naming it", () => {
  const a = minimal("03", "a", "x.ts");
  assert.doesNotThrow(() => validateCourse([a], new Set(["x.ts", "chapters/03-a/chapter.yaml"])));
  assert.throws(
    () => validateCourse([a], new Set(["chapters/03-a/chapter.yaml"])),
    (e: unknown) => e instanceof CourseError && e.code === "MANIFEST_INVALID" && e.message.includes("x.ts"),
  );
  // A file the manifest names in its home (its text) must exist too.
  const texted = parseManifest(`format: 1\nid: "03"\ntitle: a\nfiles: [x.ts]\nfocusedTests: [x.ts]\ntext: README.md\n`, "chapters/03-a/chapter.yaml");
  assert.throws(
    () => validateCourse([texted], new Set(["x.ts", "chapters/03-a/chapter.yaml"])),
    (e: unknown) => e instanceof CourseError && e.code === "MANIFEST_INVALID" && e.message.includes("chapters/03-a/README.md"),
  );
});

test("a chapter claims every file of its home: claimHome adds them, and a home file another chapter lists is claimed twice", () => {
  const a = claimHome(minimal("03", "a"), ["chapters/03-a/chapter.yaml", "chapters/03-a/solutions/mistakes.yaml", "chapters/06-b/chapter.yaml", "f03.ts"]);
  assert.deepEqual(a.files, ["f03.ts", "chapters/03-a/chapter.yaml", "chapters/03-a/solutions/mistakes.yaml"]);
  const b = minimal("06", "b", "chapters/03-a/solutions/mistakes.yaml");
  assert.throws(
    () => validateCourse([a, b]),
    (e: unknown) => e instanceof CourseError && e.code === "MANIFEST_INVALID" && e.message.includes("chapters/03-a/solutions/mistakes.yaml"),
  );
});

test("loadManifests returns chapters in numeric order, each with its whole home; loadManifest of an unknown chapter lists the known ones", async (t) => {
  const dir = tempDir(t);
  for (const [id, slug] of [
    ["10", "ten"],
    ["03", "three"],
    ["06", "six"],
  ] as const) {
    mkdirSync(path.join(dir, "chapters", `${id}-${slug}`, "solutions"), { recursive: true });
    writeFileSync(
      path.join(dir, "chapters", `${id}-${slug}`, "chapter.yaml"),
      `format: 1\nid: "${id}"\ntitle: t${id}\nfiles: [f${id}.ts]\nfocusedTests: [f${id}.ts]\n`,
    );
    writeFileSync(path.join(dir, "chapters", `${id}-${slug}`, "solutions", "mistakes.yaml"), "mistakes: []\n");
  }
  // Not homes: a file, a folder without a manifest, a folder whose name is no chapter's.
  writeFileSync(path.join(dir, "chapters", "README.md"), "not a manifest");
  mkdirSync(path.join(dir, "chapters", "07-draft"));
  mkdirSync(path.join(dir, "chapters", "notes"));
  writeFileSync(path.join(dir, "chapters", "notes", "chapter.yaml"), "not a chapter");
  assert.deepEqual(
    (await loadManifests(dir)).map((m) => m.id),
    ["03", "06", "10"],
  );
  const six = await loadManifest(dir, "6");
  assert.equal(six.id, "06");
  assert.deepEqual(six.files, ["f06.ts", "chapters/06-six/chapter.yaml", "chapters/06-six/solutions/mistakes.yaml"]);
  await assert.rejects(loadManifest(dir, "12"), (e: unknown) => e instanceof CourseError && e.code === "CHAPTER_UNKNOWN" && e.message.includes("03, 06, 10"));
  // Two homes of one chapter: refused, naming both.
  mkdirSync(path.join(dir, "chapters", "06-again"));
  writeFileSync(path.join(dir, "chapters", "06-again", "chapter.yaml"), "");
  await assert.rejects(
    loadManifests(dir),
    (e: unknown) => e instanceof CourseError && e.code === "MANIFEST_INVALID" && e.message.includes("06-again") && e.message.includes("06-six"),
  );
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
