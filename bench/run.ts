/**
 * `npm run bench -- <name> [options]`: runs one benchmark script from this folder and lets
 * it print its own figures. `npm run bench` alone lists the benchmarks.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const available = readdirSync(benchDir)
  .filter((name) => name.endsWith(".ts") && name !== "run.ts")
  .map((name) => name.slice(0, -3))
  .sort();

const [name, ...rest] = process.argv.slice(2);
if (name === undefined || name === "--help" || name === "-h") {
  console.log(`usage: npm run bench -- <name> [options]\nbenchmarks: ${available.join(", ")}`);
} else if (!available.includes(name) || !existsSync(path.join(benchDir, `${name}.ts`))) {
  console.error(`unknown benchmark "${name}"; known: ${available.join(", ")}`);
  process.exitCode = 2;
} else {
  const result = spawnSync(process.execPath, ["--import", "tsx", path.join(benchDir, `${name}.ts`), ...rest], {
    stdio: "inherit",
  });
  process.exitCode = result.status ?? 1;
}
