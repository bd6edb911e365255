/**
 * Chapter 12 hardening: every rule of the resources/extensions contract that the five
 * labs do not pin down, plus adversarial inputs (escaping paths, special files, broken
 * frontmatter, misbehaving extensions and hooks) and two seeded property loops.
 * Not a lab file: learners never see it; the reference must pass all of it.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, realpath, rename, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import test, { type TestContext } from "node:test";
import { pathToFileURL } from "node:url";
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
  type ExtensionSource,
  type LoadExtensionOptions,
  type ResourceDiagnostic,
  type TemplateResource,
} from "../src/resources.js";
import { ToolRegistry, objectSchema, stringValue, type Tool, type ToolExecutor } from "../src/tool.js";
import { text, textOf, type ToolCall, type ToolResultMessage } from "../src/types.js";

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

async function tempDir(t: TestContext): Promise<string> {
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), "pi-course-12h-")));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function put(dir: string, files: Record<string, string>): Promise<void> {
  for (const [relative, content] of Object.entries(files)) {
    const file = path.join(dir, relative);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
  }
}

const skill = (name: string, description: string, body = "BODY") =>
  `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`;

/** The chapter's project root alone: AGENTS.md, skill review with a checklist, a template. */
async function project(t: TestContext): Promise<{ base: string; root: string; skillRoot: string }> {
  const base = await tempDir(t);
  const root = path.join(base, "project");
  await put(root, {
    "AGENTS.md": "PROJECT RULES\n",
    "skills/review/SKILL.md": skill("review", "project review", "Read the diff first."),
    "skills/review/references/checklist.md": "tests\nsecurity\n",
    "templates/review.md": "Review {{target}} for {{owner}}\n",
  });
  return { base, root, skillRoot: path.join(root, "skills", "review") };
}

async function symlinkOrSkip(t: TestContext, target: string, link: string): Promise<boolean> {
  try {
    await symlink(target, link);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") throw error;
    t.skip("symlinks are not permitted here");
    return false;
  }
}

/** Makes a FIFO with the system's `mkfifo`, or skips the test where there is none. */
function fifoOrSkip(t: TestContext, file: string): boolean {
  if (process.platform === "win32") {
    t.skip("no FIFOs on Windows");
    return false;
  }
  try {
    execFileSync("mkfifo", [file], { stdio: "ignore" });
    return true;
  } catch {
    t.skip("mkfifo is not available");
    return false;
  }
}

