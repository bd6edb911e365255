// @ts-nocheck: outside the course package its imports do not resolve; drop this line when the file is built as a course test.
/**
 * Rule probes for chapter 12: one small test per rule that the chapter text (or the first
 * part of the contract) states and the lab tests do not check. They are not lab tests and
 * never go to learners. Built beside a solution (as `test/12-rule-probes.test.ts`, this first
 * line dropped) they show that every correct solution passes them and that every catalogued
 * mistake really changes behaviour, including those no lab test notices. (The retired
 * `measure.ts --probes` ran them; `mistakes 12` does not yet.)
 *
 * Each probe's name starts with "Probe 12.x", the lab whose rules it holds. Probes stay
 * out of what the text leaves open (see the ambiguity list in the report of this work).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fsp from "node:fs/promises";
import * as os from "node:os";
import * as nodePath from "node:path";
import test, { type TestContext } from "node:test";
import {
  activateSkill,
  createExtensionHost,
  discoverResources,
  formatResourceContext,
  loadExtension,
  renderTemplate,
  type ActivatedSkill,
  type ExtensionContext,
  type ExtensionDiagnostic,
  type ExtensionHost,
  type TemplateResource,
} from "../src/resources.js";
import { ToolRegistry, objectSchema, stringValue, type Tool, type ToolExecutor } from "../src/tool.js";
import { text, textOf, type ToolCall, type ToolResultMessage } from "../src/types.js";

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

function skillMarkdown(name: string, description: string, body: string): string {
  return ["---", `name: ${name}`, `description: ${description}`, "---", body, ""].join("\n");
}

async function writeFiles(dir: string, files: Record<string, string>): Promise<void> {
  for (const [relative, content] of Object.entries(files)) {
    const target = nodePath.join(dir, ...relative.split("/"));
    await fsp.mkdir(nodePath.dirname(target), { recursive: true });
    await fsp.writeFile(target, content);
  }
}

/** A fresh canonical temporary folder, removed after the test. */
async function tempDir(t: TestContext): Promise<string> {
  const dir = await fsp.realpath(await fsp.mkdtemp(nodePath.join(os.tmpdir(), "pi-course-12-probe-")));
  t.after(() => fsp.rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A root holding `files`. */
async function root(t: TestContext, files: Record<string, string>): Promise<string> {
  const dir = await tempDir(t);
  await writeFiles(dir, files);
  return dir;
}

/** Rejects with exactly the contract `code`. */
async function rejectsCode(pending: Promise<unknown>, code: string, why?: string): Promise<void> {
  await assert.rejects(pending, (error: Error & { code?: unknown }) => {
    assert.equal(error.code, code, why ?? `expected ${code}, got ${String(error.code)}: ${error.message}`);
    return true;
  });
}

function throwsCode(run: () => unknown, code: string): void {
  assert.throws(run, (error: Error & { code?: unknown }) => {
    assert.equal(error.code, code, `expected ${code}, got ${String(error.code)}: ${error.message}`);
    return true;
  });
}

/** `pending`, or a failure naming `what` when it has not settled after `ms`. */
async function settlesWithin<T>(pending: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still pending after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([pending, late]);
  } finally {
    clearTimeout(timer);
  }
}

const ids = (catalog: { resources: { kind: string; name: string }[] }) => catalog.resources.map((r) => `${r.kind}:${r.name}`);

const SKILL = skillMarkdown("probe", "probe skill", "PROBE BODY");

/** A FIFO at `file`, or false where the platform has none. */
function makeFifo(file: string): boolean {
  if (process.platform === "win32") return false;
  return spawnSync("mkfifo", [file]).status === 0;
}

// ---------------------------------------------------------------------------
// Probe 12.1 · discovery
// ---------------------------------------------------------------------------

test("Probe 12.1 · a kind:name twice inside one root is RESOURCE_DUPLICATE (skills and templates)", async (t) => {
  const skills = await root(t, { "skills/a/SKILL.md": SKILL, "skills/b/SKILL.md": SKILL });
  await rejectsCode(discoverResources([skills]), "RESOURCE_DUPLICATE");
  const templates = await root(t, { "templates/review.md": "x", "templates/zz.md": "---\nname: review\n---\ny" });
  await rejectsCode(discoverResources([templates]), "RESOURCE_DUPLICATE");
});

test("Probe 12.1 · the same root given twice is no duplicate: the first occurrence wins", async (t) => {
  const dir = await root(t, { "skills/a/SKILL.md": SKILL, "AGENTS.md": "RULES" });
  assert.deepEqual(ids(await discoverResources([dir, dir])), ["instructions:AGENTS", "skill:probe"]);
});

test("Probe 12.1 · a missing root, or a root that is a file, is RESOURCE_ROOT_MISSING", async (t) => {
  const dir = await tempDir(t);
  await rejectsCode(discoverResources([nodePath.join(dir, "nope")]), "RESOURCE_ROOT_MISSING");
  await fsp.writeFile(nodePath.join(dir, "file"), "x");
  await rejectsCode(discoverResources([nodePath.join(dir, "file")]), "RESOURCE_ROOT_MISSING");
  // A missing root after a good one still fails: nothing is skipped in strict mode.
  const good = await root(t, { "AGENTS.md": "R" });
  await rejectsCode(discoverResources([good, nodePath.join(dir, "nope")]), "RESOURCE_ROOT_MISSING");
});

test("Probe 12.1 · an empty root has no resources of any kind", async (t) => {
  const dir = await tempDir(t);
  assert.deepEqual(await discoverResources([dir]), { resources: [], instructions: [], skills: [], templates: [] });
});

test("Probe 12.1 · roots given through a symlink are canonicalised before they are scanned", async (t) => {
  const base = await tempDir(t);
  const real = nodePath.join(base, "real");
  await writeFiles(real, { "AGENTS.md": "R", "templates/t.md": "T", "skills/probe/SKILL.md": SKILL });
  await fsp.symlink(real, nodePath.join(base, "link"));
  const catalog = await discoverResources([nodePath.join(base, "link")]);
  assert.equal(catalog.instructions[0]?.root, real);
  assert.equal(catalog.instructions[0]?.source, nodePath.join(real, "AGENTS.md"));
  assert.equal(catalog.templates[0]?.root, real);
  assert.equal(catalog.templates[0]?.source, nodePath.join(real, "templates", "t.md"));
  assert.equal(catalog.skills[0]?.root, nodePath.join(real, "skills", "probe"));
  assert.equal(catalog.skills[0]?.source, nodePath.join(real, "skills", "probe", "SKILL.md"));
});

test("Probe 12.1 · source is the realpath of a symlinked file", async (t) => {
  const dir = await root(t, { "docs/rules.md": "LINKED RULES\n", "docs/t.md": "T" });
  await fsp.mkdir(nodePath.join(dir, "templates"));
  await fsp.symlink(nodePath.join(dir, "docs", "rules.md"), nodePath.join(dir, "AGENTS.md"));
  await fsp.symlink(nodePath.join(dir, "docs", "t.md"), nodePath.join(dir, "templates", "t.md"));
  const catalog = await discoverResources([dir]);
  assert.equal(catalog.instructions[0]?.source, nodePath.join(dir, "docs", "rules.md"));
  assert.equal(catalog.instructions[0]?.body, "LINKED RULES");
  assert.equal(catalog.templates[0]?.source, nodePath.join(dir, "docs", "t.md"));
});

test("Probe 12.1 · bodies are trimmed, AGENTS.md keeps a frontmatter-looking start as text", async (t) => {
  const dir = await root(t, {
    "AGENTS.md": "---\nname: x\n---\n  rules  \n\n",
    "templates/t.md": "---\ndescription: d\n---\n\n  Body {{a}}  \n\n",
  });
  const catalog = await discoverResources([dir]);
  assert.equal(catalog.instructions[0]?.body, "---\nname: x\n---\n  rules");
  assert.equal(catalog.templates[0]?.body, "Body {{a}}");
  assert.equal(catalog.templates[0]?.description, "d");
  assert.equal(catalog.templates[0]?.name, "t", "no name in the frontmatter: the file name without .md");
});

test("Probe 12.1 · a template without frontmatter: name from the file, description empty, whole text trimmed", async (t) => {
  const dir = await root(t, { "templates/plain.name.md": "\n  just text  \n" });
  const [template] = (await discoverResources([dir])).templates;
  assert.deepEqual(template, { kind: "template", name: "plain.name", description: "", source: nodePath.join(dir, "templates", "plain.name.md"), root: dir, body: "just text" });
});

test("Probe 12.1 · a UTF-8 BOM before the opening --- is accepted", async (t) => {
  const dir = await root(t, {
    "skills/a/SKILL.md": `\uFEFF${SKILL}`,
    "templates/t.md": "\uFEFF---\nname: named\n---\nB",
  });
  const catalog = await discoverResources([dir]);
  assert.deepEqual(ids(catalog), ["skill:probe", "template:named"]);
  assert.equal(catalog.templates[0]?.body, "B");
});

test("Probe 12.1 · CRLF frontmatter is accepted", async (t) => {
  const dir = await root(t, {
    "skills/a/SKILL.md": "---\r\nname: crlf\r\ndescription: windows\r\n---\r\nBODY\r\n",
    "templates/t.md": "---\r\nname: tcrlf\r\ndescription: td\r\n---\r\nT BODY\r\n",
  });
  const catalog = await discoverResources([dir]);
  assert.deepEqual(catalog.skills.map((s) => [s.name, s.description]), [["crlf", "windows"]]);
  assert.deepEqual(catalog.templates.map((s) => [s.name, s.description, s.body]), [["tcrlf", "td", "T BODY"]]);
});

test("Probe 12.1 · an empty frontmatter is an empty mapping: a skill lacks its name, a template is fine", async (t) => {
  await rejectsCode(discoverResources([await root(t, { "skills/a/SKILL.md": "---\n---\nbody\n" })]), "RESOURCE_INVALID");
  const dir = await root(t, { "templates/t.md": "---\n---\nbody\n" });
  assert.deepEqual((await discoverResources([dir])).templates.map((x) => [x.name, x.description, x.body]), [["t", "", "body"]]);
});

const BROKEN_SKILLS: Record<string, string> = {
  "no frontmatter": "name: x\ndescription: y\n",
  "unterminated": "---\nname: x\ndescription: y\n",
  "only the opening line": "---",
  "bad YAML": "---\nname: [x\ndescription: y\n---\n",
  "a list": "---\n- name\n- description\n---\n",
  "a scalar": "---\njust words\n---\n",
  "no description": "---\nname: x\n---\n",
  "no name": "---\ndescription: y\n---\n",
  "a number as name": "---\nname: 123\ndescription: y\n---\n",
  "a null name": "---\nname:\ndescription: y\n---\n",
  "an empty name": "---\nname: \"\"\ndescription: y\n---\n",
  "an empty description": "---\nname: x\ndescription: ''\n---\n",
  "a list as description": "---\nname: x\ndescription: [a]\n---\n",
  "an opening line with a trailing space": "--- \nname: x\ndescription: y\n---\n",
  "a closing line of four dashes only": "---\nname: x\ndescription: y\n----\n",
};
for (const [label, content] of Object.entries(BROKEN_SKILLS)) {
  test(`Probe 12.1 · SKILL.md with ${label} is RESOURCE_INVALID`, async (t) => {
    await rejectsCode(discoverResources([await root(t, { "skills/a/SKILL.md": content })]), "RESOURCE_INVALID");
  });
}

const BROKEN_TEMPLATES: Record<string, string> = {
  "a number as name": "---\nname: 5\n---\nx",
  "an empty description": "---\ndescription: \"\"\n---\nx",
  "a null name": "---\nname:\n---\nx",
  "an unterminated frontmatter": "---\nname: x\n",
  "a list frontmatter": "---\n- a\n---\nx",
  "bad YAML": "---\nname: {x\n---\nx",
};
for (const [label, content] of Object.entries(BROKEN_TEMPLATES)) {
  test(`Probe 12.1 · a template with ${label} is RESOURCE_INVALID`, async (t) => {
    await rejectsCode(discoverResources([await root(t, { "templates/t.md": content })]), "RESOURCE_INVALID");
  });
}

test("Probe 12.1 · a template whose first line is not exactly --- has no frontmatter", async (t) => {
  const dir = await root(t, { "templates/t.md": "--- \nname: x\n---\nbody", "templates/u.md": "----\nname: y\n----\nbody" });
  assert.deepEqual(
    (await discoverResources([dir])).templates.map((x) => [x.name, x.body]),
    [["t", "--- \nname: x\n---\nbody"], ["u", "----\nname: y\n----\nbody"]],
  );
});

test("Probe 12.1 · a closing --- with CRLF after an LF opening, and a YAML block that ends the file", async (t) => {
  const dir = await root(t, {
    "skills/a/SKILL.md": "---\nname: mixed\ndescription: ends\r\n---\r\n",
    "skills/b/SKILL.md": "---\nname: eof\ndescription: at end\n---",
  });
  assert.deepEqual((await discoverResources([dir])).skills.map((s) => s.name), ["eof", "mixed"]);
});

test("Probe 12.1 · other I/O errors are not swallowed into an empty catalog", async (t) => {
  const agentsDir = await root(t, { "AGENTS.md/inner.txt": "x" });
  await assert.rejects(discoverResources([agentsDir]), "AGENTS.md that is a directory");
  const skillsFile = await root(t, { skills: "not a folder" });
  await assert.rejects(discoverResources([skillsFile]), "skills/ that is a file");
  const templatesFile = await root(t, { templates: "not a folder" });
  await assert.rejects(discoverResources([templatesFile]), "templates/ that is a file");
  const skillDir = await root(t, { "skills/a/SKILL.md/inner.txt": "x" });
  await assert.rejects(discoverResources([skillDir]), "SKILL.md that is a directory");
  const loop = await tempDir(t);
  await fsp.mkdir(nodePath.join(loop, "templates"));
  await fsp.symlink("loop.md", nodePath.join(loop, "templates", "loop.md"));
  await assert.rejects(discoverResources([loop]), "a template that is a symlink loop");
  const agentsLoop = await tempDir(t);
  await fsp.symlink("AGENTS.md", nodePath.join(agentsLoop, "AGENTS.md"));
  await assert.rejects(discoverResources([agentsLoop]), "AGENTS.md that is a symlink loop");
});

test("Probe 12.1 · a folder without SKILL.md is skipped, not an error", async (t) => {
  const dir = await root(t, { "skills/empty/notes.md": "x", "skills/a/SKILL.md": SKILL });
  assert.deepEqual(ids(await discoverResources([dir])), ["skill:probe"]);
});

test("Probe 12.1 · dot-folders, dot-files, nested skills and files directly in skills/ are not skills", async (t) => {
  const dir = await root(t, {
    "skills/.hidden/SKILL.md": skillMarkdown("hidden", "h", "H"),
    "skills/group/inner/SKILL.md": skillMarkdown("nested", "n", "N"),
    "skills/SKILL.md": skillMarkdown("loose", "l", "L"),
    "skills/loose.md": skillMarkdown("loose2", "l", "L"),
  });
  assert.deepEqual(ids(await discoverResources([dir])), []);
});

test("Probe 12.1 · only *.md files directly in templates/ are templates", async (t) => {
  const dir = await root(t, {
    "templates/.hidden.md": "h",
    "templates/notes.txt": "n",
    "templates/README": "r",
    "templates/sub/deep.md": "d",
    "templates/dir.md/inner.md": "i",
    "templates/ok.md": "ok",
  });
  assert.deepEqual(ids(await discoverResources([dir])), ["template:ok"]);
});

test("Probe 12.1 · the four arrays are independent deep copies", async (t) => {
  const dir = await root(t, { "AGENTS.md": "R", "skills/a/SKILL.md": SKILL, "templates/t.md": "T" });
  const catalog = await discoverResources([dir]);
  catalog.resources[0]!.name = "changed";
  (catalog.resources[1] as { description: string }).description = "changed";
  (catalog.resources[2] as { body: string }).body = "changed";
  assert.equal(catalog.instructions[0]?.name, "AGENTS");
  assert.equal(catalog.skills[0]?.description, "probe skill");
  assert.equal(catalog.templates[0]?.body, "T");
  catalog.skills[0]!.name = "again";
  assert.equal(catalog.resources[1]?.name, "probe");
});

test("Probe 12.1 · a terminated YAML block over 64 KiB is RESOURCE_INVALID", async (t) => {
  const padding = `pad: ${"a".repeat(70 * 1024)}\n`;
  const dir = await root(t, { "skills/a/SKILL.md": `---\nname: big\ndescription: d\n${padding}---\nbody\n` });
  await rejectsCode(discoverResources([dir]), "RESOURCE_INVALID");
  // Just under the limit passes.
  const small = await root(t, { "skills/a/SKILL.md": `---\nname: fine\ndescription: d\npad: ${"a".repeat(60 * 1024)}\n---\nbody\n` });
  assert.deepEqual(ids(await discoverResources([small])), ["skill:fine"]);
});

test("Probe 12.1 · a skill with a huge body is discovered; the body never enters the catalog", async (t) => {
  const body = "BODY LINE\n".repeat(300_000);
  const dir = await root(t, { "skills/a/SKILL.md": `---\nname: huge\ndescription: d\n---\n${body}` });
  const catalog = await discoverResources([dir]);
  assert.deepEqual(ids(catalog), ["skill:huge"]);
  assert.ok(!JSON.stringify(catalog).includes("BODY LINE"));
});

test("Probe 12.1 · discovery reads SKILL.md only to the end of its frontmatter (a FIFO that never ends)", async (t) => {
  const dir = await root(t, { "skills/a/.keep": "" });
  const fifo = nodePath.join(dir, "skills", "a", "SKILL.md");
  if (!makeFifo(fifo)) return t.skip("no FIFOs here");
  const discovery = discoverResources([dir]);
  const writer = await fsp.open(fifo, "w");
  try {
    await writer.write("---\nname: streamed\ndescription: never ends\n---\nthe body goes on and on\n");
    const catalog = await settlesWithin(discovery, 3000, "discovery waited for the end of SKILL.md");
    assert.deepEqual(ids(catalog), ["skill:streamed"]);
  } finally {
    await writer.close();
    await discovery.catch(() => {});
  }
});

test("Probe 12.1 · one long YAML line without a newline fails at 64 KiB, without waiting for the end of the file", async (t) => {
  const dir = await root(t, { "skills/a/.keep": "" });
  const fifo = nodePath.join(dir, "skills", "a", "SKILL.md");
  if (!makeFifo(fifo)) return t.skip("no FIFOs here");
  const discovery = discoverResources([dir]);
  discovery.catch(() => {});
  const writer = await fsp.open(fifo, "w");
  try {
    // The reader may stop (and close its end) before every byte is written: EPIPE is expected then.
    void writer.write(`---\nname: x\ndescription: ${"y".repeat(66 * 1024)}`).catch(() => {});
    await settlesWithin(rejectsCode(discovery, "RESOURCE_INVALID"), 3000, "an unterminated 66 KiB line was read to the end");
  } finally {
    await writer.close().catch(() => {});
    await discovery.catch(() => {});
  }
});

test("Probe 12.1 · an unterminated frontmatter over 64 KiB fails without waiting for the end of the file", async (t) => {
  const dir = await root(t, { "skills/a/.keep": "" });
  const fifo = nodePath.join(dir, "skills", "a", "SKILL.md");
  if (!makeFifo(fifo)) return t.skip("no FIFOs here");
  const discovery = discoverResources([dir]);
  discovery.catch(() => {});
  const writer = await fsp.open(fifo, "w");
  try {
    void writer.write(`---\nname: x\ndescription: y\n${"k: v\n".repeat(14 * 1024)}`).catch(() => {});
    await settlesWithin(rejectsCode(discovery, "RESOURCE_INVALID"), 3000, "an unterminated 70 KiB block was read to the end");
  } finally {
    await writer.close().catch(() => {});
    await discovery.catch(() => {});
  }
});

test("Probe 12.1 · a BOM that arrives in pieces is still a BOM", async (t) => {
  const dir = await root(t, { "skills/a/.keep": "" });
  const fifo = nodePath.join(dir, "skills", "a", "SKILL.md");
  if (!makeFifo(fifo)) return t.skip("no FIFOs here");
  const discovery = discoverResources([dir]);
  discovery.catch(() => {});
  const writer = await fsp.open(fifo, "w");
  try {
    await writer.write(Buffer.from([0xef]));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await writer.write(Buffer.concat([Buffer.from([0xbb, 0xbf]), Buffer.from("---\nname: bom\ndescription: split\n---\n")]));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await writer.close();
    assert.deepEqual(ids(await settlesWithin(discovery, 3000, "discovery of a split BOM")), ["skill:bom"]);
  } finally {
    await writer.close().catch(() => {});
    await discovery.catch(() => {});
  }
});

test("Probe 12.1 · a template's name comes from frontmatter even when the file name differs; description is kept", async (t) => {
  const dir = await root(t, { "templates/file-name.md": "---\nname: declared\ndescription: says so\n---\nB" });
  assert.deepEqual((await discoverResources([dir])).templates.map((x) => [x.name, x.description]), [["declared", "says so"]]);
});

test("Probe 12.1 · code-unit order also for templates, and kinds never mix", async (t) => {
  const dir = await root(t, { "templates/b.md": "b", "templates/B.md": "B", "templates/a.md": "a", "skills/z/SKILL.md": skillMarkdown("zz", "d", "x"), "AGENTS.md": "r" });
  assert.deepEqual(ids(await discoverResources([dir])), ["instructions:AGENTS", "skill:zz", "template:B", "template:a", "template:b"]);
});

// ---------------------------------------------------------------------------
// Probe 12.2 · activation
// ---------------------------------------------------------------------------

async function skillWorkspace(t: TestContext) {
  const dir = await root(t, {
    "skills/review/SKILL.md": skillMarkdown("review", "the review", "\n\n  Review body.  \n\n"),
    "skills/review/a.md": "A\n",
    "skills/review/b.md": "  B  \n",
    "skills/review-old/x.md": "X",
    "outside.md": "OUTSIDE",
  });
  return { dir, skillRoot: nodePath.join(dir, "skills", "review"), catalog: await discoverResources([dir]) };
}

test("Probe 12.2 · the body is re-read and trimmed; file contents are not", async (t) => {
  const { catalog, skillRoot } = await skillWorkspace(t);
  const active = await activateSkill(catalog, "review", { resources: ["b.md"] });
  assert.equal(active.body, "Review body.");
  assert.deepEqual(active.resources, [{ request: "b.md", source: nodePath.join(skillRoot, "b.md"), content: "  B  \n" }]);
  await fsp.writeFile(nodePath.join(skillRoot, "SKILL.md"), skillMarkdown("review", "the review", "NEW BODY"));
  assert.equal((await activateSkill(catalog, "review")).body, "NEW BODY");
});

test("Probe 12.2 · the catalog's metadata is kept even when the file's description changed", async (t) => {
  const { catalog, skillRoot } = await skillWorkspace(t);
  await fsp.writeFile(nodePath.join(skillRoot, "SKILL.md"), skillMarkdown("review", "edited description", "B"));
  const active = await activateSkill(catalog, "review");
  assert.equal(active.description, "the review");
  assert.equal(active.source, catalog.skills[0]?.source);
  assert.equal(active.root, catalog.skills[0]?.root);
  assert.equal(active.kind, "skill");
});

test("Probe 12.2 · SKILL_CHANGED when the name changed, the file is gone, or the folder is gone", async (t) => {
  const { catalog, skillRoot } = await skillWorkspace(t);
  await fsp.writeFile(nodePath.join(skillRoot, "SKILL.md"), skillMarkdown("renamed", "the review", "B"));
  await rejectsCode(activateSkill(catalog, "review"), "SKILL_CHANGED", "renamed");
  await fsp.rm(nodePath.join(skillRoot, "SKILL.md"));
  await rejectsCode(activateSkill(catalog, "review"), "SKILL_CHANGED", "file deleted");
  await fsp.rm(skillRoot, { recursive: true });
  await rejectsCode(activateSkill(catalog, "review"), "SKILL_CHANGED", "folder deleted");
});

test("Probe 12.2 · a SKILL.md that turned invalid is RESOURCE_INVALID", async (t) => {
  const { catalog, skillRoot } = await skillWorkspace(t);
  await fsp.writeFile(nodePath.join(skillRoot, "SKILL.md"), "no frontmatter any more\n");
  await rejectsCode(activateSkill(catalog, "review"), "RESOURCE_INVALID");
});

test("Probe 12.2 · a SKILL.md replaced by a symlink to a file outside its folder is SKILL_PATH_ESCAPE", async (t) => {
  const { catalog, skillRoot, dir } = await skillWorkspace(t);
  await fsp.writeFile(nodePath.join(dir, "elsewhere.md"), skillMarkdown("review", "the review", "FOREIGN BODY"));
  await fsp.rm(nodePath.join(skillRoot, "SKILL.md"));
  await fsp.symlink(nodePath.join(dir, "elsewhere.md"), nodePath.join(skillRoot, "SKILL.md"));
  await rejectsCode(activateSkill(catalog, "review"), "SKILL_PATH_ESCAPE");
});

test("Probe 12.2 · empty, NUL and absolute requests are SKILL_PATH_INVALID, even an absolute path inside the folder", async (t) => {
  const { catalog, skillRoot } = await skillWorkspace(t);
  await rejectsCode(activateSkill(catalog, "review", { resources: [""] }), "SKILL_PATH_INVALID");
  await rejectsCode(activateSkill(catalog, "review", { resources: ["a.md\0"] }), "SKILL_PATH_INVALID");
  await rejectsCode(activateSkill(catalog, "review", { resources: [nodePath.join(skillRoot, "a.md")] }), "SKILL_PATH_INVALID");
});

test("Probe 12.2 · the lexical check comes before the file system; a missing file inside is SKILL_RESOURCE_MISSING", async (t) => {
  const { catalog } = await skillWorkspace(t);
  await rejectsCode(activateSkill(catalog, "review", { resources: ["../nowhere/x.md"] }), "SKILL_PATH_ESCAPE");
  await rejectsCode(activateSkill(catalog, "review", { resources: ["sub/../../review-old/x.md"] }), "SKILL_PATH_ESCAPE");
  await rejectsCode(activateSkill(catalog, "review", { resources: ["missing.md"] }), "SKILL_RESOURCE_MISSING");
  await rejectsCode(activateSkill(catalog, "review", { resources: ["a.md", "missing.md"] }), "SKILL_RESOURCE_MISSING");
});

test("Probe 12.2 · a symlink inside the folder that leads out is SKILL_PATH_ESCAPE; one that stays inside is fine", async (t) => {
  const { catalog, skillRoot, dir } = await skillWorkspace(t);
  await fsp.symlink(nodePath.join(dir, "outside.md"), nodePath.join(skillRoot, "out.md"));
  await rejectsCode(activateSkill(catalog, "review", { resources: ["out.md"] }), "SKILL_PATH_ESCAPE");
  await fsp.symlink(nodePath.join(skillRoot, "a.md"), nodePath.join(skillRoot, "alias.md"));
  const active = await activateSkill(catalog, "review", { resources: ["alias.md"] });
  assert.deepEqual(active.resources, [{ request: "alias.md", source: nodePath.join(skillRoot, "a.md"), content: "A\n" }]);
});

test("Probe 12.2 · requests collapse by their string, keep their order, and keep the caller's spelling", async (t) => {
  const { catalog, skillRoot } = await skillWorkspace(t);
  const active = await activateSkill(catalog, "review", { resources: ["b.md", "./a.md", "b.md", "a.md"] });
  assert.deepEqual(
    active.resources.map((file) => [file.request, file.source]),
    [
      ["b.md", nodePath.join(skillRoot, "b.md")],
      ["./a.md", nodePath.join(skillRoot, "a.md")],
      ["a.md", nodePath.join(skillRoot, "a.md")],
    ],
  );
});

test("Probe 12.2 · results share nothing with the catalog or with each other", async (t) => {
  const { catalog } = await skillWorkspace(t);
  const snapshot = structuredClone(catalog);
  const first = await activateSkill(catalog, "review", { resources: ["a.md"] });
  first.name = "x";
  first.root = "x";
  first.source = "x";
  first.resources[0]!.content = "changed";
  assert.deepEqual(catalog, snapshot);
  const second = await activateSkill(catalog, "review", { resources: ["a.md"] });
  assert.equal(second.resources[0]?.content, "A\n");
  assert.equal(second.name, "review");
  assert.ok(!("body" in catalog.skills[0]!));
});

test("Probe 12.2 · the request is resolved against the catalog's skill root", async (t) => {
  const { catalog } = await skillWorkspace(t);
  await rejectsCode(activateSkill(catalog, "review", { resources: ["../review-old/x.md"] }), "SKILL_PATH_ESCAPE");
  const active = await activateSkill(catalog, "review", { resources: ["sub/../a.md"] });
  assert.equal(active.resources[0]?.content, "A\n");
});

// ---------------------------------------------------------------------------
// Probe 12.3 · templates and context
// ---------------------------------------------------------------------------

function template(body: string): TemplateResource {
  return { kind: "template", name: "t", description: "", source: "/t.md", root: "/", body };
}

test("Probe 12.3 · argument values are literal: $&, $1, $$ and {{x}} are not expanded", () => {
  const message = renderTemplate(template("[{{a}}] [{{b}}]"), { a: "$& $1 $$ $' {{b}}", b: "B" });
  assert.equal(textOf(message), "[$& $1 $$ $' {{b}}] [B]");
});

test("Probe 12.3 · every placeholder of the identifier shape is replaced, every time it occurs", () => {
  const message = renderTemplate(template("{{_x}}{{owner2}}{{_x}} {{A}}"), { _x: "1", owner2: "2", A: "a" });
  assert.equal(textOf(message), "121 a");
});

test("Probe 12.3 · braces of any other shape stay as written", () => {
  const message = renderTemplate(template("{{ a }} {{1x}} {x} {{a-b}} {{}} {{{a}}} {{a}"), { a: "A", x: "X" });
  assert.equal(textOf(message), "{{ a }} {{1x}} {x} {{a-b}} {{}} {A} {{a}");
});

test("Probe 12.3 · an inherited property is no argument; an empty string is one", () => {
  throwsCode(() => renderTemplate(template("{{toString}}"), {}), "TEMPLATE_ARGUMENT_MISSING");
  throwsCode(() => renderTemplate(template("{{constructor}}"), {}), "TEMPLATE_ARGUMENT_MISSING");
  assert.equal(textOf(renderTemplate(template("[{{a}}]"), { a: "" })), "[]");
});

test("Probe 12.3 · the missing argument is named in the message", () => {
  assert.throws(() => renderTemplate(template("{{present}} {{absentName}}"), { present: "p" }), /absentName/);
});

test("Probe 12.3 · the message is exactly a user message with one text block and a number timestamp", () => {
  const before = Date.now();
  const message = renderTemplate(template("x"), {});
  assert.deepEqual(Object.keys(message).sort(), ["content", "role", "timestamp"]);
  assert.deepEqual(message.content, [{ type: "text", text: "x" }]);
  assert.equal(message.role, "user");
  assert.ok(typeof message.timestamp === "number" && message.timestamp >= before && message.timestamp <= Date.now());
});

test("Probe 12.3 · renderTemplate leaves the template alone", () => {
  const original = template("{{a}}");
  renderTemplate(original, { a: "A" });
  assert.equal(original.body, "{{a}}");
});

async function contextWorkspace(t: TestContext, agents = "RULES\n") {
  const dir = await root(t, {
    "AGENTS.md": agents,
    "skills/b/SKILL.md": skillMarkdown("beta", "the beta", "BETA BODY"),
    "skills/a/SKILL.md": skillMarkdown("alpha", "the alpha", "ALPHA BODY"),
    "skills/g/SKILL.md": skillMarkdown("gamma", "the gamma", "GAMMA BODY"),
    "skills/a/ref.md": "REF\n",
    "templates/t.md": "---\ndescription: TEMPLATE DESCRIPTION\n---\nTEMPLATE BODY",
  });
  return { dir, catalog: await discoverResources([dir]) };
}

test("Probe 12.3 · the layout: headings and bodies as sections joined by one blank line", async (t) => {
  const { catalog } = await contextWorkspace(t);
  const alpha = await activateSkill(catalog, "alpha", { resources: ["ref.md"] });
  const prompt = formatResourceContext(catalog, [alpha]);
  assert.ok(prompt.startsWith("# Instructions\n\nRULES\n\n# Skills\n\n"), JSON.stringify(prompt.slice(0, 60)));
  for (const line of ["- alpha: the alpha", "- beta: the beta", "- gamma: the gamma"]) assert.ok(prompt.includes(line), line);
  assert.ok(prompt.endsWith("# Active skill: alpha\n\nALPHA BODY\n\n## ref.md\n\nREF\n"), JSON.stringify(prompt.slice(-60)));
  assert.ok(prompt.indexOf("- alpha: the alpha") < prompt.indexOf("- beta: the beta"), "skills in catalog order");
});

test("Probe 12.3 · with nothing activated, every skill is still listed and no body appears", async (t) => {
  const { catalog } = await contextWorkspace(t);
  const prompt = formatResourceContext(catalog, []);
  for (const line of ["- alpha: the alpha", "- beta: the beta", "- gamma: the gamma"]) assert.ok(prompt.includes(line), line);
  for (const body of ["ALPHA BODY", "BETA BODY", "GAMMA BODY", "# Active skill"]) assert.ok(!prompt.includes(body), body);
});

test("Probe 12.3 · templates never enter the system prompt", async (t) => {
  const { catalog } = await contextWorkspace(t);
  const prompt = formatResourceContext(catalog, []);
  assert.ok(!prompt.includes("TEMPLATE BODY") && !prompt.includes("TEMPLATE DESCRIPTION"));
});

test("Probe 12.3 · an empty AGENTS.md adds no section, not even its heading", async (t) => {
  const { catalog } = await contextWorkspace(t, "  \n");
  const prompt = formatResourceContext(catalog, []);
  assert.ok(!prompt.includes("# Instructions"));
  assert.ok(prompt.startsWith("# Skills\n\n"));
});

test("Probe 12.3 · activated skills come sorted by name, and the caller's array stays as it was", async (t) => {
  const { catalog } = await contextWorkspace(t);
  const activated = [await activateSkill(catalog, "gamma"), await activateSkill(catalog, "alpha"), await activateSkill(catalog, "beta")];
  const prompt = formatResourceContext(catalog, activated);
  const at = (name: string) => prompt.indexOf(`# Active skill: ${name}\n\n${name.toUpperCase()} BODY`);
  assert.ok(at("alpha") >= 0 && at("alpha") < at("beta") && at("beta") < at("gamma"));
  assert.deepEqual(activated.map((skill) => skill.name), ["gamma", "alpha", "beta"]);
});

test("Probe 12.3 · ACTIVATION_DUPLICATE for two activations of one name, even as different objects", async (t) => {
  const { catalog } = await contextWorkspace(t);
  throwsCode(() => formatResourceContext(catalog, [
    // Different objects, same skill: still one name twice.
    ...[0, 1].map(() => ({ ...catalog.skills[0]!, body: "x", resources: [] }) as ActivatedSkill),
  ]), "ACTIVATION_DUPLICATE");
});

test("Probe 12.3 · ACTIVATION_FOREIGN when the name is unknown, or source or root differ", async (t) => {
  const { catalog } = await contextWorkspace(t);
  const own = await activateSkill(catalog, "alpha");
  throwsCode(() => formatResourceContext(catalog, [{ ...own, name: "unknown" }]), "ACTIVATION_FOREIGN");
  throwsCode(() => formatResourceContext(catalog, [{ ...own, source: `${own.source}.other` }]), "ACTIVATION_FOREIGN");
  throwsCode(() => formatResourceContext(catalog, [{ ...own, root: `${own.root}-other` }]), "ACTIVATION_FOREIGN");
  // The same skill activated from an equal catalog of the same tree belongs to it.
  const again = await discoverResources([nodePath.dirname(nodePath.dirname(own.root))]);
  assert.ok(formatResourceContext(again, [own]).includes("ALPHA BODY"));
});

test("Probe 12.3 · a file's heading is its request, and its text is untouched", async (t) => {
  const { catalog } = await contextWorkspace(t);
  const alpha = await activateSkill(catalog, "alpha", { resources: ["./ref.md"] });
  assert.ok(formatResourceContext(catalog, [alpha]).includes("## ./ref.md\n\nREF\n"));
});

// ---------------------------------------------------------------------------
// Probe 12.4 · trust and staging
// ---------------------------------------------------------------------------

const noteTool = (name = "probe_tool"): Tool => ({
  name,
  description: "probe",
  schema: objectSchema({ text: stringValue() }),
  execute: async () => ({ content: [text("ok")] }),
});

function load(host: ExtensionHost, id: string, factory: (context: ExtensionContext) => unknown, trust: () => unknown = () => true) {
  return loadExtension({ id, path: `extensions/${id}.js` }, {
    host,
    isTrusted: trust as () => boolean,
    importModule: async () => ({ default: factory }),
  });
}

test("Probe 12.4 · an id already active is EXTENSION_DUPLICATE before trust and import", async () => {
  const host = createExtensionHost(new ToolRegistry(), { hookTimeoutMs: 1000 });
  await load(host, "x", () => {});
  const order: string[] = [];
  await rejectsCode(
    loadExtension({ id: "x", path: "x.js" }, {
      host,
      isTrusted: () => (order.push("trust"), true),
      importModule: async () => (order.push("import"), { default: () => {} }),
    }),
    "EXTENSION_DUPLICATE",
  );
  assert.deepEqual(order, []);
});

test("Probe 12.4 · only exactly true trusts; truthy values do not", async () => {
  for (const verdict of ["yes", 1, {}, "true"]) {
    let imported = 0;
    const result = await loadExtension({ id: "x", path: "x.js" }, {
      host: createExtensionHost(new ToolRegistry(), { hookTimeoutMs: 1000 }),
      isTrusted: (() => verdict) as unknown as () => boolean,
      importModule: async () => {
        imported += 1;
        return { default: () => {} };
      },
    });
    assert.deepEqual(result, { id: "x", status: "skipped_untrusted" }, String(verdict));
    assert.equal(imported, 0);
  }
  const asyncTrue = await load(createExtensionHost(new ToolRegistry(), { hookTimeoutMs: 1000 }), "y", () => {}, async () => true);
  assert.deepEqual(asyncTrue, { id: "y", status: "active" });
});

test("Probe 12.4 · a throwing policy rejects with its own error and imports nothing", async () => {
  const problem = new Error("policy down");
  let imported = 0;
  await assert.rejects(
    loadExtension({ id: "x", path: "x.js" }, {
      host: createExtensionHost(new ToolRegistry(), { hookTimeoutMs: 1000 }),
      isTrusted: () => {
        throw problem;
      },
      importModule: async () => {
        imported += 1;
        return { default: () => {} };
      },
    }),
    (error) => error === problem,
  );
  assert.equal(imported, 0);
});

test("Probe 12.4 · trust and import see one frozen copy of the source", async () => {
  const source = { id: "x", path: "x.js", extra: "not copied" };
  const seen: unknown[] = [];
  await loadExtension(source, {
    host: createExtensionHost(new ToolRegistry(), { hookTimeoutMs: 1000 }),
    isTrusted: (copy) => (seen.push(copy), true),
    importModule: async (copy) => (seen.push(copy), { default: () => {} }),
  });
  assert.equal(seen.length, 2);
  assert.equal(seen[0], seen[1], "isTrusted and importModule get the same frozen copy");
  for (const copy of seen) {
    assert.notEqual(copy, source);
    assert.ok(Object.isFrozen(copy));
    assert.deepEqual(copy, { id: "x", path: "x.js" });
  }
  assert.ok(!Object.isFrozen(source));
});

test("Probe 12.4 · a default export that is not a function is EXTENSION_INVALID, registering nothing", async () => {
  for (const module of [{}, { default: 5 }, { default: { registerTool() {} } }, null, { factory: () => {} }]) {
    const registry = new ToolRegistry();
    await rejectsCode(
      loadExtension({ id: "x", path: "x.js" }, { host: createExtensionHost(registry, { hookTimeoutMs: 1000 }), isTrusted: () => true, importModule: async () => module }),
      "EXTENSION_INVALID",
    );
    assert.deepEqual(registry.list(), []);
  }
});

test("Probe 12.4 · without importModule the module is imported from its path", async (t) => {
  const dir = await tempDir(t);
  const file = nodePath.join(dir, "ext.mjs");
  await fsp.writeFile(file, "export default (context) => { context.registerTool({ name: 'from_file', description: 'd', schema: { parse: (v) => v }, execute: async () => ({ content: [] }) }); };\n");
  const registry = new ToolRegistry();
  const result = await loadExtension({ id: "file", path: file }, { host: createExtensionHost(registry, { hookTimeoutMs: 1000 }), isTrusted: () => true });
  assert.deepEqual(result, { id: "file", status: "active" });
  assert.ok(registry.get("from_file"));
});

test("Probe 12.4 · a tool staged twice by one factory is TOOL_CONFLICT and nothing is committed", async () => {
  const registry = new ToolRegistry();
  const host = createExtensionHost(registry, { hookTimeoutMs: 1000 });
  let hookRuns = 0;
  await rejectsCode(
    load(host, "x", (context) => {
      context.registerTool(noteTool("a"));
      context.registerTool(noteTool("dup"));
      context.registerTool(noteTool("dup"));
      context.on("beforeToolCall", () => {
        hookRuns += 1;
      });
    }),
    "TOOL_CONFLICT",
  );
  assert.deepEqual(registry.list(), []);
  await host.wrapExecutor(async (call) => ({ role: "toolResult", toolCallId: call.id, toolName: call.name, content: [], isError: false, timestamp: 1 }))({ type: "toolCall", id: "c", name: "a", arguments: {} });
  assert.equal(hookRuns, 0);
});

test("Probe 12.4 · a failed factory: EXTENSION_FACTORY_FAILED with the original message and cause (sync and async)", async () => {
  const problem = new Error("factory blew up");
  for (const factory of [
    () => {
      throw problem;
    },
    async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      throw problem;
    },
  ]) {
    const host = createExtensionHost(new ToolRegistry(), { hookTimeoutMs: 1000 });
    await assert.rejects(load(host, "x", factory), (error: Error & { code?: string }) => {
      assert.equal(error.code, "EXTENSION_FACTORY_FAILED");
      assert.ok(error.message.includes("factory blew up"), error.message);
      assert.equal(error.cause, problem);
      return true;
    });
  }
});

