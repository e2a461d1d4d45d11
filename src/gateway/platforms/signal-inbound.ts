/**
 * What a signal-cli `receive` event means for the gateway: pure decisions over the envelope JSON
 * that signal-cli's daemon streams (`{"envelope": {...}, "account": "+1..."}`).
 *
 * Who may talk is the router's business (`SIGNAL_ALLOWED_USERS`, pairing); this file decides only
 * what the adapter itself must: which groups it listens in (`SIGNAL_GROUP_ALLOWED_USERS`: unset
 * means none, as upstream), whether a group message is addressed to the bot
 * (`signal.require_mention` / `SIGNAL_REQUIRE_MENTION`), stories, our own echoes, and the identity
 * of a message for de-duplication after a reconnect.
 *
 * The sender's profile name is never used as `userName`: anyone can call themselves anything on
 * Signal, and `@name` allowlist entries match `userName`. It is the DM's `chatName` instead.
 */
import { envFlag, parseAllowlist } from "../../state/gateway/allowlist.js";
import type { InboundMessage, MessageSource } from "./types.js";

export interface SignalGating {
  /** The bot's own number (SIGNAL_ACCOUNT). */
  account: string;
  /** Group ids the bot listens in; `*` for all; empty: groups are ignored. */
  groups: readonly string[];
  requireMention: boolean;
  ignoreStories: boolean;
}

const section = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

const flag = (value: unknown): boolean | undefined =>
  typeof value === "boolean" ? value : typeof value === "string" ? envFlag(value) : undefined;

/** The gating settings from the environment and the `signal:` section (the environment wins). */
export function signalGating(
  account: string,
  env: Readonly<Record<string, string | undefined>>,
  settings: Readonly<Record<string, unknown>>,
): SignalGating {
  const envMention = env["SIGNAL_REQUIRE_MENTION"];
  const envStories = env["SIGNAL_IGNORE_STORIES"];
  return {
    account,
    groups: parseAllowlist(env["SIGNAL_GROUP_ALLOWED_USERS"]),
    requireMention:
      envMention !== undefined ? envFlag(envMention) : (flag(settings["require_mention"]) ?? false),
    ignoreStories:
      envStories !== undefined ? envFlag(envStories) : (flag(settings["ignore_stories"]) ?? true),
  };
}

/** An attachment as signal-cli describes it; its bytes come from the `getAttachment` call. */
export interface SignalAttachmentRef {
  id: string;
  contentType?: string | undefined;
  fileName?: string | undefined;
  size?: number | undefined;
}

export type SignalInbound =
  | { deliver: false; report?: string }
  | {
      deliver: true;
      message: InboundMessage;
      attachments: SignalAttachmentRef[];
      /** `<sender>:<timestamp>`: the same message delivered twice has the same key. */
      key: string;
      /** Author and timestamp of the message, for reactions and quotes. */
      author: string;
      timestamp: number;
    };

interface WireMention {
  start?: unknown;
  length?: unknown;
  number?: unknown;
  uuid?: unknown;
}

const str = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;

/** Replaces Signal's U+FFFC mention placeholders with `@number` (or `@uuid`), last first. */
export function renderMentions(text: string, mentions: unknown): string {
  if (!Array.isArray(mentions) || !text.includes("\uFFFC")) return text;
  const list = (mentions as WireMention[])
    .filter((m) => m && typeof m === "object" && typeof m.start === "number")
    .sort((a, b) => (b.start as number) - (a.start as number));
  let out = text;
  for (const m of list) {
    const start = m.start as number;
    const length = typeof m.length === "number" && m.length > 0 ? m.length : 1;
    const who = str(m.number) ?? str(m.uuid) ?? "someone";
    out = `${out.slice(0, start)}@${who}${out.slice(start + length)}`;
  }
  return out;
}

function mentionsAccount(data: Record<string, unknown>, text: string, ids: readonly string[]): boolean {
  const mentions = Array.isArray(data["mentions"]) ? (data["mentions"] as WireMention[]) : [];
  if (mentions.some((m) => ids.includes(str(m?.number) ?? "") || ids.includes(str(m?.uuid) ?? "")))
    return true;
  return ids.some((id) => id && text.includes(`@${id}`));
}

/** The bot's own `@mention` removed, so the agent does not read it as a number to contact. */
function stripOwnMention(text: string, ids: readonly string[]): string {
  let out = text;
  for (const id of ids) if (id) out = out.split(`@${id}`).join("");
  return out.replace(/[ \t]{2,}/g, " ").trim();
}

