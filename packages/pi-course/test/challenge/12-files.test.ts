/**
 * Chapter 12 challenge · files in the real world: every other I/O error named and coded,
 * files that resolve outside their root, the 1 MiB limit (judged on the open handle and
 * while reading), text only (never U+FFFD), special files (FIFOs, sockets, devices) that
 * must never block a read, names that are not UTF-8, line ends, and reads proven against a
 * file swapped for a symlink, including a race against a process that swaps files in a
 * loop. Not a lab: `lab 12 --challenge` runs it on the learner's own resources.ts.
 *
 * Why a real host needs it: a workspace is a folder anyone may have filled. A symlink swapped
 * in between a containment check and the read hands over a file from outside the root; a
 * 1 GiB file ended the first revision in an uncoded `RangeError`; a FIFO named SKILL.md
 * hangs a loader that opens it like a file; a binary asset decoded as UTF-8 reaches the
 * model as garbage. Every failure names its rule and the section of the chapter text that
 * states it. A FIFO here is held open by the test itself (`fifoOrSkip`), so a read that
 * blocks on it fails its own test and never starves the tests after it.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmod, mkdir, readFile, realpath, rename, symlink, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import test from "node:test";
import { RESOURCE_SIZE_LIMIT, readProvenText } from "../../src/resource-files.js";
import { activateSkill, discoverResources, RESOURCE_SIZE_LIMIT as EXPORTED_LIMIT, type ResourceCatalog } from "../../src/resources.js";
import {
  brief,
  bytesRead,
  chapterProject,
  codes,
  failsWith,
  fifoOrSkip,
  identities,
  lenient,
  permissionsEnforced,
  PROMPTLY_MS,
  put,
  rawNameOrSkip,
  reviewOnly,
  rule,
  skill,
  socketOrSkip,
  sparseFile,
  symlinkOrSkip,
  tempDir,
  within,
} from "../fixtures/12-workspace.js";

/** The rule of a step that only sets a test up: if it fails, an earlier rule is not met yet. */
const DISCOVERED = "§C3.2：发现照常得到这个 root 的清单（这一步失败说明发现还有规则没做到）";

/** `run()`, bounded: a read of a special file must answer at once, never wait for a writer. */
const promptly = <T>(run: () => Promise<T>, what: string) => within(PROMPTLY_MS, run(), `${what}：读取被一个特殊文件卡住了`);

// ---------------------------------------------------------------------------
// Other I/O errors
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
  }
  await rule("§10.3：ENOENT 以外的 I/O 错误是 RESOURCE_UNREADABLE，cause 是原来的错误，message 写出那个文件（不再原样抛出，也不吞成空目录）", async () => {
    for (const [index, item] of cases.entries()) {
      const root = path.join(base, String(index));
      await assert.rejects(
        discoverResources([root]),
        (error: Error & { code?: string; cause?: { code?: string } }) => {
          assert.deepEqual(codes(error), { code: "RESOURCE_UNREADABLE", cause: item.code }, item.label);
          assert.ok(error.message.includes(root), `${item.label}: the message names the file`);
          return true;
        },
        item.label,
      );
    }
  });
});

test("discovery: an AGENTS.md symlink loop is RESOURCE_UNREADABLE with ELOOP as its cause", async (t) => {
  const base = await tempDir(t);
  if (!(await symlinkOrSkip(t, path.join(base, "AGENTS.md"), path.join(base, "AGENTS.md")))) return;
  await rule("§10.3：绕成圈的 symlink 是 RESOURCE_UNREADABLE，cause 是 ELOOP，message 写出那个文件", async () => {
    await assert.rejects(discoverResources([base]), (error: Error & { code?: string; cause?: { code?: string } }) => {
      assert.deepEqual(codes(error), { code: "RESOURCE_UNREADABLE", cause: "ELOOP" });
      assert.ok(error.message.includes(path.join(base, "AGENTS.md")));
      return true;
    });
  });
});

test("discovery: an unreadable AGENTS.md is RESOURCE_UNREADABLE with EACCES as its cause", async (t) => {
  if (!permissionsEnforced()) return t.skip("permissions are not enforced for root or on Windows");
  const base = await tempDir(t);
  await put(base, { "AGENTS.md": "secret" });
  await chmod(path.join(base, "AGENTS.md"), 0o000);
  await rule("§10.3：没有权限读（EACCES）是 RESOURCE_UNREADABLE，cause 是 EACCES", async () => {
    await assert.rejects(discoverResources([base]), (error) => {
      assert.deepEqual(codes(error), { code: "RESOURCE_UNREADABLE", cause: "EACCES" });
      return true;
    });
  });
});

