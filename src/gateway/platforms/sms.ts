/**
 * SMS over Twilio: replies go out through Twilio's REST API (`POST /2010-04-01/Accounts/<sid>/
 * Messages.json`, HTTP Basic auth with the account SID and auth token), messages come in as
 * webhooks Twilio POSTs to `/webhooks/twilio` on a listener this adapter runs
 * (`SMS_WEBHOOK_HOST`:`SMS_WEBHOOK_PORT`, loopback by default; put it behind your proxy or tunnel).
 *
 * Every webhook must carry Twilio's signature over the URL Twilio called (`SMS_WEBHOOK_PUBLIC_URL`
 * when a proxy stands in front) unless `SMS_INSECURE_NO_AUTH=true`; unsigned or forged requests are
 * refused with 403 before any field is read. Twilio retries webhooks it thinks failed: a
 * MessageSid already handled is acknowledged and dropped. Each REST send carries an
 * `I-Twilio-Idempotency-Token`, so a send retried after a dropped connection is not sent twice.
 *
 * Markdown is flattened to plain text (SMS shows it literally); long answers are cut into messages
 * of at most 1600 characters (Twilio's limit, about ten segments). MMS pictures sent to the number
 * are downloaded; files go out as MMS only when `SMS_WEBHOOK_PUBLIC_URL` lets Twilio fetch them
 * from this listener (one-hour links with random names).
 */
