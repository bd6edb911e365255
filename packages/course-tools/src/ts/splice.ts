/**
 * Moving a lab's code between versions of a teaching file, declaration by declaration.
 *
 * A starter marks the work of each lab inside the declarations that hold it
 * (`// 🔨 Lab 12.3：…`), so the marks say which top-level declaration belongs to which
 * lab. Two operations stand on that:
 * - `reset NN.L` puts a lab's starter declarations back into the learner's file;
 * - `verify`'s staged first red builds, for each lab k, the reference with the
 *   declarations of labs k and later taken from the starter.
 * Both are the same splice: replace named top-level declarations of one text with those of
 * another (doc comments and marker blocks travel with their declaration), adding the ones
 * the text lacks. Nothing else of the text changes, byte for byte.
 */
import { CourseError } from "../core/errors.js";
import { parseModules, SyntaxKind, topLevelDeclarations, walk, type TopLevelDeclaration } from "./source.js";

/** `🔨 Lab 12.3` (the marker the starters use), capturing the lab id. */
const LAB_MARKER = /🔨\s*Lab\s+(\d+\.\d+)(?!\d)/g;

/** Declarations that share a name and follow each other (overload signatures and their body) form one unit. */
export interface Unit {
  name: string;
  kind: TopLevelDeclaration["kind"];
  start: number;
  /** Where the first declaration's own code starts (after its attached comments). */
  codeStart: number;
  end: number;
  text: string;
  /** The declarations of the unit (more than one for overloads), in order. */
  nodes: TopLevelDeclaration["node"][];
  /** Every identifier the code of the unit uses (comments aside): what it may depend on. */
  uses: Set<string>;
}

function identifiersOf(declaration: TopLevelDeclaration, into: Set<string>): Set<string> {
  walk(declaration.node, (node) => {
    if (node.kind === SyntaxKind.Identifier) into.add((node as { text?: string }).text ?? "");
  });
  return into;
}

/** The units of a module's top-level declarations, in order (see `Unit`). */
export function unitsOf(declarations: readonly TopLevelDeclaration[], text: string): Unit[] {
  const units: Unit[] = [];
  for (const declaration of declarations) {
    const last = units.at(-1);
    if (last !== undefined && declaration.name !== "" && last.name === declaration.name && last.kind === declaration.kind) {
      last.end = declaration.end;
      last.text = text.slice(last.start, last.end);
      last.nodes.push(declaration.node);
      identifiersOf(declaration, last.uses);
      continue;
    }
    units.push({
      name: declaration.name,
      kind: declaration.kind,
      start: declaration.start,
      codeStart: declaration.codeStart,
      end: declaration.end,
      text: declaration.text,
      nodes: [declaration.node],
      uses: identifiersOf(declaration, new Set()),
    });
  }
  return units;
}

/**
 * What a declaration declares, for matching one text's declarations with another's: its
 * name in the value space (a function, a `const`, a class or an enum: a learner may write
 * `export const render = (…) => …` where the starter has `export function render`) or in the
 * type space (an interface, a type alias); other statements by kind.
 */
export const declarationKey = (unit: Pick<Unit, "name" | "kind">): string => {
  const space =
    unit.kind === "function" || unit.kind === "variable" || unit.kind === "class" || unit.kind === "enum"
      ? "value"
      : unit.kind === "interface" || unit.kind === "type"
        ? "type"
        : unit.kind;
  return `${space}:${unit.name}`;
};

/**
 * Which lab each marked top-level declaration of `starterText` belongs to: the lab its
 * `🔨 Lab N.M` markers name (inside it or in the comments attached to it). Declarations
 * without a marker belong to no lab (shared types and given helpers). A declaration whose
 * markers name two labs is `LAB_OWNERSHIP_AMBIGUOUS`; a marker naming a lab outside
 * `labIds` is `LAB_OWNERSHIP_UNKNOWN` (both name the declaration).
 */
export function labOwnership(starterText: string, labIds: readonly string[], fileName = "starter.ts"): Map<string, string> {
  return ownersOf(unitsOf(topLevelDeclarations(parseModules({ [fileName]: starterText }).get(fileName)!), starterText), labIds, fileName);
}

