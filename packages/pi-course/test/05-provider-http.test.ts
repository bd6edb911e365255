import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import test from "node:test";
import { anthropicRequest, createAnthropicModel, type AnthropicModelOptions } from "../src/anthropic.js";
import { finalTurn, type ModelRequest } from "../src/model.js";
import { createOpenAIModel } from "../src/openai.js";
import { ProviderError } from "../src/provider-error.js";
import { openStream, type HttpRequest, type TransportOptions } from "../src/provider-http.js";
import { decideRetry, parseRetryAfter, withRetries, type RetryInfo, type RetryPolicy, type Sleep } from "../src/provider-retry.js";
import { testSourcePath } from "./support/files.js";
import { closedPort, startReplayServer, type ReplayStep } from "./support/replay-server.js";

const fixture = (...name: string[]) => readFileSync(testSourcePath("fixtures", ...name), "utf8");

/** Every test here is bounded: a silence limit far below the test's own, retries that never really wait. */
const LIMITS = { timeout: 20_000 };
const TIMEOUT_MS = 10_000;

function request(url: string, key = "sk-test-transport"): HttpRequest {
  return {
    url,
    headers: { "content-type": "application/json", "x-api-key": key },
    body: "{}",
    facts: { provider: "Anthropic", model: "claude-sonnet-4-5", keyEnv: "ANTHROPIC_API_KEY", baseUrlFrom: "ANTHROPIC_BASE_URL" },
  };
}

/** A sleep that records what it was asked to wait and returns at once (or when `signal` aborts, if `onWait` aborts it). */
function recordingSleep(onWait?: (ms: number) => void): { sleep: Sleep; waits: number[] } {
  const waits: number[] = [];
  const sleep: Sleep = async (ms, signal) => {
    waits.push(ms);
    onWait?.(ms);
    if (signal?.aborted) throw signal.reason;
  };
  return { sleep, waits };
}

async function readAll(body: AsyncIterable<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

/** Opens `url` through the retry loop with `policy`, as the adapters do. */
function open(url: string, policy: RetryPolicy, options: { sleep?: Sleep; onRetry?: (info: RetryInfo) => void; transport?: TransportOptions } = {}) {
  const transport: TransportOptions = { timeoutMs: TIMEOUT_MS, ...options.transport };
  return withRetries((attempt) => openStream(request(url), transport, attempt), {
    policy,
    signal: transport.signal,
    ...(options.sleep ? { sleep: options.sleep } : {}),
    ...(options.onRetry ? { onRetry: options.onRetry } : {}),
  });
}

const policy = (maxRetries: number, baseDelayMs = 100, maxDelayMs = 250): RetryPolicy => ({ maxRetries, baseDelayMs, maxDelayMs });

test("传输 · 重试策略：retry-after 的三种写法；哪些失败重试、等多久、等太久就不等", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  const cases: [Record<string, string>, number | undefined][] = [
    [{ "retry-after": "2" }, 2000],
    [{ "retry-after": "0.5" }, 500],
    [{ "retry-after": "Thu, 01 Jan 2026 00:00:07 GMT" }, 7000],
    [{ "retry-after": "Wed, 31 Dec 2025 23:59:00 GMT" }, 0],
    [{ "retry-after-ms": "1500", "retry-after": "9" }, 1500],
    [{ "retry-after": "soon" }, undefined],
    [{}, undefined],
  ];
  for (const [headers, expected] of cases) assert.equal(parseRetryAfter(new Headers(headers), now), expected, JSON.stringify(headers));

  const p = policy(3, 100, 250);
  const retryable = { retryable: true };
  assert.deepEqual(
    [1, 2, 3].map((n) => decideRetry(retryable, n, p)),
    [
      { retry: true, delayMs: 100 },
      { retry: true, delayMs: 200 },
      { retry: true, delayMs: 250 },
    ],
    "指数退避，封顶 maxDelayMs",
  );
  assert.deepEqual(decideRetry(retryable, 4, p), { retry: false }, "最多 1 + maxRetries 次");
  assert.deepEqual(decideRetry({ retryable: false }, 1, p), { retry: false });
  assert.deepEqual(decideRetry({ retryable: true, retryAfterMs: 240 }, 1, p), { retry: true, delayMs: 240 }, "服务要求的等待照办");
  assert.deepEqual(decideRetry({ retryable: true, retryAfterMs: 251 }, 1, p), { retry: false, refusedWaitMs: 251 }, "超过上限的等待不缩短，直接放弃");
});

