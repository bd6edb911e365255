// @ts-check
/**
 * Where the course's own TypeScript compiler is, as node would resolve `typescript` from a
 * package folder. TypeScript 7 ships a native `tsc` in a platform package; starting it
 * directly skips the node process its JavaScript shim would cost. Otherwise the package's
 * `bin` script runs with this node.
 *
 * Plain JavaScript on purpose: the tooling's bin (`bin/pi-course.mjs`) loads it from `src/` to
 * build the tooling before anything is compiled, and the test runner (`run-tests.mjs`) to
 * type-check; the tooling itself uses it through `testing/compiler.ts`.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

/**
 * @typedef {{ command: string, args: string[] }} Compiler
 *   How to start the compiler: a program and the arguments before ours.
 * @typedef {{ missing: "typescript" } | { missing: "bin", manifest: string }} NoCompiler
 *   Why there is none: TypeScript is not installed, or its manifest names no `tsc`.
 */

/**
 * The compiler of the package at `packageDir` (absolute), or why there is none. Never throws
 * for a missing TypeScript: the caller says what to do about it.
 *
 * @param {string} packageDir
 * @returns {Compiler | NoCompiler}
 */
export function findCompiler(packageDir) {
  const require = createRequire(path.join(packageDir, "package.json"));
  let manifestPath;
  try {
    manifestPath = require.resolve("typescript/package.json");
  } catch {
    return { missing: "typescript" };
  }
  /** @type {{ version?: string, bin?: string | Record<string, string> }} */
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  if (Number.parseInt(manifest.version ?? "0", 10) >= 7) {
    try {
      const platformPackage = `@typescript/typescript-${process.platform}-${process.arch}/package.json`;
      const platformDir = path.dirname(createRequire(manifestPath).resolve(platformPackage));
      const exe = path.join(platformDir, "lib", process.platform === "win32" ? "tsc.exe" : "tsc");
      if (existsSync(exe)) return { command: exe, args: [] };
    } catch {
      // No platform package where we looked: let the package's own shim find the binary.
    }
  }
  const bin = typeof manifest.bin === "string" ? manifest.bin : manifest.bin?.tsc;
  if (bin === undefined) return { missing: "bin", manifest: manifestPath };
  return { command: process.execPath, args: [path.join(path.dirname(manifestPath), bin)] };
}
