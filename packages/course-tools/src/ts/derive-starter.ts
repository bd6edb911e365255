/**
 * A starter derived from its reference and the chapter's scaffold, so that no line of the
 * reference is ever copied into a starter by hand.
 *
 * The scaffold (`chapters/NN-<slug>/<module>.scaffold.ts` in the chapter's home, named as a `starters:` entry's
 * `scaffold`) holds only what the learner sees instead of the reference, never a line of it:
 * - its first comment group, when a blank line follows it: the starter's module header, in
 *   place of the reference's (the block comment the reference opens with);
 * - a construction site for every lab declaration (the manifest's `labs[].declarations`):
 *   the declaration written with its name only (`function runToyAgent() { … }`,
 *   `const ruleModel = () => { … }`, a class with its methods as `add() { … }`): its body
 *   replaces the reference's body, the signature and doc comment stay the reference's. A site
 *   has no parameters and no types of its own; comments right above it replace the
 *   reference's doc comment. A lab class names every member with a body (a property
 *   without initializer keeps the reference's; comments above it still replace its doc);
 *   a lab interface or type alias, a `const` whose value is no function, is replaced whole;
 * - what the starter adds, each under a line `// scaffold: after <name>` or
 *   `// scaffold: before <name>` naming a top-level declaration of the reference: a
 *   declaration (`labError`) or a group of comments (the 🔨 note that stands where a lab's
 *   helpers were). `after` puts it after the declaration, `before` above its doc comment
 *   (below the section banner), separated by one blank line; several at one place keep the
 *   scaffold's order;
 * - `// scaffold: given <name>, …` (a comment group of its own): reference declarations the
 *   starter keeps although only lab code uses them (helpers the text says are given);
 * - `// scaffold: imports`, right above a run of import declarations (comments may follow
 *   the directive line): they, with those comments, replace every import of the reference,
 *   for a starter that must not import what only the lab's code uses (the reference's
 *   private helpers) or that names the tools a learner will reach for.
 *
 * The starter is the reference with the header replaced, every site's body replaced, the
 * additions placed, and then every top-level declaration left out that is not exported,
 * not given, not a site or an addition, and not used (directly or through one another) by
 * any declaration kept: the reference's helpers that only lab code uses. A declaration left
 * out takes its doc comment along; section banners (comments a blank line above it) stay.
 * Without `// scaffold: imports`, imports stay as the reference has them. Pure: same texts,
 * same starter.
 */
import { CourseError } from "../core/errors.js";
import {
  FUNCTION_KINDS,
  SyntaxKind,
  leadingComments,
  lineAndColumn,
  parseModules,
  topLevelDeclarations,
  type Comment,
  type Node,
  type SourceFile,
} from "./source.js";
import { declarationKey, unitsOf, type Unit } from "./splice.js";

/** A lab as `deriveStarter` needs it: its id and the top-level declarations it writes. */
export interface ScaffoldLab {
  id: string;
  declarations: readonly string[];
}

/** `// scaffold: <verb> <names>`. */
const DIRECTIVE = /^\/\/\s*scaffold:\s*(\S*)\s*(.*?)\s*$/;

type Verb = "after" | "before" | "given" | "imports";

interface Directive {
  verb: Verb;
  names: string[];
}

/** Comments with no blank line between them; `attached` when no blank line separates the group from the code below it. */
interface Group {
  comments: Comment[];
  start: number;
  end: number;
  attached: boolean;
}

/** A declaration or comment group the starter adds, and where. */
interface Addition {
  where: "after" | "before";
  anchor: string;
  text: string;
  /** Where `text` starts in the scaffold. */
  from: number;
  /** Its key when it is a named declaration (it must not be the reference's too). */
  key?: string;
  line: number;
}

/** The scaffold's run of imports under `// scaffold: imports`: `[from, end)` of its text. */
interface Imports {
  from: number;
  end: number;
  line: number;
}

/** A construction site: the scaffold's statement for a lab declaration. */
interface Site {
  key: string;
  name: string;
  node: Node;
  /** The scaffold's comments right above it (replacing the reference's doc comment), or none. */
  comments?: { start: number; end: number };
  line: number;
}

