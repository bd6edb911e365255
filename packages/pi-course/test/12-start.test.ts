import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import test from "node:test";
import { runDemo, sampleWorkspace, type DemoOptions, type DemoSummary } from "../src/app/demo.js";
import { failureText, main, USAGE } from "../src/app/start.js";
import { textOf, type ToolResultMessage } from "../src/types.js";
import { repoRoot, tempDir } from "./support/files.js";

/** What the root package's `npm start` runs after the build, relative to the course root. */
const START = "packages/pi-course/bin/start.mjs";

async function demo(options: Omit<DemoOptions, "write"> = {}): Promise<{ lines: string[]; summary: DemoSummary }> {
  const lines: string[] = [];
  const summary = await runDemo({ ...options, write: (line) => lines.push(line) });
  return { lines, summary };
}

/** Every file under `dir` with its content, to prove a run left a folder exactly as it was. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const name of readdirSync(path.join(dir, rel)).sort()) {
      const child = path.join(rel, name);
      if (statSync(path.join(dir, child)).isDirectory()) {
        out[`${child}/`] = "";
        walk(child);
      } else out[child] = readFileSync(path.join(dir, child), "utf8");
    }
  };
  walk("");
  return out;
}

/** A small workspace: rules, a project file (the first in name order), a build folder, optionally one extension. */
function makeWorkspace(dir: string, extension?: string): string {
  const root = path.join(dir, "project");
  mkdirSync(path.join(root, "build"), { recursive: true });
  writeFileSync(path.join(root, "AGENTS.md"), "# rules\n");
  writeFileSync(path.join(root, "app.txt"), "hello\nTODO: write more\n");
  writeFileSync(path.join(root, "build", "out.js"), "built\n");
  if (extension !== undefined) {
    mkdirSync(path.join(root, "extensions"));
    writeFileSync(path.join(root, "extensions", "deny.mjs"), extension);
  }
  return root;
}

