/**
 * A loopback stand-in for a Mattermost server: the v4 REST routes `@mattermost/client`'s Client4
 * calls for a bot, and the WebSocket event stream its WebSocketClient reads, in the server's wire
 * shapes.
 *
 * - REST under `/api/v4` with `Authorization: Bearer <token>` (a wrong one: 401 in Mattermost's
 *   error shape): `GET users/me`, `GET users/{id}`, `POST users/{id}/typing`, `GET channels/{id}`,
 *   `GET channels/{id}/posts?since=`, `POST posts`, `GET posts/{id}`, `PUT posts/{id}/patch`,
 *   `POST files` (multipart `channel_id` + `files`), `GET files/{id}`, `GET files/{id}/info`,
 *   `POST reactions`, `DELETE users/{id}/posts/{id}/reactions/{emoji}`. JSON answers carry
 *   `Content-Type: application/json` exactly, which is what Client4 parses.
 * - `GET /api/v4/websocket`: after `authentication_challenge` the server says `hello` (with its
 *   `connection_id`); every post is broadcast as a `posted` event with the next `seq`. Events are
 *   kept per connection id, so a client that reconnects with `connection_id` and
 *   `sequence_number` gets what it missed replayed, as the server's dead queue does; an unknown id
 *   gets a new connection id (and the client must catch up over REST). `ping` and `user_typing`
 *   actions are answered with `seq_reply`.
 *
 * Tests post as users with `post`, read the bot's posts from `posts`/`waitForPost`, and break the
 * stream with `dropSockets` (optionally forgetting the connection, as a restarted server would).
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";

export interface MmPost {
  id: string;
  channel_id: string;
  user_id: string;
  root_id: string;
  message: string;
  type: string;
  create_at: number;
  update_at: number;
  edit_at: number;
  delete_at: number;
  file_ids: string[];
  props: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

export interface MmCall {
  method: string;
  path: string;
  body: unknown;
  at: number;
}

interface MmFile {
  id: string;
  name: string;
  mime_type: string;
  size: number;
  bytes: Buffer;
  channel_id: string;
}

interface Session {
  id: string;
  nextSeq: number;
  events: Array<{ seq: number; text: string }>;
  socket?: WebSocket | undefined;
}

export interface FakeMattermost {
  readonly url: string;
  readonly token: string;
  readonly bot: { id: string; username: string };
  readonly posts: MmPost[];
  readonly calls: MmCall[];
  /** WebSocket connections, in order: the `connection_id` each asked to resume (empty: new). */
  readonly connections: string[];
  readonly reactions: Array<{ user_id: string; post_id: string; emoji_name: string; removed?: boolean }>;
  readonly typing: Array<{ channel_id: string; parent_id: string; via: "ws" | "rest" }>;
  addUser(id: string, username: string): void;
  /** Adds a channel: type D (DM), G (group DM), P (private), O (open). */
  addChannel(id: string, type: "D" | "G" | "P" | "O", displayName?: string): void;
  /** A user's post, broadcast as a `posted` event. */
  post(
    userId: string,
    channelId: string,
    message: string,
    extra?: { root_id?: string; file_ids?: string[] },
  ): MmPost;
  /** Stores a file a user uploaded; returns its id for `post`'s `file_ids`. */
  upload(channelId: string, bytes: Buffer, name: string, mimeType: string): string;
  fileBytes(id: string): Buffer | undefined;
  fileInfo(id: string): { name: string; mime_type: string } | undefined;
  /** Ends the live WebSocket; with `forget` its connection id and queued events are gone. */
  dropSockets(options?: { forget?: boolean }): void;
  waitForPost(predicate: (p: MmPost) => boolean, timeoutMs?: number): Promise<MmPost>;
  waitFor<T>(read: () => T | undefined, what: string, timeoutMs?: number): Promise<T>;
  waitForConnections(count: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

const newId = (): string => randomBytes(13).toString("hex");

export async function startFakeMattermost(
  options: { token?: string; botUsername?: string } = {},
): Promise<FakeMattermost> {
  const token = options.token ?? "mm-bot-token-0123456789abcdef";
  const bot = { id: newId(), username: options.botUsername ?? "hermes" };
  const users = new Map<string, string>([[bot.id, bot.username]]);
  const channels = new Map<string, { type: string; display_name: string }>();
  const posts: MmPost[] = [];
  const calls: MmCall[] = [];
  const files = new Map<string, MmFile>();
  const reactions: FakeMattermost["reactions"] = [];
  const typing: FakeMattermost["typing"] = [];
  const connections: string[] = [];
  const sessions = new Map<string, Session>();
  let current: Session | undefined;
  const sockets = new Set<Socket>();
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of [...waiters]) w();
  };

  function emit(event: string, data: Record<string, unknown>, broadcast: Record<string, unknown> = {}): void {
    const session = current;
    if (!session) return;
    const seq = session.nextSeq++;
    const text = JSON.stringify({ event, data, broadcast, seq });
    session.events.push({ seq, text });
    if (session.events.length > 128) session.events.shift();
    session.socket?.send(text);
  }

  function broadcastPost(post: MmPost): void {
    const channel = channels.get(post.channel_id);
    emit(
      "posted",
      {
        channel_display_name: channel?.display_name ?? "",
        channel_name: post.channel_id,
        channel_type: channel?.type ?? "O",
        post: JSON.stringify(post),
        sender_name: `@${users.get(post.user_id) ?? post.user_id}`,
        team_id: "",
      },
      { channel_id: post.channel_id },
    );
  }

  function makePost(fields: Partial<MmPost> & { channel_id: string; user_id: string }): MmPost {
    const now = Date.now();
    const fileIds = fields.file_ids ?? [];
    const post: MmPost = {
      id: newId(),
      root_id: "",
      message: "",
      type: "",
      create_at: now,
      update_at: now,
      edit_at: 0,
      delete_at: 0,
      props: {},
      ...fields,
      file_ids: fileIds,
      metadata:
        fileIds.length > 0
          ? {
              files: fileIds.map((id) => {
                const f = files.get(id);
                return { id, name: f?.name, mime_type: f?.mime_type, size: f?.size, post_id: "" };
              }),
            }
          : {},
    };
    posts.push(post);
    broadcastPost(post);
    wake();
    return post;
  }

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "Content-Type": "application/json" });
    res.end(JSON.stringify(body));
  };
  const fail = (res: ServerResponse, status: number, id: string, message: string) =>
    json(res, status, { id, message, detailed_error: "", request_id: newId(), status_code: status });

  async function readBody(req: IncomingMessage): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    const path = url.pathname.replace(/^\/api\/v4/, "");
    const method = req.method ?? "GET";
    const raw = await readBody(req);
    const type = req.headers["content-type"] ?? "";
    let body: unknown =
      raw.length > 0 && type.startsWith("application/json") ? JSON.parse(raw.toString()) : undefined;
    // Client4 sends `BEARER <token>`; the server reads the scheme without case, as here.
    if (/^bearer\s+(.+)$/i.exec(req.headers.authorization ?? "")?.[1] !== token) {
      return fail(
        res,
        401,
        "api.context.session_expired.app_error",
        "Invalid or expired session, please login again.",
      );
    }
    if (type.startsWith("multipart/form-data")) {
      const form = await new Request("http://localhost/", {
        method: "POST",
        headers: { "content-type": type },
        body: raw,
      }).formData();
      body = Object.fromEntries([...form.keys()].map((k) => [k, form.get(k)]));
      const channelId = String(form.get("channel_id") ?? "");
      const infos = [];
      for (const entry of form.getAll("files")) {
        if (typeof entry === "string") continue;
        const bytes = Buffer.from(await entry.arrayBuffer());
        const id = newId();
        const file = {
          id,
          name: entry.name,
          mime_type: entry.type,
          size: bytes.length,
          bytes,
          channel_id: channelId,
        };
        files.set(id, file);
        infos.push({ id, name: file.name, mime_type: file.mime_type, size: file.size, user_id: bot.id });
      }
      calls.push({ method, path, body: { channel_id: channelId, files: infos }, at: Date.now() });
      wake();
      if (!channelId) return fail(res, 400, "api.file.upload_file.app_error", "channel_id is required");
      return json(res, 201, { file_infos: infos, client_ids: [] });
    }
    calls.push({ method, path, body, at: Date.now() });
    wake();
    const b = (body ?? {}) as Record<string, unknown>;
    // One route at a time: `at` matches the method and path and returns the path's groups.
    const at = (verb: string | undefined, re: RegExp): RegExpExecArray | null =>
      verb === undefined || method === verb ? re.exec(path) : null;
    if (method === "GET" && path === "/users/me")
      return json(res, 200, { id: bot.id, username: bot.username, is_bot: true });
    const userRoute = at("GET", /^\/users\/([^/]+)$/);
    if (userRoute) {
      const name = users.get(userRoute[1] ?? "");
      return name
        ? json(res, 200, { id: userRoute[1], username: name })
        : fail(res, 404, "app.user.missing", "User not found");
    }
    const typingRoute = at("POST", /^\/users\/([^/]+)\/typing$/);
    if (typingRoute) {
      typing.push({
        channel_id: String(b["channel_id"]),
        parent_id: String(b["parent_id"] ?? ""),
        via: "rest",
      });
      wake();
      return json(res, 200, { status: "OK" });
    }
    const channelRoute = at("GET", /^\/channels\/([^/]+)$/);
    if (channelRoute) {
      const ch = channels.get(channelRoute[1] ?? "");
      return ch
        ? json(res, 200, { id: channelRoute[1], ...ch, name: channelRoute[1] })
        : fail(res, 404, "app.channel.missing", "Channel not found");
    }
    const channelPosts = at("GET", /^\/channels\/([^/]+)\/posts$/);
    if (channelPosts) {
      const since = Number(url.searchParams.get("since") ?? 0);
      const list = posts.filter((p) => p.channel_id === channelPosts?.[1] && p.update_at > since);
      return json(res, 200, {
        order: list.map((p) => p.id).reverse(),
        posts: Object.fromEntries(list.map((p) => [p.id, p])),
      });
    }
    if (method === "POST" && path === "/posts") {
      const channelId = String(b["channel_id"] ?? "");
      if (!channels.has(channelId))
        return fail(
          res,
          403,
          "api.context.permissions.app_error",
          "You do not have the appropriate permissions.",
        );
      const root = String(b["root_id"] ?? "");
      if (root && !posts.some((p) => p.id === root && p.root_id === "")) {
        return fail(res, 400, "api.post.create_post.root_id.app_error", "Invalid RootId parameter.");
      }
      const post = makePost({
        channel_id: channelId,
        user_id: bot.id,
        message: String(b["message"] ?? ""),
        root_id: root,
        file_ids: Array.isArray(b["file_ids"]) ? (b["file_ids"] as string[]) : [],
        props: (b["props"] as Record<string, unknown>) ?? {},
      });
      return json(res, 201, post);
    }
    const postRoute = at(undefined, /^\/posts\/([^/]+)(\/patch)?$/);
    if (postRoute) {
      const post = posts.find((p) => p.id === postRoute?.[1]);
      if (!post) return fail(res, 404, "app.post.get.app_error", "Unable to get the post.");
      if (method === "GET" && !postRoute[2]) return json(res, 200, post);
      if (method === "PUT" && postRoute[2]) {
        if (typeof b["message"] === "string") post.message = b["message"];
        post.edit_at = post.update_at = Date.now();
        emit("post_edited", { post: JSON.stringify(post) });
        wake();
        return json(res, 200, post);
      }
    }
    const fileRoute = at("GET", /^\/files\/([^/]+)(\/info)?$/);
    if (fileRoute) {
      const file = files.get(fileRoute[1] ?? "");
      if (!file) return fail(res, 404, "app.file_info.get.app_error", "Unable to get the file info.");
      if (fileRoute[2])
        return json(res, 200, { id: file.id, name: file.name, mime_type: file.mime_type, size: file.size });
      res.writeHead(200, { "Content-Type": file.mime_type, "Content-Length": file.bytes.length });
      return void res.end(file.bytes);
    }
    if (method === "POST" && path === "/reactions") {
      reactions.push({
        user_id: String(b["user_id"]),
        post_id: String(b["post_id"]),
        emoji_name: String(b["emoji_name"]),
      });
      wake();
      return json(res, 201, { ...b, create_at: Date.now() });
    }
    const reactionRoute = at("DELETE", /^\/users\/([^/]+)\/posts\/([^/]+)\/reactions\/([^/]+)$/);
    if (reactionRoute) {
      reactions.push({
        user_id: reactionRoute[1] ?? "",
        post_id: reactionRoute[2] ?? "",
        emoji_name: reactionRoute[3] ?? "",
        removed: true,
      });
      wake();
      return json(res, 200, { status: "OK" });
    }
    return fail(
      res,
      404,
      "api.context.404.app_error",
      `Sorry, we could not find the page (${method} ${path}).`,
    );
  }

  const server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => fail(res, 500, "fake.error", String(err)));
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on("upgrade", (req, socket, head) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (url.pathname !== "/api/v4/websocket") return void socket.destroy();
    wss.handleUpgrade(req, socket, head, (ws) => onSocket(ws, url));
  });

  function onSocket(ws: WebSocket, url: URL): void {
    const asked = url.searchParams.get("connection_id") ?? "";
    const from = Number(url.searchParams.get("sequence_number") ?? 0);
    connections.push(asked);
    wake();
    let authed = false;
    ws.on("message", (data) => {
      let msg: { action?: string; seq?: number; data?: Record<string, unknown> };
      try {
        msg = JSON.parse(data.toString());
      } catch {
        return;
      }
      const replyOk = (extra: Record<string, unknown> = {}) =>
        ws.send(JSON.stringify({ status: "OK", seq_reply: msg.seq, ...extra }));
      if (msg.action === "authentication_challenge") {
        if (msg.data?.["token"] !== token) {
          ws.send(
            JSON.stringify({
              status: "FAIL",
              seq_reply: msg.seq,
              error: { id: "api.web_socket_router.not_authenticated.app_error" },
            }),
          );
          return void ws.close();
        }
        authed = true;
        replyOk();
        const known = sessions.get(asked);
        const oldest = known?.events[0]?.seq ?? known?.nextSeq ?? 0;
        if (known && known === current && from >= oldest && from <= known.nextSeq) {
          known.socket?.terminate();
          known.socket = ws;
          for (const e of known.events) if (e.seq >= from) ws.send(e.text);
        } else {
          const session: Session = { id: newId(), nextSeq: 0, events: [], socket: ws };
          sessions.clear();
          sessions.set(session.id, session);
          current = session;
        }
        const session = current as Session;
        const seq = session.nextSeq++;
        ws.send(
          JSON.stringify({
            event: "hello",
            data: { connection_id: session.id, server_version: "11.0.0", server_hostname: "fake" },
            broadcast: {},
            seq,
          }),
        );
        return;
      }
      if (msg.action === "ping")
        return replyOk({ data: { text: "pong", version: "11.0.0", server_time: Date.now() } });
      if (!authed) return;
      if (msg.action === "user_typing") {
        typing.push({
          channel_id: String(msg.data?.["channel_id"]),
          parent_id: String(msg.data?.["parent_id"] ?? ""),
          via: "ws",
        });
        wake();
        return replyOk();
      }
      replyOk();
    });
    ws.on("close", () => {
      for (const s of sessions.values()) if (s.socket === ws) s.socket = undefined;
    });
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

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
        reject(
          new Error(
            `timed out waiting for ${what}; bot posts: ${JSON.stringify(posts.filter((p) => p.user_id === bot.id).map((p) => p.message))}`,
          ),
        );
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  }

  return {
    url,
    token,
    bot,
    posts,
    calls,
    connections,
    reactions,
    typing,
    addUser: (id, username) => void users.set(id, username),
    addChannel: (id, type, displayName) => void channels.set(id, { type, display_name: displayName ?? id }),
    post: (userId, channelId, message, extra = {}) =>
      makePost({
        channel_id: channelId,
        user_id: userId,
        message,
        root_id: extra.root_id ?? "",
        file_ids: extra.file_ids ?? [],
      }),
    upload(channelId, bytes, name, mimeType) {
      const id = newId();
      files.set(id, { id, name, mime_type: mimeType, size: bytes.length, bytes, channel_id: channelId });
      return id;
    },
    fileBytes: (id) => files.get(id)?.bytes,
    fileInfo: (id) => files.get(id),
    dropSockets(opts = {}) {
      for (const s of sessions.values()) {
        s.socket?.terminate();
        s.socket = undefined;
      }
      if (opts.forget) sessions.clear();
    },
    waitForPost: (predicate, timeoutMs) =>
      waitFor(() => posts.find((p) => p.user_id === bot.id && predicate(p)), "a bot post", timeoutMs),
    waitFor,
    waitForConnections: (count, timeoutMs) =>
      waitFor(
        () => (connections.length >= count ? true : undefined),
        `${count} WebSocket connections`,
        timeoutMs,
      ).then(() => undefined),
    async stop() {
      for (const c of wss.clients) c.terminate();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
