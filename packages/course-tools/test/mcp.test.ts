/**
 * The `mcp` command (`packages/course-tools/src/mcp.ts`, `lib/mcp/server.ts`) end to end, through the SDK's
 * own `Client` and `StdioClientTransport` spawning the server in a practice folder: the
 * four tools and the prompt are listed and answer (text and data matching their schemas),
 * a hint climbs the same stored ladder as `hint`, a section comes without the replay's
 * markup, the server refuses outside a practice folder (at start and at every call), npm
 * started with `--silent` leaves stdout to the protocol from its first byte, and on the real
 * chapter 12 no answer carries a line of the reference `resources.ts` the starter lacks.
 *
 * The synthetic mini course (chapter 99) keeps the lab runs fast; on chapter 12 the tools
 * answer in this process (its sections, hints and prompt, from the files of its folder).
 */
import assert from "node:assert/strict";
import { spawn, spawnSync, type SpawnSyncReturns } from "node:child_process";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { parseCommand } from "../src/cli.js";
import { practiceTools } from "../src/mcp.js";
import { PRACTICE_MARKER } from "../src/core/paths.js";
import { learnerManifestText } from "../src/course/faults.js";
import { loadManifest, type ChapterManifest } from "../src/course/manifest.js";
import { readStarters } from "../src/course/starters.js";
import { readHintState } from "../src/lab/hints.js";
import { createPracticeServer, PROMPT_NAMES, TOOL_NAMES, type PracticeTools } from "../src/mcp/server.js";
import { answerLines, findLeaks } from "../src/practice/leak-audit.js";
import { createMiniCourse, MINI_MANIFEST, removeMiniCourse, repoRoot, runScript, type MiniCourse } from "./support/lab-fixture.js";
import { commandArgs } from "./support/tooling.js";

const MINI_TEXT = `# 第 99 章 · 迷你章节

## 1. 加法

两个数相加。

<!-- verify: practice starter -->
\`\`\`sh
npm run lab -w @pi/course -- 99.1
\`\`\`

<!-- verify: expect -->
\`\`\`text
0/2
\`\`\`

## 2. 打招呼

打招呼的规则在下一小节。

\`\`\`text
## 这不是标题
<!-- verify: 代码块里的示例，照原样保留 -->
\`\`\`

### 2.1 规则

greet 返回 hello 加名字。

## 附：不带编号的一节
`;

let tmp = "";
let course: MiniCourse;
test.before(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "pi-mcp-tmp-"));
  course = await createMiniCourse("starter", { practice: true, scripts: true });
  // A chapter text, and a rule (`§2.1：…`) on the first line of one test's failure.
  const home = path.join(course.root, "chapters", "99-mini");
  await writeFile(path.join(home, "README.md"), MINI_TEXT);
  // The challenge tier's rules in a text of their own.
  await writeFile(path.join(home, "challenge.md"), "# 挑战关\n\n## C2 打招呼\n\n### C2.9 名字很长\n\n一万个字符的名字也照样问候。\n");
  await writeFile(
    path.join(home, "chapter.yaml"),
    MINI_MANIFEST.replace("focusedTests:", "text: README.md\nchallenge:\n  text: challenge.md\n  tests: []\nfocusedTests:"),
  );
  const testFile = path.join(course.root, "packages/pi-course/test/99-mini.test.ts");
  await writeFile(
    testFile,
    (await readFile(testFile, "utf8")).replace(
      'assert.equal(greet("pi"), "hello pi");',
      'assert.equal(greet("pi"), "hello pi", "§2.1：greet 返回 hello 加名字");',
    ),
  );
});
test.after(async () => {
  if (course !== undefined) await removeMiniCourse(course);
  if (tmp !== "") await rm(tmp, { recursive: true, force: true });
});

const env = (): Record<string, string> => ({ TMPDIR: tmp, TEMP: tmp, TMP: tmp, NO_COLOR: "1", CI: "" });

