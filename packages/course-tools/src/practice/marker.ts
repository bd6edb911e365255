/**
 * Reading a practice folder's marker, `.pi-course/practice.json` (written by `practice`, see
 * `PracticeMarker`): which chapter the folder is for, where it came from. A folder made by an
 * older version of the tooling may lack fields (`course`), and a learner may have edited it:
 * every field is checked, and what is missing or malformed is simply absent.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { PRACTICE_MARKER } from "../core/paths.js";
import type { PracticeMarker } from "./plan.js";

/** The marker's fields that are there and well formed; undefined when the file cannot be read as a JSON object. */
export function readPracticeMarker(root: string): Partial<PracticeMarker> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path.join(root, ...PRACTICE_MARKER.split("/")), "utf8"));
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined;
  const raw = parsed as Record<string, unknown>;
  const marker: Partial<PracticeMarker> = {};
  for (const key of ["chapter", "parent", "target", "source", "course"] as const) {
    const value = raw[key];
    if (typeof value === "string" && value !== "") marker[key] = value;
  }
  if (marker.target !== undefined && !/^[0-9a-f]{40}$/.test(marker.target)) delete marker.target;
  if (marker.course !== undefined && !path.isAbsolute(marker.course)) delete marker.course;
  return marker;
}
