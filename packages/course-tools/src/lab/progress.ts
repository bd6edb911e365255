/**
 * What `lab` remembers between runs: the last result of each lab, with a digest of the
 * teaching files it was reached on. `lab NN.L` runs only labs up to NN.L, so this is how its
 * "next step" knows that a later lab is green already (for the same code), and does not send
 * a learner who has finished the chapter to a lab they have done.
 *
 * Kept in `.pi-course/lab-progress.json` of the course folder, written atomically; a result
 * counts only while the teaching files still have the digest it was recorded with. Losing
 * the file loses nothing but a better next step: reading and writing never fail a command.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { writeAtomicSync } from "../core/files.js";
import type { ChapterManifest } from "../course/manifest.js";
import type { LabResult } from "../testing/results.js";

/** Where the progress is kept, relative to the course root. */
export const LAB_PROGRESS = ".pi-course/lab-progress.json";

interface Entry {
  status: LabResult["status"];
  passed: number;
  total: number;
  /** Digest of the chapter's teaching files when the result was recorded. */
  files: string;
}

export interface LabProgress {
  format: 1;
  labs: Record<string, Entry>;
}

/** A digest of `manifest`'s teaching files in `root` as they are now ("" for a file that is missing). */
export function teachingDigest(root: string, manifest: ChapterManifest): string {
  const hash = createHash("sha256");
  for (const { to } of manifest.starters) {
    let bytes: Buffer | string = "";
    try {
      bytes = readFileSync(path.join(root, ...to.split("/")));
    } catch {
      // A missing file has its own digest: the empty content.
    }
    hash.update(`${to}\0`).update(bytes).update("\0");
  }
  return hash.digest("hex").slice(0, 16);
}

/** The recorded progress of the course at `root`, empty when there is none (or it cannot be read). */
export function readProgress(root: string): LabProgress {
  try {
    const parsed = JSON.parse(readFileSync(path.join(root, ...LAB_PROGRESS.split("/")), "utf8")) as Partial<LabProgress>;
    if (parsed.format === 1 && typeof parsed.labs === "object" && parsed.labs !== null) return { format: 1, labs: parsed.labs };
  } catch {
    // No progress yet, or a file that is not ours: start afresh.
  }
  return { format: 1, labs: {} };
}

/** Records `results` (reached on teaching files with digest `files`) into the progress of `root`. Never throws. */
export function recordProgress(root: string, results: readonly LabResult[], files: string): void {
  const progress = readProgress(root);
  for (const lab of results) progress.labs[lab.id] = { status: lab.status, passed: lab.passed, total: lab.total, files };
  try {
    const file = path.join(root, ...LAB_PROGRESS.split("/"));
    mkdirSync(path.dirname(file), { recursive: true });
    writeAtomicSync(file, `${JSON.stringify(progress, null, 2)}\n`);
  } catch {
    // A folder we cannot write only costs the next step its knowledge of later labs.
  }
}

/** True when `progress` says lab `id` passed on the teaching files with digest `files`. */
export function knownGreen(progress: LabProgress, id: string, files: string): boolean {
  const entry = progress.labs[id];
  return entry !== undefined && entry.status === "passed" && entry.files === files;
}
