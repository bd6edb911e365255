// test-process: shared
/** `lab/locate.ts`: where in the learner's code a failure happened. */
import assert from "node:assert/strict";
import path from "node:path";
import test from "node:test";
import { courseFrames, locateFailure } from "../../src/lab/locate.js";

test("failure locations point into the course, skipping node internals and node_modules", () => {
  const root = path.join(path.sep, "course");
  const at = (file: string, line: number) => `    at fn (${new URL(`file://${path.join(root, file)}`).href}:${line}:5)`;
  const stack = [
    "Error: Lab 99.1 mini add 尚未实现",
    `    at labError (${path.join(root, "node_modules", "x", "index.js")}:1:1)`,
    "    at node:internal/test_runner/test:1:1",
    at("packages/pi-course/src/mini.ts", 3),
    at("packages/pi-course/test/99-mini.test.ts", 6),
    `    at outside (${path.join(path.sep, "elsewhere", "x.js")}:1:1)`,
  ].join("\n");
  assert.deepEqual(
    courseFrames(stack, root).map((f) => `${f.file}:${f.line}`),
    ["packages/pi-course/src/mini.ts:3", "packages/pi-course/test/99-mini.test.ts:6"],
  );
  assert.equal(locateFailure(undefined, root), undefined);

  // A course under a path with spaces and parentheses keeps its locations.
  const spaced = path.join(path.sep, "home", "me", "my course (copy)");
  const frames = [
    `    at discoverResources (${path.join(spaced, "packages", "pi-course", "src", "resources.ts")}:163:9)`,
    `    at ${new URL(`file://${path.join(spaced, "packages", "pi-course", "test", "12-x.test.ts")}`).href}:141:3`,
    "    at async Promise.all (index 0)",
  ].join("\n");
  assert.deepEqual(
    courseFrames(frames, spaced).map((f) => `${f.file}:${f.line}`),
    ["packages/pi-course/src/resources.ts:163", "packages/pi-course/test/12-x.test.ts:141"],
  );
});
