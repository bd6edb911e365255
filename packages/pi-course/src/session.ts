/**
 * Chapter 10 · the session tree.
 *
 * A session records facts: every message ever appended stays in it, each entry points
 * at its parent, and the leaf marks where the conversation currently is. Branching
 * moves the leaf back to an earlier entry, so the next append starts a new branch
 * while the old one remains readable. What the model sees is the active path, root to
 * leaf; chapter 11's `buildContext` budgets exactly that path.
 *
 * The tree owns its data: messages are copied on the way in and entries are copied on
 * the way out, so no caller can rewrite history by mutating an object it holds.
 */
import { randomUUID } from "node:crypto";
import type { AgentMessage } from "./types.js";

/** One message in the tree; `parentId` is `null` for a root entry. */
export interface MessageEntry {
  type: "message";
  id: string;
  parentId: string | null;
  /** When the entry was appended (not the message's own timestamp). */
  timestamp: number;
  message: AgentMessage;
}

/** Everything a session can hold. Later chapters may add entry kinds to this union. */
export type SessionEntry = MessageEntry;

/** Error codes thrown on purpose by this module. */
export type SessionErrorCode = "SESSION_ENTRY_NOT_FOUND" | "SESSION_DUPLICATE_ID";

/** An error with a stable `code`; messages may change, codes do not. */
export class SessionError extends Error {
  readonly code: SessionErrorCode;
  constructor(code: SessionErrorCode, message: string) {
    super(message);
    this.name = "SessionError";
    this.code = code;
  }
}

/** Injection points, so tests and replays can make ids and times deterministic. */
export interface SessionTreeOptions {
  /** Produces entry ids; default `crypto.randomUUID()`. Must not repeat within a tree. */
  newId?: () => string;
  /** Produces entry timestamps; default `Date.now()`. */
  now?: () => number;
}

/** An in-memory session: an append-only tree of entries with a movable leaf. */
export class SessionTree {
  readonly #entries = new Map<string, SessionEntry>();
  readonly #newId: () => string;
  readonly #now: () => number;
  #leafId: string | null = null;

  constructor(options: SessionTreeOptions = {}) {
    this.#newId = options.newId ?? randomUUID;
    this.#now = options.now ?? Date.now;
  }

  /** The id of the current leaf, or `null` when the next append starts a new root. */
  get leafId(): string | null {
    return this.#leafId;
  }

  /**
   * Appends a copy of `message` as a child of the current leaf and makes it the new
   * leaf. Returns a copy of the stored entry. A generated id that is already in the
   * tree throws `SESSION_DUPLICATE_ID` and appends nothing.
   */
  append(message: AgentMessage): MessageEntry {
    const id = this.#newId();
    if (this.#entries.has(id)) {
      throw new SessionError("SESSION_DUPLICATE_ID", `entry id "${id}" is already in the session`);
    }
    const entry: MessageEntry = {
      type: "message",
      id,
      parentId: this.#leafId,
      timestamp: this.#now(),
      message: structuredClone(message),
    };
    this.#entries.set(id, entry);
    this.#leafId = id;
    return structuredClone(entry);
  }

  /**
   * Moves the leaf to the entry `entryId`, so the next append becomes its child and
   * `activePath()` ends there; `null` moves it before every root, so the next append
   * starts a new root. Nothing is deleted. An unknown id throws
   * `SESSION_ENTRY_NOT_FOUND` and leaves the leaf where it was.
   */
  branch(entryId: string | null): void {
    if (entryId !== null && !this.#entries.has(entryId)) {
      throw new SessionError("SESSION_ENTRY_NOT_FOUND", `no entry with id "${entryId}" in the session`);
    }
    this.#leafId = entryId;
  }

  /** A copy of the entry with this id, or `undefined`. */
  get(entryId: string): SessionEntry | undefined {
    const entry = this.#entries.get(entryId);
    return entry === undefined ? undefined : structuredClone(entry);
  }

  /** Copies of every entry on every branch, in append order. */
  entries(): SessionEntry[] {
    return structuredClone([...this.#entries.values()]);
  }

  /**
   * Copies of the entries from the root to the current leaf, root first; `[]` before
   * the first append or after `branch(null)`. Walks parent links iteratively, so
   * long sessions cannot overflow the stack.
   */
  activePath(): SessionEntry[] {
    const path: SessionEntry[] = [];
    let id = this.#leafId;
    while (id !== null) {
      const entry = this.#entries.get(id);
      // Unreachable while the tree is only changed through its methods.
      if (entry === undefined) throw new SessionError("SESSION_ENTRY_NOT_FOUND", `dangling parent id "${id}"`);
      path.push(entry);
      id = entry.parentId;
    }
    return structuredClone(path.reverse());
  }
}

/** A new, empty session tree. */
export function createSession(options: SessionTreeOptions = {}): SessionTree {
  return new SessionTree(options);
}
