/**
 * The speech engine: `synthesize(text, options)` writes an audio file and `transcribe(file,
 * options)` returns its words, each through the provider chain that `tts.*` / `stt.*` configure.
 * The text_to_speech tool and the gateway's voice notes call it; voice mode and voice channels
 * will call the same two functions.
 */
export { type AudioFormat, type SpeechAttempt, SpeechChainError, type SpeechContext } from "./common.js";
export { findRecorder, probeInput, type Recorder } from "./recorder.js";
export { localModelDownloadNotice } from "./stt-providers.js";
export {
  planTts,
  type SynthesisResult,
  type SynthesizeOptions,
  synthesize,
  ttsAvailable,
} from "./synthesize.js";
export { planStt, type TranscribeOptions, type TranscriptResult, transcribe } from "./transcribe.js";
