import { execFileSync } from "node:child_process";
import {
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../../../src/config/defaults.js";
import { findBinary } from "../../../../src/tools/media/shared.js";
import { chooseTtsProvider, spokenText, textToSpeechTool } from "../../../../src/tools/media/tts.js";
import { makeToolContext } from "../../../support/tool-context.js";
import { type HttpFake, jsonBody, sendJson, startHttpFake } from "./http-fake.js";

const hasEspeak = findBinary("espeak-ng", process.env) !== undefined;
const hasFfprobe = findBinary("ffprobe", process.env) !== undefined;
const hasFfmpeg = findBinary("ffmpeg", process.env) !== undefined;
const FAKE_MP3 = Buffer.from("ID3\u0004\u0000fake-mpeg-audio-frames", "latin1");

/** Every key the backends read, blanked, so the machine's own keys never leak into a test. */
const NO_KEYS = {
  ELEVENLABS_API_KEY: "",
  VOICE_TOOLS_OPENAI_KEY: "",
  OPENAI_API_KEY: "",
  ELEVENLABS_API_URL: "",
  // Edge's free service is the default: pointed at a closed loopback port, it fails at once and the
  // chain falls back to espeak-ng, as it does offline.
  HERMES_EDGE_TTS_URL: "ws://127.0.0.1:9/",
};

type Result = {
  success: boolean;
  file_path: string;
  media_tag: string;
  provider: string;
  voice_compatible: boolean;
};

function ctxFor(tts: Record<string, unknown> | undefined, env: Record<string, string | undefined>) {
  const config = { ...defaultConfig(), ...(tts ? { tts } : {}) } as unknown as Record<string, unknown>;
  return makeToolContext({
    config,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...NO_KEYS, ...env },
  });
}

function durationSeconds(path: string): number {
  const out = execFileSync("ffprobe", [
    "-v",
    "error",
    "-show_entries",
    "format=duration",
    "-of",
    "csv=p=0",
    path,
  ]);
  return Number(out.toString().trim());
}

describe.skipIf(!hasEspeak || !hasFfprobe)("text_to_speech with local espeak-ng", () => {
  it("writes a playable MP3 of the sentence into the home's audio cache", async () => {
    const ctx = ctxFor(undefined, {});
    const result = (await textToSpeechTool.handler(
      { text: "Hello from **Hermes**, this is a short test sentence." },
      ctx,
    )) as Result;

    expect(result).toMatchObject({ success: true, provider: "espeak-ng", voice_compatible: false });
    expect(result.file_path.startsWith(join(ctx.home, "cache", "audio"))).toBe(true);
    expect(result.file_path.endsWith(".mp3")).toBe(true);
    expect(result.media_tag).toBe(`MEDIA:${result.file_path}`);
    expect(durationSeconds(result.file_path)).toBeGreaterThan(0.5);
  }, 60_000);

  it("writes an Ogg/Opus voice note when asked for .ogg, and serves tts.provider edge", async () => {
    const ctx = ctxFor({ provider: "edge" }, {});
    const result = (await textToSpeechTool.handler(
      { text: "This one should arrive as a voice note.", output_path: "out/voice.ogg" },
      ctx,
    )) as Result & { note: string };

    expect(result.file_path).toBe(join(ctx.cwd, "out", "voice.ogg"));
    expect(result.voice_compatible).toBe(true);
    expect(result.media_tag).toBe(`[[audio_as_voice]]\nMEDIA:${result.file_path}`);
    expect(result.note).toMatch(/espeak-ng/);
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
    expect(durationSeconds(result.file_path)).toBeGreaterThan(0.5);
  }, 60_000);
});

