/**
 * Discord voice channels over @discordjs/voice 0.18: `/voice join` brings the bot into the voice
 * channel of the user who typed it, `/voice channel` says where it is and whom it hears, `/voice
 * leave` ends it. While joined:
 *
 * - each speaker who passes the gateway's allowlists and pairing (`AdapterHandlers.authorized`) is
 *   subscribed to on their first packet; everyone else's packets are dropped undecrypted. Opus is
 *   decoded per speaker, an utterance ends after `silence_ms` without speech (or at
 *   `max_utterance_s`), becomes a 16 kHz WAV in a private temp folder, goes through the STT chain
 *   and is deleted; the transcript is posted in the bound text channel and handed to the gateway
 *   as that user's message;
 * - every speaker in one voice channel shares ONE conversation: the source is a thread whose chat
 *   is the guild and whose thread is the voice channel (session key `discord:thread:<guild>:<vc>`),
 *   and its text output goes to the text channel where `/voice join` was typed;
 * - answers are spoken through the TTS chain into the channel (Ogg/Opus, no re-encoding); a new
 *   utterance from an allowed speaker stops playback (barge-in).
 *
 * Nothing is received before `/voice join` or after `/voice leave`; leaving aborts transcriptions
 * and syntheses in flight, stops playback and removes the temp folder.
 */
import { createReadStream } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join as joinPath } from "node:path";
import type * as VoiceLib from "@discordjs/voice";
import type * as DiscordJs from "discord.js";
import { opusDecoder, stereoMs, toSpeechPcm, wavFile } from "./discord-voice-audio.js";
import type {
  AdapterHandlers,
  MessageSource,
  VoiceChannelControl,
  VoiceChannelWord,
  VoiceSpeech,
} from "./types.js";

type Voice = typeof VoiceLib;

export interface DiscordVoiceDeps {
  client(): DiscordJs.Client | undefined;
  handlers(): AdapterHandlers | undefined;
  /** Posts plain text in a channel (never throws). */
  post(channelId: string, text: string): Promise<void>;
  report(line: string): void;
  /** The `discord:` section of config.yaml (`voice_silence_ms`, `voice_max_utterance_s`). */
  settings: Readonly<Record<string, unknown>>;
}

interface Capture {
  stream: VoiceLib.AudioReceiveStream;
  chunks: Buffer[];
  bytes: number;
}

interface Live {
  guildId: string;
  channelId: string;
  channelName: string;
  textChannelId: string;
  connection: VoiceLib.VoiceConnection;
  player: VoiceLib.AudioPlayer;
  speech: VoiceSpeech;
  dir: string;
  captures: Map<string, Capture>;
  heard: Set<string>;
  ignored: Set<string>;
  abort: AbortController;
  /** Transcriptions run one at a time, so a channel's messages keep their spoken order. */
  chain: Promise<void>;
  files: number;
}

const DEFAULT_SILENCE_MS = 1_500;
const DEFAULT_MAX_UTTERANCE_S = 60;
const MIN_SPEECH_MS = 250;
const CONNECT_TIMEOUT_MS = 20_000;
/** @discordjs/voice rejoins after every close; a channel that keeps closing is given up after this many. */
const MAX_REJOINS = 3;

/** Why a voice connection failed, from the voice WebSocket's last close code. */
function closeReason(code: number | undefined): string {
  if (code === 4017)
    return "Discord requires its DAVE end-to-end encryption for this call, which @discordjs/voice 0.18 does not implement";
  if (code === 4014) return "Discord disconnected the bot";
  if (code === 4004) return "Discord refused the voice session";
  return code === undefined
    ? "the connection kept failing"
    : `the voice server closed the connection (code ${code})`;
}

/** The last close code of a connection's voice WebSocket, whichever networking instance it was. */
function watchCloses(connection: VoiceLib.VoiceConnection): () => number | undefined {
  let last: number | undefined;
  const seen = new WeakSet<object>();
  const watch = (state: VoiceLib.VoiceConnectionState) => {
    const networking = Reflect.get(state, "networking") as NodeJS.EventEmitter | undefined;
    if (!networking || seen.has(networking)) return;
    seen.add(networking);
    // First in line: the connection's own listener rejoins (and reports) synchronously.
    networking.prependListener("close", (code: number) => {
      last = code;
    });
  };
  watch(connection.state);
  connection.on("stateChange", (_old, now) => watch(now));
  return () => last;
}

