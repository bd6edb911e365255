/**
 * Chapter 13 · what the runtime must survive beyond the labs: options that cannot work, the
 * flag reader's edge cases, calls that overlap, events as copies, hook failures, reloads
 * that change trust or meet a missing project, and the catalog budget under arbitrary
 * text. Claimed by chapter 13, not copied into the practice folder as a lab.
 */
import assert from "node:assert/strict";
import * as fsp from "node:fs/promises";
import * as nodePath from "node:path";
import test from "node:test";
import { discoverResources, type ExtensionContext, type ResourceCatalog, type SkillResource } from "../src/resources.js";
import {
  buildSkillCatalog,
  createLoadSkillTool,
  createRuntime,
  hiddenFromModel,
  SKILL_CATALOG_HEADER,
  type RuntimeEvent,
  type RuntimeOptions,
} from "../src/runtime.js";
import { ScriptedModel, toolCall, turn, type ScriptStep } from "../src/scripted-model.js";
import { createToolExecutor, ToolRegistry, type Tool } from "../src/tool.js";
import { text, textOf, type ToolResultMessage } from "../src/types.js";
import { tempDir } from "./support/files.js";

function skillFile(name: string, description: string, body: string, extra: string[] = []): string {
  return ["---", `name: ${name}`, `description: ${description}`, ...extra, "---", body, ""].join("\n");
}

async function writeFiles(dir: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [relative, content] of Object.entries(files)) {
    const target = nodePath.join(dir, ...relative.split("/"));
    await fsp.mkdir(nodePath.dirname(target), { recursive: true });
    await fsp.writeFile(target, content);
  }
}

const echo = (name: string, runs: string[] = []): Tool => ({
  name,
  description: name,
  schema: { parse: (value: unknown) => value },
  execute: async () => {
    runs.push(name);
    return { content: [text(`${name} ran`)] };
  },
});

function options(projectRoot: string, script: ScriptStep[], extra: Partial<RuntimeOptions> = {}): RuntimeOptions & { model: ScriptedModel } {
  return {
    projectRoot,
    isProjectTrusted: () => true,
    model: new ScriptedModel(script),
    context: { maxTokens: 100_000 },
    tools: () => [echo("read"), echo("shell")],
    ...extra,
  } as RuntimeOptions & { model: ScriptedModel };
}

const denyShell = (context: ExtensionContext) =>
  context.on("beforeToolCall", (call) => (call.name === "shell" ? { decision: "deny", reason: "no shell" } : undefined));

test("createRuntime refuses options that cannot work before loading anything", async (t) => {
  const root = tempDir(t);
  const imported: string[] = [];
  await writeFiles(root, { "extensions/x.mjs": "export default () => {};\n" });
  const base = options(root, [], { importModule: async (source) => (imported.push(source.id), { default: () => {} }) });
  const bad: [string, Partial<RuntimeOptions> | Record<string, unknown>][] = [
    ["empty projectRoot", { projectRoot: "" }],
    ["empty userRoot", { userRoot: "" }],
    ["no trust policy", { isProjectTrusted: undefined }],
    ["no model", { model: {} }],
    ["negative window", { context: { maxTokens: -1 } }],
    ["infinite window", { context: { maxTokens: Infinity } }],
    ["fractional catalog budget", { maxCatalogBytes: 1.5 }],
    ["zero turns", { maxTurns: 0 }],
  ];
  for (const [label, change] of bad) {
    await assert.rejects(createRuntime({ ...base, ...change } as RuntimeOptions), { code: "RUNTIME_OPTIONS_INVALID" }, label);
  }
  await assert.rejects(createRuntime({ ...base, projectRoot: nodePath.join(root, "missing") }), { code: "RUNTIME_PROJECT_MISSING" });
  await assert.rejects(createRuntime({ ...base, projectRoot: nodePath.join(root, "extensions", "x.mjs") }), { code: "RUNTIME_PROJECT_MISSING" });
  assert.deepEqual(imported, [], "nothing was imported for a refused start");
});

