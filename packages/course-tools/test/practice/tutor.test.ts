// test-process: shared
/**
 * `practice/tutor.ts`: every practice folder tells the learner's AI agent how to tutor —
 * `AGENTS.md`, `CLAUDE.md` importing it, and a skill in the Agent Skills format that chapter
 * 12's own discovery lists without a warning — generated from the manifest, written over the
 * parent tree's author-facing files, and leak-audited like everything the chapter adds.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import test from "node:test";
import { pathToFileURL } from "node:url";
import { parse as parseYaml } from "yaml";
import { teachingFilesOf } from "../../src/course/history.js";
import { loadManifest, parseManifest } from "../../src/course/manifest.js";
import { createPractice } from "../../src/practice/folder.js";
import { CLAUDE_TEXT, defaultTutorTemplates, renderTutorFiles, TUTOR_FILES, TUTOR_SKILL } from "../../src/practice/tutor.js";
import { makeFakeCourse, realRepo, REFERENCE_BETA, tempDir } from "../support/fake-course.js";
import { isCode, leftovers } from "../support/folders.js";
import { MINI_MANIFEST } from "../support/lab-fixture.js";

const mini = parseManifest(MINI_MANIFEST, "chapters/99-mini/chapter.yaml");

/** The frontmatter and body of a SKILL.md. */
function splitSkill(text: string): { frontmatter: Record<string, unknown>; body: string } {
  const match = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text);
  assert.ok(match, "SKILL.md starts with a frontmatter block");
  return { frontmatter: parseYaml(match[1]!) as Record<string, unknown>, body: match[2]! };
}

