/**
 * The one error class of the course tooling. Every failure a command reports on purpose
 * is a `CourseError` with a stable `code`: tests and other commands match on the code,
 * never on the message, which is written for the learner (Chinese) and may change.
 *
 * The codes are a closed list (`ERROR_CODES`, in the manner of undici's `UND_ERR_*`): a
 * code that is not listed does not compile, and `packages/course-tools/test/core/errors.test.ts` fails
 * when a listed code is thrown nowhere or a thrown one is missing (e.g. in a file run from
 * source, where types are not checked).
 */

/** Every code the tooling throws or prints (`错误 [CODE]`, `警告 [CODE]`), with what it means. */
export const ERROR_CODES = {
  // The command line (commands exit 2 on these, see `exitCodeFor`).
  USAGE: "Bad command line: an unknown option, a missing or extra argument, an unknown lab or step.",
  CHAPTER_UNKNOWN: "No manifest for the requested chapter.",
  SOURCE_UNKNOWN: "`--source` names no commit of the repository.",
  ABORTED: "The user interrupted the command (Ctrl-C, SIGTERM, SIGHUP); everything it started was removed.",

  // Manifests, git and the teaching history.
  MANIFEST_INVALID: "A chapter manifest is missing, unreadable or does not match the format.",
  NOT_A_GIT_REPO: "The course folder is not the top level of a git repository (e.g. a practice folder).",
  GIT_FAILED: "A git command failed, or git cannot be started.",
  HISTORY_INCOMPLETE: "Objects or commits the teaching history needs are missing (shallow or partial clone).",
  HISTORY_MISMATCH: "The generated history does not have the shape it must have (parent, layer, object ids).",
  HISTORY_BRANCH_BUSY: "The teaching branch holds commits the tooling did not generate, is checked out, or moved meanwhile.",
  HISTORY_SOURCE_GENERATED: "The source commit is itself a generated teaching commit, not a commit of main.",

  // Practice folders and their audits.
  DEST_EXISTS: "The practice destination already exists.",
  DEST_INSIDE_REPO: "The practice destination lies inside the course repository.",
  DEST_PARENT_MISSING: "The folder that should contain the practice destination does not exist.",
  DEST_PARENT_NOT_DIR: "The path that should be the folder containing the practice destination is a file.",
  DEST_PARENT_READONLY: "The folder that should contain the practice destination cannot be written.",
  PRACTICE_UNAVAILABLE: "The chapter has no starter, so no practice folder can be made for it.",
  PRACTICE_CONFLICT: "Two sources would write the same path of a practice folder.",
  MODULES_MISSING: "`--link-modules` was asked for but the repository has no `node_modules`.",
  LEAK_DETECTED: "A practice folder would contain a line of the chapter's reference solution.",

  // Compiling and running the course's tests.
  BUILD_FAILED: "The TypeScript compiler cannot be found or started.",

  // `lab --open` and `lab --compare`.
  LAB_NEEDS_PRACTICE: "`lab --open` or `lab --compare` was run outside a practice folder.",
  LAB_SITE_NOT_FOUND: "`lab --open` finds neither the lab's construction site nor its declarations in the learner's file.",
  EDITOR_NOT_FOUND: "The editor `lab --open` would start (`$VISUAL`, `$EDITOR`, else `code`) cannot be found.",
  EDITOR_FAILED: "The editor `lab --open` started could not run or exited with a failure.",
  COMPARE_NOT_GREEN: "`lab --compare` refuses: the lab is not green on the learner's current code.",
  COMPARE_COURSE_UNREACHABLE: "`lab --compare` cannot read the reference: the course repository or the target commit the folder was made from is not there.",

  // Syntax trees of the course's own TypeScript.
  TS_SYNTAX: "A TypeScript text has a syntax error (file and line named).",
  TS_UNAVAILABLE: "The TypeScript API did not open or parse what it was given.",
  LAB_OWNERSHIP_AMBIGUOUS: "A starter declaration is marked for two labs.",
  LAB_OWNERSHIP_UNKNOWN: "A starter declaration is marked for a lab the chapter does not have.",
  SCAFFOLD_SITE_MISSING: "A lab declaration (or a member with a body of a lab class) has no construction site in the chapter's scaffold.",
  SCAFFOLD_SITE_EXTRA: "The scaffold has a construction site no lab names, or names a declaration the reference lacks.",
  SCAFFOLD_INVALID: "The scaffold is not in the format a starter is derived from (a site with a signature, a stray comment, an import, an unknown directive).",

  // Hints.
  HINT_STATE_INVALID: "The hint progress file cannot be used; it is read as empty (a warning).",
  HINT_STATE_UNWRITABLE: "The hint progress cannot be saved; the hint is shown all the same (a warning).",

  // Faults: the catalog, the author runs, the learner's exercise and its backup.
  FAULT_INVALID: "An entry of a chapter's catalog of mistakes (a fault or not) is malformed, names no single test, or cannot be undone.",
  FAULT_DRIFTED: "An entry's `find` no longer occurs exactly once in its base (the reference or a kept solution), or its edit was changed.",
  CATALOG_INVALID: "A catalog of mistakes cannot be read: not YAML, or not a mapping with a `mistakes:` list of mappings.",
  FAULT_NONE: "The chapter has no fault to run (none at all, or no exercise).",
  FAULT_SOURCE_MISSING: "The course tree to copy for an author run lacks a file a build needs.",
  FAULT_BASELINE_RED: "The reference is not green before any fault is injected.",
  FAULT_UNPLACEABLE: "The exercise line has no place in the learner's function (internal to placement).",
  FAULT_BUSY: "Another fault exercise is in progress, or an unrestored backup is in the way.",
  FAULT_BACKUP_CORRUPT: "The fault exercise's backup cannot be read or does not match its hash.",
  FAULT_BACKUP_CONFLICT: "The learner's file changed since the exercise patched it: nothing is restored automatically.",

  // Reset.
  RESET_NOT_PRACTICE: "`reset` runs in a practice folder only.",
  RESET_OTHER_CHAPTER: "The practice folder belongs to another chapter.",
  RESET_MARKER_INVALID: "The practice folder's marker cannot be read.",
  RESET_FAULT_PENDING: "A fault exercise's backup exists: resetting now would leave it nothing to restore to.",
  RESET_NO_STARTER: "The chapter has no starter, or the folder has no pristine copy of it.",
  RESET_NO_FILE: "A lab reset of a teaching file that does not exist.",
  RESET_UNPARSABLE: "A lab reset of a file with a syntax error.",
  RESET_LAB_BREAKS_BUILD: "A lab reset whose result would not compile where the learner's file did.",
  RESET_WRITE_FAILED: "A teaching file cannot be saved or written.",

  // The MCP server of a practice folder.
  MCP_NOT_PRACTICE: "`mcp` serves a practice folder only: the folder it runs in has no readable `.pi-course/practice.json`.",
  MCP_TEXT_MISSING: "The chapter has no text, or the practice folder lacks its file.",
  MCP_SECTION_UNKNOWN: "The chapter text has no section with the number asked for.",
  MCP_OTHER_CHAPTER: "A tool was asked about a chapter other than the one the practice folder is for.",
  MCP_TOOL_UNKNOWN: "An MCP client called a tool the server does not have.",
  MCP_PROMPT_UNKNOWN: "An MCP client asked for a prompt the server does not have.",
  MCP_CALL_CANCELLED: "The client cancelled the call (or the server is stopping) before it ran or before it saved anything.",

  // Author tooling.
  AUTHOR_ONLY:
    "An author command (`checkpoint`, `practice`, `verify`, `node-matrix`, `fault --all`) was run in a practice folder; it names the course repository.",
  CHAPTER_TEXT_INVALID: "The chapter text's `verify` markup is malformed.",
  NODE_BUILD_UNAVAILABLE: "The registry has no official Node build for this platform or major.",
  NODE_BUILD_FAILED: "Fetching or unpacking an official Node build failed.",
} as const satisfies Record<string, string>;