test("hiddenFromModel reads the flag from the frontmatter only, and fails closed", async (t) => {
  const root = tempDir(t);
  await writeFiles(root, {
    "skills/bom/SKILL.md": `\uFEFF---\r\nname: bom\r\ndescription: with a BOM and CRLF\r\ndisable-model-invocation: true\r\n---\r\nbody\r\n`,
    "skills/plain/SKILL.md": skillFile("plain", "no flag", "disable-model-invocation: true is only body text here"),
    "skills/yes/SKILL.md": skillFile("yes", "a YAML 1.1 yes is a string to this parser", "body", ["disable-model-invocation: yes"]),
    "skills/long/SKILL.md": skillFile("long", "a long body after the flag", "x".repeat(3 * 1024 * 1024), ["disable-model-invocation: true"]),
  });
  const catalog = await discoverResources([root]);
  const flags = Object.fromEntries(await Promise.all(catalog.skills.map(async (skill) => [skill.name, await hiddenFromModel(skill)] as const)));
  assert.deepEqual(flags, { bom: true, long: true, plain: false, yes: false });

  // Changed on disk after discovery: the flag can no longer be read, so the skill is hidden.
  const plain = catalog.skills.find((skill) => skill.name === "plain")!;
  await fsp.writeFile(plain.source, "no frontmatter any more\n");
  assert.equal(await hiddenFromModel(plain), true, "no frontmatter: hidden");
  await fsp.writeFile(plain.source, "---\n- a list\n---\n");
  assert.equal(await hiddenFromModel(plain), true, "not a mapping: hidden");
  await fsp.rm(plain.source);
  assert.equal(await hiddenFromModel(plain), true, "gone: hidden");
  const foreign: SkillResource = { ...plain, source: nodePath.join(root, "nowhere", "SKILL.md") };
  assert.equal(await hiddenFromModel(foreign), true);
});

test("the catalog never exceeds its budget, whatever the descriptions hold", async (t) => {
  const root = tempDir(t);
  const alphabet = ["a", "é", "字", "😀", " ", "\n", "\t", "\u202E", "\u0007", "#", ":", "-"];
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const skills: SkillResource[] = [];
  for (let i = 0; i < 12; i++) {
    const description = Array.from({ length: 1 + Math.floor(random() * 40) }, () => alphabet[Math.floor(random() * alphabet.length)]).join("");
    await writeFiles(root, { [`skills/s${i}/SKILL.md`]: skillFile(`s${i}`, JSON.stringify(description), "body") });
  }
  const catalog: ResourceCatalog = await discoverResources([root]);
  skills.push(...catalog.skills);
  for (let budget = 0; budget <= 1200; budget += 37) {
    const built = await buildSkillCatalog(catalog, { maxCatalogBytes: budget });
    assert.ok(built.bytes <= budget, `budget ${budget}: ${built.bytes}`);
    assert.equal(built.bytes, Buffer.byteLength(built.text, "utf8"));
    assert.deepEqual([...built.listed, ...built.dropped].sort(), skills.map((s) => s.name).sort());
    if (built.text !== "") {
      assert.ok(built.text.startsWith(`${SKILL_CATALOG_HEADER}\n\n`));
      const entries = built.text.slice(SKILL_CATALOG_HEADER.length + 2).split("\n");
      assert.equal(entries.length, built.listed.length, "one line per listed skill: no description adds a line");
      for (const entry of entries) assert.doesNotMatch(entry, /[\u0000-\u001F\u202E]/);
    }
  }
});

test("load_skill serves the snapshot it was given, not the caller's later edits", async (t) => {
  const root = tempDir(t);
  await writeFiles(root, { "skills/review/SKILL.md": skillFile("review", "d", "BODY") });
  const resources = await discoverResources([root]);
  const hidden: string[] = [];
  const tool = createLoadSkillTool({ resources, hidden });
  resources.skills.length = 0;
  hidden.push("review");
  const execute = createToolExecutor(new ToolRegistry([tool as Tool]));
  const result = await execute({ type: "toolCall", id: "1", name: "load_skill", arguments: { name: "review" } });
  assert.equal(textOf(result), "BODY");
});