test("传输 · 429 带 retry-after：按服务要求的时间等一次，第二次成功", LIMITS, async (t) => {
  const server = await startReplayServer(t, [
    { status: 429, headers: { "retry-after": "2" }, body: fixture("anthropic", "http-429.json") },
    { body: fixture("anthropic", "text.sse") },
  ]);
  const { sleep, waits } = recordingSleep();
  const retries: RetryInfo[] = [];
  const opened = await open(`${server.origin}/v1/messages`, policy(3, 100, 5000), { sleep, onRetry: (info) => retries.push(info) });
  assert.equal(await readAll(opened.body), fixture("anthropic", "text.sse"));
  assert.equal(server.requests.length, 2);
  assert.deepEqual(waits, [2000], "等的正是 retry-after 说的 2 秒");
  assert.deepEqual(retries, [
    {
      attempt: 1,
      delayMs: 2000,
      code: "PROVIDER_RATE_LIMITED",
      status: 429,
      detail: "HTTP 429 rate_limit_error: This request would exceed your organization's rate limit of 50 requests per minute.",
    },
  ]);
});

test("传输 · 一直过载：最多尝试 1 + maxRetries 次，退避逐次翻倍并封顶，最后是 PROVIDER_OVERLOADED", LIMITS, async (t) => {
  const overloaded: ReplayStep = { status: 529, body: fixture("anthropic", "http-529.json") };
  const server = await startReplayServer(t, [overloaded, overloaded, overloaded, overloaded, { body: fixture("anthropic", "text.sse") }]);
  const { sleep, waits } = recordingSleep();
  const error = await open(`${server.origin}/v1/messages`, policy(3, 100, 250), { sleep }).then(
    () => assert.fail("expected a rejection"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof ProviderError);
  assert.equal(error.code, "PROVIDER_OVERLOADED");
  assert.equal(error.detail, "HTTP 529 overloaded_error: Overloaded");
  assert.equal(error.facts.attempts, 4);
  assert.match(error.message, /共尝试 4 次/);
  assert.equal(server.requests.length, 4, "第五个录制的响应从未被请求");
  assert.deepEqual(waits, [100, 200, 250]);
});

test("传输 · 服务要求等得比上限还久：不缩短等待，立刻失败并说明要等多久", LIMITS, async (t) => {
  const server = await startReplayServer(t, [
    { status: 429, headers: { "retry-after": "120" }, body: fixture("anthropic", "http-429.json") },
    { body: fixture("anthropic", "text.sse") },
  ]);
  const { sleep, waits } = recordingSleep();
  await assert.rejects(open(`${server.origin}/v1/messages`, policy(3, 100, 30_000), { sleep }), (error: unknown) => {
    assert.ok(error instanceof ProviderError);
    assert.equal(error.code, "PROVIDER_RATE_LIMITED");
    assert.equal(error.facts.refusedWaitMs, 120_000);
    assert.match(error.message, /等 120 秒/);
    return true;
  });
  assert.deepEqual(waits, []);
  assert.equal(server.requests.length, 1);
});

test("传输 · 不会因重试而好转的失败只发一次：401、400、连接被拒", LIMITS, async (t) => {
  const port = await closedPort();
  const server = await startReplayServer(t, [
    { status: 401, body: fixture("anthropic", "http-401.json") },
    { status: 400, body: '{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be positive"}}' },
  ]);
  const cases: [string, string, RegExp][] = [
    [`${server.origin}/v1/messages`, "PROVIDER_UNAUTHORIZED", /^HTTP 401 authentication_error: invalid x-api-key$/],
    [`${server.origin}/v1/messages`, "PROVIDER_HTTP", /^HTTP 400 invalid_request_error: max_tokens/],
    [`http://127.0.0.1:${port}/v1/messages`, "PROVIDER_UNREACHABLE", /ECONNREFUSED/],
  ];
  for (const [url, code, detail] of cases) {
    const { sleep, waits } = recordingSleep();
    await assert.rejects(open(url, policy(3), { sleep }), (error: unknown) => {
      assert.ok(error instanceof ProviderError, code);
      assert.equal(error.code, code);
      assert.match(error.detail, detail);
      assert.equal(error.facts.attempts, 1, code);
      return true;
    });
    assert.deepEqual(waits, [], `${code}: no retry`);
  }
  assert.equal(server.requests.length, 2);
});

test("传输 · 超时只限制沉默：迟迟没有响应、或者流到一半不再发数据，都是 PROVIDER_TIMEOUT，且不重试", LIMITS, async (t) => {
  const silent = await startReplayServer(t, [{ hang: true }]);
  const { sleep, waits } = recordingSleep();
  await assert.rejects(open(`${silent.origin}/v1/messages`, policy(3), { sleep, transport: { timeoutMs: 50 } }), (error: unknown) => {
    assert.ok(error instanceof ProviderError);
    assert.equal(error.code, "PROVIDER_TIMEOUT");
    assert.equal(error.facts.timeoutMs, 50);
    assert.match(error.detail, /no data for 50 ms before the response began/);
    return true;
  });
  assert.deepEqual(waits, []);

  // Silence after the headers, from an in-memory response: its headers arrive without any I/O, so
  // on however busy a machine only the silence that follows them can use up the 50 ms.
  const head = fixture("anthropic", "text.sse").split("event: content_block_stop")[0]!;
  const stalled = (async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(head));
        },
      }),
      { status: 200, headers: { "content-type": "text/event-stream" } },
    )) as typeof fetch;
  const opened = await open("http://127.0.0.1:9/v1/messages", policy(0), { transport: { timeoutMs: 50, fetch: stalled } });
  const received: string[] = [];
  await assert.rejects(
    (async () => {
      for await (const chunk of opened.body) received.push(Buffer.from(chunk).toString("utf8"));
    })(),
    (error: unknown) => {
      assert.ok(error instanceof ProviderError);
      assert.equal(error.code, "PROVIDER_TIMEOUT");
      assert.match(error.detail, /no data for 50 ms while the answer was streaming/);
      return true;
    },
  );
  assert.equal(received.join(""), head, "沉默之前到达的内容都读到了");
});

