/**
 * A loopback Matrix homeserver speaking the client-server API routes matrix-js-sdk 37 uses, so
 * both the gateway's bot and a test's user can be real SDK clients (with real Rust crypto).
 *
 * - Accounts: `addUser` makes a user with a password; `POST /login` (m.login.password) issues a
 *   token and device; `GET /account/whoami`.
 * - Rooms: `createRoom` (with `invite`, `initial_state`, `is_direct`), `invite`, `join`, `leave`,
 *   `send` (idempotent per transaction id), `state` (read and write), `members`, `typing`.
 * - Sync: `GET /sync` long-polls on a global stream position; joined rooms carry their current
 *   state and the timeline after `since`; invites carry stripped state; to-device messages stay
 *   queued until a later `since` acknowledges them; `device_lists.changed` and one-time key counts.
 * - End-to-end keys: `keys/upload`, `keys/query`, `keys/claim` (one-time keys, then the fallback
 *   key), `sendToDevice`, cross-signing uploads accepted, no key backup (404 as a server without).
 * - Media: `POST /_matrix/media/v3/upload`, authenticated `GET /_matrix/client/v1/media/download`.
 *
 * Test hooks: every request is recorded in `requests`; `roomEvents` returns what a room holds (as
 * sent: encrypted rooms show only ciphertext); `dropUser` destroys a user's open syncs and refuses
 * its next sync requests, as a cut connection would.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { FakeMatrixKeys } from "./fake-matrix-keys.js";

export const SERVER_NAME = "fake.test";

export interface MatrixEvent {
  event_id: string;
  room_id: string;
  type: string;
  sender: string;
  origin_server_ts: number;
  content: Record<string, unknown>;
  state_key?: string;
  unsigned?: Record<string, unknown>;
}

export interface RecordedRequest {
  method: string;
  path: string;
  userId: string | undefined;
  body: unknown;
  at: number;
}

interface Session {
  userId: string;
  deviceId: string;
}

interface Room {
  id: string;
  /** Stream position of each event, in order. */
  events: Array<{ pos: number; event: MatrixEvent }>;
  /** `${type}\u0000${stateKey}` → event. */
  state: Map<string, MatrixEvent>;
}

export interface FakeMatrix {
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Creates an account; returns its user id (`@name:fake.test`). */
  addUser(localpart: string, password: string): string;
  /** A room's events (in order), optionally only those matching. */
  roomEvents(roomId: string): MatrixEvent[];
  /** Resolves with the first request (recorded from now on, or already at/after `after`) matching. */
  waitForRequest(
    predicate: (r: RecordedRequest) => boolean,
    timeoutMs?: number,
    after?: number,
  ): Promise<RecordedRequest>;
  /** Resolves with the first event in the room that matches, waiting for it to arrive. */
  waitForRoomEvent(
    roomId: string,
    predicate: (e: MatrixEvent) => boolean,
    timeoutMs?: number,
  ): Promise<MatrixEvent>;
  /** Cuts a user's sync: open long-polls are destroyed, and so are its next `refuse` sync requests. */
  dropUser(userId: string, refuse?: number): void;
  /** How many `/sync` requests a user has made. */
  syncCount(userId: string): number;
  stop(): Promise<void>;
}

const json = (res: ServerResponse, status: number, body: unknown): void => {
  const data = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { "content-type": "application/json", "content-length": data.length });
  res.end(data);
};

const matrixError = (res: ServerResponse, status: number, errcode: string, error: string): void =>
  json(res, status, { errcode, error });