/** Bytes this process has read so far (Linux `/proc/self/io`), or undefined elsewhere. */
async function bytesRead(): Promise<number | undefined> {
  try {
    const match = /^rchar:\s*(\d+)$/m.exec(await readFile("/proc/self/io", "utf8"));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Deterministic PRNG (mulberry32) for the property loops. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = Math.imul(state ^ (state >>> 15), 1 | state);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

function tool(name: string): Tool {
  return {
    name,
    description: `tool ${name}`,
    schema: objectSchema({ text: stringValue() }),
    async execute() {
      return { content: [text(name)] };
    },
  };
}

const call = (id = "call-1"): ToolCall => ({ type: "toolCall", id, name: "review_note", arguments: { text: "x", nested: { n: 1 } } });

function coreOf() {
  const facts: ToolResultMessage[] = [];
  const core: ToolExecutor = async (received) => {
    const fact: ToolResultMessage = {
      role: "toolResult",
      toolCallId: received.id,
      toolName: received.name,
      content: [text("ok")],
      details: { deep: { n: 1 } },
      isError: false,
      timestamp: 7,
    };
    facts.push(fact);
    return fact;
  };
  return { core, facts };
}

function hostWith(diagnostics: ExtensionDiagnostic[] = [], hookTimeoutMs = 1000, registry = new ToolRegistry()) {
  return createExtensionHost(registry, { hookTimeoutMs, onDiagnostic: (diagnostic) => diagnostics.push(diagnostic) });
}

function load(host: ExtensionHost, id: string, factory: (context: ExtensionContext) => unknown, extra: Partial<LoadExtensionOptions> = {}) {
  return loadExtension({ id, path: `${id}.js` }, {
    host,
    isTrusted: () => true,
    importModule: async () => ({ default: factory }),
    ...extra,
  });
}

// ---------------------------------------------------------------------------
// Discovery: roots
// ---------------------------------------------------------------------------

test("discovery: a missing root or a root that is a file is RESOURCE_ROOT_MISSING", async (t) => {
  const base = await tempDir(t);
  await writeFile(path.join(base, "file"), "x");
  await assert.rejects(discoverResources([path.join(base, "nowhere")]), { code: "RESOURCE_ROOT_MISSING" });
  await assert.rejects(discoverResources([path.join(base, "file")]), { code: "RESOURCE_ROOT_MISSING" });
  await assert.rejects(discoverResources([path.join(base, "file", "below")]), { code: "RESOURCE_ROOT_MISSING" });
});

test("discovery: no roots, or a root without AGENTS.md, skills/ and templates/, is an empty catalog", async (t) => {
  const base = await tempDir(t);
  const empty = { resources: [], instructions: [], skills: [], templates: [] };
  assert.deepEqual(await discoverResources([]), empty);
  assert.deepEqual(await discoverResources([base]), empty);
});

test("discovery: roots are canonicalised, so a root reached through a symlink reports real paths", async (t) => {
  const { base, root } = await project(t);
  const alias = path.join(base, "alias");
  if (!(await symlinkOrSkip(t, root, alias))) return;
  const catalog = await discoverResources([alias]);
  assert.equal(catalog.instructions[0]?.root, root);
  assert.equal(catalog.skills[0]?.source, path.join(root, "skills", "review", "SKILL.md"));
  // The same root named twice (directly and through the link) is not a duplicate.
  assert.deepEqual(await discoverResources([alias, root]), catalog);
});

test("discovery: the same kind:name twice inside one root is RESOURCE_DUPLICATE", async (t) => {
  const base = await tempDir(t);
  await put(path.join(base, "skills"), {
    "skills/one/SKILL.md": skill("review", "first"),
    "skills/two/SKILL.md": skill("review", "second"),
  });
  await assert.rejects(discoverResources([path.join(base, "skills")]), { code: "RESOURCE_DUPLICATE" });

  await put(path.join(base, "templates"), {
    "templates/review.md": "plain",
    "templates/other.md": "---\nname: review\n---\nnamed review in frontmatter",
  });
  await assert.rejects(discoverResources([path.join(base, "templates")]), { code: "RESOURCE_DUPLICATE" });

  // Across roots the same identity is not an error: the first root wins.
  await put(path.join(base, "ok-a"), { "skills/x/SKILL.md": skill("review", "a") });
  await put(path.join(base, "ok-b"), { "skills/y/SKILL.md": skill("review", "b") });
  const catalog = await discoverResources([path.join(base, "ok-a"), path.join(base, "ok-b")]);
  assert.deepEqual(catalog.skills.map((s) => s.description), ["a"]);
});

test("discovery: skill and template of the same name coexist (identity is kind + name)", async (t) => {
  const { root } = await project(t);
  const catalog = await discoverResources([root]);
  assert.deepEqual(catalog.resources.map((r) => `${r.kind}:${r.name}`), ["instructions:AGENTS", "skill:review", "template:review"]);
});

// ---------------------------------------------------------------------------
// Discovery: I/O errors are never swallowed
// ---------------------------------------------------------------------------

test("discovery: other I/O errors are RESOURCE_UNREADABLE naming the file, never an empty catalog", async (t) => {
  const cases: { label: string; files: Record<string, string>; dirs?: string[]; code: string }[] = [
    { label: "skills is a file", files: { skills: "not a directory" }, code: "ENOTDIR" },
    { label: "templates is a file", files: { templates: "not a directory" }, code: "ENOTDIR" },
    { label: "AGENTS.md is a directory", files: {}, dirs: ["AGENTS.md"], code: "EISDIR" },
    { label: "SKILL.md is a directory", files: {}, dirs: ["skills/review/SKILL.md"], code: "EISDIR" },
  ];
  const base = await tempDir(t);
  for (const [index, item] of cases.entries()) {
    const root = path.join(base, String(index));
    await mkdir(root);
    await put(root, item.files);
    for (const dir of item.dirs ?? []) await mkdir(path.join(root, dir), { recursive: true });
    await assert.rejects(discoverResources([root]), (error: Error & { code?: string; cause?: { code?: string } }) => {
      assert.equal(error.code, "RESOURCE_UNREADABLE", item.label);
      assert.equal(error.cause?.code, item.code, item.label);
      assert.ok(error.message.includes(root), `${item.label}: the message names the file`);
      return true;
    });
  }
});

test("discovery: an AGENTS.md symlink loop is RESOURCE_UNREADABLE with ELOOP as its cause", async (t) => {
  const base = await tempDir(t);
  if (!(await symlinkOrSkip(t, path.join(base, "AGENTS.md"), path.join(base, "AGENTS.md")))) return;
  await assert.rejects(discoverResources([base]), (error: Error & { code?: string; cause?: { code?: string } }) => {
    assert.equal(error.code, "RESOURCE_UNREADABLE");
    assert.equal(error.cause?.code, "ELOOP");
    assert.ok(error.message.includes(path.join(base, "AGENTS.md")));
    return true;
  });
});

test("activation: a lexically escaping request is refused before any lookup, even if nothing is there", async (t) => {
  const { root } = await project(t);
  const catalog = await discoverResources([root]);
  for (const request of ["../../../nothing-here.md", "references/../../ghost/x.md"]) {
    await assert.rejects(activateSkill(catalog, "review", { resources: [request] }), { code: "SKILL_PATH_ESCAPE" }, request);
  }
});

test("discovery: an unreadable AGENTS.md is RESOURCE_UNREADABLE with EACCES as its cause", async (t) => {
  if (process.platform === "win32" || process.getuid?.() === 0) return t.skip("permissions are not enforced for root or on Windows");
  const base = await tempDir(t);
  await put(base, { "AGENTS.md": "secret" });
  execFileSync("chmod", ["000", path.join(base, "AGENTS.md")]);
  await assert.rejects(discoverResources([base]), (error: Error & { code?: string; cause?: { code?: string } }) => {
    assert.equal(error.code, "RESOURCE_UNREADABLE");
    assert.equal(error.cause?.code, "EACCES");
    return true;
  });
});

// ---------------------------------------------------------------------------
// Discovery: layout rules
// ---------------------------------------------------------------------------

test("discovery: dotfiles, loose files, directories without SKILL.md and non-.md templates are ignored", async (t) => {
  const base = await tempDir(t);
  await put(base, {
    "skills/.hidden/SKILL.md": skill("hidden", "never listed"),
    "skills/loose.md": skill("loose", "a file directly in skills/"),
    "skills/empty/notes.md": "no SKILL.md here",
    "skills/deep/nested/SKILL.md": skill("nested", "two levels down"),
    "skills/real/SKILL.md": skill("real", "listed"),
    "templates/.draft.md": "hidden template",
    "templates/notes.txt": "not markdown",
    "templates/sub/inner.md": "not recursive",
    "templates/kept.md": "Kept",
  });
  await mkdir(path.join(base, "templates", "folder.md"));
  const catalog = await discoverResources([base]);
  assert.deepEqual(catalog.resources.map((r) => `${r.kind}:${r.name}`), ["skill:real", "template:kept"]);
});

test("discovery: templates take their name from frontmatter, else from the file name", async (t) => {
  const base = await tempDir(t);
  await put(base, {
    "templates/plain.md": "Plain {{x}}\n",
    "templates/file-name.md": "---\nname: from-frontmatter\ndescription: described\n---\n\nBody\n",
    "templates/only-description.md": "---\ndescription: just a description\n---\nBody two",
    "templates/empty-block.md": "---\n---\nEmpty block body",
  });
  const catalog = await discoverResources([base]);
  assert.deepEqual(
    catalog.templates.map(({ name, description, body }) => ({ name, description, body })),
    [
      { name: "empty-block", description: "", body: "Empty block body" },
      { name: "from-frontmatter", description: "described", body: "Body" },
      { name: "only-description", description: "just a description", body: "Body two" },
      { name: "plain", description: "", body: "Plain {{x}}" },
    ],
  );
});

test("discovery: broken template frontmatter or a present-but-invalid name/description is RESOURCE_INVALID", async (t) => {
  const broken = [
    "---\nname: unterminated\n",
    "---\n- a\n- list\n---\nbody",
    "---\nname: [unclosed\n---\nbody",
    "---\nname: ''\n---\nbody",
    "---\nname: 12\n---\nbody",
    "---\ndescription: ''\n---\nbody",
    "---\ndescription: [1, 2]\n---\nbody",
  ];
  const base = await tempDir(t);
  for (const [index, content] of broken.entries()) {
    const root = path.join(base, String(index));
    await put(root, { "templates/t.md": content });
    await assert.rejects(discoverResources([root]), { code: "RESOURCE_INVALID" }, JSON.stringify(content));
  }
});

test("discovery: template symlinks are followed; links to directories or nowhere are ignored", async (t) => {
  const base = await tempDir(t);
  await put(base, { "elsewhere/real.md": "Linked {{x}}", "templates/.keep": "" });
  if (!(await symlinkOrSkip(t, path.join(base, "elsewhere", "real.md"), path.join(base, "templates", "linked.md")))) return;
  await symlink(path.join(base, "elsewhere"), path.join(base, "templates", "dir.md"));
  await symlink(path.join(base, "missing.md"), path.join(base, "templates", "dangling.md"));
  const catalog = await discoverResources([base]);
  assert.deepEqual(
    catalog.templates.map(({ name, source, body }) => ({ name, source, body })),
    [{ name: "linked", source: path.join(base, "elsewhere", "real.md"), body: "Linked {{x}}" }],
  );
});

test("discovery: a symlinked skill folder reports canonical paths; a SKILL.md resolving outside its folder is RESOURCE_INVALID", async (t) => {
  const base = await tempDir(t);
  await put(base, {
    "shared/linked/SKILL.md": skill("linked", "through a folder link", "LINKED BODY"),
    "shared/pointed.md": skill("pointed", "SKILL.md links outside", "POINTED BODY"),
    "root/skills/plain/.keep": "",
    "root/skills/loose.md": "a file, not a folder",
  });
  const skills = path.join(base, "root", "skills");
  if (!(await symlinkOrSkip(t, path.join(base, "shared", "linked"), path.join(skills, "via-link")))) return;
  await symlink(path.join(base, "shared", "pointed.md"), path.join(skills, "plain", "SKILL.md"));
  await symlink(path.join(skills, "loose.md"), path.join(skills, "file-link"));
  await symlink(path.join(base, "nowhere"), path.join(skills, "dangling"));

  await assert.rejects(discoverResources([path.join(base, "root")]), (error: Error & { code?: string }) => {
    assert.equal(error.code, "RESOURCE_INVALID");
    assert.match(error.message, /resolves outside/);
    return true;
  });
  const diagnostics: ResourceDiagnostic[] = [];
  const catalog = await discoverResources([path.join(base, "root")], { onDiagnostic: (d) => diagnostics.push(d) });
  assert.deepEqual(catalog.skills, [
    {
      kind: "skill",
      name: "linked",
      description: "through a folder link",
      source: path.join(base, "shared", "linked", "SKILL.md"),
      root: path.join(base, "shared", "linked"),
    },
  ]);
  assert.deepEqual(
    diagnostics.map((d) => [d.severity, d.code, d.source]),
    [
      // folder order: plain (its SKILL.md leads outside), then via-link (named "linked")
      ["error", "RESOURCE_INVALID", path.join(base, "shared", "pointed.md")],
      ["warning", "SKILL_NAME_MISMATCH", path.join(base, "shared", "linked", "SKILL.md")],
    ],
  );
  assert.equal((await activateSkill(catalog, "linked")).body, "LINKED BODY");
});

test("discovery: names sort by code unit, not locale, whatever the directory names", async (t) => {
  const base = await tempDir(t);
  await put(base, {
    "skills/1/SKILL.md": skill("b", "d"),
    "skills/2/SKILL.md": skill("B", "d"),
    "skills/3/SKILL.md": skill("a", "d"),
    "skills/4/SKILL.md": skill("_", "d"),
    "skills/5/SKILL.md": skill("Z", "d"),
    "skills/6/SKILL.md": skill("é", "d"),
  });
  const catalog = await discoverResources([base]);
  assert.deepEqual(catalog.skills.map((s) => s.name), ["B", "Z", "_", "a", "b", "é"]);
});

test("discovery: many skills read at once still give every skill, and a fixed error", async (t) => {
  const base = await tempDir(t);
  const files: Record<string, string> = {};
  for (let i = 0; i < 60; i++) files[`skills/s${String(i).padStart(2, "0")}/SKILL.md`] = skill(`n${59 - i}`, `d${i}`);
  await put(base, files);
  const catalog = await discoverResources([base]);
  assert.equal(catalog.skills.length, 60);
  assert.deepEqual(
    catalog.skills.map((s) => s.name),
    Array.from({ length: 60 }, (_, i) => `n${59 - i}`).sort(),
  );

  // Two broken skills with different failures: the first in folder order decides the error,
  // however the reads interleave.
  await put(base, { "skills/a-first/SKILL.md": "no frontmatter here\n" });
  await mkdir(path.join(base, "skills", "z-last", "SKILL.md"), { recursive: true });
  for (let attempt = 0; attempt < 5; attempt++) {
    await assert.rejects(discoverResources([base]), { code: "RESOURCE_INVALID" });
  }
  await rename(path.join(base, "skills", "a-first"), path.join(base, "skills", "zz-now-last"));
  for (let attempt = 0; attempt < 5; attempt++) {
    await assert.rejects(discoverResources([base]), (error: Error & { code?: string; cause?: { code?: string } }) => {
      return error.code === "RESOURCE_UNREADABLE" && error.cause?.code === "EISDIR";
    });
  }
});

test("discovery: the four arrays are independent deep copies", async (t) => {
  const { root } = await project(t);
  const catalog = await discoverResources([root]);
  const pristine = structuredClone(catalog);
  assert.deepEqual(catalog.skills, catalog.resources.filter((r) => r.kind === "skill"));

  catalog.resources[1]!.name = "mutated";
  catalog.instructions[0]!.body = "mutated";
  catalog.templates.pop();
  assert.equal(catalog.skills[0]?.name, "review");
  assert.equal(catalog.resources[0]?.kind === "instructions" && catalog.resources[0].body, "PROJECT RULES");
  assert.equal(catalog.resources.length, 3);
  catalog.skills[0]!.description = "mutated";
  assert.equal((catalog.resources[1] as { description: string }).description, "project review");

  assert.deepEqual(await discoverResources([root]), pristine);
});

// ---------------------------------------------------------------------------
// Discovery: frontmatter
// ---------------------------------------------------------------------------

test("discovery: every broken SKILL.md frontmatter is RESOURCE_INVALID", async (t) => {
  const broken: [string, string][] = [
    ["no frontmatter", "name: review\ndescription: d\n"],
    ["opening line not exactly ---", "--- \nname: a\ndescription: d\n---\n"],
    ["unterminated", "---\nname: a\ndescription: d\n"],
    ["closing line not exactly ---", "---\nname: a\ndescription: d\n----\nbody"],
    ["a list", "---\n- name\n- description\n---\n"],
    ["a scalar", "---\njust text\n---\n"],
    ["invalid YAML", "---\nname: [a\ndescription: d\n---\n"],
    ["duplicate key", "---\nname: a\nname: b\ndescription: d\n---\n"],
    ["missing name", "---\ndescription: d\n---\n"],
    ["missing description", "---\nname: a\n---\n"],
    ["empty name", "---\nname: ''\ndescription: d\n---\n"],
    ["blank name", "---\nname: '   '\ndescription: d\n---\n"],
    ["numeric name", "---\nname: 42\ndescription: d\n---\n"],
    ["null description", "---\nname: a\ndescription:\n---\n"],
    ["object description", "---\nname: a\ndescription: {x: 1}\n---\n"],
    ["empty block", "---\n---\nbody"],
    ["empty file", ""],
  ];
  const base = await tempDir(t);
  for (const [index, [label, content]] of broken.entries()) {
    const root = path.join(base, String(index));
    await put(root, { "skills/s/SKILL.md": content });
    await assert.rejects(discoverResources([root]), { code: "RESOURCE_INVALID" }, label);
  }
});

test("discovery: a UTF-8 BOM and CRLF line ends are accepted", async (t) => {
  const base = await tempDir(t);
  await put(base, {
    "AGENTS.md": "\uFEFFRULES\r\n",
    "skills/s/SKILL.md": "\uFEFF---\r\nname: crlf\r\ndescription: with CRLF\r\n---\r\nLine one\r\nLine two\r\n",
    "templates/t.md": "\uFEFF---\r\nname: crlf-template\r\n---\r\nHello {{who}}\r\n",
  });
  const catalog = await discoverResources([base]);
  assert.equal(catalog.instructions[0]?.body, "RULES");
  assert.deepEqual(catalog.skills.map(({ name, description }) => ({ name, description })), [{ name: "crlf", description: "with CRLF" }]);
  assert.equal(catalog.templates[0]?.name, "crlf-template");
  assert.equal(catalog.templates[0]?.body, "Hello {{who}}");
  const active = await activateSkill(catalog, "crlf");
  assert.equal(active.body, "Line one\nLine two", "bodies have CRLF turned into LF");
});

test("discovery: a YAML block over 64 KiB is RESOURCE_INVALID, terminated or not; exactly 64 KiB is fine", async (t) => {
  const base = await tempDir(t);
  const head = "name: big\ndescription: d\n";
  const padded = (bytes: number) => head + `#${"x".repeat(bytes - head.length - 2)}\n`;
  assert.equal(Buffer.byteLength(padded(64 * 1024)), 64 * 1024);
  const cases: [string, string, boolean][] = [
    ["exactly 64 KiB", `---\n${padded(64 * 1024)}---\nbody`, true],
    ["64 KiB + 1, terminated", `---\n${padded(64 * 1024 + 1)}---\nbody`, false],
    ["1 MiB, terminated", `---\n${padded(1024 * 1024)}---\nbody`, false],
    ["1 MiB, unterminated", `---\n${padded(1024 * 1024)}`, false],
  ];
  for (const [index, [label, content, accepted]] of cases.entries()) {
    const root = path.join(base, String(index));
    await put(root, { "skills/big/SKILL.md": content, "templates/big.md": accepted ? content : "x" });
    if (accepted) {
      const catalog = await discoverResources([root]);
      assert.equal(catalog.skills[0]?.name, "big", label);
      assert.equal((await activateSkill(catalog, "big")).body, "body", label);
    } else {
      await assert.rejects(discoverResources([root]), { code: "RESOURCE_INVALID" }, label);
    }
  }
  // The limit holds for templates too.
  const root = path.join(base, "template");
  await put(root, { "templates/big.md": `---\n${padded(64 * 1024 + 1)}---\nbody` });
  await assert.rejects(discoverResources([root]), { code: "RESOURCE_INVALID" });
});

test("discovery: SKILL.md is read only up to its frontmatter (cost independent of body size)", async (t) => {
  const base = await tempDir(t);
  const marker = "BODY-MARKER-8f2c";
  const body = `${marker}\n${"lorem ipsum dolor sit amet\n".repeat((8 * 1024 * 1024) / 27)}${marker}\n`;
  await put(base, { "skills/huge/SKILL.md": `---\nname: huge\ndescription: big body\n---\n${body}` });
  const before = await bytesRead();
  const catalog = await discoverResources([base]);
  const after = await bytesRead();
  assert.ok(!JSON.stringify(catalog).includes(marker));
  assert.deepEqual(catalog.skills.map((s) => s.name), ["huge"]);
  if (before === undefined || after === undefined) return t.skip("no /proc/self/io to count bytes read");
  assert.ok(after - before < 1024 * 1024, `discovery read ${after - before} bytes of an 8 MiB SKILL.md`);

  // An unterminated frontmatter of many MiB is refused after reading about 64 KiB, not all
  // of it, whether it comes as many short lines or as one endless line.
  const unterminated: [string, string][] = [
    ["8 MiB of short lines", "# padding line\n".repeat((8 * 1024 * 1024) / 15)],
    ["one 2 MiB line", `# ${"x".repeat(2 * 1024 * 1024)}`],
  ];
  for (const [label, padding] of unterminated) {
    const root = path.join(base, label);
    await put(root, { "skills/s/SKILL.md": `---\nname: s\ndescription: d\n${padding}` });
    const start = await bytesRead();
    await assert.rejects(discoverResources([root]), { code: "RESOURCE_INVALID" }, label);
    const end = await bytesRead();
    assert.ok(end! - start! < 1024 * 1024, `discovery read ${end! - start!} bytes of an unterminated frontmatter: ${label}`);
  }
});

// ---------------------------------------------------------------------------
// Discovery and activation: special files never hang
// ---------------------------------------------------------------------------

test("special files: a FIFO SKILL.md or AGENTS.md is RESOURCE_INVALID at once; a FIFO template is ignored", async (t) => {
  const base = await tempDir(t);
  await mkdir(path.join(base, "a", "skills", "s"), { recursive: true });
  if (!fifoOrSkip(t, path.join(base, "a", "skills", "s", "SKILL.md"))) return;
  await assert.rejects(discoverResources([path.join(base, "a")]), { code: "RESOURCE_INVALID" });

  await mkdir(path.join(base, "b"));
  fifoOrSkip(t, path.join(base, "b", "AGENTS.md"));
  await assert.rejects(discoverResources([path.join(base, "b")]), { code: "RESOURCE_INVALID" });

  await put(base, { "c/templates/real.md": "Real" });
  fifoOrSkip(t, path.join(base, "c", "templates", "pipe.md"));
  const catalog = await discoverResources([path.join(base, "c")]);
  assert.deepEqual(catalog.templates.map((r) => r.name), ["real"]);
});

test("special files: a character device behind SKILL.md is RESOURCE_INVALID", async (t) => {
  if (process.platform === "win32") return t.skip("no /dev/zero on Windows");
  const base = await tempDir(t);
  await mkdir(path.join(base, "skills", "dev"), { recursive: true });
  await symlink("/dev/zero", path.join(base, "skills", "dev", "SKILL.md"));
  await assert.rejects(discoverResources([base]), { code: "RESOURCE_INVALID" });
});

test("special files: activation refuses a SKILL.md or a resource that became a FIFO", async (t) => {
  const { root, skillRoot } = await project(t);
  const catalog = await discoverResources([root]);
  if (!fifoOrSkip(t, path.join(skillRoot, "references", "pipe.md"))) return;
  await assert.rejects(activateSkill(catalog, "review", { resources: ["references/pipe.md"] }), { code: "RESOURCE_INVALID" });
  await unlink(path.join(skillRoot, "SKILL.md"));
  fifoOrSkip(t, path.join(skillRoot, "SKILL.md"));
  await assert.rejects(activateSkill(catalog, "review"), { code: "RESOURCE_INVALID" });
});

// ---------------------------------------------------------------------------
// Activation: paths
// ---------------------------------------------------------------------------

test("activation: empty, absolute and NUL requests are SKILL_PATH_INVALID", async (t) => {
  const { root, skillRoot } = await project(t);
  const catalog = await discoverResources([root]);
  for (const request of ["", path.join(skillRoot, "references", "checklist.md"), "references/check\0list.md"]) {
    await assert.rejects(activateSkill(catalog, "review", { resources: [request] }), { code: "SKILL_PATH_INVALID" }, JSON.stringify(request));
  }
});

test("activation: a sibling directory sharing the root's prefix is outside (no string-prefix check)", async (t) => {
  const { root } = await project(t);
  await put(root, { "skills/review-old/x": "OLD SECRET" });
  const catalog = await discoverResources([root]);
  for (const request of ["../review-old/x", "references/../../review-old/x", "..", "../review-old"]) {
    await assert.rejects(activateSkill(catalog, "review", { resources: [request] }), { code: "SKILL_PATH_ESCAPE" }, request);
  }
});

test("activation: a name that merely starts with dots stays inside", async (t) => {
  const { root, skillRoot } = await project(t);
  await put(skillRoot, { "..notes.md": "dotted" });
  const catalog = await discoverResources([root]);
  const active = await activateSkill(catalog, "review", { resources: ["..notes.md", "./references/./checklist.md"] });
  assert.deepEqual(active.resources.map((f) => [f.request, f.content]), [["..notes.md", "dotted"], ["./references/./checklist.md", "tests\nsecurity\n"]]);
});

test("activation: symlinks inside the root are followed; links leading outside are SKILL_PATH_ESCAPE", async (t) => {
  const { base, root, skillRoot } = await project(t);
  await put(base, { "outside/secret.md": "SECRET" });
  if (!(await symlinkOrSkip(t, path.join(skillRoot, "references", "checklist.md"), path.join(skillRoot, "alias.md")))) return;
  await symlink(path.join(base, "outside"), path.join(skillRoot, "references", "out-dir"));
  await symlink("../../../../outside/secret.md", path.join(skillRoot, "references", "relative-out.md"));
  const catalog = await discoverResources([root]);

  const active = await activateSkill(catalog, "review", { resources: ["alias.md"] });
  assert.deepEqual(active.resources, [
    { request: "alias.md", source: path.join(skillRoot, "references", "checklist.md"), content: "tests\nsecurity\n" },
  ]);
  for (const request of ["references/out-dir/secret.md", "references/relative-out.md"]) {
    await assert.rejects(activateSkill(catalog, "review", { resources: [request] }), { code: "SKILL_PATH_ESCAPE" }, request);
  }
});

test("activation: SKILL.md swapped for a symlink pointing outside after discovery is SKILL_PATH_ESCAPE", async (t) => {
  const { base, root, skillRoot } = await project(t);
  await put(base, { "evil/SKILL.md": skill("review", "evil", "EVIL BODY") });
  const catalog = await discoverResources([root]);
  await unlink(path.join(skillRoot, "SKILL.md"));
  if (!(await symlinkOrSkip(t, path.join(base, "evil", "SKILL.md"), path.join(skillRoot, "SKILL.md")))) return;
  await assert.rejects(activateSkill(catalog, "review"), { code: "SKILL_PATH_ESCAPE" });
});

test("activation: missing files are SKILL_RESOURCE_MISSING; a directory is RESOURCE_UNREADABLE (EISDIR)", async (t) => {
  const { root } = await project(t);
  const catalog = await discoverResources([root]);
  for (const request of ["references/nope.md", "references/checklist.md/below"]) {
    await assert.rejects(activateSkill(catalog, "review", { resources: [request] }), { code: "SKILL_RESOURCE_MISSING" }, request);
  }
  await assert.rejects(activateSkill(catalog, "review", { resources: ["references"] }), (error: Error & { code?: string; cause?: { code?: string } }) => {
    assert.equal(error.code, "RESOURCE_UNREADABLE");
    assert.equal(error.cause?.code, "EISDIR");
    return true;
  });
});

test("activation: a renamed or deleted skill is SKILL_CHANGED", async (t) => {
  const { root, skillRoot } = await project(t);
  const catalog = await discoverResources([root]);

  await writeFile(path.join(skillRoot, "SKILL.md"), skill("audit", "renamed"));
  await assert.rejects(activateSkill(catalog, "review"), { code: "SKILL_CHANGED" });

  await unlink(path.join(skillRoot, "SKILL.md"));
  await assert.rejects(activateSkill(catalog, "review"), { code: "SKILL_CHANGED" });

  await rename(skillRoot, `${skillRoot}-gone`);
  await assert.rejects(activateSkill(catalog, "review"), { code: "SKILL_CHANGED" });
});

test("activation: a re-read SKILL.md that became invalid is RESOURCE_INVALID", async (t) => {
  const { root, skillRoot } = await project(t);
  const catalog = await discoverResources([root]);
  const invalid: [string, string][] = [
    ["no frontmatter", "no frontmatter any more"],
    ["unterminated", "---\nname: review\ndescription: d\n"],
    ["description gone", "---\nname: review\n---\nbody"],
    ["YAML block over 64 KiB", `---\nname: review\ndescription: d\n# ${"x".repeat(64 * 1024)}\n---\nbody`],
  ];
  for (const [label, content] of invalid) {
    await writeFile(path.join(skillRoot, "SKILL.md"), content);
    await assert.rejects(activateSkill(catalog, "review"), { code: "RESOURCE_INVALID" }, label);
  }
});

test("activation: keeps the catalog's metadata snapshot, dedupes by request in order, content untrimmed", async (t) => {
  const { root, skillRoot } = await project(t);
  await put(skillRoot, { "b.md": "  spaced  \n\n", "a.md": "A" });
  const catalog = await discoverResources([root]);
  await writeFile(path.join(skillRoot, "SKILL.md"), skill("review", "a new description", "New body"));

  const active = await activateSkill(catalog, "review", { resources: ["b.md", "a.md", "b.md", "./b.md"] });
  assert.equal(active.description, "project review");
  assert.equal(active.body, "New body");
  assert.deepEqual(active.resources.map((f) => [f.request, f.content]), [
    ["b.md", "  spaced  \n\n"],
    ["a.md", "A"],
    ["./b.md", "  spaced  \n\n"],
  ]);
  assert.deepEqual(Object.keys(active).sort(), ["body", "description", "kind", "name", "resources", "root", "source"]);
});

// ---------------------------------------------------------------------------
// Templates
// ---------------------------------------------------------------------------

const template = (body: string): TemplateResource => ({ kind: "template", name: "t", description: "", source: "/t.md", root: "/", body });

test("templates: only {{identifier}} is a placeholder; values are inserted literally in one pass", () => {
  const cases: [string, Record<string, string>, string][] = [
    ["{{ name }} {{1x}} {x} {{x-y}} {{}}", {}, "{{ name }} {{1x}} {x} {{x-y}} {{}}"],
    ["{{a}}{{a}} and {{_b9}}", { a: "A", _b9: "B" }, "AA and B"],
    ["{{{a}}}", { a: "A" }, "{A}"],
    ["{{a}}", { a: "$& $1 $$ $` $' {{b}}" }, "$& $1 $$ $` $' {{b}}"],
    ["{{a}} {{b}}", { a: "{{b}}", b: "B" }, "{{b}} B"],
    ["no placeholders", { unused: "x" }, "no placeholders"],
  ];
  for (const [body, args, expected] of cases) assert.equal(textOf(renderTemplate(template(body), args)), expected, body);
});

test("templates: a missing argument names the placeholder; inherited properties are not arguments", () => {
  for (const [body, missing] of [["Hi {{owner}}", "owner"], ["{{toString}}", "toString"], ["{{constructor}}", "constructor"]] as const) {
    assert.throws(() => renderTemplate(template(body), {}), (error: Error & { code?: string }) => {
      assert.equal(error.code, "TEMPLATE_ARGUMENT_MISSING");
      assert.ok(error.message.includes(missing), error.message);
      return true;
    });
  }
});

test("templates: an argument inherited through the prototype is not an argument", () => {
  const inherited = Object.create({ owner: "from the prototype" }) as Record<string, string>;
  assert.throws(() => renderTemplate(template("{{owner}}"), inherited), { code: "TEMPLATE_ARGUMENT_MISSING" });
});

test("templates: the message is a canonical UserMessage stamped with Date.now()", (t) => {
  t.mock.method(Date, "now", () => 4242);
  assert.deepEqual(renderTemplate(template("Hi {{who}}"), { who: "you" }), {
    role: "user",
    content: [{ type: "text", text: "Hi you" }],
    timestamp: 4242,
  });
});

test("templates: seeded property loop agrees with a hand-written scanner", () => {
  const random = seeded(12);
  const names = ["a", "b", "_x", "Z9"];
  const pieces = ["{", "}", "{{", "}}", " ", "$", "&", "1", "a", "-", ...names.map((n) => `{{${n}}}`)];
  const values = ["$&", "$1", "{{a}}", "$$", "", "plain", "}}"];
  // Independent model: at each position, a placeholder if one starts here, else one character.
  const scan = (body: string, args: Record<string, string>) => {
    let out = "";
    for (let i = 0; i < body.length; ) {
      const match = /^\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}/.exec(body.slice(i));
      if (match) {
        out += args[match[1]!];
        i += match[0].length;
      } else {
        out += body[i];
        i += 1;
      }
    }
    return out;
  };
  for (let round = 0; round < 500; round++) {
    const body = Array.from({ length: 1 + Math.floor(random() * 12) }, () => pick(random, pieces)).join("");
    const args = Object.fromEntries(names.map((n) => [n, pick(random, values)]));
    assert.equal(textOf(renderTemplate(template(body), args)), scan(body, args), JSON.stringify({ body, args }));
  }
});

// ---------------------------------------------------------------------------
// Resource context
// ---------------------------------------------------------------------------

test("context: the documented layout, active skills sorted by name, no inactive body", async (t) => {
  const { root } = await project(t);
  await put(root, {
    "skills/alpha/SKILL.md": skill("alpha", "first skill", "Alpha body."),
    "skills/zulu/SKILL.md": skill("zulu", "last skill", "ZULU BODY"),
  });
  const catalog = await discoverResources([root]);
  const review = await activateSkill(catalog, "review", { resources: ["references/checklist.md"] });
  const alpha = await activateSkill(catalog, "alpha");
  assert.equal(
    formatResourceContext(catalog, [review, alpha]),
    [
      "# Instructions",
      "PROJECT RULES",
      "# Skills",
      "- alpha: first skill\n- review: project review\n- zulu: last skill",
      "# Active skill: alpha",
      "Alpha body.",
      "# Active skill: review",
      "Read the diff first.",
      "## references/checklist.md",
      "tests\nsecurity\n",
    ].join("\n\n"),
  );
  assert.equal(formatResourceContext(catalog, [alpha, review]), formatResourceContext(catalog, [review, alpha]));
  assert.ok(!formatResourceContext(catalog, []).includes("ZULU BODY"));
  assert.equal(formatResourceContext({ resources: [], instructions: [], skills: [], templates: [] }, []), "");
});

test("context: duplicate and foreign activations are refused", async (t) => {
  const { base, root } = await project(t);
  await put(base, { "other/skills/review/SKILL.md": skill("review", "project review", "Read the diff first.") });
  const catalog = await discoverResources([root]);
  const review = await activateSkill(catalog, "review");
  const otherReview = await activateSkill(await discoverResources([path.join(base, "other")]), "review");

  assert.throws(() => formatResourceContext(catalog, [review, structuredClone(review)]), { code: "ACTIVATION_DUPLICATE" });
  const foreign: [string, ActivatedSkill][] = [
    ["same name and text, another catalog", otherReview],
    ["a name this catalog lacks", { ...review, name: "ghost" }],
    ["a different source", { ...review, source: `${review.source}.bak` }],
    ["a different root", { ...review, root: path.dirname(review.root) }],
  ];
  for (const [label, activated] of foreign) {
    assert.throws(() => formatResourceContext(catalog, [activated]), { code: "ACTIVATION_FOREIGN" }, label);
  }
});

// ---------------------------------------------------------------------------
// Extensions: trust and import
// ---------------------------------------------------------------------------

test("extensions: only exactly true trusts; truthy values are untrusted and import nothing", async () => {
  for (const verdict of ["yes", 1, {}, [], "true"] as unknown[]) {
    let imports = 0;
    const result = await loadExtension({ id: "x", path: "x.js" }, {
      host: hostWith(),
      isTrusted: () => verdict as boolean,
      importModule: async () => {
        imports += 1;
        return { default() {} };
      },
    });
    assert.deepEqual(result, { id: "x", status: "skipped_untrusted" }, JSON.stringify(verdict));
    assert.equal(imports, 0);
  }
  const asyncTrue = await load(hostWith(), "y", () => {}, { isTrusted: async () => true });
  assert.deepEqual(asyncTrue, { id: "y", status: "active" });
});

test("extensions: a throwing or rejecting trust policy rejects and imports nothing", async () => {
  const boom = new Error("policy unavailable");
  for (const isTrusted of [() => { throw boom; }, async () => { throw boom; }]) {
    let imports = 0;
    await assert.rejects(
      loadExtension({ id: "x", path: "x.js" }, {
        host: hostWith(),
        isTrusted,
        importModule: async () => {
          imports += 1;
          return { default() {} };
        },
      }),
      (error) => error === boom,
    );
    assert.equal(imports, 0);
  }
});

test("extensions: isTrusted and importModule get the same frozen copy of the source", async () => {
  const source: ExtensionSource = { id: "x", path: "first.js" };
  const seen: Readonly<ExtensionSource>[] = [];
  await loadExtension(source, {
    host: hostWith(),
    isTrusted: (frozen) => {
      seen.push(frozen);
      source.path = "swapped-after-trust.js";
      return true;
    },
    importModule: async (frozen) => {
      seen.push(frozen);
      return { default() {} };
    },
  });
  assert.equal(seen.length, 2);
  assert.notEqual(seen[0], source);
  assert.ok(Object.isFrozen(seen[0]));
  assert.equal(seen[0], seen[1]);
  assert.deepEqual(seen[1], { id: "x", path: "first.js" });
});

test("extensions: the default importer imports source.path, and never an untrusted one", async (t) => {
  const base = await tempDir(t);
  const flag = `__piCourse12_${process.pid}`;
  const file = path.join(base, "ext.mjs");
  await writeFile(
    file,
    `globalThis.${flag} = (globalThis.${flag} ?? 0) + 1;\nexport default function (context) {\n  context.registerTool({ name: "from_disk", description: "d", schema: { parse: (v) => v }, execute: async () => ({ content: [] }) });\n}\n`,
  );
  const globals = globalThis as Record<string, unknown>;
  const registry = new ToolRegistry();
  const host = createExtensionHost(registry, { hookTimeoutMs: 1000 });
  assert.deepEqual(await loadExtension({ id: "disk", path: file }, { host, isTrusted: () => false }), { id: "disk", status: "skipped_untrusted" });
  assert.equal(globals[flag], undefined, "untrusted module code must not run");
  assert.deepEqual(await loadExtension({ id: "disk", path: file }, { host, isTrusted: () => true }), { id: "disk", status: "active" });
  assert.equal(globals[flag], 1);
  assert.ok(registry.get("from_disk"));
  assert.ok(pathToFileURL(file).href.startsWith("file:"));
});

test("extensions: a module without a default function is EXTENSION_INVALID", async () => {
  for (const module of [{}, { default: 42 }, { default: { factory() {} } }, null, 7]) {
    const registry = new ToolRegistry();
    await assert.rejects(
      loadExtension({ id: "x", path: "x.js" }, {
        host: createExtensionHost(registry, { hookTimeoutMs: 1000 }),
        isTrusted: () => true,
        importModule: async () => module,
      }),
      { code: "EXTENSION_INVALID" },
      JSON.stringify(module),
    );
  }
});

test("extensions: an id already active is EXTENSION_DUPLICATE before trust or import", async () => {
  const host = hostWith();
  await load(host, "dup", (context) => (context as ExtensionContext).registerTool(tool("first")));
  const calls: string[] = [];
  await assert.rejects(
    load(host, "dup", () => {}, {
      isTrusted: () => {
        calls.push("trust");
        return true;
      },
      importModule: async () => {
        calls.push("import");
        return { default() {} };
      },
    }),
    { code: "EXTENSION_DUPLICATE" },
  );
  assert.deepEqual(calls, []);
});

test("extensions: two concurrent loads of one id commit once; the second is EXTENSION_DUPLICATE", async () => {
  const registry = new ToolRegistry();
  const host = hostWith([], 1000, registry);
  const gate = deferred();
  const slowImport = async () => {
    await gate.promise;
    return { default: (context: ExtensionContext) => context.registerTool(tool("racing")) };
  };
  const first = load(host, "same", () => {}, { importModule: slowImport });
  const second = load(host, "same", () => {}, { importModule: slowImport });
  gate.resolve();
  const outcomes = await Promise.allSettled([first, second]);
  assert.deepEqual(outcomes[0], { status: "fulfilled", value: { id: "same", status: "active" } });
  assert.equal(outcomes[1]?.status, "rejected");
  assert.equal((outcomes[1] as PromiseRejectedResult).reason.code, "EXTENSION_DUPLICATE");
  assert.deepEqual(registry.list().map((t) => t.name), ["racing"]);
});

// ---------------------------------------------------------------------------
// Extensions: staging and commit
// ---------------------------------------------------------------------------

test("extensions: the factory's context has only registerTool and on, and cannot be extended", async () => {
  let context: ExtensionContext | undefined;
  await load(hostWith(), "x", (received) => {
    context = received;
  });
  assert.deepEqual(Object.keys(context!).sort(), ["on", "registerTool"]);
  assert.ok(Object.isFrozen(context));
});

test("extensions: registering through a saved context after the factory is EXTENSION_CONTEXT_CLOSED", async () => {
  const registry = new ToolRegistry();
  const diagnostics: ExtensionDiagnostic[] = [];
  const host = hostWith(diagnostics, 1000, registry);
  let saved: ExtensionContext | undefined;
  await load(host, "sync", (context) => {
    saved = context;
  });
  assert.throws(() => saved!.registerTool(tool("late")), { code: "EXTENSION_CONTEXT_CLOSED" });
  assert.throws(() => saved!.on("beforeToolCall", () => ({ decision: "deny", reason: "late" })), { code: "EXTENSION_CONTEXT_CLOSED" });

  // An async factory may register until its promise settles, and not after.
  let savedAsync: ExtensionContext | undefined;
  await load(host, "async", async (context) => {
    savedAsync = context;
    await Promise.resolve();
    context.registerTool(tool("in_time"));
  });
  assert.throws(() => savedAsync!.registerTool(tool("too_late")), { code: "EXTENSION_CONTEXT_CLOSED" });

  // A factory that schedules registration for later gets the same answer.
  const later = deferred<unknown>();
  await load(host, "scheduled", (context) => {
    setImmediate(() => {
      try {
        context.registerTool(tool("scheduled"));
        later.resolve("registered");
      } catch (error) {
        later.resolve(error);
      }
    });
  });
  assert.equal(((await later.promise) as { code?: string }).code, "EXTENSION_CONTEXT_CLOSED");

  assert.deepEqual(registry.list().map((t) => t.name), ["in_time"]);
  const { core, facts } = coreOf();
  await host.wrapExecutor(core)(call());
  assert.equal(facts.length, 1, "the late deny hook was never attached");
});

test("extensions: an async factory that rejects is EXTENSION_FACTORY_FAILED with the cause, leaving nothing", async () => {
  const registry = new ToolRegistry([tool("existing")]);
  const host = hostWith([], 1000, registry);
  const original = new Error("async factory broke");
  let saved: ExtensionContext | undefined;
  await assert.rejects(
    load(host, "x", async (context) => {
      saved = context;
      context.registerTool(tool("staged"));
      await Promise.resolve();
      throw original;
    }),
    (error: Error & { code?: string }) => {
      assert.equal(error.code, "EXTENSION_FACTORY_FAILED");
      assert.equal(error.cause, original);
      assert.ok(error.message.includes("async factory broke"));
      return true;
    },
  );
  assert.deepEqual(registry.list().map((t) => t.name), ["existing"]);
  assert.throws(() => saved!.registerTool(tool("retry")), { code: "EXTENSION_CONTEXT_CLOSED" });
  // Nothing marked the id active: a good factory under the same id now loads.
  assert.deepEqual(await load(host, "x", () => {}), { id: "x", status: "active" });
});

test("extensions: a tool name staged twice is TOOL_CONFLICT and nothing is committed", async () => {
  const registry = new ToolRegistry();
  const host = hostWith([], 1000, registry);
  let hookRuns = 0;
  await assert.rejects(
    load(host, "twice", (context) => {
      context.registerTool(tool("a"));
      context.registerTool(tool("b"));
      context.registerTool(tool("a"));
      context.on("beforeToolCall", () => {
        hookRuns += 1;
      });
    }),
    { code: "TOOL_CONFLICT" },
  );
  assert.deepEqual(registry.list(), []);
  await host.wrapExecutor(coreOf().core)(call());
  assert.equal(hookRuns, 0);
});

test("extensions: unknown hook names and non-function listeners fail the factory", async () => {
  for (const register of [
    (context: ExtensionContext) => (context.on as (hook: string, listener: unknown) => void)("onEverything", () => {}),
    (context: ExtensionContext) => (context.on as (hook: string, listener: unknown) => void)("beforeToolCall", "not a function"),
  ]) {
    await assert.rejects(load(hostWith(), "x", register), (error: Error & { code?: string; cause?: { code?: string } }) => {
      assert.equal(error.code, "EXTENSION_FACTORY_FAILED");
      assert.equal(error.cause?.code, "EXTENSION_INVALID");
      return true;
    });
  }
});

test("extensions: hosts validate their options and the loader accepts only real hosts", async () => {
  for (const hookTimeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31]) {
    assert.throws(() => createExtensionHost(new ToolRegistry(), { hookTimeoutMs }), { code: "INVALID_ARGUMENT" }, String(hookTimeoutMs));
  }
  const fake: ExtensionHost = { wrapExecutor: (core) => core };
  await assert.rejects(loadExtension({ id: "x", path: "x.js" }, { host: fake, isTrusted: () => true }), { code: "INVALID_ARGUMENT" });
});

