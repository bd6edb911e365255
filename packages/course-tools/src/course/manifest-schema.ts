/**
 * The manifest's format (`chapter.yaml`, version 1) as one zod schema: each field, whether it
 * is optional, what it holds (`.describe()`), and the message each rule gives when broken.
 * The parsed manifest's types (`manifest.ts`) are inferred from it, and the format's
 * description in `docs/chapter-home.md` is rendered from it (`manifest-format.ts`; a test keeps
 * the two equal).
 *
 * The schema checks what one value's shape says: a repo-relative path, a non-empty string, a
 * positive integer, exactly four hints, identifiers and section numbers, no unknown field.
 * What relates values to each other, to the manifest's file name or to its home (a starter's
 * `to` among `files`, home-relative paths, a lab id of the chapter) is `parseManifest`'s
 * post-pass (`manifest.ts`). Faults are only outlined here (objects with a string `id`, and a
 * `lab` outside a lab entry): the fault tooling validates the rest (`faults.ts`).
 *
 * Each rule's error is the course's "expected" text (`字段 X 应为<expected>`), followed by what
 * was found where that helps; `manifestIssueMessage` turns zod's first issue into the message.
 * zod is loaded the first time the schema is needed (`manifestSchema()`), so a command whose
 * manifests are remembered (`manifest-cache.ts`) never loads it.
 */
import { createRequire } from "node:module";
import type * as Zod from "zod";
import { SECTION_NUMBER_SOURCE } from "./sections.js";

/** The current manifest format version. */
export const MANIFEST_FORMAT = 1;

/** A top-level declaration's name, as a lab's `declarations` and a fault's `in` write it. */
export const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const SECTION_NUMBER = new RegExp(`^${SECTION_NUMBER_SOURCE}$`);

/** A value as an error message shows it (Chinese, like the messages). */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "数组";
  if (typeof value === "string") return `字符串 ${JSON.stringify(value)}`;
  if (typeof value === "object") return "对象";
  return `${typeof value} ${String(value)}`;
}

/** `，实际为 <value>`: what a message adds about the value it refused (nothing for a field left out). */
export const found = (value: unknown): string => (value === undefined ? "" : `，实际为 ${describeValue(value)}`);

/** An error option saying what was expected and what was found instead. */
const expecting = (expected: string) => ({ error: (issue: { input?: unknown }) => `${expected}${found(issue.input)}` });

/** A repo-relative path: "/"-separated, no empty, `.` or `..` segment, no `\`, no drive, no leading "/". */
function isRepoPath(p: string): boolean {
  return !p.includes("\\") && !/^[A-Za-z]:/.test(p) && p.split("/").every((s) => s !== "" && s !== "." && s !== "..");
}

