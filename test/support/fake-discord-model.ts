/**
 * The fake Discord's model (test/support/fake-discord.ts): the users, guilds, channels, calls and
 * failures a test sets up or inspects, snowflakes, Discord's error bodies, and the JSON shapes of
 * users, members and channels as the REST API and the Gateway send them.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { WebSocket } from "ws";

export interface FakeUser {
  id: string;
  username: string;
  bot?: boolean;
  global_name?: string | null;
}

export interface FakeChannel {
  id: string;
  /** Discord channel type: 0 text, 1 DM, 2 voice, 4 category, 11 public thread, ... */
  type: number;
  name?: string;
  guildId?: string;
  /** Threads: the channel the thread lives in. */
  parentId?: string;
  /** DMs: the other person. */
  recipient?: FakeUser;
}

export interface FakeGuild {
  id: string;
  name: string;
  channels: FakeChannel[];
}

export interface UploadedFile {
  /** Form field name (`files[0]`). */
  field: string;
  name: string;
  contentType: string;
  data: Buffer;
}

/** One REST call the fake received. `path` is relative to `/api/v10` (`/channels/1/messages`). */
export interface DiscordCall {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** JSON body, or `payload_json` of a multipart body; undefined when there was none. */
  body: Record<string, unknown> | undefined;
  files: UploadedFile[];
  /** The status the fake answered. */
  status: number;
}

export interface FakeAttachmentSpec {
  filename: string;
  data: Buffer | string;
  contentType?: string;
  /** Discord's attachment flags. */
  flags?: number;
  /** Overrides the advertised size (to test size checks without big buffers). */
  size?: number;
  /** Serve nothing at the URL (404), to test failed downloads. */
  missing?: boolean;
}

export interface InjectMessageSpec {
  /** Where the message is posted; omitted: the DM channel between the author and the bot. */
  channelId?: string;
  content?: string;
  /** Default: a new user called alice. */
  author?: FakeUser;
  attachments?: FakeAttachmentSpec[];
  /** Makes the message a reply to this message (the referenced author is mentioned, as Discord does). */
  replyTo?: string;
  /** Message flags (8192 = voice message). */
  flags?: number;
  id?: string;
}

export interface InjectedFailure {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export type PathMatcher = string | RegExp | ((path: string) => boolean);

export interface FakeDiscordOptions {
  /** The bot token the fake accepts (default: a fixed test token). */
  token?: string;
  /** Heartbeat interval announced in HELLO (default 41250 ms, as Discord). */
  heartbeatIntervalMs?: number;
  /** Accept the WebSocket but never send HELLO (a gateway that hangs). */
  silentGateway?: boolean;
  /** Answer IDENTIFY by closing with this code (4004 authentication failed, 4014 disallowed intents). */
  closeOnIdentify?: number;
}

export type Json = Record<string, unknown>;
export type Session = { socket: WebSocket; seq: number };

export const DISCORD_EPOCH = 1_420_070_400_000n;
export let snowflakeIncrement = 0n;

/** A fresh, time-ordered Discord snowflake (discord.js derives timestamps from them). */
export function snowflake(): string {
  snowflakeIncrement = (snowflakeIncrement + 1n) & 0xfffn;
  return (((BigInt(Date.now()) - DISCORD_EPOCH) << 22n) | snowflakeIncrement).toString();
}

export const API_PREFIX = "/api/v10";
export const DEFAULT_TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4.fake.discord-test-token";
export const NOT_FOUND = { message: "404: Not Found", code: 0 };
export const UNKNOWN_CHANNEL = { message: "Unknown Channel", code: 10003 };
export const TOO_LONG = {
  message: "Invalid Form Body",
  code: 50035,
  errors: {
    content: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 2000 or fewer in length." }] },
  },
};

export function matches(matcher: PathMatcher, path: string): boolean {
  if (typeof matcher === "string") return matcher === path;
  return matcher instanceof RegExp ? matcher.test(path) : matcher(path);
}

export function userPayload(user: FakeUser): Json {
  const { id, username, bot = false, global_name = null } = user;
  return { id, username, global_name, discriminator: "0", avatar: null, bot };
}

export function memberPayload(): Json {
  return { roles: [], joined_at: new Date().toISOString(), deaf: false, mute: false, flags: 0 };
}

export function channelPayload(channel: FakeChannel): Json {
  const base: Json = { id: channel.id, type: channel.type, flags: 0, last_message_id: null };
  if (channel.type === 1)
    return { ...base, recipients: channel.recipient ? [userPayload(channel.recipient)] : [] };
  Object.assign(base, { guild_id: channel.guildId, name: channel.name, parent_id: channel.parentId ?? null });
  if (channel.type !== 11 && channel.type !== 12) return { ...base, position: 0, permission_overwrites: [] };
  const thread_metadata = { archived: false, auto_archive_duration: 1440, locked: false };
  return { ...base, thread_metadata, owner_id: channel.recipient?.id, message_count: 0, member_count: 1 };
}

/** GUILD_CREATE's payload for `guild`, with the threads among `channels` that belong to it. */
export function guildCreatePayload(guild: FakeGuild, channels: Iterable<FakeChannel>): Json {
  const threads = [...channels].filter((c) => c.guildId === guild.id && c.parentId);
  const everyone = { id: guild.id, name: "@everyone", permissions: "0", position: 0, color: 0, flags: 0 };
  const empty = ["emojis", "stickers", "features", "members", "presences", "voice_states", "stage_instances"];
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

/**
 * An INTERACTION_CREATE payload from `user` in `channel`: type 2 for a slash command, 3 for a
 * button press (with the `message` it was pressed on).
 */
export function interactionPayload(spec: {
  id: string;
  token: string;
  applicationId: string;
  type: 2 | 3;
  data: Json;
  channel: FakeChannel;
  user: FakeUser;
  message?: Json;
}): Json {
  const { channel } = spec;
  const payload: Json = {
    id: spec.id,
    application_id: spec.applicationId,
    type: spec.type,
    token: spec.token,
    version: 1,
    data: spec.data,
    channel_id: channel.id,
    channel: channelPayload(channel),
    ...(spec.message ? { message: spec.message } : {}),
    app_permissions: "0",
    locale: "en-US",
    entitlements: [],
    authorizing_integration_owners: { "0": channel.guildId ?? "0" },
    context: channel.guildId ? 0 : 1,
  };
  if (!channel.guildId) payload.user = userPayload(spec.user);
  else
    Object.assign(payload, {
      guild_id: channel.guildId,
      member: { ...memberPayload(), user: userPayload(spec.user) },
    });
  return payload;
}
