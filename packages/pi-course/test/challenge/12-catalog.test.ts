/**
 * Chapter 12 challenge · the catalog (`discoverResources`): layout, precedence, frontmatter,
 * lenient mode and its diagnostics, and a workspace shaped like the skill folders found in
 * the wild. Not a lab: `lab 12 --challenge` runs it on the learner's own resources.ts.
 *
 * Why a real host needs it: about 9% of the SKILL.md files published in public skill
 * collections are invalid, and a loader that throws on the first one (the labs' strict
 * mode) leaves the user with no skills at all. A host asks for diagnostics instead, keeps
 * every good resource, and reports the rest in an order that does not change from run to
 * run. Every failure names its rule and the section of the chapter text that states it.
 */
import assert from "node:assert/strict";
import { mkdir, rename, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import test from "node:test";
import { activateSkill, discoverResources, formatResourceContext, type ResourceCatalog, type ResourceDiagnostic } from "../../src/resources.js";
import { buildRealWorld } from "../fixtures/12-real-world.js";
import {
  brief,
  bytesRead,
  chapterProject,
  codes,
  failsWith,
  holdFifo,
  identities,
  lenient,
  pick,
  put,
  rule,
  seeded,
  skill,
  symlinkOrSkip,
  tempDir,
} from "../fixtures/12-workspace.js";

const EMPTY = { resources: [], instructions: [], skills: [], templates: [] };

// ---------------------------------------------------------------------------
// Roots and precedence
// ---------------------------------------------------------------------------

test("discovery: a missing root or a root that is a file is RESOURCE_ROOT_MISSING", async (t) => {
  const base = await tempDir(t);
  await writeFile(path.join(base, "file"), "x");
  await rule("§C3.1：给出的 root 不存在或不是目录（是一个文件，或路上有一个文件）→ RESOURCE_ROOT_MISSING", async () => {
    await failsWith("RESOURCE_ROOT_MISSING", () => discoverResources([path.join(base, "nowhere")]), "root 不存在");
    await failsWith("RESOURCE_ROOT_MISSING", () => discoverResources([path.join(base, "file")]), "root 是一个文件");
    await failsWith("RESOURCE_ROOT_MISSING", () => discoverResources([path.join(base, "file", "below")]), "root 的路上有一个文件");
  });
});

test("discovery: no roots, or a root without AGENTS.md, skills/ and templates/, is an empty catalog", async (t) => {
  const base = await tempDir(t);
  await rule("§C3.2：什么都没有的 root 得到四个数组都为空的清单；一个 root 都没给也一样", async () => {
    assert.deepEqual(await discoverResources([]), EMPTY);
    assert.deepEqual(await discoverResources([base]), EMPTY);
  });
});

test("discovery: roots are canonicalised, so a root reached through a symlink reports real paths", async (t) => {
  const { base, root } = await chapterProject(t);
  const alias = path.join(base, "alias");
  if (!(await symlinkOrSkip(t, root, alias))) return;
  let catalog!: ResourceCatalog;
  await rule("§C3.1：每个 root 在扫描前先 realpath：经 symlink 给出的 root，source 与 root 都是 canonical 路径", async () => {
    catalog = await discoverResources([alias]);
    assert.equal(catalog.instructions[0]?.root, root);
    assert.equal(catalog.skills[0]?.source, path.join(root, "skills", "review", "SKILL.md"));
  });
  await rule("§C3.9、§C3.10：重复只看同一个 root 之内：同一个 root 写两次（直接写和经 symlink 写），第一次胜出，第二次的资源都被挡住", async () => {
    assert.deepEqual(await discoverResources([alias, root]), catalog);
  });
});

test("discovery: the same kind:name twice inside one root is RESOURCE_DUPLICATE", async (t) => {
  const base = await tempDir(t);
  await put(path.join(base, "skills"), {
    "skills/one/SKILL.md": skill("review", "first"),
    "skills/two/SKILL.md": skill("review", "second"),
  });
  await put(path.join(base, "templates"), {
    "templates/review.md": "plain",
    "templates/other.md": "---\nname: review\n---\nnamed review in frontmatter",
  });
  await put(path.join(base, "ok-a"), { "skills/x/SKILL.md": skill("review", "a") });
  await put(path.join(base, "ok-b"), { "skills/y/SKILL.md": skill("review", "b") });
  await rule("§C3.10：同一个 root 里两个相同的 kind:name（两个技能目录，或模板的 frontmatter 名字撞上文件名）→ RESOURCE_DUPLICATE", async () => {
    await failsWith("RESOURCE_DUPLICATE", () => discoverResources([path.join(base, "skills")]), "两个 Skill 目录都叫 review");
    await failsWith("RESOURCE_DUPLICATE", () => discoverResources([path.join(base, "templates")]), "other.md 的 frontmatter 名字是 review");
  });
  await rule("§C3.9：不同 root 里的同一个 kind:name 不是错误：第一个 root 胜出", async () => {
    const catalog = await discoverResources([path.join(base, "ok-a"), path.join(base, "ok-b")]);
    assert.deepEqual(
      catalog.skills.map((s) => s.description),
      ["a"],
    );
  });
});

test("discovery: skill and template of the same name coexist (identity is kind + name)", async (t) => {
  const { root } = await chapterProject(t);
  await rule("§C3.9：资源的身份是 kind:name：skill:review 与 template:review 是两个资源，可以共存", async () => {
    assert.deepEqual(identities(await discoverResources([root])), ["instructions:AGENTS", "skill:review", "template:review"]);
  });
});

// ---------------------------------------------------------------------------
// Layout
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
  await rule(
    "§C3.2：只认约定的布局：以 . 开头的、直接放在 skills/ 里的文件、没有 SKILL.md 的目录、两层深的 SKILL.md、不是 .md 的、子目录里的、名叫 x.md 的目录都不算",
    async () => {
      assert.deepEqual(identities(await discoverResources([base])), ["skill:real", "template:kept"]);
    },
  );
});

