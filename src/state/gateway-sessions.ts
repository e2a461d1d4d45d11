/**
 * A read-only view of the gateway's routing index, `sessions/sessions.json` (written by
 * `state/gateway/session-index.ts` in Python Hermes's layout): which stored session each chat
 * talks in, and where that chat is. For readers outside the gateway (MCP serve, the control
 * socket's channel list); it never writes or moves the file, and an unreadable file reads as empty.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

export interface GatewayConversation {
  session_key: string;
  session_id: string;
  platform: string;
  chat_type: string;
  chat_id: string;
  thread_id: string | null;
  display_name: string;
  chat_name: string;
  user_id: string;
  user_name: string;
  created_at: string;
  updated_at: string;
}

const text = (value: unknown): string =>
  typeof value === "string" ? value : typeof value === "number" ? String(value) : "";

/** Every conversation in the index (entries without a session id, and `_README`-style keys, skipped). */
export function readGatewayConversations(home: string): GatewayConversation[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(join(home, "sessions", "sessions.json"), "utf8").replace(/^\uFEFF/, ""));
  } catch {
    return [];
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return [];
  const out: GatewayConversation[] = [];
  for (const [key, raw] of Object.entries(parsed as Record<string, unknown>)) {
    if (key.startsWith("_") || !raw || typeof raw !== "object") continue;
    const entry = raw as Record<string, unknown>;
    const sessionId = text(entry["session_id"]);
    if (!sessionId) continue;
    const origin =
      entry["origin"] && typeof entry["origin"] === "object"
        ? (entry["origin"] as Record<string, unknown>)
        : {};
    out.push({
      session_key: key,
      session_id: sessionId,
      platform: text(entry["platform"]) || text(origin["platform"]),
      chat_type: text(entry["chat_type"]) || text(origin["chat_type"]),
      chat_id: text(origin["chat_id"]),
      thread_id: text(origin["thread_id"]) || null,
      display_name: text(entry["display_name"]),
      chat_name: text(origin["chat_name"]),
      user_id: text(origin["user_id"]),
      user_name: text(origin["user_name"]),
      created_at: text(entry["created_at"]),
      updated_at: text(entry["updated_at"]) || text(entry["created_at"]),
    });
  }
  return out.sort((a, b) => b.updated_at.localeCompare(a.updated_at));
}