test("io: a directory, a symlink loop or a special file in a resource's place is refused by name, with a code", async (t) => {
  const base = await tempDir(t);
  const { root, skillRoot } = await reviewOnly(base);
  await mkdir(path.join(skillRoot, "folder.md"));
  if (!(await symlinkOrSkip(t, path.join(skillRoot, "loop.md"), path.join(skillRoot, "loop.md")))) return;
  const sockets = await socketOrSkip(t, path.join(skillRoot, "socket.md"));
  const fifos = fifoOrSkip(t, path.join(skillRoot, "pipe.md"));
  let catalog!: ResourceCatalog;
  await rule(DISCOVERED, async () => {
    catalog = await discoverResources([root]);
  });
  const refused = async (request: string) =>
    promptly(() => activateSkill(catalog, "review", { resources: [request] }), request).then(
      () => assert.fail(`${request} was read`),
      (error: Error & { code?: string; cause?: { code?: string } }) => {
        if (error instanceof assert.AssertionError) throw error;
        assert.ok(error.message.includes(path.join(skillRoot, request)), `${request}: ${error.message}`);
        return codes(error);
      },
    );
  await rule("§10.3：请求的附加文件是目录（EISDIR）或绕成圈的 symlink（ELOOP）：RESOURCE_UNREADABLE，message 写出技能目录加请求得到的那个路径", async () => {
    assert.deepEqual(await refused("folder.md"), { code: "RESOURCE_UNREADABLE", cause: "EISDIR" });
    assert.deepEqual(await refused("loop.md"), { code: "RESOURCE_UNREADABLE", cause: "ELOOP" });
  });
  await rule("§10.3：请求的附加文件是 socket 或 FIFO：立即以 RESOURCE_INVALID 拒绝（不是普通文件），绝不等着读它", async () => {
    if (sockets) assert.equal((await refused("socket.md")).code, "RESOURCE_INVALID");
    if (fifos) assert.equal((await refused("pipe.md")).code, "RESOURCE_INVALID");
  });

  // The same inside discovery: a looping template and a looping skill folder.
  const other = path.join(base, "other");
  await mkdir(path.join(other, "templates"), { recursive: true });
  await mkdir(path.join(other, "skills"));
  await symlink(path.join(other, "templates", "loop.md"), path.join(other, "templates", "loop.md"));
  await symlink(path.join(other, "skills", "loop"), path.join(other, "skills", "loop"));
  await rule("§10.3：发现时 skills/ 或 templates/ 里绕成圈的 symlink 也是 RESOURCE_UNREADABLE（不是“不存在”），source 是那个条目本身", async () => {
    const { diagnostics } = await lenient([other]);
    assert.deepEqual(brief(diagnostics), [
      ["error", "RESOURCE_UNREADABLE", path.join(other, "skills", "loop")],
      ["error", "RESOURCE_UNREADABLE", path.join(other, "templates", "loop.md")],
    ]);
  });
});

test("io: permission denied is RESOURCE_UNREADABLE with EACCES as its cause", async (t) => {
  if (!permissionsEnforced()) return t.skip("running as root (or on Windows): permissions are not enforced");
  const base = await tempDir(t);
  const { root, skillRoot } = await reviewOnly(base);
  await put(root, { "templates/t.md": "T", "skills/locked/SKILL.md": skill("locked", "d") });
  await put(skillRoot, { "secret.md": "S" });
  let catalog!: ResourceCatalog;
  await rule(DISCOVERED, async () => {
    catalog = await discoverResources([root]);
  });
  await chmod(path.join(skillRoot, "secret.md"), 0o000);
  await chmod(path.join(root, "templates", "t.md"), 0o000);
  await chmod(path.join(root, "skills", "locked"), 0o000); // tempDir's removal unlocks it again
  await rule("§10.3：没有权限读请求的附加文件是 RESOURCE_UNREADABLE，cause 是 EACCES", async () => {
    await assert.rejects(activateSkill(catalog, "review", { resources: ["secret.md"] }), (error) => {
      assert.deepEqual(codes(error), { code: "RESOURCE_UNREADABLE", cause: "EACCES" });
      return true;
    });
  });
  await rule(
    "§10.1、§10.3：宽松发现里读不了的 SKILL.md（目录没有权限进）和模板各是一条 RESOURCE_UNREADABLE；解析不到 canonical 路径时 source 就是它本来的路径",
    async () => {
      const { diagnostics } = await lenient([root]);
      assert.deepEqual(
        diagnostics.map((d) => [d.code, d.source]),
        [
          ["RESOURCE_UNREADABLE", path.join(root, "skills", "locked", "SKILL.md")],
          ["RESOURCE_UNREADABLE", path.join(root, "templates", "t.md")],
        ],
      );
    },
  );
});

// ---------------------------------------------------------------------------
// Special files never hang
// ---------------------------------------------------------------------------

test("special files: a FIFO SKILL.md or AGENTS.md is RESOURCE_INVALID at once; a FIFO template is ignored", async (t) => {
  const base = await tempDir(t);
  await mkdir(path.join(base, "a", "skills", "s"), { recursive: true });
  if (!fifoOrSkip(t, path.join(base, "a", "skills", "s", "SKILL.md"))) return;
  await mkdir(path.join(base, "b"));
  fifoOrSkip(t, path.join(base, "b", "AGENTS.md"));
  await put(base, { "c/templates/real.md": "Real" });
  fifoOrSkip(t, path.join(base, "c", "templates", "pipe.md"));
  await rule("§10.3：SKILL.md 或 AGENTS.md 是一个 FIFO：立即 RESOURCE_INVALID（不是普通文件），绝不等着读它", async () => {
    await failsWith("RESOURCE_INVALID", () => promptly(() => discoverResources([path.join(base, "a")]), "FIFO 的 SKILL.md"), "SKILL.md 是 FIFO");
    await failsWith("RESOURCE_INVALID", () => promptly(() => discoverResources([path.join(base, "b")]), "FIFO 的 AGENTS.md"), "AGENTS.md 是 FIFO");
  });
  await rule("§C3.2：templates/ 里不是普通文件的（这里是 FIFO）不算模板", async () => {
    const catalog = await promptly(() => discoverResources([path.join(base, "c")]), "templates/ 里的 FIFO");
    assert.deepEqual(
      catalog.templates.map((r) => r.name),
      ["real"],
    );
  });
});

