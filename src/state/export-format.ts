/**
 * The JSONL export format of `hermes sessions export` (and the dashboard's export), the one Python
 * Hermes writes: one line per session holding the session row's columns (snake_case, as in
 * state.db) at the top level plus `messages`, the message rows with their columns. Boolean columns
 * are 0/1 as SQLite stores them.
 */
import { redactJson, redactText } from "../util/redact.js";
import type { ExportedSession } from "./types.js";

/**
 * One session as one JSON line (no trailing newline), redacted (default: the process-wide secret
 * redactor): rows written before redaction existed, or before a key was known, may hold secrets.
 */
export function exportLine(exported: ExportedSession, redact: (text: string) => string = redactText): string {
  const row = {
    ...snakeRow(exported.session),
    messages: exported.messages.map((m) => snakeRow(m)),
  };
  return redact(JSON.stringify(redactJson(row, redact)));
}

function snakeRow(row: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    out[key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] =
      typeof value === "boolean" ? Number(value) : value;
  }
  return out;
}
