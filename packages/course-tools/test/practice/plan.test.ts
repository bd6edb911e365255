// test-process: shared
/**
 * `practice/plan.ts`: what a practice folder holds, planned without the disk. The challenge
 * tier arrives whole: its tests, what they import and the text of its rules.
 */
import assert from "node:assert/strict";
import test from "node:test";
import type { TreeEntry } from "../../src/course/git.js";
import type { Checkpoint } from "../../src/course/history.js";
import { parseManifest } from "../../src/course/manifest.js";
import type { Starter } from "../../src/course/starters.js";
import { planPractice } from "../../src/practice/plan.js";

const MANIFEST = `format: 1
id: "04"
title: 第四章
files:
  - packages/pi-course/src/four.ts
  - packages/pi-course/test/04-four.test.ts
  - packages/pi-course/test/challenge/04-edges.test.ts
  - packages/pi-course/test/fixtures/04-edges.ts
starters:
  - from: four.ts
    to: packages/pi-course/src/four.ts
focusedTests:
  - packages/pi-course/test/04-four.test.ts
text: README.md
challenge:
  text: challenge.md
  tests:
    - file: packages/pi-course/test/challenge/04-edges.test.ts
      title: 边界
  support:
    - packages/pi-course/test/fixtures/04-edges.ts
labs:
  - id: "4.1"
    title: 求和
    tests: 1
    scaffoldError: Lab 4.1 sum 尚未实现
    declarations: [sum]
    sections: ["2"]
    challenge: [packages/pi-course/test/challenge/04-edges.test.ts]
    hints: [a, b, c, d]
`;

const MANIFEST_PATH = "chapters/04-four/chapter.yaml";

const blob = (path: string): TreeEntry => ({ mode: "100644", type: "blob", oid: `oid-${path}`, path });

const STARTER: Starter = {
  teachingFile: "packages/pi-course/src/four.ts",
  source: "chapters/04-four/four.ts",
  derived: true,
  text: 'export function sum(): number {\n  throw new Error("Lab 4.1 sum 尚未实现");\n}\n',
  origin: (line) => ({ file: "chapters/04-four/four.ts", line }),
};

test("the practice folder gets the challenge tier's tests, their fixtures and the text of its rules, from the target", () => {
  const manifest = parseManifest(MANIFEST, MANIFEST_PATH);
  assert.equal(manifest.challengeText, "chapters/04-four/challenge.md");
  const checkpoint = {
    chapter: { id: "04", title: manifest.title, target: "t".repeat(40), parent: "p".repeat(40), tree: "r".repeat(40), manifest },
    teachingFiles: ["packages/pi-course/src/four.ts"],
    history: { source: "s".repeat(40), chapters: [{ id: "04" }] },
  } as unknown as Pick<Checkpoint, "chapter" | "teachingFiles" | "history">;
  const plan = planPractice({
    checkpoint,
    parentEntries: [blob("package.json"), blob("LEARNING.md")],
    targetEntries: manifest.files.map(blob),
    manifestText: MANIFEST,
    linkedModules: true,
    course: "/course",
    starters: [STARTER],
  });
  const copied = new Map(plan.files.map((file) => [file.path, (file as { oid?: string }).oid]));
  for (const path of [
    "packages/pi-course/test/challenge/04-edges.test.ts",
    "packages/pi-course/test/fixtures/04-edges.ts",
    "chapters/04-four/challenge.md",
    "chapters/04-four/README.md",
  ]) {
    assert.equal(copied.get(path), `oid-${path}`, `${path} comes from the target`);
  }
});

test("the challenge tier's text is claimed by the chapter and is not the chapter text", () => {
  assert.throws(() => parseManifest(MANIFEST.replace("text: challenge.md", "text: ../04-challenge.md"), MANIFEST_PATH), /challenge\.text/);
  assert.throws(() => parseManifest(MANIFEST.replace("text: challenge.md", "text: README.md"), MANIFEST_PATH), /challenge\.text/);
  assert.equal(parseManifest(MANIFEST.replace("  text: challenge.md\n", ""), MANIFEST_PATH).challengeText, undefined);
});

test("the starter the plan is given, derived or hand-kept, is what the folder gets over the teaching file and as reset's pristine copy", () => {
  const manifest = parseManifest(MANIFEST, MANIFEST_PATH);
  const checkpoint = {
    chapter: { id: "04", title: manifest.title, target: "t".repeat(40), parent: "p".repeat(40), tree: "r".repeat(40), manifest },
    teachingFiles: ["packages/pi-course/src/four.ts"],
    history: { source: "s".repeat(40), chapters: [{ id: "04" }] },
  } as unknown as Pick<Checkpoint, "chapter" | "teachingFiles" | "history">;
  const plan = planPractice({
    checkpoint,
    parentEntries: [blob("package.json")],
    targetEntries: manifest.files.map(blob),
    manifestText: MANIFEST,
    linkedModules: true,
    course: "/course",
    starters: [STARTER],
  });
  const content = (path: string) => (plan.files.find((file) => file.path === path) as { content?: string } | undefined)?.content;
  assert.equal(content("packages/pi-course/src/four.ts"), STARTER.text);
  assert.equal(content(".pi-course/starter/packages/pi-course/src/four.ts"), STARTER.text);
  assert.equal(
    plan.files.find((file) => file.path === "chapters/04-four/four.ts"),
    undefined,
    "the starter's course file itself is not copied",
  );
  assert.equal(plan.pairs[0]?.starter, STARTER);
});

test("the practice folder mirrors the homes answer-free: an earlier chapter's home comes without its scaffolds and solutions", () => {
  const manifest = parseManifest(MANIFEST, MANIFEST_PATH);
  const checkpoint = {
    chapter: { id: "04", title: manifest.title, target: "t".repeat(40), parent: "p".repeat(40), tree: "r".repeat(40), manifest },
    teachingFiles: ["packages/pi-course/src/four.ts"],
    history: { source: "s".repeat(40), chapters: [{ id: "03" }, { id: "04" }] },
  } as unknown as Pick<Checkpoint, "chapter" | "teachingFiles" | "history">;
  const earlier = ["chapter.yaml", "README.md", "three.scaffold.ts", "solutions/a-kept.ts", "solutions/mistakes.yaml"].map(
    (file) => `chapters/03-three/${file}`,
  );
  const plan = planPractice({
    checkpoint,
    parentEntries: [blob("package.json"), ...earlier.map(blob)],
    targetEntries: manifest.files.map(blob),
    manifestText: MANIFEST,
    linkedModules: true,
    course: "/course",
    starters: [STARTER],
  });
  const paths = plan.files.map((file) => file.path).filter((file) => file.startsWith("chapters/"));
  assert.deepEqual(paths.sort(), [
    "chapters/03-three/README.md",
    "chapters/03-three/chapter.yaml",
    "chapters/04-four/README.md",
    "chapters/04-four/challenge.md",
    "chapters/04-four/chapter.yaml",
  ]);
});
