/**
 * Taking one checkpoint: the working directory's files (minus the excluded and oversize ones) are
 * staged into the project's own index inside the store, written as a tree and committed on the
 * project's ref. Nothing is committed when nothing changed since the last checkpoint, so calling
 * this once per turn costs one `git add` (which reuses the index's stat cache) and a comparison.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, parse } from "node:path";
import { git, runGit } from "./git.js";
import { trimHistory } from "./prune.js";
import { excludePattern, scanWorkdir } from "./scan.js";
import {
  canonicalDir,
  indexPath,
  initStore,
  projectHash,
  refName,
  refTip,
  type StorePaths,
  touchProject,
  withStoreLock,
} from "./store.js";

export interface SnapshotLimits {
  /** Checkpoints kept per working directory (older ones are dropped). */
  maxSnapshots: number;
  /** Files larger than this many bytes are left out of checkpoints (0: no limit). */
  maxFileBytes: number;
  /** A working directory with more files than this is not snapshotted at all. */
  maxFiles: number;
}

export type SnapshotOutcome =
  | { kind: "taken"; commit: string; oversize: string[] }
  /** Nothing changed since the last checkpoint (its commit is the current state). */
  | { kind: "unchanged"; commit: string }
  /** The directory holds no file to record. */
  | { kind: "empty" }
  /** Not snapshotted; `reason` says why in words the user reads. */
  | { kind: "skipped"; reason: string };

/** Takes a checkpoint of `workdir` under the store lock. Throws only on a git or file failure. */
export function takeSnapshot(
  paths: StorePaths,
  workdir: string,
  reason: string,
  limits: SnapshotLimits,
  nowSeconds: number,
): Promise<SnapshotOutcome> {
  return withStoreLock(paths, () => snapshotLocked(paths, workdir, reason, limits, nowSeconds));
}

/** Why `workdir` must not be snapshotted at all, or undefined when it may be. */
export function refusal(paths: StorePaths, workdir: string, home = homedir()): string | undefined {
  const dir = canonicalDir(workdir);
  if (dir === parse(dir).root) return `${dir} is the filesystem root, too broad to checkpoint`;
  if (dir === canonicalDir(home)) return `${dir} is the home directory, too broad to checkpoint`;
  const base = canonicalDir(paths.base);
  // A store inside the directory it records would snapshot itself; one above it would be restored
  // over by a rollback. Either way, refuse rather than tangle the two.
  if (base === dir || base.startsWith(`${dir}/`) || dir.startsWith(`${base}/`))
    return `the checkpoint store ${base} is inside ${dir}`;
  if (!existsSync(dir)) return `${dir} does not exist`;
  return undefined;
}

/** The body of `takeSnapshot`; the caller holds the store lock. */
export async function snapshotLocked(
  paths: StorePaths,
  workdir: string,
  reason: string,
  limits: SnapshotLimits,
  nowSeconds: number,
  options: { trim?: boolean } = {},
): Promise<SnapshotOutcome> {
  const refused = refusal(paths, workdir);
  if (refused) return { kind: "skipped", reason: refused };
  const dir = canonicalDir(workdir);
  const scan = scanWorkdir(dir, { maxFiles: limits.maxFiles, maxFileBytes: limits.maxFileBytes });
  if (scan.tooMany) {
    return {
      kind: "skipped",
      reason: `${dir} has more than ${limits.maxFiles} files (checkpoints.max_files), too many to checkpoint`,
    };
  }
  await initStore(paths);
  touchProject(paths, dir, nowSeconds);
  const hash = projectHash(dir);
  const index = indexPath(paths.store, hash);
  const target = { store: paths.store, workTree: dir, index };
  const tip = await refTip(paths, hash);
  mkdirSync(dirname(index), { recursive: true });
  // The project's index keeps the stat cache of the last snapshot, so `add` hashes only the files
  // that changed since; whatever it held, `add -A` below makes it match the files. Without one (the
  // first snapshot, or after a restore) it starts from the last checkpoint's tree.
  if (!tip) rmSync(index, { force: true });
  else if (!existsSync(index)) await git(["read-tree", tip], target);

  const excludes = join(paths.store, "indexes", `${hash}.exclude`);
  const patterns = scan.oversize.map(excludePattern).filter((p): p is string => p !== undefined);
  writeFileSync(excludes, patterns.length > 0 ? `${patterns.join("\n")}\n` : "");
  await git(["-c", `core.excludesFile=${excludes}`, "add", "-A", "--ignore-errors", "--", "."], target);
  if (scan.oversize.length > 0) {
    // Files already in the last checkpoint are tracked, so the excludes do not apply to them.
    await git(
      ["rm", "--cached", "-q", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul"],
      target,
      scan.oversize.join("\0"),
    );
  }

  if (tip) {
    const same = await runGit(["diff-index", "--cached", "--quiet", tip, "--"], target);
    if (same.ok) return { kind: "unchanged", commit: tip };
  } else if ((await git(["ls-files", "--cached", "-z"], target)) === "") {
    return { kind: "empty" };
  }
  const tree = (await git(["write-tree"], target)).trim();
  const commit = (
    await git(["commit-tree", tree, ...(tip ? ["-p", tip] : []), "-m", oneLine(reason)], target)
  ).trim();
  await git(["update-ref", refName(hash), commit, ...(tip ? [tip] : [])], target);
  if (options.trim !== false) await trimHistory(paths, hash, limits.maxSnapshots);
  return { kind: "taken", commit, oversize: scan.oversize };
}

/** A commit subject: one line, bounded, so `git log --format=%s` lists it whole. */
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim() || "checkpoint";
  return flat.length > 200 ? `${flat.slice(0, 199)}…` : flat;
}
