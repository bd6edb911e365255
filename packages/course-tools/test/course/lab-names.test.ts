// test-process: shared
/**
 * `course/lab-names.ts`: how a test belongs to a lab, by its name, and the name patterns
 * that select a lab's tests.
 */
import assert from "node:assert/strict";
import test from "node:test";
import { chapterNamePattern, labIdOfTestName, labNamePattern, labsNamePattern } from "../../src/course/lab-names.js";

test("a lab's name pattern selects its own tests and never a longer lab id", () => {
  const pattern = new RegExp(labNamePattern("12.1"));
  assert.ok(pattern.test("Lab 12.1 · roots"));
  assert.ok(pattern.test("Lab 12.1: roots"));
  assert.ok(!pattern.test("Lab 12.10 · later"));
  assert.ok(!pattern.test("Lab 12.2 · other"));
  assert.ok(!pattern.test("Lab 1201 · dot is literal"));
  assert.ok(!pattern.test("see Lab 12.1"));
  const upTo = new RegExp(labsNamePattern(["12.1", "12.2"]));
  assert.ok(upTo.test("Lab 12.1 · a") && upTo.test("Lab 12.2 · b"));
  assert.ok(!upTo.test("Lab 12.3 · c") && !upTo.test("Lab 12.10 · d") && !upTo.test("Lab 1202 · e"));
  const chapter = new RegExp(chapterNamePattern("12"));
  assert.ok(chapter.test("Lab 12.5 · hooks"));
  assert.ok(!chapter.test("Lab 11.1 · budget"));
  assert.ok(!chapter.test("hardening: symlink escape"));
});

test("lab ids are read from the start of a test name only", () => {
  assert.equal(labIdOfTestName("Lab 12.3 · template"), "12.3");
  assert.equal(labIdOfTestName("Lab 12.30 · x"), "12.30");
  assert.equal(labIdOfTestName("not Lab 12.3"), undefined);
  assert.equal(labIdOfTestName("Lab 12 · chapter"), undefined);
});
