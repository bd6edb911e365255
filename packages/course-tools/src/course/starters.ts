/**
 * A chapter's starters, read the one way every command reads them.
 *
 * A `starters:` entry of a manifest gives the starter of one teaching file in one of two
 * forms: `from:` a hand-kept starter file in the chapter's home, read as it is; or
 * `scaffold:` the chapter's scaffold (`chapters/13-runtime/runtime.scaffold.ts`), from which the
 * starter is derived with the reference (`ts/derive-starter.ts`), so that no line of the
 * reference is copied into a starter by hand. `practice`, `verify`, `lab --where`,
 * `lab --compare` and the tests all go through `starterOf`/`readStarters`, so a derived
 * starter is the same text everywhere: what the practice folder gets (and keeps as the
 * pristine copy `reset` restores), what the leak audit checks, what the staged first red
 * splices. A starter's lines name their origin, so a leak names the scaffold line to fix.
 */
import { deriveStarterWithOrigins, type ScaffoldLab } from "../ts/derive-starter.js";
import { parseModule, topLevelDeclarations } from "../ts/source.js";
import type { StarterOverlay } from "./manifest.js";

/** One teaching file's starter, as the learner gets it. */
export interface Starter {
  /** The teaching file it replaces, e.g. `packages/pi-course/src/runtime.ts`. */
  teachingFile: string;
  /** The course file it comes from: the hand-kept starter or the scaffold. */
  source: string;
  /** True when it is derived from the reference and the scaffold `source`. */
  derived: boolean;
  text: string;
  /** The course file and line that line `line` of `text` comes from (the starter file, the scaffold or the reference). */
  origin(line: number): { file: string; line: number };
}

/**
 * The starter of `overlay` (one of `manifest.starters`), with `read` giving the text of a
 * course file (repo-relative) at the revision wanted: the working tree, a commit. A derived
 * starter reads the scaffold and the reference and throws what `deriveStarter` throws
 * (`SCAFFOLD_*`, `TS_SYNTAX`); `read`'s own errors pass through. The scaffold has the sites of
 * the labs' declarations that its reference declares (another teaching file's are another
 * scaffold's).
 */
export function starterOf(manifest: { labs: readonly ScaffoldLab[] }, overlay: StarterOverlay, read: (file: string) => string): Starter {
  const base = { teachingFile: overlay.to, source: overlay.from };
  if (overlay.scaffold !== true) return { ...base, derived: false, text: read(overlay.from), origin: (line) => ({ file: overlay.from, line }) };
  const reference = read(overlay.to);
  // A chapter of several teaching files: this scaffold holds the sites of the lab declarations its
  // own reference declares; a name no reference declares is `verify`'s to report (`lab-address.ts`).
  const declared = new Set(topLevelDeclarations(parseModule(reference, overlay.to)).map((declaration) => declaration.name));
  const labs = manifest.labs.map((lab) => ({ id: lab.id, declarations: lab.declarations.filter((name) => declared.has(name)) }));
  const derived = deriveStarterWithOrigins(reference, read(overlay.from), labs, { reference: overlay.to, scaffold: overlay.from });
  return {
    ...base,
    derived: true,
    text: derived.text,
    origin(line) {
      const found = derived.origin(line);
      return { file: found.in === "scaffold" ? overlay.from : overlay.to, line: found.line };
    },
  };
}

/** Every starter of `manifest`, in manifest order, with `read` an asynchronous reader (see `starterOf`). */
export async function readStarters(
  manifest: { labs: readonly ScaffoldLab[]; starters: readonly StarterOverlay[] },
  read: (file: string) => Promise<string>,
): Promise<Starter[]> {
  const files = [...new Set(manifest.starters.flatMap((overlay) => (overlay.scaffold === true ? [overlay.from, overlay.to] : [overlay.from])))];
  const texts = new Map(await Promise.all(files.map(async (file) => [file, await read(file)] as const)));
  return manifest.starters.map((overlay) => starterOf(manifest, overlay, (file) => texts.get(file)!));
}
