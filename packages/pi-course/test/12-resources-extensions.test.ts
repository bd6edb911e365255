/**
 * Chapter 12 labs · resources and extensions. Twelve tests in five labs (2, 3, 2, 2, 3);
 * every name starts with its lab id, so one lab runs alone with
 *
 *   node --test --test-name-pattern="Lab 12.1" packages/pi-course/dist/test/12-resources-extensions.test.js
 *
 * Every test builds the chapter's fixed workspace in a fresh temporary directory:
 * projectRoot and userRoot both declare skill:review and template:review, and the
 * roots are passed as [projectRoot, userRoot] unless a test swaps them on purpose.
 */
import assert from "node:assert/strict";
import * as fsp from "node:fs/promises";
import * as os from "node:os";
import * as nodePath from "node:path";
import test, { type TestContext } from "node:test";
import { buildContext } from "../src/context.js";
import {
  activateSkill,
  createExtensionHost,
  discoverResources,
  formatResourceContext,
  loadExtension,
  renderTemplate,
  type ExtensionContext,
  type ExtensionDiagnostic,
  type ExtensionHost,
} from "../src/resources.js";
import { createSession } from "../src/session.js";
import { ToolRegistry, objectSchema, stringValue, type Tool, type ToolExecutor } from "../src/tool.js";
import { text, textOf, type ToolCall, type ToolResultMessage } from "../src/types.js";

// ---------------------------------------------------------------------------
// The fixed example workspace
// ---------------------------------------------------------------------------

interface Workspace {
  /** The temporary directory holding both roots (and files outside them). */
  base: string;
  projectRoot: string;
  userRoot: string;
  /** A readable file outside every skill root. */
  outsideFile: string;
}

/** A SKILL.md (or any markdown file) with `name` and `description` in its frontmatter. */
function skillMarkdown(name: string, description: string, body: string): string {
  return ["---", `name: ${name}`, `description: ${description}`, "---", body, ""].join("\n");
}

/** Writes `files` (relative path → content) below `dir`, creating folders as needed. */
async function writeFiles(dir: string, files: Record<string, string>): Promise<void> {
  for (const [relative, content] of Object.entries(files)) {
    const target = nodePath.join(dir, ...relative.split("/"));
    await fsp.mkdir(nodePath.dirname(target), { recursive: true });
    await fsp.writeFile(target, content);
  }
}

/** Builds the chapter's workspace in a fresh temporary directory, removed after the test. */
async function makeWorkspace(t: TestContext): Promise<Workspace> {
  const base = await fsp.mkdtemp(nodePath.join(os.tmpdir(), "pi-course-12-"));
  t.after(() => fsp.rm(base, { recursive: true, force: true }));
  const projectRoot = nodePath.join(base, "project");
  const userRoot = nodePath.join(base, "user");
  await writeFiles(projectRoot, {
    "AGENTS.md": "PROJECT RULES\n",
    "skills/review/SKILL.md": skillMarkdown("review", "project review", "Read the diff first."),
    "skills/review/references/checklist.md": "tests\nsecurity\n",
    // A sibling folder whose name starts with "review": no SKILL.md, so not a skill.
    "skills/review-old/notes.md": "SIBLING FOLDER NOTES\n",
    "templates/review.md": "Review {{target}}; then test {{target}} for {{owner}}.\n",
    "outside.md": "PROJECT FILE OUTSIDE THE SKILL\n",
  });
  await writeFiles(userRoot, {
    "AGENTS.md": "USER RULES\n",
    "skills/review/SKILL.md": skillMarkdown("review", "user review", "USER REVIEW BODY"),
    "skills/lint/SKILL.md": skillMarkdown("lint", "user lint", "LINT BODY MARKER"),
    "templates/review.md": "User template for {{target}}\n",
  });
  const outsideFile = nodePath.join(base, "outside.md");
  await fsp.writeFile(outsideFile, "OUTSIDE SECRET\n");
  return { base, projectRoot, userRoot, outsideFile };
}

/**
 * Expects `pending` to reject with the contract error `code`. An error without a `code` (a
 * starter's "尚未实现", a TypeError) is no contract error at all: the test fails with that
 * error as it is, so the learner reads its own message rather than a comparison of codes.
 */
