/**
 * Keeping the store bounded: at most `max_snapshots` checkpoints per working directory, projects
 * whose directory is gone (orphans) or untouched for `retention_days` dropped, the store held under
 * `max_total_size_mb`, and unreachable objects collected. Auto-prune runs this at most once per
 * `min_interval_hours` (marker `<home>/checkpoints/.last_prune`, as upstream).
 */
import { execFile } from "node:child_process";
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { git, gitEnv, runGit } from "./git.js";
import {
  indexPath,
  listProjects,
  type ProjectStatus,
  refName,
  refTip,
  type StorePaths,
  withStoreLock,
} from "./store.js";

interface LoggedCommit {
  tree: string;
  date: string;
  subject: string;
}

/**
 * Drops the oldest checkpoints of one project beyond `keep`: the kept ones are re-chained onto a
 * new root with their trees, dates and messages unchanged (numbering is by position, so `/rollback
 * 3` means the same before and after). The dropped objects go at the next gc.
 */
export async function trimHistory(paths: StorePaths, hash: string, keep: number): Promise<number> {
  const target = { store: paths.store };
  const ref = refName(hash);
  const count = Number((await runGit(["rev-list", "--count", ref], target)).stdout.trim()) || 0;
  const max = Math.max(1, Math.floor(keep));
  if (count <= max) return 0;
  const log = await git(["log", `--max-count=${max}`, "--format=%T%x00%aI%x00%s%x00", ref], target);
  const commits: LoggedCommit[] = [];
  const fields = log.split("\0");
  for (let i = 0; i + 2 < fields.length; i += 3) {
    commits.push({
      tree: (fields[i] ?? "").trim(),
      date: fields[i + 1] ?? "",
      subject: fields[i + 2] ?? "",
    });
  }
  let parent: string | undefined;
  for (const commit of commits.reverse()) {
    const args = ["commit-tree", commit.tree, ...(parent ? ["-p", parent] : []), "-m", commit.subject];
    parent = (await gitDated(args, paths, commit.date)).trim();
  }
  if (parent) await git(["update-ref", ref, parent], target);
  return count - max;
}