test("Probe 12.4 · a failed load does not mark the id active: it can be loaded again", async () => {
  const registry = new ToolRegistry();
  const host = createExtensionHost(registry, { hookTimeoutMs: 1000 });
  await assert.rejects(load(host, "x", () => {
    throw new Error("first try fails");
  }));
  assert.deepEqual(await load(host, "x", (context) => context.registerTool(noteTool())), { id: "x", status: "active" });
  assert.equal(registry.list().length, 1, "the second load committed its tool");
  const other = createExtensionHost(new ToolRegistry([noteTool()]), { hookTimeoutMs: 1000 });
  await rejectsCode(load(other, "y", (context) => context.registerTool(noteTool())), "TOOL_CONFLICT");
  assert.deepEqual(await load(other, "y", () => {}), { id: "y", status: "active" });
});

test("Probe 12.4 · the context closes when the factory returns: late registration throws and never arrives", async () => {
  const registry = new ToolRegistry();
  const host = createExtensionHost(registry, { hookTimeoutMs: 1000 });
  let kept: ExtensionContext | undefined;
  await load(host, "x", (context) => {
    kept = context;
  });
  throwsCode(() => kept!.registerTool(noteTool()), "EXTENSION_CONTEXT_CLOSED");
  throwsCode(() => kept!.on("beforeToolCall", () => {}), "EXTENSION_CONTEXT_CLOSED");
  assert.deepEqual(registry.list(), []);
});

