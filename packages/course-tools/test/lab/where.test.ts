// test-process: shared
/**
 * `lab/where.ts`: every part of a lab as `path:line:col`, from its address — in the course
 * repository (the reference, the starter, where each fault edits the reference) and in a
 * practice folder (the learner's file, the folder's starter copy, the exercise only) — and
 * `lab NN.L --where` run as a learner runs it.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import test from "node:test";
import { starterCopyPath } from "../../src/core/paths.js";
import { loadManifest } from "../../src/course/manifest.js";
import { labParts, PART_KINDS, type LabPart } from "../../src/lab/where.js";
import { createMiniCourse, practiceCopy, removeMiniCourse, repoRoot, runInPackage } from "../support/lab-fixture.js";

/** The text at a part's place: its line, from its column on. */
function at(root: string, part: LabPart): string {
  const line = readFileSync(path.join(root, ...part.file.split("/")), "utf8").split("\n")[part.line - 1] ?? "";
  return line.slice(part.column - 1);
}

test("in the course repository, Lab 13.2's parts are all listed, each where it is", async () => {
  const manifest = await loadManifest(repoRoot, "13");
  const lab = manifest.labs.find((l) => l.id === "13.2")!;
  const parts = labParts(repoRoot, manifest, lab);
  const of = (kind: LabPart["kind"]) => parts.filter((part) => part.kind === kind);
  assert.deepEqual([...new Set(parts.map((part) => part.kind))], PART_KINDS, "every kind, the challenge tier's theme included");
  assert.deepEqual(
    of("challenge").map((part) => [part.file, part.line, part.label]),
    lab.challenge.map((file) => [file, 1, manifest.challenge.find((theme) => theme.file === file)!.title]),
    "the lab's challenge themes, each at its file's first line",
  );
  assert.match(at(repoRoot, of("address")[0]!), /^id: "13\.2"/);
  assert.deepEqual(
    of("declaration").map((part) => part.label),
    lab.declarations,
  );
  for (const part of [...of("declaration"), ...of("helper"), ...of("starter")]) {
    assert.match(at(repoRoot, part), new RegExp(`\\b${part.label}\\b|^//`), `${part.file}:${part.line} starts ${part.label} (or its comments)`);
  }
  assert.ok(
    of("helper").some((part) => part.label === "loadSkillSchema"),
    "the reference's own helper of the lab",
  );
  assert.ok(of("starter").every((part) => part.file === "chapters/13-runtime/runtime.scaffold.ts"));
  assert.deepEqual(
    of("section").map((part) => part.label.split(" ")[0]),
    lab.sections.map((number) => `§${number}`),
  );
  for (const part of of("section")) assert.match(at(repoRoot, part), /^#{2,4} C?\d/, "a lesson section or a group of the contract");
  assert.equal(of("test").length, lab.tests);
  for (const part of of("test")) assert.ok(at(repoRoot, part).startsWith(`"${part.label}"`), part.label);
  assert.equal(of("hint").length, 4);
  const faults = manifest.faults.filter((fault) => fault.lab === "13.2");
  assert.equal(of("fault").length, faults.length * 2, "each fault's entry and the code it edits");
  for (const fault of faults) {
    const entry = of("fault").find((part) => part.label === fault.id)!;
    assert.equal(at(repoRoot, entry), `id: ${fault.id}`);
    const code = of("fault").find((part) => part.label.startsWith(`${fault.id} 改动的代码`))!;
    assert.equal(code.file, "packages/pi-course/src/runtime.ts");
  }
});

test("in a practice folder the parts are the learner's: their file, the folder's starter copy, the exercise only", async (t) => {
  const root = await practiceCopy(repoRoot, "12");
  t.after(() => rm(root, { recursive: true, force: true }));
  const manifest = await loadManifest(root, "12");
  const lab = manifest.labs.find((l) => l.id === "12.4")!;
  const parts = labParts(root, manifest, lab);
  const starter = starterCopyPath("packages/pi-course/src/resources.ts");
  assert.ok(parts.filter((part) => part.kind === "starter").every((part) => part.file === starter));
  assert.deepEqual(
    parts.filter((part) => part.kind === "declaration").map((part) => part.label),
    lab.declarations,
    "the learner's file is the starter, so far",
  );
  assert.deepEqual(
    parts.filter((part) => part.kind === "fault").map((part) => part.label),
    ["12.4-import-untrusted"],
    "the exercise, and nowhere in a reference the folder does not have",
  );
});

test("lab NN.L --where prints one path:line:col per part; --json gives the parts; a chapter or another option is a usage error", async (t) => {
  const course = await createMiniCourse("starter", { practice: true, chapter: "03" });
  t.after(() => removeMiniCourse(course));
  // Paths are shown relative to where the command was typed: here, the folder's root.
  const shown = await runInPackage(course.root, "lab.ts", ["3.2", "--where"], { INIT_CWD: course.root });
  assert.equal(shown.code, 0, shown.stderr);
  const lines = shown.stdout.trimEnd().split("\n");
  assert.equal(lines[0], "Lab 3.2 · 打招呼");
  assert.match(shown.stdout, /^ {2}地址 +chapters\/03-mini\/chapter\.yaml:\d+:5 {2}Lab 3\.2 的地址$/m);
  assert.match(shown.stdout, /^ {2}测试 +packages\/pi-course\/test\/03-mini\.test\.ts:\d+:6 {2}Lab 3\.2 · greets by name$/m);
  assert.match(shown.stdout, /^ {2}starter +\.pi-course\/starter\/packages\/pi-course\/src\/mini\.ts:\d+:1 {2}greet$/m);
  assert.equal(lines.filter((line) => /提示第 \d 级$/.test(line)).length, 4);
  const json = JSON.parse((await runInPackage(course.root, "lab.ts", ["3.2", "--where", "--json"])).stdout) as { lab: string; parts: LabPart[] };
  assert.equal(json.lab, "3.2");
  assert.deepEqual(
    json.parts.filter((part) => part.kind === "test").map((part) => part.label),
    ["Lab 3.2 · greets by name", "Lab 3.2 · greets the sum", "Lab 3.2 · greeting starts with hello, and nobody is not greeted"],
  );
  for (const args of [
    ["3", "--where"],
    ["3.2", "--where", "--watch"],
    ["3.2", "--where", "--open"],
    ["3.2", "--where", "--timeout", "5"],
  ]) {
    const usage = await runInPackage(course.root, "lab.ts", args);
    assert.equal(usage.code, 2, args.join(" "));
    assert.match(usage.stderr, /--where/, args.join(" "));
  }
});
