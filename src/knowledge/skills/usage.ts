/**
 * Skill usage for the learning loop: one entry point every path calls when a skill is used, and
 * the write origin that decides `created_by`. The counters live in `skills/.usage.json`
 * (provenance.ts owns the file and its lock); this module adds the meaning on top.
 *
 * Which path records what:
 * - the model reading a skill with `skill_view(name)`: "view"; reading one of its files: "use"
 *   (the model is following the procedure, not just looking);
 * - `/<skill-name>`, a cron job's or a webhook's skills (loadSkillMessage): "use";
 * - `skill_manage` create / patch / edit / write_file / remove_file: "create" or "patch";
 * - the background review's edits go through `skill_manage` too; its agent carries the write origin
 *   "background_review" on every tool call (`ToolContext.writeOrigin`), so what it creates is
 *   curator-managed.
 */
import {
  mutateUsage,
  type RecordUsageOptions,
  readUsage,
  recordSkillUsage,
  type SkillUsageRecord,
} from "./provenance.js";

/**
 * Who is writing skills right now. "foreground": the user, or the agent in a conversation (at the
 * user's request). "background_review" and "curator": the autonomous loop; skills they create get
 * `created_by: agent` and are the only ones the curator may stale, archive or merge.
 */
export type SkillWriteOrigin = "foreground" | "background_review" | "curator";

/** The `created_by` value a skill created now gets: "agent" only from the autonomous loop. */
export function createdByForOrigin(origin: SkillWriteOrigin | undefined): "agent" | null {
  return origin === undefined || origin === "foreground" ? null : "agent";
}

export type SkillUseKind = "view" | "use" | "patch" | "create" | "delete";

/**
 * Records one use of skill `name` in `<home>/skills/.usage.json` (locked, atomic, best effort:
 * resolves false instead of throwing, so counting never fails the caller). Bundled and hub skills
 * are not recorded, as in Python Hermes. For "create", `created_by` is `options.createdBy`
 * (null, the user's own, when not given).
 */
export function recordSkillUse(
  home: string,
  name: string,
  kind: SkillUseKind,
  options: RecordUsageOptions = {},
): Promise<boolean> {
  return recordSkillUsage(home, name, kind, { ...options, createdBy: options.createdBy ?? null });
}

/** Parses an ISO time as Python writes it (`+00:00` or `Z`); undefined when absent or unreadable. */
export function parseIsoTime(value: unknown): Date | undefined {
  if (typeof value !== "string" || !value.trim()) return undefined;
  const text = value.trim();
  // Python may write a naive time (no zone): Hermes always means UTC then.
  const zoned = /(?:Z|[+-]\d\d:?\d\d)$/.test(text) ? text : `${text}Z`;
  const ms = Date.parse(zoned);
  return Number.isFinite(ms) ? new Date(ms) : undefined;
}

/** The newest of last_used_at, last_viewed_at, last_patched_at (and last_activity_at). */
export function latestActivityAt(record: SkillUsageRecord | undefined): Date | undefined {
  if (!record) return undefined;
  let best: Date | undefined;
  for (const key of ["last_used_at", "last_viewed_at", "last_patched_at", "last_activity_at"] as const) {
    const at = parseIsoTime(record[key]);
    if (at && (!best || at > best)) best = at;
  }
  return best;
}

const num = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : 0);

/** Uses, views and patches together. */
export function activityCount(record: SkillUsageRecord | undefined): number {
  return record ? num(record.use_count) + num(record.view_count) + num(record.patch_count) : 0;
}

/** Whether the curator may change this skill on its own: `created_by: agent` and not pinned. */
export function isCuratorManaged(record: SkillUsageRecord | undefined): boolean {
  return record?.created_by === "agent" || record?.["agent_created"] === true;
}

/**
 * Skill usage records as a backend other than `skills/.usage.json` provides them (asynchronous);
 * `skillUsageFile` is the file under `home`.
 */
export interface SkillUsageRecords {
  /** Every record, name → record; empty when none. */
  read(): Promise<Record<string, SkillUsageRecord>>;
  /** Records one use (see `recordSkillUse`); false when it could not be recorded. */
  record(name: string, kind: SkillUseKind, options?: RecordUsageOptions): Promise<boolean>;
  /**
   * Read-modify-write of every record at once (the curator's states and pins): `change` edits the
   * map in place, returning false to leave the records as they were. Atomic against `record`.
   */
  mutate(change: (data: Record<string, SkillUsageRecord>) => unknown): Promise<void>;
  /**
   * A token that differs whenever any record changed since it was taken (on any instance), for
   * callers that keep something made from the records (the prompt's skills index). Absent for
   * `skills/.usage.json`, whose own stat is the stamp.
   */
  version?(): Promise<string>;
  /**
   * The records as last read or written here, for synchronous callers that only label skills
   * (discovery's "agent" origin); never for decisions (pins, curator states): those `read()`.
   * Absent for `skills/.usage.json` (read directly); undefined before the first read.
   */
  snapshot?(): Readonly<Record<string, SkillUsageRecord>> | undefined;
}

export function skillUsageFile(home: string): SkillUsageRecords {
  return {
    read: async () => readUsage(home),
    record: (name, kind, options) => recordSkillUse(home, name, kind, options),
    mutate: (change) => mutateUsage(home, change),
  };
}
