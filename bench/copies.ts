/**
 * `npm run bench -- copies`: how much of the references is copied by hand into other files.
 *
 * The references are the teaching files of the interactive chapters (every manifest's
 * `starters[].to`). Their lines that say something are those of 20 or more non-blank
 * characters once comments are blanked out, outside import declarations (both found on the
 * syntax tree); each is taken whole, trimmed. A line is copied when a tracked file other than
 * the references and the tests (every `test/` folder: the course's tests, the tooling's, and
 * the kept solutions in each chapter home's `solutions/`) and the held-out catalogs of
 * mistakes (`bench/held-out/`: a mistake's `find` is reference text by construction, as in a
 * chapter's own `mistakes.yaml` beside its solutions) has it as one of its own lines, trimmed. The figure is
 * the number of distinct reference lines copied somewhere, with the files that hold them.
 * The working tree's content of the tracked files is read (uncommitted edits count).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { isInSolutions } from "../packages/course-tools/src/course/chapter-home.js";
import { loadManifests } from "../packages/course-tools/src/course/manifest.js";
import { allComments, parseModule, topLevelDeclarations } from "../packages/course-tools/src/ts/source.js";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const MIN_CHARACTERS = 20;

/** The lines of `text` that say something (see the module comment), trimmed. */
function significantLines(text: string, name: string): string[] {
  const tree = parseModule(text, name);
  let blanked = text;
  const ranges = [...allComments(tree), ...topLevelDeclarations(tree).filter((d) => d.kind === "import")];
  for (const range of ranges) {
    const [start, end] = "pos" in range ? [range.pos, range.end] : [range.start, range.end];
    blanked = blanked.slice(0, start) + blanked.slice(start, end).replace(/[^\n]/g, " ") + blanked.slice(end);
  }
  const original = text.split("\n");
  return blanked.split("\n").flatMap((line, index) => (line.replace(/\s/g, "").length >= MIN_CHARACTERS ? [original[index]!.trim()] : []));
}

const manifests = await loadManifests(repo);
const references = [...new Set(manifests.flatMap((manifest) => manifest.starters.map((starter) => starter.to)))];
const lines = new Map<string, string>(); // line -> the reference it is of
for (const reference of references) {
  for (const line of significantLines(readFileSync(path.join(repo, reference), "utf8"), reference)) if (!lines.has(line)) lines.set(line, reference);
}

const excluded = (file: string) => references.includes(file) || /(^|\/)test\//.test(file) || isInSolutions(file) || file.startsWith("bench/held-out/");
const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: repo, encoding: "utf8" })
  .split("\0")
  .filter((file) => file !== "" && !excluded(file));
const copied = new Set<string>();
const perFile: [string, number][] = [];
for (const file of tracked) {
  const full = path.join(repo, file);
  if (!existsSync(full)) continue;
  const data = readFileSync(full);
  if (data.includes(0)) continue;
  const own = new Set(
    data
      .toString("utf8")
      .split("\n")
      .map((line) => line.trim()),
  );
  const found = [...lines.keys()].filter((line) => own.has(line));
  for (const line of found) copied.add(line);
  if (found.length > 0) perFile.push([file, found.length]);
}

console.log(`references: ${references.join(", ")}`);
console.log(`reference lines of ${MIN_CHARACTERS}+ non-blank characters (comments and imports aside): ${lines.size}`);
console.log(`copied into tracked files other than the references, the tests, the kept solutions and the held-out catalogs: ${copied.size}`);
for (const [file, count] of perFile.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))) console.log(`  ${String(count).padStart(4)}  ${file}`);
