/**
 * Chapter 06 labs · tools: the object schema's `parse`, the registry, the executor and the
 * abort that lands while a tool runs. Thirteen tests in four labs (3, 3, 4, 3); every name
 * starts with its lab id, so one lab runs alone with
 *
 *   npm run lab -w @pi/course -- 6.1
 *
 * Every check runs under `rule("§C…：…")`, naming the rule of the contract appendix of
 * chapters/06-tools/README.md that it checks. Everything is observed through the public surface:
 * what `parse` returns or throws, what the registry's methods answer, the result an
 * executor gives, what a test tool was handed and how often it ran, the listeners on a
 * signal (`events.getEventListeners`). An answer that never comes is looked at after a few
 * turns of the event loop and reported as "pending", so an executor that hangs fails its
 * test instead of hanging the file. Failure messages are written here, in words and shown
 * values, not left to `node:assert`'s diff (which Node versions lay out differently). Rules
 * that hold for every input are also checked as properties with `holds()` (fast-check, fixed
 * seed), beside the examples that tell the story: a schema accepts exactly what its
 * `jsonSchema` describes (field names like `__proto__` included); a registry knows a name only
 * as it was written; a result's content and details are the tool's own, copied 原样; every
 * call gets one paired result whatever its name, arguments and tool; an abort landing at any
 * microtask keeps what arrived and stops what did not, whatever its reason and whatever the tool
 * threw (falsy and blank values are worded as they are, never replaced by a default). Text is
 * checked with the pieces a tidy-up would change (CRLF, lone CR, BOM, blanks, NFC/NFD, lone
 * surrogates), names with quotes and backslashes. Bounds are checked far beyond any cap
 * a learner might invent, time on the test runner's mock clock (`setTimeout` and `Date`; the
 * executor's own waits use `setImmediate`, which stays real).
 *
 * The executor turns whatever a tool run throws into a paired error result, a starter's
 * scaffold error too; the executor tests read such a result as that scaffold error, so a lab
 * whose code is not written yet shows as "not started". The tests of a lab use nothing of a
 * later lab, so each lab turns green on its own, in order: Lab 6.3's executor is given no
 * live signal (that is Lab 6.4's).
 */
import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import test, { mock } from "node:test";
import fc from "fast-check";
import { deferred } from "../src/async.js";
import {
  ToolError,
  ToolRegistry,
  booleanValue,
  createToolExecutor,
  numberValue,
  objectSchema,
  optional,
  stringValue,
  type Tool,
  type ToolContext,
  type ToolExecutor,
  type ToolOutput,
  type Validator,
} from "../src/tool.js";
import { text, textOf, type ToolCall, type ToolResultMessage } from "../src/types.js";
import { holds } from "./support/properties.js";
import { isScaffold, rule } from "./support/rules.js";

// ---------------------------------------------------------------------------
// Outcomes, failure messages, the running example
// ---------------------------------------------------------------------------

/** One turn of the real event loop. */
const realTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

type Outcome<T> = { status: "fulfilled"; value: T } | { status: "rejected"; reason: unknown } | { status: "pending" };

/**
 * How `watched` stands after at most `turns` turns of the event loop: a wait that never ends
 * is "pending", not a hung test. A starter's scaffold error is thrown on.
 */
async function outcomeOf<T>(watched: Promise<T>, turns = 5): Promise<Outcome<T>> {
  let outcome: Outcome<T> = { status: "pending" };
  watched.then(
    (fulfilled) => {
      outcome = { status: "fulfilled", value: fulfilled };
    },
    (rejected: unknown) => {
      outcome = { status: "rejected", reason: rejected };
    },
  );
  for (let i = 0; i < turns && outcome.status === "pending"; i++) await realTurn();
  const seen = outcome as Outcome<T>; // set by the callbacks above, which TypeScript does not follow
  if (seen.status === "rejected" && isScaffold(seen.reason)) throw seen.reason;
  return seen;
}

/** A value as a failure message shows it (`"a.ts"`, `{"path":"a.ts"}`, `undefined`). */
const show = (value: unknown): string => fc.stringify(value);

/** Fails with `message` unless `condition` holds (a message written here, never `node:assert`'s diff). */
function expect(condition: boolean, message: string): asserts condition {
  if (!condition) assert.fail(message);
}

/** Fails unless `got` is `wanted` (`Object.is`), saying what `what` should have been and was. */
function is(got: unknown, wanted: unknown, what: string): void {
  expect(Object.is(got, wanted), `${what}应当是 ${show(wanted)}，实际是 ${show(got)}`);
}

/** Fails unless `got` deep-equals `wanted` (prototypes and `-0` count), with the message `what` and both values shown. */
function assertSame(got: unknown, wanted: unknown, what: string): void {
  try {
    assert.deepStrictEqual(got, wanted);
  } catch {
    assert.fail(`${what}\n应当是：${show(wanted)}\n实际是：${show(got)}`);
  }
}

/** The text chapter 01's `errorMessage` gives a value (an `Error`'s message, anything else as `String`), decided here on its own. */
const wording = (value: unknown): string => (value instanceof Error ? value.message : String(value));

/** Abort reasons and thrown values that are falsy or blank: each is a value like any other, passed on as it is. */
const ODD_VALUES: unknown[] = ["", "  ", 0, -0, null, undefined, false, NaN, new Error("")];

/** Text of any characters, and text made of the pieces a tidy-up would change: line ends, BOM, blanks, NFC/NFD, lone surrogates. */
const anyText = fc.oneof(
  fc.string({ unit: "binary", maxLength: 24 }),
  fc
    .array(fc.constantFrom("\r\n", "\r", "\n", "\uFEFF", " ", "\t", "\u00a0", "e\u0301", "\u00e9", "\uD800", "\uDC00", "\u0000", "a", "😀", "\u2028"), {
      maxLength: 8,
    })
    .map((parts) => parts.join("")),
);

/** What was thrown, as a failure message names it. */
const thrownText = (error: unknown): string =>
  error instanceof ToolError ? `ToolError ${error.code}（${error.message}）` : error instanceof Error ? `${error.name}：${error.message}` : show(error);

/** What `run` threw (a scaffold error is thrown on), or `undefined` with `threw: false`. */
function thrownBy(run: () => unknown): { threw: boolean; error?: unknown; value?: unknown } {
  try {
    return { threw: false, value: run() };
  } catch (thrown) {
    if (isScaffold(thrown)) throw thrown;
    return { threw: true, error: thrown };
  }
}

/** Fails unless `run` throws a `ToolError` with `code`; returns its message. */
function throwsCode(run: () => unknown, code: string, what: string): string {
  const outcome = thrownBy(run);
  const error = outcome.error;
  expect(
    outcome.threw && error instanceof ToolError && error.code === code,
    `${what}应当抛出 ToolError ${code}，实际${outcome.threw ? `抛出 ${thrownText(error)}` : `没有抛错，返回了 ${show(outcome.value)}`}`,
  );
  return error.message;
}

/** A tool's first text, or the executor's reason in an error result. */
const say = (result: ToolResultMessage): string => textOf(result);

/** A starter's scaffold error at the end of an error result's text: the executor caught it; it still means "not written yet". */
const SCAFFOLD_IN_TEXT = /(Lab \d+\.\d+ .+ 尚未实现)$/;

/**
 * The executor's answer to `call`, looked at after at most `turns` turns of the event loop.
 * Fails (with words) when it throws, rejects or never answers; a result whose text ends in a
 * scaffold error is thrown on as that error.
 */
async function answer(execute: ToolExecutor, call: ToolCall, turns = 5): Promise<ToolResultMessage> {
  return answerOf(start(execute, call), call, turns);
}

/** The executor's promise for `call`, started now; fails (with words) when the executor throws instead. */
function start(execute: ToolExecutor, call: ToolCall): Promise<ToolResultMessage> {
  const started = thrownBy(() => execute(call));
  if (started.threw) assert.fail(`执行器同步地抛出了 ${thrownText(started.error)}：它总是返回一个 promise，从不抛错`);
  return started.value as Promise<ToolResultMessage>;
}

/** The answer `pending` (an executor's promise for `call`) gives within `turns` turns of the event loop, as `answer` reads it. */
async function answerOf(pending: Promise<ToolResultMessage>, call: ToolCall, turns = 5): Promise<ToolResultMessage> {
  const outcome = await outcomeOf(pending, turns);
  if (outcome.status === "pending") assert.fail(`执行器一直没有回答 ${show(call.id)}（等了 ${turns} 轮事件循环）`);
  if (outcome.status === "rejected") assert.fail(`执行器拒绝了（${thrownText(outcome.reason)}）：它从不拒绝，出了错也是一条配对的错误结果`);
  const answered = outcome.value;
  const scaffold = answered?.isError === true && Array.isArray(answered.content) ? SCAFFOLD_IN_TEXT.exec(say(answered)) : null;
  if (scaffold !== null) throw new Error(scaffold[1]);
  return answered;
}

/** Fails unless `result` answers `call`: a tool result with its id and name. */
function assertPaired(result: ToolResultMessage, call: ToolCall, what: string): void {
  expect(
    result?.role === "toolResult" && result.toolCallId === call.id && result.toolName === call.name,
    `${what}：结果应当配对 ${show({ toolCallId: call.id, toolName: call.name })}，实际是 ${show(
      result === undefined || result === null ? result : { role: result.role, toolCallId: result.toolCallId, toolName: result.toolName },
    )}`,
  );
}

/** Fails unless `result` is a paired error whose text matches `reason`. */
function assertError(result: ToolResultMessage, call: ToolCall, reason: RegExp, what: string): void {
  assertPaired(result, call, what);
  is(result.isError, true, `${what}：isError `);
  expect(reason.test(say(result)), `${what}：错误结果的文字应当符合 ${reason}，实际是 ${show(say(result))}`);
}

function toolCall(name: string, args: unknown, id = "call-1"): ToolCall {
  return { type: "toolCall", id, name, arguments: args };
}

