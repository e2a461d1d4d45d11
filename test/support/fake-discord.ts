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
  guildCreatePayload,
  type InjectedFailure,
  type InjectMessageSpec,
  interactionPayload,
  type Json,
  matches,
  memberPayload,
  NOT_FOUND,
  type PathMatcher,
  type Session,
  snowflake,
  userPayload,
} from "./fake-discord-model.js";
import { attachmentPayload, messagePayload, readBody, routeRest, writeJson } from "./fake-discord-rest.js";

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

  // The state the REST routes (fake-discord-rest.ts) read and change.
  readonly users = new Map<string, FakeUser>([[this.botUser.id, this.botUser]]);
  private readonly guilds = new Map<string, FakeGuild>();
  readonly channels = new Map<string, FakeChannel>();
  readonly files = new Map<string, { data: Buffer; contentType: string }>();
  readonly interactions = new Map<string, { token: string; answered: boolean }>();
  /** The application (slash) commands the bot published, as last PUT. */
  applicationCommands: Json[] = [];
  private readonly failures: { method: string; path: PathMatcher; failure: InjectedFailure }[] = [];
  private readonly waiters = new Set<() => void>();
  private readonly sessions = new Set<Session>();
  private readonly sockets = new Set<Socket>();
  private readonly server = createServer((req, res) => {
    this.handleHttp(req, res).catch((err: unknown) => {
      if (!res.headersSent) writeJson(res, 500, { message: `fake-discord: ${String(err)}`, code: 0 });
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
    this.dispatch("GUILD_CREATE", guildCreatePayload(guild, this.channels.values()));
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
      return { ...attachmentPayload(this, a.filename, a.size ?? data.length, contentType, path), ...flags };
    });
    const mentions = this.mentionsIn(content);
    const fields = { id, channel_id: channel.id, channel_type: channel.type, author, content, mentions };
    const payload = messagePayload({ ...fields, attachments, flags: spec.flags ?? 0 });
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
    const data = {
      id: String(command?.id ?? snowflake()),
      name: spec.name,
      type: 1,
      ...(spec.args ? { options: [{ name: "args", type: 3, value: spec.args }] } : {}),
    };
    const payload = interactionPayload({
      id: interactionId,
      token,
      applicationId: this.applicationId,
      type: 2,
      data,
      channel,
      user,
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
    const payload = interactionPayload({
      id: interactionId,
      token,
      applicationId: this.applicationId,
      type: 3,
      data: { custom_id: spec.customId, component_type: 2 },
      channel,
      user,
      message,
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

  private async handleHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parsed = new URL(req.url ?? "/", this.url);
    if (req.method === "GET" && parsed.pathname.startsWith("/attachments/")) {
      const file = this.files.get(parsed.pathname);
      if (!file) return writeJson(res, 404, NOT_FOUND);
      res.writeHead(200, { "content-type": file.contentType, "content-length": String(file.data.length) });
      res.end(file.data);
      return;
    }
    if (!parsed.pathname.startsWith(API_PREFIX)) return writeJson(res, 404, NOT_FOUND);
    // Discord decodes percent-escapes in paths (`/users/%40me` is `/users/@me`).
    const path = decodeURIComponent(parsed.pathname.slice(API_PREFIX.length));
    const method = req.method ?? "GET";
    const query = Object.fromEntries(parsed.searchParams);
    const call: DiscordCall = {
      method,
      path,
      query,
      headers: req.headers,
      ...(await readBody(req)),
      status: 0,
    };
    const answer = (status: number, payload: unknown, headers?: Record<string, string>): void => {
      call.status = status;
      this.calls.push(call);
      writeJson(res, status, payload, headers);
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
    answer(...routeRest(this, call));
  }

  private mentionsIn(content: string): Json[] {
    const ids = new Set([...content.matchAll(/<@!?(\d+)>/g)].map((m) => m[1] ?? ""));
    return [...ids].map((id) => userPayload(this.users.get(id) ?? { id, username: `user${id}` }));
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
      this.sendTo(session, "GUILD_CREATE", guildCreatePayload(guild, this.channels.values()));
    this.wakeWaiters();
  }
}
