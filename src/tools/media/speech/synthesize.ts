/**
 * `synthesize(text, options)`: text to an audio file through the configured provider chain.
 *
 * The chain is `tts.provider` (or, unset: ElevenLabs when ELEVENLABS_API_KEY is set, OpenAI when a
 * voice-only OpenAI key is, else upstream's free default `edge`), then `tts.fallback` when given
 * (a list of provider names; `false` or `[]` for none), else the free ones: `edge` then `espeak-ng`
 * when no provider was chosen, only the offline `espeak-ng` when one was (text meant for one
 * service is not sent to another unasked). Each provider that fails (HTTP error, timeout, missing
 * key or binary) is logged, redacted, and the next one runs. Temp audio lives in a private folder
 * removed whatever happens; the result is written atomically to `outputPath`.
 */
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { extname, join } from "node:path";
import { atomicWriteFile } from "../../../util/atomic-write.js";
import { type Env, envValue, findBinary, section, str } from "../shared.js";
import { commandProviderConfig } from "./command.js";
import {
  AUDIO_FORMATS,
  type AudioFormat,
  clampNumber,
  convertAudio,
  firstThatWorks,
  providerChain,
  type SpeechAttempt,
  type SpeechContext,
  sniffFormat,
} from "./common.js";
import {
  canonicalTts,
  elevenLabsKey,
  openAiTtsKey,
  runTtsProvider,
  TTS_BUILTINS,
  TTS_UNSUPPORTED,
} from "./tts-providers.js";

export interface SynthesizeOptions extends SpeechContext {
  /** Where the audio goes; its extension (.mp3, .ogg/.opus, .wav, .flac) is the format. */
  outputPath: string;
  /** Use this provider first instead of `tts.provider`. */
  provider?: string | undefined;
  /**
   * When the wanted format needs ffmpeg and it is missing, write the provider's own format next to
   * `outputPath` (same name, other extension) rather than fail.
   */
  allowOtherFormat?: boolean | undefined;
}

export interface SynthesisResult {
  /** The written file (differs from `outputPath` only under `allowOtherFormat`). */
  path: string;
  format: AudioFormat;
  provider: string;
  /** Ogg/Opus: what chat apps play as a voice note. */
  voiceCompatible: boolean;
  /** Providers that failed before this one, with their reasons. */
  attempts: SpeechAttempt[];
}

export interface TtsPlan {
  chain: string[];
}

/** The provider chain from config and keys; throws for provider names nothing can serve. */
export function planTts(config: unknown, env: Env, override?: string): TtsPlan {
  const tts = section(config, "tts");
  const chosen = str(override) ?? str(tts["provider"]);
  const primary = chosen
    ? canonicalTts(chosen)
    : elevenLabsKey(config, env)
      ? "elevenlabs"
      : openAiTtsKey(config, env, false)
        ? "openai"
        : "edge";
  const automatic = chosen ? ["espeak-ng"] : ["edge", "espeak-ng"];
  const chain = providerChain(config, "tts", primary, automatic).map(canonicalTts);
  for (const name of chain) {
    if ((TTS_BUILTINS as readonly string[]).includes(name)) continue;
    if (commandProviderConfig(tts, name)) continue;
    throw new Error(
      TTS_UNSUPPORTED.includes(name)
        ? `tts provider "${name}" is not supported by Hermes-TS yet${name === "piper" ? "; run piper as a command provider (tts.providers.piper.command)" : ""}: use edge, openai, elevenlabs, espeak-ng or a command provider.`
        : `tts provider "${name}" is unknown: use edge, openai, elevenlabs, espeak-ng, or declare tts.providers.${name} with type: command.`,
    );
  }
  return { chain: [...new Set(chain)] };
}

/** Whether the chain has a provider that can plausibly run here (a key, a binary, or Edge's free service). */
export function ttsAvailable(config: unknown, env: Env): boolean {
  let plan: TtsPlan;
  try {
    plan = planTts(config, env);
  } catch {
    return false;
  }
  return plan.chain.some((name) => {
    if (name === "edge") return true;
    if (name === "openai") return openAiTtsKey(config, env, true) !== undefined;
    if (name === "elevenlabs") return elevenLabsKey(config, env) !== undefined;
    if (name === "espeak-ng") return findBinary("espeak-ng", env) !== undefined;
    return true;
  });
}

/** The format an output path asks for; throws for other extensions. */
export function formatOf(path: string): AudioFormat {
  const ext = extname(path).slice(1).toLowerCase();
  const format = ext === "opus" ? "ogg" : ext;
  if (!(AUDIO_FORMATS as readonly string[]).includes(format))
    throw new Error(`${path} must end in .mp3, .ogg, .wav or .flac.`);
  return format as AudioFormat;
}

/** Speaks `text` into `options.outputPath` with the first provider of the chain that works. */
export async function synthesize(text: string, options: SynthesizeOptions): Promise<SynthesisResult> {
  if (!text.trim()) throw new Error("There is no text to speak.");
  const want = formatOf(options.outputPath);
  const { chain } = planTts(options.config, options.env, options.provider);
  const speed = clampNumber(section(options.config, "tts")["speed"], 0.25, 4, 1);
  const keys = [
    openAiTtsKey(options.config, options.env, true),
    elevenLabsKey(options.config, options.env),
    envValue(options.env, "OPENAI_API_KEY"),
  ];
  const { value, provider, attempts } = await firstThatWorks(
    chain,
    "text-to-speech",
    options,
    keys,
    async (name) => {
      const dir = await mkdtemp(join(tmpdir(), "hermes-tts-"));
      try {
        const out = await runTtsProvider(name, {
          text,
          want,
          dir,
          config: options.config,
          env: options.env,
          speed,
          signal: options.signal,
        });
        const info = await stat(out.file).catch(() => undefined);
        if (!info?.isFile() || info.size === 0) throw new Error(`${name} produced no audio`);
        const bytes = await readFile(out.file);
        const actual = sniffFormat(bytes.subarray(0, 12)) ?? out.format;
        if (actual === want) return { bytes, format: want };
        const converted = join(dir, `converted.${want}`);
        try {
          await convertAudio(out.file, converted, want, options.env, options.signal);
        } catch (error) {
          if (options.allowOtherFormat && !findBinary("ffmpeg", options.env))
            return { bytes, format: actual };
          throw error;
        }
        return { bytes: await readFile(converted), format: want };
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
  const path =
    value.format === want
      ? options.outputPath
      : options.outputPath.replace(/\.[A-Za-z0-9]+$/, `.${value.format}`);
  // Atomic: a hard link named like the output never carries the audio into the file it shares.
  await atomicWriteFile(path, value.bytes);
  return { path, format: value.format, provider, voiceCompatible: value.format === "ogg", attempts };
}
