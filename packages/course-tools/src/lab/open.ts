/**
 * `lab NN.L --open`: opens the lab's construction site (`site.ts`) in the learner's editor,
 * and says what it ran.
 *
 * The editor is `$VISUAL`, else `$EDITOR`, else VS Code's `code -g` (`code.cmd` on Windows),
 * the learner's own variables: the `EDITOR` npm writes into every script's environment does
 * not count (`editor-env.ts`).
 * A variable may hold arguments (`EDITOR="code --wait"`, quotes allowed). How the position is
 * passed depends on the editor's name (its base name, without `.exe`/`.cmd`/`.bat`):
 *
 * | editor | arguments |
 * |---|---|
 * | code, code-insiders, codium, vscodium, cursor, windsurf | `-g path:line:col` (`-g` added unless given) |
 * | subl, sublime_text, zed, hx, helix, micro | `path:line:col` |
 * | vi, vim, nvim, gvim, mvim, view, vimx, nvi, elvis | `+line path` |
 * | nano, pico, rnano | `+line,col path` |
 * | emacs, emacsclient, kak | `+line:col path` |
 * | joe, jed, jmacs, jpico, jstar, rjoe, ne, mcedit, mg, ed, ex | `+line path` |
 * | idea, webstorm, pycharm, … (JetBrains launchers) | `--line line path` |
 * | anything else | `path` (the line and column are printed instead) |
 *
 * The editor runs in the directory the command was typed in, with the path relative to it
 * (as every location `lab` prints), attached to the terminal (a terminal editor works as
 * usual); `lab` waits for it (a GUI launcher returns at once). Exit status: 0 once the editor
 * ended well; `EDITOR_NOT_FOUND` when the program cannot be found, `EDITOR_FAILED` when it
 * cannot start or exits with a failure (both exit 1, with advice).
 */
import path from "node:path";
import { CourseError } from "../core/errors.js";
import { shownPath } from "../core/paths.js";
import { runProcess } from "../core/process.js";
import { learnerEditorVariables, type StartEnvironmentReader } from "./editor-env.js";
import type { SourceLocation } from "./locate.js";

/** The editor command line for a site, and how it passes the position. */
export interface EditorCommand {
  command: string;
  args: string[];
  /** Where the command came from: `VISUAL`, `EDITOR` or the default. */
  from: "VISUAL" | "EDITOR" | "default";
  /** False when the editor is not known to take a position (the line and column are then only printed). */
  positioned: boolean;
}

/**
 * Splits a command line the way a shell would for plain words and quotes (no expansions). On
 * Windows a backslash is a path separator, not an escape.
 */
export function splitCommandLine(text: string, platform: NodeJS.Platform = process.platform): string[] {
  if (platform === "win32") return [...text.matchAll(/"([^"]*)"|'([^']*)'|([^\s"']+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
  const words: string[] = [];
  for (const match of text.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'|((?:[^\s"'\\]|\\.)+)/g)) {
    if (match[1] !== undefined) words.push(match[1].replace(/\\(.)/g, "$1"));
    else if (match[2] !== undefined) words.push(match[2]);
    else words.push(match[3]!.replace(/\\(.)/g, "$1"));
  }
  return words;
}

const GOTO = new Set(["code", "code-insiders", "codium", "vscodium", "cursor", "windsurf"]);
const SUFFIX = new Set(["subl", "sublime_text", "zed", "hx", "helix", "micro"]);
const PLUS_LINE = new Set([
  "vi",
  "vim",
  "nvim",
  "gvim",
  "mvim",
  "view",
  "vimx",
  "nvi",
  "elvis",
  "joe",
  "jed",
  "jmacs",
  "jpico",
  "jstar",
  "rjoe",
  "ne",
  "mcedit",
  "mg",
  "ed",
  "ex",
]);
const PLUS_LINE_COMMA_COLUMN = new Set(["nano", "pico", "rnano"]);
const PLUS_LINE_COLON_COLUMN = new Set(["emacs", "emacsclient", "kak"]);
const JETBRAINS = new Set([
  "idea",
  "idea64",
  "webstorm",
  "webstorm64",
  "pycharm",
  "pycharm64",
  "phpstorm",
  "goland",
  "clion",
  "rider",
  "rubymine",
  "rustrover",
  "fleet",
]);

/** The editor's name as the table above knows it: base name, lower case, without a Windows extension. */
export function editorName(command: string): string {
  return path
    .basename(command.replace(/\\/g, "/"))
    .toLowerCase()
    .replace(/\.(exe|cmd|bat)$/, "");
}