/** A code of `ERROR_CODES`: the type of every `CourseError`'s `code`. */
export type CourseErrorCode = keyof typeof ERROR_CODES;

/** An error with a stable `code`; `cause` keeps the original error when there is one. */
export class CourseError extends Error {
  readonly code: CourseErrorCode;
  constructor(code: CourseErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "CourseError";
    this.code = code;
  }
}

/** True when `error` is a `CourseError`, optionally with the given code. */
export function isCourseError(error: unknown, code?: CourseErrorCode): error is CourseError {
  return error instanceof CourseError && (code === undefined || error.code === code);
}

/**
 * One line for the terminal: `错误 [CODE] message` for course errors, the message of any
 * other error (with its stack only when `PI_COURSE_DEBUG` is set).
 */
export function formatError(error: unknown): string {
  if (error instanceof CourseError) return `错误 [${error.code}] ${oneLine(error.message)}`;
  if (error instanceof Error) {
    return process.env.PI_COURSE_DEBUG ? String(error.stack) : `错误 ${oneLine(error.message)}`;
  }
  return `错误 ${String(error)}`;
}

/** One line for a problem the command reports and gets past: `警告 [CODE] message`. */
export function formatWarning(code: CourseErrorCode, message: string): string {
  return `警告 [${code}] ${oneLine(message)}`;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ");
}
