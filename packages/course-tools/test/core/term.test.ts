// test-process: shared
/** `core/term.ts`: colour only where it helps, and display widths that line up Chinese titles. */
import assert from "node:assert/strict";
import test from "node:test";
import { colorEnabled, createPaint, displayWidth, padEnd } from "../../src/core/term.js";

test("colour only on a TTY and never with NO_COLOR; CJK counts two columns", () => {
  assert.equal(colorEnabled({ isTTY: true, write: () => true }, {}), true);
  assert.equal(colorEnabled({ isTTY: true, write: () => true }, { NO_COLOR: "1" }), false);
  assert.equal(colorEnabled({ isTTY: false, write: () => true }, {}), false);
  assert.equal(colorEnabled({ write: () => true }, {}), false);
  assert.equal(createPaint(false).red("x"), "x");
  assert.equal(createPaint(true).red("x"), "\u001b[31mx\u001b[39m");
  assert.equal(displayWidth("资源 ab"), 7);
  assert.equal(displayWidth(createPaint(true).green("✓ 2/2")), 5);
  assert.equal(padEnd("两数", 6), "两数  ");
});
