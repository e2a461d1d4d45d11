/**
 * Speech to text for the gateway's voice messages (a library, not a tool). Backends and config
 * follow Python Hermes's `stt.*` keys: a local whisper command (`HERMES_LOCAL_STT_COMMAND`, or a
 * `whisper` CLI on PATH), Groq's Whisper API (GROQ_API_KEY) and OpenAI's (or any compatible
 * server's) `/audio/transcriptions`. `stt.provider` picks one; without it the free ones come
 * first: local, then Groq, then OpenAI.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, extname, join } from "node:path";
import { scrubEnv } from "../../util/env-scrub.js";
import {
  apiErrorMessage,
  type Env,
  envValue,
  fetchWithTimeout,
  findBinary,
  runProgram,
  section,
  str,
  toolEnv,
} from "./shared.js";

export interface TranscribeOptions {
  config: Readonly<Record<string, unknown>>;
  /** Environment with the API keys; the home's `.env` and the process environment fill gaps. */
  env: Env;
  home: string;
  signal?: AbortSignal | undefined;
}

export interface Transcription {
  text: string;
  /** `local_command`, `groq` or `openai`. */
  provider: string;
}

/** Formats the cloud APIs take (as upstream lists them). */
const SUPPORTED = new Set([
  ".mp3",
  ".mp4",
  ".mpeg",
  ".mpga",
  ".m4a",
  ".wav",
  ".webm",
  ".ogg",
  ".oga",
  ".opus",
  ".aac",
  ".flac",
]);
/** What whisper reads without conversion; anything else goes through ffmpeg to WAV first. */
const LOCAL_NATIVE = new Set([".wav", ".aiff", ".aif"]);
const MAX_UPLOAD_BYTES = 25 * 1024 * 1024;
const CLOUD_MODELS = new Set([
  "whisper-1",
  "gpt-4o-mini-transcribe",
  "gpt-4o-transcribe",
  "gpt-transcribe",
  "whisper-large-v3",
  "whisper-large-v3-turbo",
  "distil-whisper-large-v3-en",
]);
const GROQ_ONLY = new Set(["whisper-large-v3", "whisper-large-v3-turbo", "distil-whisper-large-v3-en"]);
const OPENAI_ONLY = new Set(["whisper-1", "gpt-4o-mini-transcribe", "gpt-4o-transcribe", "gpt-transcribe"]);
const UNSUPPORTED = ["mistral", "xai", "elevenlabs", "deepinfra"];

type Choice =
  | { provider: "local_command"; command: string[] }
  | { provider: "groq" | "openai"; apiKey: string; baseUrl: string; model: string };

/** Which backend transcribes; throws an error saying what to configure when none can. */
export function resolveStt(config: unknown, env: Env): Choice {
  const stt = section(config, "stt");
  if (stt["enabled"] === false)
    throw new Error("Speech-to-text is disabled in config.yaml (stt.enabled: false).");
  const raw = str(stt["provider"])?.toLowerCase();
  const local = localCommand(env);
  const groq = groqChoice(config, env);
  const openai = openAiChoice(config, env);
  switch (raw) {
    case undefined:
      if (local) return local;
      if (groq) return groq;
      if (openai) return openai;
      throw new Error(
        "No speech-to-text configured: install a local whisper CLI (pip install openai-whisper) or set HERMES_LOCAL_STT_COMMAND, set GROQ_API_KEY for Groq's free Whisper API, or set VOICE_TOOLS_OPENAI_KEY / OPENAI_API_KEY for OpenAI's.",
      );
    case "local":
    case "local_command":
      if (local) return local;
      throw new Error(
        `stt.provider is ${raw} but no local whisper was found: pip install openai-whisper, or set HERMES_LOCAL_STT_COMMAND.`,
      );
    case "groq":
      if (groq) return groq;
      throw new Error("stt.provider is groq but GROQ_API_KEY is not set.");
    case "openai":
    case "nous":
      if (openai) return openai;
      throw new Error(
        "stt.provider is openai but neither stt.openai.api_key nor VOICE_TOOLS_OPENAI_KEY / OPENAI_API_KEY is set.",
      );
    default:
      throw new Error(
        `stt.provider "${raw}" is ${UNSUPPORTED.includes(raw) ? "not supported by Hermes-TS yet" : "unknown"}: use local, groq or openai.`,
      );
  }
}

