// test-process: shared
/**
 * `verify/reformat.ts`: the record's check that every fault survives its file reformatted by
 * the repository's formatter (Biome at width 60 with 4-space indents), on the mini chapter.
 * Which faults survive what is `reformatProblems`'s (course/faults.test.ts); every chapter's
 * own catalog is checked by its `verify NN` ("fault catalog").
 */
import assert from "node:assert/strict";
import path from "node:path";
import test from "node:test";
import { courseRoot } from "../../src/core/paths.js";
import { faultReformatProblems } from "../../src/verify/reformat.js";
import { fault, MINI_REFERENCE } from "../support/fault-fixture.js";
import { tempDir } from "../support/fake-course.js";

const nodeModules = path.join(courseRoot, "node_modules");

test("faultReformatProblems: the mini chapter's faults survive Biome's reformat; a find that is not there is named; without Biome, one problem says so", async (t) => {
  const gate = fault({ id: "98.2-x", lab: "98.2", in: "gate", find: "if (!loader.trust()) {", replace: "if (loader.trust()) {" });
  const read = async () => MINI_REFERENCE;
  assert.deepEqual(await faultReformatProblems([fault(), gate], read, nodeModules), []);
  const problems = await faultReformatProblems([gate, fault({ id: "98.1-gone", find: "return n * 4;" })], read, nodeModules);
  assert.equal(problems.length, 1);
  assert.match(problems[0]!, /^故障 98\.1-gone：/);
  const missing = await faultReformatProblems([gate], read, path.join(tempDir(t), "node_modules"));
  assert.equal(missing.length, 1);
  assert.match(missing[0]!, /^找不到格式化工具 node_modules\/@biomejs\/biome\/bin\/biome/);
});
