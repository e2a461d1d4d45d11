/**
 * Stores for the last per-home pieces that a shared backend (PostgreSQL) keeps for every instance:
 * the opt-out lists of bundled skills, writes staged for approval and the curator's run reports.
 * A file home has none of them registered: its files are all (`bundled-opt-out.ts`,
 * `write-approval/pending.ts`, `curator/report.ts`), unchanged.
 */
import type { PendingRecord, ReadRecord, Subsystem } from "./write-approval/pending.js";

/** The home's "no" to bundled skills: `.no-bundled-skills` and `skills/.curator_suppressed`. */
export interface OptOutLists {
  all: boolean;
  /** Skill names, sorted. */
  skills: string[];
}

export interface SharedOptOuts {
  /** The lists as the backend holds them; undefined while they were never shared (the files rule). */
  read(): Promise<OptOutLists | undefined>;
  /** Sets the whole-home opt-out for every instance; answers whether it changed. Writes the files too. */
  setAll(optedOut: boolean): Promise<boolean>;
  /** Adds or removes one suppressed name for every instance; answers whether it changed. Files too. */
  setSkill(name: string, suppressed: boolean): Promise<boolean>;
  /** Writes the backend's lists into this home's two files (only where they differ). */
  materialize(): Promise<void>;
}

/** Writes staged for approval, readable and decidable from any instance, the CLI or the dashboard. */
export interface PendingWriteRecords {
  /** Stores a new record (its id is fresh). */
  add(record: PendingRecord): Promise<void>;
  /** One record; undefined when there is none with that id (or it is being applied elsewhere). */
  get(subsystem: Subsystem, id: string): Promise<ReadRecord | undefined>;
  /** Every record not being applied, oldest first. */
  list(subsystem: Subsystem): Promise<ReadRecord[]>;
  count(subsystem: Subsystem): Promise<number>;
  /**
   * Takes a record for applying or rejecting so no other process can: false when it is gone or
   * another process holds it. A claim left by a process that died expires after ten minutes.
   */
  claim(subsystem: Subsystem, id: string): Promise<boolean>;
  /** Puts a claimed record back (the apply failed). */
  release(subsystem: Subsystem, id: string): Promise<void>;
  /** Removes a claimed record for good (applied or rejected). */
  finish(subsystem: Subsystem, id: string): Promise<void>;
}

/** One curator run's record (`run.json`), by its folder name under `logs/curator/`. */
export interface CuratorReportEntry {
  id: string;
  report: Record<string, unknown>;
}

export interface CuratorReportRecords {
  /** Stores a run's record under `id` (a fresh `-N` suffix when taken); answers the id used. */
  add(id: string, report: Record<string, unknown>): Promise<string>;
  /** Every run, oldest first. */
  list(): Promise<CuratorReportEntry[]>;
}
