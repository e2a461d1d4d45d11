/**
 * A loopback stand-in for Meta's WhatsApp Cloud API as the adapter uses it, both directions:
 *
 * - Graph: `POST /<v>/<phone-id>/messages` (text, media, interactive, template, and the
 *   read-receipt + typing call), `POST /<v>/<phone-id>/media` (multipart upload → media id),
 *   `GET /<v>/<media-id>` (the media's signed URL) and that URL itself, all behind the bearer token
 *   (401 with Graph's code 190 otherwise). It enforces the 24-hour rule as Meta does: a free-form
 *   message to a user who has not written within the window is refused with error 131047, a
 *   template goes through.
 * - Webhooks: `deliver` posts a user's message to the gateway's webhook URL in Meta's payload
 *   shape, signed with the app secret (`X-Hub-Signature-256`), and opens that user's window.
 *
 * `failNext(n)` answers the next n sends with a transient 503; `pause()`/`resume()` stop and
 * restart the listener on the same port, as an outage would.
 */
import { createHmac, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface CloudSent {
  id: string;
  to: string;
  type: string;
  /** Text body, caption, interactive body or the template's first parameter. */
  text: string;
  payload: Record<string, unknown>;
}

export interface CloudUpload {
  id: string;
  bytes: Buffer;
  mimeType: string;
  fileName: string;
}

export interface FakeWhatsAppCloud {
  readonly url: string;
  readonly phoneNumberId: string;
  readonly accessToken: string;
  readonly appSecret: string;
  readonly sent: CloudSent[];
  /** Read receipts with typing: the message ids marked. */
  readonly typing: string[];
  readonly uploads: Map<string, CloudUpload>;
  /** Send attempts answered (any outcome). */
  readonly attempts: number;
  /** Stores a file as if the user had sent it; its media id. */
  userMedia(bytes: Buffer, mimeType: string): string;
  /** Posts a signed user message to `webhookUrl`; opens the sender's 24-hour window. */
  deliver(
    webhookUrl: string,
    from: string,
    message: Record<string, unknown>,
    options?: { id?: string; name?: string; signature?: string; body?: string },
  ): Promise<{ status: number; id: string }>;
  /** Forgets the user's last message, as if it were more than 24 hours old. */
  closeWindow(user: string): void;
  failNext(count: number): void;
  pause(): Promise<void>;
  resume(): Promise<void>;
  waitFor(predicate: (m: CloudSent) => boolean, timeoutMs?: number): Promise<CloudSent>;
  stop(): Promise<void>;
}

const rec = (v: unknown): Record<string, unknown> =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

function textOf(p: Record<string, unknown>): string {
  const type = String(p["type"] ?? "");
  const block = rec(p[type]);
  if (type === "text") return String(block["body"] ?? "");
  if (type === "interactive") return String(rec(block["body"])["text"] ?? "");
  if (type === "template") {
    const params = rec((block["components"] as unknown[] | undefined)?.[0])["parameters"] as
      | unknown[]
      | undefined;
    return String(rec(params?.[0])["text"] ?? "");
  }
  return String(block["caption"] ?? "");
}

const graphError = (code: number, message: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ error: { message, type: "OAuthException", code, fbtrace_id: "Afake", ...extra } });

