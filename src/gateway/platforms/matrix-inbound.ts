/**
 * What a Matrix room message means for the gateway: pure decisions over the event as the SDK hands
 * it over (already decrypted in encrypted rooms).
 *
 * Who may talk is the router's business (`MATRIX_ALLOWED_USERS`, pairing); this file decides what
 * the adapter must: our own echoes, notices and edits are not messages; in rooms the bot needs an
 * @mention (unless the room is free-response or the bot already speaks in the thread); the
 * mention is cut from the text; threads (`m.thread` relations) and auto-threads; which files to
 * fetch.
 *
 * `userName` is the full Matrix id, never the display name: anyone can take any display name, and
 * `@name` allowlist entries match `userName`.
 */
import type { MatrixSettings } from "./matrix-config.js";
import type { InboundMessage, MediaKind } from "./types.js";

/** An encrypted attachment's key material (`EncryptedFile` in the spec). */
export interface MatrixEncryptedFile {
  url: string;
  key: { k: string; alg?: string; [field: string]: unknown };
  iv: string;
  hashes: { sha256?: string };
}

/** A file a message carries: a plain `mxc://` URL or, in encrypted rooms, an encrypted file. */
export interface MatrixMediaRef {
  kind: MediaKind;
  url?: string | undefined;
  file?: MatrixEncryptedFile | undefined;
  mimeType?: string | undefined;
  fileName?: string | undefined;
  size?: number | undefined;
}

export interface MatrixEventView {
  eventId: string;
  roomId: string;
  sender: string;
  type: string;
  content: Record<string, unknown>;
}

export interface MatrixRoomView {
  name?: string | undefined;
  /** A DM: two members, or the invite said `is_direct`. */
  direct: boolean;
}

export interface MatrixBot {
  userId: string;
  displayName?: string | undefined;
  /** Threads (root event ids) the bot has answered in: no mention needed there. */
  threads: ReadonlySet<string>;
}

export type MatrixInbound =
  | { deliver: false; report?: string }
  | { deliver: true; message: InboundMessage; media: MatrixMediaRef[] };

const MEDIA_KINDS: Readonly<Record<string, MediaKind>> = {
  "m.image": "photo",
  "m.video": "video",
  "m.audio": "audio",
  "m.file": "document",
};

const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The text a reply carries after its quoted fallback (`> <@user> …` lines and the blank line). */
export function stripReplyFallback(body: string): string {
  const lines = body.split("\n");
  let i = 0;
  while (i < lines.length && lines[i]?.startsWith(">")) i++;
  if (i === 0) return body;
  while (i < lines.length && lines[i]?.trim() === "") i++;
  return lines.slice(i).join("\n");
}

/** Whether the message addresses the bot, and its text with the mention cut out. */
export function findMention(
  content: Record<string, unknown>,
  body: string,
  bot: Pick<MatrixBot, "userId" | "displayName">,
): { mentioned: boolean; text: string } {
  const localpart = bot.userId.replace(/^@/, "").split(":")[0] ?? "";
  const userIds = record(content["m.mentions"])["user_ids"];
  let mentioned = Array.isArray(userIds) && userIds.includes(bot.userId);
  const formatted = typeof content["formatted_body"] === "string" ? content["formatted_body"] : "";
  if (
    formatted.includes(`matrix.to/#/${bot.userId}`) ||
    formatted.includes(`matrix.to/#/${encodeURIComponent(bot.userId)}`)
  ) {
    mentioned = true;
  }
  let text = body;
  const patterns = [
    new RegExp(escapeRegExp(bot.userId), "g"),
    new RegExp(`(^|\\s)@${escapeRegExp(localpart)}(?![\\w.:-])`, "gi"),
  ];
  const name = bot.displayName?.trim();
  if (name) patterns.push(new RegExp(`^\\s*${escapeRegExp(name)}:`, "i"));
  for (const pattern of patterns) {
    if (pattern.test(text)) {
      mentioned = true;
      pattern.lastIndex = 0;
      text = text.replace(pattern, (_m, lead: unknown) => (typeof lead === "string" ? lead : ""));
    }
  }
  return {
    mentioned,
    text: text
      .replace(/^[\s,:]+/, "")
      .replace(/\s{2,}/g, " ")
      .trim(),
  };
}

