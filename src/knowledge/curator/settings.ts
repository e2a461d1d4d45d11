/**
 * `curator.*` from config.yaml, read tolerantly with Python Hermes's defaults: a value of the wrong
 * type falls back to its default rather than failing a run the user did not start.
 */

export interface CuratorSettings {
  enabled: boolean;
  /** Hours between scheduled runs (168: weekly). */
  intervalHours: number;
  /** A scheduled run waits until the agent has been idle this long. */
  minIdleHours: number;
  /** Days without activity before a curator-managed skill is marked stale. */
  staleAfterDays: number;
  /** Days without activity before it is moved to `skills/.archive/`. */
  archiveAfterDays: number;
  /** Ask the auxiliary model (`auxiliary.curator`) to propose merges of near-duplicate skills. */
  consolidate: boolean;
  backup: { enabled: boolean; keep: number };
}

export const CURATOR_DEFAULTS: CuratorSettings = {
  enabled: true,
  intervalHours: 168,
  minIdleHours: 2,
  staleAfterDays: 30,
  archiveAfterDays: 90,
  consolidate: false,
  backup: { enabled: true, keep: 5 },
};

const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

function number(value: unknown, fallback: number, min: number): number {
  const n = typeof value === "string" && value.trim() ? Number(value) : value;
  return typeof n === "number" && Number.isFinite(n) && n >= min ? n : fallback;
}

function bool(value: unknown, fallback: boolean): boolean {
  if (typeof value === "boolean") return value;
  if (typeof value === "string") {
    if (/^(true|yes|on|1)$/i.test(value.trim())) return true;
    if (/^(false|no|off|0)$/i.test(value.trim())) return false;
  }
  return fallback;
}

/** The curator's settings from `config` (missing or wrong-typed keys take the defaults). */
export function curatorSettings(config: Readonly<Record<string, unknown>>): CuratorSettings {
  const c = record(config["curator"]);
  const backup = record(c["backup"]);
  const d = CURATOR_DEFAULTS;
  return {
    enabled: bool(c["enabled"], d.enabled),
    intervalHours: number(c["interval_hours"], d.intervalHours, 0),
    minIdleHours: number(c["min_idle_hours"], d.minIdleHours, 0),
    staleAfterDays: number(c["stale_after_days"], d.staleAfterDays, 1),
    archiveAfterDays: number(c["archive_after_days"], d.archiveAfterDays, 1),
    consolidate: bool(c["consolidate"], d.consolidate),
    backup: {
      enabled: bool(backup["enabled"], d.backup.enabled),
      keep: Math.floor(number(backup["keep"], d.backup.keep, 1)),
    },
  };
}

/** Whether `skills.write_approval` is on: consolidation merges are then proposed, never applied. */
export function skillWriteApproval(config: Readonly<Record<string, unknown>>): boolean {
  return bool(record(config["skills"])["write_approval"], false);
}
