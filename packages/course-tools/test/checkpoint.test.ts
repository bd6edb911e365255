import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { before, test } from "node:test";
import { CourseError } from "../src/core/errors.js";
import { listTree } from "../src/course/git.js";
import { buildHistory, findChapter, verifyLayer } from "../src/course/history.js";
import { homesIn } from "../src/course/chapter-home.js";
import { parseCommand, runCommandLine } from "../src/cli.js";
import { runCommandSync } from "./support/tooling.js";
import { cloneOf, fileScope, makeFakeCourse, realRepo, sh, tempDir } from "./support/fake-course.js";

/** Runs the command in-process and captures what it writes. */
async function run(argv: string[], repo: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await runCommandLine(["checkpoint", ...argv], {
    root: repo,
    io: { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } },
  });
  return { code, stdout, stderr };
}

/** Runs the real command line in `repo` (its own copy of the compiled tooling), as the tooling's bin would. */
function spawnCli(repo: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = runCommandSync(repo, "checkpoint", args);
  return { status: r.code, stdout: r.stdout, stderr: r.stderr };
}

test("parseArgs: one chapter id, options, and one-line USAGE errors", () => {
  assert.deepEqual(parseCommand("checkpoint", ["12"]), { help: false, chapter: "12", json: false, source: "HEAD", rebuild: false });
  assert.equal(parseCommand("checkpoint", ["3", "--json"]).chapter, "03");
  assert.equal(parseCommand("checkpoint", ["--json", "12"]).json, true);
  assert.equal(parseCommand("checkpoint", ["12", "--source", "main~1"]).source, "main~1");
  assert.equal(parseCommand("checkpoint", ["--help"]).help, true);
  assert.equal(parseCommand("checkpoint", ["-h"]).help, true);
  for (const bad of [[], ["12", "13"], ["twelve"], ["12", "--nope"], ["123"], ["12", "--source"]]) {
    assert.throws(
      () => parseCommand("checkpoint", bad),
      (e: unknown) => e instanceof CourseError && e.code === "USAGE" && !e.message.includes("\n"),
      JSON.stringify(bad),
    );
  }
});

// One synthetic course for the tests that only run `checkpoint 02` on it (which publishes the same branch each time).
const shared = fileScope();
let course = "";
before(() => {
  course = makeFakeCourse(shared, { linkModules: true });
});

test("checkpoint prints the chapter, full parent/target SHAs, focused test, teaching file, layer and next commands", async () => {
  const repo = course;
  const { code, stdout, stderr } = await run(["02"], repo);
  assert.equal(code, 0, stderr);
  const parent = sh(repo, ["rev-parse", "course/build-your-own-pi~1"]);
  const target = sh(repo, ["rev-parse", "course/build-your-own-pi"]);
  const lines = stdout.split("\n");
  assert.ok(lines.includes(`parent: ${parent}`), stdout);
  assert.ok(lines.includes(`target: ${target}`), stdout);
  assert.match(stdout, /^第 02 章 · 第二章$/m);
  assert.match(stdout, /聚焦测试: packages\/pi-course\/test\/02-beta\.test\.ts$/m);
  assert.match(stdout, /教学文件: packages\/pi-course\/src\/beta\.ts$/m);
  for (const f of ["chapters/02-beta/chapter.yaml", "chapters/02-beta/beta.ts", "packages/pi-course/test/02-beta-hardening.test.ts"])
    assert.ok(stdout.includes(f), f);
  assert.match(stdout, /7 files changed/);
  assert.match(stdout, /^提供文件: packages\/pi-course\/src\/beta-sep\.ts/m);
  assert.match(stdout, /^本章正文: chapters\/02-beta\/README\.md$/m);
  assert.ok(stdout.includes(`git diff ${parent} ${target} -- packages/pi-course/src/beta.ts`));
  assert.ok(stdout.includes("npm run practice -w @pi/course -- 02 <新目录>"));
  assert.ok(stdout.includes("npm run build -w @pi/course"));
  assert.ok(stdout.includes('node --test --test-name-pattern="Lab 2.1" packages/pi-course/dist/test/02-beta.test.js'));
  assert.ok(!stdout.includes("未提交"), "clean checkout: no uncommitted-changes notice");
});

