/**
 * The hint ladder behind `hint`: each lab has four rungs (locate the file → name the
 * signature → pseudocode → partial code) in its manifest, and the rung a learner has
 * reached is remembered per lab in `.pi-course/hints.json` of the course folder.
 *
 * The state file is small JSON, `{ "format": 1, "labs": { "12.1": 2 } }`. It is written
 * atomically (temporary file, then rename), so an interrupted write never leaves half a
 * file; a file that is nevertheless unreadable is reported and replaced, never fatal; a
 * state that cannot be saved (read-only folder, a directory in the file's place) is reported
 * with a code, and the hint is shown all the same.
 */
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { CourseError, formatWarning, isCourseError } from "../core/errors.js";
import { courseCommand } from "../core/command-line.js";
import { RUNG_NAMES, RUNGS } from "../course/hint-rungs.js";
import type { LabSpec } from "../course/manifest.js";
import { HINT_STATE } from "../core/paths.js";
import type { Paint } from "../core/term.js";
import { removeStaleTemps, writeAtomicSync } from "../core/files.js";

export { RUNG_NAMES, RUNGS };

/** The format version of the hint state file. */
export const HINT_STATE_FORMAT = 1;

export interface HintState {
  format: number;
  /** Lab id → the highest rung shown so far (1–4). */
  labs: Record<string, number>;
}

/** A state with no rung reached anywhere. */
export function emptyHintState(): HintState {
  return { format: HINT_STATE_FORMAT, labs: {} };
}

/** Why `value` is not a valid hint state, or undefined when it is one. */
export function hintStateProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "不是 JSON 对象";
  const v = value as Record<string, unknown>;
  if (v.format !== HINT_STATE_FORMAT) return `format 应为 ${HINT_STATE_FORMAT}`;
  if (typeof v.labs !== "object" || v.labs === null || Array.isArray(v.labs)) return "labs 应为对象";
  for (const [id, level] of Object.entries(v.labs)) {
    if (!/^\d{1,2}\.\d+$/.test(id)) return `Lab 编号 “${id}” 无效`;
    if (typeof level !== "number" || !Number.isInteger(level) || level < 1 || level > RUNGS) return `Lab ${id} 的级数应为 1–${RUNGS}`;
  }
  return undefined;
}

export interface LoadedHintState {
  state: HintState;
  /** Set when the file existed but could not be used; the state is then empty. */
  problem?: string;
}

/**
 * Reads the hint state of the course folder `root`. A missing file is an empty state; an
 * unreadable, non-JSON or ill-shaped file is an empty state plus a `problem` to report.
 */