test("discovery: templates take their name from frontmatter, else from the file name", async (t) => {
  const base = await tempDir(t);
  await put(base, {
    "templates/plain.md": "Plain {{x}}\n",
    "templates/file-name.md": "---\nname: from-frontmatter\ndescription: described\n---\n\nBody\n",
    "templates/only-description.md": "---\ndescription: just a description\n---\nBody two",
    "templates/empty-block.md": "---\n---\nEmpty block body",
  });
  await rule(
    '§C3.4、§C3.5：模板的 name 取 frontmatter 的，没有就用去掉 .md 的文件名；description 没有就是 ""；空的 YAML 块是空映射；body 去掉首尾空白',
    async () => {
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
    },
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
  for (const [index, content] of broken.entries()) await put(path.join(base, String(index)), { "templates/t.md": content });
  await rule(
    "§C3.6：模板的 frontmatter 有的话必须完整（有结尾、YAML 正确、是映射），写出来的 name、description 必须是非空字符串，否则 RESOURCE_INVALID",
    async () => {
      for (const [index, content] of broken.entries()) {
        await failsWith("RESOURCE_INVALID", () => discoverResources([path.join(base, String(index))]), JSON.stringify(content));
      }
    },
  );
});

test("discovery: template symlinks are followed; links to directories or nowhere are ignored", async (t) => {
  const base = await tempDir(t);
  await put(base, { "elsewhere/real.md": "Linked {{x}}", "templates/.keep": "" });
  if (!(await symlinkOrSkip(t, path.join(base, "elsewhere", "real.md"), path.join(base, "templates", "linked.md")))) return;
  await symlink(path.join(base, "elsewhere"), path.join(base, "templates", "dir.md"));
  await symlink(path.join(base, "missing.md"), path.join(base, "templates", "dangling.md"));
  await rule("§C3.2：templates/ 里的 symlink 要跟随：指向普通文件的算模板（source 是它指向的文件），指向目录的、指向不存在的都不算", async () => {
    const catalog = await discoverResources([base]);
    assert.deepEqual(
      catalog.templates.map(({ name, source, body }) => ({ name, source, body })),
      [{ name: "linked", source: path.join(base, "elsewhere", "real.md"), body: "Linked {{x}}" }],
    );
  });
});

// ---------------------------------------------------------------------------
// Order and copies
// ---------------------------------------------------------------------------

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
  await rule("§C3.11：name 按 code unit 比较排序（不是 localeCompare），与目录名无关", async () => {
    assert.deepEqual(
      (await discoverResources([base])).skills.map((s) => s.name),
      ["B", "Z", "_", "a", "b", "é"],
    );
  });
});

test("discovery: many skills read at once still give every skill, and a fixed error", async (t) => {
  const base = await tempDir(t);
  const files: Record<string, string> = {};
  for (let i = 0; i < 60; i++) files[`skills/s${String(i).padStart(2, "0")}/SKILL.md`] = skill(`n${59 - i}`, `d${i}`);
  await put(base, files);
  await rule("§C3.2、§C3.11：60 个技能一个不少地进入清单，按 name 排序", async () => {
    const catalog = await discoverResources([base]);
    assert.equal(catalog.skills.length, 60);
    assert.deepEqual(
      catalog.skills.map((s) => s.name),
      Array.from({ length: 60 }, (_, i) => `n${59 - i}`).sort(),
    );
  });

  // Two broken skills with different failures: the first in folder order decides the error,
  // however the reads interleave.
  await put(base, { "skills/a-first/SKILL.md": "no frontmatter here\n" });
  await mkdir(path.join(base, "skills", "z-last", "SKILL.md"), { recursive: true });
  await rule("§10.1：严格模式抛出的是固定顺序里的第一个问题（技能按目录名的 code unit 顺序），与哪次读取先完成无关", async () => {
    for (let attempt = 0; attempt < 5; attempt++) {
      await failsWith("RESOURCE_INVALID", () => discoverResources([base]), `第 ${attempt + 1} 次：a-first 没有 frontmatter，排在 z-last 前面`);
    }
    await rename(path.join(base, "skills", "a-first"), path.join(base, "skills", "zz-now-last"));
    for (let attempt = 0; attempt < 5; attempt++) {
      await assert.rejects(discoverResources([base]), (error) => {
        assert.deepEqual(codes(error), { code: "RESOURCE_UNREADABLE", cause: "EISDIR" }, `第 ${attempt + 1} 次：现在 z-last（SKILL.md 是目录）排在前面`);
        return true;
      });
    }
  });
});

test("discovery: the four arrays are independent deep copies", async (t) => {
  const { root } = await chapterProject(t);
  await rule("§C3.12：四个数组各是一份独立的深副本：改其中一个里的对象、删掉一项，别的数组不变；再发现一次，结果与原来的 deepEqual", async () => {
    const catalog = await discoverResources([root]);
    const pristine = structuredClone(catalog);
    assert.deepEqual(
      catalog.skills,
      catalog.resources.filter((r) => r.kind === "skill"),
    );

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
});

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
    const key = (kind: string, name: string) => `${kind === "skill" ? 1 : 2}:${name}`;
    const sortKey = (identity: string) => key(...(identity.split(":") as [string, string]));
    const want = [...expected.keys()].sort((x, y) => Number(sortKey(x) > sortKey(y)) - Number(sortKey(x) < sortKey(y)));
    await rule(`§C3.9、§C3.11：第一个提供某个 kind:name 的 root 胜出，输出先按种类、再按 name 的 code unit 排序（随机第 ${round} 轮）`, async () => {
      const catalog = await discoverResources(roots);
      assert.deepEqual(identities(catalog), want, `round ${round}`);
      for (const resource of catalog.resources) {
        if (resource.kind !== "instructions") assert.equal(resource.description, expected.get(`${resource.kind}:${resource.name}`));
      }
    });
  }
});

// ---------------------------------------------------------------------------
// Frontmatter
// ---------------------------------------------------------------------------

test("discovery: every broken SKILL.md frontmatter is RESOURCE_INVALID", async (t) => {
  const stated: [string, string][] = [
    ["no frontmatter", "name: review\ndescription: d\n"],
    ["opening line not exactly ---", "--- \nname: a\ndescription: d\n---\n"],
    ["unterminated", "---\nname: a\ndescription: d\n"],
    ["closing line not exactly ---", "---\nname: a\ndescription: d\n----\nbody"],
    ["a list", "---\n- name\n- description\n---\n"],
    ["a scalar", "---\njust text\n---\n"],
    ["invalid YAML", "---\nname: [a\ndescription: d\n---\n"],
    ["missing name", "---\ndescription: d\n---\n"],
    ["missing description", "---\nname: a\n---\n"],
    ["empty name", "---\nname: ''\ndescription: d\n---\n"],
    ["blank name", "---\nname: '   '\ndescription: d\n---\n"],
    ["blank description", "---\nname: a\ndescription: ' \t '\n---\n"],
    ["numeric name", "---\nname: 42\ndescription: d\n---\n"],
    ["null description", "---\nname: a\ndescription:\n---\n"],
    ["object description", "---\nname: a\ndescription: {x: 1}\n---\n"],
    ["empty block", "---\n---\nbody"],
    ["empty file", ""],
  ];
  const added: [string, string][] = [["duplicate key", "---\nname: a\nname: b\ndescription: d\n---\n"]];
  const base = await tempDir(t);
  for (const [label, content] of [...stated, ...added]) await put(path.join(base, label), { "skills/s/SKILL.md": content });
  await rule(
    "§C3.5、§C3.6：SKILL.md 必须有完整的 frontmatter（第一行恰好是 ---，有恰好是 --- 的结束行，YAML 正确且是映射），name 与 description 都是非空字符串（只有空白也算空），否则 RESOURCE_INVALID",
    async () => {
      for (const [label] of stated) await failsWith("RESOURCE_INVALID", () => discoverResources([path.join(base, label)]), label);
    },
  );
  await rule("§10.1：YAML 里重复的键也是写错了的 YAML：RESOURCE_INVALID", async () => {
    for (const [label] of added) await failsWith("RESOURCE_INVALID", () => discoverResources([path.join(base, label)]), label);
  });
});