test("Probe 12.4 · a synchronous factory's context is closed before a microtask it queued runs", async () => {
  const registry = new ToolRegistry();
  const host = createExtensionHost(registry, { hookTimeoutMs: 1000 });
  let lateError: unknown = "not run";
  await load(host, "x", (context) => {
    queueMicrotask(() => {
      try {
        context.registerTool(noteTool("late"));
        lateError = undefined;
      } catch (error) {
        lateError = error;
      }
    });
  });
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal((lateError as { code?: string } | undefined)?.code, "EXTENSION_CONTEXT_CLOSED");
  assert.equal(registry.get("late"), undefined);
});

test("Probe 12.4 · an async factory may register until its promise settles", async () => {
  const registry = new ToolRegistry();
  const host = createExtensionHost(registry, { hookTimeoutMs: 1000 });
  const result = await load(host, "x", async (context) => {
    await new Promise((resolve) => setTimeout(resolve, 10));
    context.registerTool(noteTool("async_tool"));
    context.on("beforeToolCall", () => ({ decision: "deny", reason: "async hook" }));
  });
  assert.deepEqual(result, { id: "x", status: "active" });
  assert.ok(registry.get("async_tool"));
  const blocked = await host.wrapExecutor(async () => assert.fail("core must not run"))({ type: "toolCall", id: "c", name: "n", arguments: {} });
  assert.equal((blocked.details as { reason: string }).reason, "async hook");
});

