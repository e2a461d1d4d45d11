/**
 * The media side of the fake Discord voice server: RTP packets encrypted the way Discord's voice
 * servers do for the `_rtpsize` AEAD modes (header and extension header as additional data, a
 * 32-bit nonce counter appended to the packet), Opus with opusscript, and audio measurements.
 * Written from Discord's voice documentation, independently of @discordjs/voice's own code.
 */
import { execFileSync } from "node:child_process";
import { createCipheriv, createDecipheriv } from "node:crypto";
import { createRequire } from "node:module";
import { xchacha20poly1305 } from "@noble/ciphers/chacha";

export type EncryptionMode = "aead_aes256_gcm_rtpsize" | "aead_xchacha20_poly1305_rtpsize";
export const ENCRYPTION_MODES: readonly EncryptionMode[] = [
  "aead_aes256_gcm_rtpsize",
  "aead_xchacha20_poly1305_rtpsize",
];

/** 20 ms of 48 kHz stereo s16le. */
export const FRAME_SAMPLES = 960;
export const FRAME_BYTES = FRAME_SAMPLES * 2 * 2;
/** The Opus frame of silence clients send when they stop talking. */
export const SILENCE_FRAME = Buffer.from([0xf8, 0xff, 0xfe]);
const TAG = 16;
const NONCE = 4;

interface OpusCodec {
  encode(pcm: Buffer, frameSize: number): Buffer;
  decode(packet: Buffer): Buffer;
  delete(): void;
}
type OpusCtor = (new (
  rate: number,
  channels: number,
  app?: number,
) => OpusCodec) & {
  Application: { VOIP: number; AUDIO: number };
};
const OpusScript = createRequire(import.meta.url)("opusscript") as OpusCtor;

function nonceFor(mode: EncryptionMode, counter: Buffer): Buffer {
  const nonce = Buffer.alloc(mode === "aead_aes256_gcm_rtpsize" ? 12 : 24);
  counter.copy(nonce, 0);
  return nonce;
}

function seal(mode: EncryptionMode, key: Buffer, nonce: Buffer, aad: Buffer, plain: Buffer): Buffer {
  if (mode === "aead_aes256_gcm_rtpsize") {
    const cipher = createCipheriv("aes-256-gcm", key, nonce);
    cipher.setAAD(aad);
    return Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  }
  return Buffer.from(xchacha20poly1305(key, nonce, aad).encrypt(plain));
}

function open(mode: EncryptionMode, key: Buffer, nonce: Buffer, aad: Buffer, sealed: Buffer): Buffer {
  if (mode === "aead_aes256_gcm_rtpsize") {
    const decipher = createDecipheriv("aes-256-gcm", key, nonce);
    decipher.setAAD(aad);
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG));
    return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG)), decipher.final()]);
  }
  return Buffer.from(xchacha20poly1305(key, nonce, aad).decrypt(sealed));
}

/** One speaker's outgoing RTP stream, as a Discord client sends it (with a one-word header extension). */
export class RtpSender {
  private sequence = Math.floor(Math.random() * 0xffff);
  private timestamp = Math.floor(Math.random() * 0xffffffff);
  private counter = 0;

  constructor(
    readonly ssrc: number,
    private readonly mode: EncryptionMode,
    private readonly key: Buffer,
  ) {}

  packet(opus: Buffer): Buffer {
    this.sequence = (this.sequence + 1) & 0xffff;
    this.timestamp = (this.timestamp + FRAME_SAMPLES) >>> 0;
    this.counter = (this.counter + 1) >>> 0;
    const header = Buffer.alloc(16);
    header[0] = 0x90; // version 2, extension present
    header[1] = 0x78; // payload type 120 (Opus)
    header.writeUInt16BE(this.sequence, 2);
    header.writeUInt32BE(this.timestamp, 4);
    header.writeUInt32BE(this.ssrc, 8);
    header.writeUInt16BE(0xbede, 12); // one-byte header extension profile
    header.writeUInt16BE(1, 14); // one 32-bit word of extension data (encrypted with the payload)
    const counter = Buffer.alloc(NONCE);
    counter.writeUInt32BE(this.counter, 0);
    const extension = Buffer.from([0x10, 0x7f, 0x00, 0x00]); // an audio-level element, padded
    const sealed = seal(
      this.mode,
      this.key,
      nonceFor(this.mode, counter),
      header,
      Buffer.concat([extension, opus]),
    );
    return Buffer.concat([header, sealed, counter]);
  }
}

/** The Opus payload of a packet the bot sent; throws when it does not authenticate. */
export function openRtp(mode: EncryptionMode, key: Buffer, packet: Buffer): { ssrc: number; opus: Buffer } {
  let headerSize = 12;
  if (packet[0] !== undefined && (packet[0] & 0x10) !== 0) headerSize += 4;
  const header = packet.subarray(0, headerSize);
  const counter = packet.subarray(packet.length - NONCE);
  const sealed = packet.subarray(headerSize, packet.length - NONCE);
  let payload = open(mode, key, nonceFor(mode, counter), header, sealed);
  if (headerSize === 16) payload = payload.subarray(4 * packet.readUInt16BE(14));
  return { ssrc: packet.readUInt32BE(8), opus: payload };
}

/** A WAV (or any audio ffmpeg reads) as 48 kHz stereo s16le, the way Discord clients capture. */
export function discordPcm(file: string): Buffer {
  return execFileSync("ffmpeg", ["-v", "error", "-i", file, "-f", "s16le", "-ar", "48000", "-ac", "2", "-"], {
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** `pcm` cut into 20 ms frames (the last padded with silence) and Opus-encoded. */
export function encodeOpus(pcm: Buffer): Buffer[] {
  const codec = new OpusScript(48_000, 2, OpusScript.Application.VOIP);
  try {
    const frames: Buffer[] = [];
    for (let at = 0; at < pcm.length; at += FRAME_BYTES) {
      const frame = Buffer.alloc(FRAME_BYTES);
      pcm.copy(frame, 0, at, Math.min(at + FRAME_BYTES, pcm.length));
      frames.push(Buffer.from(codec.encode(frame, FRAME_SAMPLES)));
    }
    return frames;
  } finally {
    codec.delete();
  }
}

/** A decoder for the bot's stream (48 kHz stereo). */
export function opusDecoder(): { decode(packet: Buffer): Buffer; close(): void } {
  const codec = new OpusScript(48_000, 2);
  return { decode: (packet) => Buffer.from(codec.decode(packet)), close: () => codec.delete() };
}

/** Seconds and RMS level (0..1) of 48 kHz stereo s16le. */
export function measure(pcm: Buffer): { seconds: number; rms: number } {
  const samples = Math.floor(pcm.length / 2);
  let sum = 0;
  for (let i = 0; i < samples; i++) {
    const v = pcm.readInt16LE(i * 2) / 32768;
    sum += v * v;
  }
  return { seconds: samples / 2 / 48_000, rms: samples > 0 ? Math.sqrt(sum / samples) : 0 };
}
