/**
 * Validated manifests remembered on disk, by content: every course command starts by reading
 * a manifest, and parsing YAML and validating it against the schema (the two libraries'
 * loads included) costs more than the rest of a quick command's own work (about 0.2 s of CPU
 * for the longest manifest on a quiet two-core machine, 0.3 s with zod; JSON reads it back in
 * under a millisecond, and a hit loads neither library).
 *
 * An entry is found by a hash of the manifest's path, its text and the text of the modules
 * that validate it, so a changed manifest or a changed validator is simply a new entry: a
 * manifest is remembered only once it was valid, and only if it survives JSON unchanged. The
 * cache lives in `.pi-course/cache/manifests/` of the course tree the tooling belongs to (the
 * repository, or a practice folder); it is never needed: an entry that cannot be read or
 * written is parsed again, and a folder over `MAX_ENTRIES` (200) loses its oldest entries.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { isDeepStrictEqual } from "node:util";
import { writeAtomicSync } from "../core/files.js";
import { courseRoot } from "../core/paths.js";

/** Where the entries live, relative to the course tree. */
export const MANIFEST_CACHE = ".pi-course/cache/manifests";

/** Entries kept at most; the oldest go first. */
const MAX_ENTRIES = 200;

/** The hash of each list of validators, read once per process. */
const validatorHashes = new Map<string, string>();

/**
 * A hash of the modules that decide what a valid manifest is (`validators`, file URLs): an
 * entry made by other validation rules is never found.
 */
function validatorsHash(validators: readonly URL[]): string {
  const list = validators.map(String).join("\n");
  let known = validatorHashes.get(list);
  if (known === undefined) {
    const hash = createHash("sha256");
    for (const url of validators) hash.update(readFileSync(url)).update("\0");
    known = hash.digest("hex");
    validatorHashes.set(list, known);
  }
  return known;
}

/**
 * `parse(source)`, or the result it gave before for the same `manifestPath`, `source` and
 * `validators` (see the module comment). What `parse` throws is thrown; nothing is remembered then.
 */
export function cachedParse<T>(
  source: string,
  manifestPath: string,
  validators: readonly URL[],
  parse: (source: string) => T,
  { root = courseRoot, maxEntries = MAX_ENTRIES }: { root?: string; maxEntries?: number } = {},
): T {
  let file: string | undefined;
  try {
    const key = createHash("sha256").update(validatorsHash(validators)).update("\0").update(manifestPath).update("\0").update(source).digest("hex");
    file = path.join(root, ...MANIFEST_CACHE.split("/"), `${key}.json`);
    return JSON.parse(readFileSync(file, "utf8")) as T;
  } catch {
    // Not remembered yet (or unreadable): parse it.
  }
  const parsed = parse(source);
  if (file !== undefined) remember(file, parsed, maxEntries);
  return parsed;
}

function remember(file: string, value: unknown, maxEntries: number): void {
  try {
    const text = JSON.stringify(value);
    if (!isDeepStrictEqual(JSON.parse(text), value)) return;
    const dir = path.dirname(file);
    mkdirSync(dir, { recursive: true });
    writeAtomicSync(file, text);
    prune(dir, maxEntries);
  } catch {
    // A cache that cannot be written is only slower.
  }
}

/** Removes the oldest entries of `dir` beyond `maxEntries`, and what writers killed outright left half-written a while ago. */
function prune(dir: string, maxEntries: number): void {
  const all = readdirSync(dir);
  for (const name of all.filter((n) => n.endsWith(".tmp"))) {
    if (Date.now() - statSync(path.join(dir, name)).mtimeMs > 60_000) rmSync(path.join(dir, name), { force: true });
  }
  const names = all.filter((name) => name.endsWith(".json"));
  if (names.length <= maxEntries) return;
  const aged = names.map((name) => ({ name, at: statSync(path.join(dir, name)).mtimeMs })).sort((a, b) => a.at - b.at);
  for (const { name } of aged.slice(0, names.length - maxEntries)) rmSync(path.join(dir, name), { force: true });
}
