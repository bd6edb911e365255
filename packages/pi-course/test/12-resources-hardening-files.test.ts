/**
 * Chapter 12 hardening, second revision: files in the real world. Names that are not
 * UTF-8, files that resolve outside their root, the 1 MiB limit (judged on the handle and
 * while reading), text only (never U+FFFD), every other I/O error named and coded, line
 * ends, and reads that are proven against a file swapped for a symlink, including a race
 * against a child process that swaps files in a loop. Not a lab file.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmod, mkdir, readFile, realpath, rename, symlink, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import test from "node:test";
import { RESOURCE_SIZE_LIMIT, readProvenText } from "../src/resource-files.js";
import { activateSkill, discoverResources, RESOURCE_SIZE_LIMIT as EXPORTED_LIMIT, type ResourceDiagnostic } from "../src/resources.js";
import {
  bytesRead,
  codes,
  fifoOrSkip,
  permissionsEnforced,
  put,
  rawNameOrSkip,
  skill,
  socketOrSkip,
  sparseFile,
  symlinkOrSkip,
  tempDir,
} from "./fixtures/12-workspace.js";

async function lenient(roots: string[]) {
  const diagnostics: ResourceDiagnostic[] = [];
  const catalog = await discoverResources(roots, { onDiagnostic: (diagnostic) => diagnostics.push(diagnostic) });
  return { catalog, diagnostics };
}
const brief = (diagnostics: ResourceDiagnostic[]) => diagnostics.map((d) => [d.severity, d.code, d.source]);

/** A project with one skill `review` holding `references/checklist.md`. */
async function project(base: string): Promise<{ root: string; skillRoot: string }> {
  const root = path.join(base, "project");
  await put(root, {
    "skills/review/SKILL.md": skill("review", "project review", "Read the diff first."),
    "skills/review/references/checklist.md": "tests\nsecurity\n",
  });
  return { root, skillRoot: path.join(root, "skills", "review") };
}

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

  await assert.rejects(discoverResources([base]), (error: Error & { code?: string }) => {
    assert.equal(error.code, "RESOURCE_INVALID");
    assert.ok(error.message.includes(`${skills}${path.sep}caf\\xE9`), error.message);
    return true;
  });
  const { catalog, diagnostics } = await lenient([base]);
  assert.deepEqual(catalog.resources.map((r) => r.name), ["good", "plain"]);
  assert.deepEqual(brief(diagnostics), [
    ["error", "RESOURCE_INVALID", path.join(skills, "caf\\xE9")],
    ["error", "RESOURCE_INVALID", path.join(base, "templates", "caf\\xE9.md")],
  ]);
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
  const { catalog, diagnostics } = await lenient([base]);
  assert.deepEqual(catalog.resources, []);
  assert.deepEqual(diagnostics, []);
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

  const { catalog, diagnostics } = await lenient([root]);
  assert.deepEqual(catalog.resources.map((r) => `${r.kind}:${r.name}`), ["skill:shared-skill", "skill:sibling", "template:in"]);
  assert.deepEqual(brief(diagnostics), [
    ["error", "RESOURCE_INVALID", path.join(base, "outside", "AGENTS.md")],
    ["error", "RESOURCE_INVALID", path.join(root, "skills", "sibling", "SKILL.md")],
    ["error", "RESOURCE_INVALID", path.join(base, "outside", "SKILL.md")],
    ["error", "RESOURCE_INVALID", path.join(base, "outside", "t.md")],
  ]);
  assert.ok(diagnostics.every((d) => d.message.includes("resolves outside")));
  assert.ok(!JSON.stringify(catalog).includes("OUTSIDE"), "nothing from outside enters the catalog");
  assert.equal(catalog.skills[0]?.root, path.join(base, "outside", "shared-skill"));

  // An AGENTS.md linked to a file inside the root is fine.
  await unlink(path.join(root, "AGENTS.md"));
  await symlink("docs/rules.md", path.join(root, "AGENTS.md"));
  assert.equal((await lenient([root])).catalog.instructions[0]?.body, "INSIDE RULES");
});

// ---------------------------------------------------------------------------
// Size
// ---------------------------------------------------------------------------

