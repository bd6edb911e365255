/** `testing/labs.ts`: a chapter's labs run on a synthetic chapter, whatever state its code is in. */
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { runLab } from "../../src/testing/labs.js";
import { formatOutcome, outcomeJson, outcomeOk } from "../../src/lab/format.js";
import { processesLeft } from "../support/leftover-probe.js";
import { loadManifest } from "../../src/course/manifest.js";
import { createPaint } from "../../src/core/term.js";
import { createMiniCourse, removeMiniCourse } from "../support/lab-fixture.js";

const plain = createPaint(false);

test("runner on a synthetic chapter: starter, reference, a broken lab, a compile error, a crash", async (t) => {
  const course = await createMiniCourse("starter", { practice: true });
  t.after(() => removeMiniCourse(course));
  const manifest = await loadManifest(course.root, "99");
  const report = (outcome: Awaited<ReturnType<typeof runLab>>, lab?: string) =>
    formatOutcome(outcome, manifest, lab === undefined ? { chapter: "99" } : { chapter: "99", lab }, { paint: plain, courseRoot: course.root, watch: false });

  await t.test("the starter gives 0/2 on Lab 99.1's own scaffold error, pointing at the construction site", async () => {
    const outcome = await runLab(course.root, manifest, { chapter: "99", lab: "99.1" });
    assert.equal(outcome.kind, "tested");
    assert.ok(outcome.kind === "tested");
    assert.equal(outcome.labs.length, 1);
    const [lab] = outcome.labs;
    assert.deepEqual([lab?.passed, lab?.total, lab?.status], [0, 2, "not_started"]);
    assert.equal(lab?.firstFailure?.message, "Lab 99.1 mini add 尚未实现");
    assert.equal(outcomeOk(outcome), false);
    const text = report(outcome, "99.1");
    assert.match(text, /^Lab 99\.1 · 两数相加 {2}0\/2/);
    assert.match(text, /施工位尚未实现 · packages\/pi-course\/src\/mini\.ts:\d+/);
    assert.match(text, /npm run hint -w @pi\/course -- 99\.1/);
    const source = await readFile(path.join(course.root, "packages/pi-course/src/mini.ts"), "utf8");
    const line = Number(/mini\.ts:(\d+)/.exec(text)?.[1]);
    assert.match(source.split("\n")[line - 1] ?? "", /throw labError\("Lab 99\.1/);
  });

  await t.test("the chapter table of the starter lists every lab as not started", async () => {
    const outcome = await runLab(course.root, manifest, { chapter: "99" });
    assert.ok(outcome.kind === "tested");
    assert.deepEqual(
      outcome.labs.map((l) => [l.id, l.passed, l.total, l.status]),
      [
        ["99.1", 0, 2, "not_started"],
        ["99.2", 0, 3, "not_started"],
      ],
    );
    const text = report(outcome);
    assert.match(text, /本章 0\/5/);
    assert.match(text, /开始 Lab 99\.1/);
  });

  await t.test("the reference passes every lab: 5/5 and success", async () => {
    await course.use("reference");
    const outcome = await runLab(course.root, manifest, { chapter: "99" });
    assert.ok(outcome.kind === "tested");
    assert.deepEqual(
      outcome.labs.map((l) => l.status),
      ["passed", "passed"],
    );
    assert.equal(outcomeOk(outcome), true);
    assert.deepEqual(outcomeJson(outcome, manifest, { chapter: "99" }, course.root), {
      chapter: "99",
      labs: [
        { id: "99.1", title: "两数相加", passed: 2, total: 2, status: "passed" },
        { id: "99.2", title: "打招呼", passed: 3, total: 3, status: "passed" },
      ],
      passed: 5,
      total: 5,
    });
    assert.match(report(outcome), /本章 5\/5 · 全部通过/);
    const single = await runLab(course.root, manifest, { chapter: "99", lab: "99.1" });
    assert.match(report(single, "99.1"), /2\/2 ✓\n下一步：Lab 99\.2 · 打招呼，运行 npm run lab -w @pi\/course -- 99\.2/);
  });

  await t.test("a broken reference shows the first failing test and its assertion", async () => {
    await course.use("broken");
    const outcome = await runLab(course.root, manifest, { chapter: "99", lab: "99.2" });
    assert.ok(outcome.kind === "tested");
    const [lab] = outcome.labs;
    assert.deepEqual([lab?.passed, lab?.total, lab?.status], [0, 3, "failed"]);
    assert.equal(lab?.firstFailure?.test, "Lab 99.2 · greets by name");
    assert.match(lab?.firstFailure?.message ?? "", /\+ 'hi pi'\n- 'hello pi'/);
    assert.match(report(outcome, "99.2"), /在 packages\/pi-course\/test\/99-mini\.test\.ts:\d+/);
  });

  await t.test("an earlier lab gone red shows as a regression line above the lab asked for", async () => {
    await writeFile(
      path.join(course.root, "packages/pi-course/src/mini.ts"),
      'export function add(a: number, b: number): number {\n  return a - b;\n}\nexport function greet(name: string): string {\n  if (name === "") throw Object.assign(new Error("nobody"), { code: "GREET_EMPTY" });\n  return `hello ${name}`;\n}\n',
    );
    const outcome = await runLab(course.root, manifest, { chapter: "99", lab: "99.2" });
    assert.ok(outcome.kind === "tested");
    assert.deepEqual(
      outcome.labs.map((l) => `${l.id} ${l.passed}/${l.total}`),
      ["99.2 2/3"],
    );
    assert.deepEqual(
      outcome.earlier.map((l) => `${l.id} ${l.status} ${l.passed}/${l.total}`),
      ["99.1 failed 1/2"],
    );
    assert.match(report(outcome, "99.2"), /^⚠ 之前的 Lab 99\.1 现在没有通过：1\/2[^\n]*npm run lab -w @pi\/course -- 99\.1\nLab 99\.2/);
    assert.deepEqual((outcomeJson(outcome, manifest, { chapter: "99", lab: "99.2" }, course.root) as { regressions?: unknown }).regressions, [
      { id: "99.1", passed: 1, total: 2, status: "failed" },
    ]);
  });

  await t.test("a lab stuck in an endless loop ends at the time limit: message, no process, no temp folder left", async () => {
    // The stuck code also starts a process of its own: ending the run ends it too.
    // And it makes a temporary folder of its own, which its test would have removed had it ended.
    // Its loop never returns to the event loop, as `for (;;) {}` does, but spends the wait blocked
    // (in slices the inspector's pause reaches between) instead of burning a core until the limit:
    // about 2 s of CPU less. A busy `for (;;) {}` ended by its limit: lab.test.ts.
    const marker = `${course.root}-grandchild`;
    const own = `pi-learner-${process.pid}-`;
    await writeFile(
      path.join(course.root, "packages/pi-course/src/mini.ts"),
      // The lean synthetic course has no Node typings (see support/lean-build.ts): this file is not type-checked.
      `// @ts-nocheck\nimport { spawn } from "node:child_process";\nimport { mkdtempSync } from "node:fs";\nimport os from "node:os";\nimport path from "node:path";\nexport function add(a: number, b: number): number {\n  mkdtempSync(path.join(os.tmpdir(), ${JSON.stringify(own)}));\n  spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", ${JSON.stringify(marker)}], { stdio: "ignore" });\n  const slot = new Int32Array(new SharedArrayBuffer(4));\n  for (;;) Atomics.wait(slot, 0, 0, 10);\n  return a + b;\n}\nexport function greet(name: string): string {\n  return name;\n}\n`,
    );
    const ours = () => readdirSync(os.tmpdir()).filter((name) => name.startsWith(`pi-lab-${process.pid}-`));
    // 2.5 s: the watchdog looks at 60% of the limit, and on a loaded machine the test process
    // needs about a second to import its file and report the test it runs (a 1.5 s limit once
    // sampled it before that, and the message named no test).
    const outcome = await runLab(course.root, manifest, { chapter: "99", lab: "99.1" }, { timeoutMs: 2500 });
    assert.ok(outcome.kind === "tested");
    assert.deepEqual(outcome.timedOut, { seconds: 2.5, labs: ["99.1"] });
    assert.equal(outcome.labs[0]?.status, "failed");
    assert.equal(outcomeOk(outcome), false);
    // Said once, by the lab's own failure: the limit, the test that was running, and the function it was in.
    const shown = report(outcome, "99.1");
    assert.match(
      shown,
      /✗ Lab 99\.1 · adds two numbers\n {2}超过时间上限 2\.5 秒，测试进程已被结束：测试 “Lab 99\.1 · adds two numbers”里，正在执行 add（packages\/pi-course\/src\/mini\.ts:\d+:\d+）[\s\S]*--timeout/,
    );
    assert.equal(shown.match(/超过时间上限/g)?.length, 1);
    assert.deepEqual((outcomeJson(outcome, manifest, { chapter: "99", lab: "99.1" }, course.root) as { error?: unknown }).error, {
      kind: "timeout",
      seconds: 2.5,
    });
    assert.deepEqual(ours(), [], "the run's temp folder is gone");
    assert.deepEqual(
      readdirSync(os.tmpdir()).filter((name) => name.startsWith(own)),
      [],
      "and the one the learner's code made in it",
    );
    assert.deepEqual((await processesLeft(course.root)) ?? [], [], "the test process and the one it started are gone");
  });

  await t.test("labs that share a run which does not end clean run again apart: a lab stuck for ever does not take another lab's result with it", async () => {
    await writeFile(
      path.join(course.root, "packages/pi-course/src/mini.ts"),
      // Stuck for ever on Lab 99.1's first test only (add(1, 1) of Lab 99.2 still works), blocked without spending the CPU a busy loop would.
      'export function add(a: number, b: number): number {\n  if (b === 3) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);\n  return a + b;\n}\nexport function greet(name: string): string {\n  if (name === "") throw Object.assign(new Error("nobody"), { code: "GREET_EMPTY" });\n  return `hello ${name}`;\n}\n',
    );
    const outcome = await runLab(course.root, manifest, { chapter: "99" }, { timeoutMs: 3000 });
    assert.ok(outcome.kind === "tested");
    assert.deepEqual(
      outcome.labs.map((l) => `${l.id} ${l.status} ${l.passed}/${l.total}`),
      ["99.1 failed 0/2", "99.2 passed 3/3"],
    );
    assert.deepEqual(outcome.timedOut, { seconds: 3, labs: ["99.1"] });
    // The same when Lab 99.2 is asked for: the stuck lab before it is a regression line, and 99.2's own result stands.
    const single = await runLab(course.root, manifest, { chapter: "99", lab: "99.2" }, { timeoutMs: 3000 });
    assert.ok(single.kind === "tested");
    assert.deepEqual(
      [...single.earlier, ...single.labs].map((l) => `${l.id} ${l.status} ${l.passed}/${l.total}`),
      ["99.1 failed 0/2", "99.2 passed 3/3"],
    );
    assert.deepEqual((await processesLeft(course.root)) ?? [], [], "no test process is left");
  });

  await t.test("a compile error stops before the tests and names the file", async () => {
    await writeFile(
      path.join(course.root, "packages/pi-course/src/mini.ts"),
      'export function add(a: number, b: number): number {\n  return "nope";\n}\nexport function greet(n: string): string { return n; }\n',
    );
    const outcome = await runLab(course.root, manifest, { chapter: "99", lab: "99.1" });
    assert.equal(outcome.kind, "build_failed");
    assert.ok(outcome.kind === "build_failed");
    assert.equal(outcome.diagnostics.length, 1);
    assert.match(outcome.diagnostics[0] ?? "", /^packages\/pi-course\/src\/mini\.ts\(2,3\): error TS2322/);
    assert.match(report(outcome, "99.1"), /编译失败（1 处错误），测试没有运行/);
    assert.equal(outcomeOk(outcome), false);
  });

  await t.test("async work that throws after the tests ended fails the run, and says why", async () => {
    await writeFile(
      path.join(course.root, "packages/pi-course/src/mini.ts"),
      'setTimeout(() => {\n  throw new Error("late boom");\n}, 50);\nexport function add(a: number, b: number): number { return a + b; }\nexport function greet(n: string): string { return `hello ${n}`; }\n',
    );
    const outcome = await runLab(course.root, manifest, { chapter: "99", lab: "99.1" });
    assert.ok(outcome.kind === "tested");
    assert.equal(outcomeOk(outcome), false);
    // Usually every test passed and the run failed afterwards; on a slow machine the timer
    // may fire during a test instead. Either way the report names the error.
    assert.match(report(outcome, "99.1"), /late boom/);
  });

  await t.test("a test file that crashes while loading is reported with its stderr", async () => {
    await writeFile(
      path.join(course.root, "packages/pi-course/src/mini.ts"),
      'throw new Error("module top-level boom");\nexport function add(a: number, b: number): number { return a + b; }\nexport function greet(n: string): string { return n; }\n',
    );
    const outcome = await runLab(course.root, manifest, { chapter: "99" });
    assert.ok(outcome.kind === "tested");
    assert.equal(outcome.crashes.length, 1);
    assert.match(outcome.crashes[0]?.stderr ?? "", /module top-level boom/);
    assert.ok(outcome.labs.every((l) => l.status === "failed" && l.passed === 0));
    assert.equal(outcomeOk(outcome), false);
    assert.match(report(outcome), /测试文件没能运行完：packages\/pi-course\/dist\/test\/99-mini\.test\.js/);
  });

  await t.test("code that throws outside every rule check, or hangs, still names the rules its test checks", async (st) => {
    const testFile = path.join(course.root, "packages/pi-course/test/99-mini.test.ts");
    const original = await readFile(testFile, "utf8");
    st.after(() => writeFile(testFile, original));
    // The test computes with the learner's code first (outside the check), then checks under its rules.
    await writeFile(
      testFile,
      original.replace(
        'test("Lab 99.1 · adds two numbers", () => {\n  assert.equal(add(2, 3), 5);\n});',
        'const rule = (_statement: string, check: () => void) => check();\ntest("Lab 99.1 · adds two numbers", () => {\n  const sum = add(2, 3);\n  rule("§C1.1：两数之和", () => assert.equal(sum, 5));\n  rule("§C1.2：结果是数", () => assert.equal(typeof sum, "number"));\n});',
      ),
    );
    await writeFile(
      path.join(course.root, "packages/pi-course/src/mini.ts"),
      'export function add(a: number, b: number): number {\n  if (b === 3) throw new TypeError("boom outside");\n  return a + b;\n}\nexport function greet(n: string): string { return `hello ${n}`; }\n',
    );
    const thrown = await runLab(course.root, manifest, { chapter: "99", lab: "99.1" });
    assert.ok(thrown.kind === "tested");
    assert.deepEqual(thrown.labs[0]?.firstFailure?.rules, ["§C1.1：两数之和", "§C1.2：结果是数"]);
    assert.match(
      report(thrown, "99.1"),
      /✗ Lab 99\.1 · adds two numbers\n {2}§C1\.1：两数之和\n {2}§C1\.2：结果是数\n {2}这项测试检查上面的规则；你的代码在检查之外出错了：\n {2}boom outside/,
    );
    assert.deepEqual(
      (outcomeJson(thrown, manifest, { chapter: "99", lab: "99.1" }, course.root) as { labs: { firstFailure?: { rules?: string[] } }[] }).labs[0]?.firstFailure
        ?.rules,
      ["§C1.1：两数之和", "§C1.2：结果是数"],
    );

    await writeFile(
      path.join(course.root, "packages/pi-course/src/mini.ts"),
      "export function add(a: number, b: number): number {\n  if (b === 3) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);\n  return a + b;\n}\nexport function greet(n: string): string { return `hello ${n}`; }\n",
    );
    const hung = await runLab(course.root, manifest, { chapter: "99", lab: "99.1" }, { timeoutMs: 2500 });
    assert.ok(hung.kind === "tested");
    assert.deepEqual(hung.labs[0]?.firstFailure?.rules, ["§C1.1：两数之和", "§C1.2：结果是数"]);
    assert.match(report(hung, "99.1"), /§C1\.2：结果是数\n {2}这项测试检查上面的规则；它没有结束：\n {2}超过时间上限/);
  });
});
