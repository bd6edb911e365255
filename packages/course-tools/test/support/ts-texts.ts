/**
 * A starter and its reference, as texts: a small teaching file of two labs (the 🔨 markers,
 * a helper only the starter has, given code, a type), for the syntax-tree tests.
 */

/** The starter: every lab's function throws its scaffold error. */
export const STARTER = `import path from "node:path";

/** Shared type. */
export interface Thing {
  name: string;
}

function labError(lab: string): Error {
  return new Error(\`\${lab} 尚未实现\`);
}

// ---------------------------------------------------------------------------
// Lab 1.1 · catalog
// ---------------------------------------------------------------------------

/** Lists things. */
export function list(names: readonly string[]): Thing[] {
  // 🔨 Lab 1.1：sort by code unit
  throw labError("Lab 1.1 list");
}

// ---------------------------------------------------------------------------
// Lab 1.2 · render
// ---------------------------------------------------------------------------

/** Renders things. */
export function render(things: readonly Thing[]): string {
  // 🔨 Lab 1.2：join names
  throw labError("Lab 1.2 render");
}

export class Box {
  open(): string {
    // 🔨 Lab 1.2：open the box
    throw labError("Lab 1.2 render");
  }
}
`;

/** The reference: the same surface, the labs done. */
export const REFERENCE = `import path from "node:path";

/** Shared type. */
export interface Thing {
  name: string;
}

const SEPARATOR = " | ";

/** Lists things. */
export function list(names: readonly string[]): Thing[] {
  return [...names].sort().map((name) => ({ name: path.basename(name) }));
}

function joinNames(things: readonly Thing[]): string {
  return things.map((thing) => thing.name).join(SEPARATOR);
}

/** Renders things. */
export function render(things: readonly Thing[]): string {
  return joinNames(things);
}

export class Box {
  open(): string {
    return "open";
  }
}
`;
