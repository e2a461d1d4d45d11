/**
 * Housekeeping: deleting and pruning sessions, statistics, FTS optimisation and VACUUM, and the
 * health check / repair pair. Nothing here deletes user data except `deleteSessions` and `prune`,
 * which callers ask for explicitly; `repair` only rebuilds derived data (indexes, counters).
 */
import { statSync } from "node:fs";
import { memoryDb, withBusyRetry } from "./connection.js";
import type { StoreContext, StoreShape } from "./context.js";
import { type Drift, describeDrift, driftFromRow, recountedLine } from "./counter-drift.js";
import { lastMessageAt, summarize } from "./listing.js";
import {
  expectedColumns,
  type FtsTable,
  fillFtsFromMessages,
  INDEXES,
  isInlineFts,
  planSchema,
  readMaster,
  trigramSupported,
} from "./schema.js";
import { type RepairReport, type SessionStats, SessionStoreError, type SessionSummary } from "./types.js";

const CHUNK = 500;

/** Assistant tool calls of the active messages of the session whose id is `idSql`. */
function toolCallSum(ctx: StoreContext, idSql: string): string {
  return `COALESCE((SELECT SUM(json_array_length(c.tool_calls)) FROM messages c
    WHERE c.session_id = ${idSql} AND ${ctx.activeMessage("c")} AND c.role = 'assistant'
      AND c.tool_calls IS NOT NULL AND json_valid(c.tool_calls) AND json_type(c.tool_calls) = 'array'), 0)`;
}

function activeCount(ctx: StoreContext, idSql: string): string {
  return `(SELECT COUNT(*) FROM messages c WHERE c.session_id = ${idSql} AND ${ctx.activeMessage("c")})`;
}

/** Sets a session's message_count and tool_call_count from its active rows (inside a write). */
export function recountSession(ctx: StoreContext, id: string): void {
  ctx
    .stmt(
      `UPDATE sessions SET message_count = ${activeCount(ctx, "?")}, tool_call_count = ${toolCallSum(ctx, "?")} WHERE id = ?`,
    )
    .run(id, id, id);
}

/**
 * Deletes sessions and their messages inside the caller's write. Sessions whose parent is deleted
 * keep living with `parent_session_id` cleared; FTS rows go with their messages (triggers).
 */
export function deleteSessions(
  ctx: StoreContext,
  ids: readonly string[],
): { sessions: number; messages: number } {
  let sessions = 0;
  let messages = 0;
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK);
    const marks = chunk.map(() => "?").join(", ");
    ctx.db
      .prepare(`UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id IN (${marks})`)
      .run(...chunk);
    messages += ctx.db.prepare(`DELETE FROM messages WHERE session_id IN (${marks})`).run(...chunk).changes;
    for (const table of ["compression_locks", "telegram_dm_topic_bindings"]) {
      if (readMaster(ctx.db).has(table))
        ctx.db.prepare(`DELETE FROM ${table} WHERE session_id IN (${marks})`).run(...chunk);
    }
    sessions += ctx.db.prepare(`DELETE FROM sessions WHERE id IN (${marks})`).run(...chunk).changes;
  }
  return { sessions, messages };
}

function cutoffOf(ctx: StoreContext, olderThanDays: number): number {
  if (!Number.isFinite(olderThanDays) || olderThanDays < 0) {
    throw new SessionStoreError(
      "invalid",
      `olderThanDays must be a number of days, 0 or more; got ${olderThanDays}.`,
    );
  }
  return ctx.now() - olderThanDays * 86_400;
}

/**
 * Prune candidates: sessions that have ended, and whose start, end and newest message are all older
 * than the cutoff. A session that was never ended is kept however old it is (a gateway chat can be
 * quiet for months and still be the one the user returns to), and so is one that ended long ago
 * but was resumed since.
 */
function candidateRows(ctx: StoreContext, options: { olderThanDays: number; source?: string }) {
  const cutoff = cutoffOf(ctx, options.olderThanDays);
  const bySource = options.source !== undefined ? " AND source = ?" : "";
  const rows = ctx.all(
    `SELECT * FROM sessions WHERE ended_at IS NOT NULL AND ended_at < ? AND started_at < ?${bySource} ORDER BY started_at, id`,
    cutoff,
    cutoff,
    ...(options.source !== undefined ? [options.source] : []),
  );
  return rows.filter((row) => (lastMessageAt(ctx, String(row["id"])) ?? 0) < cutoff);
}

export function prunable(
  ctx: StoreContext,
  options: { olderThanDays: number; source?: string },
): SessionSummary[] {
  return ctx.read(() => candidateRows(ctx, options).map((row) => summarize(ctx, row)));
}

export function prune(
  ctx: StoreContext,
  options: { olderThanDays: number; source?: string },
): { sessions: number; messages: number } {
  return ctx.write(() =>
    deleteSessions(
      ctx,
      candidateRows(ctx, options).map((row) => String(row["id"])),
    ),
  );
}