test("prompt and reload calls run one after another, in call order", async (t) => {
  const root = tempDir(t);
  const order: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let reached!: () => void;
  const reloadAtGate = new Promise<void>((resolve) => (reached = resolve));
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
  const runtime = await createRuntime(
    options(root, script, {
      isProjectTrusted: async () => {
        order.push("trust");
        if (order.filter((entry) => entry === "trust").length === 2) {
          reached();
          await gate;
        }
        return true;
      },
    }),
  );
  const reloading = runtime.reload().then((report) => order.push(`reload:${report.status}`));
  const prompting = runtime.prompt("hello").then(() => order.push("prompt:done"));
  // The reload is held at its trust question (however long it took to get there); the prompt
  // has had time to run meanwhile, and must not have.
  await reloadAtGate;
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(order, ["trust", "trust"], "the prompt waits for the reload in progress");
  release();
  await Promise.all([reloading, prompting]);
  assert.deepEqual(order, ["trust", "trust", "reload:reloaded", "model:first", "prompt:done"]);
  const failing = runtime.prompt("/skill:nope");
  const after = runtime.prompt("next");
  await assert.rejects(failing, { code: "skill_not_found" });
  await after;
  assert.deepEqual(order.slice(-1), ["model:second"], "a failed call does not block the next one");
});

test("events are copies, in order; getters hand out copies too", async (t) => {
  const root = tempDir(t);
  await writeFiles(root, { "skills/review/SKILL.md": skillFile("review", "Use when reviewing", "BODY") });
  const events: RuntimeEvent[] = [];
  const runtime = await createRuntime(
    options(root, [turn(toolCall("load_skill", { name: "review" })), turn("done")], {
      onEvent: (event) => {
        events.push(event);
        if (event.type === "message") event.message.content.length = 0; // a listener that scribbles on its copy
      },
    }),
  );
  await runtime.prompt("go");
  assert.deepEqual(
    events.map((event) => (event.type === "message" ? `message:${event.message.role}` : event.type)),
    ["message:user", "request", "message:assistant", "skill_load", "message:toolResult", "request", "message:assistant"],
  );
  assert.equal(textOf(runtime.messages[0]!), "go", "the session kept its own message");
  const messages = runtime.messages;
  messages.length = 0;
  const catalog = runtime.catalog;
  catalog.listed.push("evil");
  assert.equal(runtime.messages.length, 4);
  assert.deepEqual(runtime.catalog.listed, ["review"]);
});

test("a hook that throws blocks the call and is reported as a hook diagnostic", async (t) => {
  const root = tempDir(t);
  await writeFiles(root, { "extensions/flaky.mjs": "export default () => {};\n" });
  const events: RuntimeEvent[] = [];
  const runs: string[] = [];
  const runtime = await createRuntime(
    options(root, [turn(toolCall("shell", { command: "ls" })), turn("ok")], {
      tools: () => [echo("shell", runs)],
      importModule: async () => ({
        default: (context: ExtensionContext) =>
          context.on("beforeToolCall", () => {
            throw new Error("hook crashed");
          }),
      }),
      onEvent: (event) => events.push(event),
    }),
  );
  const result = await runtime.prompt("go");
  assert.deepEqual(runs, [], "fail closed: the tool did not run");
  const blocked = result.messages.find((m): m is ToolResultMessage => m.role === "toolResult")!;
  assert.deepEqual((blocked.details as { kind?: unknown }).kind, "error");
  const reported = events.filter((e): e is Extract<RuntimeEvent, { type: "hook_diagnostic" }> => e.type === "hook_diagnostic");
  assert.deepEqual(
    reported.map((e) => [e.diagnostic.extensionId, e.diagnostic.hook, e.diagnostic.kind]),
    [["flaky", "beforeToolCall", "error"]],
  );
});

