/**
 * Chapter 12 · values that cross the extension boundary, handled so that no hostile value
 * can break the host. Provided with the chapter, complete: the labs do not ask for it, and
 * the reference (`resources.ts`) uses it where the challenge tier asks for more than the
 * labs do.
 *
 * - Describing anything for a message (`describeValue`, `reasonOf`) without running its code
 *   or letting it throw: a hostile error or decision may have throwing getters or proxy traps.
 * - Copies for hooks (`copyData`, `deepFreeze`, `hookViews`): calls and results may hold any
 *   structured-clonable value (a `Buffer`, a `Map`, a `Date`), and every hook gets a copy
 *   that nothing it does can carry to core, to the caller or to another hook.
 * - A call that cannot be copied at all gets a paired error result (`uncopyableCall`).
 * - A tool's name, read once at registration, stays the name the registry sees (`fixName`),
 *   and a commit registers all staged tools or none (`registerPinned`).
 */
import { inspect, types } from "node:util";
import { ResourceError } from "./resource-types.js";
import type { Tool, ToolRegistry } from "./tool.js";
import { text, toolResult, type ToolResultMessage } from "./types.js";

/**
 * Any value, described for a message without letting it run code or throw: no custom
 * inspectors, no getters, proxies shown as proxies, and a bounded length.
 */
export function describeValue(value: unknown): string {
  try {
    const shown = inspect(value, {
      depth: 2,
      customInspect: false,
      getters: false,
      showProxy: true,
      maxArrayLength: 10,
      maxStringLength: 200,
      breakLength: Infinity,
    });
    return shown.length > 300 ? `${shown.slice(0, 300)}…` : shown;
  } catch {
    return "(a value that cannot be described)";
  }
}

/** What went wrong, from anything thrown; never throws itself (a hostile error may try). */
export function reasonOf(thrown: unknown): string {
  try {
    if (thrown instanceof Error && typeof thrown.message === "string") return thrown.message;
    if (typeof thrown === "string") return thrown;
  } catch {
    // a getter or a proxy trap threw: describe the value instead
  }
  return describeValue(thrown);
}

/** True for a promise or any other object with a callable `then`. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}

/**
 * Where a tool's `name` comes from, found without running any of the tool's code: the
 * first own property descriptor along its prototype chain, or `"proxy"` when a proxy is
 * in the way (asking it would run its traps).
 */
function nameDescriptor(tool: object): PropertyDescriptor | "proxy" | undefined {
  for (let target: object | null = tool; target !== null; target = Object.getPrototypeOf(target)) {
    if (types.isProxy(target)) return "proxy";
    const descriptor = Object.getOwnPropertyDescriptor(target, "name");
    if (descriptor !== undefined) return descriptor;
  }
  return undefined;
}

/**
 * Makes sure the registry will read exactly `staged.name` from the tool: true when the
 * name already is a plain data property with that value; otherwise, with `pin` set, an
 * own read-only data property is defined (a getter that changes its answer, or a name
 * reassigned after registration, cannot make the registry see another name). False when
 * that is impossible (a proxy, a frozen object, a non-configurable getter).
 */
export function fixName(staged: { tool: object; name: string }, pin: boolean): boolean {
  const { tool, name } = staged;
  const found = nameDescriptor(tool);
  if (found === "proxy") return false;
  if (found !== undefined && "value" in found && found.value === name) return true;
  const own = Object.getOwnPropertyDescriptor(tool, "name");
  const pinnable = own === undefined ? Object.isExtensible(tool) : own.configurable === true;
  if (pinnable && pin) Object.defineProperty(tool, "name", { value: name, enumerable: true, writable: false, configurable: false });
  return pinnable;
}

/**
 * Registers staged tools into `registry` all or nothing, each under the name read when it
 * was staged (`fixName` pins it first). `EXTENSION_INVALID`, with nothing registered, when a
 * name cannot be pinned (a proxy, a frozen getter). With every name a fixed data property
 * the registry lacks (the caller has checked for conflicts), the course's `register` has
 * nothing left to refuse; a registry that refuses anyway (a subclass with rules of its own)
 * gets back exactly what it had before the refusal is rethrown.
 */
export function registerPinned(registry: ToolRegistry, tools: readonly { tool: Tool; name: string }[], extensionId: string): void {
  const unfixable = tools.find((entry) => !fixName(entry, false));
  if (unfixable !== undefined) {
    const message = `extension "${extensionId}": tool "${unfixable.name}" cannot keep the name it was registered with (a proxy, or a frozen getter)`;
    throw new ResourceError("EXTENSION_INVALID", message);
  }
  for (const entry of tools) fixName(entry, true);
  const registered: Tool[] = [];
  try {
    for (const { tool } of tools) {
      registry.register(tool);
      registered.push(tool);
    }
  } catch (refusal) {
    for (const tool of registered.reverse()) registry.unregister(tool.name, tool);
    throw refusal;
  }
}

/** A copy of hook data, and whether `deepFreeze` can lock all of it. */
export interface DataCopy<T> {
  copy: T;
  lockable: boolean;
}

// The intrinsic typed-array constructors by name, and the intrinsic getter of that name:
// asking it runs no code of the array's owner (a subclass may override the public one).
const TYPED_ARRAYS = {
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
} as const;
const typedArrayName = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype) as object, Symbol.toStringTag)!.get as (
  this: ArrayBufferView,
) => string | undefined;

/**
 * A copy of just a typed array's own elements in a buffer of its own; a `Buffer` stays a
 * `Buffer`. `undefined` for a subclass, which `structuredClone` then copies as its base type.
 */
