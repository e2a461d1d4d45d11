/**
 * Speech to text for the gateway's voice messages (a library, not a tool): the speech engine's
 * `transcribe` (speech/transcribe.ts) with the key environment the tools use. Backends and config
 * follow Python Hermes's `stt.*` keys: a local whisper (whisper.cpp, faster-whisper's CLI,
 * openai-whisper, or `HERMES_LOCAL_STT_COMMAND`), Groq's Whisper API (GROQ_API_KEY), OpenAI's (or
 * any compatible server's) `/audio/transcriptions`, and `stt.providers.<name>` command providers.
 * `stt.provider` picks one; without it the free ones come first: local, then Groq, then OpenAI.
 */
import { toolEnv } from "./shared.js";
import { transcribe } from "./speech/transcribe.js";

export { splitWords } from "./speech/stt-providers.js";

export interface TranscribeOptions {
  config: Readonly<Record<string, unknown>>;
  /** Environment with the API keys; the home's `.env` and the process environment fill gaps. */
  env: Readonly<Record<string, string | undefined>>;
  home: string;
  signal?: AbortSignal | undefined;
  /** Where a provider's failure is reported before the next one runs (default: the home's log). */
  log?: ((line: string) => void) | undefined;
}

export interface Transcription {
  text: string;
  /** `local`, `local_command`, `groq`, `openai` or a command provider's name. */
  provider: string;
}

/**
 * The text spoken in the audio file at `path`. Throws an error naming the file and what failed:
 * no backend configured, an unsupported or oversized file, a refused request.
 */
export async function transcribeAudio(path: string, options: TranscribeOptions): Promise<Transcription> {
  const result = await transcribe(path, { ...options, env: toolEnv({ env: options.env }) });
  return { text: result.text, provider: result.provider };
}
