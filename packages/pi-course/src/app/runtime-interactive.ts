/**
 * `npm start -- --interactive`: a conversation with the runtime, one line per user turn.
 *
 * Each line is a turn (`/skill:<名字> [文字]` and `/template:<名字> key=value …` work as
 * in `--input`); `/reload` reloads, `/help` lists the commands, `/exit` (or the end of the
 * input, Ctrl-D) ends the session. Lines typed while a turn runs wait their turn.
 *
 * Ctrl-C follows one rule: a Ctrl-C stops the running turn through the signal of the
 * runtime's `prompt` (its model request and its running tool get it; the calls it had
 * completed stay in the session, the others are paired with error results) and arms the next one;
 * an armed Ctrl-C ends the session. A line typed in between disarms it. So one Ctrl-C during
 * a turn stops that turn, two end the session, and at the prompt the first one only says
 * how to leave.
 *
 * This module is provided: no lab asks for it.
 */
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { errorMessage } from "../async.js";
import { isUnfinishedLab } from "./demo.js";
import type { RuntimeSession } from "./runtime-demo.js";
import { contextTokensNeeded, overflowHint } from "./runtime-transcript.js";
import { codeOf } from "./start.js";

/** The commands the session understands itself, as `/help` lists them. */
export const INTERACTIVE_HELP = [
  "命令  每行一条消息，交给模型；/skill:<名字> [文字] 强制加载一个技能，/template:<名字> key=value … 展开一个模板",
  "      /reload 重新发现资源、重新加载扩展（会话保留）· /help 本帮助 · /exit 或 Ctrl-D 结束",
  "      Ctrl-C 停下正在进行的这一轮；再按一次结束会话",
];

/**
 * A filter for Ctrl-C: true for a press, false for the second delivery of the same one. Under
 * `npm start` a Ctrl-C typed in a terminal reaches this process twice (the terminal signals the
 * whole foreground group, and npm forwards what it got), within a millisecond or two; a second
 * press takes far longer. Outside npm every signal counts.
 */
export function interruptFilter(env: NodeJS.ProcessEnv = process.env): () => boolean {
  const windowMs = env.npm_lifecycle_event !== undefined ? 20 : 0;
  let last = -Infinity;
  return () => {
    const now = performance.now();
    const counts = now - last >= windowMs;
    last = now;
    return counts;
  };
}

export interface InteractiveOptions {
  session: RuntimeSession;
  /** Where the lines come from. */
  input: NodeJS.ReadableStream;
  /** Where the prompt is drawn when `terminal` (the transcript goes through the session). */
  output: NodeJS.WritableStream;
  /** True when `input` is a terminal: then a prompt is shown and Ctrl-C arrives as a key. */
  terminal: boolean;
  /** A first turn, run before the first line is read (`--input`). */
  firstInput?: string;
  /** Registers the process's interrupt handler and returns how to remove it; default `process.on("SIGINT")`. */
  onInterrupt?(handler: () => void): () => void;
  /** Ends the process now (an armed Ctrl-C while a turn is still running); default `process.exit`. */
  exit?(status: number): void;
  /** Tells whether this runs under npm (see `interruptFilter`); default `process.env`. */
  env?: NodeJS.ProcessEnv;
}

/** Registers `handler` for the process's SIGINT (Ctrl-C) and returns how to remove it. */
export const onProcessInterrupt = (handler: () => void): (() => void) => {
  process.on("SIGINT", handler);
  return () => process.removeListener("SIGINT", handler);
};

/**
 * Runs the conversation until `/exit`, the end of the input, or an armed Ctrl-C, and
 * resolves with the exit status: 130 after Ctrl-C ended the session; else 1 when any turn
 * failed (a provider error, an unknown skill, a request too large: `失败  [CODE]`), even if
 * later turns went well, as the docs promise for every failure; else 0. A turn stopped by
 * one Ctrl-C (`TURN_ABORTED`) is the user's choice, not a failure. A failed turn is printed
 * and the session goes on; a refused one leaves the conversation as it was before it, or
 * keeps the exchange it had completed when a later request was refused (the runtime's rule,
 * see `RuntimeSession.turn`), which is said. Only the learner's scaffold error
 * (`Lab N.M … 尚未实现`) ends it, by rejecting with it.
 */
