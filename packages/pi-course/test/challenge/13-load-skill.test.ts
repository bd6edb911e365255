/**
 * Chapter 13 challenge · `load_skill` under hostile arguments (what a JSON parser hands
 * over, names that look right and are not, Object.prototype's own keys), disk changes the
 * labs do not make (a FIFO, a link to a file outside, a folder in place of SKILL.md),
 * fifty loads at once, bodies near the size limit, and a caller that edits what it passed.
 * Not a lab: `lab 13 --challenge` runs it on the learner's own runtime.ts.
 *
 * Why a real host needs it: the arguments come from the model, which reads whatever the
 * workspace puts in front of it; the files belong to whoever wrote the repository. Every
 * answer is a paired result with a stable code, at once, and never a path.
 */
import assert from "node:assert/strict";
import * as fsp from "node:fs/promises";
import path from "node:path";
import test, { type TestContext } from "node:test";
import { discoverResources } from "../../src/resources.js";
import { createLoadSkillTool, type SkillLoad } from "../../src/runtime.js";
import { createToolExecutor, ToolRegistry, type Tool } from "../../src/tool.js";
import { textOf, type ToolResultMessage } from "../../src/types.js";
import { check, fifoOrSkip, put, skillFile, symlinkOrSkip, workspace } from "../fixtures/13-runtime.js";

/** A load_skill tool over a fresh project (review, lint) and a way to call it through Chapter 06's executor. */
async function setup(t: TestContext, files: Record<string, string> = {}) {
  const { base, project } = await workspace(t);
  await put(project, {
    "skills/review/SKILL.md": skillFile("review", "Use when reviewing", "REVIEW BODY"),
    "skills/lint/SKILL.md": skillFile("lint", "Use when linting", "LINT BODY"),
    ...files,
  });
  const resources = await discoverResources([project]);
  const loads: SkillLoad[] = [];
  const tool = createLoadSkillTool({ resources, hidden: [], onLoad: (load) => loads.push(load) });
  const execute = createToolExecutor(new ToolRegistry([tool as Tool]));
  let calls = 0;
  const call = (args: unknown): Promise<ToolResultMessage> =>
    execute({ type: "toolCall", id: `c-${++calls}`, name: "load_skill", arguments: args as Record<string, unknown> });
  return { base, project, resources, tool, call, loads };
}

test("load_skill: hostile arguments are refused before any file is read", async (t) => {
  const ws = await setup(t);
  await fsp.rm(path.join(ws.project, "skills", "review", "SKILL.md")); // any read of review now says skill_changed
  const refused: [string, unknown][] = [
    ['JSON 里的 "__proto__" 字段', JSON.parse('{"__proto__": {"name": "review"}}')],
    ['name 之外还有 JSON 的 "__proto__"', JSON.parse('{"name": "review", "__proto__": null}')],
    ["name 之外还有 constructor", JSON.parse('{"name": "review", "constructor": "x"}')],
    ["名字是数组", { name: ["review"] }],
    ["名字是带 toString 的对象", { name: { toString: () => "review" } }],
    ["参数是数字", 7],
    ["参数是 undefined", undefined],
  ];
  const unknown: [string, unknown][] = [
    ["结尾多一个换行", { name: "review\n" }],
    ["结尾多一个空格", { name: "review " }],
    ["西里尔字母的 і", { name: "rev\u0456ew" }],
    ["全角字母", { name: "ｒｅｖｉｅｗ" }],
    ["零宽连接符", { name: "rev\u200Diew" }],
    ["一百万个字符的名字", { name: "r".repeat(1_000_000) }],
    ["路径分隔符", { name: "skills/review" }],
    ["反斜杠", { name: "..\\review" }],
  ];
  await check(
    "§C4.11：参数只能是一个普通对象，name 是它自己的字符串字段：多出的字段（JSON 的 __proto__、constructor）、不是字符串的名字、不是对象的参数都以 skill_invalid_request 拒绝，而且不读盘",
    async () => {
      for (const [label, args] of refused) {
        const result = await ws.call(args);
        assert.equal(result.isError, true, label);
        assert.match(textOf(result), /skill_invalid_request/, `${label}：${textOf(result).slice(0, 200)}`);
      }
      assert.deepEqual(ws.loads, []);
    },
  );
  await check(
    "§C4.12：像名字而不是快照里那个名字的字符串（换行、空格、同形字、零宽字符、超长、路径）都是 skill_not_found，消息只有一行，而且不读盘",
    async () => {
      for (const [label, args] of unknown) {
        const result = await ws.call(args);
        assert.equal(result.isError, true, label);
        assert.match(textOf(result), /^skill_not_found: [^\n]*$/, `${label}：${textOf(result).slice(0, 200)}`);
      }
      assert.deepEqual(ws.loads, []);
    },
  );
  await check("§C4.2：原型是 null 的对象、冻结的对象也是普通对象：照常加载", async () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { name: "lint" });
    for (const args of [bare, Object.freeze({ name: "lint" })]) {
      const result = await ws.call(args);
      assert.equal(textOf(result), "LINT BODY");
    }
    assert.equal(ws.loads.length, 2);
  });
});

