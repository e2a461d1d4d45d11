/**
 * Snapshots of the skills tree before the curator changes it, and rollback to one, in Python
 * Hermes's layout: `skills/.curator_backups/<id>/skills.tar.gz` plus `manifest.json`, the id a UTC
 * time with dashes (`2026-05-01T13-05-42Z`, `-NN` for a second one in the same second). Excluded:
 * the backups themselves, `.hub/` (the hub owns it), `.git`, and lock files (held by live
 * processes). Archives are written and read with the system `tar` (no tar package is installed).
 * Rollback first snapshots the current tree, so it can itself be undone.
 */
import { execFile } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { skillsRoot } from "../skills/paths.js";
import { CuratorError } from "./archive.js";

const run = promisify(execFile);

const EXCLUDED = new Set([".curator_backups", ".hub", ".git"]);
const ARCHIVE = "skills.tar.gz";
const STAGING = ".rollback-staging-";
const ID_RE = /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z(-\d{2})?$/;

export const backupsRoot = (home: string): string => join(skillsRoot(home), ".curator_backups");

/** Whether a top-level entry of `skills/` stays out of snapshots and is left in place by rollback. */
function excluded(name: string): boolean {
  // `.hermes-mirror*` (and its atomic writes' `..hermes-mirror*.tmp`): a shared backend's record
  // of what its copy holds, true only of the present, rewritten whenever another instance changes.
  return EXCLUDED.has(name) || name.endsWith(".lock") || /^\.{1,2}hermes-mirror/.test(name);
}

/** `2026-05-01T13-05-42Z` for `now`. */
export function backupId(now: Date): string {
  return `${now.toISOString().slice(0, 19).replace(/:/g, "-")}Z`;
}

export interface BackupInfo {
  id: string;
  path: string;
  reason: string;
  createdAt: string | null;
  skillFiles: number;
  archiveBytes: number;
}

function countSkillFiles(dir: string, depth = 0): number {
  if (depth > 6) return 0;
  let count = 0;
  let entries: import("node:fs").Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    if (depth === 0 && excluded(e.name)) continue;
    if (e.isDirectory() && e.name !== ".git") count += countSkillFiles(join(dir, e.name), depth + 1);
    else if (e.name === "SKILL.md") count++;
  }
  return count;
}

/**
 * Writes a snapshot of `<home>/skills` and prunes all but the newest `keep` (never those in
 * `protect`). Returns its info; throws `CuratorError` when tar fails (nothing partial is left).
 */
export async function snapshotSkills(
  home: string,
  options: { reason: string; keep: number; now?: Date; protect?: ReadonlySet<string> },
): Promise<BackupInfo> {
  const skills = skillsRoot(home);
  const root = backupsRoot(home);
  mkdirSync(root, { recursive: true });
  const base = backupId(options.now ?? new Date());
  let id = base;
  for (let n = 1; existsSync(join(root, id)); n++) id = `${base}-${String(n).padStart(2, "0")}`;
  const dir = join(root, id);
  mkdirSync(dir);
  const archive = join(dir, ARCHIVE);
  const entries = readdirSync(skills)
    .filter((name) => !excluded(name))
    .sort();
  try {
    // Nested .git/.hub folders are left out too; `--` keeps a name starting with "-" a name.
    await run("tar", [
      "-czf",
      archive,
      "-C",
      skills,
      "--exclude=.git",
      "--exclude=.hub",
      "--exclude=.curator_backups",
      "--exclude=*.lock",
      ...(entries.length > 0 ? ["--", ...entries] : ["-T", "/dev/null"]),
    ]);
    const manifest = {
      archive: ARCHIVE,
      archive_bytes: statSync(archive).size,
      created_at: (options.now ?? new Date()).toISOString().replace("Z", "+00:00"),
      cron_jobs: {
        backed_up: false,
        jobs_count: 0,
        reason: "not captured (Hermes-TS does not rewrite cron skills)",
      },
      id,
      reason: options.reason,
      skill_files: countSkillFiles(skills),
    };
    writeFileSync(join(dir, "manifest.json"), JSON.stringify(manifest, null, 2));
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    const detail = (error as { stderr?: string }).stderr?.trim() || (error as Error).message;
    throw new CuratorError(`Could not back up ${skills}: tar failed: ${detail}`);
  }
  pruneBackups(home, options.keep, new Set([id, ...(options.protect ?? [])]));
  return readInfo(dir) as BackupInfo;
}

