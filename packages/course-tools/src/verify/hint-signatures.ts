/**
 * The second rung of a hint ladder names signatures ("签名"): a learner copies them into the
 * starter's construction sites, so a signature that differs from the starter's sends them the
 * wrong way. This checks, for every lab, that each `name(…)` in rung 2 naming a function the
 * starter declares lists the same parameters, by name and in order (types may be left out or
 * shortened: `activateSkill(catalog, name, options?)` matches). Pure.
 */

/** The text inside the parentheses that open at `open` (the index of `(`), or undefined when they never close. */
function parenthesised(text: string, open: number): string | undefined {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const char = text[i];
    if (char === "(" || char === "{" || char === "[" || char === "<") depth++;
    else if (char === ")" || char === "}" || char === "]" || char === ">") {
      // `=>` inside a type is no closing bracket.
      if (char === ">" && text[i - 1] === "=") continue;
      depth--;
      if (depth === 0) return text.slice(open + 1, i);
    }
  }
  return undefined;
}

/** The parameter names of a parameter list: `a: T, { b }: U = {}, c?: V` → `["a", "{ b }", "c"]`. */
export function parameterNames(list: string): string[] {
  const names: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of `${list},`) {
    if ("({[<".includes(char)) depth++;
    // `=>` in a function type or a default value closes no bracket (as in `parenthesised`).
    if (")}]>".includes(char) && !(char === ">" && current.endsWith("="))) depth--;
    if (char === "," && depth === 0) {
      const trimmed = current.trim();
      if (trimmed !== "")
        names.push(
          trimmed
            .replace(/^\.\.\./, "")
            .split(/[?:=]/)[0]!
            .trim(),
        );
      current = "";
      continue;
    }
    current += char;
  }
  return names;
}

/** The parameter names of every function (or method) `source` declares, by name; the first declaration wins. */
export function declaredSignatures(source: string): Map<string, string[]> {
  const signatures = new Map<string, string[]>();
  for (const match of source.matchAll(/(?:\bfunction\s+|^[ \t]+(?:async\s+)?)([A-Za-z_$][\w$]*)\s*(?:<[^>(]*>)?\(/gm)) {
    const name = match[1]!;
    if (signatures.has(name) || ["if", "for", "while", "switch", "catch", "return"].includes(name)) continue;
    const list = parenthesised(source, match.index! + match[0].length - 1);
    if (list !== undefined) signatures.set(name, parameterNames(list));
  }
  return signatures;
}

/**
 * One message per signature in `hint` (a rung's text) that names a function of `declared` with
 * other parameters than the starter's, e.g. `discoverResources(roots) 与 starter 的
 * discoverResources(roots, options) 不一致`.
 */
export function signatureMismatches(hint: string, declared: ReadonlyMap<string, readonly string[]>): string[] {
  const problems: string[] = [];
  for (const match of hint.matchAll(/\b([A-Za-z_$][\w$]*)\(/g)) {
    const expected = declared.get(match[1]!);
    if (expected === undefined) continue;
    const list = parenthesised(hint, match.index! + match[0].length - 1);
    if (list === undefined) continue;
    const given = parameterNames(list);
    if (given.join(",") !== expected.join(",")) {
      problems.push(`${match[1]}(${given.join(", ")}) 与 starter 的 ${match[1]}(${expected.join(", ")}) 不一致`);
    }
  }
  return problems;
}
