/**
 * A local stand-in for Discord's voice servers, speaking the real protocol so the real
 * @discordjs/voice 0.18 client can join a channel through the fake Discord gateway:
 *
 * - the main gateway (test/support/fake-discord.ts) hands every Voice State Update (op 4) the bot
 *   sends to this fake, which answers with VOICE_STATE_UPDATE and VOICE_SERVER_UPDATE dispatches
 *   pointing at it (and, for `channel_id: null`, the bot's state leaving the channel);
 * - the voice WebSocket (version 4, JSON, over TLS: the client only speaks `wss://`, so the test
 *   gives the gateway process this fake's CA through NODE_EXTRA_CA_CERTS): Hello, Identify (checked
 *   against the server token and session the dispatches announced, else close 4004), Ready with
 *   the UDP address and the offered encryption modes, Select Protocol (an unoffered mode closes
 *   4016), Session Description with a fresh 32-byte key, Heartbeat → Heartbeat ACK, Speaking;
 * - the UDP socket: IP discovery (74-byte request and answer), keep-alives, RTP both ways in the
 *   negotiated `_rtpsize` AEAD mode.
 *
 * Tests put users in voice channels (`enterChannel`, dispatched as VOICE_STATE_UPDATE), make them
 * speak a WAV (`speak`: Opus-encoded with opusscript, encrypted, sent as RTP in real time after a
 * Speaking event mapping their SSRC), and read what the bot said (`botAudio`: decrypted, decoded).
 */
import { randomBytes, randomInt } from "node:crypto";
import { createSocket, type RemoteInfo } from "node:dgram";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { type RawData, type WebSocket, WebSocketServer } from "ws";
import type { FakeDiscord, FakeUser } from "./fake-discord.js";
import {
  discordPcm,
  ENCRYPTION_MODES,
  type EncryptionMode,
  encodeOpus,
  measure,
  openRtp,
  opusDecoder,
  RtpSender,
  SILENCE_FRAME,
} from "./fake-discord-voice-rtp.js";
import { makeTestPki } from "./mcp-tls.js";

type Json = Record<string, unknown>;

export interface FakeDiscordVoiceOptions {
  /** Encryption modes offered in Ready, in order (default: both `_rtpsize` AEAD modes). */
  modes?: EncryptionMode[];
}

/** The bot's voice session in one guild. */
interface BotSession {
  guildId: string;
  channelId: string;
  sessionId: string;
  token: string;
  ws?: WebSocket;
  ssrc?: number;
  mode?: EncryptionMode;
  key?: Buffer;
  /** Where the bot's UDP socket is (from IP discovery, confirmed by Select Protocol). */
  remote?: { address: string; port: number };
  closed: boolean;
}

/** A packet of audio the bot sent, decoded. */
export interface BotPacket {
  at: number;
  guildId: string;
  pcm: Buffer;
}

export async function startFakeDiscordVoice(
  discord: FakeDiscord,
  options: FakeDiscordVoiceOptions = {},
): Promise<FakeDiscordVoice> {
  const fake = new FakeDiscordVoice(discord, options);
  await fake.listen();
  return fake;
}

export class FakeDiscordVoice {
  /** PEM file of the CA that signed the voice server's certificate (for NODE_EXTRA_CA_CERTS). */
  readonly caFile: string;
  /** Every voice WebSocket packet the bot sent (`op`, `d`), in order. */
  readonly received: { op: number; d: unknown }[] = [];
  /** Audio packets the bot sent, decrypted and decoded. */
  readonly packets: BotPacket[] = [];
  /** UDP datagrams that were neither discovery, keep-alive nor decryptable audio. */
  readonly rejected: string[] = [];
  /** Voice State Updates (op 4) the bot sent on the main gateway. */
  readonly stateUpdates: Json[] = [];
  endpoint = "";
  /** Close every Identify with this code (4017: the DAVE end-to-end encryption is required). */
  refuseWith: number | undefined;