/** The SDK's client, connected over stdio to the server it spawns in `root` (as npm would start it, from the package folder). */
async function connect(root: string): Promise<{ client: Client; stderr: () => string; close: () => Promise<void> }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: commandArgs(root, "mcp"),
    cwd: path.join(root, "packages", "pi-course"),
    env: env(),
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: "pi-course-test", version: "1.0.0" });
  const protocolErrors: unknown[] = [];
  client.onerror = (error) => protocolErrors.push(error);
  await client.connect(transport);
  return {
    client,
    stderr: () => stderr,
    close: async () => {
      await client.close();
      assert.deepEqual(protocolErrors, [], "every line the server wrote on stdout was a protocol message");
    },
  };
}

/** A tool's answer: its one text and its structured data (asserted to be an answer, not a refusal). */
async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<{ text: string; data: Record<string, unknown> }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = result.content.map((part) => (part.type === "text" ? part.text : "")).join("");
  assert.notEqual(result.isError, true, `${name}: ${text}`);
  assert.ok(result.structuredContent !== undefined, `${name} returns structured content`);
  return { text, data: result.structuredContent };
}

/** A tool's refusal: its one line. */
async function refusal(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  assert.equal(result.isError, true, `${name} refuses`);
  assert.equal(result.structuredContent, undefined);
  return result.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}

test("mcp arguments: none, --help is help, anything else is a usage error", () => {
  assert.deepEqual(parseCommand("mcp", []), { help: false });
  assert.equal(parseCommand("mcp", ["--help"]).help, true);
  for (const bad of [["12"], ["--stdio"]]) assert.throws(() => parseCommand("mcp", bad), { code: "USAGE" }, bad.join(" "));
});

