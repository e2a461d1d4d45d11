/**
 * The real audio chain without a microphone: espeak-ng speaks a sentence into a WAV, the gateway's
 * voice-note path transcribes it over Groq's real HTTP protocol (the fake knows what that WAV
 * says), and the reply is spoken by the text_to_speech tool through Edge's WebSocket protocol
 * (the fake streams real MP3) into a WAV whose length and loudness sox measures.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig } from "../../../../src/config/defaults.js";
import { transcribeVoice } from "../../../../src/gateway/messaging/inbound-text.js";
import { findBinary } from "../../../../src/tools/media/shared.js";
import { textToSpeechTool } from "../../../../src/tools/media/tts.js";
import { type FakeEdgeTts, startFakeEdgeTts } from "../../../support/fake-edge-tts.js";
import { type FakeSpeechApi, startFakeSpeechApi } from "../../../support/fake-speech-api.js";
import { makeToolContext } from "../../../support/tool-context.js";

const ready = ["espeak-ng", "sox", "ffmpeg", "ffprobe"].every(
  (b) => findBinary(b, process.env) !== undefined,
);
const dir = mkdtempSync(join(tmpdir(), "speech-chain-"));
const QUESTION = "Please turn on the kitchen lights.";
const ANSWER = "The kitchen lights are on now.";

/** sox's `stat` numbers for an audio file. */
function soxStat(path: string): Record<string, number> {
  const run = spawnSync("sox", [path, "-n", "stat"], { encoding: "utf8" });
  const out: Record<string, number> = {};
  for (const line of run.stderr.split("\n")) {
    const m = /^([^:]+):\s+(-?[\d.]+)/.exec(line);
    if (m?.[1] && m[2]) out[m[1].trim()] = Number(m[2]);
  }
  return out;
}

let edge: FakeEdgeTts;
let api: FakeSpeechApi;
let questionWav: string;

beforeAll(async () => {
  if (!ready) return;
  questionWav = join(dir, "question.wav");
  execFileSync("espeak-ng", ["-w", questionWav, QUESTION]);
  const answerWav = join(dir, "answer-src.wav");
  execFileSync("espeak-ng", ["-w", answerWav, ANSWER]);
  const answerMp3 = join(dir, "answer.mp3");
  execFileSync("ffmpeg", [
    "-v",
    "error",
    "-y",
    "-i",
    answerWav,
    "-ar",
    "24000",
    "-ac",
    "1",
    "-b:a",
    "48k",
    answerMp3,
  ]);
  edge = await startFakeEdgeTts(readFileSync(answerMp3));
  api = await startFakeSpeechApi();
  api.register(readFileSync(questionWav), QUESTION);
});
afterAll(async () => {
  await edge?.close();
  await api?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!ready)("the audio chain, microphone-free", () => {
  it("espeak-ng WAV -> gateway transcription over Groq's protocol -> spoken reply over Edge -> WAV sox can measure", async () => {
    const questionStat = soxStat(questionWav);
    expect(questionStat["Length (seconds)"]).toBeGreaterThan(1);

    const config = defaultConfig();
    const logs: string[] = [];
    const heard = await transcribeVoice(
      questionWav,
      {
        config,
        env: { PATH: "", GROQ_API_KEY: api.keys.groq, GROQ_BASE_URL: `${api.url}/openai/v1` },
        home: join(dir, "home"),
      },
      (line) => logs.push(line),
    );
    expect(logs).toEqual([]);
    expect(heard).toBe(QUESTION);
    const upload = api.requests[0];
    expect(upload?.path).toBe("/openai/v1/audio/transcriptions");
    expect(upload?.headers.authorization).toBe(`Bearer ${api.keys.groq}`);

    const ctx = makeToolContext({
      config: config as unknown as Record<string, unknown>,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, HERMES_EDGE_TTS_URL: edge.url },
    });
    const result = (await textToSpeechTool.handler({ text: ANSWER, output_path: "reply.wav" }, ctx)) as {
      provider: string;
      file_path: string;
    };
    expect(result.provider).toBe("edge");
    expect(edge.turns.map((t) => t.text)).toEqual([ANSWER]);
    const reply = soxStat(result.file_path);
    // espeak-ng says the answer in about 1.5-2.5 s; Edge's stream was decoded into that much audio.
    expect(reply["Length (seconds)"]).toBeGreaterThan(1);
    expect(reply["Length (seconds)"]).toBeLessThan(5);
    expect(reply["RMS     amplitude"]).toBeGreaterThan(0.01);
  }, 60_000);

  it("makes an Ogg/Opus voice note from Edge's MP3 for chat platforms", async () => {
    const ctx = makeToolContext({
      config: defaultConfig() as unknown as Record<string, unknown>,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, HERMES_EDGE_TTS_URL: edge.url },
    });
    const result = (await textToSpeechTool.handler({ text: ANSWER, output_path: "note.ogg" }, ctx)) as {
      media_tag: string;
      file_path: string;
      voice_compatible: boolean;
    };
    expect(result.voice_compatible).toBe(true);
    expect(result.media_tag).toBe(`[[audio_as_voice]]\nMEDIA:${result.file_path}`);
    const codec = execFileSync("ffprobe", [
      "-v",
      "error",
      "-select_streams",
      "a:0",
      "-show_entries",
      "stream=codec_name",
      "-of",
      "csv=p=0",
      result.file_path,
    ]);
    expect(codec.toString().trim()).toBe("opus");
    const seconds = execFileSync("ffprobe", [
      "-v",
      "error",
      "-show_entries",
      "format=duration",
      "-of",
      "csv=p=0",
      result.file_path,
    ]);
    expect(Number(seconds.toString().trim())).toBeGreaterThan(1);
  }, 60_000);
});
