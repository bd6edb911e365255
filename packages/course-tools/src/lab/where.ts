/**
 * `lab NN.L --where`: every part of one lab, each as `path:line:col`, read from the lab's
 * address in the chapter manifest (`course/lab-address.ts`): the address itself, the
 * declarations it names (and the helpers of the teaching file's own they use) in the
 * teaching file and in the starter, its sections of the chapter text, its tests, its four
 * hints, its faults (where the home's catalog `solutions/mistakes.yaml` writes them, and, in the
 * course repository, where each one edits the reference) and its challenge themes.
 *
 * In the course repository the teaching file is the reference and the starter is
 * the chapter's home (for a derived starter: its parts are shown in the scaffold, where the
 * construction sites are written); in a practice folder the teaching file is the learner's and the starter is
 * the folder's pristine copy (`.pi-course/starter/…`), and the manifest holds only the
 * exercise's faults. A teaching file that does not parse (the learner is halfway through an
 * edit) shows no declarations, and says so.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseDocument } from "yaml";
import { isCourseError } from "../core/errors.js";
import { isPracticeFolder, starterCopyPath } from "../core/paths.js";
import { displayWidth, padEnd, type Paint } from "../core/term.js";
import { locateFault } from "../course/fault-anchor.js";
import { topLevelTests } from "../course/lab-address.js";
import { testBelongsToLab } from "../course/lab-names.js";
import type { ChapterManifest, FaultSpec, LabSpec } from "../course/manifest.js";
import { chapterSections } from "../course/sections.js";
import { starterOf } from "../course/starters.js";
import { labDeclarations } from "../ts/splice.js";
import { formatLocation, positionIn, type SourceLocation } from "./locate.js";

/** The kinds of part, in the order `--where` lists them. */
export const PART_KINDS = ["address", "declaration", "helper", "starter", "section", "test", "hint", "fault", "challenge"] as const;
export type PartKind = (typeof PART_KINDS)[number];

/** One part of a lab and where it is (course-relative). */
export interface LabPart extends SourceLocation {
  kind: PartKind;
  /** What it is: a declaration's name, a section's heading, a test's name, a fault's id. */
  label: string;
}

function readIfPresent(root: string, file: string): string | undefined {
  const full = path.join(root, ...file.split("/"));
  return existsSync(full) ? readFileSync(full, "utf8") : undefined;
}

/** The lab's entry, hints and faults in the manifest's own text. */
function manifestParts(manifestText: string, manifest: ChapterManifest, lab: LabSpec): LabPart[] {
  const doc = parseDocument(manifestText);
  const file = manifest.manifestPath;
  const index = manifest.labs.indexOf(lab);
  const at = (node: unknown, kind: PartKind, label: string): LabPart[] => {
    const range = (node as { range?: [number, number, number] } | undefined)?.range;
    return range === undefined ? [] : [{ kind, label, file, ...positionIn(manifestText, range[0]) }];
  };
  const parts = at(doc.getIn(["labs", index], true), "address", `Lab ${lab.id} 的地址`);
  for (const rung of lab.hints.keys()) parts.push(...at(doc.getIn(["labs", index, "hints", rung], true), "hint", `提示第 ${rung + 1} 级`));
  const own = (doc.getIn(["labs", index, "faults"]) as { toJSON(): { id?: unknown }[] } | undefined)?.toJSON() ?? [];
  for (const [j, fault] of own.entries()) parts.push(...at(doc.getIn(["labs", index, "faults", j], true), "fault", String(fault.id)));
  const outside = (doc.getIn(["faults"]) as { toJSON(): { id?: unknown; lab?: unknown }[] } | undefined)?.toJSON() ?? [];
  for (const [j, fault] of outside.entries()) {
    if (fault.lab === lab.id) parts.push(...at(doc.getIn(["faults", j], true), "fault", String(fault.id)));
  }
  return parts;
}

/** The lab's faults where the home's catalog writes them (`course/catalog.ts` marks each with the catalog and its index there). */
function catalogParts(root: string, manifest: ChapterManifest, lab: LabSpec): LabPart[] {
  const parts: LabPart[] = [];
  const documents = new Map<string, { text: string; doc: ReturnType<typeof parseDocument> } | undefined>();
  for (const fault of manifest.faults as (FaultSpec & { catalog?: unknown; catalogIndex?: unknown })[]) {
    if (fault.lab !== lab.id || typeof fault.catalog !== "string" || typeof fault.catalogIndex !== "number") continue;
    if (!documents.has(fault.catalog)) {
      const text = readIfPresent(root, fault.catalog);
      documents.set(fault.catalog, text === undefined ? undefined : { text, doc: parseDocument(text) });
    }
    const catalog = documents.get(fault.catalog);
    const range = (catalog?.doc.getIn(["mistakes", fault.catalogIndex], true) as { range?: [number, number, number] } | undefined)?.range;
    if (catalog !== undefined && range !== undefined)
      parts.push({ kind: "fault", label: fault.id, file: fault.catalog, ...positionIn(catalog.text, range[0]) });
  }
  return parts;
}

/**
 * Every part of lab `lab` of `manifest` in the course or practice folder at `root` (see the
 * module comment), in `PART_KINDS` order and, within a kind, in file order.
 */
