import assert from "node:assert/strict";
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, watch, writeFileSync } from "node:fs";
import path from "node:path";
import test, { after } from "node:test";
import fc from "fast-check";
import { createCodingTools, createEditTool, createShellTool, createWriteTool, shellEnvironment, type CodingToolsOptions } from "../src/coding-tools.js";
import { createToolExecutor, ToolRegistry } from "../src/tool.js";
import { fitBytes, truncateHead, truncateTail } from "../src/truncate.js";
import { textOf, type ToolResultMessage } from "../src/types.js";
import { isInside, openWorkspace } from "../src/workspace.js";
import { tempDir } from "./support/files.js";

// One fixture for the whole file: a workspace, a folder outside it, and a sibling whose
// name starts with the workspace's name (the string-prefix trap).
const base = tempDir({ after });
const root = path.join(base, "ws");
const outside = path.join(base, "outside");
mkdirSync(path.join(root, "sub", "empty"), { recursive: true });
mkdirSync(outside);
mkdirSync(path.join(base, "ws-evil"));
writeFileSync(path.join(root, "a.txt"), "one\ntwo\nthree\n");
writeFileSync(path.join(root, "big.txt"), Array.from({ length: 3000 }, (_, i) => `line ${i + 1}`).join("\n") + "\n");
writeFileSync(path.join(root, "bin.dat"), Buffer.from([0x50, 0x00, 0x4b]));
writeFileSync(path.join(root, "sub", "nested.txt"), "nested\n");
writeFileSync(path.join(outside, "secret.txt"), "secret\n");
writeFileSync(path.join(base, "ws-evil", "x"), "evil\n");
symlinkSync(outside, path.join(root, "link-out"));
symlinkSync(path.join(root, "a.txt"), path.join(root, "link-in"));
symlinkSync(path.join(base, "nowhere"), path.join(root, "dangling"));

let counter = 0;
async function run(name: string, args: unknown, options: CodingToolsOptions = {}, signal?: AbortSignal): Promise<ToolResultMessage> {
  const workspace = await openWorkspace(root);
  const registry = new ToolRegistry(createCodingTools(workspace, options));
  const execute = createToolExecutor(registry, signal ? { signal } : {});
  return execute({ type: "toolCall", id: `c${++counter}`, name, arguments: args });
}

test("Lab 8.1 · 工作区内的路径解析为规范路径；不存在的新文件按最深的已存在祖先判断", async () => {
  const workspace = await openWorkspace(root);
  const cases: [string, string][] = [
    ["a.txt", path.join(root, "a.txt")],
    ["sub/../a.txt", path.join(root, "a.txt")],
    [path.join(root, "sub", "nested.txt"), path.join(root, "sub", "nested.txt")],
    [".", root],
    ["new/dir/file.txt", path.join(root, "new", "dir", "file.txt")],
    ["link-in", path.join(root, "a.txt")],
  ];
  for (const [requested, expected] of cases) assert.equal(await workspace.resolve(requested), expected, requested);
  assert.equal(workspace.display(path.join(root, "sub", "nested.txt")), "sub/nested.txt");
  assert.equal(workspace.display(root), ".");
});

test("Lab 8.1 · 越界的路径被拒绝：..、绝对路径、同名前缀的兄弟目录、指向外面的符号链接", async () => {
  const workspace = await openWorkspace(root);
  const outsideCases = ["../outside/secret.txt", "../ws-evil/x", "/etc/passwd", "sub/../../outside", "link-out/secret.txt", "link-out/new.txt", "link-out"];
  for (const requested of outsideCases) await assert.rejects(workspace.resolve(requested), { code: "PATH_OUTSIDE_WORKSPACE" }, requested);
  for (const requested of ["", "a\0b", "dangling", "dangling/child"])
    await assert.rejects(workspace.resolve(requested), { code: "PATH_INVALID" }, JSON.stringify(requested));
  await assert.rejects(openWorkspace(path.join(base, "missing")), { code: "WORKSPACE_MISSING" });
  await assert.rejects(openWorkspace(path.join(root, "a.txt")), { code: "WORKSPACE_MISSING" });
  const lexical: [string, boolean][] = [
    ["/w/app", true],
    ["/w/app/x", true],
    ["/w/app-old", false],
    ["/w", false],
    ["/w/app/../b", false],
  ];
  for (const [candidate, inside] of lexical) assert.equal(isInside("/w/app", path.resolve(candidate)), inside, candidate);
});