export async function startFakeWhatsAppCloud(
  phoneNumberId = "109876543210987",
  accessToken = "EAAG-fake-cloud-access-token-0001",
  appSecret = "fake-meta-app-secret-0001",
): Promise<FakeWhatsAppCloud> {
  const sent: CloudSent[] = [];
  const typing: string[] = [];
  const uploads = new Map<string, CloudUpload>();
  const windows = new Map<string, number>();
  const sockets = new Set<Socket>();
  const waiters = new Set<() => void>();
  let attempts = 0;
  let failures = 0;
  let seq = 0;
  let port = 0;
  const wamid = () => `wamid.HBgL${randomBytes(12).toString("hex")}`;

  const read = (req: IncomingMessage) =>
    new Promise<Buffer>((resolve) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => resolve(Buffer.concat(chunks)));
    });

  const handler = async (req: IncomingMessage, res: import("node:http").ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const json = (status: number, body: string) =>
      res.writeHead(status, { "content-type": "application/json" }).end(body);
    if (req.headers.authorization !== `Bearer ${accessToken}`) {
      json(401, graphError(190, "Invalid OAuth access token - Cannot parse access token"));
      return;
    }
    const parts = url.pathname.split("/").filter(Boolean);
    if (req.method === "GET" && parts[0] === "cdn" && parts[1]) {
      const file = uploads.get(parts[1]);
      if (!file) return json(404, graphError(100, "not found"));
      res
        .writeHead(200, { "content-type": file.mimeType, "content-length": file.bytes.length })
        .end(file.bytes);
      return;
    }
    if (req.method === "GET" && parts.length === 2) {
      const file = uploads.get(parts[1] ?? "");
      if (!file) return json(400, graphError(100, "Unsupported get request. Object does not exist"));
      json(
        200,
        JSON.stringify({
          messaging_product: "whatsapp",
          url: `http://127.0.0.1:${port}/cdn/${file.id}?ext=${Date.now()}&hash=fake`,
          mime_type: file.mimeType,
          sha256: "0".repeat(64),
          file_size: file.bytes.length,
          id: file.id,
        }),
      );
      return;
    }
    if (req.method !== "POST" || parts.length !== 3 || parts[1] !== phoneNumberId) {
      json(404, graphError(100, `Unknown path ${url.pathname}`));
      return;
    }
    const body = await read(req);
    if (parts[2] === "media") {
      const form = await new Request("http://fake/", {
        method: "POST",
        headers: { "content-type": req.headers["content-type"] ?? "" },
        body,
      }).formData();
      const file = form.get("file");
      if (form.get("messaging_product") !== "whatsapp" || !(file instanceof Blob))
        return json(400, graphError(100, "(#100) The parameter messaging_product is required."));
      const id = String(1_000_000_000 + ++seq);
      uploads.set(id, {
        id,
        bytes: Buffer.from(await file.arrayBuffer()),
        mimeType: String(form.get("type") ?? file.type),
        fileName: (file as File).name ?? "",
      });
      json(200, JSON.stringify({ id }));
      return;
    }
    if (parts[2] !== "messages") return json(404, graphError(100, "Unknown edge"));
    attempts++;
    let payload: Record<string, unknown>;
    try {
      payload = rec(JSON.parse(body.toString("utf8")));
    } catch {
      return json(400, graphError(100, "Invalid JSON"));
    }
    if (payload["messaging_product"] !== "whatsapp")
      return json(400, graphError(100, "(#100) The parameter messaging_product is required."));
    if (failures > 0) {
      failures--;
      return json(503, graphError(2, "Service temporarily unavailable", { is_transient: true }));
    }
    if (payload["status"] === "read") {
      typing.push(String(payload["message_id"] ?? ""));
      return json(200, JSON.stringify({ success: true }));
    }
    const to = String(payload["to"] ?? "");
    const type = String(payload["type"] ?? "");
    if (!to || !type || payload[type] === undefined)
      return json(400, graphError(100, "(#100) Invalid parameter"));
    if (type !== "template" && !windows.has(to)) {
      return json(
        400,
        graphError(131047, "Re-engagement message", {
          error_data: {
            messaging_product: "whatsapp",
            details:
              "Message failed to send because more than 24 hours have passed since the customer last replied to this number.",
          },
        }),
      );
    }
    const block = rec(payload[type]);
    if (["image", "video", "audio", "document"].includes(type) && !uploads.has(String(block["id"] ?? "")))
      return json(400, graphError(131053, "Media upload error"));
    const id = wamid();
    sent.push({ id, to, type, text: textOf(payload), payload });
    for (const wake of [...waiters]) wake();
    json(
      200,
      JSON.stringify({
        messaging_product: "whatsapp",
        contacts: [{ input: to, wa_id: to }],
        messages: [{ id }],
      }),
    );
  };

  let server: Server = createServer((req, res) => void handler(req, res));
  const track = (srv: Server) =>
    srv.on("connection", (s: Socket) => {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
    });
  track(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;

  const close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });

  return {
    url: `http://127.0.0.1:${port}`,
    phoneNumberId,
    accessToken,
    appSecret,
    sent,
    typing,
    uploads,
    get attempts() {
      return attempts;
    },
    userMedia(bytes, mimeType) {
      const id = String(2_000_000_000 + ++seq);
      uploads.set(id, { id, bytes, mimeType, fileName: "" });
      return id;
    },
    async deliver(webhookUrl, from, message, options = {}) {
      const id = options.id ?? wamid();
      windows.set(from, Date.now());
      const body =
        options.body ??
        JSON.stringify({
          object: "whatsapp_business_account",
          entry: [
            {
              id: "102290129340398",
              changes: [
                {
                  field: "messages",
                  value: {
                    messaging_product: "whatsapp",
                    metadata: { display_phone_number: "15550009999", phone_number_id: phoneNumberId },
                    contacts: [{ profile: { name: options.name ?? "Owner" }, wa_id: from }],
                    messages: [{ from, id, timestamp: String(Math.floor(Date.now() / 1000)), ...message }],
                  },
                },
              ],
            },
          ],
        });
      const signature =
        options.signature ?? `sha256=${createHmac("sha256", appSecret).update(body).digest("hex")}`;
      const res = await fetch(webhookUrl, {
        method: "POST",
        headers: { "content-type": "application/json", "x-hub-signature-256": signature },
        body,
      });
      await res.text();
      return { status: res.status, id };
    },
    closeWindow(user) {
      windows.delete(user);
    },
    failNext(count) {
      failures = count;
    },
    pause: close,
    async resume() {
      server = createServer((req, res) => void handler(req, res));
      track(server);
      await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    },
    waitFor(predicate, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = sent.find(predicate);
          if (!hit) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(hit);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `no matching WhatsApp message in ${timeoutMs} ms; sent: ${JSON.stringify(sent.map((m) => [m.to, m.type, m.text]))}`,
            ),
          );
        }, timeoutMs);
        if (!check()) waiters.add(check);
      });
    },
    stop: close,
  };
}
