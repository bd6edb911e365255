// test-process: shared
/** `ts/derive-starter.ts`: a starter built from its reference and the chapter's scaffold. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { auditStarter } from "../../src/practice/starter-audit.js";
import { deriveStarter, deriveStarterWithOrigins } from "../../src/ts/derive-starter.js";
import { parseModule } from "../../src/ts/source.js";

const REFERENCE = `/**
 * Chapter 09 · shelf: the reference's own header.
 */
import path from "node:path";

/** A thing on the shelf. */
export interface Thing {
  name: string;
}

/** How a lab asks to sort (a type the lab writes). */
export interface Order {
  by: "name";
}

const LIMIT = 3;

/** Used by given code: stays. */
function clamp(n: number): number {
  return Math.min(n, LIMIT);
}

/** Only lab code uses it: left out. */
function byName(a: Thing, b: Thing): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Scratch space of the sort, a type only lab code uses: left out. */
interface Scratch {
  seen: Set<string>;
}

/** Given code. */
export function count(things: readonly Thing[]): number {
  return clamp(things.length);
}

// ── Lab 9.1 · sort ──

/** Sorts things. */
export function sorted(things: readonly Thing[]): Thing[] {
  const scratch: Scratch = { seen: new Set() };
  return [...things].filter((thing) => !scratch.seen.has(thing.name) && scratch.seen.add(thing.name)).sort(byName);
}

/** Their names. */
export const names = (things: readonly Thing[]): string[] => things.map((thing) => path.basename(thing.name));

// ── Lab 9.2 · box ──

/** A box of things. */
export class Box {
  #items: Thing[] = [];

  /** Puts one in. */
  put(thing: Thing): void {
    this.#items.push(thing);
  }

  get size(): number {
    return this.#items.length;
  }
}
`;

const SCAFFOLD = `/**
 * Chapter 09 · shelf — the practice starter.
 */

