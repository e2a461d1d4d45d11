/**
 * Writing sessions in PostgreSQL: new rows, appends, usage, undo, branches. Every function runs
 * inside the caller's transaction (`inTx`). Writers of one session serialise on its row
 * (`UPDATE … RETURNING` or `SELECT … FOR UPDATE` first), so two instances appending to one
 * session get consecutive message ids and timestamps that never go back, exactly as SQLite's
 * single writer gives them; counters move in the same transaction as the rows they count.
 */
import { type Message, messageText } from "../../ai/types.js";
import { redactJson } from "../../util/redact.js";
import { newSessionId } from "../../util/session-id.js";
import { messageColumns, type Row, rowToStoredMessage, toolCallCount } from "../codec.js";
import type { ClaimFence } from "../coordination.js";
import {
  branchSessionRow,
  finiteCost,
  newSessionRow,
  SESSION_INSERT_COLUMNS,
  SESSION_INSERT_ZEROES,
  type SessionRow,
  sessionInsertValues,
  wantedTitle as titleFor,
  usageVector,
} from "../session-rows.js";
import { lineageOf, nextTitleIn, numberedPattern, sanitizeTitle } from "../titles.js";
import { type NewSession, SessionStoreError, type UsageDelta } from "../types.js";
import type { PgQueryable } from "./database.js";
import { requireSession, sessionRow } from "./sessions-read.js";
import {
  fenceRefused,
  fenceRowSql,
  notFound,
  one,
  type PgStoreContext,
  pgContent,
  run,
  titleTakenError,
} from "./sessions-sql.js";

export async function assertTitleFree(q: PgQueryable, title: string, id: string): Promise<void> {
  const owner = await one(q, "SELECT id FROM sessions WHERE title = $1 AND id <> $2", [title, id]);
  if (owner) throw titleTakenError(title, String(owner["id"]));
}

export async function nextLineageTitle(q: PgQueryable, title: string): Promise<string> {
  const base = lineageOf(sanitizeTitle(title) ?? title.trim()).base;
  const rows = await run(q, "SELECT title FROM sessions WHERE title = $1 OR title LIKE $2 ESCAPE '\\'", [
    base,
    numberedPattern(base),
  ]);
  return nextTitleIn(
    base,
    rows.map((r) => String(r["title"])),
  );
}

/**
 * Serialises, until the transaction ends, every writer that numbers titles of `base`'s lineage
 * (two instances branching "work" at once get "work #2" and "work #3", not a collision).
 */
export async function lockLineage(q: PgQueryable, title: string): Promise<void> {
  const base = lineageOf(title).base;
  await run(q, "SELECT pg_advisory_xact_lock(hashtext('hermes-title:' || $1))", [base]);
}

async function insertSession(ctx: PgStoreContext, q: PgQueryable, s: SessionRow): Promise<void> {
  await run(
    q,
    `INSERT INTO sessions (${SESSION_INSERT_COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, ${SESSION_INSERT_ZEROES})`,
    sessionInsertValues(s, ctx.redact),
  );
}

/** The title `input` asks for, cleaned and redacted (what `createSession` stores). */
export function wantedTitle(ctx: PgStoreContext, title: string | null | undefined): string | null {
  return titleFor(ctx.redact, title);
}

/** `createSession`'s insert inside the caller's transaction; returns the new id. */
export async function insertNewSession(
  ctx: PgStoreContext,
  q: PgQueryable,
  input: NewSession,
): Promise<string> {
  const row = newSessionRow(input, ctx.now(), ctx.redact);
  const { id, title } = row;
  if (await sessionRow(q, id))
    throw new SessionStoreError("invalid", `A session with id "${id}" already exists.`);
  if (title !== null) await assertTitleFree(q, title, id);
  // FOR SHARE: a parent deleted by another instance meanwhile waits for this insert, then clears its link.
  if (input.parentSessionId !== undefined) await requireSession(q, input.parentSessionId, "FOR SHARE");
  await insertSession(ctx, q, row);
  return id;
}

/**
 * Appends messages, bumps `message_count`/`tool_call_count` and adds `usage` when given, in one
 * call of `hermes_append_messages` (migration 102): one round trip, serialised on the session's
 * row. A message without an explicit timestamp gets `max(now, newest timestamp in the session)`.
 * Throws `invalid` (nothing written) for a message of the wrong shape, `not_found` for an unknown
 * session. Returns the ids in order.
 *
 * With `fence` (a statement outside a fenced transaction) the same statement first holds the
 * claim row (`fenceRowSql` as a CTE): the append runs only for the row it returns, so a claim
 * taken over meanwhile appends nothing (`ChatClaimLostError`), still in one round trip.
 */
