// test-process: shared
/** `verify/hint-signatures.ts`: the signatures a hint's second rung names match the starter's. */
import assert from "node:assert/strict";
import test from "node:test";
import { declaredSignatures, parameterNames, signatureMismatches } from "../../src/verify/hint-signatures.js";

test("parameter names are read past types and default values", () => {
  assert.deepEqual(parameterNames("a: T, { b }: U = {}, c?: V, ...rest: W[]"), ["a", "{ b }", "c", "rest"]);
  assert.deepEqual(parameterNames("argv: readonly string[], write: (text: string) => void = (t) => out(t), model: Model = rule"), ["argv", "write", "model"]);
});

test("a hint naming a starter function with other parameters is a mismatch", () => {
  const declared = declaredSignatures(
    "export function main(argv: readonly string[], write: (text: string) => void = (t) => out(t), model = rule): number {}\n",
  );
  assert.deepEqual(declared.get("main"), ["argv", "write", "model"]);
  assert.deepEqual(signatureMismatches("签名：main(argv, write = 写到标准输出, model = ruleModel): number", declared), []);
  assert.deepEqual(signatureMismatches("签名：main(argv)", declared), ["main(argv) 与 starter 的 main(argv, write, model) 不一致"]);
});
