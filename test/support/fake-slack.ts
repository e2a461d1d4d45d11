/**
 * A local fake of Slack for adapter and gateway tests, on 127.0.0.1 with a free port.
 *
 * - Web API at `apiUrl` (`http://127.0.0.1:<port>/api/`): form-encoded or JSON POSTs to
 *   `<apiUrl><method>` with `Authorization: Bearer <token>`, answered in Slack's shapes:
 *   `auth.test`, `chat.postMessage`, `chat.update`, `chat.postEphemeral`, `conversations.info`,
 *   `files.getUploadURLExternal` + the upload URL + `files.completeUploadExternal` (what
 *   `WebClient.filesUploadV2` calls) and `apps.connections.open`. A wrong token gets
 *   `{ok:false,error:"invalid_auth"}`; `rateLimit()` makes the next calls answer HTTP 429.
 * - File downloads for `url_private` (`addFile`), which need the bot token like Slack's do.
 * - Socket Mode: `apps.connections.open` hands out a WebSocket URL on the same port that speaks
 *   Slack's envelope protocol (hello, `events_api` / `interactive` envelopes, acks).
 * - `SlackRequestSender` POSTs signed Events API and interactivity requests to an app's HTTP
 *   endpoint exactly as Slack does.
 *
 *   const slack = await startFakeSlack();
 *   // env: SLACK_BOT_TOKEN=slack.botToken, SLACK_API_URL=slack.apiUrl
 *   const call = await slack.waitForCall("chat.postMessage", (c) => c.args.channel === "D1");
 *   await slack.stop();
 */
import { createHmac, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parse as parseQuery } from "node:querystring";
import { type WebSocket, WebSocketServer } from "ws";

export interface FakeSlackOptions {
  botToken?: string;
  appToken?: string;
  teamId?: string;
  teamName?: string;
  botUserId?: string;
  botId?: string;
  /** conversations.info answers; unknown ids get a public channel (C…), private one (G…) or DM (D…). */
  channels?: Record<string, FakeChannel>;
}

export interface FakeChannel {
  name?: string;
  is_private?: boolean;
  is_im?: boolean;
  is_mpim?: boolean;
}

export interface FakeSlackCall {
  /** Web API method, e.g. `chat.postMessage`. */
  method: string;
  /** Request arguments; `blocks`, `attachments` and `files` are parsed from their JSON strings. */
  args: Record<string, unknown>;
  /** Bearer token (or `token` argument) the call carried. */
  token: string | undefined;
  /** True when the fake answered this call with HTTP 429. */
  rateLimited: boolean;
}

export interface FakeUpload {
  fileId: string;
  filename: string;
  declaredLength: number;
  bytes: Buffer | undefined;
}

export interface SocketAck {
  envelope_id: string;
  payload?: unknown;
}