/** A text edit of the reference: `[start, end)` becomes `text`; at one offset, lower `order` first. */
interface Edit {
  start: number;
  end: number;
  text: string;
  order: number;
  /** Where `text` stands in the scaffold, when it is a piece of it (not a separator). */
  from?: number;
}

/** Where each piece of an edited text comes from: the text edited (`base`) or an edit. */
interface Segment {
  outStart: number;
  source: "base" | Edit;
  start: number;
}

/** A derived starter with the origin of each of its lines. */
export interface DerivedStarter {
  text: string;
  /**
   * Where the code on 1-based line `line` of `text` comes from: the scaffold or the
   * reference, and its line there (the line of the first non-blank character, if any).
   */
  origin(line: number): { in: "scaffold" | "reference"; line: number };
}

type AnyNode = Node & {
  name?: Node & { text?: string };
  body?: Node;
  parameters?: readonly Node[];
  type?: Node;
  typeParameters?: readonly Node[];
  members?: readonly Node[];
  initializer?: Node;
  declarationList?: { declarations: readonly AnyNode[] };
};

/** The three ways a scaffold is refused (see `deriveStarter`). */
const missing = (message: string): never => {
  throw new CourseError("SCAFFOLD_SITE_MISSING", message);
};
const extra = (message: string): never => {
  throw new CourseError("SCAFFOLD_SITE_EXTRA", message);
};
const invalid = (message: string): never => {
  throw new CourseError("SCAFFOLD_INVALID", message);
};

function directiveOf(comment: Comment, where: string): Directive | undefined {
  if (comment.kind !== "line") return undefined;
  const match = DIRECTIVE.exec(comment.text);
  if (match === null) return undefined;
  const verb = match[1]!;
  const names = match[2]!.split(/[\s,]+/).filter((name) => name !== "");
  if (verb !== "after" && verb !== "before" && verb !== "given" && verb !== "imports") {
    return invalid(`${where}: 不认识的 scaffold 指令「${comment.text}」（只有 after、before、given、imports）`);
  }
  if (verb === "imports") {
    if (names.length > 0) return invalid(`${where}: 「${comment.text}」后面不写名字：它下面的 import 换掉参考实现的全部 import`);
    return { verb, names };
  }
  if (names.length === 0 || (verb !== "given" && names.length !== 1)) {
    return invalid(`${where}: 「${comment.text}」${verb === "given" ? "要列出至少一个声明的名字" : "要恰好写一个声明的名字"}`);
  }
  return { verb, names };
}

/** The comments before `codeStart` (found from `pos`) in groups, the last one `attached` when it touches the code. */
function groupsBefore(text: string, pos: number, codeStart: number | undefined): Group[] {
  const groups: Group[] = [];
  for (const comment of leadingComments(text, pos)) {
    const last = groups.at(-1);
    if (last !== undefined && !/\n[ \t]*\r?\n/.test(text.slice(last.end, comment.pos))) {
      last.comments.push(comment);
      last.end = comment.end;
    } else {
      groups.push({ comments: [comment], start: comment.pos, end: comment.end, attached: false });
    }
  }
  const last = groups.at(-1);
  if (last !== undefined && codeStart !== undefined) last.attached = !/\n[ \t]*\r?\n/.test(text.slice(last.end, codeStart));
  return groups;
}

/** The name a class member is matched by: `get size`, `set size`, `constructor`, `#listeners`, `add`. */
function memberKey(member: AnyNode): string {
  if (member.kind === SyntaxKind.Constructor) return "constructor";
  const name = member.name?.text ?? "";
  if (member.kind === SyntaxKind.GetAccessor) return `get ${name}`;
  if (member.kind === SyntaxKind.SetAccessor) return `set ${name}`;
  return name;
}

/** The function whose body a statement or member holds: itself, or the function a one-declaration `const` is initialized with. */
function functionOf(node: AnyNode): AnyNode | undefined {
  if (FUNCTION_KINDS.has(node.kind)) return node.body === undefined ? undefined : node;
  const declarations = node.declarationList?.declarations;
  const initializer = declarations?.length === 1 ? (declarations[0]!.initializer as AnyNode | undefined) : undefined;
  return initializer !== undefined && FUNCTION_KINDS.has(initializer.kind) && initializer.body !== undefined ? initializer : undefined;
}

