/**
 * Chapter 13 challenge · startup (`createRuntime`): options that cannot work, trust
 * policies that answer oddly, throw or take their time, extensions that reach for
 * `load_skill` or each other's tools or ids, hostile extension folders and a project root
 * reached through a link. Not a lab: `lab 13 --challenge` runs it on the learner's own
 * runtime.ts.
 *
 * Why a real host needs it: the trust question is the one gate between someone else's
 * repository and code running on this machine. Nothing of the project runs before a plain
 * `true`, however the answer comes, and no extension can take a tool that is already there.
 */
import assert from "node:assert/strict";
import * as fsp from "node:fs/promises";
import path from "node:path";
import test from "node:test";
import type { ExtensionContext } from "../../src/resources.js";
import { createRuntime, type RuntimeOptions } from "../../src/runtime.js";
import { ScriptedModel } from "../../src/scripted-model.js";
import type { Tool } from "../../src/tool.js";
import { text } from "../../src/types.js";
import { check, deferred, letOthersRun, eventsOf, moduleOf, put, rejectsWith, skillFile, start, symlinkOrSkip, workspace } from "../fixtures/13-runtime.js";

const EXTENSION = "export default () => {};\n";

/** A tool an extension registers. */
const toolNamed = (name: string): Tool => ({
  name,
  description: name,
  schema: { parse: (value: unknown) => value },
  execute: async () => ({ content: [text(`${name} ran`)] }),
});

test("startup: options that cannot work are refused before anything is loaded", async (t) => {
  const { project } = await workspace(t);
  const imported: string[] = [];
  await put(project, { "extensions/x.mjs": EXTENSION });
  const base: RuntimeOptions = {
    projectRoot: project,
    isProjectTrusted: () => true,
    model: new ScriptedModel([]),
    context: { maxTokens: 100_000 },
    tools: () => [],
    importModule: async (source) => {
      imported.push(source.id);
      return moduleOf(() => {});
    },
  };
  const bad: [string, Record<string, unknown>][] = [
    ["empty projectRoot", { projectRoot: "" }],
    ["projectRoot not a string", { projectRoot: 7 }],
    ["empty userRoot", { userRoot: "" }],
    ["no trust policy", { isProjectTrusted: undefined }],
    ["a trust policy that is no function", { isProjectTrusted: true }],
    ["no model", { model: {} }],
    ["no context", { context: undefined }],
    ["negative window", { context: { maxTokens: -1 } }],
    ["infinite window", { context: { maxTokens: Infinity } }],
    ["NaN window", { context: { maxTokens: Number.NaN } }],
    ["fractional catalog budget", { maxCatalogBytes: 1.5 }],
    ["negative catalog budget", { maxCatalogBytes: -1 }],
    ["zero turns", { maxTurns: 0 }],
    ["fractional turns", { maxTurns: 1.5 }],
  ];
  await check(
    "§C6.8：不能用的选项都是 RUNTIME_OPTIONS_INVALID；项目 root 不存在或是一个文件是 RUNTIME_PROJECT_MISSING；被拒绝的启动什么都不 import",
    async () => {
      for (const [label, change] of bad) {
        await rejectsWith(createRuntime({ ...base, ...change } as RuntimeOptions), "RUNTIME_OPTIONS_INVALID", label);
      }
      await rejectsWith(createRuntime(null as unknown as RuntimeOptions), "RUNTIME_OPTIONS_INVALID", "null options");
      await rejectsWith(createRuntime({ ...base, projectRoot: path.join(project, "missing") }), "RUNTIME_PROJECT_MISSING", "missing");
      await rejectsWith(createRuntime({ ...base, projectRoot: path.join(project, "extensions", "x.mjs") }), "RUNTIME_PROJECT_MISSING", "a file");
      assert.deepEqual(imported, [], "nothing was imported for a refused start");
    },
  );
});

