/**
 * Hook wrapper overhead.
 *
 *   npm run bench -- hooks [--calls 20000] [--runs 5]
 *
 * Calls per second through `wrapExecutor` with 0, 1 and 10 extensions (each adds one
 * allow `beforeToolCall` hook and one no-op `afterToolResult` observer) against the
 * bare core executor, for a small result, a 100 KiB result and a "rich" one (a 16 KiB
 * byte array, a Map and a Date in `details`, which freezing cannot lock, so every hook
 * gets a copy of its own). The second table splits the per-call cost into the pieces the
 * wrapper is made of (deep copy, deep freeze, the timeout race), measured on the same
 * payloads.
 */
import { parseArgs } from "node:util";
import { createExtensionHost, loadExtension, type ExtensionContext } from "../packages/pi-course/src/resources.js";
import { ToolRegistry, createToolExecutor, objectSchema, stringValue, type Tool, type ToolExecutor } from "../packages/pi-course/src/tool.js";
import { text, type ToolCall } from "../packages/pi-course/src/types.js";
import { median, timeRuns } from "./lib/stats.js";

const { values } = parseArgs({
  options: { calls: { type: "string", default: "20000" }, runs: { type: "string", default: "5" } },
});
const calls = Number(values.calls);
const runs = Number(values.runs);

type Payload = "small" | "100 KiB" | "rich";

function echoTool(payload: Payload): Tool {
  const bytes = payload === "100 KiB" ? 100 * 1024 : 16;
  const body = "x".repeat(bytes);
  const details = () =>
    payload === "rich"
      ? {
          bytes: new Uint8Array(16 * 1024),
          index: new Map([
            ["a", 1],
            ["b", 2],
          ]),
          at: new Date(0),
          lines: [1, 2, 3],
        }
      : { bytes, lines: [1, 2, 3] };
  return {
    name: "echo",
    description: "returns a fixed payload",
    schema: objectSchema({ text: stringValue() }),
    async execute() {
      return { content: [text(body)], details: details() };
    },
  };
}

async function wrapped(payload: Payload, extensions: number): Promise<ToolExecutor> {
  const registry = new ToolRegistry([echoTool(payload)]);
  const host = createExtensionHost(registry, { hookTimeoutMs: 1000 });
  for (let i = 0; i < extensions; i++) {
    await loadExtension(
      { id: `allow-${i}`, path: `allow-${i}.js` },
      {
        host,
        isTrusted: () => true,
        importModule: async () => ({
          default(context: ExtensionContext) {
            context.on("beforeToolCall", () => ({ decision: "allow" }));
            context.on("afterToolResult", () => {});
          },
        }),
      },
    );
  }
  const core = createToolExecutor(registry);
  return extensions < 0 ? core : host.wrapExecutor(core);
}

const call: ToolCall = { type: "toolCall", id: "call-1", name: "echo", arguments: { text: "hello" } };

async function perCallMicros(executor: ToolExecutor): Promise<number> {
  const times = await timeRuns(async () => {
    for (let i = 0; i < calls; i++) await executor(call);
  }, runs);
  return (median(times) * 1000) / calls;
}

console.log(`hook wrapper benchmark · node ${process.version} · ${calls} sequential calls · median of ${runs} runs`);
console.log("result     executor          µs/call   calls/s   overhead vs bare");
for (const label of ["small", "100 KiB", "rich"] as const) {
  const bare = await perCallMicros(await wrapped(label, -1));
  const rows: [string, number][] = [["bare core", bare]];
  for (const extensions of [0, 1, 10]) rows.push([`${extensions} hook pair(s)`, await perCallMicros(await wrapped(label, extensions))]);
  for (const [name, micros] of rows) {
    const overhead = micros - bare;
    console.log(
      `${label.padEnd(10)} ${name.padEnd(17)} ${micros.toFixed(2).padStart(7)}   ${Math.round(1e6 / micros)
        .toString()
        .padStart(7)}   ${name === "bare core" ? "—" : `+${overhead.toFixed(2)} µs`}`,
    );
  }
}

// Where the time goes: the building blocks alone, on the 100 KiB result.
const result = await (await wrapped("100 KiB", -1))(call);
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
const pieces: [string, () => unknown][] = [
  ["structuredClone(result)", () => structuredClone(result)],
  ["deepFreeze(structuredClone(result))", () => deepFreeze(structuredClone(result))],
  ["setTimeout + clearTimeout", () => clearTimeout(setTimeout(() => {}, 1000))],
];
console.log("\nbuilding block (100 KiB result)            µs/op");
for (const [name, fn] of pieces) {
  const times = await timeRuns(() => {
    for (let i = 0; i < calls; i++) fn();
  }, runs);
  console.log(`${name.padEnd(42)} ${((median(times) * 1000) / calls).toFixed(2).padStart(7)}`);
}
