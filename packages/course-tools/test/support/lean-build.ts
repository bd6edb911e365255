/**
 * A lean build for the synthetic courses of the tooling tests.
 *
 * The tooling tests build small synthetic chapters well over a hundred times per run (every
 * fault, every lab run, every step of a synthetic `verify`). With the course's own
 * configuration each build type-checks against all of `@types/node` (160 files) although a
 * synthetic test imports only `node:test` and `node:assert/strict`: 0.15–0.20 s of CPU per
 * build on the reference machine. With `types: []` and the few declarations below it reads
 * 64 files and costs 0.03 s (`tsc --extendedDiagnostics` on the mini chapter). The build is
 * still the real compiler with real diagnostics; only the typings of those two modules are
 * narrowed to what synthetic tests call.
 */

/** Where the declarations go in a synthetic course: beside its tests, so that every copy of the tests (a fault scratch copy too) has them. */
export const NODE_TEST_TYPES = "packages/pi-course/test/node-test.d.ts";

/** Declarations of the parts of `node:test`, `node:assert/strict`, `node:fs` and Node's globals that synthetic chapters use. */
export const NODE_TEST_TYPINGS = `// Typings for the synthetic courses of the tooling tests (see packages/course-tools/test/support/lean-build.ts).
declare function setTimeout(callback: () => void, ms?: number): unknown;
declare function clearTimeout(timer: unknown): void;
declare const console: { log(...values: unknown[]): void; error(...values: unknown[]): void };
declare module "node:fs" {
  export function writeFileSync(file: string, data: string): void;
}
declare module "node:test" {
  type TestFn = (context: unknown) => void | Promise<void>;
  function test(name: string, fn: TestFn): Promise<void>;
  function test(name: string, options: Record<string, unknown>, fn: TestFn): Promise<void>;
  export default test;
  export { test };
}
declare module "node:assert/strict" {
  interface Assert {
    (value: unknown, message?: string): asserts value;
    ok(value: unknown, message?: string): asserts value;
    equal(actual: unknown, expected: unknown, message?: string): void;
    notEqual(actual: unknown, expected: unknown, message?: string): void;
    strictEqual(actual: unknown, expected: unknown, message?: string): void;
    deepEqual(actual: unknown, expected: unknown, message?: string): void;
    notDeepEqual(actual: unknown, expected: unknown, message?: string): void;
    match(value: string, pattern: RegExp, message?: string): void;
    throws(fn: () => unknown, expected?: unknown, message?: string): void;
    rejects(value: Promise<unknown> | (() => Promise<unknown>), expected?: unknown, message?: string): Promise<void>;
  }
  const assert: Assert;
  export default assert;
}
`;

/** The course package's tsconfig for a synthetic course: the course's own, without `@types/node`. */
export function leanPackageTsconfig(): string {
  return `${JSON.stringify(
    {
      extends: "../../tsconfig.base.json",
      compilerOptions: { rootDir: ".", outDir: "dist", declaration: true, sourceMap: true, incremental: true, tsBuildInfoFile: "dist/.tsbuildinfo", types: [] },
      include: ["src/**/*.ts", "test/**/*.ts"],
    },
    null,
    2,
  )}\n`;
}
