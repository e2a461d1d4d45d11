/**
 * `hermes mcp serve`'s conversation tools: what is stored, read from state.db and the gateway's
 * routing index (`sessions/sessions.json`), so they work whether or not a gateway runs. Argument
 * names are upstream's (`session_key`, `platform`, `search`, `message_id`); a conversation may be
 * named by its gateway session key or by a session id, id prefix or title (`session_id` is taken
 * too), so CLI and `hermes_prompt` sessions are reachable as well.
 */
import { readFileSync, realpathSync, statSync } from "node:fs";
import { extname, join, sep } from "node:path";
import { messageText } from "../../ai/types.js";
import { type GatewayConversation, readGatewayConversations } from "../../state/gateway-sessions.js";
import type { SessionRecord, SessionStore, StoredMessage } from "../../state/types.js";

export type Json = Record<string, unknown>;

/** MCP content blocks returned as they are (images) instead of one JSON text block. */
export class ToolContent {
  constructor(readonly content: Array<Record<string, unknown>>) {}
}

export interface ServeTool {
  name: string;
  description: string;
  inputSchema: Json;
  run(args: Json): Promise<unknown> | unknown;
}

export const str = (args: Json, key: string): string | undefined =>
  typeof args[key] === "string" && (args[key] as string).trim() ? (args[key] as string).trim() : undefined;

/** An integer argument clamped to [min, max]; `fallback` when absent or not a number (upstream's coercion). */
export function int(args: Json, key: string, fallback: number, max: number, min = 1): number {
  const value = Number(args[key]);
  return args[key] !== undefined && args[key] !== null && Number.isFinite(value)
    ? Math.max(min, Math.min(Math.floor(value), max))
    : fallback;
}

function iso(seconds: number | null | undefined): string | null {
  return typeof seconds === "number" && seconds > 0 ? new Date(seconds * 1000).toISOString() : null;
}

/** Longest message text `messages_read` returns (upstream's cut). */
const READ_LIMIT = 2000;
/** Largest image `attachments_fetch` returns inline. */
const INLINE_IMAGE_BYTES = 5 * 1024 * 1024;
const IMAGE_TYPES: Readonly<Record<string, string>> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
};

interface Resolved {
  session: SessionRecord;
  gateway: GatewayConversation | undefined;
}

/** The conversation named by `session_key` (or `session_id`): a gateway key first, then a session ref. */
async function resolveConversation(store: SessionStore, home: string, args: Json): Promise<Resolved> {
  const ref = str(args, "session_key") ?? str(args, "session_id");
  if (!ref) throw new Error("Give session_key (from conversations_list).");
  const index = readGatewayConversations(home);
  const byKey = index.find((c) => c.session_key === ref);
  if (byKey) {
    const session = await store.getSession(byKey.session_id);
    if (!session)
      throw new Error(`Conversation ${ref} points at session ${byKey.session_id}, which is not stored.`);
    return { session, gateway: byKey };
  }
  let session: SessionRecord;
  try {
    session = await store.resolveSession(ref);
  } catch (error) {
    throw new Error(
      `Conversation not found: ${ref} (${error instanceof Error ? error.message : String(error)}). Use a session_key from conversations_list.`,
    );
  }
  return { session, gateway: index.find((c) => c.session_id === session.id) };
}

const textOf = (m: StoredMessage) => messageText({ content: m.content });

/** Non-text parts of a message: images, `MEDIA:` files sent, files a chat user sent. */
export function attachmentsOf(m: StoredMessage): Array<Record<string, unknown>> {
  const found: Array<Record<string, unknown>> = [];
  if (Array.isArray(m.content)) {
    for (const part of m.content) {
      if (part.type !== "image_url") continue;
      const url = part.image_url.url;
      const data = /^data:([^;,]+)[^,]*,/.exec(url);
      found.push(
        data
          ? { type: "image", mime_type: data[1], bytes: Math.floor(((url.length - data[0].length) * 3) / 4) }
          : { type: "image", url },
      );
    }
  }
  const text = textOf(m);
  for (const match of text.matchAll(/MEDIA:\s*(\S+)/g)) found.push({ type: "media", path: match[1] });
  for (const match of text.matchAll(
    /\[The user sent (?:a |an )?([\w ]+?)(?: \(([^)]*)\))?, saved at ([^\]\n]+)\]/g,
  ))
    found.push({
      type: match[1] === "voice note" ? "voice" : match[1],
      path: match[3],
      ...(match[2] ? { file_name: match[2] } : {}),
    });
  return found;
}