test("--json gives the machine form with the same SHAs and the layer", async () => {
  const repo = course;
  const { code, stdout } = await run(["02", "--json"], repo);
  assert.equal(code, 0);
  const json = JSON.parse(stdout) as Record<string, unknown>;
  assert.equal(json.parent, sh(repo, ["rev-parse", "course/build-your-own-pi~1"]));
  assert.equal(json.target, sh(repo, ["rev-parse", "course/build-your-own-pi"]));
  assert.equal(json.source, sh(repo, ["rev-parse", "HEAD"]));
  assert.equal(json.id, "02");
  assert.equal(json.title, "第二章");
  assert.deepEqual(json.focusedTests, ["packages/pi-course/test/02-beta.test.ts"]);
  assert.deepEqual(json.teachingFiles, ["packages/pi-course/src/beta.ts"]);
  assert.deepEqual(json.providedFiles, ["packages/pi-course/src/beta-sep.ts"]);
  assert.equal(json.text, "chapters/02-beta/README.md");
  assert.deepEqual(json.layer, [
    "chapters/02-beta/README.md",
    "chapters/02-beta/beta.ts",
    "chapters/02-beta/chapter.yaml",
    "packages/pi-course/src/beta-sep.ts",
    "packages/pi-course/src/beta.ts",
    "packages/pi-course/test/02-beta-hardening.test.ts",
    "packages/pi-course/test/02-beta.test.ts",
  ]);
});

test("with uncommitted changes it uses committed HEAD, says so, and leaves status, index and HEAD alone", async (t) => {
  const repo = makeFakeCourse(t);
  writeFileSync(path.join(repo, "packages/pi-course/src/beta.ts"), "// half-written\n");
  const index = path.join(repo, ".git", "index");
  const before = [
    createHash("sha256").update(readFileSync(index)).digest("hex"),
    statSync(index).mtimeMs,
    sh(repo, ["rev-parse", "HEAD"]),
    sh(repo, ["symbolic-ref", "HEAD"]),
  ];
  const status = sh(repo, ["--no-optional-locks", "status", "--porcelain"]);
  const { code, stdout } = await run(["02"], repo);
  assert.equal(code, 0);
  assert.match(stdout, /未提交的改动/);
  const after = [
    createHash("sha256").update(readFileSync(index)).digest("hex"),
    statSync(index).mtimeMs,
    sh(repo, ["rev-parse", "HEAD"]),
    sh(repo, ["symbolic-ref", "HEAD"]),
  ];
  assert.deepEqual(after, before);
  assert.equal(sh(repo, ["--no-optional-locks", "status", "--porcelain"]), status);
  assert.equal(readFileSync(path.join(repo, "packages/pi-course/src/beta.ts"), "utf8"), "// half-written\n");
});

test("failures are one line with a stable code: unknown chapter (listing known ones), not a repo, bad manifest, shallow history", async (t) => {
  const repo = makeFakeCourse(t);
  const unknown = await run(["13"], repo);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^错误 \[CHAPTER_UNKNOWN\] .*01, 02\n$/);
  assert.equal(sh(repo, ["branch", "--list", "course/build-your-own-pi"]), "", "a failed command writes no branch");

  const notRepo = await run(["02"], tempDir(t));
  assert.equal(notRepo.code, 1);
  assert.match(notRepo.stderr, /^错误 \[NOT_A_GIT_REPO\] [^\n]*\n$/);

  const bad = makeFakeCourse(t, {
    overrides: {
      "chapters/02-beta/chapter.yaml": readFileSync(path.join(repo, "chapters/02-beta/chapter.yaml"), "utf8").replace(
        "hints: [打开 beta.ts, 看 betaRender 的签名, 连接目录, 用 join]",
        "hints: [只有一级]",
      ),
    },
  });
  const malformed = await run(["02"], bad);
  assert.equal(malformed.code, 1);
  assert.match(malformed.stderr, /^错误 \[MANIFEST_INVALID\] chapters\/02-beta\/chapter\.yaml: 字段 labs\[1\]\.hints [^\n]*\n$/);

  writeFileSync(path.join(repo, "x.txt"), "x\n");
  sh(repo, ["add", "x.txt"]);
  sh(repo, ["commit", "-q", "-m", "x"]);
  const shallow = cloneOf(t, `file://${repo}`, ["--depth", "1"]);
  const incomplete = await run(["02", "--source", "HEAD~1"], shallow);
  assert.equal(incomplete.code, 1);
  assert.match(incomplete.stderr, /^错误 \[HISTORY_INCOMPLETE\] [^\n]*--unshallow[^\n]*\n$/);

  const noSuchSource = await run(["02", "--source", "nonexist"], repo);
  assert.equal(noSuchSource.code, 2, "a --source naming no commit is a command-line mistake");
  assert.match(noSuchSource.stderr, /^错误 \[SOURCE_UNKNOWN\] [^\n]*"nonexist"[^\n]*\n$/);

  const usage = await run(["02", "03"], repo);
  assert.equal(usage.code, 2);
  assert.equal(usage.stderr.split("\n").length, 2);
});