test("Probe 12.4 · commit checks the id again: of two concurrent loads of one id, one is EXTENSION_DUPLICATE", async () => {
  const registry = new ToolRegistry();
  const host = createExtensionHost(registry, { hookTimeoutMs: 1000 });
  let hookRuns = 0;
  const factory = async (context: ExtensionContext) => {
    await new Promise((resolve) => setTimeout(resolve, 10));
    context.on("beforeToolCall", () => {
      hookRuns += 1;
    });
  };
  const outcomes = await Promise.allSettled([load(host, "twin", factory), load(host, "twin", factory)]);
  assert.deepEqual(outcomes.map((outcome) => outcome.status).sort(), ["fulfilled", "rejected"]);
  const rejected = outcomes.find((outcome) => outcome.status === "rejected") as PromiseRejectedResult;
  assert.equal((rejected.reason as { code?: string }).code, "EXTENSION_DUPLICATE");
  await host.wrapExecutor(async (c) => ({ role: "toolResult", toolCallId: c.id, toolName: c.name, content: [], isError: false, timestamp: 1 }))({ type: "toolCall", id: "c", name: "n", arguments: {} });
  assert.equal(hookRuns, 1, "only one of the two loads committed its hook");
});

test("Probe 12.4 · hookTimeoutMs must be positive and at most 2^31 - 1", () => {
  for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, "100" as unknown as number, undefined as unknown as number]) {
    throwsCode(() => createExtensionHost(new ToolRegistry(), { hookTimeoutMs: bad }), "INVALID_ARGUMENT");
  }
  createExtensionHost(new ToolRegistry(), { hookTimeoutMs: 2 ** 31 - 1 });
  createExtensionHost(new ToolRegistry(), { hookTimeoutMs: 1 });
});

