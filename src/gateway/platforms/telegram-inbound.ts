/**
 * Telegram's wire messages as the gateway reads them: which chat and sender a message comes from,
 * whether a group message is addressed to the bot (mention gating), and which file it carries.
 * Pure functions, no network.
 */
import type { InboundMessage, MediaKind, MessageSource } from "./types.js";

/** Set by the anonymous-admin feature: `from` is this bot and `sender_chat` the group itself. */
const ANONYMOUS_ADMIN_BOT_ID = 1087968824;

/** The slice of Bot API objects the adapter reads; all optional, because it is wire data. */
export type WireUser = { id?: number; is_bot?: boolean; first_name?: string; username?: string };
type WireChat = { id?: number; type?: string; title?: string; username?: string };
type WireEntity = { type?: string; offset?: number; length?: number; user?: WireUser };
type WireFile = { file_id?: string; file_size?: number; file_name?: string; mime_type?: string };
type WireFileSize = WireFile & { width?: number; height?: number };
export interface WireMessage {
  message_id?: number;
  message_thread_id?: number;
  is_topic_message?: boolean;
  from?: WireUser;
  sender_chat?: WireChat;
  chat?: WireChat;
  text?: string;
  caption?: string;
  entities?: WireEntity[];
  caption_entities?: WireEntity[];
  reply_to_message?: WireMessage & { forum_topic_created?: unknown };
  photo?: WireFileSize[];
  document?: WireFile;
  voice?: WireFile;
  audio?: WireFile;
  video?: WireFile;
  video_note?: WireFile;
}

/** A file the message carries, before download. */
export interface TelegramMediaRef {
  kind: MediaKind;
  fileId: string;
  fileSize?: number | undefined;
  fileName?: string | undefined;
  mimeType?: string | undefined;
}

/** Group gating settings from the `telegram:` section of config.yaml. */
export interface TelegramGating {
  requireMention: boolean;
  freeResponseChats: ReadonlySet<string>;
}

/** Reads `require_mention` (default true) and `free_response_chats` (list or comma-separated). */
export function telegramGating(settings: Readonly<Record<string, unknown>>): TelegramGating {
  const raw = settings.require_mention;
  const off = raw === false || (typeof raw === "string" && /^(false|no|off|0)$/i.test(raw.trim()));
  const chats = settings.free_response_chats;
  const list = Array.isArray(chats) ? chats : typeof chats === "string" ? chats.split(",") : [];
  const free = new Set(
    list
      .filter((c) => typeof c === "string" || typeof c === "number")
      .map((c) => String(c).trim())
      .filter((c) => c !== ""),
  );
  return { requireMention: !off, freeResponseChats: free };
}

export type TelegramInbound =
  | { deliver: true; message: InboundMessage; media?: TelegramMediaRef | undefined }
  /** `report` is set for malformed payloads worth an `onError`; ordinary skips stay quiet. */
  | { deliver: false; report?: string | undefined };

export const CHAT_TYPES: Record<string, MessageSource["chatType"]> = {
  private: "dm",
  group: "group",
  supergroup: "group",
  channel: "channel",
};