function fileBytes(path: string): number {
  let total = 0;
  for (const p of [path, `${path}-wal`]) {
    try {
      total += statSync(p).size;
    } catch {
      // No WAL right now.
    }
  }
  return total;
}

export function stats(ctx: StoreContext): SessionStats {
  return ctx.read(() => {
    const bySource: Record<string, number> = {};
    let sessions = 0;
    for (const r of ctx.all("SELECT source, COUNT(*) AS n FROM sessions GROUP BY source ORDER BY source")) {
      bySource[String(r["source"])] = Number(r["n"]);
      sessions += Number(r["n"]);
    }
    const range = ctx.get("SELECT MIN(started_at) AS lo, MAX(started_at) AS hi FROM sessions");
    const master = readMaster(ctx.db);
    const version = master.has("schema_version")
      ? ctx.get("SELECT MAX(version) AS v FROM schema_version")?.["v"]
      : null;
    return {
      sessions,
      messages: Number(ctx.get("SELECT COUNT(*) AS n FROM messages")?.["n"] ?? 0),
      bySource,
      bytes: fileBytes(ctx.path),
      fts: ctx.shape.fts,
      trigram: ctx.shape.trigram,
      schemaVersion: version === null || version === undefined ? 0 : Number(version),
      oldestStartedAt: range?.["lo"] === null || range?.["lo"] === undefined ? null : Number(range["lo"]),
      newestStartedAt: range?.["hi"] === null || range?.["hi"] === undefined ? null : Number(range["hi"]),
    };
  });
}

function ftsTables(shape: StoreShape): FtsTable[] {
  const out: FtsTable[] = [];
  if (shape.fts) out.push("messages_fts");
  if (shape.trigram) out.push("messages_fts_trigram");
  return out;
}

/** Merges FTS segments, then VACUUMs and truncates the WAL. */
export function optimize(ctx: StoreContext): { bytesBefore: number; bytesAfter: number } {
  const bytesBefore = fileBytes(ctx.path);
  ctx.write(() => {
    for (const t of ftsTables(ctx.shape)) ctx.db.prepare(`INSERT INTO ${t}(${t}) VALUES ('optimize')`).run();
  });
  ctx.read(() =>
    withBusyRetry(ctx.path, ctx.retryBudgetMs, () => {
      ctx.db.exec("VACUUM");
      ctx.db.pragma("wal_checkpoint(TRUNCATE)");
    }),
  );
  return { bytesBefore, bytesAfter: fileBytes(ctx.path) };
}

interface FtsHealth {
  table: FtsTable;
  problem: string | null;
}

function ftsHealth(ctx: StoreContext): FtsHealth[] {
  const out: FtsHealth[] = [];
  const messages = Number(ctx.get("SELECT COUNT(*) AS n FROM messages")?.["n"] ?? 0);
  const master = readMaster(ctx.db);
  for (const table of ftsTables(ctx.shape)) {
    let problem: string | null = null;
    if (isInlineFts(master.get(table)?.sql)) {
      const indexed = Number(ctx.get(`SELECT COUNT(*) AS n FROM ${table}`)?.["n"] ?? 0);
      if (indexed !== messages) problem = `${table} indexes ${indexed} messages but there are ${messages}`;
    }
    if (!problem && !ctx.readonly) {
      try {
        ctx.db.prepare(`INSERT INTO ${table}(${table}) VALUES ('integrity-check')`).run();
      } catch (error) {
        problem = `${table} failed its integrity check: ${error instanceof Error ? error.message : String(error)}`;
      }
    }
    out.push({ table, problem });
  }
  return out;
}

function counterDrift(ctx: StoreContext): Drift[] {
  return ctx
    .all(
      `SELECT id, stored, actual, stored_calls, actual_calls FROM (
         SELECT s.id, COALESCE(s.message_count, 0) AS stored, ${activeCount(ctx, "s.id")} AS actual,
                COALESCE(s.tool_call_count, 0) AS stored_calls, ${toolCallSum(ctx, "s.id")} AS actual_calls
         FROM sessions s)
       WHERE stored <> actual OR stored_calls <> actual_calls`,
    )
    .map(driftFromRow);
}

function integrity(ctx: StoreContext): { ok: boolean; problems: string[] } {
  // PRAGMA integrity_check checks FTS5 tables through a path that reuses the structure this
  // connection cached when it last used them; if other processes wrote since, it reports a
  // checksum mismatch that is not there. Opening a cursor on each table first refreshes it.
  for (const t of ftsTables(ctx.shape)) ctx.db.prepare(`SELECT rowid FROM ${t} WHERE rowid = 0`).all();
  const rows = ctx.db.prepare("PRAGMA integrity_check(20)").all() as Array<{ integrity_check: string }>;
  const lines = rows.map((r) => r.integrity_check);
  const ok = lines.length === 1 && lines[0] === "ok";
  return { ok, problems: ok ? [] : lines.map((l) => `integrity: ${l}`) };
}