test("the command line sets the exit status and prints --help", async () => {
  const repo = course;
  // The process ends with the status the command returns (one process: core/exit-status.test.ts has each error's status,
  // and 2 for an unknown chapter is the command table's, below and in the failures test above).
  const ok = spawnCli(repo, ["02"]);
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /^parent: [0-9a-f]{40}$/m);
  // The statuses of mistakes through the command table, in this process (cli.test.ts: every command's --help and usage errors).
  assert.equal((await run(["99"], repo)).code, 2, "an unknown chapter is a command-line mistake");
  assert.equal((await run(["--bogus"], repo)).code, 2);
  const help = await run(["--help"], repo);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^用法：npm run checkpoint/);
});

// In a clone (without a work tree: the history is read from objects), so the repository itself gets no branch from this test.
// That two clones agree is course/history.test.ts's: the ids follow from the tree listing alone, whatever git's settings.
test("this repository: the history of committed HEAD has every chapter, each layer exactly its manifest's files", async (t) => {
  const ids = homesIn((await listTree(realRepo, "HEAD")).map((e) => e.path)).map((home) => home.id);
  assert.ok(ids.length > 0, "HEAD has chapter manifests");
  // --shared borrows this repository's objects (as verify's snapshot does) instead of linking its
  // 40 MB of them into the clone: about 0.3 s of CPU less; the history's own objects go into the clone.
  const clone = cloneOf(t, realRepo, ["--shared", "--no-checkout", "--single-branch"]);
  const history = await buildHistory(clone);
  assert.deepEqual(
    history.chapters.map((c) => c.id),
    ids,
  );
  for (const id of ids) {
    const chapter = findChapter(history, id);
    assert.deepEqual(await verifyLayer(clone, chapter), [...chapter.manifest.files].sort(), `chapter ${id}`);
  }
});

test("from an older state of the course the branch with a newer chapter is kept, and the output says so", async (t) => {
  const repo = makeFakeCourse(t);
  assert.equal((await run(["02"], repo)).code, 0);
  const tip = sh(repo, ["rev-parse", "course/build-your-own-pi"]);
  sh(repo, ["rm", "-q", "chapters/02-beta/chapter.yaml"]);
  sh(repo, ["commit", "-q", "-m", "chapter 02 unpublished"]);
  const older = await run(["01"], repo);
  assert.equal(older.code, 0, older.stderr);
  assert.match(older.stdout, /^教学分支: course\/build-your-own-pi（保持不变：.*第 02 章.*--rebuild）$/m);
  assert.equal(sh(repo, ["rev-parse", "course/build-your-own-pi"]), tip);
  assert.equal((JSON.parse((await run(["01", "--json"], repo)).stdout) as { branchAction: string }).branchAction, "keep");
  const teaching = await run(["01", "--source", "course/build-your-own-pi~1"], repo);
  assert.equal(teaching.code, 1);
  assert.match(teaching.stderr, /^错误 \[HISTORY_SOURCE_GENERATED\] [^\n]*git switch main[^\n]*\n$/);
  assert.equal((await run(["01", "--rebuild"], repo)).code, 0);
  assert.notEqual(sh(repo, ["rev-parse", "course/build-your-own-pi"]), tip, "--rebuild replaces it");
});