test("npm start: the sample session activates a skill, renders a template, and an extension blocks the dangerous shell call", async (t) => {
  const scratchParent = tempDir(t);
  const before = snapshot(sampleWorkspace());
  const { lines, summary } = await demo({ scratchParent });
  assert.deepEqual(
    {
      stopReason: summary.stopReason,
      turns: summary.turns,
      toolCalls: summary.toolCalls,
      blocked: summary.blocked,
      skill: summary.skill,
      template: summary.template,
      extensions: summary.extensions,
    },
    { stopReason: "stop", turns: 4, toolCalls: 3, blocked: 1, skill: "code-review", template: "review", extensions: [{ id: "guard", status: "active" }] },
  );

  // The activated skill reached the model through the system prompt; the inactive one only by name.
  const [first] = summary.requests;
  assert.match(first!.systemPrompt, /不要删除任何文件/, "AGENTS.md");
  assert.match(first!.systemPrompt, /# 代码审查清单/, "the activated skill's body");
  assert.match(first!.systemPrompt, /release-notes: Use when drafting release notes/, "the other skill's name and description");
  assert.doesNotMatch(first!.systemPrompt, /发布说明写法/, "never the body of a skill that was not activated");
  assert.deepEqual(
    first!.messages.map((m) => textOf(m)),
    ["请按项目约定审查 src/greet.js，列出你发现的问题，但先不要修改任何文件。"],
  );

  // The blocked call was answered with a paired error result, and the loop handed it back to the model.
  const last = summary.requests.at(-1)!;
  const shellCall = last.messages.flatMap((m) => (m.role === "assistant" ? m.content : [])).find((b) => b.type === "toolCall" && b.name === "shell");
  const answer = last.messages.find((m): m is ToolResultMessage => m.role === "toolResult" && m.toolName === "shell");
  assert.ok(shellCall?.type === "toolCall" && answer !== undefined);
  assert.equal(answer.toolCallId, shellCall.id);
  assert.equal(answer.isError, true);
  assert.deepEqual(answer.details, { blockedByExtension: "guard", kind: "deny", reason: "递归或强制删除（rm -r / rm -f）必须先征得用户同意" });

  assert.ok(
    lines.some((l) => l.startsWith("技能  激活 code-review")),
    lines.join("\n"),
  );
  assert.ok(lines.some((l) => l.startsWith("拦截  ✗ 扩展 guard 拒绝了 shell")));
  assert.ok(
    lines.some((l) => l.includes("第 3 行：// TODO")),
    "the final answer reports what the tools returned",
  );
  assert.match(lines.at(-1)!, /^结束  stop · 模型调用 4 次 · 工具调用 3 次（被拦截 1 次）$/);

  assert.deepEqual((await demo({ scratchParent })).lines, lines, "the same transcript every run");
  assert.deepEqual(snapshot(sampleWorkspace()), before, "the sample workspace is never changed");
  assert.deepEqual(readdirSync(scratchParent), [], "the scratch copy is removed");
});

test("npm start: tools act on a copy, so an unguarded workspace keeps its files", async (t) => {
  const root = makeWorkspace(tempDir(t));
  const before = snapshot(root);
  const { lines, summary } = await demo({ workspace: root, scratchParent: tempDir(t) });
  assert.equal(summary.blocked, 0);
  assert.ok(lines.includes("扩展  无（extensions/*.mjs）"));
  assert.ok(
    lines.some((l) => l.startsWith("结果  ✓ (no output)")),
    "rm -rf build ran, in the copy",
  );
  assert.deepEqual(snapshot(root), before);
  assert.ok(lines.some((l) => l.includes("第 2 行：TODO: write more")));
});

test("npm start: another workspace's extension is not imported unless trusted", async (t) => {
  const dir = tempDir(t);
  const marker = path.join(dir, "imported");
  const source = `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "yes");\nexport default (pi) => pi.on("beforeToolCall", (call) => (call.name === "shell" ? { decision: "deny", reason: "no shell here" } : undefined));\n`;
  const root = makeWorkspace(dir, source);

  const untrusted = await demo({ workspace: root });
  assert.deepEqual(untrusted.summary.extensions, [{ id: "deny", status: "skipped_untrusted" }]);
  assert.equal(existsSync(marker), false, "an untrusted extension is never imported");
  assert.ok(untrusted.lines.some((l) => l.includes("未受信任")));

  const trusted = await demo({ workspace: root, trustExtensions: true });
  assert.deepEqual(trusted.summary.extensions, [{ id: "deny", status: "active" }]);
  assert.equal(existsSync(marker), true);
  assert.equal(trusted.summary.blocked, 1);
});

test("npm start: a workspace that cannot be used is a coded error, and nothing is left behind", async (t) => {
  const dir = tempDir(t);
  const scratchParent = tempDir(t);
  const root = makeWorkspace(dir);
  const cases: [Omit<DemoOptions, "write">, string][] = [
    [{ workspace: path.join(dir, "missing") }, "DEMO_WORKSPACE_MISSING"],
    [{ workspace: path.join(root, "app.txt") }, "DEMO_WORKSPACE_NOT_DIRECTORY"],
    [{ workspace: root, limits: { maxFiles: 2 } }, "DEMO_WORKSPACE_TOO_LARGE"],
    [{ workspace: root, template: "nope" }, "DEMO_TEMPLATE_NOT_FOUND"],
    [{ workspace: root, skill: "nope" }, "DEMO_SKILL_NOT_FOUND"],
  ];
  for (const [options, code] of cases) {
    await assert.rejects(demo({ ...options, scratchParent }), { code }, code);
    assert.deepEqual(readdirSync(scratchParent), [], `${code}: no scratch copy left`);
  }
  // A template placeholder without an argument keeps chapter 12's own code.
  const templated = makeWorkspace(path.join(dir, "t"));
  mkdirSync(path.join(templated, "templates"));
  writeFileSync(path.join(templated, "templates", "fix.md"), "Fix {{file}} for {{reason}}\n");
  await assert.rejects(demo({ workspace: templated, scratchParent }), { code: "TEMPLATE_ARGUMENT_MISSING" });
  const fixed = await demo({ workspace: templated, scratchParent, args: { reason: "speed" } });
  assert.equal(textOf(fixed.summary.requests[0]!.messages[0]!), "Fix app.txt for speed");
});

test("npm start: a resource that cannot be used names the workspace's file, never the scratch copy, and says what to do", async (t) => {
  const root = makeWorkspace(tempDir(t));
  mkdirSync(path.join(root, "skills", "big"), { recursive: true });
  writeFileSync(path.join(root, "skills", "big", "SKILL.md"), `---\nname: big\ndescription: too large to activate\n---\n${"x".repeat(1024 * 1024 + 1)}`);
  const scratchParent = tempDir(t);
  let message = "";
  await assert.rejects(demo({ workspace: root, scratchParent }), (error: Error & { code?: string }) => {
    assert.equal(error.code, "RESOURCE_TOO_LARGE");
    message = error.message;
    return true;
  });
  assert.ok(message.includes(path.join(root, "skills", "big", "SKILL.md")), message);
  assert.ok(!message.includes(scratchParent), message);
  assert.match(
    failureText(Object.assign(new Error(message), { code: "RESOURCE_INVALID" })),
    /宽松发现[^\n]*\n[^\n]*严格模式[^\n]*第 12 章挑战关 10\.1 节的内容/,
  );
});

test("npm start command line: help, usage mistakes exit 2, a bad workspace exits 1 with its code", async (t) => {
  const run = async (argv: string[], cwd = repoRoot) => {
    let out = "";
    let err = "";
    const status = await main(argv, { out: (s) => (out += s), err: (s) => (err += s), cwd });
    return { status, out, err };
  };
  assert.deepEqual(await run(["--help"]), { status: 0, out: USAGE, err: "" });
  for (const argv of [["--bogus"], ["stray"], ["--arg", "novalue"], ["--arg", "1x=y"], ["--workspace"]]) {
    const result = await run(argv);
    assert.equal(result.status, 2, argv.join(" "));
    assert.match(result.err, /^用法错误：/);
  }
  const dir = tempDir(t);
  const missing = await run(["--workspace", "missing"], dir);
  assert.equal(missing.status, 1);
  assert.match(missing.err, /^错误  \[DEMO_WORKSPACE_MISSING\] 工作区 .*missing 不存在\n$/);
  makeWorkspace(dir);
  const relative = await run(["--workspace", "project", "--arg", "file=build/out.js"], dir);
  assert.equal(relative.status, 0, relative.err);
  assert.match(relative.out, /^目录  project · /);
  assert.match(relative.out, /调用  read \{"path":"build\/out.js"\}/, "--arg reaches the template and the script");
});

test("npm start runs the compiled command: transcript on stdout, exit 0, paths relative to where the user typed it", (t) => {
  // What the root package's start script runs after the build.
  const script = path.join(repoRoot, START);
  // npm runs the script in the package folder and says where the user was in INIT_CWD.
  const run = spawnSync(process.execPath, [script, "--workspace", "examples/workspace"], {
    cwd: tempDir(t),
    encoding: "utf8",
    env: { ...process.env, INIT_CWD: repoRoot },
  });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stderr, "");
  assert.match(run.stdout, /^目录  examples\/workspace · /);
  assert.match(run.stdout, /\n技能  激活 code-review/);
  assert.match(run.stdout, /\n拦截  ✗ 扩展 guard 拒绝了 shell/);
});

