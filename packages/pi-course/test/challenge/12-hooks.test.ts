/**
 * Chapter 12 challenge · hook execution (`ExtensionHost.wrapExecutor`): the order of the
 * hooks, the copies they get and what freezing can lock, hostile answers and thrown values,
 * calls and results holding any structured-clonable value, diagnostics, and concurrent
 * calls. Not a lab: `lab 12 --challenge` runs it on the learner's own resources.ts.
 *
 * Why a real host needs it: a hook is someone else's code in the path of every tool call.
 * Whatever it returns or throws (a cycle, a BigInt, a throwing getter, a proxy), the
 * wrapped executor must still answer the model with a paired result, and nothing a hook
 * does to what it was given may reach core, the caller or another hook — not even through
 * the bytes of a Buffer. Every failure names its rule and the section of the chapter text
 * that states it.
 */
import assert from "node:assert/strict";
import test from "node:test";
import { createExtensionHost, type ExtensionDiagnostic } from "../../src/resources.js";
import { ToolRegistry } from "../../src/tool.js";
import type { ToolCall, ToolResultMessage } from "../../src/types.js";
import { callWith, deferred, hostWith, load, noteCall, PROMPTLY_MS, recordingCore, rule, within } from "../fixtures/12-workspace.js";

/** The `kind` in a blocked result's details. */
const kindOf = (result: ToolResultMessage) => (result.details as { kind?: unknown } | undefined)?.kind;

// ---------------------------------------------------------------------------
// Order and copies
// ---------------------------------------------------------------------------

test("hooks: before listeners run in registration order across extensions and stop at the first deny", async () => {
  const diagnostics: ExtensionDiagnostic[] = [];
  const host = hostWith({ diagnostics });
  const order: string[] = [];
  let afterRuns = 0;
  const { core, facts } = recordingCore();
  let result!: ToolResultMessage;
  await rule("§C7.2：before hook 按注册顺序运行（先按扩展的加载顺序，同一个扩展内按 on 的先后），第一个 deny 让后面的都不再运行", async () => {
    await load(host, "A", (context) => {
      context.on("beforeToolCall", () => {
        order.push("A1");
        return { decision: "allow" };
      });
      context.on("beforeToolCall", () => {
        order.push("A2");
      });
      context.on("afterToolResult", () => {
        afterRuns += 1;
      });
    });
    await load(host, "B", (context) =>
      context.on("beforeToolCall", () => {
        order.push("B");
        return { decision: "deny", reason: "B says no" };
      }),
    );
    await load(host, "C", (context) =>
      context.on("beforeToolCall", () => {
        order.push("C");
      }),
    );
    result = await host.wrapExecutor(core)(noteCall("c-9"));
    assert.deepEqual(order, ["A1", "A2", "B"]);
  });
  await rule('§C7.4、§C7.5：deny 的结果与调用配对，details 恰好是 { blockedByExtension, kind: "deny", reason }；core 和 after hook 都不运行，没有诊断', () => {
    assert.deepEqual(result.details, { blockedByExtension: "B", kind: "deny", reason: "B says no" });
    assert.equal(result.toolCallId, "c-9");
    assert.equal(facts.length, 0);
    assert.equal(afterRuns, 0);
    assert.deepEqual(diagnostics, []);
  });
});

test("hooks: a malformed before answer fails closed as kind error with one diagnostic", async () => {
  const malformed: unknown[] = [null, "allow", 42, {}, { decision: "maybe" }, { decision: "deny" }, { decision: "deny", reason: 7 }];
  for (const answer of malformed) {
    const label = JSON.stringify(answer);
    await rule(`§C7.3：格式不对的回答（${label}）同样拦下：core 不运行，结果 isError、kind "error"，恰好一条 beforeToolCall 诊断`, async () => {
      const diagnostics: ExtensionDiagnostic[] = [];
      const host = hostWith({ diagnostics });
      await load(host, "odd", (context) => context.on("beforeToolCall", () => answer as undefined));
      const { core, facts } = recordingCore();
      const result = await host.wrapExecutor(core)(noteCall());
      assert.equal(facts.length, 0, label);
      assert.equal(result.isError, true, label);
      assert.equal(kindOf(result), "error", label);
      assert.deepEqual(
        diagnostics.map((d) => [d.extensionId, d.hook, d.kind]),
        [["odd", "beforeToolCall", "error"]],
        label,
      );
    });
  }
});

