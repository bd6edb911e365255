import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { CourseError } from "../lib/core/errors.js";
import { runLab } from "../lib/testing/labs.js";
import { listTree } from "../lib/course/git.js";
import { findLeaks, INHERITED_LEAK_LINE_LENGTH, isSignificantLine, type LeakPair, MIN_LEAK_LINE_LENGTH } from "../lib/practice/leak-audit.js";
import { loadManifest } from "../lib/course/manifest.js";
import { PRACTICE_MARKER } from "../lib/core/paths.js";
import { createPractice, type PracticeStep } from "../lib/practice/folder.js";
import { runCommandLine } from "../cli.js";
import { formatResult, shellQuote } from "../practice.js";
import { installTooling } from "./support/tooling.js";
import { CHAPTER_TEXT_BETA, cloneOf, makeFakeCourse, realRepo, REFERENCE_BETA, SCAFFOLD_ERROR, sh, STARTER_BETA } from "./support/fake-course.js";

function isCode(code: string) {
  return (error: unknown) => error instanceof CourseError && error.code === code;
}

/** Every path under `dir` with a hash of each file: a fingerprint of a folder tree. */
function fingerprint(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const name of readdirSync(path.join(dir, rel)).sort()) {
      const child = path.join(rel, name);
      const st = lstatSync(path.join(dir, child));
      if (st.isDirectory()) {
        out.push(`${child}/`);
        walk(child);
      } else out.push(`${child} ${st.isFile() ? createHash("sha256").update(readFileSync(path.join(dir, child))).digest("hex") : "link"}`);
    }
  };
  walk("");
  return out;
}

function leftovers(parent: string): string[] {
  return readdirSync(parent).filter((name) => name.includes(".partial-"));
}

const PAIR: LeakPair = { teachingFile: "src/beta.ts", reference: REFERENCE_BETA, starter: STARTER_BETA };

test("leak audit: a planted reference line is caught with file and line number", () => {
  const planted = `const x = 1;\n  return betaCatalog(names).join(" | ");\n`;
  const leaks = findLeaks([{ file: "notes.md", text: "nothing here\n" }, { file: "test/a.ts", text: planted }], [PAIR]);
  assert.deepEqual(leaks, [{ file: "test/a.ts", line: 2, text: 'return betaCatalog(names).join(" | ");', teachingFile: "src/beta.ts" }]);
  // CRLF line ends and different indentation do not hide a leak.
  assert.equal(findLeaks([{ file: "b", text: "x\r\n\t\treturn betaCatalog(names).join(\" | \");\r\n" }], [PAIR]).length, 1);
});

test("leak audit: lines the starter also has, short lines and punctuation-only lines are ignored", () => {
  const given = "export function betaCatalog(names: readonly string[]): string[] {"; // in the starter too
  const short = "return out;"; // < MIN_LEAK_LINE_LENGTH
  const punct = "}));  ]);  });";
  const reference = `${given}\n${short}\n${punct}\n`;
  const pair: LeakPair = { teachingFile: "t.ts", reference, starter: `${given}\n` };
  assert.deepEqual(findLeaks([{ file: "f.ts", text: reference }], [pair]), []);
  assert.ok(short.length < MIN_LEAK_LINE_LENGTH);
  assert.equal(isSignificantLine(punct), false);
  assert.equal(isSignificantLine("const a = b;"), true);
  assert.equal(isSignificantLine("return x + 1"), true);
  assert.equal(isSignificantLine("return x+1;"), false);
});

test("leak audit: files inherited from the parent are checked for distinctive answer lines only", () => {
  const idiom = "clearTimeout(timer);"; // shorter than INHERITED_LEAK_LINE_LENGTH
  const distinctive = "const unique = [...new Set(names)].sort(); // keep order stable";
  const pair: LeakPair = { teachingFile: "t.ts", reference: `${idiom}\n${distinctive}\n`, starter: "" };
  assert.ok(idiom.length >= MIN_LEAK_LINE_LENGTH && idiom.length < INHERITED_LEAK_LINE_LENGTH);
  assert.ok(distinctive.length >= INHERITED_LEAK_LINE_LENGTH);
  const leaks = findLeaks(
    [
      { file: "tooling.ts", text: `  ${idiom}\n`, inherited: true },
      { file: "bench.ts", text: `x\n  ${distinctive}\n`, inherited: true },
      { file: "test.ts", text: `  ${idiom}\n` },
    ],
    [pair],
  );
  assert.deepEqual(leaks.map((l) => `${l.file}:${l.line}`), ["bench.ts:2", "test.ts:1"]);
});