/** An image file inside the home's media cache as MCP image content; undefined for anything else. */
function inlineImage(home: string, path: string): Record<string, unknown> | undefined {
  const mimeType = IMAGE_TYPES[extname(path).toLowerCase()];
  if (!mimeType) return undefined;
  try {
    // Only files the gateway stored: a path named in a message must not read anything else.
    const cache = `${realpathSync(join(home, "cache"))}${sep}`;
    const real = realpathSync(path);
    if (!real.startsWith(cache) || statSync(real).size > INLINE_IMAGE_BYTES) return undefined;
    return { type: "image", data: readFileSync(real).toString("base64"), mimeType };
  } catch {
    return undefined;
  }
}

function conversationView(
  s: SessionRecord & { preview?: string; lastActiveAt?: number },
  g?: GatewayConversation,
) {
  return {
    session_key: g?.session_key ?? null,
    session_id: s.id,
    platform: g?.platform || s.source,
    chat_type: g?.chat_type ?? "",
    display_name: g?.display_name || s.title || "",
    chat_name: g?.chat_name ?? "",
    user_name: g?.user_name ?? "",
    title: s.title,
    model: s.model,
    created_at: iso(s.startedAt),
    updated_at: iso(s.lastActiveAt ?? s.startedAt),
    messages: s.messageCount,
    ...(s.preview !== undefined ? { preview: s.preview } : {}),
  };
}

