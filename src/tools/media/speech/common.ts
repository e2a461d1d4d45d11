/** What the speech engines share: the call context, provider chains and their logged reasons. */
import { homeLogger } from "../../../util/log.js";
import { processRedactor, Redactor } from "../../../util/redact.js";
import { type Env, findBinary, runProgram, section, str } from "../shared.js";

export const AUDIO_FORMATS = ["mp3", "ogg", "wav", "flac"] as const;
export type AudioFormat = (typeof AUDIO_FORMATS)[number];

export interface SpeechContext {
  /** The whole config (`tts.*`, `stt.*` are read from it). */
  config: unknown;
  /** Environment with the API keys and PATH (the caller merges the home's `.env`). */
  env: Env;
  home: string;
  signal?: AbortSignal | undefined;
  /** Receives one line per provider that failed and was skipped (already redacted). */
  log?: ((line: string) => void) | undefined;
}

/** One provider tried and why it did not deliver. */
export interface SpeechAttempt {
  provider: string;
  error: string;
}

/** Every provider in the chain failed; `attempts` says why each did. */
export class SpeechChainError extends Error {
  constructor(
    message: string,
    readonly attempts: SpeechAttempt[],
  ) {
    super(message);
    this.name = "SpeechChainError";
  }
}

/** An error message with the call's keys and every known secret shape removed. */
export function redactedReason(error: unknown, keys: readonly (string | undefined)[]): string {
  const message = error instanceof Error ? error.message : String(error);
  const local = new Redactor();
  for (const key of keys) local.addSecret(key);
  return processRedactor().redact(local.redact(message));
}

/**
 * The chain: the chosen provider first, then `<section>.fallback` (a list, or `false`/`[]` for
 * none) or else `automatic`; names lower-cased, duplicates dropped.
 */
export function providerChain(
  config: unknown,
  key: "tts" | "stt",
  primary: string,
  automatic: readonly string[],
): string[] {
  const raw = section(config, key)["fallback"];
  const rest =
    raw === false
      ? []
      : Array.isArray(raw)
        ? raw.map((v) => String(v))
        : typeof raw === "string" && raw.trim()
          ? raw.split(",")
          : automatic;
  const out: string[] = [];
  for (const name of [primary, ...rest].map((n) => n.trim().toLowerCase()).filter(Boolean)) {
    if (!out.includes(name)) out.push(name);
  }
  return out;
}

/** Runs `attempt` for each provider in order until one succeeds, logging each failure. */
export async function firstThatWorks<T>(
  chain: readonly string[],
  what: string,
  ctx: SpeechContext,
  keys: readonly (string | undefined)[],
  attempt: (provider: string) => Promise<T>,
): Promise<{ value: T; provider: string; attempts: SpeechAttempt[] }> {
  const attempts: SpeechAttempt[] = [];
  const log =
    ctx.log ??
    ((line: string) =>
      homeLogger(ctx.home, section(ctx.config, "logging"), { component: "speech" }).warning(line));
  for (const [i, provider] of chain.entries()) {
    if (ctx.signal?.aborted) break;
    try {
      return { value: await attempt(provider), provider, attempts };
    } catch (error) {
      const reason = redactedReason(error, keys);
      attempts.push({ provider, error: reason });
      const next = chain[i + 1];
      log(`${what}: ${provider} failed (${reason})${next ? `; trying ${next}` : ""}`);
    }
  }
  if (ctx.signal?.aborted) throw new SpeechChainError(`${what} was interrupted.`, attempts);
  const only = attempts.length === 1 ? attempts[0] : undefined;
  throw new SpeechChainError(
    only
      ? only.error
      : `Every ${what} provider failed: ${attempts.map((a) => `${a.provider}: ${a.error}`).join("; ")}`,
    attempts,
  );
}

const CODEC_ARGS: Record<AudioFormat, string[]> = {
  mp3: ["-c:a", "libmp3lame", "-q:a", "4"],
  ogg: ["-c:a", "libopus", "-b:a", "48k"],
  wav: ["-c:a", "pcm_s16le"],
  flac: ["-c:a", "flac"],
};

/** Re-encodes `input` into `output` as `format` with ffmpeg; throws when ffmpeg is missing. */
export async function convertAudio(
  input: string,
  output: string,
  format: AudioFormat,
  env: Env,
  signal: AbortSignal | undefined,
): Promise<void> {
  const ffmpeg = findBinary("ffmpeg", env);
  if (!ffmpeg)
    throw new Error(`writing .${format} from this provider's audio needs ffmpeg (apt install ffmpeg)`);
  await runProgram(
    ffmpeg,
    ["-v", "error", "-nostdin", "-y", "-i", input, "-vn", ...CODEC_ARGS[format], output],
    {
      ...(signal ? { signal } : {}),
      timeoutMs: 120_000,
    },
  );
}

/** The container a file's first bytes show (mp3 for ID3 or an MPEG frame sync). */
export function sniffFormat(head: Buffer): AudioFormat | undefined {
  const magic = head.subarray(0, 4).toString("latin1");
  if (magic === "OggS") return "ogg";
  if (magic === "RIFF") return "wav";
  if (magic === "fLaC") return "flac";
  if (magic.startsWith("ID3") || (head[0] === 0xff && ((head[1] ?? 0) & 0xe0) === 0xe0)) return "mp3";
  return undefined;
}

/** A number in [min, max] from config, else `fallback`. */
export function clampNumber(value: unknown, min: number, max: number, fallback: number): number {
  const n = typeof value === "string" ? Number(value) : value;
  return typeof n === "number" && Number.isFinite(n) ? Math.min(max, Math.max(min, n)) : fallback;
}

export { section, str };
