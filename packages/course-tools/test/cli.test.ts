// test-process: shared
/**
 * `packages/course-tools/src/cli.ts`, the command table: every command is declared there once, its `--help`
 * and its usage errors come from that declaration, and the table of exit statuses in
 * `docs/commands.md` is the rendering of the same contract.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { COMMANDS, LAUNCH_USAGE, parseCommand, runCommandLine } from "../src/cli.js";
import { COMMAND_NAMES, courseCommand } from "../src/core/command-line.js";
import { exitStatusTable } from "../src/core/exit-status.js";
import { courseRoot } from "../src/core/paths.js";

/** Runs a command line in-process (in the course, or in the folder `root`), capturing what it writes. */
async function run(argv: string[], root = courseRoot): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await runCommandLine(argv, {
    root,
    io: { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } },
  });
  return { code, stdout, stderr };
}

test("the table declares exactly the course's commands, in their order", () => {
  assert.deepEqual(Object.keys(COMMANDS), [...COMMAND_NAMES]);
  for (const name of COMMAND_NAMES) assert.equal(COMMANDS[name].name, name);
});

test("every --help is rendered from its declaration: usage, options with -h, exit statuses", async () => {
  for (const name of COMMAND_NAMES) {
    const { code, stdout, stderr } = await run([name, "--help"]);
    assert.equal(code, 0, `${name}: ${stderr}`);
    assert.ok(stdout.startsWith(`用法：${courseCommand(name)} `), `${name}: ${stdout.split("\n")[0]}`);
    for (const part of ["\n选项：\n", "  -h, --help", "\n退出码：\n", "\n  0  ", "\n  1  ", "\n  2  ", "\n  中断  "])
      assert.ok(stdout.includes(part), `${name} --help has ${JSON.stringify(part)}`);
    assert.equal((await run([name, "-h"])).stdout, stdout);
  }
});

test("help wins over anything else on the line; a usage error is one line and exit 2 for every command", async () => {
  assert.equal(parseCommand("checkpoint", ["--help", "not-a-chapter"]).help, true);
  for (const name of COMMAND_NAMES) {
    const { code, stdout, stderr } = await run([name, "--no-such-option"]);
    assert.equal(code, 2, name);
    assert.equal(stdout, "");
    assert.equal(stderr, "错误 [USAGE] 未知选项 --no-such-option（见 --help）\n", name);
  }
});

test("an unknown command is the bin's usage line, exit 2", async () => {
  for (const argv of [[], ["deploy"]]) {
    const { code, stderr } = await run(argv);
    assert.equal(code, 2);
    assert.equal(stderr, `${LAUNCH_USAGE}\n`);
  }
  assert.match(LAUNCH_USAGE, /^usage: pi-course <checkpoint\|practice\|lab\|hint\|fault\|reset\|mcp\|verify\|mistakes\|node-matrix> \[args\]$/);
});

test("the table of exit statuses in docs/commands.md is the contract's rendering", () => {
  const doc = readFileSync(path.join(courseRoot, "docs", "commands.md"), "utf8");
  const block = /<!-- exit-statuses: begin -->\n([\s\S]*?)\n<!-- exit-statuses: end -->/.exec(doc)?.[1];
  const expected = exitStatusTable(Object.values(COMMANDS));
  assert.equal(block, expected, `docs/commands.md between the exit-statuses markers should read:\n${expected}`);
});

test("author commands refuse in a practice folder with AUTHOR_ONLY, naming the course repository; learner commands are not refused", async (t) => {
  const folder = mkdtempSync(path.join(os.tmpdir(), "pi-author-only-"));
  t.after(() => rmSync(folder, { recursive: true, force: true }));
  mkdirSync(path.join(folder, ".pi-course"));
  const course = path.join(os.tmpdir(), "the-course-repo");
  writeFileSync(path.join(folder, ".pi-course", "practice.json"), JSON.stringify({ chapter: "12", course, createdBy: "practice" }));
  for (const [argv, shown] of [
    [["verify", "12"], "npm run verify -w @pi/course -- 12"],
    [["checkpoint", "3"], "npm run checkpoint -w @pi/course -- 3"],
    [["practice", "12", "../elsewhere"], "npm run practice -w @pi/course -- 12"],
    [["node-matrix", "24"], "npm run test:node --"],
    [["fault", "12", "--all"], "npm run fault -w @pi/course -- 12 --all"],
  ] as const) {
    const { code, stderr } = await run([...argv], folder);
    assert.equal(code, 1, argv.join(" "));
    assert.match(stderr, /^错误 \[AUTHOR_ONLY\] /, argv.join(" "));
    assert.ok(stderr.includes(course) && stderr.includes(shown), `${argv.join(" ")}: ${stderr}`);
  }
  // --help still answers, and the learner's commands get past the refusal (here: to their own errors).
  assert.equal((await run(["verify", "--help"], folder)).code, 0);
  assert.doesNotMatch((await run(["fault", "12", "--list"], folder)).stderr, /AUTHOR_ONLY/);
  assert.doesNotMatch((await run(["lab", "12"], folder)).stderr, /AUTHOR_ONLY/);
  // Without a recorded course the message still says where to go.
  writeFileSync(path.join(folder, ".pi-course", "practice.json"), JSON.stringify({ chapter: "12" }));
  assert.match((await run(["verify", "12"], folder)).stderr, /AUTHOR_ONLY.*课程仓库里/);
});
