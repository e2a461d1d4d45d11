/**
 * A loopback stand-in for `signal-cli daemon --http`: the same three routes and wire shapes.
 *
 * - `GET /api/v1/check`: 200 while "healthy".
 * - `GET /api/v1/events?account=…`: server-sent events `id:<start>-<seq>` / `event:receive` /
 *   `data:{"envelope":…,"account":…}`, as signal-cli's SseEventBuffer writes them. A client that
 *   reconnects with `Last-Event-ID` first gets the buffered events after it; an id it does not
 *   know (from an earlier run, or too old) gets the whole buffer, as signal-cli does.
 * - `POST /api/v1/rpc`: JSON-RPC 2.0 `send`, `sendTyping`, `sendReaction`, `getAttachment`;
 *   anything else is a -32601 error. `send` takes `recipient` (a list) or `groupId`, `message`,
 *   `textStyle`, `quoteTimestamp`/`quoteAuthor`, `attachments` (paths or data URIs) and answers
 *   `{timestamp, results:[{recipientAddress, type}]}`.
 *
 * Tests push inbound envelopes with `receive`, read what the gateway called from `calls`, and
 * break the event stream with `dropStreams` (optionally forgetting event ids, as a daemon whose
 * buffer moved on would).
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";

export interface RpcCall {
  method: string;
  params: Record<string, unknown>;
  /** For `send`: the attachments as the daemon decoded them. */
  files?: Array<{ contentType: string; fileName?: string; bytes: Buffer }>;
  at: number;
}