test("hooks: a before hook that tries to change the call is stopped by the freeze and fails closed", async () => {
  await rule(
    '§C7.2、§C7.3：before hook 拿到的是深度冻结的副本：它改 arguments 会抛错（模块代码是严格模式），这就是一次抛错：拦下，kind "error"，调用者的调用不变',
    async () => {
      const host = hostWith();
      await load(host, "meddler", (context) =>
        context.on("beforeToolCall", (received) => {
          (received.arguments as { text: string }).text = "rewritten";
        }),
      );
      const { core, facts } = recordingCore();
      const original = noteCall();
      const result = await host.wrapExecutor(core)(original);
      assert.equal(kindOf(result), "error");
      assert.equal(facts.length, 0);
      assert.deepEqual(original, noteCall());
    },
  );
});

test("hooks: core receives an equal copy of the call; nothing the core does reaches the caller's call", async () => {
  await rule("§C7.7：core 收到调用的一份副本（与原调用相等，不是原调用）：core 改它碰不到调用者的调用", async () => {
    const host = hostWith();
    await load(host, "allow", (context) => context.on("beforeToolCall", () => ({ decision: "allow" })));
    const original = noteCall();
    let received: ToolCall | undefined;
    const result = await host.wrapExecutor(async (inner) => {
      received = inner;
      (inner.arguments as { text: string }).text = "core changed its copy";
      return recordingCore().core(inner);
    })(original);
    assert.notEqual(received, original);
    assert.deepEqual(original, noteCall());
    assert.equal(result.toolCallId, "call-1");
  });
});

test("hooks: after listeners run once each, in order, ignore return values, and survive each other's failures", async () => {
  const diagnostics: ExtensionDiagnostic[] = [];
  const host = hostWith({ diagnostics, hookTimeoutMs: 20 });
  const order: string[] = [];
  const { core, facts } = recordingCore();
  let result!: ToolResultMessage;
  await rule("§C7.7、§C7.8：after hook 按注册顺序各运行一次；返回值没有意义（返回一个 deny 也一样），一个被拒绝了下一个照常运行", async () => {
    await load(host, "first", (context) =>
      context.on("afterToolResult", () => {
        order.push("first");
        return { decision: "deny", reason: "after hooks cannot deny" } as unknown as void;
      }),
    );
    await load(host, "rejecting", (context) =>
      context.on("afterToolResult", async () => {
        order.push("rejecting");
        throw new Error("async observer failed");
      }),
    );
    await load(host, "last", (context) =>
      context.on("afterToolResult", () => {
        order.push("last");
      }),
    );
    result = await host.wrapExecutor(core)(noteCall());
    assert.deepEqual(order, ["first", "rejecting", "last"]);
    assert.equal(result.isError, false);
    assert.deepEqual(result, facts[0]);
  });
  await rule('§C7.7：被拒绝的 after hook 恰好产生一条诊断 { extensionId, hook: "afterToolResult", kind: "error", message: <字符串> }', () => {
    assert.deepEqual(
      diagnostics.map((d) => ({ ...d, message: typeof d.message })),
      [{ extensionId: "rejecting", hook: "afterToolResult", kind: "error", message: "string" }],
    );
  });
});

test("hooks: a throwing core propagates and no after listener runs", async () => {
  await rule("§C7.9：core 自己抛错时，调用者收到的就是那个错误，after hook 一个都不运行", async () => {
    const host = hostWith();
    let afterRuns = 0;
    await load(host, "observer", (context) =>
      context.on("afterToolResult", () => {
        afterRuns += 1;
      }),
    );
    const broken = new Error("core exploded");
    await assert.rejects(
      host.wrapExecutor(async () => {
        throw broken;
      })(noteCall()),
      (error) => error === broken,
    );
    assert.equal(afterRuns, 0);
  });
});

// ---------------------------------------------------------------------------
// Diagnostics, concurrency, timers
// ---------------------------------------------------------------------------