// ---------------------------------------------------------------------------
// Hooks
// ---------------------------------------------------------------------------

test("hooks: before listeners run in registration order across extensions and stop at the first deny", async () => {
  const diagnostics: ExtensionDiagnostic[] = [];
  const host = hostWith(diagnostics);
  const order: string[] = [];
  let afterRuns = 0;
  await load(host, "A", (context) => {
    context.on("beforeToolCall", () => {
      order.push("A1");
      return { decision: "allow" };
    });
    context.on("beforeToolCall", () => {
      order.push("A2");
    });
    context.on("afterToolResult", () => {
      afterRuns += 1;
    });
  });
  await load(host, "B", (context) =>
    context.on("beforeToolCall", () => {
      order.push("B");
      return { decision: "deny", reason: "B says no" };
    }),
  );
  await load(host, "C", (context) =>
    context.on("beforeToolCall", () => {
      order.push("C");
    }),
  );
  const { core, facts } = coreOf();
  const result = await host.wrapExecutor(core)(call("c-9"));
  assert.deepEqual(order, ["A1", "A2", "B"]);
  assert.deepEqual(result.details, { blockedByExtension: "B", kind: "deny", reason: "B says no" });
  assert.equal(result.toolCallId, "c-9");
  assert.equal(facts.length, 0);
  assert.equal(afterRuns, 0);
  assert.deepEqual(diagnostics, []);
});

