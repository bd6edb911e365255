/**
 * The manifest format's description, rendered from its schema (`manifest-schema.ts`): an
 * example manifest as YAML, each field it writes commented with the schema's description of
 * that field, `optional;` first where the schema lets the field out. `docs/chapter-home.md`
 * shows the rendering between its `manifest-format` markers, and a test keeps the two equal,
 * so the docs describe exactly the fields the schema knows.
 *
 * Rendering fails unless the example is valid against the schema and writes every field the
 * schema knows (inside a fault only its outline: the fault format is the fault tooling's,
 * `faults.ts`). Only the docs and their test use this module.
 */
import { stringify } from "yaml";
import { displayWidth, padEnd } from "../core/term.js";
import { manifestSchema } from "./manifest-schema.js";

/** The example manifest the docs show: a chapter of two teaching files with every field written. */
export const MANIFEST_EXAMPLE = {
  format: 1,
  id: "12",
  title: "资源与扩展",
  files: [
    "packages/pi-course/src/resources.ts",
    "packages/pi-course/src/runtime.ts",
    "packages/pi-course/test/12-resources-extensions.test.ts",
    "packages/pi-course/src/resource-files.ts",
    "packages/pi-course/test/challenge/12-catalog.test.ts",
    "packages/pi-course/test/fixtures/12-workspace.ts",
  ],
  starters: [
    { from: "resources.ts", to: "packages/pi-course/src/resources.ts" },
    { scaffold: "runtime.scaffold.ts", to: "packages/pi-course/src/runtime.ts" },
  ],
  focusedTests: ["packages/pi-course/test/12-resources-extensions.test.ts"],
  provided: ["packages/pi-course/src/resource-files.ts"],
  text: "README.md",
  solutions: [{ file: "solutions/a-functional.ts", replaces: "packages/pi-course/src/resources.ts" }],
  challenge: {
    text: "challenge.md",
    tests: [{ file: "packages/pi-course/test/challenge/12-catalog.test.ts", title: "目录与宽松发现" }],
    support: ["packages/pi-course/test/fixtures/12-workspace.ts"],
  },
  labs: [
    {
      id: "12.1",
      title: "roots 顺序决定 catalog winner",
      tests: 2,
      scaffoldError: "Lab 12.1 resource catalog 尚未实现",
      declarations: ["discoverResources"],
      sections: ["11", "3"],
      challenge: ["packages/pi-course/test/challenge/12-catalog.test.ts"],
      hints: ["定位文件…", "指出签名…", "伪代码…", "局部代码…"],
      faults: [],
    },
  ],
  faults: [],
};

/** A schema as far as the rendering reads it (zod's `def`, which says what a schema is and wraps). */
interface SchemaNode {
  def: {
    type: string;
    shape?: Record<string, SchemaNode>;
    element?: SchemaNode;
    innerType?: SchemaNode;
    in?: SchemaNode;
    options?: SchemaNode[];
    catchall?: SchemaNode;
  };
  description?: string;
}

/** A field's schema without its wrappers (optional, default, nullable, a transform's pipe): what it holds, its description, whether it may be left out. */
function unwrap(schema: SchemaNode): { node: SchemaNode; description: string | undefined; optional: boolean } {
  let node = schema;
  let description = schema.description;
  let optional = false;
  for (;;) {
    const { type, innerType, in: input } = node.def;
    if ((type === "optional" || type === "default" || type === "nullable") && innerType) {
      optional ||= type !== "nullable";
      node = innerType;
    } else if (type === "pipe" && input) node = input;
    else break;
    description ??= node.description;
  }
  return { node, description, optional };
}

/** The mapping schemas an array's entries (or a field) may be: a union's mapping options, a fault's outline excepted. */
function mappings(schema: SchemaNode): SchemaNode[] {
  const { node } = unwrap(schema);
  if (node.def.type === "union") return (node.def.options ?? []).flatMap(mappings);
  return node.def.type === "object" ? [node] : [];
}

/** A mapping whose unknown fields are let through: a fault, whose fields are the fault tooling's. */
const isOutline = (node: SchemaNode): boolean => node.def.catchall?.def.type === "unknown";

/** Every field the schema knows, as paths: `title`, `starters[].to`, `challenge.tests[].file`, … (inside a fault only its outline). */
export function manifestFields(): string[] {
  const fields: string[] = [];
  const walk = (object: SchemaNode, prefix: string): void => {
    for (const [key, schema] of Object.entries(object.def.shape ?? {})) {
      fields.push(`${prefix}${key}`);
      const { node } = unwrap(schema);
      const inner =
        node.def.type === "array" && node.def.element
          ? { schemas: mappings(node.def.element), prefix: `${prefix}${key}[].` }
          : { schemas: mappings(node), prefix: `${prefix}${key}.` };
      for (const mapping of inner.schemas) if (!isOutline(mapping)) walk(mapping, inner.prefix);
    }
  };
  walk(manifestSchema().manifest as unknown as SchemaNode, "");
  return [...new Set(fields)];
}