/** Where the comments attached to `node` (no blank line between) start, and where its code starts. */
function attachedRange(tree: SourceFile, node: Node): { start: number; codeStart: number } {
  const codeStart = node.getStart(tree);
  const last = groupsBefore(tree.text, node.pos, codeStart).at(-1);
  return { start: last?.attached === true ? last.start : codeStart, codeStart };
}

/**
 * The starter of `reference` by `scaffold` (see the module comment) for a chapter whose labs
 * are `labs`. Errors, each naming the scaffold's line: `SCAFFOLD_SITE_MISSING` for a lab
 * declaration (or a lab class's member with a body) without a construction site;
 * `SCAFFOLD_SITE_EXTRA` for a site no lab names, or a name (site, anchor, given) the
 * reference lacks; `SCAFFOLD_INVALID` for anything else the format does not allow (a site
 * with a signature, an import, a comment that goes nowhere, an unknown directive, an addition
 * the reference already declares, a site of another kind than its declaration). `TS_SYNTAX`
 * when a text does not parse.
 */
export function deriveStarter(
  reference: string,
  scaffold: string,
  labs: readonly ScaffoldLab[],
  names: { reference: string; scaffold: string } = { reference: "reference.ts", scaffold: "scaffold.ts" },
): string {
  return deriveStarterWithOrigins(reference, scaffold, labs, names).text;
}

/** `deriveStarter`, and where each line of the starter comes from (for messages that name the line to fix). */
export function deriveStarterWithOrigins(
  reference: string,
  scaffold: string,
  labs: readonly ScaffoldLab[],
  names: { reference: string; scaffold: string } = { reference: "reference.ts", scaffold: "scaffold.ts" },
): DerivedStarter {
  const trees = parseModules({ [names.reference]: reference, [names.scaffold]: scaffold });
  const referenceTree = trees.get(names.reference)!;
  const scaffoldTree = trees.get(names.scaffold)!;
  const at = (offset: number) => `${names.scaffold}:${lineAndColumn(scaffoldTree, offset).line}`;
  const referenceUnits = unitsOf(topLevelDeclarations(referenceTree), reference);
  const byKey = new Map(referenceUnits.filter((unit) => unit.name !== "").map((unit) => [declarationKey(unit), unit]));
  const byName = (name: string): Unit | undefined => referenceUnits.find((unit) => unit.name === name && unit.kind !== "import");
  const labOf = new Map(labs.flatMap((lab) => lab.declarations.map((name) => [name, lab.id] as const)));

  const { header, sites, additions, given, imports } = readScaffold(scaffold, scaffoldTree, at);

  // Every name the scaffold uses is the reference's, every lab declaration has its site.
  for (const site of sites) {
    if (!labOf.has(site.name)) {
      extra(
        `${names.scaffold}:${site.line}: ${site.name} 不是哪个 Lab 的声明（清单的 labs[].declarations 里没有它）；starter 新加的声明要写在 // scaffold: after <名字> 下面`,
      );
    }
    if (!byKey.has(site.key)) extra(`${names.scaffold}:${site.line}: 参考实现 ${names.reference} 里没有 ${site.name}`);
  }
  for (const [name, lab] of labOf) {
    if (!sites.some((site) => site.name === name)) {
      missing(`${names.scaffold}: Lab ${lab} 的声明 ${name} 没有施工位：写上 function ${name}() { … }（只写函数体）`);
    }
  }
  for (const addition of additions) {
    if (byName(addition.anchor) === undefined) {
      extra(`${names.scaffold}:${addition.line}: // scaffold: ${addition.where} ${addition.anchor} 指向的声明参考实现里没有`);
    }
    if (addition.key !== undefined && byKey.has(addition.key)) {
      invalid(`${names.scaffold}:${addition.line}: 参考实现已经有 ${addition.key.split(":")[1]}，starter 不能再加一个同名声明`);
    }
  }
  for (const { name, line } of given) {
    if (byName(name) === undefined) extra(`${names.scaffold}:${line}: // scaffold: given 写的 ${name} 参考实现里没有`);
    if (labOf.has(name)) invalid(`${names.scaffold}:${line}: ${name} 是 Lab ${labOf.get(name)} 的声明，不能同时是给出的代码`);
  }

  const edits: Edit[] = [];
  if (header !== undefined) {
    const first = leadingComments(reference, 0)[0];
    const opens = first !== undefined && first.kind === "block" && reference.slice(0, first.pos).trim() === "";
    const { text, from } = header;
    if (opens) edits.push({ start: first.pos, end: first.end, text, from, order: 0 });
    else edits.push({ start: 0, end: 0, text, from, order: 0 }, { start: 0, end: 0, text: "\n", order: 1 });
  }
  additions.forEach((addition, index) => {
    const anchor = byName(addition.anchor)!;
    const at = addition.where === "after" ? anchor.end : anchor.start;
    const piece = { start: at, end: at, text: addition.text, from: addition.from };
    const blank = { start: at, end: at, text: "\n\n" };
    // Two orders per addition: several at one place keep the scaffold's order.
    if (addition.where === "after") edits.push({ ...blank, order: 2 + 2 * index }, { ...piece, order: 3 + 2 * index });
    else edits.push({ ...piece, order: 2 + 2 * index }, { ...blank, order: 3 + 2 * index });
  });
  if (imports !== undefined) edits.push(importEdit(imports, referenceUnits, scaffold, `${names.scaffold}:${imports.line}`));
  for (const site of sites) edits.push(...siteEdits(site, byKey.get(site.key)!, referenceTree, scaffoldTree, names.scaffold));
  const built = applyEdits(reference, edits);
  const final = leaveOut(built.text, {
    kept: new Set([...sites.map((site) => site.key), ...additions.flatMap((addition) => (addition.key === undefined ? [] : [addition.key]))]),
    given: new Set(given.map((entry) => entry.name)),
    name: names.reference,
  });

  const startsOf = (text: string) => [0, ...[...text.matchAll(/\n/g)].map((match) => match.index + 1)];
  const finalLines = startsOf(final.text);
  const lineIn = (starts: readonly number[], offset: number) => starts.findLastIndex((start) => start <= offset) + 1;
  const referenceLines = startsOf(reference);
  const scaffoldLines = startsOf(scaffold);
  return {
    text: final.text,
    origin(line) {
      const index = Math.min(Math.max(line, 1), finalLines.length) - 1;
      const start = finalLines[index]!;
      const blank = final.text.slice(start, finalLines[index + 1] ?? final.text.length).search(/\S/);
      const offset = blank < 0 ? start : start + blank;
      // Leaving out only removes text: every offset of the result lies in the built text.
      const place = built.source(final.source(offset).offset);
      if (place.edit?.from !== undefined) return { in: "scaffold", line: lineIn(scaffoldLines, place.edit.from + place.offset) };
      return { in: "reference", line: lineIn(referenceLines, place.edit === undefined ? place.offset : place.edit.start) };
    },
  };
}