async function rejectsWithCode(pending: Promise<unknown>, code: string, why?: string): Promise<void> {
  // Named in the failure when the call resolves instead: which expectation did not hold.
  const expected = `expected a rejection with code ${code}${why === undefined ? "" : ` (${why})`}`;
  await assert.rejects(pending, (error: Error & { code?: unknown }) => {
    if (error.code === undefined) throw error;
    assert.equal(error.code, code, why);
    return true;
  }, expected);
}

/** Creates a symlink, or skips the test where the platform does not allow it. */
async function linkOrSkip(t: TestContext, target: string, linkPath: string): Promise<boolean> {
  try {
    await fsp.symlink(target, linkPath);
    return true;
  } catch (problem) {
    if ((problem as NodeJS.ErrnoException).code !== "EPERM") throw problem;
    t.skip("symlinks are not permitted here");
    return false;
  }
}

// ---------------------------------------------------------------------------
// Extensions: a note tool, a recording core executor, a trusted loader
// ---------------------------------------------------------------------------

const reviewNoteTool = (): Tool => ({
  name: "review_note",
  description: "Records one review note.",
  schema: objectSchema({ text: stringValue() }),
  execute: async (parameters) => ({ content: [text(`noted: ${(parameters as { text: string }).text}`)] }),
});

function noteCall(): ToolCall {
  return { type: "toolCall", id: "note-1", name: "review_note", arguments: { text: "parser is stable" } };
}

/** A core executor that counts its runs and keeps every result object it returned. */
function recordingCore() {
  const facts: ToolResultMessage[] = [];
  const core: ToolExecutor = async (received) => {
    const answer: ToolResultMessage = {
      role: "toolResult", toolCallId: received.id, toolName: received.name,
      content: [text("note stored")],
      details: { stored: { count: 1 } },
      isError: false,
      timestamp: 1,
    };
    facts.push(answer);
    return answer;
  };
  return { core, facts };
}

/** Loads an extension whose module is `{ default: factory }`, trusting it. */
function loadTrusted(host: ExtensionHost, id: string, factory: (context: ExtensionContext) => void) {
  return loadExtension(
    { id, path: `extensions/${id}.js` },
    { host, isTrusted: () => true, importModule: async () => ({ default: factory }) },
  );
}

// ---------------------------------------------------------------------------
// Lab 12.1 · roots 顺序决定 catalog winner
// ---------------------------------------------------------------------------

test("Lab 12.1 · roots 顺序决定同名资源的 winner", async (t) => {
  const ws = await makeWorkspace(t);
  const project = await fsp.realpath(ws.projectRoot);
  const user = await fsp.realpath(ws.userRoot);

  const catalog = await discoverResources([ws.projectRoot, ws.userRoot]);
  assert.deepEqual(
    catalog.resources.map((resource) => `${resource.kind}:${resource.name}`),
    ["instructions:AGENTS", "skill:lint", "skill:review", "template:review"],
  );
  assert.deepEqual(catalog.instructions, [
    { kind: "instructions", name: "AGENTS", source: nodePath.join(project, "AGENTS.md"), root: project, body: "PROJECT RULES" },
  ]);
  assert.deepEqual(catalog.skills[1], {
    kind: "skill",
    name: "review",
    description: "project review",
    source: nodePath.join(project, "skills", "review", "SKILL.md"),
    root: nodePath.join(project, "skills", "review"),
  });
  assert.deepEqual(catalog.templates, [
    {
      kind: "template",
      name: "review",
      description: "",
      source: nodePath.join(project, "templates", "review.md"),
      root: project,
      body: "Review {{target}}; then test {{target}} for {{owner}}.",
    },
  ]);
  assert.deepEqual(catalog.skills[0]?.root, nodePath.join(user, "skills", "lint"));

  // Swapping the roots swaps every winner: the caller's order is the only priority.
  const swapped = await discoverResources([ws.userRoot, ws.projectRoot]);
  assert.equal(swapped.instructions[0]?.body, "USER RULES");
  assert.equal(swapped.skills.find((skill) => skill.name === "review")?.description, "user review");
  assert.equal(swapped.skills.find((skill) => skill.name === "review")?.source, nodePath.join(user, "skills", "review", "SKILL.md"));
  assert.equal(swapped.templates[0]?.body, "User template for {{target}}");
});

