import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import test, { type TestContext } from "node:test";
import { inspect } from "node:util";
import { DEFAULT_ANTHROPIC_MODEL } from "../src/anthropic.js";
import { finalTurn, type AssistantTurn, type ModelRequest } from "../src/model.js";
import { DEFAULT_OPENAI_MODEL } from "../src/openai.js";
import { createProviderModel, type ProviderModel, type ProviderModelOptions } from "../src/provider.js";
import { ProviderError } from "../src/provider-error.js";
import type { RetryInfo, Sleep } from "../src/provider-retry.js";
import { testSourcePath } from "./support/files.js";
import { closedPort, startReplayServer, type ReplayStep } from "./support/replay-server.js";

/** A safety net only: each test finishes in a fraction of a second, this bounds one that would hang. */
const LIMITS = { timeout: 20_000 };
const ANTHROPIC_KEY = "sk-ant-test-KEYCHECK-3f9a";
const OPENAI_KEY = "sk-test-KEYCHECK-b81d";

/** One wire format, as the factory reaches it, and where its recordings are. */
interface Wire {
  provider: "anthropic" | "openai-compatible";
  dir: string;
  toolFixture: string;
  path: string;
  /** How many events of `text.sse` arrive before a drop: all of the text, none of the end. */
  textEvents: number;
  options(origin: string): Pick<ProviderModelOptions, "env" | "baseUrl">;
}

const WIRES: Wire[] = [
  {
    provider: "anthropic",
    dir: "anthropic",
    toolFixture: "tool-use.sse",
    path: "/v1/messages",
    textEvents: 5,
    options: (origin) => ({ env: { ANTHROPIC_API_KEY: ANTHROPIC_KEY, ANTHROPIC_BASE_URL: origin } }),
  },
  {
    provider: "openai-compatible",
    dir: "openai",
    toolFixture: "tool-calls.sse",
    path: "/v1/chat/completions",
    textEvents: 3,
    options: (origin) => ({ baseUrl: `${origin}/v1`, env: { OPENAI_API_KEY: OPENAI_KEY } }),
  },
];

const fixture = (wire: Wire, name: string) => readFileSync(testSourcePath("fixtures", wire.dir, name), "utf8");
/** The first `n` events of a recording, each with its blank line. */
const firstEvents = (body: string, n: number) => `${body.split("\n\n").slice(0, n).join("\n\n")}\n\n`;

const request: ModelRequest = { systemPrompt: "", messages: [{ role: "user", content: [{ type: "text", text: "hi" }], timestamp: 1 }], tools: [] };

/** A sleep that only records the wait it was asked for. */
function recordingSleep(): { sleep: Sleep; waits: number[] } {
  const waits: number[] = [];
  return { waits, sleep: async (ms) => void waits.push(ms) };
}

function providerModel(wire: Wire, origin: string, extra: Partial<ProviderModelOptions> = {}): ProviderModel {
  return createProviderModel({ provider: wire.provider, ...wire.options(origin), timeoutMs: 10_000, now: () => 5, sleep: recordingSleep().sleep, ...extra });
}

async function turnOf(t: TestContext, wire: Wire, steps: ReplayStep[], extra: Partial<ProviderModelOptions> = {}) {
  const server = await startReplayServer(t, steps);
  const turn = await finalTurn(providerModel(wire, server.origin, extra).stream(request));
  return { turn, server };
}

