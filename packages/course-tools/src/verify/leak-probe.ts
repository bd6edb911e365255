/**
 * The leak audit's own probe, per starter of a chapter (a line of `verify NN`'s leak audit):
 * the starter audit must see an answer pasted into this very starter. A starter that passes
 * the audit proves nothing if the audit could not have seen a leak in it, so the probe pastes
 * the longest code line of the reference that the starter does not give, as a comment above
 * the starter's first `throw` (a construction site), and the audit must name that line.
 *
 * Pure: the texts come in, a sentence comes out. It is a check of each chapter's starter, so
 * it runs in that chapter's acceptance record rather than over every chapter in `npm test`.
 */
import { findStarterLeaks } from "../practice/leak-audit.js";

/** What the probe needs of one starter: its course path, its teaching file, and both texts. */
export interface ProbedStarter {
  /** The starter's course path (hand-kept starter or scaffold), named in the answer. */
  source: string;
  teachingFile: string;
  reference: string;
  starter: string;
}

/** Code lines of `reference` (trimmed; no comment line) that `starter` does not hold, longest first. */
function unsharedCodeLines(reference: string, starter: string): string[] {
  return reference
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("//") && !line.startsWith("*") && !line.startsWith("/*") && !starter.includes(line))
    .sort((a, b) => b.length - a.length);
}

/**
 * Undefined when the starter audit catches the reference's longest line that `probed.starter`
 * lacks, pasted as a comment above its first `throw`, at that line; otherwise why not (Chinese,
 * like the record's other failures). `labIds` are the chapter's labs.
 */
export function pastedAnswerProblem(probed: ProbedStarter, labIds: readonly string[]): string | undefined {
  const [pasted] = unsharedCodeLines(probed.reference, probed.starter);
  if (pasted === undefined) return `${probed.source} 已含参考实现 ${probed.teachingFile} 的每一行代码，审计无从检查`;
  const lines = probed.starter.split("\n");
  const at = lines.findIndex((line) => /^\s*throw\b/.test(line));
  if (at < 0) return `${probed.source} 没有施工位的 throw，无法检验审计`;
  lines.splice(at, 0, `  // 参考：${pasted}`);
  const caught = findStarterLeaks(
    [{ teachingFile: probed.teachingFile, starterFile: probed.source, reference: probed.reference, starter: lines.join("\n") }],
    labIds,
  );
  if (caught[0]?.line === at + 1) return undefined;
  return `贴进 ${probed.source} 第 ${at + 1} 行注释的参考实现代码「${pasted}」没有被审计发现`;
}
