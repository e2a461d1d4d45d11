/**
 * A local stand-in for Discord on 127.0.0.1 that speaks its real wire protocols, so the real
 * discord.js client can log in and talk to it:
 *
 * - REST API v10 under `/api/v10` (bot token checked on every authenticated call, 401 with
 *   Discord's body on a wrong one), recording every call for assertions;
 * - the Gateway WebSocket (JSON encoding, no compression): HELLO, IDENTIFY → READY then
 *   GUILD_CREATE for each guild, heartbeat → ACK, then whatever dispatches the test injects;
 * - plain HTTP downloads for attachment URLs.
 *
 *   const discord = await startFakeDiscord();
 *   // adapter env: DISCORD_BOT_TOKEN = discord.token, DISCORD_API_URL = discord.apiBase
 *   const guild = discord.addGuild({ name: "Lab", channels: [{ name: "general" }] });
 *   discord.injectMessage({ channelId: guild.channels[0].id, content: `<@${discord.botUser.id}> hi` });
 *   const call = await discord.waitForCall("POST", (path) => path.endsWith("/messages"));
 *   await discord.stop();
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { type RawData, type WebSocket, WebSocketServer } from "ws";

import {
  API_PREFIX,
  channelPayload,
  DEFAULT_TOKEN,
  type DiscordCall,
  type FakeChannel,
  type FakeDiscordOptions,
  type FakeGuild,
  type FakeUser,
  type InjectedFailure,
  type InjectMessageSpec,
  type Json,
  matches,
  memberPayload,
  NOT_FOUND,
  type PathMatcher,
  type Session,
  snowflake,
  TOO_LONG,
  UNKNOWN_CHANNEL,
  type UploadedFile,
  userPayload,
} from "./fake-discord-model.js";

export {
  type DiscordCall,
  type FakeAttachmentSpec,
  type FakeChannel,
  type FakeDiscordOptions,
  type FakeGuild,
  type FakeUser,
  type InjectedFailure,
  type InjectMessageSpec,
  type PathMatcher,
  snowflake,
  type UploadedFile,
} from "./fake-discord-model.js";

/** Starts a fake on a free loopback port. */
export async function startFakeDiscord(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
  const fake = new FakeDiscord(options);
  await fake.listen();
  return fake;
}

export class FakeDiscord {
  readonly token: string;
  readonly applicationId = snowflake();
  readonly botUser: FakeUser = { id: this.applicationId, username: "hermes-test-bot", bot: true };
  /** Every REST call, in order. */
  readonly calls: DiscordCall[] = [];
  /** IDENTIFY payloads (`d`) received over the gateway. */
  readonly identifies: Json[] = [];
  /** Messages by id: those the bot sent or edited and those the test injected. */
  readonly messages = new Map<string, Json>();
  /** Heartbeats received (each was acknowledged). */
  heartbeats = 0;
  /** Receives the bot's Voice State Updates (op 4); set by fake-discord-voice.ts. */
  onVoiceStateUpdate: ((d: Json) => void) | undefined;
  url = "";
  gatewayUrl = "";

  private readonly users = new Map<string, FakeUser>([[this.botUser.id, this.botUser]]);
  private readonly guilds = new Map<string, FakeGuild>();
  private readonly channels = new Map<string, FakeChannel>();
  private readonly files = new Map<string, { data: Buffer; contentType: string }>();
  private readonly interactions = new Map<string, { token: string; answered: boolean }>();
  /** The application (slash) commands the bot published, as last PUT. */
  applicationCommands: Json[] = [];
  private readonly failures: { method: string; path: PathMatcher; failure: InjectedFailure }[] = [];
  private readonly waiters = new Set<() => void>();
  private readonly sessions = new Set<Session>();
  private readonly sockets = new Set<Socket>();
  private readonly server = createServer((req, res) => {
    this.handleHttp(req, res).catch((err: unknown) => {
      if (!res.headersSent) this.json(res, 500, { message: `fake-discord: ${String(err)}`, code: 0 });
    });
  });
  private readonly wss = new WebSocketServer({ noServer: true });

  constructor(private readonly options: FakeDiscordOptions = {}) {
    this.token = options.token ?? DEFAULT_TOKEN;
  }

  /** REST base for discord.js (`rest.api`); the client adds the `/v10` segment. */
  get apiBase(): string {
    return `${this.url}/api`;
  }

