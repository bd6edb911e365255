/**
 * Chapter 13 · `npm start`: the runtime's scripted session in the sample workspace, as a
 * transcript and as JSON lines, and the command around it. Claimed by chapter 13; not a lab.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { runRuntimeDemo, sampleProject, sampleUserFolder, type RuntimeDemoOptions, type RuntimeDemoSummary } from "../src/runtime-demo.js";
import { failureText, main, USAGE } from "../src/runtime-start.js";
import { textOf, type ToolResultMessage } from "../src/types.js";
import { repoRoot, tempDir } from "./support/files.js";

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
    { stopReason: "stop", turns: 4, toolCalls: 3, blocked: 1, loads: [{ name: "code-review", by: "model" }] },
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
  const load = second!.messages.find((m): m is ToolResultMessage => m.role === "toolResult" && m.toolName === "load_skill");
  assert.match(textOf(load!), /^# 代码审查清单/, "the body arrives as the load_skill result");
  assert.equal(summary.reload?.status, "reloaded");

  for (const prefix of [
    "目录  examples/workspace · ",
    "诊断  跳过 [RESOURCE_INVALID] examples/user/skills/broken/SKILL.md",
    "清单  系统提示里的技能目录",
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
  assert.match(lines.at(-1)!, /^结束  stop · 模型调用 4 次 · 工具调用 3 次（被拦截 1 次）· 加载技能 1 次$/);
  assert.ok(!lines.some((line) => line.includes(scratchParent) || line.includes(os.tmpdir())), "no line names a scratch copy");
  assert.deepEqual((await demo({ scratchParent })).lines, lines, "the same transcript every run");
  assert.deepEqual([snapshot(sampleProject()), snapshot(sampleUserFolder())], before, "the sample folders are never changed");
  assert.deepEqual(readdirSync(scratchParent), [], "the scratch copies are removed");
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

test("scripts/start.mjs runs the runtime's session where its source is, and chapter 12's demo otherwise", (t) => {
  const script = path.join(repoRoot, "scripts", "start.mjs");
  const run = spawnSync(process.execPath, [script], { cwd: tempDir(t), encoding: "utf8", env: { ...process.env, INIT_CWD: repoRoot } });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /\n清单  系统提示里的技能目录/);

  // A build left over from chapter 13 in a chapter 12 checkout: its runtime-start.ts is gone.
  const tree = tempDir(t);
  mkdirSync(path.join(tree, "scripts"));
  writeFileSync(path.join(tree, "scripts", "start.mjs"), readFileSync(script));
  mkdirSync(path.join(tree, "packages", "pi-course", "src"), { recursive: true });
  mkdirSync(path.join(tree, "packages", "pi-course", "dist", "src"), { recursive: true });
  writeFileSync(path.join(tree, "packages", "pi-course", "src", "start.ts"), "");
  for (const name of ["start", "runtime-start"]) {
    writeFileSync(
      path.join(tree, "packages", "pi-course", "dist", "src", `${name}.js`),
      `export async function main() { console.log(${JSON.stringify(name)}); return 0; }\n`,
    );
  }
  const twelve = spawnSync(process.execPath, [path.join(tree, "scripts", "start.mjs")], { encoding: "utf8" });
  assert.equal(twelve.stdout, "start\n");
  writeFileSync(path.join(tree, "packages", "pi-course", "src", "runtime-start.ts"), "");
  const thirteen = spawnSync(process.execPath, [path.join(tree, "scripts", "start.mjs")], { encoding: "utf8" });
  assert.equal(thirteen.stdout, "runtime-start\n");
});
