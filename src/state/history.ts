/**
 * Writing a session's history: new session rows, appending messages, undoing turns and branching.
 * Every function here runs inside the caller's write transaction (`StoreContext.write`) so a
 * message and the counters it bumps commit together or not at all.
 */
import { type Message, messageText } from "../ai/types.js";
import { redactJson } from "../util/redact.js";
import { newSessionId } from "../util/session-id.js";
import { messageColumns, rowToStoredMessage, toolCallCount } from "./codec.js";
import type { StoreContext } from "./context.js";
import { notFound, requireSession } from "./listing.js";
import { recountSession } from "./maintenance.js";
import {
  branchSessionRow,
  finiteCost,
  mergeCostStatus,
  SESSION_INSERT_COLUMNS,
  SESSION_INSERT_ZEROES,
  type SessionRow,
  sessionInsertValues,
  usageVector,
} from "./session-rows.js";
import { lineageOf, nextTitleIn, numberedPattern, sanitizeTitle } from "./titles.js";
import { SessionStoreError, type UsageDelta } from "./types.js";

export type { SessionRow };

/** Inserts a session with every counter Python reads as a number set to 0. */
export function insertSession(ctx: StoreContext, s: SessionRow): void {
  ctx
    .stmt(
      `INSERT INTO sessions (${SESSION_INSERT_COLUMNS})
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ${SESSION_INSERT_ZEROES})`,
    )
    .run(...sessionInsertValues(s, ctx.redact));
}

export function assertTitleFree(ctx: StoreContext, title: string, id: string): void {
  const owner = ctx.get("SELECT id FROM sessions WHERE title = ? AND id <> ?", title, id);
  if (owner) {
    throw new SessionStoreError(
      "title_taken",
      `The title "${title}" is already used by session ${String(owner["id"])}; choose another one.`,
    );
  }
}

export function nextLineageTitle(ctx: StoreContext, title: string): string {
  const base = lineageOf(sanitizeTitle(title) ?? title.trim()).base;
  const existing = ctx
    .all(
      "SELECT title FROM sessions WHERE title = ? OR title LIKE ? ESCAPE '\\'",
      base,
      numberedPattern(base),
    )
    .map((r) => String(r["title"]));
  return nextTitleIn(base, existing);
}

const MESSAGE_COLUMNS = `(session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, token_count,
   finish_reason, reasoning, reasoning_details, codex_reasoning_items)`;
const MESSAGE_ROW = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

/**
 * Rows per INSERT statement. The messages of one write go in as few statements as this allows:
 * FTS5 writes its pending rows out as a new index segment whenever a statement opens a savepoint
 * (every insert after the first in a transaction does, for the triggers), so one row per
 * statement made a segment per message in each of the two indexes, and later merges of them; one
 * statement makes one segment per commit. Each row count has its own cached statement.
 */
export const INSERT_ROWS_MAX = 16;

function insertRowsSql(rows: number): string {
  return `INSERT INTO messages ${MESSAGE_COLUMNS} VALUES ${Array(rows).fill(MESSAGE_ROW).join(", ")} RETURNING id`;
}

/** The usage counters of `sessions` one report adds to (bound as in `usageValues`). */
const USAGE_SET = `input_tokens = COALESCE(input_tokens, 0) + ?, output_tokens = COALESCE(output_tokens, 0) + ?,
  cache_read_tokens = COALESCE(cache_read_tokens, 0) + ?, cache_write_tokens = COALESCE(cache_write_tokens, 0) + ?,
  reasoning_tokens = COALESCE(reasoning_tokens, 0) + ?, api_call_count = COALESCE(api_call_count, 0) + ?,
  estimated_cost_usd = CASE WHEN ? IS NULL THEN estimated_cost_usd ELSE COALESCE(estimated_cost_usd, 0) + ? END,
  cost_status = ?, cost_source = COALESCE(?, cost_source), pricing_version = COALESCE(?, pricing_version)`;
const COUNT_SET =
  "message_count = COALESCE(message_count, 0) + ?, tool_call_count = COALESCE(tool_call_count, 0) + ?";

/** The values `USAGE_SET` binds for `delta` on a session whose stored cost status is `stored`. */
function usageValues(delta: UsageDelta, stored: unknown): unknown[] {
  const cost = finiteCost(delta);
  return [
    ...usageVector(delta),
    cost,
    cost,
    mergeCostStatus(typeof stored === "string" ? stored : null, delta.costStatus),
    delta.costSource ?? null,
    delta.pricingVersion ?? null,
  ];
}

/** Adds one usage report to the session row (inside the caller's transaction). */
export function addUsage(ctx: StoreContext, sessionId: string, delta: UsageDelta): void {
  const row = ctx.get("SELECT cost_status FROM sessions WHERE id = ?", sessionId);
  if (!row) throw notFound(sessionId);
  ctx
    .stmt(`UPDATE sessions SET ${USAGE_SET} WHERE id = ?`)
    .run(...usageValues(delta, row["cost_status"]), sessionId);
}

/**
 * Appends messages and bumps `message_count`/`tool_call_count` (and adds `usage`, when given, in
 * the same update of the session row). A message without an explicit timestamp gets `max(now,
 * newest timestamp in the session)`, so a clock that steps back cannot reorder a turn. Throws
 * `not_found` for a missing session and `invalid` (nothing written) for a message of the wrong
 * shape. Returns the new ids in the order of `messages`.
 */