test("hooks: a throwing or rejecting onDiagnostic never breaks the wrapper", async (t) => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  t.after(() => {
    process.off("unhandledRejection", onUnhandled);
  });
  const reporters: [string, string, () => unknown][] = [
    [
      "§C7.6：onDiagnostic 自己抛错也不能打断这次调用：调用者照样拿到 blocked result",
      "throws",
      () => {
        throw new Error("reporter down");
      },
    ],
    [
      "§10.5：onDiagnostic 返回被拒绝的 promise 也一样：调用者照样拿到 blocked result",
      "rejects",
      async () => {
        throw new Error("async reporter down");
      },
    ],
  ];
  for (const [statement, label, onDiagnostic] of reporters) {
    await rule(statement, async () => {
      const host = createExtensionHost(new ToolRegistry(), { hookTimeoutMs: 1000, onDiagnostic: onDiagnostic as () => void });
      await load(host, "bad-before", (context) =>
        context.on("beforeToolCall", () => {
          throw new Error("policy crashed");
        }),
      );
      const { core, facts } = recordingCore();
      const result = await host.wrapExecutor(core)(noteCall());
      assert.equal(kindOf(result), "error", label);
      assert.equal(facts.length, 0, label);
    });
  }
  await rule("§10.5：host 要接住 onDiagnostic 返回的 promise：它被拒绝不能变成未处理的 rejection（那会让 Node 进程退出）", async () => {
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(unhandled, []);
  });
});

test("hooks: wrapped calls are reentrant; a slow hook on one call does not hold up another", async (t) => {
  const host = hostWith();
  const gate = deferred();
  t.after(() => gate.resolve()); // never leave the slow call waiting, even when a rule fails
  const events: string[] = [];
  await load(host, "gatekeeper", (context) => {
    context.on("beforeToolCall", async (received) => {
      events.push(`before ${received.id}`);
      if (received.id === "slow") await gate.promise;
      return { decision: "allow" };
    });
    context.on("afterToolResult", (result) => {
      events.push(`after ${result.toolCallId}`);
    });
  });
  const wrapped = host.wrapExecutor(async (received) => {
    events.push(`core ${received.id}`);
    return recordingCore().core(received);
  });
  const slow = wrapped(noteCall("slow"));
  await rule("§C7.10：同一个执行器可以同时处理多次调用，它们互不等待：一次调用停在 before hook 里，另一次照样走完", async () => {
    const fast = await within(PROMPTLY_MS, wrapped(noteCall("fast")), "第二次调用在等第一次");
    events.push("fast returned");
    assert.equal(fast.toolCallId, "fast");
    assert.ok(!events.includes("core slow"), "the slow call is still waiting in its before hook");
  });
  gate.resolve();
  await rule("§C7.10：慢的那次调用放行之后照常走完，各自的 before、core、after 按它自己的顺序", async () => {
    const slowResult = await within(PROMPTLY_MS, slow, "放行之后的那次调用");
    assert.equal(slowResult.toolCallId, "slow");
    assert.deepEqual(events, ["before slow", "before fast", "core fast", "after fast", "fast returned", "core slow", "after slow"]);
  });
});

test("hooks: the per-hook timer is cleared, so no timer outlives a call", async () => {
  // A timer left behind keeps the test process alive for as long as it runs: 2 s at most here.
  await rule("§C7.10：等待 hook 的计时器用完就清掉：一次调用结束后，进程里活动的计时器不比调用前多", async () => {
    const host = hostWith({ hookTimeoutMs: 2_000 });
    await load(host, "quick", (context) => {
      context.on("beforeToolCall", () => ({ decision: "allow" }));
      context.on("afterToolResult", () => {});
    });
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;
    const before = timers();
    await host.wrapExecutor(recordingCore().core)(noteCall());
    assert.equal(timers(), before);
  });
});

// ---------------------------------------------------------------------------
// Hostile answers
// ---------------------------------------------------------------------------