function build(z: typeof Zod) {
  const text = z.string(expecting("非空字符串")).refine((s) => s.trim() !== "", expecting("非空字符串"));
  const repoPath = text.refine(isRepoPath, expecting("仓库内的相对路径（用 / 分隔，不含 .、..、\\ 或开头的 /）"));
  const list = <T extends Zod.ZodType>(element: T) => z.array(element, expecting("数组"));
  /** A list that may be left out (or empty in YAML: `starters:`); the parsed manifest holds `[]` then. */
  const optionalList = <T extends Zod.ZodType>(element: T) =>
    list(element)
      .nullish()
      .transform((entries) => entries ?? []);
  /** A mapping of exactly these keys (those not optional required). */
  const mapping = <S extends Zod.ZodRawShape>(shape: S) =>
    z.strictObject(shape, {
      error: (issue) =>
        issue.code === "unrecognized_keys" ? `以下之一：${Object.keys(shape).join(", ")}（未知字段）` : `一个映射（key: value）${found(issue.input)}`,
    });
  /** A fault's outline: the fault tooling (`faults.ts`) validates and defaults the rest, passed through untouched. */
  const faultOutline = <S extends Zod.ZodRawShape>(shape: S) => z.looseObject(shape, expecting("一个映射（key: value）"));

  const starter = mapping({
    from: repoPath.optional().describe("a hand-kept starter (in the home); or `scaffold`"),
    scaffold: repoPath.optional().describe("the scaffold (in the home) the starter is derived from, with the reference `to` (course/starters.ts)"),
    to: repoPath.describe("the teaching file it replaces in the practice folder (in `files`)"),
  })
    .refine((s) => (s.from === undefined) !== (s.scaffold === undefined), {
      error: "恰好有 from（手写的 starter）或 scaffold（导出 starter 的脚手架文件）之一的映射",
    })
    .transform((s): { from: string; to: string; scaffold?: true } =>
      s.scaffold === undefined ? { from: s.from!, to: s.to } : { from: s.scaffold, to: s.to, scaffold: true },
    );

  const keptSolution = mapping({
    file: repoPath.describe("a whole teaching file written another way, in the home"),
    replaces: repoPath.describe("the teaching file (a starter's `to`) it is built in place of"),
  });

  const challengeTest = mapping({
    file: repoPath.describe("a test file (in `files`, not focused)"),
    title: text.describe("the theme, as the challenge table shows it"),
  });

  const positive = "正整数（该 Lab 的测试数）";
  const lab = mapping({
    id: text.describe('"<chapter number>.<n>", one-digit chapters too: "3.1", never "03.1"'),
    title: text.describe("the same title in the text's heading, the banners, the tests"),
    tests: z
      .number(expecting(positive))
      .int(expecting(positive))
      .min(1, expecting(positive))
      .describe("how many tests the lab has (test names start with `Lab 12.1`)"),
    scaffoldError: text.describe("the exact message the starter throws for this lab"),
    declarations: optionalList(text.regex(IDENTIFIER, expecting("一个顶层声明的名字"))).describe(
      "the starter's declarations marked 🔨 Lab 12.1 (`verify` holds them to the starter)",
    ),
    sections: optionalList(text.regex(SECTION_NUMBER, expecting('正文的节号（如 "11"、"3.4"，契约条目 "C3.4"）'))).describe(
      "the text's sections: the lab's own (its heading names the lab) first, then those stating the rules it checks",
    ),
    challenge: optionalList(repoPath).describe("challenge themes (files of `challenge.tests`) that go beyond this lab"),
    hints: z
      .tuple([text, text, text, text], {
        error: (issue) =>
          Array.isArray(issue.input) ? `恰好 4 级提示（定位文件、签名、伪代码、局部代码），实际 ${issue.input.length} 级` : `数组${found(issue.input)}`,
      })
      .describe("exactly four rungs: locate the file, name the signature, pseudocode, partial code"),
    faults: optionalList(faultOutline({ id: text })).describe("this lab's faults (their `lab` implied), validated by the fault tooling (course/faults.ts)"),
  });

  const manifest = mapping({
    format: z.literal(MANIFEST_FORMAT, expecting(`格式版本 ${MANIFEST_FORMAT}`)).describe("the manifest format version"),
    id: z
      .string(expecting('带引号的两位数字字符串，例如 "12"'))
      .regex(/^\d{2}$/, expecting('带引号的两位数字字符串，例如 "12"'))
      .describe("two digits, quoted; also the home's (chapters/12-<slug>/)"),
    title: text.describe("shown in `course(12): <title>` and by `checkpoint`"),
    files: list(repoPath)
      .min(1, expecting("至少一个文件的数组"))
      .describe('every file the chapter adds outside its home (repo-relative, "/"-separated, each once); the home\'s files are its own'),
    starters: optionalList(starter).describe("the practice folder's starters, one per teaching file: exactly one of `from` and `scaffold` each"),
    focusedTests: list(repoPath).min(1, expecting("至少一个测试文件的数组")).describe("test sources (in `files`) copied into the practice folder"),
    provided: optionalList(repoPath).describe("chapter files (in `files`, not a starter, teaching file or focused test) the practice folder gets as they are"),
    text: repoPath.optional().describe("the chapter text, in the home; copied into the practice folder too"),
    solutions: optionalList(z.union([repoPath, keptSolution], expecting("仓库内的相对路径，或 { file, replaces } 的映射"))).describe(
      "correct solutions `verify` keeps green (.ts files in the home), each built in place of a teaching file; with one teaching file an entry may be the path alone",
    ),
    challenge: mapping({
      text: repoPath.optional().describe("its rules (in the home), read after the chapter text; its numbers do not repeat the text's"),
      tests: list(challengeTest).describe("one theme each, in order"),
      support: optionalList(repoPath).describe("files those tests import (in `files`), copied with them"),
    })
      .optional()
      .describe("the challenge tier (`lab NN --challenge`)"),
    labs: optionalList(lab).describe("in teaching order; each entry is the lab's address"),
    faults: optionalList(faultOutline({ id: text, lab: text })).describe(
      "faults outside any lab entry, each naming its `lab` (fixtures only: `verify` wants every fault under its lab)",
    ),
  });

  return { manifest, starter, keptSolution, challengeTest, lab };
}

