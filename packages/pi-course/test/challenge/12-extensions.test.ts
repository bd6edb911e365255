/**
 * Chapter 12 challenge · extensions: the trust gate, import, staging and commit, the
 * factory's time limit, tool names that will not hold still, and the host's public face.
 * Not a lab: `lab 12 --challenge` runs it on the learner's own resources.ts.
 *
 * Why a real host needs it: an extension is someone else's code. Its import may fail, its
 * factory may never settle, its tool may change its name after it was checked, and the
 * registry may refuse a tool half-way through a commit; whatever happens, a failed load
 * must leave the registry, the hooks and the active ids exactly as they were, so that the
 * user can fix the extension and load it again. Every failure names its rule and the
 * section of the chapter text that states it.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import test, { type TestContext } from "node:test";
import { performance } from "node:perf_hooks";
import {
  createExtensionHost,
  loadExtension,
  type ExtensionContext,
  type ExtensionHost,
  type ExtensionSource,
  type LoadExtensionOptions,
} from "../../src/resources.js";
import { ToolRegistry, type Tool } from "../../src/tool.js";
import { deferred, failsWith, hostWith, load, loadsAgain, noteCall, recordingCore, rule, settle, tempDir, tool, within } from "../fixtures/12-workspace.js";

// ---------------------------------------------------------------------------
// Trust and import
// ---------------------------------------------------------------------------

test("extensions: only exactly true trusts; truthy values are untrusted and import nothing", async () => {
  await rule('§C6.4：只有 isTrusted 的结果恰好是 true 才算信任；"yes"、1、{}、[]、"true" 都不算：结果恰好是 skipped_untrusted，什么都不 import', async () => {
    for (const verdict of ["yes", 1, {}, [], "true"] as unknown[]) {
      let imports = 0;
      const result = await loadExtension(
        { id: "x", path: "x.js" },
        {
          host: hostWith(),
          isTrusted: () => verdict as boolean,
          importModule: async () => {
            imports += 1;
            return { default() {} };
          },
        },
      );
      assert.deepEqual(result, { id: "x", status: "skipped_untrusted" }, JSON.stringify(verdict));
      assert.equal(imports, 0);
    }
  });
  await rule("§C6.4：resolve 成 true 的 promise 也算信任", async () => {
    assert.deepEqual(await load(hostWith(), "y", () => {}, { isTrusted: async () => true }), { id: "y", status: "active" });
  });
});

test("extensions: a throwing or rejecting trust policy rejects and imports nothing", async () => {
  const boom = new Error("policy unavailable");
  await rule("§C6.4：isTrusted 同步抛错或返回被拒绝的 promise：loadExtension 以那个错误拒绝，什么都不 import", async () => {
    for (const isTrusted of [
      () => {
        throw boom;
      },
      async () => {
        throw boom;
      },
    ]) {
      let imports = 0;
      await assert.rejects(
        loadExtension(
          { id: "x", path: "x.js" },
          {
            host: hostWith(),
            isTrusted,
            importModule: async () => {
              imports += 1;
              return { default() {} };
            },
          },
        ),
        (error) => error === boom,
      );
      assert.equal(imports, 0);
    }
  });
});

test("extensions: isTrusted and importModule get the same frozen copy of the source", async () => {
  await rule(
    "§C6.3：isTrusted 和 importModule 拿到的是同一份冻结的 { id, path } 副本，不是调用者的对象：调用者事后改自己的对象也改不了要 import 的东西",
    async () => {
      const source: ExtensionSource = { id: "x", path: "first.js" };
      const seen: Readonly<ExtensionSource>[] = [];
      await loadExtension(source, {
        host: hostWith(),
        isTrusted: (frozen) => {
          seen.push(frozen);
          source.path = "swapped-after-trust.js";
          return true;
        },
        importModule: async (frozen) => {
          seen.push(frozen);
          return { default() {} };
        },
      });
      assert.equal(seen.length, 2);
      assert.notEqual(seen[0], source);
      assert.ok(Object.isFrozen(seen[0]));
      assert.equal(seen[0], seen[1]);
      assert.deepEqual(seen[1], { id: "x", path: "first.js" });
    },
  );
});

test("extensions: the default importer imports source.path, and never an untrusted one", async (t) => {
  const base = await tempDir(t);
  const flag = `__piCourse12_${process.pid}`;
  const globals = globalThis as Record<string, unknown>;
  t.after(() => {
    delete globals[flag];
  });
  const file = path.join(base, "ext.mjs");
  await writeFile(
    file,
    `globalThis.${flag} = (globalThis.${flag} ?? 0) + 1;\nexport default function (context) {\n  context.registerTool({ name: "from_disk", description: "d", schema: { parse: (v) => v }, execute: async () => ({ content: [] }) });\n}\n`,
  );
  const registry = new ToolRegistry();
  const host = createExtensionHost(registry, { hookTimeoutMs: 1000 });
  await rule("§C6.4：不信任的模块一行代码都不运行（它的顶层代码没有执行）", async () => {
    assert.deepEqual(await loadExtension({ id: "disk", path: file }, { host, isTrusted: () => false }), { id: "disk", status: "skipped_untrusted" });
    assert.equal(globals[flag], undefined, "untrusted module code must not run");
  });
  await rule("§C6.5：没给 importModule 时，用 pathToFileURL(path) 动态 import 磁盘上的模块", async () => {
    assert.deepEqual(await loadExtension({ id: "disk", path: file }, { host, isTrusted: () => true }), { id: "disk", status: "active" });
    assert.equal(globals[flag], 1);
    assert.ok(registry.get("from_disk"));
  });
});

test("extensions: a module without a default function is EXTENSION_INVALID", async () => {
  await rule("§C6.5：模块的 default 必须是函数（模块是 {}、null、7，default 是 42 或对象都不行），否则 EXTENSION_INVALID", async () => {
    for (const module of [{}, { default: 42 }, { default: { factory() {} } }, null, 7]) {
      const registry = new ToolRegistry();
      await failsWith(
        "EXTENSION_INVALID",
        () =>
          loadExtension(
            { id: "x", path: "x.js" },
            { host: createExtensionHost(registry, { hookTimeoutMs: 1000 }), isTrusted: () => true, importModule: async () => module },
          ),
        JSON.stringify(module),
      );
    }
  });
});

test("import: a module that cannot be imported is EXTENSION_IMPORT_FAILED naming the id and path, with the cause", async (t) => {
  const base = await tempDir(t);
  const broken = path.join(base, "broken.mjs");
  await writeFile(broken, "export default function (context) { this is not JavaScript }\n");
  const original = new Error("registry offline");
  const cases: [string, Partial<LoadExtensionOptions>, string, (cause: unknown) => boolean][] = [
    ["a syntax error on disk", { importModule: undefined }, broken, (cause) => cause instanceof SyntaxError],
    ["a missing file", { importModule: undefined }, path.join(base, "missing.mjs"), (cause) => (cause as { code?: string }).code === "ERR_MODULE_NOT_FOUND"],
    ["importModule rejects", { importModule: async () => Promise.reject(original) }, "ext.js", (cause) => cause === original],
    [
      "importModule throws at once",
      {
        importModule: () => {
          throw original;
        },
      },
      "ext.js",
      (cause) => cause === original,
    ],
  ];
  for (const [label, extra, file, isCause] of cases) {
    const registry = new ToolRegistry([tool("existing")]);
    const host = hostWith({ registry });
    await rule(
      `§10.4：import 失败（默认的 import 或 importModule 抛错、被拒绝）是 EXTENSION_IMPORT_FAILED：message 写出 id 和路径，cause 是原来的错误（${label}）`,
      async () => {
        await assert.rejects(
          loadExtension({ id: "ext-id", path: file }, { host, isTrusted: () => true, ...extra }),
          (error: Error & { code?: string; cause?: unknown }) => {
            if (error.code === undefined) throw error;
            assert.equal(error.code, "EXTENSION_IMPORT_FAILED", label);
            assert.ok(error.message.includes("ext-id") && error.message.includes(file), `${label}: ${error.message}`);
            assert.ok(isCause(error.cause), `${label}: the cause is kept`);
            return true;
          },
        );
      },
    );
    await rule(`§10.4：import 失败什么都不提交，这个 id 之后可以再加载（${label}）`, async () => {
      assert.deepEqual(
        registry.list().map((x) => x.name),
        ["existing"],
        label,
      );
      assert.ok(await loadsAgain(host, "ext-id"), `${label}: the id can be loaded again`);
    });
  }
});

test("extensions: an id already active is EXTENSION_DUPLICATE before trust or import", async () => {
  await rule("§C6.2：这个 host 上已经激活的 id 再加载：立即 EXTENSION_DUPLICATE，isTrusted 和 importModule 都不调用", async () => {
    const host = hostWith();
    await load(host, "dup", (context) => context.registerTool(tool("first")));
    const calls: string[] = [];
    await failsWith("EXTENSION_DUPLICATE", () =>
      load(host, "dup", () => {}, {
        isTrusted: () => {
          calls.push("trust");
          return true;
        },
        importModule: async () => {
          calls.push("import");
          return { default() {} };
        },
      }),
    );
    assert.deepEqual(calls, []);
  });
});

test("extensions: two concurrent loads of one id commit once; the second is EXTENSION_DUPLICATE", async () => {
  await rule("§C6.7：提交时再查一次 id：同一个 id 的两次加载同时进行，先提交的成功，另一次是 EXTENSION_DUPLICATE，工具只登记一次", async () => {
    const registry = new ToolRegistry();
    const host = hostWith({ registry });
    const gate = deferred();
    const slowImport = async () => {
      await gate.promise;
      return { default: (context: ExtensionContext) => context.registerTool(tool("racing")) };
    };
    const first = load(host, "same", () => {}, { importModule: slowImport });
    const second = load(host, "same", () => {}, { importModule: slowImport });
    gate.resolve();
    const outcomes = await Promise.allSettled([first, second]);
    assert.deepEqual(outcomes[0], { status: "fulfilled", value: { id: "same", status: "active" } });
    assert.equal(outcomes[1]?.status, "rejected");
    assert.equal((outcomes[1] as PromiseRejectedResult).reason.code, "EXTENSION_DUPLICATE");
    assert.deepEqual(
      registry.list().map((x) => x.name),
      ["racing"],
    );
  });
});

// ---------------------------------------------------------------------------
// Staging and commit
// ---------------------------------------------------------------------------

test("extensions: the factory's context has only registerTool and on", async () => {
  await rule("§C6.6：交给工厂的上下文只有 registerTool 和 on 两个方法", async () => {
    let context: ExtensionContext | undefined;
    await load(hostWith(), "x", (received) => {
      context = received;
    });
    assert.deepEqual(Object.keys(context!).sort(), ["on", "registerTool"]);
  });
});

test("extensions: registering through a saved context after the factory is EXTENSION_CONTEXT_CLOSED", async () => {
  const registry = new ToolRegistry();
  const host = hostWith({ registry });
  await rule("§C6.6：工厂一返回上下文就关闭：之后再 registerTool 或 on 抛 EXTENSION_CONTEXT_CLOSED", async () => {
    let saved: ExtensionContext | undefined;
    await load(host, "sync", (context) => {
      saved = context;
    });
    assert.throws(() => saved!.registerTool(tool("late")), { code: "EXTENSION_CONTEXT_CLOSED" });
    assert.throws(() => saved!.on("beforeToolCall", () => ({ decision: "deny", reason: "late" })), { code: "EXTENSION_CONTEXT_CLOSED" });
  });
  await rule("§C6.6：异步工厂在它的 promise 结束之前都可以注册，结束之后不行", async () => {
    let savedAsync: ExtensionContext | undefined;
    await load(host, "async", async (context) => {
      savedAsync = context;
      await Promise.resolve();
      context.registerTool(tool("in_time"));
    });
    assert.throws(() => savedAsync!.registerTool(tool("too_late")), { code: "EXTENSION_CONTEXT_CLOSED" });
  });
  await rule("§C6.6：工厂安排到以后（setImmediate）的注册也抛 EXTENSION_CONTEXT_CLOSED，在扩展自己的调用栈里", async () => {
    const later = deferred<unknown>();
    await load(host, "scheduled", (context) => {
      setImmediate(() => {
        try {
          context.registerTool(tool("scheduled"));
          later.resolve("registered");
        } catch (error) {
          later.resolve(error);
        }
      });
    });
    assert.equal(((await later.promise) as { code?: string }).code, "EXTENSION_CONTEXT_CLOSED");
  });
  await rule("§C6.6：迟到的注册到不了注册表，迟到的 hook 永远不运行", async () => {
    assert.deepEqual(
      registry.list().map((x) => x.name),
      ["in_time"],
    );
    const { core, facts } = recordingCore();
    await host.wrapExecutor(core)(noteCall());
    assert.equal(facts.length, 1, "the late deny hook was never attached");
  });
});

test("extensions: an async factory that rejects is EXTENSION_FACTORY_FAILED with the cause, leaving nothing", async () => {
  const registry = new ToolRegistry([tool("existing")]);
  const host = hostWith({ registry });
  const original = new Error("async factory broke");
  let saved: ExtensionContext | undefined;
  await rule("§C6.8：异步工厂被拒绝是 EXTENSION_FACTORY_FAILED：信息里带着原来的信息，cause 是原来的错误", async () => {
    await assert.rejects(
      load(host, "x", async (context) => {
        saved = context;
        context.registerTool(tool("staged"));
        await Promise.resolve();
        throw original;
      }),
      (error: Error & { code?: string }) => {
        if (error.code === undefined) throw error;
        assert.equal(error.code, "EXTENSION_FACTORY_FAILED");
        assert.equal(error.cause, original);
        assert.ok(error.message.includes("async factory broke"));
        return true;
      },
    );
  });
  await rule("§C6.8：失败的加载什么都不留下，上下文也关闭", () => {
    assert.deepEqual(
      registry.list().map((x) => x.name),
      ["existing"],
    );
    assert.throws(() => saved!.registerTool(tool("retry")), { code: "EXTENSION_CONTEXT_CLOSED" });
  });
  await rule("§C6.8：加载失败不会记下这个 id：同一个 id 之后可以再加载", async () => {
    assert.deepEqual(await load(host, "x", () => {}), { id: "x", status: "active" });
  });
});

test("extensions: a tool name staged twice is TOOL_CONFLICT and nothing is committed", async () => {
  await rule("§C6.7、§C6.8：同一个工厂注册了两个同名工具是 TOOL_CONFLICT：一个工具都不登记，暂存的 hook 一次都不运行", async () => {
    const registry = new ToolRegistry();
    const host = hostWith({ registry });
    let hookRuns = 0;
    await failsWith("TOOL_CONFLICT", () =>
      load(host, "twice", (context) => {
        context.registerTool(tool("a"));
        context.registerTool(tool("b"));
        context.registerTool(tool("a"));
        context.on("beforeToolCall", () => {
          hookRuns += 1;
        });
      }),
    );
    assert.deepEqual(registry.list(), []);
    await host.wrapExecutor(recordingCore().core)(noteCall());
    assert.equal(hookRuns, 0);
  });
});

test("extensions: unknown hook names and non-function listeners fail the factory", async () => {
  const cases: [string, (context: ExtensionContext) => void][] = [
    ["hook 的名字拼错了（onEverything）", (context) => (context.on as (hook: string, listener: unknown) => void)("onEverything", () => {})],
    ["listener 不是函数", (context) => (context.on as (hook: string, listener: unknown) => void)("beforeToolCall", "not a function")],
  ];
  for (const [label, register] of cases) {
    await rule(
      `§10.4：on 收到未知的 hook 名字或不是函数的 listener 当场抛 EXTENSION_INVALID，于是工厂失败：EXTENSION_FACTORY_FAILED，cause 是那个错误（${label}）`,
      async () => {
        await assert.rejects(load(hostWith(), "x", register), (error: Error & { code?: string; cause?: { code?: string } }) => {
          if (error.code === undefined) throw error;
          assert.equal(error.code, "EXTENSION_FACTORY_FAILED");
          assert.equal(error.cause?.code, "EXTENSION_INVALID");
          return true;
        });
      },
    );
  }
});

test("extensions: hosts validate their options and the loader accepts only real hosts", async () => {
  await rule("§C6.9：hookTimeoutMs 是 0、负数、NaN、Infinity 或 2^31 时 createExtensionHost 抛 INVALID_ARGUMENT", async () => {
    for (const hookTimeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31]) {
      await failsWith("INVALID_ARGUMENT", () => createExtensionHost(new ToolRegistry(), { hookTimeoutMs }), String(hookTimeoutMs));
    }
  });
  await rule("§C6.9：loadExtension 收到的 host 不是 createExtensionHost 造的：INVALID_ARGUMENT", async () => {
    const fake: ExtensionHost = { wrapExecutor: (core) => core };
    await failsWith("INVALID_ARGUMENT", () => loadExtension({ id: "x", path: "x.js" }, { host: fake, isTrusted: () => true }));
  });
});

test("host: its only face is wrapExecutor, frozen; staging cannot be reached from the object at run time", async () => {
  await rule("§C6.9：交出去的 host 是一个冻结的、只有 wrapExecutor 的对象：它和它的原型链上都找不到 stage 或 isActive", () => {
    const host = hostWith();
    assert.deepEqual(Reflect.ownKeys(host), ["wrapExecutor"]);
    assert.ok(Object.isFrozen(host));
    let found: unknown;
    for (let proto: object | null = host; proto !== null; proto = Object.getPrototypeOf(proto)) {
      found ??= Reflect.ownKeys(proto).find((key) => key === "stage" || key === "isActive");
    }
    assert.equal(found, undefined, "no stage or isActive anywhere on the host or its prototypes");
  });
});

// ---------------------------------------------------------------------------
// Factory timeout
// ---------------------------------------------------------------------------

/**
 * Starts `begin()`, a load whose factory never settles, and returns how it ended and whether
 * it ended before `ms` had passed. `setTimeout` is mocked, so an implementation that times
 * the factory with it is checked to the millisecond without waiting; one that uses another
 * clock (`AbortSignal.timeout`, `node:timers/promises`) is waited for in real time instead
 * (at most `ms` + 5 s), where only an end more than 5 ms early counts as early.
 */
