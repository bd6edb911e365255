#!/usr/bin/env node
// `npm start`: runs the compiled demo session after `npm run build`. The app lives in
// packages/pi-course/src/app/: from chapter 13 on it runs the runtime's session
// (app/runtime-start.ts); at chapter 12 the resources demo (app/start.ts). A compiled file counts only
// while its source is there, so a build left over from a later checkpoint is not run. At a
// checkpoint before chapter 12 neither exists; this says so instead of failing on a
// missing module, and in a practice folder of such a chapter it shows the chapter's labs and
// the next one to do (`lab NN`, whose exit status it keeps).
//
// Plain JavaScript on purpose: it belongs to every checkpoint, including the base.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const pkg = path.join(repo, "packages", "pi-course");
/** The chapter of the practice folder this is (its marker `.pi-course/practice.json`), or undefined outside one. */
function chapterOfPracticeFolder() {
  try {
    const { chapter } = JSON.parse(readFileSync(path.join(repo, ".pi-course", "practice.json"), "utf8"));
    return typeof chapter === "string" && /^\d{1,2}$/.test(chapter) ? chapter : undefined;
  } catch {
    return undefined;
  }
}

const entry = ["runtime-start", "start"]
  .map((name) => ({ source: path.join(pkg, "src", "app", `${name}.ts`), compiled: path.join(pkg, "dist", "src", "app", `${name}.js`) }))
  .find((candidate) => existsSync(candidate.source) && existsSync(candidate.compiled));
const practiceChapter = entry === undefined ? chapterOfPracticeFolder() : undefined;
if (entry === undefined && practiceChapter !== undefined) {
  // A practice folder of an earlier chapter: there is no session yet, but there is a lab to do next.
  process.stdout.write(`npm start 的演示会话随第 12 章加入；这里是第 ${practiceChapter} 章的练习目录。本章的 Lab 和下一步：\n\n`);
  const bin = path.join(repo, "packages", "course-tools", "bin", "pi-course.mjs");
  const lab = spawnSync(process.execPath, [bin, "lab", practiceChapter], { cwd: pkg, stdio: "inherit" });
  process.exitCode = lab.status ?? 1;
} else if (entry === undefined) {
  process.stderr.write(
    "npm start 运行第 12 章的演示会话（packages/pi-course/src/app/start.ts），当前检出的代码里还没有它：\n" +
      "它随第 12 章加入。请在 main 或第 12 章的 target 上运行 npm start。\n",
  );
  process.exitCode = 1;
} else {
  const { main } = await import(pathToFileURL(entry.compiled).href);
  process.exitCode = await main(process.argv.slice(2));
}
