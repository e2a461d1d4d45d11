/**
 * `hermes backup --quick`: the files a home cannot rebuild (state.db, config, secrets, cron jobs,
 * pairing approvals) copied to `state-snapshots/<UTC stamp>[-label]/` with upstream's
 * `manifest.json`, so Python Hermes's `/snapshot restore` reads it. The snapshot is assembled in a
 * private hidden directory and renamed into place when complete; the newest 20 are kept.
 */
import {
  chmodSync,
  cpSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, relative } from "node:path";
import { snapshotDatabase } from "../../state/snapshot.js";

/** Upstream's list: single files and whole directories, relative to the home; missing ones are skipped. */
const QUICK_STATE_FILES = [
  "state.db",
  "config.yaml",
  ".env",
  "auth.json",
  "cron/jobs.json",
  "cron/executions.db",
  "gateway_state.json",
  "channel_directory.json",
  "channel_aliases.json",
  "processes.json",
  "webhook_subscriptions.json",
  "response_store.db",
  "memory_store.db",
  "kanban.db",
  "pairing",
];

const KEEP = 20;

export interface QuickSnapshot {
  id: string;
  path: string;
  files: number;
  bytes: number;
  /** Databases that could not be copied safely (the snapshot is incomplete; nothing was pruned). */
  failed: string[];
}

/** Takes a quick snapshot of `home`; undefined when none of its files exist. */
export function createQuickSnapshot(home: string, now: Date, label?: string): QuickSnapshot | undefined {
  const root = join(home, "state-snapshots");
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  const base = label ? `${stamp}-${label}` : stamp;
  let id = base;
  for (let n = 2; exists(join(root, id)); n++) id = `${base}-${n}`;
  const staging = join(root, `.${id}.${process.pid}.partial`);
  mkdirSync(root, { recursive: true, mode: 0o700 });
  chmodSync(root, 0o700);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { mode: 0o700 });
  const manifest: Record<string, number> = {};
  const failed: string[] = [];
  try {
    for (const rel of QUICK_STATE_FILES) {
      for (const file of filesUnder(join(home, rel))) {
        const name = relative(home, file);
        const target = join(staging, name);
        mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
        try {
          if (name.endsWith(".db")) snapshotDatabase(file, target);
          else cpSync(file, target);
          chmodSync(target, 0o600);
          manifest[name] = statSync(target).size;
        } catch {
          if (name.endsWith(".db")) failed.push(name);
        }
      }
    }
    if (Object.keys(manifest).length === 0) {
      rmSync(staging, { recursive: true, force: true });
      return undefined;
    }
    const bytes = Object.values(manifest).reduce((a, b) => a + b, 0);
    const meta = {
      id,
      timestamp: stamp,
      label: label ?? null,
      file_count: Object.keys(manifest).length,
      total_size: bytes,
      files: manifest,
      failed_dbs: failed,
      oversized_skipped: [],
    };
    writeFileSync(join(staging, "manifest.json"), `${JSON.stringify(meta, null, 2)}\n`, { mode: 0o600 });
    renameSync(staging, join(root, id));
    // An incomplete snapshot may leave an older one as the only copy of a database: keep them all.
    if (failed.length === 0) prune(root);
    return { id, path: join(root, id), files: meta.file_count, bytes, failed };
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
}

function filesUnder(path: string): string[] {
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(path);
  } catch {
    return [];
  }
  if (stat.isFile()) return [path];
  if (!stat.isDirectory()) return [];
  return readdirSync(path, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() || entry.isFile() ? filesUnder(join(path, entry.name)) : [],
  );
}

function prune(root: string): void {
  const snapshots = readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith("."))
    .map((entry) => entry.name)
    .sort()
    .reverse();
  for (const old of snapshots.slice(KEEP)) rmSync(join(root, old), { recursive: true, force: true });
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}