test("Probe 12.4 · the host shows wrapExecutor only, and a host made elsewhere is INVALID_ARGUMENT", async () => {
  const host = createExtensionHost(new ToolRegistry(), { hookTimeoutMs: 1000 });
  assert.deepEqual(Reflect.ownKeys(host), ["wrapExecutor"]);
  assert.ok(Object.isFrozen(host));
  assert.equal((host as unknown as { stage?: unknown }).stage, undefined);
  await rejectsCode(load({ wrapExecutor: host.wrapExecutor }, "x", () => {}), "INVALID_ARGUMENT");
});

test("Probe 12.4 · the context handed to a factory has registerTool and on, nothing else", async () => {
  let keys: PropertyKey[] = [];
  await load(createExtensionHost(new ToolRegistry(), { hookTimeoutMs: 1000 }), "x", (context) => {
    keys = Reflect.ownKeys(context);
  });
  assert.deepEqual([...keys].sort(), ["on", "registerTool"]);
});

// ---------------------------------------------------------------------------
// Probe 12.5 · hooks
// ---------------------------------------------------------------------------

function call(id = "c1"): ToolCall {
  return { type: "toolCall", id, name: "probe_tool", arguments: { text: "t", nested: { deep: [1, { deeper: true }] } } };
}

function countingCore() {
  const received: ToolCall[] = [];
  const results: ToolResultMessage[] = [];
  const core: ToolExecutor = async (c) => {
    received.push(c);
    const result: ToolResultMessage = {
      role: "toolResult", toolCallId: c.id, toolName: c.name, content: [text("done")],
      details: { stored: { count: 1, list: [{ x: 1 }] } }, isError: false, timestamp: 7,
    };
    results.push(result);
    return result;
  };
  return { core, received, results };
}