/** Resolves when `connection` is ready; rejects with the reason once it cannot be. */
function untilReady(voice: Voice, connection: VoiceLib.VoiceConnection, lastClose: () => number | undefined) {
  const { Ready, Destroyed, Disconnected, Signalling } = voice.VoiceConnectionStatus;
  return new Promise<void>((resolve, reject) => {
    const finish = (error?: Error) => {
      clearTimeout(timer);
      connection.off("stateChange", onChange);
      if (error) reject(error);
      else resolve();
    };
    const timer = setTimeout(
      () =>
        finish(
          new Error(
            lastClose() === undefined
              ? "Discord did not answer in time; check that the bot may Connect and Speak there"
              : closeReason(lastClose()),
          ),
        ),
      CONNECT_TIMEOUT_MS,
    );
    const onChange = (_old: VoiceLib.VoiceConnectionState, now: VoiceLib.VoiceConnectionState) => {
      if (now.status === Ready) finish();
      else if (
        now.status === Destroyed ||
        now.status === Disconnected ||
        (now.status === Signalling && connection.rejoinAttempts >= MAX_REJOINS)
      )
        finish(new Error(closeReason(lastClose())));
    };
    connection.on("stateChange", onChange);
    if (connection.state.status === Ready) finish();
  });
}

function loadVoice(): Voice {
  const require = createRequire(import.meta.url);
  return require("@discordjs/voice") as Voice;
}

function number(value: unknown, min: number, max: number, fallback: number): number {
  const n = Number(value);
  return Number.isFinite(n) && n >= min && n <= max ? n : fallback;
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));
const short = (error: unknown) => {
  const line = describe(error).split("\n")[0]?.trim() || "it failed";
  return line.length > 160 ? `${line.slice(0, 157)}…` : line;
};