test("size: the limit is exported and is 1 MiB; exactly 1 MiB passes, one byte more is RESOURCE_TOO_LARGE", async (t) => {
  assert.equal(EXPORTED_LIMIT, 1024 * 1024);
  assert.equal(EXPORTED_LIMIT, RESOURCE_SIZE_LIMIT);
  const base = await tempDir(t);
  const fits = "x".repeat(RESOURCE_SIZE_LIMIT);
  const { root, skillRoot } = await project(base);
  await put(root, { "AGENTS.md": fits, "templates/t.md": fits });
  await put(skillRoot, { "fits.md": fits, "over.md": `${fits}y` });
  const catalog = await discoverResources([root]);
  assert.equal(catalog.instructions[0]?.body.length, RESOURCE_SIZE_LIMIT);
  assert.equal(catalog.templates[0]?.body.length, RESOURCE_SIZE_LIMIT);
  assert.equal((await activateSkill(catalog, "review", { resources: ["fits.md"] })).resources[0]?.content.length, RESOURCE_SIZE_LIMIT);
  await assert.rejects(activateSkill(catalog, "review", { resources: ["over.md"] }), { code: "RESOURCE_TOO_LARGE" });

  for (const file of ["AGENTS.md", "templates/t.md"]) {
    const other = path.join(base, `over-${path.basename(file)}`);
    await put(other, { [file]: `${fits}y` });
    await assert.rejects(discoverResources([other]), { code: "RESOURCE_TOO_LARGE" }, file);
  }
  // A SKILL.md being activated: discovery reads only its head, activation refuses it.
  await writeFile(path.join(skillRoot, "SKILL.md"), skill("review", "project review", "b".repeat(RESOURCE_SIZE_LIMIT)));
  const big = await discoverResources([root]);
  await assert.rejects(activateSkill(big, "review"), { code: "RESOURCE_TOO_LARGE" });
});

test("size: a 1 GiB file is refused from its handle's size without reading it (sparse)", async (t) => {
  const base = await tempDir(t);
  const { root, skillRoot } = await project(base);
  const giant = 1024 * 1024 * 1024;
  await sparseFile(path.join(skillRoot, "huge.md"), "head", giant);
  await sparseFile(path.join(root, "AGENTS.md"), "rules", giant);
  const before = await bytesRead();
  await assert.rejects(discoverResources([root]), { code: "RESOURCE_TOO_LARGE" });
  await writeFile(path.join(root, "AGENTS.md"), "rules");
  const catalog = await discoverResources([root]);
  await assert.rejects(activateSkill(catalog, "review", { resources: ["huge.md"] }), (error: Error & { code?: string }) => {
    assert.equal(error.code, "RESOURCE_TOO_LARGE");
    assert.ok(error.message.includes(path.join(skillRoot, "huge.md")), "names the file");
    return true;
  });
  await sparseFile(path.join(skillRoot, "SKILL.md"), skill("review", "a 1 GiB skill"), giant);
  const stillListed = await discoverResources([root]);
  assert.deepEqual(stillListed.skills.map((s) => s.name), ["review"], "discovery reads only the head");
  await assert.rejects(activateSkill(stillListed, "review"), { code: "RESOURCE_TOO_LARGE" });
  const after = await bytesRead();
  if (before === undefined || after === undefined) return t.skip("no /proc/self/io to count bytes read");
  assert.ok(after - before < 256 * 1024, `read ${after - before} bytes around three 1 GiB files`);
});

test("size: the limit holds while reading, so a file bigger than its reported size cannot pass", async (t) => {
  if (process.platform !== "linux") return t.skip("needs a /proc file, whose size reads as 0");
  // /proc files report size 0 and then deliver their content: exactly the case of a file
  // that grew after its size was checked.
  const status = await realpath("/proc/self/status");
  assert.ok((await readFile(status, "utf8")).length > 100);
  await assert.rejects(readProvenText(status, 100), { kind: "too-large" });
  assert.ok((await readProvenText(status, RESOURCE_SIZE_LIMIT)).includes("Pid:"));
});

// ---------------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------------

