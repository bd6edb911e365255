/**
 * Chapter 13 · `npm start -- --provider …`: the runtime's session on a real model, both wire
 * formats, reached through a local replay server on 127.0.0.1 (no network). A normal session
 * with a tool call; then every way a provider can fail ends with its code and exit status 1,
 * and no output ever holds the key. Claimed by chapter 13; not a lab.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import test, { type TestContext } from "node:test";
import { main, type StartIo } from "../src/app/runtime-start.js";
import { repoRoot, testSourcePath } from "./support/files.js";
import { closedPort, startReplayServer, type ReplayServer, type ReplayStep } from "./support/replay-server.js";

/** A safety net only: each session ends in well under a second; this bounds one that would hang. */
const LIMITS = { timeout: 30_000 };
const ANTHROPIC_KEY = "sk-ant-start-KEYCHECK-77c1";
const OPENAI_KEY = "sk-start-KEYCHECK-e3a0";

interface Wire {
  provider: "anthropic" | "openai-compatible";
  dir: string;
  toolFixture: string;
  path: string;
  /** The command line and environment that point the session at `origin`. */
  args(origin: string): { argv: string[]; env: NodeJS.ProcessEnv };
  /** `toolFixture` with its stop reason replaced: the same calls, cut off at the token limit. */
  cutOff(body: string): string;
}

const WIRES: Wire[] = [
  {
    provider: "anthropic",
    dir: "anthropic",
    toolFixture: "tool-use.sse",
    path: "/v1/messages",
    args: (origin) => ({ argv: ["--provider", "anthropic"], env: { ANTHROPIC_API_KEY: ANTHROPIC_KEY, ANTHROPIC_BASE_URL: origin } }),
    cutOff: (body) => body.replace('"stop_reason":"tool_use"', '"stop_reason":"max_tokens"'),
  },
  {
    provider: "openai-compatible",
    dir: "openai",
    toolFixture: "tool-calls.sse",
    path: "/v1/chat/completions",
    args: (origin) => ({ argv: ["--provider", "openai-compatible", "--base-url", `${origin}/v1`], env: { OPENAI_API_KEY: OPENAI_KEY } }),
    cutOff: (body) => body.replace('"finish_reason":"tool_calls"', '"finish_reason":"length"'),
  },
];

const fixture = (wire: Wire, name: string) => readFileSync(testSourcePath("fixtures", wire.dir, name), "utf8");
const INPUT = ["--input", "读一下 src/greet.js"];

interface Run {
  status: number;
  out: string;
  err: string;
  lines: string[];
  server: ReplayServer;
}

/** `npm start` with `argv` against a replay server playing `steps`; asserts no key was printed. */
async function start(t: TestContext, wire: Wire, steps: ReplayStep[], extra: string[] = INPUT, io: Partial<StartIo> = {}): Promise<Run> {
  const server = await startReplayServer(t, steps);
  const { argv, env } = wire.args(server.origin);
  let out = "";
  let err = "";
  const status = await main([...argv, ...extra], { out: (s) => (out += s), err: (s) => (err += s), cwd: repoRoot, env, sleep: async () => {}, ...io });
  for (const key of [ANTHROPIC_KEY, OPENAI_KEY]) {
    assert.ok(!out.includes(key) && !err.includes(key), `the key was printed:\n${out}${err}`);
    assert.ok(!out.includes(key.slice(-8)) && !err.includes(key.slice(-8)), "a part of the key was printed");
  }
  return { status, out, err, lines: out.split("\n"), server };
}

const line = (run: Run, prefix: string) => run.lines.find((l) => l.startsWith(prefix));