export function labParts(root: string, manifest: ChapterManifest, lab: LabSpec): LabPart[] {
  const practice = isPracticeFolder(root);
  const labIds = manifest.labs.map((l) => l.id);
  const manifestText = readIfPresent(root, manifest.manifestPath) ?? "";
  const fromManifest = [...manifestParts(manifestText, manifest, lab), ...catalogParts(root, manifest, lab)];
  const parts: LabPart[] = fromManifest.filter((part) => part.kind === "address");

  for (const overlay of manifest.starters) {
    const { from, to } = overlay;
    const starterFile = practice ? starterCopyPath(to) : from;
    const text = readIfPresent(root, to);
    const source = readIfPresent(root, starterFile);
    if (text === undefined || source === undefined) continue;
    // In the course a scaffold's starter is derived (the construction sites are shown in the scaffold).
    const starter = practice || overlay.scaffold !== true ? source : starterOf(manifest, overlay, (file) => (file === to ? text : source)).text;
    // Each declaration is shown at its code (its doc comment above it is part of it, not its place).
    const shown = (shownText: string, fileName: string, kind: (marked: boolean) => PartKind, starterText = starter) =>
      labDeclarations(shownText, starterText, lab.id, labIds, { text: fileName, starter: starterFile }).map(
        (d): LabPart => ({ kind: kind(d.marked), label: d.name, file: fileName, line: d.codeLine, column: d.codeColumn }),
      );
    try {
      parts.push(...shown(text, to, (marked) => (marked ? "declaration" : "helper")));
    } catch (error) {
      if (!isCourseError(error, "TS_SYNTAX")) throw error;
      parts.push({ kind: "declaration", label: "（这个文件现在无法解析，声明的位置要等它能解析之后才能给出）", file: to, line: 1, column: 1 });
    }
    parts.push(...shown(source, starterFile, () => "starter", source));
  }

  const chapterText = manifest.text === undefined ? undefined : readIfPresent(root, manifest.text);
  if (chapterText !== undefined) {
    const sections = chapterSections(chapterText);
    for (const number of lab.sections) {
      const section = sections.find((s) => s.number === number);
      if (section !== undefined) parts.push({ kind: "section", label: `§${number} ${section.title}`, file: manifest.text!, line: section.line, column: 1 });
    }
  }

  for (const file of manifest.focusedTests) {
    const text = readIfPresent(root, file);
    if (text === undefined) continue;
    for (const test of topLevelTests(text, file)) {
      if (testBelongsToLab(test.name, lab.id)) parts.push({ kind: "test", label: test.name, file, line: test.line, column: test.column });
    }
  }

  parts.push(...fromManifest.filter((part) => part.kind === "hint"));
  for (const part of fromManifest.filter((p) => p.kind === "fault")) {
    parts.push(part);
    // Where the fault edits the reference: only the course repository has both.
    const fault = manifest.faults.find((f) => f.id === part.label);
    const file = fault?.file ?? manifest.starters[0]?.to;
    const reference = practice || fault?.find === undefined || file === undefined ? undefined : readIfPresent(root, file);
    if (reference === undefined || fault?.find === undefined || file === undefined) continue;
    try {
      const span = locateFault(reference, { id: fault.id, file, find: fault.find, ...(fault.in === undefined ? {} : { in: fault.in }) });
      parts.push({
        kind: "fault",
        label: `${fault.id} 改动的代码${fault.in === undefined ? "" : `（${fault.in} 里）`}`,
        file,
        ...positionIn(reference, span.start),
      });
    } catch (error) {
      if (!isCourseError(error, "FAULT_DRIFTED")) throw error;
      parts.push({ kind: "fault", label: `${fault.id}：find 在参考实现里找不到了（FAULT_DRIFTED）`, file, line: 1, column: 1 });
    }
  }

  for (const file of lab.challenge) {
    const title = manifest.challenge.find((t) => t.file === file)?.title ?? "";
    if (readIfPresent(root, file) !== undefined) parts.push({ kind: "challenge", label: title, file, line: 1, column: 1 });
  }
  // Kinds in listing order; within a kind, the order they were found in (a stable sort).
  return parts.sort((a, b) => PART_KINDS.indexOf(a.kind) - PART_KINDS.indexOf(b.kind));
}

/** What each kind is called in the listing. */
const KIND_NAMES: Readonly<Record<PartKind, string>> = {
  address: "地址",
  declaration: "声明",
  helper: "helper",
  starter: "starter",
  section: "正文",
  test: "测试",
  hint: "提示",
  fault: "故障",
  challenge: "挑战关",
};

/** The listing `lab NN.L --where` prints: the lab's heading, then one line per part, grouped by kind, paths relative to `showFrom`. */
export function formatLabParts(lab: LabSpec, parts: readonly LabPart[], root: string, showFrom: string, paint: Paint): string {
  const lines = [paint.bold(`Lab ${lab.id} · ${lab.title}`)];
  const width = Math.max(...PART_KINDS.map((kind) => displayWidth(KIND_NAMES[kind])));
  for (const kind of PART_KINDS) {
    parts
      .filter((part) => part.kind === kind)
      .forEach((part, index) => {
        const name = index === 0 ? KIND_NAMES[kind] : "";
        lines.push(`  ${padEnd(name, width)}  ${paint.cyan(formatLocation(part, root, showFrom))}  ${part.label}`);
      });
  }
  return lines.join("\n");
}