test("special files: a character device behind SKILL.md is RESOURCE_INVALID", async (t) => {
  if (process.platform === "win32") return t.skip("no /dev/zero on Windows");
  const base = await tempDir(t);
  await mkdir(path.join(base, "skills", "dev"), { recursive: true });
  await symlink("/dev/zero", path.join(base, "skills", "dev", "SKILL.md"));
  await rule("§10.3：SKILL.md 是（或指向）一个设备文件：RESOURCE_INVALID", async () => {
    await failsWith("RESOURCE_INVALID", () => promptly(() => discoverResources([base]), "设备文件"));
  });
});

test("special files: activation refuses a SKILL.md or a resource that became a FIFO", async (t) => {
  const { root, skillRoot } = await chapterProject(t);
  let catalog!: ResourceCatalog;
  await rule(DISCOVERED, async () => {
    catalog = await discoverResources([root]);
  });
  if (!fifoOrSkip(t, path.join(skillRoot, "references", "pipe.md"))) return;
  await rule("§10.3：请求的附加文件是 FIFO：立即 RESOURCE_INVALID", async () => {
    await failsWith("RESOURCE_INVALID", () => promptly(() => activateSkill(catalog, "review", { resources: ["references/pipe.md"] }), "FIFO 的附加文件"));
  });
  await unlink(path.join(skillRoot, "SKILL.md"));
  fifoOrSkip(t, path.join(skillRoot, "SKILL.md"));
  await rule("§10.3：激活时 SKILL.md 变成了 FIFO：立即 RESOURCE_INVALID", async () => {
    await failsWith("RESOURCE_INVALID", () => promptly(() => activateSkill(catalog, "review"), "FIFO 的 SKILL.md"));
  });
});

// ---------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------

test("names: a skill folder or template whose name is not UTF-8 is RESOURCE_INVALID, shown escaped", async (t) => {
  const base = await tempDir(t);
  const skills = path.join(base, "skills");
  const folder = await rawNameOrSkip(t, skills);
  if (folder === undefined) return;
  await put(base, { "skills/good/SKILL.md": skill("good", "d"), "templates/plain.md": "Plain" });
  await mkdir(folder);
  await writeFile(Buffer.concat([folder, Buffer.from("/SKILL.md")]), skill("cafe", "d"));
  const template = await rawNameOrSkip(t, path.join(base, "templates"), ".md");
  await writeFile(template!, "Latin-1 named template");

  await rule("§10.3：名字不是合法 UTF-8 的技能目录（里面有 SKILL.md）是 RESOURCE_INVALID，message 写出它转义后的名字（每个这样的字节写成 \\xHH）", async () => {
    await assert.rejects(discoverResources([base]), (error: Error & { code?: string }) => {
      if (error.code === undefined) throw error;
      assert.equal(error.code, "RESOURCE_INVALID");
      assert.ok(error.message.includes(`${skills}${path.sep}caf\\xE9`), error.message);
      return true;
    });
  });
  await rule("§10.1、§10.3：宽松发现里这样的技能目录和 .md 模板各是一条 RESOURCE_INVALID，source 是转义后的路径（目录本身、模板文件），其余照常", async () => {
    const { catalog, diagnostics } = await lenient([base]);
    assert.deepEqual(
      catalog.resources.map((r) => r.name),
      ["good", "plain"],
    );
    assert.deepEqual(brief(diagnostics), [
      ["error", "RESOURCE_INVALID", path.join(skills, "caf\\xE9")],
      ["error", "RESOURCE_INVALID", path.join(base, "templates", "caf\\xE9.md")],
    ]);
  });
});

test("names: entries that are not skills or templates stay ignored, whatever their names", async (t) => {
  const base = await tempDir(t);
  const skills = path.join(base, "skills");
  const loose = await rawNameOrSkip(t, skills, ".md");
  if (loose === undefined) return;
  await writeFile(loose, "a loose file in skills/");
  await mkdir(Buffer.concat([Buffer.from(`${skills}/no-skill-`), Buffer.from([0xff])]));
  await mkdir(path.join(base, "templates"));
  await writeFile(Buffer.concat([Buffer.from(`${base}/templates/notes-`), Buffer.from([0xff]), Buffer.from(".txt")]), "not markdown");
  await writeFile(Buffer.concat([Buffer.from(`${base}/templates/.hidden-`), Buffer.from([0xff]), Buffer.from(".md")]), "hidden");
  await rule("§10.3：本来就不算资源的条目（skills/ 里的文件、没有 SKILL.md 的目录、不是 .md 的、以 . 开头的）名字不是 UTF-8 也照样忽略，没有诊断", async () => {
    const { catalog, diagnostics } = await lenient([base]);
    assert.deepEqual(catalog.resources, []);
    assert.deepEqual(diagnostics, []);
  });
});

