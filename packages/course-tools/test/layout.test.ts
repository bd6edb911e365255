// test-process: shared
/**
 * The layout `docs/layout.md` states for `packages/course-tools/src/`, checked on the sources'
 * imports (static, type-only and on-demand ones alike): no module imports itself back through
 * any chain; `core/` imports only itself; the shared families import only the families below
 * them; a command's family never imports another command's; no family imports a command.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import test from "node:test";
import { courseRoot, TOOLS_PACKAGE } from "../src/core/paths.js";

const SOURCES = path.join(courseRoot, ...TOOLS_PACKAGE.split("/"), "src");

/** The families (the folders of `src/`) and what each may import besides itself, lowest first. */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  core: [],
  ts: ["core"],
  course: ["core", "ts"],
  testing: ["core", "ts", "course"],
  practice: ["core", "ts", "course", "testing"],
  // The commands' own families: each imports shared families only, never another command's.
  lab: ["core", "ts", "course", "testing", "practice"],
  fault: ["core", "ts", "course", "testing", "practice"],
  reset: ["core", "ts", "course", "testing", "practice"],
  verify: ["core", "ts", "course", "testing", "practice"],
  mcp: ["core", "ts", "course", "testing", "practice"],
};

/** Every module of the tooling (not its tests), by path relative to `src/`, with the relative modules it imports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(full);
        continue;
      }
      if (!/\.(ts|mjs)$/.test(entry.name)) continue;
      const text = readFileSync(full, "utf8");
      const targets: string[] = [];
      for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+)["'](\.{1,2}\/[^"']+)["']/gm)) {
        const resolved = path.resolve(path.dirname(full), match[1]!).replace(/\.js$/, ".ts");
        targets.push(path.relative(SOURCES, resolved).split(path.sep).join("/"));
      }
      graph.set(path.relative(SOURCES, full).split(path.sep).join("/"), targets);
    }
  };
  walk(SOURCES);
  return graph;
}

/** The family of a module (`<family>/…`), or undefined for a top-level command module. */
function familyOf(module: string): string | undefined {
  const parts = module.split("/");
  return parts.length > 1 ? parts[0] : undefined;
}

/** Every cycle through which a module imports itself back, as module chains. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (module: string): void => {
    state.set(module, "open");
    stack.push(module);
    for (const next of graph.get(module) ?? []) {
      if (state.get(next) === "open") found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (state.get(next) === undefined && graph.has(next)) visit(next);
    }
    stack.pop();
    state.set(module, "done");
  };
  for (const module of graph.keys()) if (state.get(module) === undefined) visit(module);
  return found;
}

test("every module the tooling imports exists (the graph below is complete)", () => {
  const graph = importGraph();
  const missing = [...graph].flatMap(([module, targets]) => targets.filter((t) => !graph.has(t)).map((t) => `${module} → ${t}`));
  assert.deepEqual(missing, []);
});

test("no module imports itself back, directly or through others", () => {
  assert.deepEqual(
    cycles(importGraph()).map((chain) => chain.join(" → ")),
    [],
  );
});

test("each family imports only the families below it; no command's family imports another's; no family imports a command", () => {
  const problems: string[] = [];
  for (const [module, targets] of importGraph()) {
    const from = familyOf(module);
    for (const target of targets) {
      const to = familyOf(target);
      if (from === undefined) continue; // a command module or the table: it may use any family
      if (to === undefined) problems.push(`${module} → ${target}: a family imports a command`);
      else if (to !== from && !(ALLOWED[from] ?? []).includes(to)) problems.push(`${module} → ${target}: ${from}/ may not import ${to}/`);
    }
    if (from !== undefined && !(from in ALLOWED)) problems.push(`${module}: family ${from}/ is not in the layout`);
  }
  assert.deepEqual(problems, []);
});

test("the checks see what they should: a cycle and a family's import are found", () => {
  const graph = new Map([
    ["lab/a.ts", ["fault/b.ts"]],
    ["fault/b.ts", ["lab/a.ts"]],
  ]);
  assert.deepEqual(cycles(graph), [["lab/a.ts", "fault/b.ts", "lab/a.ts"]]);
  assert.equal(familyOf("lab/a.ts"), "lab");
  assert.equal(familyOf("cli.ts"), undefined);
  assert.ok(!ALLOWED.lab!.includes("fault") && !ALLOWED.fault!.includes("lab") && !ALLOWED.verify!.includes("fault"));
});