export async function insertMessages(
  ctx: PgStoreContext,
  q: PgQueryable,
  sessionId: string,
  entries: ReadonlyArray<{ message: Message; timestamp?: number; tokenCount?: number }>,
  usage?: UsageDelta,
  fence?: ClaimFence,
): Promise<number[]> {
  const columns: unknown[][] = Array.from({ length: 11 }, () => []);
  let calls = 0;
  for (const { message, timestamp, tokenCount } of entries) {
    const clean = redactJson(message, ctx.redact);
    const c = messageColumns(clean);
    const values = [
      c.role,
      pgContent(clean.content),
      c.tool_call_id,
      c.tool_calls,
      c.tool_name,
      timestamp ?? null,
      tokenCount ?? null,
      c.finish_reason,
      c.reasoning,
      c.reasoning_details,
      c.codex_reasoning_items,
    ];
    for (const [i, v] of values.entries()) columns[i]!.push(v);
    calls += toolCallCount(message);
  }
  const append = `SELECT hermes_append_messages($1, $2, $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::float8[],
       $9::int[], $10::text[], $11::text[], $12::text[], $13::text[], $14, $15::bigint[], $16, $17, $18, $19) AS ids`;
  const params = [
    sessionId,
    ctx.now(),
    ...columns,
    calls,
    usage ? usageVector(usage) : null,
    usage ? finiteCost(usage) : null,
    usage?.costStatus ?? null,
    usage?.costSource ?? null,
    usage?.pricingVersion ?? null,
  ];
  const row = fence ? await fencedRow(q, append, params, fence) : await one(q, append, params);
  const ids = row?.["ids"];
  if (!Array.isArray(ids)) throw notFound(sessionId);
  return ids.map(Number);
}

/** `select` (one row) run in one statement behind `fence`'s claim row; refused: `ChatClaimLostError`. */
async function fencedRow(
  q: PgQueryable,
  select: string,
  params: unknown[],
  fence: ClaimFence,
): Promise<Row | undefined> {
  const k = params.length + 1;
  const rows = await run(
    q,
    `WITH fence AS MATERIALIZED (${fenceRowSql(k)})
     ${select} FROM fence`,
    [...params, fence.key, fence.token],
  );
  if (rows.length === 0) throw fenceRefused(fence);
  return rows[0];
}

/**
 * Adds one usage report to the session row in one statement: counters added, cost added when
 * finite (NULL stays NULL otherwise), `cost_status` merged with the worst winning (see
 * `mergeCostStatus` in sqlite-store.ts, `hermes_merge_cost_status` in migration 102).
 */
export async function addUsage(
  q: PgQueryable,
  sessionId: string,
  delta: UsageDelta,
  fence?: ClaimFence,
): Promise<void> {
  const found = await updateSessionRow(
    q,
    sessionId,
    `input_tokens = COALESCE(input_tokens, 0) + ($2::bigint[])[1], output_tokens = COALESCE(output_tokens, 0) + ($2::bigint[])[2],
       cache_read_tokens = COALESCE(cache_read_tokens, 0) + ($2::bigint[])[3], cache_write_tokens = COALESCE(cache_write_tokens, 0) + ($2::bigint[])[4],
       reasoning_tokens = COALESCE(reasoning_tokens, 0) + ($2::bigint[])[5], api_call_count = COALESCE(api_call_count, 0) + ($2::bigint[])[6],
       estimated_cost_usd = CASE WHEN $3::float8 IS NULL THEN estimated_cost_usd ELSE COALESCE(estimated_cost_usd, 0) + $3::float8 END,
       cost_status = hermes_merge_cost_status(cost_status, $4::text),
       cost_source = COALESCE($5, cost_source), pricing_version = COALESCE($6, pricing_version)`,
    [
      usageVector(delta),
      finiteCost(delta),
      delta.costStatus ?? null,
      delta.costSource ?? null,
      delta.pricingVersion ?? null,
    ],
    fence,
  );
  if (!found) throw notFound(sessionId);
}

/**
 * `UPDATE sessions SET <sets> WHERE id = $1` (`values` are $2 on); false when there is no such
 * session. With `fence`, still one statement: a CTE holds the claim row first and the update is
 * joined to it, so it changes nothing when the claim is not current (`ChatClaimLostError`).
 */
