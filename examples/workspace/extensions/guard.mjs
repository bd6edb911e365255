// A guard extension: before any tool runs, it looks at shell commands and refuses the
// ones that destroy work without asking. It is plain JavaScript (.mjs), so Node imports it
// as it is. The host calls the default export once, with a context that can register
// tools and hooks; a hook that returns { decision: "deny", reason } blocks the call, and
// the model receives a paired error result with that reason instead of the command's output.

const RULES = [
  { pattern: /\brm\s+-[A-Za-z]*[rRf]/, reason: "递归或强制删除（rm -r / rm -f）必须先征得用户同意" },
  { pattern: /\bgit\s+(reset\s+--hard|clean\s+-[A-Za-z]*f|push\s+(--force|-f)\b)/, reason: "会丢掉提交或未跟踪文件的 git 命令必须先征得用户同意" },
  { pattern: /\bsudo\b/, reason: "不允许提权运行命令" },
];

export default function guard(context) {
  context.on("beforeToolCall", (call) => {
    if (call.name !== "shell") return undefined;
    const command = typeof call.arguments?.command === "string" ? call.arguments.command : "";
    const rule = RULES.find((candidate) => candidate.pattern.test(command));
    return rule === undefined ? undefined : { decision: "deny", reason: rule.reason };
  });
}