function localCommand(env: Env): Choice | undefined {
  const template = envValue(env, "HERMES_LOCAL_STT_COMMAND");
  if (template) return { provider: "local_command", command: splitWords(template) };
  const whisper = findBinary("whisper", env);
  if (!whisper) return undefined;
  return {
    provider: "local_command",
    command: [
      whisper,
      "{input_path}",
      "--model",
      "{model}",
      "--output_format",
      "txt",
      "--output_dir",
      "{output_dir}",
      "--language",
      "{language}",
    ],
  };
}

function groqChoice(config: unknown, env: Env): Choice | undefined {
  const apiKey = envValue(env, "GROQ_API_KEY");
  if (!apiKey) return undefined;
  let model =
    str(section(config, "stt", "groq")["model"]) ??
    envValue(env, "STT_GROQ_MODEL") ??
    "whisper-large-v3-turbo";
  if (OPENAI_ONLY.has(model)) model = "whisper-large-v3-turbo";
  return {
    provider: "groq",
    apiKey,
    baseUrl: envValue(env, "GROQ_BASE_URL") ?? "https://api.groq.com/openai/v1",
    model,
  };
}

function openAiChoice(config: unknown, env: Env): Choice | undefined {
  const cfg = section(config, "stt", "openai");
  const cfgBase = str(cfg["base_url"]);
  // A local OpenAI-compatible server (faster-whisper-server, speaches) needs no key.
  const apiKey =
    str(cfg["api_key"]) ??
    (cfgBase && isLocalUrl(cfgBase)
      ? "not-needed"
      : envValue(env, "VOICE_TOOLS_OPENAI_KEY", "OPENAI_API_KEY"));
  if (!apiKey) return undefined;
  let model = str(cfg["model"]) ?? envValue(env, "STT_OPENAI_MODEL") ?? "whisper-1";
  if (!cfgBase && GROQ_ONLY.has(model)) model = "whisper-1";
  const baseUrl = cfgBase ?? envValue(env, "STT_OPENAI_BASE_URL") ?? "https://api.openai.com/v1";
  return { provider: "openai", apiKey, baseUrl, model };
}

function isLocalUrl(url: string): boolean {
  try {
    const host = new URL(url).hostname.toLowerCase();
    return (
      host === "localhost" ||
      /\.(local|lan|internal)$/.test(host) ||
      /^(127\.|10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.)/.test(host) ||
      host === "[::1]"
    );
  } catch {
    return false;
  }
}

/**
 * The text spoken in the audio file at `path`. Throws an error naming the file and what failed:
 * no backend configured, an unsupported or oversized file, a refused request.
 */
export async function transcribeAudio(path: string, options: TranscribeOptions): Promise<Transcription> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch {
    throw new Error(`Audio file not found: ${path}`);
  }
  if (!info.isFile()) throw new Error(`${path} is not a file.`);
  if (info.size === 0) throw new Error(`${path} is empty.`);
  const ext = extname(path).toLowerCase();
  if (!SUPPORTED.has(ext) && !LOCAL_NATIVE.has(ext)) {
    throw new Error(
      `Unsupported audio format "${ext || "(none)"}" for ${basename(path)}: use ${[...SUPPORTED].join(", ")}.`,
    );
  }
  const env = toolEnv({ env: options.env });
  const choice = resolveStt(options.config, env);
  const language = languageFor(options.config, choice.provider, env);
  if (choice.provider === "local_command") {
    return {
      text: await runLocal(path, choice.command, options.config, env, language, options.signal),
      provider: "local_command",
    };
  }
  if (info.size > MAX_UPLOAD_BYTES) {
    throw new Error(
      `${basename(path)} is ${(info.size / 1024 / 1024).toFixed(1)} MB; ${choice.provider} takes at most 25 MB.`,
    );
  }
  const form = new FormData();
  form.append("file", new Blob([await readFile(path)]), basename(path));
  form.append("model", choice.model);
  form.append("response_format", "json");
  if (language) form.append("language", language);
  const prompt = str(section(options.config, "stt")["prompt"]);
  if (prompt) form.append("prompt", prompt);
  const label = choice.provider === "groq" ? "Groq speech-to-text" : "OpenAI speech-to-text";
  const response = await fetchWithTimeout(`${choice.baseUrl.replace(/\/+$/, "")}/audio/transcriptions`, {
    method: "POST",
    headers: { authorization: `Bearer ${choice.apiKey}` },
    body: form,
    timeoutMs: 120_000,
    label,
    signal: options.signal,
  });
  const body = await response.text();
  if (!response.ok)
    throw new Error(`${label} refused ${basename(path)} (HTTP ${response.status}): ${apiErrorMessage(body)}`);
  return { text: transcriptText(body), provider: choice.provider };
}