async function hostWith(factories: [string, (context: ExtensionContext) => unknown][], ms = 1000) {
  const diagnostics: ExtensionDiagnostic[] = [];
  const host = createExtensionHost(new ToolRegistry(), { hookTimeoutMs: ms, onDiagnostic: (d) => diagnostics.push(d) });
  for (const [id, factory] of factories) await load(host, id, factory);
  return { host, diagnostics };
}

test("Probe 12.5 · before hooks run in load order, then in on() order; the first deny stops the rest", async () => {
  const order: string[] = [];
  const { host, diagnostics } = await hostWith([
    ["one", (c) => {
      c.on("beforeToolCall", () => void order.push("one.a"));
      c.on("beforeToolCall", () => (order.push("one.b"), { decision: "allow" as const }));
    }],
    ["two", (c) => c.on("beforeToolCall", () => (order.push("two"), { decision: "deny" as const, reason: "no" }))],
    ["three", (c) => c.on("beforeToolCall", () => void order.push("three"))],
  ]);
  const { core, results } = countingCore();
  const result = await host.wrapExecutor(core)(call());
  assert.deepEqual(order, ["one.a", "one.b", "two"]);
  assert.equal(results.length, 0);
  assert.deepEqual(result.details, { blockedByExtension: "two", kind: "deny", reason: "no" });
  assert.deepEqual(diagnostics, []);
});

