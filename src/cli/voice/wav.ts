/**
 * 16-bit PCM WAV: finding the samples in a file a recorder is still writing, writing a clean file
 * around samples, and silence detection by RMS over 50 ms frames (upstream's `silence_threshold`
 * and `silence_duration`).
 */
import { wavFile } from "../../util/wav.js";

export { wavFile };

export const SAMPLE_RATE = 16_000;

/** Where the samples start in a WAV (after the `data` chunk header), or null while unknown. */
export function pcmOffset(head: Buffer): number | null {
  if (head.length < 12 || head.toString("ascii", 0, 4) !== "RIFF" || head.toString("ascii", 8, 12) !== "WAVE")
    return head.length >= 12 ? 0 : null; // raw PCM from a recorder that writes no header
  let at = 12;
  while (at + 8 <= head.length) {
    const id = head.toString("ascii", at, at + 4);
    if (id === "data") return at + 8;
    at += 8 + head.readUInt32LE(at + 4) + (head.readUInt32LE(at + 4) % 2);
  }
  return null;
}

/** Root mean square of little-endian 16-bit samples. */
export function rms(pcm: Buffer): number {
  const n = Math.floor(pcm.length / 2);
  if (n === 0) return 0;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const s = pcm.readInt16LE(i * 2);
    sum += s * s;
  }
  return Math.sqrt(sum / n);
}

/** A short sine tone as a WAV (the start and stop beeps). */
export function beepWav(frequency: number, seconds = 0.12, sampleRate = SAMPLE_RATE): Buffer {
  const n = Math.round(seconds * sampleRate);
  const pcm = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) {
    const fade = Math.min(1, i / 160, (n - i) / 160);
    pcm.writeInt16LE(Math.round(Math.sin((2 * Math.PI * frequency * i) / sampleRate) * 9000 * fade), i * 2);
  }
  return wavFile(pcm, sampleRate);
}

export type SilenceEvent = "none" | "speech-started" | "utterance-ended";

/**
 * Feeds PCM as it arrives; says when speech starts and when an utterance ended (speech, then
 * `duration` seconds under `threshold`). Silence before any speech never ends the utterance.
 */
export class SilenceDetector {
  private readonly frameBytes: number;
  private carry = Buffer.alloc(0);
  private silentMs = 0;
  /** Milliseconds of PCM up to the end of the last loud frame. */
  private speechEndMs = 0;
  private totalMs = 0;
  heard = false;
  ended = false;

  constructor(
    private readonly threshold: number,
    private readonly durationSeconds: number,
    private readonly sampleRate = SAMPLE_RATE,
    private readonly frameMs = 50,
  ) {
    this.frameBytes = Math.round((sampleRate * frameMs) / 1000) * 2;
  }

  push(pcm: Buffer): SilenceEvent {
    let event: SilenceEvent = "none";
    let data = this.carry.length > 0 ? Buffer.concat([this.carry, pcm]) : pcm;
    while (data.length >= this.frameBytes && !this.ended) {
      const frame = data.subarray(0, this.frameBytes);
      data = data.subarray(this.frameBytes);
      this.totalMs += this.frameMs;
      if (rms(frame) >= this.threshold) {
        if (!this.heard) event = "speech-started";
        this.heard = true;
        this.silentMs = 0;
        this.speechEndMs = this.totalMs;
      } else if (this.heard) {
        this.silentMs += this.frameMs;
        if (this.silentMs >= this.durationSeconds * 1000) {
          this.ended = true;
          event = "utterance-ended";
        }
      }
    }
    this.carry = Buffer.from(data);
    return event;
  }

  /** Bytes of PCM worth keeping: up to the last speech plus a quarter second. */
  keepBytes(): number {
    const ms = Math.min(this.totalMs, this.speechEndMs + 250);
    return Math.round((ms * this.sampleRate) / 1000) * 2;
  }
}
