/**
 * Chapter 01 · an experiment of Lab 1.5 (chapters/01-async/README.md §7): a `switch` over a tagged
 * union that forgot one member. The type checker refuses it at the `assertNever` line, on
 * purpose: add the missing `case` and the error goes away. Not part of the build.
 */
import { assertNever } from "../../src/async.js";

/** Three kinds of message, as Chapter 03's have. */
type Message = { role: "user"; text: string } | { role: "assistant"; text: string } | { role: "toolResult"; toolCallId: string; text: string };

/** The role an OpenAI-style API gives each of our messages. */
export function wireRole(message: Message): string {
  switch (message.role) {
    case "user":
      return "user";
    case "assistant":
      return "assistant";
    default:
      return assertNever(message, "message role");
  }
}
