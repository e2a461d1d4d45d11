/**
 * The shapes `hermes state migrate` / `export` share between the orchestration
 * (`state-transfer.ts`) and the parts it runs (`state-knowledge-parts.ts`).
 */
import type { PgDatabase } from "../state/postgres/database.js";

/** One counted item of a part (`skills`, `cron: outputs`, …) after a copy in either direction. */
export interface PartRow {
  /** What the row counts, e.g. `memories: MEMORY.md`. */
  item: string;
  /** Items in the source. */
  source: number;
  /** Items this run wrote. */
  copied: number;
  /** Items the target already had. */
  present: number;
  /** Source items left out on purpose (each with a note). */
  skipped: number;
  verified: boolean;
}

export interface PartReport {
  part: string;
  rows: PartRow[];
  /** Why a row did not verify, one line each. */
  problems: string[];
  /** What was left out and why (bundled skills, legacy pairing requests, …); not failures. */
  notes: string[];
}

export interface TransferContext {
  /** The file home: copied from on migrate, written to on export. */
  home: string;
  db: PgDatabase;
  /** Rows per transaction for the session tables. */
  batch?: number;
  /** config.yaml `timezone`, for the cron files' times. */
  timezone?: string;
}

/** One part of a home, both directions. */
export interface HomePart {
  name: string;
  copyIn(ctx: TransferContext): Promise<PartReport>;
  copyOut(ctx: TransferContext): Promise<PartReport>;
}

export interface HomeTransferReport {
  parts: PartReport[];
  /** True when every row of every part verified. */
  verified: boolean;
}

/** A row whose counts say it verified: every source item is copied, already there or skipped. */
export function countedRow(item: string, counts: Omit<PartRow, "item" | "verified">, ok: boolean): PartRow {
  return { item, ...counts, verified: ok };
}
