/**
 * The memory and skill writes the agent made, as recorded in `state.db`: every `memory` and
 * `skill_manage` call with its session, time and result, for the learning timeline
 * (`hermes journey`). Read-only; a missing database yields nothing.
 */
import { existsSync } from "node:fs";
import { decodeToolCalls } from "./codec.js";
import { connect } from "./connection.js";

export interface LearningCall {
  sessionId: string;
  /** The session's source: cli, telegram, cron, review, ... */
  source: string;
  sessionTitle: string | null;
  /** Epoch seconds. */
  timestamp: number;
  tool: "memory" | "skill_manage";
  /** The call's arguments, parsed (an unparseable string gives {}). */
  args: Record<string, unknown>;
  /** The tool's result text; null when the call has no recorded result (interrupted). */
  result: string | null;
}

const LEARNING_TOOLS = new Set(["memory", "skill_manage"]);

function parseArgs(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** A tool message's row: the call it answers and its result text. */
export interface LearningToolRow {
  tool_call_id: string | null;
  content: string | null;
}

/** An assistant message's row that may carry memory/skill_manage calls, with its session. */
export interface LearningCallRow {
  session_id: string;
  source: string;
  title: string | null;
  timestamp: number;
  tool_calls: string;
}

/** The memory/skill_manage calls of `rows` (oldest first) with the results `toolRows` hold. */
export function learningCallsOf(
  toolRows: readonly LearningToolRow[],
  rows: readonly LearningCallRow[],
): LearningCall[] {
  const results = new Map<string, string>();
  for (const row of toolRows) if (row.tool_call_id) results.set(row.tool_call_id, row.content ?? "");
  const calls: LearningCall[] = [];
  for (const row of rows) {
    for (const call of decodeToolCalls(row.tool_calls) ?? []) {
      if (!LEARNING_TOOLS.has(call.function.name)) continue;
      calls.push({
        sessionId: row.session_id,
        source: row.source,
        sessionTitle: row.title,
        timestamp: Number(row.timestamp),
        tool: call.function.name as LearningCall["tool"],
        args: parseArgs(call.function.arguments),
        result: results.get(call.id) ?? null,
      });
    }
  }
  return calls;
}

/** Every memory/skill_manage call in `path` (state.db), oldest first. */
export function readLearningCalls(path: string): LearningCall[] {
  if (!existsSync(path)) return [];
  const db = connect(path, {
    readonly: true,
    busyTimeoutMs: 1000,
    retryBudgetMs: 2000,
    synchronous: "NORMAL",
  });
  try {
    const toolRows = db
      .prepare(
        "SELECT tool_call_id, content FROM messages WHERE role = 'tool' AND tool_name IN ('memory', 'skill_manage')",
      )
      .all() as unknown as LearningToolRow[];
    const rows = db
      .prepare(
        `SELECT m.session_id, s.source, s.title, m.timestamp, m.tool_calls
           FROM messages m JOIN sessions s ON s.id = m.session_id
          WHERE m.role = 'assistant' AND m.tool_calls IS NOT NULL
            AND (m.tool_calls LIKE '%"memory"%' OR m.tool_calls LIKE '%"skill_manage"%')
          ORDER BY m.timestamp, m.id`,
      )
      .all() as unknown as LearningCallRow[];
    return learningCallsOf(toolRows, rows);
  } finally {
    db.close();
  }
}