/** The scaffold read into its parts (see the module comment), checked for form. */
function readScaffold(
  text: string,
  tree: SourceFile,
  at: (offset: number) => string,
): { header?: { text: string; from: number }; sites: Site[]; additions: Addition[]; given: { name: string; line: number }[]; imports?: Imports } {
  const sites: Site[] = [];
  let imports: Imports | undefined;
  /** True while the statements read so far end in the run of imports under `// scaffold: imports`. */
  let inImports = false;
  const additions: Addition[] = [];
  const given: { name: string; line: number }[] = [];
  let header: { text: string; from: number } | undefined;
  const lineOf = (offset: number) => lineAndColumn(tree, offset).line;
  const statements = [...tree.statements];
  const declarations = topLevelDeclarations(tree);
  const positions = [
    ...statements.map((statement) => ({ pos: statement.pos, statement: statement as Node | undefined })),
    { pos: statements.at(-1)?.end ?? 0, statement: undefined },
  ];

  positions.forEach(({ pos, statement }, index) => {
    const codeStart = statement?.getStart(tree);
    const groups = groupsBefore(text, pos, codeStart);
    groups.forEach((group, groupIndex) => {
      const directives = group.comments.map((comment) => directiveOf(comment, at(comment.pos)));
      const isHeader =
        index === 0 && groupIndex === 0 && !group.attached && text.slice(0, group.start).trim() === "" && directives.every((d) => d === undefined);
      if (isHeader) {
        header = { text: text.slice(group.start, group.end), from: group.start };
        return;
      }
      const [first, ...rest] = directives;
      if (directives.every((d) => d?.verb === "given")) {
        for (const [i, directive] of directives.entries()) for (const name of directive!.names) given.push({ name, line: lineOf(group.comments[i]!.pos) });
        return;
      }
      if (rest.some((d) => d !== undefined) || (first?.verb === "given" && rest.length > 0)) {
        invalid(`${at(group.start)}: 一组注释里只能有一条 scaffold 指令，写在第一行（given 单独成组）`);
      }
      if (group.attached) return; // the statement's own: read with it below
      if (first?.verb === "imports") invalid(`${at(group.start)}: // scaffold: imports 要紧贴在第一条 import 上面（中间没有空行）`);
      if (first === undefined) {
        invalid(`${at(group.start)}: 这段注释不知道放在哪里：在它上面写 // scaffold: before <名字> 或 // scaffold: after <名字>`);
      }
      if (group.comments.length === 1) invalid(`${at(group.start)}: 这条 scaffold 指令下面没有要放进 starter 的注释或声明`);
      additions.push({
        where: first!.verb as "after" | "before",
        anchor: first!.names[0]!,
        text: text.slice(group.comments[1]!.pos, group.end),
        from: group.comments[1]!.pos,
        line: lineOf(group.start),
      });
    });
    if (statement === undefined) return;
    const last = groups.at(-1);
    const lastDirective = last === undefined ? undefined : directiveOf(last.comments[0]!, at(last.start));
    // A group of `given` lines right above a statement is no comment of it.
    const attached = last?.attached === true && lastDirective?.verb !== "given" ? last : undefined;
    const placement = attached === undefined ? undefined : lastDirective;
    const declaration = declarations[index]!;
    const line = lineOf(codeStart!);
    if (declaration.kind === "import") {
      if (placement?.verb === "imports" && imports === undefined) {
        const from = attached!.comments[1]?.pos ?? codeStart!;
        imports = { from, end: statement.end, line: lineOf(attached!.start) };
        inImports = true;
        return;
      }
      if (inImports && attached === undefined) {
        imports!.end = statement.end;
        return;
      }
      invalid(
        `${at(codeStart!)}: scaffold 里的 import 要连成一段，写在 // scaffold: imports 下面（只能有一段）；没有这条指令时，starter 的 import 就是参考实现的`,
      );
    }
    inImports = false;
    if (placement?.verb === "imports") invalid(`${at(attached!.start)}: // scaffold: imports 下面要紧跟 import 声明`);
    if (placement !== undefined) {
      const from = attached!.comments[1]?.pos ?? codeStart!;
      additions.push({
        where: placement.verb as "after" | "before",
        anchor: placement.names[0]!,
        text: text.slice(from, statement.end),
        from,
        ...(declaration.name === "" ? {} : { key: declarationKey(declaration) }),
        line: lineOf(attached!.start),
      });
      return;
    }
    if (declaration.name === "") {
      invalid(`${at(codeStart!)}: 这条语句不是哪个声明的施工位；要加进 starter，在它上面写 // scaffold: after <名字>`);
    }
    sites.push({
      key: declarationKey(declaration),
      name: declaration.name,
      node: statement,
      ...(attached === undefined ? {} : { comments: { start: attached.start, end: codeStart! } }),
      line,
    });
  });
  return { ...(header === undefined ? {} : { header }), sites, additions, given, ...(imports === undefined ? {} : { imports }) };
}

