/**
 * WhatsApp over Meta's Cloud API (the WhatsApp Business Platform): replies go out through the Graph
 * API, messages come in as webhooks Meta POSTs to a listener this adapter runs
 * (`WHATSAPP_CLOUD_WEBHOOK_HOST`:`WHATSAPP_CLOUD_WEBHOOK_PORT` + `WHATSAPP_CLOUD_WEBHOOK_PATH`,
 * loopback:8090/whatsapp/webhook by default; put it behind your HTTPS proxy or tunnel).
 *
 * Meta first subscribes the URL with a GET handshake answered only for `WHATSAPP_CLOUD_VERIFY_TOKEN`.
 * Every POST must carry `X-Hub-Signature-256` over the raw body keyed with the app secret
 * (`WHATSAPP_CLOUD_APP_SECRET`); without a secret, or with a wrong signature, the request is
 * refused before any field is read. Meta re-delivers webhooks it thinks failed: a message id
 * already taken is acknowledged and dropped.
 *
 * The 24-hour rule: Meta delivers free-form messages only within 24 hours of the user's last
 * message. Outside it (known from the clock, or from Graph's re-engagement refusal) a reply goes as
 * the approved template `WHATSAPP_CLOUD_TEMPLATE_NAME` with the text as its body's `{{1}}`; with
 * `template_body_param: false` the template is sent alone and the text waits until the user
 * writes again.
 *
 * Direct chats only (group payloads are dropped with a note, as upstream does). Markdown becomes
 * WhatsApp markup; buttons are interactive reply buttons (a list past three); typing shows while
 * the agent works and marks the user's message read. No edits: the Cloud API cannot edit.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { basename } from "node:path";
import {
  chatQueue,
  closeListener,
  firstDelivery,
  listenWebhook,
  readWebhookBody,
  uploadSize,
} from "./adapter-kit.js";
import { errorText, extensionFor, mediaKindOf, mimeFor, saveInboundFile } from "./media-files.js";
import {
  type AdapterContext,
  type AdapterHandlers,
  type InboundMedia,
  type OutboundTarget,
  type PlatformAdapter,
  PlatformError,
} from "./types.js";
import { createGraphClient, GRAPH_DEFAULT_URL, GraphCallError } from "./whatsapp-cloud-graph.js";
import {
  CLOUD_MEDIA_LIMITS,
  type CloudInbound,
  cloudMediaType,
  interactivePayload,
  isMediaId,
  isOutsideWindow,
  mediaPayload,
  parseCloudWebhook,
  templatePayload,
  textPayload,
  typingPayload,
  verifyHandshake,
  verifyMetaSignature,
} from "./whatsapp-cloud-wire.js";
import { markdownToWhatsApp, redactWaId } from "./whatsapp-format.js";

const MAX_TEXT = 4096;
const MAX_WEBHOOK_BYTES = 3 * 1024 * 1024;
const SEEN_LIMIT = 5000;
const CHAT_CACHE_LIMIT = 1000;
/** A little short of 24 h, so a reply sent at the edge does not race the window's close. */
const WINDOW_MS = 24 * 60 * 60 * 1000 - 60_000;
const PENDING_LIMIT = 20;

/** The settings of this adapter: environment first, then `whatsapp_cloud:` in config.yaml. */
export function whatsappCloudSettings(ctx: Pick<AdapterContext, "env" | "settings">) {
  const pick = (env: string, key: string, fallback = ""): string => {
    const v = ctx.env[env]?.trim();
    if (v) return v;
    const s = ctx.settings[key];
    return typeof s === "string" || typeof s === "number" ? String(s).trim() || fallback : fallback;
  };
  const bodyParam = ctx.settings["template_body_param"];
  const path = pick("WHATSAPP_CLOUD_WEBHOOK_PATH", "webhook_path", "/whatsapp/webhook");
  return {
    phoneNumberId: pick("WHATSAPP_CLOUD_PHONE_NUMBER_ID", "phone_number_id"),
    accessToken: ctx.env.WHATSAPP_CLOUD_ACCESS_TOKEN?.trim() ?? "",
    appSecret: ctx.env.WHATSAPP_CLOUD_APP_SECRET?.trim() ?? "",
    verifyToken: ctx.env.WHATSAPP_CLOUD_VERIFY_TOKEN?.trim() ?? "",
    host: pick("WHATSAPP_CLOUD_WEBHOOK_HOST", "webhook_host", "127.0.0.1"),
    port: Number(pick("WHATSAPP_CLOUD_WEBHOOK_PORT", "webhook_port", "8090")),
    path: path.startsWith("/") ? path : `/${path}`,
    apiVersion: pick("WHATSAPP_CLOUD_API_VERSION", "api_version", "v20.0"),
    graphUrl: pick("WHATSAPP_CLOUD_GRAPH_URL", "graph_url", GRAPH_DEFAULT_URL),
    templateName: pick("WHATSAPP_CLOUD_TEMPLATE_NAME", "template_name"),
    templateLanguage: pick("WHATSAPP_CLOUD_TEMPLATE_LANGUAGE", "template_language", "en_US"),
    templateBodyParam: bodyParam !== false && String(bodyParam).toLowerCase() !== "false",
  };
}