export async function updateSessionRow(
  q: PgQueryable,
  id: string,
  sets: string,
  values: readonly unknown[],
  fence?: ClaimFence,
): Promise<boolean> {
  const params = [id, ...values];
  if (!fence)
    return (await run(q, `UPDATE sessions SET ${sets} WHERE id = $1 RETURNING id`, params)).length > 0;
  const row = await one(
    q,
    `WITH fence AS MATERIALIZED (${fenceRowSql(params.length + 1)}),
       w AS (UPDATE sessions SET ${sets} FROM fence WHERE id = $1 RETURNING sessions.id)
     SELECT (SELECT count(*) FROM fence)::int AS held, (SELECT count(*) FROM w)::int AS written`,
    [...params, fence.key, fence.token],
  );
  if (!row || Number(row["held"]) === 0) throw fenceRefused(fence);
  return Number(row["written"]) > 0;
}

/** Sets a session's message_count and tool_call_count from its active rows. */
export async function recountSession(q: PgQueryable, id: string): Promise<void> {
  await run(
    q,
    `UPDATE sessions SET
       message_count = (SELECT count(*) FROM messages c WHERE c.session_id = $1 AND c.active = 1),
       tool_call_count = (SELECT COALESCE(sum(hermes_json_array_length(c.tool_calls)), 0) FROM messages c
         WHERE c.session_id = $1 AND c.active = 1 AND c.role = 'assistant' AND c.tool_calls IS NOT NULL)
     WHERE id = $1`,
    [id],
  );
}

/**
 * Marks the last `turns` user turns inactive, sets the counters from the rows still active and
 * bumps `rewind_count` (SQLite's history.ts `undoTurns`).
 */
export async function undoTurns(
  q: PgQueryable,
  sessionId: string,
  turns: number,
): Promise<{ removed: number; userText: string | null }> {
  await requireSession(q, sessionId, "FOR UPDATE");
  const users = await run(
    q,
    `SELECT id, timestamp, content FROM messages m
     WHERE m.session_id = $1 AND m.role = 'user' AND m.active = 1
     ORDER BY m.timestamp DESC, m.id DESC LIMIT $2`,
    [sessionId, turns],
  );
  const earliest = users[users.length - 1];
  if (!earliest) return { removed: 0, userText: null };
  const hidden = await run(
    q,
    `UPDATE messages SET active = 0 WHERE session_id = $1 AND active = 1
       AND (timestamp, id) >= ($2::float8, $3::bigint) RETURNING id`,
    [sessionId, earliest["timestamp"], earliest["id"]],
  );
  await recountSession(q, sessionId);
  await run(q, "UPDATE sessions SET rewind_count = COALESCE(rewind_count, 0) + 1 WHERE id = $1", [sessionId]);
  const content =
    rowToStoredMessage({ ...earliest, role: "user", session_id: sessionId } as Row)?.content ?? null;
  return { removed: hidden.length, userText: content === null ? null : messageText({ content }) };
}

const COPIED_MESSAGE_COLUMNS =
  "role, content, tool_call_id, tool_calls, tool_name, timestamp, token_count, finish_reason, reasoning, " +
  "reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items";

/**
 * A new session holding a copy of the active messages (timestamps kept), `parent_session_id` set,
 * the parent's model, prompt and working directory, and `_branched_from` in `model_config`
 * (SQLite's history.ts `branchSession`). Returns its id.
 */
export async function branchSession(
  ctx: PgStoreContext,
  q: PgQueryable,
  id: string,
  options: { title?: string; source?: string },
): Promise<string> {
  const parent = await requireSession(q, id, "FOR SHARE");
  const startedAt = ctx.now();
  const newId = newSessionId(new Date(startedAt * 1000));
  let title: string | null;
  if (options.title !== undefined) title = sanitizeTitle(options.title);
  else if (parent.title) {
    await lockLineage(q, parent.title);
    title = await nextLineageTitle(q, parent.title);
  } else title = null;
  if (title !== null) await assertTitleFree(q, title, newId);
  await insertSession(
    ctx,
    q,
    branchSessionRow(parent, { id: newId, startedAt, source: options.source, title }),
  );
  await run(
    q,
    `INSERT INTO messages (session_id, ${COPIED_MESSAGE_COLUMNS})
     SELECT $1, ${COPIED_MESSAGE_COLUMNS} FROM messages m WHERE m.session_id = $2 AND m.active = 1
     ORDER BY m.timestamp, m.id`,
    [newId, id],
  );
  await recountSession(q, newId);
  return newId;
}

/** Whether `id` exists (one indexed lookup). */
export async function exists(q: PgQueryable, id: string): Promise<boolean> {
  return (await one(q, "SELECT 1 AS x FROM sessions WHERE id = $1", [id])) !== undefined;
}
