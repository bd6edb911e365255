// test-process: shared
/** `ts/source.ts`: syntax trees of the course's TypeScript: declarations, comments, literals, positions. */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  allComments,
  leadingComments,
  lineAndColumn,
  literalRanges,
  parseModule,
  parseModules,
  SyntaxKind,
  topLevelDeclarations,
  walk,
} from "../../src/ts/source.js";
import { STARTER } from "../support/ts-texts.js";

test("topLevelDeclarations: names, kinds, export flags and attached versus detached comments", () => {
  const tree = parseModule(STARTER, "starter.ts");
  const declarations = topLevelDeclarations(tree);
  assert.deepEqual(
    declarations.map((d) => [d.kind, d.name, d.exported]),
    [
      ["import", "", false],
      ["interface", "Thing", true],
      ["function", "labError", false],
      ["function", "list", true],
      ["function", "render", true],
      ["class", "Box", true],
    ],
  );
  const list = declarations.find((d) => d.name === "list")!;
  assert.ok(list.text.startsWith("/** Lists things. */\nexport function list("), "the doc comment travels with the declaration");
  assert.ok(list.text.endsWith('throw labError("Lab 1.1 list");\n}'));
  assert.equal(STARTER.slice(list.codeStart, list.codeStart + 6), "export");
  assert.deepEqual(
    list.detachedComments.map((c) => c.text.slice(0, 10)),
    ["// -------", "// Lab 1.1", "// -------"],
    "section headers above a blank line stay outside the declaration",
  );
});

test("parse errors are TS_SYNTAX naming the file and the line", () => {
  assert.throws(
    () => parseModules({ "ok.ts": "export const a = 1;\n", "bad.ts": "const a = 1;\nfunction (\n" }),
    (error: unknown) => {
      assert.equal((error as { code?: string }).code, "TS_SYNTAX");
      assert.match((error as Error).message, /^bad\.ts:2: /);
      return true;
    },
  );
});

test("lineAndColumn, walk and leadingComments agree with the text", () => {
  const text = "// a\n/* b */\nexport function f() {\n  return g(1, 'x');\n}\n";
  const tree = parseModule(text);
  const strings: string[] = [];
  walk(tree, (node) => {
    if (node.kind === SyntaxKind.StringLiteral) strings.push(node.getText(tree));
  });
  assert.deepEqual(strings, ["'x'"]);
  assert.deepEqual(lineAndColumn(tree, text.indexOf("return")), { line: 4, column: 3 });
  assert.deepEqual(
    leadingComments(text, 0).map((c) => [c.kind, c.text]),
    [
      ["line", "// a"],
      ["block", "/* b */"],
    ],
  );
});

test("allComments finds every comment, none inside a string, template or regular expression; literalRanges lists those", () => {
  const text = [
    'const a = "// not a comment"; // one',
    "const b = `/* nor ${a /* two */} this */`;",
    "const c = /\\/\\/x/g; /* three */",
    "function f() {",
    "  return 1;",
    "  // four, alone before the brace",
    "}",
    "",
  ].join("\n");
  const tree = parseModule(text);
  assert.deepEqual(
    allComments(tree).map((c) => c.text),
    ["// one", "/* two */", "/* three */", "// four, alone before the brace"],
  );
  assert.deepEqual(
    literalRanges(tree).map((r) => text.slice(r.pos, r.end)),
    ['"// not a comment"', "`/* nor ${", "} this */`", "/\\/\\/x/g"],
  );
});