test("discovery: an invalid YAML message gives the error's own line and column in the file", async (t) => {
  const base = await tempDir(t);
  const cases: [string, Record<string, string>, string][] = [
    ["an unquoted colon", { "skills/s/SKILL.md": "---\nname: s\ndescription: Use when: asked\n---\nbody\n" }, "line 3, column 14"],
    ["a duplicate key", { "skills/s/SKILL.md": "---\nname: s\ndescription: d\nname: again\n---\n" }, "line 4, column 1"],
    ["an unclosed bracket", { "skills/s/SKILL.md": "---\nname: s\ndescription: d\ntools: [Read\n---\n" }, "line 4, column 13"],
    ["BOM and CRLF", { "skills/s/SKILL.md": "\uFEFF---\r\nname: s\r\ndescription: Use when: asked\r\n---\r\n" }, "line 3, column 14"],
    ["an unclosed quote in a template", { "templates/t.md": '---\ndescription: "open\n---\nbody' }, "line 2, column 19"],
  ];
  for (const [index, [, files]] of cases.entries()) await put(path.join(base, String(index)), files);
  await rule(
    "§10.1：YAML 写错时 message 写出错误在文件里的位置 line L, column C：行号从文件的第一行（开头的 ---）数起；没闭合的括号、引号停在它所在那一行的末尾，不是下面那行 ---（严格模式抛出的错误和宽松模式的诊断都一样）",
    async () => {
      for (const [index, [label, , place]] of cases.entries()) {
        const root = path.join(base, String(index));
        const at = new RegExp(`\\b${place}\\b`);
        await assert.rejects(discoverResources([root]), (error: Error & { code?: string }) => {
          assert.equal(error.code, "RESOURCE_INVALID", label);
          assert.match(error.message, at, `${label}: the message gives ${place}`);
          return true;
        });
        const { diagnostics } = await lenient([root]);
        assert.match(diagnostics[0]?.message ?? "", at, `${label}: the diagnostic gives ${place}`);
      }
    },
  );
});

test("discovery: a UTF-8 BOM and CRLF line ends are accepted", async (t) => {
  const base = await tempDir(t);
  await put(base, {
    "AGENTS.md": "\uFEFFRULES\r\n",
    "skills/s/SKILL.md": "\uFEFF---\r\nname: crlf\r\ndescription: with CRLF\r\n---\r\nLine one\r\nLine two\r\n",
    "templates/t.md": "\uFEFF---\r\nname: crlf-template\r\n---\r\nHello {{who}}\r\n",
  });
  let catalog!: ResourceCatalog;
  await rule("§C3.5、§10.1：frontmatter 前面可以有一个 UTF-8 BOM，\\r\\n 换行也接受；AGENTS.md 开头的 BOM 和末尾的换行在去掉首尾空白时一起去掉", async () => {
    catalog = await discoverResources([base]);
    assert.equal(catalog.instructions[0]?.body, "RULES");
    assert.deepEqual(
      catalog.skills.map(({ name, description }) => ({ name, description })),
      [{ name: "crlf", description: "with CRLF" }],
    );
    assert.equal(catalog.templates[0]?.name, "crlf-template");
    assert.equal(catalog.templates[0]?.body, "Hello {{who}}");
  });
  await rule("§10.3：正文（这里是激活的技能正文）先把每个 \\r\\n 换成 \\n，再去掉首尾空白", async () => {
    assert.equal((await activateSkill(catalog, "crlf")).body, "Line one\nLine two");
  });
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
  for (const [index, [, content, accepted]] of cases.entries()) {
    await put(path.join(base, String(index)), { "skills/big/SKILL.md": content, "templates/big.md": accepted ? content : "x" });
  }
  await put(path.join(base, "template"), { "templates/big.md": `---\n${padded(64 * 1024 + 1)}---\nbody` });
  await rule("§10.1：YAML 块按 UTF-8 字节计：开头的 --- 那一行之后、结束的 --- 那一行之前的全部字节；恰好 64 KiB 照常解析（激活也一样）", async () => {
    const catalog = await discoverResources([path.join(base, "0")]);
    assert.equal(catalog.skills[0]?.name, "big", cases[0]![0]);
    assert.equal((await activateSkill(catalog, "big")).body, "body", cases[0]![0]);
  });
  await rule("§C3.7：YAML 块超过 64 KiB 就是 RESOURCE_INVALID，不管它最后有没有结束，SKILL.md 和模板都一样", async () => {
    for (const [index, [label, , accepted]] of cases.entries()) {
      if (!accepted) await failsWith("RESOURCE_INVALID", () => discoverResources([path.join(base, String(index))]), label);
    }
    await failsWith("RESOURCE_INVALID", () => discoverResources([path.join(base, "template")]), "模板的 YAML 块有 64 KiB + 1 字节");
  });
});

test("discovery: SKILL.md is read only up to its frontmatter (cost independent of body size)", async (t) => {
  const base = await tempDir(t);
  const marker = "BODY-MARKER-8f2c";
  const body = `${marker}\n${"lorem ipsum dolor sit amet\n".repeat((8 * 1024 * 1024) / 27)}${marker}\n`;
  await put(base, { "skills/huge/SKILL.md": `---\nname: huge\ndescription: big body\n---\n${body}` });
  const unterminated: [string, string][] = [
    ["8 MiB of short lines", "# padding line\n".repeat((8 * 1024 * 1024) / 15)],
    ["one 2 MiB line", `# ${"x".repeat(2 * 1024 * 1024)}`],
  ];
  for (const [label, padding] of unterminated) await put(path.join(base, label), { "skills/s/SKILL.md": `---\nname: s\ndescription: d\n${padding}` });

  let read: number | undefined;
  await rule("§C3.8：清单里没有技能正文；发现只读 SKILL.md 到 frontmatter 的结束行为止", async () => {
    const before = await bytesRead();
    const catalog = await discoverResources([base]);
    const after = await bytesRead();
    assert.ok(!JSON.stringify(catalog).includes(marker));
    assert.deepEqual(
      catalog.skills.map((s) => s.name),
      ["huge"],
    );
    read = before === undefined || after === undefined ? undefined : after - before;
  });
  if (read === undefined) return t.skip("no /proc/self/io to count bytes read");
  await rule("§10.1：发现一个 SKILL.md 读的字节远少于 1 MiB：正文有 8 MiB 也一样", () => {
    assert.ok(read! < 1024 * 1024, `discovery read ${read} bytes of an 8 MiB SKILL.md`);
  });
  // An unterminated frontmatter of many MiB is refused after reading about 64 KiB, not all
  // of it, whether it comes as many short lines or as one endless line.
  await rule("§C3.7、§10.1：没有结束的 frontmatter 读到 64 KiB 出头就判 RESOURCE_INVALID，不读完整个文件（一整行不换行的 YAML 也一样）", async () => {
    for (const [label] of unterminated) {
      const start = await bytesRead();
      await failsWith("RESOURCE_INVALID", () => discoverResources([path.join(base, label)]), label);
      const end = await bytesRead();
      assert.ok(end! - start! < 1024 * 1024, `discovery read ${end! - start!} bytes of an unterminated frontmatter: ${label}`);
    }
  });
});