function schemaProblems(ctx: StoreContext): string[] {
  const plan = planSchema(ctx.db, expectedColumns(memoryDb), trigramSupported(ctx.db));
  return [
    ...plan.tables.map((t) => `missing table ${t}`),
    ...plan.columns.map((c) => `missing column ${c.table}.${c.column.name}`),
    // Our speed-only indexes are absent from files Python Hermes wrote: not a problem (the next
    // read-write open adds them).
    ...plan.indexes.filter((i) => !INDEXES.find((x) => x.name === i)?.ours).map((i) => `missing index ${i}`),
    ...plan.ftsTables.map((t) => `missing full-text table ${t}`),
    ...plan.triggers.map((t) => `missing trigger ${t}`),
  ];
}

/** Read-only health check: integrity, schema, FTS consistency, counters. Changes nothing. */
export function check(ctx: StoreContext, openProblems: readonly string[]): RepairReport {
  return ctx.read(() => {
    const { ok, problems } = integrity(ctx);
    problems.push(...schemaProblems(ctx), ...openProblems);
    for (const h of ftsHealth(ctx)) if (h.problem) problems.push(h.problem);
    const drift = counterDrift(ctx);
    if (drift.length) problems.push(describeDrift(drift));
    return { integrity: ok, problems, fixed: [] };
  });
}

/**
 * Fixes in place what `check` finds: missing tables, columns, indexes and triggers; FTS tables
 * whose contents disagree with `messages` (re-derived from it); drifted counters. Page-level
 * corruption (integrity_check failures) cannot be fixed here and stays in `problems`.
 */
export function repair(
  ctx: StoreContext,
  reconcile: () => { done: string[]; problems: string[] },
  reshape: () => StoreShape,
): RepairReport {
  if (ctx.readonly) {
    throw new SessionStoreError(
      "readonly",
      `${ctx.path} was opened read-only; open it writable to repair it.`,
    );
  }
  const fixed: string[] = [];
  const problems: string[] = [];
  const schema = reconcile();
  fixed.push(...schema.done);
  problems.push(...schema.problems);
  ctx.shape = ctx.read(reshape);
  const sick = ctx.read(() => ftsHealth(ctx)).filter((h) => h.problem);
  if (sick.length) {
    ctx.write(() => {
      const master = readMaster(ctx.db);
      for (const h of sick) {
        if (isInlineFts(master.get(h.table)?.sql)) fillFtsFromMessages(ctx.db, h.table);
        else ctx.db.prepare(`INSERT INTO ${h.table}(${h.table}) VALUES ('rebuild')`).run();
        fixed.push(`rebuilt ${h.table} (${h.problem})`);
      }
    });
  }
  const drift = ctx.read(() => counterDrift(ctx));
  if (drift.length) {
    ctx.write(() => {
      for (const d of drift) recountSession(ctx, d.id);
    });
    fixed.push(recountedLine(drift.length));
  }
  const { ok, problems: integrityProblems } = ctx.read(() => integrity(ctx));
  problems.push(...integrityProblems);
  for (const h of ctx.read(() => ftsHealth(ctx))) if (h.problem) problems.push(h.problem);
  return { integrity: ok, problems, fixed };
}

const AUTO_PRUNE_MARKER = "last_auto_prune";

/**
 * `sessions.auto_prune`: prunes ended sessions older than `retentionDays`, at most once per
 * `minIntervalHours` across every process sharing the file (the time of the last run is kept in
 * `state_meta.last_auto_prune`, as Python Hermes keeps it). VACUUMs only when something was pruned.
 */
export function autoPrune(
  ctx: StoreContext,
  options: { retentionDays: number; minIntervalHours: number; vacuum: boolean },
): { skipped: boolean; sessions: number; vacuumed: boolean } {
  const now = ctx.now();
  const last = Number(
    ctx.read(() => ctx.get("SELECT value FROM state_meta WHERE key = ?", AUTO_PRUNE_MARKER))?.["value"] ??
      Number.NaN,
  );
  if (Number.isFinite(last) && now - last < options.minIntervalHours * 3600) {
    return { skipped: true, sessions: 0, vacuumed: false };
  }
  ctx.write(() => {
    ctx.db
      .prepare("INSERT OR REPLACE INTO state_meta (key, value) VALUES (?, ?)")
      .run(AUTO_PRUNE_MARKER, String(now));
  });
  const { sessions } = prune(ctx, { olderThanDays: options.retentionDays });
  const vacuumed = sessions > 0 && options.vacuum;
  if (vacuumed) optimize(ctx);
  return { skipped: false, sessions, vacuumed };
}
