/**
 * Housekeeping of the PostgreSQL session store, as PostgreSQL sees it:
 *
 * - `deleteSession`: the session, its messages and compression lock in one transaction; children
 *   keep living with `parent_session_id` cleared (as in SQLite).
 * - `stats`: counts, by source, start range; `bytes` is the on-disk size of the `sessions` and
 *   `messages` tables with their indexes and TOAST (not the whole database, which other stores
 *   share); `fts`/`trigram` say whether a word index (GIN, not trigram) and a `pg_trgm` index exist
 *   on `messages`; `schemaVersion` is the newest applied migration.
 * - `check`: `integrity` is false when PostgreSQL counted data-checksum failures in this database
 *   (`pg_stat_database.checksum_failures`; always true when checksums are off: PostgreSQL has no
 *   SQLite-style `integrity_check`); problems: migrations of this build not applied, counters
 *   that disagree with the active messages.
 * - `repair`: applies missing migrations and recounts drifted counters.
 * - `optimize`: `VACUUM (ANALYZE)` of both tables (plain VACUUM returns space to the tables, not
 *   usually to the OS, so `bytesAfter` rarely shrinks; it never locks out other instances).
 */
import { type Drift, describeDrift, driftFromRow, recountedLine } from "../counter-drift.js";
import type { RepairReport, SessionStats } from "../types.js";
import { appliedVersions, migrate } from "./migrate.js";
import { MIGRATIONS } from "./migrations/index.js";
import { inTx, notFound, num, one, type PgStoreContext, run } from "./sessions-sql.js";
import { recountSession } from "./sessions-write.js";

export async function deleteSession(ctx: PgStoreContext, id: string): Promise<{ messages: number }> {
  return inTx(ctx, async (q) => {
    if (!(await one(q, "SELECT id FROM sessions WHERE id = $1 FOR UPDATE", [id]))) throw notFound(id);
    await run(q, "UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = $1", [id]);
    const gone = await one(
      q,
      "WITH d AS (DELETE FROM messages WHERE session_id = $1 RETURNING 1) SELECT count(*) AS n FROM d",
      [id],
    );
    await run(q, "DELETE FROM compression_locks WHERE session_id = $1", [id]);
    await run(q, "DELETE FROM sessions WHERE id = $1", [id]);
    return { messages: num(gone?.["n"]) };
  });
}

async function tableBytes(ctx: PgStoreContext): Promise<number> {
  const row = await one(
    ctx.db,
    "SELECT pg_total_relation_size('sessions') + pg_total_relation_size('messages') AS bytes",
  );
  return num(row?.["bytes"]);
}

export async function stats(ctx: PgStoreContext): Promise<SessionStats> {
  const [bySourceRows, counts, indexes, versions, bytes] = await Promise.all([
    run(ctx.db, "SELECT source, count(*) AS n FROM sessions GROUP BY source ORDER BY source"),
    one(
      ctx.db,
      "SELECT (SELECT count(*) FROM messages) AS messages, min(started_at) AS lo, max(started_at) AS hi FROM sessions",
    ),
    run(
      ctx.db,
      "SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'messages'",
    ),
    appliedVersions(ctx.db),
    tableBytes(ctx),
  ]);
  const bySource: Record<string, number> = {};
  let sessions = 0;
  for (const r of bySourceRows) {
    bySource[String(r["source"])] = num(r["n"]);
    sessions += num(r["n"]);
  }
  const defs = indexes.map((r) => String(r["indexdef"]).toLowerCase());
  const trigram = defs.some((d) => d.includes("gin_trgm_ops") || d.includes("gist_trgm_ops"));
  const fts = defs.some((d) => d.includes("using gin") && !d.includes("_trgm_ops"));
  const lo = counts?.["lo"];
  const hi = counts?.["hi"];
  return {
    sessions,
    messages: num(counts?.["messages"]),
    bySource,
    bytes,
    fts,
    trigram,
    schemaVersion: versions.length ? Math.max(...versions) : 0,
    oldestStartedAt: lo === null || lo === undefined ? null : Number(lo),
    newestStartedAt: hi === null || hi === undefined ? null : Number(hi),
  };
}

async function counterDrift(ctx: PgStoreContext): Promise<Drift[]> {
  const rows = await run(
    ctx.db,
    `WITH actual AS (
       SELECT s.id, COALESCE(s.message_count, 0) AS stored, COALESCE(s.tool_call_count, 0) AS stored_calls,
         COALESCE(a.n, 0) AS actual, COALESCE(a.calls, 0) AS actual_calls
       FROM sessions s LEFT JOIN (
         SELECT session_id, count(*) AS n,
           sum(CASE WHEN role = 'assistant' THEN hermes_json_array_length(tool_calls) ELSE 0 END) AS calls
         FROM messages WHERE active = 1 GROUP BY session_id) a ON a.session_id = s.id)
     SELECT * FROM actual WHERE stored <> actual OR stored_calls <> actual_calls ORDER BY id`,
  );
  return rows.map(driftFromRow);
}

async function integrity(ctx: PgStoreContext): Promise<{ ok: boolean; problems: string[] }> {
  const row = await one(
    ctx.db,
    "SELECT checksum_failures AS n FROM pg_stat_database WHERE datname = current_database()",
  );
  const failures = num(row?.["n"]);
  return failures > 0
    ? {
        ok: false,
        problems: [`integrity: PostgreSQL counted ${failures} data checksum failures in this database`],
      }
    : { ok: true, problems: [] };
}

async function missingMigrations(ctx: PgStoreContext): Promise<string[]> {
  const done = new Set(await appliedVersions(ctx.db));
  return MIGRATIONS.filter((m) => !done.has(m.version)).map(
    (m) => `missing migration ${m.version} (${m.name})`,
  );
}

export async function check(ctx: PgStoreContext): Promise<RepairReport> {
  const { ok, problems } = await integrity(ctx);
  problems.push(...(await missingMigrations(ctx)));
  const drift = await counterDrift(ctx);
  if (drift.length) problems.push(describeDrift(drift));
  return { integrity: ok, problems, fixed: [] };
}

export async function repair(ctx: PgStoreContext): Promise<RepairReport> {
  const fixed: string[] = [];
  const applied = (await migrate(ctx.db, MIGRATIONS)).applied;
  for (const m of applied) fixed.push(`applied migration ${m.version} (${m.name})`);
  const drift = await counterDrift(ctx);
  if (drift.length) {
    await inTx(ctx, async (q) => {
      for (const d of drift) {
        await one(q, "SELECT id FROM sessions WHERE id = $1 FOR UPDATE", [d.id]);
        await recountSession(q, d.id);
      }
    });
    fixed.push(recountedLine(drift.length));
  }
  const after = await check(ctx);
  return { integrity: after.integrity, problems: after.problems, fixed };
}

export async function optimize(ctx: PgStoreContext): Promise<{ bytesBefore: number; bytesAfter: number }> {
  const bytesBefore = await tableBytes(ctx);
  await run(ctx.db, "VACUUM (ANALYZE) sessions, messages");
  return { bytesBefore, bytesAfter: await tableBytes(ctx) };
}
