// test-process: shared
/** `course/manifest-cache.ts`: a valid manifest is parsed once per text and validator; anything else is parsed again. */
import assert from "node:assert/strict";
import { mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import test, { type TestContext } from "node:test";
import { cachedParse, MANIFEST_CACHE } from "../../src/course/manifest-cache.js";

async function tempRoot(t: TestContext): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), "pi-manifest-cache-"));
  t.after(() => rm(root, { recursive: true, force: true }));
  return root;
}

/** A validator module of its own (the cache key includes its text). */
async function validator(root: string, text: string): Promise<URL> {
  const file = path.join(root, `validator-${text.length}.js`);
  await writeFile(file, text);
  return new URL(`file://${file}`);
}

test("the same text is parsed once; another text, or another path, is parsed again", async (t) => {
  const root = await tempRoot(t);
  const validators = [await validator(root, "export const v = 1;")];
  const seen: string[] = [];
  const parse = (source: string) => {
    seen.push(source);
    return { title: source.toUpperCase(), labs: [{ id: "3.1", tests: 2 }] };
  };
  const first = cachedParse("a: 1", "checkpoints/03.yaml", validators, parse, { root });
  const again = cachedParse("a: 1", "checkpoints/03.yaml", validators, parse, { root });
  assert.deepEqual(again, first);
  assert.deepEqual(seen, ["a: 1"]);
  cachedParse("a: 2", "checkpoints/03.yaml", validators, parse, { root });
  cachedParse("a: 1", "checkpoints/04.yaml", validators, parse, { root });
  assert.deepEqual(seen, ["a: 1", "a: 2", "a: 1"]);
  // Validation rules of another text are another entry too.
  cachedParse("a: 1", "checkpoints/03.yaml", [await validator(root, "export const v = 2; // stricter")], parse, { root });
  assert.deepEqual(seen, ["a: 1", "a: 2", "a: 1", "a: 1"]);
  assert.equal((await readdir(path.join(root, ...MANIFEST_CACHE.split("/")))).length, 4);
});

test("what parse throws is thrown every time, and nothing is remembered", async (t) => {
  const root = await tempRoot(t);
  const validators = [await validator(root, "export const v = 1;")];
  let calls = 0;
  const parse = () => {
    calls++;
    throw Object.assign(new Error("bad"), { code: "MANIFEST_INVALID" });
  };
  for (let i = 0; i < 2; i++) assert.throws(() => cachedParse("x", "checkpoints/03.yaml", validators, parse, { root }), { code: "MANIFEST_INVALID" });
  assert.equal(calls, 2);
});

test("a value JSON would change (an undefined field) is not remembered", async (t) => {
  const root = await tempRoot(t);
  const validators = [await validator(root, "export const v = 1;")];
  let calls = 0;
  const parse = () => {
    calls++;
    return { text: undefined, id: "03" };
  };
  assert.deepEqual(cachedParse("x", "checkpoints/03.yaml", validators, parse, { root }), { text: undefined, id: "03" });
  assert.deepEqual(cachedParse("x", "checkpoints/03.yaml", validators, parse, { root }), { text: undefined, id: "03" });
  assert.equal(calls, 2);
});

test("an unreadable entry is parsed again, and an unwritable cache only costs time", async (t) => {
  const root = await tempRoot(t);
  const validators = [await validator(root, "export const v = 1;")];
  let calls = 0;
  const parse = () => ++calls;
  cachedParse("x", "checkpoints/03.yaml", validators, parse, { root });
  const dir = path.join(root, ...MANIFEST_CACHE.split("/"));
  const [entry] = await readdir(dir);
  await writeFile(path.join(dir, entry!), "{ not json");
  assert.equal(cachedParse("x", "checkpoints/03.yaml", validators, parse, { root }), 2);
  assert.equal(cachedParse("x", "checkpoints/03.yaml", validators, parse, { root }), 2, "and the good value is written back");
  // A file where the cache folder should be: nothing can be written, every call parses.
  const blocked = await tempRoot(t);
  await writeFile(path.join(blocked, ".pi-course"), "");
  assert.equal(cachedParse("y", "checkpoints/03.yaml", validators, parse, { root: blocked }), 3);
  assert.equal(cachedParse("y", "checkpoints/03.yaml", validators, parse, { root: blocked }), 4);
});

test("over the limit, the oldest entries go; half-written files of killed writers go once they are old", async (t) => {
  const root = await tempRoot(t);
  const validators = [await validator(root, "export const v = 1;")];
  const dir = path.join(root, ...MANIFEST_CACHE.split("/"));
  cachedParse("a", "checkpoints/03.yaml", validators, (s) => s, { root, maxEntries: 2 });
  const [oldest] = await readdir(dir);
  const long = new Date(Date.now() - 3_600_000);
  await utimes(path.join(dir, oldest!), long, long);
  await writeFile(path.join(dir, "x.json.pi-course-1-ab.tmp"), "");
  await utimes(path.join(dir, "x.json.pi-course-1-ab.tmp"), long, long);
  cachedParse("b", "checkpoints/03.yaml", validators, (s) => s, { root, maxEntries: 2 });
  cachedParse("c", "checkpoints/03.yaml", validators, (s) => s, { root, maxEntries: 2 });
  const left = await readdir(dir);
  assert.equal(left.length, 2);
  assert.ok(!left.includes(oldest!), "the oldest entry is gone");
});