  /** Encryption modes the next Ready offers (tests may change them between joins). */
  modes: EncryptionMode[];
  private readonly sessions = new Map<string, BotSession>();
  private readonly ssrcs = new Map<string, number>();
  private readonly server: Server;
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly udp = createSocket("udp4");
  private readonly decoders = new Map<number, ReturnType<typeof opusDecoder>>();
  private readonly encoded = new Map<string, Buffer[]>();

  constructor(
    private readonly discord: FakeDiscord,
    options: FakeDiscordVoiceOptions,
  ) {
    this.modes = options.modes ?? [...ENCRYPTION_MODES];
    const pki = makeTestPki();
    this.caFile = pki.caCert;
    this.server = createServer({ cert: readFileSync(pki.serverCert), key: readFileSync(pki.serverKey) });
    this.server.on("upgrade", (req, socket, head) =>
      this.wss.handleUpgrade(req, socket, head, (ws) => this.onSocket(ws, req.url ?? "")),
    );
    this.udp.on("message", (msg, rinfo) => this.onDatagram(msg, rinfo));
    discord.onVoiceStateUpdate = (d) => this.onStateUpdate(d);
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    await new Promise<void>((resolve) => this.udp.bind(0, "127.0.0.1", resolve));
    this.endpoint = `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.discord.onVoiceStateUpdate = undefined;
    for (const ws of this.wss.clients) ws.terminate();
    this.wss.close();
    this.udp.close();
    for (const decoder of this.decoders.values()) decoder.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Puts `user` in a voice channel (or, with null, takes them out), as Discord announces it. */
  enterChannel(user: FakeUser, guildId: string, channelId: string | null): void {
    this.discord.dispatch("VOICE_STATE_UPDATE", this.voiceState(user, guildId, channelId, `user-${user.id}`));
  }

  /** The voice channel the bot is connected to in `guildId` (audio ready), if any. */
  botChannel(guildId: string): string | undefined {
    const session = this.sessions.get(guildId);
    return session && !session.closed && session.key ? session.channelId : undefined;
  }

  /** Resolves once the bot's voice session in `guildId` has its key (or is gone, with `connected: false`). */
  async waitForBot(guildId: string, connected = true, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while ((this.botChannel(guildId) !== undefined) !== connected) {
      if (Date.now() > deadline)
        throw new Error(`fake-discord-voice: bot ${connected ? "never joined" : "never left"} in ${guildId}`);
      await sleep(25);
    }
  }

  /** The SSRC Discord assigned `user` (stable for the fake's lifetime). */
  ssrcOf(user: FakeUser): number {
    let ssrc = this.ssrcs.get(user.id);
    if (ssrc === undefined) {
      ssrc = 1000 + this.ssrcs.size * 7;
      this.ssrcs.set(user.id, ssrc);
    }
    return ssrc;
  }

  /**
   * `user` speaks the audio in `file` (any format ffmpeg reads) in `guildId`'s voice session: a
   * Speaking event maps their SSRC, then one encrypted Opus packet every 20 ms, then five silence
   * frames as clients send. Resolves when the last packet is out, with when the first went
   * (the audio is encoded before anything is sent, and kept per file); `signal` stops early.
   */
  async speak(
    user: FakeUser,
    guildId: string,
    file: string,
    signal?: AbortSignal,
  ): Promise<{ startedAt: number }> {
    const session = this.sessions.get(guildId);
    if (!session?.ws || !session.key || !session.mode || !session.remote)
      throw new Error(`fake-discord-voice: the bot has no voice session in ${guildId}`);
    let encoded = this.encoded.get(file);
    if (!encoded) {
      encoded = encodeOpus(discordPcm(file));
      this.encoded.set(file, encoded);
    }
    const ssrc = this.ssrcOf(user);
    session.ws.send(JSON.stringify({ op: 5, d: { user_id: user.id, ssrc, speaking: 1 } }));
    await sleep(30);
    const sender = new RtpSender(ssrc, session.mode, session.key);
    const frames = [...encoded, ...Array(5).fill(SILENCE_FRAME)];
    const start = Date.now();
    for (const [i, frame] of frames.entries()) {
      if (signal?.aborted || session.closed) break;
      this.udp.send(sender.packet(frame), session.remote.port, session.remote.address);
      const wait = start + (i + 1) * 20 - Date.now();
      if (wait > 0) await sleep(wait);
    }
    return { startedAt: start };
  }

  /**
   * A datagram that claims to be `user`'s audio but was not sealed with the session key (an
   * attacker who learnt the bot's UDP port): header and SSRC right, payload and tag random.
   */
  forge(user: FakeUser, guildId: string): void {
    const session = this.sessions.get(guildId);
    if (!session?.remote) throw new Error(`fake-discord-voice: the bot has no voice session in ${guildId}`);
    const packet = new RtpSender(
      this.ssrcOf(user),
      session.mode ?? "aead_aes256_gcm_rtpsize",
      randomBytes(32),
    ).packet(randomBytes(60));
    this.udp.send(packet, session.remote.port, session.remote.address);
  }

  /**
   * What the bot said since packet `from`, as one stretch of 48 kHz stereo PCM with its length
   * and level (silence frames included, as they were sent).
   */
  botAudio(from = 0): { seconds: number; rms: number; packets: number } {
    const slice = this.packets.slice(from);
    return { ...measure(Buffer.concat(slice.map((p) => p.pcm))), packets: slice.length };
  }

  /** Resolves once the bot sent audio after packet `from` and then nothing for `quietMs`. */
  async waitForBotSpeech(from = 0, timeoutMs = 30_000, quietMs = 400): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const last = this.packets.at(-1);
      if (this.packets.length > from && last && Date.now() - last.at > quietMs) return;
      if (Date.now() > deadline)
        throw new Error(`fake-discord-voice: no speech from the bot after packet ${from} in ${timeoutMs} ms`);
      await sleep(25);
    }
  }

  private voiceState(user: FakeUser, guildId: string, channelId: string | null, sessionId: string): Json {
    const userPayload = {
      id: user.id,
      username: user.username,
      global_name: user.global_name ?? null,
      discriminator: "0",
      avatar: null,
      bot: user.bot ?? false,
    };
    const flags = { deaf: false, mute: false, self_deaf: false, self_mute: false, self_video: false };
    return {
      guild_id: guildId,
      channel_id: channelId,
      user_id: user.id,
      session_id: sessionId,
      suppress: false,
      request_to_speak_timestamp: null,
      ...flags,
      member: { user: userPayload, roles: [], joined_at: new Date().toISOString(), deaf: false, mute: false },
    };
  }

  /** Op 4 from the bot on the main gateway: join, move or leave. */
  private onStateUpdate(d: Json): void {
    this.stateUpdates.push(d);
    const guildId = String(d["guild_id"] ?? "");
    const channelId = typeof d["channel_id"] === "string" ? d["channel_id"] : null;
    const old = this.sessions.get(guildId);
    if (old) {
      old.closed = true;
      old.ws?.close(4014, "Disconnected.");
      this.sessions.delete(guildId);
    }
    const sessionId = `voice-session-${randomBytes(6).toString("hex")}`;
    this.discord.dispatch(
      "VOICE_STATE_UPDATE",
      this.voiceState(this.discord.botUser, guildId, channelId, sessionId),
    );
    if (!channelId) return;
    const session: BotSession = {
      guildId,
      channelId,
      sessionId,
      token: randomBytes(8).toString("hex"),
      closed: false,
    };
    this.sessions.set(guildId, session);
    this.discord.dispatch("VOICE_SERVER_UPDATE", {
      token: session.token,
      guild_id: guildId,
      endpoint: this.endpoint,
    });
  }

  private onSocket(ws: WebSocket, url: string): void {
    const send = (op: number, d: unknown) => ws.send(JSON.stringify({ op, d }));
    if (!/[?&]v=4\b/.test(url)) {
      ws.close(4006, "Session is no longer valid.");
      return;
    }
    send(8, { heartbeat_interval: 13_750 });
    let session: BotSession | undefined;
    ws.on("message", (raw: RawData) => {
      let packet: { op?: number; d?: Json };
      try {
        packet = JSON.parse(raw.toString()) as typeof packet;
      } catch {
        ws.close(4002, "Failed to decode payload.");
        return;
      }
      const d = packet.d ?? {};
      this.received.push({ op: Number(packet.op), d: packet.d });
      if (packet.op === 0) {
        const found = this.sessions.get(String(d["server_id"] ?? ""));
        const valid =
          found &&
          !found.ws &&
          d["token"] === found.token &&
          d["session_id"] === found.sessionId &&
          d["user_id"] === this.discord.botUser.id;
        if (!valid) {
          ws.close(4004, "Authentication failed.");
          return;
        }
        if (this.refuseWith !== undefined) {
          ws.close(this.refuseWith, this.refuseWith === 4017 ? "E2EE/DAVE protocol required." : "Refused.");
          return;
        }
        session = found;
        session.ws = ws;
        session.ssrc = randomInt(1, 0x7fffffff);
        const port = (this.udp.address() as AddressInfo).port;
        send(2, { ssrc: session.ssrc, ip: "127.0.0.1", port, modes: this.modes, experiments: [] });
      } else if (packet.op === 3) {
        send(6, packet.d);
      } else if (packet.op === 1 && session) {
        const data = (d["data"] ?? {}) as Json;
        const mode = data["mode"] as EncryptionMode;
        if (d["protocol"] !== "udp" || !this.modes.includes(mode)) {
          ws.close(4016, "Unknown encryption mode.");
          return;
        }
        session.remote = { address: String(data["address"]), port: Number(data["port"]) };
        session.mode = mode;
        session.key = randomBytes(32);
        send(4, {
          mode,
          secret_key: [...session.key],
          audio_codec: "opus",
          video_codec: null,
          media_session_id: randomBytes(8).toString("hex"),
        });
      } else if (packet.op !== 5 && packet.op !== 1) {
        ws.close(4001, "Unknown opcode.");
      }
    });
    ws.on("close", () => {
      if (session) session.closed = true;
    });
  }

  private onDatagram(msg: Buffer, rinfo: RemoteInfo): void {
    if (msg.length === 74 && msg.readUInt16BE(0) === 1) {
      // IP discovery: answer with the address and port the request came from.
      const answer = Buffer.alloc(74);
      answer.writeUInt16BE(2, 0);
      answer.writeUInt16BE(70, 2);
      answer.writeUInt32BE(msg.readUInt32BE(4), 4);
      answer.write(rinfo.address, 8, "utf8");
      answer.writeUInt16BE(rinfo.port, 72);
      this.udp.send(answer, rinfo.port, rinfo.address);
      return;
    }
    if (msg.length <= 8) return; // keep-alive
    const ssrc = msg.length >= 12 ? msg.readUInt32BE(8) : -1;
    const session = [...this.sessions.values()].find((s) => s.ssrc === ssrc && s.key && s.mode);
    if (!session?.key || !session.mode) {
      this.rejected.push(`datagram of ${msg.length} bytes from unknown ssrc ${ssrc}`);
      return;
    }
    try {
      const { opus } = openRtp(session.mode, session.key, msg);
      let decoder = this.decoders.get(ssrc);
      if (!decoder) {
        decoder = opusDecoder();
        this.decoders.set(ssrc, decoder);
      }
      this.packets.push({ at: Date.now(), guildId: session.guildId, pcm: decoder.decode(opus) });
    } catch (error) {
      this.rejected.push(`undecryptable audio: ${String(error)}`);
    }
  }
}
