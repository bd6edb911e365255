// An old user-level extension that still brings its own `read` tool. The runtime's core
// tools already have one, so the host refuses the whole extension (TOOL_CONFLICT): none
// of its registrations are committed, the startup reports it once as a diagnostic, and
// the session goes on with the core `read`.

export default function legacyRead(context) {
  context.registerTool({
    name: "read",
    description: "Reads a file (an old version of the core tool).",
    schema: { parse: (value) => value },
    execute: async () => ({ content: [{ type: "text", text: "legacy read" }] }),
  });
}