type Schemas = ReturnType<typeof build>;

/** The manifest as the schema gives it back: defaults applied, starters in their parsed shape, paths as written (home-relative where the format says so). */
export type ManifestDocument = Zod.output<Schemas["manifest"]>;
/** A starter: the hand-kept file or scaffold (`from`; `scaffold` set for a scaffold) and the teaching file `to` it replaces. */
export type StarterOverlaySchema = Zod.output<Schemas["starter"]>;
export type KeptSolutionSchema = Zod.output<Schemas["keptSolution"]>;
export type ChallengeTestSchema = Zod.output<Schemas["challengeTest"]>;
export type LabSchema = Zod.output<Schemas["lab"]>;

let schemas: Schemas | undefined;

/** The schemas, built the first time they are asked for (zod is loaded then, not before). */
export function manifestSchema(): Schemas {
  schemas ??= build(createRequire(import.meta.url)("zod") as typeof Zod);
  return schemas;
}

/** An issue as zod reports it, as far as the message needs it. */
interface Issue {
  code: string;
  path: PropertyKey[];
  message: string;
  keys?: string[];
  errors?: Issue[][];
}

/** `files[14]`, `labs[2].hints`, `(根)` for the whole document. */
function fieldPath(path: readonly PropertyKey[]): string {
  const field = path.map((key) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`)).join("");
  return field === "" ? "(根)" : field.replace(/^\./, "");
}

/**
 * The issue a message reports: the first, as the manifest reads; but an unknown key comes
 * before anything inside its mapping (a misspelt field is named, not the field it lacks); and
 * an entry that may take two forms (a solution: a path or a mapping) reports the form it has.
 */
function reported(issues: readonly Issue[]): Issue {
  const first = issues[0]!;
  const within = (outer: Issue) => outer.path.length <= first.path.length && outer.path.every((key, i) => key === first.path[i]);
  const chosen = issues.find((issue) => issue.code === "unrecognized_keys" && within(issue)) ?? first;
  if (chosen.code !== "invalid_union") return chosen;
  const shaped = (chosen.errors ?? []).filter((branch) => !(branch.length === 1 && branch[0]!.code === "invalid_type" && branch[0]!.path.length === 0));
  if (shaped.length !== 1) return chosen;
  const inner = reported(shaped[0]!);
  return { ...inner, path: [...chosen.path, ...inner.path] };
}

/**
 * The `MANIFEST_INVALID` message for what zod found wrong in `file`:
 * `<file>: 字段 <field> 应为<expected>[，实际为 <value>]`.
 */
export function manifestIssueMessage(file: string, issues: readonly Issue[]): string {
  const issue = reported(issues);
  const path = issue.code === "unrecognized_keys" ? [...issue.path, issue.keys?.[0] ?? ""] : issue.path;
  return `${file}: 字段 ${fieldPath(path)} 应为${issue.message}`;
}