test("传输 · 连接在流到一半时断开：已到达的字节都读到，然后是 PROVIDER_STREAM_ENDED", LIMITS, async (t) => {
  const head = fixture("anthropic", "text.sse").split("event: content_block_stop")[0]!;
  const server = await startReplayServer(t, [{ body: head, drop: true }]);
  const opened = await open(`${server.origin}/v1/messages`, policy(3));
  const received: string[] = [];
  await assert.rejects(
    (async () => {
      for await (const chunk of opened.body) received.push(Buffer.from(chunk).toString("utf8"));
    })(),
    (error: unknown) => {
      assert.ok(error instanceof ProviderError);
      assert.equal(error.code, "PROVIDER_STREAM_ENDED");
      assert.match(error.detail, /^the response broke off: /);
      return true;
    },
  );
  assert.equal(received.join(""), head);
});

test("传输 · 中止：等响应时、读流时、重试等待中，都以 PROVIDER_ABORTED 结束，不再发请求", LIMITS, async (t) => {
  const head = fixture("anthropic", "text.sse").split("event: content_block_stop")[0]!;
  const silent = await startReplayServer(t, [{ hang: true }]);
  const stalling = await startReplayServer(t, [{ body: head, stall: true }]);
  const overloaded = await startReplayServer(t, [{ status: 529, body: fixture("anthropic", "http-529.json") }]);

  const waiting = new AbortController();
  const pending = open(`${silent.origin}/v1/messages`, policy(3), { transport: { signal: waiting.signal } });
  await silent.received(1);
  waiting.abort(new Error("用户按了 Ctrl-C"));
  await assert.rejects(pending, (error: unknown) => {
    assert.ok(error instanceof ProviderError);
    assert.equal(error.code, "PROVIDER_ABORTED");
    assert.match(error.detail, /用户按了 Ctrl-C/);
    return true;
  });

  const reading = new AbortController();
  const opened = await open(`${stalling.origin}/v1/messages`, policy(3), { transport: { signal: reading.signal } });
  await assert.rejects(
    (async () => {
      for await (const _chunk of opened.body) reading.abort("stop");
    })(),
    { code: "PROVIDER_ABORTED" },
  );

  const backingOff = new AbortController();
  const { sleep, waits } = recordingSleep(() => backingOff.abort("stop"));
  await assert.rejects(open(`${overloaded.origin}/v1/messages`, policy(3), { sleep, transport: { signal: backingOff.signal } }), { code: "PROVIDER_ABORTED" });
  assert.deepEqual(waits, [100], "中止发生在第一次等待里");
  assert.equal(overloaded.requests.length, 1, "中止之后没有再发请求");
});