/**
 * The command that opens `file` (as the editor should receive it) at `line`:`column` with the
 * editor `env` names (see the module comment). Pure.
 */
export function editorCommand(
  file: string,
  line: number,
  column: number,
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): EditorCommand {
  const visual = (env.VISUAL ?? "").trim();
  const editor = (env.EDITOR ?? "").trim();
  const from = visual !== "" ? "VISUAL" : editor !== "" ? "EDITOR" : "default";
  const words =
    from === "VISUAL"
      ? splitCommandLine(visual, platform)
      : from === "EDITOR"
        ? splitCommandLine(editor, platform)
        : [platform === "win32" ? "code.cmd" : "code", "-g"];
  const [command, ...given] = words.length > 0 ? words : ["code"];
  const name = editorName(command!);
  const at = `${file}:${line}:${column}`;
  const build = (args: string[], positioned = true): EditorCommand => ({ command: command!, args: [...given, ...args], from, positioned });
  if (GOTO.has(name)) return build(given.includes("-g") || given.includes("--goto") ? [at] : ["-g", at]);
  if (SUFFIX.has(name)) return build([at]);
  if (PLUS_LINE.has(name)) return build([`+${line}`, file]);
  if (PLUS_LINE_COMMA_COLUMN.has(name)) return build([`+${line},${column}`, file]);
  if (PLUS_LINE_COLON_COLUMN.has(name)) return build([`+${line}:${column}`, file]);
  if (JETBRAINS.has(name)) return build(["--line", String(line), file]);
  return build([file], false);
}

/** `word` as one word of a POSIX shell line, for showing what was run. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

/** The command line as the learner could type it. */
export function showCommand(editor: Pick<EditorCommand, "command" | "args">): string {
  return [editor.command, ...editor.args].map(shellWord).join(" ");
}

/**
 * Opens `site` (course-relative) of the folder at `root` in the editor, from `cwd` (where the
 * command was typed), and returns the lines to print: what it ran, and where the site is when
 * the editor takes no position. Throws `EDITOR_NOT_FOUND` or `EDITOR_FAILED` (see the module comment).
 */
export async function openInEditor(
  root: string,
  site: SourceLocation,
  options: { cwd: string; env?: NodeJS.ProcessEnv; readStartEnvironment?: StartEnvironmentReader; signal?: AbortSignal },
): Promise<string[]> {
  const env = learnerEditorVariables(options.env ?? process.env, options.readStartEnvironment);
  const file = shownPath(path.join(root, ...site.file.split("/")), options.cwd);
  const editor = editorCommand(file, site.line, site.column, env);
  const shown = showCommand(editor);
  const variable = editor.from === "default" ? "（没有设置 VISUAL 或 EDITOR，用 VS Code）" : `（来自 $${editor.from}）`;
  let result;
  try {
    result = await runProcess(editor.command, editor.args, {
      cwd: options.cwd,
      output: "terminal",
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const advice =
      editor.from === "default"
        ? "设置环境变量 VISUAL 或 EDITOR（例如 EDITOR=vim，或 EDITOR=\"code -w\"），或者在 VS Code 里运行命令 “Shell Command: Install 'code' command in PATH”"
        : `检查 $${editor.from} 写的程序是否已安装、在 PATH 里`;
    if (code === "ENOENT")
      throw new CourseError("EDITOR_NOT_FOUND", `找不到编辑器 ${editor.command}${variable}：${advice}。施工位在 ${file}:${site.line}:${site.column}`, {
        cause: error,
      });
    throw new CourseError("EDITOR_FAILED", `编辑器 ${shown} 无法启动（${(error as Error).message}）。施工位在 ${file}:${site.line}:${site.column}`, {
      cause: error,
    });
  }
  if (options.signal?.aborted === true) return [`已运行：${shown}${variable}`];
  if (result.code !== 0) {
    const how = result.code === null ? `被信号 ${String(result.signal)} 结束` : `以退出码 ${result.code} 结束`;
    throw new CourseError("EDITOR_FAILED", `编辑器 ${shown}${variable} ${how}。施工位在 ${file}:${site.line}:${site.column}`);
  }
  const lines = [`已运行：${shown}${variable}`];
  if (!editor.positioned)
    lines.push(
      `不知道 ${editorName(editor.command)} 怎样跳到指定的行，只打开了文件：施工位在第 ${site.line} 行第 ${site.column} 列（${file}:${site.line}:${site.column}）`,
    );
  return lines;
}