test("工厂 · 工厂：默认的模型 id 与地址；选项不能用时立刻给出带代码的错误，一个请求也不发", () => {
  const anthropic = createProviderModel({ provider: "anthropic", env: { ANTHROPIC_API_KEY: ANTHROPIC_KEY } });
  assert.deepEqual(
    [anthropic.name, anthropic.provider, anthropic.model, anthropic.origin],
    ["anthropic:claude-sonnet-4-5", "anthropic", DEFAULT_ANTHROPIC_MODEL, "https://api.anthropic.com"],
  );
  const viaEnv = createProviderModel({
    provider: "anthropic",
    model: "claude-haiku-4-5",
    env: { ANTHROPIC_API_KEY: ANTHROPIC_KEY, ANTHROPIC_BASE_URL: "http://127.0.0.1:8787/" },
  });
  assert.deepEqual([viaEnv.model, viaEnv.origin], ["claude-haiku-4-5", "http://127.0.0.1:8787"]);
  const local = createProviderModel({ provider: "openai-compatible", baseUrl: "http://127.0.0.1:11434/v1", env: {} });
  assert.deepEqual([local.name, local.model, local.origin], [`openai-compatible:${DEFAULT_OPENAI_MODEL}`, "gpt-oss:20b", "http://127.0.0.1:11434"]);

  let fetched = 0;
  const counting = (async () => {
    fetched++;
    throw new Error("no request may be sent");
  }) as unknown as typeof fetch;
  const cases: [string, ProviderModelOptions, string, RegExp][] = [
    ["unknown provider", { provider: "gemini", env: {} }, "PROVIDER_UNKNOWN", /anthropic 或 openai-compatible/],
    ["no Anthropic key", { provider: "anthropic", env: {} }, "PROVIDER_KEY_MISSING", /ANTHROPIC_API_KEY/],
    ["a blank Anthropic key", { provider: "anthropic", env: { ANTHROPIC_API_KEY: "  " } }, "PROVIDER_KEY_MISSING", /export ANTHROPIC_API_KEY=/],
    ["no base URL", { provider: "openai-compatible", env: {} }, "PROVIDER_BASE_URL_MISSING", /--base-url.*11434\/v1/],
    [
      "a base URL without scheme",
      { provider: "openai-compatible", baseUrl: "localhost:11434/v1", env: {} },
      "PROVIDER_BASE_URL_INVALID",
      /http:\/\/ 或 https:\/\//,
    ],
    ["a base URL with a query", { provider: "openai-compatible", baseUrl: "http://127.0.0.1/v1?x=1", env: {} }, "PROVIDER_BASE_URL_INVALID", /查询参数/],
    [
      "a bad ANTHROPIC_BASE_URL",
      { provider: "anthropic", env: { ANTHROPIC_API_KEY: ANTHROPIC_KEY, ANTHROPIC_BASE_URL: "api.anthropic.com" } },
      "PROVIDER_BASE_URL_INVALID",
      /ANTHROPIC_BASE_URL/,
    ],
    ["an empty model id", { provider: "anthropic", model: "", env: { ANTHROPIC_API_KEY: ANTHROPIC_KEY } }, "PROVIDER_OPTIONS_INVALID", /--model/],
    ["a zero timeout", { provider: "anthropic", timeoutMs: 0, env: { ANTHROPIC_API_KEY: ANTHROPIC_KEY } }, "PROVIDER_OPTIONS_INVALID", /timeoutMs/],
    ["fractional retries", { provider: "anthropic", maxRetries: 1.5, env: { ANTHROPIC_API_KEY: ANTHROPIC_KEY } }, "PROVIDER_OPTIONS_INVALID", /0 到 10/],
    ["too many retries", { provider: "anthropic", maxRetries: 11, env: { ANTHROPIC_API_KEY: ANTHROPIC_KEY } }, "PROVIDER_OPTIONS_INVALID", /maxRetries/],
    ["zero output tokens", { provider: "openai-compatible", baseUrl: "http://127.0.0.1/v1", maxTokens: 0, env: {} }, "PROVIDER_OPTIONS_INVALID", /maxTokens/],
  ];
  for (const [label, options, code, message] of cases) {
    assert.throws(
      () => createProviderModel({ ...options, fetch: counting }),
      (error: unknown) => {
        assert.ok(error instanceof ProviderError, label);
        assert.equal(error.code, code, label);
        assert.match(error.message, message, label);
        return true;
      },
    );
  }
  const credentials = (() => {
    try {
      createProviderModel({ provider: "openai-compatible", baseUrl: "http://me:hunter22@127.0.0.1/v1", env: {} });
    } catch (error) {
      return error;
    }
    return undefined;
  })();
  assert.ok(credentials instanceof ProviderError);
  assert.equal(credentials.code, "PROVIDER_BASE_URL_INVALID");
  assert.equal(inspect(credentials, { depth: 5 }).includes("hunter22"), false, "地址里的密码不出现在错误里");
  assert.equal(fetched, 0);
});

