/**
 * Upstream's `voice.*` keys, read leniently: a missing or mistyped value falls back to its default.
 * `record_command` / `play_command` (also HERMES_VOICE_RECORD_COMMAND / HERMES_VOICE_PLAY_COMMAND)
 * are a test seam, not a user feature: they replace the microphone and the speaker with commands
 * (`{output}` / `{input}` stand for the audio file), so tests run the whole chain without devices.
 */
export interface VoiceSettings {
  /** `ctrl+b` style; only ctrl+letter keys are supported. */
  recordKey: string;
  maxRecordingSeconds: number;
  autoTts: boolean;
  beepEnabled: boolean;
  /** RMS of 16-bit samples under which a frame counts as silence. */
  silenceThreshold: number;
  /** Seconds of silence after speech that end an utterance. */
  silenceDuration: number;
  /** With voice mode on, talking over a spoken answer stops it and is the next message. */
  bargeIn: boolean;
  recordCommand: string[] | null;
  playCommand: string[] | null;
}

function num(value: unknown, fallback: number, min: number, max: number): number {
  const n = typeof value === "string" ? Number(value) : value;
  return typeof n === "number" && Number.isFinite(n) && n >= min && n <= max ? n : fallback;
}

function bool(value: unknown, fallback: boolean): boolean {
  if (typeof value === "boolean") return value;
  if (value === "true" || value === "false") return value === "true";
  return fallback;
}

function command(value: unknown): string[] | null {
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === "string")) return value;
  if (typeof value === "string" && value.trim() !== "") return value.trim().split(/\s+/);
  return null;
}

/** `ctrl+b`, `Ctrl-B`, `c-b` → `b`; anything else → null (not a key we can watch). */
export function ctrlLetter(key: string): string | null {
  const m = /^(?:ctrl|control|c)[+-]([a-z])$/i.exec(key.trim());
  return m?.[1] ? m[1].toLowerCase() : null;
}

export function voiceSettings(config: unknown, env: Record<string, string | undefined>): VoiceSettings {
  const raw = (config as { voice?: unknown } | null)?.voice;
  const v = raw && typeof raw === "object" ? (raw as Record<string, unknown>) : {};
  const key = typeof v["record_key"] === "string" && ctrlLetter(v["record_key"]) ? v["record_key"] : "ctrl+b";
  return {
    recordKey: key,
    maxRecordingSeconds: num(v["max_recording_seconds"], 120, 1, 3600),
    autoTts: bool(v["auto_tts"], false),
    beepEnabled: bool(v["beep_enabled"], true),
    silenceThreshold: num(v["silence_threshold"], 200, 1, 32767),
    silenceDuration: num(v["silence_duration"], 3.0, 0.2, 60),
    bargeIn: bool(v["barge_in"], true),
    recordCommand: command(env["HERMES_VOICE_RECORD_COMMAND"]) ?? command(v["record_command"]),
    playCommand: command(env["HERMES_VOICE_PLAY_COMMAND"]) ?? command(v["play_command"]),
  };
}
