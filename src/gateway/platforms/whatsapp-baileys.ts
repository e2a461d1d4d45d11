/**
 * The slice of `baileys` (WhatsApp Web's multi-device protocol, a personal account linked as a
 * device) the personal-account adapter uses, as structural types, and its loader. baileys is an
 * optional dependency loaded on first connect; a test hands the adapter a fake of the same shape
 * (`makeWASocket`'s `ev` emitter, `sendMessage`, `sendPresenceUpdate`, `user`, `end`), since
 * WhatsApp's wire protocol (Noise handshake, Signal sessions) cannot be faked faithfully.
 */
import { chmod, mkdir, readdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { PlatformError } from "./types.js";

export interface WAKey {
  remoteJid?: string | null;
  fromMe?: boolean | null;
  id?: string | null;
  participant?: string | null;
}

export interface WAMessageLike {
  key: WAKey;
  message?: Record<string, unknown> | null;
  pushName?: string | null;
  messageTimestamp?: number | { toNumber(): number } | null;
}

export interface WAConnectionUpdate {
  connection?: "open" | "connecting" | "close";
  qr?: string;
  lastDisconnect?: { error?: unknown };
}

export interface WAEvents {
  on(event: "connection.update", listener: (update: WAConnectionUpdate) => void): void;
  on(event: "creds.update", listener: () => void): void;
  on(event: "messages.upsert", listener: (upsert: { messages: WAMessageLike[]; type: string }) => void): void;
  removeAllListeners(event?: string): void;
}

export interface WASocketLike {
  ev: WAEvents;
  user?: { id: string; lid?: string | undefined } | undefined;
  sendMessage(
    jid: string,
    content: Record<string, unknown>,
    options?: Record<string, unknown>,
  ): Promise<WAMessageLike | undefined>;
  sendPresenceUpdate(type: "composing" | "paused" | "available", jid?: string): Promise<void>;
  readMessages?(keys: WAKey[]): Promise<void>;
  requestPairingCode?(phoneNumber: string): Promise<string>;
  end(error?: Error): void;
}

export interface AuthStateLike {
  state: unknown;
  saveCreds: () => Promise<void>;
}

/** What the adapter takes from the baileys module. */
export interface BaileysLike {
  makeWASocket(config: Record<string, unknown>): WASocketLike;
  useMultiFileAuthState(folder: string): Promise<AuthStateLike>;
  downloadMediaMessage(
    message: WAMessageLike,
    type: "buffer",
    options: Record<string, unknown>,
  ): Promise<Buffer>;
}

/** WhatsApp's "logged out" close code: the linked device was removed; pairing again is needed. */
export const LOGGED_OUT = 401;

/** The status code of a close reason (a Boom error from baileys), when it has one. */
export function closeStatus(error: unknown): number | undefined {
  const output = (error as { output?: { statusCode?: unknown } } | undefined)?.output;
  return typeof output?.statusCode === "number" ? output.statusCode : undefined;
}

/**
 * Loads baileys (`importer` stands in for the package in a test); a `PlatformError` saying how to
 * install it when it is missing. baileys is an ES module: the CLI's CommonJS bundle requires it,
 * which Node 20 does from 20.19 on.
 */
export async function loadBaileys(
  // require(), not import(): the bundled CLI runs as a compiled function where import() has no
  // loader callback. Node 20.19+ requires an ES module such as baileys.
  importer: () => Promise<unknown> = async () => createRequire(import.meta.url)("baileys"),
): Promise<BaileysLike> {
  let mod: Record<string, unknown>;
  try {
    mod = (await importer()) as Record<string, unknown>;
  } catch (err) {
    throw new PlatformError(
      `WhatsApp personal accounts need the optional package baileys, which could not be loaded (${err instanceof Error ? err.message : String(err)}): install it with \`npm install -g baileys@7.0.0-rc14\` next to hermes (Node 20.19 or later), or use the Cloud API (WHATSAPP_CLOUD_*) instead`,
    );
  }
  const make = (mod["makeWASocket"] ?? mod["default"]) as BaileysLike["makeWASocket"] | undefined;
  if (typeof make !== "function") throw new PlatformError("the installed baileys has no makeWASocket");
  return {
    makeWASocket: make,
    useMultiFileAuthState: mod["useMultiFileAuthState"] as BaileysLike["useMultiFileAuthState"],
    downloadMediaMessage: mod["downloadMediaMessage"] as BaileysLike["downloadMediaMessage"],
  };
}

/** `<home>/whatsapp/session`: the linked device's keys, as upstream's bridge keeps them. */
export const whatsappSessionDir = (home: string): string => join(home, "whatsapp", "session");

/**
 * Opens the auth state in `dir` (0700), and keeps every file in it 0600 after each save: the keys
 * let anyone who reads them act as this WhatsApp account.
 */
export async function openAuthState(baileys: BaileysLike, dir: string): Promise<AuthStateLike> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const auth = await baileys.useMultiFileAuthState(dir);
  const tighten = async () => {
    for (const name of await readdir(dir).catch(() => [] as string[]))
      await chmod(join(dir, name), 0o600).catch(() => undefined);
  };
  await tighten();
  return {
    state: auth.state,
    saveCreds: async () => {
      await auth.saveCreds();
      await tighten();
    },
  };
}

