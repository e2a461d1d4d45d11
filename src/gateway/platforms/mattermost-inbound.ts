/**
 * What a Mattermost `posted` WebSocket event means for the gateway: pure decisions over the event
 * JSON the server broadcasts (`{event: "posted", data: {post: "<json>", channel_type, sender_name,
 * channel_display_name}, seq}`), and the adapter's settings.
 *
 * Who may talk is the router's business (`MATTERMOST_ALLOWED_USERS`, pairing); this file decides
 * only what the adapter itself must, as upstream does: the channels it listens in
 * (`allowed_channels`), whether a channel message is addressed to the bot (`require_mention`,
 * `free_response_channels`, the `@mention` stripped from the text), which thread a reply belongs
 * in (`reply_mode: thread`), our own posts and system posts (never messages).
 */
import { envFlag, parseAllowlist } from "../../state/gateway/allowlist.js";
import type { ChatType } from "../session-key.js";
import type { InboundMessage } from "./types.js";

export interface MattermostSettings {
  /** Channel ids the bot answers in (DMs always); empty: every channel it is a member of. */
  allowedChannels: ReadonlySet<string>;
  /** Channels where no @mention is needed. */
  freeResponseChannels: ReadonlySet<string>;
  /** Channel (non-DM) messages must @mention the bot (default true). */
  requireMention: boolean;
  /** `thread`: a top-level channel post is answered in a thread under it; `off`: flat. */
  replyMode: "thread" | "off";
  /** Reactions 👀 then ✅/❌ on the message being answered (default true). */
  reactions: boolean;
}

const list = (value: unknown): Set<string> =>
  new Set(
    Array.isArray(value) ? value.map((v) => String(v).trim()).filter(Boolean) : parseAllowlist(String(value)),
  );

const truthy = (value: unknown): boolean => (typeof value === "boolean" ? value : envFlag(String(value)));

/**
 * Settings from the `mattermost:` section of config.yaml, else the environment (upstream's order:
 * a key set in config wins over its variable).
 */
export function mattermostSettings(
  env: Readonly<Record<string, string | undefined>>,
  settings: Readonly<Record<string, unknown>>,
): MattermostSettings {
  const pick = (key: string, name: string): unknown => settings[key] ?? env[name];
  const mention = pick("require_mention", "MATTERMOST_REQUIRE_MENTION");
  const reactions = pick("reactions", "MATTERMOST_REACTIONS");
  const mode = String(pick("reply_mode", "MATTERMOST_REPLY_MODE") ?? "off")
    .trim()
    .toLowerCase();
  return {
    allowedChannels: list(pick("allowed_channels", "MATTERMOST_ALLOWED_CHANNELS") ?? ""),
    freeResponseChannels: list(pick("free_response_channels", "MATTERMOST_FREE_RESPONSE_CHANNELS") ?? ""),
    requireMention: mention === undefined ? true : truthy(mention),
    replyMode: mode === "thread" ? "thread" : "off",
    reactions: reactions === undefined ? true : truthy(reactions),
  };
}

/** The bot account, from `GET /users/me`. */
export interface MattermostIdentity {
  userId: string;
  username: string;
}

/** A file attached to a post; its bytes come from `GET /files/{id}`. */
export interface MattermostFileRef {
  id: string;
  name?: string | undefined;
  mimeType?: string | undefined;
  size?: number | undefined;
}

export type MattermostInbound =
  | { deliver: false; report?: string }
  | {
      deliver: true;
      /** The post id: the key for de-duplication after a reconnect. */
      postId: string;
      /** `create_at` of the post (ms), for catching up after a missed stretch. */
      createAt: number;
      message: InboundMessage;
      /** File ids to download; `post.metadata.files` gives their names and types when present. */
      files: MattermostFileRef[];
    };

const CHAT_TYPES: Readonly<Record<string, ChatType>> = { D: "dm", G: "group", P: "group", O: "channel" };

