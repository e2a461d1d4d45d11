/**
 * `transcribe(file, options)`: the words spoken in an audio file, through the configured chain.
 *
 * The chain is `stt.provider` then `stt.fallback` (a list; `false` or `[]` for none). Without
 * `stt.fallback`: when no provider is chosen, every configured one in upstream's order (local,
 * then Groq, then OpenAI); when one is chosen, only the private local engine follows it (audio is
 * not sent to a service the user did not pick). Failures are logged (redacted) and the next
 * provider runs; the temp folder for converted audio is always removed.
 */
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, extname, join } from "node:path";
import { type Env, envValue, section, str } from "../shared.js";
import { commandProviderConfig } from "./command.js";
import { firstThatWorks, providerChain, type SpeechAttempt, type SpeechContext } from "./common.js";
import type { ProgressSink } from "./local-models.js";
import {
  canonicalStt,
  groqStt,
  LOCAL_INSTALL_HINT,
  localCommandEngine,
  localEngine,
  openAiStt,
  runSttProvider,
  STT_BUILTINS,
  STT_UNSUPPORTED,
} from "./stt-providers.js";

export interface TranscribeOptions extends SpeechContext {
  /** Use this provider first instead of `stt.provider`. */
  provider?: string | undefined;
  /** Where a first-use whisper model download reports progress (default: stderr). */
  progress?: ProgressSink | undefined;
}

export interface TranscriptResult {
  text: string;
  /** The engine that answered (`local`, `local_command`, `groq`, `openai`, or a command provider). */
  provider: string;
  attempts: SpeechAttempt[];
}

/** Formats the cloud APIs take (as upstream lists them) plus what local whisper reads. */
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
  ".aiff",
  ".aif",
]);

function available(name: string, config: unknown, env: Env): boolean {
  if (name === "local") return localEngine(env) !== undefined;
  if (name === "local_command") return localCommandEngine(env) !== undefined;
  if (name === "groq") return groqStt(config, env) !== undefined;
  if (name === "openai") return openAiStt(config, env) !== undefined;
  return commandProviderConfig(section(config, "stt"), name) !== undefined;
}

/** The provider chain; throws when speech-to-text is off, unconfigured, or names an unknown provider. */
export function planStt(config: unknown, env: Env, override?: string): string[] {
  const stt = section(config, "stt");
  if (stt["enabled"] === false)
    throw new Error("Speech-to-text is disabled in config.yaml (stt.enabled: false).");
  const chosen = str(override) ?? str(stt["provider"]);
  const order = ["local", "groq", "openai"];
  let chain: string[];
  if (chosen) {
    const primary = canonicalStt(chosen);
    const automatic = primary === "local" || primary === "local_command" ? [] : ["local"];
    chain = providerChain(config, "stt", primary, automatic).map(canonicalStt);
    // Automatic fallbacks that are not set up are left out; named ones are tried and logged.
    if (stt["fallback"] === undefined) chain = chain.filter((n, i) => i === 0 || available(n, config, env));
  } else {
    const configured = order.filter((n) => available(n, config, env));
    const primary = configured[0];
    if (!primary)
      throw new Error(
        `No speech-to-text configured: ${LOCAL_INSTALL_HINT}; or set GROQ_API_KEY for Groq's free Whisper API, or VOICE_TOOLS_OPENAI_KEY / OPENAI_API_KEY for OpenAI's.`,
      );
    chain = providerChain(config, "stt", primary, configured.slice(1)).map(canonicalStt);
  }
  for (const name of chain) {
    if ((STT_BUILTINS as readonly string[]).includes(name)) continue;
    if (commandProviderConfig(stt, name)) continue;
    throw new Error(
      STT_UNSUPPORTED.includes(name)
        ? `stt provider "${name}" is not supported by Hermes-TS yet: use local, groq, openai or a command provider.`
        : `stt provider "${name}" is unknown: use local, groq, openai, or declare stt.providers.${name} with type: command.`,
    );
  }
  return [...new Set(chain)];
}

/** The text spoken in `file`; throws naming the file and what failed. */
export async function transcribe(file: string, options: TranscribeOptions): Promise<TranscriptResult> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(file);
  } catch {
    throw new Error(`Audio file not found: ${file}`);
  }
  if (!info.isFile()) throw new Error(`${file} is not a file.`);
  if (info.size === 0) throw new Error(`${file} is empty.`);
  const ext = extname(file).toLowerCase();
  if (!SUPPORTED.has(ext))
    throw new Error(
      `Unsupported audio format "${ext || "(none)"}" for ${basename(file)}: use ${[...SUPPORTED].join(", ")}.`,
    );
  const chain = planStt(options.config, options.env, options.provider);
  const keys = [
    groqStt(options.config, options.env)?.apiKey,
    openAiStt(options.config, options.env)?.apiKey,
    envValue(options.env, "OPENAI_API_KEY"),
  ];
  const { value, attempts } = await firstThatWorks(chain, "speech-to-text", options, keys, async (name) => {
    const dir = await mkdtemp(join(tmpdir(), "hermes-stt-"));
    try {
      return await runSttProvider(name, {
        file,
        dir,
        home: options.home,
        config: options.config,
        env: options.env,
        signal: options.signal,
        progress: options.progress,
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
  return { text: value.text, provider: value.provider, attempts };
}