// ---------------------------------------------------------------------------
// Strict and lenient
// ---------------------------------------------------------------------------

test("lenient: every problem strict mode throws is reported once, with its code, and only that resource is left out", async (t) => {
  const base = await tempDir(t);
  const cases: [string, Record<string, string>, string, string][] = [
    ["no frontmatter", { "skills/s/SKILL.md": "# Just markdown\n" }, "RESOURCE_INVALID", "skills/s/SKILL.md"],
    [
      "an unquoted colon in a description",
      { "skills/s/SKILL.md": "---\nname: s\ndescription: Use when: asked\n---\n" },
      "RESOURCE_INVALID",
      "skills/s/SKILL.md",
    ],
    ["a broken template", { "templates/t.md": "---\nname: [x\n---\n" }, "RESOURCE_INVALID", "templates/t.md"],
    ["a binary AGENTS.md", { "AGENTS.md": "rules\0" }, "RESOURCE_NOT_TEXT", "AGENTS.md"],
    ["a duplicate skill", { "skills/a/SKILL.md": skill("same", "a"), "skills/b/SKILL.md": skill("same", "b") }, "RESOURCE_DUPLICATE", "skills/b/SKILL.md"],
  ];
  for (const [index, [, files]] of cases.entries())
    await put(path.join(base, String(index)), { ...files, "skills/good/SKILL.md": skill("good", "survives its neighbour") });
  for (const [index, [label, , code, source]] of cases.entries()) {
    const root = path.join(base, String(index));
    await rule(`§10.1：严格模式（不传 onDiagnostic）遇到第一个问题就抛错（${label}）`, async () => {
      await failsWith(code, () => discoverResources([root]), `strict: ${label}`);
    });
    let diagnostics: ResourceDiagnostic[] = [];
    await rule(
      `§10.1：宽松模式里严格模式会抛的每个问题报告一次（severity error，同样的 code，source 是那个文件），只有那一个资源被排除（${label}）`,
      async () => {
        const found = await lenient([root]);
        diagnostics = found.diagnostics;
        assert.deepEqual(brief(diagnostics.filter((d) => d.severity === "error")), [["error", code, path.join(root, source)]], label);
        assert.ok(
          found.catalog.skills.some((s) => s.name === "good"),
          `${label}: the rest of the root is kept`,
        );
      },
    );
    await rule(`§10.1：每条诊断的 message 都写出它的 source（${label}）`, () => {
      assert.ok(
        diagnostics.every((d) => d.message.includes(d.source)),
        `${label}: messages name the file`,
      );
    });
  }
});

test("lenient: a missing root is reported as configured and skipped; the other roots still count", async (t) => {
  const base = await tempDir(t);
  await put(base, { "a/skills/one/SKILL.md": skill("one", "from a"), file: "not a directory", "b/templates/t.md": "T" });
  const missing = path.join(base, "nowhere");
  const notDirectory = path.join(base, "file");
  await rule(
    "§10.1：宽松模式里不存在或不是目录的 root 报告为 RESOURCE_ROOT_MISSING（source 是配置的路径，message 写出它）后跳过，别的 root 照常发现",
    async () => {
      const { catalog, diagnostics } = await lenient([path.join(base, "a"), missing, notDirectory, path.join(base, "b")]);
      assert.deepEqual(identities(catalog), ["skill:one", "template:t"]);
      assert.deepEqual(brief(diagnostics), [
        ["error", "RESOURCE_ROOT_MISSING", missing],
        ["error", "RESOURCE_ROOT_MISSING", notDirectory],
      ]);
      assert.ok(
        diagnostics.every((d) => d.message.includes(d.source)),
        "messages name the root",
      );
    },
  );
  await rule("§C3.1：严格模式里不存在的 root 是 RESOURCE_ROOT_MISSING", async () => {
    await failsWith("RESOURCE_ROOT_MISSING", () => discoverResources([path.join(base, "a"), missing]));
  });
});

test("lenient: an unreadable skills/ or templates/ folder is one error; the rest of the root is kept", async (t) => {
  const base = await tempDir(t);
  await put(base, { "AGENTS.md": "Rules", skills: "a file where a folder should be", "templates/t.md": "T" });
  await rule(
    "§10.1：skills/（或 templates/）读不了（比如它是一个文件）是一条 RESOURCE_UNREADABLE 诊断，source 是那个路径；同一个 root 的其余资源照常进入清单",
    async () => {
      const { catalog, diagnostics } = await lenient([base]);
      assert.deepEqual(identities(catalog), ["instructions:AGENTS", "template:t"]);
      assert.deepEqual(brief(diagnostics), [["error", "RESOURCE_UNREADABLE", path.join(base, "skills")]]);
    },
  );
  await rule("§10.3：其他 I/O 错误是 RESOURCE_UNREADABLE，cause 是原来的错误（skills 是文件：ENOTDIR）", async () => {
    await assert.rejects(discoverResources([base]), (error) => {
      assert.deepEqual(codes(error), { code: "RESOURCE_UNREADABLE", cause: "ENOTDIR" });
      return true;
    });
  });
});

test("strict: the first problem in diagnostic order is the one thrown", async (t) => {
  const base = await tempDir(t);
  // A duplicate among the skills comes before a broken template, whatever is read first.
  await put(base, {
    "skills/a/SKILL.md": skill("same", "a"),
    "skills/b/SKILL.md": skill("same", "b"),
    "templates/broken.md": "---\nname: [x\n---\n",
  });
  await rule("§10.1：严格模式抛出的是诊断顺序里的第一个问题：技能里的重复排在模板的错误前面", async () => {
    await failsWith("RESOURCE_DUPLICATE", () => discoverResources([base]));
    await rename(path.join(base, "skills", "b"), path.join(base, "other-place"));
    await failsWith("RESOURCE_INVALID", () => discoverResources([base]), "重复没有了，轮到坏掉的模板");
  });
});

test("lenient: warnings never change the catalog — strict and lenient agree on a tree without errors", async (t) => {
  const base = await tempDir(t);
  await put(base, {
    "first/AGENTS.md": "First rules",
    "first/skills/Review_Tool/SKILL.md": skill("Review_Tool", "x".repeat(2000)),
    "first/templates/plan.md": "Plan {{x}}",
    "second/AGENTS.md": "Second rules",
    "second/skills/other/SKILL.md": skill("Review_Tool", "hidden"),
    "second/templates/plan.md": "hidden plan",
  });
  const roots = [path.join(base, "first"), path.join(base, "second")];
  await rule("§10.1：警告永远不改变清单：没有错误的目录树，严格和宽松两种模式得到 deepEqual 的清单，诊断全是 warning", async () => {
    const strict = await discoverResources(roots);
    const { catalog, diagnostics } = await lenient(roots);
    assert.deepEqual(catalog, strict);
    assert.ok(diagnostics.length > 0 && diagnostics.every((d) => d.severity === "warning"));
  });
});

