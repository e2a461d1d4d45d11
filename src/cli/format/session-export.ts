/**
 * The JSONL export format of `hermes sessions export`, the one Python Hermes writes: one line per
 * session holding the session row's columns (snake_case, as in state.db) at the top level plus
 * `messages`, the message rows with their columns. Boolean columns are 0/1 as SQLite stores them.
 */
import { createWriteStream, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { ExportedSession } from "../../state/types.js";
import { redactJson, redactText } from "../../util/redact.js";

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

/**
 * Streams the sessions to a temp file beside `path`, then renames it over `path`, so a failed
 * export never leaves a half-written file in place. The file is owner-only (0600): it holds whole
 * conversations. Returns how many sessions were written.
 */
export async function writeJsonlFile(path: string, sessions: Iterable<ExportedSession>): Promise<number> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  const stream = createWriteStream(temp, { encoding: "utf8", mode: 0o600 });
  const failed = new Promise<never>((_, reject) => stream.once("error", reject));
  failed.catch(() => {});
  let n = 0;
  try {
    for (const exported of sessions) {
      if (!stream.write(`${exportLine(exported)}\n`)) {
        await Promise.race([new Promise<void>((resolve) => stream.once("drain", () => resolve())), failed]);
      }
      n++;
    }
    await Promise.race([new Promise<void>((resolve) => stream.end(() => resolve())), failed]);
    renameSync(temp, path);
    return n;
  } catch (error) {
    stream.destroy();
    rmSync(temp, { force: true });
    throw error;
  }
}
