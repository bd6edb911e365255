/**
 * Chapter manifests: `checkpoints/NN.yaml`, one per chapter, in course order.
 *
 * A manifest is the single source of truth about a chapter: which files it adds to the
 * course, which starters overlay which teaching files, which tests are focused, its labs
 * (with the exact scaffold error and a four-rung hint ladder) and its faults.
 *
 * Format (version 1):
 *
 * ```yaml
 * format: 1
 * id: "12"                     # two digits, also the file name
 * title: 资源与扩展             # shown in `course(12): <title>` and by `checkpoint`
 * files:                       # every file this chapter adds (repo-relative, "/" separated)
 *   - packages/pi-course/src/resources.ts
 *   - checkpoints/12.yaml
 * starters:                    # optional; each `from` and `to` must also be in `files`
 *   - from: starters/12-resources.ts
 *     to: packages/pi-course/src/resources.ts
 * focusedTests:                # test sources (in `files`) copied into the practice folder
 *   - packages/pi-course/test/12-resources-extensions.test.ts
 * labs:                        # optional, in teaching order
 *   - id: "12.1"
 *     title: roots 顺序决定 catalog winner
 *     tests: 2
 *     scaffoldError: Lab 12.1 resource catalog 尚未实现
 *     hints: [定位文件…, 指出签名…, 伪代码…, 局部代码…]   # exactly four rungs
 * faults: []                   # optional; see FaultSpec
 * ```
 */

/** The current manifest format version. */
export const MANIFEST_FORMAT = 1;

export interface StarterOverlay {
  /** The starter file in the course repo, e.g. `starters/12-resources.ts`. */
  from: string;
  /** The teaching file it replaces in the practice folder. */
  to: string;
}

export interface LabSpec {
  /** `NN.L`, e.g. `12.1`; test names of this lab start with `Lab 12.1`. */
  id: string;
  title: string;
  /** How many tests the lab has. */
  tests: number;
  /** The exact message the starter throws for this lab. */
  scaffoldError: string;
  /** Four rungs: locate the file, name the signature, pseudocode, partial code. */
  hints: [string, string, string, string];
}

export interface FaultSpec {
  id: string;
  /** The lab whose test must catch the fault, e.g. `12.4`. */
  lab: string;
  /** One line, in Chinese: the mistake a learner makes. */
  description: string;
  /** The teaching file the fault edits. */
  file: string;
  /** Exact text that must occur exactly once in the reference file. */
  find: string;
  /** What replaces it. */
  replace: string;
  /** Names (or unique prefixes) of the test(s) that must fail. */
  killedBy: string[];
  /** True for the fault the chapter text itself uses as its exercise. */
  exercise?: boolean;
}

export interface ChapterManifest {
  format: number;
  id: string;
  title: string;
  files: string[];
  starters: StarterOverlay[];
  focusedTests: string[];
  labs: LabSpec[];
  faults: FaultSpec[];
  /** Repo-relative path of the manifest itself, e.g. `checkpoints/12.yaml`. */
  manifestPath: string;
}
