/**
 * The speech-to-text backends: `local` (whisper.cpp in process through smart-whisper
 * (local-whisper.ts), a whisper.cpp `whisper-cli`, the faster-whisper CLI `whisper-ctranslate2`,
 * or openai-whisper's `whisper`, and upstream's HERMES_LOCAL_STT_COMMAND; ggml models from
 * local-models.ts),
 * `groq` and `openai` (`/audio/transcriptions`, multipart), and command providers
 * (`stt.providers.<name>`).
 */
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, stat } from "node:fs/promises";
import { basename, dirname, extname, join } from "node:path";
import { scrubEnv } from "../../../util/env-scrub.js";
import { apiErrorMessage, type Env, envValue, findBinary, runProgram, section, str } from "../shared.js";
import {
  commandProviderConfig,
  commandTimeoutMs,
  passthroughNames,
  planCommand,
  runPlan,
} from "./command.js";
import { clampNumber } from "./common.js";
import { speechRequest } from "./http.js";
import {
  ggmlModelCandidates,
  localModelName,
  ModelUnavailableError,
  type ProgressSink,
  resolveWhisperModel,
  WHISPER_MODELS,
} from "./local-models.js";
import {
  EngineMissingError,
  loadWhisperBinding,
  transcribeInProcess,
  WHISPER_PACKAGE_HINT,
  whisperPackagePresent,
} from "./local-whisper.js";

export { ggmlModelCandidates } from "./local-models.js";

export const STT_BUILTINS = ["local", "local_command", "groq", "openai"] as const;
export const STT_UNSUPPORTED = ["mistral", "xai", "elevenlabs", "deepinfra"];
export const MAX_UPLOAD_BYTES = 25 * 1024 * 1024;
const MAX_TRANSCRIPT_BYTES = 1024 * 1024;
/** What whisper reads without conversion; anything else goes through ffmpeg to WAV first. */
const LOCAL_NATIVE = new Set([".wav", ".aiff", ".aif"]);
const OPENAI_ONLY = new Set(["whisper-1", "gpt-4o-mini-transcribe", "gpt-4o-transcribe", "gpt-transcribe"]);
const GROQ_ONLY = new Set(["whisper-large-v3", "whisper-large-v3-turbo", "distil-whisper-large-v3-en"]);

export function canonicalStt(name: string): string {
  const n = name.trim().toLowerCase();
  return n === "nous" ? "openai" : n;
}

export interface SttJob {
  file: string;
  dir: string;
  config: unknown;
  env: Env;
  signal?: AbortSignal | undefined;
  /** Where a first-use whisper model download reports progress (default: stderr). */
  progress?: ProgressSink | undefined;
}

export interface SttOutput {
  text: string;
  /** The engine that ran: `local`, `local_command`, `groq`, `openai` or a command provider's name. */
  provider: string;
}

export interface CloudStt {
  provider: "groq" | "openai";
  apiKey: string;
  baseUrl: string;
  model: string;
}

export function groqStt(config: unknown, env: Env): CloudStt | undefined {
  const cfg = section(config, "stt", "groq");
  const apiKey = str(cfg["api_key"]) ?? envValue(env, "GROQ_API_KEY");
  if (!apiKey) return undefined;
  let model = str(cfg["model"]) ?? envValue(env, "STT_GROQ_MODEL") ?? "whisper-large-v3-turbo";
  if (OPENAI_ONLY.has(model)) model = "whisper-large-v3-turbo";
  const baseUrl = str(cfg["base_url"]) ?? envValue(env, "GROQ_BASE_URL") ?? "https://api.groq.com/openai/v1";
  return { provider: "groq", apiKey, baseUrl, model };
}

