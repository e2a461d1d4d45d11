/**
 * The text-to-speech backends. Each writes its audio into a private temp folder and says which
 * format it wrote; the engine (synthesize.ts) converts and places the file.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { scrubEnv } from "../../../util/env-scrub.js";
import { type Env, envValue, findBinary, positiveNumber, runProgram, section, str } from "../shared.js";
import {
  commandProviderConfig,
  commandTimeoutMs,
  passthroughNames,
  planCommand,
  runPlan,
} from "./command.js";
import { AUDIO_FORMATS, type AudioFormat, clampNumber } from "./common.js";
import { edgeSynthesize } from "./edge.js";
import { audioFrom, speechRequest } from "./http.js";

export const TTS_BUILTINS = ["edge", "openai", "elevenlabs", "espeak-ng"] as const;
/** Upstream providers with no backend here (a command provider of the same name still works). */
export const TTS_UNSUPPORTED = [
  "minimax",
  "xai",
  "mistral",
  "gemini",
  "deepinfra",
  "neutts",
  "kittentts",
  "piper",
];
export const MAX_AUDIO_BYTES = 16 * 1024 * 1024;
const OPENAI_BASE_URL = "https://api.openai.com/v1";
const ELEVENLABS_BASE_URL = "https://api.elevenlabs.io";
export const TTS_DEFAULTS = {
  edgeVoice: "en-US-AriaNeural",
  openaiModel: "gpt-4o-mini-tts",
  openaiVoice: "alloy",
  elevenVoiceId: "pNInz6obpgDQGcFmaJgB",
  elevenModelId: "eleven_multilingual_v2",
};
/** Characters one request takes, per provider (upstream's limits). */
export const TTS_MAX_CHARS: Record<string, number> = {
  edge: 5000,
  openai: 4096,
  elevenlabs: 5000,
  "espeak-ng": 20_000,
};
const COMMAND_MAX_CHARS = 5000;

/** `espeak` means espeak-ng; `nous` is served by the OpenAI path (as upstream does). */
export function canonicalTts(name: string): string {
  const n = name.trim().toLowerCase();
  return n === "espeak" ? "espeak-ng" : n === "nous" ? "openai" : n;
}

export function openAiTtsKey(config: unknown, env: Env, explicit: boolean): string | undefined {
  return (
    str(section(config, "tts", "openai")["api_key"]) ??
    (explicit
      ? envValue(env, "VOICE_TOOLS_OPENAI_KEY", "OPENAI_API_KEY")
      : envValue(env, "VOICE_TOOLS_OPENAI_KEY"))
  );
}

export function elevenLabsKey(config: unknown, env: Env): string | undefined {
  return str(section(config, "tts", "elevenlabs")["api_key"]) ?? envValue(env, "ELEVENLABS_API_KEY");
}

export interface TtsJob {
  text: string;
  /** The format the caller wants in the end; providers that can write it directly do. */
  want: AudioFormat;
  dir: string;
  config: unknown;
  env: Env;
  speed: number;
  signal?: AbortSignal | undefined;
}

export interface TtsOutput {
  file: string;
  format: AudioFormat;
}

/** The character limit of `provider` (a command provider's `max_text_length`, default 5000). */
export function ttsMaxChars(provider: string, config: unknown): number {
  const tts = section(config, "tts");
  const own = positiveNumber(section(config, "tts", provider)["max_text_length"]);
  if (own && TTS_BUILTINS.includes(provider as (typeof TTS_BUILTINS)[number])) return Math.floor(own);
  const builtin = TTS_MAX_CHARS[provider];
  if (builtin) return builtin;
  const cmd = commandProviderConfig(tts, provider);
  return Math.floor(positiveNumber(cmd?.["max_text_length"]) ?? COMMAND_MAX_CHARS);
}

/** Speaks `job.text` with `provider`; throws naming what failed (missing key, binary, HTTP error...). */
export async function runTtsProvider(provider: string, job: TtsJob): Promise<TtsOutput> {
  const limit = ttsMaxChars(provider, job.config);
  if (job.text.length > limit)
    throw new Error(`the text is ${job.text.length} characters; ${provider} takes at most ${limit}`);
  switch (provider) {
    case "edge":
      return edge(job);
    case "openai":
      return openAi(job);
    case "elevenlabs":
      return elevenLabs(job);
    case "espeak-ng":
      return espeak(job);
    default:
      return command(provider, job);
  }
}

async function save(job: TtsJob, audio: Buffer, format: AudioFormat): Promise<TtsOutput> {
  const file = join(job.dir, `provider.${format}`);
  await writeFile(file, audio);
  return { file, format };
}

async function edge(job: TtsJob): Promise<TtsOutput> {
  const cfg = section(job.config, "tts", "edge");
  const speed = positiveNumber(cfg["speed"]) ?? job.speed;
  const pct = Math.round((speed - 1) * 100);
  const rate = str(cfg["rate"]) ?? `${pct >= 0 ? "+" : ""}${pct}%`;
  const pitch = str(cfg["pitch"]);
  const volume = str(cfg["volume"]);
  const url = str(cfg["base_url"]) ?? envValue(job.env, "HERMES_EDGE_TTS_URL");
  const audio = await edgeSynthesize(job.text, {
    voice: str(cfg["voice"]) ?? TTS_DEFAULTS.edgeVoice,
    rate,
    ...(pitch ? { pitch } : {}),
    ...(volume ? { volume } : {}),
    ...(url ? { url } : {}),
    timeoutMs: clampNumber(cfg["timeout"], 1, 600, 60) * 1000,
    maxBytes: MAX_AUDIO_BYTES,
    signal: job.signal,
  });
  return save(job, audio, "mp3");
}