// ---------------------------------------------------------------------------
// Containment in discovery
// ---------------------------------------------------------------------------

test("containment: AGENTS.md, templates and SKILL.md must resolve inside their root; a symlinked skill folder may live anywhere", async (t) => {
  const base = await tempDir(t);
  await put(base, {
    "outside/AGENTS.md": "OUTSIDE RULES",
    "outside/t.md": "OUTSIDE TEMPLATE",
    "outside/SKILL.md": skill("escaped", "OUTSIDE SKILL"),
    "outside/shared-skill/SKILL.md": skill("shared-skill", "shared through a folder link"),
    "root/docs/rules.md": "INSIDE RULES",
    "root/docs/t.md": "INSIDE TEMPLATE",
    "root/skills/sibling/SKILL.md": skill("sibling", "a SKILL.md may not be borrowed from a sibling"),
    "root/skills/borrow/.keep": "",
    "root/skills/escape/.keep": "",
  });
  const root = path.join(base, "root");
  if (!(await symlinkOrSkip(t, path.join(base, "outside", "AGENTS.md"), path.join(root, "AGENTS.md")))) return;
  await mkdir(path.join(root, "templates"));
  await symlink(path.join(base, "outside", "t.md"), path.join(root, "templates", "out.md"));
  await symlink("../docs/t.md", path.join(root, "templates", "in.md"));
  await symlink(path.join(base, "outside", "SKILL.md"), path.join(root, "skills", "escape", "SKILL.md"));
  await symlink("../sibling/SKILL.md", path.join(root, "skills", "borrow", "SKILL.md"));
  await symlink(path.join(base, "outside", "shared-skill"), path.join(root, "skills", "shared-skill"));

  await rule(
    "§10.3：AGENTS.md 和模板必须解析到 root 之内，SKILL.md 必须解析到它自己的技能目录之内（借隔壁技能的也不行），否则 RESOURCE_INVALID，source 是它解析到的 canonical 路径；root 外的字节一个也不进目录",
    async () => {
      const { catalog, diagnostics } = await lenient([root]);
      assert.deepEqual(identities(catalog), ["skill:shared-skill", "skill:sibling", "template:in"]);
      assert.deepEqual(brief(diagnostics), [
        ["error", "RESOURCE_INVALID", path.join(base, "outside", "AGENTS.md")],
        ["error", "RESOURCE_INVALID", path.join(root, "skills", "sibling", "SKILL.md")],
        ["error", "RESOURCE_INVALID", path.join(base, "outside", "SKILL.md")],
        ["error", "RESOURCE_INVALID", path.join(base, "outside", "t.md")],
      ]);
      assert.ok(!JSON.stringify(catalog).includes("OUTSIDE"), "nothing from outside enters the catalog");
    },
  );
  await rule("§10.3：symlink 的技能目录可以在任何地方：它的 canonical 路径就是这个技能的 root", async () => {
    const { catalog } = await lenient([root]);
    assert.equal(catalog.skills[0]?.root, path.join(base, "outside", "shared-skill"));
  });
  await rule("§10.3：AGENTS.md 是指向 root 之内的 symlink 就照常读", async () => {
    await unlink(path.join(root, "AGENTS.md"));
    await symlink("docs/rules.md", path.join(root, "AGENTS.md"));
    assert.equal((await lenient([root])).catalog.instructions[0]?.body, "INSIDE RULES");
  });
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

  await rule("§10.3：严格模式里 SKILL.md 解析到它的技能目录之外是 RESOURCE_INVALID", async () => {
    await failsWith("RESOURCE_INVALID", () => discoverResources([path.join(base, "root")]), "plain/SKILL.md 指向 Skill 目录之外");
  });
  let catalog!: ResourceCatalog;
  await rule("§10.3：symlink 的技能目录报告 canonical 的 source 和 root；skills/ 里指向文件的、指向不存在的 symlink 不算技能", async () => {
    catalog = (await lenient([path.join(base, "root")])).catalog;
    assert.deepEqual(catalog.skills, [
      {
        kind: "skill",
        name: "linked",
        description: "through a folder link",
        source: path.join(base, "shared", "linked", "SKILL.md"),
        root: path.join(base, "shared", "linked"),
      },
    ]);
  });
  await rule("§10.1：SKILL_NAME_MISMATCH 比的是 skills/ 里那个条目的名字（symlink 自己的名字，不是它指向的目录名）；诊断按条目名排序", async () => {
    const { diagnostics } = await lenient([path.join(base, "root")]);
    assert.deepEqual(brief(diagnostics), [
      // folder order: plain (its SKILL.md leads outside), then via-link (named "linked")
      ["error", "RESOURCE_INVALID", path.join(base, "shared", "pointed.md")],
      ["warning", "SKILL_NAME_MISMATCH", path.join(base, "shared", "linked", "SKILL.md")],
    ]);
  });
  await rule("§C4.2：symlink 的技能目录照常激活", async () => {
    assert.equal((await activateSkill(catalog, "linked")).body, "LINKED BODY");
  });
});

// ---------------------------------------------------------------------------
// Size
// ---------------------------------------------------------------------------

