/**
 * text_to_speech: speaks text into an audio file and returns its path with a `MEDIA:` tag, so a
 * messaging gateway sends it as audio (an .ogg file as a voice note).
 *
 * Backends: OpenAI (`/audio/speech`), ElevenLabs (`/v1/text-to-speech/{voice}`) and local
 * espeak-ng. The choice follows `tts.provider` as Python Hermes writes it. Its default, "edge"
 * (Microsoft's free online voices, a Python-only client), is served by espeak-ng here: a free
 * choice stays free. With no provider set: ElevenLabs when ELEVENLABS_API_KEY is set, OpenAI when
 * VOICE_TOOLS_OPENAI_KEY (a key meant for voice) or `tts.openai.api_key` is set, else espeak-ng.
 * A general OPENAI_API_KEY is used only when `tts.provider` is `openai`, so an inference key never
 * silently buys speech.
 */
import { lstat, mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, extname, join, sep } from "node:path";
import { Type } from "@sinclair/typebox";
import { resolvePath } from "../../util/abs-path.js";
import { atomicWriteFile } from "../../util/atomic-write.js";
import { realPathOf } from "../approval/protected-paths.js";
import { guardWrite } from "../file/write-guard.js";
import { defineTool } from "../types.js";
import {
  apiErrorMessage,
  type Env,
  envValue,
  fetchWithTimeout,
  findBinary,
  homeDir,
  positiveNumber,
  runProgram,
  section,
  str,
  timestampedName,
  toolEnv,
} from "./shared.js";
import description from "./tts.md";

export type TtsProvider = "openai" | "elevenlabs" | "espeak";

const OPENAI_BASE_URL = "https://api.openai.com/v1";
const ELEVENLABS_BASE_URL = "https://api.elevenlabs.io";
const OPENAI_DEFAULTS = { model: "gpt-4o-mini-tts", voice: "alloy" };
const ELEVENLABS_DEFAULTS = { voiceId: "pNInz6obpgDQGcFmaJgB", modelId: "eleven_multilingual_v2" };
/** Characters one request takes; longer text gets a clear error rather than a cut. */
const MAX_CHARS: Record<TtsProvider, number> = { openai: 4096, elevenlabs: 5000, espeak: 20_000 };
const MAX_AUDIO_BYTES = 16 * 1024 * 1024;
const FORMATS = ["mp3", "ogg", "wav", "flac"] as const;
type AudioFormat = (typeof FORMATS)[number];
/** Providers Python Hermes knows that have no backend here yet. */
const UNSUPPORTED = ["minimax", "xai", "mistral", "gemini", "deepinfra", "neutts", "kittentts", "piper"];

export type TtsChoice = { provider: TtsProvider; note?: string } | { error: string };

const openAiKey = (config: unknown, env: Env, explicit: boolean): string | undefined =>
  str(section(config, "tts", "openai")["api_key"]) ??
  (explicit
    ? envValue(env, "VOICE_TOOLS_OPENAI_KEY", "OPENAI_API_KEY")
    : envValue(env, "VOICE_TOOLS_OPENAI_KEY"));
const elevenLabsKey = (config: unknown, env: Env): string | undefined =>
  str(section(config, "tts", "elevenlabs")["api_key"]) ?? envValue(env, "ELEVENLABS_API_KEY");

