// test-process: shared
/**
 * `practice/guide.ts`: the practice folder's `LEARNING.md` is the template `learning.md`
 * filled in from the manifest, by one small function with placeholders and sections.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import test from "node:test";
import { courseRoot } from "../../src/core/paths.js";
import { parseManifest } from "../../src/course/manifest.js";
import { LEARNING_TEMPLATE, renderLearningGuide, renderTemplate } from "../../src/practice/guide.js";
import { MINI_MANIFEST } from "../support/lab-fixture.js";

test("placeholders are replaced; a section is kept or dropped with its marker lines, also inside a line", () => {
  const template = "# {{title}}\n{{#text}}\n正文：{{text}}\n{{/text}}\n{{^text}}\n没有正文\n{{/text}}\n共 {{n}} 项{{#n}}（不是零）{{/n}}\n";
  assert.equal(renderTemplate(template, { title: "T", text: "a.md", n: 2 }), "# T\n正文：a.md\n共 2 项（不是零）\n");
  assert.equal(renderTemplate(template, { title: "T", text: "", n: 0 }), "# T\n没有正文\n共 0 项\n");
  assert.throws(() => renderTemplate("{{missing}}", {}), /missing/);
});

test("the guide's template leaves no placeholder behind and names the chapter's commands", () => {
  const manifest = parseManifest(MINI_MANIFEST, "chapters/99-mini/chapter.yaml");
  const guide = renderLearningGuide({
    manifest,
    parent: "p".repeat(40),
    target: "t".repeat(40),
    source: "s".repeat(40),
    teachingFiles: ["packages/pi-course/src/mini.ts"],
    throughChapters: ["98", "99"],
    linkedModules: false,
  });
  assert.doesNotMatch(guide, /\{\{|\}\}/);
  assert.ok(guide.startsWith(`# 第 99 章练习：${manifest.title}\n`));
  for (const line of [
    "npm install",
    "npm run lab -w @pi/course -- 99.1     # 编译并只运行这个 Lab，给出通过数和第一处失败",
    "npm run hint -w @pi/course -- 99.1",
    "本章没有登记故障实验。",
  ]) {
    assert.ok(guide.split("\n").includes(line), line);
  }
  assert.ok(readFileSync(path.join(courseRoot, ...LEARNING_TEMPLATE.split("/")), "utf8").includes("{{labRows}}"));
});
