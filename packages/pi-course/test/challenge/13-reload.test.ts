/**
 * Chapter 13 challenge · reload (`runtime.reload`) beyond the labs: its place in the queue
 * with prompts, many reloads in a row and at once, trust that changes its mind either way,
 * a running extension whose file is deleted, a new extension that fails, a project root
 * that is gone, and a fresh module instance for every runtime in the process. Not a lab:
 * `lab 13 --challenge` runs it on the learner's own runtime.ts.
 *
 * Why a real host needs it: a reload is asked for while the model is mid-turn, twice in a
 * hurry, after the user withdrew trust. Whatever the order, one state is in use at a time,
 * old code leaves with its state, and nothing is ever half swapped.
 */
import assert from "node:assert/strict";
import * as fsp from "node:fs/promises";
import path from "node:path";
import test from "node:test";
import { toolCall, turn, type ScriptStep } from "../../src/scripted-model.js";
import { check, deferred, letOthersRun, denyShell, eventsOf, moduleOf, put, ranTools, skillFile, start, workspace } from "../fixtures/13-runtime.js";

const EXTENSION = "export default () => {};\n";

test("reload: prompt and reload calls run one after another, in call order", async (t) => {
  const { project } = await workspace(t);
  const order: string[] = [];
  const gate = deferred();
  const reached = deferred();
  const script: ScriptStep[] = [
    () => {
      order.push("model:first");
      return turn("first");
    },
    () => {
      order.push("model:second");
      return turn("second");
    },
  ];
  const { runtime } = await start(script, {
    projectRoot: project,
    isProjectTrusted: async () => {
      order.push("trust");
      if (order.filter((entry) => entry === "trust").length === 2) {
        reached.resolve();
        await gate.promise;
      }
      return true;
    },
  });
  await check("§C8.6：reload 停在它的信任问题上时，之后调用的 prompt 在排队；放行之后按调用顺序完成", async () => {
    const reloading = runtime.reload().then((report) => order.push(`reload:${report.status}`));
    const prompting = runtime.prompt("hello").then(() => order.push("prompt:done"));
    await reached.promise;
    await letOthersRun();
    assert.deepEqual(order, ["trust", "trust"], "the prompt waits for the reload in progress");
    gate.resolve();
    await Promise.all([reloading, prompting]);
    assert.deepEqual(order, ["trust", "trust", "reload:reloaded", "model:first", "prompt:done"]);
  });
  await check("§C8.6：一次失败的调用不挡住下一次", async () => {
    const failing = runtime.prompt("/skill:nope");
    const after = runtime.prompt("next");
    await assert.rejects(failing, { code: "skill_not_found" });
    await after;
    assert.deepEqual(order.slice(-1), ["model:second"]);
  });
});

test("reload: twenty reloads in a row leave exactly one copy of every tool and hook", async (t) => {
  const { project } = await workspace(t);
  const key = `pi-course-13c-${process.pid}-${Math.random()}`;
  await put(project, {
    "extensions/counter.mjs": `let factories = 0;
export default (context) => {
  factories += 1;
  context.registerTool({ name: "counter", description: "d", schema: { parse: (v) => v }, execute: async () => ({ content: [{ type: "text", text: String(factories) }] }) });
  context.on("afterToolResult", () => { globalThis[${JSON.stringify(key)}] = (globalThis[${JSON.stringify(key)}] ?? 0) + 1; });
};
`,
  });
  const script = [turn(toolCall("counter")), turn("ok")];
  const { runtime } = await start(script, { projectRoot: project });
  await check("§C8.7：连续 reload 二十次，每次都是新的模块实例；工具只有一个 counter，after hook 只运行一次（旧的 hook 随旧状态消失）", async () => {
    for (let i = 0; i < 20; i++) assert.equal((await runtime.reload()).status, "reloaded", `reload ${i + 1}`);
    assert.deepEqual(runtime.tools, ["read", "shell", "load_skill", "counter"]);
    const result = await runtime.prompt("count");
    const answered = result.messages.find((m) => m.role === "toolResult");
    assert.equal(answered?.content[0]?.type === "text" ? answered.content[0].text : undefined, "1");
    assert.equal((globalThis as Record<string, unknown>)[key], 1);
  });
});

test("reload: five reloads at once each complete, one after another", async (t) => {
  const { project } = await workspace(t);
  await put(project, { "extensions/guard.mjs": EXTENSION, "skills/review/SKILL.md": skillFile("review", "d") });
  let asked = 0;
  const { runtime, events } = await start([], {
    projectRoot: project,
    isProjectTrusted: () => {
      asked += 1;
      return true;
    },
    importModule: async () => moduleOf(denyShell),
  });
  await check("§C8.7：同时调用五次 reload：五份报告都是 reloaded，五个 reload 事件，信任一共问了六次，工具没有重复", async () => {
    const reports = await Promise.all(Array.from({ length: 5 }, () => runtime.reload()));
    assert.deepEqual(
      reports.map((report) => report.status),
      ["reloaded", "reloaded", "reloaded", "reloaded", "reloaded"],
    );
    assert.equal(eventsOf(events, "reload").length, 5);
    assert.equal(asked, 6);
    assert.deepEqual(runtime.tools, ["read", "shell", "load_skill"]);
    assert.deepEqual(runtime.catalog.listed, ["review"]);
  });
});