/** Which backend speaks, from config and environment (see the file comment); never throws. */
export function chooseTtsProvider(config: unknown, env: Env): TtsChoice {
  const raw = str(section(config, "tts")["provider"])?.toLowerCase();
  const espeak = findBinary("espeak-ng", env) !== undefined;
  const noEspeak = "espeak-ng is not installed (apt install espeak-ng)";
  switch (raw) {
    case undefined:
      if (elevenLabsKey(config, env)) return { provider: "elevenlabs" };
      if (openAiKey(config, env, false)) return { provider: "openai" };
      if (espeak) return { provider: "espeak" };
      return {
        error: `No text-to-speech backend: set ELEVENLABS_API_KEY or VOICE_TOOLS_OPENAI_KEY, set tts.provider: openai with OPENAI_API_KEY, or install espeak-ng.`,
      };
    case "edge":
      return espeak
        ? {
            provider: "espeak",
            note: "Edge TTS is not available in Hermes-TS; spoken with espeak-ng instead.",
          }
        : {
            error: `tts.provider is "edge", which Hermes-TS serves with local espeak-ng, and ${noEspeak}. Install it, or set tts.provider to openai or elevenlabs.`,
          };
    case "espeak":
    case "espeak-ng":
      return espeak ? { provider: "espeak" } : { error: `tts.provider is "${raw}" but ${noEspeak}.` };
    case "openai":
    case "nous":
      return openAiKey(config, env, true)
        ? { provider: "openai" }
        : {
            error:
              "tts.provider is openai but no key is set: set VOICE_TOOLS_OPENAI_KEY or OPENAI_API_KEY, or tts.openai.api_key.",
          };
    case "elevenlabs":
      return elevenLabsKey(config, env)
        ? { provider: "elevenlabs" }
        : { error: "tts.provider is elevenlabs but ELEVENLABS_API_KEY is not set." };
    default:
      return {
        error: `tts.provider "${raw}" is ${UNSUPPORTED.includes(raw) ? "not supported by Hermes-TS yet" : "unknown"}: use openai, elevenlabs or edge (spoken locally with espeak-ng).`,
      };
  }
}

const parameters = Type.Object({
  text: Type.String({ minLength: 1, description: "What to say." }),
  output_path: Type.Optional(
    Type.String({
      description: "Output file (.mp3 default, .ogg, .wav, .flac).",
    }),
  ),
});

