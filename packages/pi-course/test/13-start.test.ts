/**
 * Chapter 13 · `npm start`: the runtime's scripted session in the sample workspace, as a
 * transcript and as JSON lines, and the command around it. Claimed by chapter 13; not a lab.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import test, { type TestContext } from "node:test";
import {
  DEFAULT_START_CATALOG_BYTES,
  runRuntimeDemo,
  sampleProject,
  sampleUserFolder,
  type RuntimeDemoOptions,
  type RuntimeDemoSummary,
} from "../src/app/runtime-demo.js";
import { failureText, main, USAGE } from "../src/app/runtime-start.js";
import { textOf, type ToolResultMessage } from "../src/types.js";
import { repoRoot, tempDir } from "./support/files.js";

/** What the root package's `npm start` runs after the build, relative to the course root. */
const START = "packages/pi-course/bin/start.mjs";

async function demo(options: Omit<RuntimeDemoOptions, "write"> = {}): Promise<{ lines: string[]; summary: RuntimeDemoSummary }> {
  const lines: string[] = [];
  const summary = await runRuntimeDemo({ workspaceLabel: "examples/workspace", userLabel: "examples/user", ...options, write: (line) => lines.push(line) });
  return { lines, summary };
}

function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const name of readdirSync(path.join(dir, rel)).sort()) {
      const child = path.join(rel, name);
      if (statSync(path.join(dir, child)).isDirectory()) walk(child);
      else out[child] = readFileSync(path.join(dir, child), "utf8");
    }
  };
  walk("");
  return out;
}