test("工厂 · 两种协议经本机回放服务器：正常回合与工具回合；Anthropic 带 x-api-key 与版本头，OpenAI 兼容服务带 Bearer", LIMITS, async (t) => {
  for (const wire of WIRES) {
    const server = await startReplayServer(t, [{ body: fixture(wire, "text.sse") }, { body: fixture(wire, wire.toolFixture) }]);
    const model = providerModel(wire, server.origin);
    const text = await finalTurn(model.stream(request));
    assert.deepEqual(
      text,
      {
        message: { role: "assistant", content: [{ type: "text", text: "你好，我在。😀" }], timestamp: 5 },
        stopReason: "stop",
        usage: { inputTokens: 25, outputTokens: 12 },
      },
      wire.provider,
    );
    const tool = await finalTurn(model.stream(request));
    assert.equal(tool.stopReason, "toolUse", wire.provider);
    assert.deepEqual(
      tool.message.content.find((block) => block.type === "toolCall"),
      {
        type: "toolCall",
        id: wire.provider === "anthropic" ? "toolu_01T1x1fJ34qAmk2tNTrN7Up6" : "call_9Jk2mQ7rXw4T",
        name: "read",
        arguments: { path: "src/greet.js", limit: 40 },
      },
    );
    const sent = server.requests[0]!;
    assert.equal(sent.url, wire.path, wire.provider);
    assert.equal(JSON.parse(sent.body).model, wire.provider === "anthropic" ? DEFAULT_ANTHROPIC_MODEL : DEFAULT_OPENAI_MODEL);
    if (wire.provider === "anthropic") {
      assert.equal(sent.headers["x-api-key"], ANTHROPIC_KEY);
      assert.equal(sent.headers["anthropic-version"], "2023-06-01");
      assert.equal(sent.headers.authorization, undefined);
    } else {
      assert.equal(sent.headers.authorization, `Bearer ${OPENAI_KEY}`);
      assert.equal(sent.headers["x-api-key"], undefined);
    }
  }
});

test("工厂 · 429 带 retry-after（两种协议）：按它等一次再发，onRetry 听到，第二次的回合正常", LIMITS, async (t) => {
  for (const wire of WIRES) {
    const { sleep, waits } = recordingSleep();
    const retries: RetryInfo[] = [];
    const { turn, server } = await turnOf(
      t,
      wire,
      [{ status: 429, headers: { "retry-after": "3" }, body: fixture(wire, "http-429.json") }, { body: fixture(wire, "text.sse") }],
      {
        sleep,
        onRetry: (info) => retries.push(info),
      },
    );
    assert.equal(turn.stopReason, "stop", wire.provider);
    assert.equal(server.requests.length, 2, wire.provider);
    assert.deepEqual(waits, [3000], wire.provider);
    assert.deepEqual(
      retries.map((r) => [r.attempt, r.code, r.status, r.delayMs]),
      [[1, "PROVIDER_RATE_LIMITED", 429, 3000]],
      wire.provider,
    );
  }
});

test("工厂 · 401（两种协议）：不重试，failure 是 PROVIDER_UNAUTHORIZED，说明去检查哪个环境变量", LIMITS, async (t) => {
  for (const wire of WIRES) {
    const { sleep, waits } = recordingSleep();
    const { turn, server } = await turnOf(t, wire, [{ status: 401, body: fixture(wire, "http-401.json") }], { sleep });
    assert.equal(turn.stopReason, "error");
    assert.equal(turn.failure?.code, "PROVIDER_UNAUTHORIZED", wire.provider);
    assert.match(turn.errorMessage ?? "", /^HTTP 401 invalid_request_error: Incorrect API key|^HTTP 401 authentication_error: invalid x-api-key$/);
    assert.match(turn.failure?.message ?? "", wire.provider === "anthropic" ? /ANTHROPIC_API_KEY/ : /OPENAI_API_KEY/);
    assert.equal(server.requests.length, 1, wire.provider);
    assert.deepEqual(waits, []);
  }
});