export interface FakeSignalCli {
  readonly url: string;
  readonly account: string;
  readonly calls: RpcCall[];
  /** `Last-Event-ID` headers of each event-stream connection, in order (undefined: none sent). */
  readonly connections: Array<string | undefined>;
  /** Queues an inbound envelope (as signal-cli receives it) and streams it to connected clients. */
  receive(envelope: Record<string, unknown>): void;
  /** A DM from `number` with text (and attachments added with `attachment`). */
  dm(from: string, text: string, extra?: Record<string, unknown>): number;
  /** A group message. */
  group(from: string, groupId: string, text: string, extra?: Record<string, unknown>): number;
  /** Stores bytes the gateway can fetch with getAttachment; returns the attachment entry for an envelope. */
  attachment(bytes: Buffer, contentType: string, fileName?: string): Record<string, unknown>;
  /** Ends every open event stream; with `forgetIds` the ids handed out so far become unknown. */
  dropStreams(options?: { forgetIds?: boolean }): void;
  /** Numbers whose sends fail as UNREGISTERED_FAILURE. */
  unregistered: Set<string>;
  waitForCall(
    method: string,
    predicate?: (call: RpcCall) => boolean,
    timeoutMs?: number,
    after?: number,
  ): Promise<RpcCall>;
  waitForConnections(count: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

interface Buffered {
  seq: number;
  data: string;
}

function parseDataUri(uri: string): { contentType: string; fileName?: string; bytes: Buffer } {
  const m = /^data:([^;,]+)((?:;[^;,]+)*);base64,(.*)$/s.exec(uri);
  if (!m) throw new Error(`not a data URI: ${uri.slice(0, 40)}`);
  const name = /;filename=([^;]+)/.exec(m[2] ?? "")?.[1];
  return {
    contentType: m[1] ?? "",
    ...(name ? { fileName: decodeURIComponent(name) } : {}),
    bytes: Buffer.from(m[3] ?? "", "base64"),
  };
}

export async function startFakeSignalCli(account = "+15550000001"): Promise<FakeSignalCli> {
  let idPrefix = `${Date.now()}-`;
  let seq = 0;
  let clock = Date.now();
  const buffer: Buffered[] = [];
  const clients = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  const calls: RpcCall[] = [];
  const connections: Array<string | undefined> = [];
  const attachments = new Map<string, Buffer>();
  const unregistered = new Set<string>();
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...waiters]) w();
  };
  const nextTimestamp = () => {
    clock = Math.max(clock + 1, Date.now());
    return clock;
  };

  const writeEvent = (res: ServerResponse, e: Buffered) =>
    res.write(`id:${idPrefix}${e.seq}\nevent:receive\ndata:${e.data}\n\n`);

  function events(req: IncomingMessage, res: ServerResponse, url: URL): void {
    if (url.searchParams.get("account") !== account) {
      res.writeHead(400).end("unknown account");
      return;
    }
    const last = req.headers["last-event-id"];
    const lastId = typeof last === "string" ? last : undefined;
    connections.push(lastId);
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.flushHeaders();
    if (lastId !== undefined) {
      const known = lastId.startsWith(idPrefix) ? Number(lastId.slice(idPrefix.length)) : 0;
      for (const e of buffer) if (e.seq > known) writeEvent(res, e);
    }
    clients.add(res);
    res.on("close", () => clients.delete(res));
    notify();
  }

  function rpcResult(id: unknown, result: unknown) {
    return { jsonrpc: "2.0", id, result };
  }
  function rpcError(id: unknown, code: number, message: string) {
    return { jsonrpc: "2.0", id, error: { code, message } };
  }

  function handleRpc(body: Record<string, unknown>): Record<string, unknown> {
    const id = body["id"];
    const method = String(body["method"] ?? "");
    const params = (body["params"] ?? {}) as Record<string, unknown>;
    if (params["account"] !== account) return rpcError(id, -32602, "Specified account does not exist");
    const call: RpcCall = { method, params, at: Date.now() };
    const route = () => {
      const recipient = params["recipient"];
      const groupId = params["groupId"];
      if (typeof groupId === "string" && groupId) return { group: groupId };
      if (Array.isArray(recipient) && recipient.length > 0) return { to: recipient.map(String) };
      if (typeof recipient === "string" && recipient) return { to: [recipient] };
      return undefined;
    };
    switch (method) {
      case "send": {
        const r = route();
        if (!r) return rpcError(id, -32602, "No recipients given");
        const files: RpcCall["files"] = [];
        for (const a of Array.isArray(params["attachments"]) ? params["attachments"] : []) {
          const s = String(a);
          files.push(
            s.startsWith("data:")
              ? parseDataUri(s)
              : { contentType: "", bytes: readFileSync(s), fileName: s },
          );
        }
        if (typeof params["message"] !== "string" && files.length === 0)
          return rpcError(id, -32602, "No message given");
        call.files = files;
        calls.push(call);
        notify();
        const timestamp = nextTimestamp();
        const results = r.to
          ? r.to.map((n) => ({
              recipientAddress: { number: n },
              type: unregistered.has(n) ? "UNREGISTERED_FAILURE" : "SUCCESS",
            }))
          : [{ recipientAddress: { number: "+15559999999" }, type: "SUCCESS" }];
        return rpcResult(id, { timestamp, results });
      }
      case "sendTyping":
      case "sendReaction":
        if (!route()) return rpcError(id, -32602, "No recipients given");
        calls.push(call);
        notify();
        return rpcResult(id, { timestamp: nextTimestamp(), results: [] });
      case "getAttachment": {
        calls.push(call);
        const bytes = attachments.get(String(params["id"] ?? ""));
        if (!bytes) return rpcError(id, -1, "Attachment file not found");
        return rpcResult(id, { data: bytes.toString("base64") });
      }
      default:
        calls.push(call);
        return rpcError(id, -32601, "Method not implemented");
    }
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (req.method === "GET" && url.pathname === "/api/v1/check") {
      res.writeHead(200, { "content-type": "application/json" }).end('{"versions":{"signal-cli":"0.13.x"}}');
      return;
    }
    if (req.method === "GET" && url.pathname === "/api/v1/events") return events(req, res, url);
    if (req.method === "POST" && url.pathname === "/api/v1/rpc") {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        let answer: Record<string, unknown>;
        try {
          answer = handleRpc(JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>);
        } catch (err) {
          answer = rpcError(null, -32700, `Parse error: ${String(err)}`);
        }
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
      });
      return;
    }
    res.writeHead(404).end();
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;

  function receive(envelope: Record<string, unknown>): void {
    const e = { seq: ++seq, data: JSON.stringify({ envelope, account }) };
    buffer.push(e);
    if (buffer.length > 1000) buffer.shift();
    for (const res of clients) writeEvent(res, e);
  }

  function message(from: string, data: Record<string, unknown>): number {
    const timestamp = nextTimestamp();
    receive({
      source: from,
      sourceNumber: from,
      sourceUuid: `uuid-${from.replace(/\D/g, "")}`,
      sourceName: `Person ${from.slice(-4)}`,
      sourceDevice: 1,
      timestamp,
      serverReceivedTimestamp: timestamp,
      dataMessage: { timestamp, expiresInSeconds: 0, viewOnce: false, ...data },
    });
    return timestamp;
  }

  let attachmentSeq = 0;
  return {
    url: `http://127.0.0.1:${port}`,
    account,
    calls,
    connections,
    unregistered,
    receive,
    dm: (from, text, extra = {}) => message(from, { message: text, ...extra }),
    group: (from, groupId, text, extra = {}) =>
      message(from, {
        message: text,
        groupInfo: { groupId, groupName: "Test group", type: "DELIVER" },
        ...extra,
      }),
    attachment(bytes, contentType, fileName) {
      const id = `att${++attachmentSeq}.bin`;
      attachments.set(id, bytes);
      return { contentType, filename: fileName ?? null, id, size: bytes.length };
    },
    dropStreams(options = {}) {
      if (options.forgetIds) idPrefix = `${Date.now() + 1}-`;
      for (const res of clients) res.socket?.destroy();
      clients.clear();
    },
    waitForCall(method, predicate = () => true, timeoutMs = 20_000, after = 0) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = calls.find((c) => c.method === method && c.at >= after && predicate(c));
          if (found) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `no ${method} call matched within ${timeoutMs} ms; calls: ${JSON.stringify(calls.map((c) => [c.method, c.params["message"]]))}`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    waitForConnections(count, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (connections.length >= count && clients.size > 0) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve();
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`only ${connections.length} event-stream connections within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async stop() {
      for (const res of clients) res.destroy();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
