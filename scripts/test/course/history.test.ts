import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { CourseError } from "../../lib/core/errors.js";
import { git, requireRepoRoot } from "../../lib/course/git.js";
import {
  BASE_SUBJECT,
  COURSE_BRANCH,
  COURSE_IDENTITY,
  buildHistory,
  planHistory,
  publishHistory,
  findChapter,
  resolveCheckpoint,
  verifyLayer,
  type CourseHistory,
} from "../../lib/course/history.js";
import { cloneOf, makeFakeCourse, sh, tempDir } from "../support/fake-course.js";

const HEX40 = /^[0-9a-f]{40}$/;

function files(repo: string, commit: string): string[] {
  return sh(repo, ["ls-tree", "-r", "--name-only", commit]).split("\n").filter(Boolean).sort();
}

function shas(h: CourseHistory): string[] {
  return [h.base, ...h.chapters.flatMap((c) => [c.parent, c.target])];
}

function isCode(code: string) {
  return (error: unknown) => error instanceof CourseError && error.code === code;
}

test("the history is base + one commit per chapter; each layer is exactly the chapter's files", async (t) => {
  const repo = makeFakeCourse(t);
  const h = await buildHistory(repo);
  const source = files(repo, "HEAD");
  assert.equal(h.source, sh(repo, ["rev-parse", "HEAD"]));
  assert.equal(h.reused, false);
  assert.deepEqual(
    h.chapters.map((c) => c.id),
    ["01", "02"],
  );
  for (const sha of shas(h)) assert.match(sha, HEX40);
  assert.equal(sh(repo, ["rev-parse", `refs/heads/${COURSE_BRANCH}`]), h.tip);
  assert.equal(h.tip, h.chapters[1]!.target);

  const subjects = sh(repo, ["log", "--format=%s", "--reverse", COURSE_BRANCH]).split("\n");
  assert.deepEqual(subjects, [BASE_SUBJECT, "course(01): 第一章", "course(02): 第二章"]);
  assert.equal(
    sh(repo, ["log", "-1", "--format=%an <%ae> %aI %cn %cI", COURSE_BRANCH]),
    "pi-course <course@pi-course.invalid> 2026-01-01T00:00:00+00:00 pi-course 2026-01-01T00:00:00+00:00",
  );
  assert.match(sh(repo, ["log", "-1", "--format=%B", COURSE_BRANCH]), new RegExp(`Course-Source-Tree: ${h.sourceTree}`));

  const [one, two] = h.chapters as [CourseHistory["chapters"][0], CourseHistory["chapters"][0]];
  const claimed = [...one.manifest.files, ...two.manifest.files];
  // The base is the source minus every claimed file; the last chapter is the source itself.
  assert.deepEqual(
    files(repo, h.base),
    source.filter((f) => !claimed.includes(f)),
  );
  assert.deepEqual(
    files(repo, one.target),
    source.filter((f) => !two.manifest.files.includes(f)),
  );
  assert.equal(sh(repo, ["rev-parse", `${two.target}^{tree}`]), h.sourceTree);
  // Verified with git itself.
  for (const c of h.chapters) {
    assert.equal(sh(repo, ["rev-parse", `${c.target}^`]), c.parent);
    assert.deepEqual(await verifyLayer(repo, c), [...c.manifest.files].sort());
    assert.deepEqual(sh(repo, ["diff", "--name-only", c.parent, c.target]).split("\n").sort(), [...c.manifest.files].sort());
  }
  assert.equal(one.parent, h.base);
});

