import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import test from "node:test";
import { parseLabArgs, parseTarget } from "../lib/lab/args.js";
import { formatOutcome, outcomeJson, outcomeOk } from "../lib/lab/format.js";
import { courseFrames, locateFailure } from "../lib/lab/locate.js";
import { labIdOfTestName, labNamePattern, parseRecords, summarizeLabs, type TestRecord } from "../lib/lab/results.js";
import { chapterNamePattern, distPathOf, runLab, splitDiagnostics } from "../lib/lab/runner.js";
import { createRerunner, debounce } from "../lib/lab/watch.js";
import { loadManifest, parseManifest, type LabSpec } from "../lib/course/manifest.js";
import { colorEnabled, createPaint, displayWidth, padEnd } from "../lib/core/term.js";
import { commandPath } from "./support/tooling.js";
import { copyChapter, createMiniCourse, MINI_MANIFEST, removeMiniCourse, repoRoot, runScript } from "./lab-fixture.js";

const mini = parseManifest(MINI_MANIFEST, "checkpoints/99.yaml");
const [lab1, lab2] = mini.labs as [LabSpec, LabSpec];
const plain = createPaint(false);

/** A result record as the reporter writes it. */
function rec(path: string[], ok: boolean, message?: string, extra: Partial<TestRecord> = {}): TestRecord {
  const record: TestRecord = { ok, path, skip: false, todo: false, ...extra };
  if (!ok) record.error = { message: message ?? "boom", failureType: "testCodeFailure", ...extra.error };
  return record;
}

// ---------------------------------------------------------------- names and patterns

test("a lab's name pattern selects its own tests and never a longer lab id", () => {
  const pattern = new RegExp(labNamePattern("12.1"));
  assert.ok(pattern.test("Lab 12.1 · roots"));
  assert.ok(pattern.test("Lab 12.1: roots"));
  assert.ok(!pattern.test("Lab 12.10 · later"));
  assert.ok(!pattern.test("Lab 12.2 · other"));
  assert.ok(!pattern.test("Lab 1201 · dot is literal"));
  assert.ok(!pattern.test("see Lab 12.1"));
  const chapter = new RegExp(chapterNamePattern("12"));
  assert.ok(chapter.test("Lab 12.5 · hooks"));
  assert.ok(!chapter.test("Lab 11.1 · budget"));
  assert.ok(!chapter.test("hardening: symlink escape"));
});

test("lab ids are read from the start of a test name only", () => {
  assert.equal(labIdOfTestName("Lab 12.3 · template"), "12.3");
  assert.equal(labIdOfTestName("Lab 12.30 · x"), "12.30");
  assert.equal(labIdOfTestName("not Lab 12.3"), undefined);
  assert.equal(labIdOfTestName("Lab 12 · chapter"), undefined);
});

test("compiled test paths are derived per package, without globs", () => {
  assert.equal(distPathOf("packages/pi-course/test/12-resources-extensions.test.ts"), "packages/pi-course/dist/test/12-resources-extensions.test.js");
  assert.equal(distPathOf("packages/other/test/a.test.mts"), "packages/other/dist/test/a.test.mjs");
  assert.throws(() => distPathOf("test/loose.test.ts"), { code: "MANIFEST_INVALID" });
});

// ---------------------------------------------------------------- grouping results

test("reporter lines that are not records are skipped", () => {
  const good = JSON.stringify(rec(["Lab 99.1 · a"], true));
  const records = parseRecords(`${good}\nnoise\n{"ok":true}\n{"ok":false,"path":["Lab 99.1 · b"],"skip":false,"todo":false}\n{"ok":tr`);
  assert.deepEqual(records.map((r) => r.path[0]), ["Lab 99.1 · a", "Lab 99.1 · b"]);
});

test("a lab whose every test fails on its own scaffold error is not started", () => {
  const records = [rec(["Lab 99.1 · a"], false, lab1.scaffoldError), rec(["Lab 99.1 · b"], false, lab1.scaffoldError)];
  const [result] = summarizeLabs([lab1], mini.labs, records);
  assert.equal(result?.status, "not_started");
  assert.equal(result?.passed, 0);
  assert.equal(result?.total, 2);
  assert.deepEqual(result?.firstFailure && { test: result.firstFailure.test, message: result.firstFailure.message, of: result.firstFailure.scaffoldOf }, {
    test: "Lab 99.1 · a",
    message: lab1.scaffoldError,
    of: "99.1",
  });
});