export async function runInteractive(options: InteractiveOptions): Promise<number> {
  const { session, terminal } = options;
  const transcript = session.transcript;
  const rl = createInterface({ input: options.input, ...(terminal ? { output: options.output } : {}), terminal, prompt: "› " });
  // Taken at once, so that lines arriving during the first turn are queued, not lost.
  const lines = rl[Symbol.asyncIterator]();
  let running: AbortController | undefined;
  let armed = false;
  let status = 0;
  let failed = 0;
  const isPress = interruptFilter(options.env);

  const interrupt = () => {
    if (!isPress()) return;
    if (armed) {
      status = 130;
      transcript.note("退出  Ctrl-C：会话结束");
      if (running === undefined) rl.close();
      else {
        // The turn is still finishing a tool: leave now, after removing the copies.
        running.abort(new Error("会话结束"));
        void session.close().finally(() => (options.exit ?? process.exit)(130));
      }
      return;
    }
    armed = true;
    if (running !== undefined) {
      running.abort(new Error("用户按了 Ctrl-C"));
      transcript.note("中断  正在停下这一轮……（再按一次 Ctrl-C 结束会话）");
    } else {
      transcript.note("提示  再按一次 Ctrl-C 结束会话（或输入 /exit）");
      if (terminal) rl.prompt();
    }
  };
  rl.on("SIGINT", interrupt);
  const removeInterrupt = (options.onInterrupt ?? onProcessInterrupt)(interrupt);

  const runTurn = async (line: string) => {
    running = new AbortController();
    try {
      const result = await session.turn(line, { signal: running.signal });
      if (result.failure !== undefined && result.failure.code !== "TURN_ABORTED") failed++;
      transcript.end(result.stopReason, session.lastTurnCounts, "turn");
    } catch (error) {
      if (isUnfinishedLab(error)) throw error;
      failed++;
      const code = codeOf(error) ?? "ERROR";
      const needed = contextTokensNeeded(error);
      const hint = code === "RUNTIME_CONTEXT_OVERFLOW" ? `；${overflowHint(needed)}` : "";
      transcript.failure({ code, message: `${errorMessage(error)}${hint}` });
      const retracted = session.lastRetracted;
      const kept = session.lastKept;
      if (retracted > 0)
        transcript.note(
          `恢复  这一轮没有完成：它的 ${retracted} 条消息已从对话里撤回，会话回到这一轮之前（${session.conversation.length} 条消息），之后的请求不会带上它`,
        );
      else if (kept > 0) transcript.note(`保留  这一轮已经完成的 ${kept} 条消息（调用和配对的结果）留在会话里：之后的请求从这里接着算，放不下的旧交互照常裁掉`);
    } finally {
      running = undefined;
    }
  };

  try {
    for (const line of INTERACTIVE_HELP) transcript.note(line);
    if (options.firstInput !== undefined) await runTurn(options.firstInput);
    if (terminal) rl.prompt();
    for await (const raw of { [Symbol.asyncIterator]: () => lines }) {
      const line = raw.trim();
      armed = false;
      if (line === "/exit" || line === "/quit") break;
      if (line === "/help") for (const help of INTERACTIVE_HELP) transcript.note(help);
      else if (line === "/reload") await session.reload();
      else if (line !== "") await runTurn(line);
      if (status === 130) break;
      if (terminal) rl.prompt();
    }
  } finally {
    removeInterrupt();
    rl.close();
  }
  transcript.end(status === 130 ? "interrupted" : "exit", session.counts, "session");
  if (status === 130) return 130;
  if (failed > 0) transcript.note(`退出  ${failed} 轮失败过（见上面的“失败”行）：退出状态 1`);
  return failed > 0 ? 1 : 0;
}