test("npm start: discovery is lenient, so a broken skill is reported and skipped while the session still runs", async (t) => {
  const root = makeWorkspace(tempDir(t));
  for (const [name, text] of [
    ["good", "---\nname: good\ndescription: reviews carefully\n---\nRead the diff first.\n"],
    ["broken", "---\nname: broken\ndescription: has: an unquoted colon\n---\nbody\n"],
    ["Loud", "---\nname: Loud\ndescription: a name the Agent Skills rules warn about\n---\nbody\n"],
  ]) {
    mkdirSync(path.join(root, "skills", name!), { recursive: true });
    writeFileSync(path.join(root, "skills", name!, "SKILL.md"), text!);
  }
  const { lines, summary } = await demo({ workspace: root, skill: "good" });
  assert.equal(summary.stopReason, "stop");
  assert.equal(summary.skill, "good");
  const diagnostics = lines.filter((l) => l.startsWith("诊断"));
  assert.deepEqual(
    diagnostics.map((l) => /^诊断  (\S+) (\S+) \[(\w+)\]/.exec(l)?.slice(1)),
    [
      ["提醒", "skills/Loud/SKILL.md", "SKILL_NAME_FORMAT"],
      ["跳过", "skills/broken/SKILL.md", "RESOURCE_INVALID"],
    ],
    diagnostics.join("\n"),
  );
  assert.ok(
    lines.some((l) => l.startsWith("资源") && l.includes("技能 2（Loud、good）")),
    lines.join("\n"),
  );
});

test("npm start where the demo is not built or not finished says what to do instead of crashing", async (t) => {
  // A checkout before chapter 12: npm start's script is there, the compiled demo is not.
  const early = tempDir(t);
  mkdirSync(path.join(early, path.dirname(START)), { recursive: true });
  copyFileSync(path.join(repoRoot, START), path.join(early, START));
  const run = spawnSync(process.execPath, [path.join(early, START)], { encoding: "utf8" });
  assert.equal(run.status, 1);
  assert.match(run.stderr, /第 12 章的演示会话/);
  assert.doesNotMatch(run.stderr, /ERR_MODULE_NOT_FOUND|at /);
  // A practice folder whose resources.ts is still the starter: the scaffold error names the lab.
  assert.equal(
    failureText(new Error("Lab 12.2 skill activation 尚未实现")),
    "未完成  Lab 12.2 skill activation 尚未实现\n      npm start 用的是你写的 resources.ts：完成 Lab 12.2 及之后的 Lab，再来看整次会话\n",
  );
  assert.equal(failureText(Object.assign(new Error("x"), { code: "DEMO_WORKSPACE_MISSING" })), "错误  [DEMO_WORKSPACE_MISSING] x\n");
  // Stopping at an unfinished lab is a result (exit 0), except in CI; any other failure exits 1.
  const failing = (error: Error) => async (): Promise<DemoSummary> => {
    throw error;
  };
  const status = (error: Error, env: NodeJS.ProcessEnv) => main([], { out: () => {}, err: () => {}, cwd: repoRoot, env, run: failing(error) });
  const unfinished = new Error("Lab 12.1 resource catalog 尚未实现");
  assert.equal(await status(unfinished, {}), 0);
  assert.equal(await status(unfinished, { CI: "true" }), 1);
  assert.equal(await status(new Error("boom"), {}), 1);
});