/** `15551234567:12@s.whatsapp.net` → `15551234567` (device and server dropped). */
export const bareJid = (jid: string): string => (jid.split("@")[0] ?? jid).split(":")[0] ?? jid;

/** Status updates, broadcast lists and channels: never answered. */
export const isBroadcastJid = (jid: string): boolean => /@(broadcast|newsletter)$/.test(jid);

/** The text of a message (conversation, extended text, a caption), wrappers unwrapped. */
export function messageText(message: Record<string, unknown> | null | undefined): string {
  const m = unwrap(message);
  if (!m) return "";
  const get = (k: string, f: string) => {
    const v = (m[k] as Record<string, unknown> | undefined)?.[f];
    return typeof v === "string" ? v : "";
  };
  if (typeof m["conversation"] === "string") return m["conversation"];
  return (
    get("extendedTextMessage", "text") ||
    get("imageMessage", "caption") ||
    get("videoMessage", "caption") ||
    get("documentMessage", "caption") ||
    get("buttonsResponseMessage", "selectedDisplayText") ||
    get("listResponseMessage", "title")
  );
}

/** View-once, ephemeral and edited wrappers hold the real message one level down. */
export function unwrap(
  message: Record<string, unknown> | null | undefined,
): Record<string, unknown> | undefined {
  let m = message ?? undefined;
  for (let i = 0; m && i < 4; i++) {
    const inner = ["ephemeralMessage", "viewOnceMessage", "viewOnceMessageV2", "documentWithCaptionMessage"]
      .map((k) => (m?.[k] as { message?: Record<string, unknown> } | undefined)?.message)
      .find(Boolean);
    if (!inner) break;
    m = inner;
  }
  return m;
}

/** The media part of a message, when it has one. */
export function mediaOf(
  message: Record<string, unknown> | null | undefined,
):
  | { kind: "photo" | "voice" | "audio" | "video" | "document"; mimeType?: string; fileName?: string }
  | undefined {
  const m = unwrap(message);
  if (!m) return undefined;
  const part = (k: string) => m[k] as { mimetype?: string; fileName?: string; ptt?: boolean } | undefined;
  const pick = (k: string) => {
    const p = part(k);
    return {
      ...(p?.mimetype ? { mimeType: p.mimetype.split(";")[0]?.trim() ?? p.mimetype } : {}),
      ...(p?.fileName ? { fileName: p.fileName } : {}),
    };
  };
  if (part("imageMessage")) return { kind: "photo", ...pick("imageMessage") };
  if (part("stickerMessage")) return { kind: "photo", ...pick("stickerMessage") };
  if (part("audioMessage"))
    return { kind: part("audioMessage")?.ptt ? "voice" : "audio", ...pick("audioMessage") };
  if (part("videoMessage")) return { kind: "video", ...pick("videoMessage") };
  if (part("documentMessage")) return { kind: "document", ...pick("documentMessage") };
  return undefined;
}

/** Who the message mentions and whom it quotes (group mention gating). */
export function contextOf(message: Record<string, unknown> | null | undefined): {
  mentioned: string[];
  quotedFrom?: string;
} {
  const m = unwrap(message);
  for (const k of [
    "extendedTextMessage",
    "imageMessage",
    "videoMessage",
    "documentMessage",
    "audioMessage",
  ]) {
    const ctx = (m?.[k] as { contextInfo?: { mentionedJid?: unknown; participant?: unknown } } | undefined)
      ?.contextInfo;
    if (ctx) {
      const mentioned = Array.isArray(ctx.mentionedJid)
        ? ctx.mentionedJid.filter((j): j is string => typeof j === "string")
        : [];
      return { mentioned, ...(typeof ctx.participant === "string" ? { quotedFrom: ctx.participant } : {}) };
    }
  }
  return { mentioned: [] };
}
