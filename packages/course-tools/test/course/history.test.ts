/**
 * `course/history.ts`: the teaching history. How its trees and commits follow from a tree
 * listing and the manifests is checked on listings alone (`historyObjects`, no git); what
 * needs git (the objects git writes, the branch and when it moves, the user's checkout left
 * alone, shallow clones, missing objects, git's settings and variables) on the synthetic course,
 * one course shared by the tests that only read it.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { before, test } from "node:test";
import { CourseError } from "../../src/core/errors.js";
import { git, requireRepoRoot, type TreeEntry } from "../../src/course/git.js";
import {
  BASE_SUBJECT,
  COURSE_BRANCH,
  COURSE_IDENTITY,
  buildHistory,
  HISTORY_BUILDER_VERSION,
  historyObjects,
  planHistory,
  publishHistory,
  findChapter,
  resolveCheckpoint,
  verifyLayer,
  type CourseHistory,
} from "../../src/course/history.js";
import { claimHome, parseManifest, type ChapterManifest } from "../../src/course/manifest.js";
import { objectId, treeContent } from "../../src/course/objects.js";
import { cloneOf, fileScope, makeFakeCourse, sh, tempDir } from "../support/fake-course.js";

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

/** The id git gives a blob holding `text`. */
function blobId(text: string): string {
  const content = Buffer.from(text, "utf8");
  return createHash("sha1").update(`blob ${content.length}\0`).update(content).digest("hex");
}

/**
 * A tree holding `paths` (each file's content is its own path), as `git ls-tree -r -t` lists
 * it: its id and its entries, folders included. Made from the files up, so that the tree of
 * any subset of them is made the same way.
 */
function listing(paths: readonly string[]): { tree: string; entries: TreeEntry[] } {
  const entries: TreeEntry[] = [];
  const treeOf = (dir: string): string => {
    const prefix = dir === "" ? "" : `${dir}/`;
    const below = paths.filter((p) => p.startsWith(prefix)).map((p) => p.slice(prefix.length));
    const children = [...new Set(below.map((rest) => rest.split("/")[0]!))].map((name) => {
      const full = `${prefix}${name}`;
      if (below.includes(name)) return { name, mode: "100644", type: "blob" as const, oid: blobId(full) };
      return { name, mode: "040000", type: "tree" as const, oid: treeOf(full) };
    });
    for (const child of children) entries.push({ mode: child.mode, type: child.type, oid: child.oid, path: `${prefix}${child.name}` });
    return objectId("tree", treeContent(children), "sha1");
  };
  const tree = treeOf("");
  return { tree, entries: entries.sort((a, b) => (a.path < b.path ? -1 : 1)) };
}

const SOURCE = [
  "README.md",
  "chapters/01-one/chapter.yaml",
  "chapters/02-two/README.md",
  "chapters/02-two/chapter.yaml",
  "chapters/03-three/chapter.yaml",
  "chapters/03-three/solutions/a-kept.ts",
  "packages/pi-course/src/one.ts",
  "packages/pi-course/src/two.ts",
  "packages/pi-course/src/shared.ts",
  "packages/pi-course/test/01-one.test.ts",
  "packages/pi-course/test/02-two.test.ts",
  "packages/pi-course/test/03-three.test.ts",
  "starters/03/three.ts",
];
/** A chapter manifest in home `chapters/<id>-<slug>` claiming `claimed` and every file of its home in `SOURCE`. */
function chapter(id: string, slug: string, claimed: readonly string[]): ChapterManifest {
  const manifest = parseManifest(
    `format: 1\nid: "${id}"\ntitle: 第 ${id} 章\nfiles: [${claimed.join(", ")}]\nfocusedTests: [${claimed[0]}]\n`,
    `chapters/${id}-${slug}/chapter.yaml`,
  );
  return claimHome(manifest, SOURCE);
}

const CHAPTERS = [
  chapter("01", "one", ["packages/pi-course/src/one.ts", "packages/pi-course/test/01-one.test.ts"]),
  chapter("02", "two", ["packages/pi-course/src/two.ts", "packages/pi-course/test/02-two.test.ts"]),
  // The only file of its folder: the folder goes with it.
  chapter("03", "three", ["packages/pi-course/test/03-three.test.ts", "starters/03/three.ts"]),
];

test("each chapter claims its whole home: the files its manifest does not name go into its layer too", () => {
  assert.deepEqual(CHAPTERS[1]!.files, [
    "packages/pi-course/src/two.ts",
    "packages/pi-course/test/02-two.test.ts",
    "chapters/02-two/chapter.yaml",
    "chapters/02-two/README.md",
  ]);
  assert.ok(CHAPTERS[2]!.files.includes("chapters/03-three/solutions/a-kept.ts"));
});

/** The header lines and message of a commit object. */
function commitText(planned: ReturnType<typeof historyObjects>, oid: string): string {
  const commit = planned.objects.find((o) => o.oid === oid && o.type === "commit");
  assert.ok(commit, `commit ${oid} is among the objects`);
  return commit.content.toString("utf8");
}

