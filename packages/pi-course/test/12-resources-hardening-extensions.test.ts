/**
 * Chapter 12 hardening, second revision: hostile extensions and hook values. Imports that
 * fail, factories that never settle, tools whose name will not hold still, hook answers
 * no JSON can show (cycles, BigInt, throwing getters, proxies), and calls and results that
 * carry any structured-clonable value (Buffer, typed arrays, Map, Set, Date). Not a lab file.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import test from "node:test";
import {
  createExtensionHost,
  loadExtension,
  type ExtensionContext,
  type ExtensionDiagnostic,
  type ExtensionHost,
  type LoadExtensionOptions,
} from "../src/resources.js";
import { ToolRegistry, objectSchema, stringValue, type Tool, type ToolExecutor } from "../src/tool.js";
import { text, type ToolCall, type ToolResultMessage } from "../src/types.js";
import { tempDir } from "./fixtures/12-workspace.js";

function tool(name: string): Tool {
  return { name, description: `tool ${name}`, schema: objectSchema({ text: stringValue() }), execute: async () => ({ content: [text(name)] }) };
}

function hostWith(diagnostics: ExtensionDiagnostic[] = [], registry = new ToolRegistry(), hookTimeoutMs = 1000) {
  return createExtensionHost(registry, { hookTimeoutMs, onDiagnostic: (diagnostic) => diagnostics.push(diagnostic) });
}

function load(host: ExtensionHost, id: string, factory: (context: ExtensionContext) => unknown, extra: Partial<LoadExtensionOptions> = {}) {
  return loadExtension({ id, path: `${id}.js` }, { host, isTrusted: () => true, importModule: async () => ({ default: factory }), ...extra });
}

const call = (args: unknown = { text: "x" }): ToolCall => ({ type: "toolCall", id: "call-1", name: "note", arguments: args });

/** A core that records what it received and answers with `details`. */
function coreWith(details: () => unknown) {
  const received: ToolCall[] = [];
  const facts: ToolResultMessage[] = [];
  const core: ToolExecutor = async (incoming) => {
    received.push(incoming);
    const fact: ToolResultMessage = {
      role: "toolResult", toolCallId: incoming.id, toolName: incoming.name,
      content: [text("ok")], details: details(), isError: false, timestamp: 5,
    };
    facts.push(fact);
    return fact;
  };
  return { core, received, facts };
}

/** The active ids of a host, seen from outside: an id loads again only if it is not active. */
async function loadsAgain(host: ExtensionHost, id: string): Promise<boolean> {
  const result = await load(host, id, () => {}).catch((error: { code?: string }) => error.code);
  return typeof result === "object" && result.status === "active";
}

// ---------------------------------------------------------------------------
// Import
// ---------------------------------------------------------------------------

test("import: a module that cannot be imported is EXTENSION_IMPORT_FAILED naming the id and path, with the cause", async (t) => {
  const base = await tempDir(t);
  const broken = path.join(base, "broken.mjs");
  await writeFile(broken, "export default function (context) { this is not JavaScript }\n");
  const original = new Error("registry offline");
  const cases: [string, Partial<LoadExtensionOptions>, string, (cause: unknown) => boolean][] = [
    ["a syntax error on disk", { importModule: undefined }, broken, (cause) => cause instanceof SyntaxError],
    ["a missing file", { importModule: undefined }, path.join(base, "missing.mjs"), (cause) => (cause as { code?: string }).code === "ERR_MODULE_NOT_FOUND"],
    ["importModule rejects", { importModule: async () => Promise.reject(original) }, "ext.js", (cause) => cause === original],
    ["importModule throws at once", { importModule: () => { throw original; } }, "ext.js", (cause) => cause === original],
  ];
  for (const [label, extra, file, isCause] of cases) {
    const registry = new ToolRegistry([tool("existing")]);
    const host = hostWith([], registry);
    await assert.rejects(
      loadExtension({ id: "ext-id", path: file }, { host, isTrusted: () => true, ...extra }),
      (error: Error & { code?: string; cause?: unknown }) => {
        assert.equal(error.code, "EXTENSION_IMPORT_FAILED", label);
        assert.ok(error.message.includes("ext-id") && error.message.includes(file), `${label}: ${error.message}`);
        assert.ok(isCause(error.cause), `${label}: the cause is kept`);
        return true;
      },
    );
    assert.deepEqual(registry.list().map((x) => x.name), ["existing"], label);
    assert.ok(await loadsAgain(host, "ext-id"), `${label}: the id can be loaded again`);
  }
});