/** A channel named by the user after `/voice join`: an id, a `<#id>` mention or a name. */
function namedChannel(guild: DiscordJs.Guild, rest: string): DiscordJs.GuildBasedChannel | undefined | null {
  const words = rest.trim();
  if (!words) return null;
  const id = /^<#(\d+)>$/.exec(words)?.[1] ?? (/^\d+$/.test(words) ? words : undefined);
  if (id) return guild.channels.cache.get(id);
  const name = words.replace(/^#/, "").toLowerCase();
  return guild.channels.cache.find((c) => c.name.toLowerCase() === name);
}

/** Creates the voice channel control of one Discord adapter. */
export function createDiscordVoice(deps: DiscordVoiceDeps): VoiceChannelControl & {
  /** The text channel bound to a voice channel's conversation, if it was ever joined. */
  textChannelFor(channelId: string | undefined): string | undefined;
  /** Leaves every voice channel (the adapter disconnects). */
  leaveAll(): Promise<void>;
} {
  const silenceMs = number(deps.settings["voice_silence_ms"], 200, 10_000, DEFAULT_SILENCE_MS);
  const maxUtteranceMs =
    number(deps.settings["voice_max_utterance_s"], 1, 600, DEFAULT_MAX_UTTERANCE_S) * 1000;
  const lives = new Map<string, Live>();
  const guarded = new WeakSet<VoiceLib.VoiceConnection>();
  /** Voice channel → text channel, kept after leaving so a late answer still lands in text. */
  const bound = new Map<string, string>();

  function guildOf(source: MessageSource): DiscordJs.Guild {
    const client = deps.client();
    if (!client) throw new Error("Discord is not connected.");
    if (source.chatType === "dm" || !source.scopeId)
      throw new Error("Voice channels belong to a server: type /voice join in one of its text channels.");
    const guild = client.guilds.cache.get(source.scopeId);
    if (!guild) throw new Error("This server is not available to the bot right now; try again shortly.");
    return guild;
  }

  function nameOf(guild: DiscordJs.Guild | undefined, userId: string): string {
    const member = guild?.members.cache.get(userId);
    return member?.displayName ?? deps.client()?.users.cache.get(userId)?.displayName ?? userId;
  }

  /** The source of a transcript: the voice channel's one conversation, spoken by `userId`. */
  function sourceFor(live: Live, userId: string): MessageSource {
    const guild = deps.client()?.guilds.cache.get(live.guildId);
    return {
      platform: "discord",
      chatType: "thread",
      chatId: live.guildId,
      threadId: live.channelId,
      chatName: `🔊 ${live.channelName}`,
      scopeId: live.guildId,
      userId,
      userName: nameOf(guild, userId),
    };
  }

  function allowed(live: Live, userId: string): boolean {
    return deps.handlers()?.authorized?.(sourceFor(live, userId)) === true;
  }

  async function stop(live: Live): Promise<void> {
    if (lives.get(live.guildId) === live) lives.delete(live.guildId);
    live.abort.abort();
    live.player.stop(true);
    for (const capture of live.captures.values()) capture.stream.destroy();
    live.captures.clear();
    const voice = loadVoice();
    if (live.connection.state.status !== voice.VoiceConnectionStatus.Destroyed) {
      try {
        live.connection.destroy();
      } catch {
        // Already destroyed by Discord's side meanwhile.
      }
    }
    await rm(live.dir, { recursive: true, force: true }).catch(() => undefined);
  }

  async function transcribeUtterance(live: Live, userId: string, pcm: Buffer): Promise<void> {
    if (live.abort.signal.aborted) return;
    live.files += 1;
    const file = joinPath(live.dir, `utterance-${live.files}.wav`);
    let text = "";
    try {
      await writeFile(file, wavFile(toSpeechPcm(pcm)));
      text = (await live.speech.transcribe(file, live.abort.signal)).trim();
    } catch (error) {
      if (live.abort.signal.aborted) return;
      deps.report(`voice: could not transcribe ${userId} in ${live.channelId}: ${describe(error)}`);
      await deps.post(live.textChannelId, `🎙️ I could not make out what was said (${short(error)}).`);
      return;
    } finally {
      await rm(file, { force: true }).catch(() => undefined);
    }
    if (!text || live.abort.signal.aborted || lives.get(live.guildId) !== live) return;
    const source = sourceFor(live, userId);
    await deps.post(live.textChannelId, `🎙️ ${source.userName}: ${text}`);
    deps.handlers()?.onMessage({ source, text });
  }

  function capture(live: Live, voice: Voice, userId: string): void {
    if (live.captures.has(userId)) return;
    const stream = live.connection.receiver.subscribe(userId, {
      end: { behavior: voice.EndBehaviorType.AfterSilence, duration: silenceMs },
    });
    const decoder = opusDecoder();
    const entry: Capture = { stream, chunks: [], bytes: 0 };
    live.captures.set(userId, entry);
    const maxBytes = (maxUtteranceMs / 1000) * 48_000 * 4;
    stream.on("data", (packet: Buffer) => {
      const pcm = decoder.decode(packet);
      if (!pcm) return;
      entry.chunks.push(pcm);
      entry.bytes += pcm.length;
      // A speaker who never pauses: what was said so far is one utterance.
      if (entry.bytes >= maxBytes) stream.push(null);
    });
    const finish = () => {
      decoder.close();
      if (live.captures.get(userId) !== entry) return;
      live.captures.delete(userId);
      if (live.abort.signal.aborted || stereoMs(entry.bytes) < MIN_SPEECH_MS) return;
      const pcm = Buffer.concat(entry.chunks);
      live.chain = live.chain.then(() => transcribeUtterance(live, userId, pcm)).catch(() => undefined);
    };
    stream.once("end", finish);
    stream.once("close", finish);
    stream.on("error", (error) => deps.report(`voice: audio from ${userId} failed: ${describe(error)}`));
  }

  function onSpeaking(live: Live, voice: Voice, userId: string): void {
    if (lives.get(live.guildId) !== live || userId === deps.client()?.user?.id) return;
    if (!allowed(live, userId)) {
      // Not subscribed: the packets are dropped before decryption and nothing is kept.
      live.ignored.add(userId);
      return;
    }
    live.heard.add(userId);
    // Barge-in: an allowed speaker talking over the answer stops it.
    if (live.player.state.status !== voice.AudioPlayerStatus.Idle) live.player.stop(true);
    capture(live, voice, userId);
  }

  /**
   * @discordjs/voice 0.18 decrypts each datagram inside the UDP socket's message listener and lets
   * a failed authentication throw there: one forged packet carrying a speaker's SSRC would be an
   * uncaught exception that ends the gateway. The receiver's handler is wrapped (before the socket
   * exists, so the wrapper is what gets attached) and such packets are dropped and counted.
   */
  function guardReceiver(connection: VoiceLib.VoiceConnection, channelId: string): void {
    const receiver = connection.receiver as unknown as { onUdpMessage?: (msg: Buffer) => void };
    const original = receiver.onUdpMessage;
    if (typeof original !== "function" || guarded.has(connection)) return;
    guarded.add(connection);
    let dropped = 0;
    receiver.onUdpMessage = (msg: Buffer) => {
      try {
        original(msg);
      } catch (error) {
        dropped += 1;
        if (dropped === 1 || dropped % 500 === 0)
          deps.report(
            `voice: dropped ${dropped} audio packet(s) in ${channelId} that failed decryption (${describe(error)})`,
          );
      }
    };
  }

  async function connect(
    guild: DiscordJs.Guild,
    channel: DiscordJs.VoiceBasedChannel,
    textChannelId: string,
    speech: VoiceSpeech,
  ): Promise<Live> {
    const voice = loadVoice();
    const connection = voice.joinVoiceChannel({
      guildId: guild.id,
      channelId: channel.id,
      adapterCreator: guild.voiceAdapterCreator as VoiceLib.DiscordGatewayAdapterCreator,
      selfDeaf: false,
      selfMute: false,
    });
    connection.on("error", (error) => deps.report(`voice: connection to ${channel.id}: ${describe(error)}`));
    guardReceiver(connection, channel.id);
    const lastClose = watchCloses(connection);
    try {
      await untilReady(voice, connection, lastClose);
    } catch (error) {
      if (connection.state.status !== voice.VoiceConnectionStatus.Destroyed) connection.destroy();
      throw new Error(`Could not connect to 🔊 ${channel.name}: ${short(error)}.`);
    }
    const player = voice.createAudioPlayer({
      behaviors: { noSubscriber: voice.NoSubscriberBehavior.Pause },
    });
    connection.subscribe(player);
    const live: Live = {
      guildId: guild.id,
      channelId: channel.id,
      channelName: channel.name,
      textChannelId,
      connection,
      player,
      speech,
      dir: await mkdtemp(joinPath(tmpdir(), "hermes-discord-voice-")),
      captures: new Map(),
      heard: new Set(),
      ignored: new Set(),
      abort: new AbortController(),
      chain: Promise.resolve(),
      files: 0,
    };
    player.on("error", (error) => deps.report(`voice: playback in ${channel.id}: ${describe(error)}`));
    connection.receiver.speaking.on("start", (userId) => onSpeaking(live, voice, userId));
    connection.on("stateChange", (_old, now) => {
      if (now.status === voice.VoiceConnectionStatus.Destroyed && lives.get(live.guildId) === live) {
        void stop(live);
      } else if (now.status === voice.VoiceConnectionStatus.Disconnected) {
        // Moved or kicked: give Discord a moment to reconnect, else end the session.
        voice.entersState(connection, voice.VoiceConnectionStatus.Connecting, 5_000).catch(async () => {
          if (lives.get(live.guildId) !== live) return;
          await stop(live);
          await deps.post(live.textChannelId, `👋 Disconnected from 🔊 ${live.channelName}.`);
        });
      } else if (
        now.status === voice.VoiceConnectionStatus.Signalling &&
        connection.rejoinAttempts >= MAX_REJOINS &&
        lives.get(live.guildId) === live
      ) {
        void stop(live).then(() =>
          deps.post(live.textChannelId, `👋 Left 🔊 ${live.channelName}: ${closeReason(lastClose())}.`),
        );
      }
    });
    return live;
  }

  async function join(source: MessageSource, rest: string, speech: VoiceSpeech): Promise<string[]> {
    const guild = guildOf(source);
    const where = guild.voiceStates.cache.get(source.userId)?.channel;
    const named = namedChannel(guild, rest);
    if (named === undefined) throw new Error(`There is no channel "${rest.trim()}" in this server.`);
    if (!where) throw new Error("Join a voice channel in this server first, then type /voice join here.");
    if (named && named.id !== where.id)
      throw new Error(
        `You can only bring me into the voice channel you are in (🔊 ${where.name}), not ${named.name}.`,
      );
    const textChannelId = source.threadId || source.chatId;
    const current = lives.get(guild.id);
    if (current?.channelId === where.id) {
      current.textChannelId = textChannelId;
      bound.set(where.id, textChannelId);
      return [`🔊 Already in ${where.name}; answers now also come here in text.`];
    }
    if (current) await stop(current);
    const live = await connect(guild, where, textChannelId, speech);
    if (lives.has(guild.id)) {
      // Another /voice join finished first: keep that one.
      await stop(live);
      return [`🔊 Already in ${lives.get(guild.id)?.channelName}.`];
    }
    lives.set(guild.id, live);
    bound.set(where.id, textChannelId);
    return [
      `🔊 Joined ${where.name}. I listen to allowed users there and answer aloud, with the text here.`,
      "Speak over me to interrupt; /voice leave ends it.",
    ];
  }

  function status(source: MessageSource): string[] {
    const guild = guildOf(source);
    const live = lives.get(guild.id);
    if (!live) return ["Not in a voice channel in this server. Join one yourself, then type /voice join."];
    const botId = deps.client()?.user?.id;
    const present = [...guild.voiceStates.cache.values()]
      .filter((s) => s.channelId === live.channelId && s.id !== botId)
      .map((s) => s.id);
    const listening = present.filter((id) => allowed(live, id)).map((id) => nameOf(guild, id));
    const ignoredCount = present.length - listening.length;
    const voice = loadVoice();
    const speaking = live.player.state.status !== voice.AudioPlayerStatus.Idle;
    return [
      `🔊 In ${live.channelName}; text answers go to <#${live.textChannelId}>.`,
      listening.length > 0
        ? `Listening to: ${listening.join(", ")}.`
        : "Listening to nobody: no allowed user is in the channel.",
      ...(ignoredCount > 0
        ? [`Ignoring ${ignoredCount} other ${ignoredCount === 1 ? "person" : "people"}.`]
        : []),
      ...(speaking ? ["Speaking an answer now."] : []),
    ];
  }

  async function leave(source: MessageSource): Promise<string[]> {
    const guild = guildOf(source);
    const live = lives.get(guild.id);
    if (!live) return ["I'm not in a voice channel in this server."];
    await stop(live);
    return [`👋 Left ${live.channelName}.`];
  }

  function speaker(source: MessageSource): ((text: string) => Promise<void>) | undefined {
    if (source.platform !== "discord" || source.chatType !== "thread" || !source.threadId) return undefined;
    if (source.chatId !== source.scopeId || !bound.has(source.threadId)) return undefined;
    const { chatId: guildId, threadId: channelId } = source;
    return async (text) => {
      const live = lives.get(guildId);
      // Left (or moved) meanwhile: the text answer stands alone.
      if (!text.trim() || live?.channelId !== channelId || live.abort.signal.aborted) return;
      live.files += 1;
      const file = joinPath(live.dir, `answer-${live.files}.ogg`);
      try {
        await live.speech.synthesize(text, file, live.abort.signal);
      } catch (error) {
        await rm(file, { force: true }).catch(() => undefined);
        if (live.abort.signal.aborted) return;
        deps.report(`voice: could not speak in ${channelId}: ${describe(error)}`);
        await deps.post(
          live.textChannelId,
          `🔇 Could not speak this answer (${short(error)}); the text is above.`,
        );
        return;
      }
      if (lives.get(guildId) !== live) {
        await rm(file, { force: true }).catch(() => undefined);
        return;
      }
      const voice = loadVoice();
      const input = createReadStream(file);
      input.once("close", () => void rm(file, { force: true }).catch(() => undefined));
      const resource = voice.createAudioResource(input, { inputType: voice.StreamType.OggOpus });
      live.player.play(resource);
    };
  }

  return {
    async run(word: VoiceChannelWord, source: MessageSource, rest: string, speech: VoiceSpeech) {
      if (word === "join") return join(source, rest, speech);
      if (word === "leave") return leave(source);
      return status(source);
    },
    speaker,
    textChannelFor: (channelId) => (channelId ? bound.get(channelId) : undefined),
    async leaveAll() {
      await Promise.all([...lives.values()].map((live) => stop(live)));
    },
  };
}