test("Lab 8.2 · 截断：保留整行，按行数和字节数两个上限，报告总量", () => {
  const text = "a\nbb\nccc\ndddd\n";
  assert.deepEqual(truncateHead(text, { maxLines: 10, maxBytes: 100 }), {
    text,
    truncated: false,
    totalLines: 4,
    totalBytes: 14,
    keptLines: 4,
    partialLine: false,
  });
  assert.deepEqual(truncateHead(text, { maxLines: 2, maxBytes: 100 }), {
    text: "a\nbb",
    truncated: true,
    totalLines: 4,
    totalBytes: 14,
    keptLines: 2,
    partialLine: false,
  });
  assert.deepEqual(truncateTail(text, { maxLines: 2, maxBytes: 100 }), {
    text: "ccc\ndddd",
    truncated: true,
    totalLines: 4,
    totalBytes: 14,
    keptLines: 2,
    partialLine: false,
  });
  assert.equal(truncateHead(text, { maxLines: 10, maxBytes: 5 }).text, "a\nbb", "字节上限含换行符");
  assert.equal(truncateHead(text, { maxLines: 10, maxBytes: 4 }).text, "a\nbb", "恰好等于上限时保留");
  assert.equal(truncateHead(text, { maxLines: 10, maxBytes: 3 }).text, "a", "多一个字节都不行");
  assert.equal(truncateTail(text, { maxLines: 10, maxBytes: 8 }).text, "ccc\ndddd");
  assert.equal(truncateHead("", { maxLines: 1, maxBytes: 1 }).totalLines, 0);
  assert.throws(() => truncateHead(text, { maxLines: 0, maxBytes: 5 }), RangeError);
});

test("Lab 8.2 · 一行都放不下时截取这一行的一部分，绝不切开多字节字符", () => {
  const wide = "你好😀世界";
  for (let max = 0; max <= 16; max++) {
    const head = fitBytes(wide, max);
    const tail = fitBytes(wide, max, true);
    assert.ok(Buffer.byteLength(head) <= max && wide.startsWith(head), `head ${max}`);
    assert.ok(Buffer.byteLength(tail) <= max && wide.endsWith(tail), `tail ${max}`);
    assert.equal(head.includes("\uFFFD") || tail.includes("\uFFFD"), false);
  }
  assert.equal(fitBytes(wide, 8), "你好", "8 字节：两个汉字，😀 的 4 个字节放不下");
  const cut = truncateTail("short\n" + "x".repeat(50), { maxLines: 5, maxBytes: 10 });
  assert.deepEqual([cut.text, cut.partialLine, cut.keptLines], ["x".repeat(10), true, 1]);
});

test("Lab 8.3 · read：读整个文件、按 offset/limit 读片段，大文件截断并告诉模型如何继续", async () => {
  assert.equal(textOf(await run("read", { path: "a.txt" })), "one\ntwo\nthree");
  const slice = await run("read", { path: "a.txt", offset: 2, limit: 1 });
  assert.equal(textOf(slice), "two\n\n[showing lines 2-2 of 3; continue with offset=3]");
  assert.deepEqual(slice.details, { path: "a.txt", totalLines: 3, firstLine: 2, lastLine: 2, truncated: false });
  // The notice and the blank line before it count against maxLines: 98 lines of the file fit in 100.
  const big = await run("read", { path: "big.txt" }, { maxLines: 100 });
  assert.equal(big.isError, false);
  assert.match(textOf(big), /^line 1\n[\s\S]*\nline 98\n\n\[showing lines 1-98 of 3000; continue with offset=99\]$/);
  assert.match(textOf(await run("read", { path: "big.txt", offset: 2999 })), /^line 2999\nline 3000$/);
});

