/**
 * Bringing sessions into PostgreSQL from elsewhere:
 *
 * - `importSession`: one exported session (`exportSessions` of any store) with its id, times,
 *   counters and message ids kept, in one transaction; a session already present is left as it is
 *   (`"present"`), so `hermes state migrate` can run again after an interruption.
 * - `importLegacyJsonl` and `recoverFrom`: the SQLite store's readers (legacy-import.ts,
 *   salvage.ts) fill a private temporary SQLite file, whose sessions are then imported here with
 *   new message ids. One parser, one salvage, whatever the backend.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodeToolCalls } from "../codec.js";
import { LEGACY_IMPORT_MARKER } from "../legacy-import.js";
import { emptyReport, sniffRecoverySource } from "../salvage.js";
import { openSqliteStore } from "../sqlite-store.js";
import {
  type ExportedSession,
  type RecoveryReport,
  SessionStoreError,
  type SqliteSessionStoreHandle,
} from "../types.js";
import type { PgQueryable } from "./database.js";
import { inTx, mapPgError, one, type PgStoreContext, pgContent, run } from "./sessions-sql.js";

export interface ImportOptions {
  /** Keep the exported message ids (default true; `hermes state migrate`). False: new ids from the sequence. */
  keepMessageIds?: boolean;
  /** A title another session holds here: `fail` with `title_taken` (default) or `drop` it (ids stay the link). */
  takenTitle?: "fail" | "drop";
}

const MESSAGES_PER_INSERT = 2000;

async function insertExportedMessages(q: PgQueryable, e: ExportedSession, keepIds: boolean): Promise<void> {
  for (let start = 0; start < e.messages.length; start += MESSAGES_PER_INSERT) {
    const chunk = e.messages.slice(start, start + MESSAGES_PER_INSERT);
    const params: unknown[] = [e.session.id];
    const tuples = chunk.map((m) => {
      const values = [
        m.role,
        pgContent(m.content),
        m.toolCallId,
        encodeToolCalls(m.toolCalls ?? undefined),
        m.toolName,
        m.timestamp,
        m.tokenCount,
        m.finishReason,
        m.reasoning,
        m.reasoningDetails && m.reasoningDetails.length > 0 ? JSON.stringify(m.reasoningDetails) : null,
        m.codexReasoningItems && m.codexReasoningItems.length > 0
          ? JSON.stringify(m.codexReasoningItems)
          : null,
        m.active ? 1 : 0,
      ];
      if (keepIds) values.unshift(m.id);
      const base = params.length;
      params.push(...values);
      return `(${values.map((_, k) => `$${base + k + 1}`).join(", ")}, $1)`;
    });
    const columns =
      "role, content, tool_call_id, tool_calls, tool_name, timestamp, token_count, finish_reason, reasoning, " +
      "reasoning_details, codex_reasoning_items, active, session_id";
    await run(
      q,
      `INSERT INTO messages (${keepIds ? "id, " : ""}${columns}) VALUES ${tuples.join(", ")}`,
      params,
    );
  }
  if (keepIds && e.messages.length > 0) {
    // Later appends draw ids above every imported one.
    await run(
      q,
      `SELECT setval(pg_get_serial_sequence('messages', 'id'), x.m)
       FROM (SELECT max(id) AS m FROM messages) x
       WHERE x.m > COALESCE(pg_sequence_last_value(pg_get_serial_sequence('messages', 'id')::regclass), 0)`,
    );
  }
}