export interface FakeSlack {
  /** `http://127.0.0.1:<port>/` */
  readonly url: string;
  /** Web API base URL, for `SLACK_API_URL`. */
  readonly apiUrl: string;
  readonly botToken: string;
  readonly appToken: string;
  readonly teamId: string;
  readonly botUserId: string;
  readonly botId: string;
  /** Every Web API call, in arrival order. */
  readonly calls: FakeSlackCall[];
  readonly uploads: FakeUpload[];
  callsTo(method: string): FakeSlackCall[];
  /** The first call (past or future) to `method` matching `predicate`; rejects after `timeoutMs`. */
  waitForCall(
    method: string,
    predicate?: (call: FakeSlackCall) => boolean,
    timeoutMs?: number,
  ): Promise<FakeSlackCall>;
  /** The next `times` calls to `method` get HTTP 429 with `Retry-After: retryAfterSeconds`. */
  rateLimit(method: string, retryAfterSeconds: number, times?: number): void;
  /** The next call to `method` answers `{ok:false, error}`. */
  failNext(method: string, error: string): void;
  /** Serves a file at a `url_private` address; returns a Slack `files[]` entry for events. */
  addFile(file: {
    name: string;
    content: Buffer | string;
    mimetype?: string;
    status?: number;
  }): Record<string, unknown>;
  /** Socket Mode: resolves once a client is connected and has been sent `hello`. */
  waitForSocket(timeoutMs?: number): Promise<void>;
  /** Open Socket Mode connections. */
  socketCount(): number;
  /** Closes every Socket Mode connection from Slack's side, as a Slack restart would. */
  closeSockets(): void;
  /** Sends an envelope to the connected client and resolves with its ack. */
  sendEnvelope(
    type: "events_api" | "interactive" | "slash_commands",
    payload: unknown,
    timeoutMs?: number,
  ): Promise<SocketAck>;
  stop(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
  res.end(JSON.stringify(body));
}

const JSON_FIELDS = new Set(["blocks", "attachments", "files", "metadata"]);

function parseArgs(raw: Buffer, contentType: string): Record<string, unknown> {
  const text = raw.toString("utf8");
  if (contentType.includes("application/json")) {
    try {
      const parsed: unknown = JSON.parse(text || "{}");
      return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : {};
    } catch {
      return {};
    }
  }
  const args: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(parseQuery(text))) {
    const single = Array.isArray(value) ? value[0] : value;
    if (single === undefined) continue;
    if (JSON_FIELDS.has(key)) {
      try {
        args[key] = JSON.parse(single);
        continue;
      } catch {
        // Left as the string Slack would have rejected.
      }
    }
    args[key] = single;
  }
  return args;
}