test("Lab 12.1 · 按逻辑身份稳定排序，catalog 不含未激活正文", async (t) => {
  const ws = await makeWorkspace(t);
  // Directory and file names sort the opposite way from the names they declare.
  await writeFiles(ws.projectRoot, {
    "skills/a-last/SKILL.md": skillMarkdown("zeta", "declared last", "ZETA BODY"),
    "skills/m-upper/SKILL.md": skillMarkdown("Beta", "capital B", "BETA BODY"),
    "skills/z-first/SKILL.md": skillMarkdown("alpha", "declared first", "ALPHA BODY"),
    "templates/zz.md": skillMarkdown("checklist", "named in frontmatter", "Check {{target}}"),
  });

  const catalog = await discoverResources([ws.projectRoot, ws.userRoot]);
  assert.deepEqual(
    catalog.resources.map((resource) => `${resource.kind}:${resource.name}`),
    [
      "instructions:AGENTS",
      "skill:Beta", // code-unit order: "B" (66) sorts before "a" (97)
      "skill:alpha",
      "skill:lint",
      "skill:review",
      "skill:zeta",
      "template:checklist",
      "template:review",
    ],
  );
  assert.deepEqual(await discoverResources([ws.projectRoot, ws.userRoot]), catalog);

  const serialized = JSON.stringify(catalog);
  for (const body of ["Read the diff first.", "USER REVIEW BODY", "LINT BODY MARKER", "ZETA BODY", "ALPHA BODY"]) {
    assert.ok(!serialized.includes(body), `catalog must not contain the skill body "${body}"`);
  }
  for (const skill of catalog.skills) assert.ok(!("body" in skill), `${skill.name} must carry no body`);
});

// ---------------------------------------------------------------------------
// Lab 12.2 · activation 才把 Skill 正文交给本轮
// ---------------------------------------------------------------------------

test("Lab 12.2 · 激活后才公开正文，catalog 保持不变", async (t) => {
  const ws = await makeWorkspace(t);
  const catalog = await discoverResources([ws.projectRoot, ws.userRoot]);
  const snapshot = structuredClone(catalog);
  const skill = catalog.skills.find((candidate) => candidate.name === "review");

  const review = await activateSkill(catalog, "review");
  assert.deepEqual(review, { ...skill, body: "Read the diff first.", resources: [] });

  review.body = "changed by the caller";
  review.description = "changed by the caller";
  review.resources.push({ request: "x", source: "x", content: "x" });
  assert.deepEqual(catalog, snapshot);
  assert.ok(!JSON.stringify(catalog).includes("Read the diff first."));
  assert.equal((await activateSkill(catalog, "review")).body, "Read the diff first.");

  await rejectsWithCode(activateSkill(catalog, "deploy"), "SKILL_NOT_FOUND");
});

test("Lab 12.2 · 附加文件保留 request，并返回 canonical source 与原文", async (t) => {
  const ws = await makeWorkspace(t);
  const catalog = await discoverResources([ws.projectRoot, ws.userRoot]);
  const skillRoot = await fsp.realpath(nodePath.join(ws.projectRoot, "skills", "review"));

  const review = await activateSkill(catalog, "review", {
    resources: ["references/checklist.md", "references/checklist.md"],
  });
  assert.deepEqual(review.resources, [
    {
      request: "references/checklist.md",
      source: nodePath.join(skillRoot, "references", "checklist.md"),
      content: "tests\nsecurity\n",
    },
  ]);
  assert.equal(review.body, "Read the diff first.");
});

test("Lab 12.2 · traversal、绝对路径与指向 root 外的 symlink 都被拒绝", async (t) => {
  const ws = await makeWorkspace(t);
  const catalog = await discoverResources([ws.projectRoot, ws.userRoot]);
  const attempt = (request: string) => activateSkill(catalog, "review", { resources: [request] });

  await rejectsWithCode(attempt("../../outside.md"), "SKILL_PATH_ESCAPE", "request ../../outside.md climbs out of the skill root");
  await rejectsWithCode(attempt("../../no-such-file.md"), "SKILL_PATH_ESCAPE", "request ../../no-such-file.md is rejected before any lookup");
  await rejectsWithCode(attempt("../review-old/notes.md"), "SKILL_PATH_ESCAPE", "request ../review-old/notes.md: a sibling sharing the name prefix is outside");
  await rejectsWithCode(attempt(ws.outsideFile), "SKILL_PATH_INVALID", "an absolute request");

  const link = nodePath.join(ws.projectRoot, "skills", "review", "references", "leak.md");
  if (!(await linkOrSkip(t, ws.outsideFile, link))) return;
  await rejectsWithCode(attempt("references/leak.md"), "SKILL_PATH_ESCAPE", "request references/leak.md is a symlink to a file outside the root");
});