function ownersOf(units: readonly Unit[], labIds: readonly string[], fileName: string): Map<string, string> {
  const owners = new Map<string, string>();
  for (const unit of units) {
    const labs = new Set([...unit.text.matchAll(LAB_MARKER)].map((match) => match[1]!));
    if (labs.size === 0 || unit.name === "") continue;
    const unknown = [...labs].filter((lab) => !labIds.includes(lab));
    if (unknown.length > 0) {
      throw new CourseError("LAB_OWNERSHIP_UNKNOWN", `${fileName}: ${unit.name} 的 🔨 标记写的是 Lab ${unknown.join("、")}，本章没有这个 Lab`);
    }
    if (labs.size > 1) {
      throw new CourseError(
        "LAB_OWNERSHIP_AMBIGUOUS",
        `${fileName}: ${unit.name} 同时带有 Lab ${[...labs].join("、")} 的 🔨 标记；每个顶层声明只能属于一个 Lab，请把它拆开`,
      );
    }
    owners.set(declarationKey(unit), [...labs][0]!);
  }
  return owners;
}

/** What `spliceDeclarations` did, for messages and tests. */
export interface SpliceResult {
  text: string;
  /** Names of the declarations replaced in place. */
  replaced: string[];
  /** Names of the declarations the base lacked, inserted. */
  inserted: string[];
}

/**
 * Returns `baseText` with each top-level declaration of `donorText` that `take` selects
 * put in: a declaration of the same name and kind is replaced where it stands (its attached
 * comments with it); one the base lacks is inserted after the nearest declaration that
 * precedes it in the donor and exists in the base (else before the base's first
 * non-import statement). Everything else of the base is kept byte for byte. Both texts
 * must parse (`TS_SYNTAX` otherwise).
 */
export function spliceDeclarations(
  baseText: string,
  donorText: string,
  take: (declaration: { name: string; kind: TopLevelDeclaration["kind"] }) => boolean,
  names: { base?: string; donor?: string } = {},
): SpliceResult {
  const baseName = names.base ?? "base.ts";
  const donorName = names.donor ?? "donor.ts";
  const trees = parseModules({ [baseName]: baseText, [donorName]: donorText });
  const base = unitsOf(topLevelDeclarations(trees.get(baseName)!), baseText);
  const donor = unitsOf(topLevelDeclarations(trees.get(donorName)!), donorText);
  return splice(baseText, base, donor, take);
}

function splice(baseText: string, base: readonly Unit[], donor: readonly Unit[], take: (declaration: Pick<Unit, "name" | "kind">) => boolean): SpliceResult {
  const baseByKey = new Map(base.filter((unit) => unit.name !== "").map((unit) => [declarationKey(unit), unit]));

  // Edits as (position range, replacement), applied from the end so offsets stay valid.
  const edits: { start: number; end: number; text: string; order: number }[] = [];
  const replaced: string[] = [];
  const inserted: string[] = [];
  const firstCode = base.find((unit) => unit.kind !== "import");
  let anchor: number | undefined; // where the previous donor unit sits in the base
  donor.forEach((unit, order) => {
    const own = unit.name === "" ? undefined : baseByKey.get(declarationKey(unit));
    if (unit.name !== "" && take(unit)) {
      if (own !== undefined) {
        edits.push({ start: own.start, end: own.end, text: unit.text, order });
        replaced.push(unit.name);
      } else {
        const at = anchor ?? firstCode?.start ?? baseText.length;
        const text = anchor === undefined ? `${unit.text}\n\n` : `\n\n${unit.text}`;
        edits.push({ start: at, end: at, text, order });
        inserted.push(unit.name);
      }
    }
    if (own !== undefined) anchor = own.end;
  });
  // Insertions at one point keep donor order; a replacement never shares its start with another edit.
  edits.sort((a, b) => b.start - a.start || b.order - a.order);
  let text = baseText;
  for (const edit of edits) text = text.slice(0, edit.start) + edit.text + text.slice(edit.end);
  return { text, replaced, inserted };
}

/**
 * `baseText` with the top-level declarations that `starterText` marks for `labs` put back
 * from the starter (matched by name: a learner's `const f = …` is the starter's `function f`),
 * and with the starter's unmarked declarations that the base lacks and those use (the
 * helpers they call, such as `labError`): what `reset NN.L` does to a learner's file and
 * what `verify`'s staged first red does to the reference. Everything else of the base stays
 * byte for byte. Both texts are parsed once, together. Throws what `labOwnership` throws,
 * and `TS_SYNTAX` naming the text that does not parse.
 */
