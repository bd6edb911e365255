/**
 * Interruptions of `checkpoint`, `practice` and `verify` as the commands really run
 * (compiled, in their own process): SIGINT, SIGTERM and SIGHUP at several moments, sent to
 * the process or to its whole process group (as a terminal's Ctrl-C is). Afterwards nothing
 * the command made is left: no temporary object files, no scratch copy, no half-built practice
 * folder, no journal, no moved branch; the command ends by the signal it received. After
 * SIGKILL, which no process can handle, the next command removes what it can prove the
 * killed one left, and nothing else.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import test, { before } from "node:test";
import { currentOwner, OWNER_FILE, SCRATCH_JOURNALS } from "../../src/core/scratch.js";
import { fileScope, makeFakeCourse, sh } from "../support/fake-course.js";
import { startPaused } from "../support/interrupt.js";
import { compiledTooling, runCommandSync } from "../support/tooling.js";

const posix = process.platform !== "win32" || "signals and named pipes are POSIX";
const BRANCH = "course/build-your-own-pi";

function branchOf(repo: string): string {
  return sh(repo, ["branch", "--list", BRANCH]);
}

function journals(repo: string): string[] {
  const dir = path.join(repo, ...SCRATCH_JOURNALS.split("/"));
  return existsSync(dir) ? readdirSync(dir) : [];
}

function partials(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.includes(".partial-"));
}

// One synthetic course for the four commands below: none of them writes the branch until the
// last test's checkpoint (each test checks it is still absent), so they run on it in turn.
const shared = fileScope();
let course = "";
before(() => {
  course = makeFakeCourse(shared, { linkModules: true });
});

test("checkpoint: SIGINT to the process, or SIGTERM to its group, while the history is written leaves no temporary files and no branch", {
  skip: !posix && posix,
}, async (t) => {
  const repo = course;
  for (const [signal, to, pause] of [
    // hash-object: 1 the trees, 2 the commits
    ["SIGINT", "process", { subcommand: "hash-object", at: 1 }],
    ["SIGTERM", "group", { subcommand: "hash-object", at: 2 }],
  ] as const) {
    const run = startPaused(t, repo, "checkpoint", ["02"], pause);
    await run.paused;
    assert.equal(readdirSync(run.tmp).filter((name) => name.startsWith("pi-course-objects-")).length, 1, "paused with its object files in place");
    run.send(signal, to);
    const exit = await run.exited;
    assert.equal(exit.signal, signal, `${signal}: ended by the signal it received (npm then prints no error block): ${exit.stderr}`);
    assert.match(exit.stderr, /^错误 \[ABORTED\] /m);
    assert.deepEqual(readdirSync(run.tmp), [], `${signal}: nothing left in the temporary folder`);
    assert.equal(branchOf(repo), "", `${signal}: the branch was not written`);
    assert.deepEqual(journals(repo), []);
  }
});

test("practice: SIGINT while the folder is written, SIGHUP to the group while the history is written: no folder, no partial, no branch", {
  skip: !posix && posix,
}, async (t) => {
  const repo = course;
  const parent = path.dirname(repo);
  for (const [signal, to, pause] of [
    // First, on a repository without the history's objects yet: while they are written.
    ["SIGHUP", "group", { subcommand: "hash-object", at: 1 }],
    // cat-file: 1 objects present, 2 manifests, 3 history objects present, 4 the manifest's text, 5 the folder's files.
    ["SIGINT", "process", { subcommand: "cat-file", at: 5 }],
  ] as const) {
    const dest = path.join(parent, `p-${signal}`);
    const run = startPaused(t, repo, "practice", ["02", dest], pause);
    await run.paused;
    if (pause.subcommand === "cat-file") assert.equal(partials(parent).length, 1, "paused with the half-built folder in place");
    run.send(signal, to);
    const exit = await run.exited;
    assert.equal(exit.signal, signal, `${signal}: ended by the signal it received (npm then prints no error block): ${exit.stderr}`);
    assert.match(exit.stderr, /ABORTED/);
    assert.equal(existsSync(dest), false);
    assert.deepEqual(partials(parent), [], signal);
    assert.deepEqual(readdirSync(run.tmp), [], signal);
    assert.equal(branchOf(repo), "", signal);
    assert.deepEqual(journals(repo), []);
  }
});

test("verify: SIGTERM to the group in the parent step and SIGINT in the fresh build remove the scratch copy and every process", {
  skip: !posix && posix,
}, async (t) => {
  const repo = course;
  for (const [signal, to, pause] of [
    // ls-tree: 1 the source (history), 2 the parent tree (parent step), 3 and 4 the parent and target trees (fresh build)
    ["SIGTERM", "group", { subcommand: "ls-tree", at: 2 }],
    ["SIGINT", "process", { subcommand: "ls-tree", at: 4 }],
  ] as const) {
    const run = startPaused(t, repo, "verify", ["02"], pause);
    await run.paused;
    assert.equal(readdirSync(run.tmp).filter((name) => name.startsWith("pi-course-verify-02-")).length, 1, "paused with its scratch copy in place");
    run.send(signal, to);
    const exit = await run.exited;
    assert.equal(exit.signal, signal, `${signal}: ended by the signal it received (npm then prints no error block): ${exit.stderr}`);
    assert.match(exit.stderr, /ABORTED/);
    assert.deepEqual(readdirSync(run.tmp), [], signal);
    assert.deepEqual(journals(repo), []);
    assert.equal(branchOf(repo), "");
  }
});

test("after SIGKILL in practice, the next command removes the half-built folder it can prove is a leftover, and nothing else", {
  skip: !posix && posix,
}, async (t) => {
  const repo = course;
  const parent = path.dirname(repo);
  const run = startPaused(t, repo, "practice", ["02", path.join(parent, "killed")], { subcommand: "cat-file", at: 5 });
  await run.paused;
  run.send("SIGKILL", "process");
  assert.equal((await run.exited).signal, "SIGKILL");
  const [left] = partials(parent);
  assert.ok(left !== undefined && existsSync(path.join(parent, left, OWNER_FILE)), "SIGKILL left the partial folder with its owner file");
  assert.equal(journals(repo).length, 1);

  // Look-alikes the sweep cannot prove are leftovers: no owner file; an owner that still runs (this test).
  const unmarked = path.join(parent, ".killed.partial-unmarked");
  const alive = path.join(parent, ".killed.partial-alive");
  mkdirSync(unmarked);
  mkdirSync(alive);
  writeFileSync(path.join(alive, OWNER_FILE), JSON.stringify(currentOwner()));

  const next = runCommandSync(repo, "checkpoint", ["02"]);
  assert.equal(next.code, 0, next.stderr);
  assert.deepEqual(partials(parent).sort(), [".killed.partial-alive", ".killed.partial-unmarked"]);
  assert.deepEqual(journals(repo), []);
  assert.equal(existsSync(path.join(parent, "killed")), false);
});

test("Ctrl-C reaching a command twice at once (the group's copy and npm's) is one interruption: the cleanup runs to its end", {
  skip: !posix && posix,
}, async () => {
  // A command that needs a moment to clean up after the first signal, then says so.
  const script = `import { catchInterruptions } from ${JSON.stringify(path.join(compiledTooling(), "src", "core", "interrupt.js"))};
const interruption = catchInterruptions();
const keepAlive = setInterval(() => {}, 1000); // signal handlers alone do not keep Node running
process.stdout.write("ready\\n");
await new Promise((resolve) => interruption.signal.addEventListener("abort", resolve));
await new Promise((resolve) => setTimeout(resolve, 1500));
process.stdout.write("cleaned up\\n");
clearInterval(keepAlive);
interruption.finish();`;
  const run = async (gapMs: number) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    while (!out.includes("ready")) await once(child.stdout, "data");
    child.kill("SIGINT");
    await new Promise((resolve) => setTimeout(resolve, gapMs));
    child.kill("SIGINT");
    const [code, signal] = (await once(child, "close")) as [number | null, NodeJS.Signals | null];
    return { out, code, signal };
  };
  // npm's copy comes a moment after the group's (sent together, the kernel would merge them).
  const together = await run(50);
  assert.match(together.out, /cleaned up/, "the copy of the same keypress did not cut the cleanup short");
  assert.equal(together.signal, "SIGINT");
  const pressedAgain = await run(700);
  assert.doesNotMatch(pressedAgain.out, /cleaned up/, "a second Ctrl-C later still ends the command at once");
});

test("a command that ends by its signal removes the scratch folders a step left registered (no exit handler runs then)", {
  skip: !posix && posix,
}, async (t) => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), "pi-interrupt-"));
  t.after(() => rmSync(tmp, { recursive: true, force: true }));
  const lib = path.join(compiledTooling(), "src", "core");
  // A step that is cut short and settles without awaiting its folder's removal.
  const script = `import { withInterrupts } from ${JSON.stringify(path.join(lib, "interrupt.js"))};
import { makeScratchDir, useJournalRoot } from ${JSON.stringify(path.join(lib, "scratch.js"))};
useJournalRoot(${JSON.stringify(tmp)});
await withInterrupts(async (signal) => {
  const dir = await makeScratchDir(${JSON.stringify(tmp)}, "left-");
  process.stdout.write("ready " + dir + "\\n");
  const keepAlive = setInterval(() => {}, 1000); // signal handlers alone do not keep Node running
  await new Promise((resolve) => signal.addEventListener("abort", resolve));
  clearInterval(keepAlive);
});`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  while (!out.includes("ready")) await once(child.stdout, "data");
  const dir = /ready (.*)/.exec(out)![1]!;
  assert.ok(existsSync(path.join(dir, OWNER_FILE)), "the folder is there while the command runs");
  child.kill("SIGINT");
  const [, signal] = (await once(child, "close")) as [number | null, NodeJS.Signals | null];
  assert.equal(signal, "SIGINT", "ended by the signal it received");
  assert.equal(existsSync(dir), false, "the folder the step left registered is gone");
  assert.deepEqual(journals(tmp), [], "and its journal with it");
});