function readInfo(dir: string): BackupInfo | undefined {
  const id = dir.split(/[\\/]/).pop() ?? "";
  if (!ID_RE.test(id) || !existsSync(join(dir, ARCHIVE))) return undefined;
  let manifest: Record<string, unknown> = {};
  try {
    manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8").replace(/^\uFEFF/, ""));
  } catch {
    // A snapshot without its manifest is still restorable.
  }
  return {
    id,
    path: dir,
    reason: typeof manifest["reason"] === "string" ? manifest["reason"] : "?",
    createdAt: typeof manifest["created_at"] === "string" ? manifest["created_at"] : null,
    skillFiles: typeof manifest["skill_files"] === "number" ? manifest["skill_files"] : 0,
    archiveBytes: statSync(join(dir, ARCHIVE)).size,
  };
}

/** Restorable snapshots, newest first. */
export function listBackups(home: string): BackupInfo[] {
  const root = backupsRoot(home);
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  return names
    .sort()
    .reverse()
    .map((name) => readInfo(join(root, name)))
    .filter((info): info is BackupInfo => info !== undefined);
}

/** Deletes snapshots beyond the newest `keep` (never `protect`) and leftover rollback staging. */
export function pruneBackups(home: string, keep: number, protect: ReadonlySet<string> = new Set()): string[] {
  const removed: string[] = [];
  for (const info of listBackups(home).slice(Math.max(1, keep))) {
    if (protect.has(info.id)) continue;
    rmSync(info.path, { recursive: true, force: true });
    removed.push(info.id);
  }
  return removed;
}

/** Refuses archive members that would land outside the skills folder (absolute, `..`, links out). */
async function checkMembers(archive: string): Promise<void> {
  const names = (await run("tar", ["-tzf", archive], { maxBuffer: 64 * 1024 * 1024 })).stdout.split("\n");
  const verbose = (await run("tar", ["-tvzf", archive], { maxBuffer: 64 * 1024 * 1024 })).stdout.split("\n");
  const links = verbose.filter((l) => l.includes(" -> ")).map((l) => l.slice(l.lastIndexOf(" -> ") + 4));
  for (const path of [...names, ...links]) {
    if (!path) continue;
    if (path.startsWith("/") || path.split("/").includes("..")) {
      throw new CuratorError(`${archive} holds an unsafe path (${path}); it was not restored.`);
    }
  }
}

/**
 * Restores `<home>/skills` from snapshot `id` (the newest when undefined). The current tree is
 * snapshotted first; when extraction fails, the tree is put back as it was. Returns the snapshot
 * restored and the safety snapshot taken.
 */
export async function rollbackSkills(
  home: string,
  options: { id?: string | undefined; keep: number; now?: Date },
): Promise<{ restored: BackupInfo; safety: BackupInfo }> {
  const all = listBackups(home);
  const target = options.id ? all.find((b) => b.id === options.id) : all[0];
  if (!target) {
    throw new CuratorError(
      options.id
        ? `No backup "${options.id}". See: hermes curator rollback --list`
        : "No curator backups yet (hermes curator backup makes one).",
    );
  }
  const archive = join(target.path, ARCHIVE);
  await checkMembers(archive);
  const safety = await snapshotSkills(home, {
    reason: `pre-rollback to ${target.id}`,
    keep: options.keep + 1,
    ...(options.now ? { now: options.now } : {}),
    protect: new Set([target.id]),
  });
  const skills = skillsRoot(home);
  const staging = join(backupsRoot(home), `${STAGING}${backupId(options.now ?? new Date())}-${process.pid}`);
  mkdirSync(staging, { recursive: true });
  const moved: string[] = [];
  try {
    for (const name of readdirSync(skills)) {
      if (excluded(name)) continue;
      renameSync(join(skills, name), join(staging, name));
      moved.push(name);
    }
    await run("tar", ["-xzf", archive, "-C", skills, "--no-same-owner"]);
  } catch (error) {
    // Put the tree back as it was: drop what a partial extract left, return the staged entries.
    for (const name of readdirSync(skills)) {
      if (!excluded(name) && !moved.includes(name))
        rmSync(join(skills, name), { recursive: true, force: true });
    }
    for (const name of moved) {
      rmSync(join(skills, name), { recursive: true, force: true });
      renameSync(join(staging, name), join(skills, name));
    }
    rmSync(staging, { recursive: true, force: true });
    const detail = (error as { stderr?: string }).stderr?.trim() || (error as Error).message;
    throw new CuratorError(`Rollback to ${target.id} failed (the skills were left as they were): ${detail}`);
  }
  rmSync(staging, { recursive: true, force: true });
  return { restored: target, safety };
}