test("hooks: no answer a before hook returns can make the wrapper reject; odd ones are malformed, kind error, one diagnostic", async () => {
  const cyclic: Record<string, unknown> = { decision: "maybe" };
  cyclic["self"] = cyclic;
  const revocable = Proxy.revocable({}, {});
  revocable.revoke();
  const throwingInspect = {
    decision: "nope",
    toString() {
      throw new Error("no string");
    },
    [Symbol.for("nodejs.util.inspect.custom")]() {
      throw new Error("no inspect");
    },
  };
  const answers: [string, () => unknown, string][] = [
    ["a cyclic object", () => cyclic, "§10.5"],
    ["a BigInt", () => 10n, "§10.5"],
    ["a symbol", () => Symbol("s"), "§10.5"],
    ["a function", () => () => ({ decision: "allow" }), "§10.5"],
    [
      "a throwing decision getter",
      () => ({
        get decision() {
          throw new Error("getter");
        },
      }),
      "§10.5",
    ],
    [
      "a throwing reason getter",
      () => ({
        decision: "deny",
        get reason() {
          throw new Error("getter");
        },
      }),
      "§10.5",
    ],
    [
      "a proxy whose traps throw",
      () =>
        new Proxy(
          {},
          {
            get() {
              throw new Error("trap");
            },
            getPrototypeOf() {
              throw new Error("trap");
            },
          },
        ),
      "§10.5",
    ],
    [
      "a proxy throwing only for decision",
      () =>
        new Proxy(
          {},
          {
            get: (_target, key) => {
              if (key === "decision") throw new Error("trap");
              return undefined;
            },
          },
        ),
      "§10.5",
    ],
    ["a revoked proxy", () => revocable.proxy, "§10.5"],
    ["an object that cannot be printed", () => throwingInspect, "§10.5"],
    ["a null-prototype object", () => Object.create(null), "§10.5"],
    ["a deny with an empty reason", () => ({ decision: "deny", reason: "" }), "§C7.3"],
    ["a deny with a blank reason", () => ({ decision: "deny", reason: "  \n" }), "§C7.3"],
    ["a deny with a non-string reason", () => ({ decision: "deny", reason: { toString: () => "x" } }), "§C7.3"],
    ["a promise of a BigInt", async () => 1n, "§10.5"],
    [
      "a thenable whose then getter throws",
      () => ({
        get then() {
          throw new Error("then");
        },
      }),
      "§10.5",
    ],
  ];
  for (const [label, answer, section] of answers) {
    const statement =
      section === "§C7.3"
        ? `§C7.3：deny 的 reason 不是字符串、是空字符串或只有空白，都是格式不对的回答：拦下，kind "error"，恰好一条诊断（${label}）`
        : `§10.5：before hook 返回什么都不能让包装后的执行器拒绝：读不懂的回答（循环对象、BigInt、抛错的 getter、proxy……）都是格式错误：拦下，kind "error"，恰好一条 message 为字符串的诊断（${label}）`;
    await rule(statement, async () => {
      const diagnostics: ExtensionDiagnostic[] = [];
      const host = hostWith({ diagnostics });
      await load(host, "odd", (context) => context.on("beforeToolCall", answer as () => undefined));
      const { core, received } = recordingCore(() => undefined);
      const result = await host.wrapExecutor(core)(callWith());
      assert.equal(received.length, 0, `${label}: core must not run`);
      assert.equal(result.isError, true, label);
      assert.equal(result.toolCallId, "call-1", label);
      assert.equal(kindOf(result), "error", label);
      assert.equal(diagnostics.length, 1, label);
      assert.equal(typeof diagnostics[0]?.message, "string", label);
    });
  }
});

