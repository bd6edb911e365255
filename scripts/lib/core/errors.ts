/**
 * The one error class of the course tooling. Every failure a command reports on purpose
 * is a `CourseError` with a stable `code`: tests and other commands match on the code,
 * never on the message, which is written for the learner (Chinese) and may change.
 */

/**
 * Codes used across the tooling. The type stays open (`string & {}`) so that other
 * commands can add their own codes without editing this file; list shared ones here.
 */
export type CourseErrorCode =
  /** Bad command line (commands exit 2 on this code, 1 on every other). */
  | "USAGE"
  /** A chapter manifest is missing, unreadable or does not match the format. */
  | "MANIFEST_INVALID"
  /** No manifest for the requested chapter. */
  | "CHAPTER_UNKNOWN"
  /** The course folder is not the top level of a git repository (e.g. a practice folder). */
  | "NOT_A_GIT_REPO"
  /** Objects or commits the teaching history needs are missing (shallow or partial clone). */
  | "HISTORY_INCOMPLETE"
  /** The generated history does not have the shape it must have (parent, layer, …). */
  | "HISTORY_MISMATCH"
  /** The teaching branch holds commits the tooling did not generate, or is checked out. */
  | "HISTORY_BRANCH_BUSY"
  /** A git command failed for another reason. */
  | "GIT_FAILED"
  /** The practice destination already exists. */
  | "DEST_EXISTS"
  /** The practice destination lies inside the course repository. */
  | "DEST_INSIDE_REPO"
  /** The folder that should contain the practice destination does not exist. */
  | "DEST_PARENT_MISSING"
  /** The path that should be the folder containing the practice destination is a file. */
  | "DEST_PARENT_NOT_DIR"
  /** The folder that should contain the practice destination cannot be written. */
  | "DEST_PARENT_READONLY"
  /** `--source` names no commit of the repository (a command-line mistake: exit 2). */
  | "SOURCE_UNKNOWN"
  /** The chapter has no starter, so no practice folder can be made for it. */
  | "PRACTICE_UNAVAILABLE"
  /** Two sources would write the same path of a practice folder. */
  | "PRACTICE_CONFLICT"
  /** `--link-modules` was asked for but the repository has no `node_modules`. */
  | "MODULES_MISSING"
  /** A practice folder would contain a line of the chapter's reference solution. */
  | "LEAK_DETECTED"
  /** The user interrupted the command (Ctrl-C); everything it started was removed. */
  | "ABORTED"
  /** A build or test run inside a scratch folder failed. */
  | "BUILD_FAILED"
  | (string & {});

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
 * The exit status a command should end with for `error`: 2 for a mistake on the command
 * line (a usage error, a chapter the course does not have, a `--source` that names no
 * commit), 130 for an interruption, 1 for everything else.
 */
export function exitCodeFor(error: unknown): number {
  if (isCourseError(error, "USAGE") || isCourseError(error, "CHAPTER_UNKNOWN") || isCourseError(error, "SOURCE_UNKNOWN")) return 2;
  if (isCourseError(error, "ABORTED")) return 130;
  return 1;
}

/**
 * One line for the terminal: `错误 [CODE] message` for course errors, the message of any
 * other error (with its stack only when `PI_COURSE_DEBUG` is set).
 */
export function formatError(error: unknown): string {
  if (error instanceof CourseError) return `错误 [${error.code}] ${error.message.replace(/\s*\n\s*/g, " ")}`;
  if (error instanceof Error) {
    return process.env.PI_COURSE_DEBUG ? String(error.stack) : `错误 ${error.message.replace(/\s*\n\s*/g, " ")}`;
  }
  return `错误 ${String(error)}`;
}
