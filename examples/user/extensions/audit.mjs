// A user-level extension: it lives in the user's own folder, so the user has already
// decided to run it, and the runtime loads it before it asks whether the project is
// trusted. It only observes: after every tool result it counts the results per tool.
// The count lives in module state, which is why `reload()` must import a fresh instance
// of this file: a cached instance would go on counting from where the old one stopped.

const counts = new Map();

export default function audit(context) {
  context.on("afterToolResult", (result) => {
    counts.set(result.toolName, (counts.get(result.toolName) ?? 0) + 1);
  });
}
