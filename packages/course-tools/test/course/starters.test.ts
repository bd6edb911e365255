// test-process: shared
/** `course/starters.ts`: a chapter's starters, hand-kept or derived from a scaffold, read one way. */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import test from "node:test";
import { courseRoot } from "../../src/core/paths.js";
import { loadManifests } from "../../src/course/manifest.js";
import { readStarters, starterOf } from "../../src/course/starters.js";
import { describeLeak, findStarterLeaks } from "../../src/practice/leak-audit.js";

const REFERENCE = `/** Chapter 09 · the reference. */
import path from "node:path";

// ── Lab 9.1 · base name ──

/** The file's base name, without its extension. */
export function stem(file: string): string {
  return path.basename(file).replace(/\\.[^.]*$/, "");
}
`;

const SCAFFOLD = `/** Chapter 09 — the practice starter. */

function stem() {
  // 🔨 Lab 9.1：base name
  void file;
  throw new Error("Lab 9.1 stem 尚未实现");
}
`;

const FILES: Record<string, string> = { "src/stem.ts": REFERENCE, "starters/09-stem.scaffold.ts": SCAFFOLD, "starters/09-stem.ts": "export {};\n" };
const read = (file: string): string => FILES[file] ?? assert.fail(`${file} was not expected to be read`);
const LABS = [{ id: "9.1", declarations: ["stem"] }];

test("starterOf: a hand-kept starter is its file, each line its own", () => {
  const starter = starterOf({ labs: LABS }, { from: "starters/09-stem.ts", to: "src/stem.ts" }, read);
  assert.deepEqual(
    [starter.text, starter.derived, starter.source, starter.origin(1)],
    ["export {};\n", false, "starters/09-stem.ts", { file: "starters/09-stem.ts", line: 1 }],
  );
});

test("starterOf: a scaffold's starter is derived from the reference, and its lines name the scaffold or the reference", () => {
  const starter = starterOf({ labs: LABS }, { from: "starters/09-stem.scaffold.ts", to: "src/stem.ts", scaffold: true }, read);
  assert.equal(
    starter.text,
    '/** Chapter 09 — the practice starter. */\nimport path from "node:path";\n\n// ── Lab 9.1 · base name ──\n\n/** The file\'s base name, without its extension. */\nexport function stem(file: string): string {\n  // 🔨 Lab 9.1：base name\n  void file;\n  throw new Error("Lab 9.1 stem 尚未实现");\n}\n',
  );
  assert.equal(starter.derived, true);
  assert.deepEqual(starter.origin(7), { file: "src/stem.ts", line: 7 }, "the signature is the reference's");
  assert.deepEqual(starter.origin(9), { file: "starters/09-stem.scaffold.ts", line: 5 }, "the body is the scaffold's");
});

test("a leak in a derived starter is named at the scaffold's line, where the author fixes it", () => {
  const leaky = SCAFFOLD.replace("  void file;", '  // return path.basename(file).replace(/\\.[^.]*$/, "");\n  void file;');
  const overlay = { from: "starters/09-stem.scaffold.ts", to: "src/stem.ts", scaffold: true } as const;
  const starter = starterOf({ labs: LABS }, overlay, (file) => (file === overlay.from ? leaky : read(file)));
  const [leak] = findStarterLeaks(
    [{ teachingFile: overlay.to, starterFile: starter.source, reference: REFERENCE, starter: starter.text, origin: starter.origin }],
    ["9.1"],
  );
  assert.deepEqual([leak?.file, leak?.line], ["starters/09-stem.scaffold.ts", 5]);
  assert.match(describeLeak(leak!), /^starters\/09-stem\.scaffold\.ts:5 的注释/);
});

test("readStarters reads each file once and gives the starters in manifest order", async () => {
  const reads: string[] = [];
  const starters = await readStarters(
    {
      labs: LABS,
      starters: [
        { from: "starters/09-stem.scaffold.ts", to: "src/stem.ts", scaffold: true },
        { from: "starters/09-stem.ts", to: "src/other.ts" },
      ],
    },
    async (file) => {
      reads.push(file);
      return file === "src/other.ts" ? "" : read(file);
    },
  );
  assert.deepEqual(
    starters.map((starter) => [starter.teachingFile, starter.derived]),
    [
      ["src/stem.ts", true],
      ["src/other.ts", false],
    ],
  );
  assert.deepEqual(reads.sort(), ["src/stem.ts", "starters/09-stem.scaffold.ts", "starters/09-stem.ts"]);
});

test("starterOf: in a chapter of several teaching files, each scaffold holds the sites of the lab declarations its own reference declares", () => {
  const other = `/** Chapter 09 · another teaching file. */\n\n// ── Lab 9.2 · size ──\n\n/** The size of a file. */\nexport function size(bytes: Uint8Array): number {\n  return bytes.length;\n}\n`;
  const files: Record<string, string> = {
    ...FILES,
    "src/size.ts": other,
    "starters/09-size.scaffold.ts": `/** Chapter 09 — the second starter. */\n\nfunction size() {\n  // 🔨 Lab 9.2：size\n  void bytes;\n  throw new Error("Lab 9.2 size 尚未实现");\n}\n`,
  };
  const labs = [...LABS, { id: "9.2", declarations: ["size"] }];
  const [stem, size] = [
    { from: "starters/09-stem.scaffold.ts", to: "src/stem.ts", scaffold: true as const },
    { from: "starters/09-size.scaffold.ts", to: "src/size.ts", scaffold: true as const },
  ].map((overlay) => starterOf({ labs }, overlay, (file) => files[file] ?? assert.fail(`${file} was not expected to be read`)).text);
  assert.match(stem!, /export function stem\(file: string\): string \{\n  \/\/ 🔨 Lab 9\.1：base name/);
  assert.doesNotMatch(stem!, /size/);
  assert.match(size!, /export function size\(bytes: Uint8Array\): number \{\n  \/\/ 🔨 Lab 9\.2：size/);
  assert.doesNotMatch(size!, /bytes\.length/);
});

/**
 * The proof of a conversion: while a chapter's hand-kept starter is still in the tree beside
 * its new scaffold (`starters/NN-x.ts` and `starters/NN-x.scaffold.ts`), the derived starter is
 * that file, byte for byte. Once the hand-kept file is deleted, nothing is left to compare.
 */
test("a scaffold's starter is the hand-kept starter it replaces, byte for byte, while both are in the tree", async () => {
  for (const manifest of await loadManifests(courseRoot)) {
    const derived = manifest.starters.filter((overlay) => overlay.scaffold === true);
    for (const starter of await readStarters({ labs: manifest.labs, starters: derived }, (file) => readFile(path.join(courseRoot, file), "utf8"))) {
      const handKept = starter.source.replace(/\.scaffold\.ts$/, ".ts");
      if (!existsSync(path.join(courseRoot, handKept))) continue;
      assert.equal(starter.text, await readFile(path.join(courseRoot, handKept), "utf8"), `${starter.source} derives ${handKept}`);
    }
  }
});
