/**
 * Chapter 13 challenge · user commands (`expandInput`, and a turn that starts with one)
 * under hostile input: names and keys that are Object.prototype's own, text that looks like
 * another command, huge inputs, other line endings and other whitespace, and a command that
 * fails inside a running session. Not a lab: `lab 13 --challenge` runs it on the learner's
 * own runtime.ts.
 *
 * Why a real host needs it: a user's line is pasted from anywhere (a Windows editor, a chat
 * window with full-width spaces, a log of a megabyte); a command expands exactly once, and
 * a command that fails leaves the session as it was.
 */
import assert from "node:assert/strict";
import test, { type TestContext } from "node:test";
import { discoverResources } from "../../src/resources.js";
import { expandInput, type SkillLoad } from "../../src/runtime.js";
import { turn } from "../../src/scripted-model.js";
import { textOf } from "../../src/types.js";
import { check, eventsOf, put, rejectsWith, roles, skillFile, start, workspace } from "../fixtures/13-runtime.js";

async function setup(t: TestContext) {
  const { project } = await workspace(t);
  await put(project, {
    "skills/review/SKILL.md": skillFile("review", "Use when reviewing", "Review {{target}} by the book."),
    "templates/review.md": "Review {{target}} for {{owner}}.\n",
    "templates/proto.md": "A {{constructor}} B {{toString}}\n",
    "templates/relay.md": "/skill:review {{what}}\n",
  });
  return { project, resources: await discoverResources([project]) };
}

test("commands: names and keys that are Object.prototype's own", async (t) => {
  const { resources } = await setup(t);
  await check("§C5.7：/skill:constructor、/skill:__proto__、/skill:toString 是 skill_not_found；/template:constructor 是 TEMPLATE_NOT_FOUND", async () => {
    for (const name of ["constructor", "__proto__", "toString"]) await rejectsWith(expandInput(`/skill:${name}`, resources), "skill_not_found", name);
    await rejectsWith(expandInput("/template:constructor", resources), "TEMPLATE_NOT_FOUND", "constructor");
  });
  await check(
    "§C5.7：模板要 {{constructor}} 而没给：TEMPLATE_ARGUMENT_MISSING（不是 Object 的构造函数）；给了 constructor=x toString=y 就照常渲染",
    async () => {
      await rejectsWith(expandInput("/template:proto", resources), "TEMPLATE_ARGUMENT_MISSING", "no arguments");
      const given = await expandInput("/template:proto constructor=x toString=y", resources);
      assert.equal(textOf(given.message), "A x B y");
    },
  );
  await check("§C5.7：key 是 __proto__ 的参数只是一个多余的参数：它不改变别的参数", async () => {
    const result = await expandInput("/template:review __proto__=x target=a owner=b", resources);
    assert.equal(textOf(result.message), "Review a for b.");
  });
  await check("§C5.7：__proto__ 也是一个普通的 key：写两次是 COMMAND_INVALID，和别的 key 一样", async () => {
    await rejectsWith(expandInput("/template:review __proto__=x __proto__=y target=a owner=b", resources), "COMMAND_INVALID", "__proto__ twice");
  });
});

test("commands: text that looks like another command is never expanded again", async (t) => {
  const { resources } = await setup(t);
  const loads: SkillLoad[] = [];
  await check("§C5.8：/skill: 后面的文字里的 /template:、正文里的 {{target}} 原样留下；只记一次加载", async () => {
    const result = await expandInput("/skill:review /template:review target=x owner=y", resources, { onLoad: (load) => loads.push(load) });
    assert.equal(
      textOf(result.message),
      'Skill "review" (loaded by the user for this turn):\n\nReview {{target}} by the book.\n\n/template:review target=x owner=y',
    );
    assert.equal(result.template, undefined);
    assert.equal(loads.length, 1);
  });
  await check("§C5.8：模板渲染出来的 /skill:review 只是文字：不加载技能，结果没有 skill", async () => {
    const result = await expandInput("/template:relay what=now", resources, { onLoad: (load) => loads.push(load) });
    assert.equal(textOf(result.message), "/skill:review now");
    assert.equal(result.skill, undefined);
    assert.equal(loads.length, 1);
  });
});

