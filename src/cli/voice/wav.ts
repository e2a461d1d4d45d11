/**
 * 16-bit PCM WAV: finding the samples in a file a recorder is still writing, writing a clean file
 * around samples, silence detection by RMS over 50 ms frames (upstream's `silence_threshold` and
 * `silence_duration`), and barge-in detection (someone talking over a spoken answer).
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

/** Loudness (RMS) a barge-in needs at least: speaker bleed into the microphone stays under it. */
export const BARGE_IN_MIN_TRIGGER = 1500;
/** Loudness a barge-in never needs more than: ordinary speech (3000–8000) always reaches it. */
export const BARGE_IN_MAX_TRIGGER = 4000;

/**
 * Hears someone talking over playback. The first `calibrationMs` measure the room with the answer
 * already playing (its bleed into the microphone included); the trigger is three times that
 * floor's 90th percentile, never under `BARGE_IN_MIN_TRIGGER` (nor twice the silence threshold),
 * never over `BARGE_IN_MAX_TRIGGER`. It trips when, of the last `sustainedMs` of 30 ms frames, at
 * least 80% (the newest included) were over the trigger: a cough or a click does not, a sentence
 * does. `tripped` then stays true.
 */
export class BargeInDetector {
  private readonly frameBytes: number;
  private readonly calibrationFrames: number;
  private readonly window: boolean[] = [];
  private readonly windowFrames: number;
  private readonly floor: number[] = [];
  private carry = Buffer.alloc(0);
  private trigger = Number.POSITIVE_INFINITY;
  tripped = false;

  constructor(
    private readonly silenceThreshold: number,
    sustainedMs = 300,
    calibrationMs = 450,
    sampleRate = SAMPLE_RATE,
    frameMs = 30,
  ) {
    this.frameBytes = Math.round((sampleRate * frameMs) / 1000) * 2;
    this.calibrationFrames = Math.max(1, Math.round(calibrationMs / frameMs));
    this.windowFrames = Math.max(1, Math.round(sustainedMs / frameMs));
  }

  /** The loudness that counts as talking over the answer (Infinity while calibrating). */
  get level(): number {
    return this.trigger;
  }

  /** Feeds PCM; true once someone is talking over the answer. */
  push(pcm: Buffer): boolean {
    let data = this.carry.length > 0 ? Buffer.concat([this.carry, pcm]) : pcm;
    while (data.length >= this.frameBytes && !this.tripped) {
      const level = rms(data.subarray(0, this.frameBytes));
      data = data.subarray(this.frameBytes);
      if (this.floor.length < this.calibrationFrames) {
        this.floor.push(level);
        if (this.floor.length === this.calibrationFrames) {
          const sorted = [...this.floor].sort((a, b) => a - b);
          const p90 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.9))] ?? 0;
          this.trigger = Math.min(
            BARGE_IN_MAX_TRIGGER,
            Math.max(BARGE_IN_MIN_TRIGGER, this.silenceThreshold * 2, p90 * 3),
          );
        }
        continue;
      }
      const above = level >= this.trigger;
      this.window.push(above);
      if (this.window.length > this.windowFrames) this.window.shift();
      const count = this.window.filter(Boolean).length;
      if (above && this.window.length === this.windowFrames && count >= Math.ceil(this.windowFrames * 0.8))
        this.tripped = true;
    }
    this.carry = this.tripped ? Buffer.alloc(0) : Buffer.from(data);
    return this.tripped;
  }
}
