/**
 * Chapter 12 · where in a resource file the YAML parser's error lies.
 *
 * This module is provided: the practice folder receives it as it is, and the chapter's labs
 * never ask for it (they only ask that bad YAML is `RESOURCE_INVALID`). The challenge tier
 * asks more: the message names the line and column in the file, so a person can find the
 * mistake. `resources.ts` calls `yamlErrorPlace` when `yaml`'s `parse` throws.
 */

/**
 * Where in the file the parser's error in `yaml` lies (" at line L, column C", both 1-based),
 * or "" when it gave no position (an alias bomb). `yaml` is a frontmatter block, which starts
 * on the file's second line, after the opening `---`. The line break that ends the block
 * belongs to the closing `---` line, so an error found at the block's end (an unclosed bracket
 * or quote) is placed at the end of the last YAML line, where the thing left open is. Never
 * throws.
 */
export function yamlErrorPlace(yaml: string, caught: unknown): string {
  const pos: unknown = caught instanceof Error ? (caught as { pos?: unknown }).pos : undefined;
  if (!Array.isArray(pos) || typeof pos[0] !== "number") return "";
  const offset = Math.min(pos[0], /\r?\n$/.exec(yaml)?.index ?? yaml.length);
  const lineStart = offset === 0 ? 0 : yaml.lastIndexOf("\n", offset - 1) + 1;
  return ` at line ${yaml.slice(0, offset).split("\n").length + 1}, column ${offset - lineStart + 1}`;
}
