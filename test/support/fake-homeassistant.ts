/**
 * A loopback stand-in for Home Assistant: the REST routes and the WebSocket API a client with a
 * long-lived access token uses, in HA's wire shapes.
 *
 * - REST with `Authorization: Bearer <token>` (else 401 `401: Unauthorized`): `GET /api/`,
 *   `GET /api/states`, `POST /api/services/<domain>/<service>` (persistent_notification.create
 *   keeps notifications by `notification_id`, replacing one created again), `POST
 *   /api/events/<event_type>`.
 * - `/api/websocket`: `auth_required` → `auth` → `auth_ok` | `auth_invalid`; `subscribe_events`
 *   (answered with a `result`), then `{id, type: "event", event}` frames for each subscription;
 *   `ping` → `pong`. HA keeps no events for a client that was away, and neither does this.
 *
 * Tests change entity states with `setState` (a `state_changed` event to subscribers), fire
 * events with `fire`, read `notifications`/`fired`, and drop connections with `dropSockets`.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";

export interface HaStateObject {
  entity_id: string;
  state: string;
  attributes: Record<string, unknown>;
  last_changed: string;
  context: { id: string; parent_id: null; user_id: string | null };
}

export interface FakeHomeAssistant {
  readonly url: string;
  readonly token: string;
  /** Notifications by id, in creation order (a replaced one keeps its place). */
  readonly notifications: Map<string, { title?: string; message: string; updates: number }>;
  readonly fired: Array<{ event_type: string; data: Record<string, unknown> }>;
  /** Subscriptions of the current connections. */
  readonly subscriptions: string[];
  /** How many WebSocket connections authenticated. */
  authenticated: number;
  setState(entityId: string, state: string, attributes?: Record<string, unknown>, quiet?: boolean): void;
  fire(eventType: string, data: Record<string, unknown>, userId?: string | null): void;
  dropSockets(): void;
  waitFor<T>(read: () => T | undefined, what: string, timeoutMs?: number): Promise<T>;
  waitForNotification(predicate: (message: string) => boolean, timeoutMs?: number): Promise<string>;
  stop(): Promise<void>;
}

export async function startFakeHomeAssistant(
  token = "ha-long-lived-token-0123456789",
): Promise<FakeHomeAssistant> {
  const states = new Map<string, HaStateObject>();
  const notifications: FakeHomeAssistant["notifications"] = new Map();
  const fired: FakeHomeAssistant["fired"] = [];
  const subscribers = new Map<WebSocket, Map<number, string>>();
  const sockets = new Set<Socket>();
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of [...waiters]) w();
  };
  const ctxId = () => randomBytes(13).toString("hex");

  function broadcast(eventType: string, data: Record<string, unknown>, userId: string | null = null): void {
    const event = {
      event_type: eventType,
      data,
      origin: "LOCAL",
      time_fired: new Date().toISOString(),
      context: { id: ctxId(), parent_id: null, user_id: userId },
    };
    for (const [ws, subs] of subscribers) {
      for (const [id, type] of subs) {
        if (type === eventType || type === "*") ws.send(JSON.stringify({ id, type: "event", event }));
      }
    }
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = new URL(req.url ?? "/", "http://localhost").pathname;
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      if (req.headers.authorization !== `Bearer ${token}`) {
        res.writeHead(401, { "content-type": "text/plain" });
        return void res.end("401: Unauthorized");
      }
      let body: Record<string, unknown> = {};
      try {
        body =
          chunks.length > 0 ? (JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>) : {};
      } catch {
        return json(400, { message: "Data should be valid JSON." });
      }
      if (req.method === "GET" && path === "/api/") return json(200, { message: "API running." });
      if (req.method === "GET" && path === "/api/states") return json(200, [...states.values()]);
      const service = /^\/api\/services\/([^/]+)\/([^/]+)$/.exec(path);
      if (req.method === "POST" && service) {
        if (service[1] === "persistent_notification" && service[2] === "create") {
          const id = String(body["notification_id"] ?? ctxId());
          const old = notifications.get(id);
          notifications.set(id, {
            ...(typeof body["title"] === "string" ? { title: body["title"] } : {}),
            message: String(body["message"] ?? ""),
            updates: (old?.updates ?? -1) + 1,
          });
          wake();
          return json(200, []);
        }
        return json(400, { message: `Service ${service[1]}.${service[2]} not found.` });
      }
      const event = /^\/api\/events\/([^/]+)$/.exec(path);
      if (req.method === "POST" && event) {
        fired.push({ event_type: event[1] ?? "", data: body });
        broadcast(event[1] ?? "", body);
        wake();
        return json(200, { message: `Event ${event[1]} fired.` });
      }
      json(404, { message: "Not found" });
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on("upgrade", (req, socket, head) => {
    if (new URL(req.url ?? "/", "http://localhost").pathname !== "/api/websocket")
      return void socket.destroy();
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.send(JSON.stringify({ type: "auth_required", ha_version: "2025.1.0" }));
      let authed = false;
      ws.on("message", (raw) => {
        const msg = JSON.parse(raw.toString()) as Record<string, unknown>;
        if (!authed) {
          if (msg["type"] === "auth" && msg["access_token"] === token) {
            authed = true;
            api.authenticated++;
            subscribers.set(ws, new Map());
            ws.send(JSON.stringify({ type: "auth_ok", ha_version: "2025.1.0" }));
            wake();
          } else {
            ws.send(JSON.stringify({ type: "auth_invalid", message: "Invalid access token or password" }));
            ws.close();
          }
          return;
        }
        const id = Number(msg["id"]);
        if (msg["type"] === "subscribe_events") {
          subscribers.get(ws)?.set(id, String(msg["event_type"] ?? "*"));
          ws.send(JSON.stringify({ id, type: "result", success: true, result: null }));
          wake();
        } else if (msg["type"] === "ping") ws.send(JSON.stringify({ id, type: "pong" }));
        else
          ws.send(JSON.stringify({ id, type: "result", success: false, error: { code: "unknown_command" } }));
      });
      ws.on("close", () => subscribers.delete(ws));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));

  function waitFor<T>(read: () => T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const check = () => {
        const value = read();
        if (value === undefined) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve(value);
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        const seen = [...notifications.values()].map((n) => n.message);
        reject(new Error(`timed out waiting for ${what}; notifications: ${JSON.stringify(seen)}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  }

  const api: FakeHomeAssistant = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    token,
    notifications,
    fired,
    get subscriptions() {
      return [...subscribers.values()].flatMap((s) => [...s.values()]);
    },
    authenticated: 0,
    setState(entityId, state, attributes = {}, quiet = false) {
      const old = states.get(entityId) ?? null;
      const next: HaStateObject = {
        entity_id: entityId,
        state,
        attributes: { ...(old?.attributes ?? {}), ...attributes },
        last_changed: new Date().toISOString(),
        context: { id: ctxId(), parent_id: null, user_id: null },
      };
      states.set(entityId, next);
      if (!quiet) broadcast("state_changed", { entity_id: entityId, old_state: old, new_state: next });
    },
    fire: (eventType, data, userId = null) => broadcast(eventType, data, userId),
    dropSockets() {
      for (const ws of wss.clients) ws.terminate();
    },
    waitFor,
    waitForNotification: (predicate, timeoutMs) =>
      waitFor(
        () => [...notifications.values()].map((n) => n.message).find(predicate),
        "a notification",
        timeoutMs,
      ),
    async stop() {
      for (const ws of wss.clients) ws.terminate();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return api;
}
