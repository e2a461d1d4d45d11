/**
 * Remote-to-host file sync on teardown (`terminal.file_sync_enabled`, `file_sync_max_mb`), as
 * upstream documents it: what the agent added or changed under the remote working directory is
 * copied back to `HERMES_HOME/cache/remote-syncs/<id>/` when the environment stops, so the results
 * survive the remote side. Deletions are listed in the sync record; files over the size cap are
 * skipped and named.
 *
 * How changes are found: at start a marker file and a list of the files already there are left in
 * the environment's private remote directory; at stop `find -newer marker` gives the added and
 * changed files, and the list gives the deleted ones. Only the remote side walks the tree, and
 * one tar stream brings the files back. Works with GNU and busybox find/tar.
 */

import { spawn } from "node:child_process";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { shq } from "../exec-files.js";
import type { ShellChannel } from "../types.js";

/** Most files listed at start; past it deletions are not tracked (the record says so). */
export const MANIFEST_LIMIT = 200_000;

export interface SyncPaths {
  /** Remote working directory whose tree is tracked. */
  workdir: string;
  /** Private remote directory for the marker and lists (the environment's own). */
  stateDir: string;
}

/** Leaves the marker and the list of existing files in the environment. */
export async function beginSync(channel: ShellChannel, paths: SyncPaths): Promise<void> {
  const script = [
    `w=${shq(paths.workdir)}; r=${shq(paths.stateDir)}`,
    `touch "$r/sync-marker" || exit 1`,
    `cd "$w" || exit 1`,
    `find . -xdev -type f -print 2>/dev/null | head -n ${MANIFEST_LIMIT + 1} > "$r/sync-manifest"`,
  ].join("\n");
  const result = await channel.exec(script, { timeoutMs: 120_000 });
  if (result.exitCode !== 0)
    throw new Error(
      `file sync could not start in ${paths.workdir}: ${result.stderr.trim() || `exit ${result.exitCode}`}`,
    );
}

export interface SyncRecord {
  backend: string;
  target: string;
  workdir: string;
  finishedAt: string;
  /** Files copied back (relative to workdir). */
  changed: string[];
  /** Files that were there at start and are gone now. */
  deleted: string[];
  /** Changed files larger than the cap, not copied. */
  skipped: string[];
  /** False when the tree at start was larger than the listing limit. */
  deletionsComplete: boolean;
}

export interface SyncBackOptions extends SyncPaths {
  maxBytes: number;
  /** Host directory the files go to (created only when something changed). */
  dest: string;
  backend: string;
  target: string;
  now?: () => Date;
}

function lines(text: string): string[] {
  return text.split("\n").filter((line) => line.length > 0);
}

/** The shell that lists changed, skipped and deleted files, separated by marker lines. */
export function listChangesScript(paths: SyncPaths, maxBytes: number): string {
  const max = Math.max(0, Math.floor(maxBytes));
  return [
    `w=${shq(paths.workdir)}; r=${shq(paths.stateDir)}`,
    `cd "$w" || exit 1`,
    `[ -e "$r/sync-marker" ] || exit 3`,
    // A name with a newline splits into pieces that do not exist; the -e test drops them.
    `find . -xdev -type f -newer "$r/sync-marker" -size -${max + 1}c -print 2>/dev/null | while IFS= read -r f; do [ -f "$f" ] && printf '%s\\n' "$f"; done > "$r/sync-changed"`,
    `cat "$r/sync-changed"`,
    `echo @@hermes-skipped`,
    `find . -xdev -type f -newer "$r/sync-marker" -size +${max}c -print 2>/dev/null`,
    `echo @@hermes-deleted`,
    `while IFS= read -r f; do [ -e "$f" ] || [ -L "$f" ] || printf '%s\\n' "$f"; done < "$r/sync-manifest"`,
    `echo @@hermes-count; wc -l < "$r/sync-manifest"`,
  ].join("\n");
}

/** Splits the script's output into its lists. */
export function parseChanges(text: string): {
  changed: string[];
  skipped: string[];
  deleted: string[];
  manifestCount: number;
} {
  const [changed = "", rest1 = ""] = text.split("@@hermes-skipped\n");
  const [skipped = "", rest2 = ""] = rest1.split("@@hermes-deleted\n");
  const [deleted = "", count = "0"] = rest2.split("@@hermes-count\n");
  const strip = (name: string) => name.replace(/^\.\//, "");
  return {
    changed: lines(changed).map(strip),
    skipped: lines(skipped).map(strip),
    deleted: lines(deleted).map(strip),
    manifestCount: Number(count.trim()) || 0,
  };
}

/**
 * Copies what changed since `beginSync` to `dest` and writes `dest/.hermes-sync.json`. Returns
 * undefined when nothing was added, changed or deleted (no directory is made).
 */
export async function syncBack(
  channel: ShellChannel,
  options: SyncBackOptions,
): Promise<SyncRecord | undefined> {
  const listed = await channel.exec(listChangesScript(options, options.maxBytes), { timeoutMs: 120_000 });
  if (listed.exitCode === 3) return undefined;
  if (listed.exitCode !== 0)
    throw new Error(
      `file sync could not list changes in ${options.workdir}: ${listed.stderr.trim() || `exit ${listed.exitCode}`}`,
    );
  const found = parseChanges(listed.stdout.toString("utf8"));
  if (found.changed.length === 0 && found.deleted.length === 0 && found.skipped.length === 0)
    return undefined;
  await mkdir(options.dest, { recursive: true });
  if (found.changed.length > 0) await pullFiles(channel, options, options.dest);
  const record: SyncRecord = {
    backend: options.backend,
    target: options.target,
    workdir: options.workdir,
    finishedAt: (options.now?.() ?? new Date()).toISOString(),
    changed: found.changed,
    deleted: found.deleted,
    skipped: found.skipped,
    deletionsComplete: found.manifestCount <= MANIFEST_LIMIT,
  };
  await writeFile(join(options.dest, ".hermes-sync.json"), `${JSON.stringify(record, null, 2)}\n`);
  return record;
}

/** tar of the listed files in the environment, extracted on the host into `dest`. */
async function pullFiles(channel: ShellChannel, paths: SyncPaths, dest: string): Promise<void> {
  const remote = channel.open([
    "bash",
    "-c",
    `cd ${shq(paths.workdir)} && tar -cf - -T ${shq(`${paths.stateDir}/sync-changed`)}`,
  ]);
  const host = spawn("tar", ["-C", dest, "-xof", "-"], { stdio: ["pipe", "ignore", "pipe"] });
  let hostErr = "";
  host.stderr.on("data", (chunk: Buffer) => {
    hostErr += chunk.toString();
  });
  let remoteErr = "";
  remote.stderr.on("data", (chunk: Buffer) => {
    remoteErr += chunk.toString();
  });
  host.stdin.on("error", () => {});
  remote.stdout.pipe(host.stdin);
  remote.stdin.end();
  const hostExit = new Promise<number | null>((resolve) => {
    host.on("error", () => resolve(127));
    host.on("close", resolve);
  });
  const [remoteCode, hostCode] = await Promise.all([remote.exited, hostExit]);
  if (remoteCode !== 0 || hostCode !== 0) {
    await rm(dest, { recursive: true, force: true }).catch(() => {});
    throw new Error(
      `file sync failed: ${(remoteErr || hostErr).trim().slice(0, 300) || `tar exit ${remoteCode}/${hostCode}`}`,
    );
  }
}
