/**
 * Discord adapter: a discord.js client (Gateway WebSocket for events, REST v10 for output) behind
 * the `PlatformAdapter` contract.
 *
 * Inbound: DMs, guild channels and threads become `InboundMessage`s; in guilds only messages that
 * mention the bot or reply to it pass (unless mention gating is off or the channel is a
 * free-response channel). Button presses become `InboundAction`s. Outbound goes straight through the
 * client's REST manager (no channel cache needed, so a chat id from a stored session works after a
 * restart). discord.js is loaded on first `connect`, never at import time.
 */
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { basename, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type * as DiscordJs from "discord.js";
import { redactText } from "../../util/redact.js";
import {
  buttonComponents,
  DISCORD_MAX_MESSAGE_LENGTH,
  mediaKindFor,
  splitForDiscord,
  stripBotMention,
  toDiscordMarkdown,
} from "./discord-format.js";
import { createDiscordVoice } from "./discord-voice.js";
import type {
  AdapterContext,
  AdapterHandlers,
  BotCommand,
  ConnectOptions,
  InboundMedia,
  MessageSource,
  OutboundMedia,
  OutboundTarget,
  PlatformAdapter,
  PlatformCapabilities,
  SendOptions,
  SentMessage,
} from "./types.js";
import { PlatformError } from "./types.js";

export {
  buttonComponents,
  DISCORD_MAX_MESSAGE_LENGTH,
  mediaKindFor,
  splitForDiscord,
  stripBotMention,
  toDiscordMarkdown,
} from "./discord-format.js";

type Discord = typeof DiscordJs;

export interface DiscordAdapterOptions {
  /** REST base without the version (`https://discord.com/api`); beats `DISCORD_API_URL`. */
  apiBase?: string;
  /** Overrides the WebSocket URL that `GET /gateway/bot` answers (a proxy or a local test server). */
  gatewayUrl?: string;
  /** How long `connect` may take before it gives up (default 30 s). */
  connectTimeoutMs?: number;
  /** After this long, a button press nobody acknowledged is answered (Discord allows 3 s). */
  interactionAckMs?: number;
}

const MAX_LENGTH = DISCORD_MAX_MESSAGE_LENGTH;
/** Discord's default upload limit for bots (servers with boosts allow more; we assume the floor). */
export const DISCORD_MAX_UPLOAD_BYTES = 25 * 1024 * 1024;
const DEFAULT_API_BASE = "https://discord.com/api";
const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
const DEFAULT_INTERACTION_ACK_MS = 1_500;
/** The one option of every published slash command: the rest of the command line. */
const SLASH_ARGS = "args";
/** Rate-limit waits up to this long are absorbed by discord.js; longer ones surface as PlatformError. */
const RATE_LIMIT_ABSORB_MS = 2_000;
const DOWNLOAD_TIMEOUT_MS = 60_000;
const DESTROY_TIMEOUT_MS = 5_000;
const REFUSED_TOKEN =
  "Discord refused DISCORD_BOT_TOKEN (401 Unauthorized): the token is wrong or was reset. Copy a fresh one from the Discord developer portal (your application → Bot → Reset Token).";
const REFUSED_INTENTS =
  "Discord refused the bot's intents: enable Message Content Intent under Bot → Privileged Gateway Intents in the Discord developer portal.";
const VOICE_MESSAGE_FLAG = 1 << 13;
/** Message types that carry user text: default and reply (joins, pins, boosts are ignored). */
const USER_MESSAGE_TYPES = new Set([0, 19]);
const NO_MASS_PINGS = { parse: ["users"] as ("users" | "roles" | "everyone")[] };

function loadDiscord(): Discord {
  const require = createRequire(import.meta.url);
  return require("discord.js") as Discord;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** A list setting given as a YAML list or a comma-separated string (as in `.env`). */
function listSetting(value: unknown): Set<string> {
  const items: unknown[] = Array.isArray(value) ? value : typeof value === "string" ? value.split(",") : [];
  return new Set(items.map((v) => String(v).trim()).filter(Boolean));
}

/** The fields of discord.js / undici errors we classify by (all optional, all unchecked). */
type ErrorFields = {
  [K in "name" | "message" | "status" | "code" | "retryAfter" | "timeToReset" | "cause"]?: unknown;
};

const NETWORK_CODES =
  /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|UND_ERR)/;

function networkReason(err: unknown): string | undefined {
  let e = err as ErrorFields | undefined;
  for (let depth = 0; e && depth < 4; depth++, e = e.cause as ErrorFields | undefined) {
    if (typeof e.code === "string" && NETWORK_CODES.test(e.code)) return `${e.code}: ${String(e.message)}`;
    if (e.name === "AbortError") return "the request timed out";
  }
  return undefined;
}

/** Turns whatever discord.js threw into a PlatformError that says what failed and why. */
export function toPlatformError(err: unknown, action: string, apiBase: string): PlatformError {
  if (err instanceof PlatformError) return err;
  const e = (err ?? {}) as ErrorFields;
  const message = String(e.message ?? err);
  if (typeof e.name === "string" && e.name.startsWith("RateLimitError")) {
    const wait = Math.max(Number(e.retryAfter) || 0, Number(e.timeToReset) || 0, 1000);
    return new PlatformError(`Discord rate-limited ${action}; retry in ${Math.ceil(wait / 1000)} s`, wait);
  }
  if (typeof e.status === "number") {
    if (e.status === 401) return new PlatformError(`Discord refused DISCORD_BOT_TOKEN trying to ${action}`);
    const code = typeof e.code === "number" && e.code !== 0 ? `, Discord code ${e.code}` : "";
    return new PlatformError(`Discord refused to ${action}: ${message} (HTTP ${e.status}${code})`);
  }
  const network = networkReason(err);
  if (network) return new PlatformError(`Could not reach Discord at ${apiBase} to ${action}: ${network}`);
  return new PlatformError(`Discord: could not ${action}: ${message}`);
}

type Client = DiscordJs.Client;
/** What messages and interactions share about where they happened. */
type EventPlace = {
  channel: DiscordJs.Channel | null;
  channelId: string | null;
  guildId: string | null;
  member: unknown;
};
type Rest = Client["rest"];
type RestOptions = NonNullable<DiscordJs.ClientOptions["rest"]>;
type MakeRequest = NonNullable<RestOptions["makeRequest"]>;

/** Creates the Discord adapter. Token: `DISCORD_BOT_TOKEN`; REST base: options, `DISCORD_API_URL`, Discord. */
export function createDiscordAdapter(
  ctx: AdapterContext,
  options: DiscordAdapterOptions = {},
): PlatformAdapter {
  const apiBase = (options.apiBase ?? ctx.env.DISCORD_API_URL ?? DEFAULT_API_BASE).replace(/\/+$/, "");
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const interactionAckMs = options.interactionAckMs ?? DEFAULT_INTERACTION_ACK_MS;
  const { settings, env } = ctx;
  const mentionSetting = String(settings.require_mention ?? env.DISCORD_REQUIRE_MENTION ?? "").trim();
  const requireMention = !/^(false|0|no|off)$/i.test(mentionSetting);
  const freeChannels = listSetting(settings.free_response_channels ?? env.DISCORD_FREE_RESPONSE_CHANNELS);

  /** Set from the start of `connect` until `disconnect` (REST works before the gateway is ready). */
  let client: Client | undefined;
  let connecting: Promise<void> | undefined;
  let cancelConnect: ((reason: PlatformError) => void) | undefined;
  const shutdowns = new WeakMap<Client, AbortController>();
  let handlers: AdapterHandlers | undefined;
  let downloads = new AbortController();
  const ackTimers = new Set<NodeJS.Timeout>();
  /** Per-chat chains so a slow download never reorders a chat's messages. */
  const chains = new Map<string, Promise<void>>();

  const report = (line: string): void => {
    try {
      handlers?.onError(line);
    } catch {
      // A failing error sink must not take the adapter down.
    }
  };

  function safely(what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      report(`Discord: ignored a ${what} it could not read: ${String(err)}`);
    }
  }

  async function call<T>(action: string, run: (r: Rest) => Promise<unknown>): Promise<T> {
    if (!client) throw new PlatformError(`Discord: cannot ${action}: the adapter is not connected`);
    try {
      return (await run(client.rest)) as T;
    } catch (err) {
      throw toPlatformError(err, action, apiBase);
    }
  }

  /** Where a message or button press happened; undefined for channels that carry no chat (voice, categories). */
  function sourceFor(at: EventPlace, user: DiscordJs.User): MessageSource | undefined {
    const member = at.member as { displayName?: unknown } | null;
    const userName = typeof member?.displayName === "string" ? member.displayName : user.displayName;
    const base = { platform: "discord", userId: user.id, userName };
    const { channel, channelId, guildId } = at;
    if (!channel) {
      // Not cached (a partial interaction payload): describe it from the ids alone.
      if (!channelId) return undefined;
      return guildId
        ? { ...base, chatType: "channel", chatId: channelId, scopeId: guildId }
        : { ...base, chatType: "dm", chatId: channelId };
    }
    if (channel.isDMBased()) return { ...base, chatType: "dm", chatId: channel.id };
    if (channel.isThread()) {
      const parentName = channel.parent?.name;
      return {
        ...base,
        chatType: "thread",
        chatId: channel.parentId ?? channel.id,
        threadId: channel.id,
        chatName: parentName ? `${parentName} / ${channel.name}` : channel.name,
        scopeId: channel.guildId,
      };
    }
    if (!channel.isTextBased() || !("guildId" in channel)) return undefined;
    const { id: chatId, name: chatName, guildId: scopeId } = channel;
    return { ...base, chatType: "channel", chatId, chatName, scopeId };
  }

  async function download(attachment: DiscordJs.Attachment, voice: boolean): Promise<InboundMedia> {
    const limit = ctx.maxInboundMediaBytes;
    if (attachment.size > limit) {
      throw new Error(`it is ${formatBytes(attachment.size)}, over the ${formatBytes(limit)} download limit`);
    }
    const signal = AbortSignal.any([downloads.signal, AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS)]);
    const response = await fetch(attachment.url, { signal });
    if (!response.ok || !response.body) throw new Error(`HTTP ${response.status} from ${attachment.url}`);
    const chunks: Uint8Array[] = [];
    let total = 0;
    for await (const chunk of response.body) {
      total += chunk.byteLength;
      if (total > limit) {
        await response.body.cancel().catch(() => undefined);
        throw new Error(`it is over the ${formatBytes(limit)} download limit`);
      }
      chunks.push(chunk);
    }
    await mkdir(ctx.mediaDir, { recursive: true });
    const safeName = basename(attachment.name || "file").replace(/[^\w.-]+/g, "_");
    const path = join(ctx.mediaDir, `discord-${attachment.id}-${safeName.slice(-100)}`);
    await writeFile(path, Buffer.concat(chunks));
    return {
      kind: mediaKindFor(attachment.contentType, voice),
      path,
      mimeType: attachment.contentType ?? undefined,
      fileName: attachment.name,
    };
  }

  async function handleMessage(message: DiscordJs.Message, botId: string): Promise<void> {
    // A thread the client never saw announced arrives without its parent: ask Discord once.
    if (message.channel.isThread() && !message.channel.parentId)
      await message.channel.fetch().catch(() => {});
    const source = sourceFor(message, message.author);
    if (!source) return;
    const explicit = new RegExp(`<@!?${botId}>`).test(message.content);
    let mentioned: boolean | undefined;
    if (source.chatType !== "dm") {
      const repliesToBot = message.mentions.repliedUser?.id === botId;
      const free =
        freeChannels.has(source.chatId) || (source.threadId ? freeChannels.has(source.threadId) : false);
      if (requireMention && !free && !explicit && !repliesToBot) return;
      mentioned = explicit;
    }
    const text = explicit ? stripBotMention(message.content, botId) : message.content;
    const media: InboundMedia[] = [];
    const notes: string[] = [];
    const voice = (Number(message.flags.bitfield) & VOICE_MESSAGE_FLAG) !== 0;
    for (const attachment of message.attachments.values()) {
      try {
        media.push(await download(attachment, voice));
      } catch (err) {
        if (downloads.signal.aborted) return;
        const reason = err instanceof Error ? err.message : String(err);
        notes.push(`[The attachment ${attachment.name} could not be downloaded: ${reason}]`);
        report(`Discord: could not download ${attachment.name} (message ${message.id}): ${reason}`);
      }
    }
    handlers?.onMessage({
      source,
      text: [text, ...notes].filter(Boolean).join("\n"),
      messageId: message.id,
      media: media.length > 0 ? media : undefined,
      mentioned,
    });
  }

  function onMessageCreate(message: DiscordJs.Message): void {
    const botId = client?.user?.id;
    if (!botId || !message.author || message.author.bot || message.author.id === botId) return;
    if (!USER_MESSAGE_TYPES.has(message.type)) return;
    const key = message.channelId;
    const previous = chains.get(key) ?? Promise.resolve();
    const next = previous
      .then(() => handleMessage(message, botId))
      .catch((err: unknown) => report(`Discord: dropped message ${message.id}: ${String(err)}`))
      .finally(() => {
        if (chains.get(key) === next) chains.delete(key);
      });
    chains.set(key, next);
  }

  function onButton(interaction: DiscordJs.ButtonInteraction): void {
    const source = sourceFor(interaction, interaction.user);
    if (!source) return;
    const ephemeral = loadDiscord().MessageFlags.Ephemeral;
    let first: Promise<unknown> | undefined;
    let toastSent = false;
    const respond = (text?: string): Promise<unknown> => {
      if (!first) {
        toastSent = Boolean(text);
        first = text ? interaction.reply({ content: text, flags: ephemeral }) : interaction.deferUpdate();
        return first;
      }
      if (!text || toastSent) return first;
      toastSent = true;
      return first.then(() => interaction.followUp({ content: text, flags: ephemeral }));
    };
    const failed = (err: unknown) => report(toPlatformError(err, "answer a button press", apiBase).message);
    const timer = setTimeout(() => {
      ackTimers.delete(timer);
      if (!first) respond().catch(failed);
    }, interactionAckMs);
    timer.unref();
    ackTimers.add(timer);
    handlers?.onAction({
      source,
      data: interaction.customId,
      messageId: interaction.message?.id,
      // Never rejects: a press that cannot be answered is reported, the router has nothing to do.
      acknowledge: async (text?: string) => {
        clearTimeout(timer);
        ackTimers.delete(timer);
        await respond(text).catch(failed);
      },
    });
  }

  /**
   * A slash command from Discord's command list: answered at once with the command as typed (an
   * interaction must be answered within 3 s and the router's reply is an ordinary message), then
   * handed to the router as that text, so it runs like a typed `/command`.
   */
  function onSlashCommand(interaction: DiscordJs.ChatInputCommandInteraction): void {
    const source = sourceFor(interaction, interaction.user);
    if (!source) return;
    const args = interaction.options.getString(SLASH_ARGS) ?? "";
    const text = `/${interaction.commandName}${args.trim() ? ` ${args.trim()}` : ""}`;
    void interaction
      .reply({ content: text, allowedMentions: NO_MASS_PINGS })
      .catch((err: unknown) => report(toPlatformError(err, "answer a slash command", apiBase).message))
      .finally(() => handlers?.onMessage({ source, text, messageId: interaction.id }));
  }

  /**
   * Publishes the chat's commands as Discord application commands, each with one optional
   * free-text `args` option (what follows the command when typed).
   */
  async function setCommands(commands: readonly BotCommand[]): Promise<void> {
    const appId = client?.application?.id ?? client?.user?.id;
    if (!appId) throw new PlatformError("Discord: cannot publish slash commands before connecting");
    const body = commands.slice(0, 100).map((c) => ({
      type: 1,
      name: c.name.toLowerCase().slice(0, 32),
      description: c.description.length > 100 ? `${c.description.slice(0, 99)}…` : c.description,
      options: [{ type: 3, name: SLASH_ARGS, description: "What follows the command", required: false }],
    }));
    await call("publish the slash commands", (r) => r.put(routes().applicationCommands(appId), { body }));
  }

  /**
   * discord.js runs its packet handlers inside the WebSocket's message callback, so a malformed
   * dispatch (say MESSAGE_CREATE without an author) would surface as an unhandled rejection and end
   * the process. Guard the one internal entry point; skip the guard if discord.js renames it.
   */
  function guardPackets(c: Client): void {
    const ws = c.ws as unknown as { handlePacket?: (packet: unknown, shard: unknown) => boolean };
    const original = ws.handlePacket;
    if (typeof original !== "function") return;
    ws.handlePacket = function guarded(packet: unknown, shard: unknown): boolean {
      try {
        return original.call(this, packet, shard);
      } catch (err) {
        const event = (packet as { t?: unknown } | undefined)?.t;
        report(`Discord: ignored a malformed ${String(event ?? "gateway")} event: ${String(err)}`);
        return true;
      }
    };
  }

  /**
   * Destroys a client at any stage. @discordjs/ws aborts a shard's pending wait for HELLO or READY
   * when it is destroyed, treats that abort as a failure and schedules a reconnect that detaches
   * the close it was awaiting: the destroy never finishes and the socket comes back. Settling those
   * waits as "closed" first makes the destroy final. Shards that are ready or idle are left alone.
   */
  async function destroyClient(c: Client): Promise<void> {
    shutdowns.get(c)?.abort();
    type Shard = { status?: unknown; emit(event: string, payload: unknown): boolean };
    const internal = c.ws as unknown as { _ws?: { strategy?: { shards?: Map<number, Shard> } } | null };
    const connecting = [...(internal._ws?.strategy?.shards?.values() ?? [])].filter(
      (shard) => shard.status === 1 || shard.status === 2,
    );
    for (const shard of connecting) shard.emit("closed", { code: 1000 });
    if (connecting.length > 0) await new Promise((resolve) => setImmediate(resolve));
    // Bounded, so a future discord.js that hangs here cannot hang the gateway's shutdown.
    await Promise.race([
      c.destroy().catch(() => undefined),
      sleep(DESTROY_TIMEOUT_MS, undefined, { ref: false }),
    ]);
  }

  /**
   * discord.js's own HTTP call, plus: requests end when the client is shut down (a login still
   * fetching the gateway address must not go on to open a socket after `disconnect`), and the
   * gateway address can be overridden.
   */
  function requester(discord: Discord, shutdown: AbortSignal): MakeRequest {
    const base = discord.DefaultRestOptions.makeRequest;
    return async (requestUrl, init) => {
      if (shutdown.aborted) throw new PlatformError("Discord: the client was shut down");
      const signal = init.signal ? AbortSignal.any([init.signal as AbortSignal, shutdown]) : shutdown;
      const response = await base(requestUrl, { ...init, signal } as typeof init);
      const url = options.gatewayUrl;
      if (!url || !response.ok || !new URL(requestUrl).pathname.endsWith("/gateway/bot")) return response;
      const body = { ...((await response.json()) as Record<string, unknown>), url };
      return new Response(JSON.stringify(body), {
        status: response.status,
        headers: { "content-type": "application/json" },
      }) as unknown as Awaited<ReturnType<MakeRequest>>;
    };
  }

  function loginError(err: unknown): PlatformError {
    const e = (err ?? {}) as ErrorFields;
    const message = String(e.message ?? err);
    if (e.code === "TokenInvalid" || e.status === 401 || message === "Authentication failed") {
      return new PlatformError(REFUSED_TOKEN);
    }
    if (message === "Used disallowed intents") return new PlatformError(REFUSED_INTENTS);
    const network = networkReason(err);
    if (network) return new PlatformError(`Could not reach Discord at ${apiBase}: ${network}`);
    return toPlatformError(err, "log in", apiBase);
  }

  function connect(h: AdapterHandlers, options?: ConnectOptions): Promise<void> {
    if (!client) connecting = start(h, options?.receive !== false);
    return connecting ?? Promise.resolve();
  }

  async function start(h: AdapterHandlers, receive: boolean): Promise<void> {
    const token = ctx.env.DISCORD_BOT_TOKEN?.trim();
    if (!token) {
      const where = join(ctx.home, ".env");
      throw new PlatformError(
        `DISCORD_BOT_TOKEN is not set: add your bot's token (Discord developer portal → your application → Bot → Token) to ${where}`,
      );
    }
    const discord = loadDiscord();
    const { GatewayIntentBits: Intents, Partials, Events } = discord;
    const restOptions: RestOptions = {
      api: apiBase,
      version: "10",
      rejectOnRateLimit: (limit) => Math.max(limit.retryAfter, limit.timeToReset) > RATE_LIMIT_ABSORB_MS,
    };
    const shutdown = new AbortController();
    restOptions.makeRequest = requester(discord, shutdown.signal);
    const c = new discord.Client({
      intents: [
        Intents.Guilds,
        Intents.GuildMessages,
        Intents.MessageContent,
        Intents.DirectMessages,
        // Who is in which voice channel (`/voice join`), and the bot's own voice session.
        Intents.GuildVoiceStates,
      ],
      partials: [Partials.Channel, Partials.Message],
      rest: restOptions,
      allowedMentions: NO_MASS_PINGS,
    });
    shutdowns.set(c, shutdown);
    client = c;
    handlers = h;
    downloads = new AbortController();
    guardPackets(c);
    // A throwing listener would unwind into discord.js's packet handling: contain it here.
    c.on(Events.MessageCreate, (message) => safely("message", () => onMessageCreate(message)));
    c.on(Events.InteractionCreate, (i) =>
      safely("interaction", () => {
        if (i.isButton()) onButton(i);
        else if (i.isChatInputCommand()) onSlashCommand(i);
      }),
    );
    c.on(Events.Error, (err) => report(`Discord client error: ${err.message}`));
    c.on(Events.ShardError, (err) => report(`Discord gateway connection error: ${err.message}`));
    const closed = (code: number) =>
      `Discord closed the gateway connection (code ${code}) and will not reconnect`;
    c.on(Events.ShardDisconnect, (event) => client === c && report(closed(event.code)));

    if (!receive) {
      // Send-only (`hermes send`): REST with the token, no gateway session to compete with a running gateway.
      c.rest.setToken(token);
      try {
        await c.rest.get(discord.Routes.user("@me"));
      } catch (err) {
        if (client === c) [client, handlers] = [undefined, undefined];
        await destroyClient(c);
        throw loginError(err);
      }
      return;
    }
    const ready = new Promise<void>((resolve) => c.once(Events.ClientReady, () => resolve()));
    const login = c.login(token);
    const late = `Discord did not finish logging in within ${connectTimeoutMs / 1000} s (API ${apiBase})`;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new PlatformError(`${late}; check the network and try again`)),
        connectTimeoutMs,
      );
    });
    const cancelled = new Promise<never>((_, reject) => {
      cancelConnect = reject;
    });
    try {
      await Promise.race([Promise.all([login, ready]), timeout, cancelled]);
    } catch (err) {
      if (client === c) [client, handlers] = [undefined, undefined];
      // A login that completes after we gave up must not leave its connection behind.
      login.then(
        () => destroyClient(c),
        () => undefined,
      );
      await destroyClient(c);
      throw err instanceof PlatformError ? err : loginError(err);
    } finally {
      clearTimeout(timer);
      cancelConnect = undefined;
    }
  }

  async function disconnect(): Promise<void> {
    cancelConnect?.(new PlatformError("Discord: disconnected before the login finished"));
    await voice.leaveAll();
    const c = client;
    client = undefined;
    downloads.abort();
    for (const timer of ackTimers) clearTimeout(timer);
    ackTimers.clear();
    if (c) await destroyClient(c);
    handlers = undefined;
  }

  function messageBody(target: OutboundTarget, content: string): Record<string, unknown> {
    const body: Record<string, unknown> = { content, allowed_mentions: NO_MASS_PINGS };
    if (target.replyTo) body.message_reference = { message_id: target.replyTo, fail_if_not_exists: false };
    return body;
  }

  const routes = () => loadDiscord().Routes;
  /** A voice channel's conversation writes to the text channel bound by `/voice join`. */
  const channelOf = (target: OutboundTarget) =>
    voice.textChannelFor(target.threadId) ?? (target.threadId || target.chatId);
  const voice = createDiscordVoice({
    client: () => client,
    handlers: () => handlers,
    settings,
    report,
    post: async (channelId, content) => {
      // Transcripts and notes pass the secret redactor like every other message the gateway sends.
      const body = { content: redactText(content).slice(0, MAX_LENGTH), allowed_mentions: NO_MASS_PINGS };
      await call(`post in channel ${channelId}`, (r) =>
        r.post(routes().channelMessages(channelId), { body }),
      ).catch((err: unknown) => report(toPlatformError(err, "post a voice note", apiBase).message));
    },
  });

  async function send(target: OutboundTarget, text: string, opts: SendOptions = {}): Promise<SentMessage> {
    const channelId = channelOf(target);
    const pieces = splitForDiscord(opts.plain ? text : toDiscordMarkdown(text));
    let last: { id: string } | undefined;
    for (const [index, piece] of pieces.entries()) {
      // The reply reference goes on the first piece, the buttons on the last.
      const body = messageBody(index === 0 ? target : { chatId: target.chatId }, piece);
      if (opts.buttons && index === pieces.length - 1) body.components = buttonComponents(opts.buttons);
      last = await call<{ id: string }>(`send a message to channel ${channelId}`, (r) =>
        r.post(routes().channelMessages(channelId), { body }),
      );
    }
    return { messageId: String(last?.id) };
  }

  async function edit(target: OutboundTarget, messageId: string, text: string, opts: SendOptions = {}) {
    const channelId = channelOf(target);
    const formatted = opts.plain ? text : toDiscordMarkdown(text);
    // One message cannot be split: cut what Discord would refuse.
    const content = formatted.length > MAX_LENGTH ? `${formatted.slice(0, MAX_LENGTH - 1)}…` : formatted;
    const body = {
      content,
      allowed_mentions: NO_MASS_PINGS,
      components: buttonComponents(opts.buttons ?? []),
    };
    await call(`edit message ${messageId} in channel ${channelId}`, (r) =>
      r.patch(routes().channelMessage(channelId, messageId), { body }),
    );
  }

  async function typing(target: OutboundTarget): Promise<void> {
    if (!client) return;
    try {
      await client.rest.post(routes().channelTyping(channelOf(target)));
    } catch {
      // Typing is cosmetic; a failure here must never disturb a reply.
    }
  }

  async function sendMedia(target: OutboundTarget, media: OutboundMedia): Promise<SentMessage> {
    const channelId = channelOf(target);
    const name = basename(media.path);
    const info = await stat(media.path).catch(() => undefined);
    if (!info?.isFile()) throw new PlatformError(`Cannot send ${media.path} to Discord: no such file`);
    if (info.size > DISCORD_MAX_UPLOAD_BYTES) {
      throw new PlatformError(
        `Cannot send ${name} to Discord: it is ${formatBytes(info.size)}, over the ${formatBytes(DISCORD_MAX_UPLOAD_BYTES)} upload limit for bots`,
      );
    }
    const data = await readFile(media.path);
    const caption = toDiscordMarkdown(media.caption ?? "").slice(0, DISCORD_MAX_MESSAGE_LENGTH);
    const body = { ...messageBody(target, caption), attachments: [{ id: 0, filename: name }] };
    const sent = await call<{ id: string }>(`upload ${name} to channel ${channelId}`, (r) =>
      r.post(routes().channelMessages(channelId), { body, files: [{ name, data }] }),
    );
    return { messageId: String(sent.id) };
  }

  const capabilities: PlatformCapabilities = {
    maxMessageLength: DISCORD_MAX_MESSAGE_LENGTH,
    edit: true,
    buttons: true,
    typing: true,
    media: true,
    maxMediaBytes: DISCORD_MAX_UPLOAD_BYTES,
  };

  return {
    platform: "discord",
    capabilities,
    connect,
    disconnect,
    send,
    edit,
    typing,
    sendMedia,
    setCommands,
    voiceChannels: voice,
  };
}
