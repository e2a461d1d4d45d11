/**
 * Email as a chat platform: new mail in one mailbox arrives over IMAP IDLE (`imapflow`), answers
 * go out over SMTP (`nodemailer`), both with the agent's own account (upstream's `EMAIL_*`
 * variables). Each sender is one DM chat (chat id = the sender's address, as upstream keys it);
 * replies stay in the sender's thread (Re: subject, In-Reply-To, References).
 *
 * Receiving: at start the mailbox's existing mail is left alone (upstream skips it); from then on
 * every message with a UID above the last one handled is fetched once, marked \Seen and passed on.
 * The UID high-water mark survives a dropped connection, so a reconnect (with backoff) fetches
 * what arrived meanwhile, and nothing twice. Automated mail, bounces, lists and our own messages
 * are dropped before the router sees them (`email-message.ts`), so no reply loop can start.
 *
 * The libraries are loaded on first connect, not at import.
 */
import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { basename, join } from "node:path";
import type { ImapFlow } from "imapflow";
import type { ParsedMail } from "mailparser";
import type { Transporter } from "nodemailer";
import { type EmailConfig, readEmailConfig } from "./email-config.js";
import { emailBodies, htmlToText } from "./email-format.js";
import {
  type HeaderMap,
  inboundText,
  messageIds,
  safeAttachmentName,
  skipReason,
  stripQuotedReply,
  type ThreadContext,
  threadHeaders,
} from "./email-message.js";
import { FeedDelivery } from "./feed-delivery.js";
import {
  type AdapterContext,
  type AdapterHandlers,
  type ConnectOptions,
  type DeliveryReceipt,
  type FeedLedger,
  type InboundMedia,
  type MediaKind,
  type OutboundMedia,
  type OutboundTarget,
  type PlatformAdapter,
  PlatformError,
  type ReclaimedUpdate,
  type SentMessage,
} from "./types.js";

const load = createRequire(import.meta.url);

/** Upstream's Gmail-safe body size. */
const MAX_BODY = 50_000;
/** Outbound attachments; most providers refuse mail over 25 MB once base64 grows it. */
const MAX_ATTACHMENT = 18 * 1024 * 1024;
/** Reconnect delays after a dropped IMAP connection (the last one repeats). */
const BACKOFF_MS = [500, 1_000, 2_000, 5_000, 10_000, 30_000];
/** Threads remembered for replies; the oldest are forgotten beyond this. */
const MAX_THREADS = 500;
/**
 * A shared feed id is `epoch * UID_SPAN + uid`: UIDs are 32-bit, and the epoch (the low 21 bits of
 * UIDVALIDITY) keeps ids of a renumbered mailbox apart while staying a safe integer.
 */
const UID_SPAN = 2 ** 32;
const feedEpoch = (validity: bigint): number => Number(validity % 2_097_152n);

function headerMap(parsed: ParsedMail): HeaderMap {
  const out = new Map<string, string>();
  for (const line of parsed.headerLines ?? []) {
    const name = line.key.toLowerCase();
    if (out.has(name)) continue;
    const colon = line.line.indexOf(":");
    out.set(
      name,
      line.line
        .slice(colon + 1)
        .replace(/\r?\n[ \t]+/g, " ")
        .trim(),
    );
  }
  return out;
}

function mediaKind(contentType: string): MediaKind {
  if (contentType.startsWith("image/")) return "photo";
  if (contentType.startsWith("audio/")) return "audio";
  if (contentType.startsWith("video/")) return "video";
  return "document";
}

export interface EmailAdapterOptions {
  /** Reconnect delays in ms (tests shorten them). */
  backoffMs?: readonly number[];
}

export function createEmailAdapter(ctx: AdapterContext, options: EmailAdapterOptions = {}): PlatformAdapter {
  return new EmailAdapter(ctx, options);
}

class EmailAdapter implements PlatformAdapter {
  readonly platform = "email";
  readonly capabilities = {
    maxMessageLength: MAX_BODY,
    edit: false,
    buttons: false,
    typing: false,
    media: true,
    maxMediaBytes: MAX_ATTACHMENT,
  };