async function factoryTimeout(t: TestContext, ms: number, begin: () => Promise<unknown>): Promise<{ outcome: unknown; early: boolean }> {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const started = performance.now();
  let ended: { outcome: unknown } | undefined;
  const loading = begin().then(
    () => "loaded",
    (error: unknown) => error,
  );
  void loading.then((outcome) => (ended = { outcome }));
  try {
    await settle();
    t.mock.timers.tick(ms - 1);
    await settle();
    const early = ended !== undefined && performance.now() - started < ms - 5;
    t.mock.timers.tick(1);
    await settle();
    if (ended !== undefined) return { outcome: ended.outcome, early };
  } finally {
    t.mock.timers.reset();
  }
  const outcome = await within(ms + 5_000, loading, `工厂永远不结束，加载应在 factoryTimeoutMs（${ms} ms）之后失败`);
  return { outcome, early: performance.now() - started < ms - 5 };
}

test("factory: one that never settles fails as EXTENSION_FACTORY_FAILED (timed out); its context is closed and nothing is committed", async (t) => {
  const registry = new ToolRegistry();
  const host = hostWith({ registry });
  let saved: ExtensionContext | undefined;
  let hookRuns = 0;
  await rule("§10.4：异步工厂的 promise 到 factoryTimeoutMs 还没结束：加载以 EXTENSION_FACTORY_FAILED 失败——恰好在时限到的时候，不提前", async () => {
    const { outcome, early } = await factoryTimeout(t, 30, () =>
      load(
        host,
        "stuck",
        (context) => {
          saved = context;
          context.registerTool(tool("staged"));
          context.on("beforeToolCall", () => {
            hookRuns += 1;
          });
          return new Promise(() => {});
        },
        { factoryTimeoutMs: 30 },
      ),
    );
    assert.equal(early, false, "not before its time");
    assert.equal((outcome as { code?: string }).code, "EXTENSION_FACTORY_FAILED", "failed once factoryTimeoutMs passed");
  });
  await rule("§10.4：超时的工厂的上下文已经关闭（之后的注册抛 EXTENSION_CONTEXT_CLOSED），什么都不提交，这个 id 可以再加载", async () => {
    assert.throws(() => saved!.registerTool(tool("late")), { code: "EXTENSION_CONTEXT_CLOSED" });
    assert.deepEqual(registry.list(), []);
    await host.wrapExecutor(recordingCore().core)(noteCall());
    assert.equal(hookRuns, 0);
    assert.ok(await loadsAgain(host, "stuck"));
  });
});