export const textToSpeechTool = defineTool({
  name: "text_to_speech",
  toolset: "tts",
  description,
  parameters,
  parallelSafe: false,
  emoji: "🔊",
  check(ctx) {
    return "provider" in chooseTtsProvider(ctx.config, ctx.env);
  },
  async handler(args, ctx) {
    const env = toolEnv(ctx);
    const choice = chooseTtsProvider(ctx.config, env);
    if ("error" in choice) throw new Error(choice.error);
    const text = spokenText(args.text);
    if (!text) throw new Error("There is no speakable text once markdown is removed.");
    const limit = MAX_CHARS[choice.provider];
    if (text.length > limit) {
      throw new Error(
        `The text is ${text.length} characters; ${choice.provider} takes at most ${limit} per call. Split it into several text_to_speech calls.`,
      );
    }
    const target = outputTarget(args.output_path, ctx.cwd, ctx.home);
    const { format } = target;
    let { path } = target;
    if (args.output_path) {
      // A model-chosen path goes through the protected-path guard like write_file, and a symlink
      // there is written through (the rename below would otherwise replace the link itself).
      await guardWrite(ctx, path, "text_to_speech");
      if ((await lstat(path).catch(() => undefined))?.isSymbolicLink()) path = realPathOf(path);
    }
    await mkdir(dirname(path), { recursive: true });
    ctx.progress(`speaking with ${choice.provider}`);
    const tts = section(ctx.config, "tts");
    const speed = Math.min(4, Math.max(0.25, positiveNumber(tts["speed"]) ?? 1));
    const ffmpeg = findBinary("ffmpeg", env);
    let finalPath = path;
    let note = choice.note;
    if (choice.provider === "espeak") {
      const espeak = findBinary("espeak-ng", env) ?? "espeak-ng";
      const wav = `${path}.tmp.wav`;
      const cfg = section(ctx.config, "tts", "espeak");
      const voice = str(cfg["voice"]) ?? "en";
      const wpm = Math.round(Math.min(450, Math.max(80, 175 * (positiveNumber(cfg["speed"]) ?? speed))));
      await runProgram(espeak, ["-v", voice, "-s", String(wpm), "-w", wav, "--stdin"], {
        input: text,
        signal: ctx.signal,
        timeoutMs: 120_000,
      });
      if (format === "wav") await rename(wav, path);
      else if (ffmpeg)
        await convertAudio(ffmpeg, wav, path, format, ctx.signal).finally(() => rm(wav, { force: true }));
      else if (args.output_path) {
        await rm(wav, { force: true });
        throw new Error(
          `Writing .${format} needs ffmpeg, which is not installed; ask for a .wav output_path instead.`,
        );
      } else {
        finalPath = path.replace(/\.[a-z0-9]+$/, ".wav");
        await rename(wav, finalPath);
        note = [note, "ffmpeg is not installed, so the audio is WAV."].filter(Boolean).join(" ");
      }
    } else {
      const native: AudioFormat =
        format === "ogg" || format === "mp3" || choice.provider === "openai" ? format : "mp3";
      const audio =
        choice.provider === "openai"
          ? await openAiSpeech(text, native, speed, ctx.config, env, ctx.signal)
          : await elevenLabsSpeech(text, native, ctx.config, env, ctx.signal);
      // An .ogg that is really MP3 plays as a 0-second voice note, so the container is checked too.
      const wrongContainer = format === "ogg" && audio.subarray(0, 4).toString("latin1") !== "OggS";
      // Atomic: a hard link named like the output never carries the audio into the file it shares.
      if (native === format && !wrongContainer) await atomicWriteFile(path, audio);
      else {
        if (!ffmpeg)
          throw new Error(`Writing .${format} needs ffmpeg, which is not installed; use .mp3 or .ogg.`);
        const tmp = `${path}.tmp.${native}`;
        await writeFile(tmp, audio);
        await convertAudio(ffmpeg, tmp, path, format, ctx.signal).finally(() => rm(tmp, { force: true }));
      }
    }
    const size = (await stat(finalPath)).size;
    if (size === 0) throw new Error(`${choice.provider} produced an empty audio file.`);
    // Opus in Ogg is what chat apps play as a voice note; other formats go as audio files.
    const voice = finalPath.endsWith(".ogg");
    return {
      success: true,
      file_path: finalPath,
      media_tag: `${voice ? "[[audio_as_voice]]\n" : ""}MEDIA:${finalPath}`,
      provider: choice.provider,
      voice_compatible: voice,
      ...(note ? { note } : {}),
    };
  },
});