test("startup: trust policies that answer oddly", async (t) => {
  const { project } = await workspace(t);
  await put(project, { "extensions/guard.mjs": EXTENSION });
  const answers: [string, () => unknown, "active" | "skipped_untrusted", boolean][] = [
    ["a thenable of true", () => ({ then: (resolve: (value: boolean) => void) => resolve(true) }), "active", false],
    ["a promise that rejects", () => Promise.reject(new Error("no answer")), "skipped_untrusted", true],
    [
      "a thrown string",
      () => {
        throw "just a string";
      },
      "skipped_untrusted",
      true,
    ],
    [
      "a thrown undefined",
      () => {
        throw undefined;
      },
      "skipped_untrusted",
      true,
    ],
    ["new Boolean(true)", () => new Boolean(true), "skipped_untrusted", false],
    ["1", () => 1, "skipped_untrusted", false],
    ['"true"', () => "true", "skipped_untrusted", false],
    ["{}", () => ({}), "skipped_untrusted", false],
    ["a promise of a promise of true", () => Promise.resolve(Promise.resolve(true)), "active", false],
  ];
  await check(
    "§C6.9：只有一个确切的 true（直接、经 promise 或 thenable）才信任；拒绝的 promise 和抛出的任何东西（字符串、undefined）都是不信任加一条 PROJECT_TRUST_FAILED，message 是字符串；每次启动恰好问一次",
    async () => {
      for (const [label, answer, status, failed] of answers) {
        let asked = 0;
        const { runtime } = await start([], {
          projectRoot: project,
          isProjectTrusted: (() => {
            asked += 1;
            return answer();
          }) as RuntimeOptions["isProjectTrusted"],
          importModule: async () => moduleOf(() => {}),
        });
        assert.equal(asked, 1, label);
        assert.deepEqual(
          runtime.extensions.map((e) => e.status),
          [status],
          label,
        );
        const trust = runtime.diagnostics.filter((d) => d.area === "trust");
        assert.deepEqual(
          trust.map((d) => [d.code, d.severity, d.source, typeof d.message]),
          failed ? [["PROJECT_TRUST_FAILED", "error", project, "string"]] : [],
          label,
        );
      }
    },
  );
});

test("startup: while the trust question waits, nothing of the project runs", async (t) => {
  const { project, user } = await workspace(t);
  await put(user, { "extensions/audit.mjs": EXTENSION });
  await put(project, { "extensions/guard.mjs": EXTENSION });
  const order: string[] = [];
  const answer = deferred<boolean>();
  const asked = deferred();
  const starting = start([], {
    projectRoot: project,
    userRoot: user,
    isProjectTrusted: () => {
      order.push("trust");
      asked.resolve();
      return answer.promise;
    },
    importModule: async (source) => {
      order.push(`import:${source.id}`);
      return moduleOf(() => {});
    },
  });
  await check("§C6.10：信任策略迟迟不答时，用户级扩展已经加载，项目的扩展一个都没 import；答了 true 之后才加载", async () => {
    await asked.promise;
    await letOthersRun();
    assert.deepEqual(order, ["import:audit", "trust"]);
    answer.resolve(true);
    const { runtime } = await starting;
    assert.deepEqual(order, ["import:audit", "trust", "import:guard"]);
    assert.deepEqual(
      runtime.extensions.map((e) => [e.id, e.status]),
      [
        ["audit", "active"],
        ["guard", "active"],
      ],
    );
  });
});

test("startup: an extension cannot take load_skill, a core tool or another extension's tool", async (t) => {
  const { project } = await workspace(t);
  await put(project, {
    "skills/review/SKILL.md": skillFile("review", "d", "BODY"),
    "extensions/a-first.mjs": EXTENSION,
    "extensions/b-second.mjs": EXTENSION,
    "extensions/c-loader.mjs": EXTENSION,
    "extensions/d-reader.mjs": EXTENSION,
  });
  const factories: Record<string, (context: ExtensionContext) => void> = {
    "a-first": (context) => context.registerTool(toolNamed("shared")),
    "b-second": (context) => context.registerTool(toolNamed("shared")),
    "c-loader": (context) => context.registerTool(toolNamed("load_skill")),
    "d-reader": (context) => context.registerTool(toolNamed("read")),
  };
  const { runtime } = await start([], { projectRoot: project, importModule: async (source) => moduleOf(factories[source.id]!) });
  await check("§C6.11：load_skill 在任何扩展之前注册：一个扩展注册 load_skill、read 或别的扩展已有的工具名都是 TOOL_CONFLICT，先来的那个留下", async () => {
    assert.deepEqual(
      runtime.extensions.map((e) => [e.id, e.status, e.code]),
      [
        ["a-first", "active", undefined],
        ["b-second", "failed", "TOOL_CONFLICT"],
        ["c-loader", "failed", "TOOL_CONFLICT"],
        ["d-reader", "failed", "TOOL_CONFLICT"],
      ],
    );
    assert.deepEqual(runtime.tools, ["read", "shell", "load_skill", "shared"]);
  });
});