/** The running example's schema: chapter 08's `read` without `offset`. */
const READ_SCHEMA = objectSchema({ path: stringValue(), limit: optional(numberValue()) });
const READ_CALL = toolCall("read", { path: "a.ts", limit: 10 });

/** What a test tool was handed, one entry per run. */
type Seen = { parameters: unknown; context: ToolContext }[];

/** The running example's `read`: records each run and answers the path's first line. */
function readTool(seen: Seen = [], output?: (parameters: { path: string; limit?: number }) => ToolOutput): Tool<{ path: string; limit?: number }> {
  return {
    name: "read",
    description: "read a file",
    schema: READ_SCHEMA,
    async execute(parameters, context) {
      seen.push({ parameters, context });
      return output?.(parameters) ?? { content: [text("export const a = 1;")], details: { path: parameters.path, lines: 1 } };
    },
  };
}

/** Steps of a fake clock adding up to more than 2^31 ms (about 25 days): a time limit of any size fires on the way. */
const LONG_STEPS = [1_000, 60_000, 3_600_000, 86_400_000, 2 ** 31];
const LONG_WAIT = LONG_STEPS.reduce((sum, step) => sum + step, 0);

/** Runs `body` with `setTimeout` and `Date` mocked (the fake clock starting at `now`), then puts the real ones back. */
async function withFakeClock(body: () => Promise<void>, now = 1_700_000_000_000): Promise<void> {
  mock.timers.enable({ apis: ["setTimeout", "Date"], now });
  try {
    await body();
  } finally {
    mock.timers.reset();
  }
}

/** How `watched` stands after the fake clock went through `LONG_STEPS`, a real turn of the event loop after each. */
async function afterLongWait<T>(watched: Promise<T>): Promise<Outcome<T>> {
  for (const step of LONG_STEPS) {
    mock.timers.tick(step);
    await realTurn();
  }
  return outcomeOf(watched, 2);
}

/** What an outcome shows in a failure message. */
const shown = (outcome: Outcome<ToolResultMessage>): string =>
  outcome.status === "fulfilled"
    ? `回答了 ${show(Array.isArray(outcome.value?.content) ? say(outcome.value) : outcome.value)}`
    : outcome.status === "rejected"
      ? `拒绝了（${thrownText(outcome.reason)}）`
      : "还没回答";

/** A tool without parameters that runs `run` (counting its runs in `runs`). */
function bareTool(name: string, run: () => Promise<ToolOutput> | ToolOutput, runs?: { count: number }): Tool {
  return {
    name,
    description: `${name} tool`,
    schema: objectSchema({}),
    execute: (() => {
      if (runs !== undefined) runs.count += 1;
      return run();
    }) as Tool["execute"],
  };
}

// ---------------------------------------------------------------------------
// Schemas as data: what a shape accepts, said by its jsonSchema
// ---------------------------------------------------------------------------

/** A field of a generated shape: a leaf or a nested object, and whether it may be absent. */
type FieldSpec = { kind: "string" | "number" | "boolean"; optional: boolean } | { kind: "object"; optional: boolean; fields: [string, FieldSpec][] };

/** Field names, tricky ones included: `__proto__` and names `Object.prototype` has too. */
const fieldName = fc.constantFrom("path", "limit", "verbose", "options", "__proto__", "toString", "constructor", "hasOwnProperty", "valueOf", "a");