  private config: EmailConfig | undefined;
  private handlers: AdapterHandlers | undefined;
  private transport: Transporter | undefined;
  private imap: ImapFlow | undefined;
  private closing = false;
  /** Set once the first connect succeeded: only then does a dropped connection reconnect. */
  private receiving = false;
  private lastUid = 0;
  /** Shared with the other instances of a gateway: the mailbox's position and the UIDs taken. */
  private feed: FeedLedger | undefined;
  /** The feed's at-least-once half: receipts, and mail a dead instance took and never finished. */
  private delivery = new FeedDelivery(undefined, () => undefined);
  private reclaiming: AbortController | undefined;
  private uidValidity: bigint | undefined;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> = Promise.resolve();
  private syncQueued = false;
  /** Message-IDs already handed on: a second copy (resent, or redelivered after UIDVALIDITY changed) is dropped. */
  private readonly seenIds = new Set<string>();
  private readonly threads = new Map<string, ThreadContext>();

  constructor(
    private readonly ctx: AdapterContext,
    private readonly options: EmailAdapterOptions,
  ) {}

  private get cfg(): EmailConfig {
    if (!this.config) throw new PlatformError("email: not connected");
    return this.config;
  }

  async connect(handlers: AdapterHandlers, options: ConnectOptions = {}): Promise<void> {
    this.config = readEmailConfig(this.ctx.env, this.ctx.settings);
    this.handlers = handlers;
    this.closing = false;
    const nodemailer = load("nodemailer") as typeof import("nodemailer");
    const { smtp } = this.config;
    this.transport = nodemailer.createTransport({
      host: smtp.host,
      port: smtp.port,
      secure: smtp.security === "tls",
      requireTLS: smtp.security === "starttls",
      ignoreTLS: smtp.security === "plain",
      auth: { user: this.config.address, pass: this.config.password },
      tls: { rejectUnauthorized: this.config.verifyTls },
      connectionTimeout: 30_000,
      greetingTimeout: 30_000,
      socketTimeout: 60_000,
    });
    try {
      await this.transport.verify();
    } catch (error) {
      throw new PlatformError(
        `email: SMTP ${smtp.host}:${smtp.port} (${smtp.security}) refused ${this.config.address}: ${describe(error)}. ` +
          "Check EMAIL_SMTP_HOST, EMAIL_SMTP_PORT, EMAIL_SMTP_SECURITY and EMAIL_PASSWORD.",
      );
    }
    if (options.receive === false) return;
    this.feed = options.feed;
    try {
      await this.openMailbox(true);
    } catch (error) {
      this.transport.close();
      const { imap } = this.config;
      throw new PlatformError(
        `email: IMAP ${imap.host}:${imap.port} (${imap.security}) refused ${this.config.address}: ${describe(error)}. ` +
          "Check EMAIL_IMAP_HOST, EMAIL_IMAP_PORT, EMAIL_IMAP_SECURITY and EMAIL_PASSWORD.",
      );
    }
    this.pollTimer = setInterval(() => this.requestSync(), this.config.pollIntervalSeconds * 1000);
    this.pollTimer.unref?.();
    this.delivery = new FeedDelivery(this.feed, (line) => this.handlers?.onError(`email: ${line}`));
    if (this.delivery.tracking) {
      this.reclaiming = new AbortController();
      const signal = this.reclaiming.signal;
      void this.delivery
        .reclaimNow(signal, (r) => this.redeliver(r))
        .then(() => this.delivery.reclaiming(signal, (r) => this.redeliver(r)));
    }
  }

  /** Mail a dead instance took and never finished: fetched again by UID, in the sync queue's turn. */
  private redeliver(update: ReclaimedUpdate): Promise<void> {
    const kept = update.payload as { uid?: unknown; validity?: unknown } | null;
    const receipt = this.delivery.receipt(update.id, update);
    const run = this.syncing.then(async () => {
      const client = this.imap;
      const uid = Number(kept?.uid);
      if (!client?.usable || this.uidValidity === undefined) return this.delivery.release([update.id]);
      if (String(kept?.validity) !== String(this.uidValidity) || !Number.isSafeInteger(uid)) {
        // The mailbox was renumbered since: that UID names another message now, or none.
        this.handlers?.onError(
          `email: a message taken before ${this.cfg.mailbox} was renumbered is not fetched again`,
        );
        return receipt?.done();
      }
      const message = await client.fetchOne(String(uid), { uid: true, source: true }, { uid: true });
      if (message === false || !message.source) return receipt?.done();
      await this.dispatch(uid, message.source, receipt);
      // A fetch ended IDLE: wait for pushes again, as after a sync.
      if (this.imap && !this.syncQueued) this.idle(this.imap);
    });
    this.syncing = run.catch((error: unknown) => {
      this.delivery.release([update.id]);
      this.handlers?.onError(`email: could not fetch a message again: ${describe(error)}`);
    });
    return this.syncing;
  }