// ---------------------------------------------------------------------------
// Factory timeout
// ---------------------------------------------------------------------------

/** Lets every pending promise job and I/O callback run (setImmediate is never mocked here). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

test("factory: one that never settles fails as EXTENSION_FACTORY_FAILED (timed out); its context is closed and nothing is committed", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const registry = new ToolRegistry();
  const host = hostWith([], registry);
  let saved: ExtensionContext | undefined;
  let hookRuns = 0;
  let outcome: unknown = "pending";
  const loading = load(host, "stuck", (context) => {
    saved = context;
    context.registerTool(tool("staged"));
    context.on("beforeToolCall", () => {
      hookRuns += 1;
    });
    return new Promise(() => {});
  }, { factoryTimeoutMs: 30 }).then(
    () => "loaded",
    (error: Error & { code?: string }) => error,
  );
  void loading.then((settled) => (outcome = settled));
  await settle();
  t.mock.timers.tick(29);
  await settle();
  assert.equal(outcome, "pending", "not before its time");
  t.mock.timers.tick(1);
  await settle();
  const error = outcome as unknown as Error & { code?: string };
  assert.equal(error.code, "EXTENSION_FACTORY_FAILED", "failed once factoryTimeoutMs passed");
  assert.match(error.message, /timed out/);
  t.mock.timers.reset();
  assert.throws(() => saved!.registerTool(tool("late")), { code: "EXTENSION_CONTEXT_CLOSED" });
  assert.deepEqual(registry.list(), []);
  await host.wrapExecutor(coreWith(() => undefined).core)(call());
  assert.equal(hookRuns, 0);
  assert.ok(await loadsAgain(host, "stuck"));
});

test("factory: the timeout defaults to 10 000 ms and must be a positive number setTimeout can honour", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const host = hostWith();
  let outcome: unknown = "pending";
  void load(host, "slow", () => new Promise(() => {})).then(
    () => (outcome = "loaded"),
    (error: { code?: string }) => (outcome = error.code),
  );
  await settle();
  t.mock.timers.tick(9_999);
  await settle();
  assert.equal(outcome, "pending", "still waiting before 10 s");
  t.mock.timers.tick(1);
  await settle();
  assert.equal(outcome, "EXTENSION_FACTORY_FAILED");
  t.mock.timers.reset();

  for (const factoryTimeoutMs of [0, -5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, "10" as unknown as number]) {
    let trusted = false;
    await assert.rejects(
      load(hostWith(), "x", () => {}, { factoryTimeoutMs, isTrusted: () => (trusted = true) }),
      { code: "INVALID_ARGUMENT" },
      String(factoryTimeoutMs),
    );
    assert.equal(trusted, false, "refused before the trust policy is asked");
  }
});

test("factory: a synchronous factory is not raced against the timer; a rejection is still EXTENSION_FACTORY_FAILED with its cause", async () => {
  const host = hostWith();
  assert.deepEqual(await load(host, "sync", (context) => context.registerTool(tool("a")), { factoryTimeoutMs: 1 }), { id: "sync", status: "active" });
  const cause = { weird: true };
  await assert.rejects(load(host, "odd", async () => Promise.reject(cause)), (error: Error & { code?: string; cause?: unknown }) => {
    assert.equal(error.code, "EXTENSION_FACTORY_FAILED");
    assert.equal(error.cause, cause);
    return true;
  });
});

// ---------------------------------------------------------------------------
// Atomic commit
// ---------------------------------------------------------------------------

test("commit: a tool whose name getter changes its answer is registered under the name read at registration, with no orphan", async () => {
  const registry = new ToolRegistry([tool("existing")]);
  const host = hostWith([], registry);
  let reads = 0;
  // First answer "fresh"; every later read the name of a tool the registry already has
  // (or of the tool registered just before it), which made the old commit throw half-way.
  const shifty = { ...tool("unused"), get name() { return reads++ === 0 ? "fresh" : "existing"; } } as Tool;
  const loaded = await load(host, "shifty", (context) => {
    context.registerTool(tool("first"));
    context.registerTool(shifty);
  });
  assert.deepEqual(loaded, { id: "shifty", status: "active" });
  assert.deepEqual(registry.list().map((x) => x.name), ["existing", "first", "fresh"]);
  assert.equal(registry.get("fresh"), shifty, "the very object is registered");
  assert.equal(shifty.name, "fresh", "its name is fixed to the one it was registered with");
});

test("commit: a name reassigned after registration does not move the tool; the same object twice is TOOL_CONFLICT", async () => {
  const registry = new ToolRegistry([tool("taken")]);
  const host = hostWith([], registry);
  const renamed = tool("original");
  await load(host, "renames", (context) => {
    context.registerTool(renamed);
    renamed.name = "taken";
  });
  assert.deepEqual(registry.list().map((x) => x.name), ["taken", "original"]);
  assert.equal(registry.get("original"), renamed);

  let flips = 0;
  const twice = { ...tool("x"), get name() { return flips++ % 2 === 0 ? "left" : "right"; } } as Tool;
  await assert.rejects(load(host, "twice", (context) => {
    context.registerTool(twice);
    context.registerTool(twice);
  }), { code: "TOOL_CONFLICT" });
  assert.deepEqual(registry.list().map((x) => x.name), ["taken", "original"]);
});

test("commit: a tool whose name cannot be fixed (a proxy, a frozen getter) or is not a string fails the load and changes nothing", async () => {
  const frozenGetter = Object.freeze({ ...tool("x"), get name() { return "frozen"; } }) as Tool;
  const proxy = new Proxy(tool("proxied"), {}) as Tool;
  const cases: [string, () => Tool, string][] = [
    ["a frozen getter", () => frozenGetter, "EXTENSION_INVALID"],
    ["a proxy", () => proxy, "EXTENSION_INVALID"],
    ["a number as name", () => ({ ...tool("x"), name: 42 }) as unknown as Tool, "EXTENSION_FACTORY_FAILED"],
    ["an empty name", () => tool(""), "EXTENSION_FACTORY_FAILED"],
    ["null", () => null as unknown as Tool, "EXTENSION_FACTORY_FAILED"],
  ];
  for (const [label, make] of cases) {
    const registry = new ToolRegistry([tool("existing")]);
    const diagnostics: ExtensionDiagnostic[] = [];
    const host = hostWith(diagnostics, registry);
    let hookRuns = 0;
    await assert.rejects(
      load(host, "bad", (context) => {
        context.registerTool(tool("good"));
        context.on("beforeToolCall", () => {
          hookRuns += 1;
        });
        context.registerTool(make());
      }),
      { code: label === "a frozen getter" || label === "a proxy" ? "EXTENSION_INVALID" : "EXTENSION_FACTORY_FAILED" },
      label,
    );
    assert.deepEqual(registry.list().map((x) => x.name), ["existing"], label);
    await host.wrapExecutor(coreWith(() => undefined).core)(call());
    assert.equal(hookRuns, 0, label);
    assert.ok(await loadsAgain(host, "bad"), label);
  }
  // A frozen tool whose name is a plain value is fine.
  const registry = new ToolRegistry();
  await load(hostWith([], registry), "frozen", (context) => context.registerTool(Object.freeze(tool("solid"))));
  assert.deepEqual(registry.list().map((x) => x.name), ["solid"]);
});

test("commit: a registry that refuses a tool half-way (rules of its own) gets back exactly what it had; nothing is committed", async () => {
  class PickyRegistry extends ToolRegistry {
    override register(candidate: Tool): void {
      if (candidate.name.startsWith("forbidden")) throw new Error(`${candidate.name} is not allowed here`);
      super.register(candidate);
    }
  }
  const registry = new PickyRegistry([tool("existing")]);
  const host = hostWith([], registry);
  let hookRuns = 0;
  await assert.rejects(
    load(host, "picky", (context) => {
      context.registerTool(tool("first"));
      context.registerTool(tool("second"));
      context.registerTool(tool("forbidden-third"));
      context.on("beforeToolCall", () => {
        hookRuns += 1;
      });
    }),
    /forbidden-third is not allowed here/,
  );
  assert.deepEqual(registry.list().map((x) => x.name), ["existing"]);
  await host.wrapExecutor(coreWith(() => undefined).core)(call());
  assert.equal(hookRuns, 0, "no hook was attached");
  assert.ok(await loadsAgain(host, "picky"), "the id is not active");
});

test("host: its only face is wrapExecutor, frozen; staging cannot be reached from the object at run time", () => {
  const host = hostWith();
  assert.deepEqual(Reflect.ownKeys(host), ["wrapExecutor"]);
  assert.ok(Object.isFrozen(host));
  let found: unknown;
  for (let proto: object | null = host; proto !== null; proto = Object.getPrototypeOf(proto)) {
    found ??= Reflect.ownKeys(proto).find((key) => key === "stage" || key === "isActive");
  }
  assert.equal(found, undefined, "no stage or isActive anywhere on the host or its prototypes");
});

// ---------------------------------------------------------------------------
// Hook answers
// ---------------------------------------------------------------------------

test("hooks: no answer a before hook returns can make the wrapper reject; odd ones are malformed, kind error, one diagnostic", async () => {
  const cyclic: Record<string, unknown> = { decision: "maybe" };
  cyclic["self"] = cyclic;
  const revocable = Proxy.revocable({}, {});
  revocable.revoke();
  const throwingInspect = { decision: "nope", toString() { throw new Error("no string"); }, [Symbol.for("nodejs.util.inspect.custom")]() { throw new Error("no inspect"); } };
  const answers: [string, () => unknown][] = [
    ["a cyclic object", () => cyclic],
    ["a BigInt", () => 10n],
    ["a symbol", () => Symbol("s")],
    ["a function", () => () => ({ decision: "allow" })],
    ["a throwing decision getter", () => ({ get decision() { throw new Error("getter"); } })],
    ["a throwing reason getter", () => ({ decision: "deny", get reason() { throw new Error("getter"); } })],
    ["a proxy whose traps throw", () => new Proxy({}, { get() { throw new Error("trap"); }, getPrototypeOf() { throw new Error("trap"); } })],
    ["a proxy throwing only for decision", () => new Proxy({}, { get: (_target, key) => { if (key === "decision") throw new Error("trap"); return undefined; } })],
    ["a revoked proxy", () => revocable.proxy],
    ["an object that cannot be printed", () => throwingInspect],
    ["a null-prototype object", () => Object.create(null)],
    ["a deny with an empty reason", () => ({ decision: "deny", reason: "" })],
    ["a deny with a blank reason", () => ({ decision: "deny", reason: "  \n" })],
    ["a deny with a non-string reason", () => ({ decision: "deny", reason: { toString: () => "x" } })],
    ["a promise of a BigInt", async () => 1n],
    ["a thenable whose then getter throws", () => ({ get then() { throw new Error("then"); } })],
  ];
  for (const [label, answer] of answers) {
    const diagnostics: ExtensionDiagnostic[] = [];
    const host = hostWith(diagnostics);
    await load(host, "odd", (context) => context.on("beforeToolCall", answer as () => undefined));
    const { core, received } = coreWith(() => undefined);
    const result = await host.wrapExecutor(core)(call());
    assert.equal(received.length, 0, `${label}: core must not run`);
    assert.equal(result.isError, true, label);
    assert.equal(result.toolCallId, "call-1", label);
    assert.equal((result.details as { kind: string }).kind, "error", label);
    assert.equal(diagnostics.length, 1, label);
    assert.equal(typeof diagnostics[0]?.message, "string", label);
  }
});

test("hooks: a proxy or a getter may still allow or deny; a hook that throws something odd fails closed with a readable message", async () => {
  const decisions: [string, () => unknown, string][] = [
    ["an allow behind a getter", () => ({ get decision() { return "allow"; } }), "allowed"],
    ["a deny through a proxy", () => new Proxy({}, { get: (_t, key) => (key === "decision" ? "deny" : key === "reason" ? "proxy says no" : undefined) }), "deny"],
  ];
  for (const [label, answer, expected] of decisions) {
    const host = hostWith();
    await load(host, "p", (context) => context.on("beforeToolCall", answer as () => undefined));
    const { core, received } = coreWith(() => undefined);
    const result = await host.wrapExecutor(core)(call());
    assert.equal(received.length === 1 ? "allowed" : (result.details as { kind: string }).kind, expected, label);
  }
  const thrown: unknown[] = [
    10n,
    new Proxy({}, { get() { throw new Error("trap"); }, getPrototypeOf() { throw new Error("trap"); } }),
    Object.defineProperty(new Error("x"), "message", { get() { throw new Error("message getter"); } }),
  ];
  for (const value of thrown) {
    const diagnostics: ExtensionDiagnostic[] = [];
    const host = hostWith(diagnostics);
    await load(host, "thrower", (context) => context.on("beforeToolCall", () => { throw value; }));
    const result = await host.wrapExecutor(coreWith(() => undefined).core)(call());
    assert.equal((result.details as { kind: string; reason: unknown }).kind, "error");
    assert.equal(typeof (result.details as { reason: unknown }).reason, "string");
    assert.equal(diagnostics.length, 1);
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
  for (const id of ["first", "second"]) {
    await load(host, id, (context) =>
      context.on("beforeToolCall", (incoming) => {
        const args = incoming.arguments as ReturnType<typeof richArguments>;
        seen.push(structuredClone({ buffer: [...args.buffer], map: [...args.map], when: args.when.getTime() }));
        assert.ok(Buffer.isBuffer(args.buffer), "a Buffer stays a Buffer");
        assert.ok(Object.isFrozen(incoming) && Object.isFrozen(args), "what freezing can lock is frozen");
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
  const original = call(richArguments());
  const { core, received } = coreWith(() => undefined);
  await host.wrapExecutor(core)(original);
  assert.deepEqual(seen[1], seen[0], "the second hook saw what the first saw");
  assert.deepEqual(received[0], call(richArguments()), "core received the call as the caller made it");
  assert.deepEqual(original, call(richArguments()), "the caller's call is untouched");
  assert.notEqual(received[0], original);
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
  const { core, facts } = coreWith(richDetails);
  const result = await host.wrapExecutor(core)(call());
  assert.deepEqual(observed, ["result bytes", "result bytes"]);
  assert.deepEqual(facts[0]?.details, richDetails(), "core's object is untouched");
  assert.deepEqual(result, facts[0], "the caller's copy equals core's result, Buffer included");
  assert.notEqual(result, facts[0]);
  assert.notEqual(result.details, facts[0]?.details);
  (result.details as ReturnType<typeof richDetails>).raw[0] = 0;
  assert.deepEqual(facts[0]?.details, richDetails());
});

test("data: other structured-clonable values (errors, regular expressions, class instances, typed-array subclasses) are copied too", async () => {
  class Point {
    x = 1;
  }
  class Bytes extends Uint8Array {}
  const details = () => ({ error: new RangeError("too far"), pattern: /a+/gi, point: new Point(), bytes: new Bytes([1, 2]), nothing: undefined, big: 9n });
  const seen: unknown[] = [];
  const host = hostWith();
  await load(host, "observer", (context) => context.on("afterToolResult", (result) => {
    seen.push(result.details);
    (result.details as { bytes: Uint8Array }).bytes[0] = 0;
  }));
  const { core, facts } = coreWith(details);
  const result = await host.wrapExecutor(core)(call());
  const copied = result.details as ReturnType<typeof details>;
  assert.ok(copied.error instanceof RangeError && copied.error.message === "too far");
  assert.equal(String(copied.pattern), "/a+/gi");
  assert.deepEqual({ ...copied.point }, { x: 1 });
  assert.deepEqual([...copied.bytes], [1, 2], "the observer's change stayed in its copy");
  assert.equal(copied.big, 9n);
  assert.ok("nothing" in copied);
  assert.equal(seen.length, 1);
  assert.deepEqual([...(facts[0]!.details as ReturnType<typeof details>).bytes], [1, 2]);
});

test("data: a small Buffer's copy carries only its own bytes, not Node's shared allocation pool", async () => {
  const host = hostWith();
  let seenBuffer: Buffer | undefined;
  await load(host, "reader", (context) => context.on("beforeToolCall", (incoming) => {
    seenBuffer = (incoming.arguments as { small: Buffer }).small;
  }));
  const small = Buffer.from("pooled");
  assert.ok(small.buffer.byteLength > small.length, "Node pools small Buffers");
  await host.wrapExecutor(coreWith(() => undefined).core)(call({ small }));
  assert.equal(seenBuffer?.buffer.byteLength, small.length);
});

test("data: plain JSON calls and results still go to hooks as one shared, deep-frozen copy", async () => {
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
  await host.wrapExecutor(coreWith(() => ({ deep: { n: 1 } })).core)(call({ text: "x", list: [1, { y: 2 }] }));
  assert.equal(calls[0], calls[1]);
  assert.equal(results[0], results[1]);
  assert.ok(Object.isFrozen((calls[0]!.arguments as { list: object[] }).list[1]));
  assert.ok(Object.isFrozen((results[0]!.details as { deep: object }).deep));
});

test("data: a call that cannot be copied gets a paired error result before any hook or core runs", async () => {
  const withGetter = call();
  Object.defineProperty(withGetter, "arguments", { enumerable: true, get() { throw new Error("no arguments for you"); } });
  const cases: [string, unknown][] = [
    ["a function in the arguments", call({ callback() {} })],
    ["a proxy as arguments", call(new Proxy({}, {}))],
    ["a throwing getter", withGetter],
    ["a symbol", call({ s: Symbol("s") })],
  ];
  for (const [label, incoming] of cases) {
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
    const { core, received } = coreWith(() => undefined);
    const result = await host.wrapExecutor(core)(incoming as ToolCall);
    assert.deepEqual([result.toolCallId, result.toolName, result.isError], ["call-1", "note", true], label);
    assert.equal(hookRuns + received.length, 0, `${label}: nothing ran`);
  }
  // Even a call that is not an object is answered, never thrown.
  const result = await hostWith().wrapExecutor(coreWith(() => undefined).core)(null as unknown as ToolCall);
  assert.equal(result.isError, true);
});

test("data: a result that cannot be copied skips the after hooks with one diagnostic; the caller still gets core's result", async () => {
  const diagnostics: ExtensionDiagnostic[] = [];
  const host = hostWith(diagnostics);
  let afterRuns = 0;
  for (const id of ["first-observer", "second-observer"]) {
    await load(host, id, (context) => context.on("afterToolResult", () => {
      afterRuns += 1;
    }));
  }
  const { core, facts } = coreWith(() => ({ callback: () => "a function cannot be copied" }));
  const result = await host.wrapExecutor(core)(call());
  assert.equal(result, facts[0], "core's result itself, since no copy exists");
  assert.equal(afterRuns, 0);
  assert.deepEqual(diagnostics.map((d) => [d.extensionId, d.hook, d.kind]), [["first-observer", "afterToolResult", "error"]]);
  assert.match(diagnostics[0]!.message, /second-observer/);

  // Without after hooks there is nobody to tell: no diagnostic, same answer.
  const quiet: ExtensionDiagnostic[] = [];
  const bare = coreWith(() => ({ callback() {} }));
  assert.equal(await hostWith(quiet).wrapExecutor(bare.core)(call()), bare.facts[0]);
  assert.deepEqual(quiet, []);
});
