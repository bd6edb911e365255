// test-process: shared
/**
 * `course/manifest-format.ts`: the manifest format `docs/chapter-home.md` shows is the
 * schema's rendering, a valid manifest naming every field the schema knows; the lab example
 * of the docs' manifest item names exactly the schema's lab fields.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import test from "node:test";
import { parse } from "yaml";
import { courseRoot } from "../../src/core/paths.js";
import { parseManifest } from "../../src/course/manifest.js";
import { MANIFEST_EXAMPLE, manifestFields, renderManifestFormat } from "../../src/course/manifest-format.js";

const DOC = "docs/chapter-home.md";
const doc = () => readFileSync(path.join(courseRoot, DOC), "utf8");

test("docs/chapter-home.md shows the manifest format rendered from the schema", () => {
  const expected = `\`\`\`yaml\n${renderManifestFormat()}\n\`\`\``;
  const block = /<!-- manifest-format: begin -->\n([\s\S]*?)\n?<!-- manifest-format: end -->/.exec(doc())?.[1];
  assert.equal(block, expected, `${DOC} between the manifest-format markers should read:\n${expected}`);
});

test("the rendered format is a valid manifest, and names every field of the schema", () => {
  const manifest = parseManifest(renderManifestFormat(), "chapters/12-resources-extensions/chapter.yaml");
  assert.equal(manifest.labs.length, MANIFEST_EXAMPLE.labs.length);
  const written = new Set<string>();
  const collect = (value: unknown, prefix: string): void => {
    if (Array.isArray(value)) for (const item of value) collect(item, `${prefix}[]`);
    else if (typeof value === "object" && value !== null) {
      for (const [key, inner] of Object.entries(value)) {
        written.add(`${prefix === "" ? "" : `${prefix}.`}${key}`);
        collect(inner, `${prefix === "" ? "" : `${prefix}.`}${key}`);
      }
    }
  };
  collect(parse(renderManifestFormat()), "");
  assert.deepEqual(
    manifestFields().filter((field) => !written.has(field)),
    [],
  );
});

test("the lab example of the docs' manifest item writes exactly the schema's lab fields (its faults are the fault tooling's)", () => {
  const block = /```yaml\n(labs:\n[\s\S]*?)```/.exec(doc().replace(/^ {3}/gm, ""))?.[1];
  assert.ok(block, `${DOC}: a yaml block starting with labs:`);
  const [lab] = (parse(block) as { labs: Record<string, unknown>[] }).labs;
  const labFields = manifestFields()
    .filter((field) => field.startsWith("labs[]."))
    .map((field) => field.slice("labs[].".length))
    // A lab's faults are written in the home's catalog (`solutions/mistakes.yaml`), not in its manifest entry.
    .filter((field) => field !== "faults");
  assert.deepEqual(Object.keys(lab ?? {}).sort(), labFields.sort());
});