test("startup: a project extension with the id of a user extension", async (t) => {
  const { project, user } = await workspace(t);
  await put(user, { "extensions/audit.mjs": EXTENSION });
  await put(project, { "extensions/audit.mjs": EXTENSION });
  const { runtime } = await start([], {
    projectRoot: project,
    userRoot: user,
    importModule: async (source) => moduleOf((context) => context.registerTool(toolNamed(source.path.startsWith(user) ? "user_audit" : "project_audit"))),
  });
  await check("§C6.12：用户级的 audit 先加载；项目里同名的 audit 是 EXTENSION_DUPLICATE，只是一条诊断，什么都没注册", async () => {
    assert.deepEqual(
      runtime.extensions.map((e) => [e.id, e.origin, e.status, e.code]),
      [
        ["audit", "user", "active", undefined],
        ["audit", "project", "failed", "EXTENSION_DUPLICATE"],
      ],
    );
    assert.deepEqual(
      runtime.diagnostics.map((d) => [d.area, d.code, d.source]),
      [["extensions", "EXTENSION_DUPLICATE", "audit"]],
    );
    assert.deepEqual(runtime.tools, ["read", "shell", "load_skill", "user_audit"]);
  });
});

test("startup: hostile extension folders and a missing user root", async (t) => {
  const { base, project } = await workspace(t);
  await put(project, {
    "extensions/real.mjs": EXTENSION,
    "extensions/.hidden.mjs": EXTENSION,
    "extensions/LOUD.MJS": EXTENSION,
    "extensions/notes.mjs.txt": EXTENSION,
    "extensions/folder.mjs/index.mjs": EXTENSION,
  });
  const imported: string[] = [];
  const missingUser = path.join(base, "no-such-user");
  const { runtime, events } = await start([], {
    projectRoot: project,
    userRoot: missingUser,
    importModule: async (source) => {
      imported.push(source.id);
      return moduleOf(() => {});
    },
  });
  await check(
    "§C6.13：只有 extensions/ 下不以 . 开头的普通 *.mjs 文件是扩展（大写的 .MJS、目录、别的后缀都不是）；不存在的用户目录是一条 RESOURCE_ROOT_MISSING 诊断，会话照样开始",
    async () => {
      assert.deepEqual(imported, ["real"]);
      assert.deepEqual(
        runtime.extensions.map((e) => e.id),
        ["real"],
      );
      assert.deepEqual(
        runtime.diagnostics.map((d) => [d.area, d.code]),
        [["resources", "RESOURCE_ROOT_MISSING"]],
      );
      assert.equal(eventsOf(events, "diagnostic").length, 1);
    },
  );
  await check("§C6.13：项目的 extensions 是一个文件：没有扩展，不是错误", async () => {
    const { project: other } = await workspace(t);
    await put(other, { extensions: "not a folder\n" });
    const { runtime: started } = await start([], { projectRoot: other });
    assert.deepEqual(started.extensions, []);
    assert.deepEqual(started.diagnostics, []);
  });
});

test("startup: a project root reached through a link is trusted by its canonical path", async (t) => {
  const { base, project } = await workspace(t);
  await put(project, { "extensions/guard.mjs": EXTENSION });
  const link = path.join(base, "linked-project");
  await check("§C6.3：信任策略拿到的是 canonical 路径（链接解析之后），PROJECT_TRUST_FAILED 的 source 也是它", async () => {
    if (!(await symlinkOrSkip(t, project, link))) return;
    const asked: string[] = [];
    const { runtime } = await start([], {
      projectRoot: link,
      isProjectTrusted: (root) => {
        asked.push(root);
        throw new Error("policy down");
      },
      importModule: async () => moduleOf(() => {}),
    });
    assert.deepEqual(asked, [await fsp.realpath(link)]);
    assert.deepEqual(
      runtime.diagnostics.map((d) => [d.code, d.source]),
      [["PROJECT_TRUST_FAILED", project]],
    );
  });
});
