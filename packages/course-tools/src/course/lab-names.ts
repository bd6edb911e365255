/**
 * How a test belongs to a lab: by its name. Lab tests are top-level `test()` calls whose
 * names start with the lab id (`Lab 12.1 · …`), so that node's `--test-name-pattern` selects
 * one lab, and `12.1` never selects `12.10`. The one place this rule is written.
 */

const LAB_NAME = /^Lab (\d+\.\d+)(?!\d)/;

/** `text` with every character a regular expression treats specially escaped. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The lab id a test name starts with (`"Lab 12.1 · x"` → `"12.1"`), or undefined. */
export function labIdOfTestName(name: string): string | undefined {
  return LAB_NAME.exec(name)?.[1];
}

/**
 * The `--test-name-pattern` that selects exactly the tests of lab `id`: names starting with
 * `Lab <id>` not followed by another digit, so `12.1` never selects `12.10`.
 */
export function labNamePattern(id: string): string {
  return `^Lab ${escapeRegExp(id)}(?![0-9])`;
}

/** True when a test called `name` belongs to lab `lab` (`Lab 12.1 …`, not `Lab 12.10`). */
export function testBelongsToLab(name: string, lab: string): boolean {
  return name.startsWith(`Lab ${lab}`) && !/^\d/.test(name.slice(`Lab ${lab}`.length));
}

/** The name pattern selecting exactly the tests of the labs `ids` (`^Lab (?:12\.1|12\.2)(?![0-9])`). */
export function labsNamePattern(ids: readonly string[]): string {
  return `^Lab (?:${ids.map(escapeRegExp).join("|")})(?![0-9])`;
}

/** The name pattern selecting every lab test of chapter `id` (`^Lab 12\.[0-9]`). */
export function chapterNamePattern(id: string): string {
  return `^Lab ${Number(id)}\\.[0-9]`;
}

/** A `--test-name-pattern` selecting exactly the top-level tests called `names`. */
export function exactNamesPattern(names: readonly string[]): string {
  return `^(?:${names.map(escapeRegExp).join("|")})$`;
}