export async function readHintState(root: string): Promise<LoadedHintState> {
  let text: string;
  try {
    text = await readFile(path.join(root, HINT_STATE), "utf8");
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ENOENT") return { state: emptyHintState() };
    if (code === "EISDIR") return { state: emptyHintState(), problem: "它是一个目录，不是文件" };
    return { state: emptyHintState(), problem: `无法读取（${code ?? (error as Error).message}）` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { state: emptyHintState(), problem: "不是合法的 JSON" };
  }
  const problem = hintStateProblem(value);
  if (problem !== undefined) return { state: emptyHintState(), problem };
  const labs = (value as HintState).labs;
  return { state: { format: HINT_STATE_FORMAT, labs: { ...labs } } };
}

/**
 * Writes `state` to `.pi-course/hints.json` of `root` atomically: the whole new file under a
 * temporary name in the same directory, then a rename over the old one (which replaces it
 * on every OS node supports). Readers see the old file or the new one, never a mix. Throws
 * `HINT_STATE_UNWRITABLE` (the cause kept) when it cannot: no temporary file is left then.
 */
export async function writeHintState(root: string, state: HintState): Promise<void> {
  const file = path.join(root, HINT_STATE);
  try {
    await mkdir(path.dirname(file), { recursive: true });
    writeAtomicSync(file, `${JSON.stringify(state, null, 2)}\n`);
  } catch (error) {
    throw unwritable(error);
  }
}

/** The `HINT_STATE_UNWRITABLE` error for a failed write of the state file: what is in the way, what to do. */
export function unwritable(error: unknown): CourseError {
  const code = (error as { code?: string }).code ?? "";
  const why =
    code === "EISDIR" || code === "ENOTEMPTY" || code === "EEXIST"
      ? `${HINT_STATE} 是一个目录；删除或改名它之后，进度就能保存`
      : code === "EACCES" || code === "EPERM" || code === "EROFS"
        ? `没有写入 ${path.dirname(HINT_STATE)} 的权限（${code}）；检查这个目录的权限`
        : code === "ENOTDIR"
          ? `${path.dirname(HINT_STATE)} 不是目录；删除或改名它之后，进度就能保存`
          : `${code || (error as Error).message}`;
  return new CourseError("HINT_STATE_UNWRITABLE", `无法保存提示进度：${why}`, { cause: error });
}

/** Removes temporary files a killed `hint` left beside the state file (see `removeStaleTemps`). Never throws. */
export function removeStaleHintTemps(root: string): void {
  removeStaleTemps(path.join(root, HINT_STATE));
}

/**
 * The rung state as every hint command reads it: a killed writer's temporary files removed
 * first, then the state file. A file that cannot be used reads as no hint seen, with the
 * coded `HINT_STATE_INVALID` warning line that says so; never throws.
 */
export async function loadHintProgress(root: string): Promise<{ state: HintState; warning?: string }> {
  removeStaleHintTemps(root);
  const loaded = await readHintState(root);
  if (loaded.problem === undefined) return { state: loaded.state };
  return {
    state: loaded.state,
    warning: formatWarning("HINT_STATE_INVALID", `提示进度文件 ${HINT_STATE} 无法使用（${loaded.problem}），这次按没有看过任何提示处理。`),
  };
}

/**
 * Saves the state after a rung was shown. The hint matters more than remembering it: a state
 * that cannot be written resolves with its `HINT_STATE_UNWRITABLE` error (for the caller to
 * show as a warning beside the hint) instead of rejecting; any other failure rejects.
 */
export async function saveShownHint(root: string, state: HintState): Promise<CourseError | undefined> {
  try {
    await writeHintState(root, state);
    return undefined;
  } catch (error) {
    if (isCourseError(error, "HINT_STATE_UNWRITABLE")) return error;
    throw error;
  }
}

/** The warning line for a rung shown at `level` whose progress `saveShownHint` could not save. */
export function unsavedHintWarning(error: CourseError, level: number): string {
  return formatWarning(error.code, `${error.message}（提示照常显示，只是下次不会记得你已看到第 ${level} 级）`);
}

export interface HintView {
  lab: LabSpec;
  /** The rung shown, 1–4. */
  level: number;
  text: string;
  /** True when this rung had already been reached before (asking again at the top). */
  repeated: boolean;
}

/**
 * The rung to show for `lab` and the state after showing it: the rung after the highest
 * reached (the first one for a new lab, the last one again at the top), or exactly
 * `level` when given. The returned state records the rung shown; `state` is not modified.
 */
export function takeHint(state: HintState, lab: LabSpec, level?: number): { state: HintState; view: HintView } {
  const reached = state.labs[lab.id] ?? 0;
  const shown = level ?? Math.min(reached + 1, RUNGS);
  if (!Number.isInteger(shown) || shown < 1 || shown > RUNGS) throw new CourseError("USAGE", `提示级数应为 1–${RUNGS}，收到 ${shown}`);
  const text = lab.hints[shown - 1] ?? "";
  return {
    state: { format: HINT_STATE_FORMAT, labs: { ...state.labs, [lab.id]: shown } },
    view: { lab, level: shown, text, repeated: level === undefined && reached >= RUNGS },
  };
}

/** `state` without any progress for the labs `ids`; `state` is not modified. */
export function resetHints(state: HintState, ids: readonly string[]): HintState {
  const labs = { ...state.labs };
  for (const id of ids) delete labs[id];
  return { format: HINT_STATE_FORMAT, labs };
}

/** The learner-facing text for a hint just taken. */
export function formatHint(view: HintView, paint: Paint): string {
  const { lab, level } = view;
  const lines = [
    `${paint.bold(`Lab ${lab.id} · ${lab.title}`)} · 提示 第 ${level}/${RUNGS} 级：${RUNG_NAMES[level - 1] ?? ""}`,
    ...view.text
      .replace(/\s+$/, "")
      .split("\n")
      .map((line) => `  ${line}`),
  ];
  if (level < RUNGS) {
    lines.push(paint.dim(`下一次 ${courseCommand("hint", lab.id)} 会显示第 ${level + 1}/${RUNGS} 级：${RUNG_NAMES[level] ?? ""}。`));
  } else {
    const again = view.repeated ? "已经到顶，" : "";
    lines.push(paint.dim(`${again}这是最后一级，没有更多提示了。从第 1 级重看：${courseCommand("hint", lab.id)} --reset`));
  }
  return lines.join("\n");
}