/** `{"text": ...}` or a plain-text body, trimmed. */
function transcriptText(body: string): string {
  try {
    const parsed = JSON.parse(body) as unknown;
    if (parsed && typeof parsed === "object" && typeof (parsed as { text?: unknown }).text === "string") {
      return (parsed as { text: string }).text.trim();
    }
  } catch {
    // plain text
  }
  return body.trim();
}

function languageFor(config: unknown, provider: string, env: Env): string | undefined {
  const key = provider === "local_command" ? "local" : provider;
  return (
    str(section(config, "stt", key)["language"]) ??
    str(section(config, "stt")["language"]) ??
    envValue(env, "HERMES_LOCAL_STT_LANGUAGE") ??
    (provider === "local_command" ? "en" : undefined)
  );
}

async function runLocal(
  path: string,
  template: readonly string[],
  config: unknown,
  env: Env,
  language: string | undefined,
  signal: AbortSignal | undefined,
): Promise<string> {
  const configured = str(section(config, "stt", "local")["model"]);
  const model = configured && !CLOUD_MODELS.has(configured) ? configured : "base";
  const dir = await mkdtemp(join(tmpdir(), "hermes-stt-"));
  try {
    let input = path;
    if (!LOCAL_NATIVE.has(extname(path).toLowerCase())) {
      const ffmpeg = findBinary("ffmpeg", env);
      if (!ffmpeg) throw new Error(`Local speech-to-text needs ffmpeg to read ${extname(path)} files.`);
      input = join(dir, "input.wav");
      await runProgram(
        ffmpeg,
        ["-v", "error", "-nostdin", "-y", "-i", path, "-ac", "1", "-ar", "16000", input],
        {
          timeoutMs: 300_000,
          ...(signal ? { signal } : {}),
        },
      );
    }
    const out = join(dir, "out");
    await mkdir(out, { recursive: true });
    const values: Record<string, string> = {
      input_path: input,
      output_dir: out,
      model,
      language: language ?? "en",
    };
    const [program, ...args] = template.map((word) =>
      word.replace(/\{(input_path|output_dir|model|language)\}/g, (_m, name: string) => values[name] ?? ""),
    );
    if (!program) throw new Error("HERMES_LOCAL_STT_COMMAND is empty.");
    // The command is the user's, but it never needs Hermes's API keys.
    const { stdout } = await runProgram(program, args, {
      timeoutMs: 600_000,
      env: scrubEnv(env),
      ...(signal ? { signal } : {}),
    });
    const txt = (await readdir(out)).filter((f) => f.endsWith(".txt")).sort()[0];
    const text = txt ? (await readFile(join(out, txt), "utf8")).trim() : stdout.trim();
    if (!txt && !text)
      throw new Error("The local speech-to-text command wrote no .txt transcript and printed nothing.");
    return text;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Splits a command template into words the way a shell would (quotes and backslashes), no expansion. */
export function splitWords(text: string): string[] {
  const words: string[] = [];
  let current = "";
  let started = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] ?? "";
    if (quote) {
      if (ch === quote) quote = undefined;
      else if (ch === "\\" && quote === '"' && /["\\$`]/.test(text[i + 1] ?? "")) current += text[++i];
      else current += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      started = true;
    } else if (ch === "\\") {
      current += text[++i] ?? "";
      started = true;
    } else if (/\s/.test(ch)) {
      if (started) words.push(current);
      current = "";
      started = false;
    } else {
      current += ch;
      started = true;
    }
  }
  if (started) words.push(current);
  return words;
}
