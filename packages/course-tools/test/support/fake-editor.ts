/**
 * Fake editors for `lab --open` tests: small node scripts named like the real editors that
 * record each call's arguments and working directory.
 */
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type test from "node:test";

/** One recorded start of a fake editor. */
export interface EditorCall {
  argv: string[];
  cwd: string;
}

/** A fake editor: its path (`bin/<name>` in a fresh folder) and the calls it has recorded. */
export interface FakeEditor {
  command: string;
  calls: () => EditorCall[];
}

/** A fake editor named `name` that records its calls, then exits with `status`; removed after the test. */
export async function fakeEditor(t: test.TestContext, name: string, status = 0): Promise<FakeEditor> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "pi-fake-editor-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const log = path.join(dir, "calls.jsonl");
  const command = path.join(dir, "bin", name);
  mkdirSync(path.dirname(command));
  const script = `require("node:fs").appendFileSync(${JSON.stringify(log)}, JSON.stringify({ argv: process.argv.slice(2), cwd: process.cwd() }) + "\\n"); process.exitCode = ${status};`;
  writeFileSync(command, `#!${process.execPath}\n${script}\n`);
  chmodSync(command, 0o755);
  return {
    command,
    calls: () => {
      try {
        return readFileSync(log, "utf8")
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line) as EditorCall);
      } catch {
        return [];
      }
    },
  };
}