test(
  "工厂 · 过载：529 与回答开始前的 overloaded_error 事件都会重试，回答途中的不重试；OpenAI 兼容服务的 503 也重试；重试用完是 PROVIDER_OVERLOADED",
  LIMITS,
  async (t) => {
    const [anthropic, openai] = WIRES as [Wire, Wire];
    const http529: ReplayStep = { status: 529, body: fixture(anthropic, "http-529.json") };

    const recovered = recordingSleep();
    const { turn, server } = await turnOf(
      t,
      anthropic,
      [http529, { body: fixture(anthropic, "overloaded-early.sse") }, { body: fixture(anthropic, "text.sse") }],
      { sleep: recovered.sleep, maxRetries: 2 },
    );
    assert.equal(turn.stopReason, "stop");
    assert.equal(server.requests.length, 3);
    assert.deepEqual(recovered.waits, [1000, 2000], "没有 retry-after 时按默认策略退避：1 秒、2 秒");

    const exhausted = await turnOf(t, anthropic, [http529, http529, http529, { body: fixture(anthropic, "text.sse") }], { maxRetries: 2 });
    assert.equal(exhausted.turn.failure?.code, "PROVIDER_OVERLOADED");
    assert.equal(exhausted.turn.errorMessage, "HTTP 529 overloaded_error: Overloaded");
    assert.match(exhausted.turn.failure?.message ?? "", /共尝试 3 次/);
    assert.equal(exhausted.server.requests.length, 3);

    const midstream = await turnOf(t, anthropic, [{ body: fixture(anthropic, "overloaded-midstream.sse") }, { body: fixture(anthropic, "text.sse") }]);
    assert.equal(midstream.turn.failure?.code, "PROVIDER_OVERLOADED");
    assert.deepEqual(midstream.turn.message.content, [{ type: "text", text: "Let me" }], "已经交出去的文字不会因为重试而重复");
    assert.equal(midstream.server.requests.length, 1);

    const busy = await turnOf(t, openai, [{ status: 503, body: fixture(openai, "http-503.json") }, { body: fixture(openai, "text.sse") }]);
    assert.equal(busy.turn.stopReason, "stop");
    assert.equal(busy.server.requests.length, 2);
  },
);

test("工厂 · 连接在回答途中断开（两种协议）：PROVIDER_STREAM_ENDED，已到达的文字保留，不重试", LIMITS, async (t) => {
  for (const wire of WIRES) {
    const { turn, server } = await turnOf(t, wire, [
      { body: firstEvents(fixture(wire, "text.sse"), wire.textEvents), drop: true },
      { body: fixture(wire, "text.sse") },
    ]);
    assert.equal(turn.stopReason, "error", wire.provider);
    assert.equal(turn.failure?.code, "PROVIDER_STREAM_ENDED", wire.provider);
    assert.match(turn.errorMessage ?? "", /^the response broke off: /);
    assert.deepEqual(turn.message.content, [{ type: "text", text: "你好，我在。😀" }], wire.provider);
    assert.equal(server.requests.length, 1, wire.provider);
  }
});

test("工厂 · 连接被拒（两种协议）：PROVIDER_UNREACHABLE，说明要检查的地址设置，不重试", LIMITS, async () => {
  const origin = `http://127.0.0.1:${await closedPort()}`;
  for (const wire of WIRES) {
    const { sleep, waits } = recordingSleep();
    const turn = await finalTurn(providerModel(wire, origin, { sleep }).stream(request));
    assert.equal(turn.stopReason, "error");
    assert.equal(turn.failure?.code, "PROVIDER_UNREACHABLE", wire.provider);
    assert.match(turn.errorMessage ?? "", /ECONNREFUSED/);
    assert.match(
      turn.failure?.message ?? "",
      wire.provider === "anthropic" ? /连不上 http:\/\/127\.0\.0\.1:\d+.*ANTHROPIC_BASE_URL/ : /连不上 http:\/\/127\.0\.0\.1:\d+.*--base-url/,
    );
    assert.deepEqual(waits, []);
  }
});