function attachmentsOf(data: Record<string, unknown>): SignalAttachmentRef[] {
  const list = Array.isArray(data["attachments"]) ? data["attachments"] : [];
  const out: SignalAttachmentRef[] = [];
  for (const raw of list) {
    const a = section(raw);
    const id = str(a["id"]);
    if (!id) continue;
    out.push({
      id,
      contentType: str(a["contentType"]),
      fileName: str(a["filename"]),
      size: typeof a["size"] === "number" ? a["size"] : undefined,
    });
  }
  return out;
}

/**
 * Turns one streamed event into a message for the router, or says why not. `isOwnEcho` answers
 * whether a timestamp is one of this adapter's own sends (a linked device's sync copy of it);
 * `accountUuid` is the bot's service id when known (mentions may name it instead of the number).
 */
export function signalInbound(
  event: unknown,
  gating: SignalGating,
  isOwnEcho: (timestamp: number) => boolean,
  accountUuid?: string,
): SignalInbound {
  const root = section(event);
  let envelope = section(root["envelope"] ?? root);
  const ownIds = [gating.account, accountUuid ?? ""].filter(Boolean);
  let fromSelf = false;
  const sync = section(envelope["syncMessage"]);
  if (envelope["syncMessage"] !== undefined) {
    // Our own account's other devices: only "Note to Self" and group messages the owner typed
    // on their phone are messages; read receipts, contacts sync and our own sends are not.
    const sent = section(sync["sentMessage"]);
    if (Object.keys(sent).length === 0) return { deliver: false };
    const destination = str(sent["destinationNumber"]) ?? str(sent["destination"]);
    const toSelf = destination !== undefined && ownIds.includes(destination);
    if (!toSelf && !str(section(sent["groupInfo"])["groupId"])) return { deliver: false };
    const ts = typeof sent["timestamp"] === "number" ? sent["timestamp"] : undefined;
    if (ts !== undefined && isOwnEcho(ts)) return { deliver: false };
    envelope = { ...envelope, dataMessage: sent };
    fromSelf = true;
  }
  const sender = str(envelope["sourceNumber"]) ?? str(envelope["sourceUuid"]) ?? str(envelope["source"]);
  if (!sender) return { deliver: false, report: "Signal sent an event without a sender; ignored" };
  if (!fromSelf && ownIds.includes(sender)) return { deliver: false };
  if (gating.ignoreStories && envelope["storyMessage"] !== undefined) return { deliver: false };
  const data = section(envelope["dataMessage"] ?? section(envelope["editMessage"])["dataMessage"]);
  if (Object.keys(data).length === 0) return { deliver: false }; // typing, receipts, calls
  const timestamp =
    typeof data["timestamp"] === "number"
      ? data["timestamp"]
      : typeof envelope["timestamp"] === "number"
        ? envelope["timestamp"]
        : 0;
  const group = section(data["groupInfo"]);
  const groupId = str(group["groupId"]);
  if (groupId && !(gating.groups.includes("*") || gating.groups.includes(groupId))) {
    return { deliver: false };
  }
  let text = renderMentions(typeof data["message"] === "string" ? data["message"] : "", data["mentions"]);
  let mentioned: boolean | undefined;
  if (groupId) {
    mentioned = mentionsAccount(data, text, ownIds);
    if (gating.requireMention && !mentioned) return { deliver: false };
    text = stripOwnMention(text, ownIds);
  }
  const attachments = attachmentsOf(data);
  if (!text.trim() && attachments.length === 0) return { deliver: false }; // reactions, profile keys
  const profileName = str(envelope["sourceName"]);
  const source: MessageSource = {
    platform: "signal",
    chatType: groupId ? "group" : "dm",
    chatId: groupId ? `group:${groupId}` : sender,
    chatName: groupId ? (str(group["groupName"]) ?? groupId) : (profileName ?? sender),
    userId: sender,
  };
  return {
    deliver: true,
    message: {
      source,
      text,
      ...(timestamp ? { messageId: signalMessageId(timestamp, sender) } : {}),
      ...(mentioned !== undefined ? { mentioned } : {}),
    },
    attachments,
    key: `${sender}:${timestamp}`,
    author: sender,
    timestamp,
  };
}

/** A Signal message is named by its timestamp and author: `<timestamp>:<author>`. */
export const signalMessageId = (timestamp: number, author: string): string => `${timestamp}:${author}`;

/** The timestamp and author of a `signalMessageId`, or undefined when it is not one. */
export function parseSignalMessageId(
  id: string | undefined,
): { timestamp: number; author: string } | undefined {
  const m = /^(\d+):(.+)$/.exec(id ?? "");
  if (!m?.[1] || !m[2]) return undefined;
  return { timestamp: Number(m[1]), author: m[2] };
}