function mediaRef(content: Record<string, unknown>, kind: MediaKind): MatrixMediaRef | undefined {
  const info = record(content["info"]);
  const file = record(content["file"]);
  const encrypted =
    typeof file["url"] === "string" &&
    typeof file["iv"] === "string" &&
    typeof record(file["key"])["k"] === "string"
      ? (file as unknown as MatrixEncryptedFile)
      : undefined;
  const url = typeof content["url"] === "string" ? content["url"] : undefined;
  if (!encrypted && !url) return undefined;
  const voice = content["org.matrix.msc3245.voice"] !== undefined;
  return {
    kind: kind === "audio" && voice ? "voice" : kind,
    url,
    file: encrypted,
    mimeType: typeof info["mimetype"] === "string" ? info["mimetype"] : undefined,
    fileName:
      typeof content["filename"] === "string"
        ? content["filename"]
        : typeof content["body"] === "string"
          ? content["body"]
          : undefined,
    size: typeof info["size"] === "number" ? info["size"] : undefined,
  };
}

/** Decides what to do with one timeline event. */
export function matrixInbound(
  event: MatrixEventView,
  room: MatrixRoomView,
  bot: MatrixBot,
  settings: MatrixSettings,
): MatrixInbound {
  if (event.type !== "m.room.message" || event.sender === bot.userId) return { deliver: false };
  if (settings.ignoreUserPatterns.some((p) => p.test(event.sender))) return { deliver: false };
  const content = event.content;
  const relates = record(content["m.relates_to"]);
  if (relates["rel_type"] === "m.replace") return { deliver: false }; // an edit, not a new message
  const msgtype = typeof content["msgtype"] === "string" ? content["msgtype"] : "";
  if (msgtype === "m.notice" && !settings.processNotices) return { deliver: false };
  const rawBody = typeof content["body"] === "string" ? content["body"] : "";
  const kind = MEDIA_KINDS[msgtype];
  const media: MatrixMediaRef[] = [];
  let body = relates["m.in_reply_to"] ? stripReplyFallback(rawBody) : rawBody;
  if (kind) {
    const ref = mediaRef(content, kind);
    if (!ref) return { deliver: false, report: `a Matrix ${msgtype} from ${event.sender} has no file URL` };
    media.push(ref);
    // Without `filename`, the body is the file's name; with it, the body is a caption.
    const caption = typeof content["filename"] === "string" && content["filename"] !== rawBody;
    body = caption ? body : "";
  } else if (!["m.text", "m.notice", "m.emote"].includes(msgtype)) {
    return { deliver: false };
  }
  const inThread = relates["rel_type"] === "m.thread" && typeof relates["event_id"] === "string";
  const threadRoot = inThread ? (relates["event_id"] as string) : undefined;
  const direct = room.direct;
  if (!direct) {
    if (settings.allowedRooms.length > 0 && !settings.allowedRooms.includes(event.roomId))
      return { deliver: false };
  }
  const { mentioned, text } = findMention(content, body, bot);
  if (!direct && settings.requireMention && !mentioned) {
    const free = settings.freeResponseRooms.includes(event.roomId);
    const ourThread = threadRoot !== undefined && bot.threads.has(threadRoot);
    if (!free && !ourThread) return { deliver: false };
  }
  const autoThread = direct ? settings.dmAutoThread : settings.autoThread;
  const threadId = threadRoot ?? (autoThread ? event.eventId : undefined);
  const message: InboundMessage = {
    source: {
      platform: "matrix",
      chatType: direct ? "dm" : "group",
      chatId: event.roomId,
      chatName: room.name,
      userId: event.sender,
      userName: event.sender,
      ...(threadId ? { threadId } : {}),
    },
    text: msgtype === "m.emote" ? `* ${text}` : text,
    messageId: event.eventId,
    ...(direct ? {} : { mentioned }),
  };
  return { deliver: true, message, media };
}
