/**
 * Where a lab's work is in the learner's teaching file (its construction site), for
 * `lab NN.L --open`. The starter marks each lab's work in the declarations that hold it
 * (`// 🔨 Lab NN.L：…`, and the throw of its scaffold error, `labError("Lab NN.L …")`); the
 * learner's file is the starter being rewritten, so:
 *
 * 1. among the learner's top-level declarations that the starter marks for the lab (matched
 *    by name, as `reset NN.L` matches them), the first, in file order: its first line that
 *    still carries the lab's marker or scaffold error, else the start of its code (the learner
 *    has finished the lab and removed the markers);
 * 2. when the file does not parse (the learner is halfway through an edit) or has none of
 *    those declarations, the first line anywhere in it with the lab's marker or scaffold error;
 * 3. else `LAB_SITE_NOT_FOUND`.
 *
 * Teaching files are looked at in manifest order; the starter is the folder's pristine copy
 * (`.pi-course/starter/…`), the one `reset` uses.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { courseCommand } from "../core/command-line.js";
import { CourseError, isCourseError } from "../core/errors.js";
import { starterCopyPath } from "../core/paths.js";
import type { ChapterManifest } from "../course/manifest.js";
import { parseModules, topLevelDeclarations } from "../ts/source.js";
import { declarationKey, labOwnership } from "../ts/splice.js";
import { positionIn, type SourceLocation } from "./locate.js";

/** A line that names lab `lab`'s work: its 🔨 marker, or its scaffold error's text in a string. */
function siteLine(lab: string): RegExp {
  const id = lab.replace(".", "\\.");
  return new RegExp(`🔨\\s*Lab\\s+${id}(?!\\d)|["'\`]Lab ${id}(?!\\d)`);
}

/** The first line of `text` in [from, to) matching `pattern`, at its first non-blank character. */
function firstMatchingLine(text: string, pattern: RegExp, from = 0, to = text.length): { line: number; column: number } | undefined {
  let offset = from;
  for (const line of text.slice(from, to).split("\n")) {
    if (pattern.test(line)) return positionIn(text, offset + (line.length - line.trimStart().length));
    offset += line.length + 1;
  }
  return undefined;
}

/** Rule 1 of the module comment for one file, or undefined (the file does not parse, or has none of the lab's declarations). */
function inMarkedDeclarations(
  text: string,
  starterText: string,
  manifest: ChapterManifest,
  lab: string,
  file: string,
): { line: number; column: number } | undefined {
  let owners: Map<string, string>;
  let declarations;
  try {
    owners = labOwnership(
      starterText,
      manifest.labs.map((l) => l.id),
      `${file} (starter)`,
    );
    declarations = topLevelDeclarations(parseModules({ [file]: text }).get(file)!);
  } catch (error) {
    if (isCourseError(error, "TS_SYNTAX") || isCourseError(error, "TS_UNAVAILABLE")) return undefined;
    throw error;
  }
  const pattern = siteLine(lab);
  for (const declaration of declarations) {
    if (declaration.name === "" || owners.get(declarationKey(declaration)) !== lab) continue;
    return firstMatchingLine(text, pattern, declaration.start, declaration.end) ?? positionIn(text, declaration.codeStart);
  }
  return undefined;
}

/** The construction site of lab `lab` in the practice folder at `root` (see the module comment); throws `LAB_SITE_NOT_FOUND`. */
export function constructionSite(root: string, manifest: ChapterManifest, lab: string): SourceLocation {
  const files = manifest.starters.map((s) => s.to).filter((file) => existsSync(path.join(root, ...file.split("/"))));
  const texts = files.map((file) => ({ file, text: readFileSync(path.join(root, ...file.split("/")), "utf8") }));
  for (const { file, text } of texts) {
    const copy = path.join(root, ...starterCopyPath(file).split("/"));
    if (!existsSync(copy)) continue;
    const found = inMarkedDeclarations(text, readFileSync(copy, "utf8"), manifest, lab, file);
    if (found !== undefined) return { file, ...found };
  }
  for (const { file, text } of texts) {
    const found = firstMatchingLine(text, siteLine(lab));
    if (found !== undefined) return { file, ...found };
  }
  const where = manifest.starters.map((s) => s.to).join("、");
  throw new CourseError(
    "LAB_SITE_NOT_FOUND",
    `在 ${where} 里找不到 Lab ${lab} 的施工位：没有 🔨 Lab ${lab} 标记，也没有 starter 为这个 Lab 标出的声明（改了名或删掉了？）。` +
      `看 starter 的样子：.pi-course/starter/ 下的副本；要把这个 Lab 的函数放回去：${courseCommand("reset", lab)}`,
  );
}