async function openAi(job: TtsJob): Promise<TtsOutput> {
  const cfg = section(job.config, "tts", "openai");
  const key = openAiTtsKey(job.config, job.env, true);
  if (!key) throw new Error("no key: set VOICE_TOOLS_OPENAI_KEY or OPENAI_API_KEY, or tts.openai.api_key");
  const base = (str(cfg["base_url"]) ?? OPENAI_BASE_URL).replace(/\/+$/, "");
  const rate = clampNumber(cfg["speed"], 0.25, 4, job.speed);
  const body: Record<string, unknown> = {
    model: str(cfg["model"]) ?? TTS_DEFAULTS.openaiModel,
    voice: str(cfg["voice"]) ?? TTS_DEFAULTS.openaiVoice,
    input: job.text,
    response_format: job.want === "ogg" ? "opus" : job.want,
  };
  const instructions = str(cfg["instructions"]);
  if (instructions) body["instructions"] = instructions;
  if (rate !== 1) body["speed"] = rate;
  const res = await speechRequest({
    url: `${base}/audio/speech`,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    label: "OpenAI text-to-speech",
    timeoutMs: clampNumber(cfg["timeout"], 1, 600, 120) * 1000,
    maxBytes: MAX_AUDIO_BYTES,
    signal: job.signal,
  });
  return save(job, audioFrom(res, "OpenAI text-to-speech"), job.want);
}

async function elevenLabs(job: TtsJob): Promise<TtsOutput> {
  const cfg = section(job.config, "tts", "elevenlabs");
  const key = elevenLabsKey(job.config, job.env);
  if (!key) throw new Error("no key: ELEVENLABS_API_KEY is not set");
  const base = (
    str(cfg["base_url"]) ??
    envValue(job.env, "ELEVENLABS_API_URL") ??
    ELEVENLABS_BASE_URL
  ).replace(/\/+$/, "");
  const voice = encodeURIComponent(str(cfg["voice_id"]) ?? TTS_DEFAULTS.elevenVoiceId);
  const opus = job.want === "ogg";
  const res = await speechRequest({
    url: `${base}/v1/text-to-speech/${voice}?output_format=${opus ? "opus_48000_64" : "mp3_44100_128"}`,
    headers: {
      "xi-api-key": key,
      "content-type": "application/json",
      accept: opus ? "audio/ogg" : "audio/mpeg",
    },
    body: JSON.stringify({ text: job.text, model_id: str(cfg["model_id"]) ?? TTS_DEFAULTS.elevenModelId }),
    label: "ElevenLabs",
    timeoutMs: clampNumber(cfg["timeout"], 1, 600, 120) * 1000,
    maxBytes: MAX_AUDIO_BYTES,
    signal: job.signal,
  });
  return save(job, audioFrom(res, "ElevenLabs"), opus ? "ogg" : "mp3");
}

async function espeak(job: TtsJob): Promise<TtsOutput> {
  const program = findBinary("espeak-ng", job.env);
  if (!program) throw new Error("espeak-ng is not installed (apt install espeak-ng)");
  const cfg = section(job.config, "tts", "espeak");
  const voice = str(cfg["voice"]) ?? "en";
  if (!/^[A-Za-z0-9_+-]{1,40}$/.test(voice))
    throw new Error(`tts.espeak.voice "${voice}" is not a voice name`);
  const wpm = Math.round(Math.min(450, Math.max(80, 175 * (positiveNumber(cfg["speed"]) ?? job.speed))));
  const file = join(job.dir, "provider.wav");
  // The text goes on stdin, never on the command line, so it can never read as an option.
  await runProgram(program, ["-v", voice, "-s", String(wpm), "-w", file, "--stdin"], {
    input: job.text,
    ...(job.signal ? { signal: job.signal } : {}),
    timeoutMs: 120_000,
  });
  return { file, format: "wav" };
}

async function command(provider: string, job: TtsJob): Promise<TtsOutput> {
  const cfg = commandProviderConfig(section(job.config, "tts"), provider);
  if (!cfg) throw new Error(`tts.providers.${provider}.command is not set`);
  const raw = str(cfg["output_format"]) ?? str(cfg["format"]) ?? "mp3";
  const declared = raw.replace(/^\./, "").toLowerCase();
  const format = (AUDIO_FORMATS as readonly string[]).includes(declared) ? (declared as AudioFormat) : "mp3";
  const textPath = join(job.dir, "input.txt");
  await writeFile(textPath, job.text, "utf8");
  const output = join(job.dir, `provider.${format}`);
  const values = {
    input_path: textPath,
    text_path: textPath,
    output_path: output,
    format,
    voice: str(cfg["voice"]) ?? "",
    model: str(cfg["model"]) ?? "",
    speed: String(positiveNumber(cfg["speed"]) ?? job.speed),
  };
  const plan = planCommand(String(cfg["command"]), values, job.env);
  await runPlan(plan, {
    env: scrubEnv(job.env, passthroughNames(cfg)),
    idleTimeoutMs: commandTimeoutMs(cfg, 120),
    signal: job.signal,
    cwd: job.dir,
    input: job.text,
  });
  return { file: output, format };
}
