/**
 * Mattermost adapter over the official `@mattermost/client`: `Client4` for the v4 REST API (who
 * the bot is, posts, edits, files, reactions) and its `WebSocketClient` for events (`posted`) and
 * typing. Both are loaded on the first `connect`, never at import time.
 *
 * Reconnects are the WebSocketClient's own: it reopens a dropped socket with backoff and asks the
 * server to resume with its `connection_id` and `sequence_number`, so the server replays what was
 * missed. When the server cannot (it restarted, or the gap was too long) it answers with a new
 * connection id; then the adapter fetches every post since the last one it saw in the channels it
 * knows (`GET /channels/{id}/posts?since=`). Posts already handed over are recognised by id and
 * dropped, so nothing is answered twice.
 *
 * Mattermost has interactive buttons only for apps with an integration URL, so approvals are
 * answered by replying yes/no, as on Signal. Replies stream by editing one post (`PUT
 * /posts/{id}/patch`) where streaming is on.
 */
import { readFile } from "node:fs/promises";
import { basename, extname } from "node:path";
import type * as MattermostClient from "@mattermost/client";
import { chatQueue, handOver, stringSetting, uploadSize, withAttachments } from "./adapter-kit.js";
import {
  formatForMattermost,
  type Loaded,
  loadMattermost,
  muteHandlers,
  platformError,
  quietly,
  splitPost,
  type WebSocketLike,
} from "./mattermost-client.js";
import {
  type MattermostFileRef,
  type MattermostIdentity,
  mattermostInbound,
  mattermostSettings,
  parsePostedEvent,
} from "./mattermost-inbound.js";
import { errorText, extensionFor, mediaKindOf, mimeFor, saveInboundFile } from "./media-files.js";
import {
  type AdapterContext,
  type AdapterHandlers,
  type InboundMedia,
  type OutboundTarget,
  type PlatformAdapter,
  PlatformError,
  type SendOptions,
} from "./types.js";

type Client4 = InstanceType<typeof MattermostClient.Client4>;
type WebSocketClient = InstanceType<typeof MattermostClient.WebSocketClient>;

/** Upstream's post length (the server takes 16383; 4000 keeps posts readable). */
const MAX_POST_LENGTH = 4000;
/** Mattermost's default `FileSettings.MaxFileSize`. */
const MAX_FILE_BYTES = 100 * 1024 * 1024;
const SEEN_LIMIT = 2000;
const describe = errorText;

/** Settings for tests and embedders; the environment and `mattermost:` config give the rest. */
export interface MattermostAdapterOptions {
  /** First reconnect delay in ms (default 3000, the client's own; jitter up to 2 s on top). */
  retryInitialMs?: number;
}

