/**
 * The git branch and repository root of a directory, read from `.git` on disk rather than by running
 * `git` (a subprocess would cost more than the rest of a session's start-up bookkeeping).
 */
import { readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";

export interface GitInfo {
  /** Worktree root (the directory holding `.git`). */
  root: string;
  /** Branch name, or the short commit id when HEAD is detached; absent when unreadable. */
  branch?: string;
}

/** Walks up from `cwd` to the nearest `.git`; null outside a repository or when nothing is readable. */
export function gitInfo(cwd: string): GitInfo | null {
  let dir = resolve(cwd);
  for (let depth = 0; depth < 64; depth++) {
    const dotGit = join(dir, ".git");
    const gitDir = gitDirAt(dotGit);
    if (gitDir) {
      const branch = readBranch(gitDir);
      return branch ? { root: dir, branch } : { root: dir };
    }
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
  return null;
}

/** The git directory `.git` points at: itself, or the `gitdir:` of a worktree/submodule file. */
function gitDirAt(dotGit: string): string | null {
  try {
    // Asked at every level up to the root: most have no .git, and a thrown ENOENT is not free.
    const stat = statSync(dotGit, { throwIfNoEntry: false });
    if (!stat) return null;
    if (stat.isDirectory()) return dotGit;
    if (!stat.isFile()) return null;
    const match = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, "utf8"));
    if (!match?.[1]) return null;
    const target = match[1].trim();
    return isAbsolute(target) ? target : resolve(dirname(dotGit), target);
  } catch {
    return null;
  }
}

function readBranch(gitDir: string): string | undefined {
  try {
    const head = readFileSync(join(gitDir, "HEAD"), "utf8").trim();
    const ref = /^ref:\s*refs\/heads\/(.+)$/.exec(head);
    if (ref?.[1]) return ref[1];
    return /^[0-9a-f]{7,}$/i.test(head) ? head.slice(0, 8) : undefined;
  } catch {
    return undefined;
  }
}