  /** Logs in, opens the mailbox and starts IDLE. On the first open, existing mail is skipped. */
  private async openMailbox(first: boolean): Promise<void> {
    const cfg = this.cfg;
    const { ImapFlow: ImapFlowClass } = load("imapflow") as typeof import("imapflow");
    const client = new ImapFlowClass({
      host: cfg.imap.host,
      port: cfg.imap.port,
      secure: cfg.imap.security === "tls",
      doSTARTTLS: cfg.imap.security === "starttls" ? true : cfg.imap.security === "plain" ? false : undefined,
      auth: { user: cfg.address, pass: cfg.password },
      tls: { rejectUnauthorized: cfg.verifyTls },
      logger: false,
      // Restart IDLE regularly: some servers and NAT boxes drop a connection silent for 30 min.
      maxIdleTime: 5 * 60_000,
      // imapflow's own IDLE starts 15 s after the last command, so mail arriving in that window
      // would wait; `idle()` is entered right after every sync instead.
      disableAutoIdle: true,
      connectionTimeout: 30_000,
      greetingTimeout: 30_000,
    });
    // An 'error' without a listener would crash the gateway; 'close' drives the reconnect.
    client.on("error", (error: unknown) => this.handlers?.onError(`email: IMAP error: ${describe(error)}`));
    client.on("close", () => this.onClose(client));
    client.on("exists", () => this.requestSync());
    await client.connect();
    const box = await client.mailboxOpen(cfg.mailbox);
    const validity = typeof box.uidValidity === "bigint" ? box.uidValidity : BigInt(box.uidValidity ?? 0);
    let resumed = false;
    if (first || this.uidValidity !== validity) {
      if (!first)
        this.handlers?.onError(
          `email: ${cfg.mailbox} was renumbered (UIDVALIDITY changed); only new mail from now on`,
        );
      this.lastUid = Math.max(0, Number(box.uidNext ?? 1) - 1);
      this.uidValidity = validity;
      // Taking the mailbox over from another instance: resume after the last UID any instance
      // took in this UIDVALIDITY, so mail that came while none held it is not skipped.
      const kept = first && this.feed ? await this.feed.resumeAt() : undefined;
      if (kept !== undefined && Math.floor(kept / UID_SPAN) === feedEpoch(validity)) {
        this.lastUid = Math.min(this.lastUid, Math.max(0, (kept % UID_SPAN) - 1));
        resumed = true;
      }
    }
    this.imap = client;
    this.attempt = 0;
    this.receiving = true;
    // Whatever arrived while we were away (or between SELECT and now); IDLE follows the sync.
    if (first && !resumed) this.idle(client);
    else this.requestSync();
  }

  /** Waits for pushes; any later command (a sync) ends IDLE first, and the sync re-enters it. */
  private idle(client: ImapFlow): void {
    if (this.closing || this.imap !== client || !client.usable || client.idling) return;
    client.idle().catch(() => {
      // A broken IDLE surfaces as 'close', which reconnects.
    });
  }

