/**
 * The memory and skill_manage calls recorded in the shared sessions (`hermes journey` on a
 * postgres home): the same rows and the same reading as state.db's (`learning-calls.ts`), from
 * every instance and CLI that records there. Read-only.
 */
import {
  type LearningCall,
  type LearningCallRow,
  type LearningToolRow,
  learningCallsOf,
} from "../learning-calls.js";
import type { PgQueryable } from "./database.js";

/** Every memory/skill_manage call in the database, oldest first. */
export async function pgLearningCalls(db: PgQueryable): Promise<LearningCall[]> {
  const [toolRows, rows] = await Promise.all([
    db.query<LearningToolRow & Record<string, unknown>>(
      "SELECT tool_call_id, content FROM messages WHERE role = 'tool' AND tool_name IN ('memory', 'skill_manage')",
    ),
    db.query<LearningCallRow & Record<string, unknown>>(
      `SELECT m.session_id, s.source, s.title, m.timestamp, m.tool_calls
         FROM messages m JOIN sessions s ON s.id = m.session_id
        WHERE m.role = 'assistant' AND m.tool_calls IS NOT NULL
          AND (m.tool_calls LIKE '%"memory"%' OR m.tool_calls LIKE '%"skill_manage"%')
        ORDER BY m.timestamp, m.id`,
    ),
  ]);
  return learningCallsOf(toolRows, rows);
}
