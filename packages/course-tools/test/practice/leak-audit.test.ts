// test-process: shared
/** `practice/leak-audit.ts`: no line of the answer in a practice folder. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { findLeaks, INHERITED_LEAK_LINE_LENGTH, isSignificantLine, type LeakPair, MIN_LEAK_LINE_LENGTH } from "../../src/practice/leak-audit.js";
import { REFERENCE_BETA, STARTER_BETA } from "../support/fake-course.js";

const PAIR: LeakPair = { teachingFile: "src/beta.ts", reference: REFERENCE_BETA, starter: STARTER_BETA };

test("leak audit: a planted reference line is caught with file and line number", () => {
  const planted = `const x = 1;\n  return betaCatalog(names).join(" | ");\n`;
  const leaks = findLeaks(
    [
      { file: "notes.md", text: "nothing here\n" },
      { file: "test/a.ts", text: planted },
    ],
    [PAIR],
  );
  assert.deepEqual(leaks, [{ file: "test/a.ts", line: 2, text: 'return betaCatalog(names).join(" | ");', teachingFile: "src/beta.ts" }]);
  // CRLF line ends and different indentation do not hide a leak.
  assert.equal(findLeaks([{ file: "b", text: 'x\r\n\t\treturn betaCatalog(names).join(" | ");\r\n' }], [PAIR]).length, 1);
});

test("leak audit: lines the starter also has, short lines and punctuation-only lines are ignored", () => {
  const given = "export function betaCatalog(names: readonly string[]): string[] {"; // in the starter too
  const short = "return out;"; // < MIN_LEAK_LINE_LENGTH
  const punct = "}));  ]);  });";
  const reference = `${given}\n${short}\n${punct}\n`;
  const pair: LeakPair = { teachingFile: "t.ts", reference, starter: `${given}\n` };
  assert.deepEqual(findLeaks([{ file: "f.ts", text: reference }], [pair]), []);
  assert.ok(short.length < MIN_LEAK_LINE_LENGTH);
  assert.equal(isSignificantLine(punct), false);
  assert.equal(isSignificantLine("const a = b;"), true);
  assert.equal(isSignificantLine("return x + 1"), true);
  assert.equal(isSignificantLine("return x+1;"), false);
  // One item of a list or a type broken over lines by the formatter says nothing about the answer.
  for (const item of ["listDirectory,", "type SkillResource,", "readTextIfPresent as read,", "description: string;", "readonly roots?: string[];"]) {
    assert.equal(isSignificantLine(item), false, item);
  }
  for (const code of [
    "const roots = options.roots;",
    "fields: Record<string, unknown>;",
    "return listDirectory(root);",
    'skip: (name) => name.startsWith("."),',
  ]) {
    assert.equal(isSignificantLine(code), true, code);
  }
});

test("leak audit: files inherited from the parent are checked for distinctive answer lines only", () => {
  const idiom = "clearTimeout(timer);"; // shorter than INHERITED_LEAK_LINE_LENGTH
  const distinctive = "const unique = [...new Set(names)].sort(); // keep order stable";
  const pair: LeakPair = { teachingFile: "t.ts", reference: `${idiom}\n${distinctive}\n`, starter: "" };
  assert.ok(idiom.length >= MIN_LEAK_LINE_LENGTH && idiom.length < INHERITED_LEAK_LINE_LENGTH);
  assert.ok(distinctive.length >= INHERITED_LEAK_LINE_LENGTH);
  const leaks = findLeaks(
    [
      { file: "tooling.ts", text: `  ${idiom}\n`, inherited: true },
      { file: "bench.ts", text: `x\n  ${distinctive}\n`, inherited: true },
      { file: "test.ts", text: `  ${idiom}\n` },
    ],
    [pair],
  );
  assert.deepEqual(
    leaks.map((l) => `${l.file}:${l.line}`),
    ["bench.ts:2", "test.ts:1"],
  );
});