test("Lab 8.3 · read 的错误都是配对的错误结果：越界、目录、二进制、过大、offset 超出末尾", async () => {
  const cases: [unknown, RegExp, CodingToolsOptions?][] = [
    [{ path: "../outside/secret.txt" }, /PATH_OUTSIDE_WORKSPACE/],
    [{ path: "link-out/secret.txt" }, /PATH_OUTSIDE_WORKSPACE/],
    [{ path: "sub" }, /is a directory/],
    [{ path: "bin.dat" }, /binary/],
    [{ path: "big.txt" }, /over the 100-byte limit/, { maxFileBytes: 100 }],
    [{ path: "a.txt", offset: 9 }, /past the end/],
    [{ path: "a.txt", offset: 0 }, /offset must be a positive integer/],
    [{ path: "missing.txt" }, /ENOENT/],
  ];
  for (const [args, pattern, options] of cases) {
    const result = await run("read", args, options);
    assert.equal(result.isError, true, JSON.stringify(args));
    assert.match(textOf(result), pattern, JSON.stringify(args));
  }
});

test("Lab 8.3 · list：按码元排序，目录带 /、符号链接带 @；过多条目被截断", async () => {
  assert.equal(textOf(await run("list", {})), "a.txt\nbig.txt\nbin.dat\ndangling@\nlink-in@\nlink-out@\nsub/");
  assert.equal(textOf(await run("list", { path: "sub/empty" })), "(empty directory)");
  const cut = await run("list", {}, { maxLines: 4 });
  assert.equal(textOf(cut), "a.txt\nbig.txt\n\n[5 more entries not shown]", "提示和它前面的空行也算行数");
  assert.equal(textOf(await run("list", {}, { maxLines: 2 })), "[7 entries not shown]", "放不下一个条目加提示时只给提示");
  for (const [args, pattern] of [
    [{ path: "a.txt" }, /not a directory/],
    [{ path: "link-out" }, /PATH_OUTSIDE_WORKSPACE/],
  ] as const) {
    assert.match(textOf(await run("list", args)), pattern);
  }
});

test("Lab 8.4 · write：创建缺失的父目录，原子写入不留临时文件，越界时外面什么也不会出现", async () => {
  const created = await run("write", { path: "out/deep/new.txt", content: "你好\n" });
  assert.equal(created.isError, false);
  assert.equal(textOf(created), "created out/deep/new.txt (7 bytes)");
  assert.equal(readFileSync(path.join(root, "out", "deep", "new.txt"), "utf8"), "你好\n");
  const again = await run("write", { path: "out/deep/new.txt", content: "x" });
  assert.equal(textOf(again), "overwrote out/deep/new.txt (1 bytes)");
  assert.deepEqual(readdirSync(path.join(root, "out", "deep")), ["new.txt"], "没有残留的临时文件");

  for (const [args, pattern] of [
    [{ path: "link-out/planted.txt", content: "x" }, /PATH_OUTSIDE_WORKSPACE/],
    [{ path: "../planted.txt", content: "x" }, /PATH_OUTSIDE_WORKSPACE/],
    [{ path: "dangling", content: "x" }, /PATH_INVALID/],
    [{ path: "sub", content: "x" }, /is a directory/],
  ] as const) {
    const result = await run("write", args);
    assert.equal(result.isError, true);
    assert.match(textOf(result), pattern);
  }
  assert.equal(existsSync(path.join(outside, "planted.txt")), false);
  assert.equal(existsSync(path.join(base, "planted.txt")), false);
  assert.equal(existsSync(path.join(base, "nowhere")), false, "悬空链接的目标没有被创建");
});

