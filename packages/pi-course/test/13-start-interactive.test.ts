/**
 * Chapter 13 · `npm start -- --interactive`: a conversation on the runtime, one line per
 * turn, with the session's own commands and Ctrl-C's rule (stop the turn, a second one ends
 * the session). In process with a scripted stdin and interrupt, and once as a real process
 * that receives real signals. Claimed by chapter 13; not a lab.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import test, { type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { interruptFilter } from "../src/app/runtime-interactive.js";
import { main } from "../src/app/runtime-start.js";
import { repoRoot, testSourcePath } from "./support/files.js";
import { closedPort, startReplayServer } from "./support/replay-server.js";

const LIMITS = { timeout: 30_000 };

/** An interactive session in this process: lines go in through `send`, Ctrl-C through `interrupt`. */
function session(t: TestContext, argv: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const stdin = new PassThrough();
  let out = "";
  let err = "";
  let interrupt: (() => void) | undefined;
  const waiters: { pattern: RegExp; resolve(): void }[] = [];
  const status = main(["--interactive", ...argv], {
    out: (s) => {
      out += s;
      for (const waiter of waiters.splice(0))
        if (waiter.pattern.test(out)) waiter.resolve();
        else waiters.push(waiter);
    },
    err: (s) => (err += s),
    cwd: repoRoot,
    env,
    stdin,
    onInterrupt: (handler) => {
      interrupt = handler;
      return () => (interrupt = undefined);
    },
    exit: (code) => assert.fail(`the session left with process.exit(${code})`),
  });
  t.after(() => stdin.end());
  return {
    status,
    get out() {
      return out;
    },
    get err() {
      return err;
    },
    send: (line: string) => stdin.write(`${line}\n`),
    end: () => stdin.end(),
    /** Resolves once the output matches `pattern`. */
    until: (pattern: RegExp) =>
      new Promise<void>((resolve) => {
        if (pattern.test(out)) resolve();
        else waiters.push({ pattern, resolve });
      }),
    interrupt: async () => {
      await new Promise((resolve) => setImmediate(resolve));
      assert.ok(interrupt, "the session listens for Ctrl-C");
      interrupt();
    },
  };
}

const lines = (out: string, prefix: string) => out.split("\n").filter((line) => line.startsWith(prefix));

test("npm start --interactive (scripted model): each line is a turn; /help, /reload, a bad command goes on, /exit ends with 1 after it", LIMITS, async (t) => {
  const s = session(t);
  await s.until(/命令  每行一条消息/);
  s.send("/help");
  s.send("看看 src/greet.js");
  s.send("/reload");
  s.send("/skill:nope 看看");
  s.send("");
  s.send("/exit");
  s.send("这一行在 /exit 之后，不会运行");
  assert.equal(await s.status, 1, "a turn failed (skill_not_found): the session's exit status says so");
  const out = s.out;
  assert.equal(lines(out, "命令  ").length, 2, "the help at the start and after /help");
  assert.equal(lines(out, "用户  ").length, 1, out);
  assert.match(lines(out, "本轮  ")[0] ?? "", /^本轮  stop · 模型调用 5 次/);
  assert.match(lines(out, "重载  ")[0] ?? "", /^重载  没有变化/);
  assert.match(lines(out, "失败  ")[0] ?? "", /^失败  \[skill_not_found\] /);
  assert.match(lines(out, "结束  ")[0] ?? "", /^结束  exit · 模型调用 5 次 · 工具调用 4 次（被拦截 1 次）/);
  assert.match(out.trimEnd().split("\n").at(-1)!, /^退出  1 轮失败过/);
  assert.doesNotMatch(out, /不会运行/);
});

test("npm start --interactive: the end of the input ends the session (0); --input is the first turn", LIMITS, async (t) => {
  const s = session(t, ["--input", "/skill:deploy 准备发布"]);
  await s.until(/本轮  /);
  s.end();
  assert.equal(await s.status, 0);
  assert.match(s.out, /\n技能  激活 deploy：用户用 \/skill: 强制加载/);
  assert.match(s.out, /\n结束  exit /);
});

test(
  "npm start --interactive --provider: Ctrl-C stops the running request, the session goes on; at the prompt Ctrl-C twice ends it with 130",
  LIMITS,
  async (t) => {
    const text = readFileSync(testSourcePath("fixtures", "openai", "text.sse"), "utf8");
    const server = await startReplayServer(t, [{ hang: true }, { body: text }]);
    const s = session(t, ["--provider", "openai-compatible", "--base-url", `${server.origin}/v1`]);
    await s.until(/命令  /);
    s.send("你好");
    await server.received(1);
    await s.interrupt();
    await s.until(/本轮  /);
    assert.match(s.out, /\n中断  正在停下这一轮/);
    assert.match(lines(s.out, "失败  ")[0] ?? "", /^失败  \[TURN_ABORTED\] /);
    assert.match(lines(s.out, "本轮  ")[0] ?? "", /^本轮  aborted /);

    s.send("再说一次");
    await s.until(/助手  你好，我在/);
    await s.until(/本轮  stop/);
    await s.interrupt();
    await s.until(/提示  再按一次 Ctrl-C/);
    await s.interrupt();
    assert.equal(await s.status, 130);
    assert.match(s.out, /\n退出  Ctrl-C：会话结束\n结束  interrupted /);
    assert.equal(server.requests.length, 2);
  },
);

