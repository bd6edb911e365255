// test-process: shared
/**
 * Every list of chapters in the docs agrees with the manifests (each chapter home's
 * `chapter.yaml`): the README's and `docs/chapters.md`'s interactive chapters (a manifest with
 * `text:`), the links to their texts and challenge texts, the "other chapters" range, the
 * modules table (one row per chapter, its modules those of `packages/pi-course/src/` its
 * manifest claims), the README's walk-through starting at the first chapter, and no doc naming
 * the interactive chapters by hand elsewhere. Every relative link of the docs and the chapter
 * texts names a file or folder that exists. Adding a chapter, or making one interactive, fails
 * here until the docs say so.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import test from "node:test";
import { courseRoot } from "../src/core/paths.js";
import { loadManifests } from "../src/course/manifest.js";

const read = (file: string) => readFileSync(path.join(courseRoot, file), "utf8");
const NUMBER_WORDS = ["No", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten", "Eleven", "Twelve", "Thirteen", "Fourteen"];

async function chapters() {
  const manifests = await loadManifests(courseRoot);
  return {
    all: manifests.map((m) => m.id),
    interactive: manifests.filter((m) => m.text !== undefined).map((m) => m.id),
    texts: manifests.flatMap((m) => (m.text === undefined ? [] : [m.text])),
    challengeTexts: manifests.flatMap((m) => (m.challengeText === undefined ? [] : [m.challengeText])),
    modules: new Map(
      manifests.map((m) => [
        m.id,
        m.files
          .filter((f) => /^packages\/pi-course\/src\/[^/]+\.ts$/.test(f))
          .map((f) => path.basename(f))
          .sort(),
      ]),
    ),
  };
}

/** The distinct ids of `pattern`'s first group in `text`, in order. */
const idsOf = (text: string, pattern: RegExp) => [...new Set([...text.matchAll(pattern)].map((m) => m[1]!))];

/** Consecutive chapter ids as `NN–MM` ranges (a lone id as itself). */
function ranges(ids: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < ids.length; ) {
    let j = i;
    while (j + 1 < ids.length && Number(ids[j + 1]) === Number(ids[j]) + 1) j++;
    out.push(i === j ? ids[i]! : `${ids[i]}–${ids[j]}`);
    i = j + 1;
  }
  return out;
}

test("the README lists exactly the interactive chapters, with their count, and the others as a range", async () => {
  const { all, interactive } = await chapters();
  const readme = read("README.md");
  const section = /\n(\w+) chapters are built interactively:\n([\s\S]*?)\n\n(?!- )/.exec(readme);
  assert.ok(section, "README: a paragraph “N chapters are built interactively:” followed by its list");
  assert.equal(section[1], NUMBER_WORDS[interactive.length], "README: the count of interactive chapters");
  assert.deepEqual(idsOf(section[2]!, /^- \*\*Chapter (\d\d),/gm), interactive, "README: one bullet per interactive chapter, in course order");
  const others = ranges(all.filter((id) => !interactive.includes(id)));
  assert.match(readme, new RegExp(`The other chapters \\(${others.join(", ")}\\)`), "README: the other chapters' range");
});

test("docs/chapters.md names exactly the interactive chapters, links each text, and has one modules row per chapter", async () => {
  const { all, interactive, texts, challengeTexts, modules } = await chapters();
  const doc = read("docs/chapters.md");
  const built = /The chapters built interactively are ([\s\S]*?)\n\n/.exec(doc)?.[1] ?? "";
  assert.deepEqual(idsOf(built, /\*\*Chapter (\d\d):/g), interactive, "docs/chapters.md: the interactive chapters in bold, in course order");
  const others = ranges(all.filter((id) => !interactive.includes(id)));
  assert.match(built, new RegExp(`Chapters ${others.join(", ")} are\\s+present`), "docs/chapters.md: the other chapters' range");
  const linkedFiles = idsOf(doc.slice(doc.indexOf("## The chapter texts")), /\]\(\.\.\/(chapters\/\d\d-[^)]+\.md)\)/g);
  const challenges = (file: string) => challengeTexts.includes(file);
  assert.deepEqual(
    linkedFiles.filter((file) => !challenges(file)),
    texts,
    "docs/chapters.md: a link to every chapter text",
  );
  assert.deepEqual(linkedFiles.filter(challenges), challengeTexts, "docs/chapters.md: a link to every challenge text");
  const rows = [...doc.matchAll(/^\| (\d\d) \| ([^|]*) \|/gm)].map((m) => [m[1]!, idsOf(m[2]!, /`([^`]+\.ts)`/g).sort()] as const);
  assert.deepEqual(
    rows.map(([id]) => id),
    all,
    "docs/chapters.md: one modules row per chapter",
  );
  for (const [id, listed] of rows) assert.deepEqual(listed, modules.get(id), `docs/chapters.md: chapter ${id}'s modules are those its manifest claims`);
});

test("the README's walk-through starts where a newcomer starts: the first chapter, its text linked", async () => {
  const { all, texts } = await chapters();
  const readme = read("README.md");
  const first = all[0]!;
  assert.ok(readme.includes(`](${texts[0]})`), `README: a link to the first chapter's text ${texts[0]}`);
  const job = readme.slice(readme.indexOf("## The main job"));
  assert.match(job, new RegExp(`^The job, for Chapter ${first},`, "m"), "README: the walk-through names the first chapter");
  assert.match(job, new RegExp(`npm run checkpoint -w @pi/course -- ${Number(first)}\n`), "README: its checkpoint command is the first chapter's");
});

/** The relative links (`[…](target)`) of a markdown text, without their `#anchor`. */
const relativeLinks = (text: string) =>
  [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!.split("#")[0]!).filter((target) => target !== "" && !/^[a-z]+:/.test(target));

test("every relative link of the docs, the guide and the chapter texts names something that exists", async () => {
  const { texts, challengeTexts } = await chapters();
  const docs = readdirSync(path.join(courseRoot, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`);
  for (const file of ["README.md", "LEARNING.md", "AGENTS.md", "bench/README.md", ...docs, ...texts, ...challengeTexts]) {
    for (const target of relativeLinks(read(file))) {
      const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(file), target));
      assert.ok(existsSync(path.join(courseRoot, ...resolved.split("/"))), `${file}: the link ${target} names ${resolved}, which does not exist`);
    }
  }
});

test("no other doc names the interactive chapters by hand", () => {
  for (const file of ["docs/README.md", "AGENTS.md", "docs/adding-a-chapter.md", "docs/layout.md", "LEARNING.md"]) {
    assert.doesNotMatch(read(file), /interactive chapters \(\d\d(?:,? (?:and )?\d\d)*\)/, `${file}: say “the interactive chapters” and link docs/chapters.md`);
  }
});