test("the three files are rendered from the manifest: no placeholder left, the protocol and the chapter's commands stated", () => {
  const files = renderTutorFiles(mini, ["packages/pi-course/src/mini.ts"]);
  assert.deepEqual(
    files.map((f) => f.path),
    ["AGENTS.md", "CLAUDE.md", `.agents/skills/${TUTOR_SKILL}/SKILL.md`],
  );
  const [agents, claude, skill] = files.map((f) => f.content) as [string, string, string];
  for (const text of [agents, skill]) assert.doesNotMatch(text, /\{\{[#^/]?\w+\}\}/);
  assert.equal(claude, "@AGENTS.md\n");
  assert.equal(CLAUDE_TEXT, claude);
  for (const needle of [
    "第 99 章",
    "`packages/pi-course/src/mini.ts`",
    "| 99.1 | 两数相加 | 2 |",
    "| 99.2 | 打招呼 | 3 |",
    "先预测，再运行",
    "一轮只给一个动作",
    "定位文件 → 指出签名 → 伪代码 → 局部代码",
    "npm run hint -w @pi/course -- NN.L",
    ".pi-course/hints.json",
    "`chapters/99-mini/chapter.yaml` 里写着每个 Lab 的全部提示",
    "不要朗读测试",
    "不写、不贴教学文件里的整段函数",
    "学习者直接要答案时",
    "npm run lab -w @pi/course -- 99.1\n",
    "npm run lab -w @pi/course -- 99.1 --open",
    "npm run lab -w @pi/course -- 99.1 --compare",
    "npm run lab -w @pi/course -- NN.L --compare",
  ]) {
    assert.ok(agents.includes(needle), `AGENTS.md should contain ${JSON.stringify(needle)}`);
  }
  // The mini chapter has neither a fault exercise nor a challenge tier: neither is offered.
  assert.doesNotMatch(agents, /--challenge|npm run fault/);

  const { frontmatter, body } = splitSkill(skill);
  assert.deepEqual(Object.keys(frontmatter), ["name", "description"]);
  assert.equal(frontmatter.name, TUTOR_SKILL);
  assert.match(TUTOR_SKILL, /^[a-z0-9]+(?:-[a-z0-9]+)*$/);
  assert.equal(path.basename(path.dirname(TUTOR_FILES.skill)), frontmatter.name, "the skill's name is its folder's");
  const description = frontmatter.description;
  assert.ok(typeof description === "string" && description.length > 0 && description.length <= 1024, String(description));
  assert.match(description, /时使用/, "the description says when to use it");
  for (const needle of ["| 1 | 定位文件", "| 4 | 局部代码", "npm run hint -w @pi/course -- NN.L", "npm run lab -w @pi/course -- 99", "AGENTS.md"]) {
    assert.ok(body.includes(needle), `SKILL.md should contain ${JSON.stringify(needle)}`);
  }
});

test("practice writes the learner's AGENTS.md, CLAUDE.md and skill over the parent's author-facing AGENTS.md and CLAUDE.md", async (t) => {
  const repo = makeFakeCourse(t, { overrides: { "AGENTS.md": "# For the course's authors\n\nRun verify.\n", "CLAUDE.md": "@AGENTS.md\n" } });
  const dest = path.join(path.dirname(repo), "p02");
  await createPractice({ repo, id: "02", dest });
  const read = (file: string): string => readFileSync(path.join(dest, ...file.split("/")), "utf8");
  assert.match(read("AGENTS.md"), /^# 给 AI 助手的约定：第 02 章练习目录\n/);
  assert.doesNotMatch(read("AGENTS.md"), /course's authors/);
  assert.equal(read("CLAUDE.md"), "@AGENTS.md\n");
  // Chapter 02 has an exercise fault: it is offered once the labs are green.
  assert.match(read("AGENTS.md"), /npm run fault -w @pi\/course -- 02/);
  assert.equal(splitSkill(read(TUTOR_FILES.skill)).frontmatter.name, TUTOR_SKILL);
});

test("a reference line planted in either template is LEAK_DETECTED, naming the generated file, and nothing is written", async (t) => {
  const repo = makeFakeCourse(t);
  const planted = REFERENCE_BETA.split("\n").find((line) => line.includes("new Set(names)"))!;
  const templates = defaultTutorTemplates();
  const cases = [
    { file: "AGENTS.md", tutorTemplates: { ...templates, agents: `${templates.agents}\n例如：\n${planted}\n` } },
    { file: TUTOR_FILES.skill, tutorTemplates: { ...templates, skill: `${templates.skill}\n${planted}\n` } },
  ];
  for (const { file, tutorTemplates } of cases) {
    const dest = path.join(path.dirname(repo), `leaky-${path.basename(file, ".md")}`);
    await assert.rejects(createPractice({ repo, id: "02", dest, tutorTemplates }), (error: unknown) => {
      assert.ok(isCode("LEAK_DETECTED")(error), String(error));
      assert.match(
        (error as Error).message,
        new RegExp(`^答案泄漏：${file.replace(/[.]/g, "\\.")}:\\d+ 含有 packages/pi-course/src/beta\\.ts 参考实现中的一行`),
      );
      return true;
    });
    assert.equal(existsSync(dest), false);
  }
  assert.deepEqual(leftovers(path.dirname(repo)), []);
});

/** What the test reads of chapter 12's `discoverResources` (the compiled reference of this working tree). */
interface Discovery {
  discoverResources(
    roots: readonly string[],
    options?: { onDiagnostic?(diagnostic: { code: string; message: string }): void },
  ): Promise<{ skills: { name: string; description: string }[] }>;
}

const compiledResources = path.join(realRepo, "packages", "pi-course", "dist", "src", "resources.js");

test("chapter 12's tutoring files offer its challenge tier, and chapter 12's own discoverResources lists the skill without a warning", {
  skip: !existsSync(compiledResources) && "the course package is not built (npm run build)",
}, async (t) => {
  // Rendered as practice renders them (that practice writes them into the folder is the synthetic course's test above).
  const manifest = await loadManifest(realRepo, "12");
  const files = renderTutorFiles(manifest, teachingFilesOf(manifest));
  const agents = files.find((f) => f.path === TUTOR_FILES.agents)!.content;
  assert.match(agents, /`packages\/pi-course\/src\/resources\.ts`/);
  assert.match(agents, /npm run lab -w @pi\/course -- 12 --challenge/, "chapter 12 has a challenge tier");
  const dest = tempDir(t);
  for (const file of files) {
    mkdirSync(path.dirname(path.join(dest, ...file.path.split("/"))), { recursive: true });
    writeFileSync(path.join(dest, ...file.path.split("/")), file.content);
  }

  // The reference's discovery (the learner's own is a starter in the folder), in lenient mode.
  const { discoverResources } = (await import(pathToFileURL(compiledResources).href)) as Discovery;
  const diagnostics: unknown[] = [];
  const catalog = await discoverResources([path.join(dest, ".agents")], { onDiagnostic: (d) => void diagnostics.push(d) });
  assert.deepEqual(diagnostics, []);
  assert.deepEqual(
    catalog.skills.map((s) => s.name),
    [TUTOR_SKILL],
  );
  assert.match(catalog.skills[0]!.description, /第 12 章的练习目录里陪学习者做 Lab 时使用/);
});