test("工厂 · 沉默的服务是 PROVIDER_TIMEOUT；Ctrl-C（工厂的 signal 或回合的 signal）让回合立刻以 aborted 结束，保留已到达的文字", LIMITS, async (t) => {
  for (const wire of WIRES) {
    const silent = await turnOf(t, wire, [{ hang: true }], { timeoutMs: 50 });
    assert.equal(silent.turn.failure?.code, "PROVIDER_TIMEOUT", wire.provider);

    for (const where of ["factory", "turn"] as const) {
      const server = await startReplayServer(t, [{ body: firstEvents(fixture(wire, "text.sse"), wire.textEvents), stall: true }]);
      const controller = new AbortController();
      const model = providerModel(wire, server.origin, where === "factory" ? { signal: controller.signal } : {});
      const stream = model.stream(request, where === "turn" ? { signal: controller.signal } : {});
      let text = "";
      for await (const event of stream) {
        if (event.type === "text_delta") text += event.delta;
        if (text === "你好，我在。😀") controller.abort(new Error("Ctrl-C"));
      }
      const turn = await stream.result();
      assert.equal(turn.stopReason, "aborted", `${wire.provider} ${where}`);
      assert.match(turn.errorMessage ?? "", /Ctrl-C/);
      assert.deepEqual(turn.message.content, [{ type: "text", text: "你好，我在。😀" }]);
    }
  }
});

test("工厂 · 密钥从不出现：错误消息、错误的属性、回合、onRetry 和打印出来的内容里都没有 key", LIMITS, async (t) => {
  const keys = [ANTHROPIC_KEY, OPENAI_KEY];
  const printed: string[] = [];
  for (const method of ["log", "error", "warn", "info", "debug"] as const)
    t.mock.method(console, method, (...args: unknown[]) => void printed.push(args.map((a) => inspect(a)).join(" ")));
  const seen: unknown[] = [];
  const record = (value: unknown) => {
    seen.push(value);
    console.error(value); // what a careless runtime would print
    return value;
  };

  const port = await closedPort();
  for (const wire of WIRES) {
    const key = wire.provider === "anthropic" ? ANTHROPIC_KEY : OPENAI_KEY;
    const echo = JSON.stringify({ type: "error", error: { type: "authentication_error", message: `invalid key: ${key}` } });
    const server = await startReplayServer(t, [
      { status: 401, body: echo },
      { status: 429, body: echo },
      { status: 429, body: echo },
      { body: firstEvents(fixture(wire, "text.sse"), wire.textEvents), drop: true },
    ]);
    const model = record(providerModel(wire, server.origin, { maxRetries: 1, onRetry: record })) as ProviderModel;
    for (let i = 0; i < 3; i++) record(await finalTurn(model.stream(request)));
    record(await finalTurn(providerModel(wire, `http://127.0.0.1:${port}`).stream(request)));
    assert.ok(
      server.requests.every((r) => r.headers["x-api-key"] === key || r.headers.authorization === `Bearer ${key}`),
      "the key was sent, so the test can catch a leak",
    );
  }
  for (const options of [
    { provider: ANTHROPIC_KEY, env: { ANTHROPIC_API_KEY: ANTHROPIC_KEY } },
    { provider: "openai-compatible", baseUrl: `http://127.0.0.1/v1?key=${OPENAI_KEY}`, env: { OPENAI_API_KEY: OPENAI_KEY } },
    { provider: "anthropic", model: ANTHROPIC_KEY + " x", env: { ANTHROPIC_API_KEY: ANTHROPIC_KEY } },
  ]) {
    assert.throws(
      () => createProviderModel(options),
      (error: unknown) => {
        record(error);
        return error instanceof ProviderError;
      },
    );
  }

  const failures = seen.filter((v): v is AssistantTurn => typeof v === "object" && v !== null && "stopReason" in v);
  assert.deepEqual(
    [...new Set(failures.map((turn) => turn.failure?.code))].sort(),
    ["PROVIDER_RATE_LIMITED", "PROVIDER_STREAM_ENDED", "PROVIDER_UNAUTHORIZED", "PROVIDER_UNREACHABLE"],
    "each failure path was taken",
  );
  const everything = [...seen.map((value) => `${inspect(value, { depth: Infinity, showHidden: true })}\n${JSON.stringify(value) ?? ""}`), ...printed].join(
    "\n",
  );
  for (const error of seen.filter((v) => v instanceof ProviderError)) assert.ok(everything.includes(error.message));
  for (const key of keys) assert.equal(everything.includes(key), false, `the key ${key.slice(0, 8)}… never appears`);
  assert.match(everything, /invalid key: \*\*\*/, "the provider's echo of the key is redacted");
});