test("Lab 8.4 · edit：只替换唯一的一处；找不到或不唯一时报错且文件不变；$& 原样写入", async () => {
  const file = path.join(root, "edit-me.txt");
  writeFileSync(file, "alpha\nbeta\nbeta\ngamma\n");
  const ok = await run("edit", { path: "edit-me.txt", oldText: "gamma", newText: "$& and $1" });
  assert.equal(ok.isError, false);
  assert.equal(textOf(ok), "edited edit-me.txt at line 4");
  assert.equal(readFileSync(file, "utf8"), "alpha\nbeta\nbeta\n$& and $1\n");
  const cases: [unknown, RegExp][] = [
    [{ path: "edit-me.txt", oldText: "beta", newText: "b" }, /occurs 2 times/],
    [{ path: "edit-me.txt", oldText: "delta", newText: "d" }, /not found/],
    [{ path: "edit-me.txt", oldText: "", newText: "d" }, /must not be empty/],
    [{ path: "link-out/secret.txt", oldText: "secret", newText: "x" }, /PATH_OUTSIDE_WORKSPACE/],
  ];
  for (const [args, pattern] of cases) {
    const result = await run("edit", args);
    assert.equal(result.isError, true);
    assert.match(textOf(result), pattern);
  }
  assert.equal(readFileSync(file, "utf8"), "alpha\nbeta\nbeta\n$& and $1\n", "失败的编辑不改文件");
  assert.equal(readFileSync(path.join(outside, "secret.txt"), "utf8"), "secret\n");
  const overlapping = path.join(root, "aaa.txt");
  writeFileSync(overlapping, "aaa");
  assert.match(textOf(await run("edit", { path: "aaa.txt", oldText: "aa", newText: "b" })), /edited/, "不重叠地计数：aaa 里的 aa 只算一处");
});

const posixOnly = { skip: process.platform === "win32" ? "the shell tool's tests use /bin/sh" : false };

test("Lab 8.5 · shell：在工作区根目录运行，stdout 与 stderr 合并，退出码非 0 是错误结果", posixOnly, async () => {
  const ok = await run("shell", { command: "pwd; echo oops 1>&2" });
  assert.equal(ok.isError, false);
  assert.ok(textOf(ok).includes(root) && textOf(ok).includes("oops"), textOf(ok));
  assert.equal((ok.details as { exitCode: number }).exitCode, 0);
  const failed = await run("shell", { command: "echo before; exit 3" });
  assert.equal(failed.isError, true);
  assert.equal(textOf(failed), "before\n\n\n[exit code 3]");
  assert.equal(textOf(await run("shell", { command: "true" })), "(no output)");
  for (const args of [{ command: "  " }, { command: "true", timeoutSeconds: 0 }, { command: "true", timeoutSeconds: 4000 }]) {
    assert.equal((await run("shell", args)).isError, true, JSON.stringify(args));
  }
});

test("Lab 8.5 · shell：长输出只保留末尾，并说明截断了多少", posixOnly, async () => {
  const result = await run("shell", { command: "awk 'BEGIN { for (i = 1; i <= 3000; i++) print \"line \" i }'" }, { maxLines: 50, maxBytes: 4096 });
  assert.equal(result.isError, false);
  const output = textOf(result);
  // The header is one of the 50 lines.
  assert.match(output, /^\[output truncated: showing the last 49 lines of 28893 bytes\]\nline 2952\n/);
  assert.ok(output.endsWith("\nline 3000"), output.slice(-20));
  assert.deepEqual((result.details as { truncated: boolean; totalBytes: number }).truncated, true);
});

// The command leaves a background job that would write `marker` shortly after; it holds the
// output pipe, so if only the shell were killed, the result would wait for the job and the
// marker would exist by then. Killing the whole process group leaves no marker.
const orphan = (marker: string) => `(sleep 0.3; echo alive > ${marker}) & sleep 30`;

test("Lab 8.5 · shell：超时杀掉整个进程组，结果说明超时", posixOnly, async () => {
  const marker = path.join(base, "timeout-marker");
  const result = await run("shell", { command: orphan(marker), timeoutSeconds: 0.05 });
  assert.equal(result.isError, true);
  assert.match(textOf(result), /timed out after 0.05 s/);
  assert.deepEqual([(result.details as { timedOut: boolean }).timedOut, existsSync(marker)], [true, false]);
});