const str = (value: unknown): string => (typeof value === "string" ? value : "");

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Reads a post (from a `posted` event's `data.post`, already parsed, or from `GET /posts/since`)
 * and decides whether it goes to the gateway. `channelType` and `senderName` come from the event's
 * `data` (posts fetched over REST carry neither; pass what the channel lookup says).
 */
export function mattermostInbound(
  post: unknown,
  meta: {
    channelType?: string | undefined;
    senderName?: string | undefined;
    channelName?: string | undefined;
  },
  me: MattermostIdentity,
  settings: MattermostSettings,
): MattermostInbound {
  if (!post || typeof post !== "object")
    return { deliver: false, report: "a Mattermost post that is not an object" };
  const p = post as Record<string, unknown>;
  const postId = str(p["id"]);
  const channelId = str(p["channel_id"]);
  const userId = str(p["user_id"]);
  if (!postId || !channelId || !userId) {
    return { deliver: false, report: "a Mattermost post without id, channel_id or user_id" };
  }
  // Our own posts come back as events; system posts (joins, header changes) have a type.
  if (userId === me.userId || str(p["type"]) !== "") return { deliver: false };
  // Edits and deletions of old posts arrive as other events; a deleted post may still be replayed.
  if (typeof p["delete_at"] === "number" && p["delete_at"] > 0) return { deliver: false };
  const raw = meta.channelType ?? "O";
  const chatType = CHAT_TYPES[raw] ?? "channel";
  let text = str(p["message"]);
  let mentioned = false;
  if (chatType !== "dm") {
    if (settings.allowedChannels.size > 0 && !settings.allowedChannels.has(channelId))
      return { deliver: false };
    const patterns = [me.username ? `@${me.username}` : "", `@${me.userId}`].filter(Boolean);
    // A mention is the handle as a whole word: `@hermesbot` does not mention `@hermes`.
    const mention = new RegExp(
      `(^|[^\\w.-])(?:${patterns.map(escapeRegExp).join("|")})(?![\\w-]|\\.\\w)`,
      "gi",
    );
    mentioned = mention.test(text);
    const free = !settings.requireMention || settings.freeResponseChannels.has(channelId);
    if (!free && !mentioned) return { deliver: false };
    if (mentioned)
      text = text
        .replace(mention, "$1")
        .replace(/\s{2,}/g, " ")
        .trim();
  }
  const rootId = str(p["root_id"]);
  // A post inside a thread is answered there; a top-level channel post starts one in thread mode.
  const threadId = rootId || (settings.replyMode === "thread" && chatType !== "dm" ? postId : "");
  const senderName = (meta.senderName ?? "").replace(/^@/, "");
  const metadata =
    p["metadata"] && typeof p["metadata"] === "object" ? (p["metadata"] as Record<string, unknown>) : {};
  const described = new Map<string, MattermostFileRef>();
  for (const info of Array.isArray(metadata["files"]) ? metadata["files"] : []) {
    const f = (info ?? {}) as Record<string, unknown>;
    const id = str(f["id"]);
    if (!id) continue;
    described.set(id, {
      id,
      name: str(f["name"]) || undefined,
      mimeType: str(f["mime_type"]) || undefined,
      size: typeof f["size"] === "number" ? f["size"] : undefined,
    });
  }
  const ids = Array.isArray(p["file_ids"])
    ? p["file_ids"].filter((v): v is string => typeof v === "string")
    : [];
  const files = ids.map((id) => described.get(id) ?? { id });
  return {
    deliver: true,
    postId,
    createAt: typeof p["create_at"] === "number" ? p["create_at"] : 0,
    files,
    message: {
      source: {
        platform: "mattermost",
        chatType,
        chatId: channelId,
        ...(meta.channelName ? { chatName: meta.channelName } : {}),
        userId,
        ...(senderName ? { userName: senderName } : {}),
        ...(threadId ? { threadId } : {}),
      },
      text,
      messageId: postId,
      ...(chatType !== "dm" ? { mentioned } : {}),
    },
  };
}

/** The `data.post` of a `posted` event, parsed; undefined when it is not JSON. */
export function parsePostedEvent(data: unknown): { post: unknown; meta: Record<string, string> } | undefined {
  if (!data || typeof data !== "object") return undefined;
  const d = data as Record<string, unknown>;
  const raw = d["post"];
  let post: unknown;
  try {
    post = typeof raw === "string" ? JSON.parse(raw) : raw;
  } catch {
    return undefined;
  }
  if (!post || typeof post !== "object") return undefined;
  return {
    post,
    meta: {
      channelType: str(d["channel_type"]),
      senderName: str(d["sender_name"]),
      channelName: str(d["channel_display_name"]),
    },
  };
}