/** `target` with each own enumerable field of `sources` defined on it (never `target[key] = …`, which a `__proto__` key would turn into a prototype). */
function defineAll<T extends object>(target: T, ...sources: (object | undefined)[]): T {
  for (const source of sources) {
    if (source === undefined) continue;
    for (const [key, value] of Object.entries(source)) Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return target;
}

const fieldsOf = (depth: number): fc.Arbitrary<[string, FieldSpec][]> =>
  fc.uniqueArray(fc.tuple(fieldName, fieldSpec(depth)), { selector: ([name]) => name, maxLength: 3 });

function fieldSpec(depth: number): fc.Arbitrary<FieldSpec> {
  const leaf = fc.record({ kind: fc.constantFrom("string" as const, "number" as const, "boolean" as const), optional: fc.boolean() });
  if (depth === 0) return leaf;
  return fc.oneof(leaf, fc.record({ kind: fc.constant("object" as const), optional: fc.boolean(), fields: fieldsOf(depth - 1) }));
}

/** The validator a field spec stands for, built with the module's own functions. */
function validatorOf(spec: FieldSpec): Validator<unknown> {
  const inner: Validator<unknown> =
    spec.kind === "object" ? objectSchemaOf(spec.fields) : spec.kind === "string" ? stringValue() : spec.kind === "number" ? numberValue() : booleanValue();
  return spec.optional ? optional(inner) : inner;
}

function objectSchemaOf(fields: [string, FieldSpec][]) {
  return objectSchema(Object.fromEntries(fields.map(([name, spec]) => [name, validatorOf(spec)])));
}

/** Values that fit `spec` (an optional field may be absent or `undefined`). */
function fitting(spec: FieldSpec): fc.Arbitrary<unknown> {
  switch (spec.kind) {
    case "string":
      return fc.string({ maxLength: 4 });
    case "number":
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case "boolean":
      return fc.boolean();
    case "object":
      return fittingObject(spec.fields);
  }
}

function fittingObject(fields: [string, FieldSpec][]): fc.Arbitrary<unknown> {
  const model = Object.fromEntries(fields.map(([name, spec]) => [name, spec.optional ? fc.option(fitting(spec), { nil: undefined }) : fitting(spec)]));
  const required = fields.filter(([, spec]) => !spec.optional).map(([name]) => name);
  return fc.record(model, { requiredKeys: required });
}

/** Anything, with the field names of the shapes among its keys: null-prototype objects, arrays, Maps, Dates, boxed values… */
const anyValue = (maxDepth: number) =>
  fc.anything({
    key: fc.oneof(fieldName, fc.string({ maxLength: 3 })),
    maxDepth,
    withNullPrototype: true,
    withBoxedValues: true,
    withMap: true,
    withDate: true,
    withBigInt: true,
  });

/** Values close to fitting `spec`: fitting, anything at all, or (for an object) fields that may be wrong, absent or extra. */
function near(spec: FieldSpec): fc.Arbitrary<unknown> {
  const options = [fitting(spec), anyValue(1)];
  return spec.kind === "object" ? fc.oneof(...options, nearObject(spec.fields)) : fc.oneof(...options);
}

/** An object whose fields may each fit or not, be absent, come with extra ones; its prototype may be `null`. */
function nearObject(fields: [string, FieldSpec][]): fc.Arbitrary<unknown> {
  const model = Object.fromEntries(fields.map(([name, spec]) => [name, near(spec)]));
  return fc
    .tuple(fc.record(model, { requiredKeys: [] }), fc.option(fc.dictionary(fieldName, anyValue(0), { maxKeys: 2 }), { nil: undefined }), fc.boolean())
    .map(([own, extra, bare]) => defineAll(bare ? (Object.create(null) as Record<string, unknown>) : {}, own, extra));
}

/** Values for a shape's `parse`: fitting ones, near ones, anything. */
const valuesFor = (fields: [string, FieldSpec][]) => fc.oneof(fittingObject(fields), nearObject(fields), anyValue(2));

/** A plain object in the sense of chapter 01's isPlainObject, decided here on its own. */
function plain(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Whether `jsonSchema` (the subset objectSchema writes: string, number, boolean, object with
 * properties, required and no additional properties) describes `value`, read the way JSON
 * reads it: a number is finite, an object is plain, and an own field whose value is
 * `undefined` is no value (allowed only where the field may be absent).
 */
function describes(jsonSchema: Record<string, unknown>, value: unknown): boolean {
  switch (jsonSchema.type) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "boolean":
      return typeof value === "boolean";
    case "object": {
      if (!plain(value)) return false;
      const properties = jsonSchema.properties as Record<string, Record<string, unknown>>;
      const required = jsonSchema.required as string[];
      if (!required.every((name) => Object.hasOwn(value, name))) return false;
      return Object.keys(value).every((name) => {
        if (!Object.hasOwn(properties, name)) return false;
        if (value[name] === undefined) return !required.includes(name);
        return describes(properties[name]!, value[name]);
      });
    }
    default:
      return false;
  }
}

/** What parse should return for a value its schema describes: the same fields, `undefined` ones left out, objects new. */
function stripped(value: unknown): unknown {
  if (!plain(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const name of Object.keys(value)) if (value[name] !== undefined) defineAll(copy, { [name]: stripped(value[name]) });
  return copy;
}

/** Every plain object inside `value`, `value` included (to check that none of them is the parsed result). */
function objectsIn(value: unknown, into: object[] = []): object[] {
  if (plain(value)) {
    into.push(value);
    for (const name of Object.keys(value)) objectsIn(value[name], into);
  }
  return into;
}

// ---------------------------------------------------------------------------
// Lab 6.1 · 参数：从 unknown 到一个新对象
// ---------------------------------------------------------------------------

test("Lab 6.1 · 合法的参数：一个新对象，只有调用方自己给的字段", async () => {
  await rule("§C3.1：接受的参数变成一个新对象：字段和值都和给的一样，输入本身不变", () => {
    const input = { path: "a.ts", limit: 10 };
    const parsed = READ_SCHEMA.parse(input);
    assertSame(parsed, { path: "a.ts", limit: 10 }, `parse(${show(input)}) 的结果不对`);
    expect(parsed !== (input as unknown), "parse 返回的应当是一个新对象，实际就是传进去的那个对象");
    assertSame(input, { path: "a.ts", limit: 10 }, "parse 改动了传进去的对象");
  });
  await rule("§C3.1：给了的值原样留下：空字符串、0、false 也是值", () => {
    const schema = objectSchema({ path: stringValue(), limit: optional(numberValue()), verbose: optional(booleanValue()) });
    const input = { path: "", limit: 0, verbose: false };
    assertSame(schema.parse(input), { path: "", limit: 0, verbose: false }, `parse(${show(input)}) 的结果不对`);
  });
  await rule("§C3.1：缺席的可选字段，结果里没有这个字段（不是值为 undefined 的字段）；值为 undefined 的可选字段也一样", () => {
    const bare = READ_SCHEMA.parse({ path: "b.ts" });
    assertSame(Object.keys(bare), ["path"], 'parse({ path: "b.ts" }) 的结果的字段');
    const undefinedLimit = READ_SCHEMA.parse({ path: "c.ts", limit: undefined });
    assertSame(Object.keys(undefinedLimit), ["path"], 'parse({ path: "c.ts", limit: undefined }) 的结果的字段');
  });
  await rule("§C3.1：嵌套的对象也是新的，它的可选字段一样处理", () => {
    const schema = objectSchema({ path: stringValue(), range: optional(objectSchema({ from: numberValue(), to: optional(numberValue()) })) });
    const input = { path: "a.ts", range: { from: 1 } };
    const parsed = schema.parse(input);
    assertSame(parsed, { path: "a.ts", range: { from: 1 } }, `parse(${show(input)}) 的结果不对`);
    expect(parsed.range !== (input.range as unknown), "嵌套的 range 应当是一个新对象，实际就是传进去的那个");
  });
  await rule("§C3.2：只看调用方自己的字段：继承来的 toString 不算给了这个字段", () => {
    const schema = objectSchema({ path: stringValue(), toString: optional(stringValue()) });
    const outcome = thrownBy(() => schema.parse({ path: "d.ts" }));
    expect(!outcome.threw, `{ path: "d.ts" } 没有自己的 toString 字段，应当被接受，实际抛出 ${thrownText(outcome.error)}`);
    assertSame(outcome.value, { path: "d.ts" }, 'parse({ path: "d.ts" }) 的结果不对');
    const required = objectSchema({ constructor: stringValue() });
    throwsCode(() => required.parse({}), "SCHEMA_INVALID", "必填字段 constructor 只是继承来的（{}），parse ");
  });
  await rule("§C3.2：原型是 null 的普通对象照样接受（它没有 hasOwnProperty 方法）", () => {
    const input = Object.assign(Object.create(null) as Record<string, unknown>, { path: "e.ts" });
    const outcome = thrownBy(() => READ_SCHEMA.parse(input));
    expect(!outcome.threw, `原型是 null 的 { path: "e.ts" } 应当被接受，实际抛出 ${thrownText(outcome.error)}`);
    assertSame(outcome.value, { path: "e.ts" }, "结果应当是一个普通的新对象");
  });
  await rule("§C3.3：值的字段是 Object.keys 列出的那些：不可枚举的、以 symbol 为键的多余属性不是未知字段", () => {
    const input: Record<string | symbol, unknown> = { path: "a.ts" };
    Object.defineProperty(input, "hidden", { value: 1, enumerable: false });
    input[Symbol("tag")] = 2;
    const outcome = thrownBy(() => READ_SCHEMA.parse(input));
    expect(
      !outcome.threw,
      `{ path: "a.ts" } 另有一个不可枚举的 hidden 和一个 symbol 键，它们不是 Object.keys 列出的字段，应当被接受，实际抛出 ${thrownText(outcome.error)}`,
    );
    assertSame(outcome.value, { path: "a.ts" }, "结果应当只有 shape 的字段");
  });
  await rule("§C3.1：字段名可以是任何字符串：叫 __proto__、valueOf 的字段在结果里也是自己的字段，结果的原型不变", () => {
    const cases: { shape: Record<string, Validator<unknown>>; json: string }[] = [
      { shape: { path: stringValue(), ["__proto__"]: optional(stringValue()) }, json: '{"path":"a.ts","__proto__":"x"}' },
      { shape: { ["__proto__"]: objectSchema({ a: numberValue() }), valueOf: optional(booleanValue()) }, json: '{"__proto__":{"a":1},"valueOf":false}' },
    ];
    for (const { shape, json } of cases) {
      const outcome = thrownBy(() => objectSchema(shape).parse(JSON.parse(json)));
      expect(!outcome.threw, `${json} 应当被接受，实际抛出 ${thrownText(outcome.error)}`);
      const result = outcome.value as Record<string, unknown>;
      expect(
        Object.getPrototypeOf(result) === Object.prototype && Object.hasOwn(result, "__proto__"),
        `${json}：结果应当有自己的 __proto__ 字段，原型仍是 Object.prototype；实际它的字段是 ${show(Object.keys(result))}，原型${Object.getPrototypeOf(result) === Object.prototype ? "没变" : "被换掉了"}（result["__proto__"] = … 设的是原型，不是字段）`,
      );
      assertSame(result, JSON.parse(json), `${json} 的结果不对`);
    }
  });
  await rule("§C3.1：parse 不设上限：一千二百个字段、嵌套两百层、一百万个字符的字符串，照样接受，原样留下", () => {
    // Well above any cap a learner invents (16, 100, 1 000, 1 024), and small enough for a
    // correct `reduce` that spreads its accumulator (quadratic: 10 000 fields take half a minute).
    const names = Array.from({ length: 1_200 }, (_, i) => `f${i}`);
    const wide = objectSchema(Object.fromEntries(names.map((name) => [name, optional(stringValue())])));
    const manyFields = Object.fromEntries(names.map((name) => [name, name]));
    const many = thrownBy(() => wide.parse(manyFields));
    expect(!many.threw, `有一千二百个字段的值应当被接受，实际抛出 ${thrownText(many.error)}`);
    assertSame(many.value, manyFields, "一千二百个字段的值，结果");
    let deepSchema: Validator<unknown> = objectSchema({ leaf: numberValue() });
    let deepValue: unknown = { leaf: 1 };
    for (let level = 0; level < 200; level++) {
      deepSchema = objectSchema({ next: deepSchema });
      deepValue = { next: deepValue };
    }
    const deep = thrownBy(() => deepSchema.parse(deepValue));
    expect(!deep.threw, `嵌套两百层的值应当被接受，实际抛出 ${thrownText(deep.error)}`);
    expect(JSON.stringify(deep.value) === JSON.stringify(deepValue), "嵌套两百层的值，结果应当是同样的内容");
    const long = "x".repeat(1_000_000);
    const longOutcome = thrownBy(() => READ_SCHEMA.parse({ path: long }));
    expect(!longOutcome.threw, `一百万个字符的 path 应当被接受，实际抛出 ${thrownText(longOutcome.error)}`);
    const kept = (longOutcome.value as { path?: unknown }).path;
    expect(kept === long, `一百万个字符的 path 应当原样留下，实际${typeof kept === "string" ? `是 ${kept.length} 个字符的另一个字符串` : `是 ${show(kept)}`}`);
  });
});

test("Lab 6.1 · 不合法的参数：SCHEMA_INVALID，消息以出错的位置开头", async () => {
  await rule("§C3.3、§C3.4：不是普通对象、缺了必填字段、有未知字段、字段的值不对：抛出 SCHEMA_INVALID，消息以出错的路径和冒号开头", () => {
    const rejected: { name: string; value: unknown; path: string }[] = [
      { name: "不是对象", value: "a.ts", path: "value" },
      { name: "null", value: null, path: "value" },
      { name: "数组", value: ["a.ts"], path: "value" },
      { name: "Map", value: new Map([["path", "a.ts"]]), path: "value" },
      { name: "字段是继承来的", value: Object.create({ path: "a.ts" }), path: "value" },
      { name: "缺少必填字段", value: {}, path: "path" },
      { name: "必填字段为 undefined", value: { path: undefined }, path: "path" },
      { name: "字段类型错误", value: { path: 42 }, path: "path" },
      { name: "可选字段类型错误", value: { path: "a.ts", limit: "10" }, path: "limit" },
      { name: "数字不是有限值", value: { path: "a.ts", limit: Number.NaN }, path: "limit" },
      { name: "无穷大", value: { path: "a.ts", limit: Number.POSITIVE_INFINITY }, path: "limit" },
      { name: "未知字段（拼错的参数名）", value: { path: "a.ts", limt: 10 }, path: "limt" },
      { name: "未知字段的值是 undefined", value: { path: "a.ts", extra: undefined }, path: "extra" },
      { name: "未知字段叫 hasOwnProperty", value: { path: "a.ts", hasOwnProperty: "x" }, path: "hasOwnProperty" },
      { name: "未知字段叫 __proto__", value: JSON.parse('{"path":"a.ts","__proto__":{"limit":1}}'), path: "__proto__" },
      { name: "未知字段叫 toString", value: { path: "a.ts", toString: "x" }, path: "toString" },
    ];
    for (const { name, value, path } of rejected) {
      const message = throwsCode(() => READ_SCHEMA.parse(value), "SCHEMA_INVALID", `${name}（${show(value)}）：parse `);
      expect(message.startsWith(`${path}: `), `${name}（${show(value)}）：消息应当以 ${show(`${path}: `)} 开头，实际是 ${show(message)}`);
    }
  });
  await rule("§C3.4：嵌套对象里的错误，路径用点连起来：range.to、range.extra", () => {
    const schema = objectSchema({ path: stringValue(), range: optional(objectSchema({ from: numberValue(), to: optional(numberValue()) })) });
    const rejected: { value: unknown; path: string }[] = [
      { value: { path: "a.ts", range: { from: 1, to: "9" } }, path: "range.to" },
      { value: { path: "a.ts", range: { from: 1, extra: 2 } }, path: "range.extra" },
      { value: { path: "a.ts", range: {} }, path: "range.from" },
      { value: { path: "a.ts", range: [1, 9] }, path: "range" },
    ];
    for (const { value, path } of rejected) {
      const message = throwsCode(() => schema.parse(value), "SCHEMA_INVALID", `${show(value)}：parse `);
      expect(message.startsWith(`${path}: `), `${show(value)}：消息应当以 ${show(`${path}: `)} 开头，实际是 ${show(message)}`);
    }
  });
});

test("Lab 6.1 · 任何值：parse 接受的恰好是 jsonSchema 描述的那些", async () => {
  await holds(
    "§C3.5：任何形状、任何值：parse 接受的恰好是 jsonSchema 描述的值（数字有限、对象普通、undefined 的字段算缺席），结果是去掉 undefined 字段的新对象；拒绝时只抛 SCHEMA_INVALID；输入不变",
    fc.property(
      fieldsOf(2).chain((fields) => fc.tuple(fc.constant(fields), valuesFor(fields))),
      ([fields, value]) => {
        const schema = objectSchemaOf(fields);
        const before = show(value);
        const outcome = thrownBy(() => schema.parse(value));
        is(show(value), before, "parse 之后，输入");
        if (describes(schema.jsonSchema, value)) {
          expect(!outcome.threw, `jsonSchema 描述了这个值，parse 却抛出 ${thrownText(outcome.error)}`);
          assertSame(outcome.value, stripped(value), "接受的值，结果应当是同样的字段（undefined 的字段去掉）");
          const inputs = objectsIn(value);
          for (const made of objectsIn(outcome.value)) expect(!inputs.includes(made), "结果里的对象应当都是新的，实际有一个就是输入里的对象");
        } else {
          expect(outcome.threw, `jsonSchema 不描述这个值，parse 却接受了它，返回 ${show(outcome.value)}`);
          expect(
            outcome.error instanceof ToolError && outcome.error.code === "SCHEMA_INVALID",
            `拒绝时应当抛出 ToolError SCHEMA_INVALID，实际抛出 ${thrownText(outcome.error)}`,
          );
        }
      },
    ),
    { numRuns: 300 },
  );
});

// ---------------------------------------------------------------------------
// Lab 6.2 · 注册表：名字唯一，只移除自己注册的那个
// ---------------------------------------------------------------------------

const nameless = (name: string): Tool => bareTool(name, () => ({ content: [text(name)] }));
const namesOf = (registry: ToolRegistry): string[] => registry.list().map((tool) => tool.name);

/** Tool names, tricky ones included: whitespace, case, Unicode forms, names `Object.prototype` has, the empty name. */
const toolName = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.constantFrom(
    "read",
    " read",
    "read ",
    "READ",
    "Read",
    "ｒｅａｄ",
    "caf\u00e9",
    "cafe\u0301",
    "__proto__",
    "toString",
    "constructor",
    "hasOwnProperty",
    "",
  ),
);

/** Names a helpful registry might wrongly treat as `name`: trimmed, padded, another case, another Unicode form. */
const lookalikes = (name: string): string[] => [
  name,
  name.trim(),
  ` ${name}`,
  `${name} `,
  name.toLowerCase(),
  name.toUpperCase(),
  name.normalize("NFC"),
  name.normalize("NFD"),
  name.normalize("NFKC"),
];

test("Lab 6.2 · 注册与查找：按名字取，按注册的顺序列", async () => {
  await rule("§C4.1：list() 按注册的顺序列出工具（构造时给的在前），get 按名字取回同一个对象", () => {
    const b = nameless("b");
    const registry = new ToolRegistry([b, nameless("a")]);
    registry.register(nameless("c"));
    assertSame(namesOf(registry), ["b", "a", "c"], "list() 的顺序");
    expect(registry.get("b") === b, `get("b") 应当是注册的那个对象，实际是 ${show(registry.get("b"))}`);
  });
  await rule("§C4.1：没注册的名字，get 是 undefined：Object.prototype 上有的名字（toString、constructor）也是", () => {
    const registry = new ToolRegistry([nameless("read")]);
    for (const name of ["missing", "toString", "constructor", "READ"]) is(registry.get(name), undefined, `get(${show(name)}) `);
    registry.register(nameless("constructor"));
    is(registry.get("constructor")?.name, "constructor", '注册了名叫 constructor 的工具之后，get("constructor").name ');
  });
  await rule("§C4.1：list() 每次返回一个普通的新数组，调用方可以随意改它：改了它，注册表不变", () => {
    const registry = new ToolRegistry([nameless("read"), nameless("write")]);
    const first = registry.list();
    const changed = thrownBy(() => {
      first.pop();
      first.push(nameless("intruder"));
    });
    expect(!changed.threw, `list() 返回的数组应当可以改（调用方拿它做自己的事），实际改它时抛出 ${thrownText(changed.error)}`);
    expect(registry.list() !== first, "list() 两次返回了同一个数组");
    assertSame(namesOf(registry), ["read", "write"], "改了 list() 返回的数组之后，注册表的工具");
  });
  await rule("§C4.1：每个注册表只有自己的工具：另一个注册表里的，这里 get 不到、list 不列、注册同名的也不冲突", () => {
    const read = nameless("read");
    const mine = new ToolRegistry([read]);
    const other = new ToolRegistry();
    is(other.get("read"), undefined, '另一个注册表的 get("read") ');
    assertSame(namesOf(other), [], "另一个注册表的 list() ");
    const registered = thrownBy(() => other.register(nameless("read")));
    expect(!registered.threw, `另一个注册表注册自己的 read，应当成功，实际抛出 ${thrownText(registered.error)}`);
    expect(mine.get("read") === read, '另一个注册表注册了 read 之后，这个注册表的 get("read") 应当还是自己的 read');
  });
  await rule("§C4.1：注册表不设数量上限：一万个工具都能注册，按顺序列出，按名字取回", () => {
    const tools = Array.from({ length: 10_000 }, (_, i) => nameless(`tool_${i}`));
    const registry = new ToolRegistry(tools.slice(0, 5_000));
    const refused = thrownBy(() => {
      for (const tool of tools.slice(5_000)) registry.register(tool);
    });
    expect(!refused.threw, `注册第 5001～10000 个工具时抛出了 ${thrownText(refused.error)}：注册表没有数量上限`);
    const listed = registry.list();
    is(listed.length, 10_000, "list() 的长度");
    const wrong = listed.findIndex((tool, i) => tool !== tools[i]);
    expect(wrong === -1, `list() 的第 ${wrong} 个应当是 tool_${wrong}，实际是 ${show(listed[wrong]?.name)}`);
    expect(registry.get("tool_9999") === tools[9_999], 'get("tool_9999") 应当是第一万个工具');
  });
  await holds(
    "§C4.1：名字原样：任何一组不同的名字（空白、大小写、Unicode 的写法、__proto__ 都算不同）都能注册，list() 按注册的顺序；get 只认一模一样的名字，别的都是 undefined",
    fc.property(fc.uniqueArray(toolName, { maxLength: 8 }), (names) => {
      const tools = names.map(nameless);
      const built = thrownBy(() => new ToolRegistry(tools));
      expect(!built.threw, `这些名字各不相同，应当都能注册，实际抛出 ${thrownText(built.error)}`);
      const registry = built.value as ToolRegistry;
      assertSame(namesOf(registry), names, "list() 的名字");
      for (const probe of new Set(names.flatMap(lookalikes))) {
        const index = names.indexOf(probe);
        const got = registry.get(probe);
        expect(
          got === (index === -1 ? undefined : tools[index]),
          `get(${show(probe)}) 应当是 ${index === -1 ? "undefined（没有一模一样的名字）" : `名叫 ${show(probe)} 的那个工具`}，实际是 ${got === undefined ? "undefined" : `名叫 ${show(got.name)} 的工具`}`,
        );
      }
    }),
    { numRuns: 150 },
  );
});

test("Lab 6.2 · 重名：TOOL_CONFLICT，注册表原样不动", async () => {
  await rule("§C4.2：名字已经注册过：register 抛出 TOOL_CONFLICT，原来的工具还在，顺序不变", () => {
    const first = nameless("read");
    const registry = new ToolRegistry([first, nameless("write")]);
    throwsCode(() => registry.register(nameless("read")), "TOOL_CONFLICT", "再注册一个 read，register ");
    expect(registry.get("read") === first, '重名被拒绝之后，get("read") 应当还是原来的工具，实际被换掉了');
    assertSame(namesOf(registry), ["read", "write"], "重名被拒绝之后，list() ");
  });
  await rule("§C4.2：同一个对象注册两次也是重名", () => {
    const read = nameless("read");
    const registry = new ToolRegistry([read]);
    throwsCode(() => registry.register(read), "TOOL_CONFLICT", "同一个 read 再注册一次，register ");
    assertSame(namesOf(registry), ["read"], "之后的 list() ");
  });
  await rule("§C4.2：构造时给的工具里有重名：构造函数抛出 TOOL_CONFLICT", () => {
    throwsCode(() => new ToolRegistry([nameless("x"), nameless("y"), nameless("x")]), "TOOL_CONFLICT", "new ToolRegistry([x, y, x]) ");
  });
});

test("Lab 6.2 · 移除：只移除注册在这个名字下的同一个对象，其余顺序不变", async () => {
  await rule("§C4.3：unregister(名字, 工具)：注册在这个名字下的不是这个对象（或者没有），返回 false，什么都不改", () => {
    const read = nameless("read");
    const registry = new ToolRegistry([read, nameless("write"), nameless("list")]);
    is(registry.unregister("read", nameless("read")), false, '用另一个同名对象 unregister("read", …) 的返回值');
    is(registry.unregister("missing", read), false, 'unregister("missing", read) 的返回值');
    is(registry.unregister("write", read), false, 'unregister("write", read)（名字和对象对不上）的返回值');
    expect(registry.get("read") === read, "没移除成功，read 应当还在");
    assertSame(namesOf(registry), ["read", "write", "list"], "没移除成功之后，list() ");
  });
  await rule("§C4.3：是同一个对象：移除它，返回 true；其余工具的顺序不变；再注册时排到最后", () => {
    const read = nameless("read");
    const registry = new ToolRegistry([read, nameless("write"), nameless("list")]);
    is(registry.unregister("read", read), true, 'unregister("read", read) 的返回值');
    is(registry.get("read"), undefined, '移除之后，get("read") ');
    assertSame(namesOf(registry), ["write", "list"], "移除之后，list() ");
    is(registry.unregister("read", read), false, "第二次 unregister 同一个工具的返回值");
    registry.register(read);
    assertSame(namesOf(registry), ["write", "list", "read"], "再注册 read 之后，list() ");
  });
});

// ---------------------------------------------------------------------------
// Lab 6.3 · 执行器：每个调用恰好一个配对的结果
// ---------------------------------------------------------------------------

test("Lab 6.3 · 成功的调用：一条配对的结果，工具拿到解析过的参数", async () => {
  const seen: Seen = [];
  const execute = createToolExecutor(new ToolRegistry([readTool(seen)]));
  const before = Date.now();
  const result = await answer(execute, READ_CALL);
  const after = Date.now();
  await rule("§C5.1：结果是 toolResult，带着调用的 id 和 name，content 和 details 是工具给的，isError 是 false，timestamp 是回答时的 Date.now()", () => {
    const { timestamp, ...rest } = result;
    assertSame(
      rest,
      {
        role: "toolResult",
        toolCallId: "call-1",
        toolName: "read",
        content: [text("export const a = 1;")],
        details: { path: "a.ts", lines: 1 },
        isError: false,
      },
      "read a.ts 的结果不对（timestamp 之外）",
    );
    expect(
      typeof timestamp === "number" && timestamp >= before && timestamp <= after,
      `timestamp 应当在 ${before} 和 ${after} 之间，实际是 ${show(timestamp)}`,
    );
  });
  await rule("§C5.1：工具只运行一次，拿到的是 schema 解析出的新对象；没有 signal 时 context 恰好是 { callId }", () => {
    is(seen.length, 1, "工具运行的次数");
    assertSame(seen[0]!.parameters, { path: "a.ts", limit: 10 }, "工具拿到的参数");
    expect(seen[0]!.parameters !== READ_CALL.arguments, "工具拿到的应当是 parse 返回的新对象，实际是调用里的 arguments 本身");
    assertSame(seen[0]!.context, { callId: "call-1" }, "工具拿到的 context");
  });
  await rule("§C5.1：工具自己说 isError: true：原样保留它的 content；工具没给 details：结果里没有 details 字段", async () => {
    const check = bareTool("check", () => ({ content: [text("2 tests failed")], isError: true }));
    const failed = await answer(createToolExecutor(new ToolRegistry([check])), toolCall("check", {}, "call-2"));
    assertPaired(failed, toolCall("check", {}, "call-2"), "check");
    is(failed.isError, true, "工具报告失败时，isError ");
    is(say(failed), "2 tests failed", "工具报告失败时，结果的文字");
    expect(!("details" in failed), `工具没给 details，结果里却有 details 字段：${show(failed)}`);
  });
  await rule("§C5.1：execute 直接返回输出（不是 promise，比如用 JavaScript 写的扩展工具）：结果和 promise 兑现的一样", async () => {
    const plainTool = bareTool("plain", () => ({ content: [text("plain answer")], details: { n: 1 } }));
    const call = toolCall("plain", {}, "p1");
    const result = await answer(createToolExecutor(new ToolRegistry([plainTool])), call);
    assertPaired(result, call, "plain");
    assertSame(
      { content: result.content, details: result.details, isError: result.isError },
      { content: [text("plain answer")], details: { n: 1 }, isError: false },
      "直接返回输出的工具，结果的 content、details、isError",
    );
  });
  await rule('§C5.1：isError 恰好在工具给的是 true 时为 true：1、"true"、"yes"、{} 这样的值都不算', async () => {
    for (const flag of [1, "true", "yes", {}]) {
      const loose = bareTool("loose", () => ({ content: [text("ok")], isError: flag as boolean }));
      const result = await answer(createToolExecutor(new ToolRegistry([loose])), toolCall("loose", {}, "l1"));
      is(result.isError, false, `工具给的 isError 是 ${show(flag)}（不是 true），结果的 isError `);
    }
  });
  await rule("§C5.1：每次执行都是新的一次：同一个调用执行两次，工具就运行两次，得到两条不同的结果", async () => {
    const runs = { count: 0 };
    const counted = bareTool("count", () => ({ content: [text(`run ${runs.count}`)] }), runs);
    const execute = createToolExecutor(new ToolRegistry([counted]));
    const call = toolCall("count", {}, "same");
    const first = await answer(execute, call);
    const second = await answer(execute, call);
    is(runs.count, 2, "同一个调用执行两次，工具运行的次数");
    expect(first !== second, "两次执行交回了同一个结果对象：每次执行都要造一条新的结果");
    is(say(second), "run 2", "第二次的结果的文字");
  });
  await rule("§C5.1：执行器不给工具设时限：假时钟走过 2^31 毫秒以上，工具还没交回，执行器就还在等；工具交回之后，结果是它的", async () => {
    await withFakeClock(async () => {
      const release = deferred<void>();
      const slow = bareTool("slow", async () => {
        await release.promise;
        return { content: [text("finally done")] };
      });
      const call = toolCall("slow", {}, "slow-1");
      const pending = start(createToolExecutor(new ToolRegistry([slow])), call);
      const early = await afterLongWait(pending);
      expect(early.status === "pending", `工具还没交回，假时钟走过 ${LONG_WAIT} 毫秒之后，执行器应当还在等，实际${shown(early)}`);
      release.resolve();
      const result = await answerOf(pending, call);
      expect(
        result.isError === false && say(result) === "finally done",
        `工具交回之后，结果应当是 "finally done"，实际是 ${show(say(result))}（isError ${result.isError}）`,
      );
    });
  });
  await rule("§C5.1：timestamp 是回答时的 Date.now()：工具运行时假时钟走过了 2^31 毫秒以上，结果（成功的、出错的）盖的是工具结束之后的时间", async () => {
    await withFakeClock(async () => {
      const took = 2 ** 31 + 7;
      const slow = bareTool("slow", async () => {
        mock.timers.tick(took);
        return { content: [text("done")] };
      });
      const broken = bareTool("broken", async () => {
        mock.timers.tick(took);
        throw new Error("late boom");
      });
      const execute = createToolExecutor(new ToolRegistry([slow, broken]));
      for (const name of ["slow", "broken"]) {
        const called = Date.now();
        const result = await answer(execute, toolCall(name, {}, `t-${name}`));
        is(result.timestamp, called + took, `${name} 的结果的 timestamp（调用时是 ${called}，工具运行时假时钟走过了 ${took} 毫秒）`);
      }
    });
  });
});

test("Lab 6.3 · 出了错也是配对的结果：未知工具、参数不合法、已经中止，工具都不运行", async () => {
  const runs = { count: 0 };
  const seen: Seen = [];
  const read = readTool(seen);
  const registry = new ToolRegistry([read, bareTool("boom", () => ({ content: [] }), runs)]);
  const execute = createToolExecutor(registry);
  await rule('§C5.2：没有这个名字的工具：配对的错误结果，文字是 unknown tool "<名字>"', async () => {
    const call = toolCall("grep", { pattern: "a" }, "u1");
    assertError(await answer(execute, call), call, /^unknown tool "grep"$/, "未知工具 grep");
    const inherited = toolCall("toString", {}, "u2");
    assertError(await answer(execute, inherited), inherited, /^unknown tool "toString"$/, "未知工具 toString");
  });
  await rule('§C5.2：名字原样：" read"、"Read" 这样的名字不是 read：unknown tool，文字里是调用给的名字（引号、反斜杠、换行也不转义），工具不运行', async () => {
    for (const name of [
      " read",
      "read ",
      "Read",
      "READ",
      "ｒｅａｄ",
      "__proto__",
      "",
      'say "hi"',
      "back\\slash",
      "line\nbreak",
      "tab\there",
      "\u0000",
      "\uD800",
      "😀",
    ]) {
      const call = toolCall(name, { path: "a.ts" }, `n-${name}`);
      const result = await answer(execute, call);
      assertPaired(result, call, `调用 ${show(name)}`);
      is(result.isError, true, `调用 ${show(name)}（注册的只有 read）的结果的 isError `);
      is(say(result), `unknown tool "${name}"`, `调用 ${show(name)} 的结果的文字`);
    }
    is(seen.length, 0, "名字不是一模一样的 read 时，工具运行的次数");
  });
  await rule('§C5.2：参数不合法：配对的错误结果，文字是 invalid arguments for "<名字>": 加上 schema 的消息（以出错的路径开头），工具不运行', async () => {
    const cases: { call: ToolCall; path: string }[] = [
      { call: toolCall("read", {}, "v1"), path: "path" },
      { call: toolCall("read", { path: 1 }, "v2"), path: "path" },
      { call: toolCall("read", { path: "a.ts", limt: 10 }, "v3"), path: "limt" },
      { call: toolCall("read", "a.ts", "v4"), path: "value" },
      { call: toolCall("read", undefined, "v5"), path: "value" },
    ];
    for (const { call, path } of cases) {
      assertError(await answer(execute, call), call, new RegExp(`^invalid arguments for "read": ${path}: `), `参数 ${show(call.arguments)}`);
    }
    is(seen.length, 0, "参数不合法时，工具运行的次数");
  });
  await rule(
    '§C5.2：signal 已经中止（原因是任何值：""、0、null、false、NaN、没给原因也是）：配对的错误结果，文字以 tool "<名字>" was not run: 开头，后面跟一句说明（不是空白，原因的文字是空白时也不是），工具不运行',
    async () => {
      for (const reason of [new Error("Ctrl-C"), ...ODD_VALUES]) {
        const controller = new AbortController();
        controller.abort(reason);
        const aborted = createToolExecutor(registry, { signal: controller.signal });
        const calls = [toolCall("read", { path: "a.ts" }, "w1"), toolCall("boom", {}, "w2")];
        const results: ToolResultMessage[] = [];
        for (const call of calls) results.push(await answer(aborted, call));
        is(seen.length + runs.count, 0, `abort(${show(reason)}) 之后，工具运行的次数`);
        for (const [i, call] of calls.entries()) {
          assertError(results[i]!, call, new RegExp(`^tool "${call.name}" was not run: [\\s\\S]*\\S`), `abort(${show(reason)}) 之后的调用 ${call.name}`);
        }
      }
    },
  );
  await rule("§C5.2：每条结果里的名字都原样写在引号中间：注册的名字里有引号、反斜杠、换行，invalid arguments、failed、was not run 里也不转义", async () => {
    const name = 'my "tool"\\\n';
    const odd: Tool = {
      name,
      description: "a tool with an odd name",
      schema: READ_SCHEMA,
      execute: async () => {
        throw new Error("boom");
      },
    };
    const oddRegistry = new ToolRegistry([odd]);
    const invalid = toolCall(name, {}, "q1");
    const refused = await answer(createToolExecutor(oddRegistry), invalid);
    assertPaired(refused, invalid, "参数不合法");
    expect(
      say(refused).startsWith(`invalid arguments for "${name}": path: `),
      `参数不合法：文字应当以 ${show(`invalid arguments for "${name}": path: `)} 开头，实际是 ${show(say(refused))}`,
    );
    const failing = toolCall(name, { path: "a.ts" }, "q2");
    const failed = await answer(createToolExecutor(oddRegistry), failing);
    assertPaired(failed, failing, "工具抛错");
    is(say(failed), `tool "${name}" failed: boom`, "工具抛错时，结果的文字");
    const controller = new AbortController();
    controller.abort(new Error("Ctrl-C"));
    const notRun = await answer(createToolExecutor(oddRegistry, { signal: controller.signal }), failing);
    expect(
      say(notRun).startsWith(`tool "${name}" was not run: `),
      `已经中止：文字应当以 ${show(`tool "${name}" was not run: `)} 开头，实际是 ${show(say(notRun))}`,
    );
  });
});

test("Lab 6.3 · 工具出错、结果复制不了：配对的错误结果，执行器从不拒绝", async () => {
  await rule(
    '§C5.3：工具同步抛错、异步拒绝、抛出不是 Error 的值（字符串、""、0、null、undefined、false、NaN 也是）：配对的错误结果，文字是 tool "<名字>" failed: 加上错误的文字（String(值)），不换成别的错误',
    async () => {
      const registry = new ToolRegistry([
        bareTool("boom", () => {
          throw new Error("sync boom");
        }),
        bareTool("reject", async () => {
          throw new Error("async boom");
        }),
        bareTool("plain", async () => {
          throw "plain";
        }),
      ]);
      const execute = createToolExecutor(registry);
      const cases: { call: ToolCall; reason: RegExp }[] = [
        { call: toolCall("boom", {}, "f1"), reason: /^tool "boom" failed: sync boom$/ },
        { call: toolCall("reject", {}, "f2"), reason: /^tool "reject" failed: async boom$/ },
        { call: toolCall("plain", {}, "f3"), reason: /^tool "plain" failed: plain$/ },
      ];
      for (const { call, reason } of cases) assertError(await answer(execute, call), call, reason, `工具 ${call.name}`);
      for (const [i, value] of [...ODD_VALUES, { code: "ENOSPC" }].entries()) {
        for (const how of ["throw", "reject"] as const) {
          const name = `${how}-${i}`;
          const thrower = bareTool(
            name,
            how === "throw"
              ? () => {
                  throw value;
                }
              : () => Promise.reject(value),
          );
          const call = toolCall(name, {}, `o-${name}`);
          const result = await answer(createToolExecutor(new ToolRegistry([thrower])), call);
          assertPaired(result, call, name);
          is(result.isError, true, `工具${how === "throw" ? "同步抛出" : "拒绝，原因是"} ${show(value)}：结果的 isError `);
          is(say(result), `tool "${name}" failed: ${wording(value)}`, `工具${how === "throw" ? "同步抛出" : "拒绝，原因是"} ${show(value)}：结果的文字`);
        }
      }
    },
  );
  await rule(
    '§C5.3：交回的不是一个输出（undefined、null、没有 content 数组的对象）：配对的错误结果，文字以 tool "<名字>" failed: 开头，后面跟一句说明',
    async () => {
      const outputs: [string, unknown][] = [
        ["nothing", undefined],
        ["null", null],
        ["empty", {}],
        ["detailsOnly", { details: { n: 1 } }],
        ["stringContent", { content: "done" }],
      ];
      const registry = new ToolRegistry(outputs.map(([name, output]) => bareTool(name, async () => output as ToolOutput)));
      const execute = createToolExecutor(registry);
      for (const [name, output] of outputs) {
        const call = toolCall(name, {}, `x-${name}`);
        assertError(await answer(execute, call), call, new RegExp(`^tool "${name}" failed: .*\\S`), `工具交回 ${show(output)}`);
      }
    },
  );
  await rule("§C5.3：执行器只检查 content 是数组，不检查里面的每一块：不是文字块的块也原样复制进结果，isError 还是 false", async () => {
    const blocks = () => [
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
      { type: "text", text: "ok", cached: true },
      { type: "text" },
      { type: "text", text: 42 },
      "raw line",
      null,
    ];
    const mixed = bareTool("mixed", () => ({ content: blocks() as unknown as ToolOutput["content"] }));
    const result = await answer(createToolExecutor(new ToolRegistry([mixed])), toolCall("mixed", {}, "mx1"));
    is(result.isError, false, `工具交回的 content 是数组（里面有不是文字块的块），结果的 isError `);
    assertSame(result.content, blocks(), "结果的 content 应当原样是工具给的每一块");
  });
  await rule("§C5.4：结果里是工具输出的深拷贝：改结果（连嵌套的 details）碰不到工具自己的对象，工具之后改自己的对象也改不了结果", async () => {
    const cachedContent = [text("cached answer")];
    const cachedDetails = { hits: 1, file: { path: "a.ts" } };
    const cached = bareTool("cached", () => ({ content: cachedContent, details: cachedDetails }));
    const execute = createToolExecutor(new ToolRegistry([cached]));
    const first = await answer(execute, toolCall("cached", {}, "c1"));
    first.content.push(text(" and more"));
    first.content[0]!.text = "changed";
    (first.details as { file: { path: string } }).file.path = "b.ts";
    assertSame(cachedContent, [text("cached answer")], "改了结果的 content 之后，工具自己的数组");
    assertSame(cachedDetails, { hits: 1, file: { path: "a.ts" } }, "改了结果的 details 之后，工具自己的 details");
    const second = await answer(execute, toolCall("cached", {}, "c2"));
    cachedContent.push(text(" changed later by the tool"));
    cachedDetails.file.path = "c.ts";
    assertSame(second.content, [text("cached answer")], "工具之后改了自己的数组，已经给出的结果的 content");
    assertSame(second.details, { hits: 1, file: { path: "a.ts" } }, "工具之后改了自己的 details，已经给出的结果的 details");
  });
  await rule('§C5.4：输出复制不了（details 里有函数）：配对的错误结果，文字以 tool "<名字>" failed: 开头', async () => {
    const opaque = bareTool("opaque", () => ({ content: [text("done")], details: { callback() {} } }));
    const call = toolCall("opaque", {}, "o1");
    assertError(await answer(createToolExecutor(new ToolRegistry([opaque])), call), call, /^tool "opaque" failed: /, "details 里有函数");
  });
  await rule("§C5.5：工具在调用时才查：执行器造好之后注册的工具找得到，移除的就找不到", async () => {
    const registry = new ToolRegistry();
    const execute = createToolExecutor(registry);
    assertError(await answer(execute, READ_CALL), READ_CALL, /^unknown tool "read"$/, "还没注册 read");
    const read = readTool();
    registry.register(read);
    const found = await answer(execute, READ_CALL);
    is(found.isError, false, "注册 read 之后，它的结果的 isError ");
    registry.unregister("read", read);
    assertError(await answer(execute, READ_CALL), READ_CALL, /^unknown tool "read"$/, "移除 read 之后");
  });
  await rule("§C5.4：原样，不设上限：一万块、十万个字符的文字，结果里一块不少、一字不改：\\r\\n、\\r、BOM、首尾空白、NFC 和 NFD、空字符串也照旧", async () => {
    const blocks = Array.from({ length: 10_000 }, (_, i) => text(`line ${i}\n`));
    blocks.push(text(`  ${"long ".repeat(20_000)}  `));
    const tricky = ["a\r\nb\r\n", "lone\rcr", "\uFEFFbom", "trailing  \t", "  leading", "e\u0301", "\u00e9", "\uD800 lone", "", "\t\u0000", "\u2028", "\r\n"];
    blocks.push(...tricky.map((line) => text(line)));
    const details = { lines: 10_001, stdout: "a\r\nb\rc\uFEFF  ", name: "e\u0301" };
    const big = bareTool("big", () => ({ content: blocks, details }));
    const result = await answer(createToolExecutor(new ToolRegistry([big])), toolCall("big", {}, "big-1"));
    is(result.content.length, blocks.length, "结果的 content 的块数");
    const changed = result.content.findIndex((block, i) => block.type !== "text" || block.text !== blocks[i]!.text);
    expect(
      changed === -1,
      `结果的第 ${changed} 块应当原样是 ${show(blocks[changed]).slice(0, 80)}（${blocks[changed]?.text.length} 个字符），实际是 ${show(result.content[changed]).slice(0, 80)}`,
    );
    assertSame(result.details, { lines: 10_001, stdout: "a\r\nb\rc\uFEFF  ", name: "e\u0301" }, "结果的 details 应当原样是工具给的");
  });
  await holds(
    "§C5.4：任何输出（任意多块、任何文字：换行、BOM、空白、NFC/NFD、孤立的代理项；不是文字块的块；任何 JSON 的 details）：结果里的 content 和 details 是它原样的深拷贝，不是工具自己的对象",
    fc.asyncProperty(
      fc.array(fc.oneof({ weight: 4, arbitrary: anyText.map((line) => text(line)) }, fc.jsonValue({ maxDepth: 2 })), { maxLength: 6 }),
      fc.option(fc.oneof(anyText, fc.jsonValue({ maxDepth: 3 })), { nil: undefined }),
      async (blocks, details) => {
        const content = blocks as ToolOutput["content"];
        const expected = structuredClone(content);
        const echo = bareTool("echo", () => (details === undefined ? { content } : { content, details }));
        const result = await answer(createToolExecutor(new ToolRegistry([echo])), toolCall("echo", {}, "e1"));
        is(result.isError, false, "结果的 isError ");
        assertSame(result.content, expected, "结果的 content 应当原样是工具给的");
        expect(result.content !== content, "结果的 content 就是工具自己的数组，不是副本");
        if (details === undefined) expect(!("details" in result), `工具没给 details，结果里却有 details 字段：${show(result)}`);
        else {
          assertSame(result.details, details, "结果的 details 应当原样是工具给的");
          if (typeof details === "object" && details !== null) expect(result.details !== details, "结果的 details 就是工具自己的对象，不是副本");
        }
      },
    ),
    { numRuns: 100 },
  );
});

/** How a property's `read` tool behaves when it runs: an output (as a promise or as it is), a failure, or no output. */
type Behaviour = "answer" | "plain" | "throw" | "reject" | "opaque" | "nothing";

test("Lab 6.3 · 任何调用：恰好一个配对的结果，工具只在参数合法时运行一次", async () => {
  await holds(
    '§C5.6：任何名字、任何参数、工具任何表现：执行器兑现一条带着这个 id 和 name 的结果；工具恰好在名字一模一样地注册过、参数合法时运行一次，拿到解析出的参数；isError 恰好在出错或工具说出错（isError 是 true）时为 true；没注册的名字，文字恰好是 unknown tool "<原样的名字>"',
    fc.asyncProperty(
      fc.string({ maxLength: 6 }),
      fc.oneof(
        { weight: 3, arbitrary: fc.constant("read") },
        fc.constantFrom("grep", "toString", "__proto__", "READ", " read", "read ", 'say "hi"', "a\\b", "line\nbreak", "\uD800"),
        fc.string({ unit: "binary", maxLength: 6 }),
      ),
      valuesFor([
        ["path", { kind: "string", optional: false }],
        ["limit", { kind: "number", optional: true }],
      ]),
      fc.constantFrom<Behaviour>("answer", "plain", "throw", "reject", "opaque", "nothing"),
      fc.oneof(fc.constant(true), fc.anything()),
      async (id, name, args, behaviour, flag) => {
        const seen: Seen = [];
        const read: Tool = {
          name: "read",
          description: "read a file",
          schema: READ_SCHEMA,
          execute: ((parameters: unknown, context: ToolContext): unknown => {
            seen.push({ parameters, context });
            switch (behaviour) {
              case "throw":
                throw new Error("boom");
              case "reject":
                return Promise.reject(new Error("boom"));
              case "opaque":
                return Promise.resolve({ content: [text("x")], details: () => {} });
              case "nothing":
                return Promise.resolve(undefined);
              case "plain":
                return { content: [text("x")], isError: flag };
              case "answer":
                return Promise.resolve({ content: [text("x")], isError: flag });
            }
          }) as Tool["execute"],
        };
        const call = toolCall(name, args, id);
        const result = await answer(createToolExecutor(new ToolRegistry([read])), call);
        assertPaired(result, call, "结果");
        const valid = name === "read" && describes(READ_SCHEMA.jsonSchema, args);
        is(seen.length, valid ? 1 : 0, valid ? "参数合法时，工具运行的次数" : "名字没注册或参数不合法时，工具运行的次数");
        if (valid) assertSame(seen[0]!.parameters, stripped(args), "工具拿到的参数");
        const fine = (behaviour === "answer" || behaviour === "plain") && flag !== true;
        is(result.isError, !valid || !fine, "结果的 isError ");
        if (name !== "read") is(say(result), `unknown tool "${name}"`, "没注册的名字，结果的文字（名字原样写在引号中间）");
      },
    ),
    { numRuns: 200 },
  );
});

// ---------------------------------------------------------------------------
// Lab 6.4 · 运行中的中止：到了的结果留下，没到的不等
// ---------------------------------------------------------------------------

test("Lab 6.4 · 有 signal：工具拿到它；中止之前到达的结果原样留下", async () => {
  await rule("§C6.1：有 signal 时，context 恰好是 { callId, signal }，signal 就是给执行器的那个", async () => {
    const seen: Seen = [];
    const controller = new AbortController();
    const result = await answer(createToolExecutor(new ToolRegistry([readTool(seen)]), { signal: controller.signal }), READ_CALL);
    is(result.isError, false, "signal 没中止时，结果的 isError ");
    is(seen.length, 1, "工具运行的次数");
    expect(seen[0]!.context.signal === controller.signal, "工具拿到的 context.signal 应当就是给执行器的那个 signal");
    assertSame(Object.keys(seen[0]!.context).sort(), ["callId", "signal"], "context 的字段");
    is(seen[0]!.context.callId, "call-1", "context.callId ");
  });
  await rule("§C6.2：工具已经给出结果，中止紧接着才到（同一轮的微任务里）：结果原样留下", async () => {
    const controller = new AbortController();
    const write = bareTool("write", async () => {
      queueMicrotask(() => controller.abort(new Error("Ctrl-C")));
      return { content: [text("wrote b.md")] };
    });
    const call = toolCall("write", {}, "call-2");
    const kept = await answer(createToolExecutor(new ToolRegistry([write]), { signal: controller.signal }), call);
    assertPaired(kept, call, "write");
    expect(
      kept.isError === false && say(kept) === "wrote b.md",
      `写完了才中止：结果应当是 "wrote b.md"（isError false），实际是 ${show(say(kept))}（isError ${kept.isError}）`,
    );
  });
  await rule("§C6.2：中止先到，结果在它之后几个微任务里到（下一轮事件循环之前）：也算到了，原样留下", async () => {
    const controller = new AbortController();
    const write = bareTool("write", async () => {
      controller.abort(new Error("Ctrl-C"));
      for (let i = 0; i < 5; i++) await null;
      return { content: [text("wrote b.md")] };
    });
    const call = toolCall("write", {}, "call-3");
    const kept = await answer(createToolExecutor(new ToolRegistry([write]), { signal: controller.signal }), call);
    assertPaired(kept, call, "write");
    expect(
      kept.isError === false && say(kept) === "wrote b.md",
      `结果在中止之后第 5 个微任务到，仍在同一轮事件循环里：应当留下 "wrote b.md"，实际是 ${show(say(kept))}（isError ${kept.isError}）`,
    );
  });
  await rule(
    '§C6.2：工具在中止之前失败：它的失败就是回答（tool "<名字>" failed: 加上错误的文字），不是“被中止”；抛出的是什么值（字符串、""、0、null、undefined）就是什么，不换成别的错误',
    async () => {
      for (const failure of [new Error("disk full"), "disk full", ...ODD_VALUES]) {
        const controller = new AbortController();
        const broken = bareTool("write", async () => {
          queueMicrotask(() => controller.abort(new Error("Ctrl-C")));
          throw failure;
        });
        const call = toolCall("write", {}, "call-4");
        const result = await answer(createToolExecutor(new ToolRegistry([broken]), { signal: controller.signal }), call);
        assertPaired(result, call, "write");
        is(say(result), `tool "write" failed: ${wording(failure)}`, `工具以 ${show(failure)} 失败之后才中止：结果的文字`);
      }
      const calm = new AbortController();
      for (const failure of ["disk full", ...ODD_VALUES]) {
        const broken = bareTool("write", () => Promise.reject(failure));
        const call = toolCall("write", {}, "call-4b");
        const result = await answer(createToolExecutor(new ToolRegistry([broken]), { signal: calm.signal }), call);
        assertPaired(result, call, "write");
        is(say(result), `tool "write" failed: ${wording(failure)}`, `有 signal、没有中止，工具以 ${show(failure)} 拒绝：结果的文字`);
      }
    },
  );
  await rule("§C6.2：execute 直接返回输出（不是 promise，比如用 JavaScript 写的扩展工具）：有 signal 时也是它的结果，和没有 signal 时一样", async () => {
    const controller = new AbortController();
    const plainTool = bareTool("plain", () => ({ content: [text("plain answer")], details: { n: 1 } }));
    const call = toolCall("plain", {}, "p2");
    const result = await answer(createToolExecutor(new ToolRegistry([plainTool]), { signal: controller.signal }), call);
    assertPaired(result, call, "plain");
    assertSame(
      { text: say(result), details: result.details, isError: result.isError },
      { text: "plain answer", details: { n: 1 }, isError: false },
      "有 signal 时，直接返回输出的工具的结果",
    );
  });
  await rule("§C6.2：执行器不给工具设时限：有 signal、没有中止，假时钟走过 2^31 毫秒以上工具还没交回，执行器就还在等；交回之后，结果是它的", async () => {
    await withFakeClock(async () => {
      const controller = new AbortController();
      const release = deferred<void>();
      const slow = bareTool("slow", async () => {
        await release.promise;
        return { content: [text("finally done")] };
      });
      const call = toolCall("slow", {}, "slow-2");
      const pending = start(createToolExecutor(new ToolRegistry([slow]), { signal: controller.signal }), call);
      const early = await afterLongWait(pending);
      expect(early.status === "pending", `没有中止，工具还没交回，假时钟走过 ${LONG_WAIT} 毫秒之后，执行器应当还在等，实际${shown(early)}`);
      release.resolve();
      const result = await answerOf(pending, call);
      expect(
        result.isError === false && say(result) === "finally done",
        `工具交回之后，结果应当是 "finally done"，实际是 ${show(say(result))}（isError ${result.isError}）`,
      );
    });
  });
});

test("Lab 6.4 · 还在运行的工具：中止后当场回答“被中止”，不等它", async () => {
  await rule('§C6.3：中止时工具还在运行：执行器不等它，回答配对的错误 tool "<名字>" was stopped: 加上中止原因的文字；它后来的结果不算', async () => {
    const controller = new AbortController();
    const release = deferred<void>();
    const started = deferred<void>();
    const stubborn = bareTool("shell", async () => {
      started.resolve();
      await release.promise;
      return { content: [text("too late")] };
    });
    const call = toolCall("shell", {}, "call-5");
    const answered = answer(createToolExecutor(new ToolRegistry([stubborn]), { signal: controller.signal }), call);
    await started.promise;
    controller.abort(new Error("Ctrl-C"));
    const stopped = await answered;
    assertError(stopped, call, /^tool "shell" was stopped: Ctrl-C$/, "运行中被中止");
    release.resolve();
    await realTurn();
    assertError(stopped, call, /^tool "shell" was stopped: Ctrl-C$/, "工具后来给出结果之后，已经给出的回答");
  });
  await rule(
    '§C6.3：原因是什么值，文字里就是它的文字：""、0、null、false、NaN 也是给了原因（String(值)）；abort() 没给原因：signal 自己的原因（This operation was aborted）',
    async () => {
      for (const reason of [...ODD_VALUES, "no reason given"]) {
        const controller = new AbortController();
        const started = deferred<void>();
        const stubborn = bareTool("shell", async () => {
          started.resolve();
          return new Promise<ToolOutput>(() => {});
        });
        const call = toolCall("shell", {}, "call-6");
        const answered = answer(createToolExecutor(new ToolRegistry([stubborn]), { signal: controller.signal }), call);
        await started.promise;
        if (reason === "no reason given") controller.abort();
        else controller.abort(reason);
        const stopped = await answered;
        assertPaired(stopped, call, "shell");
        const because = reason === undefined || reason === "no reason given" ? "This operation was aborted" : wording(reason);
        is(
          say(stopped),
          `tool "shell" was stopped: ${because}`,
          `${reason === "no reason given" ? "abort()" : `abort(${show(reason)})`} 时还在运行的 shell：结果的文字`,
        );
      }
    },
  );
  await rule("§C6.3：被放弃的工具后来失败了：不是未处理的拒绝（unhandledRejection）", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const controller = new AbortController();
      const release = deferred<void>();
      const started = deferred<void>();
      const stubborn = bareTool("shell", async () => {
        started.resolve();
        await release.promise;
        throw new Error("§C6.3：被放弃的工具后来的失败不能变成未处理的拒绝（这一行是那次失败本身）");
      });
      const call = toolCall("shell", {}, "call-7");
      const answered = answer(createToolExecutor(new ToolRegistry([stubborn]), { signal: controller.signal }), call);
      await started.promise;
      controller.abort(new Error("Ctrl-C"));
      assertError(await answered, call, /^tool "shell" was stopped: Ctrl-C$/, "运行中被中止");
      release.resolve();
      await realTurn();
      await realTurn();
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
    is(unhandled.length, 0, "未处理的拒绝的个数");
  });
  await rule(
    "§C6.3：中止发生在工具开始运行的同步部分里（execute 还没返回，signal 就中止了；原因是什么值都一样）：工具一直不交回，执行器照样当场回答 was stopped",
    async () => {
      for (const reason of [new Error("Ctrl-C"), ...ODD_VALUES]) {
        const controller = new AbortController();
        const selfStopping = bareTool("shell", () => {
          controller.abort(reason);
          return new Promise<ToolOutput>(() => {});
        });
        const call = toolCall("shell", {}, "call-8");
        const stopped = await answer(createToolExecutor(new ToolRegistry([selfStopping]), { signal: controller.signal }), call);
        assertPaired(stopped, call, "shell");
        const because = reason === undefined ? "This operation was aborted" : wording(reason);
        is(say(stopped), `tool "shell" was stopped: ${because}`, `execute 还没返回就 abort(${show(reason)})：结果的文字`);
      }
    },
  );
  await rule("§C6.3、§C6.4：同一个 signal 上同时有几个调用：已经交回的留下；中止时还在运行的，每个都得到自己的 was stopped；signal 上不留监听", async () => {
    const controller = new AbortController();
    const done = bareTool("done", async () => ({ content: [text("finished")] }));
    const stuck = (name: string) => bareTool(name, () => new Promise<ToolOutput>(() => {}));
    const execute = createToolExecutor(new ToolRegistry([done, stuck("shell"), stuck("watch")]), { signal: controller.signal });
    const calls = [toolCall("done", {}, "m1"), toolCall("shell", {}, "m2"), toolCall("watch", {}, "m3")];
    const pending = calls.map((call) => start(execute, call));
    await realTurn();
    controller.abort(new Error("Ctrl-C"));
    const [first, second, third] = [await answerOf(pending[0]!, calls[0]!), await answerOf(pending[1]!, calls[1]!), await answerOf(pending[2]!, calls[2]!)];
    assertPaired(first!, calls[0]!, "done");
    expect(first!.isError === false && say(first!) === "finished", `中止之前已经交回的 done：结果应当是 "finished"，实际是 ${show(say(first!))}`);
    assertError(second!, calls[1]!, /^tool "shell" was stopped: Ctrl-C$/, "同时运行的 shell");
    assertError(third!, calls[2]!, /^tool "watch" was stopped: Ctrl-C$/, "同时运行的 watch");
    is(getEventListeners(controller.signal, "abort").length, 0, "三个调用都回答之后，signal 上的 abort 监听个数");
  });
  await holds(
    '§C6.2、§C6.3：中止在工具的同步部分里、之后几个微任务里到，或者不来；工具在几个微任务里交回、失败或一直不交回：交回的结果、失败（抛出的任何值）原样是回答；一直不交回的是 was stopped 加上中止原因的文字（任何原因，""、0、null 也是）',
    fc.asyncProperty(
      fc.constantFrom("value" as const, "error" as const, "never" as const),
      fc.nat({ max: 8 }),
      fc.oneof(fc.constant("sync" as const), fc.nat({ max: 8 }), fc.constant("none" as const)),
      fc.oneof(
        fc.constantFrom<unknown>(new Error("Ctrl-C"), "user pressed Ctrl-C", 42, new DOMException("gone", "AbortError"), ...ODD_VALUES),
        fc.string({ maxLength: 4 }),
      ),
      fc.oneof(fc.constantFrom<unknown>(new Error("disk full"), "disk full", ...ODD_VALUES), fc.string({ maxLength: 4 })),
      async (settle, after, abortAt, reason, failure) => {
        fc.pre(settle !== "never" || abortAt !== "none");
        const controller = new AbortController();
        const fire = () => controller.abort(reason);
        const write = bareTool("write", async () => {
          if (abortAt === "sync") fire();
          else if (abortAt !== "none") {
            let wait = abortAt;
            const later = () => (wait-- === 0 ? fire() : queueMicrotask(later));
            queueMicrotask(later);
          }
          for (let i = 0; i < after; i++) await null;
          if (settle === "error") throw failure;
          if (settle === "never") return new Promise<ToolOutput>(() => {});
          return { content: [text("wrote b.md")] };
        });
        const call = toolCall("write", {}, "call-p");
        const result = await answer(createToolExecutor(new ToolRegistry([write]), { signal: controller.signal }), call);
        assertPaired(result, call, "write");
        const because = reason === undefined ? "This operation was aborted" : wording(reason);
        const wanted =
          settle === "value" ? "wrote b.md" : settle === "error" ? `tool "write" failed: ${wording(failure)}` : `tool "write" was stopped: ${because}`;
        expect(
          say(result) === wanted && result.isError === (settle !== "value"),
          `工具${settle === "value" ? "交回了结果" : settle === "error" ? "失败了" : "一直不交回"}：回答应当是 ${show(wanted)}（isError ${settle !== "value"}），实际是 ${show(say(result))}（isError ${result.isError}）`,
        );
      },
    ),
    { numRuns: 100 },
  );
});