test("mcp in a practice folder: four tools and a prompt, each answering with text and data; hints climb the stored ladder one rung at a time", async () => {
  const { client, close } = await connect(course.root);
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((tool) => tool.name),
      [...TOOL_NAMES],
    );
    for (const tool of tools) assert.equal(tool.outputSchema?.type, "object", `${tool.name} has an output schema`);

    const status = await call(client, "lab_status");
    assert.deepEqual(status.data.labs, [
      { id: "99.1", title: "两数相加", passed: 0, total: 2, status: "not_started", note: "未开始" },
      { id: "99.2", title: "打招呼", passed: 0, total: 3, status: "not_started", note: "未开始" },
    ]);
    assert.deepEqual(
      [status.data.chapter, status.data.passed, status.data.total, status.data.next],
      ["99", 0, 5, { lab: "99.1", command: "npm run lab -w @pi/course -- 99.1" }],
    );
    assert.match(status.text, /^第 99 章 · 迷你章节\n {2}· Lab 99\.1 {2}两数相加 +0\/2 +未开始\n/, "the text is the table lab 99 prints");

    const starter = await call(client, "run_lab", { lab: "99.1" });
    const throwLine =
      readFileSync(path.join(course.root, "packages/pi-course/src/mini.ts"), "utf8")
        .split("\n")
        .findIndex((line) => line.includes('labError("Lab 99.1')) + 1;
    assert.deepEqual(starter.data.firstFailure, {
      test: "Lab 99.1 · adds two numbers",
      location: `packages/pi-course/src/mini.ts:${throwLine}:9`,
      testLocation: "packages/pi-course/test/99-mini.test.ts:5",
      excerpt: "Lab 99.1 mini add 尚未实现",
      notStarted: true,
    });
    assert.deepEqual(
      [starter.data.passed, starter.data.total, starter.data.status, starter.data.next],
      [0, 2, "not_started", { lab: "99.1", command: "npm run lab -w @pi/course -- 99.1" }],
    );

    // A wrong answer: the first failure names its rule, the rule's section, and where it failed.
    await course.use("broken");
    const broken = await call(client, "run_lab", { lab: "99.2" });
    const failure = broken.data.firstFailure as Record<string, unknown>;
    assert.deepEqual([broken.data.passed, broken.data.total, broken.data.status, broken.data.earlier], [0, 3, "failed", []]);
    assert.deepEqual(
      [failure.test, failure.rule, failure.section, failure.notStarted],
      ["Lab 99.2 · greets by name", "§2.1：greet 返回 hello 加名字", "2.1", false],
    );
    assert.match(String(failure.location), /^packages\/pi-course\/test\/99-mini\.test\.ts:14:\d+$/);
    assert.match(String(failure.excerpt), /^§2\.1：greet 返回 hello 加名字\n/);
    assert.match(broken.text, /^Lab 99\.2 · 打招呼 {2}0\/3\n✗ Lab 99\.2 · greets by name\n {2}§2\.1：greet/, "the text is what lab 99.2 prints");

    // Code that does not compile: no test ran, and the answer says why instead of counting.
    await writeFile(path.join(course.root, "packages/pi-course/src/mini.ts"), "export function add(a: number, b: number): number {\n  return a +;\n}\n");
    const unbuilt = await call(client, "lab_status");
    const problem = unbuilt.data.problem as { kind: string; message: string };
    assert.deepEqual(
      [problem.kind, unbuilt.data.next, (unbuilt.data.labs as { status: string }[]).map((lab) => lab.status)],
      ["build_failed", null, ["failed", "failed"]],
    );
    assert.match(problem.message, /src\/mini\.ts/);
    assert.match(unbuilt.text, /^编译失败（\d+ 处错误），测试没有运行：/);
    await course.use("broken");

    const first = await call(client, "next_hint", { lab: "99.2" });
    const second = await call(client, "next_hint", { lab: "99.2" });
    assert.deepEqual(
      [first.data, second.data].map(({ level, next, atTop, text, rung }) => ({ level, next, atTop, text, rung })),
      [
        { level: 1, next: 2, atTop: false, text: "甲：打开 packages/pi-course/src/mini.ts", rung: "定位文件" },
        { level: 2, next: 3, atTop: false, text: "乙：greet(name) 返回 string", rung: "指出签名" },
      ],
    );
    assert.match(first.text, /^Lab 99\.2 · 打招呼 · 提示 第 1\/4 级：定位文件\n {2}甲：打开/);
    assert.deepEqual((await readHintState(course.root)).state.labs, { "99.2": 2 }, "the same stored state as hint's");
    const byHint = await runScript(course.root, "hint.ts", ["99.2", "--json"]);
    assert.equal((JSON.parse(byHint.stdout) as { level: number }).level, 3, "hint goes on from the rung next_hint reached");
    const fourth = await call(client, "next_hint", { lab: "99.2" });
    const again = await call(client, "next_hint", { lab: "99.2" });
    assert.deepEqual(
      [fourth.data.level, fourth.data.atTop, fourth.data.next, again.data.level, again.data.atTop],
      [4, true, null, 4, true],
      "never past the top",
    );
    assert.match(fourth.text, /这是最后一级，没有更多提示了/);
    assert.match(again.text, /已经到顶，这是最后一级/);

    const section = await call(client, "chapter_section", { section: "2" });
    assert.deepEqual([section.data.section, section.data.title, section.data.subsections], ["2", "打招呼", [{ number: "2.1", title: "规则" }]]);
    assert.equal(
      section.text,
      "## 2. 打招呼\n\n打招呼的规则在下一小节。\n\n```text\n## 这不是标题\n<!-- verify: 代码块里的示例，照原样保留 -->\n```\n\n### 2.1 规则\n\ngreet 返回 hello 加名字。",
    );
    const one = await call(client, "chapter_section", { section: "1" });
    assert.equal(
      one.text,
      "## 1. 加法\n\n两个数相加。\n\n```sh\nnpm run lab -w @pi/course -- 99.1\n```\n\n```text\n0/2\n```",
      "the replay's markup is left out",
    );
    assert.equal((await call(client, "chapter_section", { section: "§2.1" })).data.title, "规则");
    const rule = await call(client, "chapter_section", { section: "§C2.9" });
    assert.deepEqual(
      [rule.data.section, rule.text],
      ["C2.9", "### C2.9 名字很长\n\n一万个字符的名字也照样问候。"],
      "a challenge rule, from the challenge tier's text",
    );
    assert.match(await refusal(client, "chapter_section", { section: "7" }), /^错误 \[MCP_SECTION_UNKNOWN\] 第 99 章的正文没有第 “7” 节；有的节：1、2/);
    assert.match(await refusal(client, "run_lab", { lab: "99.9" }), /^错误 \[USAGE\] 没有 Lab 99\.9/);
    // Section numbers belong to this chapter's text: another chapter's lab is not answered.
    for (const [name, args] of [
      ["run_lab", { lab: "12.1" }],
      ["next_hint", { lab: "12.1" }],
      ["lab_status", { chapter: "12" }],
    ] as const) {
      assert.match(await refusal(client, name, args), /^错误 \[MCP_OTHER_CHAPTER\] 这个练习目录是第 99 章的，不回答第 12 章/, name);
    }
    assert.match(await refusal(client, "run_lab", { lab: "99" }), /^错误 \[USAGE\] run_lab 针对单个 Lab/);
    // A form-built client sends numbers: `2` and `2.1` are the sections "2" and "2.1".
    assert.equal((await call(client, "chapter_section", { section: 2 })).data.title, "打招呼");
    assert.equal((await call(client, "chapter_section", { section: 2.1 })).data.title, "规则");
    assert.match(await refusal(client, "run_lab", { lab: true }), /^错误 \[USAGE\] run_lab 的参数 lab 应为字符串或数字/);
    assert.match(await refusal(client, "run_lab", { lab: -1 }), /^错误 \[USAGE\] run_lab 的参数 lab 应为字符串或数字/);
    // Unknown names are protocol errors that still carry a code.
    await assert.rejects(client.callTool({ name: "nope", arguments: {} }), /错误 \[MCP_TOOL_UNKNOWN\] 没有工具 “nope”；这里的工具：lab_status/);
    await assert.rejects(client.getPrompt({ name: "nope" }), /错误 \[MCP_PROMPT_UNKNOWN\] 没有提示模板 “nope”/);
    assert.match(await refusal(client, "next_hint", { lab: "99.1", level: "4" }), /^错误 \[USAGE\] next_hint 没有参数 “level”/, "no skipping a rung");

    const { prompts } = await client.listPrompts();
    assert.deepEqual(
      prompts.map((prompt) => prompt.name),
      [...PROMPT_NAMES],
    );
    const predict = await client.getPrompt({ name: "predict", arguments: { lab: "99.2" } });
    const asked = predict.messages.map((message) => (message.content.type === "text" ? message.content.text : "")).join("");
    assert.match(asked, /^在运行 Lab 99\.2（打招呼）之前，先请学习者预测结果/);
    assert.match(asked, /Lab 99\.2 有 3 项测试：\n {2}1\. Lab 99\.2 · greets by name\n {2}2\. Lab 99\.2 · greets the sum\n/);
    assert.match(asked, /上一次运行：0\/3（失败），之后教学文件没有改过。/);
    const next = await client.getPrompt({ name: "predict" });
    assert.match(
      next.messages[0]?.content.type === "text" ? next.messages[0].content.text : "",
      /^在运行 Lab 99\.2（打招呼）之前/,
      "without a lab: the next one not green (99.1 passed with 99.2)",
    );

    // The marker gone meanwhile: every call refuses, as the start would have.
    const marker = path.join(course.root, ...PRACTICE_MARKER.split("/"));
    renameSync(marker, `${marker}.away`);
    try {
      for (const [name, args] of [
        ["lab_status", {}],
        ["next_hint", { lab: "99.1" }],
        ["chapter_section", { section: "1" }],
      ] as const) {
        assert.match(await refusal(client, name, args), /^错误 \[MCP_NOT_PRACTICE\] 这里不是练习目录/, name);
      }
      await assert.rejects(client.getPrompt({ name: "predict" }), /MCP_NOT_PRACTICE|这里不是练习目录/);
    } finally {
      renameSync(`${marker}.away`, marker);
    }
  } finally {
    await close();
  }
  assert.equal((await readHintState(course.root)).state.labs["99.2"], 4);
});

