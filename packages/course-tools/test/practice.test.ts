/** The `practice` command (`packages/course-tools/src/practice.ts`): relative destinations, a second run, Ctrl-C, and the rough edges of its command line. */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, realpathSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { PRACTICE_MARKER } from "../src/core/paths.js";
import { createPractice } from "../src/practice/folder.js";
import { runCommandLine } from "../src/cli.js";
import { formatResult, shellQuote } from "../src/practice.js";
import { installTooling } from "./support/tooling.js";
import { makeFakeCourse, sh, tempDir } from "./support/fake-course.js";
import { fingerprint, isCode, leftovers } from "./support/folders.js";

/** Runs `main` in-process with `INIT_CWD` set, capturing output. */
async function runMain(argv: string[], repo: string, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const saved = process.env.INIT_CWD;
  process.env.INIT_CWD = cwd;
  try {
    const code = await runCommandLine(["practice", ...argv], {
      root: repo,
      io: { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } },
    });
    return { code, stdout, stderr };
  } finally {
    if (saved === undefined) delete process.env.INIT_CWD;
    else process.env.INIT_CWD = saved;
  }
}

test("the command: relative to the user's directory, default beside the repo, and a second run refuses and changes nothing", async (t) => {
  const repo = makeFakeCourse(t);
  const root = path.dirname(repo);
  const work = path.join(root, "work");
  mkdirSync(work);
  const first = await runMain(["02", "mine"], repo, work);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /^parent: [0-9a-f]{40}$/m);
  assert.match(first.stdout, /^ {2}cd mine$/m, "the next steps start in the new folder, relative to where the command was typed");
  assert.ok(existsSync(path.join(work, "mine", "LEARNING.md")));
  const before = fingerprint(path.join(work, "mine"));
  const mtime = statSync(path.join(work, "mine", "LEARNING.md")).mtimeMs;
  const second = await runMain(["02", "mine"], repo, work);
  assert.equal(second.code, 1);
  assert.match(second.stderr, /^错误 \[DEST_EXISTS\] [^\n]*\n$/);
  assert.deepEqual(fingerprint(path.join(work, "mine")), before);
  assert.equal(statSync(path.join(work, "mine", "LEARNING.md")).mtimeMs, mtime);
  assert.deepEqual(leftovers(work), []);

  const byDefault = await runMain(["2"], repo, work);
  assert.equal(byDefault.code, 0, byDefault.stderr);
  assert.ok(existsSync(path.join(root, "pi-practice-02", PRACTICE_MARKER)));

  const inside = await runMain(["02", "."], repo, repo);
  assert.equal(inside.code, 1);
  assert.match(inside.stderr, /DEST_INSIDE_REPO/);
  assert.equal((await runMain(["02", "a", "b"], repo, work)).code, 2);
  const help = await runMain(["--help"], repo, work);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^用法：npm run practice -w @pi\/course -- <章节号> \[目录\]/);
  const unavailable = await runMain(["01", "x"], repo, work);
  assert.equal(unavailable.code, 1);
  assert.match(unavailable.stderr, /PRACTICE_UNAVAILABLE/);
  assert.equal(existsSync(path.join(work, "x")), false);
});

test("Ctrl-C while the folder is being written: exit 130, nothing left behind", (t) => {
  const repo = makeFakeCourse(t, { linkModules: true });
  const root = path.dirname(repo);
  const script = path.join(repo, "interrupt.mjs");
  installTooling(repo);
  writeFileSync(
    script,
    `import { parseCommand } from "./packages/course-tools/dist/src/cli.js";
import { run } from "./packages/course-tools/dist/src/practice.js";
const interrupted = new Promise((resolve) => process.once("SIGINT", resolve));
const keepAlive = setInterval(() => {}, 1000); // signal handles alone do not keep Node running
const { help: _help, ...args } = parseCommand("practice", ["02", "../interrupted"]);
process.exitCode = await run(args, { root: process.cwd(), io: process }, {
  hooks: {
    async afterStep(step) {
      if (step !== "files") return;
      process.kill(process.pid, "SIGINT");
      await interrupted; // the command's own handler has run by now
    },
  },
});
clearInterval(keepAlive);
`,
  );
  const env: NodeJS.ProcessEnv = { ...process.env, INIT_CWD: repo };
  delete env.NODE_TEST_CONTEXT;
  const r = spawnSync(process.execPath, [script], { cwd: repo, env, encoding: "utf8" });
  assert.equal(r.signal, "SIGINT", r.stderr);
  assert.match(r.stderr, /ABORTED/);
  assert.equal(existsSync(path.join(root, "interrupted")), false);
  assert.deepEqual(leftovers(root), []);
});

