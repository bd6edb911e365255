/**
 * Faults survive a reformat (`course/fault-anchor.ts`): the repository's formatter run over
 * every interactive chapter's teaching files with another line width and another indent,
 * and every fault of its catalog still put in exactly once, undone byte for byte, and
 * making the same program as on the file as it is (the same code once whitespace and
 * separators before a closing bracket are set aside). The same program fails the same tests, so `fault NN
 * --all` kills and restores every fault of a reformatted chapter as it does today.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import test from "node:test";
import { injectFault, authorFaults } from "../../lib/course/faults.js";
import { significantCode } from "../../lib/course/fault-anchor.js";
import { listChapterIds, loadManifest } from "../../lib/course/manifest.js";
import { courseRoot } from "../../lib/core/paths.js";

const biome = createRequire(import.meta.url).resolve("@biomejs/biome/bin/biome");

/** `text` (the TypeScript module `file`) as the repository's formatter writes it at `lineWidth` with `indentWidth`-space indents. */
function reformat(text: string, file: string, lineWidth: number, indentWidth: number): string {
  return execFileSync(process.execPath, [biome, "format", `--stdin-file-path=${file}`, `--line-width=${lineWidth}`, `--indent-width=${indentWidth}`], {
    cwd: courseRoot,
    input: text,
    encoding: "utf8",
    stdio: ["pipe", "pipe", "ignore"],
  });
}

/** True when `a` and `b` are the same code once whitespace and separators before a closing bracket are set aside. */
function sameCode(a: string, b: string): boolean {
  return significantCode(a) === significantCode(b);
}

test("every fault of every interactive chapter survives its teaching files reformatted at another width and indent", async () => {
  let checked = 0;
  for (const id of await listChapterIds(courseRoot)) {
    const manifest = await loadManifest(courseRoot, id);
    const faults = authorFaults(manifest);
    if (faults.length === 0) continue;
    const originals = new Map<string, string>();
    const reformatted = new Map<string, string>();
    for (const file of new Set(faults.map((fault) => fault.file))) {
      const text = readFileSync(path.join(courseRoot, ...file.split("/")), "utf8");
      originals.set(file, text);
      reformatted.set(file, reformat(text, file, 60, 4));
      assert.notEqual(reformatted.get(file), text, `${file} looks different once reformatted`);
      assert.ok(sameCode(reformatted.get(file)!, text), `${file}: the formatter changed only whitespace and separators before closing brackets`);
    }
    for (const fault of faults) {
      const original = injectFault(originals.get(fault.file)!, fault);
      const moved = injectFault(reformatted.get(fault.file)!, fault);
      assert.ok(sameCode(moved.text, original.text), `${fault.id}: the same mistake in the reformatted ${fault.file}`);
      assert.equal(moved.undo(moved.text), reformatted.get(fault.file), `${fault.id}: undone byte for byte`);
      checked++;
    }
  }
  assert.ok(checked >= 100, `the faults of chapters 12 and 13 were all checked (${checked})`);
});
