#!/usr/bin/env node
// `npm start`: runs the compiled demo session (packages/pi-course/src/start.ts, which
// belongs to chapter 12) after `npm run build`. At a checkpoint before chapter 12 the demo
// does not exist yet; this says so instead of failing on a missing module.
//
// Plain JavaScript on purpose: it belongs to every checkpoint, including the base.
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const repo = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const entry = path.join(repo, "packages", "pi-course", "dist", "src", "start.js");
if (!existsSync(entry)) {
  process.stderr.write(
    "npm start 运行第 12 章的演示会话（packages/pi-course/src/start.ts），当前检出的代码里还没有它：\n" +
      "它随第 12 章加入。请在 main 或第 12 章的 target 上运行 npm start。\n",
  );
  process.exitCode = 1;
} else {
  const { main } = await import(pathToFileURL(entry).href);
  process.exitCode = await main(process.argv.slice(2));
}
