/**
 * Reading and restoring checkpoints. A restore is itself checkpointed first (so `/rollback 1`
 * right after undoes it), then files created since the chosen checkpoint are removed and the rest
 * are checked out from it. Deletion is confined to the working directory: a path whose real parent
 * lies outside it (through a symlinked folder) is left alone, and a symlink is removed as a link,
 * never followed.
 */
import {
  copyFileSync,
  existsSync,
  lstatSync,
  readdirSync,
  realpathSync,
  rmdirSync,
  rmSync,
  unlinkSync,
} from "node:fs";
import { dirname, isAbsolute, join, sep } from "node:path";
import { git, runGit } from "./git.js";
import { type SnapshotLimits, snapshotLocked } from "./snapshot.js";
import {
  canonicalDir,
  indexPath,
  projectHash,
  refName,
  refTip,
  type StorePaths,
  withStoreLock,
} from "./store.js";

export interface Checkpoint {
  commit: string;
  short: string;
  /** ISO time the checkpoint was taken. */
  time: string;
  reason: string;
  /** Change from the checkpoint before it. */
  files: number;
  insertions: number;
  deletions: number;
}

/** The checkpoints of `workdir`, newest first (number 1 is the most recent). Empty when none. */
export async function listCheckpoints(paths: StorePaths, workdir: string): Promise<Checkpoint[]> {
  if (!existsSync(join(paths.store, "HEAD"))) return [];
  const hash = projectHash(workdir);
  const target = { store: paths.store };
  const log = await runGit(["log", "--format=%H%x00%h%x00%aI%x00%s", refName(hash), "--"], target);
  if (!log.ok) return [];
  const out: Checkpoint[] = [];
  for (const line of log.stdout.split("\n")) {
    const [commit, short, time, reason] = line.split("\0");
    if (!commit || !short || !time) continue;
    const stat = await runGit(["diff-tree", "--root", "--shortstat", "--no-commit-id", "-r", commit], target);
    out.push({ commit, short, time, reason: reason ?? "", ...shortstat(stat.stdout) });
  }
  return out;
}

function shortstat(text: string): { files: number; insertions: number; deletions: number } {
  const num = (re: RegExp) => Number(re.exec(text)?.[1] ?? 0);
  return {
    files: num(/(\d+) files? changed/),
    insertions: num(/(\d+) insertion/),
    deletions: num(/(\d+) deletion/),
  };
}

/** The `n`th most recent checkpoint; throws a message naming the valid range. */
export function pick(list: readonly Checkpoint[], n: number, workdir: string): Checkpoint {
  if (list.length === 0) throw new Error(`No checkpoints for ${canonicalDir(workdir)} yet.`);
  const chosen = Number.isInteger(n) ? list[n - 1] : undefined;
  if (!chosen) throw new Error(`There is no checkpoint ${n}: choose 1 to ${list.length} (see /rollback).`);
  return chosen;
}

export interface CheckpointDiff {
  checkpoint: Checkpoint;
  /** `git diff --stat` from the checkpoint to the files as they are now. */
  stat: string;
  patch: string;
}

/** What changed in `workdir` since checkpoint `n` (the files now against the checkpoint). */
export function diffCheckpoint(paths: StorePaths, workdir: string, n: number): Promise<CheckpointDiff> {
  return withStoreLock(paths, async () => {
    const checkpoint = pick(await listCheckpoints(paths, workdir), n, workdir);
    const dir = canonicalDir(workdir);
    const hash = projectHash(dir);
    // A scratch copy of the project's index: its stat cache makes staging the current files cheap,
    // and the project's own index is left as the last snapshot made it.
    const scratch = `${indexPath(paths.store, hash)}.diff`;
    if (existsSync(indexPath(paths.store, hash))) copyFileSync(indexPath(paths.store, hash), scratch);
    const target = { store: paths.store, workTree: dir, index: scratch };
    try {
      const excludes = `${indexPath(paths.store, hash)}.exclude`;
      const config = existsSync(excludes) ? ["-c", `core.excludesFile=${excludes}`] : [];
      await git([...config, "add", "-A", "--ignore-errors", "--", "."], target);
      const stat = await git(["diff", "--cached", "--stat", "--no-color", checkpoint.commit, "--"], target);
      const patch = await git(
        ["diff", "--cached", "--no-color", "--no-ext-diff", checkpoint.commit, "--"],
        target,
      );
      return { checkpoint, stat: stat.trimEnd(), patch: patch.trimEnd() };
    } finally {
      rmSync(scratch, { force: true });
    }
  });
}