/** The forum topic (or private-chat topic) a message belongs to. */
export function topicOf(msg: WireMessage): string | undefined {
  return msg.is_topic_message && typeof msg.message_thread_id === "number"
    ? String(msg.message_thread_id)
    : undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function mediaOf(msg: WireMessage): TelegramMediaRef | undefined {
  const ref = (kind: MediaKind, f: WireFile | undefined): TelegramMediaRef | undefined =>
    f && typeof f.file_id === "string"
      ? { kind, fileId: f.file_id, fileSize: f.file_size, fileName: f.file_name, mimeType: f.mime_type }
      : undefined;
  if (Array.isArray(msg.photo) && msg.photo.length > 0) {
    const area = (p: WireFileSize): number => p.file_size ?? (p.width ?? 0) * (p.height ?? 0);
    const largest = msg.photo.reduce((best, p) => (area(p) >= area(best) ? p : best));
    return ref("photo", largest);
  }
  return (
    ref("document", msg.document) ??
    ref("voice", msg.voice) ??
    ref("audio", msg.audio) ??
    ref("video", msg.video) ??
    ref("video", msg.video_note)
  );
}

/**
 * Maps one `message` or `channel_post` to what the router should see, applying group mention
 * gating, command normalisation (`/cmd@thisbot` → `/cmd`) and mention stripping. Pure; never throws.
 */
export function telegramInbound(
  msg: WireMessage,
  bot: { id: number; username: string },
  gating: TelegramGating,
  isChannelPost = false,
): TelegramInbound {
  const chat = msg?.chat;
  if (!chat || typeof chat.id !== "number" || typeof msg.message_id !== "number") {
    return { deliver: false, report: "Telegram sent a message without a chat or message id; ignored" };
  }
  const chatType = CHAT_TYPES[chat.type ?? ""];
  if (!chatType)
    return { deliver: false, report: `Telegram chat type "${chat.type}" is not supported; ignored` };

  let userId: string;
  let userName: string | undefined;
  const from = msg.from;
  if (isChannelPost || chatType === "channel") {
    const sender = msg.sender_chat ?? chat;
    userId = String(sender.id ?? chat.id);
    userName = sender.username ?? sender.title;
  } else if (from && typeof from.id === "number") {
    const anonymousAdmin = from.id === ANONYMOUS_ADMIN_BOT_ID && msg.sender_chat?.id === chat.id;
    if (from.is_bot && !anonymousAdmin) return { deliver: false };
    userId = String(anonymousAdmin ? chat.id : from.id);
    userName = anonymousAdmin ? chat.title : (from.username ?? from.first_name);
  } else {
    return {
      deliver: false,
      report: `Telegram message ${msg.message_id} in chat ${chat.id} has no sender; ignored`,
    };
  }

  let text = typeof msg.text === "string" ? msg.text : typeof msg.caption === "string" ? msg.caption : "";
  const media = mediaOf(msg);
  // Stickers, polls, service messages (joins, pins, topic changes): nothing for the agent.
  if (text.trim() === "" && !media) return { deliver: false };

  const botName = bot.username.toLowerCase();
  const command = /^\/([A-Za-z0-9_]+)(?:@([A-Za-z0-9_]+))?(?=\s|$)/.exec(text);
  const addressee = command?.[2]?.toLowerCase();
  // `/cmd@otherbot` in a group is meant for another bot; in a DM only this bot can read it anyway.
  if (addressee !== undefined && addressee !== botName && chatType !== "dm") return { deliver: false };
  if (command && addressee === botName) text = `/${command[1]}${text.slice(command[0].length)}`;
  const source: MessageSource = {
    platform: "telegram",
    chatType,
    chatId: String(chat.id),
    chatName: chat.title,
    userId,
    userName,
    threadId: topicOf(msg),
  };

  const entities: WireEntity[] = [msg.entities, msg.caption_entities].find(Array.isArray) ?? [];
  const mentionPattern = new RegExp(`(^|[^\\w@])@${escapeRegExp(bot.username)}(?![\\w])`, "i");
  const mentioned =
    entities.some(
      (e) =>
        (e?.type === "mention" &&
          (msg.text ?? msg.caption ?? "")
            .slice(e.offset ?? 0, (e.offset ?? 0) + (e.length ?? 0))
            .toLowerCase() === `@${botName}`) ||
        (e?.type === "text_mention" && e.user?.id === bot.id),
    ) || mentionPattern.test(text);
  const reply = msg.reply_to_message;
  const replyToBot = reply?.from?.id === bot.id && reply.forum_topic_created === undefined;

  if (chatType !== "dm") {
    const free = !gating.requireMention || gating.freeResponseChats.has(String(chat.id));
    if (!free && !mentioned && !replyToBot && !command) return { deliver: false };
  }
  if (mentioned) {
    const strip = new RegExp(`(^|\\s)@${escapeRegExp(bot.username)}(?![\\w])[,:]?[ \\t]?`, "gi");
    text = text.replace(strip, "$1").trim();
  }
  const message: InboundMessage = {
    source,
    text,
    messageId: String(msg.message_id),
    ...(chatType === "dm" ? {} : { mentioned }),
  };
  return { deliver: true, message, media };
}