test("factory: the timeout defaults to 10 000 ms and must be a positive number setTimeout can honour", async (t) => {
  await rule("§10.4：不给 factoryTimeoutMs 时默认 10 000 ms：到时才失败（EXTENSION_FACTORY_FAILED），不提前", async () => {
    const { outcome, early } = await factoryTimeout(t, 10_000, () => load(hostWith(), "slow", () => new Promise(() => {})));
    assert.equal(early, false, "still waiting before 10 s");
    assert.equal((outcome as { code?: string }).code, "EXTENSION_FACTORY_FAILED");
  });
  await rule("§10.4：factoryTimeoutMs 与 hookTimeoutMs 一样必须是正数且不超过 2^31 − 1，否则 INVALID_ARGUMENT——在问信任之前就检查", async () => {
    for (const factoryTimeoutMs of [0, -5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, "10" as unknown as number]) {
      let trusted = false;
      await failsWith(
        "INVALID_ARGUMENT",
        () => load(hostWith(), "x", () => {}, { factoryTimeoutMs, isTrusted: () => (trusted = true) }),
        String(factoryTimeoutMs),
      );
      assert.equal(trusted, false, "refused before the trust policy is asked");
    }
  });
});

test("factory: a synchronous factory is not raced against the timer; a rejection is still EXTENSION_FACTORY_FAILED with its cause", async () => {
  const host = hostWith();
  await rule("§10.4：同步工厂不计时：factoryTimeoutMs 只有 1 也照常提交", async () => {
    assert.deepEqual(await load(host, "sync", (context) => context.registerTool(tool("a")), { factoryTimeoutMs: 1 }), { id: "sync", status: "active" });
  });
  await rule("§C6.8：工厂以任何值被拒绝（哪怕不是 Error）都是 EXTENSION_FACTORY_FAILED，cause 就是那个值", async () => {
    const cause = { weird: true };
    await assert.rejects(
      load(host, "odd", async () => Promise.reject(cause)),
      (error: Error & { code?: string; cause?: unknown }) => {
        if (error.code === undefined) throw error;
        assert.equal(error.code, "EXTENSION_FACTORY_FAILED");
        assert.equal(error.cause, cause);
        return true;
      },
    );
  });
});