export interface RestoreResult {
  checkpoint: Checkpoint;
  /** The working directory restored. */
  directory: string;
  /** Files removed because they did not exist at the checkpoint (relative paths). */
  removed: string[];
  /** Files left in place because removing them would reach outside the working directory. */
  kept: string[];
  /** Whether the state before the restore was saved as a new checkpoint (undo with /rollback 1). */
  saved: boolean;
}

/**
 * Restores `workdir` (or one `file` in it) to checkpoint `n`. The current state is checkpointed
 * first; when it cannot be (the directory is too big now), nothing is restored.
 */
export function restoreCheckpoint(
  paths: StorePaths,
  workdir: string,
  n: number,
  limits: SnapshotLimits,
  nowSeconds: number,
  file?: string,
): Promise<RestoreResult> {
  return withStoreLock(paths, async () => {
    const dir = canonicalDir(workdir);
    const checkpoint = pick(await listCheckpoints(paths, dir), n, dir);
    const only = file === undefined ? undefined : relativeInside(dir, file);
    const before = await snapshotLocked(
      paths,
      dir,
      `pre-rollback snapshot (restoring to ${checkpoint.short})`,
      limits,
      nowSeconds,
      { trim: false },
    );
    if (before.kind === "skipped")
      throw new Error(`Not restored: the current state could not be saved first (${before.reason}).`);
    const hash = projectHash(dir);
    const current = await refTip(paths, hash);
    const target = { store: paths.store, workTree: dir, index: indexPath(paths.store, hash) };

    const removed: string[] = [];
    const kept: string[] = [];
    if (current && before.kind !== "empty") {
      const added = await git(
        [
          "diff",
          "--name-only",
          "-z",
          "--no-renames",
          "--diff-filter=A",
          checkpoint.commit,
          current,
          "--",
          only ?? ".",
        ],
        target,
      );
      for (const rel of added.split("\0").filter(Boolean)) {
        if (removeInside(dir, rel)) removed.push(rel);
        else kept.push(rel);
      }
    }
    const inCheckpoint =
      only === undefined || (await runGit(["cat-file", "-e", `${checkpoint.commit}:${only}`], target)).ok;
    if (inCheckpoint) await git(["checkout", checkpoint.commit, "--", only ?? "."], target);
    // The checkout left the index describing the restored files, which is what the next snapshot
    // compares against the ref: it records the restore's result if anything differs.
    return { checkpoint, directory: dir, removed, kept, saved: before.kind === "taken" };
  });
}

/** `file` as a path relative to `dir`, refusing anything that leaves it. */
function relativeInside(dir: string, file: string): string {
  const rel = isAbsolute(file) ? (file.startsWith(`${dir}${sep}`) ? file.slice(dir.length + 1) : "") : file;
  const parts = rel.split(/[\\/]+/).filter((p) => p !== "" && p !== ".");
  if (rel === "" || parts.length === 0 || parts.includes("..")) {
    throw new Error(`${file} is not a file inside ${dir}; name a path relative to it.`);
  }
  return parts.join("/");
}

/**
 * Removes `dir/rel` when it is a file or a symlink whose real parent folder is `dir` or inside it;
 * then removes the folders the removal emptied, up to `dir`. Returns false when it left it alone.
 */
function removeInside(dir: string, rel: string): boolean {
  const full = join(dir, rel);
  let parent: string;
  try {
    parent = realpathSync(dirname(full));
  } catch {
    return true; // Its folder is gone already, so is the file.
  }
  if (parent !== dir && !parent.startsWith(`${dir}${sep}`)) return false;
  try {
    const stat = lstatSync(full);
    if (!stat.isFile() && !stat.isSymbolicLink()) return false;
    unlinkSync(full);
  } catch {
    return true; // Already gone.
  }
  let folder = parent;
  while (folder !== dir && folder.startsWith(`${dir}${sep}`)) {
    try {
      if (readdirSync(folder).length > 0) break;
      rmdirSync(folder);
    } catch {
      break;
    }
    folder = dirname(folder);
  }
  return true;
}