/** The edit putting the scaffold's imports in place of the reference's, which must stand together. */
function importEdit(imports: Imports, referenceUnits: readonly Unit[], scaffold: string, where: string): Edit {
  const first = referenceUnits.findIndex((unit) => unit.kind === "import");
  const last = referenceUnits.findLastIndex((unit) => unit.kind === "import");
  if (first < 0) return invalid(`${where}: 参考实现没有 import，// scaffold: imports 换不掉什么`);
  if (referenceUnits.slice(first, last + 1).some((unit) => unit.kind !== "import")) {
    return invalid(`${where}: 参考实现的 import 没有连成一段，// scaffold: imports 不知道换掉哪些`);
  }
  return {
    start: referenceUnits[first]!.codeStart,
    end: referenceUnits[last]!.end,
    text: scaffold.slice(imports.from, imports.end),
    from: imports.from,
    order: 0,
  };
}

/** The edits one construction site makes to its reference declaration. */
function siteEdits(site: Site, unit: Unit, referenceTree: SourceFile, scaffoldTree: SourceFile, scaffoldName: string): Edit[] {
  const scaffold = scaffoldTree.text;
  const where = `${scaffoldName}:${site.line}`;
  const edits: Edit[] = [];
  /** The reference's `[start, end)` becomes the scaffold's `[from, to)`. */
  const replace = (start: number, end: number, from: number, to: number, order = 0) => edits.push({ start, end, text: scaffold.slice(from, to), from, order });
  const comments = (referenceRange: { start: number; codeStart: number }, scaffoldRange: { start: number; end: number } | undefined) => {
    if (scaffoldRange !== undefined) replace(referenceRange.start, referenceRange.codeStart, scaffoldRange.start, scaffoldRange.end);
  };
  comments({ start: unit.start, codeStart: unit.codeStart }, site.comments);

  const own = site.node as AnyNode;
  const target = unit.nodes.at(-1) as AnyNode;
  const body = (referenceFunction: AnyNode, scaffoldFunction: AnyNode, label: string) => {
    if ((scaffoldFunction.parameters?.length ?? 0) > 0 || scaffoldFunction.type !== undefined || (scaffoldFunction.typeParameters?.length ?? 0) > 0) {
      invalid(`${where}: 施工位 ${label} 只写函数体：参数、类型参数和返回类型都来自参考实现，这里写成 ${label.replace(/^get |^set /, "")}() { … }`);
    }
    if (scaffoldFunction.body!.kind !== SyntaxKind.Block) invalid(`${where}: 施工位 ${label} 的函数体要写成 { … }`);
    const from = referenceFunction.body!;
    replace(from.getStart(referenceTree), from.end, scaffoldFunction.body!.getStart(scaffoldTree), scaffoldFunction.body!.end);
  };
  const mismatch = (): never => invalid(`${where}: 施工位 ${site.name} 和参考实现里的 ${site.name} 不是同一种声明（函数、类、类型或值）`);

  if (target.kind === SyntaxKind.ClassDeclaration) {
    if (own.kind !== SyntaxKind.ClassDeclaration) return mismatch();
    const members = new Map((target.members ?? []).map((member) => [memberKey(member as AnyNode), member as AnyNode]));
    const named = new Set<string>();
    for (const member of (own.members ?? []) as AnyNode[]) {
      const key = memberKey(member);
      const theirs = members.get(key);
      if (theirs === undefined)
        extra(`${scaffoldName}:${lineAndColumn(scaffoldTree, member.getStart(scaffoldTree)).line}: 参考实现的 ${site.name} 没有成员 ${key}`);
      named.add(key);
      const ownComments = attachedRange(scaffoldTree, member);
      comments(
        attachedRange(referenceTree, theirs!),
        ownComments.start === ownComments.codeStart ? undefined : { start: ownComments.start, end: ownComments.codeStart },
      );
      if (FUNCTION_KINDS.has(member.kind) && member.body !== undefined) {
        if (!FUNCTION_KINDS.has(theirs!.kind) || theirs!.body === undefined) return mismatch();
        body(theirs!, member, `${site.name}.${key}`);
      } else if (member.kind === SyntaxKind.PropertyDeclaration && theirs!.kind === SyntaxKind.PropertyDeclaration) {
        if (member.initializer !== undefined && theirs!.initializer !== undefined) {
          replace(theirs!.initializer.getStart(referenceTree), theirs!.initializer.end, member.initializer.getStart(scaffoldTree), member.initializer.end);
        }
      } else {
        return mismatch();
      }
    }
    for (const [key, member] of members) {
      if (FUNCTION_KINDS.has(member.kind) && member.body !== undefined && !named.has(key)) {
        missing(`${where}: ${site.name} 是 Lab 的声明，它的成员 ${key} 也要有施工位（参考实现的函数体不能留在 starter 里）`);
      }
    }
    return edits;
  }
  if (target.kind === SyntaxKind.InterfaceDeclaration || target.kind === SyntaxKind.TypeAliasDeclaration) {
    if (own.kind !== target.kind) return mismatch();
    replace(unit.codeStart, unit.end, own.getStart(scaffoldTree), own.end, 1);
    return edits;
  }
  const theirs = functionOf(target);
  const mine = functionOf(own);
  if (theirs !== undefined) {
    if (mine === undefined) return mismatch();
    body(theirs, mine, site.name);
    return edits;
  }
  const initializer = target.declarationList?.declarations.length === 1 ? target.declarationList.declarations[0]!.initializer : undefined;
  const replacement = own.declarationList?.declarations.length === 1 ? own.declarationList.declarations[0]!.initializer : undefined;
  if (initializer === undefined || replacement === undefined) return mismatch();
  replace(initializer.getStart(referenceTree), initializer.end, replacement.getStart(scaffoldTree), replacement.end);
  return edits;
}