/** Starts the fake on a free port. */
export async function startFakeSlack(options: FakeSlackOptions = {}): Promise<FakeSlack> {
  const botToken = options.botToken ?? "xoxb-fake-bot-token";
  const appToken = options.appToken ?? "xapp-1-fake-app-token";
  const teamId = options.teamId ?? "T0FAKE";
  const teamName = options.teamName ?? "Fake Workspace";
  const botUserId = options.botUserId ?? "U0BOT";
  const botId = options.botId ?? "B0BOT";
  const channels = options.channels ?? {};

  const calls: FakeSlackCall[] = [];
  const uploads: FakeUpload[] = [];
  const waiters = new Set<() => void>();
  const rateLimits = new Map<string, { seconds: number; times: number }>();
  const failures = new Map<string, string>();
  const files = new Map<string, { name: string; content: Buffer; mimetype: string; status: number }>();
  const messages = new Map<string, Record<string, unknown>>();
  const sockets = new Set<WebSocket>();
  const socketWaiters = new Set<() => void>();
  const pendingAcks = new Map<string, (ack: SocketAck) => void>();
  let tsCounter = 0;
  let idCounter = 0;
  let base = "";

  const nextTs = () => {
    tsCounter += 1;
    return `${Math.floor(Date.now() / 1000)}.${String(tsCounter).padStart(6, "0")}`;
  };
  const notify = () => {
    for (const waiter of [...waiters]) waiter();
  };

  function answer(
    method: string,
    args: Record<string, unknown>,
    token: string | undefined,
  ): Record<string, unknown> {
    const failure = failures.get(method);
    if (failure) {
      failures.delete(method);
      return { ok: false, error: failure };
    }
    if (method === "apps.connections.open") {
      if (!token) return { ok: false, error: "not_authed" };
      if (token !== appToken) return { ok: false, error: "invalid_auth" };
      return { ok: true, url: `${base.replace(/^http/, "ws")}socket-mode?ticket=${randomUUID()}` };
    }
    if (!token) return { ok: false, error: "not_authed" };
    if (token !== botToken) return { ok: false, error: "invalid_auth" };
    switch (method) {
      case "auth.test":
        return {
          ok: true,
          url: "https://fake-workspace.slack.com/",
          team: teamName,
          user: "hermes",
          team_id: teamId,
          user_id: botUserId,
          bot_id: botId,
          is_enterprise_install: false,
        };
      case "chat.postMessage": {
        const channel = typeof args.channel === "string" ? args.channel : "";
        if (!channel) return { ok: false, error: "channel_not_found" };
        if (!args.text && !args.blocks) return { ok: false, error: "no_text" };
        const ts = nextTs();
        const message = {
          type: "message",
          user: botUserId,
          bot_id: botId,
          text: args.text ?? "",
          ts,
          ...(args.thread_ts ? { thread_ts: args.thread_ts } : {}),
          ...(args.blocks ? { blocks: args.blocks } : {}),
        };
        messages.set(`${channel}:${ts}`, message);
        return { ok: true, channel, ts, message };
      }
      case "chat.update": {
        const channel = String(args.channel ?? "");
        const ts = String(args.ts ?? "");
        const message = messages.get(`${channel}:${ts}`);
        if (!message) return { ok: false, error: "message_not_found" };
        message.text = args.text ?? "";
        if (Array.isArray(args.blocks)) message.blocks = args.blocks;
        return { ok: true, channel, ts, text: message.text, message };
      }
      case "chat.postEphemeral":
        return { ok: true, message_ts: nextTs() };
      case "conversations.info": {
        const id = String(args.channel ?? "");
        if (!id) return { ok: false, error: "channel_not_found" };
        const known = channels[id] ?? {};
        const isIm = known.is_im ?? id.startsWith("D");
        const isPrivate = known.is_private ?? id.startsWith("G");
        return {
          ok: true,
          channel: {
            id,
            ...(isIm ? {} : { name: known.name ?? `channel-${id.toLowerCase()}` }),
            is_channel: !isIm && !isPrivate && !known.is_mpim,
            is_group: isPrivate,
            is_im: isIm,
            is_mpim: known.is_mpim ?? false,
            is_private: isPrivate || isIm,
          },
        };
      }
      case "files.getUploadURLExternal": {
        const filename = String(args.filename ?? "");
        const length = Number(args.length);
        if (!filename || !Number.isFinite(length) || length < 0)
          return { ok: false, error: "invalid_arguments" };
        idCounter += 1;
        const fileId = `F${String(idCounter).padStart(8, "0")}`;
        uploads.push({ fileId, filename, declaredLength: length, bytes: undefined });
        return { ok: true, upload_url: `${base}upload/${fileId}`, file_id: fileId };
      }
      case "files.completeUploadExternal": {
        const list = Array.isArray(args.files) ? (args.files as { id?: string; title?: string }[]) : [];
        const done = [];
        for (const entry of list) {
          const upload = uploads.find((u) => u.fileId === entry.id);
          if (!upload?.bytes) return { ok: false, error: "file_not_found" };
          done.push({
            id: upload.fileId,
            name: upload.filename,
            title: entry.title ?? upload.filename,
            size: upload.bytes.length,
          });
        }
        if (done.length === 0) return { ok: false, error: "invalid_arguments" };
        return { ok: true, files: done };
      }
      default:
        return { ok: false, error: "unknown_method" };
    }
  }

  async function handleApi(req: IncomingMessage, res: ServerResponse, method: string) {
    const raw = await readBody(req);
    const args = parseArgs(raw, String(req.headers["content-type"] ?? ""));
    const bearer = /^Bearer\s+(.+)$/i.exec(String(req.headers.authorization ?? ""))?.[1];
    const token = bearer || (typeof args.token === "string" ? args.token : undefined);
    const limit = rateLimits.get(method);
    const call: FakeSlackCall = { method, args, token, rateLimited: limit !== undefined };
    calls.push(call);
    notify();
    if (limit) {
      limit.times -= 1;
      if (limit.times <= 0) rateLimits.delete(method);
      sendJson(res, 429, { ok: false, error: "ratelimited" }, { "retry-after": String(limit.seconds) });
      return;
    }
    sendJson(res, 200, answer(method, args, token));
  }

  async function handleUpload(req: IncomingMessage, res: ServerResponse, fileId: string) {
    const raw = await readBody(req);
    const upload = uploads.find((u) => u.fileId === fileId);
    if (!upload) {
      res.writeHead(404).end();
      return;
    }
    const contentType = String(req.headers["content-type"] ?? "");
    if (contentType.startsWith("multipart/form-data")) {
      const form = await new Response(raw, { headers: { "content-type": contentType } }).formData();
      for (const value of form.values()) {
        if (typeof value !== "string") {
          upload.bytes = Buffer.from(await value.arrayBuffer());
          break;
        }
      }
    } else {
      upload.bytes = raw;
    }
    notify();
    res.writeHead(200, { "content-type": "text/plain" }).end(`OK - ${upload.bytes?.length ?? 0}`);
  }

  function handleFile(req: IncomingMessage, res: ServerResponse, fileId: string) {
    const file = files.get(fileId);
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    const bearer = /^Bearer\s+(.+)$/i.exec(String(req.headers.authorization ?? ""))?.[1];
    if (bearer !== botToken) {
      // What Slack does without the token: a sign-in page, not an error status.
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end("<html>Sign in to Slack</html>");
      return;
    }
    if (file.status !== 200) {
      res.writeHead(file.status).end();
      return;
    }
    res.writeHead(200, { "content-type": file.mimetype, "content-length": String(file.content.length) });
    res.end(file.content);
  }

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    const done = (err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    };
    if (req.method === "POST" && path.startsWith("/api/")) {
      handleApi(req, res, path.slice("/api/".length)).catch(done);
    } else if (req.method === "POST" && path.startsWith("/upload/")) {
      handleUpload(req, res, path.slice("/upload/".length)).catch(done);
    } else if (req.method === "GET" && path.startsWith("/files/")) {
      handleFile(req, res, path.split("/")[2] ?? "");
    } else {
      res.writeHead(404).end();
    }
  });

  const wss = new WebSocketServer({ noServer: true });
  server.on("upgrade", (req, socket, head) => {
    if (!(req.url ?? "").startsWith("/socket-mode")) {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      ws.on("close", () => sockets.delete(ws));
      ws.on("message", (data) => {
        try {
          const ack = JSON.parse(String(data)) as SocketAck;
          if (typeof ack.envelope_id === "string") {
            pendingAcks.get(ack.envelope_id)?.(ack);
            pendingAcks.delete(ack.envelope_id);
          }
        } catch {
          // A client sending non-JSON is the client's bug; the test will time out on its ack.
        }
      });
      ws.send(
        JSON.stringify({
          type: "hello",
          num_connections: sockets.size,
          debug_info: { host: "fake-slack", build_number: 1, approximate_connection_time: 3600 },
          connection_info: { app_id: "A0FAKE" },
        }),
      );
      for (const waiter of [...socketWaiters]) waiter();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

  function waitUntil<T>(
    check: () => T | undefined,
    set: Set<() => void>,
    timeoutMs: number,
    what: string,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const first = check();
      if (first !== undefined) {
        resolve(first);
        return;
      }
      const waiter = () => {
        const found = check();
        if (found === undefined) return;
        clearTimeout(timer);
        set.delete(waiter);
        resolve(found);
      };
      const timer = setTimeout(() => {
        set.delete(waiter);
        reject(new Error(`fake Slack: timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      set.add(waiter);
    });
  }

  return {
    url: base,
    apiUrl: `${base}api/`,
    botToken,
    appToken,
    teamId,
    botUserId,
    botId,
    calls,
    uploads,
    callsTo: (method) => calls.filter((c) => c.method === method),
    waitForCall(method, predicate = () => true, timeoutMs = 10_000) {
      return waitUntil(
        () => calls.find((c) => c.method === method && !c.rateLimited && predicate(c)),
        waiters,
        timeoutMs,
        `a ${method} call`,
      );
    },
    rateLimit(method, retryAfterSeconds, times = 1) {
      rateLimits.set(method, { seconds: retryAfterSeconds, times });
    },
    failNext(method, error) {
      failures.set(method, error);
    },
    addFile({ name, content, mimetype = "application/octet-stream", status = 200 }) {
      idCounter += 1;
      const id = `F${String(idCounter).padStart(8, "0")}`;
      const bytes = typeof content === "string" ? Buffer.from(content) : content;
      files.set(id, { name, content: bytes, mimetype, status });
      const url = `${base}files/${id}/${encodeURIComponent(name)}`;
      return {
        id,
        name,
        title: name,
        mimetype,
        size: bytes.length,
        url_private: url,
        url_private_download: `${url}?download=1`,
        mode: "hosted",
      };
    },
    waitForSocket(timeoutMs = 10_000) {
      return waitUntil(
        () => (sockets.size > 0 ? true : undefined),
        socketWaiters,
        timeoutMs,
        "a Socket Mode connection",
      ).then(() => {});
    },
    socketCount: () => [...sockets].filter((ws) => ws.readyState === ws.OPEN).length,
    closeSockets() {
      for (const ws of sockets) ws.close(1001, "going away");
    },
    sendEnvelope(type, payload, timeoutMs = 10_000) {
      const ws = [...sockets].find((s) => s.readyState === s.OPEN);
      if (!ws) return Promise.reject(new Error("fake Slack: no Socket Mode client is connected"));
      const envelopeId = randomUUID();
      return new Promise<SocketAck>((resolve, reject) => {
        const timer = setTimeout(() => {
          pendingAcks.delete(envelopeId);
          reject(new Error(`fake Slack: no ack for ${type} envelope within ${timeoutMs} ms`));
        }, timeoutMs);
        pendingAcks.set(envelopeId, (ack) => {
          clearTimeout(timer);
          resolve(ack);
        });
        ws.send(
          JSON.stringify({
            envelope_id: envelopeId,
            type,
            payload,
            accepts_response_payload: type !== "events_api",
            ...(type === "events_api" ? { retry_attempt: 0, retry_reason: "" } : {}),
          }),
        );
      });
    },
    async stop() {
      for (const ws of sockets) ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** `v0=<hex HMAC-SHA256 of "v0:<timestamp>:<body>">`, Slack's request signature. */
export function signSlackRequest(signingSecret: string, timestamp: number, body: string): string {
  return `v0=${createHmac("sha256", signingSecret).update(`v0:${timestamp}:${body}`).digest("hex")}`;
}

export interface SlackResponse {
  status: number;
  text: string;
}

let eventCounter = 0;

/** A ts in Slack's `seconds.micros` form, increasing within a test run. */
export function slackTs(): string {
  eventCounter += 1;
  return `${Math.floor(Date.now() / 1000)}.${String(eventCounter).padStart(6, "0")}`;
}

/**
 * Sends what Slack sends to an app's request URL: signed `event_callback`s, `url_verification`
 * challenges and form-encoded interactivity payloads.
 */
export class SlackRequestSender {
  constructor(
    private readonly options: {
      url: string;
      signingSecret: string;
      teamId: string;
      botUserId?: string;
      apiAppId?: string;
    },
  ) {}

  /** POSTs `body` as Slack would, signed unless `signature` is given. */
  async raw(
    body: string,
    contentType: string,
    overrides: { signature?: string; timestamp?: number } = {},
  ): Promise<SlackResponse> {
    const timestamp = overrides.timestamp ?? Math.floor(Date.now() / 1000);
    const res = await fetch(this.options.url, {
      method: "POST",
      headers: {
        "content-type": contentType,
        "x-slack-request-timestamp": String(timestamp),
        "x-slack-signature":
          overrides.signature ?? signSlackRequest(this.options.signingSecret, timestamp, body),
      },
      body,
    });
    return { status: res.status, text: await res.text() };
  }

  /** Wraps `event` in an `event_callback` envelope and POSTs it as JSON. */
  event(event: Record<string, unknown>, overrides: { signature?: string } = {}): Promise<SlackResponse> {
    return this.raw(JSON.stringify(this.eventCallback(event)), "application/json", overrides);
  }

  /** The `event_callback` body Slack would send for `event` (also the Socket Mode payload). */
  eventCallback(event: Record<string, unknown>): Record<string, unknown> {
    return {
      token: "legacy-verification-token",
      team_id: this.options.teamId,
      api_app_id: this.options.apiAppId ?? "A0FAKE",
      event: { event_ts: event.ts ?? slackTs(), ...event },
      type: "event_callback",
      event_id: `Ev${randomUUID().replace(/-/g, "").slice(0, 10).toUpperCase()}`,
      event_time: Math.floor(Date.now() / 1000),
      authorizations: [
        {
          team_id: this.options.teamId,
          user_id: this.options.botUserId ?? "U0BOT",
          is_bot: true,
          is_enterprise_install: false,
        },
      ],
    };
  }

  urlVerification(challenge: string): Promise<SlackResponse> {
    return this.raw(
      JSON.stringify({ token: "legacy-verification-token", challenge, type: "url_verification" }),
      "application/json",
    );
  }

  /** POSTs an interactivity payload (e.g. `block_actions`) form-encoded as `payload=<json>`. */
  interaction(payload: Record<string, unknown>): Promise<SlackResponse> {
    return this.raw(
      `payload=${encodeURIComponent(JSON.stringify(payload))}`,
      "application/x-www-form-urlencoded",
    );
  }
}

/** A `block_actions` payload for a press of a button whose `value` is `value`. */
export function blockActionPayload(input: {
  teamId: string;
  userId: string;
  channelId: string;
  messageTs: string;
  value: string;
  threadTs?: string;
  actionId?: string;
}): Record<string, unknown> {
  return {
    type: "block_actions",
    team: { id: input.teamId, domain: "fake-workspace" },
    user: { id: input.userId, username: "alice", name: "alice", team_id: input.teamId },
    api_app_id: "A0FAKE",
    token: "legacy-verification-token",
    container: {
      type: "message",
      message_ts: input.messageTs,
      channel_id: input.channelId,
      is_ephemeral: false,
      ...(input.threadTs ? { thread_ts: input.threadTs } : {}),
    },
    trigger_id: "1.2.3",
    channel: { id: input.channelId, name: "general" },
    message: {
      type: "message",
      user: "U0BOT",
      bot_id: "B0BOT",
      text: "Approve?",
      ts: input.messageTs,
      ...(input.threadTs ? { thread_ts: input.threadTs } : {}),
    },
    response_url: "https://hooks.slack.com/actions/T0FAKE/1/abc",
    actions: [
      {
        action_id: input.actionId ?? "hermes_button_0_0",
        block_id: "hermes_actions_0",
        text: { type: "plain_text", text: "Approve", emoji: true },
        value: input.value,
        type: "button",
        action_ts: slackTs(),
      },
    ],
  };
}

/** A `message` event in a DM (`channel_type: "im"`); `extra` overrides any field. */
export function dmEvent(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: "message",
    channel: "D0DM",
    channel_type: "im",
    user: "U0ALICE",
    text,
    ts: slackTs(),
    ...extra,
  };
}

/** A `message` event in a public channel; `extra` overrides any field. */
export function channelEvent(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: "message",
    channel: "C0GENERAL",
    channel_type: "channel",
    user: "U0ALICE",
    text,
    ts: slackTs(),
    ...extra,
  };
}

/** An `app_mention` event (which carries no `channel_type`); `extra` overrides any field. */
export function mentionEvent(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: "app_mention", channel: "C0GENERAL", user: "U0ALICE", text, ts: slackTs(), ...extra };
}