test("传输 · 2xx 却不是事件流：PROVIDER_RESPONSE_INVALID，引用它说了什么", LIMITS, async (t) => {
  const server = await startReplayServer(t, [{ headers: { "content-type": "application/json" }, body: '{"id":"msg_1","content":[]}' }]);
  await assert.rejects(open(`${server.origin}/v1/messages`, policy(3)), (error: unknown) => {
    assert.ok(error instanceof ProviderError);
    assert.equal(error.code, "PROVIDER_RESPONSE_INVALID");
    assert.match(error.detail, /expected a text\/event-stream response, got application\/json: \{"id":"msg_1"/);
    return true;
  });
});

// The Anthropic model over this transport: what reaches a turn from the transport's side.

/** A `fetch` that answers `body` with `status`, in one piece. */
function answering(body: string, status: number): typeof fetch {
  return (async () => new Response(body, { status, headers: { "content-type": status < 300 ? "text/event-stream" : "application/json" } })) as typeof fetch;
}

const anthropicOptions = (fetchImpl: typeof fetch): AnthropicModelOptions => ({
  apiKey: "sk-test",
  model: "claude-sonnet-4-5",
  fetch: fetchImpl,
  now: () => 5,
});
const hi: ModelRequest = { systemPrompt: "", messages: [{ role: "user", content: [{ type: "text", text: "hi" }], timestamp: 1 }], tools: [] };

test("传输 · Anthropic 的请求：POST <base>/v1/messages（base 末尾的 / 去掉），key 只在 x-api-key 头里，带版本头，body 是 JSON", () => {
  const { url, init } = anthropicRequest(hi, { apiKey: "sk-ant-secret-key", model: "claude-sonnet-4-5", baseUrl: "http://127.0.0.1:8787//" });
  assert.equal(url, "http://127.0.0.1:8787/v1/messages");
  assert.equal(init.method, "POST");
  assert.deepEqual(init.headers, {
    "content-type": "application/json",
    accept: "text/event-stream",
    "x-api-key": "sk-ant-secret-key",
    "anthropic-version": "2023-06-01",
  });
  assert.equal(JSON.parse(init.body).model, "claude-sonnet-4-5");
  assert.equal(init.body.includes("sk-ant-secret-key"), false, "key 不在 body 里");
  assert.equal(anthropicRequest(hi, { apiKey: "k", model: "m" }).url, "https://api.anthropic.com/v1/messages");
});

test("传输 · Anthropic 模型：HTTP 错误和网络错误都是 error 回合，errorMessage 引用服务或网络自己的话，从不抛出", async () => {
  const overloaded = await finalTurn(createAnthropicModel(anthropicOptions(answering(fixture("anthropic", "http-529.json"), 529))).stream(hi));
  assert.equal(overloaded.stopReason, "error");
  assert.equal(overloaded.errorMessage, "HTTP 529 overloaded_error: Overloaded");
  assert.equal(overloaded.failure?.code, "PROVIDER_OVERLOADED");

  const plain = await finalTurn(createAnthropicModel(anthropicOptions(answering("Bad Gateway", 502))).stream(hi));
  assert.equal(plain.errorMessage, "HTTP 502 Bad Gateway");

  const offline = (async () => {
    throw new TypeError("fetch failed");
  }) as unknown as typeof fetch;
  const unreachable = await finalTurn(createAnthropicModel(anthropicOptions(offline)).stream(hi));
  assert.equal(unreachable.errorMessage, "fetch failed");
  assert.equal(unreachable.failure?.code, "PROVIDER_UNREACHABLE");

  const unsendable = await finalTurn(
    createAnthropicModel(anthropicOptions(answering(fixture("anthropic", "text.sse"), 200))).stream({
      systemPrompt: "",
      messages: [{ role: "assistant", content: [{ type: "toolCall", id: "t", name: "x", arguments: [1] as never }], timestamp: 0 }],
      tools: [],
    }),
  );
  assert.equal(unsendable.stopReason, "error");
  assert.match(unsendable.errorMessage ?? "", /not an object/);
});

test("传输 · 流里的 error 事件引用了 key：回合的 errorMessage 和 failure 里只有 ***（两种格式，回答开始前后都一样）", async () => {
  const key = "sk-test";
  const echo = `invalid x-api-key ${key} (key ${key})`;
  const midstream = fixture("anthropic", "overloaded-midstream.sse").replace('"message":"Overloaded"', `"message":"${echo}"`);
  const early = `event: error\ndata: {"type":"error","error":{"type":"invalid_request_error","message":"${echo}"}}\n\n`;
  const openAIMidstream = fixture("openai", "midstream-error.sse").replace("The model stopped generating because the server ran out of memory.", echo);
  const turns = [
    await finalTurn(createAnthropicModel(anthropicOptions(answering(midstream, 200))).stream(hi)),
    await finalTurn(createAnthropicModel(anthropicOptions(answering(early, 200))).stream(hi)),
    await finalTurn(createOpenAIModel({ apiKey: key, model: "gpt-oss:20b", baseUrl: "http://127.0.0.1:1", fetch: answering(openAIMidstream, 200) }).stream(hi)),
  ];
  for (const [i, turn] of turns.entries()) {
    assert.equal(turn.stopReason, "error", `第 ${i + 1} 个回合`);
    const shown = JSON.stringify({ errorMessage: turn.errorMessage, failure: turn.failure });
    assert.equal(shown.includes(key), false, `第 ${i + 1} 个回合把 key 说了出来：${shown}`);
    assert.match(turn.errorMessage ?? "", /invalid x-api-key \*\*\* \(key \*\*\*\)/, `第 ${i + 1} 个回合`);
  }
});

test("传输 · Anthropic 模型：中止时请求被取消，回合立刻以 aborted 结束，保留已到达的文本", async () => {
  const controller = new AbortController();
  const head = fixture("anthropic", "text.sse").split("event: content_block_stop")[0]!;
  let requestSignal: AbortSignal | undefined;
  const hanging = (async (_url: string | URL | Request, init?: RequestInit) => {
    requestSignal = init?.signal ?? undefined;
    const bytes = new TextEncoder().encode(head);
    const body = new ReadableStream<Uint8Array>({
      start(stream) {
        stream.enqueue(bytes);
        init?.signal?.addEventListener("abort", () => stream.error(init.signal!.reason));
      },
    });
    return new Response(body, { status: 200 });
  }) as typeof fetch;
  const stream = createAnthropicModel(anthropicOptions(hanging)).stream(hi, { signal: controller.signal });
  const texts: string[] = [];
  for await (const event of stream) {
    if (event.type === "text_delta") texts.push(event.delta);
    if (texts.join("") === "你好，我在。😀") controller.abort("用户中止");
  }
  const turn = await stream.result();
  assert.equal(turn.stopReason, "aborted");
  assert.match(turn.errorMessage ?? "", /用户中止/);
  assert.deepEqual(turn.message.content, [{ type: "text", text: "你好，我在。😀" }]);
  assert.equal(requestSignal?.aborted, true, "中止传到了 fetch");
});