test("Lab 6.4 · 长寿的 signal：每个调用结束后，上面不留执行器的监听", async () => {
  await rule("§C6.4：同一个 signal 上执行多次（成功、失败、工具报告出错）：每次回答之后，signal 上的 abort 监听都是 0 个", async () => {
    const controller = new AbortController();
    const registry = new ToolRegistry([
      readTool(),
      bareTool("boom", async () => {
        throw new Error("boom");
      }),
      bareTool("check", async () => ({ content: [text("2 tests failed")], isError: true })),
    ]);
    const execute = createToolExecutor(registry, { signal: controller.signal });
    for (const call of [READ_CALL, toolCall("boom", {}, "b1"), toolCall("check", {}, "k1"), READ_CALL]) {
      await answer(execute, call);
      is(getEventListeners(controller.signal, "abort").length, 0, `${call.name} 回答之后，signal 上的 abort 监听个数`);
    }
  });
  await rule("§C6.4：中止之后，signal 上也不留监听", async () => {
    const controller = new AbortController();
    const started = deferred<void>();
    const stubborn = bareTool("shell", async () => {
      started.resolve();
      return new Promise<ToolOutput>(() => {});
    });
    const answered = answer(createToolExecutor(new ToolRegistry([stubborn]), { signal: controller.signal }), toolCall("shell", {}, "s1"));
    await started.promise;
    controller.abort(new Error("Ctrl-C"));
    await answered;
    is(getEventListeners(controller.signal, "abort").length, 0, "中止之后，signal 上的 abort 监听个数");
  });
});
