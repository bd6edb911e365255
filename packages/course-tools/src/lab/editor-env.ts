/**
 * The learner's own editor variables (`VISUAL`, `EDITOR`), as their shell set them, for
 * `lab --open`.
 *
 * npm writes `EDITOR` into the environment of every script it runs: its `editor` setting,
 * which defaults to `$EDITOR`, else `$VISUAL`, else `vi` (`%SYSTEMROOT%\notepad.exe` on
 * Windows). So under `npm run lab … --open` a learner with neither variable would get `vi`
 * (a terminal editor most newcomers cannot leave) instead of the documented default,
 * `code -g`. npm leaves `VISUAL` alone, and it passes a learner's own `EDITOR` through.
 *
 * What this module decides:
 * - Outside npm (no `npm_lifecycle_event`), the variables are the learner's as they are.
 * - Under npm, `VISUAL` is the learner's; `EDITOR` is read from the environment the npm
 *   process itself was started with (the first ancestor process that was not started for
 *   this same npm script: its `npm_lifecycle_script` differs, or it has none, so an
 *   `npm run` inside another npm script still finds its own npm), where the system shows it
 *   (Linux: `/proc`). That holds only while `EDITOR` is still what npm wrote from that
 *   environment; an `EDITOR` set after npm (a program that starts `lab` with an editor of its
 *   choosing) is kept.
 * - Where it does not, an `EDITOR` equal to npm's fallback is taken as npm's, not the
 *   learner's (a learner who really wants `vi` there can set `VISUAL=vi`); any other value
 *   is the learner's. An `editor` the learner set in npm's own configuration
 *   (`npm_config_editor`) is their choice and is kept.
 */
import { readFileSync } from "node:fs";

/** The two variables `lab --open` reads, as the learner set them (absent when not set). */
export type EditorVariables = {
  VISUAL?: string;
  EDITOR?: string;
};

/**
 * Reads the environment the npm process running `script` (its `npm_lifecycle_script`) was
 * started with; `undefined` where the system does not show it.
 */
export type StartEnvironmentReader = (script: string | undefined) => NodeJS.ProcessEnv | undefined;

/** npm's fallback for its `editor` setting when neither `EDITOR` nor `VISUAL` is set. */
export function npmFallbackEditor(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string {
  return platform === "win32" ? `${env.SYSTEMROOT ?? ""}\\notepad.exe` : "vi";
}

/**
 * The learner's `VISUAL` and `EDITOR` under `env` (see the module comment). Pure apart from
 * `readStart`, which is called only when `env` is a script's environment under npm.
 */
export function learnerEditorVariables(
  env: NodeJS.ProcessEnv,
  readStart: StartEnvironmentReader = npmStartEnvironment,
  platform: NodeJS.Platform = process.platform,
): EditorVariables {
  const chosen = (VISUAL: string | undefined, EDITOR: string | undefined): EditorVariables => ({
    ...(VISUAL === undefined ? {} : { VISUAL }),
    ...(EDITOR === undefined ? {} : { EDITOR }),
  });
  if (env.npm_lifecycle_event === undefined || env.npm_config_editor !== undefined) return chosen(env.VISUAL, env.EDITOR);
  const start = readStart(env.npm_lifecycle_script);
  if (start !== undefined) {
    // What npm wrote from that environment; anything else was set after npm, on purpose.
    const written = start.EDITOR || start.VISUAL || npmFallbackEditor(start, platform);
    return chosen(env.VISUAL, env.EDITOR === written ? start.EDITOR : env.EDITOR);
  }
  return chosen(env.VISUAL, env.EDITOR === npmFallbackEditor(env, platform) ? undefined : env.EDITOR);
}

/** A `KEY=value\0…` block (as `/proc/PID/environ` holds it) as an environment. */
export function parseEnvironBlock(block: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const entry of block.split("\0")) {
    const equals = entry.indexOf("=");
    if (equals > 0) env[entry.slice(0, equals)] = entry.slice(equals + 1);
  }
  return env;
}

/** The parent process id from a `/proc/PID/stat` line (the field after the parenthesised name). */
export function parentPidOfStat(stat: string): number | undefined {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const parent = Number(fields[1]);
  return Number.isInteger(parent) && parent > 0 ? parent : undefined;
}

/** How many ancestors are looked at before giving up (npm, a shell, a launcher: a handful). */
const MAX_ANCESTORS = 8;

/**
 * The environment the npm process that runs `script` was started with: the first ancestor
 * whose start environment was not made for `script` (Linux `/proc`; elsewhere, or when any
 * read fails, `undefined`).
 */
export function npmStartEnvironment(script: string | undefined): NodeJS.ProcessEnv | undefined {
  try {
    let pid = process.ppid;
    for (let step = 0; step < MAX_ANCESTORS && pid > 1; step += 1) {
      const env = parseEnvironBlock(readFileSync(`/proc/${pid}/environ`, "utf8"));
      if (env.npm_lifecycle_script !== script) return env;
      const parent = parentPidOfStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
      if (parent === undefined) return undefined;
      pid = parent;
    }
  } catch {
    // No /proc (macOS, Windows) or a process we may not read: the caller falls back.
  }
  return undefined;
}