  private onClose(client: ImapFlow): void {
    if (this.imap === client) this.imap = undefined;
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closing || !this.receiving || this.imap || this.reconnectTimer) return;
    const delays = this.options.backoffMs ?? BACKOFF_MS;
    const delay = delays[Math.min(this.attempt, delays.length - 1)] ?? 30_000;
    this.attempt++;
    if (this.attempt === 1) this.handlers?.onError("email: IMAP connection lost; reconnecting");
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.closing) return;
      this.openMailbox(false).catch((error: unknown) => {
        if (this.attempt === 1 || this.attempt % 10 === 0) {
          this.handlers?.onError(`email: reconnect failed (attempt ${this.attempt}): ${describe(error)}`);
        }
        // A failed connect may or may not emit 'close'; schedule the next try either way.
        this.scheduleReconnect();
      });
    }, delay);
  }

  /** Runs one sync at a time; a request during a sync queues exactly one more. */
  private requestSync(): void {
    if (this.closing || !this.imap) return;
    if (this.syncQueued) return;
    this.syncQueued = true;
    this.syncing = this.syncing.then(async () => {
      this.syncQueued = false;
      try {
        await this.sync();
      } catch (error) {
        if (!this.closing) this.handlers?.onError(`email: fetching new mail failed: ${describe(error)}`);
      }
      if (this.imap && !this.syncQueued) this.idle(this.imap);
    });
  }

  private async sync(): Promise<void> {
    const client = this.imap;
    if (!client?.usable) return;
    // `n:*` always includes the newest message, even below n; the filter below drops it.
    const uids = ((await client.search({ uid: `${this.lastUid + 1}:*` }, { uid: true })) || [])
      .filter((uid) => uid > this.lastUid)
      .sort((a, b) => a - b);
    for (const uid of uids) {
      if (this.closing || this.imap !== client) return;
      const message = await client.fetchOne(String(uid), { uid: true, source: true }, { uid: true });
      if (message === false || !message.source) continue;
      await client.messageFlagsAdd(String(uid), ["\\Seen"], { uid: true });
      if (this.feed && this.uidValidity !== undefined) {
        // Across instances: handed on by exactly one of them (a rejection ends this sync; retried).
        const id = feedEpoch(this.uidValidity) * UID_SPAN + uid;
        // With what it takes to fetch it again if this instance dies before the router is done.
        const kept = { uid, validity: String(this.uidValidity) };
        const fresh = await this.feed.take(
          [id],
          id + 1,
          this.delivery.tracking ? new Map([[id, kept]]) : undefined,
        );
        this.lastUid = uid;
        if (fresh.length === 0) continue;
        await this.dispatch(uid, message.source, this.delivery.receipt(id));
        continue;
      }
      // Advance only after the message is in hand: a drop before this refetches it, never skips it.
      this.lastUid = uid;
      await this.dispatch(uid, message.source);
    }
  }

  /** Parses and hands on one message; `receipt` is done at once when nothing is handed on. */
  private async dispatch(uid: number, source: Buffer, receipt?: DeliveryReceipt): Promise<void> {
    let handed = false;
    try {
      handed = await this.handOn(uid, source, receipt);
    } finally {
      if (!handed) void receipt?.done();
    }
  }

  private async handOn(uid: number, source: Buffer, receipt: DeliveryReceipt | undefined): Promise<boolean> {
    const cfg = this.cfg;
    const { simpleParser } = load("mailparser") as typeof import("mailparser");
    let parsed: ParsedMail;
    try {
      parsed = await simpleParser(source, { skipImageLinks: true, skipTextToHtml: true });
    } catch (error) {
      this.handlers?.onError(`email: could not parse message UID ${uid}: ${describe(error)}`);
      return false;
    }
    const sender = parsed.from?.value[0];
    const from = (sender?.address ?? "").trim().toLowerCase();
    const headers = headerMap(parsed);
    const messageId = parsed.messageId ? messageIds(parsed.messageId)[0] : undefined;
    const reason = skipReason({
      from,
      self: cfg.address,
      headers,
      contentType: headers.get("content-type"),
      messageId,
    });
    if (reason) {
      this.handlers?.onError(`email: ignored a message from ${from || "(no sender)"}: ${reason}`);
      return false;
    }
    if (messageId) {
      if (this.seenIds.has(messageId) && !receipt?.redelivered) return false;
      this.seenIds.add(messageId);
      if (this.seenIds.size > 2_000) this.seenIds.delete(this.seenIds.values().next().value as string);
    }
    const media = cfg.skipAttachments ? [] : await this.saveAttachments(uid, parsed);
    const subject = parsed.subject ?? "";
    const html = typeof parsed.html === "string" ? parsed.html : "";
    const body = (parsed.text ?? "").trim() || (html ? htmlToText(html) : "");
    const text = inboundText(subject, body ? stripQuotedReply(body) : "", media.length > 0);
    this.remember(from, {
      subject: subject || "Hermes Agent",
      messageId,
      references: messageIds(parsed.references ?? parsed.inReplyTo),
    });
    this.handlers?.onMessage({
      source: {
        platform: "email",
        chatType: "dm",
        chatId: from,
        chatName: sender?.name || from,
        userId: from,
        userName: sender?.name || from,
      },
      text,
      messageId,
      ...(media.length > 0 ? { media } : {}),
      ...(receipt ? { receipt } : {}),
    });
    return true;
  }

  private remember(address: string, thread: ThreadContext): void {
    this.threads.delete(address);
    this.threads.set(address, thread);
    if (this.threads.size > MAX_THREADS) this.threads.delete(this.threads.keys().next().value as string);
  }

  private async saveAttachments(uid: number, parsed: ParsedMail): Promise<InboundMedia[]> {
    const out: InboundMedia[] = [];
    let made = false;
    for (const [i, att] of (parsed.attachments ?? []).entries()) {
      if (att.related && att.contentType.startsWith("image/") && att.contentDisposition !== "attachment") {
        // Inline images of an HTML signature or layout are decoration, not the user's files.
        continue;
      }
      if (att.size > this.ctx.maxInboundMediaBytes) {
        this.handlers?.onError(
          `email: skipped attachment ${att.filename ?? i} (${att.size} bytes, over gateway.max_inbound_media_bytes)`,
        );
        continue;
      }
      if (!made) {
        await mkdir(this.ctx.mediaDir, { recursive: true });
        made = true;
      }
      const name = safeAttachmentName(att.filename, `attachment-${i + 1}`);
      const path = join(this.ctx.mediaDir, `email-${uid}-${randomBytes(3).toString("hex")}-${name}`);
      await writeFile(path, att.content, { mode: 0o600 });
      out.push({
        kind: mediaKind(att.contentType),
        path,
        mimeType: att.contentType,
        fileName: att.filename ?? name,
      });
    }
    return out;
  }

  async disconnect(): Promise<void> {
    this.closing = true;
    this.receiving = false;
    this.reclaiming?.abort();
    this.reclaiming = undefined;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.reconnectTimer = undefined;
    this.pollTimer = undefined;
    const client = this.imap;
    this.imap = undefined;
    if (client) await client.logout().catch(() => client.close());
    this.transport?.close();
  }

  private newMessageId(): string {
    const domain = this.cfg.address.split("@")[1] ?? "localhost";
    return `<hermes-${randomBytes(8).toString("hex")}@${domain}>`;
  }

  private async deliver(
    to: string,
    text: string,
    attachments: { filename: string; path: string }[] = [],
  ): Promise<SentMessage> {
    const transport = this.transport;
    if (!transport) throw new PlatformError("email: not connected");
    const address = to.trim();
    if (!/^[^\s@,;<>]+@[^\s@,;<>]+$/.test(address)) {
      throw new PlatformError(`email: "${to}" is not a single email address`);
    }
    const thread = threadHeaders(this.threads.get(address.toLowerCase()));
    const messageId = this.newMessageId();
    const bodies = emailBodies(text);
    try {
      await transport.sendMail({
        from: this.cfg.address,
        to: address,
        subject: thread.subject,
        messageId,
        ...(thread.inReplyTo ? { inReplyTo: thread.inReplyTo } : {}),
        ...(thread.references ? { references: thread.references } : {}),
        // RFC 3834: marks the answer as machine-made, so other responders do not answer it back.
        headers: { "Auto-Submitted": "auto-replied", "X-Auto-Response-Suppress": "All" },
        text: bodies.text,
        html: bodies.html,
        attachments,
      });
    } catch (error) {
      throw new PlatformError(`email: sending to ${address} failed: ${describe(error)}`);
    }
    return { messageId };
  }

  send(target: OutboundTarget, text: string): Promise<SentMessage> {
    return this.deliver(target.chatId, text);
  }

  async edit(): Promise<void> {
    throw new PlatformError("email: a sent message cannot be edited");
  }

  async typing(): Promise<void> {
    // Email has no typing indicator.
  }

  sendMedia(target: OutboundTarget, media: OutboundMedia): Promise<SentMessage> {
    return this.deliver(target.chatId, media.caption ?? "", [
      { filename: basename(media.path), path: media.path },
    ]);
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const extra =
      (error as { responseText?: string; response?: string }).responseText ??
      (error as { response?: string }).response;
    return extra && !error.message.includes(extra) ? `${error.message} (${extra})` : error.message;
  }
  return String(error);
}
