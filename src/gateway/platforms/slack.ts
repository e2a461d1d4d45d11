/**
 * Slack adapter: Bolt's `App` with either the Socket Mode receiver (an outbound WebSocket, no
 * public URL needed) or the HTTP receiver (Slack POSTs signed Events API and interactivity
 * requests to `/slack/events`; Bolt answers a bad signature with 401).
 *
 * One Bolt middleware sees every request: it acknowledges at once (Bolt acks Events API requests
 * itself before middleware runs; interactivity is acked here), turns DMs, mentions and button
 * presses into `InboundMessage`/`InboundAction`, and never throws. Channel messages are gated on a
 * mention of the bot, unless `require_mention: false`, the channel is in `free_response_channels`,
 * or the message is in a thread where the bot was mentioned or has replied. Events from one
 * conversation are delivered in the order they arrived. Channel conversations run in threads
 * (`reply_in_thread`, default true): a top-level mention gets its own ts as `threadId`.
 *
 * Bolt and the Web API client are loaded on first connect, not at import.
 */
import { randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, stat, unlink } from "node:fs/promises";
import type { Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { basename, join } from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { App, Logger, LogLevel, SocketModeReceiver, webApi } from "@slack/bolt";
import type { ChatType } from "../session-key.js";
import { firstDelivery } from "./adapter-kit.js";
import { resolveSlackConfig, type SlackAdapterOptions, type SlackConfig } from "./slack-config.js";
import {
  buildMessageBlocks,
  chatTypeOf,
  errorText,
  escapeSlackText,
  markdownToMrkdwn,
  mediaKindOf,
  slackCallError,
  slackToPlainText,
} from "./slack-format.js";
import {
  type AdapterContext,
  type AdapterHandlers,
  type ConnectOptions,
  type InboundMedia,
  type OutboundMedia,
  type OutboundTarget,
  type PlatformAdapter,
  PlatformError,
  type SendOptions,
  type SentMessage,
} from "./types.js";

export { resolveSlackConfig, type SlackAdapterOptions, type SlackConfig } from "./slack-config.js";

type BoltModule = typeof import("@slack/bolt");
type Json = Record<string, unknown>;

/** The Slack adapter, plus where HTTP mode listens (for tests and the startup log). */
export interface SlackPlatformAdapter extends PlatformAdapter {
  /** The bound address in HTTP mode while connected; undefined otherwise. */
  httpAddress(): { host: string; port: number } | undefined;
}

/** Slack's upload limit. */
const MAX_UPLOAD_BYTES = 1024 ** 3;
/** Upstream's one Slack slash command; its first word is a Hermes command (`/hermes status`). */
export const SLASH_COMMAND = "/hermes";
const SOCKET_CONNECT_TIMEOUT_MS = 30_000;
const DOWNLOAD_TIMEOUT_MS = 120_000;
const RECENT_LIMIT = 5000;

let boltModule: BoltModule | undefined;

/** Bolt pulls in Express and the Web API client; only Slack users should pay for that. */
function loadBolt(): BoltModule {
  boltModule ??= createRequire(import.meta.url)("@slack/bolt") as BoltModule;
  return boltModule;
}

function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** Adds `key` to a set that forgets its oldest entries past RECENT_LIMIT. */
function remember(set: Set<string>, key: string): void {
  set.add(key);
  if (set.size > RECENT_LIMIT) set.delete(set.values().next().value as string);
}

/** A Bolt logger that drops chatter and passes warnings and errors on as one-line reports. */
function boltLogger(bolt: BoltModule, report: (line: string) => void): Logger {
  let level: LogLevel = bolt.LogLevel.WARN;
  const say = (...parts: unknown[]) =>
    report(
      `slack: ${parts
        .map((part) => (part instanceof Error ? part.message : String(part)))
        .join(" ")
        .replace(/\s+/g, " ")
        .trim()}`,
    );
  return {
    debug() {},
    info() {},
    warn: say,
    error: say,
    setLevel(next: LogLevel) {
      level = next;
    },
    getLevel: () => level,
    setName() {},
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new PlatformError(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

interface ChannelInfo {
  chatType: ChatType;
  name?: string | undefined;
}

/** Everything that lives for one connection. */
interface Session {
  config: SlackConfig;
  app: App;
  client: webApi.WebClient;
  handlers: AdapterHandlers;
  botUserId: string;
  teamId?: string | undefined;
  /** Matches `<@BOTID>` and `<@BOTID|name>`, with the spaces around it. */
  mention: RegExp;
  server?: Server | undefined;
  socket?: SocketModeReceiver | undefined;
  reconnectTimer?: NodeJS.Timeout | undefined;
  closed: boolean;
  /** `channel:ts` of messages already delivered (Slack sends a mention twice, and retries). */
  delivered: Set<string>;
  /** `channel:thread_ts` of threads the bot was mentioned in or replied to. */
  threads: Set<string>;
  channels: Map<string, ChannelInfo>;
  chains: Map<string, Promise<void>>;
  warnedChannelInfo: boolean;
}

/**
 * Creates the Slack adapter. Nothing is loaded or checked until `connect`, which rejects with a
 * `PlatformError` naming the variable to set when tokens are missing or refused.
 */
export function createSlackAdapter(
  ctx: AdapterContext,
  options: SlackAdapterOptions = {},
): SlackPlatformAdapter {
  let session: Session | undefined;
  const requireMention = ctx.settings.require_mention !== false;
  const replyInThread = ctx.settings.reply_in_thread !== false;
  const free = ctx.settings.free_response_channels;
  const freeChannels = new Set(
    Array.isArray(free)
      ? free.map(String)
      : typeof free === "string"
        ? free.split(",").map((c) => c.trim())
        : [],
  );

  function live(what: string): Session {
    if (!session) throw new PlatformError(`Slack adapter is not connected; cannot ${what}.`);
    return session;
  }

  async function call(s: Session, method: string, args: Json, what: string): Promise<Json> {
    try {
      return { ...(await s.client.apiCall(method, args)) };
    } catch (err) {
      throw slackCallError(err, what);
    }
  }

  /** Runs work for one conversation after the work queued before it; failures become reports. */
  function inOrder(s: Session, key: string, work: () => Promise<void>): Promise<void> {
    const next = (s.chains.get(key) ?? Promise.resolve()).then(work).catch((err: unknown) => {
      if (!s.closed) s.handlers.onError(`slack: failed to handle an event in ${key}: ${errorText(err)}`);
    });
    s.chains.set(key, next);
    void next.then(() => {
      if (s.chains.get(key) === next) s.chains.delete(key);
    });
    return next;
  }

  /** Chat type and name of a conversation, from the event or `conversations.info` (cached). */
  async function channelInfo(s: Session, channel: string, channelType?: unknown): Promise<ChannelInfo> {
    const fromType = chatTypeOf(channelType);
    if (fromType === "dm" || channel.startsWith("D")) return { chatType: "dm" };
    const cached = s.channels.get(channel);
    if (cached) return { ...cached, chatType: fromType ?? cached.chatType };
    let info: ChannelInfo = { chatType: fromType ?? "group" };
    try {
      const c = (await call(s, "conversations.info", { channel }, `conversations.info for ${channel}`))
        .channel;
      if (isRecord(c)) {
        const chatType = c.is_im || c.is_mpim ? "dm" : "group";
        info = { chatType: fromType ?? chatType, name: str(c.name) };
      }
    } catch (err) {
      if (!s.warnedChannelInfo) {
        s.warnedChannelInfo = true;
        s.handlers.onError(`slack: ${(err as Error).message} Channel names will be missing.`);
      }
    }
    if (s.channels.size > 1000) s.channels.clear();
    s.channels.set(channel, info);
    return info;
  }

  /** Streams one `files[]` entry into the media cache, never past the inbound size limit. */
  async function download(s: Session, file: Json, name: string): Promise<InboundMedia> {
    const limit = ctx.maxInboundMediaBytes;
    const tooBig = `over the ${limit}-byte limit (gateway.max_inbound_media_bytes)`;
    const mimeType = str(file.mimetype);
    if (file.mode === "tombstone" || file.file_access === "check_file_info") {
      throw new Error("Slack did not include the file (deleted, or shared from another workspace)");
    }
    if (typeof file.size === "number" && file.size > limit)
      throw new Error(`it is ${file.size} bytes, ${tooBig}`);
    const href = str(file.url_private_download) ?? str(file.url_private);
    if (!href) throw new Error("Slack sent no download URL");
    const url = new URL(href);
    const slackHost =
      /(^|\.)slack(-edge)?\.com$/.test(url.hostname) || url.host === new URL(s.config.apiUrl).host;
    if (!slackHost) throw new Error(`refusing to send the bot token to ${url.host}`);
    const res = await fetch(url, {
      headers: { Authorization: `Bearer ${s.config.botToken}` },
      signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS),
    });
    const body = res.body;
    const problem = !res.ok
      ? `HTTP ${res.status}`
      : res.headers.get("content-type")?.startsWith("text/html") && !mimeType?.startsWith("text/html")
        ? "Slack answered with a sign-in page; the bot token may lack the files:read scope"
        : Number(res.headers.get("content-length") ?? 0) > limit
          ? `it is ${tooBig}`
          : undefined;
    if (problem || !body) {
      await body?.cancel();
      throw new Error(problem ?? "empty response");
    }
    await mkdir(ctx.mediaDir, { recursive: true });
    const safe = (part: string) => part.replace(/[^\w.-]+/g, "_").slice(-80);
    const path = join(ctx.mediaDir, `slack-${safe(str(file.id) ?? randomUUID())}-${safe(name)}`);
    let received = 0;
    const cap = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        received += chunk.length;
        done(received > limit ? new Error(`it is ${tooBig}`) : null, chunk);
      },
    });
    try {
      await pipeline(Readable.fromWeb(body as WebReadableStream), cap, createWriteStream(path));
    } catch (err) {
      await unlink(path).catch(() => {});
      throw err;
    }
    return { kind: mediaKindOf(mimeType, str(file.subtype)), path, mimeType, fileName: name };
  }

  async function handleMessage(s: Session, event: Json, kind: string, teamId?: string): Promise<void> {
    const subtype = str(event.subtype);
    if (subtype && subtype !== "file_share" && subtype !== "thread_broadcast") return;
    if (event.bot_id || event.bot_profile) return;
    const user = str(event.user);
    const channel = str(event.channel);
    const ts = str(event.ts);
    if (!user || !channel || !ts) {
      s.handlers.onError(`slack: ${kind} event without user, channel or ts; dropped`);
      return;
    }
    const key = `${channel}:${ts}`;
    if (user === s.botUserId || s.delivered.has(key)) return;
    const rawText = typeof event.text === "string" ? event.text : "";
    s.mention.lastIndex = 0;
    const mentioned = kind === "app_mention" || s.mention.test(rawText);
    const threadTs = str(event.thread_ts);
    const isDm = chatTypeOf(event.channel_type) === "dm" || channel.startsWith("D");
    const addressed =
      isDm ||
      mentioned ||
      !requireMention ||
      freeChannels.has(channel) ||
      (threadTs !== undefined && s.threads.has(`${channel}:${threadTs}`));
    if (!addressed) return;
    // Slack sends both `message` and `app_mention` for one mention: the first one wins.
    remember(s.delivered, key);
    const threadId = isDm ? threadTs : (threadTs ?? (replyInThread ? ts : undefined));
    if (!isDm && threadId) remember(s.threads, `${channel}:${threadId}`);

    await inOrder(s, channel, async () => {
      // Over the Events API the other event for this message, or Slack's retry, may have reached
      // another instance behind the load balancer: the first to take it answers.
      if (!(await firstDelivery(ctx, "slack", key))) return;
      const info = await channelInfo(s, channel, event.channel_type);
      let text = slackToPlainText(mentioned ? rawText.replace(s.mention, " ") : rawText).trim();
      const media: InboundMedia[] = [];
      for (const file of Array.isArray(event.files) ? event.files.filter(isRecord) : []) {
        const name = str(file.name) ?? str(file.title) ?? str(file.id) ?? "attachment";
        try {
          media.push(await download(s, file, name));
        } catch (err) {
          const reason = errorText(err);
          text += `${text ? "\n\n" : ""}[Attachment "${name}" could not be downloaded: ${reason}]`;
          s.handlers.onError(`slack: could not download "${name}" from ${channel}: ${reason}`);
        }
      }
      const profile = isRecord(event.user_profile) ? event.user_profile : {};
      if (s.closed) return;
      s.handlers.onMessage({
        source: {
          platform: "slack",
          chatType: info.chatType,
          chatId: channel,
          chatName: info.name,
          userId: user,
          userName: str(profile.display_name) ?? str(profile.real_name) ?? str(profile.name),
          threadId,
          scopeId: str(event.team) ?? teamId ?? s.teamId,
        },
        text,
        messageId: ts,
        media: media.length > 0 ? media : undefined,
        mentioned: info.chatType === "dm" ? undefined : mentioned,
      });
    });
  }

  async function handleBlockActions(s: Session, body: Json): Promise<void> {
    const user = isRecord(body.user) ? body.user : {};
    const container = isRecord(body.container) ? body.container : {};
    const message = isRecord(body.message) ? body.message : {};
    const userId = str(user.id);
    const channel = (isRecord(body.channel) ? str(body.channel.id) : undefined) ?? str(container.channel_id);
    if (!userId || !channel) {
      s.handlers.onError("slack: block action without a user or channel; dropped");
      return;
    }
    const messageTs = str(message.ts) ?? str(container.message_ts);
    const threadTs = str(message.thread_ts) ?? str(container.thread_ts);
    const teamId = (isRecord(body.team) ? str(body.team.id) : undefined) ?? str(user.team_id) ?? s.teamId;
    // The press was acknowledged on arrival; a text becomes a note only the presser sees.
    const acknowledge = async (text?: string) => {
      if (!text) return;
      const args = { channel, user: userId, text: escapeSlackText(text), thread_ts: threadTs };
      await call(s, "chat.postEphemeral", args, `chat.postEphemeral to ${channel}`).catch((err: unknown) =>
        s.handlers.onError(`slack: ${errorText(err)}`),
      );
    };
    await inOrder(s, channel, async () => {
      const info = await channelInfo(s, channel);
      for (const action of Array.isArray(body.actions) ? body.actions.filter(isRecord) : []) {
        if (typeof action.value !== "string" || s.closed) continue;
        const source = {
          platform: "slack",
          chatType: info.chatType,
          chatId: channel,
          chatName: info.name,
          userId,
          userName: str(user.name) ?? str(user.username),
          // A button message that is itself a thread's root was posted top-level.
          threadId: threadTs !== messageTs ? threadTs : undefined,
          scopeId: teamId,
        };
        s.handlers.onAction({ source, data: action.value, messageId: messageTs, acknowledge });
      }
    });
  }

  /**
   * A Slack slash command: `/hermes model gpt-5` (upstream's one command with the registry's
   * commands as its first word; empty: `/help`), or a command of its own (`/model gpt-5`) for
   * an app whose manifest lists them. Either way the router gets the typed `/command`.
   */
  async function handleSlashCommand(s: Session, body: Json): Promise<void> {
    const userId = str(body.user_id);
    const channel = str(body.channel_id);
    const command = (str(body.command) ?? "").trim().toLowerCase();
    if (!userId || !channel || !command.startsWith("/")) {
      s.handlers.onError("slack: slash command without a user, channel or name; dropped");
      return;
    }
    const args = (typeof body.text === "string" ? body.text : "").trim();
    const text =
      command === SLASH_COMMAND
        ? `/${args.replace(/^\//, "") || "help"}`
        : `${command}${args ? ` ${args}` : ""}`;
    await inOrder(s, channel, async () => {
      const info = await channelInfo(s, channel);
      if (s.closed) return;
      s.handlers.onMessage({
        source: {
          platform: "slack",
          chatType: info.chatType,
          chatId: channel,
          chatName: info.name,
          userId,
          userName: str(body.user_name),
          scopeId: str(body.team_id) ?? s.teamId,
        },
        text,
      });
    });
  }

  /** The one middleware: acknowledge, route, never throw. */
  async function route(s: Session, body: unknown, ack: (() => Promise<void>) | undefined): Promise<void> {
    try {
      await ack?.();
      if (!isRecord(body)) return;
      if (body.type === "event_callback") {
        const event = body.event;
        if (!isRecord(event)) s.handlers.onError("slack: event_callback without an event object; dropped");
        else if (event.type === "message" || event.type === "app_mention") {
          await handleMessage(s, event, event.type, str(body.team_id));
        }
      } else if (body.type === "block_actions") {
        await handleBlockActions(s, body);
      } else if (typeof body.command === "string") {
        await handleSlashCommand(s, body);
      }
    } catch (err) {
      const type = isRecord(body) ? String(body.type) : typeof body;
      s.handlers.onError(`slack: could not handle a ${type} request: ${errorText(err)}`);
    }
  }

  async function startSocket(s: Session, receiver: SocketModeReceiver): Promise<void> {
    const socket = receiver.client;
    try {
      await withTimeout(
        s.app.start(),
        SOCKET_CONNECT_TIMEOUT_MS,
        "Slack Socket Mode sent no hello within 30 s.",
      );
    } catch (err) {
      await socket.disconnect().catch(() => {});
      if (err instanceof PlatformError) throw err;
      if ((err as { code?: string } | undefined)?.code)
        throw slackCallError(err, "apps.connections.open", "SLACK_APP_TOKEN");
      throw new PlatformError(
        `Slack Socket Mode could not connect: ${err ? errorText(err) : "the WebSocket closed"}.`,
      );
    }
    // After a dropped connection the client reconnects by itself, but a failed reconnect rejects
    // with nobody listening (an unhandled rejection); keep retrying with backoff and report instead.
    const start = socket.start.bind(socket);
    let failures = 0;
    socket.start = async () => {
      try {
        const result = await start();
        failures = 0;
        return result;
      } catch (err) {
        failures += 1;
        const delay = Math.min(60_000, 1000 * 2 ** Math.min(failures, 6));
        if (!s.closed) {
          s.handlers.onError(
            `slack: Socket Mode reconnect failed (${errorText(err)}); retrying in ${delay / 1000}s`,
          );
          clearTimeout(s.reconnectTimer);
          s.reconnectTimer = setTimeout(() => void socket.start(), delay);
        }
        return undefined as never;
      }
    };
  }

  async function open(handlers: AdapterHandlers, receive: boolean): Promise<Session> {
    const config = resolveSlackConfig(ctx.env, options, ctx.home, !receive);
    const bolt = loadBolt();
    const client = new bolt.webApi.WebClient(config.botToken, {
      slackApiUrl: config.apiUrl,
      logger: boltLogger(bolt, () => {}),
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      timeout: 30_000,
    });
    let auth: Json;
    try {
      auth = { ...(await client.apiCall("auth.test")) };
    } catch (err) {
      throw slackCallError(err, `auth.test at ${config.apiUrl}`);
    }
    const botUserId = str(auth.user_id);
    if (!botUserId) throw new PlatformError("Slack auth.test returned no user id for SLACK_BOT_TOKEN.");
    const teamId = str(auth.team_id);
    let s: Session | undefined;
    const logger = boltLogger(bolt, (line) => {
      if (s && !s.closed) handlers.onError(line);
    });
    const receiver =
      config.mode === "http"
        ? new bolt.HTTPReceiver({
            signingSecret: config.signingSecret ?? "",
            endpoints: "/slack/events",
            logger,
          })
        : new bolt.SocketModeReceiver({
            appToken: config.appToken ?? "",
            logger,
            installerOptions: {
              clientOptions: { slackApiUrl: config.apiUrl, retryConfig: { retries: 2, minTimeout: 500 } },
            },
          });
    const app = new bolt.App({
      receiver,
      logger,
      clientOptions: {
        slackApiUrl: config.apiUrl,
        retryConfig: { retries: 0 },
        rejectRateLimitedCalls: true,
      },
      convoStore: false,
      authorize: async () => ({ botToken: config.botToken, botUserId, botId: str(auth.bot_id), teamId }),
    });
    const current: Session = {
      config,
      app,
      client,
      handlers,
      botUserId,
      teamId,
      mention: new RegExp(`[ \\t]*<@${botUserId.replace(/[^\w]/g, "\\$&")}(?:\\|[^>]*)?>[ \\t]*`, "g"),
      closed: false,
      delivered: new Set(),
      threads: new Set(),
      channels: new Map(),
      chains: new Map(),
      warnedChannelInfo: false,
    };
    s = current;
    app.use(async (args) => route(current, args.body, (args as { ack?: () => Promise<void> }).ack));
    // Send-only (`hermes send`): no socket and no port, so a running gateway keeps receiving.
    if (!receive) return current;
    try {
      if (receiver instanceof bolt.SocketModeReceiver) {
        current.socket = receiver;
        await startSocket(current, receiver);
      } else {
        const server: unknown = await app.start({ port: config.port, host: config.host });
        current.server = server as Server;
      }
    } catch (err) {
      current.closed = true;
      if (err instanceof PlatformError) throw err;
      const hint =
        (err as { code?: string }).code === "EADDRINUSE" ? " (the port is in use; set SLACK_HTTP_PORT)" : "";
      throw new PlatformError(
        `Slack: could not listen on ${config.host}:${config.port}: ${errorText(err)}${hint}.`,
      );
    }
    return current;
  }

  return {
    platform: "slack",
    capabilities: {
      maxMessageLength: 39_000,
      edit: true,
      buttons: true,
      typing: false,
      media: true,
      maxMediaBytes: MAX_UPLOAD_BYTES,
    },

    httpAddress() {
      const address = session?.server?.address();
      if (!address || typeof address === "string") return undefined;
      return { host: (address as AddressInfo).address, port: (address as AddressInfo).port };
    },

    async connect(handlers: AdapterHandlers, connectOptions?: ConnectOptions): Promise<void> {
      if (session) throw new PlatformError("Slack adapter is already connected; disconnect first.");
      session = await open(handlers, connectOptions?.receive !== false);
    },

    async disconnect(): Promise<void> {
      const s = session;
      if (!s) return;
      session = undefined;
      s.closed = true;
      clearTimeout(s.reconnectTimer);
      if (s.socket) {
        await withTimeout(s.socket.client.disconnect(), 10_000, "Socket Mode disconnect timed out").catch(
          () => {},
        );
        return;
      }
      const server = s.server;
      if (!server) return;
      const stopped = s.app.stop().catch(() => {});
      // Idle keep-alive sockets would hold the port; busy ones get two seconds to finish.
      server?.closeIdleConnections();
      const force = setTimeout(() => server?.closeAllConnections(), 2000);
      await stopped;
      clearTimeout(force);
    },

    /** `target.replyTo` is not used: a Slack reply is a thread, which `threadId` names. */
    async send(target: OutboundTarget, text: string, sendOptions?: SendOptions): Promise<SentMessage> {
      const s = live("send");
      const plain = sendOptions?.plain === true;
      const body = plain ? escapeSlackText(text) : markdownToMrkdwn(text);
      const args: Json = { channel: target.chatId, text: body, thread_ts: target.threadId };
      if (plain) args.mrkdwn = false;
      const buttons = sendOptions?.buttons;
      if (buttons?.length) args.blocks = buildMessageBlocks(plain ? text : body, buttons, plain);
      const res = await call(s, "chat.postMessage", args, `chat.postMessage to ${target.chatId}`);
      const ts = str(res.ts);
      if (!ts) throw new PlatformError(`Slack chat.postMessage to ${target.chatId} returned no message ts.`);
      if (target.threadId) remember(s.threads, `${target.chatId}:${target.threadId}`);
      return { messageId: ts };
    },

    async edit(target: OutboundTarget, messageId: string, text: string, sendOptions?: SendOptions) {
      const s = live("edit");
      const plain = sendOptions?.plain === true;
      const body = plain ? escapeSlackText(text) : markdownToMrkdwn(text);
      const buttons = sendOptions?.buttons;
      // An empty `blocks` list is how chat.update removes the buttons a message had.
      const blocks = buttons?.length ? buildMessageBlocks(plain ? text : body, buttons, plain) : [];
      const args = { channel: target.chatId, ts: messageId, text: body, blocks };
      await call(s, "chat.update", args, `chat.update of ${messageId} in ${target.chatId}`);
    },

    async typing(): Promise<void> {
      // Slack has no typing indicator for bots outside assistant threads.
    },

    async sendMedia(target: OutboundTarget, media: OutboundMedia): Promise<SentMessage> {
      let size: number;
      try {
        const info = await stat(media.path);
        if (!info.isFile()) throw new Error("not a regular file");
        size = info.size;
      } catch (err) {
        const reason = (err as { code?: string }).code === "ENOENT" ? "file not found" : errorText(err);
        throw new PlatformError(`Cannot upload ${media.path} to Slack: ${reason}.`);
      }
      if (size > MAX_UPLOAD_BYTES) {
        throw new PlatformError(
          `Cannot upload ${media.path} to Slack: it is ${size} bytes; Slack takes at most 1 GiB.`,
        );
      }
      const s = live("upload files");
      const upload = {
        file: media.path,
        filename: basename(media.path),
        initial_comment: media.caption ? markdownToMrkdwn(media.caption) : undefined,
      };
      const args: webApi.FilesUploadV2Arguments = target.threadId
        ? { ...upload, channel_id: target.chatId, thread_ts: target.threadId }
        : { ...upload, channel_id: target.chatId };
      let res: Json;
      try {
        res = { ...(await s.client.filesUploadV2(args)) };
      } catch (err) {
        throw slackCallError(err, `file upload of ${upload.filename} to ${target.chatId}`);
      }
      const completions = Array.isArray(res.files) ? res.files.filter(isRecord) : [];
      const files = completions.flatMap((c) => (Array.isArray(c.files) ? c.files.filter(isRecord) : []));
      if (target.threadId) remember(s.threads, `${target.chatId}:${target.threadId}`);
      // Slack shares uploads asynchronously, so the message ts is not known yet; the file id is.
      return { messageId: str(files[0]?.id) ?? "" };
    },
  };
}