test("two clones, with different local git settings and environment, get the same SHAs", async (t) => {
  const repo = makeFakeCourse(t);
  const a = cloneOf(t, repo);
  const b = cloneOf(t, repo);
  // Settings that would change commit ids if they leaked into commit-tree.
  sh(b, ["config", "i18n.commitEncoding", "ISO-8859-1"]);
  sh(b, ["config", "commit.gpgSign", "true"]);
  sh(b, ["config", "user.name", "Someone Else"]);
  const ha = await buildHistory(a);
  const saved = { TZ: process.env.TZ, GIT_AUTHOR_NAME: process.env.GIT_AUTHOR_NAME, GIT_COMMITTER_DATE: process.env.GIT_COMMITTER_DATE };
  Object.assign(process.env, { TZ: "Asia/Shanghai", GIT_AUTHOR_NAME: "Env Person", GIT_COMMITTER_DATE: "2001-01-01T00:00:00Z" });
  t.after(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
  const hb = await buildHistory(b);
  assert.deepEqual(shas(hb), shas(ha));
  assert.equal(hb.tip, ha.tip);
});

test("an up-to-date branch is reused; new content rebuilds; a commit without content change does not", async (t) => {
  const repo = makeFakeCourse(t);
  const first = await buildHistory(repo);
  const again = await buildHistory(repo);
  assert.equal(again.reused, true);
  assert.deepEqual(shas(again), shas(first));

  sh(repo, ["commit", "-q", "--allow-empty", "-m", "no content change"]);
  const empty = await buildHistory(repo);
  assert.equal(empty.reused, true, "same source tree: the history is reused");
  assert.equal(empty.tip, first.tip);
  assert.notEqual(empty.source, first.source);

  writeFileSync(path.join(repo, "README.md"), "new base file\n");
  sh(repo, ["add", "README.md"]);
  sh(repo, ["commit", "-q", "-m", "docs"]);
  const rebuilt = await buildHistory(repo);
  assert.equal(rebuilt.reused, false);
  assert.notEqual(rebuilt.base, first.base);
  assert.ok(files(repo, rebuilt.base).includes("README.md"));
  assert.equal(sh(repo, ["rev-parse", COURSE_BRANCH]), rebuilt.tip);
});

/** Everything about the user's checkout that the history must never touch. */
function snapshot(repo: string): Record<string, string> {
  const index = path.join(repo, ".git", "index");
  // Read the index first, and ask for status without letting git refresh the index.
  const indexHash = createHash("sha256").update(readFileSync(index)).digest("hex");
  const indexMtime = String(statSync(index).mtimeMs);
  return {
    indexHash,
    indexMtime,
    status: sh(repo, ["--no-optional-locks", "status", "--porcelain", "--untracked-files=all"]),
    head: sh(repo, ["rev-parse", "HEAD"]),
    symbolic: sh(repo, ["symbolic-ref", "HEAD"]),
    config: readFileSync(path.join(repo, ".git", "config"), "utf8"),
    tracked: readFileSync(path.join(repo, "packages/pi-course/src/alpha.ts"), "utf8"),
  };
}

test("building never touches the working tree, the index, HEAD or config, and uses committed content only", async (t) => {
  const repo = makeFakeCourse(t);
  writeFileSync(path.join(repo, "packages/pi-course/src/alpha.ts"), "// uncommitted edit\n");
  writeFileSync(path.join(repo, "staged.txt"), "staged\n");
  sh(repo, ["add", "staged.txt"]);
  writeFileSync(path.join(repo, "untracked.txt"), "untracked\n");
  const before = snapshot(repo);
  const h = await buildHistory(repo);
  await buildHistory(repo, { force: true });
  await resolveCheckpoint(repo, "02");
  assert.deepEqual(snapshot(repo), before);
  const one = findChapter(h, "01");
  assert.equal(sh(repo, ["show", `${one.target}:packages/pi-course/src/alpha.ts`]), 'export function alpha(): string {\n  return "alpha";\n}');
  assert.ok(!files(repo, h.tip).includes("staged.txt"));
});

test("git location variables inherited from the environment (as inside a git hook) are ignored", async (t) => {
  const repo = makeFakeCourse(t);
  const other = makeFakeCourse(t);
  const otherRefs = sh(other, ["for-each-ref"]);
  const saved = { GIT_DIR: process.env.GIT_DIR, GIT_INDEX_FILE: process.env.GIT_INDEX_FILE, GIT_WORK_TREE: process.env.GIT_WORK_TREE };
  Object.assign(process.env, { GIT_DIR: path.join(other, ".git"), GIT_WORK_TREE: other, GIT_INDEX_FILE: path.join(other, ".git", "index") });
  t.after(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
  const h = await buildHistory(repo);
  assert.equal(sh(repo, ["rev-parse", COURSE_BRANCH]), h.tip);
  assert.equal(sh(other, ["for-each-ref"]), otherRefs);
});

test("a branch holding someone's own commit, or checked out, is never moved", async (t) => {
  const repo = makeFakeCourse(t);
  const h = await buildHistory(repo);
  // Someone commits on the generated branch.
  const own = sh(repo, ["commit-tree", `${h.tip}^{tree}`, "-p", h.tip, "-m", "my notes"]);
  sh(repo, ["update-ref", `refs/heads/${COURSE_BRANCH}`, own]);
  writeFileSync(path.join(repo, "more.txt"), "x\n");
  sh(repo, ["add", "more.txt"]);
  sh(repo, ["commit", "-q", "-m", "more"]);
  await assert.rejects(buildHistory(repo), isCode("HISTORY_BRANCH_BUSY"));
  assert.equal(sh(repo, ["rev-parse", COURSE_BRANCH]), own);

  // Checked out in a second work tree: refused as well, branch unchanged.
  sh(repo, ["update-ref", `refs/heads/${COURSE_BRANCH}`, h.tip]);
  const wt = path.join(tempDir(t), "wt");
  sh(repo, ["worktree", "add", "-q", wt, COURSE_BRANCH]);
  t.after(() => rmSync(wt, { recursive: true, force: true }));
  await assert.rejects(buildHistory(repo), isCode("HISTORY_BRANCH_BUSY"));
  assert.equal(sh(repo, ["rev-parse", COURSE_BRANCH]), h.tip);
});

test("a shallow clone builds from HEAD, and reports HISTORY_INCOMPLETE for history it lacks", async (t) => {
  const repo = makeFakeCourse(t);
  writeFileSync(path.join(repo, "second.txt"), "2\n");
  sh(repo, ["add", "second.txt"]);
  sh(repo, ["commit", "-q", "-m", "second"]);
  const full = await buildHistory(cloneOf(t, repo));
  const shallow = cloneOf(t, `file://${repo}`, ["--depth", "1"]);
  assert.equal(sh(shallow, ["rev-parse", "--is-shallow-repository"]), "true");
  assert.deepEqual(shas(await buildHistory(shallow)), shas(full));
  await assert.rejects(buildHistory(shallow, { source: "HEAD~1" }), isCode("HISTORY_INCOMPLETE"));
});

test("a missing object is HISTORY_INCOMPLETE before anything is written", async (t) => {
  const repo = makeFakeCourse(t);
  const blob = sh(repo, ["rev-parse", "HEAD:packages/pi-course/src/beta.ts"]);
  rmSync(path.join(repo, ".git", "objects", blob.slice(0, 2), blob.slice(2)));
  await assert.rejects(buildHistory(repo), isCode("HISTORY_INCOMPLETE"));
  assert.equal(sh(repo, ["branch", "--list", COURSE_BRANCH]), "");
});

test("outside a repository, or below its top level, is NOT_A_GIT_REPO", async (t) => {
  const plain = tempDir(t);
  await assert.rejects(requireRepoRoot(plain), isCode("NOT_A_GIT_REPO"));
  await assert.rejects(buildHistory(plain), isCode("NOT_A_GIT_REPO"));
  const repo = makeFakeCourse(t);
  await assert.rejects(requireRepoRoot(path.join(repo, "packages")), isCode("NOT_A_GIT_REPO"));
});

test("a malformed or inconsistent committed manifest stops the build with MANIFEST_INVALID", async (t) => {
  const missing = makeFakeCourse(t, {
    overrides: {
      "checkpoints/01.yaml":
        'format: 1\nid: "01"\ntitle: t\nfiles: [packages/pi-course/src/nope.ts, checkpoints/01.yaml]\nfocusedTests: [packages/pi-course/src/nope.ts]\n',
    },
  });
  await assert.rejects(buildHistory(missing), (e: unknown) => isCode("MANIFEST_INVALID")(e) && (e as Error).message.includes("nope.ts"));
  const twice = makeFakeCourse(t, {
    overrides: {
      "checkpoints/01.yaml":
        'format: 1\nid: "01"\ntitle: t\nfiles: [packages/pi-course/src/beta.ts, checkpoints/01.yaml]\nfocusedTests: [packages/pi-course/src/beta.ts]\n',
    },
  });
  await assert.rejects(buildHistory(twice), (e: unknown) => isCode("MANIFEST_INVALID")(e) && (e as Error).message.includes("beta.ts"));
  assert.equal(sh(twice, ["branch", "--list", COURSE_BRANCH]), "");
});

test("verifyLayer catches a history whose layer or parent is wrong", async (t) => {
  const repo = makeFakeCourse(t);
  const h = await buildHistory(repo);
  const two = findChapter(h, "02");
  // A chapter record whose claimed files do not match the diff.
  const wrongFiles = { ...two, manifest: { ...two.manifest, files: two.manifest.files.slice(1) } };
  await assert.rejects(verifyLayer(repo, wrongFiles), isCode("HISTORY_MISMATCH"));
  const wrongParent = { ...two, parent: h.base };
  await assert.rejects(verifyLayer(repo, wrongParent), isCode("HISTORY_MISMATCH"));
});

/** Environment that makes git write a commit as the tooling's identity (what a hand-made imitation would use). */
const AS_TOOLING = {
  GIT_AUTHOR_NAME: COURSE_IDENTITY.name,
  GIT_AUTHOR_EMAIL: COURSE_IDENTITY.email,
  GIT_AUTHOR_DATE: COURSE_IDENTITY.date,
};

test("planning writes no ref; an unknown chapter is refused before anything is generated", async (t) => {
  const repo = makeFakeCourse(t);
  const planned = await planHistory(repo);
  assert.equal(planned.branchAction, "move");
  assert.equal(sh(repo, ["branch", "--list", COURSE_BRANCH]), "", "planning moves nothing");
  assert.equal(sh(repo, ["cat-file", "-t", planned.tip]), "commit", "the commits exist as objects");
  await assert.rejects(planHistory(repo, { chapter: "99" }), isCode("CHAPTER_UNKNOWN"));
  await publishHistory(repo, planned);
  assert.equal(sh(repo, ["rev-parse", COURSE_BRANCH]), planned.tip);
  assert.equal((await planHistory(repo)).branchAction, "reuse");
});

test("a tip amended by hand with the tooling's author and trailers is neither reused nor replaced, even with force", async (t) => {
  const repo = makeFakeCourse(t);
  const h = await buildHistory(repo);
  const message = sh(repo, ["log", "-1", "--format=%B", h.tip]);
  // `git commit --amend` keeps author and message; only what git cannot keep differs (here the committer).
  const amended = sh(repo, ["commit-tree", `${h.tip}^{tree}`, "-p", `${h.tip}^`, "-m", message], AS_TOOLING);
  assert.notEqual(amended, h.tip);
  sh(repo, ["update-ref", `refs/heads/${COURSE_BRANCH}`, amended]);
  await assert.rejects(
    buildHistory(repo),
    (e: unknown) => isCode("HISTORY_BRANCH_BUSY")(e) && /git branch -m course\/build-your-own-pi/.test((e as Error).message),
  );
  await assert.rejects(buildHistory(repo, { force: true }), isCode("HISTORY_BRANCH_BUSY"));
  writeFileSync(path.join(repo, "README.md"), "new content\n");
  sh(repo, ["add", "README.md"]);
  sh(repo, ["commit", "-q", "-m", "docs"]);
  await assert.rejects(buildHistory(repo, { force: true }), isCode("HISTORY_BRANCH_BUSY"), "new content does not replace it either");
  assert.equal(sh(repo, ["rev-parse", COURSE_BRANCH]), amended);

  // A tip whose trailers name another builder version cannot be reproduced, so it is not replaced either.
  const foreignVersion = sh(repo, ["commit-tree", `${h.tip}^{tree}`, "-p", `${h.tip}^`, "-m", message.replace(/Course-Builder: .*/, "Course-Builder: 0")], {
    ...AS_TOOLING,
    GIT_COMMITTER_NAME: COURSE_IDENTITY.name,
    GIT_COMMITTER_EMAIL: COURSE_IDENTITY.email,
    GIT_COMMITTER_DATE: COURSE_IDENTITY.date,
  });
  sh(repo, ["update-ref", `refs/heads/${COURSE_BRANCH}`, foreignVersion]);
  await assert.rejects(buildHistory(repo), isCode("HISTORY_BRANCH_BUSY"));
  assert.equal(sh(repo, ["rev-parse", COURSE_BRANCH]), foreignVersion);
});

test("a history with fewer chapters never replaces a generated one unless forced; a generated commit is no source", async (t) => {
  const repo = makeFakeCourse(t);
  const full = await buildHistory(repo);
  // An older state of the course: chapter 02 not there yet.
  sh(repo, [
    "rm",
    "-q",
    "-r",
    "checkpoints/02.yaml",
    "packages/pi-course/src/beta.ts",
    "packages/pi-course/src/beta-sep.ts",
    "packages/pi-course/test/02-beta.test.ts",
    "packages/pi-course/test/02-beta-hardening.test.ts",
    "starters/02-beta.ts",
    "chapters/02-beta.md",
  ]);
  sh(repo, ["commit", "-q", "-m", "before chapter 02"]);
  const older = await buildHistory(repo);
  assert.equal(older.branchAction, "keep");
  assert.deepEqual(older.newerChapters, ["02"]);
  assert.deepEqual(
    older.chapters.map((c) => c.id),
    ["01"],
  );
  assert.equal(sh(repo, ["rev-parse", COURSE_BRANCH]), full.tip, "the longer history stays");
  assert.equal(sh(repo, ["rev-parse", `${older.chapters[0]!.target}^`]), older.chapters[0]!.parent, "the shorter one exists, unreferenced");
  const forced = await buildHistory(repo, { force: true });
  assert.equal(sh(repo, ["rev-parse", COURSE_BRANCH]), forced.tip);

  // Checked out on the teaching branch (as a learner checks out a chapter's parent), HEAD is no source.
  await buildHistory(repo, { source: "HEAD~1", force: true });
  for (const source of [COURSE_BRANCH, `${COURSE_BRANCH}~1`, `${COURSE_BRANCH}~2`]) {
    const before = sh(repo, ["rev-parse", COURSE_BRANCH]);
    await assert.rejects(buildHistory(repo, { source }), isCode("HISTORY_SOURCE_GENERATED"), source);
    assert.equal(sh(repo, ["rev-parse", COURSE_BRANCH]), before);
  }
});

test("a git process ended by an interruption signal (a terminal's Ctrl-C reaches the whole group) is ABORTED, not GIT_FAILED", {
  skip: process.platform === "win32" && "POSIX signals",
}, async (t) => {
  const repo = makeFakeCourse(t);
  const bin = path.join(tempDir(t), "bin");
  mkdirSync(bin);
  writeFileSync(path.join(bin, "git"), "#!/bin/sh\nkill -INT $$\n");
  chmodSync(path.join(bin, "git"), 0o755);
  const saved = process.env.PATH;
  process.env.PATH = `${bin}${path.delimiter}${saved ?? ""}`;
  t.after(() => {
    process.env.PATH = saved;
  });
  await assert.rejects(git(repo, ["status"]), isCode("ABORTED"));
});

test("the trees and commits computed in memory are byte for byte what git's own plumbing writes", async (t) => {
  const repo = makeFakeCourse(t);
  const h = await buildHistory(repo);
  const [one, two] = h.chapters as [CourseHistory["chapters"][0], CourseHistory["chapters"][0]];
  const index = { GIT_INDEX_FILE: path.join(tempDir(t), "index") };
  sh(repo, ["read-tree", h.sourceTree], index);
  sh(repo, ["rm", "-q", "--cached", ...two.manifest.files], index);
  assert.equal(sh(repo, ["write-tree"], index), one.tree, "chapter 01's tree");
  sh(repo, ["rm", "-q", "--cached", ...one.manifest.files], index);
  const baseTree = sh(repo, ["write-tree"], index);
  assert.equal(sh(repo, ["rev-parse", `${h.base}^{tree}`]), baseTree, "the base tree");
  const identity = {
    GIT_AUTHOR_NAME: COURSE_IDENTITY.name,
    GIT_AUTHOR_EMAIL: COURSE_IDENTITY.email,
    GIT_AUTHOR_DATE: COURSE_IDENTITY.date,
    GIT_COMMITTER_NAME: COURSE_IDENTITY.name,
    GIT_COMMITTER_EMAIL: COURSE_IDENTITY.email,
    GIT_COMMITTER_DATE: COURSE_IDENTITY.date,
  };
  for (const [commit, parent] of [
    [h.base, undefined],
    [one.target, one.parent],
    [two.target, two.parent],
  ] as const) {
    const message = `${sh(repo, ["cat-file", "commit", commit]).split("\n\n").slice(1).join("\n\n")}\n`;
    const tree = sh(repo, ["rev-parse", `${commit}^{tree}`]);
    const again = sh(
      repo,
      ["-c", "i18n.commitEncoding=UTF-8", "commit-tree", "--no-gpg-sign", tree, ...(parent ? ["-p", parent] : []), "-m", message.replace(/\n$/, "")],
      identity,
    );
    assert.equal(again, commit, `commit-tree gives ${commit}`);
  }
});