export async function importSession(
  ctx: PgStoreContext,
  e: ExportedSession,
  options: ImportOptions = {},
): Promise<"imported" | "present"> {
  const s = e.session;
  if (!s.id || !s.source)
    throw new SessionStoreError("invalid", "An imported session needs an id and a source.");
  const keepIds = options.keepMessageIds ?? true;
  return inTx(ctx, async (q) => {
    let title = s.title;
    if (
      title !== null &&
      options.takenTitle === "drop" &&
      (await one(q, "SELECT 1 AS x FROM sessions WHERE title = $1 AND id <> $2", [title, s.id]))
    )
      title = null;
    const inserted = await run(
      q,
      `INSERT INTO sessions (id, source, user_id, model, model_config, system_prompt, parent_session_id, started_at,
         ended_at, end_reason, message_count, tool_call_count, api_call_count, input_tokens, output_tokens,
         cache_read_tokens, cache_write_tokens, reasoning_tokens, estimated_cost_usd, actual_cost_usd, cost_status,
         cost_source, pricing_version, cwd, git_branch, git_repo_root, billing_provider, billing_base_url, title,
         archived, rewind_count)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
         $23, $24, $25, $26, $27, $28, $29, $30, 0)
       ON CONFLICT (id) DO NOTHING RETURNING id`,
      [
        s.id,
        s.source,
        s.userId,
        s.model,
        s.modelConfig,
        s.systemPrompt,
        s.parentSessionId,
        s.startedAt,
        s.endedAt,
        s.endReason,
        s.messageCount,
        s.toolCallCount,
        s.apiCallCount,
        s.inputTokens,
        s.outputTokens,
        s.cacheReadTokens,
        s.cacheWriteTokens,
        s.reasoningTokens,
        s.estimatedCostUsd,
        s.actualCostUsd,
        s.costStatus,
        s.costSource,
        s.pricingVersion,
        s.cwd,
        s.gitBranch,
        s.gitRepoRoot,
        s.billingProvider,
        s.billingBaseUrl,
        title,
        s.archived ? 1 : 0,
      ],
    );
    if (inserted.length === 0) return "present";
    await insertExportedMessages(q, e, keepIds);
    return "imported";
  }).catch((error) => mapPgError(ctx, error, s.title));
}

/** Runs `fill` on a private temporary SQLite store, then imports its sessions here with new message ids. */
async function throughSqlite<T>(
  ctx: PgStoreContext,
  fill: (store: SqliteSessionStoreHandle) => T,
  each: (result: T, fate: "imported" | "present", e: ExportedSession) => void,
): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "hermes-pg-import-"));
  const store = openSqliteStore(join(dir, "state.db"), {
    now: ctx.now,
    redact: ctx.redact,
    durability: "normal",
  });
  try {
    const result = fill(store);
    for (const e of store.exportSessions()) {
      each(result, await importSession(ctx, e, { keepMessageIds: false, takenTitle: "drop" }), e);
    }
    return result;
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** SQLite's `importLegacyJsonl` semantics (marker in `state_meta`, existing ids kept as they are). */
export async function importLegacyJsonl(
  ctx: PgStoreContext,
  dir: string,
): Promise<{ sessions: number; messages: number; skipped: number }> {
  if (await one(ctx.db, "SELECT value FROM state_meta WHERE key = $1", [LEGACY_IMPORT_MARKER])) {
    return { sessions: 0, messages: 0, skipped: 0 };
  }
  const result = await throughSqlite(
    ctx,
    (store) => store.importLegacyJsonl(dir),
    (r, fate, e) => {
      if (fate === "imported") return;
      r.sessions--;
      r.messages -= e.messages.length;
    },
  );
  await run(
    ctx.db,
    "INSERT INTO state_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
    [LEGACY_IMPORT_MARKER, JSON.stringify({ at: ctx.now(), dir, ...result })],
  );
  return result;
}

/**
 * `hermes sessions repair --from FILE` into PostgreSQL: a SQLite file is salvaged as SQLite does it
 * and its sessions copied here (one already present is skipped with its messages). An
 * unsaved-writes file is refused: it holds a SQLite home's queued writes against that home's own
 * sessions and belongs in that state.db.
 */
export async function recoverFrom(ctx: PgStoreContext, file: string): Promise<RecoveryReport> {
  const source = sniffRecoverySource(file);
  if (source.kind === "unsaved") {
    throw new SessionStoreError(
      "invalid",
      `${file} is a SQLite home's unsaved-writes file: replay it into that home's state.db (\`hermes sessions repair --from\` with the sqlite backend), then \`hermes state migrate\` the home into PostgreSQL.`,
    );
  }
  if (source.kind !== "sqlite") return emptyReport("none", source.reason ?? `${file}: nothing to recover`);
  return throughSqlite(
    ctx,
    (store) => store.recoverFrom(file),
    (report, fate, e) => {
      if (fate === "imported") return;
      report.sessions.recovered--;
      report.sessions.skipped++;
      report.messages.recovered -= e.messages.length;
      report.messages.skipped += e.messages.length;
    },
  );
}
