/**
 * `npm run hint -w @pi/course -- 12.2 [--level N] [--json]` and `-- 12.2 --reset` /
 * `-- 12 --reset`: show the next rung of a lab's four-rung hint ladder (or the rung asked
 * for), remembering the rung reached in `.pi-course/hints.json` of the course folder.
 *
 * When the progress cannot be saved (a read-only folder, a directory where the file should
 * be), the hint is shown all the same, with a coded warning (`HINT_STATE_UNWRITABLE`) saying
 * why and what to do.
 */
import type { CommandContext, LabTarget } from "./core/cli.js";
import { paintFor } from "./core/term.js";
import { loadManifest } from "./course/manifest.js";
import { formatHint, loadHintProgress, RUNGS, resetHints, saveShownHint, takeHint, unsavedHintWarning, writeHintState } from "./lab/hints.js";
import { learnerPreamble } from "./practice/preamble.js";
import { selectLabs } from "./testing/labs.js";

/** `hint`'s arguments (declared in the command table, `cli.ts`). */
export interface HintArgs {
  target: LabTarget;
  level?: number;
  reset: boolean;
  json: boolean;
}

/** Runs `hint`: shows the hint (or resets the progress) and resolves with the exit status. */
export async function run(args: HintArgs, { root, io }: CommandContext): Promise<number> {
  const manifest = await loadManifest(root, args.target.chapter);
  const labs = selectLabs(manifest, args.target);
  const paint = paintFor(io.stdout);
  for (const line of learnerPreamble(root, manifest.id)) {
    (args.json ? io.stderr : io.stdout).write(`${args.json ? line : paint.yellow(line)}\n`);
  }
  const loaded = await loadHintProgress(root);
  if (loaded.warning !== undefined) io.stderr.write(`${loaded.warning}\n`);

  if (args.reset) {
    const ids = labs.map((lab) => lab.id);
    await writeHintState(root, resetHints(loaded.state, ids));
    if (args.json) io.stdout.write(`${JSON.stringify({ reset: ids })}\n`);
    else io.stdout.write(`已重置 ${ids.map((id) => `Lab ${id}`).join("、")} 的提示进度，下次从第 1 级开始。\n`);
    return 0;
  }

  const [lab] = labs;
  if (lab === undefined) return 2;
  const { state, view } = takeHint(loaded.state, lab, args.level);
  // The hint matters more than remembering it: show it whether or not the progress is saved.
  const saved = await saveShownHint(root, state);
  if (args.json) {
    const next = view.level < RUNGS ? view.level + 1 : null;
    const document: Record<string, unknown> = { lab: lab.id, title: lab.title, level: view.level, of: RUNGS, text: view.text, next };
    if (saved !== undefined) document.warning = { code: saved.code, message: saved.message };
    io.stdout.write(`${JSON.stringify(document)}\n`);
  } else {
    io.stdout.write(`${formatHint(view, paint)}\n`);
  }
  if (saved !== undefined) io.stderr.write(`${unsavedHintWarning(saved, view.level)}\n`);
  return 0;
}