/** Creates the Cloud API adapter; nothing is contacted or opened until `connect` or a send. */
export function createWhatsAppCloudAdapter(
  ctx: AdapterContext,
  options: { now?: () => number; backoffMs?: (attempt: number) => number } = {},
): PlatformAdapter {
  const s = whatsappCloudSettings(ctx);
  const now = options.now ?? Date.now;
  let handlers: AdapterHandlers | undefined;
  let server: Server | undefined;
  const seen = new Set<string>();
  /** Per chat: when the user last wrote (the 24-hour window) and their latest message id (typing). */
  const lastInbound = new Map<string, { at: number; id: string }>();
  /** Texts held for a user outside the window when the template carries no text. */
  const pending = new Map<string, string[]>();

  const report = (message: string): void => {
    try {
      handlers?.onError(message);
    } catch {
      // The listener must keep serving whatever the error handler does.
    }
  };
  const queue = chatQueue((err) => report(`WhatsApp message handling failed: ${errorText(err)}`));
  const graph = createGraphClient({
    baseUrl: s.graphUrl,
    apiVersion: s.apiVersion,
    phoneNumberId: s.phoneNumberId,
    accessToken: s.accessToken,
    onRetry: report,
    ...(options.backoffMs ? { backoffMs: options.backoffMs } : {}),
  });

  const bounded = <K, V>(map: Map<K, V>, key: K, value: V, limit: number) => {
    map.delete(key);
    map.set(key, value);
    if (map.size > limit) map.delete(map.keys().next().value as K);
  };

  /** Whether the 24-hour window is known to be closed for `to` (unknown counts as open: Graph says). */
  const windowClosed = (to: string): boolean => {
    const last = lastInbound.get(to);
    return last !== undefined && now() - last.at > WINDOW_MS;
  };

  async function sendTemplate(to: string, text: string): Promise<string> {
    if (!s.templateName) {
      throw new PlatformError(
        `${redactWaId(to)} has not written in the last 24 hours, so WhatsApp delivers only approved templates: set WHATSAPP_CLOUD_TEMPLATE_NAME (and WHATSAPP_CLOUD_TEMPLATE_LANGUAGE) to a template approved in WhatsApp Manager`,
      );
    }
    if (!s.templateBodyParam) {
      // The template re-opens the conversation; the text goes out when the user answers.
      const queue = pending.get(to) ?? [];
      queue.push(text);
      bounded(pending, to, queue.slice(-PENDING_LIMIT), CHAT_CACHE_LIMIT);
      return graph.sendMessage(
        templatePayload(to, s.templateName, s.templateLanguage, undefined),
        `the template ${s.templateName} to ${redactWaId(to)}`,
      );
    }
    let last = "";
    // A template parameter carries at most 1024 characters.
    for (let i = 0; i < text.length; i += 1000) {
      last = await graph.sendMessage(
        templatePayload(to, s.templateName, s.templateLanguage, text.slice(i, i + 1000)),
        `the template ${s.templateName} to ${redactWaId(to)}`,
      );
    }
    return last;
  }

  /** A free-form message, or the template when Meta says the window is closed. */
  async function deliver(to: string, payload: Record<string, unknown>, text: string, what: string) {
    if (windowClosed(to)) return sendTemplate(to, text);
    try {
      return await graph.sendMessage(payload, what);
    } catch (err) {
      if (err instanceof GraphCallError && isOutsideWindow(err.graph)) return sendTemplate(to, text);
      throw err;
    }
  }

  async function flushPending(to: string): Promise<void> {
    const queue = pending.get(to);
    if (!queue) return;
    pending.delete(to);
    for (const text of queue) {
      try {
        await graph.sendMessage(textPayload(to, text), `a held message to ${redactWaId(to)}`);
      } catch (err) {
        report(`could not deliver a held message to ${redactWaId(to)}: ${errorText(err)}`);
      }
    }
  }

  async function download(ref: NonNullable<CloudInbound["media"]>): Promise<InboundMedia> {
    if (!isMediaId(ref.id))
      throw new Error(`the media id ${JSON.stringify(ref.id.slice(0, 40))} is malformed`);
    const got = await graph.download(ref.id, ctx.maxInboundMediaBytes);
    const type = ref.mimeType ?? got.mimeType;
    const kind = ref.type === "voice" || ref.type === "audio" ? "voice" : mediaKindOf(type);
    const path = await saveInboundFile(ctx.mediaDir, `whatsapp-${kind}`, got.bytes, extensionFor(type));
    return { kind, path, mimeType: type, ...(ref.fileName ? { fileName: ref.fileName } : {}) };
  }

  function handle(m: CloudInbound): void {
    if (seen.has(m.id)) return; // Meta re-delivered a webhook we already took
    seen.add(m.id);
    if (seen.size > SEEN_LIMIT) seen.delete(seen.values().next().value as string);
    if (m.group) {
      report(
        `dropped a group message from ${redactWaId(m.from)}: the Cloud API adapter answers direct chats only`,
      );
      return;
    }
    const source = {
      platform: "whatsapp_cloud",
      chatType: "dm" as const,
      chatId: m.from,
      chatName: m.name ?? m.from,
      userId: m.from,
      ...(m.name ? { userName: m.name } : {}),
    };
    bounded(lastInbound, m.from, { at: now(), id: m.id }, CHAT_CACHE_LIMIT);
    const chat = m.from;
    queue.add(chat, async () => {
      await flushPending(chat);
      // Meta's re-delivery that reached another instance behind the load balancer: taken there.
      if (!(await firstDelivery(ctx, "whatsapp_cloud", m.id))) return;
      if (m.buttonId && !m.media) {
        handlers?.onAction({ source, data: m.buttonId, messageId: m.replyTo });
        return;
      }
      const media: InboundMedia[] = [];
      const notes: string[] = [];
      if (m.media) {
        try {
          media.push(await download(m.media));
        } catch (err) {
          report(`could not download ${m.media.type} from ${redactWaId(chat)}: ${errorText(err)}`);
          notes.push(`[a ${m.media.type} could not be downloaded: ${errorText(err)}]`);
        }
      }
      if (m.unsupported)
        notes.push(`[the user sent a ${m.unsupported} message, which this gateway cannot read]`);
      const text = [m.text.trim(), ...notes].filter(Boolean).join("\n\n");
      if (!text && media.length === 0) return;
      handlers?.onMessage({ source, text, messageId: m.id, ...(media.length > 0 ? { media } : {}) });
    });
  }

  function webhook(req: IncomingMessage, res: ServerResponse, raw: Buffer): void {
    if (!s.appSecret) {
      report("refused a webhook: WHATSAPP_CLOUD_APP_SECRET is not set, so its sender cannot be checked");
      res.writeHead(503, { "content-type": "text/plain" }).end("app secret not configured");
      return;
    }
    const signature = req.headers["x-hub-signature-256"];
    if (!verifyMetaSignature(s.appSecret, raw, typeof signature === "string" ? signature : undefined)) {
      report("refused a webhook without a valid X-Hub-Signature-256 (check WHATSAPP_CLOUD_APP_SECRET)");
      res.writeHead(401).end();
      return;
    }
    let payload: unknown;
    try {
      payload = JSON.parse(raw.toString("utf8"));
    } catch {
      res.writeHead(400).end();
      return;
    }
    // Meta wants a quick 200 and retries anything else for days; the work happens after.
    res.writeHead(200).end();
    for (const m of parseCloudWebhook(payload)) handle(m);
  }

  function listen(): Promise<void> {
    const srv = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://localhost");
      if (req.method === "GET" && url.pathname === "/health") {
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ status: "ok", platform: "whatsapp_cloud", webhook_path: s.path }));
        return;
      }
      if (url.pathname !== s.path) {
        res.writeHead(404).end();
        return;
      }
      if (req.method === "GET") {
        const check = verifyHandshake(url.searchParams, s.verifyToken);
        if (check.ok) res.writeHead(200, { "content-type": "text/plain" }).end(check.challenge);
        else {
          report(`refused a webhook subscription: ${check.reason}`);
          res.writeHead(check.status, { "content-type": "text/plain" }).end(check.reason);
        }
        return;
      }
      if (req.method !== "POST") {
        res.writeHead(405).end();
        return;
      }
      readWebhookBody(
        req,
        MAX_WEBHOOK_BYTES,
        () => res.writeHead(413).end(),
        (raw) => webhook(req, res, raw),
      );
    });
    const names = { listener: "WhatsApp", portSetting: "WHATSAPP_CLOUD_WEBHOOK_PORT" };
    return listenWebhook(srv, s.host, s.port, names).then(() => {
      server = srv;
    });
  }

  function requireCredentials(receive: boolean): void {
    const missing = ["WHATSAPP_CLOUD_PHONE_NUMBER_ID", "WHATSAPP_CLOUD_ACCESS_TOKEN"].filter((k) =>
      k === "WHATSAPP_CLOUD_PHONE_NUMBER_ID" ? !s.phoneNumberId : !s.accessToken,
    );
    if (missing.length > 0) {
      throw new PlatformError(
        `${missing.join(" and ")} not set: add them (Meta app → WhatsApp → API Setup) to the .env file in your Hermes home`,
      );
    }
    if (!Number.isInteger(s.port) || s.port < 0 || s.port > 65535) {
      throw new PlatformError(`WHATSAPP_CLOUD_WEBHOOK_PORT must be a port number, got "${String(s.port)}"`);
    }
    if (receive && !s.appSecret)
      report("WHATSAPP_CLOUD_APP_SECRET is not set: incoming webhooks are refused until it is");
    if (receive && !s.verifyToken)
      report("WHATSAPP_CLOUD_VERIFY_TOKEN is not set: Meta's subscription handshake fails until it is");
  }

  const adapter: PlatformAdapter = {
    platform: "whatsapp_cloud",
    capabilities: {
      maxMessageLength: MAX_TEXT,
      edit: false,
      buttons: true,
      typing: true,
      media: true,
      maxMediaBytes: CLOUD_MEDIA_LIMITS.document,
    },

    async connect(h, connectOptions) {
      if (handlers) return;
      handlers = h;
      const receive = connectOptions?.receive !== false;
      try {
        requireCredentials(receive);
        if (receive) await listen();
      } catch (err) {
        handlers = undefined;
        throw err;
      }
    },

    async disconnect() {
      const srv = server;
      server = undefined;
      await closeListener(srv);
      await queue.idle();
      handlers = undefined;
    },

    async send(target: OutboundTarget, text, sendOptions = {}) {
      const body = sendOptions.plain ? text.trim() : markdownToWhatsApp(text);
      if (!body) throw new PlatformError("cannot send an empty WhatsApp message");
      const to = target.chatId;
      const rows = sendOptions.buttons?.filter((r) => r.length > 0) ?? [];
      if (rows.length > 0 && !windowClosed(to)) {
        // Buttons live in an interactive message whose body holds 1024 characters: a longer
        // prompt goes first as text, the buttons under a short line.
        let lead = body;
        if (body.length > 1024) {
          await deliver(to, textPayload(to, body), body, `a message to ${redactWaId(to)}`);
          lead = "Choose:";
        }
        const id = await deliver(
          to,
          interactivePayload(to, lead, rows),
          lead,
          `buttons to ${redactWaId(to)}`,
        );
        return { messageId: id };
      }
      let last = "";
      // The router cuts at the platform limit; a caller that did not is cut here.
      for (let i = 0; i < body.length; i += MAX_TEXT) {
        const piece = body.slice(i, i + MAX_TEXT);
        last = await deliver(
          to,
          textPayload(to, piece, i === 0 ? target.replyTo : undefined),
          piece,
          `a message to ${redactWaId(to)}`,
        );
      }
      return { messageId: last };
    },

    async edit() {
      throw new PlatformError("WhatsApp Cloud API messages cannot be edited once sent");
    },

    async typing(target) {
      const last = lastInbound.get(target.chatId);
      if (!last || windowClosed(target.chatId)) return;
      try {
        await graph.sendMessage(typingPayload(last.id), "a typing indicator", true);
      } catch {
        // Typing is a courtesy; an old message id (Graph error 131009) just shows nothing.
      }
    },

    async sendMedia(target, media) {
      const to = target.chatId;
      const name = basename(media.path);
      const mime = mimeFor(name);
      const type = media.kind === "document" ? "document" : cloudMediaType(mime);
      const limit = CLOUD_MEDIA_LIMITS[type];
      await uploadSize(media.path, {
        to: "to WhatsApp",
        maxBytes: limit,
        limit: `WhatsApp takes a ${type} of 1 byte to ${limit} bytes`,
        emptyIsOutOfRange: true,
      });
      if (windowClosed(to))
        throw new PlatformError(
          `cannot send ${name} to ${redactWaId(to)}: they have not written in 24 hours, and WhatsApp delivers only templates until they do`,
        );
      const caption = media.caption?.trim() ? markdownToWhatsApp(media.caption) : undefined;
      const mediaId = await graph.upload(media.path, mime);
      const messageId = await graph.sendMessage(
        mediaPayload(to, type, mediaId, caption, type === "document" ? name : undefined),
        `${name} to ${redactWaId(to)}`,
      );
      return { messageId };
    },
  };
  return adapter;
}