test("commands: huge inputs are handled whole", async (t) => {
  const { resources } = await setup(t);
  const huge = `${"日志 ".repeat(250_000)}end`;
  await check("§C5.9：一兆字节的普通文字原样成为消息；/skill: 后面跟着一兆字节的文字，它完整地接在正文后面", async () => {
    assert.equal(textOf((await expandInput(huge, resources)).message), huge);
    const forced = await expandInput(`/skill:review ${huge}`, resources);
    assert.ok(textOf(forced.message).endsWith(`\n\n${huge}`));
  });
  await check("§C5.9：一千个参数的 /template:（多余的照规则忽略）照常渲染", async () => {
    const extra = Array.from({ length: 1000 }, (_, i) => `k${i}=v${i}`).join(" ");
    const result = await expandInput(`/template:review ${extra} target=a owner=b`, resources);
    assert.equal(textOf(result.message), "Review a for b.");
  });
});

test("commands: other line endings and other whitespace", async (t) => {
  const { resources } = await setup(t);
  await check("§C5.10：CRLF 结尾、全角空格（U+3000）、不换行空格（U+00A0）都是空白：名字在它们之前结束", async () => {
    for (const [input, rest] of [
      ["/skill:review\r\ncheck it\r\n", "check it"],
      ["/skill:review\u3000检查解析器", "检查解析器"],
      ["/skill:review\u00A0now", "now"],
    ] as const) {
      const result = await expandInput(input, resources);
      assert.equal(result.skill, "review", JSON.stringify(input));
      assert.ok(textOf(result.message).endsWith(`\n\n${rest}`), JSON.stringify(textOf(result.message)));
    }
    const template = await expandInput("/template:review\u3000target=a\r\nowner=b\r\n", resources);
    assert.equal(textOf(template.message), "Review a for b.");
  });
  await check("§C5.10：前缀后面只有空白（换行、制表符、全角空格）就是没有名字：COMMAND_INVALID", async () => {
    for (const input of ["/skill:\n", "/skill:\t", "/skill:\u3000review", "/template:   ", "/template:\r\n"]) {
      await rejectsWith(expandInput(input, resources), "COMMAND_INVALID", JSON.stringify(input));
    }
  });
});

test("commands: a command that fails inside a session sends nothing, records nothing, and the next prompt runs", async (t) => {
  const { project } = await setup(t);
  const { runtime, model, events } = await start([turn("hello back")], { projectRoot: project });
  await check("§C5.11：失败的命令让这一轮以它的错误码拒绝：session、加载记录都是空的，没有 request、message、skill_load 事件，模型没被调用", async () => {
    await rejectsWith(runtime.prompt("/skill:nope"), "skill_not_found", "/skill:nope");
    await rejectsWith(runtime.prompt("/template:review target=a"), "TEMPLATE_ARGUMENT_MISSING", "owner missing");
    await rejectsWith(runtime.prompt("/template:review target"), "COMMAND_INVALID", "no =");
    assert.deepEqual(runtime.messages, []);
    assert.deepEqual(runtime.skillLoads, []);
    assert.deepEqual(
      events.filter((event) => event.type !== "diagnostic"),
      [],
    );
    assert.equal(model.requests.length, 0);
  });
  await check("§C5.11：失败的一轮不挡住下一轮：下一次请求只有新的用户消息", async () => {
    const result = await runtime.prompt("hi");
    assert.equal(result.stopReason, "stop");
    assert.deepEqual(roles(runtime.messages), ["user", "assistant"]);
    assert.deepEqual(
      eventsOf(events, "request")[0]?.messages.map((m) => textOf(m)),
      ["hi"],
    );
  });
});
