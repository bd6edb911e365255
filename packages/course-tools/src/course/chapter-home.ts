/**
 * A chapter's home: the one folder `chapters/NN-<slug>/` holding everything authored for the
 * chapter that is not a module or a test of the course package. This module is the only one
 * that knows the layout; every command finds a chapter's files through it.
 *
 * ```text
 * chapters/07-agent-loop/
 *   chapter.yaml               the manifest (`MANIFEST_FILE`)
 *   README.md                  the chapter text, when the chapter has one (`TEXT_FILE`)
 *   challenge.md               the challenge tier's text, when it has one (`CHALLENGE_FILE`)
 *   agent-loop.scaffold.ts     one scaffold per teaching file, named after it (`scaffoldName`)
 *   solutions/                 kept solutions, mistakes.yaml and the like (`SOLUTIONS_DIR`)
 * ```
 *
 * Guarantees
 * - A home's name is two digits, a dash and a lowercase slug; the digits are the chapter id,
 *   and a home is a home only when it holds `chapter.yaml`. Two homes of one id are
 *   `MANIFEST_INVALID` (`listHomes`, `homesIn`): a chapter has exactly one home.
 * - Every file under a home belongs to its chapter (the manifest claims its folder
 *   implicitly): the teaching history puts the whole home into that chapter's commit.
 * - Scaffolds and `solutions/` are the authors' (`isAuthorOnly`): a practice folder never
 *   holds them, not even an earlier chapter's.
 */
import { type Dirent, existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { CourseError } from "../core/errors.js";
import { filesBelow } from "../core/files.js";

/** The folder holding every chapter's home, relative to the course root. */
export const CHAPTERS_DIR = "chapters";
/** The manifest's name inside a home. */
export const MANIFEST_FILE = "chapter.yaml";
/** The chapter text's name inside a home (README, so that a browser shows it). */
export const TEXT_FILE = "README.md";
/** The challenge tier's text inside a home. */
export const CHALLENGE_FILE = "challenge.md";
/** The kept solutions' folder inside a home. */
export const SOLUTIONS_DIR = "solutions";
const SCAFFOLD_SUFFIX = ".scaffold.ts";

const HOME_NAME = /^(\d{2})-[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** One chapter's home, as found on disk or in a listing. */
export interface ChapterHome {
  /** The chapter id, e.g. `07`. */
  id: string;
  /** The home folder, repo-relative, e.g. `chapters/07-agent-loop`. */
  home: string;
  /** The manifest, repo-relative, e.g. `chapters/07-agent-loop/chapter.yaml`. */
  manifestPath: string;
}

/** How a manifest path is written, for error messages. */
export const MANIFEST_PATH_PATTERN = `${CHAPTERS_DIR}/NN-名字/${MANIFEST_FILE}`;

/** The home whose manifest is `manifestPath` (repo-relative), or undefined when the path is not a home's manifest. */
export function homeOfManifest(manifestPath: string): ChapterHome | undefined {
  const parts = manifestPath.split("/");
  if (parts.length !== 3 || parts[0] !== CHAPTERS_DIR || parts[2] !== MANIFEST_FILE) return undefined;
  const id = HOME_NAME.exec(parts[1]!)?.[1];
  return id === undefined ? undefined : { id, home: `${CHAPTERS_DIR}/${parts[1]}`, manifestPath };
}

/** The home folder a repo-relative path lies in (`chapters/NN-x`), or undefined. */
export function homeOf(file: string): string | undefined {
  const parts = file.split("/");
  return parts.length >= 3 && parts[0] === CHAPTERS_DIR && HOME_NAME.test(parts[1]!) ? `${CHAPTERS_DIR}/${parts[1]}` : undefined;
}

/** The repo-relative path of `relative` (a path written relative to the home) inside `home`. */
export function inHome(home: string, relative: string): string {
  return `${home}/${relative}`;
}

/** The scaffold's name for teaching file `teachingFile`: its base name, `.scaffold.ts` instead of `.ts`. */
export function scaffoldName(teachingFile: string): string {
  return `${path.posix.basename(teachingFile, ".ts")}${SCAFFOLD_SUFFIX}`;
}

/**
 * True for a file of a home that only the authors see: a scaffold (the starter is derived from
 * it and the reference) or anything under `solutions/` (answer code). A practice folder leaves
 * them out.
 */
export function isAuthorOnly(file: string): boolean {
  return isInSolutions(file) || (homeOf(file) !== undefined && file.endsWith(SCAFFOLD_SUFFIX));
}

/** True for a file under a home's `solutions/` (kept solutions and the catalog of mistakes: answer code). */
export function isInSolutions(file: string): boolean {
  const home = homeOf(file);
  return home !== undefined && file.startsWith(`${home}/${SOLUTIONS_DIR}/`);
}

/** The homes among repo-relative file paths (a listing of a commit), in course order; two homes of one id are `MANIFEST_INVALID`. */
export function homesIn(files: Iterable<string>): ChapterHome[] {
  const homes: ChapterHome[] = [];
  for (const file of files) {
    const home = homeOfManifest(file);
    if (home === undefined) continue;
    const twin = homes.find((other) => other.id === home.id);
    if (twin) throw new CourseError("MANIFEST_INVALID", `${home.manifestPath}: 第 ${home.id} 章有两个目录（另一个是 ${twin.home}）；每章只有一个目录`);
    homes.push(home);
  }
  return homes.sort((a, b) => Number(a.id) - Number(b.id));
}

/** The homes of the course tree `root` (the repository or a practice folder), in course order. */
export async function listHomes(root: string): Promise<ChapterHome[]> {
  return listHomesSync(root);
}

/** `listHomes`, synchronously (a few directory reads), for scripts that are synchronous. */
export function listHomesSync(root: string): ChapterHome[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(path.join(root, CHAPTERS_DIR), { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const manifests = entries
    .filter((entry) => entry.isDirectory() && HOME_NAME.test(entry.name))
    .map((entry) => `${CHAPTERS_DIR}/${entry.name}/${MANIFEST_FILE}`)
    .filter((manifest) => existsSync(path.join(root, ...manifest.split("/"))));
  return homesIn(manifests);
}

/** The home of chapter `id` in `root`, or undefined. */
export function findHome(root: string, id: string): ChapterHome | undefined {
  return listHomesSync(root).find((home) => home.id === id);
}

/** Every file under `home` in the course tree `root`, repo-relative, sorted. */
export async function homeFiles(root: string, home: string): Promise<string[]> {
  return (await filesBelow(path.join(root, ...home.split("/")))).map((file) => `${home}/${file}`);
}