test("rough edges: --source naming no commit is a usage-style error (exit 2); no branch is written", async (t) => {
  const repo = makeFakeCourse(t);
  const work = path.join(path.dirname(repo), "work");
  mkdirSync(work);
  const r = await runMain(["02", "x", "--source", "nonexist"], repo, work);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /^错误 \[SOURCE_UNKNOWN\] [^\n]*"nonexist"[^\n]*\n$/);
  assert.equal(existsSync(path.join(work, "x")), false);
  assert.equal(sh(repo, ["branch", "--list", "course/build-your-own-pi"]), "");
});

test("rough edges: a parent that is a file, or lies below one, is named as a file; the inside-repo advice names the real default folder", async (t) => {
  const repo = makeFakeCourse(t);
  const root = path.dirname(repo);
  const file = path.join(root, "notes.txt");
  writeFileSync(file, "x\n");
  for (const dest of [path.join(file, "p"), path.join(file, "deeper", "p")]) {
    await assert.rejects(createPractice({ repo, id: "02", dest }), (e: unknown) => {
      assert.ok(isCode("DEST_PARENT_NOT_DIR")(e), String(e));
      assert.ok((e as Error).message.startsWith(`${file} 是一个文件`), (e as Error).message);
      return true;
    });
  }
  await assert.rejects(createPractice({ repo, id: "02", dest: path.join(root, "missing", "p") }), isCode("DEST_PARENT_MISSING"));
  await assert.rejects(createPractice({ repo, id: "02", dest: path.join(repo, "inside") }), (e: unknown) => {
    assert.ok(isCode("DEST_INSIDE_REPO")(e));
    assert.ok((e as Error).message.endsWith(`例如 ${path.join(root, "pi-practice-02")}`), (e as Error).message);
    return true;
  });
  assert.deepEqual(leftovers(root), []);
});

test("rough edges: a parent that cannot be written is DEST_PARENT_READONLY, not a raw EACCES, and nothing is left", {
  skip: process.platform === "win32" && "POSIX permissions",
}, async (t) => {
  const repo = makeFakeCourse(t);
  // root may write anywhere a mode allows nothing; /sys refuses even root.
  const asRoot = process.getuid?.() === 0;
  if (asRoot && !existsSync("/sys")) return t.skip("running as root without /sys");
  const parent = asRoot ? "/sys" : path.join(path.dirname(repo), "locked");
  if (!asRoot) {
    mkdirSync(parent);
    chmodSync(parent, 0o555);
    t.after(() => chmodSync(parent, 0o755));
  }
  await assert.rejects(createPractice({ repo, id: "02", dest: path.join(parent, "p") }), (e: unknown) => {
    assert.ok(isCode("DEST_PARENT_READONLY")(e), String(e));
    assert.ok((e as Error).message.includes(parent));
    return true;
  });
  assert.deepEqual(leftovers(parent), []);
  assert.equal(sh(repo, ["branch", "--list", "course/build-your-own-pi"]), "");
});

test("rough edges: the cd hint reaches folders whose names hold spaces, quotes, $ and backticks", (t) => {
  for (const [name, quoted] of [
    ["plain", "plain"],
    ["with space", "'with space'"],
    ["it's", "'it'\\''s'"],
    ["$HOME", "'$HOME'"],
    ["`pwd`", "'`pwd`'"],
  ] as const) {
    assert.equal(shellQuote(name, "linux"), quoted, name);
  }
  assert.equal(shellQuote("C:\\Users\\it's here", "win32"), '"C:\\Users\\it\'s here"', "cmd.exe knows double quotes only");
  // What the command prints after a run (the first test: it prints this); the folder made here by hand.
  const work = tempDir(t);
  const name = "it's $HOME `x` here";
  mkdirSync(path.join(work, name));
  const printed = formatResult(
    { dest: path.join(work, name), chapter: "02", title: "t", parent: "p", target: "t", source: "s", files: 1, audited: 1 },
    work,
    false,
  );
  const cd = printed
    .split("\n")
    .find((line) => line.trimStart().startsWith("cd "))!
    .trim();
  const landed = spawnSync("sh", ["-c", `${cd} && pwd -P`], { cwd: work, encoding: "utf8" });
  assert.equal(landed.status, 0, landed.stderr);
  assert.equal(landed.stdout.trim(), realpathSync(path.join(work, name)));
  const absolute = formatResult(
    { dest: "/a b/it's", chapter: "02", title: "t", parent: "p", target: "t", source: "s", files: 1, audited: 1 },
    "/elsewhere",
    false,
    "linux",
  );
  assert.ok(absolute.includes("  cd '/a b/it'\\''s'\n"), absolute);
});