test("practice writes the parent tree, the focused test, the starter over the teaching file, lab data, marker and guide", async (t) => {
  const repo = makeFakeCourse(t);
  const dest = path.join(path.dirname(repo), "p02");
  const result = await createPractice({ repo, id: "02", dest });
  assert.equal(result.dest, dest);
  const parent = sh(repo, ["rev-parse", "course/build-your-own-pi~1"]);
  const target = sh(repo, ["rev-parse", "course/build-your-own-pi"]);
  assert.deepEqual([result.parent, result.target], [parent, target]);
  const read = (f: string): string => readFileSync(path.join(dest, f), "utf8");

  assert.equal(existsSync(path.join(dest, ".git")), false);
  assert.equal(read("packages/pi-course/src/alpha.ts"), sh(repo, ["show", "HEAD:packages/pi-course/src/alpha.ts"]) + "\n");
  assert.equal(read("packages/pi-course/test/01-alpha.test.ts").length > 0, true);
  assert.equal(read("packages/pi-course/test/02-beta.test.ts"), sh(repo, ["show", `${target}:packages/pi-course/test/02-beta.test.ts`]) + "\n");
  assert.equal(read("packages/pi-course/src/beta.ts"), STARTER_BETA);
  assert.equal(read(".pi-course/starter/packages/pi-course/src/beta.ts"), STARTER_BETA, "a pristine starter copy for reset");
  assert.equal(existsSync(path.join(dest, "packages/pi-course/test/02-beta-hardening.test.ts")), false);
  assert.equal(existsSync(path.join(dest, "starters")), false);
  assert.equal(read("COURSE.md"), "# 课程指南\n\n总体说明。\n");
  // Provided files and the chapter text arrive from the target as they are.
  assert.equal(read("packages/pi-course/src/beta-sep.ts"), 'export const BETA_SEPARATOR = " | ";\n');
  assert.equal(read("chapters/02-beta.md"), CHAPTER_TEXT_BETA);

  const manifest = await loadManifest(dest, "02");
  assert.equal(manifest.labs.length, 2);
  // Only the exercise fault, without the reference edit it is written against.
  assert.deepEqual(manifest.faults.map((f) => f.id), ["2.1-no-sort"]);
  assert.equal(manifest.faults[0]?.learner?.insert, "unique.reverse(); // 故意错误");
  assert.ok(!read("checkpoints/02.yaml").includes("find:"));
  assert.ok(!read("checkpoints/02.yaml").includes("replace:"));
  assert.ok(read("checkpoints/02.yaml").startsWith("# chapter 02 (synthetic)"), "comments are kept");

  assert.deepEqual(JSON.parse(read(PRACTICE_MARKER)), { chapter: "02", parent, target, source: sh(repo, ["rev-parse", "HEAD"]), createdBy: "practice" });

  const guide = read("LEARNING.md");
  for (const needle of [
    "重建",
    parent,
    target,
    sh(repo, ["rev-parse", "HEAD"]),
    "packages/pi-course/test/02-beta.test.ts",
    "本章正文：`chapters/02-beta.md`",
    "本章提供的文件（直接使用，不用改写）：`packages/pi-course/src/beta-sep.ts`",
    "npm install",
    "npm run build -w @pi/course",
    'node --test --test-name-pattern="Lab 2.1" packages/pi-course/dist/test/02-beta.test.js',
    "**0/2**",
    SCAFFOLD_ERROR,
    "| 2.1 | 目录去重并排序 | 2 |",
    "| 2.2 | 渲染 | 1 |",
    "npm run hint -w @pi/course -- 2.1",
    "npm run lab -w @pi/course -- 2.1",
    "npm run fault -w @pi/course -- 02",
    "node --test packages/pi-course/dist/test/02-beta.test.js",
    "npm test -w @pi/course   # 到第 02 章为止（01、02）的全部测试都通过",
    "## 先读正文",
    "先读它的“重建入口”一节",
  ]) {
    assert.ok(guide.includes(needle), `LEARNING.md should contain ${needle}`);
  }
  // Everything else in the folder is exactly the parent tree.
  const parentFiles = (await listTree(repo, parent)).map((e) => (e.path === "LEARNING.md" ? "COURSE.md" : e.path));
  const expected = [
    ...parentFiles,
    "packages/pi-course/test/02-beta.test.ts",
    "packages/pi-course/src/beta.ts",
    "packages/pi-course/src/beta-sep.ts",
    "chapters/02-beta.md",
    "checkpoints/02.yaml",
    PRACTICE_MARKER,
    ".pi-course/starter/packages/pi-course/src/beta.ts",
    "LEARNING.md",
  ].sort();
  const actual = fingerprint(dest).filter((l) => !l.endsWith("/")).map((l) => l.split(" ")[0]!).sort();
  assert.deepEqual(actual, expected);
});