/**
 * `text` with `edits` applied (edits never overlap; those at one offset go in `order`, an
 * insertion there before a replacement starting there: a `before` addition goes above the
 * doc comment a site replaces), and `source(offset)`: where an offset of the result lies, in
 * `text` (`edit` undefined) or in an edit's text.
 */
function applyEdits(text: string, edits: readonly Edit[]): { text: string; source(offset: number): { edit?: Edit; offset: number } } {
  const replaces = (edit: Edit) => (edit.end > edit.start ? 1 : 0);
  const sorted = [...edits].sort((a, b) => a.start - b.start || replaces(a) - replaces(b) || a.order - b.order);
  let out = "";
  let cursor = 0;
  const segments: Segment[] = [];
  for (const edit of sorted) {
    if (edit.start < cursor) throw new Error(`overlapping edits at offset ${edit.start}`);
    segments.push({ outStart: out.length, source: "base", start: cursor });
    out += text.slice(cursor, edit.start);
    segments.push({ outStart: out.length, source: edit, start: 0 });
    out += edit.text;
    cursor = edit.end;
  }
  segments.push({ outStart: out.length, source: "base", start: cursor });
  out += text.slice(cursor);
  return {
    text: out,
    source(offset) {
      const segment =
        segments.findLast((candidate) => candidate.outStart <= offset && (candidate.source === "base" || candidate.source.text !== "")) ?? segments[0]!;
      const within = offset - segment.outStart;
      return segment.source === "base" ? { offset: segment.start + within } : { edit: segment.source, offset: within };
    },
  };
}