test("layers from a tree listing: chapter N's tree is the source minus every later chapter's files, the base's minus every claimed file, and a folder left empty goes", () => {
  const source = listing(SOURCE);
  const planned = historyObjects(source.tree, source.entries, CHAPTERS);
  const claimedAfter = (i: number) => CHAPTERS.slice(i + 1).flatMap((m) => m.files);
  const without = (removed: readonly string[]) => listing(SOURCE.filter((p) => !removed.includes(p))).tree;
  assert.deepEqual(
    planned.chapters.map((c) => c.tree),
    CHAPTERS.map((_, i) => without(claimedAfter(i))),
  );
  assert.equal(planned.chapters.at(-1)!.tree, source.tree, "the last chapter is the source tree itself");
  const baseTree = /^tree ([0-9a-f]{40})$/m.exec(commitText(planned, planned.base))![1];
  assert.equal(baseTree, without(CHAPTERS.flatMap((m) => m.files)));
  // (`without` lists no folder that holds no file: chapter 02's tree equals it only if `starters/` went with its one file.)
  // Every tree it made is among the objects; the source's own trees are not.
  const trees = new Set(planned.objects.filter((o) => o.type === "tree").map((o) => o.oid));
  for (const tree of [baseTree!, ...planned.chapters.slice(0, -1).map((c) => c.tree)]) assert.ok(trees.has(tree), tree);
  assert.ok(!trees.has(source.tree));
});

test("the commits of a listing: the base has no parent, each chapter's is the commit before it; identity, date and message are fixed, so the ids follow from the listing alone", () => {
  const source = listing(SOURCE);
  const planned = historyObjects(source.tree, source.entries, CHAPTERS);
  assert.deepEqual(
    planned.chapters.map((c) => c.parent),
    [planned.base, ...planned.chapters.slice(0, -1).map((c) => c.target)],
  );
  assert.equal(planned.tip, planned.chapters.at(-1)!.target);
  for (const oid of [planned.base, planned.tip]) assert.match(oid, HEX40);
  const person = `${COURSE_IDENTITY.name} <${COURSE_IDENTITY.email}> ${Date.parse(COURSE_IDENTITY.date) / 1000} +0000`;
  const base = commitText(planned, planned.base);
  assert.equal(
    base.replace(/^tree [0-9a-f]{40}\n/, ""),
    `author ${person}\ncommitter ${person}\n\n${BASE_SUBJECT}\n\nCourse-Source-Tree: ${source.tree}\nCourse-Builder: ${HISTORY_BUILDER_VERSION}\n`,
    "no parent, no encoding, no signature",
  );
  const two = commitText(planned, planned.chapters[1]!.target);
  assert.equal(
    two.replace(/^tree [0-9a-f]{40}\n/, ""),
    `parent ${planned.chapters[0]!.target}\nauthor ${person}\ncommitter ${person}\n\ncourse(02): 第 02 章\n\nCourse-Chapter: 02\nCourse-Source-Tree: ${source.tree}\nCourse-Builder: ${HISTORY_BUILDER_VERSION}\n`,
  );

  // The same listing and manifests: the same ids. Another source (one file more): another history.
  assert.deepEqual(historyObjects(source.tree, source.entries, CHAPTERS), planned);
  const other = listing([...SOURCE, "docs/extra.md"]);
  const again = historyObjects(other.tree, other.entries, CHAPTERS);
  assert.notEqual(again.base, planned.base);
  assert.notEqual(again.tip, planned.tip);
});

// One synthetic course and its history, for the tests below that only read them.
const shared = fileScope();
let course = "";
let built: CourseHistory;
before(async () => {
  course = makeFakeCourse(shared);
  built = await buildHistory(course);
});

