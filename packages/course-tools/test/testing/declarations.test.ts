// test-process: shared
/**
 * `testing/declarations.ts`: two public surfaces compared as the ordinary build emits them,
 * comments and layout within a line set aside, names, types, punctuation and literals not.
 */
import assert from "node:assert/strict";
import test from "node:test";
import { declarationLines, declarationPathOf, firstDeclarationDifference } from "../../src/testing/declarations.js";

test("declarations are compared line by line, ignoring blank lines and trailing spaces", () => {
  assert.equal(firstDeclarationDifference("export declare function a(): void;  \n\n", "export declare function a(): void;\n"), undefined);
  assert.match(firstDeclarationDifference("export declare function a(): void;\n", "export declare function a(x: string): void;\n") ?? "", /第 1 行/);
  assert.match(firstDeclarationDifference("a;\n", "a;\nb;\n") ?? "", /第 2 行：starter「（没有）」/);
});

test("doc comments, line comments and inline comments are no difference; what they sat beside is", () => {
  const starter = [
    "/**",
    " * 🔨 Lab 1.1: write it yourself.",
    " */",
    "export declare function load(/** where */ path: string, limit?: number): Promise<string>; // TODO",
    "//# sourceMappingURL=x.d.ts.map",
  ].join("\n");
  const reference = "/** Loads it. */\nexport declare function load(path: string, /* a comment\n over two lines */ limit?: number): Promise<string>;\n";
  assert.equal(firstDeclarationDifference(starter, reference), undefined);
  assert.equal(
    firstDeclarationDifference(starter, reference.replace("limit?: number", "limit: number")),
    "第 1 行：starter「export declare function load( path: string, limit?: number): Promise<string>;」，target「export declare function load(path: string, limit: number): Promise<string>;」",
  );
});

test("words stay apart: a space between two words is kept, one beside punctuation is not", () => {
  assert.equal(firstDeclarationDifference("export declare const a: number;", "export  declare const a :number ;"), undefined);
  assert.notEqual(firstDeclarationDifference("export declare const x: keyof T;", "export declare const x: keyofT;"), undefined);
  assert.deepEqual(
    declarationLines("export type T = { a: 1 };").map((l) => l.key),
    ["export type T={a:1};"],
  );
});

test("string literals and template literal types are kept exactly: comment marks and spaces inside them count", () => {
  assert.deepEqual(
    declarationLines(`export type Url = "http://x" | 'a /* b */ c';`).map((l) => l.key),
    [`export type Url="http://x"|'a /* b */ c';`],
  );
  assert.notEqual(firstDeclarationDifference(`export type S = "a - b";`, `export type S = "a-b";`), undefined);
  assert.notEqual(firstDeclarationDifference("export type C = `code: ${string}`;", "export type C = `code:${string}`;"), undefined);
  // A `}` inside `${…}` of a template closes an object type, not the placeholder.
  assert.deepEqual(
    declarationLines("export type K = `${keyof { a: 1 } & string}-// not a comment`; // a comment").map((l) => l.key),
    ["export type K=`${keyof{a:1}&string}-// not a comment`;"],
  );
  assert.deepEqual(
    declarationLines('export type Q = "say \\"hi\\" // still text";').map((l) => l.shown),
    ['export type Q = "say \\"hi\\" // still text";'],
  );
});

test("the build's declarations of a source sit under dist/ beside its JavaScript", () => {
  assert.equal(declarationPathOf("packages/pi-course/src/runtime.ts"), "packages/pi-course/dist/src/runtime.d.ts");
  assert.equal(declarationPathOf("packages/pi-course/src/runtime.m12.ts"), "packages/pi-course/dist/src/runtime.m12.d.ts");
});
