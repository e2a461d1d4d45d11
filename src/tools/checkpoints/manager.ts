/**
 * The per-session side of checkpoints: at most one snapshot per turn, taken before the turn's
 * first file mutation, with auto-prune on the session's first snapshot. The agent calls `newTurn`
 * when a user turn starts and awaits `beforeMutation` before running a mutating tool; calls made
 * together (parallel tools) share one snapshot.
 */
import type { HermesConfig } from "../../config/defaults.js";
import { autoPrune } from "./prune.js";
import { type SnapshotLimits, type SnapshotOutcome, takeSnapshot } from "./snapshot.js";
import { type StorePaths, storePaths } from "./store.js";

export interface CheckpointSettings {
  enabled: boolean;
  limits: SnapshotLimits;
  autoPrune: boolean;
  retentionDays: number;
  deleteOrphans: boolean;
  maxTotalSizeMb: number;
  minIntervalHours: number;
  /** `terminal.backend`: only `local` files are on this host to snapshot. */
  backend: string;
}

const number = (value: unknown, fallback: number): number =>
  typeof value === "number" && Number.isFinite(value) ? value : fallback;

/** The settings from `checkpoints.*` (a bad value falls back to upstream's default). */
export function checkpointSettings(config: HermesConfig): CheckpointSettings {
  const c = (config.checkpoints ?? {}) as Partial<HermesConfig["checkpoints"]>;
  return {
    enabled: c.enabled === true,
    limits: {
      maxSnapshots: Math.max(1, number(c.max_snapshots, 20)),
      maxFileBytes: Math.max(0, number(c.max_file_size_mb, 10)) * 1024 * 1024,
      maxFiles: Math.max(1, number(c.max_files, 50_000)),
    },
    autoPrune: c.auto_prune !== false,
    retentionDays: number(c.retention_days, 7),
    deleteOrphans: c.delete_orphans !== false,
    maxTotalSizeMb: number(c.max_total_size_mb, 500),
    minIntervalHours: number(c.min_interval_hours, 24),
    backend: typeof config.terminal?.backend === "string" ? config.terminal.backend : "local",
  };
}

/** Why checkpoints cannot cover this session's files, or undefined when they can. */
export function unsupportedBackend(settings: CheckpointSettings): string | undefined {
  if (settings.backend === "local" || settings.backend === "") return undefined;
  return (
    `Checkpoints cover the local backend only: terminal.backend is ${settings.backend}, so the agent's ` +
    `files live in that environment and are not checkpointed.`
  );
}

export type CheckpointNote = { kind: "warning"; message: string };

export class CheckpointSession {
  readonly paths: StorePaths;
  private turnSnapshot: Promise<CheckpointNote | undefined> | undefined;
  private pruned = false;
  /** Skip notes already told this session (one per reason, not one per turn). */
  private readonly told = new Set<string>();

  constructor(
    private readonly options: {
      home: string;
      workdir: string;
      settings: CheckpointSettings;
      now?: () => number;
    },
  ) {
    this.paths = storePaths(options.home);
  }

  get workdir(): string {
    return this.options.workdir;
  }

  /** A new user turn: its first mutation takes a snapshot again. */
  newTurn(): void {
    this.turnSnapshot = undefined;
  }

  /**
   * Snapshots the working directory unless this turn already did. Never rejects: a failure or a
   * skip becomes a note for the user (once per reason per session); the tool runs either way.
   */
  beforeMutation(reason: string): Promise<CheckpointNote | undefined> {
    if (!this.options.settings.enabled) return Promise.resolve(undefined);
    this.turnSnapshot ??= this.snapshot(reason);
    return this.turnSnapshot;
  }

  private async snapshot(reason: string): Promise<CheckpointNote | undefined> {
    const { settings, workdir } = this.options;
    const unsupported = unsupportedBackend(settings);
    if (unsupported) return this.tell(unsupported);
    const now = this.options.now?.() ?? Date.now() / 1000;
    let outcome: SnapshotOutcome;
    try {
      outcome = await takeSnapshot(this.paths, workdir, reason, settings.limits, now);
    } catch (error) {
      return this.tell(
        `Checkpoint failed (${error instanceof Error ? error.message : String(error)}); /rollback cannot undo this turn.`,
      );
    }
    if (!this.pruned && settings.autoPrune) {
      this.pruned = true;
      try {
        await autoPrune(this.paths, { ...settings, minIntervalHours: settings.minIntervalHours }, now);
      } catch {
        // Maintenance must never stand in the turn's way; `hermes checkpoints prune` reports errors.
      }
    }
    if (outcome.kind === "skipped")
      return this.tell(`Checkpoint skipped: ${outcome.reason}; /rollback cannot undo this turn.`);
    return undefined;
  }

  private tell(message: string): CheckpointNote | undefined {
    if (this.told.has(message)) return undefined;
    this.told.add(message);
    return { kind: "warning", message };
  }
}