test("mcp outside a practice folder: refuses at start with a coded line on stderr, nothing on stdout, exit 1", () => {
  // The mini course without its marker: a course repository, not a practice folder.
  const marker = path.join(course.root, ...PRACTICE_MARKER.split("/"));
  renameSync(marker, `${marker}.away`);
  let run: SpawnSyncReturns<string>;
  try {
    run = spawnSync(process.execPath, commandArgs(course.root, "mcp"), {
      cwd: course.root,
      env: { ...process.env, ...env() },
      input: "",
      encoding: "utf8",
    });
  } finally {
    renameSync(`${marker}.away`, marker);
  }
  assert.equal(run.status, 1, run.stderr);
  assert.equal(run.stdout, "");
  assert.match(run.stderr, /^错误 \[MCP_NOT_PRACTICE\] 这里不是练习目录（[^\n]+ 没有 \.pi-course\/practice\.json）：课程的 MCP 服务只在练习目录里运行/);
  assert.equal(run.stderr.trim().split("\n").length, 1);
});

test("npm run --silent mcp: the first bytes on stdout are the JSON-RPC answer; closing stdin ends the server with 0", async () => {
  // The course's real package scripts, so that `npm run mcp -w @pi/course` runs as in a practice folder.
  const real = JSON.parse(readFileSync(path.join(repoRoot, "packages/pi-course/package.json"), "utf8")) as { scripts: Record<string, string> };
  const pkg = path.join(course.root, "packages/pi-course/package.json");
  writeFileSync(pkg, `${JSON.stringify({ ...JSON.parse(readFileSync(pkg, "utf8")), scripts: real.scripts }, null, 2)}\n`);
  // The compiled tooling, installed where a practice folder keeps it (support/tooling.ts): the bin runs it as it is.
  commandArgs(course.root, "mcp");
  const npm = spawn(process.platform === "win32" ? "npm.cmd" : "npm", ["run", "--silent", "mcp", "-w", "@pi/course"], {
    cwd: course.root,
    env: { ...process.env, ...env() },
    stdio: ["pipe", "pipe", "pipe"],
    shell: process.platform === "win32",
  });
  let stdout = "";
  let stderr = "";
  npm.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const firstLine = new Promise<string>((resolve) => {
    npm.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes("\n")) resolve(stdout);
    });
  });
  const exited = new Promise<number | null>((resolve) => npm.on("close", (code) => resolve(code)));
  npm.stdin.write(
    `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } })}\n`,
  );
  const first = await firstLine;
  assert.ok(first.startsWith('{"'), `stdout starts with the protocol, not ${JSON.stringify(first.slice(0, 40))}`);
  const answer = JSON.parse(first.split("\n")[0]!) as { id: number; result: { serverInfo: { name: string }; instructions: string } };
  assert.deepEqual([answer.id, answer.result.serverInfo.name], [1, "pi-course"]);
  assert.match(answer.result.instructions, /^pi-course 第 99 章的练习目录/);
  npm.stdin.end();
  assert.equal(await exited, 0, stderr);
  assert.equal(stdout.split("\n").filter((line) => line !== "").length, 1, "nothing but the answer");
});