test("text: invalid UTF-8 or a NUL byte is RESOURCE_NOT_TEXT everywhere a file is read, never U+FFFD", async (t) => {
  const base = await tempDir(t);
  const invalid = Buffer.from([0x68, 0x69, 0xc3, 0x28]); // "hi" then a broken sequence
  const nul = Buffer.from("text\0more");
  for (const [label, bytes] of [["invalid UTF-8", invalid], ["a NUL byte", nul]] as const) {
    for (const file of ["AGENTS.md", "templates/t.md"]) {
      const root = path.join(base, `${label}-${path.basename(file)}`);
      await put(root, { [file]: bytes });
      await assert.rejects(discoverResources([root]), { code: "RESOURCE_NOT_TEXT" }, `${label}: ${file}`);
    }
    const root = path.join(base, `${label}-head`);
    await put(root, { "skills/s/SKILL.md": Buffer.concat([Buffer.from("---\nname: s\ndescription: "), bytes, Buffer.from("\n---\n")]) });
    await assert.rejects(discoverResources([root]), { code: "RESOURCE_NOT_TEXT" }, `${label}: SKILL.md frontmatter`);
  }
  // Discovery judges what it read as frontmatter: with none, the first line.
  const heads: [string, Buffer, string][] = [
    ["a binary file", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0x1a, 0x0a, 0xff]), "RESOURCE_NOT_TEXT"],
    ["UTF-16 text", Buffer.from("\uFEFF---\nname: s\n", "utf16le"), "RESOURCE_NOT_TEXT"],
    ["markdown over a binary tail", Buffer.concat([Buffer.from("# Title\n"), nul]), "RESOURCE_INVALID"],
    ["an unterminated binary block", Buffer.concat([Buffer.from("---\nname: s\n"), nul]), "RESOURCE_NOT_TEXT"],
    // Reads stop at chunk boundaries, which may fall inside a character: not held against the file.
    ["a long first line of accents", Buffer.from(`#${"é".repeat(3000)}\n`), "RESOURCE_INVALID"],
    ["an unterminated block of accents over 64 KiB", Buffer.from(`---\n#${"é".repeat(36_000)}`), "RESOURCE_INVALID"],
    ["a block cut inside a character", Buffer.concat([Buffer.from(`---\n# ${"x".repeat(4089)}`), Buffer.from("é"), Buffer.from("\nname: s\ndescription: d\n---\n")]), "ok"],
  ];
  for (const [label, bytes, expected] of heads) {
    const root = path.join(base, `head-${label}`);
    await put(root, { "skills/s/SKILL.md": bytes });
    const outcome = await discoverResources([root]).then(() => "ok", (error: { code?: string }) => error.code);
    assert.equal(outcome, expected, label);
  }
  // The body of a SKILL.md is judged when it is activated, not at discovery.
  const { root, skillRoot } = await project(path.join(base, "body"));
  await writeFile(path.join(skillRoot, "SKILL.md"), Buffer.concat([Buffer.from(skill("review", "d", "body")), invalid]));
  await put(skillRoot, { "logo.png": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0x1a]), "bad.md": invalid });
  const catalog = await discoverResources([root]);
  await assert.rejects(activateSkill(catalog, "review"), { code: "RESOURCE_NOT_TEXT" });
  await writeFile(path.join(skillRoot, "SKILL.md"), skill("review", "d", "body"));
  for (const request of ["logo.png", "bad.md"]) {
    await assert.rejects(activateSkill(catalog, "review", { resources: [request] }), (error: Error & { code?: string }) => {
      assert.equal(error.code, "RESOURCE_NOT_TEXT");
      assert.ok(error.message.includes(path.join(skillRoot, request)), "refused by name");
      return true;
    });
  }
});

test("text: a real U+FFFD, a BOM and a binary SKILL.md body past the frontmatter are all fine where they belong", async (t) => {
  const base = await tempDir(t);
  const { root, skillRoot } = await project(base);
  await put(skillRoot, { "replacement.md": "a \uFFFD stays", "bom.md": "\uFEFFwith BOM\r\n" });
  await put(root, { "skills/binary/SKILL.md": Buffer.concat([Buffer.from(skill("binary", "text head")), Buffer.from([0, 0xff, 0])]) });
  const catalog = await discoverResources([root]);
  assert.deepEqual(catalog.skills.map((s) => s.name), ["binary", "review"]);
  const active = await activateSkill(catalog, "review", { resources: ["replacement.md", "bom.md"] });
  assert.deepEqual(active.resources.map((f) => f.content), ["a \uFFFD stays", "\uFEFFwith BOM\r\n"]);
});

// ---------------------------------------------------------------------------
// Other I/O errors
// ---------------------------------------------------------------------------

