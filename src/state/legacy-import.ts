/**
 * One-time import of the transcripts older Hermes versions (and the gateway's fallback) wrote as
 * JSONL under `<home>/sessions/`: one file per session, `<session id>.jsonl`, each line a JSON
 * object. A line with `"role": "session_meta"` carries session metadata (`model`, `platform`,
 * `timestamp`, `tools`); every other line is an OpenAI-style message (`role`, `content`,
 * `tool_calls`, `tool_call_id`, `name`/`tool_name`, `reasoning`, `finish_reason`, optional
 * `timestamp` as seconds, milliseconds or ISO text).
 *
 * Each file becomes one session (source: the meta line's `platform`, else `cli`), unless a session
 * with that id is already in the database (the gateway wrote both). A marker in `state_meta` makes
 * later calls return at once. Lines that are not JSON objects with a known role are skipped and
 * counted; files are never modified.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import type { ContentPart, Message } from "../ai/types.js";
import {
  decodeContent,
  decodeToolCalls,
  encodeContent,
  encodeToolCalls,
  isRole,
  toolCallCount,
} from "./codec.js";
import type { StoreContext } from "./context.js";
import { SessionStoreError } from "./types.js";

export const LEGACY_IMPORT_MARKER = "legacy_jsonl_imported";

interface ParsedFile {
  meta: Record<string, unknown> | null;
  messages: Array<{ message: Message; timestamp: number | null }>;
  skipped: number;
}

/** Seconds from a number (seconds or milliseconds) or date text; null when unreadable. */
export function toSeconds(value: unknown): number | null {
  if (typeof value === "number" && Number.isFinite(value) && value > 0)
    return value > 1e12 ? value / 1000 : value;
  if (typeof value === "string" && value.trim()) {
    const n = Number(value);
    if (Number.isFinite(n)) return toSeconds(n);
    const ms = Date.parse(value);
    if (!Number.isNaN(ms)) return ms / 1000;
  }
  return null;
}

function legacyContent(value: unknown): Message["content"] {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return value;
  if (Array.isArray(value)) {
    const decoded = decodeContent(encodeContent(value as ContentPart[]));
    if (Array.isArray(decoded)) return decoded;
  }
  return JSON.stringify(value);
}

function toMessage(obj: Record<string, unknown>): Message | null {
  const role = obj["role"];
  if (!isRole(role)) return null;
  const message: Message = { role, content: legacyContent(obj["content"]) };
  const calls = Array.isArray(obj["tool_calls"]) ? decodeToolCalls(JSON.stringify(obj["tool_calls"])) : null;
  if (calls) message.tool_calls = calls;
  if (typeof obj["tool_call_id"] === "string") message.tool_call_id = obj["tool_call_id"];
  const name = obj["name"] ?? obj["tool_name"];
  if (typeof name === "string") message.name = name;
  const reasoning = obj["reasoning"] ?? obj["reasoning_content"];
  if (typeof reasoning === "string") message.reasoning = reasoning;
  if (typeof obj["finish_reason"] === "string")
    message.finish_reason = obj["finish_reason"] as Message["finish_reason"];
  return message;
}

export function parseLegacyFile(text: string): ParsedFile {
  const out: ParsedFile = { meta: null, messages: [], skipped: 0 };
  for (const line of text.split(/\r?\n/)) {
    if (!line.trim()) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      out.skipped++;
      continue;
    }
    if (!value || typeof value !== "object" || Array.isArray(value)) {
      out.skipped++;
      continue;
    }
    const obj = value as Record<string, unknown>;
    if (obj["role"] === "session_meta") {
      out.meta ??= obj;
      continue;
    }
    const message = toMessage(obj);
    if (!message) {
      out.skipped++;
      continue;
    }
    out.messages.push({ message, timestamp: toSeconds(obj["timestamp"]) });
  }
  return out;
}

export function importLegacyJsonl(
  ctx: StoreContext,
  dir: string,
): { sessions: number; messages: number; skipped: number } {
  const result = { sessions: 0, messages: 0, skipped: 0 };
  const done = ctx.read(() => ctx.get("SELECT value FROM state_meta WHERE key = ?", LEGACY_IMPORT_MARKER));
  if (done) return result;
  if (ctx.readonly) {
    throw new SessionStoreError(
      "readonly",
      `${ctx.path} was opened read-only; legacy transcripts cannot be imported into it.`,
    );
  }
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((n) => n.endsWith(".jsonl"))
      .sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return result;
    throw error;
  }
  for (const name of names) {
    const path = join(dir, name);
    let text: string;
    let mtime: number;
    try {
      const st = statSync(path);
      if (!st.isFile()) continue;
      mtime = st.mtimeMs / 1000;
      text = readFileSync(path, "utf8");
    } catch {
      continue;
    }
    const parsed = parseLegacyFile(text);
    result.skipped += parsed.skipped;
    if (parsed.messages.length === 0) continue;
    const id = basename(name, ".jsonl");
    const added = ctx.write(() => insertLegacySession(ctx, id, parsed, mtime));
    if (added) {
      result.sessions++;
      result.messages += parsed.messages.length;
    }
  }
  ctx.write(() =>
    ctx
      .stmt("INSERT OR REPLACE INTO state_meta (key, value) VALUES (?, ?)")
      .run(LEGACY_IMPORT_MARKER, JSON.stringify({ at: ctx.now(), dir, ...result })),
  );
  return result;
}

function insertLegacySession(ctx: StoreContext, id: string, parsed: ParsedFile, mtime: number): boolean {
  if (ctx.get("SELECT 1 AS x FROM sessions WHERE id = ?", id)) return false;
  const meta = parsed.meta ?? {};
  const first = parsed.messages.find((m) => m.timestamp !== null)?.timestamp ?? null;
  const startedAt = toSeconds(meta["timestamp"]) ?? first ?? mtime;
  const source = typeof meta["platform"] === "string" && meta["platform"] ? meta["platform"] : "cli";
  const model = typeof meta["model"] === "string" ? meta["model"] : null;
  let calls = 0;
  ctx
    .stmt(
      `INSERT INTO sessions (id, source, model, started_at, message_count, tool_call_count, input_tokens, output_tokens,
         cache_read_tokens, cache_write_tokens, reasoning_tokens, api_call_count, rewind_count, archived)
       VALUES (?, ?, ?, ?, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)`,
    )
    .run(id, source, model, startedAt);
  const insert = ctx.stmt(
    `INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, finish_reason, reasoning)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  // Keep file order even when a line's clock is behind the previous one.
  let at = startedAt;
  for (const { message, timestamp } of parsed.messages) {
    at = Math.max(at, timestamp ?? at);
    insert.run(
      id,
      message.role,
      encodeContent(message.content),
      message.tool_call_id ?? null,
      encodeToolCalls(message.tool_calls),
      message.name ?? null,
      at,
      message.finish_reason ?? null,
      message.reasoning ?? null,
    );
    calls += toolCallCount(message);
  }
  ctx
    .stmt("UPDATE sessions SET message_count = ?, tool_call_count = ? WHERE id = ?")
    .run(parsed.messages.length, calls, id);
  return true;
}