test("a later lab blocked only by an earlier lab's scaffold is not started; the reverse is a failure", () => {
  const blocked = [rec(["Lab 99.2 · a"], false, lab1.scaffoldError), rec(["Lab 99.2 · b"], false, lab2.scaffoldError), rec(["Lab 99.2 · c"], false, lab2.scaffoldError)];
  assert.equal(summarizeLabs([lab2], mini.labs, blocked)[0]?.status, "not_started");
  // Lab 99.1 failing on Lab 99.2's scaffold means 99.1's code reached a later lab's site: a real failure.
  const reversed = [rec(["Lab 99.1 · a"], false, lab2.scaffoldError), rec(["Lab 99.1 · b"], false, lab1.scaffoldError)];
  assert.equal(summarizeLabs([lab1], mini.labs, reversed)[0]?.status, "failed");
});

test("one passing test or one ordinary failure makes a lab failed, with the first failure in declaration order", () => {
  const records = [
    rec(["Lab 99.2 · a"], true),
    rec(["Lab 99.2 · b"], false, "Expected values to be strictly equal:\n\n'hi pi' !== 'hello pi'\n"),
    rec(["Lab 99.2 · c"], false, lab2.scaffoldError),
  ];
  const [result] = summarizeLabs([lab2], mini.labs, records);
  assert.equal(result?.status, "failed");
  assert.equal(result?.passed, 1);
  assert.equal(result?.firstFailure?.test, "Lab 99.2 · b");
  assert.match(result?.firstFailure?.message ?? "", /'hi pi' !== 'hello pi'/);
  assert.equal(result?.firstFailure?.scaffoldOf, undefined);
});

test("a lab passes only with every test green and exactly the manifest's count", () => {
  const two = [rec(["Lab 99.1 · a"], true), rec(["Lab 99.1 · b"], true)];
  assert.equal(summarizeLabs([lab1], mini.labs, two)[0]?.status, "passed");
  const one = summarizeLabs([lab1], mini.labs, two.slice(0, 1))[0];
  assert.equal(one?.status, "failed");
  assert.match(one?.firstFailure?.message ?? "", /2 项.*1 项/);
  const none = summarizeLabs([lab1], mini.labs, [])[0];
  assert.deepEqual([none?.status, none?.passed, none?.total], ["failed", 0, 2]);
});

test("skipped, todo and pattern-filtered tests do not count", () => {
  const records = [
    rec(["Lab 99.1 · a"], true),
    rec(["Lab 99.1 · b"], true),
    rec(["Lab 99.1 · skipped"], true, undefined, { skip: true }),
    rec(["Lab 99.1 · todo"], false, "not yet", { todo: true }),
  ];
  assert.equal(summarizeLabs([lab1], mini.labs, records)[0]?.status, "passed");
});

test("nested tests count once, under the outermost lab name, and the failure shown is the failing subtest", () => {
  const records = [
    rec(["Lab 99.1 · suite", "inner ok"], true),
    rec(["Lab 99.1 · suite", "inner bad"], false, "inner message"),
    rec(["Lab 99.1 · suite"], false, "1 subtest failed", { error: { message: "1 subtest failed", failureType: "subtestsFailed" } }),
    rec(["Lab 99.1 · flat"], true),
  ];
  const [result] = summarizeLabs([lab1], mini.labs, records);
  assert.deepEqual([result?.passed, result?.total], [1, 2]);
  assert.equal(result?.firstFailure?.test, "Lab 99.1 · suite › inner bad");
  assert.equal(result?.firstFailure?.message, "inner message");
});

// ---------------------------------------------------------------- locating failures

test("failure locations point into the course, skipping node internals and node_modules", () => {
  const root = path.join(path.sep, "course");
  const at = (file: string, line: number) => `    at fn (${new URL(`file://${path.join(root, file)}`).href}:${line}:5)`;
  const stack = [
    "Error: Lab 99.1 mini add 尚未实现",
    `    at labError (${path.join(root, "node_modules", "x", "index.js")}:1:1)`,
    "    at node:internal/test_runner/test:1:1",
    at("packages/pi-course/src/mini.ts", 3),
    at("packages/pi-course/test/99-mini.test.ts", 6),
    `    at outside (${path.join(path.sep, "elsewhere", "x.js")}:1:1)`,
  ].join("\n");
  assert.deepEqual(
    courseFrames(stack, root).map((f) => `${f.file}:${f.line}`),
    ["packages/pi-course/src/mini.ts:3", "packages/pi-course/test/99-mini.test.ts:6"],
  );
  assert.equal(locateFailure(undefined, root), undefined);
});

