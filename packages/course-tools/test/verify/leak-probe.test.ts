// test-process: shared
/** `verify/leak-probe.ts`: the leak audit line's probe, that the starter audit sees an answer pasted into the starter. */
import assert from "node:assert/strict";
import test from "node:test";
import { pastedAnswerProblem } from "../../src/verify/leak-probe.js";

const REFERENCE = `/** Lists things. */
export function list(names: readonly string[]): string[] {
  const sorted = [...names].sort((a, b) => a.localeCompare(b));
  return sorted.map((name) => name.trim());
}

export function size(names: readonly string[]): number {
  return names.length;
}
`;

const STARTER = `function labError(lab: string): Error {
  return new Error(\`\${lab} 尚未实现\`);
}

/** Lists things. */
export function list(names: readonly string[]): string[] {
  // 🔨 Lab 1.1：排序，再去掉空白
  void names;
  throw labError("Lab 1.1 list");
}

export function size(names: readonly string[]): number {
  return names.length;
}
`;

const probed = (starter: string, reference = REFERENCE) => ({ source: "starters/01-list.ts", teachingFile: "src/list.ts", reference, starter });

test("a starter the audit can see into passes the probe: the reference's longest line it lacks, pasted above its first throw, is caught there", () => {
  assert.equal(pastedAnswerProblem(probed(STARTER), ["1.1"]), undefined);
});

test("the probe fails where the audit could see nothing: no construction site, no line to paste, a paste too short to be an answer", () => {
  assert.match(pastedAnswerProblem(probed(STARTER.replace('  throw labError("Lab 1.1 list");\n', "  return [];\n")), ["1.1"]) ?? "", /没有施工位的 throw/);
  assert.match(
    pastedAnswerProblem(probed(`${STARTER}\n// ${REFERENCE.split("\n").join("\n// ")}\n`), ["1.1"]) ?? "",
    /已含参考实现 src\/list\.ts 的每一行代码/,
  );
  // The only line the starter lacks is too short to count as an answer (starter-audit.ts: ANSWER_RUN_TOKENS).
  const short = "export function list(names: readonly string[]): string[] {\n  return [];\n}\n";
  const problem = pastedAnswerProblem(probed(STARTER, short), ["1.1"]);
  assert.match(problem ?? "", /^贴进 starters\/01-list\.ts 第 9 行注释的参考实现代码「return \[\];」没有被审计发现$/);
});