/** Creates the Mattermost adapter; nothing is contacted until `connect` or a send. */
export function createMattermostAdapter(
  ctx: AdapterContext,
  options: MattermostAdapterOptions = {},
): PlatformAdapter {
  const setting = (key: string) => stringSetting(ctx.settings, key);
  const baseUrl = (setting("url") || ctx.env.MATTERMOST_URL?.trim() || "").replace(/\/+$/, "");
  const token = ctx.env.MATTERMOST_TOKEN?.trim() || setting("token") || "";
  const settings = mattermostSettings(ctx.env, ctx.settings);

  let lib: Loaded | undefined;
  let client: Client4 | undefined;
  let socket: WebSocketClient | undefined;
  const sockets = new Set<WebSocketLike>();
  let me: MattermostIdentity | undefined;
  let handlers: AdapterHandlers | undefined;
  /** Post ids already handed over, oldest first. */
  const seen = new Set<string>();
  /** Channels we heard from, with their type (D, G, P, O): where to catch up after a gap. */
  const channels = new Map<string, string>();
  const userNames = new Map<string, string>();
  let lastCreateAt = 0;
  let stopped = false;

  const report = (message: string): void => {
    try {
      handlers?.onError(message);
    } catch {
      // A failing error handler must not stop the event stream.
    }
  };
  /** Per channel: a post waiting for its files must not be overtaken by the next one. */
  const queue = chatQueue((err) => report(`Mattermost message handling failed: ${describe(err)}`));

  async function call<T>(what: string, run: (c: Client4) => Promise<T>): Promise<T> {
    const c = await ready();
    try {
      return await run(c);
    } catch (err) {
      throw platformError(what, err, baseUrl);
    }
  }

  /** The REST client and the bot's identity, checked once. */
  async function ready(): Promise<Client4> {
    if (client && me) return client;
    if (!baseUrl) {
      throw new PlatformError(
        "MATTERMOST_URL is not set: add MATTERMOST_URL=https://<your Mattermost server> to the .env file in your Hermes home",
      );
    }
    if (!token) {
      throw new PlatformError(
        "MATTERMOST_TOKEN is not set: add the bot's access token to the .env file in your Hermes home",
      );
    }
    lib ??= loadMattermost();
    const c = new lib.Client4();
    c.setUrl(baseUrl);
    c.setToken(token);
    let user: { id?: unknown; username?: unknown };
    try {
      user = (await c.getMe()) as { id?: unknown; username?: unknown };
    } catch (err) {
      throw platformError("check who the bot is (GET /api/v4/users/me)", err, baseUrl);
    }
    if (typeof user.id !== "string" || !user.id) {
      throw new PlatformError(`Mattermost at ${baseUrl} answered /users/me without a user id`);
    }
    me = { userId: user.id, username: typeof user.username === "string" ? user.username : "" };
    client = c;
    return c;
  }

  const remember = (postId: string): void => {
    seen.add(postId);
    if (seen.size > SEEN_LIMIT) seen.delete(seen.values().next().value as string);
  };

  async function download(ref: MattermostFileRef): Promise<InboundMedia> {
    const c = await ready();
    const limit = Math.min(ctx.maxInboundMediaBytes, MAX_FILE_BYTES);
    let info = ref;
    if (!info.name || !info.mimeType) {
      const res = await fetch(`${c.getFileRoute(ref.id)}/info`, {
        ...(c.getOptions({ method: "get" }) as RequestInit),
        signal: AbortSignal.timeout(30_000),
      });
      if (!res.ok) throw new Error(`HTTP ${res.status} from GET /api/v4/files/${ref.id}/info`);
      const fetched = (await res.json()) as Record<string, unknown>;
      info = {
        id: ref.id,
        name: typeof fetched["name"] === "string" ? fetched["name"] : undefined,
        mimeType: typeof fetched["mime_type"] === "string" ? fetched["mime_type"] : undefined,
        size: typeof fetched["size"] === "number" ? fetched["size"] : undefined,
      };
    }
    if (info.size !== undefined && info.size > limit) {
      throw new Error(
        `it is ${info.size} bytes, over the ${limit}-byte limit (gateway.max_inbound_media_bytes)`,
      );
    }
    const res = await fetch(c.getFileUrl(ref.id, 0), {
      ...(c.getOptions({ method: "get" }) as RequestInit),
      signal: AbortSignal.timeout(60_000),
    });
    if (!res.ok) throw new Error(`HTTP ${res.status} from GET /api/v4/files/${ref.id}`);
    const bytes = Buffer.from(await res.arrayBuffer());
    if (bytes.length > limit) throw new Error(`it is ${bytes.length} bytes, over the ${limit}-byte limit`);
    const mime = info.mimeType ?? res.headers.get("content-type")?.split(";")[0] ?? undefined;
    const ext =
      extname(info.name ?? "")
        .replace(/[^A-Za-z0-9.]/g, "")
        .slice(0, 10) || extensionFor(mime);
    const kind = mediaKindOf(mime);
    const path = await saveInboundFile(ctx.mediaDir, `mattermost-${kind}`, bytes, ext);
    return { kind, path, mimeType: mime, fileName: info.name };
  }

  function onPost(
    post: unknown,
    meta: { channelType?: string; senderName?: string; channelName?: string },
  ): void {
    if (!me) return;
    const result = mattermostInbound(post, meta, me, settings);
    if (!result.deliver) {
      if (result.report) report(result.report);
      return;
    }
    if (seen.has(result.postId)) return; // replayed after a reconnect
    remember(result.postId);
    lastCreateAt = Math.max(lastCreateAt, result.createAt);
    const { message, files } = result;
    queue.add(message.source.chatId, async () => {
      const media: InboundMedia[] = [];
      const notes: string[] = [];
      for (const ref of files) {
        try {
          media.push(await download(ref));
        } catch (err) {
          report(`could not download a Mattermost file from ${message.source.chatId}: ${describe(err)}`);
          notes.push(`[a file${ref.name ? ` (${ref.name})` : ""} could not be downloaded: ${describe(err)}]`);
        }
      }
      if (stopped || !handlers) return;
      handOver(handlers, withAttachments(message, notes, media), report, "Mattermost message");
    });
  }

  function onEvent(msg: { event?: unknown; data?: unknown }): void {
    if (msg.event !== "posted") return;
    const parsed = parsePostedEvent(msg.data);
    if (!parsed) {
      report("Mattermost sent a posted event whose post is not JSON");
      return;
    }
    const channelId = (parsed.post as { channel_id?: unknown }).channel_id;
    if (typeof channelId === "string" && parsed.meta["channelType"]) {
      channels.set(channelId, parsed.meta["channelType"]);
    }
    onPost(parsed.post, parsed.meta);
  }

  /** The server could not replay a gap: read every post since the last one we saw. */
  async function catchUp(): Promise<void> {
    if (lastCreateAt === 0 || !client) return;
    const since = lastCreateAt;
    for (const [channelId, channelType] of channels) {
      try {
        const list = (await client.getPostsSince(channelId, since)) as {
          order?: string[];
          posts?: Record<string, Record<string, unknown>>;
        };
        const posts = Object.values(list.posts ?? {}).sort(
          (a, b) => Number(a["create_at"] ?? 0) - Number(b["create_at"] ?? 0),
        );
        for (const post of posts) {
          if (Number(post["create_at"] ?? 0) <= since && seen.has(String(post["id"]))) continue;
          const userId = String(post["user_id"] ?? "");
          let name = userNames.get(userId);
          if (name === undefined && userId && userId !== me?.userId) {
            name = await client
              .getUser(userId)
              .then((u) => u.username)
              .catch(() => "");
            userNames.set(userId, name);
          }
          onPost(post, { channelType, senderName: name ?? "" });
        }
      } catch (err) {
        report(`could not catch up on Mattermost channel ${channelId}: ${describe(err)}`);
      }
    }
  }

  function openSocket(l: Loaded, c: Client4): Promise<void> {
    const ws = new l.WebSocketClient({
      newWebSocketFn: (url: string) => {
        const s = muteHandlers(new l.Socket(url));
        sockets.add(s);
        return s as unknown as WebSocket;
      },
      ...(options.retryInitialMs !== undefined
        ? { minWebSocketRetryTime: options.retryInitialMs, reconnectJitterRange: options.retryInitialMs / 5 }
        : {}),
    });
    socket = ws;
    return new Promise<void>((resolve) => {
      let first = true;
      ws.addMessageListener((msg) => {
        if (msg.event === "hello" && first) {
          first = false;
          resolve();
        }
        onEvent(msg as { event?: unknown; data?: unknown });
      });
      ws.addMissedMessageListener(() => void catchUp());
      ws.addCloseListener((failures) => {
        for (const s of sockets) if (s.readyState === 3) sockets.delete(s);
        if (stopped) return;
        if (first) {
          first = false;
          resolve(); // the client keeps retrying in the background
        }
        if (failures === 1) report("Mattermost WebSocket lost; reconnecting");
      });
      quietly(() => ws.initialize(c.getWebSocketUrl().replace(/^http/, "ws"), token));
    });
  }

  const targetRoot = (target: OutboundTarget): string | undefined => target.threadId || undefined;

  async function post(target: OutboundTarget, message: string, fileIds?: string[]): Promise<string> {
    const root = targetRoot(target);
    const created = await call(`post to channel ${target.chatId}`, (c) =>
      c.createPost({
        channel_id: target.chatId,
        message,
        ...(root ? { root_id: root } : {}),
        ...(fileIds ? { file_ids: fileIds } : {}),
        // The bot's answers never ping @channel or @all, whatever the model wrote (upstream does the same).
        props: { disable_mentions: true },
      } as unknown as Parameters<Client4["createPost"]>[0]),
    );
    return created.id;
  }

  const adapter: PlatformAdapter = {
    platform: "mattermost",
    capabilities: {
      maxMessageLength: MAX_POST_LENGTH,
      edit: true,
      buttons: false,
      typing: true,
      media: true,
      maxMediaBytes: MAX_FILE_BYTES,
    },

    async connect(h, connectOptions) {
      if (handlers) return;
      const c = await ready();
      handlers = h;
      stopped = false;
      if (connectOptions?.receive === false || !lib) return;
      await openSocket(lib, c);
    },

    async disconnect() {
      stopped = true;
      const current = socket;
      socket = undefined;
      quietly(() => current?.close());
      // close() leaves a socket that is still connecting; end those too so no reconnect survives.
      for (const s of sockets) {
        s.onclose = null;
        s.terminate ? s.terminate() : s.close();
      }
      sockets.clear();
      await queue.idle();
      handlers = undefined;
    },

    async send(target, text, sendOptions: SendOptions = {}) {
      const body = sendOptions.plain ? text : formatForMattermost(text);
      if (body.trim() === "") throw new PlatformError("cannot send an empty message to Mattermost");
      let last = "";
      for (const piece of splitPost(body, MAX_POST_LENGTH)) last = await post(target, piece);
      return { messageId: last };
    },

    async edit(_target, messageId, text, sendOptions: SendOptions = {}) {
      const body = sendOptions.plain ? text : formatForMattermost(text);
      if (body.trim() === "") throw new PlatformError("cannot edit a Mattermost post to be empty");
      await call(`edit post ${messageId}`, (c) =>
        c.patchPost({ id: messageId, message: body.slice(0, 16383) } as Parameters<Client4["patchPost"]>[0]),
      );
    },

    async typing(target) {
      try {
        if (socket) {
          socket.userTyping(target.chatId, targetRoot(target) ?? "");
          return;
        }
        // `hermes send` has no socket: the REST route shows the same indicator.
        const c = await ready();
        const body = JSON.stringify({ channel_id: target.chatId, parent_id: targetRoot(target) ?? "" });
        await fetch(`${c.getUserRoute(me?.userId ?? "me")}/typing`, {
          ...(c.getOptions({ method: "post", body }) as RequestInit),
          signal: AbortSignal.timeout(10_000),
        });
      } catch {
        // Typing is a courtesy.
      }
    },

    async sendMedia(target, media) {
      await uploadSize(media.path, {
        to: "to Mattermost",
        maxBytes: MAX_FILE_BYTES,
        limit: "Mattermost takes files up to 100 MB",
      });
      const name = basename(media.path);
      const form = new FormData();
      form.append("channel_id", target.chatId);
      form.append("files", new Blob([await readFile(media.path)], { type: mimeFor(name) }), name);
      const uploaded = await call(`upload ${name}`, (c) => c.uploadFile(form));
      const id = uploaded.file_infos?.[0]?.id;
      if (!id) throw new PlatformError(`Mattermost accepted the upload of ${name} but returned no file id`);
      const caption = media.caption?.trim() ? formatForMattermost(media.caption) : "";
      return { messageId: await post(target, caption, [id]) };
    },

    async processing(message, state) {
      if (!settings.reactions || !message.messageId || !me) return;
      const postId = message.messageId;
      const userId = me.userId;
      try {
        const c = await ready();
        if (state === "started") {
          await c.addReaction(userId, postId, "eyes");
          return;
        }
        await c.removeReaction(userId, postId, "eyes").catch(() => undefined);
        await c.addReaction(userId, postId, state === "succeeded" ? "white_check_mark" : "x");
      } catch (err) {
        report(`could not react to a Mattermost post: ${describe(err)}`);
      }
    },
  };
  return adapter;
}