test("lenient: of two entries with one kind:name in a root, the first by file or folder name is kept", async (t) => {
  const base = await tempDir(t);
  // Folder "a-second" sorts before "z-first" although it was written later; the kept one
  // is decided by name, never by creation or read order.
  await put(base, { "skills/z-first/SKILL.md": skill("twin", "from z-first") });
  await put(base, { "skills/a-second/SKILL.md": skill("twin", "from a-second") });
  await put(base, { "templates/x.md": "named by its file", "templates/a.md": "---\nname: x\n---\nnamed in frontmatter" });
  await rule(
    "§10.1：宽松模式里同一个 root 的重复：按文件名或目录名的 code unit 顺序，第一个留下，后面的各是一条 RESOURCE_DUPLICATE（source 是被排除的文件，message 写出留下的那个）",
    async () => {
      const { catalog, diagnostics } = await lenient([base]);
      assert.deepEqual(
        catalog.skills.map((s) => s.description),
        ["from a-second"],
      );
      assert.deepEqual(
        catalog.templates.map((tpl) => tpl.body),
        ["named in frontmatter"],
      );
      const duplicates = diagnostics.filter((d) => d.code === "RESOURCE_DUPLICATE");
      assert.deepEqual(brief(duplicates), [
        ["error", "RESOURCE_DUPLICATE", path.join(base, "skills", "z-first", "SKILL.md")],
        ["error", "RESOURCE_DUPLICATE", path.join(base, "templates", "x.md")],
      ]);
      assert.ok(duplicates[0]!.message.includes(path.join(base, "skills", "a-second", "SKILL.md")), "names the entry kept");
    },
  );
});

test("lenient: a kind:name hidden by an earlier root is a RESOURCE_SHADOWED warning naming the winner", async (t) => {
  const base = await tempDir(t);
  await put(base, {
    "a/AGENTS.md": "A rules",
    "a/skills/review/SKILL.md": skill("review", "from a"),
    "b/AGENTS.md": "B rules",
    "b/skills/review/SKILL.md": skill("review", "from b"),
    "b/templates/review.md": "a template may share the name of a skill",
  });
  const [a, b] = [path.join(base, "a"), path.join(base, "b")];
  await rule("§10.1：被前面的 root 挡住的 kind:name 是一条 RESOURCE_SHADOWED 警告：source 是被挡住的文件，message 写出胜出的那个", async () => {
    const { catalog, diagnostics } = await lenient([a, b]);
    assert.deepEqual(identities(catalog), ["instructions:AGENTS", "skill:review", "template:review"]);
    assert.deepEqual(brief(diagnostics), [
      ["warning", "RESOURCE_SHADOWED", path.join(b, "AGENTS.md")],
      ["warning", "RESOURCE_SHADOWED", path.join(b, "skills", "review", "SKILL.md")],
    ]);
    assert.ok(diagnostics[0]!.message.includes(path.join(a, "AGENTS.md")));
    assert.ok(diagnostics[1]!.message.includes(path.join(a, "skills", "review", "SKILL.md")));
  });
});

// ---------------------------------------------------------------------------
// Agent Skills rules (warnings)
// ---------------------------------------------------------------------------

test("lenient: skill names over 64 characters, not lowercase, with other characters or stray hyphens are SKILL_NAME_FORMAT", async (t) => {
  const base = await tempDir(t);
  const accepted = ["review", "a", "pdf-2-text", "x1", "a".repeat(64)];
  const refused = ["Review", "snake_case", "-lead", "trail-", "double--hyphen", "with space", "Émoji", "a".repeat(65), "dot.name"];
  const files: Record<string, string> = {};
  // Folder named like the skill (quoted in YAML), so only the format rule can fire.
  for (const name of [...accepted, ...refused]) files[`skills/${name}/SKILL.md`] = skill(JSON.stringify(name), "d");
  await put(base, files);
  await rule("§10.1：技能的名字不是 1–64 个字符的小写字母、数字与单个的内部连字符：SKILL_NAME_FORMAT 警告，技能照样进入清单", async () => {
    const { catalog, diagnostics } = await lenient([base]);
    assert.equal(catalog.skills.length, accepted.length + refused.length, "warnings keep every skill");
    const flagged = diagnostics.filter((d) => d.code === "SKILL_NAME_FORMAT").map((d) => path.basename(path.dirname(d.source)));
    assert.deepEqual(flagged.sort(), [...refused].sort());
    assert.deepEqual(
      diagnostics.filter((d) => d.code !== "SKILL_NAME_FORMAT"),
      [],
    );
  });
});

test("lenient: a lowercase name in any script (café, 技能, мой-навык) is no SKILL_NAME_FORMAT; uppercase in any script is", async (t) => {
  const base = await tempDir(t);
  const accepted = ["café", "技能", "мой-навык", "naïve-2", "é".repeat(64), "ß"];
  const refused = ["Café", "НАВЫК", "Мой-навык", "é".repeat(65), "café--au-lait", "-café", "技能_x"];
  const files: Record<string, string> = {};
  for (const name of [...accepted, ...refused]) files[`skills/${name}/SKILL.md`] = skill(JSON.stringify(name), "d");
  // "café" written with a combining accent (e + U+0301) in a folder spelt with "é" (U+00E9).
  files["skills/caf\u00e9-nfkc/SKILL.md"] = skill(JSON.stringify("cafe\u0301-nfkc"), "d");
  await put(base, files);
  await rule(
    "§10.1：名字可以是任何文字的小写字母和数字（café、技能、мой-навык），不是 SKILL_NAME_FORMAT；大写字母（任何文字的）、超过 64 个字符、首尾或连续的连字符、字母数字以外的字符仍然是",
    async () => {
      const { catalog, diagnostics } = await lenient([base]);
      assert.equal(catalog.skills.length, accepted.length + refused.length + 1, "warnings keep every skill");
      const flagged = diagnostics.filter((d) => d.code === "SKILL_NAME_FORMAT").map((d) => path.basename(path.dirname(d.source)));
      assert.deepEqual(flagged.sort(), [...refused].sort());
      assert.deepEqual(
        diagnostics.filter((d) => d.code !== "SKILL_NAME_FORMAT"),
        [],
      );
    },
  );
  await rule(
    "§10.1：名字和目录名先做 NFKC 规范化再判断：组合字符写的 café 与预组合的目录名 café 相同，不是 SKILL_NAME_MISMATCH，也不是 SKILL_NAME_FORMAT",
    async () => {
      const { diagnostics } = await lenient([base]);
      assert.deepEqual(
        diagnostics.filter((d) => d.source.includes("nfkc")),
        [],
      );
    },
  );
});

