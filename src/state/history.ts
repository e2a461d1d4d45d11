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
import { assertSession, requireSession } from "./listing.js";
import { recountSession } from "./maintenance.js";
import {
  branchSessionRow,
  SESSION_INSERT_COLUMNS,
  SESSION_INSERT_ZEROES,
  type SessionRow,
  sessionInsertValues,
} from "./session-rows.js";
import { lineageOf, nextTitleIn, numberedPattern, sanitizeTitle } from "./titles.js";
import { SessionStoreError } from "./types.js";

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

const INSERT_MESSAGE = `INSERT INTO messages
  (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, token_count, finish_reason, reasoning,
   reasoning_details, codex_reasoning_items)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/**
 * Appends messages and bumps `message_count`/`tool_call_count`. A message without an explicit
 * timestamp gets `max(now, newest timestamp in the session)`, so a clock that steps back cannot
 * reorder a turn. Throws `invalid` (nothing written) for a message of the wrong shape.
 */
export function insertMessages(
  ctx: StoreContext,
  sessionId: string,
  messages: ReadonlyArray<{ message: Message; timestamp?: number; tokenCount?: number }>,
): number[] {
  assertSession(ctx, sessionId);
  const newest = ctx.get("SELECT MAX(timestamp) AS t FROM messages WHERE session_id = ?", sessionId)?.["t"];
  const floor = Math.max(ctx.now(), newest === null || newest === undefined ? 0 : Number(newest));
  const insert = ctx.stmt(INSERT_MESSAGE);
  const ids: number[] = [];
  let calls = 0;
  for (const { message, timestamp, tokenCount } of messages) {
    const c = messageColumns(redactJson(message, ctx.redact));
    const info = insert.run(
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
    ids.push(Number(info.lastInsertRowid));
    calls += toolCallCount(message);
  }
  ctx
    .stmt(
      `UPDATE sessions SET message_count = COALESCE(message_count, 0) + ?,
         tool_call_count = COALESCE(tool_call_count, 0) + ? WHERE id = ?`,
    )
    .run(messages.length, calls, sessionId);
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