// ---------------------------------------------------------------- arguments and output

test("lab arguments: a chapter or a lab, flags, and one-line usage errors", () => {
  assert.deepEqual(parseTarget("12"), { chapter: "12" });
  assert.deepEqual(parseTarget("12.1"), { chapter: "12", lab: "12.1" });
  assert.deepEqual(parseTarget("3.1"), { chapter: "03", lab: "03.1" });
  assert.deepEqual(parseLabArgs(["12.1", "--watch"]), { help: false, watch: true, json: false, target: { chapter: "12", lab: "12.1" } });
  assert.equal(parseLabArgs(["--help"]).help, true);
  for (const bad of [[], ["12", "13"], ["12.x"], ["abc"], ["12", "--verbose"], ["12", "--watch", "--json"], ["123"]]) {
    assert.throws(() => parseLabArgs(bad), { code: "USAGE" }, bad.join(" "));
  }
});

test("tsc output is split into diagnostics with their continuation lines", () => {
  const output = [
    "packages/pi-course/src/a.ts(1,7): error TS2322: Type 'string' is not assignable to type 'number'.",
    "packages/pi-course/src/a.ts(2,1): error TS2345: Argument of type",
    "  'x' is not assignable.",
    "",
    "Found 2 errors in the same file.",
  ].join("\n");
  const diagnostics = splitDiagnostics(output);
  assert.equal(diagnostics.length, 2);
  assert.match(diagnostics[1] ?? "", /TS2345[\s\S]*'x' is not assignable/);
});

test("colour only on a TTY and never with NO_COLOR; CJK counts two columns", () => {
  assert.equal(colorEnabled({ isTTY: true, write: () => true }, {}), true);
  assert.equal(colorEnabled({ isTTY: true, write: () => true }, { NO_COLOR: "1" }), false);
  assert.equal(colorEnabled({ isTTY: false, write: () => true }, {}), false);
  assert.equal(colorEnabled({ write: () => true }, {}), false);
  assert.equal(createPaint(false).red("x"), "x");
  assert.equal(createPaint(true).red("x"), "\u001b[31mx\u001b[39m");
  assert.equal(displayWidth("资源 ab"), 7);
  assert.equal(displayWidth(createPaint(true).green("✓ 2/2")), 5);
  assert.equal(padEnd("两数", 6), "两数  ");
});

// ---------------------------------------------------------------- watch loop

test("a rerun aborts the run in progress, and of queued reruns only the last one runs", async () => {
  const log: string[] = [];
  const gates: (() => void)[] = [];
  let n = 0;
  const rerunner = createRerunner(async (signal) => {
    const id = ++n;
    log.push(`start ${id}`);
    await new Promise<void>((resolve) => {
      gates.push(resolve);
      signal.addEventListener("abort", () => resolve(), { once: true });
    });
    log.push(`${signal.aborted ? "aborted" : "done"} ${id}`);
  }, (error) => log.push(`error ${String(error)}`));
  const first = rerunner.trigger();
  const second = rerunner.trigger(); // aborts 1
  const third = rerunner.trigger(); // supersedes 2 before it starts
  await first;
  await Promise.resolve();
  while (gates.length < 2) await new Promise((resolve) => setImmediate(resolve));
  gates[1]?.();
  await Promise.all([second, third]);
  assert.deepEqual(log, ["start 1", "aborted 1", "start 2", "done 2"]);
  await rerunner.stop();
  await rerunner.trigger();
  assert.equal(n, 2, "no run after stop");
});

test("a failing run is reported and the loop goes on", async () => {
  const errors: unknown[] = [];
  let runs = 0;
  const rerunner = createRerunner(async () => {
    runs++;
    if (runs === 1) throw new Error("first fails");
  }, (error) => errors.push(error));
  await rerunner.trigger();
  await rerunner.trigger();
  assert.equal(runs, 2);
  assert.equal(errors.length, 1);
});

