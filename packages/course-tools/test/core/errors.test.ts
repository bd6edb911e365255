// test-process: shared
/**
 * `core/errors.ts`: the closed list of error codes. The type already refuses an unlisted
 * code where types are checked; this reads every source of the tooling, so that a code
 * thrown where they are not (a file run from source) and a code listed but never used are
 * caught too.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import test from "node:test";
import { CourseError, ERROR_CODES, formatError, formatWarning, isCourseError } from "../../src/core/errors.js";
import { courseRoot } from "../../src/core/paths.js";

/** The tooling's own sources (the commands and their families, `src/`), not its tests. */
function toolingSources(): { file: string; text: string }[] {
  const scripts = path.join(courseRoot, "packages", "course-tools", "src");
  const found: { file: string; text: string }[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory() && full !== path.join(scripts, "test")) walk(full);
      else if (entry.isFile() && /\.(ts|mjs)$/.test(entry.name)) found.push({ file: path.relative(courseRoot, full), text: readFileSync(full, "utf8") });
    }
  };
  walk(scripts);
  return found;
}

/** The codes a source throws, tests for or prints: `CourseError("X"`, `isCourseError(e, "X")`, `formatWarning("X"`. */
function codesIn(text: string): string[] {
  const codes: string[] = [];
  for (const match of text.matchAll(/\b(?:CourseError|formatWarning)\(\s*"([A-Z][A-Z0-9_]*)"/g)) codes.push(match[1]!);
  for (const match of text.matchAll(/\bisCourseError\([^,()]+,\s*"([A-Z][A-Z0-9_]*)"\)/g)) codes.push(match[1]!);
  return codes;
}

test("every code the tooling throws, tests for or prints is listed", () => {
  const unlisted = toolingSources().flatMap(({ file, text }) =>
    codesIn(text)
      .filter((code) => !(code in ERROR_CODES))
      .map((code) => `${file}: ${code}`),
  );
  assert.deepEqual(unlisted, []);
});

test("every listed code is thrown or printed somewhere", () => {
  const used = new Set(toolingSources().flatMap(({ text }) => codesIn(text)));
  assert.deepEqual(
    Object.keys(ERROR_CODES).filter((code) => !used.has(code)),
    [],
  );
});

test("the scan sees codes across line breaks and in every form", () => {
  assert.deepEqual(codesIn('new CourseError(\n  "FAULT_INVALID",\n  `x`)\nisCourseError(error, "TS_SYNTAX")\nformatWarning("HINT_STATE_INVALID", m)'), [
    "FAULT_INVALID",
    "HINT_STATE_INVALID",
    "TS_SYNTAX",
  ]);
});

test("an error and a warning are one line each, with their code", () => {
  const error = new CourseError("USAGE", "第一行\n  第二行");
  assert.ok(isCourseError(error, "USAGE") && !isCourseError(error, "ABORTED"));
  assert.equal(formatError(error), "错误 [USAGE] 第一行 第二行");
  assert.equal(formatWarning("HINT_STATE_INVALID", "a\nb"), "警告 [HINT_STATE_INVALID] a b");
});