test("Lab 8.5 · shell：中止杀掉整个进程组，结果说明已中止", posixOnly, async (t) => {
  const dir = tempDir(t);
  const marker = path.join(dir, "abort-marker");
  const controller = new AbortController();
  const shell = createShellTool(await openWorkspace(root));
  // Abort once the background job exists: the command announces it by creating `ready`.
  const ready = new Promise<void>((resolve) => {
    const watcher = watch(dir, (_event, name) => {
      if (name === "ready") {
        watcher.close();
        resolve();
      }
    });
  });
  const running = shell.execute(
    { command: `(sleep 0.3; echo alive > ${marker}) & touch ${path.join(dir, "ready")}; sleep 30` },
    { callId: "s", signal: controller.signal },
  );
  await ready;
  controller.abort();
  const result = await running;
  assert.equal(result.isError, true);
  assert.match(textOf(result), /aborted; the command was killed/);
  assert.deepEqual([result.details?.aborted, existsSync(marker)], [true, false]);
});

const posixModes = { skip: process.platform === "win32" ? "file modes are POSIX" : false };

test("Lab 8.4 · write 与 edit 保留已有文件的权限位（可执行、setuid、只给属主）；新文件的权限按 umask", posixModes, async (t) => {
  const dir = tempDir(t);
  const workspace = await openWorkspace(dir);
  const write = createWriteTool(workspace);
  const edit = createEditTool(workspace);
  const call = { callId: "m" };
  for (const mode of [0o755, 0o4755, 0o600, 0o640]) {
    const name = `run-${mode.toString(8)}.sh`;
    const file = path.join(dir, name);
    writeFileSync(file, "echo one\n");
    chmodSync(file, mode);
    await write.execute({ path: name, content: "echo two\n" }, call);
    assert.equal((statSync(file).mode & 0o7777).toString(8), mode.toString(8), `write ${name}`);
    await edit.execute({ path: name, oldText: "two", newText: "three" }, call);
    assert.equal((statSync(file).mode & 0o7777).toString(8), mode.toString(8), `edit ${name}`);
    assert.equal(readFileSync(file, "utf8"), "echo three\n");
  }
  const previous = process.umask(0o027);
  try {
    await write.execute({ path: "fresh.txt", content: "x" }, call);
  } finally {
    process.umask(previous);
  }
  assert.equal((statSync(path.join(dir, "fresh.txt")).mode & 0o7777).toString(8), "640", "新文件：0666 去掉 umask 0027");
});

test("Lab 8.4 · write 与 edit 拒绝替换只读文件（EACCES），文件与权限都不变，不留临时文件", posixModes, async (t) => {
  const dir = tempDir(t);
  const workspace = await openWorkspace(dir);
  const file = path.join(dir, "locked.txt");
  writeFileSync(file, "keep\n");
  chmodSync(file, 0o444);
  await assert.rejects(createWriteTool(workspace).execute({ path: "locked.txt", content: "x" }, { callId: "w" }), { code: "EACCES" });
  await assert.rejects(createEditTool(workspace).execute({ path: "locked.txt", oldText: "keep", newText: "x" }, { callId: "e" }), { code: "EACCES" });
  assert.deepEqual([readFileSync(file, "utf8"), statSync(file).mode & 0o7777, readdirSync(dir)], ["keep\n", 0o444, ["locked.txt"]]);
});

const asRoot = { skip: process.platform === "win32" || process.getuid?.() !== 0 ? "only root can give a file to another user" : false };

test("Lab 8.4 · 以 root 运行时，write 与 edit 保留已有文件的属主和属组", asRoot, async (t) => {
  const dir = tempDir(t);
  const workspace = await openWorkspace(dir);
  const file = path.join(dir, "theirs.sh");
  writeFileSync(file, "echo one\n");
  chownSync(file, 4321, 4322);
  chmodSync(file, 0o4750);
  await createWriteTool(workspace).execute({ path: "theirs.sh", content: "echo two\n" }, { callId: "w" });
  await createEditTool(workspace).execute({ path: "theirs.sh", oldText: "two", newText: "three" }, { callId: "e" });
  const info = statSync(file);
  assert.deepEqual([info.uid, info.gid, (info.mode & 0o7777).toString(8)], [4321, 4322, "4750"]);
});

