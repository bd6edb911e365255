#!/usr/bin/env node
// `npm start`: runs the compiled demo session after `npm run build`. From chapter 13 on
// that is the runtime's session (packages/pi-course/src/runtime-start.ts); at chapter 12
// it is the resources demo (packages/pi-course/src/start.ts). A compiled file counts only
// while its source is there, so a build left over from a later checkpoint is not run. At a
// checkpoint before chapter 12 neither exists; this says so instead of failing on a
// missing module.
//
// Plain JavaScript on purpose: it belongs to every checkpoint, including the base.
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const repo = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const pkg = path.join(repo, "packages", "pi-course");
const entry = ["runtime-start", "start"]
  .map((name) => ({ source: path.join(pkg, "src", `${name}.ts`), compiled: path.join(pkg, "dist", "src", `${name}.js`) }))
  .find((candidate) => existsSync(candidate.source) && existsSync(candidate.compiled));
if (entry === undefined) {
  process.stderr.write(
    "npm start 运行第 12 章的演示会话（packages/pi-course/src/start.ts），当前检出的代码里还没有它：\n" +
      "它随第 12 章加入。请在 main 或第 12 章的 target 上运行 npm start。\n",
  );
  process.exitCode = 1;
} else {
  const { main } = await import(pathToFileURL(entry.compiled).href);
  process.exitCode = await main(process.argv.slice(2));
}