test("hooks: a proxy or a getter may still allow or deny; a hook that throws something odd fails closed with a readable message", async () => {
  const decisions: [string, () => unknown, string][] = [
    [
      "an allow behind a getter",
      () => ({
        get decision() {
          return "allow";
        },
      }),
      "allowed",
    ],
    [
      "a deny through a proxy",
      () => new Proxy({}, { get: (_t, key) => (key === "decision" ? "deny" : key === "reason" ? "proxy says no" : undefined) }),
      "deny",
    ],
  ];
  for (const [label, answer, expected] of decisions) {
    await rule(`§10.5：回答的字段按普通方式读：getter、proxy 给出的 allow 或 deny 照样算数（${label}）`, async () => {
      const host = hostWith();
      await load(host, "p", (context) => context.on("beforeToolCall", answer as () => undefined));
      const { core, received } = recordingCore(() => undefined);
      const result = await host.wrapExecutor(core)(callWith());
      assert.equal(received.length === 1 ? "allowed" : kindOf(result), expected, label);
    });
  }
  const thrown: [string, unknown][] = [
    ["a BigInt", 10n],
    [
      "a proxy whose traps throw",
      new Proxy(
        {},
        {
          get() {
            throw new Error("trap");
          },
          getPrototypeOf() {
            throw new Error("trap");
          },
        },
      ),
    ],
    [
      "an Error whose message getter throws",
      Object.defineProperty(new Error("x"), "message", {
        get() {
          throw new Error("message getter");
        },
      }),
    ],
  ];
  for (const [label, value] of thrown) {
    await rule(`§10.5：hook 抛出的不管是什么值，都是一次抛错：拦下，kind "error"，reason 是一个字符串，恰好一条诊断（${label}）`, async () => {
      const diagnostics: ExtensionDiagnostic[] = [];
      const host = hostWith({ diagnostics });
      await load(host, "thrower", (context) =>
        context.on("beforeToolCall", () => {
          throw value;
        }),
      );
      const result = await host.wrapExecutor(recordingCore(() => undefined).core)(callWith());
      assert.equal(kindOf(result), "error");
      assert.equal(typeof (result.details as { reason: unknown }).reason, "string");
      assert.equal(diagnostics.length, 1);
    });
  }
});

// ---------------------------------------------------------------------------
// Structured-clonable calls and results
// ---------------------------------------------------------------------------

/** Arguments no JSON copy could carry. */
const richArguments = () => ({
  text: "x",
  buffer: Buffer.from("buffer bytes"),
  bytes: new Uint16Array([1, 2, 3]),
  big: new BigInt64Array([5n]),
  map: new Map<string, unknown>([["k", { n: 1 }]]),
  set: new Set([1, 2]),
  when: new Date(1000),
  nested: [{ deep: new Uint8Array([9]) }],
});

test("data: before hooks get copies of a rich call; what one does to its copy reaches no other hook, core or the caller", async () => {
  const seen: unknown[] = [];
  const host = hostWith();
  const shapes: string[] = [];
  for (const id of ["first", "second"]) {
    await load(host, id, (context) =>
      context.on("beforeToolCall", (incoming) => {
        const args = incoming.arguments as ReturnType<typeof richArguments>;
        seen.push(structuredClone({ buffer: [...args.buffer], map: [...args.map], when: args.when.getTime() }));
        if (!Buffer.isBuffer(args.buffer)) shapes.push(`${id}: the Buffer arrived as ${Object.prototype.toString.call(args.buffer)}`);
        if (!(Object.isFrozen(incoming) && Object.isFrozen(args))) shapes.push(`${id}: the call or its arguments are not frozen`);
        args.buffer[0] = 0;
        args.bytes[0] = 0;
        args.big[0] = 0n;
        args.map.set("k", "hooked");
        args.set.add(99);
        args.when.setTime(0);
        args.nested[0]!.deep[0] = 0;
        return { decision: "allow" };
      }),
    );
  }
  const original = callWith(richArguments());
  const { core, received } = recordingCore(() => undefined);
  await rule("§10.5：调用可以带任何能结构化克隆的值（Buffer、类型化数组、Map、Set、Date）：hook 照常运行，core 照常运行一次", async () => {
    await host.wrapExecutor(core)(original);
    assert.equal(received.length, 1);
  });
  await rule("§10.5：hook 拿到的副本里 Buffer 仍是 Buffer；冻结能锁住的部分（调用和它的 arguments 对象）都冻结", () => {
    assert.deepEqual(shapes, []);
  });
  await rule("§10.5：冻结锁不住的东西（字节、Map、Set、Date）每个 hook 各拿一份：一个 hook 改它的副本，下一个 hook、core 和调用者都看不到", () => {
    assert.deepEqual(seen[1], seen[0], "the second hook saw what the first saw");
    assert.deepEqual(received[0], callWith(richArguments()), "core received the call as the caller made it");
    assert.deepEqual(original, callWith(richArguments()), "the caller's call is untouched");
    assert.notEqual(received[0], original);
  });
});