test("hooks: a malformed before answer fails closed as kind error with one diagnostic", async () => {
  const malformed: unknown[] = [null, "allow", 42, {}, { decision: "maybe" }, { decision: "deny" }, { decision: "deny", reason: 7 }];
  for (const answer of malformed) {
    const diagnostics: ExtensionDiagnostic[] = [];
    const host = hostWith(diagnostics);
    await load(host, "odd", (context) => context.on("beforeToolCall", () => answer as undefined));
    const { core, facts } = coreOf();
    const result = await host.wrapExecutor(core)(call());
    const label = JSON.stringify(answer);
    assert.equal(facts.length, 0, label);
    assert.equal(result.isError, true, label);
    assert.equal((result.details as { kind: string }).kind, "error", label);
    assert.deepEqual(diagnostics.map((d) => [d.extensionId, d.hook, d.kind]), [["odd", "beforeToolCall", "error"]], label);
  }
});

test("hooks: a before hook that tries to change the call is stopped by the freeze and fails closed", async () => {
  const host = hostWith();
  await load(host, "meddler", (context) =>
    context.on("beforeToolCall", (received) => {
      (received.arguments as { text: string }).text = "rewritten";
    }),
  );
  const { core, facts } = coreOf();
  const original = call();
  const result = await host.wrapExecutor(core)(original);
  assert.equal((result.details as { kind: string }).kind, "error");
  assert.equal(facts.length, 0);
  assert.deepEqual(original, call());
});