test("size: the limit is exported and is 1 MiB; exactly 1 MiB passes, one byte more is RESOURCE_TOO_LARGE", async (t) => {
  await rule("§10.3：resources.ts 导出 RESOURCE_SIZE_LIMIT，恰好是 1 MiB（1024 × 1024 字节）", () => {
    assert.equal(EXPORTED_LIMIT, 1024 * 1024);
    assert.equal(EXPORTED_LIMIT, RESOURCE_SIZE_LIMIT);
  });
  const base = await tempDir(t);
  const fits = "x".repeat(RESOURCE_SIZE_LIMIT);
  const { root, skillRoot } = await reviewOnly(base);
  await put(root, { "AGENTS.md": fits, "templates/t.md": fits });
  await put(skillRoot, { "fits.md": fits, "over.md": `${fits}y` });
  for (const file of ["AGENTS.md", "templates/t.md"]) await put(path.join(base, `over-${path.basename(file)}`), { [file]: `${fits}y` });
  let catalog!: ResourceCatalog;
  await rule("§10.3：恰好 1 MiB 的 AGENTS.md、模板和请求的附加文件照常读", async () => {
    catalog = await discoverResources([root]);
    assert.equal(catalog.instructions[0]?.body.length, RESOURCE_SIZE_LIMIT);
    assert.equal(catalog.templates[0]?.body.length, RESOURCE_SIZE_LIMIT);
    assert.equal((await activateSkill(catalog, "review", { resources: ["fits.md"] })).resources[0]?.content.length, RESOURCE_SIZE_LIMIT);
  });
  await rule("§10.3：多一个字节就是 RESOURCE_TOO_LARGE：请求的附加文件、AGENTS.md、模板", async () => {
    await failsWith("RESOURCE_TOO_LARGE", () => activateSkill(catalog, "review", { resources: ["over.md"] }), "over.md");
    for (const file of ["AGENTS.md", "templates/t.md"]) {
      await failsWith("RESOURCE_TOO_LARGE", () => discoverResources([path.join(base, `over-${path.basename(file)}`)]), file);
    }
  });
  await rule("§10.3：正文很长的 SKILL.md 发现时照常（只读头部），激活时整个文件超过 1 MiB 就是 RESOURCE_TOO_LARGE", async () => {
    await writeFile(path.join(skillRoot, "SKILL.md"), skill("review", "project review", "b".repeat(RESOURCE_SIZE_LIMIT)));
    const big = await discoverResources([root]);
    await failsWith("RESOURCE_TOO_LARGE", () => activateSkill(big, "review"), "激活一个 1 MiB 多的 SKILL.md");
  });
});

test("size: a 1 GiB file is refused from its handle's size without reading it (sparse)", async (t) => {
  const base = await tempDir(t);
  const { root, skillRoot } = await reviewOnly(base);
  const giant = 1024 * 1024 * 1024;
  await sparseFile(path.join(skillRoot, "huge.md"), "head", giant);
  await sparseFile(path.join(root, "AGENTS.md"), "rules", giant);
  const before = await bytesRead();
  await rule("§10.3：1 GiB 的 AGENTS.md 是 RESOURCE_TOO_LARGE", async () => {
    await failsWith("RESOURCE_TOO_LARGE", () => discoverResources([root]));
  });
  await writeFile(path.join(root, "AGENTS.md"), "rules");
  await rule("§10.3：1 GiB 的附加文件是 RESOURCE_TOO_LARGE，message 写出那个文件", async () => {
    const catalog = await discoverResources([root]);
    await assert.rejects(activateSkill(catalog, "review", { resources: ["huge.md"] }), (error: Error & { code?: string }) => {
      if (error.code === undefined) throw error;
      assert.equal(error.code, "RESOURCE_TOO_LARGE");
      assert.ok(error.message.includes(path.join(skillRoot, "huge.md")), "names the file");
      return true;
    });
  });
  await sparseFile(path.join(skillRoot, "SKILL.md"), skill("review", "a 1 GiB skill"), giant);
  await rule("§C3.8、§10.3：1 GiB 的 SKILL.md 照常被发现（只读头部），激活时是 RESOURCE_TOO_LARGE", async () => {
    const stillListed = await discoverResources([root]);
    assert.deepEqual(
      stillListed.skills.map((s) => s.name),
      ["review"],
      "discovery reads only the head",
    );
    await failsWith("RESOURCE_TOO_LARGE", () => activateSkill(stillListed, "review"));
  });
  const after = await bytesRead();
  if (before === undefined || after === undefined) return t.skip("no /proc/self/io to count bytes read");
  await rule("§10.3：大小按打开的句柄判断（fstat），超过上限就一个字节都不读：三个 1 GiB 的文件前后总共读的不到 256 KiB", () => {
    assert.ok(after - before < 256 * 1024, `read ${after - before} bytes around three 1 GiB files`);
  });
});

test("size: the limit holds while reading, so a file bigger than its reported size cannot pass", async (t) => {
  if (process.platform !== "linux") return t.skip("needs a /proc file, whose size reads as 0");
  // /proc files report size 0 and then deliver their content: exactly the case of a file
  // that grew after its size was checked. This checks the provided resource-files.ts.
  const status = await realpath("/proc/self/status");
  await rule("§10.3：读的过程中也在计数：报告的大小比真实内容小的文件（这里是 /proc 的文件）也过不了上限（检查的是提供的 resource-files.ts）", async () => {
    assert.ok((await readFile(status, "utf8")).length > 100);
    await assert.rejects(readProvenText(status, 100), { kind: "too-large" });
    assert.ok((await readProvenText(status, RESOURCE_SIZE_LIMIT)).includes("Pid:"));
  });
});

