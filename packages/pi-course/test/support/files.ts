/**
 * Helpers shared by the course tests of several chapters: temporary folders that clean
 * themselves up, and paths inside the repository that work from the compiled tests.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** `packages/pi-course`, found from this file whether it runs as `test/support` or `dist/test/support`. */
export const packageRoot: string = (() => {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (path.basename(dir) !== "test") dir = path.dirname(dir);
  return path.basename(path.dirname(dir)) === "dist" ? path.dirname(path.dirname(dir)) : path.dirname(dir);
})();

/** The repository root. */
export const repoRoot: string = path.resolve(packageRoot, "..", "..");

/** A path inside the course package's `test/` sources (fixtures live there, not in `dist/`). */
export function testSourcePath(...segments: string[]): string {
  return path.join(packageRoot, "test", ...segments);
}

/**
 * A fresh, canonical temporary folder, removed when `t` ends: pass a test's context, or
 * `{ after }` from `node:test` for a folder shared by every test of a file.
 */
export function tempDir(t: { after(fn: () => void): unknown }, prefix = "pi-course-test-"): string {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), prefix)));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