test("io: a directory, a symlink loop or a special file in a resource's place is refused by name, with a code", async (t) => {
  const base = await tempDir(t);
  const { root, skillRoot } = await project(base);
  await mkdir(path.join(skillRoot, "folder.md"));
  if (!(await symlinkOrSkip(t, path.join(skillRoot, "loop.md"), path.join(skillRoot, "loop.md")))) return;
  const catalog = await discoverResources([root]);
  const refused = async (request: string) =>
    activateSkill(catalog, "review", { resources: [request] }).then(
      () => assert.fail(`${request} was read`),
      (error: Error & { code?: string; cause?: { code?: string } }) => {
        assert.ok(error.message.includes(path.join(skillRoot, request)), `${request}: ${error.message}`);
        return codes(error);
      },
    );
  assert.deepEqual(await refused("folder.md"), { code: "RESOURCE_UNREADABLE", cause: "EISDIR" });
  assert.deepEqual(await refused("loop.md"), { code: "RESOURCE_UNREADABLE", cause: "ELOOP" });
  if (await socketOrSkip(t, path.join(skillRoot, "socket.md"))) {
    assert.equal((await refused("socket.md")).code, "RESOURCE_INVALID");
  }
  if (fifoOrSkip(t, path.join(skillRoot, "pipe.md"))) {
    assert.equal((await refused("pipe.md")).code, "RESOURCE_INVALID");
  }

  // The same inside discovery: a looping template and a looping skill folder.
  const other = path.join(base, "other");
  await mkdir(path.join(other, "templates"), { recursive: true });
  await mkdir(path.join(other, "skills"));
  await symlink(path.join(other, "templates", "loop.md"), path.join(other, "templates", "loop.md"));
  await symlink(path.join(other, "skills", "loop"), path.join(other, "skills", "loop"));
  const { diagnostics } = await lenient([other]);
  assert.deepEqual(brief(diagnostics), [
    ["error", "RESOURCE_UNREADABLE", path.join(other, "skills", "loop")],
    ["error", "RESOURCE_UNREADABLE", path.join(other, "templates", "loop.md")],
  ]);
});

test("io: permission denied is RESOURCE_UNREADABLE with EACCES as its cause", async (t) => {
  if (!permissionsEnforced()) return t.skip("running as root (or on Windows): permissions are not enforced");
  const base = await tempDir(t);
  const { root, skillRoot } = await project(base);
  await put(root, { "templates/t.md": "T", "skills/locked/SKILL.md": skill("locked", "d") });
  await put(skillRoot, { "secret.md": "S" });
  const catalog = await discoverResources([root]);
  await chmod(path.join(skillRoot, "secret.md"), 0o000);
  await chmod(path.join(root, "templates", "t.md"), 0o000);
  await chmod(path.join(root, "skills", "locked"), 0o000);
  t.after(() => chmod(path.join(root, "skills", "locked"), 0o755));
  await assert.rejects(activateSkill(catalog, "review", { resources: ["secret.md"] }), (error) => {
    assert.deepEqual(codes(error), { code: "RESOURCE_UNREADABLE", cause: "EACCES" });
    return true;
  });
  const { diagnostics } = await lenient([root]);
  assert.deepEqual(
    diagnostics.map((d) => [d.code, d.source]),
    [
      ["RESOURCE_UNREADABLE", path.join(root, "skills", "locked", "SKILL.md")],
      ["RESOURCE_UNREADABLE", path.join(root, "templates", "t.md")],
    ],
  );
});

// ---------------------------------------------------------------------------
// Line ends
// ---------------------------------------------------------------------------

test("line ends: bodies turn CRLF into LF before trimming; requested files come back exactly as read", async (t) => {
  const base = await tempDir(t);
  const { root, skillRoot } = await project(base);
  await put(root, {
    "AGENTS.md": "\r\nRule one\r\nRule two\r\n\r\n",
    "templates/t.md": "---\r\nname: t\r\n---\r\nHello\r\n{{who}}\r\nlone\rcarriage\r\n",
  });
  await writeFile(path.join(skillRoot, "SKILL.md"), "---\r\nname: review\r\ndescription: d\r\n---\r\nStep 1\r\nStep 2\r\n");
  await put(skillRoot, { "crlf.md": "a\r\nb\r\n" });
  const catalog = await discoverResources([root]);
  assert.equal(catalog.instructions[0]?.body, "Rule one\nRule two");
  assert.equal(catalog.templates[0]?.body, "Hello\n{{who}}\nlone\rcarriage");
  const active = await activateSkill(catalog, "review", { resources: ["crlf.md"] });
  assert.equal(active.body, "Step 1\nStep 2");
  assert.equal(active.resources[0]?.content, "a\r\nb\r\n");
});