// ---------------------------------------------------------------------------
// Lab 12.3 · 模板与 Skill 从两个入口汇入一次模型请求
// ---------------------------------------------------------------------------

test("Lab 12.3 · 模板只替换 {{name}} 并生成 canonical UserMessage", async (t) => {
  const ws = await makeWorkspace(t);
  const catalog = await discoverResources([ws.projectRoot, ws.userRoot]);
  const template = catalog.templates[0]!;

  const earliest = Date.now();
  const message = renderTemplate(template, { target: "src/parser.ts", owner: "runtime", ignored: "extra" });
  const latest = Date.now();
  assert.deepEqual(message, {
    role: "user",
    content: [{ type: "text", text: "Review src/parser.ts; then test src/parser.ts for runtime." }],
    timestamp: message.timestamp,
  });
  assert.ok(message.timestamp >= earliest && message.timestamp <= latest, "timestamp is the render time");

  assert.throws(() => renderTemplate(template, { target: "src/parser.ts" }), { code: "TEMPLATE_ARGUMENT_MISSING" });

  const braces = renderTemplate({ ...template, body: "{{ target }} {{1x}} {x} {{target}}" }, { target: "T" });
  assert.equal(textOf(braces), "{{ target }} {{1x}} {x} T");
});

test("Lab 12.3 · systemPrompt 只经 buildContext 一个入口进入预算", async (t) => {
  const ws = await makeWorkspace(t);
  const catalog = await discoverResources([ws.projectRoot, ws.userRoot]);
  const review = await activateSkill(catalog, "review", { resources: ["references/checklist.md"] });

  const systemPrompt = formatResourceContext(catalog, [review]);
  // Order: instructions, then every skill's metadata, then the active body and its files.
  const at = (piece: string) => {
    const index = systemPrompt.indexOf(piece);
    assert.ok(index >= 0, `"${piece}" must appear in the system prompt`);
    return index;
  };
  const metadata = [at("project review"), at("user lint")];
  assert.ok(at("PROJECT RULES") < Math.min(...metadata));
  assert.ok(Math.max(...metadata) < at("Read the diff first."));
  assert.ok(at("Read the diff first.") < at("tests\nsecurity"));
  assert.ok(at("lint") < at("Read the diff first."), "inactive skills still show their name");
  for (const hidden of ["LINT BODY MARKER", "USER REVIEW BODY", "USER RULES"]) {
    assert.ok(!systemPrompt.includes(hidden), `"${hidden}" must not enter the system prompt`);
  }

  assert.throws(() => formatResourceContext(catalog, [review, review]), { code: "ACTIVATION_DUPLICATE" });
  const userCatalog = await discoverResources([ws.userRoot]);
  const userReview = await activateSkill(userCatalog, "review");
  assert.throws(() => formatResourceContext(catalog, [userReview]), { code: "ACTIVATION_FOREIGN" });

  // The template's message joins the session; the resource text joins as systemPrompt.
  const session = createSession({ newId: () => "e1", now: () => 0 });
  const message = renderTemplate(catalog.templates[0]!, { target: "src/parser.ts", owner: "runtime" });
  session.append(message);
  const projection = buildContext(session.activePath(), {
    maxTokens: 20,
    systemPrompt,
    reservedOutput: 2,
    safetyMargin: 1,
    estimateTokens: () => 1,
  });
  assert.equal(projection.systemPrompt, systemPrompt);
  assert.deepEqual(projection.messages, [message]);
  assert.equal(projection.tokens.system, 1);
});

// ---------------------------------------------------------------------------
// Lab 12.4 · Extension 先获准，再一次性注册
// ---------------------------------------------------------------------------