for (const [label, answer] of [
  ["a string", "allow"],
  ["null", null],
  ["a number", 5],
  ["an unknown decision", { decision: "maybe" }],
  ["a deny without reason", { decision: "deny" }],
  ["a deny with a number as reason", { decision: "deny", reason: 42 }],
  ["true", true],
] as [string, unknown][]) {
  test(`Probe 12.5 · a malformed answer (${label}) blocks as an error with one diagnostic`, async () => {
    const { host, diagnostics } = await hostWith([["odd", (c) => c.on("beforeToolCall", (() => answer) as () => undefined)]]);
    const { core, results } = countingCore();
    const result = await host.wrapExecutor(core)(call());
    assert.equal(results.length, 0, "core must not run");
    assert.equal(result.isError, true);
    assert.equal(result.toolCallId, "c1");
    assert.equal((result.details as { kind: string }).kind, "error");
    assert.equal((result.details as { blockedByExtension: string }).blockedByExtension, "odd");
    assert.equal(typeof (result.details as { reason: unknown }).reason, "string");
    assert.deepEqual(diagnostics.map((d) => [d.extensionId, d.hook, d.kind, typeof d.message]), [["odd", "beforeToolCall", "error", "string"]]);
  });
}

test("Probe 12.5 · an async allow, and an async throw, count like their synchronous forms", async () => {
  const { host, diagnostics } = await hostWith([
    ["late-allow", (c) => c.on("beforeToolCall", async () => ({ decision: "allow" }))],
    ["late-throw", (c) => c.on("beforeToolCall", async () => {
      throw new Error("async failure");
    })],
  ]);
  const { core, results } = countingCore();
  const result = await host.wrapExecutor(core)(call());
  assert.equal(results.length, 0);
  assert.deepEqual({ ...(result.details as object), reason: "…" }, { blockedByExtension: "late-throw", kind: "error", reason: "…" });
  assert.equal(diagnostics.length, 1);
});

test("Probe 12.5 · the blocked result is a complete paired tool result", async () => {
  const { host } = await hostWith([["gate", (c) => c.on("beforeToolCall", () => ({ decision: "deny", reason: "closed" }))]]);
  const before = Date.now();
  const result = await host.wrapExecutor(countingCore().core)(call("pair-9"));
  assert.equal(result.role, "toolResult");
  assert.equal(result.toolCallId, "pair-9");
  assert.equal(result.toolName, "probe_tool");
  assert.ok(result.content.length > 0 && result.content.every((block) => block.type === "text" && block.text.length > 0));
  assert.ok(result.timestamp >= before && result.timestamp <= Date.now());
});

test("Probe 12.5 · a throwing core rejects the call with its error, and no after hook runs", async () => {
  let afterRuns = 0;
  const { host } = await hostWith([["obs", (c) => c.on("afterToolResult", () => void (afterRuns += 1))]]);
  const problem = new Error("core failed");
  await assert.rejects(host.wrapExecutor(async () => {
    throw problem;
  })(call()), (error) => error === problem);
  assert.equal(afterRuns, 0);
});