/**
 * `text` without the top-level declarations nothing kept uses (see the module comment):
 * kept are imports and other statements, exported declarations, the `kept` keys and the
 * `given` names, and every declaration a kept one uses, directly or through others.
 */
function leaveOut(text: string, options: { kept: ReadonlySet<string>; given: ReadonlySet<string>; name: string }): ReturnType<typeof applyEdits> {
  const tree = parseModules({ [`${options.name} (starter)`]: text }).get(`${options.name} (starter)`)!;
  const units = unitsOf(topLevelDeclarations(tree), text);
  const exported = new Set(
    topLevelDeclarations(tree)
      .filter((declaration) => declaration.exported)
      .map((declaration) => declaration.name),
  );
  const root = (unit: Unit) =>
    unit.name === "" ||
    unit.kind === "import" ||
    unit.kind === "export" ||
    unit.kind === "other" ||
    exported.has(unit.name) ||
    options.kept.has(declarationKey(unit)) ||
    options.given.has(unit.name);
  const kept = new Set(units.filter(root));
  for (let grew = true; grew; ) {
    grew = false;
    const used = new Set([...kept].flatMap((unit) => [...unit.uses]));
    for (const unit of units) {
      if (kept.has(unit) || !used.has(unit.name)) continue;
      kept.add(unit);
      grew = true;
    }
  }
  const edits: Edit[] = [];
  for (const unit of units.filter((candidate) => !kept.has(candidate))) {
    const after = text.slice(unit.end).search(/\S/);
    if (after >= 0) {
      edits.push({ start: unit.start, end: unit.end + after, text: "", order: 0 });
    } else {
      const before = text.slice(0, unit.start).trimEnd().length;
      edits.push({ start: before, end: unit.end, text: "", order: 0 });
    }
  }
  return applyEdits(text, edits);
}