test("data: after hooks get copies of a rich result; the caller gets a copy equal to core's, and core's own object is untouched", async () => {
  const richDetails = () => ({ raw: Buffer.from("result bytes"), index: new Map([["a", new Date(5)]]), tags: new Set(["x"]) });
  const observed: string[] = [];
  const host = hostWith();
  for (const id of ["first", "second"]) {
    await load(host, id, (context) =>
      context.on("afterToolResult", (result) => {
        const details = result.details as ReturnType<typeof richDetails>;
        observed.push(details.raw.toString());
        details.raw.fill(0);
        details.index.get("a")!.setTime(0);
        details.index.set("b", new Date(1));
        details.tags.clear();
      }),
    );
  }
  const { core, facts } = recordingCore(richDetails);
  let result!: ToolResultMessage;
  await rule("§10.5：结果也可以带任何能结构化克隆的值：每个 after hook 拿到自己的副本，一个 hook 改了，下一个看到的仍是原样", async () => {
    result = await host.wrapExecutor(core)(callWith());
    assert.deepEqual(observed, ["result bytes", "result bytes"]);
  });
  await rule("§10.5：core 自己的结果对象不受 hook 影响；调用者拿到的副本与 core 的结果相等（Buffer 仍是 Buffer），但不是同一个对象，连 details 也不是", () => {
    assert.deepEqual(facts[0]?.details, richDetails(), "core's object is untouched");
    assert.deepEqual(result, facts[0], "the caller's copy equals core's result, Buffer included");
    assert.notEqual(result, facts[0]);
    assert.notEqual(result.details, facts[0]?.details);
  });
  await rule("§C7.8、§10.5：调用者改自己手里的结果（这里是 Buffer 的字节），core 的原始结果不变", () => {
    (result.details as ReturnType<typeof richDetails>).raw[0] = 0;
    assert.deepEqual(facts[0]?.details, richDetails());
  });
});

test("data: other structured-clonable values (errors, regular expressions, class instances, typed-array subclasses) are copied too", async () => {
  class Point {
    x = 1;
  }
  class Bytes extends Uint8Array {}
  const details = () => ({ error: new RangeError("too far"), pattern: /a+/gi, point: new Point(), bytes: new Bytes([1, 2]), nothing: undefined, big: 9n });
  const seen: unknown[] = [];
  const host = hostWith();
  await load(host, "observer", (context) =>
    context.on("afterToolResult", (result) => {
      seen.push(result.details);
      (result.details as { bytes: Uint8Array }).bytes[0] = 0;
    }),
  );
  const { core, facts } = recordingCore(details);
  await rule(
    "§10.5：其余能结构化克隆的值照 structuredClone 的规则复制：Error 与 RegExp 保留，类实例变成同样字段的普通对象，类型化数组的子类变成它的基础类型，值为 undefined 的键与 BigInt 保留",
    async () => {
      const result = await host.wrapExecutor(core)(callWith());
      const copied = result.details as ReturnType<typeof details>;
      assert.ok(copied.error instanceof RangeError && copied.error.message === "too far");
      assert.equal(String(copied.pattern), "/a+/gi");
      assert.deepEqual({ ...copied.point }, { x: 1 });
      assert.deepEqual([...copied.bytes], [1, 2], "the observer's change stayed in its copy");
      assert.equal(copied.big, 9n);
      assert.ok("nothing" in copied);
      assert.equal(seen.length, 1);
      assert.deepEqual([...(facts[0]!.details as ReturnType<typeof details>).bytes], [1, 2]);
    },
  );
});

test("data: a small Buffer's copy carries only its own bytes, not Node's shared allocation pool", async () => {
  const small = Buffer.from("pooled");
  assert.ok(small.buffer.byteLength > small.length, "Node pools small Buffers");
  await rule("§10.5：Buffer 的副本只带它自己的字节：它底下的 ArrayBuffer 恰好和它一样长（不能把 Node 给小 Buffer 共用的分配池一起交给 hook）", async () => {
    const host = hostWith();
    let seenBuffer: Buffer | undefined;
    await load(host, "reader", (context) =>
      context.on("beforeToolCall", (incoming) => {
        seenBuffer = (incoming.arguments as { small: Buffer }).small;
      }),
    );
    await host.wrapExecutor(recordingCore(() => undefined).core)(callWith({ small }));
    assert.equal(seenBuffer?.buffer.byteLength, small.length);
  });
});