/** Markdown a voice should not read aloud (emphasis, code fences, link targets, headings) removed. */
export function spokenText(text: string): string {
  return text
    .replace(/```[a-z0-9_-]*\n?/gi, "")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/^#{1,6}\s+/gm, "")
    .replace(/(\*\*|__|\*|`|~~)/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

function outputTarget(
  requested: string | undefined,
  cwd: string,
  home: string,
): { path: string; format: AudioFormat } {
  if (!requested?.trim()) {
    return {
      path: join(homeDir(home, join("cache", "audio"), "audio_cache"), timestampedName("tts", "mp3")),
      format: "mp3",
    };
  }
  if (requested.split(/[\\/]/).includes("..")) {
    throw new Error(
      `output_path "${requested}" contains "..": give an absolute path or one inside the working directory.`,
    );
  }
  const path = resolvePath(requested.trim(), cwd);
  if (path.endsWith(sep))
    throw new Error(`output_path "${requested}" is a folder; name a file such as reply.mp3.`);
  const ext = extname(path).slice(1).toLowerCase();
  const format = (ext === "opus" ? "ogg" : ext) as AudioFormat;
  if (!FORMATS.includes(format)) {
    throw new Error(`output_path "${requested}" must end in .mp3, .ogg, .wav or .flac.`);
  }
  return { path, format };
}

const CODEC_ARGS: Record<AudioFormat, string[]> = {
  mp3: ["-c:a", "libmp3lame", "-q:a", "4"],
  ogg: ["-c:a", "libopus", "-b:a", "48k"],
  wav: ["-c:a", "pcm_s16le"],
  flac: ["-c:a", "flac"],
};

async function convertAudio(
  ffmpeg: string,
  input: string,
  output: string,
  format: AudioFormat,
  signal: AbortSignal,
) {
  await runProgram(
    ffmpeg,
    ["-v", "error", "-nostdin", "-y", "-i", input, "-vn", ...CODEC_ARGS[format], output],
    {
      signal,
      timeoutMs: 120_000,
    },
  );
}

async function readAudio(response: Response, label: string): Promise<Buffer> {
  if (!response.ok) {
    throw new Error(
      `${label} refused the request (HTTP ${response.status}): ${apiErrorMessage(await response.text())}`,
    );
  }
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > MAX_AUDIO_BYTES)
    throw new Error(`${label} sent ${declared} bytes of audio, over the 16 MB limit.`);
  const audio = Buffer.from(await response.arrayBuffer());
  if (audio.length > MAX_AUDIO_BYTES) throw new Error(`${label} sent more than 16 MB of audio.`);
  if (audio.length === 0) throw new Error(`${label} sent no audio.`);
  const type = response.headers.get("content-type") ?? "";
  if (type.includes("json") || type.startsWith("text/")) {
    throw new Error(`${label} sent ${type} instead of audio: ${apiErrorMessage(audio.toString("utf8"))}`);
  }
  return audio;
}

async function openAiSpeech(
  text: string,
  format: AudioFormat,
  speed: number,
  config: unknown,
  env: Env,
  signal: AbortSignal,
): Promise<Buffer> {
  const cfg = section(config, "tts", "openai");
  const key = openAiKey(config, env, true) ?? "";
  const base = (str(cfg["base_url"]) ?? OPENAI_BASE_URL).replace(/\/+$/, "");
  const rate = Math.min(4, Math.max(0.25, positiveNumber(cfg["speed"]) ?? speed));
  const body: Record<string, unknown> = {
    model: str(cfg["model"]) ?? OPENAI_DEFAULTS.model,
    voice: str(cfg["voice"]) ?? OPENAI_DEFAULTS.voice,
    input: text,
    response_format: format === "ogg" ? "opus" : format,
  };
  if (rate !== 1) body["speed"] = rate;
  const response = await fetchWithTimeout(`${base}/audio/speech`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    timeoutMs: 120_000,
    label: "OpenAI text-to-speech",
    signal,
  });
  return readAudio(response, "OpenAI text-to-speech");
}

async function elevenLabsSpeech(
  text: string,
  format: AudioFormat,
  config: unknown,
  env: Env,
  signal: AbortSignal,
): Promise<Buffer> {
  const cfg = section(config, "tts", "elevenlabs");
  const base = (str(cfg["base_url"]) ?? envValue(env, "ELEVENLABS_API_URL") ?? ELEVENLABS_BASE_URL).replace(
    /\/+$/,
    "",
  );
  const voice = encodeURIComponent(str(cfg["voice_id"]) ?? ELEVENLABS_DEFAULTS.voiceId);
  const outputFormat = format === "ogg" ? "opus_48000_64" : "mp3_44100_128";
  const response = await fetchWithTimeout(
    `${base}/v1/text-to-speech/${voice}?output_format=${outputFormat}`,
    {
      method: "POST",
      headers: {
        "xi-api-key": elevenLabsKey(config, env) ?? "",
        "content-type": "application/json",
        accept: format === "ogg" ? "audio/ogg" : "audio/mpeg",
      },
      body: JSON.stringify({ text, model_id: str(cfg["model_id"]) ?? ELEVENLABS_DEFAULTS.modelId }),
      timeoutMs: 120_000,
      label: "ElevenLabs",
      signal,
    },
  );
  return readAudio(response, "ElevenLabs");
}