test("practice refuses an existing destination, one inside the repo (also through a symlink) or without a parent, changing nothing", async (t) => {
  const repo = makeFakeCourse(t);
  const root = path.dirname(repo);
  const existing = path.join(root, "mine");
  mkdirSync(existing);
  writeFileSync(path.join(existing, "keep.txt"), "my work\n");
  symlinkSync(repo, path.join(root, "via-link"));
  const before = { root: fingerprint(root), status: sh(repo, ["--no-optional-locks", "status", "--porcelain", "--untracked-files=all"]) };
  const cases: [string, string][] = [
    [existing, "DEST_EXISTS"],
    [path.join(repo, "practice"), "DEST_INSIDE_REPO"],
    [path.join(repo, "packages"), "DEST_INSIDE_REPO"],
    [path.join(root, "via-link", "practice"), "DEST_INSIDE_REPO"],
    [path.join(root, "no", "such", "parent"), "DEST_PARENT_MISSING"],
  ];
  for (const [dest, code] of cases) await assert.rejects(createPractice({ repo, id: "02", dest }), isCode(code), dest);
  assert.deepEqual({ root: fingerprint(root), status: sh(repo, ["--no-optional-locks", "status", "--porcelain", "--untracked-files=all"]) }, before);
});

test("a failure or an abort at any step leaves neither the destination nor a temporary folder", async (t) => {
  const repo = makeFakeCourse(t, { linkModules: true });
  const root = path.dirname(repo);
  const steps: PracticeStep[] = ["checkpoint", "destination", "files", "audit", "modules"];
  for (const at of steps) {
    const dest = path.join(root, `fail-${at}`);
    let seenTemp: string | undefined;
    await assert.rejects(
      createPractice({
        repo,
        id: "02",
        dest,
        linkModules: true,
        hooks: {
          afterStep(step, temp) {
            if (step === at) {
              seenTemp = temp;
              throw new Error(`injected failure at ${step}`);
            }
          },
        },
      }),
      /injected failure/,
    );
    assert.equal(existsSync(dest), false, at);
    if (seenTemp) assert.equal(existsSync(seenTemp), false, `${at}: temp folder removed`);
    assert.deepEqual(leftovers(root), [], at);
    assert.equal(sh(repo, ["branch", "--list", "course/build-your-own-pi"]), "", `${at}: a failed practice writes no branch`);

    const controller = new AbortController();
    await assert.rejects(
      createPractice({ repo, id: "02", dest, signal: controller.signal, hooks: { afterStep: (step) => (step === at ? controller.abort() : undefined) } }),
      isCode("ABORTED"),
    );
    assert.equal(existsSync(dest), false, at);
    assert.deepEqual(leftovers(root), [], at);
  }
  // The hooks really ran inside the temporary folder (so the checks above were meaningful).
  let tempSeen = "";
  await createPractice({ repo, id: "02", dest: path.join(root, "ok"), hooks: { afterStep: (step, temp) => void (step === "files" && (tempSeen = temp ?? "")) } });
  assert.match(path.basename(tempSeen), /^\.ok\.partial-/);
  assert.equal(path.dirname(tempSeen), root);
  assert.match(sh(repo, ["rev-parse", "course/build-your-own-pi"]), /^[0-9a-f]{40}$/, "a successful practice publishes the branch");
});

test("a reference line in any file of the folder is LEAK_DETECTED (file, line, text) and nothing is written", async (t) => {
  const fake = makeFakeCourse(t);
  const testFile = readFileSync(path.join(fake, "packages/pi-course/test/02-beta.test.ts"), "utf8");
  const repo = makeFakeCourse(t, {
    overrides: { "packages/pi-course/test/02-beta.test.ts": testFile.replace("test(\"Lab 2.2", "// hint:\n//   const unique = [...new Set(names)].sort();\ntest(\"Lab 2.2") },
  });
  const dest = path.join(path.dirname(repo), "leaky");
  await assert.rejects(createPractice({ repo, id: "02", dest }), (e: unknown) => {
    assert.ok(isCode("LEAK_DETECTED")(e));
    assert.match((e as Error).message, /packages\/pi-course\/test\/02-beta\.test\.ts:\d+ .*const unique = \[\.\.\.new Set\(names\)\]\.sort\(\);/);
    return true;
  });
  assert.equal(existsSync(dest), false);
  assert.deepEqual(leftovers(path.dirname(repo)), []);
});