// ---------------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------------

test("text: invalid UTF-8 or a NUL byte is RESOURCE_NOT_TEXT everywhere a file is read, never U+FFFD", async (t) => {
  const base = await tempDir(t);
  const invalid = Buffer.from([0x68, 0x69, 0xc3, 0x28]); // "hi" then a broken sequence
  const nul = Buffer.from("text\0more");
  const kinds = [
    ["invalid UTF-8", invalid],
    ["a NUL byte", nul],
  ] as const;
  for (const [label, bytes] of kinds) {
    for (const file of ["AGENTS.md", "templates/t.md"]) await put(path.join(base, `${label}-${path.basename(file)}`), { [file]: bytes });
    await put(path.join(base, `${label}-head`), {
      "skills/s/SKILL.md": Buffer.concat([Buffer.from("---\nname: s\ndescription: "), bytes, Buffer.from("\n---\n")]),
    });
  }
  await rule("§10.3：AGENTS.md、模板和 SKILL.md 的 frontmatter 不是合法 UTF-8 或含 NUL 字节：RESOURCE_NOT_TEXT（不能变成 U+FFFD）", async () => {
    for (const [label] of kinds) {
      for (const file of ["AGENTS.md", "templates/t.md"]) {
        await failsWith("RESOURCE_NOT_TEXT", () => discoverResources([path.join(base, `${label}-${path.basename(file)}`)]), `${label}: ${file}`);
      }
      await failsWith("RESOURCE_NOT_TEXT", () => discoverResources([path.join(base, `${label}-head`)]), `${label}: SKILL.md frontmatter`);
    }
  });
  // Discovery judges what it read as frontmatter: with none, the first line.
  const heads: [string, Buffer, string][] = [
    ["a binary file", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0x1a, 0x0a, 0xff]), "RESOURCE_NOT_TEXT"],
    ["UTF-16 text", Buffer.from("\uFEFF---\nname: s\n", "utf16le"), "RESOURCE_NOT_TEXT"],
    ["markdown over a binary tail", Buffer.concat([Buffer.from("# Title\n"), nul]), "RESOURCE_INVALID"],
    ["an unterminated binary block", Buffer.concat([Buffer.from("---\nname: s\n"), nul]), "RESOURCE_NOT_TEXT"],
    // Reads stop at chunk boundaries, which may fall inside a character: not held against the file.
    ["a long first line of accents", Buffer.from(`#${"é".repeat(3000)}\n`), "RESOURCE_INVALID"],
    ["an unterminated block of accents over 64 KiB", Buffer.from(`---\n#${"é".repeat(36_000)}`), "RESOURCE_INVALID"],
    [
      "a block cut inside a character",
      Buffer.concat([Buffer.from(`---\n# ${"x".repeat(4089)}`), Buffer.from("é"), Buffer.from("\nname: s\ndescription: d\n---\n")]),
      "ok",
    ],
  ];
  for (const [label, bytes] of heads) await put(path.join(base, `head-${label}`), { "skills/s/SKILL.md": bytes });
  await rule(
    "§10.3：发现时判断的是作为 frontmatter 读到的字节：结束了的 YAML 块；没结束时读到的全部；没有 frontmatter 时只看第一行；先判断是不是文本，再判断 frontmatter；读到一半被切开的最后一个字符不算错",
    async () => {
      for (const [label, , expected] of heads) {
        const outcome = await discoverResources([path.join(base, `head-${label}`)]).then(
          () => "ok",
          (error: { code?: string }) => error.code ?? String(error),
        );
        assert.equal(outcome, expected, label);
      }
    },
  );
  // The body of a SKILL.md is judged when it is activated, not at discovery.
  const { root, skillRoot } = await reviewOnly(path.join(base, "body"));
  await writeFile(path.join(skillRoot, "SKILL.md"), Buffer.concat([Buffer.from(skill("review", "d", "body")), invalid]));
  await put(skillRoot, { "logo.png": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0x1a]), "bad.md": invalid });
  let catalog!: ResourceCatalog;
  await rule("§10.3：SKILL.md 的正文在激活时才判断：正文不是文本，发现照常，激活是 RESOURCE_NOT_TEXT", async () => {
    catalog = await discoverResources([root]);
    await failsWith("RESOURCE_NOT_TEXT", () => activateSkill(catalog, "review"));
  });
  await writeFile(path.join(skillRoot, "SKILL.md"), skill("review", "d", "body"));
  await rule("§10.3：请求的二进制附加文件（图片、坏的 UTF-8）是 RESOURCE_NOT_TEXT，message 写出那个文件", async () => {
    for (const request of ["logo.png", "bad.md"]) {
      await assert.rejects(activateSkill(catalog, "review", { resources: [request] }), (error: Error & { code?: string }) => {
        if (error.code === undefined) throw error;
        assert.equal(error.code, "RESOURCE_NOT_TEXT", request);
        assert.ok(error.message.includes(path.join(skillRoot, request)), "refused by name");
        return true;
      });
    }
  });
});