/**
 * A folder holding what the tools read of chapter 12's practice folder (the marker, the
 * learner's manifest, the texts, the focused tests, the starter over the teaching file),
 * written from this working tree. The caller removes it.
 */
async function chapter12Folder(manifest: ChapterManifest): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), "pi-mcp-12-"));
  const write = async (file: string, text: string) => {
    await mkdir(path.dirname(path.join(root, ...file.split("/"))), { recursive: true });
    await writeFile(path.join(root, ...file.split("/")), text);
  };
  const source = (file: string) => readFile(path.join(repoRoot, ...file.split("/")), "utf8");
  await write(PRACTICE_MARKER, `${JSON.stringify({ chapter: "12", createdBy: "practice" })}\n`);
  await write(manifest.manifestPath, learnerManifestText(await source(manifest.manifestPath), manifest));
  for (const file of [manifest.text!, manifest.challengeText!, ...manifest.focusedTests]) await write(file, await source(file));
  for (const starter of await readStarters(manifest, source)) await write(starter.teachingFile, starter.text);
  return root;
}

// Its sections and hints come from the folder's files, which practice and `verify 12` audit for leaks; a lab run through
// the tools is the mini chapter's test above, and chapter 12's first red is its verify record's.
test("mcp on chapter 12: its sections (the challenge tier's continuing its section 10), its hints and its prompt, and no answer carries a line of the reference the starter lacks", async (t) => {
  const manifest = await loadManifest(repoRoot, "12");
  const root = await chapter12Folder(manifest);
  t.after(() => rm(root, { recursive: true, force: true }));
  const { server } = createPracticeServer({ root, chapter: "12", tools: practiceTools(root, "12") });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "pi-course-test", version: "1.0.0" });
  await client.connect(clientSide);
  const outputs: string[] = [];
  try {
    const lab = await call(client, "chapter_section", { section: "3" });
    assert.match(lab.text, /^## 3\. Lab 12\.1 · roots 的顺序决定清单里谁胜出\n/);
    const rule = await call(client, "chapter_section", { section: "C3.9" });
    assert.equal(rule.data.title, "谁胜出");
    // The challenge tier's rules live in a text of their own, numbered after the chapter text's section 10.
    const challenge = await call(client, "chapter_section", { section: "10.1" });
    assert.equal(challenge.data.title, "清单：一个坏文件不能让用户什么都拿不到");
    const whole = await call(client, "chapter_section", { section: "10" });
    assert.deepEqual(
      (whole.data.subsections as { number: string }[]).map((s) => s.number),
      ["10.1", "10.2", "10.3", "10.4", "10.5"],
    );
    for (const number of ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "C3", "C4", "C5", "C6", "C7", "10.3"]) {
      const section = await call(client, "chapter_section", { section: number });
      assert.doesNotMatch(section.text, /<!--\s*verify/, `§${number} without the replay's markup`);
      outputs.push(section.text, JSON.stringify(section.data));
    }
    for (const id of manifest.labs.map((l) => l.id)) {
      for (let rung = 1; rung <= 4; rung++) {
        const hint = await call(client, "next_hint", { lab: id });
        assert.equal(hint.data.level, rung);
        assert.equal(hint.data.text, manifest.labs.find((l) => l.id === id)!.hints[rung - 1]);
        outputs.push(hint.text, JSON.stringify(hint.data));
      }
    }
    const predict = await client.getPrompt({ name: "predict", arguments: { lab: "12.1" } });
    outputs.push(JSON.stringify(predict));
    assert.match(JSON.stringify(predict), /Lab 12\.1 · roots 顺序决定同名资源的 winner/);
  } finally {
    await client.close();
  }
  const [starter] = manifest.starters;
  const pair = {
    teachingFile: starter!.to,
    reference: readFileSync(path.join(repoRoot, starter!.to), "utf8"),
    starter: readFileSync(path.join(repoRoot, starter!.from), "utf8"),
  };
  assert.ok(answerLines([pair]).size > 100, "the audit has answer lines to look for");
  assert.deepEqual(findLeaks([{ file: "mcp answers", text: outputs.join("\n") }], [pair]), []);
});