test("Lab 8.5 · shell：命令的环境里没有任何 provider 的 key，也没有名字像密钥的变量；PATH、HOME 等照常传下去", posixOnly, async (t) => {
  const planted: Record<string, string> = {
    ANTHROPIC_API_KEY: "sk-ant-planted-0123456789",
    OPENAI_API_KEY: "sk-openai-planted-0123456789",
    GITHUB_TOKEN: "ghp_planted0123456789",
    DB_PASSWORD: "planted-password-0123",
    DATABASE_URL: "postgres://app:planted-url-pass@db.example/app",
    KEY_COPY: "sk-ant-planted-0123456789",
  };
  const saved = Object.keys(planted).map((name) => [name, process.env[name]] as const);
  t.after(() => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
  Object.assign(process.env, planted, { PI_COURSE_PLAIN: "kept" });
  t.after(() => delete process.env.PI_COURSE_PLAIN);
  const result = await run("shell", { command: 'echo "key=[$ANTHROPIC_API_KEY]"; env' });
  const output = textOf(result);
  assert.equal(result.isError, false, output);
  for (const [name, value] of Object.entries(planted)) assert.equal(output.includes(value), false, `${name} 的值出现在了输出里`);
  assert.match(output, /^key=\[\]$/m);
  for (const name of ["PATH", "HOME", "PI_COURSE_PLAIN"]) if (process.env[name] !== undefined) assert.match(output, new RegExp(`^${name}=`, "m"), name);
});

test("Lab 8.5 · shellEnvironment：去掉名字像密钥的变量、带凭据的 URL 和 provider 的 key（换了名字也去掉），其余原样保留", () => {
  const key = "sk-ant-pure-0123456789";
  const kept = {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: "/home/u",
    LANG: "zh_CN.UTF-8",
    LC_ALL: "C.UTF-8",
    TERM: "xterm-256color",
    TMPDIR: "/tmp",
    USER: "u",
    SHELL: "/bin/bash",
    HTTPS_PROXY: "http://proxy.example:3128",
    no_proxy: "localhost,127.0.0.1",
    SSH_AUTH_SOCK: "/tmp/ssh-agent.sock",
    JAVA_HOME: "/opt/jdk",
    VIRTUAL_ENV: "/home/u/project/.venv",
    KEYTIMEOUT: "1",
    ANTHROPIC_BASE_URL: "https://api.anthropic.com",
  };
  const secret = {
    ANTHROPIC_API_KEY: key,
    OPENAI_API_KEY: "sk-openai-pure-0123456789",
    GITHUB_TOKEN: "ghp_x",
    AWS_ACCESS_KEY_ID: "AKIA",
    AWS_SECRET_ACCESS_KEY: "x",
    AWS_SESSION_TOKEN: "x",
    DB_PASSWORD: "x",
    MYSQL_PASS: "x",
    GITHUB_PAT: "x",
    NPM_CONFIG__AUTH: "x",
    "npm_config_//registry.npmjs.org/:_authToken": "x",
    GOOGLE_APPLICATION_CREDENTIALS: "/home/u/sa.json",
    STRIPE_KEY: "x",
    DATABASE_URL: "postgres://app:pw@db.example/app",
    HTTP_PROXY: "http://me:pw@proxy.example:3128",
    CLAUDE_COPY: key,
    BEARER: `Authorization: Bearer ${key}`,
  };
  const env = { ...kept, ...secret, UNSET: undefined };
  const copy = structuredClone(env);
  assert.deepEqual(shellEnvironment(env), kept);
  assert.deepEqual(env, copy, "纯函数：不改传入的环境");
  assert.deepEqual(shellEnvironment({ OPENAI_API_KEY: "none", PAGER: "none" }), { PAGER: "none" }, "不到 8 个字符的占位 key 只去掉它自己的变量");
});

test("Lab 8.5 · shell：调用者给的 shellEnv 原样使用，只有 provider 的 key 无论如何都被去掉", posixOnly, async () => {
  const key = "sk-ant-custom-0123456789";
  const result = await run(
    "shell",
    { command: "env" },
    { shellEnv: { PATH: process.env.PATH, GH_TOKEN: "chosen-on-purpose", ANTHROPIC_API_KEY: key, KEY_COPY: key, OPENAI_API_KEY: "x" } },
  );
  const output = textOf(result);
  assert.equal(result.isError, false, output);
  assert.match(output, /^GH_TOKEN=chosen-on-purpose$/m, "调用者有意传下去的变量照传");
  assert.equal(output.includes(key), false, output);
  assert.doesNotMatch(output, /^(OPENAI_API_KEY|KEY_COPY|HOME)=/m, "没给的变量不会从父进程补进来");
});

test("Lab 8.2 · 上限连一行加提示都放不下时只给提示；连提示都放不下时提示本身截到上限之内", async () => {
  assert.equal(textOf(await run("read", { path: "big.txt" }, { maxLines: 2 })), "[lines 1-3000 of 3000 not shown: the output limits leave no room for them]");
  assert.equal(textOf(await run("read", { path: "big.txt" }, { maxBytes: 10 })), "[lines 1-3");
  assert.equal(textOf(await run("list", { path: "sub" }, { maxBytes: 5 })), "[2 en");
});

/** Lines of a tool's text as the limits count them: a final "\n" does not start another line. */
const linesOf = (value: string): number => (value === "" ? 0 : value.replace(/\n$/, "").split("\n").length);

test("Lab 8.2 · 每个工具的最终文本（连同截断提示、页眉和退出码）都不超过 maxBytes 与 maxLines", async (t) => {
  const dir = tempDir(t);
  const workspace = await openWorkspace(dir);
  const unit = fc.constantFrom("a", "b", " ", "é", "你", "😀");
  const lines = fc.array(fc.string({ unit, maxLength: 30 }), { maxLength: 25 });
  const names = fc.uniqueArray(fc.string({ unit: fc.constantFrom("a", "b", "c", "你"), minLength: 1, maxLength: 12 }), { maxLength: 12 });
  const limits = fc.record({ maxBytes: fc.integer({ min: 1, max: 400 }), maxLines: fc.integer({ min: 1, max: 12 }) });
  let round = 0;
  await fc.assert(
    fc.asyncProperty(lines, fc.boolean(), names, limits, fc.integer({ min: 0, max: 2 }), async (body, finalNewline, entries, limit, exitCode) => {
      const content = body.join("\n") + (finalNewline && body.length > 0 ? "\n" : "");
      const folder = path.join(dir, `round${++round}`);
      mkdirSync(folder);
      writeFileSync(path.join(folder, "file.txt"), content);
      for (const name of entries) writeFileSync(path.join(folder, `${name}.txt`), "");
      const tools = new ToolRegistry(createCodingTools(workspace, limit));
      const execute = createToolExecutor(tools);
      const results = [
        await execute({ type: "toolCall", id: "r", name: "read", arguments: { path: `round${round}/file.txt` } }),
        await execute({ type: "toolCall", id: "l", name: "list", arguments: { path: `round${round}` } }),
      ];
      if (process.platform !== "win32") {
        results.push(await execute({ type: "toolCall", id: "s", name: "shell", arguments: { command: `cat round${round}/file.txt; exit ${exitCode}` } }));
      }
      for (const result of results) {
        const output = textOf(result);
        const where = `${result.toolName} ${JSON.stringify(limit)}: ${JSON.stringify(output)}`;
        assert.ok(Buffer.byteLength(output, "utf8") <= limit.maxBytes, `bytes ${where}`);
        assert.ok(linesOf(output) <= limit.maxLines, `lines ${where}`);
      }
    }),
    { seed: 8080, numRuns: 40 },
  );
});