function gitDated(args: string[], paths: StorePaths, date: string): Promise<string> {
  // The rewritten commit keeps the checkpoint's time: `-c` cannot set dates, so a one-off env does.
  return new Promise((resolve, reject) => {
    execFile(
      "git",
      args,
      {
        cwd: paths.store,
        env: { ...gitEnv({ store: paths.store }), GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
        encoding: "utf8",
      },
      (error, stdout, stderr) =>
        error ? reject(new Error(`git commit-tree failed: ${stderr}`)) : resolve(stdout),
    );
  });
}

/** Bytes the store occupies on disk (a walk; symlinks not followed). 0 when it does not exist. */
export function storeBytes(dir: string): number {
  let total = 0;
  const pending = [dir];
  while (pending.length > 0) {
    const current = pending.pop() as string;
    let names: string[];
    try {
      names = readdirSync(current);
    } catch {
      continue;
    }
    for (const name of names) {
      const full = join(current, name);
      try {
        const stat = lstatSync(full);
        if (stat.isDirectory()) pending.push(full);
        else total += stat.size;
      } catch {
        // Removed meanwhile.
      }
    }
  }
  return total;
}

export interface PruneSettings {
  retentionDays: number;
  deleteOrphans: boolean;
  maxTotalSizeMb: number;
}

export interface PruneReport {
  scanned: number;
  deletedOrphan: number;
  deletedStale: number;
  /** Checkpoints dropped to get under the size cap. */
  trimmed: number;
  bytesFreed: number;
}

/** Drops orphan and stale projects, collects garbage and enforces the size cap. */
export function pruneStore(
  paths: StorePaths,
  settings: PruneSettings,
  nowSeconds: number,
): Promise<PruneReport> {
  return withStoreLock(paths, () => pruneLocked(paths, settings, nowSeconds));
}

async function pruneLocked(
  paths: StorePaths,
  settings: PruneSettings,
  nowSeconds: number,
): Promise<PruneReport> {
  const report: PruneReport = { scanned: 0, deletedOrphan: 0, deletedStale: 0, trimmed: 0, bytesFreed: 0 };
  if (!existsSync(join(paths.store, "HEAD"))) return report;
  const before = storeBytes(paths.base);
  const cutoff = settings.retentionDays > 0 ? nowSeconds - settings.retentionDays * 86_400 : 0;
  for (const project of listProjects(paths)) {
    report.scanned++;
    // Only a directory whose parent is still there counts as deleted: a missing parent is more
    // likely an unmounted volume, and its history is worth keeping until retention says otherwise.
    const orphan =
      settings.deleteOrphans && !existsSync(project.workdir) && existsSync(join(project.workdir, ".."));
    const stale = cutoff > 0 && project.last_touch > 0 && project.last_touch < cutoff;
    if (!orphan && !stale) continue;
    await dropProject(paths, project.hash);
    if (orphan) report.deletedOrphan++;
    else report.deletedStale++;
  }
  await collectGarbage(paths);
  report.trimmed = await enforceSize(paths, settings.maxTotalSizeMb);
  report.bytesFreed = Math.max(0, before - storeBytes(paths.base));
  return report;
}

async function dropProject(paths: StorePaths, hash: string): Promise<void> {
  await runGit(["update-ref", "-d", refName(hash)], { store: paths.store });
  rmSync(indexPath(paths.store, hash), { force: true });
  rmSync(`${indexPath(paths.store, hash)}.exclude`, { force: true });
  rmSync(join(paths.store, "projects", `${hash}.json`), { force: true });
}

async function collectGarbage(paths: StorePaths): Promise<void> {
  await runGit(["reflog", "expire", "--expire=now", "--all"], { store: paths.store });
  await runGit(["gc", "--prune=now", "--quiet"], { store: paths.store });
}

/**
 * While the store is over `maxMb` (0: no cap), drops the oldest checkpoint of the project with the
 * longest history; every project keeps its newest one. Returns how many were dropped.
 */
export async function enforceSize(paths: StorePaths, maxMb: number): Promise<number> {
  if (maxMb <= 0) return 0;
  const cap = maxMb * 1024 * 1024;
  let dropped = 0;
  while (storeBytes(paths.store) > cap) {
    let longest: { hash: string; count: number } | undefined;
    for (const project of listProjects(paths)) {
      if (!(await refTip(paths, project.hash))) continue;
      const count = Number((await runGit(["rev-list", "--count", refName(project.hash)], paths)).stdout) || 0;
      if (!longest || count > longest.count) longest = { hash: project.hash, count };
    }
    if (!longest || longest.count <= 1) break;
    await trimHistory(paths, longest.hash, longest.count - 1);
    await collectGarbage(paths);
    dropped++;
  }
  return dropped;
}

/**
 * Runs `pruneStore` when auto-prune is due (never ran, or `minIntervalHours` passed); records the
 * run in `.last_prune`. Returns the report, or undefined when not due or there is no store.
 */
export async function autoPrune(
  paths: StorePaths,
  settings: PruneSettings & { minIntervalHours: number },
  nowSeconds: number,
): Promise<PruneReport | undefined> {
  if (!existsSync(join(paths.store, "HEAD"))) return undefined;
  const marker = join(paths.base, ".last_prune");
  try {
    const last = Number.parseFloat(readFileSync(marker, "utf8").trim());
    if (Number.isFinite(last) && nowSeconds - last < settings.minIntervalHours * 3600) return undefined;
  } catch {
    // No marker (or a corrupt one): due.
  }
  const report = await pruneStore(paths, settings, nowSeconds);
  writeFileSync(marker, String(nowSeconds));
  return report;
}

/** Deletes the whole checkpoint base (store and marker). Returns the bytes it held. */
export function clearStore(paths: StorePaths): Promise<number> {
  return withStoreLock(paths, async () => {
    const bytes = storeBytes(paths.store);
    rmSync(paths.store, { recursive: true, force: true });
    rmSync(join(paths.base, ".last_prune"), { force: true });
    return bytes;
  });
}

/** Every project in the store with its checkpoint count, and the store's size (`hermes checkpoints status`). */
export async function storeStatus(paths: StorePaths): Promise<{ bytes: number; projects: ProjectStatus[] }> {
  const projects: ProjectStatus[] = [];
  if (!existsSync(join(paths.store, "HEAD"))) return { bytes: storeBytes(paths.base), projects };
  for (const project of listProjects(paths)) {
    const count = await runGit(["rev-list", "--count", refName(project.hash)], { store: paths.store });
    projects.push({
      ...project,
      checkpoints: Number(count.stdout.trim()) || 0,
      exists: existsSync(project.workdir),
    });
  }
  return { bytes: storeBytes(paths.base), projects };
}