test("a starter carrying reference code in a comment is LEAK_DETECTED naming the starter's line, and nothing is written", async (t) => {
  const pasted = "  // 参考：const unique = [...new Set(names)].sort();";
  const starter = STARTER_BETA.replace("  void alpha;", `${pasted}\n  void alpha;`);
  const repo = makeFakeCourse(t, { overrides: { "starters/02-beta.ts": starter } });
  const dest = path.join(path.dirname(repo), "leaky-starter");
  const line = starter.split("\n").indexOf(pasted) + 1;
  await assert.rejects(createPractice({ repo, id: "02", dest }), (e: unknown) => {
    assert.ok(isCode("LEAK_DETECTED")(e));
    assert.match((e as Error).message, new RegExp(`starters/02-beta\\.ts:${line} 的注释含有 packages/pi-course/src/beta\\.ts 参考实现函数体中的代码「const unique = \\[\\.\\.\\.new Set\\(names\\)\\]\\.sort\\(\\);」`));
    return true;
  });
  assert.equal(existsSync(dest), false);
  assert.deepEqual(leftovers(path.dirname(repo)), []);
});

/** Runs `main` in-process with `INIT_CWD` set, capturing output. */
async function runMain(argv: string[], repo: string, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const saved = process.env.INIT_CWD;
  process.env.INIT_CWD = cwd;
  try {
    const code = await runCommandLine(["practice", ...argv], { root: repo, io: { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } } });
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
    `import { parseCommand } from "./.pi-course/tooling/cli.js";
import { run } from "./.pi-course/tooling/practice.js";
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

test("first red: the generated folder builds and its first lab fails 0/N with the exact scaffold error", async (t) => {
  // The real chapter 12 when this repository has it committed; otherwise the synthetic chapter.
  const headFiles = new Set((await listTree(realRepo, "HEAD")).map((e) => e.path));
  const real = headFiles.has("checkpoints/12.yaml");
  const repo = real ? cloneOf(t, realRepo) : makeFakeCourse(t, { linkModules: true });
  if (real) symlinkSync(path.join(realRepo, "node_modules"), path.join(repo, "node_modules"), "junction");
  const id = real ? "12" : "02";
  const dest = path.join(path.dirname(repo), `practice-${id}`);
  await createPractice({ repo, id, dest, linkModules: true });
  const manifest = await loadManifest(dest, id);
  const first = manifest.labs[0]!;
  const red = await runLab(dest, manifest, { chapter: id, lab: first.id });
  assert.equal(red.kind, "tested", JSON.stringify(red));
  assert.ok(red.kind === "tested");
  const [lab] = red.labs;
  assert.deepEqual([lab?.passed, lab?.total, lab?.status], [0, first.tests, "not_started"], JSON.stringify(lab));
  assert.ok(lab!.failures.length === first.tests && lab!.failures.every((f) => f.message.includes(first.scaffoldError)), JSON.stringify(lab!.failures));
  if (!real) assert.equal(first.tests, 2);
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

test("rough edges: a parent that cannot be written is DEST_PARENT_READONLY, not a raw EACCES, and nothing is left", { skip: process.platform === "win32" && "POSIX permissions" }, async (t) => {
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

test("rough edges: the cd hint reaches folders whose names hold spaces, quotes, $ and backticks", async (t) => {
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
  const repo = makeFakeCourse(t);
  const work = path.join(path.dirname(repo), "work");
  mkdirSync(work);
  const name = "it's $HOME `x` here";
  const r = await runMain(["02", name], repo, work);
  assert.equal(r.code, 0, r.stderr);
  const cd = r.stdout.split("\n").find((line) => line.trimStart().startsWith("cd "))!.trim();
  const landed = spawnSync("sh", ["-c", `${cd} && pwd -P`], { cwd: work, encoding: "utf8" });
  assert.equal(landed.status, 0, landed.stderr);
  assert.equal(landed.stdout.trim(), realpathSync(path.join(work, name)));
  const absolute = formatResult({ dest: "/a b/it's", chapter: "02", title: "t", parent: "p", target: "t", source: "s", files: 1, audited: 1 }, "/elsewhere", false, "linux");
  assert.ok(absolute.includes("  cd '/a b/it'\\''s'\n"), absolute);
});