export function openAiStt(config: unknown, env: Env): CloudStt | undefined {
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

type LocalEngine =
  | { kind: "command"; template: string[] }
  | { kind: "in-process" }
  | { kind: "whisper.cpp"; program: string }
  | { kind: "ctranslate2"; program: string }
  | { kind: "whisper"; program: string };

/** The HERMES_LOCAL_STT_COMMAND template or a `whisper` CLI (upstream's `local_command`). */
export function localCommandEngine(env: Env): LocalEngine | undefined {
  const template = envValue(env, "HERMES_LOCAL_STT_COMMAND");
  if (template) return { kind: "command", template: splitWords(template) };
  const whisper = findBinary("whisper", env);
  return whisper ? { kind: "whisper", program: whisper } : undefined;
}

/**
 * The local engine `stt.provider: local` uses, in order of preference: the HERMES_LOCAL_STT_COMMAND
 * template, the in-process whisper.cpp (smart-whisper), whisper.cpp's CLI, faster-whisper's CLI,
 * openai-whisper's CLI.
 */
export function localEngine(env: Env): LocalEngine | undefined {
  const command = envValue(env, "HERMES_LOCAL_STT_COMMAND");
  if (command) return { kind: "command", template: splitWords(command) };
  if (whisperPackagePresent()) return { kind: "in-process" };
  return localCliEngine(env);
}

/** An installed whisper program, whisper.cpp's first. */
function localCliEngine(env: Env): LocalEngine | undefined {
  for (const name of ["whisper-cli", "whisper-cpp"]) {
    const program = findBinary(name, env);
    if (program) return { kind: "whisper.cpp", program };
  }
  const ct2 = findBinary("whisper-ctranslate2", env);
  if (ct2) return { kind: "ctranslate2", program: ct2 };
  return localCommandEngine(env);
}

export const LOCAL_INSTALL_HINT =
  `install a local whisper: ${WHISPER_PACKAGE_HINT}; or whisper.cpp's whisper-cli on PATH; ` +
  "faster-whisper's CLI (pip install whisper-ctranslate2) or openai-whisper (pip install openai-whisper); " +
  "or set HERMES_LOCAL_STT_COMMAND";

export function languageFor(config: unknown, provider: string, env: Env): string | undefined {
  const key = provider === "local_command" ? "local" : provider;
  return (
    str(section(config, "stt", key)["language"]) ??
    str(section(config, "stt")["language"]) ??
    envValue(env, "HERMES_LOCAL_STT_LANGUAGE") ??
    (provider === "local" || provider === "local_command" ? "en" : undefined)
  );
}

export async function runSttProvider(name: string, job: SttJob & { home: string }): Promise<SttOutput> {
  switch (name) {
    case "local": {
      const engine = localEngine(job.env);
      if (!engine) throw new Error(`no local speech-to-text engine is installed: ${LOCAL_INSTALL_HINT}`);
      return runLocal(engine, job);
    }
    case "local_command": {
      const engine = localCommandEngine(job.env);
      if (!engine) throw new Error("no whisper CLI on PATH and HERMES_LOCAL_STT_COMMAND is not set");
      return runLocal(engine, job);
    }
    case "groq":
    case "openai": {
      const choice = name === "groq" ? groqStt(job.config, job.env) : openAiStt(job.config, job.env);
      if (!choice)
        throw new Error(
          name === "groq"
            ? "no key: GROQ_API_KEY is not set"
            : "no key: set stt.openai.api_key, VOICE_TOOLS_OPENAI_KEY or OPENAI_API_KEY",
        );
      return { text: await cloud(choice, job), provider: name };
    }
    default:
      return { text: await command(name, job), provider: name };
  }
}

async function cloud(choice: CloudStt, job: SttJob): Promise<string> {
  const label = choice.provider === "groq" ? "Groq speech-to-text" : "OpenAI speech-to-text";
  const size = (await stat(job.file)).size;
  if (size > MAX_UPLOAD_BYTES)
    throw new Error(
      `${basename(job.file)} is ${(size / 1024 / 1024).toFixed(1)} MB; ${choice.provider} takes at most 25 MB`,
    );
  const audio = await readFile(job.file);
  const form = new FormData();
  form.append("file", new Blob([audio]), basename(job.file));
  form.append("model", choice.model);
  form.append("response_format", "json");
  const language = languageFor(job.config, choice.provider, job.env);
  if (language) form.append("language", language);
  const prompt = str(section(job.config, "stt")["prompt"]);
  if (prompt) form.append("prompt", prompt);
  const res = await speechRequest({
    url: `${choice.baseUrl.replace(/\/+$/, "")}/audio/transcriptions`,
    headers: { authorization: `Bearer ${choice.apiKey}` },
    body: form,
    label,
    timeoutMs: clampNumber(section(job.config, "stt", choice.provider)["timeout"], 1, 600, 120) * 1000,
    maxBytes: MAX_TRANSCRIPT_BYTES,
    signal: job.signal,
  });
  const body = res.body.toString("utf8");
  if (res.status < 200 || res.status >= 300)
    throw new Error(`${label} refused ${basename(job.file)} (HTTP ${res.status}): ${apiErrorMessage(body)}`);
  return transcriptText(body);
}

/** `{"text": ...}` or a plain-text body, trimmed. */
export function transcriptText(body: string): string {
  try {
    const parsed = JSON.parse(body) as unknown;
    if (parsed && typeof parsed === "object" && typeof (parsed as { text?: unknown }).text === "string")
      return (parsed as { text: string }).text.trim();
  } catch {
    // plain text
  }
  return body.trim();
}

/** The file as 16 kHz mono WAV when it is not WAV already (whisper engines read WAV). */
async function wavInput(job: SttJob, always: boolean): Promise<string> {
  const ext = extname(job.file).toLowerCase();
  const ffmpeg = findBinary("ffmpeg", job.env);
  if (!ffmpeg) {
    if (LOCAL_NATIVE.has(ext)) return job.file;
    throw new Error(`local speech-to-text needs ffmpeg to read ${ext} files (apt install ffmpeg)`);
  }
  if (!always && LOCAL_NATIVE.has(ext)) return job.file;
  const out = join(job.dir, "input.wav");
  await runProgram(
    ffmpeg,
    ["-v", "error", "-nostdin", "-y", "-i", job.file, "-ac", "1", "-ar", "16000", out],
    {
      timeoutMs: 300_000,
      ...(job.signal ? { signal: job.signal } : {}),
    },
  );
  return out;
}

async function runLocal(engine: LocalEngine, job: SttJob & { home: string }): Promise<SttOutput> {
  const model = localModelName(job.config);
  const language = languageFor(job.config, "local", job.env) ?? "en";
  const out = join(job.dir, "out");
  await mkdir(out, { recursive: true });
  const options = {
    timeoutMs: 600_000,
    env: scrubEnv(job.env),
    ...(job.signal ? { signal: job.signal } : {}),
  };
  if (engine.kind === "in-process") {
    // The package resolves but may not load (a failed build): then an installed CLI is used.
    const whisper = await loadWhisperBinding().catch((error: Error) => {
      const cli = localCliEngine(job.env);
      if (!cli) throw error;
      return cli;
    });
    if (!whisper || "kind" in whisper) {
      const cli = whisper ?? localCliEngine(job.env);
      if (!cli) throw new Error(`no local speech-to-text engine is installed: ${LOCAL_INSTALL_HINT}`);
      return runLocal(cli, job);
    }
    // No model here and none to fetch (local is only a fallback): an installed whisper program,
    // which brings or finds its own model, does the work instead.
    const modelPath = await localModel(job).catch((error: unknown) => {
      const cli = error instanceof ModelUnavailableError ? localCliEngine(job.env) : undefined;
      if (!cli) throw error;
      return cli;
    });
    if (typeof modelPath !== "string") return runLocal(modelPath, job);
    const ext = extname(job.file).toLowerCase();
    const input = await wavInput(job, ext !== ".wav");
    try {
      const text = await transcribeInProcess({
        wav: input,
        modelPath,
        language,
        prompt: str(section(job.config, "stt")["prompt"]),
        signal: job.signal,
      });
      return { text, provider: "local" };
    } catch (error) {
      if (error instanceof EngineMissingError) throw new Error(`${error.message}; ${LOCAL_INSTALL_HINT}`);
      throw error;
    }
  }
  if (engine.kind === "whisper.cpp") {
    const found = await localModel(job);
    const input = await wavInput(job, true);
    const { stdout } = await runProgram(
      engine.program,
      ["-m", found, "-f", input, "-l", language, "-nt", "-otxt", "-of", join(out, "transcript")],
      options,
    );
    return { text: await readTranscript(out, stdout), provider: "local" };
  }
  const input = await wavInput(job, false);
  if (engine.kind === "command") {
    const values: Record<string, string> = { input_path: input, output_dir: out, model, language };
    const [program, ...args] = engine.template.map((word) =>
      word.replace(/\{(input_path|output_dir|model|language)\}/g, (_m, name: string) => values[name] ?? ""),
    );
    if (!program) throw new Error("HERMES_LOCAL_STT_COMMAND is empty");
    const { stdout } = await runProgram(program, args, options);
    return { text: await readTranscript(out, stdout), provider: "local_command" };
  }
  const args = [
    input,
    "--model",
    model,
    "--output_format",
    "txt",
    "--output_dir",
    out,
    "--language",
    language,
  ];
  const { stdout } = await runProgram(engine.program, args, options);
  return {
    text: await readTranscript(out, stdout),
    provider: engine.kind === "whisper" ? "local_command" : "local",
  };
}

/**
 * What the first local transcription will download (said when voice mode turns on), or null:
 * only when `stt.provider` is local, a whisper.cpp engine would run, and the model is not there.
 */
export function localModelDownloadNotice(config: unknown, env: Env, home: string): string | null {
  const chosen = str(section(config, "stt")["provider"]);
  if (!chosen || canonicalStt(chosen) !== "local") return null;
  if (str(section(config, "stt", "local")["model_path"])) return null;
  const engine = localEngine(env);
  if (engine?.kind !== "in-process" && engine?.kind !== "whisper.cpp") return null;
  const name = localModelName(config);
  const info = WHISPER_MODELS[name];
  const [target] = ggmlModelCandidates(home, name, env);
  if (!info || !target || ggmlModelCandidates(home, name, env).some((c) => existsSync(c))) return null;
  return `The first transcription downloads whisper model ${name} (about ${info.mib} MB) into ${dirname(target)}; stt.local.model_path names a model you already have.`;
}

/**
 * The ggml model for the whisper.cpp engines: downloaded on first use only when the user chose
 * `stt.provider: local` (never for a fallback), from HERMES_WHISPER_MODEL_URL when set (a mirror).
 */
function localModel(job: SttJob & { home: string }): Promise<string> {
  const chosen = str(section(job.config, "stt")["provider"]);
  return resolveWhisperModel({
    config: job.config,
    env: job.env,
    home: job.home,
    download: chosen !== undefined && canonicalStt(chosen) === "local",
    progress: job.progress ?? process.stderr,
    signal: job.signal,
    baseUrl: envValue(job.env, "HERMES_WHISPER_MODEL_URL"),
  });
}

async function readTranscript(dir: string, stdout: string): Promise<string> {
  const txt = (await readdir(dir)).filter((f) => f.endsWith(".txt")).sort()[0];
  const text = txt ? (await readFile(join(dir, txt), "utf8")).trim() : stdout.trim();
  if (!txt && !text)
    throw new Error("the local speech-to-text command wrote no .txt transcript and printed nothing");
  return text;
}

async function command(name: string, job: SttJob): Promise<string> {
  const cfg = commandProviderConfig(section(job.config, "stt"), name);
  if (!cfg) throw new Error(`stt.providers.${name}.command is not set`);
  const raw = (str(cfg["output_format"]) ?? str(cfg["format"]) ?? "txt").toLowerCase();
  const format = ["txt", "json", "srt", "vtt"].includes(raw) ? raw : "txt";
  const output = join(job.dir, `transcript.${format}`);
  const values = {
    input_path: job.file,
    output_path: output,
    output_dir: job.dir,
    format,
    language: str(cfg["language"]) ?? languageFor(job.config, name, job.env) ?? "en",
    model: str(cfg["model"]) ?? "",
  };
  const plan = planCommand(String(cfg["command"]), values, job.env);
  const stdout = await runPlan(plan, {
    env: scrubEnv(job.env, passthroughNames(cfg)),
    idleTimeoutMs: commandTimeoutMs(cfg, 300),
    signal: job.signal,
    cwd: job.dir,
  });
  const written = existsSync(output) ? (await readFile(output, "utf8")).trim() : "";
  const text = written || stdout.trim();
  if (!text) throw new Error(`stt command provider ${name} wrote no transcript and printed nothing`);
  return format === "json" ? transcriptText(text) : text;
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