test("debounce calls once after the last of a burst, and cancel drops it", async () => {
  let calls = 0;
  const fire = debounce(() => calls++, 5);
  fire();
  fire();
  fire();
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(calls, 1);
  fire();
  fire.cancel();
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(calls, 1);
});

// ---------------------------------------------------------------- the real runner on a mini course

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
    assert.deepEqual(outcome.labs.map((l) => [l.id, l.passed, l.total, l.status]), [
      ["99.1", 0, 2, "not_started"],
      ["99.2", 0, 3, "not_started"],
    ]);
    const text = report(outcome);
    assert.match(text, /本章 0\/5/);
    assert.match(text, /开始 Lab 99\.1/);
  });

  await t.test("the reference passes every lab: 5/5 and success", async () => {
    await course.use("reference");
    const outcome = await runLab(course.root, manifest, { chapter: "99" });
    assert.ok(outcome.kind === "tested");
    assert.deepEqual(outcome.labs.map((l) => l.status), ["passed", "passed"]);
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

  await t.test("a compile error stops before the tests and names the file", async () => {
    await writeFile(path.join(course.root, "packages/pi-course/src/mini.ts"), 'export function add(a: number, b: number): number {\n  return "nope";\n}\nexport function greet(n: string): string { return n; }\n');
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
    await writeFile(path.join(course.root, "packages/pi-course/src/mini.ts"), 'throw new Error("module top-level boom");\nexport function add(a: number, b: number): number { return a + b; }\nexport function greet(n: string): string { return n; }\n');
    const outcome = await runLab(course.root, manifest, { chapter: "99" });
    assert.ok(outcome.kind === "tested");
    assert.equal(outcome.crashes.length, 1);
    assert.match(outcome.crashes[0]?.stderr ?? "", /module top-level boom/);
    assert.ok(outcome.labs.every((l) => l.status === "failed" && l.passed === 0));
    assert.equal(outcomeOk(outcome), false);
    assert.match(report(outcome), /测试文件没能运行完：packages\/pi-course\/dist\/test\/99-mini\.test\.js/);
  });
});

// ---------------------------------------------------------------- the command itself