test("Lab 12.4 · 先 trust 后 import，factory 暂存后一次 commit", async () => {
  const order: string[] = [];
  class RecordingRegistry extends ToolRegistry {
    override register(tool: Tool): void {
      order.push("commit");
      super.register(tool);
    }
  }
  const registry = new RecordingRegistry();
  const host = createExtensionHost(registry, { hookTimeoutMs: 1000 });
  const tool = reviewNoteTool();
  let seenDuringFactory: Tool | undefined | "not run" = "not run";
  const reviewExtension = (context: ExtensionContext) => {
    order.push("factory");
    context.registerTool(tool);
    context.on("beforeToolCall", () => ({ decision: "allow" }));
    context.on("afterToolResult", () => {});
    seenDuringFactory = registry.get("review_note");
  };
  const source = { id: "review-extension", path: "extensions/review-extension.js" };

  const loaded = await loadExtension(source, {
    host,
    isTrusted: () => {
      order.push("trust");
      return true;
    },
    importModule: async () => {
      order.push("import");
      return { default: reviewExtension };
    },
  });
  assert.deepEqual(loaded, { id: "review-extension", status: "active" });
  assert.deepEqual(order, ["trust", "import", "factory", "commit"]);
  assert.equal(seenDuringFactory, undefined, "nothing is registered while the factory runs");
  assert.equal(registry.get("review_note"), tool);

  // Untrusted: the policy is asked, and nothing else happens.
  const untrusted: string[] = [];
  const otherRegistry = new ToolRegistry();
  const skipped = await loadExtension(source, {
    host: createExtensionHost(otherRegistry, { hookTimeoutMs: 1000 }),
    isTrusted: () => {
      untrusted.push("trust");
      return false;
    },
    importModule: async () => {
      untrusted.push("import");
      return { default: reviewExtension };
    },
  });
  assert.deepEqual(skipped, { id: "review-extension", status: "skipped_untrusted" });
  assert.deepEqual(untrusted, ["trust"]);
  assert.deepEqual(otherRegistry.list(), []);
});

test("Lab 12.4 · factory 抛错或工具重名时 Registry 与 hook 零残留", async () => {
  const failures = [
    { label: "factory 抛错", existing: [] as Tool[], explode: true, code: "EXTENSION_FACTORY_FAILED" },
    { label: "与 Registry 已有工具重名", existing: [reviewNoteTool()], explode: false, code: "TOOL_CONFLICT" },
  ];
  for (const failure of failures) {
    const registry = new ToolRegistry(failure.existing);
    const toolsBefore = registry.list();
    const host = createExtensionHost(registry, { hookTimeoutMs: 1000 });
    let stagedHookCalls = 0;

    await assert.rejects(
      loadTrusted(host, "review-extension", (context) => {
        context.registerTool({ ...reviewNoteTool(), name: "review_summary" });
        context.registerTool(reviewNoteTool());
        context.on("beforeToolCall", () => {
          stagedHookCalls += 1;
        });
        context.on("afterToolResult", () => {
          stagedHookCalls += 1;
        });
        if (failure.explode) throw new Error("factory exploded after registering");
      }),
      (error: Error & { code?: string }) => {
        if (error.code === undefined) throw error; // not a contract error: show it as it is
        assert.equal(error.code, failure.code, failure.label);
        return true;
      },
    );

    const toolsAfter = registry.list();
    assert.equal(toolsAfter.length, toolsBefore.length, failure.label);
    toolsAfter.forEach((tool, index) => assert.equal(tool, toolsBefore[index], failure.label));

    // With no committed hook, the wrapper runs core once and passes its result through.
    const { core, facts } = recordingCore();
    const result = await host.wrapExecutor(core)(noteCall());
    assert.equal(facts.length, 1, failure.label);
    assert.deepEqual(result, facts[0], failure.label);
    assert.equal(stagedHookCalls, 0, `${failure.label}: staged hooks must never run`);
  }
});

// ---------------------------------------------------------------------------
// Lab 12.5 · 一次工具调用怎样穿过 hooks
// ---------------------------------------------------------------------------

test("Lab 12.5 · before deny 阻止 core，并返回与调用配对的错误结果", async () => {
  const diagnostics: ExtensionDiagnostic[] = [];
  const host = createExtensionHost(new ToolRegistry(), {
    hookTimeoutMs: 1000,
    onDiagnostic: (diagnostic) => diagnostics.push(diagnostic),
  });
  let afterCalls = 0;
  await loadTrusted(host, "note-policy", (context) => {
    context.on("beforeToolCall", () => ({ decision: "deny", reason: "notes are frozen" }));
    context.on("afterToolResult", () => {
      afterCalls += 1;
    });
  });
  const { core, facts } = recordingCore();

  const result = await host.wrapExecutor(core)(noteCall());
  assert.equal(result.role, "toolResult");
  assert.equal(result.toolCallId, "note-1");
  assert.equal(result.toolName, "review_note");
  assert.equal(result.isError, true);
  assert.deepEqual(result.details, { blockedByExtension: "note-policy", kind: "deny", reason: "notes are frozen" });
  assert.ok(result.content.length > 0 && result.content.every((block) => block.type === "text"));
  assert.equal(facts.length, 0, "core must not run");
  assert.equal(afterCalls, 0, "a blocked result is not a core fact: no after hook");
  assert.deepEqual(diagnostics, [], "a deny is a decision, not a failure");
});

