/**
 * WhatsApp on a personal account over `baileys` (linked as a device, like WhatsApp Web). Pair once
 * with `hermes whatsapp`; the device keys live in `<home>/whatsapp/session` (0700, files 0600).
 *
 * Modes (`WHATSAPP_MODE`, upstream's): `self-chat` (default) talks to you in your own "Message
 * yourself" chat, replies marked with `WHATSAPP_REPLY_PREFIX` (default "☤ *Hermes Agent*" and a
 * rule) so they are told apart from what you typed; `bot` answers other people who write to the
 * account (a dedicated number): direct chats, and groups when mentioned if
 * `WHATSAPP_REQUIRE_MENTION` is true. Who may talk is the router's business
 * (`WHATSAPP_ALLOWED_USERS` holds phone numbers).
 *
 * A dropped connection is re-opened with backoff; messages that arrived meanwhile come in when it
 * is back (baileys delivers them as `append`), each message id taken once. A logged-out device
 * stops and says to pair again. Replies stream by editing the sent message. Connected with
 * `receive: false` (`hermes send`; a gateway instance standing by while another holds the
 * `whatsapp:linked-device` lease) it sends but hands nothing that arrives to the agent.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { envFlag } from "../../state/gateway/allowlist.js";
import { courtesy, firstDelivery, uploadSize } from "./adapter-kit.js";
import { errorText, extensionFor, mimeFor } from "./media-files.js";
import {
  type AdapterContext,
  type AdapterHandlers,
  type InboundMedia,
  type OutboundTarget,
  type PlatformAdapter,
  PlatformError,
} from "./types.js";
import {
  type BaileysLike,
  bareJid,
  closeStatus,
  contextOf,
  isBroadcastJid,
  LOGGED_OUT,
  loadBaileys,
  mediaOf,
  messageText,
  openAuthState,
  type WAMessageLike,
  type WASocketLike,
  whatsappSessionDir,
} from "./whatsapp-baileys.js";
import { markdownToWhatsApp, redactWaId } from "./whatsapp-format.js";

export const DEFAULT_REPLY_PREFIX =
  "\u2624 *Hermes Agent*\n\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\n";
const MAX_TEXT = 4096;
const SEEN_LIMIT = 5000;
const MAX_MEDIA = 64 * 1024 * 1024;
/** What a standby device keeps of what it saw, to hand over if it takes the lease: 2 min, 200 messages. */
const STANDBY_KEEP_MS = 120_000;
const STANDBY_KEEP_COUNT = 200;

export interface WhatsAppAdapterOptions {
  /** baileys or a fake of its shape (tests); default: the installed package, loaded on connect. */
  load?: () => Promise<BaileysLike>;
  /** Wait before re-opening after the n-th drop in a row (default 1 s doubling to 30 s). */
  reconnectDelayMs?: (attempt: number) => number;
  /** How long connect waits for the connection to open (default 30 s). */
  openTimeoutMs?: number;
}