describe("text_to_speech with hosted backends", () => {
  let server: HttpFake;
  /** Real encoded audio for the cases where the bytes get decoded (ffmpeg), else placeholders. */
  let realOgg = Buffer.from("OggS-placeholder");
  let realMp3 = FAKE_MP3;
  beforeAll(async () => {
    if (hasFfmpeg) {
      const tmp = mkdtempSync(join(tmpdir(), "tts-audio-"));
      for (const [name, codec] of [
        ["a.ogg", "libopus"],
        ["a.mp3", "libmp3lame"],
      ] as const) {
        execFileSync("ffmpeg", [
          "-v",
          "error",
          "-f",
          "lavfi",
          "-i",
          "sine=d=1",
          "-c:a",
          codec,
          join(tmp, name),
        ]);
      }
      realOgg = readFileSync(join(tmp, "a.ogg"));
      realMp3 = readFileSync(join(tmp, "a.mp3"));
    }
    server = await startHttpFake((req, res) => {
      if (req.path === "/v1/audio/speech") {
        const opus = jsonBody(req)["response_format"] === "opus";
        res.writeHead(200, { "content-type": opus ? "audio/ogg" : "audio/mpeg" });
        res.end(opus ? realOgg : FAKE_MP3);
        return;
      }
      if (req.path.startsWith("/v1/text-to-speech/")) {
        // Answers MP3 whatever was asked, like a provider that ignores output_format.
        res.writeHead(200, { "content-type": "audio/mpeg" });
        res.end(req.path.includes("opus") ? realMp3 : FAKE_MP3);
        return;
      }
      sendJson(res, 404, { detail: "not here" });
    });
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(() => {
    server.requests.length = 0;
  });

  it("posts to OpenAI's /audio/speech with the voice settings and saves the audio", async () => {
    const ctx = ctxFor(
      { provider: "openai", openai: { base_url: `${server.url}/v1`, voice: "nova" } },
      { OPENAI_API_KEY: "sk-voice" },
    );
    const result = (await textToSpeechTool.handler(
      { text: "Good morning.", output_path: "hi.mp3" },
      ctx,
    )) as Result;

    const req = server.requests[0];
    expect(req?.method).toBe("POST");
    expect(req?.path).toBe("/v1/audio/speech");
    expect(req?.headers.authorization).toBe("Bearer sk-voice");
    expect(jsonBody(req)).toEqual({
      model: "gpt-4o-mini-tts",
      voice: "nova",
      input: "Good morning.",
      response_format: "mp3",
    });
    expect(result).toMatchObject({ provider: "openai", file_path: join(ctx.cwd, "hi.mp3") });
    expect(readFileSync(result.file_path)).toEqual(FAKE_MP3);
  });

  it("asks OpenAI for opus when the output is .ogg", async () => {
    const ctx = ctxFor(
      { provider: "openai", openai: { base_url: `${server.url}/v1` } },
      { VOICE_TOOLS_OPENAI_KEY: "k" },
    );
    const result = (await textToSpeechTool.handler(
      { text: "Voice note.", output_path: "n.ogg" },
      ctx,
    )) as Result;
    expect(jsonBody(server.requests[0])["response_format"]).toBe("opus");
    expect(readFileSync(result.file_path)).toEqual(realOgg);
    expect(result.voice_compatible).toBe(true);
  });

  it.skipIf(!hasFfmpeg || !hasFfprobe)(
    "re-encodes an MP3 answer into a real Ogg/Opus voice note",
    async () => {
      const ctx = ctxFor(
        { provider: "elevenlabs" },
        { ELEVENLABS_API_KEY: "k", ELEVENLABS_API_URL: server.url },
      );
      const result = (await textToSpeechTool.handler(
        { text: "Voice note.", output_path: "v.ogg" },
        ctx,
      )) as Result;
      expect(server.requests[0]?.path).toContain("output_format=opus_48000_64");
      expect(readFileSync(result.file_path).subarray(0, 4).toString("latin1")).toBe("OggS");
      expect(durationSeconds(result.file_path)).toBeGreaterThan(0.5);
    },
  );

  it("posts to ElevenLabs with xi-api-key, the voice in the path and the model in the body", async () => {
    const ctx = ctxFor(
      { elevenlabs: { voice_id: "voice123" } },
      { ELEVENLABS_API_KEY: "el-key", ELEVENLABS_API_URL: server.url },
    );
    const result = (await textToSpeechTool.handler({ text: "Hello there." }, ctx)) as Result;

    const req = server.requests[0];
    expect(req?.path).toBe("/v1/text-to-speech/voice123?output_format=mp3_44100_128");
    expect(req?.headers["xi-api-key"]).toBe("el-key");
    expect(jsonBody(req)).toEqual({ text: "Hello there.", model_id: "eleven_multilingual_v2" });
    expect(result.provider).toBe("elevenlabs");
    expect(existsSync(result.file_path)).toBe(true);
    expect(readFileSync(result.file_path)).toEqual(FAKE_MP3);
  });

  it("reports the provider's error message", async () => {
    const failing = await startHttpFake((_req, res) =>
      sendJson(res, 401, { detail: { status: "invalid_api_key" } }),
    );
    try {
      const ctx = ctxFor(
        { provider: "elevenlabs", fallback: false },
        { ELEVENLABS_API_KEY: "bad", ELEVENLABS_API_URL: failing.url },
      );
      await expect(textToSpeechTool.handler({ text: "Hi." }, ctx)).rejects.toThrow(
        /ElevenLabs refused the request \(HTTP 401\).*invalid_api_key/,
      );
      if (hasEspeak && hasFfmpeg) {
        // With the default chain the offline voice speaks instead, and the result says why.
        const fallback = ctxFor(
          { provider: "elevenlabs" },
          { ELEVENLABS_API_KEY: "bad", ELEVENLABS_API_URL: failing.url },
        );
        const result = (await textToSpeechTool.handler({ text: "Hi." }, fallback)) as Result & {
          note: string;
        };
        expect(result.provider).toBe("espeak-ng");
        expect(result.note).toMatch(
          /elevenlabs \(ElevenLabs refused the request \(HTTP 401\).*espeak-ng instead/,
        );
      }
    } finally {
      await failing.close();
    }
  });

  it("refuses text longer than one OpenAI request takes", async () => {
    const ctx = ctxFor(
      { provider: "openai", openai: { base_url: `${server.url}/v1` } },
      { OPENAI_API_KEY: "k" },
    );
    await expect(textToSpeechTool.handler({ text: "word ".repeat(1000) }, ctx)).rejects.toThrow(
      /4999 characters; openai takes at most 4096/,
    );
    expect(server.requests).toHaveLength(0);
  });

  it("refuses output paths that climb out with ..", async () => {
    const ctx = ctxFor(
      { provider: "openai", openai: { base_url: `${server.url}/v1` } },
      { OPENAI_API_KEY: "k" },
    );
    await expect(textToSpeechTool.handler({ text: "x", output_path: "../escape.mp3" }, ctx)).rejects.toThrow(
      /\.\./,
    );
    await expect(textToSpeechTool.handler({ text: "x", output_path: "a.txt" }, ctx)).rejects.toThrow(
      /must end in \.mp3/,
    );
  });
});

describe("text_to_speech output_path and protected paths", () => {
  let server: HttpFake;
  beforeAll(async () => {
    server = await startHttpFake((_req, res) => {
      res.writeHead(200, { "content-type": "audio/mpeg" });
      res.end(FAKE_MP3);
    });
  });
  afterAll(async () => {
    await server.close();
  });
  const openai = () =>
    ctxFor({ provider: "openai", openai: { base_url: `${server.url}/v1` } }, { OPENAI_API_KEY: "k" });

  it("asks before writing into Hermes's home and calls no provider when denied", async () => {
    const ctx = openai();
    const before = server.requests.length;
    await expect(
      textToSpeechTool.handler({ text: "x", output_path: join(ctx.home, "skills", "a.mp3") }, ctx),
    ).rejects.toThrow(/Not written: .*Hermes's skills.*skill_manage/);
    expect(ctx.approvals).toMatchObject([{ patternKey: "protected_write", protectedPath: true }]);
    expect(server.requests.length).toBe(before);
    expect(existsSync(join(ctx.home, "skills"))).toBe(false);
  });

  it("refuses a symlink that leads to config.yaml, and writes through an ordinary one keeping the link", async () => {
    const ctx = openai();
    mkdirSync(ctx.home, { recursive: true });
    writeFileSync(join(ctx.home, "config.yaml"), "model: x\n");
    symlinkSync(join(ctx.home, "config.yaml"), join(ctx.cwd, "sneaky.mp3"));
    await expect(textToSpeechTool.handler({ text: "x", output_path: "sneaky.mp3" }, ctx)).rejects.toThrow(
      /Hermes config/,
    );
    expect(readFileSync(join(ctx.home, "config.yaml"), "utf8")).toBe("model: x\n");
    expect(lstatSync(join(ctx.cwd, "sneaky.mp3")).isSymbolicLink()).toBe(true);

    mkdirSync(join(ctx.cwd, "media"));
    symlinkSync(join(ctx.cwd, "media", "real.mp3"), join(ctx.cwd, "link.mp3"));
    const result = (await textToSpeechTool.handler({ text: "x", output_path: "link.mp3" }, ctx)) as Result;
    expect(result.file_path).toBe(join(ctx.cwd, "media", "real.mp3"));
    expect(readFileSync(join(ctx.cwd, "media", "real.mp3"))).toEqual(FAKE_MP3);
    expect(lstatSync(join(ctx.cwd, "link.mp3")).isSymbolicLink()).toBe(true);

    // A hard link is replaced, never written into: the file it shared a name with keeps its bytes.
    writeFileSync(join(ctx.cwd, "shared.txt"), "original");
    linkSync(join(ctx.cwd, "shared.txt"), join(ctx.cwd, "hard.mp3"));
    await textToSpeechTool.handler({ text: "x", output_path: "hard.mp3" }, ctx);
    expect(readFileSync(join(ctx.cwd, "shared.txt"), "utf8")).toBe("original");
    expect(readFileSync(join(ctx.cwd, "hard.mp3"))).toEqual(FAKE_MP3);
  });
});

describe("choosing a text-to-speech backend", () => {
  const PATH = process.env.PATH;
  it.each([
    ["ElevenLabs key and nothing configured", undefined, { ELEVENLABS_API_KEY: "k", PATH: "" }, "elevenlabs"],
    ["a voice-only OpenAI key", undefined, { VOICE_TOOLS_OPENAI_KEY: "k", PATH: "" }, "openai"],
    [
      "explicit openai with a general key",
      { provider: "openai" },
      { OPENAI_API_KEY: "k", PATH: "" },
      "openai",
    ],
    ["explicit espeak", { provider: "espeak" }, { PATH }, "espeak-ng"],
    ["nothing at all: Edge's free voices", undefined, { PATH: "" }, "edge"],
  ])("%s", (_name, tts, env, expected) => {
    const choice = chooseTtsProvider(tts ? { tts } : {}, env);
    expect("provider" in choice ? choice.provider : undefined).toBe(expected);
  });

  it("never spends a general OPENAI_API_KEY without tts.provider: openai", () => {
    expect(chooseTtsProvider({}, { OPENAI_API_KEY: "k", PATH: "" })).toEqual({
      provider: "edge",
      chain: ["edge", "espeak-ng"],
    });
  });

  it("names unsupported and unknown providers", () => {
    expect(chooseTtsProvider({ tts: { provider: "minimax" } }, { PATH })).toMatchObject({
      error: /"minimax" is not supported by Hermes-TS yet/,
    });
    expect(chooseTtsProvider({ tts: { provider: "bogus" } }, { PATH })).toMatchObject({
      error: /"bogus" is unknown/,
    });
    expect(chooseTtsProvider({ tts: { provider: "piper" } }, { PATH })).toMatchObject({
      error: /tts\.providers\.piper\.command/,
    });
  });

  it("is offered when some provider can speak: Edge needs no key", () => {
    const config = defaultConfig() as unknown as Record<string, unknown>;
    expect(textToSpeechTool.check?.({ env: { PATH: "" }, config })).toBe(true);
    const keyless = { ...config, tts: { provider: "elevenlabs", fallback: false } };
    expect(textToSpeechTool.check?.({ env: { PATH: "" }, config: keyless })).toBe(false);
    expect(textToSpeechTool.check?.({ env: { PATH: "", ELEVENLABS_API_KEY: "k" }, config: keyless })).toBe(
      true,
    );
    const espeakOnly = { ...config, tts: { provider: "espeak-ng" } };
    expect(textToSpeechTool.check?.({ env: { PATH }, config: espeakOnly })).toBe(hasEspeak);
  });

  it("strips markdown before speaking", () => {
    expect(spokenText("## Title\n**Bold** and `code` with [a link](https://x.y).")).toBe(
      "Title Bold and code with a link.",
    );
  });
});