test("Lab 12.5 · before 抛错或超时都 fail-closed 并产生诊断", async () => {
  const failures = [
    {
      kind: "error",
      hook: () => {
        throw new Error("policy crashed");
      },
    },
    { kind: "timeout", hook: () => new Promise<never>(() => {}) },
  ];
  for (const failure of failures) {
    const diagnostics: ExtensionDiagnostic[] = [];
    const host = createExtensionHost(new ToolRegistry(), {
      hookTimeoutMs: 20,
      onDiagnostic: (diagnostic) => diagnostics.push(diagnostic),
    });
    await loadTrusted(host, "flaky-policy", (context) => context.on("beforeToolCall", failure.hook));
    const { core, facts } = recordingCore();

    const result = await host.wrapExecutor(core)(noteCall());
    assert.equal(facts.length, 0, `${failure.kind}: core must not run`);
    assert.equal(result.toolCallId, "note-1");
    assert.equal(result.toolName, "review_note");
    assert.equal(result.isError, true);
    const details = result.details as { blockedByExtension: string; kind: string; reason: unknown };
    assert.equal(details.blockedByExtension, "flaky-policy");
    assert.equal(details.kind, failure.kind);
    assert.equal(typeof details.reason, "string");
    assert.equal(diagnostics.length, 1, `${failure.kind}: exactly one diagnostic`);
    assert.deepEqual(
      { ...diagnostics[0], message: typeof diagnostics[0]?.message },
      { extensionId: "flaky-policy", hook: "beforeToolCall", kind: failure.kind, message: "string" },
    );
  }
});

test("Lab 12.5 · after 失败只产生诊断，core 事实不变且只执行一次", async () => {
  const diagnostics: ExtensionDiagnostic[] = [];
  const host = createExtensionHost(new ToolRegistry(), {
    hookTimeoutMs: 20,
    onDiagnostic: (diagnostic) => diagnostics.push(diagnostic),
  });
  await loadTrusted(host, "broken-observer", (context) =>
    context.on("afterToolResult", () => {
      throw new Error("observer crashed");
    }),
  );
  await loadTrusted(host, "slow-observer", (context) => context.on("afterToolResult", () => new Promise<void>(() => {})));
  const observed: Readonly<ToolResultMessage>[] = [];
  let callWasFrozen = false;
  await loadTrusted(host, "review-extension", (context) => {
    context.on("beforeToolCall", (call) => {
      callWasFrozen = Object.isFrozen(call) && Object.isFrozen(call.arguments);
      return { decision: "allow" };
    });
    context.on("afterToolResult", (result) => {
      observed.push(result);
    });
  });
  const { core, facts } = recordingCore();

  const result = await host.wrapExecutor(core)(noteCall());
  assert.equal(facts.length, 1, "core runs exactly once");
  assert.equal(observed.length, 1, "the successful observer runs exactly once");
  assert.deepEqual(
    diagnostics.map((diagnostic) => [diagnostic.extensionId, diagnostic.hook, diagnostic.kind]),
    [
      ["broken-observer", "afterToolResult", "error"],
      ["slow-observer", "afterToolResult", "timeout"],
    ],
  );

  const fact = facts[0]!;
  assert.deepEqual(result, fact);
  assert.notEqual(result, fact, "the caller gets a copy, never core's object");
  assert.deepEqual(observed[0], fact);
  assert.notEqual(observed[0], fact);
  assert.ok(callWasFrozen, "before hooks see a frozen call");
  assert.ok(Object.isFrozen(observed[0]) && Object.isFrozen(observed[0]?.details), "after hooks see a frozen result");

  (result.details as { stored: { count: number } }).stored.count = 99;
  result.content.push(text("forged by the caller"));
  assert.deepEqual(fact.details, { stored: { count: 1 } });
  assert.equal(fact.content.length, 1);
});