function copyTypedArray(view: ArrayBufferView, prototype: unknown): ArrayBufferView | undefined {
  if (prototype === Buffer.prototype) {
    const bytes = Buffer.alloc(view.byteLength); // never from the shared pool
    bytes.set(view as Buffer);
    return bytes;
  }
  const name = typedArrayName.call(view);
  const intrinsic = name !== undefined && Object.hasOwn(TYPED_ARRAYS, name) ? TYPED_ARRAYS[name as keyof typeof TYPED_ARRAYS] : undefined;
  return intrinsic !== undefined && prototype === intrinsic.prototype ? new (intrinsic as new (source: ArrayBufferView) => ArrayBufferView)(view) : undefined;
}

/**
 * A deep copy of structured-clonable data that shares nothing with the original, with
 * cycles and shared references kept. Plain objects and arrays are copied here, running
 * no code but getters (as `structuredClone` would); a `Buffer` stays a `Buffer` and every
 * typed array copies only its own bytes (`structuredClone` would turn a Buffer into a
 * Uint8Array holding Node's whole shared 8 KiB pool); `Map`, `Set` and `Date` are copied
 * here too, anything else by `structuredClone`. Functions, symbols, proxies and whatever
 * `structuredClone` refuses throw. `lockable` is false as soon as the copy holds
 * something `Object.freeze` cannot lock (bytes, Map/Set contents, a Date's time, …).
 */
export function copyData<T>(value: T): DataCopy<T> {
  const copies = new Map<object, unknown>();
  let lockable = true;
  const copy = (item: unknown): unknown => {
    if (typeof item === "function" || typeof item === "symbol") throw new TypeError(`a ${typeof item} cannot be copied`);
    if (typeof item !== "object" || item === null) return item;
    if (copies.has(item)) return copies.get(item);
    if (types.isProxy(item)) throw new TypeError("a proxy cannot be copied");
    const prototype: unknown = Object.getPrototypeOf(item);
    if (Array.isArray(item) && prototype === Array.prototype) {
      const out: unknown[] = new Array(item.length);
      copies.set(item, out);
      for (let index = 0; index < item.length; index++) if (Object.hasOwn(item, index)) out[index] = copy(item[index]);
      return out;
    }
    if (prototype === Object.prototype || prototype === null) {
      const out: Record<string, unknown> = prototype === null ? Object.create(null) : {};
      copies.set(item, out);
      for (const key of Object.keys(item)) {
        const entry = copy((item as Record<string, unknown>)[key]);
        if (key === "__proto__") Object.defineProperty(out, key, { value: entry, enumerable: true, writable: true, configurable: true });
        else out[key] = entry;
      }
      return out;
    }
    lockable = false;
    let out: unknown;
    if (types.isMap(item) && prototype === Map.prototype) {
      const map = new Map<unknown, unknown>();
      copies.set(item, map);
      for (const [key, entry] of Map.prototype.entries.call(item)) map.set(copy(key), copy(entry));
      return map;
    } else if (types.isSet(item) && prototype === Set.prototype) {
      const set = new Set<unknown>();
      copies.set(item, set);
      for (const entry of Set.prototype.values.call(item)) set.add(copy(entry));
      return set;
    } else if (types.isTypedArray(item)) {
      out = copyTypedArray(item, prototype) ?? structuredClone(item);
    } else if (types.isDate(item) && prototype === Date.prototype) {
      out = new Date(Date.prototype.getTime.call(item));
    } else {
      out = structuredClone(item);
    }
    copies.set(item, out);
    return out;
  };
  return { copy: copy(value) as T, lockable };
}

/**
 * Freezes `target` and everything reachable from it that freezing can lock (bytes cannot
 * be frozen, and a Map's entries or a Date's time stay changeable: such copies are never
 * shared). Freezing happens before recursing, so a cycle ends.
 */
export function deepFreeze<T>(target: T): T {
  if (typeof target !== "object" || target === null || Object.isFrozen(target)) return target;
  if (ArrayBuffer.isView(target) || types.isAnyArrayBuffer(target)) return target;
  Object.freeze(target);
  if (target instanceof Map) {
    for (const [key, entry] of target) {
      deepFreeze(key);
      deepFreeze(entry);
    }
  } else if (target instanceof Set) {
    for (const entry of target) deepFreeze(entry);
  }
  for (const key of Reflect.ownKeys(target)) deepFreeze((target as Record<PropertyKey, unknown>)[key]);
  return target;
}

/**
 * What the hooks of one phase are handed of the wrapper's private copy `data`: when
 * freezing locks all of it, one deep-frozen copy that every hook shares (none can change
 * it, so sharing isolates them as well as a copy each, for one copy instead of many);
 * otherwise a fresh deep-frozen copy per hook, so that what one hook does to its Map or
 * bytes reaches no one else.
 */
export function hookViews<T>(data: DataCopy<T>): () => T {
  if (!data.lockable) return () => deepFreeze(copyData(data.copy).copy);
  const shared = deepFreeze(copyData(data.copy).copy);
  return () => shared;
}

/**
 * The answer to a call that cannot be copied (a function, a proxy, a throwing getter…):
 * an error result paired with it as far as its id and name can be read, given before any
 * hook or core runs.
 */
export function uncopyableCall(call: unknown, caught: unknown): ToolResultMessage {
  const field = (key: "id" | "name"): string => {
    try {
      const value: unknown = (call as Record<string, unknown>)[key];
      return typeof value === "string" ? value : "";
    } catch {
      return "";
    }
  };
  const [toolCallId, toolName] = [field("id"), field("name")];
  const reason = reasonOf(caught);
  const content = [text(`tool call "${toolName}" was not run: it cannot be copied (${reason})`)];
  return toolResult({ id: toolCallId, name: toolName }, { content, details: { kind: "uncopyable", reason }, isError: true });
}