test("npm start (chapter 13): the model reads the catalog, loads the skill itself, and the guard blocks rm -rf", async (t) => {
  const scratchParent = tempDir(t);
  const before = [snapshot(sampleProject()), snapshot(sampleUserFolder())];
  const { lines, summary } = await demo({ scratchParent });
  assert.deepEqual(
    { stopReason: summary.stopReason, turns: summary.turns, toolCalls: summary.toolCalls, blocked: summary.blocked, loads: summary.skillLoads },
    {
      stopReason: "stop",
      turns: 5,
      toolCalls: 4,
      blocked: 1,
      loads: [
        { name: "code-review", by: "model" },
        { name: "code-review", by: "model" },
      ],
    },
  );
  assert.deepEqual(
    summary.diagnostics.map((d) => [d.area, d.code]),
    [
      ["resources", "RESOURCE_INVALID"],
      ["resources", "RESOURCE_SHADOWED"],
      ["extensions", "TOOL_CONFLICT"],
    ],
    "a refused file, a shadowed duplicate, a tool conflict",
  );
  assert.deepEqual(
    summary.extensions.map((e) => `${e.origin}:${e.id}:${e.status}`),
    ["user:audit:active", "user:legacy-read:failed", "project:guard:active"],
  );
  assert.deepEqual([summary.catalog.listed, summary.catalog.hidden], [["code-review", "release-notes"], ["deploy"]]);

  const [first, second] = summary.requests;
  assert.ok(first!.systemPrompt.includes(summary.catalog.text), "the catalog is in the system prompt");
  assert.doesNotMatch(first!.systemPrompt, /代码审查清单|发布清单/, "no skill body in the system prompt");
  assert.match(first!.systemPrompt, /# Instructions\n\n# 我的习惯\n[\s\S]*\n\n# 项目约定\n/, "both AGENTS.md reach the system prompt, the user's first");
  const load = second!.messages.find((m): m is ToolResultMessage => m.role === "toolResult" && m.toolName === "load_skill");
  assert.match(textOf(load!), /^# 代码审查清单/, "the body arrives as the load_skill result");
  assert.equal(summary.reload?.status, "reloaded");

  for (const prefix of [
    "目录  examples/workspace · ",
    "诊断  跳过 [RESOURCE_INVALID] examples/user/skills/broken/SKILL.md",
    "资源  指令 2（个人、项目） · ",
    "清单  系统提示里的技能清单",
    "      - code-review: ",
    '调用  load_skill {"name":"code-review"}',
    "技能  激活 code-review",
    "拦截  ✗ 扩展 guard 拒绝了 shell",
    "重载  没有变化",
  ]) {
    assert.ok(
      lines.some((line) => line.startsWith(prefix)),
      `${prefix}\n${lines.join("\n")}`,
    );
  }
  assert.match(lines.at(-1)!, /^结束  stop · 模型调用 5 次 · 工具调用 4 次（被拦截 1 次）· 加载技能 2 次$/);
  assert.ok(!lines.some((line) => line.includes(scratchParent) || line.includes(os.tmpdir())), "no line names a scratch copy");
  assert.deepEqual((await demo({ scratchParent })).lines, lines, "the same transcript every run");
  assert.deepEqual([snapshot(sampleProject()), snapshot(sampleUserFolder())], before, "the sample folders are never changed");
  assert.deepEqual(readdirSync(scratchParent), [], "the scratch copies are removed");
});

test("npm start: the scripted model reads the file a loaded skill's body names, through load_skill's resources", async (t) => {
  const scratchParent = tempDir(t);
  const { lines, summary } = await demo({ scratchParent });
  const results = summary.requests.at(-1)!.messages.filter((m): m is ToolResultMessage => m.role === "toolResult" && m.toolName === "load_skill");
  assert.deepEqual(
    results.map((r) => r.details),
    [
      { name: "code-review", files: ["references/markers.md"] },
      { name: "code-review", resources: ["references/markers.md"] },
    ],
    "the body's result lists the skill's file; the second call reads it",
  );
  assert.match(textOf(results[0]!), /\n\n# Files of skill "code-review"\n\n.*\n\n- references\/markers\.md$/, "the file list follows the body");
  assert.match(textOf(results[1]!), /^# File "references\/markers\.md" of skill "code-review"\n\n# 留下的标记\n/, "the file's text comes back");
  for (const prefix of [
    '调用  load_skill {"name":"code-review","resources":["references/markers.md"]}',
    "技能  读取 code-review 自带的 references/markers.md",
    "      技能 code-review 自带的 references/markers.md 也读过了",
  ])
    assert.ok(
      lines.some((line) => line.startsWith(prefix)),
      `${prefix}\n${lines.join("\n")}`,
    );

  // --skill on a project of its own: the scripted model loads that skill and reads the script its body names.
  const project = tempDir(t);
  mkdirSync(path.join(project, "skills", "pdf", "scripts"), { recursive: true });
  writeFileSync(path.join(project, "skills", "pdf", "SKILL.md"), "---\nname: pdf\ndescription: Use for PDF files.\n---\nRun scripts/extract.py on the file.\n");
  writeFileSync(path.join(project, "skills", "pdf", "scripts", "extract.py"), "print('text')\n");
  writeFileSync(path.join(project, "notes.txt"), "TODO: check\n");
  const own = await demo({ scratchParent, workspace: project, workspaceLabel: "my-project", skill: "pdf" });
  assert.deepEqual(
    own.summary.skillLoads,
    [
      { name: "pdf", by: "model" },
      { name: "pdf", by: "model" },
    ],
    "--skill pdf: the body, then scripts/extract.py",
  );
  assert.ok(
    own.lines.some((line) => line.startsWith("技能  读取 pdf 自带的 scripts/extract.py")),
    own.lines.join("\n"),
  );
});

test("npm start -- --json: one event a line, the same session", async (t) => {
  const scratchParent = tempDir(t);
  const { lines } = await demo({ scratchParent, format: "json" });
  const events = lines.map((line) => JSON.parse(line) as { type: string } & Record<string, unknown>);
  const types = new Set(events.map((e) => e.type));
  for (const type of ["session", "diagnostic", "catalog", "request", "tool_call", "tool_result", "skill_load", "reload", "end"])
    assert.ok(types.has(type), type);
  const request = events.find((e) => e.type === "request")!;
  assert.match(String(request.systemPrompt), /# Skills\n\n/);
  const call = events.find((e) => e.type === "tool_call" && e.name === "load_skill")!;
  const result = events.find((e) => e.type === "tool_result" && e.toolCallId === call.id)!;
  assert.match(String(result.text), /^# 代码审查清单/);
  assert.ok(!lines.some((line) => line.includes(scratchParent)), "no line names a scratch copy");
  assert.deepEqual((await demo({ scratchParent, format: "json" })).lines, lines, "no timestamps: the same lines every run");
});

test("npm start: an untrusted project runs none of its code; /skill: forces a hidden skill", async (t) => {
  const root = path.join(tempDir(t), "project");
  mkdirSync(path.join(root, "extensions"), { recursive: true });
  mkdirSync(path.join(root, "skills", "secret"), { recursive: true });
  const marker = path.join(root, "..", "imported");
  writeFileSync(
    path.join(root, "extensions", "deny.mjs"),
    `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "yes");\nexport default () => {};\n`,
  );
  writeFileSync(
    path.join(root, "skills", "secret", "SKILL.md"),
    "---\nname: secret\ndescription: only for the user\ndisable-model-invocation: true\n---\nSECRET STEPS\n",
  );
  writeFileSync(path.join(root, "app.txt"), "hello\n");
  const { lines, summary } = await demo({ workspace: root, workspaceLabel: "project", input: "/skill:secret 照做" });
  assert.deepEqual(summary.extensions, [{ id: "deny", origin: "project", status: "skipped_untrusted" }]);
  assert.throws(() => statSync(marker), { code: "ENOENT" }, "the untrusted module was never imported");
  assert.ok(lines.some((line) => line.startsWith("信任  项目不受信任")));
  assert.deepEqual(summary.skillLoads, [{ name: "secret", by: "user" }]);
  assert.match(textOf(summary.requests[0]!.messages[0]!), /SECRET STEPS\n\n照做$/);
  assert.ok(!summary.requests[0]!.systemPrompt.includes("secret"), "hidden from the model's catalog");
});

test("npm start command line (chapter 13): help, usage mistakes, failures", async (t) => {
  const run = async (argv: string[], cwd = repoRoot) => {
    let out = "";
    let err = "";
    const status = await main(argv, { out: (s) => (out += s), err: (s) => (err += s), cwd });
    return { status, out, err };
  };
  assert.deepEqual(await run(["--help"]), { status: 0, out: USAGE, err: "" });
  for (const argv of [["--bogus"], ["stray"], ["--user", "x", "--no-user"], ["--max-catalog-bytes", "-1"], ["--max-catalog-bytes", "1.5"], ["--input"]]) {
    const result = await run(argv);
    assert.equal(result.status, 2, argv.join(" "));
    assert.match(result.err, /^用法错误：/);
  }
  const dir = tempDir(t);
  const missing = await run(["--workspace", "missing"], dir);
  assert.equal(missing.status, 1);
  assert.match(missing.err, /^错误  \[DEMO_WORKSPACE_MISSING\] /);
  const json = await run(["--workspace", "missing", "--json"], dir);
  assert.deepEqual(JSON.parse(json.out), { type: "error", code: "DEMO_WORKSPACE_MISSING", message: JSON.parse(json.out).message });

  assert.equal(
    failureText(new Error("Lab 13.2 load_skill 尚未实现")),
    "未完成  Lab 13.2 load_skill 尚未实现\n      npm start 用的是你写的 packages/pi-course/src/runtime.ts：完成 Lab 13.2 及之后的 Lab，再来看整次会话\n",
  );
  assert.match(
    failureText(Object.assign(new Error("examples/user/skills/broken/SKILL.md: invalid YAML"), { code: "RESOURCE_INVALID" })),
    /^错误  \[RESOURCE_INVALID\] examples\/user[^\n]*\n .*宽松/,
  );
  const failing = (error: Error) => async (): Promise<RuntimeDemoSummary> => {
    throw error;
  };
  const status = (error: Error, env: NodeJS.ProcessEnv) => main([], { out: () => {}, err: () => {}, cwd: repoRoot, env, run: failing(error) });
  assert.equal(await status(new Error("Lab 13.1 skill catalog 尚未实现"), {}), 0);
  assert.equal(await status(new Error("Lab 13.1 skill catalog 尚未实现"), { CI: "1" }), 1);
  assert.equal(await status(new Error("boom"), {}), 1);
});

test("npm start's script (packages/pi-course/bin/start.mjs) runs the runtime's session where its source is, and chapter 12's demo otherwise", (t) => {
  const script = path.join(repoRoot, START);
  const run = spawnSync(process.execPath, [script], { cwd: tempDir(t), encoding: "utf8", env: { ...process.env, INIT_CWD: repoRoot } });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /\n清单  系统提示里的技能清单/);

  // A build left over from chapter 13 in a chapter 12 checkout: its runtime-start.ts is gone.
  const tree = tempDir(t);
  mkdirSync(path.join(tree, path.dirname(START)), { recursive: true });
  writeFileSync(path.join(tree, START), readFileSync(script));
  mkdirSync(path.join(tree, "packages", "pi-course", "src", "app"), { recursive: true });
  mkdirSync(path.join(tree, "packages", "pi-course", "dist", "src", "app"), { recursive: true });
  writeFileSync(path.join(tree, "packages", "pi-course", "src", "app", "start.ts"), "");
  for (const name of ["start", "runtime-start"]) {
    writeFileSync(
      path.join(tree, "packages", "pi-course", "dist", "src", "app", `${name}.js`),
      `export async function main() { console.log(${JSON.stringify(name)}); return 0; }\n`,
    );
  }
  const twelve = spawnSync(process.execPath, [path.join(tree, START)], { encoding: "utf8" });
  assert.equal(twelve.stdout, "start\n");
  writeFileSync(path.join(tree, "packages", "pi-course", "src", "app", "runtime-start.ts"), "");
  const thirteen = spawnSync(process.execPath, [path.join(tree, START)], { encoding: "utf8" });
  assert.equal(thirteen.stdout, "runtime-start\n");
});

// ---------------------------------------------------------------------------
// Chapter 13 in the real world: npm start on projects other than the sample
// ---------------------------------------------------------------------------

/** A project with one file and no `templates/review.md`. */
function foreignProject(t: TestContext, files: Record<string, string> = { "README.md": "# A project\n\nNothing to see.\n" }): string {
  const root = path.join(tempDir(t), "foreign");
  for (const [name, body] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    writeFileSync(path.join(root, name), body);
  }
  mkdirSync(root, { recursive: true });
  return root;
}

async function runMain(argv: string[], cwd = repoRoot): Promise<{ status: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const status = await main(argv, { out: (s) => (out += s), err: (s) => (err += s), cwd, env: {} });
  return { status, out, err };
}

test("npm start --workspace <any project>: the default turn is a plain review request unless the project has templates/review.md", async (t) => {
  const root = foreignProject(t);
  const plain = await runMain(["--workspace", root]);
  assert.equal(plain.status, 0, plain.out + plain.err);
  assert.match(plain.out, /\n用户  请审查 README\.md，/);
  assert.match(plain.out, /\n结束  stop /);

  mkdirSync(path.join(root, "templates"));
  writeFileSync(path.join(root, "templates", "review.md"), "---\ndescription: review\n---\n按清单审查 {{file}}。\n");
  const templated = await runMain(["--workspace", root]);
  assert.equal(templated.status, 0, templated.out + templated.err);
  assert.match(templated.out, /\n用户  （\/template:review file=README\.md）按清单审查 README\.md。/);

  const named = await runMain(["--workspace", root, "--input", "/template:nope"]);
  assert.equal(named.status, 1);
  assert.match(named.err, /^错误  \[TEMPLATE_NOT_FOUND\] /, "a template the user names is still required");
  assert.match(USAGE, /没有时是一句普通的话/);
});

test("npm start: a request over the context budget names --context-tokens and the figure it needs", async () => {
  const big = "很长".repeat(20_000);
  const text = await runMain(["--input", big]);
  assert.equal(text.status, 1);
  const total = /= (\d+) tokens，超过上限 8000/.exec(text.err)?.[1];
  assert.ok(total !== undefined, text.err);
  assert.match(text.err, new RegExp(`\\n {6}要让它放得下：--context-tokens ${total}（或更大`));
  const json = await runMain(["--input", big, "--json"]);
  const error = JSON.parse(json.out.trimEnd().split("\n").at(-1)!) as Record<string, unknown>;
  assert.deepEqual([error.code, error.option, error.contextTokensNeeded], ["RUNTIME_CONTEXT_OVERFLOW", "--context-tokens", Number(total)]);
  const fits = await runMain(["--input", big, "--context-tokens", total!]);
  assert.match(fits.out, new RegExp(`\\n请求  #1 .* = ${total} / ${total} tokens\\n`), "the figure it names is enough for that request to be sent");
});

/** 17 skills shaped like the public anthropics/skills repository: its names, descriptions of one to three sentences. */
const SKILLS_LIKE_ANTHROPICS: Record<string, string> = {
  "algorithmic-art":
    "Creating algorithmic art using p5.js with seeded randomness and interactive parameter exploration. Use this when users request creating art using code, generative art, algorithmic art, flow fields, or particle systems.",
  "artifacts-builder":
    "Suite of tools for creating elaborate, multi-component HTML artifacts using modern frontend web technologies (React, Tailwind CSS, shadcn/ui). Use for complex artifacts requiring state management, routing, or shadcn/ui components, not for simple single-file HTML or JSX artifacts.",
  "brand-guidelines":
    "Applies the company's official brand colors and typography to any sort of artifact that may benefit from having its look and feel. Use it when brand colors or style guidelines, visual formatting, or company design standards apply.",
  "canvas-design":
    "Create beautiful visual art in .png and .pdf documents using design philosophy. You should use this skill when the user asks to create a poster, piece of art, design, or other static piece. Create original visual designs, never copying existing artists' work to avoid copyright violations.",
  "doc-coauthoring":
    "Guides the user through a structured workflow for co-authoring documentation: proposals, technical specs, decision docs. Use when the user wants to write a document together, transfer context efficiently, refine content through iteration, and check that the document works for its readers.",
  docx: "Comprehensive document creation, editing, and analysis with support for tracked changes, comments, formatting preservation, and text extraction. Use when working with professional documents (.docx files) for creating new documents, modifying or editing content, working with tracked changes, or adding comments.",
  "frontend-design":
    "Create distinctive, production-grade frontend interfaces with high design quality. Use this skill when the user asks to build web components, pages, or applications. Generates creative, polished code that avoids generic looking interfaces.",
  "internal-comms":
    "A set of resources to help write all kinds of internal communications, using the formats the company likes to use. Use this skill whenever asked to write status reports, leadership updates, company newsletters, FAQs, incident reports or project updates.",
  "mcp-builder":
    "Guide for creating high-quality MCP (Model Context Protocol) servers that enable LLMs to interact with external services through well-designed tools. Use when building MCP servers to integrate external APIs or services, whether in Python (FastMCP) or Node/TypeScript (MCP SDK).",
  pdf: "Comprehensive PDF manipulation toolkit for extracting text and tables, creating new PDFs, merging and splitting documents, and handling forms. Use when filling in a PDF form or programmatically processing, generating, or analyzing PDF documents at scale.",
  pptx: "Presentation creation, editing, and analysis. Use when working with presentations (.pptx files) for creating new presentations, modifying or editing content, working with layouts, adding comments or speaker notes, or any other presentation task.",
  "skill-creator":
    "Guide for creating effective skills. This skill should be used when users want to create a new skill (or update an existing skill) that extends the agent's capabilities with specialized knowledge, workflows, or tool integrations.",
  "slack-gif-creator":
    'Knowledge and utilities for creating animated GIFs optimized for Slack. Provides constraints, validation tools, and animation concepts. Use when users request animated GIFs for Slack like "make me a GIF of X doing Y for Slack".',
  "template-skill":
    "Replace with a description of the skill and when the agent should use it. A clear description says what the skill does, which files or tasks it covers, and when to reach for it.",
  "theme-factory":
    "Toolkit for styling artifacts with a theme. These artifacts can be slides, docs, reports, HTML landing pages, etc. There are ten pre-set themes with colors and fonts that you can apply to any artifact that has been created, or it can generate a new theme on the fly.",
  "webapp-testing":
    "Toolkit for interacting with and testing local web applications using Playwright. Supports verifying frontend functionality, debugging UI behavior, capturing browser screenshots, and viewing browser logs.",
  xlsx: "Comprehensive spreadsheet creation, editing, and analysis with support for formulas, formatting, data analysis, and visualization. Use when working with spreadsheets (.xlsx, .xlsm, .csv, .tsv) to create new ones with formulas, read or analyze data, modify them while preserving formulas, or recalculate formulas.",
};

function skillsRepository(t: TestContext): string {
  const files: Record<string, string> = { "README.md": "# Skills\n" };
  for (const [name, description] of Object.entries(SKILLS_LIKE_ANTHROPICS))
    files[`skills/${name}/SKILL.md`] = `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n---\n# ${name}\n\nSteps.\n`;
  return foreignProject(t, files);
}

test("npm start: the skill catalog's default budget lists a real skills repository; skills it drops are a diagnostic naming --max-catalog-bytes", async (t) => {
  const lengths = Object.values(SKILLS_LIKE_ANTHROPICS).map((description) => description.length);
  assert.equal(lengths.length, 17);
  assert.ok(Math.min(...lengths) >= 150 && Math.max(...lengths) <= 400, "descriptions of one to three sentences");
  const root = skillsRepository(t);

  const listed = await demo({ workspace: root, workspaceLabel: "skills" });
  assert.equal(listed.summary.catalog.listed.length, 17, "the default budget lists all 17");
  assert.deepEqual(listed.summary.catalog.dropped, []);
  const needed = Buffer.byteLength(listed.summary.catalog.text, "utf8");
  assert.ok(needed > 4096 && needed <= DEFAULT_START_CATALOG_BYTES / 1.5, `measured ${needed} bytes: over the runtime's 4096, well within the app's default`);
  assert.ok(!listed.lines.some((line) => line.includes("SKILL_CATALOG_OVER_BUDGET")));

  const small = await demo({ workspace: root, workspaceLabel: "skills", maxCatalogBytes: 4096 });
  assert.ok(small.summary.catalog.dropped.length > 0);
  const diagnostic = small.lines.find((line) => line.startsWith("诊断  提醒 [SKILL_CATALOG_OVER_BUDGET] "));
  assert.ok(diagnostic !== undefined, small.lines.join("\n"));
  assert.ok(diagnostic.includes(`--max-catalog-bytes ${needed}`), diagnostic);
  for (const name of small.summary.catalog.dropped) assert.ok(diagnostic.includes(name), name);

  const json = await demo({ workspace: root, workspaceLabel: "skills", maxCatalogBytes: 4096, format: "json" });
  const event = json.lines.map((line) => JSON.parse(line) as Record<string, unknown>).find((e) => e.code === "SKILL_CATALOG_OVER_BUDGET");
  assert.deepEqual(
    [event?.type, event?.option, event?.bytesNeeded, event?.dropped],
    ["diagnostic", "--max-catalog-bytes", needed, small.summary.catalog.dropped],
  );
  assert.match(USAGE, new RegExp(`--max-catalog-bytes <n>  技能清单的字节预算（默认 ${DEFAULT_START_CATALOG_BYTES}）`));
});

test("npm start on a foreign project: the scripted model's answer is a whole sentence, and a /skill: load counts only when its turn was sent", async (t) => {
  const readme = Array.from({ length: 96 }, (_, i) => `line ${i + 1}`).join("\n");
  const root = foreignProject(t, {
    "README.md": readme,
    "skills/skill-creator/SKILL.md": "---\nname: skill-creator\ndescription: Guide for creating effective skills.\n---\n# Skill creator\n",
    "skills/huge/SKILL.md": `---\nname: huge\ndescription: A very long skill.\n---\n${"步骤。".repeat(12_000)}\n`,
  });
  const { lines, summary } = await demo({ workspace: root, workspaceLabel: "foreign", input: "/skill:skill-creator" });
  const answer = lines.find((line) => line.includes("审查了 README.md"));
  assert.ok(answer !== undefined, lines.join("\n"));
  assert.match(answer, /参照用户给的技能 skill-creator，审查了 README\.md（96 行），没有找到留下的 TODO \/ FIXME。$/);
  assert.ok(!lines.some((line) => /[：:]$/.test(line) && line.startsWith("      ")), "no answer line ends on a colon with nothing after it");
  assert.equal(summary.stopReason, "stop");

  const refused = await runMain(["--workspace", root, "--input", "/skill:huge"]);
  assert.equal(refused.status, 1);
  assert.match(refused.err, /\[RUNTIME_CONTEXT_OVERFLOW\]/);
  assert.doesNotMatch(refused.out, /技能  激活 huge/, "the load of a turn never sent is not shown as done");
  assert.match(refused.out, /\n用户  （\/skill:huge）/, "what the user said is shown");
});