test("hooks: core receives an equal copy of the call; nothing the core does reaches the caller's call", async () => {
  const host = hostWith();
  await load(host, "allow", (context) => context.on("beforeToolCall", () => ({ decision: "allow" })));
  const original = call();
  let received: ToolCall | undefined;
  const result = await host.wrapExecutor(async (inner) => {
    received = inner;
    (inner.arguments as { text: string }).text = "core changed its copy";
    return coreOf().core(inner);
  })(original);
  assert.notEqual(received, original);
  assert.deepEqual(original, call());
  assert.equal(result.toolCallId, "call-1");
});

test("hooks: after listeners run once each, in order, ignore return values, and survive each other's failures", async () => {
  const diagnostics: ExtensionDiagnostic[] = [];
  const host = hostWith(diagnostics, 20);
  const order: string[] = [];
  await load(host, "first", (context) =>
    context.on("afterToolResult", () => {
      order.push("first");
      return { decision: "deny", reason: "after hooks cannot deny" } as unknown as void;
    }),
  );
  await load(host, "rejecting", (context) =>
    context.on("afterToolResult", async () => {
      order.push("rejecting");
      throw new Error("async observer failed");
    }),
  );
  await load(host, "last", (context) =>
    context.on("afterToolResult", () => {
      order.push("last");
    }),
  );
  const { core, facts } = coreOf();
  const result = await host.wrapExecutor(core)(call());
  assert.deepEqual(order, ["first", "rejecting", "last"]);
  assert.equal(result.isError, false);
  assert.deepEqual(result, facts[0]);
  assert.deepEqual(diagnostics, [{ extensionId: "rejecting", hook: "afterToolResult", kind: "error", message: "async observer failed" }]);
});