export function insertMessages(
  ctx: StoreContext,
  sessionId: string,
  messages: ReadonlyArray<{ message: Message; timestamp?: number; tokenCount?: number }>,
  usage?: UsageDelta,
): number[] {
  // The session's existence, its cost status and its newest timestamp in one indexed lookup.
  const session = ctx
    .stmt(
      `SELECT cost_status, (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id)
       FROM sessions s WHERE s.id = ?`,
    )
    .raw()
    .get(sessionId) as [unknown, unknown] | undefined;
  if (!session) throw notFound(sessionId);
  const newest = session[1];
  const floor = Math.max(ctx.now(), newest === null || newest === undefined ? 0 : Number(newest));
  const values: unknown[] = [];
  let calls = 0;
  for (const { message, timestamp, tokenCount } of messages) {
    const c = messageColumns(redactJson(message, ctx.redact));
    values.push(
      sessionId,
      c.role,
      c.content,
      c.tool_call_id,
      c.tool_calls,
      c.tool_name,
      timestamp ?? floor,
      tokenCount ?? null,
      c.finish_reason,
      c.reasoning,
      c.reasoning_details,
      c.codex_reasoning_items,
    );
    calls += toolCallCount(message);
  }
  const ids: number[] = [];
  const width = values.length / messages.length;
  for (let at = 0; at < messages.length; at += INSERT_ROWS_MAX) {
    const rows = Math.min(INSERT_ROWS_MAX, messages.length - at);
    const returned = ctx
      .stmt(insertRowsSql(rows))
      .pluck()
      .all(...values.slice(at * width, (at + rows) * width)) as Array<number | bigint>;
    // Ids grow with every row inserted (AUTOINCREMENT): ascending is the order of the rows.
    ids.push(...returned.map(Number).sort((a, b) => a - b));
  }
  const counts = [messages.length, calls];
  if (usage) {
    ctx
      .stmt(`UPDATE sessions SET ${COUNT_SET}, ${USAGE_SET} WHERE id = ?`)
      .run(...counts, ...usageValues(usage, session[0]), sessionId);
  } else {
    ctx.stmt(`UPDATE sessions SET ${COUNT_SET} WHERE id = ?`).run(...counts, sessionId);
  }
  return ids;
}

/**
 * Marks the last `turns` user turns inactive (each user message and everything after it), sets
 * the counters from the rows still active (as Python's rewind does) and bumps `rewind_count`.
 */
export function undoTurns(
  ctx: StoreContext,
  sessionId: string,
  turns: number,
): { removed: number; userText: string | null } {
  requireSession(ctx, sessionId);
  const users = ctx.all(
    `SELECT id, timestamp, content FROM messages m
     WHERE m.session_id = ? AND m.role = 'user' AND ${ctx.activeMessage("m")}
     ORDER BY m.timestamp DESC, m.id DESC LIMIT ?`,
    sessionId,
    turns,
  );
  const earliest = users[users.length - 1];
  if (!earliest) return { removed: 0, userText: null };
  const info = ctx
    .stmt("UPDATE messages SET active = 0 WHERE session_id = ? AND active = 1 AND (timestamp, id) >= (?, ?)")
    .run(sessionId, earliest["timestamp"], earliest["id"]);
  recountSession(ctx, sessionId);
  ctx.stmt("UPDATE sessions SET rewind_count = COALESCE(rewind_count, 0) + 1 WHERE id = ?").run(sessionId);
  const content = rowToStoredMessage({ ...earliest, role: "user", session_id: sessionId })?.content ?? null;
  return { removed: info.changes, userText: content === null ? null : messageText({ content }) };
}

/** Columns copied when a session is branched (those present in this file). */
const COPIED_MESSAGE_COLUMNS = [
  "role",
  "content",
  "tool_call_id",
  "tool_calls",
  "tool_name",
  "timestamp",
  "token_count",
  "finish_reason",
  "reasoning",
  "reasoning_content",
  "reasoning_details",
  "codex_reasoning_items",
  "codex_message_items",
];

/**
 * A new session holding a copy of the active messages (timestamps kept), `parent_session_id` set,
 * the parent's model, prompt and working directory, and `_branched_from` in `model_config`: the
 * marker Python Hermes uses to list a /branch child as a conversation of its own. Returns its id.
 */
export function branchSession(
  ctx: StoreContext,
  id: string,
  options: { title?: string; source?: string },
): string {
  const parent = requireSession(ctx, id);
  const startedAt = ctx.now();
  const newId = newSessionId(new Date(startedAt * 1000));
  const title =
    options.title !== undefined
      ? sanitizeTitle(options.title)
      : parent.title
        ? nextLineageTitle(ctx, parent.title)
        : null;
  if (title !== null) assertTitleFree(ctx, title, newId);
  insertSession(ctx, branchSessionRow(parent, { id: newId, startedAt, source: options.source, title }));
  const cols = COPIED_MESSAGE_COLUMNS.filter((c) => ctx.shape.messageColumns.has(c)).join(", ");
  ctx
    .stmt(
      `INSERT INTO messages (session_id, ${cols})
       SELECT ?, ${cols} FROM messages m WHERE m.session_id = ? AND ${ctx.activeMessage("m")}
       ORDER BY m.timestamp, m.id`,
    )
    .run(newId, id);
  recountSession(ctx, newId);
  return newId;
}