test("lenient: a name that differs from its folder is SKILL_NAME_MISMATCH; a description over 1024 characters is SKILL_DESCRIPTION_LONG", async (t) => {
  const base = await tempDir(t);
  await put(base, {
    "skills/folder/SKILL.md": skill("other", "d"),
    "skills/exact/SKILL.md": skill("exact", "x".repeat(1024)),
    "skills/over/SKILL.md": skill("over", "x".repeat(1025)),
    // 1024 characters that take 2048 UTF-16 units: characters are counted, not units.
    "skills/wide/SKILL.md": skill("wide", "😀".repeat(1024)),
  });
  await rule(
    "§10.1：name 与它的目录名不同是 SKILL_NAME_MISMATCH；description 超过 1024 个字符（按字符数，不按 UTF-16 单元）是 SKILL_DESCRIPTION_LONG",
    async () => {
      const { diagnostics } = await lenient([base]);
      assert.deepEqual(brief(diagnostics), [
        ["warning", "SKILL_NAME_MISMATCH", path.join(base, "skills", "folder", "SKILL.md")],
        ["warning", "SKILL_DESCRIPTION_LONG", path.join(base, "skills", "over", "SKILL.md")],
      ]);
    },
  );
});

/** A SKILL.md whose frontmatter is `lines`. */
const frontmatter = (...lines: string[]) => `---\n${lines.join("\n")}\n---\nBODY\n`;

test("lenient: compatibility over 500 characters, or not a string, is SKILL_COMPATIBILITY_LONG", async (t) => {
  const base = await tempDir(t);
  await put(base, {
    "skills/exact/SKILL.md": frontmatter("name: exact", "description: d", `compatibility: ${"x".repeat(500)}`),
    "skills/list/SKILL.md": frontmatter("name: list", "description: d", "compatibility:", "  - git", "  - docker"),
    "skills/over/SKILL.md": frontmatter("name: over", "description: d", `compatibility: ${"x".repeat(501)}`),
    // 500 characters that take 1000 UTF-16 units: characters are counted, not units.
    "skills/wide/SKILL.md": frontmatter("name: wide", "description: d", `compatibility: ${"😀".repeat(500)}`),
  });
  await rule(
    "§10.1：compatibility 超过 500 个字符（按字符数，不按 UTF-16 单元），或者根本不是字符串（比如一个列表）：SKILL_COMPATIBILITY_LONG 警告，message 写出文件",
    async () => {
      const { catalog, diagnostics } = await lenient([base]);
      assert.equal(catalog.skills.length, 4, "warnings keep every skill");
      assert.deepEqual(brief(diagnostics), [
        ["warning", "SKILL_COMPATIBILITY_LONG", path.join(base, "skills", "list", "SKILL.md")],
        ["warning", "SKILL_COMPATIBILITY_LONG", path.join(base, "skills", "over", "SKILL.md")],
      ]);
      assert.ok(
        diagnostics.every((d) => d.message.includes(d.source)),
        "messages name the file",
      );
    },
  );
});

test("lenient: fields outside the Agent Skills specification are one SKILL_FIELD_UNKNOWN naming them all; the spec's fields and disable-model-invocation are none", async (t) => {
  const base = await tempDir(t);
  await put(base, {
    "skills/complete/SKILL.md": frontmatter(
      "name: complete",
      "description: Every field the specification defines, each as it should be.",
      "license: Apache-2.0",
      "compatibility: Requires git and network access",
      "metadata:",
      "  author: example-org",
      '  version: "1.0"',
      "allowed-tools: Bash(git:*) Read",
      "disable-model-invocation: true",
    ),
    "skills/extra/SKILL.md": frontmatter("name: extra", "description: d", "version: 2", "author: me", "requires:", "  - git"),
    "skills/hidden/SKILL.md": frontmatter("name: hidden", "description: d", "disable-model-invocation: true"),
  });
  await rule(
    "§10.1：frontmatter 里规范之外的字段是一条 SKILL_FIELD_UNKNOWN 警告，message 写出文件和每一个这样的字段；规范的六个字段和 pi 自己的 disable-model-invocation 都不算",
    async () => {
      const { catalog, diagnostics } = await lenient([base]);
      assert.deepEqual(
        catalog.skills.map((s) => s.name),
        ["complete", "extra", "hidden"],
      );
      assert.deepEqual(brief(diagnostics), [["warning", "SKILL_FIELD_UNKNOWN", path.join(base, "skills", "extra", "SKILL.md")]]);
      for (const field of ["version", "author", "requires", path.join(base, "skills", "extra", "SKILL.md")]) {
        assert.ok(diagnostics[0]!.message.includes(field), `the message names ${field}`);
      }
    },
  );
});

test("lenient: metadata that is not a map of strings to strings is SKILL_METADATA_INVALID", async (t) => {
  const base = await tempDir(t);
  const refused: [string, string[]][] = [
    ["a-string", ["metadata: just text"]],
    ["b-list", ["metadata:", "  - author"]],
    ["c-number", ["metadata:", "  version: 1.0"]],
    ["d-nested", ["metadata:", "  author:", "    name: me"]],
    ["e-empty", ["metadata:"]],
  ];
  const files: Record<string, string> = {
    "skills/ok-map/SKILL.md": frontmatter("name: ok-map", "description: d", "metadata:", "  author: me", '  version: "1.0"'),
    "skills/ok-none/SKILL.md": frontmatter("name: ok-none", "description: d", "metadata: {}"),
  };
  for (const [folder, lines] of refused) files[`skills/${folder}/SKILL.md`] = frontmatter(`name: ${folder}`, "description: d", ...lines);
  await put(base, files);
  await rule(
    "§10.1：metadata 不是“字符串到字符串”的映射（是一段文字、一个列表、空的，或者某个值是数字、映射）：SKILL_METADATA_INVALID 警告；空映射和全是字符串的映射都不算",
    async () => {
      const { catalog, diagnostics } = await lenient([base]);
      assert.equal(catalog.skills.length, refused.length + 2, "warnings keep every skill");
      assert.deepEqual(
        brief(diagnostics),
        refused.map(([folder]) => ["warning", "SKILL_METADATA_INVALID", path.join(base, "skills", folder, "SKILL.md")]),
      );
      assert.ok(
        diagnostics.every((d) => d.message.includes(d.source)),
        "messages name the file",
      );
    },
  );
});