test("mcp: a call the client cancels while it waits its turn never runs, so a hint nobody saw is not counted as seen", async () => {
  let release = () => {};
  const ran: string[] = [];
  const unused = () => Promise.reject(new Error("not called here"));
  const tools: PracticeTools = {
    labStatus: async () => {
      ran.push("lab_status");
      await new Promise<void>((resolve) => (release = resolve));
      return { text: "表", data: {} as never };
    },
    runLab: unused,
    nextHint: async () => {
      ran.push("next_hint");
      return { text: "提示", data: {} as never };
    },
    chapterSection: unused,
    predict: unused,
  };
  const { server, idle } = createPracticeServer({ root: course.root, chapter: "99", tools });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "pi-course-test", version: "1.0.0" });
  await client.connect(clientSide);
  const status = client.callTool({ name: "lab_status", arguments: {} }).catch(() => undefined);
  while (!ran.includes("lab_status")) await new Promise((resolve) => setImmediate(resolve));
  const cancel = new AbortController();
  const hint = client.callTool({ name: "next_hint", arguments: { lab: "99.1" } }, undefined, { signal: cancel.signal });
  cancel.abort();
  await assert.rejects(hint, "the client sees its own cancellation");
  release();
  await status;
  await idle();
  assert.deepEqual(ran, ["lab_status"], "the cancelled next_hint did not run");
  await client.close();
});

test("mcp next_hint: aborted before it saves, the rung is neither shown nor stored", async () => {
  const before = await readHintState(course.root);
  await assert.rejects(practiceTools(course.root, "99").nextHint("99.2", AbortSignal.abort()), { code: "MCP_CALL_CANCELLED" });
  assert.deepEqual(await readHintState(course.root), before);
});