test(
  "npm start --provider (both wire formats): the model calls read, the tool runs on the copy, its result goes back, the answer ends the session",
  LIMITS,
  async (t) => {
    for (const wire of WIRES) {
      const run = await start(t, wire, [{ body: fixture(wire, wire.toolFixture) }, { body: fixture(wire, "text.sse") }]);
      assert.equal(run.status, 0, `${wire.provider}\n${run.out}${run.err}`);
      assert.equal(run.err, "");
      const model = wire.provider === "anthropic" ? "claude-sonnet-4-5" : "gpt-oss:20b";
      assert.equal(line(run, "模型  "), `模型  ${wire.provider} · ${model} · ${run.server.origin}（key 只从环境变量读取，不会打印）`);
      assert.ok(line(run, '调用  read {"path":"src/greet.js","limit":40}'), run.out);
      assert.match(line(run, "结果  ✓ ") ?? "", /^结果  ✓ \/\/ Greets a person by name\./, "the file's content came back");
      assert.equal(line(run, "助手  你好，"), "助手  你好，我在。😀");
      assert.match(line(run, "结束  ") ?? "", /^结束  stop · 模型调用 2 次/);

      assert.equal(run.server.requests.length, 2, wire.provider);
      for (const request of run.server.requests) assert.equal(request.url, wire.path);
      const [first, second] = run.server.requests.map((r) => JSON.parse(r.body) as Record<string, unknown>);
      const firstText = JSON.stringify(first);
      assert.match(firstText, /# Skills/, "the skill catalog is in the system prompt");
      assert.match(firstText, /load_skill/, "load_skill is offered as a tool");
      assert.doesNotMatch(firstText, /代码审查清单/, "no skill body before the model asks for it");
      assert.match(JSON.stringify(second), /greet/, "the second request carries the tool result");
      const auth = wire.provider === "anthropic" ? run.server.requests[0]!.headers["x-api-key"] : run.server.requests[0]!.headers.authorization;
      assert.equal(auth, wire.provider === "anthropic" ? ANTHROPIC_KEY : `Bearer ${OPENAI_KEY}`, "the key goes in the header, and only there");
    }
  },
);

test("npm start --provider --json: the model, the calls, the results and the end as JSON lines", LIMITS, async (t) => {
  const wire = WIRES[1]!;
  const run = await start(t, wire, [{ body: fixture(wire, wire.toolFixture) }, { body: fixture(wire, "text.sse") }], [...INPUT, "--json"]);
  assert.equal(run.status, 0, run.out + run.err);
  const events = run.lines.filter((l) => l !== "").map((l) => JSON.parse(l) as { type: string; [key: string]: unknown });
  assert.deepEqual(
    events.find((e) => e.type === "model"),
    { type: "model", provider: "openai-compatible", model: "gpt-oss:20b", origin: run.server.origin },
  );
  assert.deepEqual(
    events.filter((e) => e.type === "tool_call").map((e) => e.name),
    ["read", "list"],
  );
  assert.equal(events.filter((e) => e.type === "tool_result").length, 2, "every call is answered");
  assert.deepEqual(events.at(-1), { type: "end", stopReason: "stop", turns: 2, toolCalls: 2, blocked: 0, skillLoads: 0 });
});

test("npm start --provider: a 429 with retry-after is retried once and the session goes on; four are PROVIDER_RATE_LIMITED, exit 1", LIMITS, async (t) => {
  for (const wire of WIRES) {
    const limited: ReplayStep = { status: 429, headers: { "retry-after": "2" }, body: fixture(wire, "http-429.json") };
    const waits: number[] = [];
    const once = await start(t, wire, [limited, { body: fixture(wire, "text.sse") }], INPUT, { sleep: async (ms) => void waits.push(ms) });
    assert.equal(once.status, 0, once.out);
    assert.deepEqual(waits, [2000], "the wait the server asked for");
    assert.match(line(once, "重试  ") ?? "", /^重试  第 1 次请求没有成功 \[PROVIDER_RATE_LIMITED\]，2 秒后再试：HTTP 429 /);

    const always = await start(t, wire, [limited, limited, limited, limited]);
    assert.equal(always.status, 1, wire.provider);
    assert.match(line(always, "失败  ") ?? "", /^失败  \[PROVIDER_RATE_LIMITED\] .*共尝试 4 次/);
    assert.match(line(always, "结束  ") ?? "", /^结束  error /);
    assert.equal(always.server.requests.length, 4, "at most four attempts");
  }
});

test("npm start --provider: a 401 is PROVIDER_UNAUTHORIZED at once, naming the variable to check; exit 1", LIMITS, async (t) => {
  for (const wire of WIRES) {
    const run = await start(t, wire, [{ status: 401, body: fixture(wire, "http-401.json") }]);
    assert.equal(run.status, 1);
    assert.match(
      line(run, "失败  ") ?? "",
      wire.provider === "anthropic" ? /^失败  \[PROVIDER_UNAUTHORIZED\] .*ANTHROPIC_API_KEY/ : /^失败  \[PROVIDER_UNAUTHORIZED\] .*OPENAI_API_KEY/,
    );
    assert.equal(run.server.requests.length, 1, "not retried");
    assert.equal(line(run, "重载  "), undefined, "no reload after a failed turn");
  }
});

test("npm start --provider: overloaded (529 until the retries run out, or an error event mid-answer) is PROVIDER_OVERLOADED; exit 1", LIMITS, async (t) => {
  const wire = WIRES[0]!;
  const http529: ReplayStep = { status: 529, body: fixture(wire, "http-529.json") };
  const exhausted = await start(t, wire, [http529, http529, http529, http529]);
  assert.equal(exhausted.status, 1);
  assert.equal(exhausted.lines.filter((l) => l.startsWith("重试  ")).length, 3);
  assert.match(line(exhausted, "失败  ") ?? "", /^失败  \[PROVIDER_OVERLOADED\] /);

  const midstream = await start(t, wire, [{ body: fixture(wire, "overloaded-midstream.sse") }]);
  assert.equal(midstream.status, 1);
  assert.match(line(midstream, "失败  ") ?? "", /^失败  \[PROVIDER_OVERLOADED\] /);
  assert.equal(midstream.server.requests.length, 1, "an answer already begun is not sent again");

  const openai = WIRES[1]!;
  const busy = await start(
    t,
    openai,
    Array.from({ length: 4 }, () => ({ status: 503, body: fixture(openai, "http-503.json") })),
  );
  assert.equal(busy.status, 1);
  assert.match(line(busy, "失败  ") ?? "", /^失败  \[PROVIDER_OVERLOADED\] /);
});

test(
  "npm start --provider: a connection dropped mid-answer is PROVIDER_STREAM_ENDED, a call it completed is answered, not run; a refused one PROVIDER_UNREACHABLE; exit 1",
  LIMITS,
  async (t) => {
    for (const wire of WIRES) {
      const body = fixture(wire, "text.sse");
      const dropped = await start(t, wire, [{ body: body.slice(0, body.indexOf("\n\n", body.indexOf("我在")) + 2), drop: true }]);
      assert.equal(dropped.status, 1, dropped.out);
      assert.match(line(dropped, "失败  ") ?? "", /^失败  \[PROVIDER_STREAM_ENDED\] /);

      // Cut after the first call was complete: it stays, is not run, and is answered.
      const tools = fixture(wire, wire.toolFixture);
      const afterCall = wire.provider === "anthropic" ? tools.indexOf('"content_block_stop","index":2') : tools.indexOf('"index":1,"id":"call_3Vn8pLs1Yd6E"');
      const cutAfterCall = await start(t, wire, [{ body: tools.slice(0, tools.indexOf("\n\n", afterCall) + 2), drop: true }]);
      assert.equal(cutAfterCall.status, 1, cutAfterCall.out);
      assert.match(line(cutAfterCall, "结果  ") ?? "", /^结果  ✗ tool "read" was not run: the model's turn failed before it finished/);
      assert.match(line(cutAfterCall, "失败  ") ?? "", /^失败  \[PROVIDER_STREAM_ENDED\] /);

      const port = await closedPort();
      const args = wire.args(`http://127.0.0.1:${port}`);
      let out = "";
      const status = await main([...args.argv, ...INPUT], { out: (s) => (out += s), err: () => {}, cwd: repoRoot, env: args.env, sleep: async () => {} });
      assert.equal(status, 1);
      assert.match(out, /\n失败  \[PROVIDER_UNREACHABLE\] 连不上 http:\/\/127\.0\.0\.1:\d+/);
    }
  },
);

test(
  "npm start --provider: the loop's end states — calls cut off at the token limit run none and are each answered; toolUse with no call is LOOP_TOOL_CALLS_MISSING",
  LIMITS,
  async (t) => {
    for (const wire of WIRES) {
      const cut = await start(t, wire, [{ body: wire.cutOff(fixture(wire, wire.toolFixture)) }]);
      assert.equal(cut.status, 1);
      const results = cut.lines.filter((l) => l.startsWith("结果  "));
      assert.ok(results.length >= 1 && results.every((l) => l.startsWith('结果  ✗ tool "')), cut.out);
      assert.match(results[0]!, /was not run: the model's output was cut off/);
      assert.match(line(cut, "失败  ") ?? "", /^失败  \[TURN_CUT_OFF\] /);
      assert.match(line(cut, "结束  ") ?? "", /^结束  length · 模型调用 1 次/);
      assert.equal(cut.server.requests.length, 1);

      // Cut off in the middle of the call's arguments (its last piece, and any later call, never came): the same end.
      const halfWritten = wire
        .cutOff(fixture(wire, wire.toolFixture))
        .split("\n\n")
        .filter((event) => !/"(partial_json|arguments)":"0\}"|"id":"call_3Vn8pLs1Yd6E"/.test(event))
        .join("\n\n");
      const half = await start(t, wire, [{ body: halfWritten }]);
      assert.equal(half.status, 1, wire.provider);
      const halfResults = half.lines.filter((l) => l.startsWith("结果  "));
      assert.equal(halfResults.length, 1, `${wire.provider}\n${half.out}`);
      assert.match(halfResults[0]!, /^结果  ✗ tool "read" was not run: the model's output was cut off/);
      assert.match(line(half, "失败  ") ?? "", /^失败  \[TURN_CUT_OFF\] /, `${wire.provider}\n${half.out}`);
      assert.match(line(half, "结束  ") ?? "", /^结束  length · 模型调用 1 次/);
    }
    const anthropic = WIRES[0]!;
    const noCall =
      [
        'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_01NoCall","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"usage":{"input_tokens":40,"output_tokens":1}}}',
        'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me check."}}',
        'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}',
        'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":6}}',
        'event: message_stop\ndata: {"type":"message_stop"}',
      ].join("\n\n") + "\n\n";
    const missing = await start(t, anthropic, [{ body: noCall }]);
    assert.equal(missing.status, 1);
    assert.match(line(missing, "失败  ") ?? "", /^失败  \[LOOP_TOOL_CALLS_MISSING\] /);
  },
);

test("npm start --provider: options that cannot work are refused before anything is copied or sent, with their code", LIMITS, async () => {
  const run = async (argv: string[], env: NodeJS.ProcessEnv = {}) => {
    let out = "";
    let err = "";
    const status = await main(argv, { out: (s) => (out += s), err: (s) => (err += s), cwd: repoRoot, env });
    return { status, out, err };
  };
  const cases: [string[], NodeJS.ProcessEnv, string][] = [
    [["--provider", "anthropic"], {}, "PROVIDER_KEY_MISSING"],
    [["--provider", "anthropic"], { ANTHROPIC_API_KEY: "  " }, "PROVIDER_KEY_MISSING"],
    [["--provider", "openai-compatible"], {}, "PROVIDER_BASE_URL_MISSING"],
    [["--provider", "openai-compatible", "--base-url", "ftp://127.0.0.1/v1"], {}, "PROVIDER_BASE_URL_INVALID"],
    [["--provider", "openai-compatible", "--base-url", `http://me:${OPENAI_KEY}@127.0.0.1/v1`], {}, "PROVIDER_BASE_URL_INVALID"],
    [["--provider", "anthropic", "--model", "two words"], { ANTHROPIC_API_KEY: ANTHROPIC_KEY }, "PROVIDER_OPTIONS_INVALID"],
    [["--provider", "gemini"], {}, "PROVIDER_UNKNOWN"],
  ];
  for (const [argv, env, code] of cases) {
    const result = await run(argv, env);
    assert.equal(result.status, 1, argv.join(" "));
    assert.equal(result.out, "", "nothing of a session was printed");
    assert.match(result.err, new RegExp(`^错误  \\[${code}\\] `), argv.join(" "));
    assert.ok(!result.err.includes(ANTHROPIC_KEY) && !result.err.includes(OPENAI_KEY), result.err);
  }
  for (const argv of [
    ["--model", "x"],
    ["--base-url", "http://127.0.0.1/v1"],
    ["--timeout", "5"],
    ["--provider", "anthropic", "--timeout", "0"],
    ["--context-tokens", "100"],
  ]) {
    const result = await run(argv, { ANTHROPIC_API_KEY: ANTHROPIC_KEY });
    assert.equal(result.status, 2, argv.join(" "));
    assert.match(result.err, /^用法错误：/);
  }
});