// scaffold: after count
/** The scaffold's error. */
function labError(lab: string): Error {
  return new Error(\`\${lab} 尚未实现\`);
}

// scaffold: before sorted
// 🔨 Lab 9.1：a helper that compares names goes here.

export interface Order {
  // 🔨 Lab 9.1：how to sort
}

function sorted() {
  // 🔨 Lab 9.1：sort by name
  void things;
  throw labError("Lab 9.1 sort");
}

const names = () => {
  // 🔨 Lab 9.1：names
  void things;
  throw labError("Lab 9.1 sort");
};

class Box {
  // 🔨 Lab 9.2：the box; #items is given
  #items;

  put() {
    void thing;
    throw labError("Lab 9.2 box");
  }

  get size() {
    throw labError("Lab 9.2 box");
  }
}
`;

const LABS = [
  { id: "9.1", declarations: ["Order", "sorted", "names"] },
  { id: "9.2", declarations: ["Box"] },
];

const STARTER = `/**
 * Chapter 09 · shelf — the practice starter.
 */
import path from "node:path";

/** A thing on the shelf. */
export interface Thing {
  name: string;
}

/** How a lab asks to sort (a type the lab writes). */
export interface Order {
  // 🔨 Lab 9.1：how to sort
}

const LIMIT = 3;

/** Used by given code: stays. */
function clamp(n: number): number {
  return Math.min(n, LIMIT);
}

/** Given code. */
export function count(things: readonly Thing[]): number {
  return clamp(things.length);
}

/** The scaffold's error. */
function labError(lab: string): Error {
  return new Error(\`\${lab} 尚未实现\`);
}

// ── Lab 9.1 · sort ──

// 🔨 Lab 9.1：a helper that compares names goes here.

/** Sorts things. */
export function sorted(things: readonly Thing[]): Thing[] {
  // 🔨 Lab 9.1：sort by name
  void things;
  throw labError("Lab 9.1 sort");
}

/** Their names. */
export const names = (things: readonly Thing[]): string[] => {
  // 🔨 Lab 9.1：names
  void things;
  throw labError("Lab 9.1 sort");
};

// ── Lab 9.2 · box ──

/** A box of things. */
export class Box {
  // 🔨 Lab 9.2：the box; #items is given
  #items: Thing[] = [];

  /** Puts one in. */
  put(thing: Thing): void {
    void thing;
    throw labError("Lab 9.2 box");
  }

  get size(): number {
    throw labError("Lab 9.2 box");
  }
}
`;

test("deriveStarter: the reference with the scaffold's header, sites (function, const, class methods, interface) and additions; helpers only lab code used are left out, banners stay", () => {
  const starter = deriveStarter(REFERENCE, SCAFFOLD, LABS);
  assert.equal(starter, STARTER);
  parseModule(starter);
  assert.deepEqual(auditStarter(REFERENCE, starter, ["9.1", "9.2"]), [], "the derived starter passes the leak audit");
});

test("deriveStarter: `scaffold: given` keeps a helper only lab code uses; what the scaffold's sites use is kept too", () => {
  const given = deriveStarter(REFERENCE, SCAFFOLD.replace("// scaffold: after count", "// scaffold: given byName\n\n// scaffold: after count"), LABS);
  assert.ok(given.includes("function byName(a: Thing, b: Thing): number {\n  return a.name"), given);
  assert.ok(!given.includes("interface Scratch"), "Scratch is still left out");
  const above = deriveStarter(REFERENCE, SCAFFOLD.replace("function sorted() {", "// scaffold: given byName\nfunction sorted() {"), LABS);
  assert.equal(above, given, "a given line right above a site is no comment of the site");
  const used = deriveStarter(
    REFERENCE,
    SCAFFOLD.replace('  void things;\n  throw labError("Lab 9.1 sort");\n}', '  void byName;\n  throw labError("Lab 9.1 sort");\n}'),
    LABS,
  );
  assert.ok(used.includes("/** Only lab code uses it: left out. */\nfunction byName("), "a site that names a helper keeps it");
});

test("deriveStarter: several additions at one place keep the scaffold's order; a scaffold without header keeps the reference's", () => {
  const scaffold = SCAFFOLD.replace(/^\/\*\*[\s\S]*?\*\/\n\n/, "").replace(
    "// scaffold: before sorted\n",
    "// scaffold: before sorted\n// first\n\n// scaffold: before sorted\n",
  );
  const starter = deriveStarter(REFERENCE, scaffold, LABS);
  assert.ok(starter.startsWith("/**\n * Chapter 09 · shelf: the reference's own header."), starter);
  assert.ok(starter.includes("// ── Lab 9.1 · sort ──\n\n// first\n\n// 🔨 Lab 9.1：a helper that compares names goes here.\n\n/** Sorts things. */"), starter);
});

test("deriveStarterWithOrigins: each line of the starter names where it comes from, the scaffold or the reference", () => {
  const derived = deriveStarterWithOrigins(REFERENCE, SCAFFOLD, LABS);
  const lineOf = (text: string, needle: string) => text.split("\n").findIndex((line) => line.includes(needle)) + 1;
  for (const needle of ['throw labError("Lab 9.2 box");', "// 🔨 Lab 9.1：a helper", "function labError", "Chapter 09 · shelf — the practice starter"]) {
    assert.deepEqual(derived.origin(lineOf(derived.text, needle)), { in: "scaffold", line: lineOf(SCAFFOLD, needle) }, needle);
  }
  for (const needle of ["export function sorted(", "function clamp(", "#items: Thing[] = [];", "// ── Lab 9.2 · box ──"]) {
    assert.deepEqual(derived.origin(lineOf(derived.text, needle)), { in: "reference", line: lineOf(REFERENCE, needle) }, needle);
  }
});

test("deriveStarter refuses a lab declaration without a site, and a lab class whose member with a body has none", () => {
  const withoutSorted = SCAFFOLD.replace(/function sorted\(\) \{[\s\S]*?\n\}\n/, "");
  assert.throws(() => deriveStarter(REFERENCE, withoutSorted, LABS), { code: "SCAFFOLD_SITE_MISSING" });
  const withoutSize = SCAFFOLD.replace(/\n  get size\(\) \{[\s\S]*?\n  \}\n/, "");
  assert.throws(() => deriveStarter(REFERENCE, withoutSize, LABS), { code: "SCAFFOLD_SITE_MISSING" });
});

test("deriveStarter refuses a site no lab names, and any name the reference lacks (site, member, anchor, given)", () => {
  const cases = [
    `${SCAFFOLD}\nfunction count() {\n  throw labError("Lab 9.1 sort");\n}\n`,
    `${SCAFFOLD}\nfunction nowhere() {\n  throw labError("Lab 9.1 sort");\n}\n`,
    SCAFFOLD.replace("  get size() {", '  get weight() {\n    throw labError("Lab 9.2 box");\n  }\n\n  get size() {'),
    SCAFFOLD.replace("// scaffold: after count", "// scaffold: after counter"),
    SCAFFOLD.replace("// scaffold: after count", "// scaffold: given byNames\n\n// scaffold: after count"),
  ];
  for (const scaffold of cases) assert.throws(() => deriveStarter(REFERENCE, scaffold, LABS), { code: "SCAFFOLD_SITE_EXTRA" }, scaffold);
  assert.throws(() => deriveStarter(REFERENCE, SCAFFOLD, [...LABS, { id: "9.3", declarations: ["shelved"] }]), { code: "SCAFFOLD_SITE_MISSING" });
});

test("deriveStarter refuses what the format does not allow: a signature on a site, a stray comment, an unknown directive, an import, an addition the reference declares, a site of another kind", () => {
  const cases = [
    SCAFFOLD.replace("function sorted() {", "function sorted(things: readonly Thing[]) {"),
    SCAFFOLD.replace("function sorted() {", "function sorted(): Thing[] {"),
    SCAFFOLD.replace("// scaffold: before sorted\n", ""),
    SCAFFOLD.replace("// scaffold: before sorted", "// scaffold: around sorted"),
    SCAFFOLD.replace("// scaffold: after count\n", '// scaffold: after count\nimport { x } from "./x.js";\n\n// scaffold: after count\n'),
    SCAFFOLD.replace("function labError(lab: string): Error {", "function clamp(lab: string): Error {"),
    SCAFFOLD.replace("const names = () => {", "class names {\n  go() {").replace(
      '  throw labError("Lab 9.1 sort");\n};',
      '  throw labError("Lab 9.1 sort");\n  }\n}',
    ),
    `${SCAFFOLD}\nconsole.log("stray");\n`,
  ];
  for (const scaffold of cases) assert.throws(() => deriveStarter(REFERENCE, scaffold, LABS), { code: "SCAFFOLD_INVALID" }, scaffold);
});

test("deriveStarter: `scaffold: imports` above a run of imports replaces every import of the reference, with the comments under the directive", () => {
  const scaffold = SCAFFOLD.replace(
    "// scaffold: after count",
    '// scaffold: imports\n// The tools you will reach for.\nimport path from "node:path";\nimport { readFile } from "node:fs/promises";\n\n// scaffold: after count',
  );
  const starter = deriveStarter(REFERENCE, scaffold, LABS);
  assert.ok(starter.includes('*/\n// The tools you will reach for.\nimport path from "node:path";\nimport { readFile } from "node:fs/promises";\n\n'), starter);
  assert.equal(starter.match(/^import /gm)?.length, 2, "the reference's own import is gone");
  const derived = deriveStarterWithOrigins(REFERENCE, scaffold, LABS);
  const line = derived.text.split("\n").findIndex((text) => text.includes("readFile")) + 1;
  assert.equal(derived.origin(line).in, "scaffold");
  const refused = [
    scaffold.replace("// scaffold: imports", "// scaffold: imports path"),
    scaffold.replace("// scaffold: imports\n", "// scaffold: imports\n\n"),
    scaffold.replace(
      'import { readFile } from "node:fs/promises";\n',
      'import { readFile } from "node:fs/promises";\n\nconst x = 1;\nimport os from "node:os";\n',
    ),
    SCAFFOLD.replace("// scaffold: after count", "// scaffold: imports\nconst x = 1;\n\n// scaffold: after count"),
    `${scaffold}\n// scaffold: imports\nimport os from "node:os";\n`,
  ];
  for (const wrong of refused) assert.throws(() => deriveStarter(REFERENCE, wrong, LABS), { code: "SCAFFOLD_INVALID" }, wrong);
});

test("deriveStarter: a `before` addition goes above the doc comment a site puts in place of the reference's", () => {
  const scaffold = SCAFFOLD.replace("function sorted() {", "/** Sorts things: your version. */\nfunction sorted() {");
  const starter = deriveStarter(REFERENCE, scaffold, LABS);
  assert.ok(starter.includes("// 🔨 Lab 9.1：a helper that compares names goes here.\n\n/** Sorts things: your version. */\nexport function sorted("), starter);
});