import { randomBytes, randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { basename } from "node:path";
import { envFlag } from "../../state/gateway/allowlist.js";
import {
  chatQueue,
  closeListener,
  firstDelivery,
  listenWebhook,
  readWebhookBody,
  uploadSize,
} from "./adapter-kit.js";
import { errorText, extensionFor, mediaKindOf, mimeFor, saveInboundFile } from "./media-files.js";
import { markdownToSms, parseSmsWebhook, redactPhone, verifyTwilioSignature } from "./sms-wire.js";
import {
  type AdapterContext,
  type AdapterHandlers,
  type InboundMedia,
  type OutboundTarget,
  type PlatformAdapter,
  PlatformError,
} from "./types.js";

export const TWILIO_DEFAULT_API_URL = "https://api.twilio.com";
const MAX_SMS_LENGTH = 1600;
/** Twilio accepts MMS media up to 5 MB. */
const MAX_MMS_BYTES = 5 * 1024 * 1024;
const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>';
const MEDIA_TTL_MS = 60 * 60 * 1000;
const SEEN_LIMIT = 2000;

const describe = errorText;

/** Creates the SMS adapter; nothing is contacted or opened until `connect` or a send. */
export function createSmsAdapter(ctx: AdapterContext): PlatformAdapter {
  const env = ctx.env;
  const sid = env.TWILIO_ACCOUNT_SID?.trim() ?? "";
  const token = env.TWILIO_AUTH_TOKEN?.trim() ?? "";
  const from = env.TWILIO_PHONE_NUMBER?.trim() ?? "";
  const apiUrl = (env.TWILIO_API_URL?.trim() || TWILIO_DEFAULT_API_URL).replace(/\/+$/, "");
  const host = env.SMS_WEBHOOK_HOST?.trim() || "127.0.0.1";
  const port = Number(env.SMS_WEBHOOK_PORT?.trim() || "8080");
  const publicUrl = env.SMS_WEBHOOK_PUBLIC_URL?.trim().replace(/\/+$/, "") ?? "";
  const insecure = envFlag(env.SMS_INSECURE_NO_AUTH);
  const maxBody = Number(env.SMS_MAX_WEBHOOK_BYTES?.trim() || "65536");
  const auth = `Basic ${Buffer.from(`${sid}:${token}`).toString("base64")}`;

  let handlers: AdapterHandlers | undefined;
  let server: Server | undefined;
  const seen = new Set<string>();
  const hosted = new Map<string, { path: string; type: string; until: number }>();

  const report = (message: string): void => {
    try {
      handlers?.onError(message);
    } catch {
      // The listener must keep serving whatever the error handler does.
    }
  };
  const queue = chatQueue((err) => report(`SMS message handling failed: ${describe(err)}`));

  /** The URL Twilio signed: the public URL when set (a bare origin gets the request's path). */
  function signedUrl(req: IncomingMessage): string {
    const path = req.url ?? "/";
    if (publicUrl) return new URL(publicUrl).pathname.length > 1 ? publicUrl : `${publicUrl}${path}`;
    return `http://${req.headers.host ?? `${host}:${port}`}${path}`;
  }

  async function downloadMedia(url: string, contentType: string | undefined): Promise<InboundMedia> {
    const limit = ctx.maxInboundMediaBytes;
    // Twilio's media URLs answer with a redirect to storage; its own host wants the account's auth.
    const res = await fetch(url, { headers: { authorization: auth }, signal: AbortSignal.timeout(60_000) });
    if (!res.ok) throw new Error(`the media server answered ${res.status}`);
    const declared = Number(res.headers.get("content-length"));
    if (Number.isFinite(declared) && declared > limit)
      throw new Error(`it is ${declared} bytes, over the ${limit}-byte limit`);
    const bytes = Buffer.from(await res.arrayBuffer());
    if (bytes.length > limit) throw new Error(`it is ${bytes.length} bytes, over the ${limit}-byte limit`);
    const type = contentType ?? res.headers.get("content-type") ?? undefined;
    const kind = mediaKindOf(type);
    const path = await saveInboundFile(ctx.mediaDir, `sms-${kind}`, bytes, extensionFor(type));
    return { kind, path, mimeType: type };
  }

  function answer(res: ServerResponse, status: number): void {
    res.writeHead(status, { "content-type": "application/xml" }).end(EMPTY_TWIML);
  }

  function webhook(req: IncomingMessage, res: ServerResponse, raw: Buffer): void {
    const params = new URLSearchParams(raw.toString("utf8"));
    const signature = req.headers["x-twilio-signature"];
    if (
      !insecure &&
      !verifyTwilioSignature(
        token,
        signedUrl(req),
        params,
        typeof signature === "string" ? signature : undefined,
      )
    ) {
      report(
        `refused an SMS webhook without a valid Twilio signature (check SMS_WEBHOOK_PUBLIC_URL if Twilio reaches you through a proxy)`,
      );
      answer(res, 403);
      return;
    }
    const inbound = parseSmsWebhook(params);
    // Status callbacks and our own number's echoes are not messages.
    if (!inbound || inbound.from === from || (!inbound.body.trim() && inbound.media.length === 0)) {
      answer(res, 200);
      return;
    }
    // Twilio expects an answer within 15 s; the agent's reply goes out through the REST API.
    answer(res, 200);
    if (inbound.messageSid) {
      if (seen.has(inbound.messageSid)) return; // Twilio retried a delivery we already took
      seen.add(inbound.messageSid);
      if (seen.size > SEEN_LIMIT) seen.delete(seen.values().next().value as string);
    }
    const chat = inbound.from;
    queue.add(chat, async () => {
      // Twilio's retry that reached another instance behind the load balancer: taken there.
      if (inbound.messageSid && !(await firstDelivery(ctx, "sms", inbound.messageSid))) return;
      const media: InboundMedia[] = [];
      const notes: string[] = [];
      for (const ref of inbound.media) {
        try {
          media.push(await downloadMedia(ref.url, ref.contentType));
        } catch (err) {
          report(`could not download MMS media from ${redactPhone(chat)}: ${describe(err)}`);
          notes.push(`[a picture or file could not be downloaded: ${describe(err)}]`);
        }
      }
      handlers?.onMessage({
        source: { platform: "sms", chatType: "dm", chatId: chat, chatName: chat, userId: chat },
        text: [inbound.body.trim(), ...notes].filter(Boolean).join("\n\n"),
        ...(inbound.messageSid ? { messageId: inbound.messageSid } : {}),
        ...(media.length > 0 ? { media } : {}),
      });
    });
  }

  function serveMedia(res: ServerResponse, id: string): void {
    const entry = hosted.get(id);
    if (!entry || entry.until < Date.now()) {
      hosted.delete(id);
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": entry.type });
    createReadStream(entry.path)
      .on("error", () => res.destroy())
      .pipe(res);
  }

  function listen(): Promise<void> {
    const s = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://localhost");
      if (req.method === "GET" && url.pathname === "/health") {
        res.writeHead(200, { "content-type": "text/plain" }).end("ok");
        return;
      }
      const media = /^\/media\/([A-Za-z0-9_-]{20,})\/[^/]+$/.exec(url.pathname);
      if (req.method === "GET" && media?.[1]) return serveMedia(res, media[1]);
      if (req.method !== "POST" || url.pathname !== "/webhooks/twilio") {
        res.writeHead(404).end();
        return;
      }
      readWebhookBody(
        req,
        maxBody,
        () => answer(res, 413),
        (raw) => webhook(req, res, raw),
      );
    });
    return listenWebhook(s, host, port, { listener: "SMS", portSetting: "SMS_WEBHOOK_PORT" }).then(() => {
      server = s;
    });
  }

  /** One REST call that creates a message; retried once after a dropped connection or a 5xx/429. */
  async function createMessage(fields: Record<string, string>, what: string): Promise<string> {
    const body = new URLSearchParams({ From: from, ...fields });
    // The same token on the retry: Twilio creates the message once however often it is asked.
    const idempotency = randomUUID();
    let lastError: PlatformError | undefined;
    for (let attempt = 1; attempt <= 3; attempt++) {
      let res: Response;
      try {
        res = await fetch(`${apiUrl}/2010-04-01/Accounts/${encodeURIComponent(sid)}/Messages.json`, {
          method: "POST",
          headers: {
            authorization: auth,
            "content-type": "application/x-www-form-urlencoded",
            "i-twilio-idempotency-token": idempotency,
          },
          body,
          signal: AbortSignal.timeout(30_000),
        });
      } catch (err) {
        lastError = new PlatformError(`Twilio ${what} failed: could not reach ${apiUrl} (${describe(err)})`);
        await new Promise((r) => setTimeout(r, 250 * attempt));
        continue;
      }
      const json = (await res.json().catch(() => ({}))) as {
        sid?: unknown;
        message?: unknown;
        code?: unknown;
      };
      if (res.ok && typeof json.sid === "string") return json.sid;
      const detail = `${res.status}${json.code ? ` code ${String(json.code)}` : ""}: ${typeof json.message === "string" ? json.message : res.statusText}`;
      if (res.status === 401)
        throw new PlatformError(
          `Twilio refused the credentials (${detail}): check TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN`,
        );
      const retryAfter = Number(res.headers.get("retry-after")) * 1000 || 1000 * attempt;
      lastError = new PlatformError(
        `Twilio refused ${what} (${detail})`,
        res.status === 429 ? retryAfter : undefined,
      );
      if (res.status !== 429 && res.status < 500) throw lastError;
      await new Promise((r) => setTimeout(r, Math.min(retryAfter, 5000)));
    }
    throw lastError ?? new PlatformError(`Twilio ${what} failed`);
  }

  function requireCredentials(): void {
    const missing = ["TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN", "TWILIO_PHONE_NUMBER"].filter(
      (k) => !env[k]?.trim(),
    );
    if (missing.length > 0) {
      throw new PlatformError(
        `${missing.join(", ")} not set: add them (from the Twilio console) to the .env file in your Hermes home`,
      );
    }
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw new PlatformError(`SMS_WEBHOOK_PORT must be a port number, got "${env.SMS_WEBHOOK_PORT}"`);
    }
  }

  const adapter: PlatformAdapter = {
    platform: "sms",
    capabilities: {
      maxMessageLength: MAX_SMS_LENGTH,
      edit: false,
      buttons: false,
      typing: false,
      media: publicUrl !== "",
      maxMediaBytes: MAX_MMS_BYTES,
    },

    async connect(h, options) {
      if (handlers) return;
      requireCredentials();
      if (options?.receive !== false) {
        if (insecure)
          report(
            "SMS_INSECURE_NO_AUTH=true: webhooks are accepted without Twilio's signature (local tests only)",
          );
        await listen();
      }
      handlers = h;
    },

    async disconnect() {
      const s = server;
      server = undefined;
      await closeListener(s);
      await queue.idle();
      handlers = undefined;
    },

    async send(target: OutboundTarget, text, options = {}) {
      const body = options.plain ? text.trim() : markdownToSms(text);
      if (!body) throw new PlatformError("cannot send an empty SMS");
      let last = "";
      // The router cuts at the platform limit; flattening only shortens, but a caller may not have cut.
      for (let i = 0; i < body.length; i += MAX_SMS_LENGTH) {
        last = await createMessage(
          { To: target.chatId, Body: body.slice(i, i + MAX_SMS_LENGTH) },
          `an SMS to ${redactPhone(target.chatId)}`,
        );
      }
      return { messageId: last };
    },

    async edit() {
      throw new PlatformError("SMS messages cannot be edited once sent");
    },

    async typing() {
      // SMS has no typing indicator.
    },

    async sendMedia(target, media) {
      if (!publicUrl) {
        throw new PlatformError(
          `cannot send ${basename(media.path)} by SMS: MMS needs a URL Twilio can fetch; set SMS_WEBHOOK_PUBLIC_URL to this listener's public address`,
        );
      }
      await uploadSize(media.path, {
        to: "by MMS",
        maxBytes: MAX_MMS_BYTES,
        limit: "MMS carries 1 byte to 5 MB",
        emptyIsOutOfRange: true,
      });
      const now = Date.now();
      for (const [id, entry] of hosted) if (entry.until < now) hosted.delete(id);
      const id = randomBytes(24).toString("base64url");
      const name = basename(media.path).replace(/[^A-Za-z0-9._-]/g, "_");
      hosted.set(id, {
        path: media.path,
        type: mimeFor(name),
        until: now + MEDIA_TTL_MS,
      });
      const origin = new URL(publicUrl).origin;
      const caption = media.caption?.trim() ? markdownToSms(media.caption).slice(0, MAX_SMS_LENGTH) : "";
      const messageId = await createMessage(
        {
          To: target.chatId,
          MediaUrl: `${origin}/media/${id}/${name}`,
          ...(caption ? { Body: caption } : {}),
        },
        `an MMS to ${redactPhone(target.chatId)}`,
      );
      return { messageId };
    },
  };
  return adapter;
}