export function spliceLabs(
  baseText: string,
  starterText: string,
  labs: ReadonlySet<string>,
  labIds: readonly string[],
  names: { base: string; starter: string },
): SpliceResult {
  const trees = parseModules({ [names.base]: baseText, [names.starter]: starterText });
  const base = unitsOf(topLevelDeclarations(trees.get(names.base)!), baseText);
  const starter = unitsOf(topLevelDeclarations(trees.get(names.starter)!), starterText);
  const owners = ownersOf(starter, labIds, names.starter);
  const inBase = new Set(base.map(declarationKey));
  // The labs' declarations, then every unmarked starter declaration the base lacks that they
  // use, directly or through another one taken (a helper such as `labError`, a type).
  const taken = new Set(starter.filter((unit) => labs.has(owners.get(declarationKey(unit)) ?? "")).map(declarationKey));
  for (let grew = true; grew; ) {
    grew = false;
    const used = new Set(starter.filter((unit) => taken.has(declarationKey(unit))).flatMap((unit) => [...unit.uses]));
    for (const unit of starter) {
      const key = declarationKey(unit);
      if (taken.has(key) || owners.has(key) || inBase.has(key) || unit.name === "" || !used.has(unit.name)) continue;
      taken.add(key);
      grew = true;
    }
  }
  return splice(baseText, base, starter, (declaration) => taken.has(declarationKey(declaration)));
}

/** One declaration of a lab's work in a text, for showing it. */
export interface LabDeclaration {
  name: string;
  kind: TopLevelDeclaration["kind"];
  /** Its text, attached comments included. */
  text: string;
  /** 1-based line and column where its text starts (its attached comments included). */
  line: number;
  column: number;
  /** 1-based line and column where its own code starts (after those comments): where it is. */
  codeLine: number;
  codeColumn: number;
  /** 1-based line where its text ends. */
  endLine: number;
  /** True when the starter marks it for the lab; false for a helper of the text's own that those use. */
  marked: boolean;
}

/**
 * The declarations of `text` that make up lab `lab`'s work, in `text`'s order: those the
 * starter marks for the lab (matched by name, as `spliceLabs` matches them), and the
 * declarations `text` has that the starter lacks and that those use, directly or through one
 * another (the helpers written for the lab). What `lab --compare` shows of the learner's file
 * and of the reference alike. Throws what `labOwnership` throws, and `TS_SYNTAX` naming the
 * text that does not parse.
 */
export function labDeclarations(
  text: string,
  starterText: string,
  lab: string,
  labIds: readonly string[],
  names: { text: string; starter: string },
): LabDeclaration[] {
  const trees = parseModules({ [names.text]: text, [names.starter]: starterText });
  const own = unitsOf(topLevelDeclarations(trees.get(names.text)!), text).filter(
    (unit) => unit.name !== "" && unit.kind !== "import" && unit.kind !== "export",
  );
  const starter = unitsOf(topLevelDeclarations(trees.get(names.starter)!), starterText);
  const owners = ownersOf(starter, labIds, names.starter);
  const inStarter = new Set(starter.filter((unit) => unit.name !== "").map(declarationKey));
  const marked = new Set(own.filter((unit) => owners.get(declarationKey(unit)) === lab).map(declarationKey));
  const taken = new Set(marked);
  for (let grew = true; grew; ) {
    grew = false;
    const used = new Set(own.filter((unit) => taken.has(declarationKey(unit))).flatMap((unit) => [...unit.uses]));
    for (const unit of own) {
      const key = declarationKey(unit);
      if (taken.has(key) || inStarter.has(key) || !used.has(unit.name)) continue;
      taken.add(key);
      grew = true;
    }
  }
  const position = (offset: number): { line: number; column: number } => {
    const before = text.slice(0, offset);
    const lineStart = before.lastIndexOf("\n") + 1;
    return { line: before.split("\n").length, column: offset - lineStart + 1 };
  };
  return own
    .filter((unit) => taken.has(declarationKey(unit)))
    .map((unit) => {
      const code = position(unit.codeStart);
      return {
        name: unit.name,
        kind: unit.kind,
        text: unit.text,
        ...position(unit.start),
        codeLine: code.line,
        codeColumn: code.column,
        endLine: position(unit.end).line,
        marked: marked.has(declarationKey(unit)),
      };
    });
}