// ---------------------------------------------------------------------------
// Commit that cannot fail half-way
// ---------------------------------------------------------------------------

test("commit: a tool whose name getter changes its answer is registered under the name read at registration, with no orphan", async () => {
  await rule(
    "§10.4：工具的 name 在 registerTool 时读一次；提交时把它固定成那个名字（工具对象上一个只读的自有属性），注册表看到的、以后读到的都是它；登记的是那个对象本身",
    async () => {
      const registry = new ToolRegistry([tool("existing")]);
      const host = hostWith({ registry });
      let reads = 0;
      // First answer "fresh"; every later read the name of a tool the registry already has
      // (or of the tool registered just before it), which made the old commit throw half-way.
      const shifty = {
        ...tool("unused"),
        get name() {
          return reads++ === 0 ? "fresh" : "existing";
        },
      } as Tool;
      const loaded = await load(host, "shifty", (context) => {
        context.registerTool(tool("first"));
        context.registerTool(shifty);
      });
      assert.deepEqual(loaded, { id: "shifty", status: "active" });
      assert.deepEqual(
        registry.list().map((x) => x.name),
        ["existing", "first", "fresh"],
      );
      assert.equal(registry.get("fresh"), shifty, "the very object is registered");
      assert.equal(shifty.name, "fresh", "its name is fixed to the one it was registered with");
    },
  );
});