test("reload: a trust decision that turns to false drops the project's code; a new extension that fails is only a diagnostic", async (t) => {
  const { project } = await workspace(t);
  await put(project, { "extensions/guard.mjs": EXTENSION });
  let trustNow = true;
  const { runtime, toolRuns } = await start([turn(toolCall("shell", { command: "ls" })), turn("ok")], {
    projectRoot: project,
    isProjectTrusted: () => trustNow,
    importModule: async (source) => {
      if (source.id === "newcomer") throw new SyntaxError("broken newcomer");
      return moduleOf(denyShell);
    },
  });
  await check("§C8.5：一个新加的扩展加载失败只是诊断：reload 照样成功", async () => {
    await put(project, { "extensions/newcomer.mjs": EXTENSION });
    const report = await runtime.reload();
    assert.equal(report.status, "reloaded", "an extension that never ran cannot be lost");
    assert.deepEqual(
      report.diagnostics.map((d) => d.code),
      ["EXTENSION_IMPORT_FAILED"],
    );
  });
  await check("§C8.5：信任变成 false 是一个决定，不是失败：reload 成功，项目的扩展记为跳过，它们的 hook 跟着旧状态消失", async () => {
    trustNow = false;
    const report = await runtime.reload();
    assert.equal(report.status, "reloaded");
    if (report.status === "reloaded") assert.deepEqual(report.changes.extensionsRemoved, ["guard"]);
    assert.deepEqual(
      runtime.extensions.map((e) => e.status),
      ["skipped_untrusted", "skipped_untrusted"],
    );
    await runtime.prompt("go");
    assert.deepEqual(ranTools(toolRuns), ["shell"], "the project's hook is gone with its trust");
  });
});

test("reload: trust that turns to true loads the project's code", async (t) => {
  const { project } = await workspace(t);
  await put(project, { "extensions/guard.mjs": EXTENSION });
  let trustNow = false;
  const { runtime, toolRuns } = await start([turn(toolCall("shell", { command: "ls" })), turn("ok")], {
    projectRoot: project,
    isProjectTrusted: () => trustNow,
    importModule: async () => moduleOf(denyShell),
  });
  await check("§C8.8：信任从 false 变成 true 之后 reload：项目的扩展加载（extensionsAdded），它的 hook 从下一轮起生效", async () => {
    assert.deepEqual(
      runtime.extensions.map((e) => e.status),
      ["skipped_untrusted"],
    );
    trustNow = true;
    const report = await runtime.reload();
    assert.equal(report.status, "reloaded");
    if (report.status === "reloaded") assert.deepEqual(report.changes.extensionsAdded, ["guard"]);
    await runtime.prompt("go");
    assert.deepEqual(ranTools(toolRuns), []);
  });
});

test("reload: deleting a running extension's file removes it", async (t) => {
  const { project } = await workspace(t);
  await put(project, { "extensions/guard.mjs": EXTENSION });
  const { runtime, toolRuns } = await start([turn(toolCall("shell", { command: "ls" })), turn("ok")], {
    projectRoot: project,
    importModule: async () => moduleOf(denyShell),
  });
  await check("§C8.9：删掉一个正在运行的扩展的文件是一个决定，不是失败：reload 成功，extensionsRemoved 说出它，它的 hook 不再拦", async () => {
    await fsp.rm(path.join(project, "extensions", "guard.mjs"));
    const report = await runtime.reload();
    assert.equal(report.status, "reloaded");
    if (report.status === "reloaded") assert.deepEqual(report.changes.extensionsRemoved, ["guard"]);
    assert.deepEqual(runtime.extensions, []);
    await runtime.prompt("go");
    assert.deepEqual(ranTools(toolRuns), ["shell"]);
  });
});

test("reload: a project root that is gone fails the reload and keeps the previous state", async (t) => {
  const { base, project } = await workspace(t);
  await put(project, { "skills/review/SKILL.md": skillFile("review", "d", "BODY") });
  const { runtime, events } = await start([turn("still here")], { projectRoot: project });
  await check(
    "§C8.3、§C8.5：项目 root 被移走：reload 以 RUNTIME_PROJECT_MISSING 失败（diagnostics 是 []，有一个 reload 事件），清单照旧，下一轮照常",
    async () => {
      await fsp.rename(project, path.join(base, "moved"));
      const report = await runtime.reload();
      assert.equal(report.status, "failed");
      if (report.status === "failed") assert.equal(report.error.code, "RUNTIME_PROJECT_MISSING");
      assert.deepEqual(report.diagnostics, []);
      assert.deepEqual(
        eventsOf(events, "reload").map((e) => e.report),
        [report],
      );
      assert.deepEqual(runtime.catalog.listed, ["review"]);
      const result = await runtime.prompt("hello");
      assert.equal(result.stopReason, "stop");
    },
  );
});

test("reload: every runtime in the process imports a fresh instance, not one shared per file", async (t) => {
  const { project } = await workspace(t);
  await put(project, {
    "extensions/count.mjs":
      "let runs = 0;\nexport default (context) => { runs += 1; context.registerTool({ name: `count_${runs}`, description: 'd', schema: { parse: (v) => v }, execute: async () => ({ content: [] }) }); };\n",
  });
  const first = await start([], { projectRoot: project });
  const second = await start([], { projectRoot: project });
  await check("§C8.10：启动用第 12 章默认的 import（同一个文件在进程里只执行一次）；每次 reload 都重新执行文件，两个运行时互不共享", async () => {
    assert.deepEqual(
      [first.runtime.tools.at(-1), second.runtime.tools.at(-1)],
      ["count_1", "count_2"],
      "the start imports the module once per process (the default import is cached)",
    );
    await first.runtime.reload();
    await second.runtime.reload();
    assert.deepEqual([first.runtime.tools.at(-1), second.runtime.tools.at(-1)], ["count_1", "count_1"], "each reload evaluates the file again");
  });
});
