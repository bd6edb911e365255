/**
 * Helpers for tests about folders a command writes: a folder tree's fingerprint (to prove
 * nothing changed), the partial folders left beside it, and a matcher for coded errors.
 */
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { CourseError } from "../../src/core/errors.js";

/** An `assert.throws`/`rejects` matcher: a `CourseError` with this code. */
export function isCode(code: string) {
  return (error: unknown) => error instanceof CourseError && error.code === code;
}

/** Every path under `dir` with a hash of each file: a fingerprint of a folder tree. */
export function fingerprint(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const name of readdirSync(path.join(dir, rel)).sort()) {
      const child = path.join(rel, name);
      const st = lstatSync(path.join(dir, child));
      if (st.isDirectory()) {
        out.push(`${child}/`);
        walk(child);
      } else
        out.push(
          `${child} ${
            st.isFile()
              ? createHash("sha256")
                  .update(readFileSync(path.join(dir, child)))
                  .digest("hex")
              : "link"
          }`,
        );
    }
  };
  walk("");
  return out;
}

/** The temporary `.partial-` folders left in `parent`: none may outlive a command. */
export function leftovers(parent: string): string[] {
  return readdirSync(parent).filter((name) => name.includes(".partial-"));
}