test("commit: a name reassigned after registration does not move the tool; the same object twice is TOOL_CONFLICT", async () => {
  const registry = new ToolRegistry([tool("taken")]);
  const host = hostWith({ registry });
  await rule("§10.4：registerTool 之后工厂再改工具的 name，提交的仍是登记时的名字", async () => {
    const renamed = tool("original");
    await load(host, "renames", (context) => {
      context.registerTool(renamed);
      renamed.name = "taken";
    });
    assert.deepEqual(
      registry.list().map((x) => x.name),
      ["taken", "original"],
    );
    assert.equal(registry.get("original"), renamed);
  });
  await rule("§10.4：同一个工具对象登记两次是 TOOL_CONFLICT（哪怕两次读到的名字不同），什么都不提交", async () => {
    let flips = 0;
    const twice = {
      ...tool("x"),
      get name() {
        return flips++ % 2 === 0 ? "left" : "right";
      },
    } as Tool;
    await failsWith("TOOL_CONFLICT", () =>
      load(host, "twice", (context) => {
        context.registerTool(twice);
        context.registerTool(twice);
      }),
    );
    assert.deepEqual(
      registry.list().map((x) => x.name),
      ["taken", "original"],
    );
  });
});

test("commit: a tool whose name cannot be fixed (a proxy, a frozen getter) or is not a string fails the load and changes nothing", async () => {
  const frozenGetter = Object.freeze({
    ...tool("x"),
    get name() {
      return "frozen";
    },
  }) as Tool;
  const proxy = new Proxy(tool("proxied"), {}) as Tool;
  const cases: [string, () => Tool, string, string][] = [
    [
      "§10.4：名字固定不了的工具（proxy、冻结对象上的 getter）在提交时被拒绝：loadExtension 以 EXTENSION_INVALID 失败",
      () => frozenGetter,
      "EXTENSION_INVALID",
      "a frozen getter",
    ],
    [
      "§10.4：名字固定不了的工具（proxy、冻结对象上的 getter）在提交时被拒绝：loadExtension 以 EXTENSION_INVALID 失败",
      () => proxy,
      "EXTENSION_INVALID",
      "a proxy",
    ],
    [
      "§10.4：registerTool 当场检查工具：不是对象、name 不是非空字符串就抛 EXTENSION_INVALID，于是工厂失败：EXTENSION_FACTORY_FAILED",
      () => ({ ...tool("x"), name: 42 }) as unknown as Tool,
      "EXTENSION_FACTORY_FAILED",
      "a number as name",
    ],
    [
      "§10.4：registerTool 当场检查工具：不是对象、name 不是非空字符串就抛 EXTENSION_INVALID，于是工厂失败：EXTENSION_FACTORY_FAILED",
      () => tool(""),
      "EXTENSION_FACTORY_FAILED",
      "an empty name",
    ],
    [
      "§10.4：registerTool 当场检查工具：不是对象、name 不是非空字符串就抛 EXTENSION_INVALID，于是工厂失败：EXTENSION_FACTORY_FAILED",
      () => null as unknown as Tool,
      "EXTENSION_FACTORY_FAILED",
      "null",
    ],
  ];
  for (const [statement, make, code, label] of cases) {
    const registry = new ToolRegistry([tool("existing")]);
    const host = hostWith({ registry });
    let hookRuns = 0;
    await rule(`${statement}（${label}）`, async () => {
      await failsWith(
        code,
        () =>
          load(host, "bad", (context) => {
            context.registerTool(tool("good"));
            context.on("beforeToolCall", () => {
              hookRuns += 1;
            });
            context.registerTool(make());
          }),
        label,
      );
    });
    await rule(`§10.4：加载失败之后注册表、hook 和已激活的 id 都和之前一模一样（${label}）`, async () => {
      assert.deepEqual(
        registry.list().map((x) => x.name),
        ["existing"],
        label,
      );
      await host.wrapExecutor(recordingCore().core)(noteCall());
      assert.equal(hookRuns, 0, label);
      assert.ok(await loadsAgain(host, "bad"), label);
    });
  }
  await rule("§10.4：冻结的工具只要 name 是普通的数据属性就没问题：它已经是固定的", async () => {
    const registry = new ToolRegistry();
    await load(hostWith({ registry }), "frozen", (context) => context.registerTool(Object.freeze(tool("solid"))));
    assert.deepEqual(
      registry.list().map((x) => x.name),
      ["solid"],
    );
  });
});