export function createWhatsAppAdapter(
  ctx: AdapterContext,
  options: WhatsAppAdapterOptions = {},
): PlatformAdapter {
  const env = ctx.env;
  const mode = (env.WHATSAPP_MODE?.trim() || String(ctx.settings["mode"] ?? "") || "self-chat").toLowerCase();
  const selfChat = mode !== "bot";
  const prefix = selfChat
    ? (
        env.WHATSAPP_REPLY_PREFIX ??
        (typeof ctx.settings["reply_prefix"] === "string"
          ? ctx.settings["reply_prefix"]
          : DEFAULT_REPLY_PREFIX)
      ).replace(/\\n/g, "\n")
    : "";
  const requireMention = envFlag(env.WHATSAPP_REQUIRE_MENTION) || ctx.settings["require_mention"] === true;
  const sessionDir = whatsappSessionDir(ctx.home);
  const reconnectDelay = options.reconnectDelayMs ?? ((n: number) => Math.min(30_000, 1000 * 2 ** (n - 1)));

  let handlers: AdapterHandlers | undefined;
  /** False while connected send-only (`hermes send`, or a standby instance under another's lease). */
  let receiving = true;
  /**
   * Several instances (`ctx.deliveries`): what this device saw while standing by, so that when it
   * takes the lease over it answers what arrived after the last holder stopped; what the last
   * holder already took is claimed in the shared table and skipped.
   */
  const standby: Array<{ at: number; m: WAMessageLike }> = [];
  let baileys: BaileysLike | undefined;
  let sock: WASocketLike | undefined;
  let stopping = false;
  let drops = 0;
  let connectedSince = 0;
  let reconnectTimer: NodeJS.Timeout | undefined;
  const seen = new Set<string>();
  /** Ids of messages this adapter sent: in self-chat mode they come back as `fromMe` messages. */
  const sent = new Set<string>();
  const chains = new Map<string, Promise<void>>();

  const report = (message: string): void => {
    try {
      handlers?.onError(message);
    } catch {
      // never let the error handler break the event loop of the socket
    }
  };
  const remember = (set: Set<string>, id: string) => {
    set.add(id);
    if (set.size > SEEN_LIMIT) set.delete(set.values().next().value as string);
  };
  const ownJids = (): string[] => {
    const u = sock?.user;
    return u ? [u.id, u.lid ?? ""].filter(Boolean).map(bareJid) : [];
  };

  async function download(
    m: WAMessageLike,
    kind: InboundMedia["kind"],
    mimeType?: string,
    fileName?: string,
  ): Promise<InboundMedia> {
    if (!baileys) throw new Error("not connected");
    const bytes = await baileys.downloadMediaMessage(m, "buffer", {});
    const limit = Math.min(ctx.maxInboundMediaBytes, MAX_MEDIA * 4);
    if (bytes.length > limit) throw new Error(`it is ${bytes.length} bytes, over the ${limit}-byte limit`);
    await mkdir(ctx.mediaDir, { recursive: true });
    const path = join(
      ctx.mediaDir,
      `whatsapp-${kind}-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}${extensionFor(mimeType)}`,
    );
    await writeFile(path, bytes, { mode: 0o600 });
    return { kind, path, ...(mimeType ? { mimeType } : {}), ...(fileName ? { fileName } : {}) };
  }

  function accept(m: WAMessageLike): void {
    // Send-only: what arrives is the lease holder's (or nobody's, for `hermes send`) to answer.
    if (!receiving) {
      if (ctx.deliveries) {
        standby.push({ at: Date.now(), m });
        if (standby.length > STANDBY_KEEP_COUNT) standby.shift();
      }
      return;
    }
    const id = m.key.id ?? "";
    const chat = m.key.remoteJid ?? "";
    if (!id || !chat || seen.has(id) || isBroadcastJid(chat)) return;
    remember(seen, id);
    if (sent.has(id)) return;
    const mine = ownJids();
    const isGroup = chat.endsWith("@g.us");
    const text = messageText(m.message);
    if (selfChat) {
      // Only what you type in your own chat; never our replies (they carry the prefix).
      if (!m.key.fromMe || isGroup || !mine.includes(bareJid(chat))) return;
      if (prefix && text.startsWith(prefix.trim().split("\n")[0] ?? prefix)) return;
    } else if (m.key.fromMe) return;
    const sender = isGroup ? (m.key.participant ?? "") : chat;
    let mentioned = false;
    if (isGroup) {
      const c = contextOf(m.message);
      mentioned =
        c.mentioned.some((j) => mine.includes(bareJid(j))) ||
        (c.quotedFrom !== undefined && mine.includes(bareJid(c.quotedFrom)));
      if (requireMention && !mentioned && !text.trim().startsWith("/")) return;
    }
    const media = mediaOf(m.message);
    if (!text.trim() && !media) return;
    const source = {
      platform: "whatsapp",
      chatType: isGroup ? ("group" as const) : ("dm" as const),
      chatId: chat,
      userId: bareJid(sender),
      ...(m.pushName ? { userName: m.pushName, chatName: isGroup ? undefined : m.pushName } : {}),
    };
    const next = (chains.get(chat) ?? Promise.resolve())
      .then(async () => {
        // Another instance's device (same account) may have taken it while holding the lease.
        if (!(await firstDelivery(ctx, "whatsapp", id))) return;
        const files: InboundMedia[] = [];
        let note = "";
        if (media) {
          try {
            files.push(
              await download(
                m,
                media.kind === "audio" ? "audio" : media.kind,
                media.mimeType,
                media.fileName,
              ),
            );
          } catch (err) {
            report(`could not download a ${media.kind} from ${redactWaId(sender)}: ${errorText(err)}`);
            note = `[a ${media.kind} could not be downloaded: ${errorText(err)}]`;
          }
        }
        handlers?.onMessage({
          source,
          text: [text.trim(), note].filter(Boolean).join("\n\n"),
          messageId: id,
          ...(files.length > 0 ? { media: files } : {}),
          ...(isGroup ? { mentioned } : {}),
        });
        if (!selfChat) await sock?.readMessages?.([m.key]).catch(() => undefined);
      })
      .catch((err: unknown) => report(`WhatsApp message handling failed: ${errorText(err)}`))
      .finally(() => {
        if (chains.get(chat) === next) chains.delete(chat);
      });
    chains.set(chat, next);
  }

  /** Opens a socket; resolves when it is open, rejects when it closes first or is logged out. */
  async function open(): Promise<void> {
    if (!baileys) throw new PlatformError("baileys is not loaded");
    const auth = await openAuthState(baileys, sessionDir);
    const creds = (auth.state as { creds?: { me?: unknown } } | undefined)?.creds;
    if (!creds?.me) {
      throw new PlatformError(
        `WhatsApp is not paired yet (no linked device in ${sessionDir}): run \`hermes whatsapp\` and scan the QR code, or link by phone number`,
      );
    }
    const s = baileys.makeWASocket({
      auth: auth.state,
      markOnlineOnConnect: false,
      syncFullHistory: false,
      printQRInTerminal: false,
      logger: silentLogger(),
    });
    sock = s;
    s.ev.on(
      "creds.update",
      () =>
        void auth
          .saveCreds()
          .catch((err: unknown) => report(`could not save the WhatsApp keys: ${errorText(err)}`)),
    );
    s.ev.on("messages.upsert", ({ messages, type }) => {
      for (const m of messages) {
        // History sync replays old chats as `append`; only what arrived while we were away counts.
        const at =
          Number(
            typeof m.messageTimestamp === "object" && m.messageTimestamp
              ? m.messageTimestamp.toNumber()
              : (m.messageTimestamp ?? 0),
          ) * 1000;
        if (type === "notify" || (type === "append" && at >= connectedSince - 1000)) accept(m);
      }
    });
    await new Promise<void>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => {
        if (!settled) {
          settled = true;
          reject(
            new PlatformError(
              `WhatsApp did not connect within ${Math.round((options.openTimeoutMs ?? 30_000) / 1000)} s`,
            ),
          );
        }
      }, options.openTimeoutMs ?? 30_000);
      timer.unref?.();
      s.ev.on("connection.update", (u) => {
        if (u.qr && !settled) {
          settled = true;
          clearTimeout(timer);
          reject(
            new PlatformError("WhatsApp asks to pair this device again: run `hermes whatsapp` to link it"),
          );
          return;
        }
        if (u.connection === "open") {
          drops = 0;
          if (!connectedSince) connectedSince = Date.now();
          if (!settled) {
            settled = true;
            clearTimeout(timer);
            resolve();
          }
          return;
        }
        if (u.connection !== "close" || sock !== s) return;
        const status = closeStatus(u.lastDisconnect?.error);
        sock = undefined;
        s.ev.removeAllListeners();
        if (status === LOGGED_OUT) {
          const error = new PlatformError(
            "WhatsApp logged this device out (removed under Linked devices): run `hermes whatsapp` to pair again",
          );
          if (!settled) {
            settled = true;
            clearTimeout(timer);
            reject(error);
          } else report(error.message);
          return;
        }
        if (!settled) {
          settled = true;
          clearTimeout(timer);
          reject(
            new PlatformError(
              `WhatsApp closed the connection while opening (${status ?? errorText(u.lastDisconnect?.error)})`,
            ),
          );
          return;
        }
        scheduleReconnect(`connection closed (${status ?? errorText(u.lastDisconnect?.error)})`);
      });
    });
  }

  function scheduleReconnect(why: string): void {
    if (stopping) return;
    drops++;
    const wait = reconnectDelay(drops);
    report(`${why}; reconnecting in ${(wait / 1000).toFixed(1)} s`);
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      if (stopping) return;
      open().catch((err: unknown) => {
        if (err instanceof PlatformError && /pair/.test(err.message)) report(err.message);
        else scheduleReconnect(`reconnect failed: ${errorText(err)}`);
      });
    }, wait);
  }

  function socket(): WASocketLike {
    if (!sock)
      throw new PlatformError("WhatsApp is not connected right now (reconnecting); try again shortly");
    return sock;
  }

  async function sendText(jid: string, text: string, quoted?: string): Promise<string> {
    const res = await socket().sendMessage(
      jid,
      { text },
      quoted ? { quoted: { key: { remoteJid: jid, id: quoted, fromMe: false }, message: {} } } : undefined,
    );
    const id = res?.key.id ?? "";
    if (id) remember(sent, id);
    return id;
  }

  const adapter: PlatformAdapter = {
    platform: "whatsapp",
    capabilities: {
      maxMessageLength: MAX_TEXT - prefix.length,
      edit: true,
      buttons: false,
      typing: true,
      media: true,
      maxMediaBytes: MAX_MEDIA,
    },

    async connect(h, connectOptions) {
      if (handlers) return;
      handlers = h;
      receiving = connectOptions?.receive !== false;
      stopping = false;
      try {
        baileys = await (options.load ?? loadBaileys)();
        await open();
      } catch (err) {
        handlers = undefined;
        throw err;
      }
      if (receiving) {
        // Taking the lease over: what arrived lately while standing by, each once across instances.
        const since = Date.now() - STANDBY_KEEP_MS;
        for (const { at, m } of standby.splice(0)) if (at >= since) accept(m);
      }
    },

    async disconnect() {
      stopping = true;
      if (reconnectTimer) clearTimeout(reconnectTimer);
      const s = sock;
      sock = undefined;
      s?.ev.removeAllListeners();
      s?.end(undefined);
      await Promise.allSettled([...chains.values()]);
      handlers = undefined;
    },

    async send(target: OutboundTarget, text, sendOptions = {}) {
      const body = sendOptions.plain ? text.trim() : markdownToWhatsApp(text);
      if (!body) throw new PlatformError("cannot send an empty WhatsApp message");
      let last = "";
      for (let i = 0; i < body.length; i += MAX_TEXT - prefix.length) {
        last = await sendText(
          target.chatId,
          prefix + body.slice(i, i + MAX_TEXT - prefix.length),
          i === 0 ? target.replyTo : undefined,
        );
      }
      return { messageId: last };
    },

    async edit(target, messageId, text, sendOptions = {}) {
      const body = sendOptions.plain ? text.trim() : markdownToWhatsApp(text);
      await socket().sendMessage(target.chatId, {
        text: prefix + body.slice(0, MAX_TEXT - prefix.length),
        edit: { remoteJid: target.chatId, fromMe: true, id: messageId },
      });
    },

    async typing(target) {
      await courtesy(async () => sock?.sendPresenceUpdate("composing", target.chatId));
    },

    async sendMedia(target, media) {
      const name = basename(media.path);
      await uploadSize(media.path, {
        to: "to WhatsApp",
        maxBytes: MAX_MEDIA,
        limit: `WhatsApp takes 1 byte to ${MAX_MEDIA} bytes here`,
        emptyIsOutOfRange: true,
      });
      const bytes = await readFile(media.path);
      const mimetype = mimeFor(name);
      const caption = media.caption?.trim() ? prefix + markdownToWhatsApp(media.caption) : undefined;
      const content: Record<string, unknown> =
        media.kind === "photo" && mimetype.startsWith("image/")
          ? { image: bytes, mimetype, ...(caption ? { caption } : {}) }
          : media.kind === "video" && mimetype.startsWith("video/")
            ? { video: bytes, mimetype, ...(caption ? { caption } : {}) }
            : (media.kind === "voice" || media.kind === "audio") && mimetype.startsWith("audio/")
              ? // A voice note (ptt) plays in WhatsApp's voice bubble only when labelled Opus.
                { audio: bytes, mimetype: voiceMime(media.kind, mimetype), ptt: media.kind === "voice" }
              : { document: bytes, mimetype, fileName: name, ...(caption ? { caption } : {}) };
      const res = await socket().sendMessage(target.chatId, content);
      const id = res?.key.id ?? "";
      if (id) remember(sent, id);
      return { messageId: id };
    },
  };
  return adapter;
}

/** The content type WhatsApp wants for a voice note in Ogg (Opus, as the speech engine writes it). */
function voiceMime(kind: string, mimetype: string): string {
  return kind === "voice" && mimetype === "audio/ogg" ? "audio/ogg; codecs=opus" : mimetype;
}

/** baileys logs through pino by default; the gateway reports what matters itself. */
function silentLogger(): Record<string, unknown> {
  const noop = () => undefined;
  const logger: Record<string, unknown> = {
    level: "silent",
    trace: noop,
    debug: noop,
    info: noop,
    warn: noop,
    error: noop,
    fatal: noop,
  };
  logger["child"] = () => logger;
  return logger;
}
