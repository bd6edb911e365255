/**
 * The hint ladder's shape, which every chapter's hints follow (`hints:` in a manifest has
 * exactly these rungs): what `hint` shows, what `--help` and the practice folder's guide
 * say. Imports nothing, so the command table states it without loading a manifest.
 */

/** What each rung does, in order. */
export const RUNG_NAMES = ["定位文件", "指出签名", "伪代码", "局部代码"] as const;

/** How many rungs every ladder has. */
export const RUNGS = RUNG_NAMES.length;