  /** Gateway sockets that completed IDENTIFY and are still open. */
  get openSessions(): number {
    return this.sessions.size;
  }

  async listen(): Promise<void> {
    this.server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
    this.server.on("upgrade", (req, socket, head) => {
      this.wss.handleUpgrade(req, socket, head, (ws) => this.onGateway(ws));
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
    this.gatewayUrl = `ws://127.0.0.1:${port}`;
  }

  async stop(): Promise<void> {
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  addUser(username: string, options: { bot?: boolean; id?: string } = {}): FakeUser {
    const user: FakeUser = { id: options.id ?? snowflake(), username, bot: options.bot ?? false };
    this.users.set(user.id, user);
    return user;
  }

  /** Registers a guild (and announces it with GUILD_CREATE to sessions already open). */
  addGuild(spec: {
    id?: string;
    name: string;
    channels?: { id?: string; name: string; type?: number }[];
  }): FakeGuild {
    const guild: FakeGuild = { id: spec.id ?? snowflake(), name: spec.name, channels: [] };
    for (const c of spec.channels ?? []) {
      const channel: FakeChannel = {
        id: c.id ?? snowflake(),
        type: c.type ?? 0,
        name: c.name,
        guildId: guild.id,
      };
      guild.channels.push(channel);
      this.channels.set(channel.id, channel);
    }
    this.guilds.set(guild.id, guild);
    this.dispatch("GUILD_CREATE", this.guildCreatePayload(guild));
    return guild;
  }

  /** Opens a public thread under a guild channel; `announce: false` skips THREAD_CREATE. */
  addThread(spec: { parentId: string; name: string; id?: string; announce?: boolean }): FakeChannel {
    const parent = this.channels.get(spec.parentId);
    if (!parent?.guildId) throw new Error(`fake-discord: no guild channel ${spec.parentId} for a thread`);
    const thread: FakeChannel = {
      id: spec.id ?? snowflake(),
      type: 11,
      name: spec.name,
      parentId: parent.id,
    };
    Object.assign(thread, { guildId: parent.guildId, recipient: this.botUser });
    this.channels.set(thread.id, thread);
    if (spec.announce !== false)
      this.dispatch("THREAD_CREATE", { ...channelPayload(thread), newly_created: true });
    return thread;
  }

  /** The DM channel between `user` and the bot (created on first use). */
  dmChannel(user: FakeUser): FakeChannel {
    for (const channel of this.channels.values()) {
      if (channel.type === 1 && channel.recipient?.id === user.id) return channel;
    }
    const channel: FakeChannel = { id: snowflake(), type: 1, recipient: user };
    this.channels.set(channel.id, channel);
    return channel;
  }

  /** Sends any dispatch (`t`, `d`) to every identified session. */
  dispatch(event: string, data: unknown): void {
    for (const session of this.sessions) this.sendTo(session, event, data);
  }

  /** Dispatches MESSAGE_CREATE as Discord would shape it; returns the payload sent. */
  injectMessage(spec: InjectMessageSpec): Json {
    const author = spec.author ?? this.addUser("alice");
    this.users.set(author.id, author);
    const channel = spec.channelId ? this.channels.get(spec.channelId) : this.dmChannel(author);
    if (!channel) throw new Error(`fake-discord: unknown channel ${spec.channelId}`);
    const id = spec.id ?? snowflake();
    const content = spec.content ?? "";
    const attachments = (spec.attachments ?? []).map((a) => {
      const path = `/attachments/${channel.id}/${id}/${a.filename}`;
      const data = typeof a.data === "string" ? Buffer.from(a.data) : a.data;
      const contentType = a.contentType ?? "application/octet-stream";
      if (!a.missing) this.files.set(path, { data, contentType });
      const flags = a.flags === undefined ? {} : { flags: a.flags };
      return { ...this.attachmentPayload(a.filename, a.size ?? data.length, contentType, path), ...flags };
    });
    const mentions = this.mentionsIn(content);
    const fields = { id, channel_id: channel.id, channel_type: channel.type, author, content, mentions };
    const payload = this.messagePayload({ ...fields, attachments, flags: spec.flags ?? 0 });
    if (channel.guildId) Object.assign(payload, { guild_id: channel.guildId, member: memberPayload() });
    if (spec.replyTo) {
      const referenced = this.messages.get(spec.replyTo);
      payload.type = 19;
      payload.message_reference = {
        message_id: spec.replyTo,
        channel_id: channel.id,
        guild_id: channel.guildId,
      };
      payload.referenced_message = referenced ?? null;
      const repliedTo = referenced?.author as { id?: string } | undefined;
      if (repliedTo?.id && !mentions.some((m) => m.id === repliedTo.id)) mentions.push(repliedTo);
    }
    this.messages.set(id, payload);
    this.dispatch("MESSAGE_CREATE", payload);
    return payload;
  }

  /**
   * Dispatches a slash-command INTERACTION_CREATE (type 2) in a channel, as a user picking
   * `/name` from the command list with `args` as its string option; returns its id.
   */
  useSlashCommand(spec: { channelId: string; name: string; args?: string; user?: FakeUser }): string {
    const channel = this.channels.get(spec.channelId);
    if (!channel) throw new Error(`fake-discord: unknown channel ${spec.channelId}`);
    const user = spec.user ?? this.addUser("alice");
    this.users.set(user.id, user);
    const interactionId = snowflake();
    const token = `interaction-token-${interactionId}`;
    this.interactions.set(interactionId, { token, answered: false });
    const command = this.applicationCommands.find((c) => c.name === spec.name);
    const payload: Json = {
      id: interactionId,
      application_id: this.applicationId,
      type: 2,
      token,
      version: 1,
      data: {
        id: String(command?.id ?? snowflake()),
        name: spec.name,
        type: 1,
        ...(spec.args ? { options: [{ name: "args", type: 3, value: spec.args }] } : {}),
      },
      channel_id: channel.id,
      channel: channelPayload(channel),
      app_permissions: "0",
      locale: "en-US",
      entitlements: [],
      authorizing_integration_owners: { "0": channel.guildId ?? "0" },
      context: channel.guildId ? 0 : 1,
    };
    if (!channel.guildId) payload.user = userPayload(user);
    else
      Object.assign(payload, {
        guild_id: channel.guildId,
        member: { ...memberPayload(), user: userPayload(user) },
      });
    this.dispatch("INTERACTION_CREATE", payload);
    return interactionId;
  }

  /** Dispatches a button INTERACTION_CREATE for a message the fake knows; returns its id and token. */
  pressButton(spec: { messageId: string; customId: string; user?: FakeUser }): {
    interactionId: string;
    token: string;
  } {
    const message = this.messages.get(spec.messageId);
    const channel = this.channels.get(String(message?.channel_id));
    if (!message || !channel) throw new Error(`fake-discord: unknown message ${spec.messageId}`);
    const user = spec.user ?? this.addUser("alice");
    this.users.set(user.id, user);
    const interactionId = snowflake();
    const token = `interaction-token-${interactionId}`;
    this.interactions.set(interactionId, { token, answered: false });
    const payload: Json = {
      id: interactionId,
      application_id: this.applicationId,
      type: 3,
      token,
      version: 1,
      data: { custom_id: spec.customId, component_type: 2 },
      channel_id: channel.id,
      channel: channelPayload(channel),
      message,
      app_permissions: "0",
      locale: "en-US",
      entitlements: [],
      authorizing_integration_owners: { "0": channel.guildId ?? "0" },
      context: channel.guildId ? 0 : 1,
    };
    if (!channel.guildId) payload.user = userPayload(user);
    else
      Object.assign(payload, {
        guild_id: channel.guildId,
        member: { ...memberPayload(), user: userPayload(user) },
      });
    this.dispatch("INTERACTION_CREATE", {
      ...payload,
      ...(channel.guildId ? { guild_locale: "en-US" } : {}),
    });
    return { interactionId, token };
  }

  /** The next REST call matching `method` and `path` answers with this instead. */
  failNext(method: string, path: PathMatcher, failure: InjectedFailure): void {
    this.failures.push({ method, path, failure });
  }

  /** The next matching call answers 429 with Discord's rate-limit headers and body. */
  rateLimitNext(method: string, path: PathMatcher, retryAfterSeconds: number): void {
    const headers = {
      "retry-after": String(Math.ceil(retryAfterSeconds)),
      "x-ratelimit-limit": "5",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset-after": String(retryAfterSeconds),
      "x-ratelimit-bucket": "fake-bucket",
      "x-ratelimit-scope": "user",
    };
    const body = { message: "You are being rate limited.", retry_after: retryAfterSeconds, global: false };
    this.failNext(method, path, { status: 429, body, headers });
  }

  /** Resolves with the first call (past or future) matching; rejects after `timeoutMs`. */
  waitForCall(method: string, path: PathMatcher, timeoutMs = 15_000): Promise<DiscordCall> {
    const find = () => this.calls.find((c) => c.method === method && matches(path, c.path));
    const seen = () => this.calls.map((c) => `${c.method} ${c.path}`).join(", ");
    return this.waitFor(find, timeoutMs, () => `no ${method} ${String(path)} call; calls so far: ${seen()}`);
  }

  /** Resolves once at least `count` sessions have identified. */
  async waitForIdentify(count = 1, timeoutMs = 15_000): Promise<void> {
    const probe = () => (this.identifies.length >= count ? true : undefined);
    await this.waitFor(probe, timeoutMs, () => `expected ${count} IDENTIFY, got ${this.identifies.length}`);
  }

  private waitFor<T>(probe: () => T | undefined, timeoutMs: number, describe: () => string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const wake = (): void => {
        const found = probe();
        if (found === undefined) return;
        this.waiters.delete(wake);
        clearTimeout(timer);
        resolve(found);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(wake);
        reject(new Error(`fake-discord: timed out after ${timeoutMs} ms: ${describe()}`));
      }, timeoutMs);
      this.waiters.add(wake);
      wake();
    });
  }