test("data: plain JSON calls and results reach every hook deep-frozen", async () => {
  const calls: Readonly<ToolCall>[] = [];
  const results: Readonly<ToolResultMessage>[] = [];
  const host = hostWith();
  for (const id of ["a", "b"]) {
    await load(host, id, (context) => {
      context.on("beforeToolCall", (incoming) => {
        calls.push(incoming);
      });
      context.on("afterToolResult", (result) => {
        results.push(result);
      });
    });
  }
  await rule("§C7.2、§C7.7：普通 JSON 的调用和结果交给每个 hook 时都是深度冻结的（里面每一层都冻结）", async () => {
    await host.wrapExecutor(recordingCore(() => ({ deep: { n: 1 } })).core)(callWith({ text: "x", list: [1, { y: 2 }] }));
    assert.equal(calls.length, 2);
    assert.equal(results.length, 2);
    for (const incoming of calls) assert.ok(Object.isFrozen((incoming.arguments as { list: object[] }).list[1]));
    for (const result of results) assert.ok(Object.isFrozen((result.details as { deep: object }).deep));
  });
});

test("data: a call that cannot be copied gets a paired error result before any hook or core runs", async () => {
  const withGetter = callWith();
  Object.defineProperty(withGetter, "arguments", {
    enumerable: true,
    get() {
      throw new Error("no arguments for you");
    },
  });
  const cases: [string, unknown][] = [
    ["a function in the arguments", callWith({ callback() {} })],
    ["a proxy as arguments", callWith(new Proxy({}, {}))],
    ["a throwing getter", withGetter],
    ["a symbol", callWith({ s: Symbol("s") })],
  ];
  for (const [label, incoming] of cases) {
    await rule(`§10.5：复制不了的调用（函数、proxy、抛错的 getter、symbol）在任何 hook 和 core 运行之前就得到一个配对的错误结果（${label}）`, async () => {
      let hookRuns = 0;
      const host = hostWith();
      await load(host, "watch", (context) => {
        context.on("beforeToolCall", () => {
          hookRuns += 1;
        });
        context.on("afterToolResult", () => {
          hookRuns += 1;
        });
      });
      const { core, received } = recordingCore(() => undefined);
      const result = await host.wrapExecutor(core)(incoming as ToolCall);
      assert.deepEqual([result.toolCallId, result.toolName, result.isError], ["call-1", "note", true], label);
      assert.equal(hookRuns + received.length, 0, `${label}: nothing ran`);
    });
  }
  await rule("§10.5：连对象都不是的调用（null）也得到一个错误结果，不抛错", async () => {
    const result = await hostWith().wrapExecutor(recordingCore(() => undefined).core)(null as unknown as ToolCall);
    assert.equal(result.isError, true);
  });
});

test("data: a result that cannot be copied skips the after hooks with one diagnostic; the caller still gets core's result", async () => {
  const diagnostics: ExtensionDiagnostic[] = [];
  const host = hostWith({ diagnostics });
  let afterRuns = 0;
  for (const id of ["first-observer", "second-observer"]) {
    await load(host, id, (context) =>
      context.on("afterToolResult", () => {
        afterRuns += 1;
      }),
    );
  }
  await rule(
    '§10.5：复制不了的结果：after hook 全部跳过，恰好一条诊断（extensionId 是第一个被跳过的 hook 的 Extension，hook "afterToolResult"，kind "error"），调用者拿到 core 的那个对象本身',
    async () => {
      const { core, facts } = recordingCore(() => ({ callback: () => "a function cannot be copied" }));
      const result = await host.wrapExecutor(core)(callWith());
      assert.equal(result, facts[0], "core's result itself, since no copy exists");
      assert.equal(afterRuns, 0);
      assert.deepEqual(
        diagnostics.map((d) => ({ ...d, message: typeof d.message })),
        [{ extensionId: "first-observer", hook: "afterToolResult", kind: "error", message: "string" }],
      );
    },
  );
  await rule("§10.5：没有 after hook 时没有人要告诉：没有诊断，调用者同样拿到 core 的结果", async () => {
    const quiet: ExtensionDiagnostic[] = [];
    const bare = recordingCore(() => ({ callback() {} }));
    assert.equal(await hostWith({ diagnostics: quiet }).wrapExecutor(bare.core)(callWith()), bare.facts[0]);
    assert.deepEqual(quiet, []);
  });
});
