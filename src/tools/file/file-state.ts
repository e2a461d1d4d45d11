/**
 * Per-session record of what the model has seen of each file, so a write based on an old read
 * cannot silently overwrite changes made since (by the user, a formatter, another agent).
 * A file never read in this session may be written freely; only stale knowledge is refused.
 */
import type { Stats } from "node:fs";
import { stat } from "node:fs/promises";
import type { ToolContext } from "../types.js";
import { displayPath } from "./shared.js";

const SESSION_KEY = "file.reads";

interface FileStamp {
  mtimeMs: number;
  size: number;
}

function stamps(ctx: ToolContext): Map<string, FileStamp> {
  const existing = ctx.session.get(SESSION_KEY);
  if (existing instanceof Map) return existing as Map<string, FileStamp>;
  const created = new Map<string, FileStamp>();
  ctx.session.set(SESSION_KEY, created);
  return created;
}

/** Remembers the version of `abs` the model has now seen (after a read, or after it wrote it). */
export function recordSeen(ctx: ToolContext, abs: string, stats: Pick<Stats, "mtimeMs" | "size">): void {
  stamps(ctx).set(abs, { mtimeMs: stats.mtimeMs, size: stats.size });
}

/**
 * Re-stats `abs` after a write and records it; a file that vanished is forgotten. `statOf` reads
 * the active environment (default: node:fs).
 */
export async function recordWritten(
  ctx: ToolContext,
  abs: string,
  statOf: (abs: string) => Promise<Pick<Stats, "mtimeMs" | "size"> | undefined> = (p) => stat(p),
): Promise<void> {
  try {
    const current = await statOf(abs);
    if (current) recordSeen(ctx, abs, current);
    else stamps(ctx).delete(abs);
  } catch {
    stamps(ctx).delete(abs);
  }
}

export function forget(ctx: ToolContext, abs: string): void {
  stamps(ctx).delete(abs);
}

/**
 * Throws when `abs` was read in this session and has changed on disk since. `current` is the
 * file's stats now, or undefined when it does not exist (nothing to be stale about).
 */
export function assertFresh(
  ctx: ToolContext,
  abs: string,
  current: Pick<Stats, "mtimeMs" | "size"> | undefined,
  cwd = ctx.cwd,
): void {
  if (!current) return;
  const seen = stamps(ctx).get(abs);
  if (!seen) return;
  if (seen.mtimeMs === current.mtimeMs && seen.size === current.size) return;
  throw new Error(
    `${displayPath(abs, cwd)} was modified on disk after you last read it. ` +
      "Read it again with read_file and redo your change on the current content.",
  );
}
