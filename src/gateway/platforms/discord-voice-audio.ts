/**
 * Audio helpers for Discord voice channels: Discord's Opus (48 kHz stereo, 20 ms frames) decoded
 * with opusscript (pure JavaScript/WebAssembly, no native build), folded to 16 kHz mono for speech
 * recognition, and written as a WAV file. Loaded only when a voice channel is joined.
 */
import { createRequire } from "node:module";

export { wavFile } from "../../util/wav.js";

/** Discord's Opus: 48 kHz, two channels, 960 samples (20 ms) per frame. */
export const DISCORD_RATE = 48_000;
export const DISCORD_CHANNELS = 2;
/** What the recogniser gets: 16 kHz mono (Whisper's own rate; a third of the bytes to upload). */
export const SPEECH_RATE = 16_000;

interface OpusCodec {
  decode(packet: Buffer): Buffer;
  delete(): void;
}
type OpusScriptClass = new (rate: number, channels: number, application?: number) => OpusCodec;

let opusScript: OpusScriptClass | undefined;

/** A decoder for one speaker's stream; `close` frees its WebAssembly memory. */
export function opusDecoder(): { decode(packet: Buffer): Buffer | undefined; close(): void } {
  if (!opusScript) {
    const require = createRequire(import.meta.url);
    opusScript = require("opusscript") as OpusScriptClass;
  }
  const codec = new opusScript(DISCORD_RATE, DISCORD_CHANNELS);
  let closed = false;
  return {
    decode(packet) {
      if (closed) return undefined;
      try {
        return codec.decode(packet);
      } catch {
        // A damaged or foreign packet: skipped, the rest of the utterance still counts.
        return undefined;
      }
    },
    close() {
      if (closed) return;
      closed = true;
      codec.delete();
    },
  };
}

/**
 * 48 kHz interleaved stereo s16le → 16 kHz mono s16le: both channels and each run of three
 * samples averaged (a box filter before decimation, enough for speech).
 */
export function toSpeechPcm(stereo: Buffer): Buffer {
  const frames = Math.floor(stereo.length / 4);
  const out = Buffer.alloc(Math.floor(frames / 3) * 2);
  for (let o = 0, i = 0; o < out.length; o += 2, i += 12) {
    let sum = 0;
    for (let k = 0; k < 12; k += 2) sum += stereo.readInt16LE(i + k);
    out.writeInt16LE(Math.round(sum / 6), o);
  }
  return out;
}

/** Milliseconds of 48 kHz stereo s16le audio in `bytes`. */
export function stereoMs(bytes: number): number {
  return (bytes / (DISCORD_CHANNELS * 2) / DISCORD_RATE) * 1000;
}
