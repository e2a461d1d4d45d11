/**
 * Pure pieces of the WhatsApp Cloud API platform: Meta's webhook signature
 * (`X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body, keyed with the app secret>`),
 * what a webhook's `entry[].changes[].value` holds, the `/messages` payloads the adapter sends
 * (text, media, interactive buttons, templates, typing) and Graph's error bodies. No I/O.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Button } from "./types.js";

/** `sha256=<hex>` for a body, as Meta signs it. */
export function metaSignature(appSecret: string, body: Buffer | string): string {
  return `sha256=${createHmac("sha256", appSecret).update(body).digest("hex")}`;
}

/** Whether `header` is Meta's signature of `body`. Constant-time; false for a missing or malformed one. */
export function verifyMetaSignature(appSecret: string, body: Buffer, header: string | undefined): boolean {
  if (!appSecret || !header) return false;
  const m = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
  if (!m?.[1]) return false;
  const expected = Buffer.from(metaSignature(appSecret, body).slice(7), "hex");
  const given = Buffer.from(m[1], "hex");
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** The GET subscription handshake: the challenge to echo, or the status and reason to refuse with. */
export function verifyHandshake(
  query: URLSearchParams,
  verifyToken: string,
): { ok: true; challenge: string } | { ok: false; status: number; reason: string } {
  // Without a configured token any caller could subscribe the endpoint.
  if (!verifyToken) return { ok: false, status: 503, reason: "WHATSAPP_CLOUD_VERIFY_TOKEN is not set" };
  if (query.get("hub.mode") !== "subscribe")
    return { ok: false, status: 400, reason: "hub.mode is not subscribe" };
  const given = Buffer.from(query.get("hub.verify_token") ?? "");
  const want = Buffer.from(verifyToken);
  if (given.length !== want.length || !timingSafeEqual(given, want))
    return { ok: false, status: 403, reason: "hub.verify_token does not match" };
  const challenge = query.get("hub.challenge") ?? "";
  if (!challenge) return { ok: false, status: 400, reason: "hub.challenge is missing" };
  return { ok: true, challenge };
}

export type CloudMediaType = "image" | "video" | "audio" | "voice" | "document" | "sticker";
const MEDIA_TYPES: ReadonlySet<string> = new Set(["image", "video", "audio", "voice", "document", "sticker"]);

export interface CloudMediaRef {
  type: CloudMediaType;
  id: string;
  mimeType?: string | undefined;
  fileName?: string | undefined;
}

/** One inbound user message of a webhook, with what the adapter needs of it. */
export interface CloudInbound {
  /** The message id (`wamid.…`). */
  id: string;
  /** The sender's WhatsApp id (digits, no `+`). */
  from: string;
  /** The sender's profile name, when the webhook's `contacts` carried it. */
  name?: string | undefined;
  /** Text, caption, or the title of a pressed button. */
  text: string;
  /** The id of a pressed interactive button or list row. */
  buttonId?: string | undefined;
  media?: CloudMediaRef | undefined;
  /** Seconds since the epoch, as Meta sends it. */
  timestamp?: number | undefined;
  /** The message it replies to. */
  replyTo?: string | undefined;
  /** A message type the adapter cannot read (reaction, location, …). */
  unsupported?: string | undefined;
  /** Group-shaped payload: the Cloud API adapter answers only direct chats. */
  group?: boolean | undefined;
}

const rec = (v: unknown): Record<string, unknown> =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const str = (v: unknown): string => (typeof v === "string" ? v : typeof v === "number" ? String(v) : "");
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The user messages in a webhook body (statuses and other fields are skipped); [] when none. */
export function parseCloudWebhook(payload: unknown): CloudInbound[] {
  const body = rec(payload);
  if (body["object"] !== "whatsapp_business_account") return [];
  const out: CloudInbound[] = [];
  for (const entry of list(body["entry"])) {
    for (const change of list(rec(entry)["changes"])) {
      if (rec(change)["field"] !== "messages") continue;
      const value = rec(rec(change)["value"]);
      const names = new Map<string, string>();
      for (const c of list(value["contacts"])) {
        const waId = str(rec(c)["wa_id"]).trim();
        const name = str(rec(rec(c)["profile"])["name"]).trim();
        if (waId && name) names.set(waId, name);
      }
      for (const raw of list(value["messages"])) {
        const m = rec(raw);
        const id = str(m["id"]).trim();
        const from = str(m["from"]).trim();
        if (!id || !from) continue;
        const type = str(m["type"]) || "text";
        const inbound: CloudInbound = {
          id,
          from,
          name: names.get(from),
          text: "",
          timestamp: Number(m["timestamp"]) || undefined,
          replyTo: str(rec(m["context"])["id"]) || undefined,
          group: m["chat"] !== undefined || m["group_id"] !== undefined,
        };
        if (type === "text") inbound.text = str(rec(m["text"])["body"]);
        else if (type === "button") {
          inbound.text = str(rec(m["button"])["text"]);
          inbound.buttonId = str(rec(m["button"])["payload"]) || undefined;
        } else if (type === "interactive") {
          const i = rec(m["interactive"]);
          const pick = rec(i["button_reply"] ?? i["list_reply"]);
          inbound.text = str(pick["title"]);
          inbound.buttonId = str(pick["id"]) || undefined;
        } else if (MEDIA_TYPES.has(type)) {
          const media = rec(m[type]);
          inbound.text = str(media["caption"]);
          const mediaId = str(media["id"]).trim();
          if (mediaId)
            inbound.media = {
              type: type as CloudMediaType,
              id: mediaId,
              mimeType: str(media["mime_type"]).split(";")[0]?.trim() || undefined,
              fileName: str(media["filename"]) || undefined,
            };
        } else inbound.unsupported = type;
        out.push(inbound);
      }
    }
  }
  return out;
}

/** A Graph media id that is safe in a URL path and a file name. */
export const isMediaId = (id: string): boolean => /^[A-Za-z0-9._-]{1,128}$/.test(id);

type Payload = Record<string, unknown>;

const envelope = (to: string, type: string, block: unknown, replyTo?: string): Payload => ({
  messaging_product: "whatsapp",
  recipient_type: "individual",
  to,
  type,
  [type]: block,
  ...(replyTo ? { context: { message_id: replyTo } } : {}),
});

export const textPayload = (to: string, body: string, replyTo?: string): Payload =>
  envelope(to, "text", { body, preview_url: /https?:\/\//.test(body) }, replyTo);

/** A media message by uploaded id; captions on images, videos and documents only (Meta's rule). */
export function mediaPayload(
  to: string,
  type: "image" | "video" | "audio" | "document",
  mediaId: string,
  caption?: string,
  fileName?: string,
): Payload {
  const block: Record<string, string> = { id: mediaId };
  if (caption && type !== "audio") block["caption"] = caption.slice(0, 1024);
  if (fileName && type === "document") block["filename"] = fileName;
  return envelope(to, type, block);
}

const cut = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

/**
 * Buttons as an interactive message: up to three as reply buttons (titles ≤ 20 characters), more
 * as a list (up to ten rows, titles ≤ 24). The body holds at most 1024 characters, so a longer
 * text is cut there; callers put buttons only on short prompts.
 */
export function interactivePayload(to: string, body: string, rows: Button[][]): Payload {
  const buttons = rows.flat().slice(0, 10);
  const text = cut(body, 1024);
  if (buttons.length <= 3)
    return envelope(to, "interactive", {
      type: "button",
      body: { text },
      action: {
        buttons: buttons.map((b) => ({ type: "reply", reply: { id: b.data, title: cut(b.label, 20) } })),
      },
    });
  return envelope(to, "interactive", {
    type: "list",
    body: { text },
    action: {
      button: "Choose",
      sections: [{ title: "Options", rows: buttons.map((b) => ({ id: b.data, title: cut(b.label, 24) })) }],
    },
  });
}

/**
 * A template message (the only kind Meta delivers outside the 24-hour customer-service window).
 * With `bodyParam` the text goes in as the body's `{{1}}`; Meta refuses newlines, tabs and runs of
 * more than four spaces there, and more than 1024 characters, so they are folded.
 */
export function templatePayload(
  to: string,
  name: string,
  language: string,
  text: string | undefined,
): Payload {
  const param = text
    ?.replace(/\s*\n+\s*/g, " \u00b7 ")
    .replace(/\t/g, " ")
    .replace(/ {2,}/g, " ")
    .trim();
  return envelope(to, "template", {
    name,
    language: { code: language },
    ...(param
      ? { components: [{ type: "body", parameters: [{ type: "text", text: cut(param, 1024) }] }] }
      : {}),
  });
}

/** Marks a message read and shows "typing…" (Meta couples the two in one call). */
export const typingPayload = (messageId: string): Payload => ({
  messaging_product: "whatsapp",
  status: "read",
  message_id: messageId,
  typing_indicator: { type: "text" },
});

export interface GraphError {
  status: number;
  code?: number | undefined;
  message: string;
  /** Meta marks some failures transient (`is_transient`), safe to try again. */
  transient: boolean;
}

/** Graph's `{error: {message, code, is_transient, error_data: {details}}}` as one value. */
export function parseGraphError(status: number, body: unknown): GraphError {
  const err = rec(rec(body)["error"]);
  const details = str(rec(err["error_data"])["details"]);
  const message = [str(err["message"]), details].filter(Boolean).join(": ") || `HTTP ${status}`;
  const code = typeof err["code"] === "number" ? err["code"] : undefined;
  return {
    status,
    code,
    message,
    transient: err["is_transient"] === true || status === 429 || status >= 500,
  };
}

/**
 * Graph's "re-engagement" refusal: the user has not written in 24 hours, so only a template may
 * go out (code 131047; 470 in older API versions).
 */
export const isOutsideWindow = (e: GraphError): boolean => e.code === 131047 || e.code === 470;

/** Media kind of a file by content type, in the Cloud API's words. */
export function cloudMediaType(mime: string): "image" | "video" | "audio" | "document" {
  if (/^image\/(jpeg|png)$/.test(mime)) return "image";
  if (/^video\/(mp4|3gpp)$/.test(mime)) return "video";
  if (/^audio\/(aac|amr|mpeg|mp4|ogg)$/.test(mime)) return "audio";
  return "document";
}

/** Meta's upload limits by kind (images 5 MB, video and audio 16 MB, documents 100 MB). */
export const CLOUD_MEDIA_LIMITS: Readonly<Record<"image" | "video" | "audio" | "document", number>> = {
  image: 5 * 1024 * 1024,
  video: 16 * 1024 * 1024,
  audio: 16 * 1024 * 1024,
  document: 100 * 1024 * 1024,
};
