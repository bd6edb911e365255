// test-process: shared
/**
 * The starter audit: nothing of the reference's function bodies in a starter beyond its
 * public surface, its construction sites and the code it gives on purpose (see
 * `lib/practice/starter-audit.ts`), on a small chapter. Each chapter's own starter is audited
 * by its acceptance record (`verify NN`: practice refuses a leaking folder, and the leak audit
 * line checks that a reference line pasted into the starter would be caught, `verify/leak-probe.ts`).
 */
import assert from "node:assert/strict";
import test from "node:test";
import { assertNoLeaks, findStarterLeaks } from "../../src/practice/leak-audit.js";
import { ANSWER_RUN_TOKENS, auditStarter } from "../../src/practice/starter-audit.js";

const REFERENCE = `import path from "node:path";

/** Shared type. */
export interface Thing {
  name: string;
}

const SEPARATOR = " | ";

export class Shelf {
  readonly #things: Thing[] = [];

  constructor(first: Thing) {
    this.#things.push(structuredClone(first));
  }

  /** Lists things. */
  list(names: readonly string[]): Thing[] {
    // sort first, then strip folders
    return [...names].sort().map((name) => ({ name: path.basename(name) }));
  }
}

function joinNames(things: readonly Thing[]): string {
  return things.map((thing) => thing.name).join(SEPARATOR);
}

/** Renders things. */
export function render(things: readonly Thing[], options: { upper?: boolean } = {}): string {
  const joined = joinNames(things);
  return options.upper === true ? joined.toUpperCase() : joined;
}
`;

const STARTER = `import path from "node:path";

/** Shared type. */
export interface Thing {
  name: string;
}

function labError(lab: string): Error {
  return new Error(\`\${lab} 尚未实现\`);
}

export class Shelf {
  readonly #things: Thing[] = [];

  constructor(first: Thing) {
    this.#things.push(structuredClone(first));
  }

  /** Lists things. */
  list(names: readonly string[]): Thing[] {
    // 🔨 Lab 1.1：先排序，再去掉目录（path.basename）
    void names;
    void path;
    throw labError("Lab 1.1 list");
  }
}

/** Renders things. */
export function render(things: readonly Thing[], options: { upper?: boolean } = {}): string {
  // 🔨 Lab 1.2：用 SEPARATOR 连接名字；options: { upper?: boolean } = {} 时转大写
  void things;
  void options;
  throw labError("Lab 1.2 render");
}
`;

const LABS = ["1.1", "1.2"];
const SITE = '    throw labError("Lab 1.1 list");';

/** The starter with `lines` inserted right before Lab 1.1's scaffold throw. */
function withInList(...lines: string[]): string {
  return STARTER.replace(SITE, `${lines.map((l) => `    ${l}`).join("\n")}\n${SITE}`);
}

function lineOf(text: string, needle: string): number {
  return text.split("\n").findIndex((line) => line.includes(needle)) + 1;
}

test("a starter with surface, construction sites, given code and prose guidance passes", () => {
  assert.deepEqual(auditStarter(REFERENCE, STARTER, LABS), []);
});

test("a reference line pasted into a comment is caught, also abridged, naming the starter line and the reference line", () => {
  for (const comment of [
    "// 参考：return [...names].sort().map((name) => ({ name: path.basename(name) }));",
    "// 参考：return [...names].sort().map((name) => ({ name: …",
    "// 🔨 Lab 1.1：return [...names].sort().map((name) => ({",
  ]) {
    const starter = withInList(comment);
    const leaks = auditStarter(REFERENCE, starter, LABS);
    assert.equal(leaks.length, 1, comment);
    assert.deepEqual(
      [leaks[0]!.line, leaks[0]!.where, leaks[0]!.referenceLine],
      [lineOf(starter, comment), "comment", lineOf(REFERENCE, "[...names].sort()")],
      comment,
    );
    assert.match(leaks[0]!.text, /^return \[\.\.\.names\]\.sort\(\)/);
  }
});

