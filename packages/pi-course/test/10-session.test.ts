import assert from "node:assert/strict";
import test from "node:test";
import { SessionTree, createSession, type SessionEntry } from "../src/session.js";
import { text, textOf, userMessage, type AssistantMessage } from "../src/types.js";

/** A session with predictable ids (e1, e2, …) and timestamps (1000, 1001, …). */
function fixedSession(): SessionTree {
  let id = 0;
  let clock = 1000;
  return createSession({ newId: () => `e${++id}`, now: () => clock++ });
}

function reply(value: string): AssistantMessage {
  return { role: "assistant", content: [text(value)], timestamp: 0 };
}

const texts = (path: SessionEntry[]) => path.map((entry) => textOf(entry.message));

test("Lab 10.1 · append 把消息接到当前叶子下", () => {
  const session = fixedSession();
  const first = session.append(userMessage("hi", 5));
  const second = session.append(reply("hello"));
  assert.deepEqual(first, { type: "message", id: "e1", parentId: null, timestamp: 1000, message: userMessage("hi", 5) });
  assert.equal(second.parentId, "e1");
  assert.equal(second.timestamp, 1001);
  assert.equal(session.leafId, "e2");
  assert.deepEqual(session.get("e2"), second);
  assert.equal(session.get("missing"), undefined);
});

test("Lab 10.1 · 默认 id 唯一，默认时间戳取 Date.now()", (t) => {
  t.mock.method(Date, "now", () => 4242);
  const session = new SessionTree();
  const ids = new Set<string>();
  for (let i = 0; i < 50; i++) {
    const entry = session.append(userMessage(`m${i}`, 0));
    assert.equal(typeof entry.id, "string");
    assert.equal(entry.timestamp, 4242);
    ids.add(entry.id);
  }
  assert.equal(ids.size, 50);
});

test("Lab 10.1 · 重复的 id 被拒绝，会话不变", () => {
  const session = createSession({ newId: () => "same" });
  session.append(userMessage("one", 0));
  assert.throws(() => session.append(userMessage("two", 0)), { code: "SESSION_DUPLICATE_ID" });
  assert.deepEqual(texts(session.activePath()), ["one"]);
  assert.equal(session.entries().length, 1);
});

test("Lab 10.2 · 从较早的条目分支，新消息成为它的子节点，旧分支仍保留", () => {
  const session = fixedSession();
  session.append(userMessage("question", 0)); // e1
  session.append(reply("first answer")); // e2
  session.append(userMessage("follow-up", 0)); // e3
  session.branch("e1");
  assert.equal(session.leafId, "e1");
  assert.deepEqual(texts(session.activePath()), ["question"]);
  const retry = session.append(reply("second answer")); // e4
  assert.equal(retry.parentId, "e1");
  assert.deepEqual(texts(session.activePath()), ["question", "second answer"]);
  assert.deepEqual(
    session.entries().map((entry) => entry.id),
    ["e1", "e2", "e3", "e4"],
    "没有删除任何条目",
  );
  session.branch("e3");
  assert.deepEqual(texts(session.activePath()), ["question", "first answer", "follow-up"]);
});

test("Lab 10.2 · 分支到未知 id 抛出 SESSION_ENTRY_NOT_FOUND，叶子不动", () => {
  const session = fixedSession();
  session.append(userMessage("a", 0));
  session.append(reply("b"));
  assert.throws(() => session.branch("nope"), { code: "SESSION_ENTRY_NOT_FOUND" });
  assert.equal(session.leafId, "e2");
  assert.equal(session.append(userMessage("c", 0)).parentId, "e2");
});

test("Lab 10.2 · branch(null) 让下一条消息成为新的根", () => {
  const session = fixedSession();
  session.append(userMessage("old root", 0));
  session.branch(null);
  assert.deepEqual(session.activePath(), []);
  const root = session.append(userMessage("new root", 0));
  assert.equal(root.parentId, null);
  assert.deepEqual(texts(session.activePath()), ["new root"]);
});

test("Lab 10.3 · activePath 从根到叶子，空会话为空数组", () => {
  const session = fixedSession();
  assert.deepEqual(session.activePath(), []);
  const labels = ["u1", "a1", "u2", "a2", "u3"];
  for (const label of labels) session.append(label.startsWith("u") ? userMessage(label, 0) : reply(label));
  const path = session.activePath();
  assert.deepEqual(texts(path), labels);
  assert.equal(path[0]?.parentId, null);
  for (let i = 1; i < path.length; i++) assert.equal(path[i]?.parentId, path[i - 1]?.id);
});

test("Lab 10.3 · 会话保存副本：修改传入或取出的对象不会改写历史", () => {
  const session = fixedSession();
  const message = userMessage("original", 0);
  const appended = session.append(message);
  message.content[0]!.text = "changed after append";
  appended.message.content.push(text("via returned entry"));

  const path = session.activePath();
  path[0]!.message.content[0] = text("via activePath");
  path[0]!.parentId = "forged";
  session.entries()[0]!.id = "forged";
  const fetched = session.get("e1");
  assert.ok(fetched);
  fetched.message.role = "assistant";

  assert.deepEqual(session.activePath(), [{ type: "message", id: "e1", parentId: null, timestamp: 1000, message: userMessage("original", 0) }]);
});