test("text: a real U+FFFD, a BOM and a binary SKILL.md body past the frontmatter are all fine where they belong", async (t) => {
  const base = await tempDir(t);
  const { root, skillRoot } = await reviewOnly(base);
  await put(skillRoot, { "replacement.md": "a \uFFFD stays", "bom.md": "\uFEFFwith BOM\r\n" });
  await put(root, { "skills/binary/SKILL.md": Buffer.concat([Buffer.from(skill("binary", "text head")), Buffer.from([0, 0xff, 0])]) });
  let catalog!: ResourceCatalog;
  await rule("§10.3：发现只判断 frontmatter 的字节：正文是二进制的 SKILL.md 照常进入清单", async () => {
    catalog = await discoverResources([root]);
    assert.deepEqual(
      catalog.skills.map((s) => s.name),
      ["binary", "review"],
    );
  });
  await rule("§10.3：文件里本来就有的 U+FFFD 是合法文本；请求的附加文件原样返回，BOM 和 \\r\\n 都留着", async () => {
    const active = await activateSkill(catalog, "review", { resources: ["replacement.md", "bom.md"] });
    assert.deepEqual(
      active.resources.map((f) => f.content),
      ["a \uFFFD stays", "\uFEFFwith BOM\r\n"],
    );
  });
});

// ---------------------------------------------------------------------------
// Line ends
// ---------------------------------------------------------------------------

test("line ends: bodies turn CRLF into LF before trimming; requested files come back exactly as read", async (t) => {
  const base = await tempDir(t);
  const { root, skillRoot } = await reviewOnly(base);
  await put(root, {
    "AGENTS.md": "\r\nRule one\r\nRule two\r\n\r\n",
    "templates/t.md": "---\r\nname: t\r\n---\r\nHello\r\n{{who}}\r\nlone\rcarriage\r\n",
  });
  await writeFile(path.join(skillRoot, "SKILL.md"), "---\r\nname: review\r\ndescription: d\r\n---\r\nStep 1\r\nStep 2\r\n");
  await put(skillRoot, { "crlf.md": "a\r\nb\r\n" });
  let catalog!: ResourceCatalog;
  await rule("§10.3：AGENTS.md、模板和激活的技能的正文先把每个 \\r\\n 换成 \\n，再去掉首尾空白；单独的 \\r 不动", async () => {
    catalog = await discoverResources([root]);
    assert.equal(catalog.instructions[0]?.body, "Rule one\nRule two");
    assert.equal(catalog.templates[0]?.body, "Hello\n{{who}}\nlone\rcarriage");
    assert.equal((await activateSkill(catalog, "review")).body, "Step 1\nStep 2");
  });
  await rule("§10.3：请求的附加文件原样返回，\\r\\n 不变", async () => {
    const active = await activateSkill(catalog, "review", { resources: ["crlf.md"] });
    assert.equal(active.resources[0]?.content, "a\r\nb\r\n");
  });
});

// ---------------------------------------------------------------------------
// Proven reads and swaps
// ---------------------------------------------------------------------------

test("proven reads: a path that no longer canonicalises to itself, or whose last part became a symlink, is not read", async (t) => {
  const base = await tempDir(t);
  await put(base, { "real/file.md": "REAL", "outside.md": "OUTSIDE" });
  if (!(await symlinkOrSkip(t, path.join(base, "real"), path.join(base, "alias")))) return;
  await symlink(path.join(base, "outside.md"), path.join(base, "link.md"));
  await rule(
    "§10.3：读的是证明过的句柄：检查过的 canonical 路径现在不再解析到它自己（路上的目录换成了 symlink）、最后一段变成了 symlink，都不读（检查的是提供的 resource-files.ts）",
    async () => {
      assert.equal(await readProvenText(path.join(base, "real", "file.md")), "REAL");
      await assert.rejects(readProvenText(path.join(base, "alias", "file.md")), { kind: "changed" });
      await assert.rejects(readProvenText(path.join(base, "link.md")), { kind: "changed" });
    },
  );
});

test("activation: a skill folder replaced by a link to an outside folder is SKILL_PATH_ESCAPE, and none of its bytes come back", async (t) => {
  const base = await tempDir(t);
  const { root, skillRoot } = await reviewOnly(base);
  await put(base, { "outside/SKILL.md": skill("review", "OUTSIDE", "OUTSIDE BODY") });
  let catalog!: ResourceCatalog;
  await rule(DISCOVERED, async () => {
    catalog = await discoverResources([root]);
  });
  // The skill folder itself moved and a link to an outside folder took its place.
  await rename(skillRoot, `${skillRoot}-moved`);
  if (!(await symlinkOrSkip(t, path.join(base, "outside"), skillRoot))) return;
  await rule(
    "§C4.2：整个技能目录被换成指向外面的 symlink：SKILL.md 解析到 canonical 的技能目录之外，是 SKILL_PATH_ESCAPE，错误里没有外面的一个字节",
    async () => {
      await assert.rejects(activateSkill(catalog, "review"), (error: Error & { code?: string }) => {
        if (error.code === undefined) throw error;
        assert.equal(error.code, "SKILL_PATH_ESCAPE");
        assert.doesNotMatch(error.message, /OUTSIDE BODY/);
        return true;
      });
    },
  );
});

