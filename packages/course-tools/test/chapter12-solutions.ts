/**
 * Correct solutions of chapter 12's `loadExtension`, written in ways the reference does not
 * write it, for the tests of the fault exercise's placement: each is the reference with only
 * that function replaced.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseModule, topLevelDeclarations } from "../src/ts/source.js";
import { repoRoot } from "./support/lab-fixture.js";

const REFERENCE = readFileSync(path.join(repoRoot, "packages/pi-course/src/resources.ts"), "utf8");

/** The reference with its `loadExtension` replaced by `replacement`. */
export function withLoadExtension(replacement: string): string {
  const declaration = topLevelDeclarations(parseModule(REFERENCE)).find((d) => d.name === "loadExtension");
  assert.ok(declaration, "the reference has loadExtension");
  return REFERENCE.slice(0, declaration.codeStart) + replacement + REFERENCE.slice(declaration.end);
}

/** One line for the untrusted branch; destructured, renamed options; source called `src`. */
export const ONE_LINE = `export async function loadExtension(src: ExtensionSource, { host, isTrusted, importModule: load = importFromPath }: LoadExtensionOptions): Promise<LoadExtensionResult> {
  const impl = hostImplementation(host);
  if (impl.isActive(src.id)) throw new ResourceError("EXTENSION_DUPLICATE", \`extension "\${src.id}" is already active\`);
  const frozen: Readonly<ExtensionSource> = Object.freeze({ id: src.id, path: src.path });
  if ((await isTrusted(frozen)) !== true) return { id: frozen.id, status: "skipped_untrusted" };
  const factory = factoryOf(await load(frozen), frozen.id);
  const staged = impl.stage(frozen.id);
  await runFactory(factory, staged, frozen.id, FACTORY_TIMEOUT_MS);
  staged.commit();
  return { id: frozen.id, status: "active" };
}`;

/** An arrow function; options called `opts`; the untrusted result in an unbraced \`else\`, over several lines. */
export const ARROW_ELSE = `export const loadExtension = async (extension: ExtensionSource, opts: LoadExtensionOptions): Promise<LoadExtensionResult> => {
  const host = hostImplementation(opts.host);
  if (host.isActive(extension.id)) {
    throw new ResourceError("EXTENSION_DUPLICATE", \`extension "\${extension.id}" is already active\`);
  }
  const frozen = Object.freeze({ id: extension.id, path: extension.path });
  const verdict = await opts.isTrusted(frozen);
  if (verdict === true) {
    const module = await (opts.importModule ?? importFromPath)(frozen);
    const staged = host.stage(frozen.id);
    await runFactory(factoryOf(module, frozen.id), staged, frozen.id, FACTORY_TIMEOUT_MS);
    staged.commit();
    return { id: frozen.id, status: "active" };
  } else
    return {
      id: frozen.id,
      status: 'skipped_untrusted',
    };
};`;

/** A rest parameter for the options; the untrusted return shares its line with other code in a block. */
export const INLINE_REST = `export async function loadExtension(s: ExtensionSource, { host: given, ...rest }: LoadExtensionOptions): Promise<LoadExtensionResult> {
  const host = hostImplementation(given);
  if (host.isActive(s.id)) throw new ResourceError("EXTENSION_DUPLICATE", \`extension "\${s.id}" is already active\`);
  const frozen = Object.freeze({ ...s });
  const trusted = (await rest.isTrusted(frozen)) === true;
  if (!trusted) { void frozen; return { id: frozen.id, status: "skipped_untrusted" as const }; }
  const staged = host.stage(frozen.id);
  await runFactory(factoryOf(await (rest.importModule ?? importFromPath)(frozen), frozen.id), staged, frozen.id, FACTORY_TIMEOUT_MS);
  staged.commit();
  return { id: frozen.id, status: "active" };
}`;