test("reload: a trust decision that turns to false drops the project's code; a new extension that fails is only a diagnostic", async (t) => {
  const root = tempDir(t);
  await writeFiles(root, { "extensions/guard.mjs": "export default () => {};\n" });
  let trusted = true;
  const runs: string[] = [];
  const runtime = await createRuntime(
    options(root, [turn(toolCall("shell", { command: "ls" })), turn("ok")], {
      isProjectTrusted: () => trusted,
      tools: () => [echo("shell", runs)],
      importModule: async (source) => {
        if (source.id === "newcomer") throw new SyntaxError("broken newcomer");
        return { default: denyShell };
      },
    }),
  );
  await writeFiles(root, { "extensions/newcomer.mjs": "export default () => {};\n" });
  const withNewcomer = await runtime.reload();
  assert.equal(withNewcomer.status, "reloaded", "an extension that never ran cannot be lost");
  assert.deepEqual(
    withNewcomer.diagnostics.map((d) => d.code),
    ["EXTENSION_IMPORT_FAILED"],
  );

  trusted = false;
  const report = await runtime.reload();
  assert.equal(report.status, "reloaded", "not trusting the project is a decision, not a failure");
  if (report.status === "reloaded") assert.deepEqual(report.changes.extensionsRemoved, ["guard"]);
  assert.deepEqual(
    runtime.extensions.map((e) => e.status),
    ["skipped_untrusted", "skipped_untrusted"],
  );
  await runtime.prompt("go");
  assert.deepEqual(runs, ["shell"], "the project's hook is gone with its trust");
});

test("reload: a project root that is gone fails the reload and keeps the previous state", async (t) => {
  const dir = tempDir(t);
  const root = nodePath.join(dir, "project");
  await writeFiles(root, { "skills/review/SKILL.md": skillFile("review", "d", "BODY") });
  const runtime = await createRuntime(options(root, [turn("still here")]));
  await fsp.rename(root, nodePath.join(dir, "moved"));
  const report = await runtime.reload();
  assert.equal(report.status, "failed");
  if (report.status === "failed") assert.equal(report.error.code, "RUNTIME_PROJECT_MISSING");
  assert.deepEqual(runtime.catalog.listed, ["review"]);
  const result = await runtime.prompt("hello");
  assert.equal(result.stopReason, "stop");
});

test("reload imports a fresh instance for every runtime in the process, not one shared per file", async (t) => {
  const root = tempDir(t);
  await writeFiles(root, {
    "extensions/count.mjs":
      "let runs = 0;\nexport default (context) => { runs += 1; context.registerTool({ name: `count_${runs}`, description: 'd', schema: { parse: (v) => v }, execute: async () => ({ content: [] }) }); };\n",
  });
  const first = await createRuntime(options(root, []));
  const second = await createRuntime(options(root, []));
  assert.deepEqual(
    [first.tools.at(-1), second.tools.at(-1)],
    ["count_1", "count_2"],
    "the start imports the module once per process (the default import is cached)",
  );
  await first.reload();
  await second.reload();
  assert.deepEqual([first.tools.at(-1), second.tools.at(-1)], ["count_1", "count_1"], "each reload evaluates the file again");
});

test("a request that overflows names every part of the sum", async (t) => {
  const root = tempDir(t);
  const runtime = await createRuntime(
    options(root, [turn("x")], { baseSystemPrompt: "s".repeat(400), context: { maxTokens: 110, reservedOutput: 10, safetyMargin: 5 } }),
  );
  await assert.rejects(runtime.prompt("hello"), (error: Error & { code?: string }) => {
    assert.equal(error.code, "RUNTIME_CONTEXT_OVERFLOW");
    for (const part of ["100", "2", "10", "5", "117", "110"]) assert.match(error.message, new RegExp(`\\b${part}\\b`), part);
    return true;
  });
});