test("load_skill: the names of Object.prototype's own keys are no skills", async (t) => {
  const ws = await setup(t);
  await check("§C4.13：__proto__、constructor、toString、hasOwnProperty、valueOf 不在快照里：skill_not_found（查名字不能落到原型上）", async () => {
    for (const name of ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"]) {
      const result = await ws.call({ name });
      assert.ok(textOf(result).startsWith("skill_not_found: "), `${name}：${textOf(result)}`);
      assert.deepEqual(result.details, { name, code: "skill_not_found" });
    }
    assert.deepEqual(ws.loads, []);
  });
});

test("load_skill: a FIFO, a link to a file outside, a folder in place of SKILL.md", async (t) => {
  const ws = await setup(t, {
    "skills/pipe/SKILL.md": skillFile("pipe", "becomes a FIFO", "P"),
    "skills/linked/SKILL.md": skillFile("linked", "becomes a link", "L"),
    "skills/folder/SKILL.md": skillFile("folder", "becomes a folder", "F"),
  });
  const skills = path.join(ws.project, "skills");
  const expect = async (name: string, code: string) => {
    const result = await ws.call({ name });
    const said = textOf(result);
    assert.ok(said.startsWith(`${code}: `), `${name}：${said}`);
    assert.ok(!said.includes(ws.base), `${name}：消息里没有路径（${said}）`);
    assert.deepEqual(result.details, { name, code });
  };
  await check("§C4.14：SKILL.md 变成一个 FIFO：立即 skill_unreadable，不等着读它", async () => {
    await fsp.rm(path.join(skills, "pipe", "SKILL.md"));
    if (!fifoOrSkip(t, path.join(skills, "pipe", "SKILL.md"))) return;
    await expect("pipe", "skill_unreadable");
  });
  await check("§C4.14：SKILL.md 换成指向技能目录外一个文件的链接：skill_changed，外面的内容一个字都不交出", async () => {
    await put(ws.base, { "outside/SKILL.md": skillFile("linked", "outside", "OUTSIDE SECRET") });
    await fsp.rm(path.join(skills, "linked", "SKILL.md"));
    if (!(await symlinkOrSkip(t, path.join(ws.base, "outside", "SKILL.md"), path.join(skills, "linked", "SKILL.md")))) return;
    const result = await ws.call({ name: "linked" });
    assert.ok(!textOf(result).includes("OUTSIDE SECRET"));
    await expect("linked", "skill_changed");
  });
  await check("§C4.14：SKILL.md 换成一个目录：skill_unreadable 或 skill_changed，总之是错误结果，不是异常", async () => {
    await fsp.rm(path.join(skills, "folder", "SKILL.md"));
    await fsp.mkdir(path.join(skills, "folder", "SKILL.md"));
    const result = await ws.call({ name: "folder" });
    assert.match(textOf(result), /^skill_(unreadable|changed): /);
  });
  assert.deepEqual(ws.loads, []);
});

test("load_skill: fifty loads at once each read the whole body and each is recorded", async (t) => {
  const ws = await setup(t);
  const file = path.join(ws.project, "skills", "review", "SKILL.md");
  await check("§C4.15：五十次同时加载（两个技能交替）：每次都拿到自己那个技能的完整正文，五十次都记录；改写之后的五十次都拿到新正文", async () => {
    const batch = () => Promise.all(Array.from({ length: 50 }, (_, index) => ws.call({ name: index % 2 === 0 ? "review" : "lint" })));
    const first = await batch();
    first.forEach((result, index) => {
      assert.equal(textOf(result), index % 2 === 0 ? "REVIEW BODY" : "LINT BODY", String(index));
    });
    await fsp.writeFile(file, skillFile("review", "Use when reviewing", "REVIEW BODY, SECOND EDITION"));
    const second = await batch();
    second.forEach((result, index) => {
      assert.equal(textOf(result), index % 2 === 0 ? "REVIEW BODY, SECOND EDITION" : "LINT BODY", String(index));
    });
    assert.equal(ws.loads.length, 100);
    assert.ok(ws.loads.every((load) => load.by === "model"));
  });
});

test("load_skill: a body of almost 1 MiB comes back whole", async (t) => {
  const body = `${"字".repeat(300_000)}END`;
  const ws = await setup(t, { "skills/big/SKILL.md": skillFile("big", "a big body", body) });
  await check("§C4.4：正文不超过第 12 章的 1 MiB，就原样整段交回，不截断", async () => {
    const result = await ws.call({ name: "big" });
    assert.equal(result.isError, false);
    assert.equal(textOf(result), body);
  });
});

test("load_skill: the tool serves the snapshot it was given, not the caller's later edits", async (t) => {
  const { project } = await workspace(t);
  await put(project, { "skills/review/SKILL.md": skillFile("review", "d", "BODY") });
  const resources = await discoverResources([project]);
  const withheld: string[] = [];
  const tool = createLoadSkillTool({ resources, hidden: withheld });
  resources.skills.length = 0;
  withheld.push("review");
  const execute = createToolExecutor(new ToolRegistry([tool as Tool]));
  await check("§C4.16：createLoadSkillTool 留下自己的一份快照和隐藏名单：调用者之后清空资源清单、往 hidden 里加名字，工具都不受影响", async () => {
    const result = await execute({ type: "toolCall", id: "1", name: "load_skill", arguments: { name: "review" } });
    assert.equal(textOf(result), "BODY");
  });
});
