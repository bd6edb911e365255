// test-process: shared
/**
 * `verify/claims.ts`: an expect block is the command's whole output, each omission marked
 * `…（省略 N 行）`; lines are matched on whole words.
 */
import assert from "node:assert/strict";
import test from "node:test";
import { type ClaimLine, firstClaimMismatch, omittedCount, shownOutputLines } from "../../src/verify/claims.js";

/** Joins lines into a text. */
const lines = (...all: string[]) => all.join("\n");

/** An expect block from its lines, numbered from 1; `…（省略 N 行）` lines become markers. */
const block = (...texts: string[]): ClaimLine[] =>
  texts.map((text, index) => {
    const omitted = omittedCount(text);
    return omitted === undefined ? { line: index + 1, text } : { line: index + 1, text, omitted };
  });

const OUTPUT = lines(
  "\u001b[31m✖ Lab 2.1 · catalog is sorted (3.2ms)\u001b[39m",
  "  Error: Lab 2.1 beta catalog 尚未实现",
  "",
  "Lab 2.2 · 渲染      0/1   未开始",
  "ℹ pass 30",
  "ℹ fail 2",
);

test("the whole output matches, line by line on whole words: padding, timings, colours and blank lines may differ, numbers may not", () => {
  assert.equal(
    firstClaimMismatch(OUTPUT, block("✖ Lab 2.1 · catalog is sorted", "Error: Lab 2.1 beta catalog 尚未实现", "Lab 2.2 · 渲染 0/1", "ℹ pass 30", "ℹ fail 2")),
    undefined,
  );
  assert.deepEqual(
    firstClaimMismatch(OUTPUT, block("…（省略 3 行）", "ℹ pass 3", "ℹ fail 2")),
    { line: 2, problem: "正文的 “ℹ pass 3” 与输出对不上，输出的这一行是 “ℹ pass 30”" },
    "3 is not 30",
  );
});

test("an omission is marked with its exact count; an unmarked gap, a wrong count or a deleted inner line fails", () => {
  assert.equal(firstClaimMismatch(OUTPUT, block("✖ Lab 2.1 · catalog is sorted", "…（省略 3 行）", "ℹ fail 2")), undefined);
  assert.equal(firstClaimMismatch(OUTPUT, block("…（省略 4 行）", "ℹ fail 2")), undefined, "a leading omission");
  assert.equal(firstClaimMismatch(OUTPUT, block("✖ Lab 2.1 · catalog is sorted", "…（省略 4 行）")), undefined, "a trailing omission");
  assert.deepEqual(firstClaimMismatch(OUTPUT, block("✖ Lab 2.1 · catalog is sorted", "ℹ fail 2")), {
    line: 2,
    problem: "正文的 “ℹ fail 2” 与输出对不上，它在 3 行之后才出现：把中间的行写出来，或者标上 …（省略 3 行）",
  });
  assert.deepEqual(firstClaimMismatch(OUTPUT, block("✖ Lab 2.1 · catalog is sorted", "…（省略 2 行）", "ℹ fail 2")), {
    line: 3,
    problem: "正文的 “ℹ fail 2” 与输出对不上，它在 1 行之后才出现：把中间的行写出来，或者标上 …（省略 1 行）",
  });
  assert.deepEqual(firstClaimMismatch(OUTPUT, block("✖ Lab 2.1 · catalog is sorted", "Error: Lab 2.1 beta catalog 尚未实现")), {
    line: 2,
    problem: "输出在正文最后一行之后还有 3 行（下一行是 “Lab 2.2 · 渲染      0/1   未开始”）：写出来，或者标上 …（省略 3 行）",
  });
  assert.deepEqual(firstClaimMismatch(OUTPUT, block("…（省略 5 行）", "x")), { line: 2, problem: "输出在这一行之前就结束了：正文的 “x” 没有出现" });
  assert.deepEqual(firstClaimMismatch(OUTPUT, block("…（省略 7 行）")), { line: 1, problem: "这里省略 7 行，但输出在它之后只剩 5 行" });
});

test("order counts and one output line backs one claimed line", () => {
  assert.notEqual(firstClaimMismatch(OUTPUT, block("…（省略 4 行）", "ℹ fail 2", "✖ Lab 2.1 · catalog is sorted")), undefined);
  assert.notEqual(firstClaimMismatch(OUTPUT, block("…（省略 4 行）", "ℹ fail 2", "ℹ fail 2")), undefined);
});

test("npm's banner before a script's output is npm's, not the command's", () => {
  const npmOutput = lines("", "> @pi/course@0.0.0 lab", "> exec node ../course-tools/bin/pi-course.mjs lab 0.1", "", "Lab 0.1 · 循环  0/3");
  assert.deepEqual(shownOutputLines(npmOutput), ["Lab 0.1 · 循环  0/3"]);
  assert.equal(firstClaimMismatch(npmOutput, block("Lab 0.1 · 循环 0/3")), undefined);
  assert.deepEqual(shownOutputLines("> not a banner\nx"), ["> not a banner", "x"], "only npm's two-line banner is left out");
  assert.equal(omittedCount("…（省略 0 行）"), undefined, "an omission leaves out at least one line");
  assert.equal(omittedCount(" …（省略 12 行） "), 12);
});