/** The tools over stored conversations (see the module comment). */
export function storeTools(store: SessionStore, home: string): ServeTool[] {
  const keyArg = {
    session_key: {
      type: "string",
      description:
        "The conversation's session_key from conversations_list (a session id or title works too).",
    },
  };
  return [
    {
      name: "conversations_list",
      description:
        "List conversations across platforms (newest first): session_key (for the other tools), platform, " +
        "chat type, name, last activity, message count and preview.",
      inputSchema: {
        type: "object",
        properties: {
          platform: {
            type: "string",
            description: "Only this platform: telegram, discord, slack, cli, mcp, ...",
          },
          limit: { type: "integer", minimum: 1, maximum: 200, description: "How many (default 50)." },
          search: {
            type: "string",
            description: "Only conversations whose name, title, key or preview contains this.",
          },
        },
      },
      run: async (args) => {
        const platform = str(args, "platform") ?? str(args, "source");
        const search = str(args, "search")?.toLowerCase();
        const limit = int(args, "limit", 50, 200);
        const index = new Map(readGatewayConversations(home).map((c) => [c.session_id, c]));
        const conversations = (
          await store.listSessions({
            limit: search ? 2000 : limit,
            ...(platform ? { source: platform } : {}),
          })
        )
          .map((s) => conversationView(s, index.get(s.id)))
          .filter(
            (c) =>
              !search ||
              [c.display_name, c.chat_name, c.title ?? "", c.session_key ?? "", c.preview ?? ""].some((v) =>
                v.toLowerCase().includes(search),
              ),
          )
          .slice(0, limit);
        return { count: conversations.length, conversations };
      },
    },
    {
      name: "conversation_get",
      description: "One conversation's details: platform, chat, user, times, tokens, cost, parent session.",
      inputSchema: { type: "object", properties: keyArg, required: ["session_key"] },
      run: async (args) => {
        const { session: s, gateway: g } = await resolveConversation(store, home, args);
        return {
          ...conversationView(s, g),
          chat_id: g?.chat_id ?? null,
          thread_id: g?.thread_id ?? null,
          user_id: g?.user_id ?? s.userId,
          ended_at: iso(s.endedAt),
          end_reason: s.endReason,
          parent_session_id: s.parentSessionId,
          input_tokens: s.inputTokens,
          output_tokens: s.outputTokens,
          total_tokens: s.inputTokens + s.outputTokens,
          estimated_cost_usd: s.estimatedCostUsd,
        };
      },
    },
    {
      name: "messages_read",
      description:
        "The latest messages of a conversation, oldest first: id (for attachments_fetch), role, text, time; " +
        "tool calls are named.",
      inputSchema: {
        type: "object",
        properties: {
          ...keyArg,
          limit: {
            type: "integer",
            minimum: 1,
            maximum: 200,
            description: "How many, most recent (default 50).",
          },
        },
        required: ["session_key"],
      },
      run: async (args) => {
        const { session, gateway } = await resolveConversation(store, home, args);
        const shown = (await store.getMessages(session.id))
          .filter((m) => m.role === "user" || m.role === "assistant")
          .map((m) => {
            const text = textOf(m);
            return {
              id: String(m.id),
              role: m.role,
              content: text.length > READ_LIMIT ? `${text.slice(0, READ_LIMIT)}…` : text,
              timestamp: iso(m.timestamp),
              ...(m.toolCalls?.length ? { tool_calls: m.toolCalls.map((c) => c.function.name) } : {}),
            };
          })
          .filter((m) => m.content || m.tool_calls);
        const messages = shown.slice(-int(args, "limit", 50, 200));
        return {
          session_key: gateway?.session_key ?? null,
          session_id: session.id,
          count: messages.length,
          total_in_session: shown.length,
          messages,
        };
      },
    },
    {
      name: "attachments_fetch",
      description:
        "The attachments of one message (from messages_read): images, files the user sent, MEDIA: files the " +
        "agent sent. Images stored in Hermes's media cache come back as images.",
      inputSchema: {
        type: "object",
        properties: {
          ...keyArg,
          message_id: { type: "string", description: "The message id from messages_read." },
        },
        required: ["session_key", "message_id"],
      },
      run: async (args) => {
        const { session } = await resolveConversation(store, home, args);
        const id = str(args, "message_id") ?? String(args["message_id"] ?? "");
        const message = (await store.getMessages(session.id)).find((m) => String(m.id) === id);
        if (!message)
          throw new Error(`Message not found: ${id} in ${session.id} (ids come from messages_read).`);
        const attachments = attachmentsOf(message);
        const images = attachments
          .map((a) => (typeof a["path"] === "string" ? inlineImage(home, a["path"]) : undefined))
          .filter((i): i is Record<string, unknown> => i !== undefined);
        const listing = { message_id: id, count: attachments.length, attachments };
        if (!images.length) return listing;
        return new ToolContent([{ type: "text", text: JSON.stringify(listing, null, 2) }, ...images]);
      },
    },
    {
      name: "conversations_search",
      description: "Full-text search over every stored conversation; returns matching snippets.",
      inputSchema: {
        type: "object",
        properties: {
          query: { type: "string", description: 'Words (ANDed), "a phrase", prefix*, OR, NOT.' },
          limit: { type: "integer", minimum: 1, maximum: 100, description: "How many (default 10)." },
        },
        required: ["query"],
      },
      run: async (args) => {
        const index = new Map(readGatewayConversations(home).map((c) => [c.session_id, c.session_key]));
        const hits = await store.search({
          query: str(args, "query") ?? "",
          limit: int(args, "limit", 10, 100),
        });
        return {
          count: hits.length,
          results: hits.map((h) => ({
            session_key: index.get(h.sessionId) ?? null,
            session_id: h.sessionId,
            session_title: h.sessionTitle,
            role: h.role,
            snippet: h.snippet,
            at: iso(h.timestamp),
          })),
        };
      },
    },
  ];
}