test("lab command: exit codes, plain piped output, --json shape, usage errors", async (t) => {
  const course = await createMiniCourse("starter", { practice: true });
  t.after(() => removeMiniCourse(course));

  const red = await runScript(course.root, "lab.ts", ["99.1"]);
  assert.equal(red.code, 1);
  assert.match(red.stdout, /0\/2/);
  assert.match(red.stdout, /Lab 99\.1 mini add 尚未实现/);
  assert.doesNotMatch(red.stdout, /\u001b\[/, "no colour on a pipe");

  await course.use("reference");
  const json = await runScript(course.root, "lab.ts", ["99", "--json"]);
  assert.equal(json.code, 0);
  const document = JSON.parse(json.stdout) as Record<string, unknown>;
  assert.deepEqual(Object.keys(document).sort(), ["chapter", "labs", "mode", "passed", "total"]);
  assert.deepEqual([document.chapter, document.passed, document.total, document.mode], ["99", 5, 5, "practice"]);

  for (const args of [["99.9"], ["42"], ["99", "--nope"], []]) {
    const usage = await runScript(course.root, "lab.ts", args);
    assert.equal(usage.code, 2, args.join(" "));
    assert.equal(usage.stderr.trim().split("\n").length, 1, `one line for ${args.join(" ")}: ${usage.stderr}`);
  }
  const unknownLab = await runScript(course.root, "lab.ts", ["99.9"]);
  assert.match(unknownLab.stderr, /99\.1, 99\.2/);
});

test("lab --watch reruns after a save and exits cleanly on SIGINT", { skip: process.platform === "win32" && "SIGINT cannot be sent to a child on Windows" }, async (t) => {
  const course = await createMiniCourse("starter", { practice: true });
  t.after(() => removeMiniCourse(course));
  const child = spawn(process.execPath, [commandPath(course.root, "lab"), "99.1", "--watch"], {
    cwd: course.root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  t.after(() => child.kill());
  let stdout = "";
  let stderr = "";
  let exitCode: number | null | undefined;
  // Every finished run ends with this footer. Waiting for a count of footers (or for the
  // process to end) rather than for a particular result means a wrong result fails the
  // test instead of hanging it.
  const FOOTER = /保存即重跑 · Ctrl-C 退出\n/g;
  const runs = () => stdout.match(FOOTER)?.length ?? 0;
  let wake = () => {};
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    wake();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const closed = new Promise<void>((resolve) =>
    child.on("close", (code) => {
      exitCode = code;
      resolve();
      wake();
    }),
  );
  const waitForRuns = async (n: number) => {
    while (runs() < n && exitCode === undefined) await new Promise<void>((resolve) => (wake = resolve));
    assert.ok(runs() >= n, `lab --watch ended early (exit ${String(exitCode)}): ${stdout}${stderr}`);
    return stdout.split(FOOTER)[n - 1] ?? "";
  };

  assert.match(await waitForRuns(1), /0\/2/);
  await course.use("reference");
  assert.match(await waitForRuns(2), /2\/2 ✓/);
  child.kill("SIGINT");
  await closed;
  assert.equal(exitCode, 0);
  assert.match(stdout, /已退出监视/);
  assert.equal(stderr, "", "no stack trace on Ctrl-C");
});

// ---------------------------------------------------------------- the real chapter 12

const chapter12 = existsSync(path.join(repoRoot, "checkpoints", "12.yaml")) && existsSync(path.join(repoRoot, "starters", "12-resources.ts"));

test("chapter 12: the starter is red on Lab 12.1's own scaffold, every lab not started; the reference is 12/12", { skip: !chapter12 && "chapter 12 is not in this tree yet" }, async (t) => {
  const starter = await copyChapter(repoRoot, "12", "starter");
  t.after(() => rm(starter, { recursive: true, force: true }));
  const manifest = await loadManifest(starter, "12");

  const first = await runLab(starter, manifest, { chapter: "12", lab: "12.1" });
  assert.ok(first.kind === "tested", first.kind);
  assert.deepEqual(first.labs.map((l) => [l.id, l.passed, l.total, l.status, l.firstFailure?.message]), [
    ["12.1", 0, 2, "not_started", "Lab 12.1 resource catalog 尚未实现"],
  ]);
  const text = formatOutcome(first, manifest, { chapter: "12", lab: "12.1" }, { paint: plain, courseRoot: starter, watch: false });
  assert.match(text, /0\/2/);
  assert.match(text, /Lab 12\.1 resource catalog 尚未实现/);
  assert.match(text, /施工位尚未实现 · packages\/pi-course\/src\/resources\.ts:\d+/);

  const table = await runLab(starter, manifest, { chapter: "12" });
  assert.ok(table.kind === "tested");
  assert.deepEqual(table.labs.map((l) => `${l.id} ${l.passed}/${l.total} ${l.status}`), [
    "12.1 0/2 not_started",
    "12.2 0/3 not_started",
    "12.3 0/2 not_started",
    "12.4 0/2 not_started",
    "12.5 0/3 not_started",
  ]);
  assert.deepEqual([table.strays, table.crashes], [[], []]);

  const reference = await copyChapter(repoRoot, "12", "reference");
  t.after(() => rm(reference, { recursive: true, force: true }));
  const done = await runLab(reference, manifest, { chapter: "12" });
  assert.ok(done.kind === "tested");
  assert.equal(outcomeOk(done), true);
  assert.match(formatOutcome(done, manifest, { chapter: "12" }, { paint: plain, courseRoot: reference, watch: false }), /本章 12\/12 · 全部通过/);

  const fault = manifest.faults.find((f) => f.find !== undefined && f.replace !== undefined);
  if (fault?.find === undefined || fault.replace === undefined) return t.diagnostic("no documented fault to break the reference with");
  const { find, replace } = fault;
  const file = path.join(reference, fault.file ?? manifest.starters[0]?.to ?? "");
  const source = await readFile(file, "utf8");
  assert.equal(source.split(find).length, 2, `fault ${fault.id}: its text occurs once`);
  await writeFile(file, source.replace(find, () => replace));
  const broken = await runLab(reference, manifest, { chapter: "12", lab: fault.lab });
  assert.ok(broken.kind === "tested");
  const [lab] = broken.labs;
  assert.equal(lab?.status, "failed");
  assert.ok(
    fault.killedBy.some((name) => lab?.firstFailure?.test.startsWith(name) === true),
    `first failure ${lab?.firstFailure?.test} is one of ${fault.killedBy.join(" | ")}`,
  );
});