test("Probe 12.5 · an after hook's return value changes nothing", async () => {
  const { host } = await hostWith([["obs", (c) => c.on("afterToolResult", (() => ({ content: [], isError: true })) as () => void)]]);
  const { core, results } = countingCore();
  const result = await host.wrapExecutor(core)(call());
  assert.deepEqual(result, results[0]);
});

test("Probe 12.5 · without any hook, core still gets a copy of the call and the caller a copy of the result", async () => {
  const host = createExtensionHost(new ToolRegistry(), { hookTimeoutMs: 1000 });
  const { core, received, results } = countingCore();
  const original = call();
  const result = await host.wrapExecutor(core)(original);
  assert.notEqual(received[0], original);
  assert.deepEqual(received[0], original);
  assert.notEqual(result, results[0]);
  assert.deepEqual(result, results[0]);
});

test("Probe 12.5 · core gets its own unfrozen copy of the call", async () => {
  const { host } = await hostWith([["allow", (c) => c.on("beforeToolCall", () => undefined)]]);
  const { core, received } = countingCore();
  const original = call();
  await host.wrapExecutor(core)(original);
  assert.notEqual(received[0], original);
  assert.deepEqual(received[0], original);
  assert.ok(!Object.isFrozen(received[0]) && !Object.isFrozen(received[0]!.arguments));
  (received[0]!.arguments as { text: string }).text = "core changed it";
  assert.equal((original.arguments as { text: string }).text, "t");
});

test("Probe 12.5 · core runs what the hooks approved, not what the caller changed meanwhile", async () => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const { host } = await hostWith([["slow", (c) => c.on("beforeToolCall", async () => {
    await gate;
    return undefined;
  })]]);
  const { core, received } = countingCore();
  const original = call();
  const pending = host.wrapExecutor(core)(original);
  (original.arguments as { text: string }).text = "changed after the hooks saw it";
  release();
  await pending;
  assert.equal((received[0]!.arguments as { text: string }).text, "t");
});

test("Probe 12.5 · hooks get deep-frozen copies, all the way down", async () => {
  let seenCall: Readonly<ToolCall> | undefined;
  let seenResult: Readonly<ToolResultMessage> | undefined;
  const { host } = await hostWith([["watch", (c) => {
    c.on("beforeToolCall", (x) => {
      seenCall = x;
    });
    c.on("afterToolResult", (r) => {
      seenResult = r;
    });
  }]]);
  const { core, results } = countingCore();
  const original = call();
  await host.wrapExecutor(core)(original);
  const args = seenCall!.arguments as { nested: { deep: [number, { deeper: boolean }] } };
  assert.ok(Object.isFrozen(args.nested) && Object.isFrozen(args.nested.deep) && Object.isFrozen(args.nested.deep[1]));
  assert.notEqual(seenCall, original);
  const details = seenResult!.details as { stored: { list: { x: number }[] } };
  assert.ok(Object.isFrozen(seenResult!.content) && Object.isFrozen(seenResult!.content[0]));
  assert.ok(Object.isFrozen(details.stored) && Object.isFrozen(details.stored.list) && Object.isFrozen(details.stored.list[0]));
  assert.notEqual(seenResult, results[0]);
  assert.ok(!Object.isFrozen(original) && !Object.isFrozen(results[0]));
});

test("Probe 12.5 · the caller's result is its own: not frozen, and changing it reaches neither core's object nor the hooks' copy", async () => {
  let seenResult: Readonly<ToolResultMessage> | undefined;
  const { host } = await hostWith([["watch", (c) => c.on("afterToolResult", (r) => {
    seenResult = r;
  })]]);
  const { core, results } = countingCore();
  const result = await host.wrapExecutor(core)(call());
  assert.ok(!Object.isFrozen(result) && !Object.isFrozen(result.details));
  (result.details as { stored: { count: number } }).stored.count = 99;
  assert.equal((seenResult!.details as { stored: { count: number } }).stored.count, 1);
  assert.equal((results[0]!.details as { stored: { count: number } }).stored.count, 1);
});

test("Probe 12.5 · timers are cleared once a hook has answered", async () => {
  const { host } = await hostWith([["quick", (c) => {
    c.on("beforeToolCall", () => undefined);
    c.on("afterToolResult", () => undefined);
  }]], 60_000);
  const timers = () => process.getActiveResourcesInfo().filter((name) => name === "Timeout").length;
  const before = timers();
  await host.wrapExecutor(countingCore().core)(call());
  assert.equal(timers(), before, "no hook timer is left running");
});

test("Probe 12.5 · an onDiagnostic that throws does not break the call", async () => {
  const host = createExtensionHost(new ToolRegistry(), {
    hookTimeoutMs: 1000,
    onDiagnostic: () => {
      throw new Error("owner's bug");
    },
  });
  await load(host, "broken", (c) => {
    c.on("beforeToolCall", () => {
      throw new Error("hook failed");
    });
  });
  const result = await host.wrapExecutor(countingCore().core)(call());
  assert.equal((result.details as { kind: string }).kind, "error");
  const observer = createExtensionHost(new ToolRegistry(), {
    hookTimeoutMs: 1000,
    onDiagnostic: () => {
      throw new Error("owner's bug");
    },
  });
  let secondRan = false;
  await load(observer, "a", (c) => c.on("afterToolResult", () => {
    throw new Error("after failed");
  }));
  await load(observer, "b", (c) => c.on("afterToolResult", () => {
    secondRan = true;
  }));
  const { core, results } = countingCore();
  assert.deepEqual(await observer.wrapExecutor(core)(call()), results[0]);
  assert.ok(secondRan);
});

test("Probe 12.5 · concurrent calls do not wait for each other", async () => {
  let arrived = 0;
  let bothHere!: () => void;
  const meeting = new Promise<void>((resolve) => {
    bothHere = resolve;
  });
  const { host, diagnostics } = await hostWith([["meet", (c) => c.on("beforeToolCall", async () => {
    arrived += 1;
    if (arrived === 2) bothHere();
    await meeting;
  })]], 2000);
  const { core, results } = countingCore();
  const wrapped = host.wrapExecutor(core);
  const [a, b] = await Promise.all([wrapped(call("a")), wrapped(call("b"))]);
  assert.equal(a.isError, false);
  assert.equal(b.isError, false);
  assert.equal(results.length, 2);
  assert.deepEqual(diagnostics, []);
});

test("Probe 12.5 · an after timeout is one timeout diagnostic and the caller still gets core's result", async () => {
  const { host, diagnostics } = await hostWith([["slow", (c) => c.on("afterToolResult", () => new Promise<void>(() => {}))]], 20);
  const { core, results } = countingCore();
  const result = await host.wrapExecutor(core)(call());
  assert.deepEqual(result, results[0]);
  assert.deepEqual(diagnostics.map((d) => [d.extensionId, d.hook, d.kind]), [["slow", "afterToolResult", "timeout"]]);
});

test("Probe 12.5 · a before timeout blocks with kind timeout and says so once", async () => {
  const { host, diagnostics } = await hostWith([["slow", (c) => c.on("beforeToolCall", () => new Promise<never>(() => {}))]], 20);
  const result = await host.wrapExecutor(countingCore().core)(call());
  assert.equal((result.details as { kind: string }).kind, "timeout");
  assert.deepEqual(diagnostics.map((d) => [d.hook, d.kind]), [["beforeToolCall", "timeout"]]);
});

test("Probe 12.5 · a diagnostic has exactly its four fields", async () => {
  const { host, diagnostics } = await hostWith([["bad", (c) => c.on("afterToolResult", () => {
    throw new Error("boom");
  })]]);
  await host.wrapExecutor(countingCore().core)(call());
  assert.deepEqual(Object.keys(diagnostics[0]!).sort(), ["extensionId", "hook", "kind", "message"]);
  assert.ok(diagnostics[0]!.message.length > 0);
});
