/**
 * How a learner types a course command, built in one place: every command line the tooling
 * prints (a usage line, the next step after a result, a hint's pointer, the practice
 * folder's `LEARNING.md`) comes from here, so that renaming a script or a workspace is one
 * edit. The commands themselves are declared in the command table (`packages/course-tools/src/cli.ts`), which
 * must declare exactly the names listed here.
 */
import { distPathOf } from "./paths.js";

/** The course commands, in the order `--help` and the bin's usage line (`LAUNCH_USAGE`) list them. */
export const COMMAND_NAMES = ["checkpoint", "practice", "lab", "hint", "fault", "reset", "mcp", "verify", "mistakes", "node-matrix"] as const;

export type CommandName = (typeof COMMAND_NAMES)[number];

/** True when `name` is a course command. */
export function isCommandName(name: string): name is CommandName {
  return (COMMAND_NAMES as readonly string[]).includes(name);
}

/**
 * The command line that runs course command `name` with `args`, as the learner types it:
 * `npm run lab -w @pi/course -- 12.1`. The version matrix is the root package's own script
 * (`npm run test:node -- 24`). The MCP server's stdout is the protocol, so npm must print
 * none of its `> …` lines there: `npm run --silent mcp -w @pi/course`. Without `args`, the
 * invocation the usage line starts with.
 */
export function courseCommand(name: CommandName, ...args: string[]): string {
  const invocation =
    name === "node-matrix" ? "npm run test:node --" : name === "mcp" ? "npm run --silent mcp -w @pi/course --" : `npm run ${name} -w @pi/course --`;
  return [invocation, ...args].join(" ");
}

/** The command that builds the course package (the chapter texts' manual first step). */
export const BUILD_COMMAND = "npm run build -w @pi/course";

/** The compiled files of `focusedTests` (repo-relative sources), named one by one (no shell glob needed). */
export function focusedTestFiles(focusedTests: readonly string[]): string {
  return focusedTests.map(distPathOf).join(" ");
}

/** The focused command for one lab, exactly as the chapter texts print it (no shell glob). */
export function manualLabCommand(focusedTests: readonly string[], labId: string): string {
  return `node --test --test-name-pattern="Lab ${labId}" ${focusedTestFiles(focusedTests)}`;
}

/** A chapter's compiled test files as a shell glob (for chapters without focused tests worth naming). */
export function chapterTestGlob(id: string): string {
  return `packages/pi-course/dist/test/${id}-*.test.js`;
}