test("the answer is caught in block comments, in a line split over two comments, in strings and templates", () => {
  const cases: [string, string, "comment" | "string" | "code"][] = [
    [withInList("/*", " * const joined = joinNames(things);", " * return options.upper === true ? …", " */"), "const joined", "comment"],
    [withInList("// return options.upper === true", "//   ? joined.toUpperCase() : joined;"), "return options.upper", "comment"],
    [`${STARTER}\nexport const HINT = "return options.upper === true ? joined.toUpperCase() : joined;";\n`, "export const HINT", "code"],
    [
      STARTER.replace("return new Error(`${lab} 尚未实现`);", "return new Error(`${lab} 尚未实现：things.map((thing) => thing.name).join(SEPARATOR)`);"),
      "尚未实现：things",
      "code",
    ],
  ];
  for (const [starter, needle, where] of cases) {
    const leaks = auditStarter(REFERENCE, starter, LABS);
    assert.deepEqual(
      leaks.map((l) => [l.line, l.where]),
      [[lineOf(starter, needle), where]],
      needle,
    );
  }
});

test("code in a construction site is searched, and given code must be the reference's own statement in the same place", () => {
  // A construction site holds only its throw, void statements and comments: a reference
  // statement there is a leak even in its own function.
  const inSite = withInList("const sorted = [...names].sort().map((name) => ({ name: path.basename(name) }));");
  assert.deepEqual(
    auditStarter(REFERENCE, inSite, LABS).map((l) => [l.line, l.where]),
    [[lineOf(inSite, "const sorted"), "code"]],
  );
  // Given code (the constructor) may not grow a statement taken from another declaration.
  const grown = STARTER.replace(
    "    this.#things.push(structuredClone(first));",
    "    this.#things.push(structuredClone(first));\n    const joined = joinNames(things);",
  );
  assert.deepEqual(
    auditStarter(REFERENCE, grown, LABS).map((l) => l.line),
    [lineOf(grown, "const joined")],
  );
  // A given statement repeated in another declaration is not given there, but quotes given code.
  const moved = STARTER.replace(
    "function labError(lab: string): Error {\n",
    "function labError(lab: string): Error {\n  this.#things.push(structuredClone(first));\n",
  );
  assert.equal(auditStarter(REFERENCE, moved, LABS).length, 0, "code the starter already gives gives nothing new away");
  // Without the lab ids, any `Lab N.M` throw is a scaffold throw.
  assert.deepEqual(auditStarter(REFERENCE, STARTER), []);
});

test("runs shorter than the threshold, and quotes of the starter's own surface or given code, are not leaks", () => {
  assert.ok(ANSWER_RUN_TOKENS >= 6);
  const short = withInList("// 提示：path.basename(name) 去掉目录");
  assert.deepEqual(auditStarter(REFERENCE, short, LABS), []);
  const quotesGiven = withInList("// 构造函数里已经有 this.#things.push(structuredClone(first)); 不用改");
  assert.deepEqual(auditStarter(REFERENCE, quotesGiven, LABS), []);
  // A doc comment of the reference's surface that shares its words with a body's message.
  const documented = REFERENCE.replace("/** Shared type. */", "/** Shared type: its name is not one of the names we sort and strip folders from. */").replace(
    "// sort first, then strip folders",
    'if (names.length === 0) throw new Error("not one of the names we sort and strip folders from");',
  );
  const starterDocumented = STARTER.replace("/** Shared type. */", "/** Shared type: its name is not one of the names we sort and strip folders from. */");
  assert.deepEqual(auditStarter(documented, starterDocumented, LABS), []);
  assert.notDeepEqual(
    auditStarter(
      REFERENCE.replace("// sort first, then strip folders", 'if (names.length === 0) throw new Error("not one of the names we sort and strip folders from");'),
      starterDocumented,
      LABS,
    ),
    [],
    "without the reference's own doc comment the same words are a leak",
  );
});

test("findStarterLeaks names the starter's own path, and the practice error says where and what", () => {
  const starter = withInList("// 参考：return [...names].sort().map((name) => ({ name: …");
  const leaks = findStarterLeaks([{ teachingFile: "src/shelf.ts", starterFile: "starters/01-shelf.ts", reference: REFERENCE, starter }], LABS);
  assert.deepEqual(
    leaks.map((l) => `${l.file}:${l.line}`),
    [`starters/01-shelf.ts:${lineOf(starter, "参考")}`],
  );
  assert.throws(
    () => assertNoLeaks(leaks),
    (error: Error & { code?: string }) => {
      assert.equal(error.code, "LEAK_DETECTED");
      assert.match(
        error.message,
        new RegExp(`starters/01-shelf\\.ts:${lineOf(starter, "参考")} 的注释含有 src/shelf\\.ts 参考实现函数体中的代码「return \\[\\.\\.\\.names\\]`),
      );
      return true;
    },
  );
});