test("commit: a registry that refuses a tool half-way (rules of its own) gets back exactly what it had; nothing is committed", async () => {
  let refusal: Error | undefined;
  class PickyRegistry extends ToolRegistry {
    override register(candidate: Tool): void {
      if (candidate.name.startsWith("forbidden")) throw (refusal = new Error(`${candidate.name} is not allowed here`));
      super.register(candidate);
    }
  }
  const registry = new PickyRegistry([tool("existing")]);
  const host = hostWith({ registry });
  let hookRuns = 0;
  await rule("§10.4：注册表在提交到一半时拒绝一个工具：loadExtension 以注册表抛出的那个错误拒绝（原样重新抛出）", async () => {
    await assert.rejects(
      load(host, "picky", (context) => {
        context.registerTool(tool("first"));
        context.registerTool(tool("second"));
        context.registerTool(tool("forbidden-third"));
        context.on("beforeToolCall", () => {
          hookRuns += 1;
        });
      }),
      (error) => {
        assert.ok(refusal !== undefined, "the registry was asked to register forbidden-third");
        assert.equal(error, refusal, "the registry's own error");
        return true;
      },
    );
  });
  await rule("§10.4：提交不会失败到一半：已经登记的工具都撤回（registry.unregister），hook 不挂上，id 不记下", async () => {
    assert.deepEqual(
      registry.list().map((x) => x.name),
      ["existing"],
    );
    await host.wrapExecutor(recordingCore().core)(noteCall());
    assert.equal(hookRuns, 0, "no hook was attached");
    assert.ok(await loadsAgain(host, "picky"), "the id is not active");
  });
});