test("hooks: a throwing core propagates and no after listener runs", async () => {
  const host = hostWith();
  let afterRuns = 0;
  await load(host, "observer", (context) =>
    context.on("afterToolResult", () => {
      afterRuns += 1;
    }),
  );
  const broken = new Error("core exploded");
  await assert.rejects(host.wrapExecutor(async () => {
    throw broken;
  })(call()), (error) => error === broken);
  assert.equal(afterRuns, 0);
});

test("hooks: a throwing or rejecting onDiagnostic never breaks the wrapper", async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  try {
    for (const onDiagnostic of [
      () => {
        throw new Error("reporter down");
      },
      async () => {
        throw new Error("async reporter down");
      },
    ]) {
      const host = createExtensionHost(new ToolRegistry(), { hookTimeoutMs: 1000, onDiagnostic });
      await load(host, "bad-before", (context) =>
        context.on("beforeToolCall", () => {
          throw new Error("policy crashed");
        }),
      );
      const { core, facts } = coreOf();
      const result = await host.wrapExecutor(core)(call());
      assert.equal((result.details as { kind: string }).kind, "error");
      assert.equal(facts.length, 0);
    }
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(unhandled, []);
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
});

test("hooks: wrapped calls are reentrant; a slow hook on one call does not hold up another", async () => {
  const host = hostWith();
  const gate = deferred();
  const events: string[] = [];
  await load(host, "gatekeeper", (context) => {
    context.on("beforeToolCall", async (received) => {
      events.push(`before ${received.id}`);
      if (received.id === "slow") await gate.promise;
      return { decision: "allow" };
    });
    context.on("afterToolResult", (result) => {
      events.push(`after ${result.toolCallId}`);
    });
  });
  const wrapped = host.wrapExecutor(async (received) => {
    events.push(`core ${received.id}`);
    return coreOf().core(received);
  });
  const slow = wrapped(call("slow"));
  const fast = await wrapped(call("fast"));
  events.push("fast returned");
  assert.equal(fast.toolCallId, "fast");
  assert.ok(!events.includes("core slow"), "the slow call is still waiting in its before hook");
  gate.resolve();
  const slowResult = await slow;
  assert.equal(slowResult.toolCallId, "slow");
  assert.deepEqual(events, ["before slow", "before fast", "core fast", "after fast", "fast returned", "core slow", "after slow"]);
});