  private wakeWaiters(): void {
    for (const wake of [...this.waiters]) wake();
  }

  private json(
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ): void {
    if (status === 204) res.writeHead(204, headers).end();
    else res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
  }

  private async readBody(req: IncomingMessage): Promise<Pick<DiscordCall, "body" | "files">> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    if (raw.length === 0) return { body: undefined, files: [] };
    const type = req.headers["content-type"] ?? "";
    if (!type.startsWith("multipart/form-data"))
      return { body: JSON.parse(raw.toString("utf8")) as Json, files: [] };
    // Node's fetch implementation parses multipart bodies for us.
    const form = await new Response(raw, { headers: { "content-type": type } }).formData();
    const result: Pick<DiscordCall, "body" | "files"> = { body: undefined, files: [] };
    for (const [field, value] of form.entries()) {
      if (typeof value === "string") {
        if (field === "payload_json") result.body = JSON.parse(value) as Json;
        continue;
      }
      const data = Buffer.from(await value.arrayBuffer());
      result.files.push({ field, name: value.name, contentType: value.type, data });
    }
    return result;
  }

  private async handleHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parsed = new URL(req.url ?? "/", this.url);
    if (req.method === "GET" && parsed.pathname.startsWith("/attachments/")) {
      const file = this.files.get(parsed.pathname);
      if (!file) return this.json(res, 404, NOT_FOUND);
      res.writeHead(200, { "content-type": file.contentType, "content-length": String(file.data.length) });
      res.end(file.data);
      return;
    }
    if (!parsed.pathname.startsWith(API_PREFIX)) return this.json(res, 404, NOT_FOUND);
    // Discord decodes percent-escapes in paths (`/users/%40me` is `/users/@me`).
    const path = decodeURIComponent(parsed.pathname.slice(API_PREFIX.length));
    const method = req.method ?? "GET";
    const query = Object.fromEntries(parsed.searchParams);
    const call: DiscordCall = {
      method,
      path,
      query,
      headers: req.headers,
      ...(await this.readBody(req)),
      status: 0,
    };
    const answer = (status: number, payload: unknown, headers?: Record<string, string>): void => {
      call.status = status;
      this.calls.push(call);
      this.json(res, status, payload, headers);
      this.wakeWaiters();
    };
    const index = this.failures.findIndex((f) => f.method === method && matches(f.path, path));
    const injected = index >= 0 ? this.failures.splice(index, 1)[0]?.failure : undefined;
    if (injected) return answer(injected.status, injected.body, injected.headers);
    // Interaction callbacks and interaction webhooks authenticate with the token in the path.
    const tokenInPath = path.startsWith("/interactions/") || path.startsWith("/webhooks/");
    if (!tokenInPath && req.headers.authorization !== `Bot ${this.token}`) {
      return answer(401, { message: "401: Unauthorized", code: 0 });
    }
    answer(...this.route(call));
  }

  private route({ method, path, body, files, query }: DiscordCall): [number, unknown] {
    const [root, id, sub, subId, extra] = path.split("/").filter(Boolean);
    if (method === "GET" && path === "/users/@me") return [200, userPayload(this.botUser)];
    if (method === "GET" && path === "/gateway/bot") {
      const session_start_limit = { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 };
      return [200, { url: this.gatewayUrl, shards: 1, session_start_limit }];
    }
    if (method === "POST" && path === "/users/@me/channels") {
      const recipient = this.users.get(String(body?.recipient_id ?? ""));
      if (!recipient) return [400, { message: "Invalid Recipient(s)", code: 50033 }];
      return [200, channelPayload(this.dmChannel(recipient))];
    }
    if (root === "channels" && id) {
      const channel = this.channels.get(id);
      if (!channel) return [404, UNKNOWN_CHANNEL];
      if (method === "GET" && !sub) return [200, channelPayload(channel)];
      if (method === "POST" && sub === "typing" && !subId) return [204, undefined];
      if (method === "POST" && sub === "messages" && !subId)
        return this.createBotMessage(channel, body ?? {}, files);
      if (method === "PATCH" && sub === "messages" && subId && !extra) {
        const existing = this.messages.get(subId);
        if (existing?.channel_id !== channel.id) return [404, { message: "Unknown Message", code: 10008 }];
        if (typeof body?.content === "string" && body.content.length > 2000) return [400, TOO_LONG];
        const updated = { ...existing, ...body, edited_timestamp: new Date().toISOString() };
        this.messages.set(subId, updated);
        return [200, updated];
      }
    }
    if (method === "PUT" && root === "applications" && id === this.applicationId && sub === "commands") {
      const list = Array.isArray(body) ? (body as Json[]) : [];
      const bad = list.find((c) => !/^[-_\p{L}\p{N}]{1,32}$/u.test(String(c.name)) || !c.description);
      if (bad || list.length > 100) return [400, { message: "Invalid Form Body", code: 50035 }];
      this.applicationCommands = list.map((c) => ({
        ...c,
        id: snowflake(),
        application_id: this.applicationId,
      }));
      return [200, this.applicationCommands];
    }
    if (method === "POST" && root === "interactions" && id && sub && subId === "callback") {
      const interaction = this.interactions.get(id);
      if (interaction?.token !== sub) return [404, { message: "Unknown interaction", code: 10062 }];
      if (interaction.answered)
        return [400, { message: "Interaction has already been acknowledged.", code: 40060 }];
      interaction.answered = true;
      if (query.with_response !== "true") return [204, undefined];
      return [200, { interaction: { id, type: 3 }, resource: { type: body?.type } }];
    }
    if (method === "POST" && root === "webhooks" && id === this.applicationId && sub) {
      // Interaction follow-up messages.
      return [200, this.messagePayload({ channel_id: "0", author: this.botUser, ...(body ?? {}) })];
    }
    return [404, NOT_FOUND];
  }

  private createBotMessage(channel: FakeChannel, body: Json, files: UploadedFile[]): [number, unknown] {
    const content = typeof body.content === "string" ? body.content : "";
    const components = Array.isArray(body.components) ? body.components : [];
    if (!content && files.length === 0 && components.length === 0) {
      return [400, { message: "Cannot send an empty message", code: 50006 }];
    }
    if (content.length > 2000) return [400, TOO_LONG];
    const reference = body.message_reference as
      | { message_id?: string; fail_if_not_exists?: boolean }
      | undefined;
    const known = reference?.message_id !== undefined && this.messages.has(reference.message_id);
    if (reference?.message_id && !known && reference.fail_if_not_exists !== false) {
      return [400, { message: "Invalid Form Body", code: 50035 }];
    }
    const id = snowflake();
    const attachments = files.map((file) => {
      const path = `/attachments/${channel.id}/${id}/${file.name}`;
      this.files.set(path, { data: file.data, contentType: file.contentType });
      return this.attachmentPayload(file.name, file.data.length, file.contentType, path);
    });
    const message = this.messagePayload({
      id,
      channel_id: channel.id,
      author: this.botUser,
      content,
      components,
    });
    message.attachments = attachments;
    if (known) Object.assign(message, { type: 19, message_reference: { message_id: reference?.message_id } });
    if (channel.guildId) message.guild_id = channel.guildId;
    this.messages.set(id, message);
    return [200, message];
  }

  private attachmentPayload(filename: string, size: number, contentType: string, path: string): Json {
    const url = `${this.url}${path}`;
    return { id: snowflake(), filename, size, content_type: contentType, url, proxy_url: url };
  }

  private messagePayload(fields: Json & { author: FakeUser }): Json {
    const lists = { mentions: [], mention_roles: [], attachments: [], embeds: [], components: [] };
    const base = { id: snowflake(), type: 0, content: "", timestamp: new Date().toISOString(), flags: 0 };
    const flags = { edited_timestamp: null, tts: false, mention_everyone: false, pinned: false };
    return { ...base, ...flags, ...lists, ...fields, author: userPayload(fields.author) };
  }

  private mentionsIn(content: string): Json[] {
    const ids = new Set([...content.matchAll(/<@!?(\d+)>/g)].map((m) => m[1] ?? ""));
    return [...ids].map((id) => userPayload(this.users.get(id) ?? { id, username: `user${id}` }));
  }

  private guildCreatePayload(guild: FakeGuild): Json {
    const threads = [...this.channels.values()].filter((c) => c.guildId === guild.id && c.parentId);
    const everyone = { id: guild.id, name: "@everyone", permissions: "0", position: 0, color: 0, flags: 0 };
    const empty = [
      "emojis",
      "stickers",
      "features",
      "members",
      "presences",
      "voice_states",
      "stage_instances",
    ];
    return {
      ...Object.fromEntries(empty.map((key) => [key, []])),
      id: guild.id,
      name: guild.name,
      icon: null,
      owner_id: snowflake(),
      unavailable: false,
      member_count: 2,
      large: false,
      joined_at: new Date().toISOString(),
      roles: [everyone],
      guild_scheduled_events: [],
      soundboard_sounds: [],
      channels: guild.channels.map(channelPayload),
      threads: threads.map(channelPayload),
    };
  }

  private sendTo(session: Session, event: string, data: unknown): void {
    session.seq += 1;
    session.socket.send(JSON.stringify({ op: 0, t: event, s: session.seq, d: data }));
  }

  private onGateway(socket: WebSocket): void {
    const session: Session = { socket, seq: 0 };
    const send = (op: number, d: unknown) => socket.send(JSON.stringify({ op, d, s: null, t: null }));
    if (!this.options.silentGateway)
      send(10, { heartbeat_interval: this.options.heartbeatIntervalMs ?? 41_250 });
    socket.on("close", () => this.sessions.delete(session));
    socket.on("message", (raw: RawData) => {
      let packet: { op?: number; d?: Json };
      try {
        packet = JSON.parse(raw.toString()) as typeof packet;
      } catch {
        socket.close(4002, "Decode error");
        return;
      }
      if (packet.op === 1) {
        this.heartbeats += 1;
        send(11, null);
      } else if (packet.op === 2) {
        this.identify(session, packet.d ?? {});
      } else if (packet.op === 4) {
        this.onVoiceStateUpdate?.(packet.d ?? {});
      } else if (packet.op === 6) {
        // Resuming is not supported: tell the client to identify afresh.
        send(9, false);
      }
    });
  }

  private identify(session: Session, identify: Json): void {
    const refusal = identify.token !== this.token ? 4004 : this.options.closeOnIdentify;
    if (refusal) {
      session.socket.close(refusal, refusal === 4004 ? "Authentication failed." : "Refused.");
      return;
    }
    this.identifies.push(identify);
    this.sessions.add(session);
    this.sendTo(session, "READY", {
      v: 10,
      user: { ...userPayload(this.botUser), verified: true, mfa_enabled: false, flags: 0 },
      guilds: [...this.guilds.values()].map((g) => ({ id: g.id, unavailable: true })),
      session_id: `session-${snowflake()}`,
      resume_gateway_url: this.gatewayUrl,
      shard: [0, 1],
      application: { id: this.applicationId, flags: 0 },
    });
    for (const guild of this.guilds.values())
      this.sendTo(session, "GUILD_CREATE", this.guildCreatePayload(guild));
    this.wakeWaiters();
  }
}
