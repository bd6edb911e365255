/**
 * `npm run hint -w @pi/course -- 12.2 [--level N] [--json]` and `-- 12.2 --reset` /
 * `-- 12 --reset`: show the next rung of a lab's four-rung hint ladder (or the rung asked
 * for), remembering the rung reached in `.pi-course/hints.json` of the course folder.
 *
 * Exit status: 0 on success, 2 for a usage error (unknown lab, bad level), 1 otherwise.
 */
import { runMain } from "./lib/core/cli.js";
import { formatHint, HINT_USAGE, RUNGS, parseHintArgs, readHintState, resetHints, takeHint, writeHintState } from "./lib/lab/hints.js";
import { selectLabs } from "./lib/lab/runner.js";
import { loadManifest } from "./lib/course/manifest.js";
import { courseRoot, HINT_STATE } from "./lib/core/paths.js";
import { paintFor } from "./lib/core/term.js";

async function main(argv: readonly string[]): Promise<number> {
  const args = parseHintArgs(argv);
  if (args.help || args.target === undefined) {
    process.stdout.write(`${HINT_USAGE}\n`);
    return 0;
  }
  const manifest = await loadManifest(courseRoot, args.target.chapter);
  const labs = selectLabs(manifest, args.target);
  const loaded = await readHintState(courseRoot);
  if (loaded.problem !== undefined) {
    process.stderr.write(`提示进度文件 ${HINT_STATE} 已损坏（${loaded.problem}），已重置。\n`);
  }
  const paint = paintFor(process.stdout);

  if (args.reset) {
    const ids = labs.map((lab) => lab.id);
    await writeHintState(courseRoot, resetHints(loaded.state, ids));
    if (args.json) process.stdout.write(`${JSON.stringify({ reset: ids })}\n`);
    else process.stdout.write(`已重置 ${ids.map((id) => `Lab ${id}`).join("、")} 的提示进度，下次从第 1 级开始。\n`);
    return 0;
  }

  const [lab] = labs;
  if (lab === undefined) return 2;
  const { state, view } = takeHint(loaded.state, lab, args.level);
  await writeHintState(courseRoot, state);
  if (args.json) {
    const next = view.level < RUNGS ? view.level + 1 : null;
    process.stdout.write(`${JSON.stringify({ lab: lab.id, title: lab.title, level: view.level, of: RUNGS, text: view.text, next })}\n`);
  } else {
    process.stdout.write(`${formatHint(view, paint)}\n`);
  }
  return 0;
}

runMain(import.meta.url, main);