// ---------------------------------------------------------------------------
// Proven reads
// ---------------------------------------------------------------------------

test("proven reads: a path that no longer canonicalises to itself, or whose last part became a symlink, is not read", async (t) => {
  const base = await tempDir(t);
  await put(base, { "real/file.md": "REAL", "outside.md": "OUTSIDE" });
  if (!(await symlinkOrSkip(t, path.join(base, "real"), path.join(base, "alias")))) return;
  await symlink(path.join(base, "outside.md"), path.join(base, "link.md"));
  assert.equal(await readProvenText(path.join(base, "real", "file.md")), "REAL");
  // A directory on the way is a symlink now: the checked path is not what the handle is.
  await assert.rejects(readProvenText(path.join(base, "alias", "file.md")), { kind: "changed" });
  // The last part is a symlink now: it is not followed.
  await assert.rejects(readProvenText(path.join(base, "link.md")), { kind: "changed" });
});

test("activation: a skill folder replaced by a link to an outside folder is SKILL_PATH_ESCAPE, and none of its bytes come back", async (t) => {
  const base = await tempDir(t);
  const { root, skillRoot } = await project(base);
  await put(base, { "outside/SKILL.md": skill("review", "OUTSIDE", "OUTSIDE BODY") });
  const catalog = await discoverResources([root]);
  // The skill folder itself moved and a link to an outside folder took its place.
  await rename(skillRoot, `${skillRoot}-moved`);
  if (!(await symlinkOrSkip(t, path.join(base, "outside"), skillRoot))) return;
  await assert.rejects(activateSkill(catalog, "review"), (error: Error & { code?: string }) => {
    assert.equal(error.code, "SKILL_PATH_ESCAPE");
    assert.doesNotMatch(error.message, /OUTSIDE BODY/);
    return true;
  });
});

/**
 * The race: a child process swaps, in a loop, SKILL.md and a requested file for symlinks
 * to outside files, and a requested file's directory for a symlink to an outside one,
 * while this process activates the skill and discovers its root again and again. Every
 * answer must be the inside text or a refusal; not one byte from outside may come back.
 * The child stops when this test ends (its stdin closes), when killed, and in any case
 * after ten seconds.
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
  const base = await tempDir(t);
  const root = path.join(base, "root");
  const skillRoot = path.join(root, "skills", "review");
  const outside = path.join(base, "outside");
  await put(skillRoot, { "SKILL.md": skill("review", "inside", "INSIDE BODY"), "file.md": "INSIDE FILE\n", "refs/target.md": "INSIDE TARGET\n" });
  await put(outside, { "SKILL.md": skill("review", "OUTSIDE DESCRIPTION", "OUTSIDE BODY"), "file.md": "OUTSIDE FILE\n", "refs/target.md": "OUTSIDE TARGET\n" });
  const catalog = await discoverResources([root]);

  const child = spawn(process.execPath, ["-e", SWAPPER, skillRoot, outside], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.once("exit", resolve));
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
    child.stdin!.end();
    child.kill();
    await exited;
  }
  const seen = Object.fromEntries(outcomes);
  assert.equal(leaks, 0, `outside bytes were returned ${leaks} times: ${JSON.stringify(seen)}`);
  assert.ok((outcomes.get("activated") ?? 0) > 0, `some activations succeeded: ${JSON.stringify(seen)}`);
  assert.ok((outcomes.get("SKILL_PATH_ESCAPE") ?? 0) + (outcomes.get("SKILL_CHANGED") ?? 0) > 0, `the swaps were seen: ${JSON.stringify(seen)}`);
  for (const key of outcomes.keys()) {
    assert.ok(["activated", "discovered", "discovery refused", "SKILL_PATH_ESCAPE", "SKILL_CHANGED", "SKILL_RESOURCE_MISSING"].includes(key), `unexpected outcome ${key}`);
  }
});
