/**
 * The record's judgements: pure functions from what a step saw (a test run, a text, two
 * declaration files) to its lines. Tested on synthetic results, without running anything.
 */
import type { ChapterManifest } from "../course/manifest.js";
import { SECTION_NUMBER_SOURCE } from "../course/sections.js";
import { topLevelResults } from "../testing/suite.js";
import { scaffoldLabOf, summarizeLabs, type TestRun } from "../testing/results.js";
import type { CheckResult } from "./checks.js";
import { failureMessage, firstLine, testsOfLab } from "./runs.js";
import type { VerifiedSource } from "./snapshot.js";

/** The short form of a commit id in the record's lines. */
export const short = (sha: string): string => sha.slice(0, 12);

/**
 * First red, from the starter's test run: every lab has exactly its manifest's number of
 * tests, none passes, each fails on some lab's scaffold error, and every test of the first
 * lab fails with exactly that lab's scaffold error. A crashed test file fails the check.
 */
export function evaluateFirstRed(manifest: ChapterManifest, run: Pick<TestRun, "records" | "crashes">): CheckResult {
  const name = "first red";
  if (run.crashes.length > 0) {
    const crash = run.crashes[0]!;
    return { name, ok: false, detail: `${crash.file} 崩溃（退出码 ${crash.code}）：${firstLine(crash.stderr)}` };
  }
  const parts: string[] = [];
  const problems: string[] = [];
  manifest.labs.forEach((lab, index) => {
    const tests = testsOfLab(run.records, lab.id);
    const passed = tests.filter((t) => t.ok).length;
    const messages = tests.filter((t) => !t.ok).map((t) => failureMessage(t, run.records));
    const scaffolds = [...new Set(messages.map((m) => scaffoldLabOf(m, manifest.labs)))];
    const shown = scaffolds.filter((s): s is string => s !== undefined).map((s) => `"${manifest.labs.find((l) => l.id === s)!.scaffoldError}"`);
    parts.push(`Lab ${lab.id} ${passed}/${tests.length}${shown.length > 0 ? ` ${shown.join(" ")}` : ""}`);
    if (tests.length !== lab.tests) problems.push(`Lab ${lab.id} 应有 ${lab.tests} 项测试，找到 ${tests.length} 项`);
    if (passed > 0) problems.push(`Lab ${lab.id} 对着 starter 就有 ${passed} 项通过（测试不够严格，或 starter 含有答案）`);
    const foreign = messages.filter((m) => scaffoldLabOf(m, manifest.labs) === undefined);
    if (foreign.length > 0) problems.push(`Lab ${lab.id} 的失败不是脚手架错误：“${firstLine(foreign[0]!)}”`);
    if (index === 0) {
      const inexact = messages.filter((m) => m !== lab.scaffoldError);
      if (inexact.length > 0) problems.push(`Lab ${lab.id} 应恰好以 “${lab.scaffoldError}” 失败，实际：“${firstLine(inexact[0]!)}”`);
    }
  });
  return { name, ok: problems.length === 0, detail: problems.length === 0 ? `${parts.join("; ")} (every lab red on a scaffold error)` : problems.join("；") };
}

/** Reference labs: one check per lab, `passed/total`, green only at N/N with N as the manifest says. */
export function evaluateReferenceLabs(manifest: ChapterManifest, run: Pick<TestRun, "records" | "crashes">): CheckResult[] {
  const labs = summarizeLabs(manifest.labs, manifest.labs, run.records);
  const crashed = run.crashes.length > 0 ? `；${run.crashes[0]!.file} 崩溃：${firstLine(run.crashes[0]!.stderr)}` : "";
  return labs.map((lab) => ({
    name: `Lab ${lab.id} (reference)`,
    ok: lab.status === "passed" && crashed === "",
    detail: `${lab.passed}/${lab.total}${lab.status === "passed" ? "" : ` — ${lab.firstFailure?.test ?? ""}: ${firstLine(lab.firstFailure?.message ?? "")}`}${crashed}`,
  }));
}

/** Chapter total: every focused test passes with the reference, and there are exactly as many as the labs add up to. */
export function evaluateChapterTotal(manifest: ChapterManifest, run: Pick<TestRun, "records" | "crashes">): CheckResult {
  const expected = manifest.labs.reduce((n, lab) => n + lab.tests, 0);
  const tests = topLevelResults(run.records);
  const passed = [...tests.values()].filter(Boolean).length;
  const ok = run.crashes.length === 0 && tests.size === expected && passed === expected;
  const why = ok
    ? ""
    : tests.size !== expected
      ? `（各 Lab 合计应为 ${expected} 项，聚焦测试有 ${tests.size} 项）`
      : run.crashes.length > 0
        ? "（有测试文件崩溃）"
        : "";
  return { name: "chapter total", ok, detail: `${passed}/${tests.size}${why}` };
}

/** The numbered sections of a chapter text: `3`, `3.4`, … from headings such as `## 3. …` and `### 3.4 …`. */
export function textSections(text: string): Set<string> {
  const sections = new Set<string>();
  for (const match of text.matchAll(new RegExp(String.raw`^#{2,4}\s+(${SECTION_NUMBER_SOURCE})\.?\s`, "gm"))) sections.add(match[1]!);
  return sections;
}

/** The compiled test files of chapters up to `id` (`NN-*.test.js`, NN ≤ id) among `names`, sorted. */
export function throughChapterFiles(names: readonly string[], id: string): string[] {
  return names
    .filter((name) => {
      const m = /^(\d{2})-.+\.test\.js$/.exec(name);
      return m !== null && Number(m[1]) <= Number(id);
    })
    .sort();
}

/** What was verified, for the history line: HEAD, or HEAD and the uncommitted changes on top of it. */
export function describeSource(source: Pick<VerifiedSource, "head" | "changed">): string {
  if (source.changed.length === 0) return `HEAD ${short(source.head)}`;
  const shown = source.changed.slice(0, 3).join(", ");
  return `working tree = HEAD ${short(source.head)} + ${source.changed.length} uncommitted change${source.changed.length === 1 ? "" : "s"}: ${shown}${source.changed.length > 3 ? ", …" : ""}`;
}