test("npm start --interactive as a process: real SIGINTs, and the scratch copies are gone afterwards", LIMITS, async (t) => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), "pi-interactive-"));
  t.after(() => rmSync(tmp, { recursive: true, force: true }));
  const entry = fileURLToPath(new URL("../src/app/runtime-start.js", import.meta.url));
  // Started by node, not npm: each signal is a press (under npm one press may arrive twice, see interruptFilter).
  const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp, TEMP: tmp, TMP: tmp };
  delete env.npm_lifecycle_event;
  const child = spawn(process.execPath, [entry, "--interactive"], { cwd: repoRoot, env, stdio: ["pipe", "pipe", "pipe"] });
  t.after(() => child.kill("SIGKILL"));
  let out = "";
  const seen = (pattern: RegExp) =>
    new Promise<void>((resolve) => {
      const look = () => {
        if (pattern.test(out)) {
          child.stdout.off("data", look);
          resolve();
        }
      };
      child.stdout.on("data", look);
      look();
    });
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  await seen(/命令  /);
  child.stdin.write("看看 src/greet.js\n");
  await seen(/本轮  stop/);
  child.kill("SIGINT");
  await seen(/提示  再按一次 Ctrl-C/);
  child.kill("SIGINT");
  assert.equal(await exited, 130, out);
  assert.match(out, /\n结束  interrupted /);
  assert.deepEqual(readdirSync(tmp), [], "no scratch copy is left behind");
});

test("Ctrl-C under npm: the second delivery of one press is not a second press; outside npm every signal counts", () => {
  const underNpm = interruptFilter({ npm_lifecycle_event: "start" });
  assert.deepEqual([underNpm(), underNpm()], [true, false], "the terminal's signal and npm's forwarded copy, a moment apart");
  const direct = interruptFilter({});
  assert.deepEqual([direct(), direct()], [true, true]);
});

test("npm start --interactive: the exit status is 1 when any turn failed (PROVIDER_UNREACHABLE), 0 when none did", LIMITS, async (t) => {
  const port = await closedPort();
  const s = session(t, ["--provider", "openai-compatible", "--base-url", `http://127.0.0.1:${port}/v1`]);
  await s.until(/命令  /);
  s.send("你好");
  await s.until(/本轮  /);
  s.end();
  assert.equal(await s.status, 1, s.out);
  assert.match(lines(s.out, "失败  ")[0] ?? "", /^失败  \[PROVIDER_UNREACHABLE\] /);

  const ok = session(t);
  await ok.until(/命令  /);
  ok.send("看看 src/greet.js");
  await ok.until(/本轮  /);
  ok.end();
  assert.equal(await ok.status, 0, ok.out);
});

test("npm start --interactive: a refused turn leaves the conversation as it was; trimming is announced, and carried in --json", LIMITS, async (t) => {
  const s = session(t);
  await s.until(/命令  /);
  s.send("看看 src/greet.js");
  await s.until(/本轮  stop/);
  s.send("很长".repeat(20_000));
  await s.until(/恢复  /);
  assert.match(lines(s.out, "失败  ")[0] ?? "", /^失败  \[RUNTIME_CONTEXT_OVERFLOW\] .*超过上限 8000；要让它放得下：--context-tokens \d+/);
  assert.match(lines(s.out, "恢复  ")[0] ?? "", /它的 1 条消息已从对话里撤回，会话回到这一轮之前（10 条消息）/);
  s.send("看看 src/greet.js");
  await s.until(/本轮  stop[\s\S]*本轮  stop/);
  s.end();
  assert.equal(await s.status, 1, "a turn was refused");
  assert.doesNotMatch(s.out, /裁剪  /, "the refused message takes nothing out of the window");

  // The same two turns without the refused one in between: the same requests, token for token.
  const control = session(t);
  await control.until(/命令  /);
  control.send("看看 src/greet.js");
  control.send("看看 src/greet.js");
  await control.until(/本轮  stop[\s\S]*本轮  stop/);
  control.end();
  assert.equal(await control.status, 0);
  assert.deepEqual(lines(s.out, "请求  "), lines(control.out, "请求  "), "the refused turn left nothing behind");

  // A conversation longer than the window: older messages are left out of a request, and it says so.
  const long = session(t, ["--context-tokens", "2048"]);
  await long.until(/命令  /);
  for (let i = 0; i < 6; i++) long.send("看看 src/greet.js");
  await long.until(/(本轮  stop[\s\S]*){6}/);
  long.end();
  await long.status;
  assert.match(long.out, /\n裁剪  上下文窗口放不下整段对话：这次请求省去了最早的 \d+ 条消息（它们还在会话里；要带上它们：--context-tokens/);

  const json = session(t, ["--context-tokens", "2048", "--json"]);
  for (let i = 0; i < 6; i++) json.send("看看 src/greet.js");
  await json.until(/("type":"turn_end"[\s\S]*){6}/);
  json.end();
  await json.status;
  const requests = json.out
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((event) => event.type === "request");
  assert.ok(requests.some((request) => request.reason === "trimmed" && Number(request.droppedMessages) > 0));
  assert.ok(requests.every((request) => request.reason === "trimmed" || request.reason === "within_budget"));
});

test("npm start --interactive: each turn's answer speaks of that turn only", LIMITS, async (t) => {
  const s = session(t);
  await s.until(/命令  /);
  s.send("/skill:deploy 准备发布");
  await s.until(/本轮  /);
  s.send("看看 src/greet.js");
  await s.until(/本轮  [\s\S]*本轮  /);
  s.end();
  await s.status;
  const answers = s.out.split("\n").filter((line) => line.includes("审查了 src/greet.js"));
  assert.equal(answers.length, 2, s.out);
  assert.match(answers[0]!, /参照用户给的技能 deploy，/);
  assert.match(answers[1]!, /按 load_skill 拿到的技能 code-review 的正文/, "the second turn is not answered with the first turn's skill");
});