test("through git: the branch is at the tip, each layer is exactly the chapter's files, and every tree and commit is byte for byte what git's own plumbing writes", async (t) => {
  const repo = course;
  const h = built;
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
  const [one, two] = h.chapters as [CourseHistory["chapters"][0], CourseHistory["chapters"][0]];
  const claimed = [...one.manifest.files, ...two.manifest.files];
  assert.deepEqual(
    files(repo, h.base),
    source.filter((f) => !claimed.includes(f)),
  );
  assert.equal(sh(repo, ["rev-parse", `${two.target}^{tree}`]), h.sourceTree);
  for (const c of h.chapters) {
    assert.equal(sh(repo, ["rev-parse", `${c.target}^`]), c.parent);
    assert.deepEqual(await verifyLayer(repo, c), [...c.manifest.files].sort());
    assert.deepEqual(sh(repo, ["diff", "--name-only", c.parent, c.target]).split("\n").sort(), [...c.manifest.files].sort());
  }
  assert.equal(one.parent, h.base);

  // The trees again, with an index of git's own, and the commits again with commit-tree.
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

// One synthetic course and one build for two behaviours: git's settings and variables leak into no commit, and git's
// location variables (as inside a git hook) point the build at no other repository.
test("git settings of the repository and git variables of the environment do not change the ids; git location variables inherited from the environment (as inside a git hook) are ignored", async (t) => {
  const repo = makeFakeCourse(t);
  // Settings that would change commit ids if they leaked into the commits.
  sh(repo, ["config", "i18n.commitEncoding", "ISO-8859-1"]);
  sh(repo, ["config", "commit.gpgSign", "true"]);
  sh(repo, ["config", "user.name", "Someone Else"]);
  const other = course;
  const otherRefs = sh(other, ["for-each-ref"]);
  const saved = {
    TZ: process.env.TZ,
    GIT_AUTHOR_NAME: process.env.GIT_AUTHOR_NAME,
    GIT_COMMITTER_DATE: process.env.GIT_COMMITTER_DATE,
    GIT_DIR: process.env.GIT_DIR,
    GIT_INDEX_FILE: process.env.GIT_INDEX_FILE,
    GIT_WORK_TREE: process.env.GIT_WORK_TREE,
  };
  Object.assign(process.env, { TZ: "Asia/Shanghai", GIT_AUTHOR_NAME: "Env Person", GIT_COMMITTER_DATE: "2001-01-01T00:00:00Z" });
  Object.assign(process.env, { GIT_DIR: path.join(other, ".git"), GIT_WORK_TREE: other, GIT_INDEX_FILE: path.join(other, ".git", "index") });
  const restore = () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  t.after(restore);
  const h = await buildHistory(repo);
  restore();
  assert.deepEqual(shas(h), shas(built), "the same content as the shared course, the same ids");
  assert.equal(h.tip, built.tip);
  assert.equal(sh(repo, ["rev-parse", COURSE_BRANCH]), h.tip);
  assert.equal(sh(other, ["for-each-ref"]), otherRefs, "the repository the variables name is untouched");
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
  const shallow = cloneOf(t, `file://${repo}`, ["--depth", "1"]);
  const full = await buildHistory(repo);
  assert.equal(sh(shallow, ["rev-parse", "--is-shallow-repository"]), "true");
  assert.deepEqual(shas(await buildHistory(shallow)), shas(full));
  await assert.rejects(buildHistory(shallow, { source: "HEAD~1" }), isCode("HISTORY_INCOMPLETE"));
});

test("a missing object is HISTORY_INCOMPLETE before anything is written", async (t) => {
  // A file of a new commit: its blob is a loose object (the course's own objects are packed).
  const repo = makeFakeCourse(t, { overrides: { "packages/pi-course/src/beta-sep.ts": 'export const BETA_SEPARATOR = " / ";\n' } });
  const blob = sh(repo, ["rev-parse", "HEAD:packages/pi-course/src/beta-sep.ts"]);
  rmSync(path.join(repo, ".git", "objects", blob.slice(0, 2), blob.slice(2)));
  await assert.rejects(buildHistory(repo), isCode("HISTORY_INCOMPLETE"));
  assert.equal(sh(repo, ["branch", "--list", COURSE_BRANCH]), "");
});

test("outside a repository, or below its top level, is NOT_A_GIT_REPO", async (t) => {
  const plain = tempDir(t);
  await assert.rejects(requireRepoRoot(plain), isCode("NOT_A_GIT_REPO"));
  await assert.rejects(buildHistory(plain), isCode("NOT_A_GIT_REPO"));
  await assert.rejects(requireRepoRoot(path.join(course, "packages")), isCode("NOT_A_GIT_REPO"));
});

test("a committed manifest that does not hold stops the build with MANIFEST_INVALID before anything is written", async (t) => {
  // Every rule of a manifest and of the course is course/manifest.test.ts's; here, that the build reads the committed one and stops.
  const missing = makeFakeCourse(t, {
    overrides: {
      "chapters/01-alpha/chapter.yaml":
        'format: 1\nid: "01"\ntitle: t\nfiles: [packages/pi-course/src/nope.ts]\nfocusedTests: [packages/pi-course/src/nope.ts]\n',
    },
  });
  await assert.rejects(buildHistory(missing), (e: unknown) => isCode("MANIFEST_INVALID")(e) && (e as Error).message.includes("nope.ts"));
  assert.equal(sh(missing, ["branch", "--list", COURSE_BRANCH]), "");
});

test("verifyLayer catches a history whose layer or parent is wrong", async () => {
  const repo = course;
  const h = built;
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
    "chapters/02-beta/chapter.yaml",
    "packages/pi-course/src/beta.ts",
    "packages/pi-course/src/beta-sep.ts",
    "packages/pi-course/test/02-beta.test.ts",
    "packages/pi-course/test/02-beta-hardening.test.ts",
    "chapters/02-beta/beta.ts",
    "chapters/02-beta/README.md",
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
  const repo = course;
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