test("hooks: the per-hook timer is cleared, so no timer outlives a call", async () => {
  const host = hostWith([], 10 * 60 * 1000);
  await load(host, "quick", (context) => {
    context.on("beforeToolCall", () => ({ decision: "allow" }));
    context.on("afterToolResult", () => {});
  });
  const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;
  const before = timers();
  await host.wrapExecutor(coreOf().core)(call());
  assert.equal(timers(), before);
});

// ---------------------------------------------------------------------------
// Discovery property: precedence and order against a model
// ---------------------------------------------------------------------------

test("discovery: seeded property loop — first root wins, output sorted by kind and code unit", async (t) => {
  const base = await tempDir(t);
  const random = seeded(1212);
  const names = ["a", "B", "b", "_", "review", "Review", "z1"];
  for (let round = 0; round < 25; round++) {
    const roots: string[] = [];
    const expected = new Map<string, string>();
    for (let r = 0; r < 1 + Math.floor(random() * 3); r++) {
      const root = path.join(base, `${round}-${r}`);
      roots.push(root);
      await mkdir(root);
      const used = new Set<string>();
      for (let s = 0; s < Math.floor(random() * 4); s++) {
        const kind = pick(random, ["skill", "template"] as const);
        const name = pick(random, names);
        if (used.has(`${kind}:${name}`)) continue;
        used.add(`${kind}:${name}`);
        const dir = `d${Math.floor(random() * 1000)}-${s}`;
        if (kind === "skill") await put(root, { [`skills/${dir}/SKILL.md`]: skill(name, `${kind} ${name} from ${r}`) });
        else await put(root, { [`templates/${dir}.md`]: `---\nname: ${name}\ndescription: ${kind} ${name} from ${r}\n---\n` });
        if (!expected.has(`${kind}:${name}`)) expected.set(`${kind}:${name}`, `${kind} ${name} from ${r}`);
      }
    }
    const catalog = await discoverResources(roots);
    const key = (kind: string, name: string) => `${kind === "skill" ? 1 : 2}:${name}`;
    const want = [...expected.keys()].sort((x, y) => {
      const [kx, nx] = x.split(":") as [string, string];
      const [ky, ny] = y.split(":") as [string, string];
      const a = key(kx, nx);
      const b = key(ky, ny);
      return a < b ? -1 : a > b ? 1 : 0;
    });
    assert.deepEqual(catalog.resources.map((r) => `${r.kind}:${r.name}`), want, `round ${round}`);
    for (const resource of catalog.resources) {
      if (resource.kind !== "instructions") assert.equal(resource.description, expected.get(`${resource.kind}:${resource.name}`));
    }
  }
});
