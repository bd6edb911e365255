/**
 * Git tree and commit objects computed in memory, byte for byte as git writes them, so that
 * the teaching history is planned without a process per tree or commit (and without an
 * index file at all): a tree is the entries of one folder, sorted as git sorts them; a
 * commit is its header lines and message; an id is the hash of `<type> <size>\0<content>`
 * (SHA-1, or SHA-256 in a repository that uses it). Writing the objects that are missing is
 * one `git hash-object` call per object type (`writeObjects` in history.ts).
 */
import { createHash } from "node:crypto";
import type { TreeEntry } from "./git.js";

/** An object to write: its type, id and content. */
export interface GitObject {
  type: "tree" | "commit";
  oid: string;
  content: Buffer;
}

/** The hash a repository uses, told by the length of one of its ids. */
export function hashOf(oid: string): "sha1" | "sha256" {
  return oid.length === 64 ? "sha256" : "sha1";
}

/** The id git gives an object of `type` with `content`. */
export function objectId(type: GitObject["type"], content: Buffer, hash: "sha1" | "sha256"): string {
  return createHash(hash).update(`${type} ${content.length}\0`).update(content).digest("hex");
}

interface Child {
  name: string;
  mode: string;
  type: TreeEntry["type"];
  oid: string;
}

/** Git's order of tree entries: by name as bytes, a folder compared as if its name ended in `/`. */
function compareEntries(a: Child, b: Child): number {
  const key = (c: Child) => Buffer.from(c.type === "tree" ? `${c.name}/` : c.name, "utf8");
  return Buffer.compare(key(a), key(b));
}

/** The content of a tree object holding `children`. */
export function treeContent(children: readonly Child[]): Buffer {
  const parts: Buffer[] = [];
  for (const child of [...children].sort(compareEntries)) {
    // A tree's mode is written without its leading zero (`40000`), as git writes it.
    const mode = child.type === "tree" ? "40000" : child.mode;
    parts.push(Buffer.from(`${mode} ${child.name}\0`, "utf8"), Buffer.from(child.oid, "hex"));
  }
  return Buffer.concat(parts);
}

/**
 * The trees of a source tree with some of its files left out. `entries` is the recursive
 * listing of the source with its folders (`git ls-tree -r -t`); `prune(removed)` returns the
 * id of the root tree without the files in `removed` (folders left empty disappear, as
 * they do in git), computing and remembering each new tree object it needs.
 */
export class TreePruner {
  readonly #children = new Map<string, Child[]>();
  readonly #hash: "sha1" | "sha256";
  readonly #created = new Map<string, GitObject>();
  readonly sourceTree: string;

  constructor(sourceTree: string, entries: readonly TreeEntry[]) {
    this.sourceTree = sourceTree;
    this.#hash = hashOf(sourceTree);
    this.#children.set("", []);
    for (const entry of entries) {
      const slash = entry.path.lastIndexOf("/");
      const dir = slash === -1 ? "" : entry.path.slice(0, slash);
      const list = this.#children.get(dir) ?? [];
      list.push({ name: entry.path.slice(slash + 1), mode: entry.mode, type: entry.type, oid: entry.oid });
      this.#children.set(dir, list);
      if (entry.type === "tree" && !this.#children.has(entry.path)) this.#children.set(entry.path, []);
    }
  }

  /** The tree objects computed so far (new ones only: untouched folders keep their ids). */
  get created(): GitObject[] {
    return [...this.#created.values()];
  }

  /** The root tree id without the files of `removed` (repo-relative paths). */
  prune(removed: ReadonlySet<string>): string {
    if (removed.size === 0) return this.sourceTree;
    const touched = new Set<string>([""]);
    for (const file of removed) {
      for (let at = file.lastIndexOf("/"); at !== -1; at = file.lastIndexOf("/", at - 1)) touched.add(file.slice(0, at));
    }
    return this.#tree("", removed, touched) ?? this.#write(Buffer.alloc(0));
  }

  #tree(dir: string, removed: ReadonlySet<string>, touched: ReadonlySet<string>): string | undefined {
    const kept: Child[] = [];
    for (const child of this.#children.get(dir) ?? []) {
      const full = dir === "" ? child.name : `${dir}/${child.name}`;
      if (child.type === "tree") {
        const oid = touched.has(full) ? this.#tree(full, removed, touched) : child.oid;
        if (oid !== undefined) kept.push({ ...child, oid });
      } else if (!removed.has(full)) {
        kept.push(child);
      }
    }
    return kept.length === 0 ? undefined : this.#write(treeContent(kept));
  }

  #write(content: Buffer): string {
    const oid = objectId("tree", content, this.#hash);
    this.#created.set(oid, { type: "tree", oid, content });
    return oid;
  }
}

/** Who and when: the fixed identity of a generated commit. */
export interface CommitIdentity {
  name: string;
  email: string;
  /** Seconds since the epoch, UTC. */
  seconds: number;
}

/**
 * The commit object `git commit-tree` writes for `tree`, `parent` and `message` with the
 * author and committer `who` at UTC, UTF-8 (no encoding header) and unsigned.
 */
export function commitObject(tree: string, parent: string | undefined, who: CommitIdentity, message: string): GitObject {
  const person = `${who.name} <${who.email}> ${who.seconds} +0000`;
  const header = [`tree ${tree}`, ...(parent !== undefined ? [`parent ${parent}`] : []), `author ${person}`, `committer ${person}`];
  const content = Buffer.from(`${header.join("\n")}\n\n${message}`, "utf8");
  return { type: "commit", oid: objectId("commit", content, hashOf(tree)), content };
}