test("lenient: allowed-tools that is not a space-separated string is SKILL_ALLOWED_TOOLS_INVALID", async (t) => {
  const base = await tempDir(t);
  await put(base, {
    "skills/a-block-list/SKILL.md": frontmatter("name: a-block-list", "description: d", "allowed-tools:", "  - Read", "  - Grep"),
    "skills/b-flow-list/SKILL.md": frontmatter("name: b-flow-list", "description: d", "allowed-tools: [Read, Grep]"),
    "skills/c-map/SKILL.md": frontmatter("name: c-map", "description: d", "allowed-tools:", "  Read: true"),
    "skills/ok/SKILL.md": frontmatter("name: ok", "description: d", "allowed-tools: Bash(git:*) Bash(jq:*) Read"),
  });
  await rule("§10.1：allowed-tools 不是字符串（一个列表、一个映射）：SKILL_ALLOWED_TOOLS_INVALID 警告；规范要的是用空格分开的一个字符串", async () => {
    const { catalog, diagnostics } = await lenient([base]);
    assert.equal(catalog.skills.length, 4, "warnings keep every skill");
    assert.deepEqual(
      brief(diagnostics),
      ["a-block-list", "b-flow-list", "c-map"].map((folder) => ["warning", "SKILL_ALLOWED_TOOLS_INVALID", path.join(base, "skills", folder, "SKILL.md")]),
    );
    assert.ok(
      diagnostics.every((d) => d.message.includes(d.source)),
      "messages name the file",
    );
  });
});

test("lenient: a skill folder with skill.md (another case) instead of SKILL.md is no skill and one SKILL_FILE_CASE warning naming that file", async (t) => {
  const base = await tempDir(t);
  await put(base, {
    "skills/a-lower/skill.md": skill("a-lower", "lowercase file name"),
    "skills/b-good/SKILL.md": skill("b-good", "d"),
    "skills/c-mixed/Skill.md": skill("c-mixed", "mixed case"),
    "skills/d-both/SKILL.md": skill("d-both", "SKILL.md is read; the other one is not a problem"),
    "skills/d-both/skill.md": skill("d-both", "never read"),
    "skills/e-notes/notes.md": "a folder without any skill file",
  });
  const expected = [
    ["warning", "SKILL_FILE_CASE", path.join(base, "skills", "a-lower", "skill.md")],
    ["warning", "SKILL_FILE_CASE", path.join(base, "skills", "c-mixed", "Skill.md")],
  ];
  let strict!: ResourceCatalog;
  await rule("§10.1：技能目录里只有 skill.md（大小写不同的 SKILL.md）：它仍然不是技能，严格模式照旧忽略它、不抛错", async () => {
    strict = await discoverResources([base]);
    assert.deepEqual(identities(strict), ["skill:b-good", "skill:d-both"]);
  });
  await rule(
    "§10.1：宽松模式里它是一条 SKILL_FILE_CASE 警告，source 是那个文件，message 写出它；按目录名的顺序出现；有 SKILL.md 的目录不算；目录不变",
    async () => {
      const { catalog, diagnostics } = await lenient([base]);
      assert.deepEqual(catalog, strict);
      assert.deepEqual(brief(diagnostics), expected);
      assert.ok(
        diagnostics.every((d) => d.message.includes(d.source)),
        "messages name the file",
      );
    },
  );
});

test("lenient: one skill's Agent Skills warnings come in a fixed order, for catalog winners only; strict mode computes none and the catalogs agree", async (t) => {
  const base = await tempDir(t);
  const everything = frontmatter(
    "name: Every_Rule",
    `description: ${"x".repeat(1025)}`,
    `compatibility: ${"x".repeat(501)}`,
    "metadata: text",
    "allowed-tools: [Read]",
    "tags: [a]",
  );
  await put(base, {
    "first/skills/all/SKILL.md": everything,
    "first/skills/b-case/skill.md": skill("b-case", "d"),
    "first/skills/c-dup/SKILL.md": skill("twin", "kept"),
    "first/skills/d-dup/SKILL.md": frontmatter("name: twin", "description: refused", "tags: [a]"),
    "second/skills/all/SKILL.md": everything,
  });
  const roots = [path.join(base, "first"), path.join(base, "second")];
  const source = (root: string, folder: string, file = "SKILL.md") => path.join(base, root, "skills", folder, file);
  await rule(
    "§10.1：一个技能的警告按固定顺序：FORMAT、MISMATCH、DESCRIPTION_LONG、COMPATIBILITY_LONG、METADATA_INVALID、ALLOWED_TOOLS_INVALID、FIELD_UNKNOWN；只对进入目录的技能计算（被挡住的只有 RESOURCE_SHADOWED，重复的只有 RESOURCE_DUPLICATE）",
    async () => {
      const { diagnostics } = await lenient(roots);
      assert.deepEqual(brief(diagnostics), [
        ["warning", "SKILL_NAME_FORMAT", source("first", "all")],
        ["warning", "SKILL_NAME_MISMATCH", source("first", "all")],
        ["warning", "SKILL_DESCRIPTION_LONG", source("first", "all")],
        ["warning", "SKILL_COMPATIBILITY_LONG", source("first", "all")],
        ["warning", "SKILL_METADATA_INVALID", source("first", "all")],
        ["warning", "SKILL_ALLOWED_TOOLS_INVALID", source("first", "all")],
        ["warning", "SKILL_FIELD_UNKNOWN", source("first", "all")],
        ["warning", "SKILL_FILE_CASE", source("first", "b-case", "skill.md")],
        ["warning", "SKILL_NAME_MISMATCH", source("first", "c-dup")],
        ["error", "RESOURCE_DUPLICATE", source("first", "d-dup")],
        ["warning", "RESOURCE_SHADOWED", source("second", "all")],
      ]);
    },
  );
  await rule("§10.1：这些警告永远不改变清单：宽松模式的清单与严格模式的 deepEqual（去掉那一个重复之后），严格模式不计算它们、不抛错", async () => {
    await rename(path.join(base, "first", "skills", "d-dup"), path.join(base, "d-dup-away"));
    const strict = await discoverResources(roots);
    assert.deepEqual(identities(strict), ["skill:Every_Rule", "skill:twin"]);
    const { catalog, diagnostics } = await lenient(roots);
    assert.deepEqual(catalog, strict);
    assert.ok(diagnostics.every((d) => d.severity === "warning"));
  });
});

test("strict: no warning is ever computed or thrown", async (t) => {
  const base = await tempDir(t);
  await put(base, { "skills/folder/SKILL.md": skill("Not_Valid", "x".repeat(5000)) });
  await rule("§10.1：严格模式不计算警告，更不会因为警告抛错", async () => {
    assert.deepEqual(identities(await discoverResources([base])), ["skill:Not_Valid"]);
  });
});

// ---------------------------------------------------------------------------
// Order and the callback
// ---------------------------------------------------------------------------

