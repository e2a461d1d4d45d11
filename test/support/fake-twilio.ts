/**
 * A loopback stand-in for Twilio's REST API as the SMS adapter uses it: `POST
 * /2010-04-01/Accounts/<sid>/Messages.json` (form-encoded, HTTP Basic auth with the account SID and
 * auth token) answering 201 with the message resource, honouring `I-Twilio-Idempotency-Token`
 * (a repeated token returns the first message, nothing new is sent); media files at `/media/...`
 * behind the same Basic auth, as Twilio serves MMS media. `dropNextResponse` records the next
 * message and then cuts the connection without answering, as a dropped connection would.
 *
 * Inbound webhooks are not part of this fake: tests sign them with the official `twilio` package.
 */
import { createServer } from "node:http";
import type { Socket } from "node:net";

export interface TwilioMessage {
  sid: string;
  to: string;
  from: string;
  body: string;
  mediaUrls: string[];
  idempotencyToken?: string | undefined;
}

export interface FakeTwilio {
  readonly url: string;
  readonly sid: string;
  readonly token: string;
  readonly messages: TwilioMessage[];
  /** REST requests received (each retry counts). */
  readonly requests: number;
  /** Serves `bytes` as a media file; returns its URL. */
  media(bytes: Buffer, contentType: string): string;
  dropNextResponse(): void;
  waitForMessage(predicate: (m: TwilioMessage) => boolean, timeoutMs?: number): Promise<TwilioMessage>;
  stop(): Promise<void>;
}

export async function startFakeTwilio(
  sid = "AC00000000000000000000000000000001",
  token = "twilio-auth-token-for-tests-0001",
): Promise<FakeTwilio> {
  const messages: TwilioMessage[] = [];
  const byToken = new Map<string, TwilioMessage>();
  const files = new Map<string, { bytes: Buffer; type: string }>();
  const sockets = new Set<Socket>();
  const waiters = new Set<() => void>();
  let requests = 0;
  let drop = false;
  let seq = 0;
  const expectedAuth = `Basic ${Buffer.from(`${sid}:${token}`).toString("base64")}`;

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (req.headers.authorization !== expectedAuth) {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ code: 20003, message: "Authenticate", status: 401 }));
      return;
    }
    const file = files.get(url.pathname);
    if (req.method === "GET" && file) {
      res.writeHead(200, { "content-type": file.type, "content-length": file.bytes.length }).end(file.bytes);
      return;
    }
    if (req.method !== "POST" || url.pathname !== `/2010-04-01/Accounts/${sid}/Messages.json`) {
      res
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify({ code: 20404, status: 404 }));
      return;
    }
    requests++;
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
      const idem = req.headers["i-twilio-idempotency-token"];
      const key = typeof idem === "string" ? idem : undefined;
      let message = key ? byToken.get(key) : undefined;
      if (!message) {
        const to = form.get("To") ?? "";
        if (!to || !form.get("From") || (!form.get("Body") && !form.get("MediaUrl"))) {
          res.writeHead(400, { "content-type": "application/json" });
          res.end(JSON.stringify({ code: 21602, message: "Message body is required.", status: 400 }));
          return;
        }
        message = {
          sid: `SM${String(++seq).padStart(32, "0")}`,
          to,
          from: form.get("From") ?? "",
          body: form.get("Body") ?? "",
          mediaUrls: form.getAll("MediaUrl"),
          idempotencyToken: key,
        };
        messages.push(message);
        if (key) byToken.set(key, message);
        for (const w of [...waiters]) w();
      }
      if (drop) {
        drop = false;
        req.socket.destroy();
        return;
      }
      res.writeHead(201, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          sid: message.sid,
          status: "queued",
          to: message.to,
          from: message.from,
          body: message.body,
        }),
      );
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const base = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  let mediaSeq = 0;
  return {
    url: base,
    sid,
    token,
    messages,
    get requests() {
      return requests;
    },
    media(bytes, contentType) {
      const path = `/2010-04-01/Accounts/${sid}/Messages/MM${++mediaSeq}/Media/ME${mediaSeq}`;
      files.set(path, { bytes, type: contentType });
      return `${base}${path}`;
    },
    dropNextResponse() {
      drop = true;
    },
    waitForMessage(predicate, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = messages.find(predicate);
          if (!found) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `no matching Twilio message within ${timeoutMs} ms; sent: ${JSON.stringify(messages.map((m) => m.body))}`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
