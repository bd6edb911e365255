/**
 * Where a chapter keeps its catalog of learner mistakes, and how the catalog reaches the
 * manifest: ONE list per chapter, `mistakes:` in its home's `solutions/mistakes.yaml` (the
 * entry format is `faults.ts`'s), read by every command that needs it.
 *
 * Guarantees
 * - The catalog is the authors' (under `solutions/`, `chapter-home.ts`): a practice folder never
 *   holds it. What a learner sees of it (the exercise, the faults `lab --where` lists) goes
 *   into the practice folder's manifest as `learnerManifestText` projects it.
 * - `withCatalog` gives a manifest its catalog's faults (the entries with a `description`) as
 *   `faults`, each marked with the catalog's path and its index there, so that a message names
 *   the entry where it is written. A chapter writes its faults in one place: a manifest that
 *   lists faults of its own while its catalog has some is `FAULT_INVALID`.
 * - A catalog file that is not YAML, or not a mapping with a `mistakes:` list of mappings, is
 *   `CATALOG_INVALID` naming the file; its entries are validated by `faults.ts`
 *   (`FAULT_INVALID`, `FAULT_DRIFTED`, naming the entry).
 * - A catalog read from the working tree is remembered by content like a manifest
 *   (`manifest-cache.ts`), so a command in the repository parses a long catalog once.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type * as Yaml from "yaml";
import { CourseError } from "../core/errors.js";
import { inHome, SOLUTIONS_DIR } from "./chapter-home.js";
import { cachedParse } from "./manifest-cache.js";

/**
 * What this module needs of a manifest (`manifest.ts`'s `ChapterManifest`, which imports this
 * module: named structurally so that neither imports the other back).
 */
interface CatalogHolder {
  home: string;
  manifestPath: string;
  faults: readonly { id: string }[];
}

/** A fault as the catalog writes it, marked where (`faults.ts` validates the rest). */
type CatalogFault = Record<string, unknown> & { id: string; catalog: string; catalogIndex: number };

/** The catalog's path inside a home. */
export const CATALOG_FILE = `${SOLUTIONS_DIR}/mistakes.yaml`;

/** The YAML library, loaded the first time a catalog is really parsed (as `manifest.ts` does). */
const loadYaml = (): typeof Yaml => createRequire(import.meta.url)("yaml") as typeof Yaml;

/** The module deciding what a parsed catalog is: a change to it is a new cache entry. */
const VALIDATORS = [new URL(`./catalog${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url)];

/** The repo-relative path of the catalog of the chapter whose home is `home`. */
export function catalogPath(home: string): string {
  return inHome(home, CATALOG_FILE);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The entries of a catalog's text (`file` names it in messages): its `mistakes:` list, each a
 * mapping. Throws `CATALOG_INVALID`.
 */
export function catalogEntries(text: string, file: string): Record<string, unknown>[] {
  let document: unknown;
  try {
    document = loadYaml().parse(text);
  } catch (error) {
    throw new CourseError("CATALOG_INVALID", `${file}: 不是有效的 YAML（${(error as Error).message.split("\n")[0]}）`);
  }
  const list = isRecord(document) ? document.mistakes : undefined;
  if (!Array.isArray(list)) throw new CourseError("CATALOG_INVALID", `${file}: 应为一个映射，顶层字段 mistakes 是错误的列表`);
  list.forEach((entry, i) => {
    if (!isRecord(entry)) throw new CourseError("CATALOG_INVALID", `${file}: mistakes[${i}] 应为映射（id、lab、find、replace …）`);
  });
  return list as Record<string, unknown>[];
}

/** The faults of a catalog's text (`file`, repo-relative): its entries with a `description`, each marked where it is written. */
function catalogFaults(text: string, file: string): CatalogFault[] {
  return catalogEntries(text, file).flatMap((entry, index) =>
    entry.description === undefined ? [] : [{ ...entry, id: String(entry.id), catalog: file, catalogIndex: index }],
  );
}

/** `manifest` with `faults` as its faults; `FAULT_INVALID` when the manifest lists faults of its own too. */
function withFaults<M extends CatalogHolder>(manifest: M, faults: CatalogFault[]): M {
  if (faults.length === 0) return manifest;
  if (manifest.faults.length > 0) {
    throw new CourseError(
      "FAULT_INVALID",
      `${manifest.manifestPath}: 本章的故障写在 ${catalogPath(manifest.home)} 里，清单里的 faults（${manifest.faults.map((fault) => fault.id).join(", ")}）应移过去：一章只有一份错误目录`,
    );
  }
  // The entries are the manifest's fault specs, loosely: `faults.ts` validates every field.
  return { ...manifest, faults: faults as unknown as M["faults"] };
}

/**
 * `manifest` with the faults of its catalog (`text`, the home's catalog, when it has one): the
 * entries with a `description`, marked where they are written (see the module comment).
 */
export function withCatalog<M extends CatalogHolder>(manifest: M, text: string | undefined): M {
  return text === undefined ? manifest : withFaults(manifest, catalogFaults(text, catalogPath(manifest.home)));
}

/** `withCatalog` on the catalog in the working tree `root` (read and remembered by content, see the module comment). */
export function withHomeCatalog<M extends CatalogHolder>(root: string, manifest: M): M {
  const relative = catalogPath(manifest.home);
  const file = path.join(root, ...relative.split("/"));
  if (!existsSync(file)) return manifest;
  const text = readFileSync(file, "utf8");
  return withFaults(
    manifest,
    cachedParse(text, relative, VALIDATORS, () => catalogFaults(text, relative)),
  );
}
