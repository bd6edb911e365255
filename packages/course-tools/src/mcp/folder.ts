/**
 * The folder the MCP server serves: a practice folder, known by the marker `practice` writes
 * (`.pi-course/practice.json`, read by `practice/marker.ts`, which also says the chapter).
 * Anything else is refused, at start and at every call: the course repository holds the
 * answers. No SDK here, so that a refusal at start loads nothing of it.
 */
import { normalizeChapterId } from "../core/cli.js";
import { courseCommand } from "../core/command-line.js";
import { CourseError } from "../core/errors.js";
import { isPracticeFolder, PRACTICE_MARKER } from "../core/paths.js";
import { readPracticeMarker } from "../practice/marker.js";

/** The refusal for a folder that is not (or no longer) a practice folder. */
export function notPracticeError(root: string): CourseError {
  return new CourseError(
    "MCP_NOT_PRACTICE",
    `这里不是练习目录（${root} 没有 ${PRACTICE_MARKER}）：课程的 MCP 服务只在练习目录里运行，不读课程仓库（那里的代码就是答案）。先生成一个：${courseCommand("practice", "<章号>", "<新目录>")}`,
  );
}

/** The chapter the practice folder at `root` is for, from its marker. Throws `MCP_NOT_PRACTICE`. */
export function practiceChapter(root: string): string {
  if (!isPracticeFolder(root)) throw notPracticeError(root);
  const marker = readPracticeMarker(root);
  const chapter = marker?.chapter === undefined ? undefined : normalizeChapterId(marker.chapter);
  if (chapter === undefined) {
    throw new CourseError(
      "MCP_NOT_PRACTICE",
      `${PRACTICE_MARKER} ${marker === undefined ? "读不出来" : "没有写明章号"}：它由 practice 生成，说明这是哪一章的练习目录（"chapter": "12" 这样）；重新生成练习目录`,
    );
  }
  return chapter;
}
