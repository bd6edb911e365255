/**
 * The fault catalog against a reformat of the teaching files, for the record's "fault
 * catalog" line: each file a fault edits, as the repository's formatter (Biome, a
 * development dependency of the course repository) writes it at line width 60 with 4-space
 * indents, then `reformatProblems` (course/faults.ts) on every fault. A chapter whose faults
 * all survive keeps its `fault NN --all` working when someone reformats its reference.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { runProcess } from "../core/process.js";
import { type Fault, type ReformattedFile, reformatProblems } from "../course/faults.js";

/** The line width and indent of the reformat: both far from the repository's own (160, 2). */
export const REFORMAT = { lineWidth: 60, indentWidth: 4 } as const;

/**
 * The problems a reformat of their files makes in `faults` (see `reformatProblems`); `read`
 * gives a file's text as verified, `nodeModules` is where Biome is installed. One problem,
 * and nothing else checked, when Biome is missing or fails on a file.
 */
export async function faultReformatProblems(
  faults: readonly Fault[],
  read: (file: string) => Promise<string>,
  nodeModules: string,
  signal?: AbortSignal,
): Promise<string[]> {
  const biome = path.join(nodeModules, "@biomejs", "biome", "bin", "biome");
  if (!existsSync(biome)) return [`找不到格式化工具 ${path.relative(path.dirname(nodeModules), biome)}（先 npm install），无法检查故障经得起重新格式化`];
  const files = new Map<string, ReformattedFile>();
  for (const file of new Set(faults.map((fault) => fault.file))) {
    const text = await read(file);
    const args = [
      biome,
      "format",
      `--stdin-file-path=${file}`,
      "--indent-style=space",
      `--indent-width=${REFORMAT.indentWidth}`,
      `--line-width=${REFORMAT.lineWidth}`,
    ];
    const result = await runProcess(process.execPath, args, { cwd: path.dirname(nodeModules), input: text, ...(signal ? { signal } : {}) });
    if (result.code !== 0) return [`格式化工具没能格式化 ${file}：${result.stderr.toString("utf8").trim().split("\n")[0] ?? ""}`];
    files.set(file, { text, reformatted: result.stdout.toString("utf8") });
  }
  return reformatProblems(faults, files);
}