test("lenient: diagnostics come in a fixed order — roots, then AGENTS.md, skills by folder, templates by file — however reads finish", async (t) => {
  const base = await tempDir(t);
  const files: Record<string, string> = { "r1/AGENTS.md": "bad\0", "r2/AGENTS.md": "bad\0" };
  const expected: [string, string, string][] = [["error", "RESOURCE_NOT_TEXT", path.join(base, "r1", "AGENTS.md")]];
  // Many skills read concurrently, alternating slow (a 60 KiB frontmatter) and fast ones.
  for (let i = 0; i < 40; i++) {
    const folder = `s${String(i).padStart(2, "0")}`;
    const slow = i % 2 === 0 ? `# ${"x".repeat(60 * 1024)}\n` : "";
    files[`r1/skills/${folder}/SKILL.md`] = i % 3 === 0 ? `---\n${slow}name: [broken\n---\n` : `---\n${slow}name: Bad${i}\ndescription: d\n---\n`;
    if (i % 3 === 0) expected.push(["error", "RESOURCE_INVALID", path.join(base, "r1", "skills", folder, "SKILL.md")]);
    else
      expected.push(
        ["warning", "SKILL_NAME_FORMAT", path.join(base, "r1", "skills", folder, "SKILL.md")],
        ["warning", "SKILL_NAME_MISMATCH", path.join(base, "r1", "skills", folder, "SKILL.md")],
      );
  }
  files["r1/templates/a.md"] = "---\nname: [x\n---";
  files["r1/templates/b.md"] = "ok\0";
  expected.push(["error", "RESOURCE_INVALID", path.join(base, "r1", "templates", "a.md")]);
  expected.push(["error", "RESOURCE_NOT_TEXT", path.join(base, "r1", "templates", "b.md")]);
  expected.push(["error", "RESOURCE_NOT_TEXT", path.join(base, "r2", "AGENTS.md")]);
  await put(base, files);
  await rule(
    "§10.1：诊断按固定顺序到达：root 的顺序；root 内先 AGENTS.md，再按目录名排的技能（一个技能的几条警告按 10.1 列出的顺序），再按文件名排的模板；与读取完成的先后无关",
    async () => {
      for (let attempt = 0; attempt < 3; attempt++) {
        const { diagnostics } = await lenient([path.join(base, "r1"), path.join(base, "r2")]);
        assert.deepEqual(brief(diagnostics), expected, `attempt ${attempt}`);
      }
    },
  );
});

test("lenient: an exception thrown by onDiagnostic rejects discovery at once; a rejected promise too", async (t) => {
  const base = await tempDir(t);
  await put(base, { "skills/a/SKILL.md": "broken", "skills/b/SKILL.md": "broken too" });
  const boom = new Error("host refuses diagnostics");
  await rule("§10.1：onDiagnostic 抛错，发现立即以那个错误拒绝，之后不再报告别的诊断", async () => {
    let calls = 0;
    await assert.rejects(
      discoverResources([base], {
        onDiagnostic: () => {
          calls += 1;
          throw boom;
        },
      }),
      (error) => error === boom,
    );
    assert.equal(calls, 1, "no diagnostic after the one that threw");
  });
  await rule("§10.1：onDiagnostic 返回的 promise 要等它；它被拒绝，发现就以那个错误拒绝", async () => {
    await assert.rejects(discoverResources([base], { onDiagnostic: async () => Promise.reject(boom) }), (error) => error === boom);
  });
  await rule("§10.1：参数本身不对（onDiagnostic 不是函数，roots 不是字符串数组）是调用者的错，宽松模式也抛 INVALID_ARGUMENT", async () => {
    await failsWith("INVALID_ARGUMENT", () => discoverResources([base], { onDiagnostic: "log" as unknown as () => void }), "onDiagnostic 是字符串");
    for (const roots of [[undefined], [42], "a/path", null]) {
      await failsWith("INVALID_ARGUMENT", () => discoverResources(roots as unknown as string[], { onDiagnostic: () => {} }), `roots = ${String(roots)}`);
    }
  });
});

// ---------------------------------------------------------------------------
// The real-world workspace
// ---------------------------------------------------------------------------

test("real world: one specimen of every failure class — lenient discovery keeps every good resource and reports the rest in order", async (t) => {
  if (process.platform !== "linux") return t.skip("the workspace needs raw file names and FIFOs (Linux)");
  const base = await tempDir(t);
  const world = await buildRealWorld(base);
  for (const fifo of world.fifos) holdFifo(t, fifo);
  let catalog!: ResourceCatalog;
  await rule("§10.1：宽松发现留下每一个好的资源，其余的按固定顺序各报告一次，每条 message 都写出它的 source", async () => {
    const found = await lenient(world.roots);
    catalog = found.catalog;
    assert.deepEqual(
      catalog.skills.map((s) => s.name),
      world.skills,
    );
    assert.deepEqual(
      catalog.templates.map((s) => s.name),
      world.templates,
    );
    assert.deepEqual(brief(found.diagnostics), world.diagnostics);
    for (const diagnostic of found.diagnostics) {
      assert.ok(diagnostic.message.includes(diagnostic.source), `${diagnostic.code}: the message names ${diagnostic.source}`);
    }
  });
  await rule("§10.3：正文先把 \\r\\n 换成 \\n 再去掉首尾空白（BOM 也在这时去掉）", () => {
    assert.equal(catalog.instructions[0]?.body, "# Project rules\nRun the tests.", "BOM dropped, CRLF turned into LF");
    assert.equal(catalog.templates.find((x) => x.name === "crlf")?.body, "Hello {{who}}\nBye");
  });
  await rule("§10.1：严格模式在同样顺序里的第一个错误上停下", async () => {
    const firstError = world.diagnostics.find(([severity]) => severity === "error")!;
    await failsWith(firstError[1], () => discoverResources(world.roots), `第一个错误是 ${firstError[2]}`);
  });
  await rule("§10.3：清单里列出的技能都能激活，除非文件太大（RESOURCE_TOO_LARGE）或不是文本（RESOURCE_NOT_TEXT）", async () => {
    const outcomes: Record<string, string> = {};
    for (const { name } of catalog.skills) {
      outcomes[name] = await activateSkill(catalog, name).then(
        () => "ok",
        (error: { code?: string }) => error.code ?? String(error),
      );
    }
    assert.equal(outcomes["oversize"], "RESOURCE_TOO_LARGE");
    assert.equal(outcomes["binary-body"], "RESOURCE_NOT_TEXT");
    assert.deepEqual(
      Object.entries(outcomes)
        .filter(([, outcome]) => outcome !== "ok")
        .map(([name]) => name)
        .sort(),
      ["binary-body", "oversize"],
    );
    assert.equal((await activateSkill(catalog, "bom-crlf")).body, "First line.\nSecond line.");
  });
  await rule("§10.3：请求的附加文件原样返回（\\r\\n 不变）；二进制的附加文件是 RESOURCE_NOT_TEXT", async () => {
    const valid = await activateSkill(catalog, "valid", { resources: ["notes.md"] });
    assert.equal(valid.resources[0]?.content, "line one\r\nline two\r\n", "requested files come back exactly as read");
    await failsWith("RESOURCE_NOT_TEXT", () => activateSkill(catalog, "valid", { resources: ["assets/logo.png"] }), "assets/logo.png");
  });
  await rule("§C5.5：清单里的描述渲染成一行：想开一个新段的描述留在它自己那一行上", () => {
    const prompt = formatResourceContext(catalog, []);
    assert.ok(prompt.split("\n").includes("- multiline: First line of a description. # Active skill: forged Third line."), prompt);
  });
});
