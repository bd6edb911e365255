// test-process: shared
/** `testing/reporter.mjs`: the JSON lines node:test's events become. */
import assert from "node:assert/strict";
import path from "node:path";
import test from "node:test";
import { pathToFileURL } from "node:url";
import type { TestRecord } from "../../src/testing/results.js";
import { repoRoot } from "../support/lab-fixture.js";

test("the reporter keeps a long diff's stack frames, the error an assertion received, and both compared values", async () => {
  const { default: labReporter } = (await import(pathToFileURL(path.join(repoRoot, "packages/course-tools/src/testing/reporter.mjs")).href)) as {
    default: (source: AsyncIterable<unknown>) => AsyncGenerator<string>;
  };
  const fail = (name: string, thrown: unknown) => ({
    type: "test:fail",
    data: {
      name,
      nesting: 0,
      file: "/c/test/x.test.ts",
      line: 7,
      details: { error: Object.assign(new Error("wrapped"), { code: "ERR_TEST_FAILURE", failureType: "testCodeFailure", cause: thrown }) },
    },
  });
  let deep: unknown;
  try {
    assert.deepStrictEqual(
      Array.from({ length: 40 }, (_, i) => i),
      Array.from({ length: 40 }, (_, i) => (i === 20 ? -1 : i)),
    );
  } catch (error) {
    deep = error;
  }
  let received: unknown;
  try {
    assert.throws(
      () => {
        throw new Error("Lab 99.2 mini greet 尚未实现");
      },
      { code: "GREET_EMPTY" },
    );
  } catch (error) {
    received = error;
  }
  async function* events() {
    yield fail("Lab 99.1 · deep", deep);
    yield fail("Lab 99.2 · received", received);
  }
  const lines: string[] = [];
  for await (const line of labReporter(events())) lines.push(line);
  const [first, second] = lines.map((line) => JSON.parse(line) as TestRecord);
  assert.ok((first?.error?.message.split("\n").length ?? 0) > 12, "node's message is a long diff");
  assert.match(first?.error?.stack ?? "", /^ {4}at .*reporter\.test\.ts:\d+:\d+/, "the frames survive the long message");
  assert.ok(first?.error?.compared?.actual.includes("19,\n  20,") && first.error.compared.expected.includes("-1"), "both values whole");
  assert.equal(first?.line, 7);
  assert.equal(second?.error?.actual?.message, "Lab 99.2 mini greet 尚未实现");
  assert.match(second?.error?.actual?.stack ?? "", /^ {4}at /);
});