export async function startFakeMatrix(): Promise<FakeMatrix> {
  const passwords = new Map<string, string>();
  const sessions = new Map<string, Session>();
  const rooms = new Map<string, Room>();
  const media = new Map<string, { bytes: Buffer; contentType: string; name: string }>();
  const txns = new Map<string, string>();
  const syncs = new Map<string, number>();
  const requests: RecordedRequest[] = [];
  const refusing = new Map<string, number>();
  const openSyncs = new Map<Socket, string>();
  let waiters: Array<() => void> = [];
  let requestWaiters: Array<() => void> = [];
  let pos = 1;
  let counter = 0;

  const nextId = (prefix: string): string =>
    `${prefix}${(++counter).toString(36)}${randomBytes(3).toString("hex")}`;
  const notify = (): void => {
    const current = waiters;
    waiters = [];
    for (const wake of current) wake();
  };

  const keys = new FakeMatrixKeys(() => {
    pos++;
    notify();
    return pos;
  });

  function addEvent(
    room: Room,
    partial: Omit<MatrixEvent, "event_id" | "room_id" | "origin_server_ts">,
  ): MatrixEvent {
    const event: MatrixEvent = {
      event_id: `$${nextId("ev")}`,
      room_id: room.id,
      origin_server_ts: Date.now(),
      unsigned: {},
      ...partial,
    };
    room.events.push({ pos: ++pos, event });
    if (event.state_key !== undefined) room.state.set(`${event.type}\u0000${event.state_key}`, event);
    notify();
    return event;
  }

  const membership = (room: Room, userId: string): string | undefined =>
    room.state.get(`m.room.member\u0000${userId}`)?.content["membership"] as string | undefined;

  /** Users who share a joined room with `userId` (and the user itself). */
  function peers(userId: string): Set<string> {
    const out = new Set([userId]);
    for (const room of rooms.values()) {
      if (membership(room, userId) !== "join") continue;
      for (const event of room.state.values())
        if (event.type === "m.room.member" && event.state_key) out.add(event.state_key);
    }
    return out;
  }

  function setMembership(
    room: Room,
    sender: string,
    target: string,
    value: string,
    extra: Record<string, unknown> = {},
  ): MatrixEvent {
    const event = addEvent(room, {
      type: "m.room.member",
      sender,
      state_key: target,
      content: { membership: value, displayname: target.slice(1).split(":")[0], ...extra },
    });
    if (value === "join") keys.changed(target, pos);
    return event;
  }

  function buildSync(
    session: Session,
    since: number | undefined,
  ): { body: Record<string, unknown>; empty: boolean } {
    const { userId, deviceId } = session;
    const join: Record<string, unknown> = {};
    const invite: Record<string, unknown> = {};
    const leave: Record<string, unknown> = {};
    let empty = true;
    for (const room of rooms.values()) {
      const member = room.state.get(`m.room.member\u0000${userId}`);
      if (!member) continue;
      const memberPos = room.events.find((e) => e.event.event_id === member.event_id)?.pos ?? 0;
      const value = member.content["membership"];
      if (value === "invite") {
        if (since !== undefined && memberPos <= since) continue;
        const stripped = [...room.state.values()]
          .filter(
            (e) =>
              ["m.room.create", "m.room.name", "m.room.join_rules", "m.room.encryption"].includes(e.type) ||
              e.event_id === member.event_id,
          )
          .map((e) => ({ type: e.type, state_key: e.state_key, sender: e.sender, content: e.content }));
        invite[room.id] = { invite_state: { events: stripped } };
        empty = false;
      } else if (value === "join") {
        const fresh = since === undefined || memberPos > since;
        const timeline = room.events.filter((e) => since === undefined || e.pos > since).map((e) => e.event);
        const shown = fresh && since === undefined ? timeline.slice(-20) : timeline;
        if (!fresh && shown.length === 0) continue;
        const inTimeline = new Set(shown.map((e) => e.event_id));
        join[room.id] = {
          timeline: {
            events: shown,
            limited: fresh && shown.length < timeline.length,
            prev_batch: `p${pos}`,
          },
          state: { events: fresh ? [...room.state.values()].filter((e) => !inTimeline.has(e.event_id)) : [] },
          ephemeral: { events: [] },
          account_data: { events: [] },
          unread_notifications: { highlight_count: 0, notification_count: 0 },
          summary: {},
        };
        empty = false;
      } else if (value === "leave" && since !== undefined && memberPos > since) {
        leave[room.id] = { timeline: { events: [member] }, state: { events: [] } };
        empty = false;
      }
    }
    const e2ee = keys.syncPart(userId, deviceId, since, peers(userId));
    return {
      empty: empty && e2ee.empty,
      body: {
        next_batch: String(pos),
        rooms: { join, invite, leave },
        ...e2ee.body,
        account_data: { events: [] },
        presence: { events: [] },
      },
    };
  }

  async function sync(
    req: IncomingMessage,
    res: ServerResponse,
    session: Session,
    query: URLSearchParams,
  ): Promise<void> {
    syncs.set(session.userId, (syncs.get(session.userId) ?? 0) + 1);
    const sinceRaw = query.get("since");
    const since = sinceRaw ? Number(sinceRaw) : undefined;
    const timeout = Math.min(Number(query.get("timeout") ?? 0) || 0, 30_000);
    const deadline = Date.now() + timeout;
    openSyncs.set(req.socket, session.userId);
    try {
      for (;;) {
        const result = buildSync(session, since);
        if (!result.empty || Date.now() >= deadline || req.socket.destroyed) {
          if (!req.socket.destroyed) json(res, 200, result.body);
          return;
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
          req.socket.once("close", () => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    } finally {
      openSyncs.delete(req.socket);
    }
  }

  const readBody = async (req: IncomingMessage): Promise<Buffer> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };

  function login(body: Record<string, unknown>, res: ServerResponse): void {
    const identifier = (body["identifier"] ?? {}) as Record<string, unknown>;
    const raw = String(identifier["user"] ?? body["user"] ?? "");
    const userId = raw.startsWith("@") ? raw : `@${raw}:${SERVER_NAME}`;
    if (body["type"] !== "m.login.password" || passwords.get(userId) !== body["password"]) {
      matrixError(res, 403, "M_FORBIDDEN", "Invalid username or password");
      return;
    }
    const deviceId = typeof body["device_id"] === "string" ? body["device_id"] : nextId("DEV").toUpperCase();
    const token = `syt_${nextId("tok")}`;
    sessions.set(token, { userId, deviceId });
    json(res, 200, { user_id: userId, access_token: token, device_id: deviceId, home_server: SERVER_NAME });
  }

  function createRoom(session: Session, body: Record<string, unknown>): string {
    const room: Room = { id: `!${nextId("room")}:${SERVER_NAME}`, events: [], state: new Map() };
    rooms.set(room.id, room);
    const me = session.userId;
    addEvent(room, {
      type: "m.room.create",
      sender: me,
      state_key: "",
      content: { creator: me, room_version: "10" },
    });
    setMembership(room, me, me, "join");
    addEvent(room, {
      type: "m.room.power_levels",
      sender: me,
      state_key: "",
      content: { users: { [me]: 100 }, users_default: 0, events_default: 0, state_default: 50, invite: 0 },
    });
    const joinRule = body["preset"] === "public_chat" ? "public" : "invite";
    addEvent(room, {
      type: "m.room.join_rules",
      sender: me,
      state_key: "",
      content: { join_rule: joinRule },
    });
    addEvent(room, {
      type: "m.room.history_visibility",
      sender: me,
      state_key: "",
      content: { history_visibility: "shared" },
    });
    if (typeof body["name"] === "string")
      addEvent(room, { type: "m.room.name", sender: me, state_key: "", content: { name: body["name"] } });
    for (const s of (body["initial_state"] as Array<Record<string, unknown>> | undefined) ?? []) {
      addEvent(room, {
        type: String(s["type"]),
        sender: me,
        state_key: String(s["state_key"] ?? ""),
        content: (s["content"] ?? {}) as Record<string, unknown>,
      });
    }
    for (const invitee of (body["invite"] as string[] | undefined) ?? []) {
      setMembership(room, me, invitee, "invite", body["is_direct"] ? { is_direct: true } : {});
    }
    return room.id;
  }

  type Reply = (status: number, body: unknown) => true;
  type Json = Record<string, unknown>;

  /** `/rooms/{id}/...` for a member (or someone invited, for join). */
  function roomRoute(
    method: string,
    room: Room,
    rest: string,
    me: string,
    token: string,
    body: Json,
    query: URLSearchParams,
    reply: Reply,
  ): true {
    const fail = (status: number, errcode: string, error: string) => reply(status, { errcode, error });
    const joined = membership(room, me) === "join";
    if (rest === "invite" || rest === "kick" || rest === "ban") {
      if (!joined) return fail(403, "M_FORBIDDEN", "Not in the room");
      setMembership(
        room,
        me,
        String(body["user_id"]),
        rest === "invite" ? "invite" : rest === "kick" ? "leave" : "ban",
      );
      return reply(200, {});
    }
    if (rest === "leave") {
      setMembership(room, me, me, "leave");
      return reply(200, {});
    }
    if (!joined) return fail(403, "M_FORBIDDEN", `${me} is not in room ${room.id}`);
    const send = /^send\/([^/]+)\/(.+)$/.exec(rest);
    if (send) {
      const key = `${token}|${send[2]}`;
      const known = txns.get(key);
      if (known) return reply(200, { event_id: known });
      const event = addEvent(room, { type: send[1] ?? "", sender: me, content: body });
      txns.set(key, event.event_id);
      return reply(200, { event_id: event.event_id });
    }
    const state = /^state\/([^/]+)(?:\/(.*))?$/.exec(rest);
    if (state) {
      const stateKey = state[2] ?? "";
      if (method === "PUT") {
        const event = addEvent(room, {
          type: state[1] ?? "",
          sender: me,
          state_key: stateKey,
          content: body,
        });
        return reply(200, { event_id: event.event_id });
      }
      const event = room.state.get(`${state[1]}\u0000${stateKey}`);
      return event ? reply(200, event.content) : fail(404, "M_NOT_FOUND", "Event not found.");
    }
    if (rest === "state") return reply(200, [...room.state.values()]);
    if (rest === "members")
      return reply(200, { chunk: [...room.state.values()].filter((e) => e.type === "m.room.member") });
    if (rest === "joined_members") {
      const joinedMembers: Json = {};
      for (const e of room.state.values())
        if (e.type === "m.room.member" && e.content["membership"] === "join")
          joinedMembers[e.state_key ?? ""] = {};
      return reply(200, { joined: joinedMembers });
    }
    if (rest.startsWith("typing/") || rest.startsWith("receipt/") || rest === "read_markers")
      return reply(200, {});
    if (rest === "messages") return reply(200, { chunk: [], start: query.get("from") ?? "" });
    const single = /^event\/(.+)$/.exec(rest);
    if (single) {
      const event = room.events.find((e) => e.event.event_id === single[1])?.event;
      return event ? reply(200, event) : fail(404, "M_NOT_FOUND", "Event not found.");
    }
    if (rest.startsWith("relations/") || rest.startsWith("threads")) return reply(200, { chunk: [] });
    return fail(404, "M_UNRECOGNIZED", `Unrecognized request: ${method} /rooms/${room.id}/${rest}`);
  }

  /** Everything under `/_matrix/client/v3` that needs a session, except sync. */
  function clientRoute(
    method: string,
    path: string,
    session: Session,
    token: string,
    body: Json,
    query: URLSearchParams,
    reply: Reply,
  ): true {
    const fail = (status: number, errcode: string, error: string) => reply(status, { errcode, error });
    const me = session.userId;
    if (path === "/account/whoami") return reply(200, { user_id: me, device_id: session.deviceId });
    if (path === "/logout") {
      sessions.delete(token);
      return reply(200, {});
    }
    if (path === "/capabilities") return reply(200, { capabilities: {} });
    if (path.startsWith("/pushrules")) return reply(200, { global: {} });
    if (/^\/user\/[^/]+\/filter(?:\/.*)?$/.test(path))
      return reply(200, method === "POST" ? { filter_id: "1" } : {});
    if (/^\/user\/[^/]+\/(?:rooms\/[^/]+\/)?account_data\/.+$/.test(path)) {
      return method === "PUT" ? reply(200, {}) : fail(404, "M_NOT_FOUND", "Account data not found");
    }
    if (path.startsWith("/profile/"))
      return reply(200, method === "GET" ? { displayname: path.split("/")[2]?.slice(1).split(":")[0] } : {});
    if (path.startsWith("/presence/")) return reply(200, {});
    if (path === "/room_keys/version") return fail(404, "M_NOT_FOUND", "No current backup version");
    if (path === "/createRoom") return reply(200, { room_id: createRoom(session, body) });
    if (path === "/keys/upload") return reply(200, keys.upload(me, session.deviceId, body));
    if (path === "/keys/query") return reply(200, keys.query(me, body));
    if (path === "/keys/claim") return reply(200, keys.claim(body));
    if (path === "/keys/changes") return reply(200, { changed: [], left: [] });
    if (path === "/keys/device_signing/upload") {
      keys.uploadCrossSigning(me, body);
      return reply(200, {});
    }
    if (path === "/keys/signatures/upload") return reply(200, { failures: {} });
    const toDevice = /^\/sendToDevice\/([^/]+)\/(.+)$/.exec(path);
    if (toDevice) {
      const key = `${token}|td|${toDevice[2]}`;
      if (!txns.has(key)) {
        txns.set(key, "1");
        keys.sendToDevice(me, toDevice[1] ?? "", body);
      }
      return reply(200, {});
    }
    const join = /^\/(?:join|rooms)\/([^/]+)(?:\/join)?$/.exec(path);
    if (join && method === "POST") {
      const room = rooms.get(join[1] ?? "");
      if (!room) return fail(404, "M_NOT_FOUND", "No such room");
      const current = membership(room, me);
      const rule = room.state.get("m.room.join_rules\u0000")?.content["join_rule"];
      if (current !== "invite" && current !== "join" && rule !== "public") {
        return fail(403, "M_FORBIDDEN", "You are not invited to this room.");
      }
      if (current !== "join") setMembership(room, me, me, "join");
      return reply(200, { room_id: room.id });
    }
    const inRoom = /^\/rooms\/([^/]+)\/(.+)$/.exec(path);
    if (inRoom) {
      const room = rooms.get(inRoom[1] ?? "");
      if (!room) return fail(404, "M_NOT_FOUND", "Unknown room");
      return roomRoute(method, room, inRoom[2] ?? "", me, token, body, query, reply);
    }
    return fail(404, "M_UNRECOGNIZED", `Unrecognized request: ${method} ${path}`);
  }

  /** Upload, config and (authenticated or legacy) download. */
  function mediaRoute(
    method: string,
    path: string,
    raw: Buffer,
    req: IncomingMessage,
    query: URLSearchParams,
    res: ServerResponse,
  ): boolean {
    if (path === "/_matrix/media/v3/upload" && method === "POST") {
      const id = nextId("media");
      media.set(id, {
        bytes: raw,
        contentType: String(req.headers["content-type"] ?? "application/octet-stream"),
        name: query.get("filename") ?? id,
      });
      json(res, 200, { content_uri: `mxc://${SERVER_NAME}/${id}` });
      return true;
    }
    if (path === "/_matrix/client/v1/media/config" || path === "/_matrix/media/v3/config") {
      json(res, 200, { "m.upload.size": 50 * 1024 * 1024 });
      return true;
    }
    const download = /^\/_matrix\/(?:client\/v1\/media|media\/v3)\/download\/([^/]+)\/([^/]+)/.exec(path);
    if (!download) return false;
    const item = download[1] === SERVER_NAME ? media.get(download[2] ?? "") : undefined;
    if (!item) {
      matrixError(res, 404, "M_NOT_FOUND", "Not found");
      return true;
    }
    res.writeHead(200, { "content-type": item.contentType, "content-length": item.bytes.length });
    res.end(item.bytes);
    return true;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    const path = decodeURIComponent(url.pathname);
    const method = req.method ?? "GET";
    const raw = await readBody(req);
    let body: Json = {};
    const isUpload = path.startsWith("/_matrix/media/v3/upload");
    if (!isUpload && raw.length > 0) {
      try {
        body = JSON.parse(raw.toString("utf8")) as Json;
      } catch {
        matrixError(res, 400, "M_NOT_JSON", "Content not JSON.");
        return;
      }
    }
    const token =
      (req.headers.authorization ?? "").replace(/^Bearer /, "") || url.searchParams.get("access_token") || "";
    const session = sessions.get(token);
    requests.push({
      method,
      path,
      userId: session?.userId,
      body: isUpload ? { bytes: raw.length } : body,
      at: Date.now(),
    });
    const rw = requestWaiters;
    requestWaiters = [];
    for (const wake of rw) wake();
    if (session && path === "/_matrix/client/v3/sync") {
      const left = refusing.get(session.userId) ?? 0;
      if (left > 0) {
        refusing.set(session.userId, left - 1);
        req.socket.destroy();
        return;
      }
    }
    if (path === "/_matrix/client/versions") {
      json(res, 200, {
        versions: ["v1.1", "v1.2", "v1.3", "v1.4", "v1.5", "v1.6", "v1.11"],
        unstable_features: {},
      });
      return;
    }
    if (path === "/_matrix/client/v3/login") {
      if (method === "GET") json(res, 200, { flows: [{ type: "m.login.password" }] });
      else login(body, res);
      return;
    }
    if (!session) {
      matrixError(res, 401, "M_UNKNOWN_TOKEN", "Invalid access token passed.");
      return;
    }
    if (path === "/_matrix/client/v3/sync") {
      await sync(req, res, session, url.searchParams);
      return;
    }
    if (mediaRoute(method, path, raw, req, url.searchParams, res)) return;
    const prefix = "/_matrix/client/v3";
    if (!path.startsWith(`${prefix}/`)) {
      matrixError(res, 404, "M_UNRECOGNIZED", `Unrecognized request: ${method} ${path}`);
      return;
    }
    clientRoute(method, path.slice(prefix.length), session, token, body, url.searchParams, (status, out) => {
      json(res, status, out);
      return true;
    });
  }

  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) matrixError(res, 500, "M_UNKNOWN", String(err));
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    addUser(localpart, password) {
      const userId = `@${localpart}:${SERVER_NAME}`;
      passwords.set(userId, password);
      return userId;
    },
    roomEvents: (roomId) => (rooms.get(roomId)?.events ?? []).map((e) => e.event),
    async waitForRequest(predicate, timeoutMs = 20_000, after = 0) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = requests.find((r) => r.at >= after && predicate(r));
        if (found) return found;
        if (Date.now() > deadline) throw new Error("timed out waiting for a Matrix request");
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()) + 1);
          requestWaiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
    async waitForRoomEvent(roomId, predicate, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = (rooms.get(roomId)?.events ?? []).map((e) => e.event).find(predicate);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`timed out waiting for an event in ${roomId}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()) + 1);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
    dropUser(userId, refuse = 0) {
      refusing.set(userId, refuse);
      for (const [socket, owner] of openSyncs) if (owner === userId) socket.destroy();
    },
    syncCount: (userId) => syncs.get(userId) ?? 0,
    async stop() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