/**
 * The race: a child process swaps, in a loop, SKILL.md and a requested file for symlinks
 * to outside files, and a requested file's directory for a symlink to an outside one,
 * while this process activates the skill and discovers its root again and again. Every
 * answer must be the inside text or a refusal; not one byte from outside may come back.
 * The child stops when this test ends (`t.after`, and its stdin closes), when killed, and
 * in any case after ten seconds.
 */
const SWAPPER = `
const fs = require("node:fs");
const path = require("node:path");
const [skillRoot, outside] = process.argv.slice(1);
const at = (...parts) => path.join(skillRoot, ...parts);
const deadline = Date.now() + 10000;
for (const name of ["SKILL.md", "file.md"]) fs.copyFileSync(at(name), at(".keep-" + name));
function swapFile(name) {
  fs.symlinkSync(path.join(outside, name), at(".link-" + name));
  fs.renameSync(at(".link-" + name), at(name));
  fs.copyFileSync(at(".keep-" + name), at(".real-" + name));
  fs.renameSync(at(".real-" + name), at(name));
}
function swapFolder() {
  fs.renameSync(at("refs"), at(".refs-real"));
  fs.symlinkSync(path.join(outside, "refs"), at("refs"));
  fs.unlinkSync(at("refs"));
  fs.renameSync(at(".refs-real"), at("refs"));
}
let started = false;
function burst() {
  for (let i = 0; i < 20; i++) { swapFile("SKILL.md"); swapFile("file.md"); swapFolder(); }
  if (!started) { started = true; process.stdout.write("swapping\\n"); }
  if (Date.now() > deadline) process.exit(0);
  setImmediate(burst);
}
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
burst();
`;

test("proven reads: a child swapping files for outside symlinks in a loop never gets one outside byte returned", async (t) => {
  if (process.platform === "win32") return t.skip("symlink swapping needs POSIX renames");
  // Registered before the temporary folder is, so that it runs first (after hooks run in
  // the order they were added): the swapping child is gone before its folder is removed,
  // even when this test ends by a failure or a time limit.
  let stop = async () => {};
  t.after(() => stop());
  const base = await tempDir(t);
  const root = path.join(base, "root");
  const skillRoot = path.join(root, "skills", "review");
  const outside = path.join(base, "outside");
  await put(skillRoot, { "SKILL.md": skill("review", "inside", "INSIDE BODY"), "file.md": "INSIDE FILE\n", "refs/target.md": "INSIDE TARGET\n" });
  await put(outside, { "SKILL.md": skill("review", "OUTSIDE DESCRIPTION", "OUTSIDE BODY"), "file.md": "OUTSIDE FILE\n", "refs/target.md": "OUTSIDE TARGET\n" });
  let catalog!: ResourceCatalog;
  await rule(DISCOVERED, async () => {
    catalog = await discoverResources([root]);
  });

  const child = spawn(process.execPath, ["-e", SWAPPER, skillRoot, outside], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  let stopped = false;
  stop = async () => {
    if (stopped) return;
    stopped = true;
    child.stdin!.end();
    child.kill();
    await exited;
  };
  const outcomes = new Map<string, number>();
  const count = (key: string) => outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
  let leaks = 0;
  try {
    await new Promise((resolve, reject) => {
      child.stdout!.once("data", resolve);
      child.once("exit", () => reject(new Error("the swapping child ended before it started")));
    });
    for (let round = 0; round < 900; round++) {
      if (round % 6 === 5) {
        const { catalog: again } = await lenient([root]);
        if (JSON.stringify(again).includes("OUTSIDE")) leaks += 1;
        count(again.skills.length === 1 ? "discovered" : "discovery refused");
        continue;
      }
      try {
        const active = await activateSkill(catalog, "review", { resources: [round % 2 === 0 ? "file.md" : "refs/target.md"] });
        if (JSON.stringify(active).includes("OUTSIDE")) leaks += 1;
        count("activated");
      } catch (error) {
        count((error as { code?: string }).code ?? String(error));
      }
    }
  } finally {
    await stop();
  }
  const seen = JSON.stringify(Object.fromEntries(outcomes));
  await rule("§10.3：检查过位置的文件从证明过的句柄去读：别的进程不停把文件换成指向外面的 symlink，root 外的字节一个也不会返回", () => {
    assert.equal(leaks, 0, `outside bytes were returned ${leaks} times: ${seen}`);
  });
  await rule(
    "§10.3：换的那一刻读到的是里面的文件就照常返回；被换掉了就拒绝：SKILL_PATH_ESCAPE、SKILL_CHANGED（句柄不是检查过的那个文件），或 SKILL_RESOURCE_MISSING（文件那一刻不在）",
    () => {
      assert.ok((outcomes.get("activated") ?? 0) > 0, `some activations succeeded: ${seen}`);
      assert.ok((outcomes.get("SKILL_PATH_ESCAPE") ?? 0) + (outcomes.get("SKILL_CHANGED") ?? 0) > 0, `the swaps were seen: ${seen}`);
      for (const key of outcomes.keys()) {
        assert.ok(
          ["activated", "discovered", "discovery refused", "SKILL_PATH_ESCAPE", "SKILL_CHANGED", "SKILL_RESOURCE_MISSING"].includes(key),
          `unexpected outcome ${key}`,
        );
      }
    },
  );
});