interface Line {
  text: string;
  comment?: string;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const scalar = (value: unknown): string => stringify(value).trimEnd();
/** A list written on one line: scalars only, short enough. */
const flow = (value: unknown[]): string | undefined => {
  const text = `[${value.map(scalar).join(", ")}]`;
  return value.every((item) => !isRecord(item) && !Array.isArray(item)) && text.length <= 48 ? text : undefined;
};

/** The lines of mapping `value` (schema `object`), its keys at `indent`; `seen` collects the field paths written. */
function renderMapping(value: Record<string, unknown>, object: SchemaNode, indent: string, prefix: string, seen: Set<string>): Line[] {
  const lines: Line[] = [];
  for (const [key, entry] of Object.entries(value)) {
    const schema = object.def.shape?.[key];
    if (schema === undefined) throw new Error(`the manifest example's ${prefix}${key} is no field of the schema`);
    seen.add(`${prefix}${key}`);
    const { node, description, optional } = unwrap(schema);
    const comment = description === undefined ? undefined : optional ? `optional; ${description}` : description;
    const head = `${indent}${key}:`;
    if (Array.isArray(entry)) {
      const inline = flow(entry);
      if (inline !== undefined) {
        lines.push({ text: `${head} ${inline}`, comment });
        continue;
      }
      lines.push({ text: head, comment });
      for (const item of entry) {
        if (!isRecord(item)) {
          lines.push({ text: `${indent}  - ${scalar(item)}` });
          continue;
        }
        const keys = Object.keys(item);
        const mapping = mappings(node.def.element ?? node).find((m) => keys.every((k) => m.def.shape?.[k] !== undefined));
        if (mapping === undefined) throw new Error(`the manifest example's ${prefix}${key} holds an entry the schema does not describe`);
        const [first, ...rest] = renderMapping(item, mapping, `${indent}    `, `${prefix}${key}[].`, seen);
        if (first) lines.push({ ...first, text: `${indent}  - ${first.text.trimStart()}` }, ...rest);
      }
    } else if (isRecord(entry)) {
      const [mapping] = mappings(node);
      if (mapping === undefined) throw new Error(`the manifest example's ${prefix}${key} is a mapping the schema does not describe`);
      lines.push({ text: head, comment }, ...renderMapping(entry, mapping, `${indent}  `, `${prefix}${key}.`, seen));
    } else {
      lines.push({ text: `${head} ${scalar(entry)}`, comment });
    }
  }
  return lines;
}

/** Where the comments start, and how wide a line may get before a comment wraps. */
const COMMENT_COLUMN = 32;
const WIDTH = 100;

/** `text` in lines of at most `width` columns, broken between words. */
function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  let current = "";
  for (const word of text.split(" ")) {
    if (current !== "" && displayWidth(`${current} ${word}`) > width) {
      out.push(current);
      current = word;
    } else current = current === "" ? word : `${current} ${word}`;
  }
  return [...out, current];
}

/**
 * `line` with its comment: at the comment column, wrapped onto lines of their own there; a
 * line too long for that has its comment on the lines above it, at its indentation.
 */
function withComment({ text, comment }: Line): string[] {
  if (comment === undefined) return [text];
  if (displayWidth(text) <= COMMENT_COLUMN - 2) {
    return wrap(comment, WIDTH - COMMENT_COLUMN - 2).map((part, i) => `${padEnd(i === 0 ? text : "", COMMENT_COLUMN)}# ${part}`);
  }
  const indent = /^ */.exec(text)?.[0] ?? "";
  return [...wrap(comment, WIDTH - indent.length - 2).map((part) => `${indent}# ${part}`), text];
}

/**
 * The format's description: `MANIFEST_EXAMPLE` as YAML, each field commented from the schema.
 * Throws when the example is not a valid manifest document or leaves a field of the schema out.
 */
export function renderManifestFormat(): string {
  const { manifest } = manifestSchema();
  manifest.parse(MANIFEST_EXAMPLE);
  const seen = new Set<string>();
  const lines = renderMapping(MANIFEST_EXAMPLE, unwrap(manifest as unknown as SchemaNode).node, "", "", seen);
  const missing = manifestFields().filter((field) => !seen.has(field));
  if (missing.length > 0) throw new Error(`the manifest example leaves out ${missing.join(", ")}`);
  return lines.flatMap(withComment).join("\n");
}
